"""Chapter 4's claims ledger: :data:`CLAIMS`, judged on typed quantities (:class:`Ch4Quantities`).

Each claim's quantity is an :class:`~perfkit.evidence.Evidence` computed from the chapter's results:
held-out errors resampled by a paired bootstrap, per-seed parameters resampled over seeds, level effects
drawn from an OLS fit's normal approximation, or printed numbers drawn within their rounding. A quantity
computed for a verdict is kept on its :class:`Ch4Quantities` (:meth:`~perfkit.chapters.common.Quantities.memo`),
so the evidence text quotes the same resamples.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...data.thesis import load_thesis_table
from ...model.selection.fitting import resolved_std, spread_resolution
from ...report.claims import Claim, fmt, worst
from ...evidence import (B, METRICS, SEED, Evidence, fmt_interval, half_unit, normal_draws,
                                   paired_bootstrap, percentile_interval, rounding_draws, seed_bootstrap)
from ..common import Quantities

__all__ = ["CLAIMS", "SOURCES", "MIN_SEEDS", "ZERO", "FRAMEWORK_KEYS", "MACHINE_KEYS", "BETTER_THAN_TF",
           "MOST_ACCURATE", "ADAM_DEARER", "Ch4Quantities", "heldout_metric", "heldout_difference", "seed_statistic",
           "level_ratio", "ratio_text", "slowest", "mean_over_seeds", "seed_std", "seed_mean", "r2_drop",
           "r2_drop_text", "published_quantities", "framework_mape"]


@dataclass
class Ch4Quantities(Quantities):
    """What Chapter 4's claims are decided from, for one framework (its measured claims) or for the chapter
    (the framework claims and the published-number checks, which need the fields that default to None)."""

    heldout: dict | None = None
    seed_params: dict | None = None
    sweep_r2: dict | None = None
    effects: tuple | None = None
    lam_l2: float | None = None
    lam_l1: float | None = None
    framework_q: dict | None = None
    framework_mape: dict | None = None
    framework_effects: dict | None = None
    published_a: dict | None = None
    published_44_vs_j5: dict | None = None
    published_44_vs_j5_values: dict | None = None
    published_45_vs_43: dict | None = None
    published_45_vs_43_values: dict | None = None
    published_rf_vs_de: dict | None = None
    machine_q: Evidence | None = None
    machine: str | None = None

    @classmethod
    def of(cls, part, **chapter) -> "Ch4Quantities":
        """The quantities of one :class:`~.results.FrameworkFit` (plus chapter-level ones, by name)."""
        return cls(heldout=part.heldout, seed_params=part.seed_params, sweep_r2=part.sweep_r2, effects=part.effects,
                   lam_l2=part.lam_l2, lam_l1=part.lam_l1, **chapter)


_B = f"{B} bootstrap resamples"
#: where the resamples of each kind of quantity come from (the ledger's ``resampling`` column)
SOURCES = {
    "heldout": f"{_B} of the held-out rows, the same rows for every model (paired)",
    "heldout_fw": f"{_B} of each framework's held-out rows, the same row positions in every framework (paired where "
                  "the files hold the same configurations)",
    "seeds": f"{_B} of the fit's seeds",
    "sweep": f"{_B} of the seeds at each λ",
    "effects": f"{B} draws from the normal approximation (HC3 covariance) of an OLS fit of log time on every "
               "hyperparameter as a category, over all measured rows",
    "power": f"{B} draws from the normal approximation (HC3 covariance) of an OLS fit of log time on log workers, "
             "log batch size and every other hyperparameter as a category, per framework",
    "printed": f"printed numbers, each drawn {B} times uniformly within ±½ unit of its last digit",
    "exact": "none: printed numbers compared beyond their rounding (exact)",
}
#: fewest seeds a seed-to-seed interval is computed from (two seeds give a degenerate bootstrap)
MIN_SEEDS = 3
#: what §4.3.5 and §4.4 rank: these frameworks scale better than TensorFlow
BETTER_THAN_TF = ("MXNet", "PyTorch")


def heldout_metric(q, metric: str = "MAPE") -> dict:
    """``{model: (estimate, samples)}`` of a held-out ``metric`` over the paired bootstrap of ``q.heldout``."""
    h = q.heldout
    return q.memo(("heldout", metric), lambda: paired_bootstrap(h["y"], h["pred"], METRICS[metric]))


def heldout_difference(q, a: str, b: str, metric: str = "MAPE", ratio: bool = False):
    """``metric(a) − metric(b)`` (or their ratio) on the same resampled held-out rows, as :class:`Evidence`."""
    m = heldout_metric(q, metric)
    if a not in m or b not in m:
        return None
    (ea, sa), (eb, sb) = m[a], m[b]
    if ratio:
        with np.errstate(divide="ignore", invalid="ignore"):
            return Evidence.from_samples(ea / eb, sa / sb, SOURCES["heldout"])
    return Evidence.from_samples(ea - eb, sa - sb, SOURCES["heldout"])


def _l2_over_l1(q):
    parts = [heldout_difference(q, "DE+L2", "DE+L1", m, ratio=True) for m in ("MAPE", "MSE", "RMSE")]
    return None if None in parts else Evidence.combine(np.max, parts)


def _svr_margin(q):
    m = heldout_metric(q, "MAPE")
    if "SVR" not in m or len(m) < 2:
        return None
    others = [k for k in ("DE", "DE+L2", "RF") if k in m]
    est = m["SVR"][0] - max(m[k][0] for k in others)
    samples = m["SVR"][1] - np.max(np.vstack([m[k][1] for k in others]), axis=0)
    return Evidence.from_samples(est, samples, SOURCES["heldout"])


def seed_statistic(params, columns, stat, seed=None):
    """``stat(values, axis)`` of the per-seed ``params`` (a :attr:`RepeatedFit.params` table) over ``columns``,
    with its bootstrap over seeds; None with fewer than :data:`MIN_SEEDS` seeds or no such column."""

    cols = [c for c in columns if c in params.columns]
    if len(params) < MIN_SEEDS or not cols:
        return None
    est, samples = seed_bootstrap(params[cols].to_numpy(dtype=float), stat, seed=SEED if seed is None else seed)
    return Evidence.from_samples(est, samples, SOURCES["seeds"])


def _cols(params, prefix):
    return [c for c in params.columns if any(c.startswith(pfx) for pfx in prefix)]


def _resolution(v, axis):
    """:func:`~perfkit.model.selection.fitting.spread_resolution` of the mean over seeds along ``axis``."""
    return spread_resolution(v.mean(axis=axis))


def _sd(v, axis):
    """Std over seeds, at least the :func:`_resolution` (so a ratio of two spreads is not a ratio of two
    tolerances, and it moves continuously when a spread crosses the resolution)."""
    return np.maximum(v.std(axis=axis, ddof=1), _resolution(v, axis))


#: parameter values below this (in seconds of epoch time per unit) are zero for the seed statistics: a C of
#: 1e-40 on one seed and 1e-23 on another is 0 on both, not a coefficient of variation of 3
ZERO = 1e-9


def _cv(v, axis):
    """Coefficient of variation over seeds, its std at least the :func:`_resolution`; 0 where every seed
    gives exactly 0 (a switched-off term)."""
    v = np.where(np.abs(v) < ZERO, 0.0, v)
    mean = np.abs(v.mean(axis=axis))
    sd = v.std(axis=axis, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((sd == 0) & (mean == 0), 0.0, np.maximum(sd, _resolution(v, axis)) / mean)


def _max_sd(v, axis):
    return _sd(v, axis).max(axis=-1)


def _median_cv(v, axis):
    return np.nanmedian(_cv(v, axis), axis=-1)


def _median_sd(v, axis):
    return np.median(_sd(v, axis), axis=-1)


def mean_over_seeds(v, axis):
    """Mean over seeds of the first column (a :func:`seed_statistic` ``stat``)."""
    return v.mean(axis=axis)[..., 0]


def _stat(q, fit, columns, stat):
    """:func:`seed_statistic` of fit ``fit``'s per-seed parameters (computed once per quantities object)."""
    pp = q.seed_params.get(fit)
    if pp is None:
        return None
    cols = columns if isinstance(columns, list) else _cols(pp, columns)
    return q.memo(("stat", fit, tuple(cols), stat), lambda: seed_statistic(pp, cols, stat))


def _power_floor(pp) -> float:
    """One resolution for every power of a fit: :attr:`RepeatedFit.SPREAD_RESOLUTION` × the largest mean |p| or
    |q| (at least 1). A per-power floor (:func:`_resolution`) would make the ratio of two spreads that are both
    below it a ratio of two tolerances (p near 3 against q near 0.4: "3 times more variable" where neither varies)."""

    cols = _cols(pp, ("p[", "q["))
    return float(spread_resolution(pp[cols].mean().abs().max()))


def _powers_spread(q, prefix, reduce):
    """``reduce`` over the powers of ``prefix`` of their std over seeds (no regularisation), each at least
    :func:`_power_floor`, with its bootstrap over seeds; None without seed parameters."""
    pp = q.seed_params.get("DE")
    if pp is None or len(pp) < MIN_SEEDS:
        return None
    floor = _power_floor(pp)
    return seed_statistic(pp, _cols(pp, prefix),
                          lambda v, axis: reduce(np.maximum(v.std(axis=axis, ddof=1), floor), axis=-1))


def _intrinsic_vary(q):
    p_sd, q_sd = _powers_spread(q, ("p[",), np.median), _powers_spread(q, ("q[",), np.max)
    if p_sd is None or q_sd is None:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        return Evidence.combine(lambda a, axis: a[0] / a[1], [p_sd, q_sd])


def _l2_spread(q):
    """Per resample, the larger of two ratios L2 / no regularisation: median relative spread of the coefficients
    a (and categorical constants k), and median spread of the powers p, over seeds."""

    de, l2 = q.seed_params.get("DE"), q.seed_params.get("DE+L2")
    if de is None or l2 is None or len(de) < MIN_SEEDS or len(l2) < MIN_SEEDS:
        return None
    ratios = []
    for prefix, stat in ((("a[", "k["), _median_cv), (("p[",), _median_sd)):
        a = seed_statistic(l2, _cols(l2, prefix), stat, seed=[SEED, 1])
        b = seed_statistic(de, _cols(de, prefix), stat)
        if a is None or b is None:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios.append(Evidence.combine(lambda x, axis: x[0] / x[1], [a, b]))
    return Evidence.combine(np.max, ratios)


def level_ratio(effects, factor: str, level: str, reference: str, seed=None):
    """Time at ``factor=level`` over time at ``factor=reference``, other hyperparameters fixed, as :class:`Evidence`.

    ``effects`` is ``(params, cov, levels)`` of :func:`perfkit.model.analytic.scaling.level_effects`; the draws come
    from the coefficients' normal approximation (``seed``: another seed for independent draws, e.g. one per
    framework). None when a level was not measured.
    """

    params, cov, levels = effects
    names = list(params.index)
    if level not in levels.get(factor, ()) or reference not in levels.get(factor, ()):
        return None
    w = np.zeros(len(names))
    for lv, sign in ((level, 1.0), (reference, -1.0)):
        if f"{factor}={lv}" in names:  # the reference level has no column (β = 0)
            w[names.index(f"{factor}={lv}")] += sign
    draws = normal_draws(params.to_numpy(), cov.to_numpy(), seed=SEED if seed is None else seed)
    return Evidence.from_samples(float(np.exp(w @ params.to_numpy())), np.exp(draws @ w), SOURCES["effects"])


def ratio_text(q, factor, level, reference) -> str:
    """The evidence text of a level ratio (:func:`level_ratio` of ``q.effects``)."""
    e = level_ratio(q.effects, factor, level, reference)
    if e is None:
        return f"{level} or {reference} not measured"
    return f"time with {level} / with {reference}: {e.text(3)}"


def slowest(q, factor, level, others):
    """Per resample, the smallest ratio of ``level`` over each of ``others`` (:func:`level_ratio`): ``level`` is the
    slowest when it is above 1."""

    parts = [level_ratio(q.effects, factor, level, o) for o in others]
    return None if None in parts else Evidence.combine(np.min, parts)


def _ranking(q):
    by = {str(fw).lower(): e for fw, e in q.framework_q.items()}
    tf = by.get("tensorflow")
    others = [by[b.lower()] for b in BETTER_THAN_TF if b.lower() in by]
    if tf is None or not others:
        return None
    return Evidence.combine(np.min, [Evidence.combine(lambda a, axis: a[0] - a[1], [tf, o]) for o in others])


def _worst(key, side):
    return lambda q: worst(getattr(q, key), side)


def _off(cells, side, threshold) -> str:
    bad = [f"{'/'.join(map(str, c)) if isinstance(c, tuple) else c}: {fmt(e.estimate)}" for c, e in cells.items()
           if (e.estimate >= threshold if side == "<" else e.estimate <= threshold)]
    return "; ".join(bad) or "none"


def _metric_text(q, names=("DE", "DE+L2", "RF", "SVR"), metric="MAPE", unit=" %") -> str:
    m = heldout_metric(q, metric)
    return ", ".join(f"{k} {fmt(m[k][0])}{unit} {fmt_interval(*percentile_interval(m[k][1]))}" for k in names if k in m)


def seed_std(v) -> float:
    """Std over seeds of one parameter as the ledger prints it: 0 at or below the fits' :func:`_resolution` (seeds
    that reach one optimum differ there by the refinement's tolerance, differently on each CPU), values below
    :data:`ZERO` counted as 0."""

    v = np.where(np.abs(np.asarray(v, dtype=float)) < ZERO, 0.0, np.asarray(v, dtype=float))
    return float(resolved_std(v.std(ddof=1) if len(v) > 1 else 0.0, v.mean()))


def seed_mean(v) -> float:
    v = np.asarray(v, dtype=float)
    return float(np.where(np.abs(v) < ZERO, 0.0, v).mean())


def _spread_text(q, column, label) -> str:
    v = q.seed_params["DE"][column]
    return f"{label} = {fmt(seed_mean(v))} ± {fmt(seed_std(v))} over {len(v)} seeds"


def _l2_spread_text(q) -> str:
    parts = []
    for what, prefix, stat in (("median relative std of a", ("a[", "k["), _median_cv),
                               ("median std of p", ("p[",), _median_sd)):
        parts.append(f"{what}: no reg. {fmt(_stat(q, 'DE', prefix, stat).estimate)}, "
                     f"L2 {fmt(_stat(q, 'DE+L2', prefix, stat).estimate)}")
    return "; ".join(parts)


def _pairs_text(pairs, unit: str = "") -> str:
    return "; ".join(f"{fw}: {a:g}{unit} vs {b:g}{unit}" for fw, (a, b) in pairs.items())


#: the thesis's L2 fit is most accurate on this framework (Table 4.4: MXNet 7 %, TensorFlow 10 %, PyTorch 27 %)
MOST_ACCURATE = "MXNet"
#: Adam costs more than SGD in these frameworks and less in MXNet (§4.3.1-4.3.2, Table 4.2)
ADAM_DEARER = ("PyTorch", "TensorFlow")


def _most_accurate(q):
    """Per resample, the smallest margin MAPE(other) − MAPE(MXNet) of the L2 fit over the thesis's other frameworks."""
    m = q.framework_mape
    others = [m[fw] for fw in ("TensorFlow", "PyTorch") if fw in m]
    if MOST_ACCURATE not in m or not others:
        return None
    return Evidence.combine(np.min, [Evidence.combine(lambda a, axis: a[0] - a[1], [o, m[MOST_ACCURATE]])
                                     for o in others])


def _most_accurate_text(q) -> str:
    return "held-out MAPE of the L2 fit: " + "; ".join(f"{fw} {e.text(3)} %" for fw, e in q.framework_mape.items())


def _adam_direction(q):
    """Per resample, the smallest of log(Adam / SGD) in PyTorch and TensorFlow and log(SGD / Adam) in MXNet."""
    eff = q.framework_effects
    parts = []
    for k, fw in enumerate(sorted(eff)):
        if fw in ADAM_DEARER or fw == "MXNet":
            r = level_ratio(eff[fw], "optimizer", "adam", "sgd", seed=[SEED, k])
            if r is None:
                return None
            sign = 1.0 if fw in ADAM_DEARER else -1.0
            parts.append(Evidence.combine(lambda a, axis, s=sign: s * np.log(a[0]), [r]))
    if "MXNet" not in eff or not set(ADAM_DEARER) & set(eff):
        return None
    return Evidence.combine(np.min, parts)


def _adam_text(q) -> str:
    eff = q.framework_effects
    return "time with adam / with sgd: " + "; ".join(
        f"{fw} {level_ratio(eff[fw], 'optimizer', 'adam', 'sgd').text(3)}" for fw in sorted(eff))


_SEEDS = f"needs {MIN_SEEDS} or more seeds for a seed-to-seed interval"
_ONE_FW = "cannot be tested: one framework measured (framework_datasets)"
_T5 = "journal Table 5 (data/thesis/journal_table5.csv)"
#: the claims about frameworks, judged once on every framework's data (the others are judged per framework)
FRAMEWORK_KEYS = ("framework_ranking", "fw_mxnet_most_accurate", "fw_adam_direction")
#: the claims judged once per machine, on eq. 4.4 fitted to the rows every machine measured (:mod:`.machines`)
MACHINE_KEYS = ("q_workers_negative",)

#: The claims of Chapter 4 and their rules, in ledger order: measured claims, then claims about the published tables.
CLAIMS = (
    Claim("l2_beats_l1", "L2 beats L1 on MAPE, MSE and RMSE", "§4.3.4, Table 4.4",
          "L2 / L1 < 1 for MAPE, MSE and RMSE (the largest ratio), both at lambda {lam_l2:g} / {lam_l1:g}",
          needs=("heldout",), quantity=_l2_over_l1, side="<", threshold=1.0,
          evidence=lambda q: "; ".join(f"{m}: L2 / L1 {heldout_difference(q, 'DE+L2', 'DE+L1', m, ratio=True).text(3)}"
                                       for m in ("MAPE", "MSE", "RMSE"))),
    Claim("r2_falls", "R² falls once λ exceeds 1e-3", "§4.3.4, Figure 4.15",
          "R² at the grid's λ <= 1e-3 nearest to it minus mean R² at the grid's λ in (1e-3, 1e-2] > 0, "
          "for L1 and L2 (the smaller drop)", needs=("sweep_r2",), quantity=lambda q: r2_drop(q.sweep_r2), side=">",
          threshold=0.0,
          evidence=lambda q: r2_drop_text(q.sweep_r2),
          missing=f"the λ grid does not straddle 1e-3, or fewer than {MIN_SEEDS} seeds per λ"),
    Claim("stable_q", "the extrinsic powers q are stable across seeds", "§4.3.1, Table 4.2",
          "largest std of q over seeds (no regularisation) <= 0.1", needs=("seed_params",),
          quantity=lambda q: _stat(q, "DE", ("q[",), _max_sd), side="<", threshold=0.1,
          evidence=lambda q: "std over seeds: " + "; ".join(
              f"{c}: {fmt(seed_std(q.seed_params['DE'][c]))}" for c in _cols(q.seed_params["DE"], ("q[",))),
          missing=_SEEDS),
    Claim("stable_C", "the constant C is stable across seeds", "§4.3.1, Table 4.2",
          "coefficient of variation of C over seeds (no regularisation) <= 0.1", needs=("seed_params",),
          quantity=lambda q: _stat(q, "DE", ["C"], lambda v, axis: _cv(v, axis)[..., 0]), side="<", threshold=0.1,
          evidence=lambda q: _spread_text(q, "C", "C"), missing=_SEEDS),
    Claim("intrinsic_vary", "the intrinsic parameters vary more across seeds than the extrinsic ones",
          "§4.3.1, Table 4.2",
          "median std of the intrinsic powers p / largest std of the extrinsic powers q > 1", needs=("seed_params",),
          quantity=_intrinsic_vary, side=">", threshold=1.0,
          evidence=lambda q: (f"median std of p {fmt(_powers_spread(q, ('p[',), np.median).estimate)} vs largest "
                              f"std of q {fmt(_powers_spread(q, ('q[',), np.max).estimate)} (each at least "
                              f"{fmt(_power_floor(q.seed_params['DE']))}, the fits' resolution)"),
          missing=_SEEDS),
    Claim("l2_reduces_variance", "L2 reduces the seed-to-seed variance of the intrinsic parameters",
          "§4.3.2, §4.3.4, §4.4; Tables 4.2 vs 4.3",
          "L2 / no regularisation < 1 for the median relative std of a and for the median std of p (the larger ratio)",
          needs=("seed_params",), quantity=_l2_spread, side="<", threshold=1.0,
          evidence=_l2_spread_text, missing=_SEEDS),
    Claim("q_workers", "q of workers is close to −1 (good scaling)", "§4.3.5, Table 4.5",
          "−1.15 <= mean q(workers) over seeds <= −0.85", needs=("seed_params",),
          quantity=lambda q: _stat(q, "DE", ["q[workers]"], mean_over_seeds), side="in", threshold=(-1.15, -0.85),
          evidence=lambda q: f"q(workers) = {_stat(q, 'DE', ['q[workers]'], mean_over_seeds).text(3)}", missing=_SEEDS),
    Claim("q_batch", "larger batches shorten the time (negative q of batch size)", "§4.3.2, Tables 4.2–4.3",
          "mean q(batch) over seeds < 0", needs=("seed_params",),
          quantity=lambda q: _stat(q, "DE", ["q[batch_size]"], mean_over_seeds), side="<", threshold=0.0,
          evidence=lambda q: f"q(batch) = {_stat(q, 'DE', ['q[batch_size]'], mean_over_seeds).text(3)} (thesis −0.87 to "
                             "−1.35)",
          missing=_SEEDS),
    Claim("rf_slightly_better", "random forest is slightly more accurate than the generic model (DE)",
          "§4.3.3, journal Table 5", "0 <= MAPE(DE) − MAPE(RF) <= 5 percentage points", needs=("heldout",),
          quantity=lambda q: heldout_difference(q, "DE", "RF"), side="in", threshold=(0.0, 5.0),
          evidence=lambda q: f"MAPE DE − RF {heldout_difference(q, 'DE', 'RF').text(3)} points; " + _metric_text(q)),
    Claim("svr_worst", "SVR fits worst", "§4.3.3, journal Table 5",
          "MAPE(SVR) − the highest MAPE of the other models > 0", needs=("heldout",), quantity=_svr_margin, side=">",
          threshold=0.0, evidence=lambda q: "MAPE " + _metric_text(q)),
    Claim("adam_over_sgd", "Adam takes more time than SGD (PyTorch, TensorFlow; MXNet the other way)",
          "§4.3.1, §4.3.2, Table 4.2", "time with Adam / with SGD, other hyperparameters fixed, > 1",
          needs=("effects",), quantity=lambda q: level_ratio(q.effects, "optimizer", "adam", "sgd"), side=">",
          threshold=1.0, evidence=lambda q: ratio_text(q, "optimizer", "adam", "sgd")),
    Claim("same_over_valid", "'same' padding takes more time than 'valid'", "§4.3.1, Table 4.2",
          "time with same / with valid padding, other hyperparameters fixed, > 1", needs=("effects",),
          quantity=lambda q: level_ratio(q.effects, "padding", "same", "valid"), side=">", threshold=1.0,
          evidence=lambda q: ratio_text(q, "padding", "same", "valid")),
    Claim("q_workers_negative", "more workers shorten the epoch (negative q of workers)", "§4.3.5, Table 4.5",
          "q(workers) of eq. 4.4 fitted on the rows every machine measured < 0", needs=("machine_q",),
          quantity=lambda q: q.machine_q, side="<", threshold=0.0,
          evidence=lambda q: f"q(workers) = {q.machine_q.text(3)} on the {q.machine or 'machine'}",
          missing="cannot be tested: no machine compared (machine_datasets)"),
    Claim("framework_ranking", "MXNet and PyTorch scale better than TensorFlow", "§4.3.5, §4.4, Table 4.5",
          "q(workers) of TensorFlow minus q(workers) of MXNet and PyTorch > 0 (the smaller margin)",
          needs=("framework_q",), quantity=_ranking, side=">", threshold=0.0,
          evidence=lambda q: "q(workers): " + "; ".join(f"{fw} {e.text(3)}" for fw, e in q.framework_q.items()),
          missing="cannot be tested: one framework measured (the ranking needs TensorFlow and MXNet or PyTorch)"),
    Claim("fw_mxnet_most_accurate", "the generic model (L2) predicts MXNet most accurately", "§4.3.4, Table 4.4",
          "MAPE of the L2 fit of TensorFlow and PyTorch minus MXNet's > 0 (the smaller margin, percentage points)",
          needs=("framework_mape",), quantity=_most_accurate, side=">", threshold=0.0, evidence=_most_accurate_text,
          missing=_ONE_FW + "; needs MXNet and TensorFlow or PyTorch"),
    Claim("fw_adam_direction", "Adam takes more time than SGD in PyTorch and TensorFlow, less in MXNet",
          "§4.3.1, §4.3.2, Table 4.2",
          "log(time with Adam / with SGD) > 0 in PyTorch and TensorFlow and < 0 in MXNet, other hyperparameters fixed "
          "(the smallest margin)", needs=("framework_effects",), quantity=_adam_direction, side=">", threshold=0.0,
          evidence=_adam_text, missing=_ONE_FW + "; needs MXNet and PyTorch or TensorFlow"),
    Claim("published_a_bounds", "published: every fitted a lies in the bounds [0, 1000]",
          "§4.1.1 bounds, Tables 4.2–4.3",
          "smallest distance of a printed a inside [0, 1000] > 0", needs=("published_a",),
          quantity=_worst("published_a", ">"), side=">", threshold=0.0,
          evidence=lambda q: "outside: " + _off(q.published_a, ">", 0.0),
          data="thesis Tables 4.2, 4.3 (data/thesis/table4_2.csv, table4_3.csv)"),
    Claim("published_44_vs_j5", "published: thesis Table 4.4 and journal Table 5 agree on the MAPE of the L2 fits",
          "Table 4.4 vs journal Table 5", "largest |difference| beyond the rounding of both < 0",
          needs=("published_44_vs_j5",), quantity=_worst("published_44_vs_j5", "<"), side="<", threshold=0.0,
          evidence=lambda q: _pairs_text(q.published_44_vs_j5_values, " %"),
          data="thesis Table 4.4, journal Table 5 (data/thesis/)"),
    Claim("published_45_vs_43", "published: Table 4.5 repeats the q of GPUs of Table 4.3",
          "§4.3.5, Table 4.5 vs Table 4.3",
          "largest |difference| beyond the rounding of both < 0", needs=("published_45_vs_43",),
          quantity=_worst("published_45_vs_43", "<"), side="<", threshold=0.0,
          evidence=lambda q: _pairs_text(q.published_45_vs_43_values),
          data="thesis Tables 4.3, 4.5 (data/thesis/)"),
    Claim("published_rf_beats_de", "published: random forest beats DE in every framework", "§4.3.3, journal Table 5",
          "largest MAPE(RF) − MAPE(DE) over frameworks < 0", needs=("published_rf_vs_de",),
          quantity=_worst("published_rf_vs_de", "<"), side="<", threshold=0.0,
          evidence=lambda q: "RF − DE MAPE (points): " + "; ".join(f"{fw} {fmt(e.estimate)}"
                                                                   for fw, e in q.published_rf_vs_de.items()),
          data=_T5),
)


def r2_drop(sweep_r2: dict):
    """R² at or just below λ = 1e-3 minus the mean R² just above it, the smaller over penalties (:class:`Evidence`).

    ``sweep_r2`` is ``{penalty: {λ: per-seed held-out R²}}``. For each penalty λ0 is the
    largest grid value <= 1e-3 and the comparison values are the grid's λ in
    (1e-3, 1e-2]; each λ's seeds are resampled. None when the grid does not straddle
    1e-3 that way or a λ has fewer than :data:`MIN_SEEDS` seeds.
    """

    drops = []
    for k, (pen, by_lam) in enumerate(sorted(sweep_r2.items())):
        lams = sorted(by_lam)
        lo = [lam for lam in lams if lam <= 1e-3 * (1 + 1e-9)]
        hi = [lam for lam in lams if 1e-3 * (1 + 1e-9) < lam <= 1e-2 * (1 + 1e-9)]
        if not lo or not hi or any(len(by_lam[lam]) < MIN_SEEDS for lam in [lo[-1], *hi]):
            return None
        (e0, s0), *rest = [seed_bootstrap(by_lam[lam], seed=[SEED, k, i]) for i, lam in enumerate([lo[-1], *hi])]
        est = e0 - np.mean([e for e, _ in rest])
        samples = s0 - np.mean(np.vstack([s for _, s in rest]), axis=0)
        drops.append(Evidence.from_samples(est, samples, SOURCES["sweep"]))
    return Evidence.combine(np.min, drops) if drops else None


def r2_drop_text(sweep_r2: dict) -> str:
    """The R² means the drop compares, per penalty."""
    parts = []
    for pen, by_lam in sorted(sweep_r2.items()):
        lams = sorted(by_lam)
        lo = [lam for lam in lams if lam <= 1e-3 * (1 + 1e-9)]
        hi = [lam for lam in lams if 1e-3 * (1 + 1e-9) < lam <= 1e-2 * (1 + 1e-9)]
        if lo and hi:
            parts.append(f"{pen.upper()}: R² {fmt(np.mean(by_lam[lo[-1]]))} at λ={lo[-1]:g} vs "
                         + ", ".join(f"{fmt(np.mean(by_lam[lam]))} at {lam:g}" for lam in hi)
                         + f" ({min(len(v) for v in by_lam.values())} seeds)")
    return "; ".join(parts) or "the λ grid does not straddle 1e-3"


def published_quantities() -> dict:
    """The published-number checks (tables 4.2, 4.3, 4.4, 4.5, journal 5), as ``{name: {cell: Evidence}}``."""
    def drawn(values: dict, func=lambda x: x):
        keys = list(values)
        d = rounding_draws([values[k] for k in keys])
        return {k: Evidence.from_samples(func(values[k]), func(d[:, i]), SOURCES["printed"])
                for i, k in enumerate(keys)}

    def exact(pairs: dict):
        return {k: Evidence.exact(abs(a - b) - half_unit(a) - half_unit(b), SOURCES["exact"])
                for k, (a, b) in pairs.items()}

    t42, t43 = load_thesis_table("4.2"), load_thesis_table("4.3")
    a = {(r.table, r.framework, r.term): float(r.mean) for t in (t42, t43) for r in t[t["symbol"] == "a"].itertuples()}
    q = {}
    q["published_a"] = drawn(a, lambda x: np.minimum(x, 1000.0 - x))
    t44m = load_thesis_table("4.4")
    t44m = t44m[(t44m["metric"] == "MAPE") & (t44m["penalty"] == "L2")].set_index("framework")["mean"]
    j5 = load_thesis_table("journal5")
    j5m = j5[(j5["metric"] == "MAPE") & (j5["method"] == "DE+L2")].set_index("framework")["mean"]
    q["published_44_vs_j5_values"] = {fw: (float(t44m[fw]), float(j5m[fw])) for fw in t44m.index if fw in j5m.index}
    q["published_44_vs_j5"] = exact(q["published_44_vs_j5_values"])
    q45 = load_thesis_table("4.5").set_index("framework")["mean"]
    q43 = t43[(t43["parameter"] == "gpus") & (t43["symbol"] == "q")].set_index("framework")["mean"]
    q["published_45_vs_43_values"] = {fw: (float(q45[fw]), float(q43[fw])) for fw in q45.index if fw in q43.index}
    q["published_45_vs_43"] = exact(q["published_45_vs_43_values"])
    j5all = j5[j5["metric"] == "MAPE"].pivot_table(index="framework", columns="method", values="mean")
    d = rounding_draws(j5all[["RF", "DE"]].to_numpy().ravel()).reshape(-1, len(j5all), 2)
    q["published_rf_vs_de"] = {fw: Evidence.from_samples(j5all.loc[fw, "RF"] - j5all.loc[fw, "DE"],
                                                         d[:, i, 0] - d[:, i, 1], SOURCES["printed"])
                               for i, fw in enumerate(j5all.index)}
    return q


def framework_mape(parts) -> dict | None:
    """``{framework: Evidence}``: held-out MAPE of each framework's L2 fit, for the framework claims (paired
    bootstrap over held-out row positions: the same configurations when the files hold the same samples)."""
    if len(parts) < 2:
        return None
    out = {}
    for part in parts:
        h = part.heldout
        est, samples = paired_bootstrap(h["y"], {"DE+L2": h["pred"]["DE+L2"]}, METRICS["MAPE"], seed=SEED)["DE+L2"]
        out[part.framework] = Evidence.from_samples(est, samples, SOURCES["heldout_fw"])
    return out
