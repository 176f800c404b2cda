"""What a study sets beside its model: the baselines, the held-out errors with intervals, the errors by
extrapolation factor and the comparison on the inner extrapolation splits of the fit rows, each as data."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..evidence import METRICS, paired_bootstrap, percentile_interval
from ..model.selection.baselines import LABELS, compare_models, make_baseline
from .spec import FitSpec

__all__ = ["ERROR_COLUMNS", "MAX_FACTOR_ROWS", "baseline_roles", "baselines", "held_out_table", "factor_table",
           "inner_comparison"]

#: the held-out errors a study reports, in order (MAPE in %)
ERROR_COLUMNS = ["MAPE", "R2", "MAE", "RMSE"]
#: with more distinct extrapolation factors than this, the table groups them by doubling (1-2×, 2-4×, ...)
MAX_FACTOR_ROWS = 12


def baseline_roles(spec: FitSpec) -> dict:
    """The roles the random forest and gradient boosting read: the form's, with the step columns as extrinsic."""
    roles = spec.roles
    taken = {c for cols in roles.values() for c in cols}
    extra = [c for c in (spec.step_roles or {}).values() if c not in taken]
    return {**roles, "extrinsic": [*roles["extrinsic"], *extra]}


def baselines(spec: FitSpec, kinds=("rf", "gb"), roles: dict | None = None) -> dict:
    """Label → unfitted baseline of each kind (:data:`~perfkit.model.selection.baselines.LABELS`), seeded,
    on ``roles`` (default :func:`baseline_roles`)."""
    roles = baseline_roles(spec) if roles is None else roles
    return {LABELS[k]: make_baseline(k, **roles, random_state=0, **({"n_jobs": spec.n_jobs} if k == "rf" else {}))
            for k in kinds}


def held_out_table(models: dict, split, predictions: dict) -> pd.DataFrame:
    """:func:`~perfkit.model.selection.baselines.compare_models` of the ``models`` (each already fitted on the fit
    rows of ``split``) on its held-out rows, with ``MAPE_lo`` and ``MAPE_hi``: the 95 % percentile interval of each
    model's MAPE over :func:`perfkit.evidence.paired_bootstrap` resamples of the held-out rows (the same resamples
    for every model, so differences are paired); ``predictions`` are the models' predictions of those rows."""
    table = compare_models(models, split.X_fit, split.y_fit, split.X_test, split.y_test, prefitted=set(models))
    boot = paired_bootstrap(np.asarray(split.y_test, dtype=float), predictions, METRICS["MAPE"])
    bounds = [percentile_interval(boot[name][1]) for name in table.index]
    return table.assign(MAPE_lo=[lo for lo, _ in bounds], MAPE_hi=[hi for _, hi in bounds])


def _factor_labels(values, top):
    """Per row its extrapolation factor's label (``2×``; by doubling, ``1-2×``, with many factors) and sort key."""
    f = np.asarray(values, dtype=float) / top
    if len(np.unique(f)) <= MAX_FACTOR_ROWS:
        return [f"{x:.3g}×" for x in f], f
    hi = 2.0 ** np.ceil(np.log2(f) - 1e-9)
    return [f"{h / 2:g}-{h:g}×" for h in hi], hi


def factor_table(predictions: dict, y, values, scale) -> pd.DataFrame:
    """MAPE (%) of each model's ``predictions`` (name → array) on the test rows by extrapolation factor
    (COL / MAX) and over all: rows ``factor``, columns COL (the values), ``rows`` and one per model."""
    col, top = scale
    labels, keys = _factor_labels(values, top)
    y = np.asarray(y, dtype=float)
    ape = {name: 100.0 * np.abs(np.asarray(p, dtype=float) - y) / y for name, p in predictions.items()}
    frame = pd.DataFrame({"factor": labels, "key": keys, col: np.asarray(values, dtype=float), **ape})
    rows = []
    for (label, _), g in frame.groupby(["factor", "key"], sort=False):
        lo, hi = g[col].min(), g[col].max()
        rows.append({"factor": label, "_k": g["key"].iloc[0], col: f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}",
                     "rows": len(g), **{n: g[n].mean() for n in predictions}})
    out = pd.DataFrame(rows).sort_values("_k").drop(columns="_k")
    total = {"factor": "all", col: "", "rows": len(frame), **{n: frame[n].mean() for n in predictions}}
    return pd.concat([out, pd.DataFrame([total])], ignore_index=True)


def inner_comparison(estimators: dict, X_fit, y_fit, scale, phases=(), splits=None) -> dict:
    """Name → MAPE (%) of each unfitted estimator on the inner extrapolation splits of the fit rows (``splits``,
    default :func:`~perfkit.model.uncertainty.scale_intervals.inner_splits`: those that calibrate the intervals),
    averaged over the splits; empty without a split. Fit rows only: the held-out rows are never read."""
    from ..model.uncertainty.extrapolation import select_by_extrapolation
    from ..model.uncertainty.scale_intervals import inner_splits
    from ..model.validation import target_column

    col, top = scale
    if splits is None:
        splits = inner_splits(np.asarray(X_fit[col], dtype=float), top)
    if not splits:
        return {}
    target = target_column(X_fit)
    frame = X_fit.assign(**{target: np.asarray(y_fit, dtype=float)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, scores = select_by_extrapolation(estimators, frame, col, target, splits, groups=None,
                                            predict_drop=list(phases))
    score = dict(zip(scores.candidate, scores.score))
    return {name: float(score[name]) for name in estimators}
