"""Chapter 6's data: the fit/held-out split of each dataset, the files it is read from, and Extra-P's results
for the same splits."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..._io import read_json
from ...data.external import EXTERNAL_DATASETS, load_external
from ...data.measured import load_steps, thesis_split
from ...model.selection.baselines import train_test_split_frame
from ...model.forms.costs import CONFIG_KEYS
from ...model.uncertainty.conformal import seen_rows
from ...schema import ROLES, provenance_path, resolve
from ..result import show_path
from .params import EXTERNAL_TEST, EXTRAP, MEASURED, QUICK_ROWS, Params, roles_key

__all__ = ["Split", "load_split", "dataset_files", "read_extrap", "median_base"]


@dataclass
class Split:
    """One dataset split for Chapter 6: rows to fit, held-out rows every model can predict, column roles."""

    name: str
    X_fit: object
    X_test: object
    y_fit: np.ndarray
    y_test: np.ndarray
    roles: dict
    network: str | None
    fixed: dict | None
    frame: object
    y_all: np.ndarray
    X_all: object
    source: str
    unscored: int


def dataset_files(ds: str, p: Params) -> list[Path]:
    """The files dataset ``ds`` is read from: a measured file and the provenance JSON beside it, or every file of
    a third-party dataset's folder and its provenance JSON."""
    if ds in MEASURED:
        path = resolve(getattr(p, f"{ds}_dataset"))
        return [path, provenance_path(path)]
    prov = EXTERNAL_DATASETS[ds].provenance_path()
    folder = prov.parent / prov.name[:-len(".provenance.json")]
    return sorted(f for f in folder.rglob("*") if f.is_file()) + [prov]


def _fixed_columns(network: str, roles: dict, frame) -> dict:
    """Cost-model settings the file holds at one value and no role column gives (the hybrid form's ``fixed``)."""

    keys = [k for group in CONFIG_KEYS[network] for k in group]
    cols = [c for r in roles.values() for c in r]
    fixed = {}
    for k in keys:
        if k not in cols and k in frame.columns and frame[k].nunique() == 1:
            v = frame[k].iloc[0]
            fixed[k] = v.item() if isinstance(v, np.generic) else v
    return fixed


def load_split(ds: str, p: Params) -> Split:
    """The split of dataset ``ds``: the thesis's for ours, 2/3 to fit for the third-party ones; held-out rows with
    a category level that no row to fit has are left out (no model can predict them) and counted."""

    if ds in MEASURED:
        network, (n_fit, n_test) = MEASURED[ds]
        if p.quick:
            n_fit, n_test = QUICK_ROWS
        path = resolve(getattr(p, f"{ds}_dataset"))
        X, y, frame = load_steps(path, target=p.target, roles=roles_key(ds))
        X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=n_fit, n_test=n_test, seed=p.split_seed)
        roles = {k: list(v) for k, v in ROLES[roles_key(ds)].items()}
        fixed = _fixed_columns(network, roles, frame)
        source = f"{path.parent.name}/{path.name}"
    else:
        network, fixed = None, None
        frame, meta = load_external(ds)
        roles = {"numeric": list(meta.numeric), "categorical": list(meta.categorical),
                 "extrinsic": list(meta.extrinsic)}
        if p.quick and len(frame) > sum(QUICK_ROWS):
            frame = frame.sample(n=sum(QUICK_ROWS), random_state=p.split_seed).reset_index(drop=True)
        X = frame[[c for r in roles.values() for c in r]].copy()
        y = frame[meta.target].astype(float)
        X_fit, X_test, y_fit, y_test = train_test_split_frame(X, y, test_size=EXTERNAL_TEST, random_state=p.split_seed)
        source = f"data/external/{ds} ({meta.target})"
    seen = seen_rows(X_fit, X_test, roles["categorical"])
    return Split(ds, X_fit, X_test[seen], np.asarray(y_fit, dtype=float), np.asarray(y_test, dtype=float)[seen],
                 roles, network, fixed or None, frame, np.asarray(y, dtype=float), X, source, int((~seen).sum()))


def median_base(s: Split) -> dict:
    """The configuration of the median-time row on one worker (the lower median; every row when none has one)."""
    X, y = s.X_all, s.y_all
    one = np.flatnonzero(X["workers"].to_numpy() == 1) if "workers" in X.columns else np.arange(len(y))
    one = one if one.size else np.arange(len(y))
    order = one[np.argsort(y[one], kind="stable")]
    row = X.iloc[int(order[(len(order) - 1) // 2])]
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}


def _read_json(path) -> tuple[dict, str]:
    """The JSON document at ``path`` (``{}`` when it is missing) and the path as messages show it; a file that is
    not one JSON object is one ParameterError naming ``extrap_results`` (never read as "not run")."""
    from ..result import ParameterError

    if not path:
        return {}, ""
    full = resolve(path)
    if not full.exists():
        return {}, show_path(full)
    try:
        return read_json(full, f"extrap_results: {show_path(full)}"), show_path(full)
    except ValueError as exc:
        raise ParameterError(str(exc)) from None


def _extrap_row(r, ds: str, key: str, s: Split, where: str) -> dict:
    """One Extra-P row of Table 6.1 from the file's entry ``r`` for ``ds/key`` (None when it has none)."""
    nan = float("nan")
    if not isinstance(r, dict):
        return {"MAPE": nan, "note": f"not run (no {ds}/{key} in {where})" if where else "not run"}
    n_fit, n_test = r.get("fit_rows"), r.get("test_rows")
    if (n_fit, n_test) != (len(s.y_fit), len(s.y_test) + s.unscored):
        return {"MAPE": nan, "note": f"not shown: {where} is on another split ({n_fit}/{n_test} rows, "
                                     f"here {len(s.y_fit)}/{len(s.y_test) + s.unscored})"}
    value = r.get("mape")
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    predicted = r.get("rows_predicted")
    return {"MAPE": float(value) if ok else nan,
            "note": (f"{where}: Extra-P {r.get('extrap_version', '')}, {predicted} of {n_test} held-out "
                     "rows predicted" if ok else f"{where}: no model for this split")}


def read_extrap(path, splits: dict) -> dict:
    """Extra-P's held-out MAPE per dataset from ``bench_extrap.py``'s JSON: ``{dataset: {label: row}}``.

    ``row`` has ``MAPE`` (NaN when there is none) and ``note``. A variant of :data:`EXTRAP` counts only when the
    file has it for the dataset on the same split (rows fitted and held out as here); otherwise the row says why
    not ("not run", "another split", "no model"). ``path`` "" or a missing file: every row "not run".
    """
    doc, where = _read_json(path)
    results = doc.get("results", {}) if isinstance(doc, dict) else {}
    return {ds: {label: _extrap_row(results.get(f"{ds}/{key}") if isinstance(results, dict) else None,
                                    ds, key, s, where)
                 for label, key in EXTRAP.items()}
            for ds, s in splits.items()}
