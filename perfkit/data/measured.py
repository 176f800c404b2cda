"""Loaders of measured files (the output of ``perfkit collect``) and their provenance.

The columns are those :mod:`perfkit.schema` declares; every loader checks them and
names the file and the missing column when one is absent.
"""
from __future__ import annotations

import numpy as np

from .._io import read_csv, read_json
from ..schema import CH3_COLUMNS, MODEL_NAMES, ROLES, provenance_path

__all__ = ["load_phases", "load_steps", "load_provenance", "phase_rows", "thesis_split"]


#: ``--framework`` key → the name figures and tables print
FRAMEWORK_NAMES = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "mxnet": "MXNet", "chainer": "Chainer",
                   "jax": "JAX"}


def load_phases(path, framework_label: str | None = None, mode: str | None = "phased", split_frameworks: bool = False):
    """Read a ``ch3_phases.csv``; keep successful rows of ``mode`` (None: all modes).

    Model keys become the thesis's names (CNN, MLP, Autoencoder) and
    ``framework`` becomes ``framework_label`` (default e.g. ``"PyTorch (cpu, measured)"``).
    With ``split_frameworks=True`` each row keeps its own framework, labelled the same way
    (a file that times several frameworks, for the frameworks' ranking).
    """

    df = phase_rows(path)
    if mode is not None:
        if mode not in set(df["mode"]):
            raise ValueError(f"mode: {path} has modes {sorted(set(df['mode']))}, not {mode!r}")
        df = df[df["mode"] == mode]
    def label(fw, dev):
        return f"{FRAMEWORK_NAMES.get(fw, fw)} ({dev + ', ' if dev else ''}measured)"

    if framework_label is None:
        framework_label = label(df["framework"].iloc[0], df["device"].iloc[0])
    df["model"] = df["model"].map(MODEL_NAMES).fillna(df["model"])
    if split_frameworks:
        df["framework"] = [label(fw, dev) for fw, dev in zip(df["framework"], df["device"].fillna(""))]
    else:
        df["framework"] = framework_label
    return df.reset_index(drop=True)


def phase_rows(path):
    """The successful rows of a ``ch3_phases.csv``, every cell checked (:func:`_check_phase_cells`), with the
    columns a file written before them lacks filled in (status ok, mode phased, no device, no batch size)."""
    df = read_csv(path, "measured file")
    missing = [c for c in CH3_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: column {missing[0]!r} missing (a Chapter 3 file needs {list(CH3_COLUMNS)})")
    defaults = {"status": "ok", "mode": "phased", "device": "", "batch_size": np.nan}
    for col, value in defaults.items():
        if col not in df.columns:
            df[col] = value
    df = df[df["status"] == "ok"].copy()
    if df.empty:
        raise ValueError(f"{path}: no rows with status 'ok'")
    _check_phase_cells(df, path)
    df["device"] = df["device"].astype(object).fillna("").astype(str)
    return df


def load_steps(path, target: str = "epoch_time", roles: dict | str = "ch4"):
    """``(X, y, frame)`` from a ``perfkit collect ch4`` / ``ch5`` file: successful rows only, features in ``roles``.

    ``roles`` is a key of :data:`perfkit.schema.ROLES` (``"ch4"``, ``"ch5"``) or a dict of
    numeric / categorical / extrinsic column lists.
    """

    if isinstance(roles, str):
        if roles not in ROLES:
            raise ValueError(f"roles: expected one of {sorted(ROLES)} or a dict of column lists, got {roles!r}")
        roles = ROLES[roles]
    elif not (isinstance(roles, dict) and roles and all(
            k in ("numeric", "categorical", "extrinsic") and isinstance(v, (list, tuple))
            and all(isinstance(c, str) for c in v) for k, v in roles.items())):
        raise ValueError(f"roles: expected one of {sorted(ROLES)} or a dict of numeric/categorical/extrinsic column "
                         f"lists, got {roles!r}")
    df = read_csv(path, "measured file")
    cols = [c for role in roles.values() for c in role] + [target, "status"]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: column {missing[0]!r} missing; is this a `perfkit collect ch4` or `ch5` file?")
    ok = df[df["status"] == "ok"]
    if ok.empty:
        raise ValueError(f"{path}: no rows with status 'ok'")
    _check_cells(ok, path, target, roles)
    ok = ok.reset_index(drop=True)
    X = ok[[c for role in roles.values() for c in role]].copy()
    for c in roles.get("categorical", []):
        X[c] = X[c].astype(str)
    return X, ok[target].astype(float), ok


def _check_cells(ok, path, target: str, roles: dict) -> None:
    """One error naming the file, column and line for a successful row whose target or a numeric column is not a
    finite number, or whose categorical cell is empty (it would become the level ``'nan'``)."""
    import pandas as pd

    for col in [target, *roles.get("numeric", []), *roles.get("extrinsic", [])]:
        values = pd.to_numeric(ok[col], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{path}: column {col!r}, line {ok.index[i] + 2}: {_plain(ok[col].iloc[i])!r} is not a "
                             "finite number (a successful row needs one)")
    for col in roles.get("categorical", []):
        empty = ok[col].isna().to_numpy()
        if empty.any():
            raise ValueError(f"{path}: column {col!r}, line {ok.index[int(np.flatnonzero(empty)[0])] + 2}: empty "
                             "cell in a successful row (a level needs a name)")


def _check_phase_cells(ok, path) -> None:
    """One error naming the file, column and line for a successful Chapter 3 row whose phase time is not empty (a
    phase not timed) or a finite number >= 0, whose ``t_iter`` is not a finite number > 0, whose workers, rank or
    iteration is not a whole number (workers >= 1), or whose model, framework or mode is empty."""
    import pandas as pd

    from ..schema import PHASES

    def fail(col, i, what):
        raise ValueError(f"{path}: column {col!r}, line {ok.index[i] + 2}: {_plain(ok[col].iloc[i])!r} {what}")

    wanted = {**{c: "a finite time >= 0, or empty (a phase not timed)" for c in PHASES}, "t_iter": "a finite time > 0",
              "workers": "a whole number >= 1", "rank": "a whole number >= 0", "iteration": "a whole number >= 0"}
    for col, what in wanted.items():
        v = pd.to_numeric(ok[col], errors="coerce").to_numpy(dtype=float)
        finite = np.isfinite(v)
        if col == "t_iter":
            good = finite & (v > 0)
        elif col in PHASES:
            good = (finite & (v >= 0)) | ok[col].isna().to_numpy()
        else:
            good = finite & (v >= (1 if col == "workers" else 0)) & (v == np.floor(v))
        if not good.all():
            fail(col, int(np.flatnonzero(~good)[0]), f"is not {what} (in a successful row)")
    for col in ("model", "framework", "mode"):
        empty = ok[col].isna().to_numpy() | (ok[col].astype(str).str.strip() == "").to_numpy()
        if empty.any():
            fail(col, int(np.flatnonzero(empty)[0]), "is empty in a successful row (it needs a name)")


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def thesis_split(X, y, n_fit: int = 1000, n_test: int = 500, seed: int = 0):
    """Random split into ``n_fit`` rows to fit and ``n_test`` held out (the thesis: 1000 / 500).

    When the data has fewer rows than ``n_fit + n_test`` the two counts are
    scaled down in proportion (quick runs, partial collections).
    """
    n = len(X)
    for name, v in (("n_fit", n_fit), ("n_test", n_test)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}: expected a whole number >= 1, got {v!r}")
    if n < n_fit + n_test:
        n_fit = max(1, int(round(n * n_fit / (n_fit + n_test))))
        n_test = n - n_fit
    idx = np.random.default_rng(seed).permutation(n)
    tr, te = idx[:n_fit], idx[n_fit:n_fit + n_test]
    return X.iloc[tr], X.iloc[te], y.iloc[tr], y.iloc[te]




def load_provenance(data_path) -> dict:
    """The provenance JSON beside a measured file (``{}`` when there is none)."""
    path = provenance_path(data_path)
    if not path.exists():
        return {}
    return read_json(path, f"provenance file {path}")
