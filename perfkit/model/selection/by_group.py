"""Leave one group out (a GPU type, a cluster, a model): every row predicted by a model fitted without its group,
errors per held-out group, a form chosen on the groups alone, and intervals calibrated on held-out-group errors.

- :func:`group_folds`: one fold per level of the group column (at least :data:`MIN_GROUPS`).
- :func:`logo_predictions`: an estimator's prediction of every row from the fit without the row's group (NaN where
  that fit cannot predict the row, e.g. a workload only the held-out group ran).
- :func:`group_mape`: each group's MAPE (%), and :func:`median_group_mape`, the median over groups: the score of
  this module (a group with many rows weighs as much as one with few, as a user asking about *a* GPU expects).
- :func:`select_by_groups`: every candidate scored by leave one group out, the lowest score chosen.
- :func:`nested_group_study`: for each held-out group, the choice from the *other* groups alone (an inner leave
  one group out), then that choice fitted on them predicts the held-out group: an honest estimate of what the
  procedure does on a group it never saw. Its interval's width is the quantile of the *other* groups' held-out
  errors under the same procedure (each of them predicted without itself): the rank check of exchangeable groups,
  and how the saved model calibrates a new group's interval (on every group's held-out errors, each from a fit on
  all groups but one). The width from the other groups alone (an inner leave one group out, fits on one group
  fewer) is kept beside it; where a group's nearest kin is among the other groups (two memory sizes of one GPU),
  the inner fold that leaves the kin out can make it far wider than the saved model's.

Intervals are multiplicative: [ŷ·e^(−q), ŷ·e^(q)] with q the split-conformal quantile of |log(y/ŷ)| over the
held-out-group rows (:func:`~perfkit.model.uncertainty.extrapolation.conformal_quantile`). Deterministic: the folds are the sorted levels; every fit is seeded by
its estimator.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone

__all__ = ["MIN_GROUPS", "group_folds", "logo_predictions", "group_mape", "median_group_mape", "log_scores",
           "select_by_groups", "GroupSelection", "nested_group_study", "NestedGroupStudy"]

#: fewest groups leave one group out accepts: with two, the inner choice of a nested study would rest on one group
MIN_GROUPS = 3


def _levels(groups) -> list:
    return sorted(pd.unique(np.asarray(groups, dtype=object)), key=str)


def group_folds(groups, where: str = "groups") -> list:
    """``[(level, test mask)]`` for every level of ``groups`` (sorted as text); fewer than :data:`MIN_GROUPS`
    levels is a ValueError naming ``where``."""
    g = np.asarray(groups, dtype=object)
    levels = _levels(g)
    if len(levels) < MIN_GROUPS:
        raise ValueError(f"{where}: leave one group out needs at least {MIN_GROUPS} groups, the rows hold "
                         f"{len(levels)} ({', '.join(map(str, levels))})")
    return [(lv, g == lv) for lv in levels]


def _categorical(est) -> list:
    """The categorical columns an estimator reads (a perfkit form's, or a baseline pipeline's check step's)."""
    from sklearn.pipeline import Pipeline

    if isinstance(est, Pipeline) and est.steps:
        est = est.steps[0][1]
    cats = getattr(est, "categorical_", None) or getattr(est, "categorical", None) or []
    return [cats] if isinstance(cats, str) else list(cats)


def _fit_predict(estimator, X_fit, y_fit, X_test) -> np.ndarray:
    """The estimator fitted on the fit rows, its predictions of the test rows (NaN where it cannot predict: a
    level of a categorical column the fit rows lack, or a row the fitted form says it cannot predict)."""
    from ..base import predictable_mask
    from ..uncertainty.conformal import seen_rows

    est = clone(estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant column in a fold, rows beyond the fitted ranges: expected here
        est.fit(X_fit, y_fit)
        ok = seen_rows(X_fit, X_test, _categorical(est))
        if ok.any():
            ok[ok] = predictable_mask(est, X_test[ok])
        out = np.full(len(X_test), np.nan)
        if ok.any():
            out[ok] = np.asarray(est.predict(X_test[ok]), dtype=float)
    return out


def logo_predictions(estimator, X, y, groups, folds=None) -> np.ndarray:
    """Every row's prediction by ``estimator`` fitted on the rows of the other groups (NaN: not predictable)."""
    y = np.asarray(y, dtype=float)
    out = np.full(len(X), np.nan)
    for _, test in folds or group_folds(groups):
        out[test] = _fit_predict(estimator, X[~test], y[~test], X[test])
    return out


def group_mape(y, pred, groups) -> pd.Series:
    """Each group's MAPE (%) over its predicted rows (NaN predictions left out; a group without one is NaN)."""
    y, pred = np.asarray(y, dtype=float), np.asarray(pred, dtype=float)
    ape = pd.Series(100.0 * np.abs(pred - y) / y)
    return ape.groupby(np.asarray(groups, dtype=object)).mean().reindex(_levels(groups))


def median_group_mape(y, pred, groups) -> float:
    """The median over groups of each group's MAPE (%); NaN when no group has a predicted row."""
    per = group_mape(y, pred, groups).dropna()
    return float(per.median()) if len(per) else math.nan


def log_scores(y, pred) -> np.ndarray:
    """|log(y / ŷ)| of the rows with a finite positive prediction."""
    y, pred = np.asarray(y, dtype=float), np.asarray(pred, dtype=float)
    ok = np.isfinite(pred) & (pred > 0)
    return np.abs(np.log(y[ok] / pred[ok]))


@dataclass
class GroupSelection:
    """:func:`select_by_groups`'s answer: the chosen ``name``; ``scores`` (one row per candidate: its median group
    MAPE and the groups it predicted); ``predictions`` (name → every row's leave-one-group-out prediction)."""

    name: str
    scores: pd.DataFrame
    predictions: dict


def select_by_groups(candidates: dict, X, y, groups, folds=None) -> GroupSelection:
    """The candidate (name → unfitted estimator) with the lowest median group MAPE under leave one group out;
    ties go to the earlier candidate. A candidate that predicts no row of some group scores on the others, and
    ``scores.groups`` says how many it predicted; one that predicts no row at all cannot be chosen."""
    folds = folds or group_folds(groups)
    preds = {name: logo_predictions(est, X, y, groups, folds) for name, est in candidates.items()}
    rows = []
    for name, p in preds.items():
        per = group_mape(y, p, groups)
        rows.append({"candidate": name, "score": median_group_mape(y, p, groups), "groups": int(per.notna().sum()),
                     "rows": int(np.isfinite(p).sum())})
    scores = pd.DataFrame(rows)
    full = scores[scores["groups"] == scores["groups"].max()]
    if not np.isfinite(full["score"]).any():
        raise ValueError("no candidate predicts any held-out row: every group holds workloads the others lack")
    best = full.loc[full["score"].idxmin(), "candidate"]
    return GroupSelection(str(best), scores, preds)


@dataclass
class NestedGroupStudy:
    """:func:`nested_group_study`'s answer. ``rows``: per row its ``group``, the ``chosen`` candidate and the
    prediction made without its group, ``lower`` and ``upper`` (half-width ``q``: the other groups' held-out
    errors) and ``lower_nested``, ``upper_nested`` (half-width ``q_nested``: an inner leave one group out of the
    other groups); ``choices``: per held-out group the candidate chosen on the others, ``q`` and ``q_nested``
    (log scale; inf where no other group's row was predicted)."""

    rows: pd.DataFrame
    choices: pd.DataFrame


def _outer(candidates: dict, X, y, groups, level: float, test, lv):
    from ..uncertainty.extrapolation import conformal_quantile

    inner_groups = np.asarray(groups, dtype=object)[~test]
    X_in, y_in = X[~test], y[~test]
    sel = select_by_groups(candidates, X_in, y_in, inner_groups)
    q = conformal_quantile(log_scores(y_in, sel.predictions[sel.name]), 1.0 - level)
    pred = _fit_predict(candidates[sel.name], X_in, y_in, X[test])
    return lv, sel.name, q, pred


def nested_group_study(candidates: dict, X, y, groups, level: float = 0.9, n_jobs: int = 1) -> NestedGroupStudy:
    """For each group: choose among ``candidates`` by leave one group out on the other groups and predict the
    group with the choice fitted on them; its ``level`` interval's half-width is the conformal quantile of the other
    groups' held-out scores (``q``), and, nested, that of the inner leave-one-group-out scores of the choice on the
    other groups (``q_nested``). ``n_jobs`` runs groups in parallel (joblib); the result does not depend on it."""
    from joblib import Parallel, delayed

    y = np.asarray(y, dtype=float)
    folds = group_folds(groups)
    if len(folds) - 1 < MIN_GROUPS:
        raise ValueError(f"groups: a nested study leaves one group out of {len(folds)} and chooses on the rest by "
                         f"leaving one more out; that needs at least {MIN_GROUPS + 1} groups")
    outs = Parallel(n_jobs=n_jobs)(delayed(_outer)(candidates, X, y, groups, level, test, lv) for lv, test in folds)
    pred = np.full(len(X), np.nan)
    chosen = np.empty(len(X), dtype=object)
    q_nested = np.full(len(X), np.nan)
    for (lv, test), (_, name, q, p) in zip(folds, outs):
        pred[test], chosen[test], q_nested[test] = p, name, q
    q_others = _others_quantiles(y, pred, folds, level)
    qs = np.full(len(X), np.nan)
    for (_, test), q in zip(folds, q_others):
        qs[test] = q
    rows = pd.DataFrame({"group": np.asarray(groups, dtype=object), "measured": y, "chosen": chosen,
                         "predicted": pred, "lower": pred * np.exp(-qs), "upper": pred * np.exp(qs),
                         "lower_nested": pred * np.exp(-q_nested), "upper_nested": pred * np.exp(q_nested)},
                        index=X.index)
    choices = pd.DataFrame([{"group": lv, "chosen": name, "q": qo, "q_nested": q}
                            for (lv, name, q, _), qo in zip(outs, q_others)])
    return NestedGroupStudy(rows, choices)


def _others_quantiles(y, pred, folds, level: float) -> list:
    """Per fold, the split-conformal ``level`` quantile of |log(y/ŷ)| over the *other* groups' predicted rows (each
    predicted without its own group); inf where none was predicted."""
    from ..uncertainty.extrapolation import conformal_quantile

    out = []
    for _, test in folds:
        scores = log_scores(y[~test], pred[~test])
        out.append(conformal_quantile(scores, 1.0 - level) if len(scores) else math.inf)
    return out
