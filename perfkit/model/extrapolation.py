"""Measure small, predict large: extrapolation splits along one column, their errors, and inner selection.

A model fitted on the rows where a scale column (workers, GPUs, nodes, batch) is at most ``fit_max`` is
scored on the rows beyond it (:func:`scale_split`), per group (e.g. per job: each group is fitted on its
own) and per extrapolation factor (the column's value / ``fit_max``): :func:`extrapolation_errors`. The
choice of a model (form, hyperparameters) must not look at the rows it will be scored on, so
:func:`select_by_extrapolation` picks one by **inner** extrapolation splits inside the fit rows (e.g. fit
on <= 4 GPUs, score on 8-16, for a protocol that fits on <= 16 and predicts 32-64), and
:func:`calibrate_extrapolation` calibrates prediction intervals on the same inner splits: split-conformal
scores |log(y/ŷ)| / d, with d = 1 + log2(factor) growing with the extrapolation distance, whose
(1 − α) quantile q gives the interval ŷ·exp(±q·d) at a row of factor ``factor``.
"""
from __future__ import annotations

import numpy as np

from .._checks import check_number
from .validation import missing_column_error, numeric_column

__all__ = ["scale_split", "extrapolation_predictions", "extrapolation_errors", "error_table", "select_by_extrapolation",
           "calibrate_extrapolation", "extrapolation_interval", "interval_coverage", "distance"]

MEDIAN = "median"  # the group label of the median over groups


def _column(frame, column):
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame: expected a pandas DataFrame, got {type(frame).__name__}")
    if column not in frame.columns:
        raise missing_column_error(frame, column, "scale")
    v = numeric_column(frame, column, "scale")
    if not np.all(np.isfinite(v) & (v > 0)):
        raise ValueError(f"column {column!r}: the scale column must hold finite numbers > 0")
    return v


def scale_split(frame, column, fit_max, test_min=None, test_max=None):
    """(fit rows, test rows) of ``frame``: fit where ``column`` <= ``fit_max``; test where it is >= ``test_min``
    (default: > ``fit_max``) and <= ``test_max`` (default: no limit). Rows in between are in neither."""
    v = _column(frame, column)
    fit_max = check_number("fit_max", fit_max, positive=True)
    lo = fit_max if test_min is None else check_number("test_min", test_min, positive=True)
    if lo < fit_max:
        raise ValueError(f"test_min: {lo:g} is below fit_max {fit_max:g} (the test rows must lie beyond the fit rows)")
    hi = np.inf if test_max is None else check_number("test_max", test_max, positive=True)
    test = (v > lo) if test_min is None else (v >= lo)
    return frame[v <= fit_max], frame[test & (v <= hi)]


def distance(values, fit_max) -> np.ndarray:
    """Extrapolation distance d = 1 + log2(value / fit_max) (1 at the edge of the fit rows, 2 at twice it)."""
    return 1.0 + np.log2(np.maximum(np.asarray(values, dtype=float) / float(fit_max), 1.0))


def _group_frames(frame, groups):
    if groups is None:
        return [(None, frame)]
    if groups not in frame.columns:
        raise missing_column_error(frame, groups, "groups")
    return [(g, frame[frame[groups] == g]) for g in sorted(frame[groups].unique().tolist(), key=str)]


def extrapolation_predictions(model, frame, column, fit_max, target, groups="job", *, test_min=None,
                              test_max=None, predict_drop=()):
    """The test rows of :func:`scale_split` (per group, each group fitted on its own fit rows with a clone of
    ``model``) with ``predicted``, ``factor`` (column / fit_max) and ``distance`` (:func:`distance`) added.

    The model is fitted on every column but ``target`` and ``groups`` and predicts from those less
    ``predict_drop`` (measurements that a prediction must not see, e.g. a measured phase)."""
    import pandas as pd
    from sklearn.base import clone

    if target not in frame.columns:
        raise missing_column_error(frame, target, "target")
    out = []
    for _, rows in _group_frames(frame, groups):
        fit, test = scale_split(rows, column, fit_max, test_min, test_max)
        if len(test) == 0 or len(fit) == 0:
            continue
        keyed = [target] if groups is None else [target, groups]
        est = clone(model).fit(fit.drop(columns=keyed), fit[target].to_numpy(dtype=float))
        pred = est.predict(test.drop(columns=[*keyed, *predict_drop]))
        t = test.copy()
        t["predicted"] = np.asarray(pred, dtype=float)
        t["factor"] = t[column].to_numpy(dtype=float) / float(fit_max)
        t["distance"] = distance(t[column], fit_max)
        out.append(t)
    if not out:
        raise ValueError(f"column {column!r}: no group has both fit rows (<= {fit_max:g}) and test rows")
    return pd.concat(out)


def error_table(pred, target, groups, name):
    """Tidy MAPE rows of one model's test predictions (:func:`extrapolation_predictions`): model, group, factor
    (or ``"all"``), n and mape per group × factor and per group, and group ``"median"``: the median over groups."""
    import pandas as pd

    ape = 100.0 * np.abs(pred["predicted"] - pred[target]) / pred[target]
    p = pred.assign(ape=ape, _g=pred[groups] if groups is not None else "all")
    rows = []
    for g, rg in p.groupby("_g", sort=True):
        for f, rf in rg.groupby("factor", sort=True):
            rows.append(dict(model=name, group=g, factor=float(f), n=len(rf), mape=float(rf.ape.mean())))
        rows.append(dict(model=name, group=g, factor="all", n=len(rg), mape=float(rg.ape.mean())))
    t = pd.DataFrame(rows)
    med = [dict(model=name, group=MEDIAN, factor=f, n=int(r.n.sum()), mape=float(r.mape.median()))
           for f, r in t.groupby("factor", sort=False)]
    return pd.concat([t, pd.DataFrame(med)], ignore_index=True)


def extrapolation_errors(models: dict, frame, column, fit_max, target, groups="job", *, test_min=None,
                         test_max=None, predict_drop=(), return_predictions=False):
    """MAPE (%) of each model of ``models`` (name → unfitted estimator) when fitted on the rows with
    ``column`` <= ``fit_max`` and predicting the rows beyond (``test_min``/``test_max``), per group.

    Returns a tidy DataFrame with columns model, group, factor (column / fit_max, or ``"all"``), n (test
    rows) and mape; group ``"median"`` holds the median of the groups' MAPEs at each factor. With
    ``return_predictions`` also a dict name → the test rows with their predictions
    (:func:`extrapolation_predictions`)."""
    import pandas as pd

    if not isinstance(models, dict) or not models:
        raise ValueError("models: expected a non-empty dict of name -> estimator")
    tables, preds = [], {}
    for name, model in models.items():
        pred = extrapolation_predictions(model, frame, column, fit_max, target, groups, test_min=test_min,
                                         test_max=test_max, predict_drop=predict_drop)
        preds[name] = pred
        tables.append(error_table(pred, target, groups, name))
    table = pd.concat(tables, ignore_index=True)
    return (table, preds) if return_predictions else table


def _check_splits(splits):
    ok = isinstance(splits, (list, tuple)) and splits and all(
        isinstance(s, (list, tuple)) and len(s) in (2, 3) for s in splits)
    if not ok:
        raise ValueError(f"splits: expected a non-empty list of (fit_max, test_min[, test_max]), got {splits!r}")
    return [tuple(s) + (None,) * (3 - len(s)) for s in splits]


def select_by_extrapolation(candidates: dict, fit_frame, column, target, splits, groups="job", *,
                            predict_drop=()):
    """Pick a candidate by inner extrapolation splits of the fit rows only.

    ``candidates``: name → unfitted estimator (in order of preference: ties go to the first). ``splits``:
    (fit_max, test_min[, test_max]) inner splits of ``fit_frame`` along ``column``. A candidate's score is
    the mean over the splits of the median over ``groups`` of its MAPE (:func:`extrapolation_errors`).

    Returns ``(best name, scores)``: scores a DataFrame with one row per candidate, a column per split
    (``"<=fit_max→test_min-test_max"``) and ``score``, sorted best first."""
    import pandas as pd

    if not isinstance(candidates, dict) or not candidates:
        raise ValueError("candidates: expected a non-empty dict of name -> estimator")
    rows = []
    for name, model in candidates.items():
        row = {"candidate": name}
        for fm, lo, hi in _check_splits(splits):
            t = extrapolation_errors({name: model}, fit_frame, column, fm, target, groups, test_min=lo,
                                     test_max=hi, predict_drop=predict_drop)
            key = f"<={fm:g}→{lo:g}-{'' if hi is None else f'{hi:g}'}"
            row[key] = float(t[(t.group == MEDIAN) & (t.factor.astype(str) == "all")].mape.iloc[0])
        row["score"] = float(np.mean([v for k, v in row.items() if k != "candidate"]))
        rows.append(row)
    scores = pd.DataFrame(rows)
    order = np.argsort(scores.score.to_numpy(), kind="stable")
    scores = scores.iloc[order].reset_index(drop=True)
    return str(scores.candidate.iloc[0]), scores


def calibrate_extrapolation(model, fit_frame, column, target, splits, groups="job", *, alpha=0.1,
                            predict_drop=()):
    """Split-conformal half-width per group for intervals that widen with the extrapolation distance.

    On each inner split of ``fit_frame`` (as in :func:`select_by_extrapolation`) the scores
    |log(y/ŷ)| / d (d: :func:`distance` from the split's fit_max) of the held rows are pooled per group;
    the half-width q is their ⌈(n+1)(1−α)⌉-th smallest (the largest when n is too small). Returns a dict
    group → q (key None without groups); :func:`extrapolation_interval` turns it into intervals."""
    alpha = check_number("alpha", alpha, positive=True)
    if alpha >= 1:
        raise ValueError(f"alpha: expected a number in (0, 1), got {alpha!r}")
    scores: dict = {}
    for fm, lo, hi in _check_splits(splits):
        pred = extrapolation_predictions(model, fit_frame, column, fm, target, groups, test_min=lo, test_max=hi,
                                         predict_drop=predict_drop)
        s = np.abs(np.log(pred[target].to_numpy(dtype=float) / pred["predicted"].to_numpy())) / pred["distance"]
        keys = pred[groups].tolist() if groups is not None else [None] * len(pred)
        for k, v in zip(keys, s.tolist()):
            scores.setdefault(k, []).append(v)
    out = {}
    for k, v in scores.items():
        v = np.sort(np.asarray(v))
        rank = min(int(np.ceil((len(v) + 1) * (1 - alpha))), len(v))
        out[k] = float(v[rank - 1])
    return out


def extrapolation_interval(predicted, values, fit_max, q):
    """(lower, upper) = ŷ·exp(∓q·d) with d = :func:`distance` (``values`` / ``fit_max``); q one number or per row."""
    pred = np.asarray(predicted, dtype=float)
    w = np.asarray(q, dtype=float) * distance(values, fit_max)
    return pred * np.exp(-w), pred * np.exp(w)


def interval_coverage(y, lower, upper) -> float:
    """Share of ``y`` inside [lower, upper] (0 to 1)."""
    y = np.asarray(y, dtype=float)
    return float(np.mean((y >= np.asarray(lower)) & (y <= np.asarray(upper))))
