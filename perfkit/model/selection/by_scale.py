"""Choosing a step-time model from small runs alone: the candidates, the inner splits and the rule.

A user who measured only the small end of a scale (say up to 16 GPUs) wants the large end. Nothing beyond the
measured scale is needed here: the rows are split *inside* themselves along the scale column (fit on the small
part, score the larger part: :func:`scale_splits`), every candidate of :func:`step_family` is scored there, and
the median of the best k candidates' predictions is kept for the k that scores best
(:func:`~perfkit.model.uncertainty.extrapolation.select_median_of_top`). The same rule chooses Chapter 7's model
and ``benchmarks/bench_scale.py``'s on every cluster, so what they report is what a user of
``perfkit fit --form auto`` with the step columns gets.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..forms.commprior import CommPriorStepModel
from ..forms.median import MedianOfModels
from ..forms.stepmodels import PhaseAwareStepModel, PolluxStepModel
from ..uncertainty.extrapolation import factor_inner_splits, select_median_of_top

__all__ = ["step_family", "scale_splits", "ScaleChoice", "choose_by_scale", "hardware_prior"]

#: the synchronisation forms, robust losses and sync weights of :func:`step_family` (``quick``: the first of each)
FAMILY_FORMS = ("log", "linear", "sqrt", "ring", "ringlog")
FAMILY_LOSSES = ("soft_l1", "huber")
FAMILY_WEIGHTS = (0.0, 1.0)


def step_family(gpus="n_gpus", nodes="n_nodes", batch="batch_per_gpu", sync_column="sync_time",
                quick: bool = False, comm: dict | None = None) -> dict:
    """The phase-aware step-time candidates (simplest first: a tie goes to the first) and Pollux's model, as
    name → unfitted estimator. Without ``sync_column`` (no measured phase) the phase-aware forms fit the step time
    alone and the sync weight has no block to weigh (only w=0 is tried). ``quick``: the log and linear forms with
    the huber loss only. ``comm``: ``{"grad_bytes", "intra_gbps", "inter_gbps"}`` of the job and the cluster (see
    :func:`hardware_prior`); the communication-prior form joins with each loss and weight."""
    forms = FAMILY_FORMS[:2] if quick else FAMILY_FORMS
    losses = ("huber",) if quick else FAMILY_LOSSES
    weights = (0.0,) if quick or sync_column is None else FAMILY_WEIGHTS
    out = {}
    for form in forms:
        for loss in losses:
            for w in weights:
                out[f"phase[{form}, {loss}, w={w:g}]"] = PhaseAwareStepModel(
                    gpus, nodes, batch, sync_column=sync_column, sync_form=form, loss=loss, sync_weight=w)
    if comm is not None:
        for loss in losses:
            for w in weights:
                out[f"comm[{loss}, w={w:g}]"] = CommPriorStepModel(gpus, nodes, batch, sync_column=sync_column,
                                                                   loss=loss, sync_weight=w, **comm)
    out["pollux"] = PolluxStepModel(gpus, nodes, batch)
    return out


def _table_and_name(value: str, what: str):
    """``"NAME"`` → (None, NAME): the shipped table; ``"FILE.csv:NAME"`` → (FILE.csv, NAME)."""
    path, sep, rest = value.rpartition(":")
    if sep and path.lower().endswith(".csv"):
        return path, rest
    return None, value


def hardware_prior(cluster: str, job: str) -> dict:
    """``{"grad_bytes", "intra_gbps", "inter_gbps"}`` for :class:`~perfkit.model.forms.commprior.CommPriorStepModel`
    from the hardware tables (:mod:`perfkit.data.hardware`): ``cluster`` and ``job`` by name in the shipped tables,
    or ``"FILE.csv:NAME"`` in a table of one's own. An unknown network bandwidth is None; an unknown intra-node
    bandwidth is one ``ValueError`` (the prior needs at least the node's links)."""
    import math

    from ...data.hardware import cluster_facts, gradient_bytes

    facts = cluster_facts(*reversed(_table_and_name(cluster, "cluster")))
    grad = gradient_bytes(*reversed(_table_and_name(job, "job")))
    intra, inter = facts["intra_gbps"], facts["inter_gbps"]
    if not (isinstance(intra, (int, float)) and math.isfinite(intra)):
        raise ValueError(f"cluster {facts['cluster']!r}: its intra-node bandwidth is unknown; the communication "
                         "prior needs it (give it in a table of your own, FILE.csv:NAME)")
    known = isinstance(inter, (int, float)) and math.isfinite(inter)
    return {"grad_bytes": float(grad), "intra_gbps": float(intra), "inter_gbps": float(inter) if known else None}


def scale_splits(values, fit_max=None) -> list:
    """The inner splits of rows whose scale column holds ``values`` (all <= ``fit_max``, default their largest):
    :func:`~perfkit.model.uncertainty.extrapolation.factor_inner_splits`, fit on the values up to 1/4, 3/8 and 1/2
    of ``fit_max`` and score from a quarter of ``fit_max`` above that; ``[(inner_max, test_min, fit_max), ...]``."""
    v = np.asarray(values, dtype=float)
    return factor_inner_splits(v, float(v.max()) if fit_max is None else float(fit_max))


@dataclass
class ScaleChoice:
    """What :func:`choose_by_scale` chose and why: ``names`` (the chosen candidates, best first), ``estimator``
    (unfitted: the best candidate, or the median of the chosen ones), ``scores`` (each candidate's MAPE % per inner
    split and their mean ``score``, best first), ``k_scores`` (the median of the best k, per k) and ``splits``."""

    names: list
    estimator: object
    scores: pd.DataFrame
    k_scores: pd.DataFrame
    splits: list

    @property
    def label(self) -> str:
        """``"phase[log, huber, w=0]"`` or ``"median of the best 3: a, b, c"``."""
        if len(self.names) == 1:
            return self.names[0]
        return f"median of the best {len(self.names)}: " + ", ".join(self.names)

    @property
    def score(self) -> float:
        """The chosen model's inner score (mean over the splits of its MAPE, %)."""
        return float(self.k_scores.score.iloc[len(self.names) - 1])


def choose_by_scale(candidates: dict, X, y, column: str, splits, predict_drop=()) -> ScaleChoice:
    """Score ``candidates`` (name → unfitted estimator) on the inner ``splits`` of the rows ``X``, ``y`` along
    ``column`` and keep the median of the best k (k = 1: the best alone). ``predict_drop``: columns measured in fit
    only (phases), never seen by a prediction. A candidate that fails on a split (e.g. too few rows) is dropped
    with its reason in ``scores.attrs["dropped"]``; none left is one ``ValueError``."""
    from ..validation import target_column

    if not splits:
        raise ValueError(f"{column}: the rows leave no inner split (fit on the values up to half the largest, "
                         "score above): measure more distinct values of it")
    target = target_column(X)
    frame = X.assign(**{target: np.asarray(y, dtype=float)})

    def choose(cands):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return select_median_of_top(cands, frame, column, target, splits, groups=None,
                                        predict_drop=list(predict_drop))

    usable, dropped = dict(candidates), {}
    try:
        names, scores, k_scores = choose(usable)
    except ValueError:  # some candidate cannot be fitted on an inner split: leave those out, say why
        for name, est in candidates.items():
            try:
                choose({name: est})
            except ValueError as exc:
                dropped[name] = str(exc).splitlines()[0]
                del usable[name]
        if not usable:
            raise ValueError(f"no candidate could be fitted on the inner splits {splits}: " + "; ".join(
                f"{k}: {v}" for k, v in dropped.items())) from None
        names, scores, k_scores = choose(usable)
    scores.attrs["dropped"] = dropped
    est = usable[names[0]] if len(names) == 1 else MedianOfModels([(n, usable[n]) for n in names])
    return ScaleChoice(names=list(names), estimator=est, scores=scores, k_scores=k_scores, splits=list(splits))
