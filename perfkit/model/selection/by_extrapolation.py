"""Choosing a search's candidate by inner extrapolation splits of the rows to fit (``search_forms(...,
select="extrapolation", extrapolate=(column, fit_max))``): each candidate is fitted on the rows up to a quarter
and up to half of ``fit_max`` and scored on the rows above, and the lowest mean MAPE wins. A candidate that
cannot be fitted or cannot predict there (a rate per measured level the inner fit rows lack) scores NaN and is
never chosen."""
from __future__ import annotations

import warnings

import numpy as np

from ..._checks import check_number
from ..uncertainty.extrapolation import check_predict_drop
from ..uncertainty.scale_intervals import inner_splits
from ..validation import numeric_column, target_column
from .fitting import run_parallel

__all__ = ["check_extrapolate", "extrapolation_score", "extrapolation_choice"]


def check_extrapolate(X, extrapolate, predict_drop) -> None:
    """``extrapolate`` is (a numeric column of ``X`` with values > 0, fit_max > 0) and ``predict_drop`` a list of
    columns of ``X``: checked before any fit."""
    if not (isinstance(extrapolate, (tuple, list)) and len(extrapolate) == 2 and isinstance(extrapolate[0], str)):
        raise ValueError(f"extrapolate: expected (column, fit_max) with select='extrapolation', got {extrapolate!r}")
    column, fit_max = extrapolate
    if column not in X.columns:
        raise ValueError(f"extrapolate: column {column!r} is not a column of X")
    values = numeric_column(X, column, "extrapolate")
    if not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError(f"extrapolate: column {column!r} must hold finite numbers > 0 (its values are scales)")
    check_number("extrapolate's fit_max", fit_max, positive=True)
    check_predict_drop(X, predict_drop)


def extrapolation_score(est, frame, column, target, splits, predict_drop) -> float:
    """Mean MAPE (%) over the inner ``splits`` of one candidate (:func:`select_by_extrapolation`); NaN when it
    cannot be fitted or cannot predict there (e.g. a level that the inner fit rows lack)."""
    from ..uncertainty.extrapolation import select_by_extrapolation

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            _, scores = select_by_extrapolation({"candidate": est}, frame, column, target, splits, groups=None,
                                                predict_drop=list(predict_drop))
        except ValueError:
            return float("nan")
    return float(scores["score"].iloc[0])


def extrapolation_choice(table, cands, X, y, extrapolate, predict_drop, n_jobs, progress) -> int:
    """Score every candidate by inner extrapolation splits (column ``extrap_mape`` of ``table``; the splits in
    ``table.attrs["splits"]``) and return the row of the lowest score (ties: the first)."""
    from joblib import delayed

    column, fit_max = extrapolate
    values = np.asarray(X[column], dtype=float)
    splits = inner_splits(values, float(fit_max))
    if not splits:
        raise ValueError(f"extrapolate: the {len(X)} rows have no inner extrapolation split along {column!r} (fit on "
                         f"the rows up to a quarter or half of {float(fit_max):g}, score the rows above): too few "
                         "rows or values")
    target = target_column(X)
    frame = X.assign(**{target: y})
    tasks = [delayed(extrapolation_score)(c.estimator, frame, column, target, splits, predict_drop) for c in cands]
    scores = np.asarray(run_parallel(n_jobs, None, tasks, len(tasks), "extrapolation scores", progress), dtype=float)
    if np.isnan(scores).all():
        raise ValueError(f"extrapolate: no candidate could be fitted and scored on the inner splits {splits}")
    table["extrap_mape"] = scores
    table.attrs["splits"] = "; ".join(f"fit {column} <= {a:g}, score {b:g} to {c:g}" for a, b, c in splits)
    return int(np.nanargmin(scores))
