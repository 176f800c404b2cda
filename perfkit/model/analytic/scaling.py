"""Scaling exponents: the fitted q of an extrinsic factor, local power laws, and what a machine allows.

:func:`scaling_power` reads q (mean ± std over seeds) from a repeated fit
(Tables 4.5, 5.4). :func:`core_bound` is the best q(workers) that CPU workers
sharing fewer cores can reach.

Chapter 5 extension: how the fitted scaling exponents depend on the volume size.

The thesis trained 3D-ResAttNet-18 on full-size scans (181×217×181) on GPUs; on a
CPU we time smaller volumes. :func:`volume_exponents` measures what that changes:
for every (``num_filters``, ``volume``) cell of a ``perfkit collect ch5vol`` grid
it fits the local power law

    log t = log A + q_workers · log(workers) + q_batch · log(batch_size)

by least squares, i.e. the generic model's extrinsic part Π E_j^q_j at one fixed
intrinsic configuration with C = 0. Ideal data parallelism gives
q_workers = −1 for the epoch time; a fixed per-step cost that does not shrink
with the batch pushes q_batch below 0.
"""
from __future__ import annotations

import numpy as np

from ...schema import voxels

__all__ = ["scaling_power", "volume_exponents", "core_bound", "level_effects"]


def scaling_power(summary, column: str = "workers") -> tuple[float, float]:
    """Mean and std over seeds of the power q of ``column`` (Table 4.5)."""
    row = summary[(summary["kind"] == "extrinsic") & (summary["column"] == column)]
    if row.empty:
        raise ValueError(f"column: no extrinsic term {column!r} in the fit")
    return float(row["q_mean"].iloc[0]), float(row["q_std"].iloc[0])


def volume_exponents(frame, target: str = "epoch_time", by=("num_filters", "volume")):
    """Least-squares power-law exponents of ``target`` in workers and batch size, per ``by`` cell.

    Parameters
    ----------
    frame : DataFrame
        Rows of a ``ch5vol`` (or ``ch5``) collection; rows whose ``status`` is not ``ok`` are ignored.
    target : str
        ``epoch_time`` (the thesis's target) or ``step_time``.
    by : sequence of str
        Columns that define one cell; each cell needs at least 4 rows with 2+ worker counts and 2+ batch sizes.

    Returns
    -------
    DataFrame
        One row per cell: the ``by`` columns, ``voxels``, ``n``, ``q_workers``, ``q_workers_se``,
        ``q_batch``, ``q_batch_se``, ``r2`` and ``speedup_max`` (time at the fewest workers over time at
        the most, at the largest batch), sorted by ``by``.
    """
    import pandas as pd

    need = {target, "workers", "batch_size", *by}
    missing = sorted(need - set(frame.columns))
    if missing:
        raise ValueError(f"{missing[0]}: column missing from the frame (have {sorted(frame.columns)})")
    df = frame[frame["status"] == "ok"] if "status" in frame.columns else frame
    bad = df[~(pd.to_numeric(df[target], errors="coerce") > 0)]
    if len(bad):
        raise ValueError(f"{target}: row {bad.index[0]} is not a positive number ({bad[target].iloc[0]!r})")
    rows = []
    for key, cell in df.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        name = dict(zip(by, key))
        if len(cell) < 4 or cell["workers"].nunique() < 2 or cell["batch_size"].nunique() < 2:
            raise ValueError(f"{name}: needs at least 4 ok rows over 2+ worker counts and 2+ batch sizes "
                             f"(has {len(cell)})")
        X = np.column_stack([np.ones(len(cell)), np.log(cell["workers"].astype(float)),
                             np.log(cell["batch_size"].astype(float))])
        y = np.log(cell[target].astype(float).to_numpy())
        coef, *_ = np.linalg.lstsq(X, y, rcond=None)
        resid = y - X @ coef
        dof = max(len(y) - 3, 1)
        cov = (resid @ resid / dof) * np.linalg.inv(X.T @ X)
        se = np.sqrt(np.diag(cov))
        r2 = 1.0 - (resid @ resid) / max(((y - y.mean()) ** 2).sum(), 1e-300)
        bmax = cell[cell["batch_size"] == cell["batch_size"].max()]
        t_by_g = bmax.groupby("workers")[target].median()
        rows.append(dict(name, voxels=voxels(name["volume"]) if "volume" in name else np.nan, n=len(cell),
                         q_workers=coef[1], q_workers_se=se[1], q_batch=coef[2], q_batch_se=se[2], r2=r2,
                         speedup_max=float(t_by_g.iloc[0] / t_by_g.iloc[-1]) if len(t_by_g) > 1 else np.nan))
    out = pd.DataFrame(rows)
    return out.sort_values([c for c in ("num_filters", "voxels") if c in out.columns]).reset_index(drop=True)




def core_bound(workers, cores: int | None, device: str = "cpu") -> float:
    """The best q(workers) a machine allows: −1 on one device per worker; on a CPU with fewer cores than workers,
    the least-squares slope of log(1 / min(G, cores)) over log G for the measured worker counts G.

    >>> round(core_bound([1, 2, 3], cores=2), 3)
    -0.671
    >>> core_bound([1, 2, 3], cores=8)
    -1.0
    """
    ws = np.array(sorted(set(workers)), dtype=float)
    if device != "cpu" or not cores or cores >= ws.max():
        return -1.0
    return float(np.polyfit(np.log(ws), -np.log(np.minimum(ws, cores)), 1)[0])


def level_effects(frame, target: str, factors, log_columns=()):
    """Ordinary least squares of ``log(target)`` on every factor as a category and ``log`` of ``log_columns``.

    What a hyperparameter costs, read directly from the measurements: with the
    other factors held fixed, ``exp(β[F=L] − β[F=M])`` is the ratio of the time at
    level L of factor F to the time at level M (the first level, in sorted order, is
    the reference with β = 0). A column of ``log_columns`` enters as ``log(column)``,
    so its coefficient is a power, like q of the generic model. The covariance is
    heteroscedasticity-robust (HC3). Rows whose ``status`` is not ``ok`` are ignored.

    Returns
    -------
    params : pandas.Series
        ``const``, ``F=L`` for every non-reference level, ``log(column)``.
    cov : pandas.DataFrame
        Their covariance.
    levels : dict
        Factor → its measured levels, sorted (the first is the reference).
    """
    import pandas as pd
    import statsmodels.api as sm

    df = frame[frame["status"] == "ok"] if "status" in frame.columns else frame
    factors = [f for f in factors if f not in log_columns]
    missing = [c for c in [target, *factors, *log_columns] if c not in df.columns]
    if missing:
        raise ValueError(f"{missing[0]}: column missing from the frame (have {sorted(df.columns)})")
    y = pd.to_numeric(df[target], errors="coerce").to_numpy(dtype=float)
    if not (np.isfinite(y) & (y > 0)).all():
        raise ValueError(f"{target}: every row needs a positive time")
    parts = [pd.Series(1.0, index=df.index, name="const")]
    levels = {f: sorted(df[f].astype(str).unique()) for f in factors}
    for f in factors:
        for level in levels[f][1:]:
            parts.append((df[f].astype(str) == level).astype(float).rename(f"{f}={level}"))
    for c in log_columns:
        parts.append(np.log(df[c].astype(float)).rename(f"log({c})"))
    X = pd.concat(parts, axis=1)
    ols = sm.OLS(np.log(y), X).fit(cov_type="HC3")
    return ols.params, ols.cov_params(), levels
