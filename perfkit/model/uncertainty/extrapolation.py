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

Inner splits see errors at a smaller scale than the one predicted, and extrapolating further may err more per unit
of distance than they show. :func:`calibrate_transfer` measures that inflation on **other groups** (e.g. other
jobs of the same cluster) fitted on the same split: for each reference group k, the scores of its rows beyond
``fit_max`` divided by its own inner q (:func:`inflation_ratios`); their conformal (1 − α) quantile κ
(:func:`transfer_inflation`) multiplies the inner q of the group predicted. A group's interval never uses its own
rows beyond ``fit_max``: only its fit rows (its inner q) and the other groups' rows (κ), which is what a user with a
new job has.

:func:`factor_splits` states one rule, by extrapolation factor, for the outer and inner splits of a scale column.
"""
from __future__ import annotations

import numpy as np

from ..._checks import check_number
from ..validation import first_bad_row, missing_column_error, numeric_column

__all__ = ["scale_split", "extrapolation_predictions", "extrapolation_errors", "error_table", "select_by_extrapolation",
           "calibrate_extrapolation", "extrapolation_interval", "interval_coverage", "distance", "conformal_quantile",
           "inflation_ratios", "transfer_inflation", "calibrate_transfer", "factor_splits", "factor_inner_splits",
           "INNER_FRACTIONS",
           "select_median_of_top", "check_predict_drop"]

MEDIAN = "median"  # the group label of the median over groups


def _column(frame, column):
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame: expected a pandas DataFrame, got {type(frame).__name__}")
    if not isinstance(column, str):
        raise ValueError(f"column: expected the name of the scale column, got {column!r}")
    if column not in frame.columns:
        raise missing_column_error(frame, column, "extrapolation")
    v = numeric_column(frame, column, "extrapolation")
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
    if not isinstance(groups, str):
        raise ValueError(f"groups: expected None or the name of the groups column, got {groups!r}")
    if groups not in frame.columns:
        raise missing_column_error(frame, groups, "groups")
    at = first_bad_row(frame[groups].isna().to_numpy(), frame.index)
    if at:
        raise ValueError(f"groups column {groups!r}: missing value in row {at[1]!r} (every row belongs to a group; "
                         "its rows would be left out)")
    return [(g, frame[frame[groups] == g]) for g in sorted(frame[groups].unique().tolist(), key=str)]


def extrapolation_predictions(model, frame, column, fit_max, target, groups="job", *, test_min=None,
                              test_max=None, predict_drop=()):
    """The test rows of :func:`scale_split` (per group, each group fitted on its own fit rows with a clone of
    ``model``) with ``predicted``, ``factor`` (column / fit_max) and ``distance`` (:func:`distance`) added.

    The model is fitted on every column but ``target`` and ``groups`` and predicts from those less
    ``predict_drop`` (measurements that a prediction must not see, e.g. a measured phase)."""
    import pandas as pd
    from sklearn.base import clone

    _check_target(frame, target)
    drop = check_predict_drop(frame, predict_drop)
    if not _is_estimator(model):
        raise ValueError(f"model: expected an estimator with fit and predict, got {type(model).__name__}")
    out = []
    for _, rows in _group_frames(frame, groups):
        fit, test = scale_split(rows, column, fit_max, test_min, test_max)
        if len(test) == 0 or len(fit) == 0:
            continue
        keyed = [target] if groups is None else [target, groups]
        est = clone(model).fit(fit.drop(columns=keyed), fit[target].to_numpy(dtype=float))
        pred = est.predict(test.drop(columns=[*keyed, *drop]))
        t = test.copy()
        t["predicted"] = np.asarray(pred, dtype=float)
        t["factor"] = t[column].to_numpy(dtype=float) / float(fit_max)
        t["distance"] = distance(t[column], fit_max)
        out.append(t)
    if not out:
        raise ValueError(f"column {column!r}: no group has both fit rows (<= {fit_max:g}) and test rows")
    return pd.concat(out)


def _is_estimator(est) -> bool:
    return hasattr(est, "fit") and hasattr(est, "predict")


def _check_models(models: dict, name: str) -> None:
    """``models``: a non-empty dict of name → estimator (with fit and predict); else one error naming the entry."""
    if not isinstance(models, dict) or not models:
        raise ValueError(f"{name}: expected a non-empty dict of name -> estimator")
    for key, est in models.items():
        if not _is_estimator(est):
            raise ValueError(f"{name}[{key!r}]: expected an estimator with fit and predict, got {type(est).__name__}")


def _check_target(frame, target) -> None:
    """The ``target`` column: in ``frame``, every value a finite time > 0 (a MAPE divides by it)."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame: expected a pandas DataFrame, got {type(frame).__name__}")
    if not isinstance(target, str) or target not in frame.columns:
        raise missing_column_error(frame, target, "target") if isinstance(target, str) else ValueError(
            f"target: expected the name of the measured time's column, got {target!r}")
    t = numeric_column(frame, target, "target")
    at = first_bad_row(~(np.isfinite(t) & (t > 0)), frame.index)
    if at:
        raise ValueError(f"target column {target!r}: value {t[at[0]]:g} in row {at[1]!r} is not a finite time > 0")


def check_predict_drop(frame, predict_drop) -> list:
    """``predict_drop`` (the measured columns a prediction must not see) as a list of columns of ``frame``; else one
    ValueError naming it."""
    if isinstance(predict_drop, str) or not all(isinstance(c, str) for c in predict_drop):
        raise ValueError(f"predict_drop: expected a list of column names, got {predict_drop!r}")
    for c in predict_drop:
        if c not in frame.columns:
            raise missing_column_error(frame, c, "predict_drop")
    return list(predict_drop)


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

    _check_models(models, "models")
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

    _check_models(candidates, "candidates")
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


def select_median_of_top(candidates: dict, fit_frame, column, target, splits, groups="job", *, predict_drop=()):
    """Pick k and the median of the best k candidates' predictions by inner extrapolation splits of the fit rows.

    The candidates are ranked as :func:`select_by_extrapolation` ranks them (the same scores, ties to the
    first); then, for every k from 1 to the number of candidates, the median of the top k candidates' predictions
    on each inner split is scored the same way (mean over the splits of the median over ``groups`` of the MAPE),
    and the best k wins (the smallest on a tie). Every prediction is made once; nothing outside ``fit_frame`` is
    read.

    Returns ``(names, scores, k_scores)``: the chosen candidates best first (k of them), the candidates' scores
    (as :func:`select_by_extrapolation`'s) and a DataFrame with one row per k (``k``, a column per split,
    ``score``) sorted by k."""
    import pandas as pd

    _check_models(candidates, "candidates")
    splits = _check_splits(splits)
    keys = [f"<={fm:g}→{lo:g}-{'' if hi is None else f'{hi:g}'}" for fm, lo, hi in splits]
    preds = {}
    for name, model in candidates.items():
        preds[name] = [extrapolation_predictions(model, fit_frame, column, fm, target, groups, test_min=lo,
                                                 test_max=hi, predict_drop=predict_drop) for fm, lo, hi in splits]

    def score(frames):
        row = {}
        for key, p in zip(keys, frames):
            t = error_table(p, target, groups, "m")
            row[key] = float(t[(t.group == MEDIAN) & (t.factor.astype(str) == "all")].mape.iloc[0])
        row["score"] = float(np.mean([row[k] for k in keys]))
        return row

    rows = [{"candidate": name, **score(frames)} for name, frames in preds.items()]
    scores = pd.DataFrame(rows)
    scores = scores.iloc[np.argsort(scores.score.to_numpy(), kind="stable")].reset_index(drop=True)
    order = scores.candidate.tolist()
    k_rows = []
    for k in range(1, len(order) + 1):
        frames = []
        for i in range(len(splits)):
            member = [preds[name][i]["predicted"].to_numpy(dtype=float) for name in order[:k]]
            frames.append(preds[order[0]][i].assign(predicted=np.median(np.vstack(member), axis=0)))
        k_rows.append({"k": k, **score(frames)})
    k_scores = pd.DataFrame(k_rows)
    best_k = int(k_scores.k.iloc[int(np.argmin(k_scores.score.to_numpy()))])
    return order[:best_k], scores, k_scores


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
    return {k: conformal_quantile(v, alpha, cap=True) for k, v in scores.items()}


def conformal_quantile(scores, alpha, *, cap: bool = False) -> float:
    """The ⌈(n+1)(1−α)⌉-th smallest of the n ``scores`` (split-conformal, finite-sample corrected): inf when that
    rank exceeds n, or the largest score with ``cap``."""
    alpha = check_number("alpha", alpha, positive=True)
    if alpha >= 1:
        raise ValueError(f"alpha: expected a number in (0, 1), got {alpha!r}")
    v = np.sort(np.asarray(scores, dtype=float))
    if v.ndim != 1 or not len(v) or not np.all(np.isfinite(v)):
        raise ValueError("scores: expected a non-empty list of finite numbers")
    rank = int(np.ceil(round((len(v) + 1) * (1 - alpha), 9)))
    if rank > len(v):
        return float(v[-1]) if cap else float("inf")
    return float(v[rank - 1])


def _log_scores(pred, target) -> np.ndarray:
    p = pred["predicted"].to_numpy(dtype=float)
    at = first_bad_row(~(np.isfinite(p) & (p > 0)), pred.index)
    if at:
        raise ValueError(f"the model's prediction {p[at[0]]:g} for row {at[1]!r} is not a finite time > 0 (no "
                         "log-ratio score)")
    ratio = pred[target].to_numpy(dtype=float) / p
    return np.abs(np.log(ratio)) / pred["distance"].to_numpy(dtype=float)


def inflation_ratios(model, frame, column, fit_max, target, splits, groups="job", *, test_min=None, test_max=None,
                     alpha=0.1, predict_drop=()):
    """Per group: fitted on its rows <= ``fit_max``, the scores |log(y/ŷ)| / d of its rows beyond (``test_min`` to
    ``test_max``) divided by the group's inner q (:func:`calibrate_extrapolation` on ``splits`` of its fit rows at
    ``alpha``).

    Returns ``(ratios, q_inner)``: ``ratios`` the test rows (:func:`extrapolation_predictions`) with ``score`` and
    ``ratio`` added; ``q_inner`` a dict group → inner q. A ratio of 1 is a row just at the edge of its group's inner
    interval; above 1, outside it. A group whose inner q is 0 is refused (its ratios are undefined)."""
    fit_rows = scale_split(frame, column, fit_max)[0]
    q = calibrate_extrapolation(model, fit_rows, column, target, splits, groups, alpha=alpha, predict_drop=predict_drop)
    pred = extrapolation_predictions(model, frame, column, fit_max, target, groups, test_min=test_min,
                                     test_max=test_max, predict_drop=predict_drop)
    keys = pred[groups] if groups is not None else None
    inner = keys.map(q).to_numpy(dtype=float) if keys is not None else np.full(len(pred), q[None])
    if not np.all(np.isfinite(inner) & (inner > 0)):
        bad = sorted({str(k) for k, v in q.items() if not v > 0})
        raise ValueError(f"inner q is 0 for {bad or 'a group without inner scores'}: the inner splits fit those rows "
                         "exactly, so a ratio to it is undefined")
    score = _log_scores(pred, target)
    return pred.assign(score=score, ratio=score / inner), q


def transfer_inflation(ratios, alpha=0.1, *, groups="job", exclude=None) -> float:
    """κ: the conformal (1 − α) quantile (:func:`conformal_quantile`, the largest ratio when too few) of the
    ``ratio`` column of :func:`inflation_ratios`' table, leaving out the rows of group ``exclude`` (the group whose
    interval κ will widen, so that none of its rows beyond the fitted range is used)."""
    r = ratios if exclude is None else ratios[ratios[groups] != exclude]
    if not len(r):
        raise ValueError(f"no reference rows left (excluding {exclude!r}): the inflation needs other groups")
    return conformal_quantile(r["ratio"].to_numpy(dtype=float), alpha, cap=True)


def calibrate_transfer(model, frame, column, fit_max, target, splits, groups="job", *, test_min=None, test_max=None,
                       alpha=0.1, predict_drop=()):
    """Half-widths q per group from the group's own inner q and the inflation κ of the **other** groups.

    For each group j: q_j = κ_j · q_inner_j, κ_j = :func:`transfer_inflation` of every other group's
    :func:`inflation_ratios` (leave-one-group-out). Group j's rows beyond ``fit_max`` are used for no q_j (only
    for the other groups' κ). Returns a DataFrame indexed by group with columns ``q_inner``, ``kappa``, ``q`` and
    ``n_reference`` (the rows κ came from); :func:`extrapolation_interval` takes its ``q``. Needs at least two
    groups."""
    import pandas as pd

    if groups is None:
        raise ValueError("groups: transfer calibration needs groups (the other groups calibrate each one)")
    ratios, q_inner = inflation_ratios(model, frame, column, fit_max, target, splits, groups, test_min=test_min,
                                       test_max=test_max, alpha=alpha, predict_drop=predict_drop)
    names = sorted(q_inner, key=str)
    if len(set(ratios[groups])) < 2:
        raise ValueError(f"groups: {len(set(ratios[groups]))} group with rows beyond {fit_max:g}; transfer "
                         "calibration needs at least two")
    rows = []
    for g in names:
        kappa = transfer_inflation(ratios, alpha, groups=groups, exclude=g)
        rows.append(dict(group=g, q_inner=q_inner[g], kappa=kappa, q=kappa * q_inner[g],
                         n_reference=int((ratios[groups] != g).sum())))
    return pd.DataFrame(rows).set_index("group")


#: the inner splits of :func:`factor_splits` fit on the values up to these fractions of fit_max
INNER_FRACTIONS = (0.25, 0.375, 0.5)


def factor_splits(values) -> dict:
    """The extrapolation splits of a scale column by factor, one rule for any range of measured ``values``.

    Outer: fit on the values <= ``fit_max``, the largest measured value <= max / 4; score the values from
    ``test_min`` = 2·fit_max to ``test_max`` = max (factors 2 to 4 when the values reach 4·fit_max). Inner (inside
    the fit rows): for each fraction r of :data:`INNER_FRACTIONS`, fit on the values <= the largest measured value
    <= r·fit_max and score the measured values from inner_max + fit_max / 4 up to fit_max; an inner split is kept
    when it fits on at least two distinct values and scores at least one, once. On values 1..16 and 20..64 (Pollux)
    this is fit <= 16, score 32..64, inner (4, 8, 16), (6, 10, 16), (8, 12, 16).

    Returns ``{"fit_max", "test_min", "test_max", "inner": [(inner_max, test_min, test_max), ...]}``; raises
    ``ValueError`` when no value is <= max / 4 or none is >= 2·fit_max."""
    try:
        v = np.unique(np.asarray(values, dtype=float))
    except (TypeError, ValueError, OverflowError):
        v = np.array([np.nan])
    if v.ndim != 1 or not len(v) or not np.all(np.isfinite(v) & (v > 0)):
        raise ValueError(f"values: expected a list of finite numbers > 0, got {_short(values)}")
    top = float(v.max())
    below = v[v <= top / 4]
    if not len(below):
        raise ValueError(f"values: none is at most a quarter of the largest ({top:g}); no 4x extrapolation")
    fit_max = float(below.max())
    if not (v >= 2 * fit_max).any():
        raise ValueError(f"values: none reaches twice fit_max {fit_max:g}")
    return {"fit_max": fit_max, "test_min": 2 * fit_max, "test_max": top, "inner": factor_inner_splits(v, fit_max)}


def factor_inner_splits(values, fit_max) -> list:
    """The inner splits of :func:`factor_splits` inside the fit rows (``values`` <= ``fit_max``): for each fraction r
    of :data:`INNER_FRACTIONS`, fit on the values <= the largest measured value <= r·fit_max and score the measured
    values from inner_max + fit_max / 4 up to fit_max; kept when it fits on at least two distinct values and scores
    at least one, once. ``[(inner_max, test_min, fit_max), ...]`` (floats), possibly empty."""
    v = np.unique(np.asarray(values, dtype=float))
    fit_max = float(fit_max)
    inner = []
    for r in INNER_FRACTIONS:
        fit_vals = v[v <= r * fit_max]
        if len(fit_vals) < 2:
            continue
        m = float(fit_vals.max())
        scored = v[(v >= m + fit_max / 4) & (v <= fit_max)]
        if len(scored) and all(s[0] != m for s in inner):
            inner.append((m, float(scored.min()), fit_max))
    return inner


def extrapolation_interval(predicted, values, fit_max, q):
    """(lower, upper) = ŷ·exp(∓q·d) with d = :func:`distance` (``values`` / ``fit_max``); q one number or per row."""
    pred = _positive("predicted", predicted)
    v = _positive("values", values)
    q = np.asarray(q, dtype=float)
    if not np.all(np.isfinite(q) & (q >= 0)):
        raise ValueError(f"q: expected finite half-widths >= 0 (log units per distance), got {_short(q)}")
    w = q * distance(v, check_number("fit_max", fit_max, positive=True))
    return pred * np.exp(-w), pred * np.exp(w)


def interval_coverage(y, lower, upper) -> float:
    """Share of ``y`` inside [lower, upper] (0 to 1); the three of one length (at least 1)."""
    arrays = {name: np.asarray(a, dtype=float).ravel() for name, a in (("y", y), ("lower", lower), ("upper", upper))}
    n = {name: len(a) for name, a in arrays.items()}
    if len(set(n.values())) > 1 or not n["y"]:
        raise ValueError(f"y, lower, upper: expected one value each per row (at least one row), got lengths {n}")
    return float(np.mean((arrays["y"] >= arrays["lower"]) & (arrays["y"] <= arrays["upper"])))


def _positive(name, values) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(v) & (v > 0)):
        raise ValueError(f"{name}: expected finite numbers > 0, got {_short(v)}")
    return v


def _short(v) -> str:
    text = repr(v.tolist() if isinstance(v, np.ndarray) else v)
    return text if len(text) <= 80 else text[:77] + "..."
