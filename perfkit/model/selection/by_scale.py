"""Choosing a step-time model from small runs alone: the candidates, the inner splits and the rule.

A user who measured only the small end of a scale (say up to 16 GPUs) wants the large end. Nothing beyond the
measured scale is needed here: the rows are split *inside* themselves along the scale column (fit on the small
part, score the larger part: :func:`scale_splits`), every candidate of :func:`step_family` is scored there, and a
rule of :func:`choose_by_scale` decides: by default the median of the step forms (a consensus of the phase-aware
and communication-prior forms) or, where the small runs show that a flat edge extrapolates better, boosted trees;
or Chapter 7's median of the best k candidates.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..forms.commprior import CommPriorStepModel
from ..forms.median import BlendOfModels, MedianOfModels
from ..forms.stepmodels import PhaseAwareStepModel, PolluxStepModel
from ..forms.boosted import BoostedStepModel
from ..uncertainty.extrapolation import extrapolation_predictions, factor_inner_splits

__all__ = ["step_family", "scale_splits", "ScaleChoice", "choose_by_scale", "hardware_prior", "RULES",
           "NOT_IN_CONSENSUS"]

#: the synchronisation forms, robust losses and sync weights of :func:`step_family` (``quick``: the first of each)
FAMILY_FORMS = ("log", "linear", "sqrt", "ring", "ringlog")
FAMILY_LOSSES = ("soft_l1", "huber")
FAMILY_WEIGHTS = (0.0, 1.0)


def step_family(gpus="n_gpus", nodes="n_nodes", batch="batch_per_gpu", sync_column="sync_time",
                quick: bool = False, comm: dict | None = None, boosted: bool = False) -> dict:
    """The phase-aware step-time candidates (simplest first: a tie goes to the first) and Pollux's model, as
    name → unfitted estimator. Without ``sync_column`` (no measured phase) the phase-aware forms fit the step time
    alone and the sync weight has no block to weigh (only w=0 is tried). ``quick``: the log and linear forms with
    the huber loss only. ``comm``: ``{"grad_bytes", "intra_gbps", "inter_gbps"}`` of the job and the cluster (see
    :func:`hardware_prior`); the communication-prior form joins with each loss and weight. ``boosted``: the
    boosted trees (:class:`~perfkit.model.forms.boosted.BoostedStepModel`) join as ``"boosted"``."""
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
    if boosted:
        out["boosted"] = BoostedStepModel(gpus, nodes, batch)
    return out


def _table_and_name(value: str):
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

    facts = cluster_facts(*reversed(_table_and_name(cluster)))
    grad = gradient_bytes(*reversed(_table_and_name(job)))
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


#: the rules of :func:`choose_by_scale`: "consensus" (the default of a scaling study) and "best-k" (Chapter 7's)
RULES = ("consensus", "best-k")
#: the candidates a consensus leaves out of its median: Pollux's model (its synchronisation linear in the GPU
#: count runs away beyond the measured scale) and the boosted trees (the consensus's alternative)
NOT_IN_CONSENSUS = ("pollux", "boosted")
#: the weights w of the median of the step forms in the consensus's blend
#: exp(w·log ŷ_median + (1 − w)·log ŷ_boosted) (1: the median alone, 0: the trees alone; the first of equal scores wins)
BLEND_WEIGHTS = tuple(np.round(np.linspace(0.0, 1.0, 11), 1))


@dataclass
class ScaleChoice:
    """What :func:`choose_by_scale` chose and why: ``names`` (the chosen candidates), ``estimator`` (unfitted: one
    candidate, the median of the chosen ones, or a blend of the consensus's two options), ``scores`` (each
    candidate's MAPE % per inner split and their mean ``score``, best first), ``options`` (what the rule weighed: per
    option, its MAPE % per split and ``score``), the ``rule`` and the ``splits``."""

    names: list
    estimator: object
    scores: pd.DataFrame
    options: pd.DataFrame
    splits: list
    rule: str = "consensus"
    label: str = ""
    inner: list | None = None  # the chosen model's predictions on each inner split (they calibrate its intervals)
    alternative: object = None  # the consensus's other option when one was chosen alone (unfitted), else None

    @property
    def two_options(self) -> bool:
        """Whether the rule weighed two options (the consensus with both the step forms and the trees): then
        ``alternative`` is the one not chosen, or ``estimator`` blends both."""
        return self.rule == "consensus" and len(self.options) >= 2

    @property
    def score(self) -> float:
        """The chosen model's inner score (mean over the splits of its MAPE, %)."""
        return float(self.options.score.min())


def _mape(frames, keys, target) -> dict:
    """MAPE (%) per inner split of predictions ``frames`` (one per split) and their mean ``score``."""
    row = {k: float(np.mean(np.abs(p["predicted"].to_numpy() - p[target].to_numpy()) / p[target].to_numpy()) * 100)
           for k, p in zip(keys, frames)}
    return {**row, "score": float(np.mean(list(row.values())))}


def _median_frames(preds: dict, names: list) -> list:
    """Per split, the first member's frame with ``predicted`` the median of the members' predictions."""
    first = preds[names[0]]
    return [first[i].assign(predicted=np.median(np.vstack([preds[n][i]["predicted"].to_numpy(dtype=float)
                                                           for n in names]), axis=0)) for i in range(len(first))]


def _inner_predictions(candidates: dict, frame, column, target, splits, predict_drop) -> tuple:
    """(name → per-split prediction frames, name → why it failed) of every candidate on the inner splits."""
    preds, dropped = {}, {}
    for name, est in candidates.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                preds[name] = [extrapolation_predictions(est, frame, column, fm, target, None, test_min=lo,
                                                         test_max=hi, predict_drop=list(predict_drop))
                               for fm, lo, hi in splits]
        except ValueError as exc:  # e.g. too few rows on an inner split: left out, the reason kept
            dropped[name] = str(exc).splitlines()[0]
    return preds, dropped


def choose_by_scale(candidates: dict, X, y, column: str, splits, predict_drop=(), rule: str = "consensus"):
    """Score ``candidates`` (name → unfitted estimator) on the inner ``splits`` of the rows ``X``, ``y`` along
    ``column`` (MAPE % per split, the mean is the score) and choose by ``rule``:

    - ``"consensus"``: the median of the step forms (every candidate but those of :data:`NOT_IN_CONSENSUS`), the
      boosted trees (candidate ``"boosted"``) or a blend of the two, exp(w·log ŷ_median + (1 − w)·log ŷ_boosted)
      with w on the grid :data:`BLEND_WEIGHTS` (a :class:`~perfkit.model.forms.median.BlendOfModels`), whichever
      scores lowest: two options and one weight, so the small runs' few inner splits choose between a physical
      consensus and a flat black box (or hedge between them where their errors lie on opposite sides), not among
      dozens of close candidates. When one option is chosen alone, the other is kept as ``alternative`` (the two
      options' disagreement widens the intervals; a blend carries both);
    - ``"best-k"``: the median of the best k candidates for the k that scores best (Chapter 7's rule).

    ``predict_drop``: columns measured in fit only (phases), never seen by a prediction. A candidate that fails on
    a split is left out with its reason in ``scores.attrs["dropped"]``; none left is one ``ValueError``. Returns a
    :class:`ScaleChoice`."""
    from ..validation import target_column

    if rule not in RULES:
        raise ValueError(f"rule: expected one of {RULES}, got {rule!r}")
    if not splits:
        raise ValueError(f"{column}: the rows leave no inner split (fit on the values up to half the largest, "
                         "score above): measure more distinct values of it")
    target = target_column(X)
    frame = X.assign(**{target: np.asarray(y, dtype=float)})
    preds, dropped = _inner_predictions(candidates, frame, column, target, splits, predict_drop)
    if not preds:
        raise ValueError(f"no candidate could be fitted on the inner splits {splits}: " + "; ".join(
            f"{k}: {v}" for k, v in dropped.items()))
    keys = [f"<={fm:g}→{lo:g}-{hi:g}" for fm, lo, hi in splits]
    scores = pd.DataFrame([{"candidate": n, **_mape(p, keys, target)} for n, p in preds.items()])
    scores = scores.iloc[np.argsort(scores.score.to_numpy(), kind="stable")].reset_index(drop=True)
    scores.attrs["dropped"] = dropped
    if rule == "consensus":
        return _consensus(candidates, preds, keys, target, scores, list(splits))
    order = scores.candidate.tolist()
    rows = [{"option": f"median of the best {k}", "k": k, **_mape(_median_frames(preds, order[:k]), keys, target)}
            for k in range(1, len(order) + 1)]
    options = pd.DataFrame(rows)
    names = order[:int(options.k.iloc[int(np.argmin(options.score.to_numpy()))])]
    label = names[0] if len(names) == 1 else f"median of the best {len(names)}: " + ", ".join(names)
    est = _median_of(candidates, names)
    return ScaleChoice(names=list(names), estimator=est, scores=scores, options=options, splits=list(splits),
                       rule=rule, label=label, inner=_median_frames(preds, names))


def _blend_frames(a: list, b: list, w: float) -> list:
    """Per split, ``a``'s frame with ``predicted`` exp(w·log a + (1 − w)·log b)."""
    return [fa.assign(predicted=np.exp(w * np.log(fa["predicted"].to_numpy(dtype=float))
                                       + (1 - w) * np.log(fb["predicted"].to_numpy(dtype=float))))
            for fa, fb in zip(a, b)]


def _consensus(candidates: dict, preds: dict, keys: list, target: str, scores, splits) -> ScaleChoice:
    """The rule "consensus" of :func:`choose_by_scale` on the candidates' inner predictions ``preds``."""
    members = [n for n in preds if n not in NOT_IN_CONSENSUS]
    median = f"median of the {len(members)} step forms"
    frames = {median: _median_frames(preds, members)} if members else {}
    if "boosted" in preds:
        frames["boosted trees"] = preds["boosted"]
    if not frames:
        raise ValueError("rule 'consensus': no step form and no boosted trees could be fitted on the inner splits")
    rows = [{"option": k, **_mape(f, keys, target)} for k, f in frames.items()]
    w = None
    if len(frames) == 2:
        blends = [_blend_frames(frames[median], frames["boosted trees"], v) for v in BLEND_WEIGHTS]
        blend_scores = [_mape(f, keys, target) for f in blends]
        i = int(np.argmin([b["score"] for b in blend_scores]))
        w, blended = float(BLEND_WEIGHTS[i]), blends[i]
        if 0 < w < 1:
            rows.append({"option": f"blend: {w:g} × median + {1 - w:g} × boosted trees", **blend_scores[i]})
    options = pd.DataFrame(rows)
    best = options.option.iloc[int(np.argmin(options.score.to_numpy()))]
    med_est = _median_of(candidates, members) if members else None
    if best.startswith("blend"):
        est = BlendOfModels([("median of the step forms", med_est), ("boosted", candidates["boosted"])], [w, 1 - w])
        names, inner = members + ["boosted"], blended
        label = f"a blend of the median of the {len(members)} step forms ({w:g}) and the boosted trees ({1 - w:g})"
        other = None  # the blend holds both options: their spread is the disagreement
    else:
        names = ["boosted"] if best == "boosted trees" else members
        est, inner = _median_of(candidates, names), frames[best]
        label = "boosted trees" if best == "boosted trees" else f"the median of the {len(members)} step forms"
        other = None if len(frames) < 2 else (med_est if best == "boosted trees" else candidates["boosted"])
    return ScaleChoice(names=list(names), estimator=est, scores=scores, options=options, splits=splits,
                       rule="consensus", label=label, inner=inner, alternative=other)


def _median_of(candidates: dict, names: list):
    """The candidate ``names[0]`` alone, or the median of the candidates ``names`` (unfitted)."""
    return candidates[names[0]] if len(names) == 1 else MedianOfModels([(n, candidates[n]) for n in names])
