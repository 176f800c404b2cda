"""Unit 6 of the course, "Measure small, predict large": what its notebook computes and draws, and its exercises.

The data are Pollux's shipped GPU traces (``data/external/pollux``, Qiao et al. OSDI'21): per job, the step time
``t_iter`` and its synchronisation part ``sync_time`` on 1 to 64 GPUs (``n_gpus``) on 1 to 16 nodes (``n_nodes``)
for several per-GPU batches (``batch_per_gpu``).

- :func:`load_jobs`, :func:`split_table`, :func:`shown_batch`, :func:`draw_split`: the factor split of one job (fit on
  the GPU counts up to a quarter of the largest, score from twice that);
- :func:`fit_models`, :func:`error_table`, :func:`draw_phases`: step-time forms with compute and synchronisation
  phases (one with the all-reduce priced by the hardware) against a random forest;
- :func:`interval_model`, :func:`slider_fits`, :func:`draw_widening`: intervals ŷ·exp(±κ·q·d) that widen with the
  extrapolation distance d, for every "measured up to" value of the widget;
- :func:`transfer_table`, :func:`draw_coverage`: κ transferred from the other jobs and the coverage it buys;
- :func:`regime_table`: a user with one node only, the rows on more nodes flagged as a new regime.

Every function is deterministic for its inputs and seed.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..data.hardware import cluster_facts, gradient_bytes
from ..data.pollux import load_traces
from ..model.forms.commprior import CommPriorStepModel
from ..model.forms.stepmodels import PhaseAwareStepModel
from ..model.uncertainty.extrapolation import (conformal_quantile, distance, factor_inner_splits, factor_splits,
                                               inflation_ratios, interval_coverage, transfer_inflation)
from ..model.uncertainty.scale_intervals import DEFAULT_KAPPA, DEFAULT_REGIME_KAPPA, ScaleIntervalModel
from ..schema import resolve
from .exercises import Exercise, call, close

__all__ = ["CONFIG", "PHASE", "TARGET", "MODEL_NAMES", "load_jobs", "split_table", "shown_batch", "packed",
           "draw_split", "fit_models", "predict", "error_table", "draw_phases", "interval_model", "slider_values",
           "slider_fits", "draw_widening", "transfer_table", "draw_coverage", "regime_table", "FIGURES", "EXERCISES"]

#: the configuration columns every model reads (GPUs K, nodes N, per-GPU batch m)
CONFIG = ("n_gpus", "n_nodes", "batch_per_gpu")
#: the measured phase: read by the phase-aware fits only, never by a prediction
PHASE = "sync_time"
#: the measured step time (seconds)
TARGET = "t_iter"
#: the three models of the comparison, in the order of the tables and figures
MODEL_NAMES = ("phase-aware", "comm prior", "random forest")
_COLOURS = {"phase-aware": "#1f77b4", "comm prior": "#2ca02c", "random forest": "#d62728"}
_CLUSTER = "aws"  # Pollux's testbed: 4 T4 GPUs per g4dn.12xlarge node
_K_TICKS = (1, 2, 4, 8, 16, 32, 64)


# ------------------------------------------------------------------------------------------------ data and split
def load_jobs(root="data/external/pollux", jobs=("cifar10",)):
    """The rows of ``jobs`` from the Pollux traces under ``root`` (relative to the repository): columns ``job``,
    :data:`CONFIG`, :data:`PHASE` and :data:`TARGET`, every published row."""
    frame = load_traces(resolve(root), jobs=list(jobs))
    return frame[["job", *CONFIG, PHASE, TARGET]].reset_index(drop=True)


def split_table(rows):
    """``(splits, table)`` of one job's rows: :func:`~perfkit.model.uncertainty.extrapolation.factor_splits` of its
    GPU counts and a table with one row per role (fit, gap, test): rows, GPU counts, node counts."""
    import pandas as pd

    s = factor_splits(rows["n_gpus"])
    k = rows["n_gpus"].to_numpy(dtype=float)
    roles = {"fit (K ≤ fit_max)": k <= s["fit_max"], "gap (not used)": (k > s["fit_max"]) & (k < s["test_min"]),
             "test (K ≥ 2·fit_max)": k >= s["test_min"]}
    table = pd.DataFrame([{"role": name, "rows": int(m.sum()),
                           "GPUs": f"{int(k[m].min())}–{int(k[m].max())}" if m.any() else "–",
                           "nodes": (f"{int(rows['n_nodes'][m].min())}–{int(rows['n_nodes'][m].max())}"
                                     if m.any() else "–")} for name, m in roles.items()])
    return s, table.set_index("role")


def shown_batch(rows) -> int:
    """The per-GPU batch the figures show: the one measured at the most distinct GPU counts (the largest on a
    tie)."""
    counts = rows.groupby("batch_per_gpu")["n_gpus"].nunique()
    return int(counts[counts == counts.max()].index.max())


def packed(ks, batch, gpus_per_node: int = 4):
    """Configurations with ``ks`` GPUs packed onto nodes of ``gpus_per_node`` (N = ⌈K / gpus_per_node⌉) and one
    per-GPU batch: the curve the figures draw."""
    import pandas as pd

    k = np.asarray(ks, dtype=int)
    return pd.DataFrame({"n_gpus": k, "n_nodes": -(-k // gpus_per_node), "batch_per_gpu": int(batch)})


def _k_axis(ax, top: float = 64) -> None:
    """A log2 GPU axis with plain ticks 1, 2, 4, ... up to ``top``."""
    ax.set_xscale("log", base=2)
    ticks = [t for t in _K_TICKS if t <= top]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("GPUs K")


def draw_split(rows, splits, batch: int):
    """Two panels at one per-GPU batch: the step time against the GPU count, coloured by role in the split, and the
    share of the step spent synchronising."""
    from ..report.plots import new_figure

    r = rows[rows["batch_per_gpu"] == batch]
    k = r["n_gpus"].to_numpy(dtype=float)
    roles = (("fit", k <= splits["fit_max"], "#1f77b4"),
             ("gap", (k > splits["fit_max"]) & (k < splits["test_min"]), "#bbbbbb"),
             ("test", k >= splits["test_min"], "#ff7f0e"))
    fig, (a, b) = new_figure(1, 2, figsize=(8.4, 3.1))
    for name, m, colour in roles:
        a.scatter(k[m], r[TARGET][m], s=14, color=colour, label=name)
        b.scatter(k[m], (r[PHASE] / r[TARGET])[m], s=14, color=colour)
    for ax in (a, b):
        _k_axis(ax)
        ax.axvspan(0.8, splits["fit_max"], color="#1f77b4", alpha=0.06)
    a.set_ylabel("step time (s)")
    a.set_title(f"fit K ≤ {splits['fit_max']:g}, test K ≥ {splits['test_min']:g} (batch {batch})", fontsize=9)
    a.legend(fontsize=7, loc="upper left")
    b.set_ylabel("sync_time / step time")
    b.set_title("share of the step spent synchronising", fontsize=9)
    return fig


# ------------------------------------------------------------------------------------------------ models
def fit_models(fit_rows, job: str = "cifar10", n_trees: int = 150, seed: int = 0) -> dict:
    """The models of :data:`MODEL_NAMES` fitted on ``fit_rows``: the phase-aware step form (synchronisation ∝ ln K,
    fitted jointly with the measured ``sync_time``), the same overlap law with the all-reduce priced by the gradient
    bytes of ``job`` and the bandwidths of Pollux's cluster, and a random forest of the configuration."""
    from sklearn.ensemble import RandomForestRegressor

    X, y = fit_rows[[*CONFIG, PHASE]], fit_rows[TARGET].to_numpy(dtype=float)
    hw = cluster_facts(_CLUSTER)
    prior = CommPriorStepModel(grad_bytes=gradient_bytes(job), intra_gbps=hw["intra_gbps"],
                               inter_gbps=hw["inter_gbps"])
    forest = RandomForestRegressor(n_estimators=int(n_trees), min_samples_leaf=2, random_state=seed, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"phase-aware": PhaseAwareStepModel().fit(X, y), "comm prior": prior.fit(X, y),
                "random forest": forest.fit(X[list(CONFIG)], y)}


def predict(model, configs) -> np.ndarray:
    """A model's step times (s) for ``configs``, from the configuration columns alone."""
    return np.asarray(model.predict(configs[list(CONFIG)]), dtype=float)


def error_table(models: dict, test_rows, fit_max: float):
    """MAPE (%) of each model on ``test_rows``, one row per GPU count (with its factor K / fit_max) and one for all."""
    import pandas as pd

    y = test_rows[TARGET].to_numpy(dtype=float)
    ape = {name: 100 * np.abs(predict(m, test_rows) - y) / y for name, m in models.items()}
    k = test_rows["n_gpus"].to_numpy()
    rows = [{"GPUs": str(int(v)), "factor": f"{v / fit_max:g}×", "rows": int((k == v).sum()),
             **{n: float(a[k == v].mean()) for n, a in ape.items()}} for v in np.unique(k)]
    rows.append({"GPUs": "all", "factor": "", "rows": len(k), **{n: float(a.mean()) for n, a in ape.items()}})
    return pd.DataFrame(rows).set_index("GPUs")


def draw_phases(models: dict, rows, batch: int, fit_max: float):
    """Two panels at one per-GPU batch: each model's step time along K (nodes packed 4 GPUs each) against the
    measured rows, and the step forms' predicted compute and synchronisation against the measured phases."""
    from ..report.plots import new_figure

    r = rows[rows["batch_per_gpu"] == batch]
    grid = packed(np.arange(1, 65), batch)
    k = grid["n_gpus"]
    fig, (a, b) = new_figure(1, 2, figsize=(8.6, 3.2))
    a.scatter(r["n_gpus"], r[TARGET], s=10, color="#999999", label="measured")
    for name, m in models.items():
        a.plot(k, predict(m, grid), color=_COLOURS[name], label=name, ls="--" if name == "random forest" else "-")
    b.scatter(r["n_gpus"], r[TARGET] - r[PHASE], s=10, color="#9ecae1", label="measured compute")
    b.scatter(r["n_gpus"], r[PHASE], s=10, color="#fdae6b", label="measured sync")
    for name in ("phase-aware", "comm prior"):
        parts = models[name].predict_parts(grid)
        ls = "-" if name == "phase-aware" else ":"
        b.plot(k, parts["t_grad"], color="#1f77b4", ls=ls, label=f"T_grad ({name})")
        b.plot(k, parts["t_sync"], color="#e6550d", ls=ls, label=f"T_sync ({name})")
    for ax in (a, b):
        _k_axis(ax)
        ax.axvspan(0.8, fit_max, color="#1f77b4", alpha=0.06)
        ax.legend(fontsize=6, loc="upper left")
    a.set_ylabel("step time (s)")
    a.set_title(f"fitted on K ≤ {fit_max:g} (shaded), batch {batch}", fontsize=9)
    b.set_ylabel("seconds")
    b.set_title("the phases: compute and synchronisation", fontsize=9)
    return fig


# ------------------------------------------------------------------------------------------------ intervals
def interval_model(fit_rows, fit_max: float, kappa: float = 1.0):
    """A :class:`~perfkit.model.uncertainty.scale_intervals.ScaleIntervalModel` around the phase-aware form, fitted
    on ``fit_rows`` (all with K <= ``fit_max``), calibrated on the inner splits of
    :func:`~perfkit.model.uncertainty.extrapolation.factor_inner_splits` and widened by ``kappa``."""
    splits = factor_inner_splits(fit_rows["n_gpus"], fit_max)
    model = ScaleIntervalModel(PhaseAwareStepModel(), column="n_gpus", fit_max=float(fit_max), splits=splits,
                               phases=[PHASE], inflation=float(kappa))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(fit_rows[[*CONFIG, PHASE]], fit_rows[TARGET].to_numpy(dtype=float))


def slider_values(quick: bool = False) -> tuple:
    """The "measured up to K GPUs" values of the widget: evenly spaced, so that an integer slider lands on each."""
    return (8, 16, 24) if quick else (4, 8, 12, 16, 20, 24, 28, 32)


def slider_fits(rows, values, kappa: float, n_trees: int = 150, seed: int = 0) -> dict:
    """For each fit_max of ``values``: the interval model (:func:`interval_model`, widened by ``kappa``) and a random
    forest, both fitted on the rows with K <= fit_max."""
    from sklearn.ensemble import RandomForestRegressor

    out = {}
    for v in values:
        fit = rows[rows["n_gpus"] <= v]
        forest = RandomForestRegressor(n_estimators=int(n_trees), min_samples_leaf=2, random_state=seed, n_jobs=1)
        out[int(v)] = {"interval": interval_model(fit, v, kappa),
                       "forest": forest.fit(fit[list(CONFIG)], fit[TARGET].to_numpy(dtype=float))}
    return out


def _intervals(model, configs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.predict_interval(configs[list(CONFIG)], coverage=0.9)


def draw_widening(fits: dict, rows, batch: int = 128, fit_max: int = 16):
    """Two panels for the rows measured up to ``fit_max`` GPUs (a key of ``fits``): the predicted step time with its
    90 % interval ŷ·exp(±κ·q·d) and the random forest along K at one batch, against the measured rows; and the
    score |log(y/ŷ)| of every row beyond ``fit_max`` against its distance d, with the half-width κ·q·d."""
    from ..report.plots import new_figure

    f = fits[int(fit_max)]
    model = f["interval"]
    grid = packed(np.arange(1, 65), batch)
    iv = _intervals(model, grid)
    r = rows[rows["batch_per_gpu"] == batch]
    inside = r["n_gpus"] <= fit_max
    beyond = rows[rows["n_gpus"] > fit_max]
    ib = _intervals(model, beyond)
    y = beyond[TARGET].to_numpy(dtype=float)
    cover = interval_coverage(y, ib["lower"], ib["upper"])
    fig, (a, b) = new_figure(1, 2, figsize=(8.6, 3.2))
    a.fill_between(grid["n_gpus"], iv["lower"], iv["upper"], color="#1f77b4", alpha=0.18, label="90 % interval")
    a.plot(grid["n_gpus"], iv["predicted"], color="#1f77b4", label="phase-aware")
    a.plot(grid["n_gpus"], predict(f["forest"], grid), color="#d62728", ls="--", label="random forest")
    a.scatter(r["n_gpus"][inside], r[TARGET][inside], s=10, color="#333333", label="measured (fitted)")
    a.scatter(r["n_gpus"][~inside], r[TARGET][~inside], s=12, facecolor="none", edgecolor="#ff7f0e",
              label="measured (beyond)")
    _k_axis(a)
    a.axvline(fit_max, color="grey", lw=0.7)
    a.set_ylim(0, 1.6 * float(r[TARGET].max()))
    a.set_ylabel("step time (s)")
    a.set_title(f"measured up to {fit_max} GPUs: {100 * cover:.0f} % of {len(y)} rows beyond covered", fontsize=9)
    a.legend(fontsize=6, loc="upper left")
    score = np.abs(np.log(y / ib["predicted"].to_numpy()))
    b.scatter(ib["distance"], score, s=8, color="#ff7f0e", alpha=0.6, label="rows beyond")
    d = np.linspace(1, max(float(ib["distance"].max()), 1.5), 50)
    b.plot(d, model.half_width(0.9) * d, color="#1f77b4", label="κ·q·d")
    b.set_xlabel("distance d = 1 + log2(K / fit_max)")
    b.set_ylabel("|log(y / ŷ)|")
    b.set_title(f"κ·q = {model.half_width(0.9):.3f}", fontsize=9)
    b.legend(fontsize=7, loc="upper left")
    return fig


def transfer_table(frame, splits: dict):
    """Per job of ``frame`` (all fitted on K <= fit_max, scored from test_min): its inner q, the κ transferred from
    the other jobs' ratios (leave this job out), and the coverage of its test rows by the 90 % interval with κ = 1
    and with its κ; a last row ``all`` pools the rows. Returns ``(table, ratios)``."""
    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ratios, q = inflation_ratios(PhaseAwareStepModel(), frame[["job", *CONFIG, PHASE, TARGET]], "n_gpus",
                                     splits["fit_max"], TARGET, splits["inner"], "job", test_min=splits["test_min"],
                                     predict_drop=[PHASE])
    rows, kappa_of = [], {}
    for job in sorted(q):
        kappa_of[job] = transfer_inflation(ratios, 0.1, groups="job", exclude=job)
        r = ratios[ratios["job"] == job]["ratio"]
        rows.append({"job": job, "test rows": len(r), "q_inner": q[job], "kappa": kappa_of[job],
                     "coverage κ=1": float((r <= 1).mean()), "coverage κ": float((r <= kappa_of[job]).mean())})
    k = ratios["job"].map(kappa_of)
    rows.append({"job": "all", "test rows": len(ratios), "q_inner": np.nan, "kappa": np.nan,
                 "coverage κ=1": float((ratios["ratio"] <= 1).mean()),
                 "coverage κ": float((ratios["ratio"] <= k).mean())})
    return pd.DataFrame(rows).set_index("job"), ratios


def draw_coverage(table):
    """Bars: each job's coverage of its test rows with κ = 1 and with the transferred κ, and the 90 % target."""
    from ..report.plots import legend_outside, new_figure

    jobs = list(table.index)
    x = np.arange(len(jobs))
    fig, ax = new_figure(1, 1, figsize=(7.6, 2.8))
    ax.bar(x - 0.2, 100 * table["coverage κ=1"], width=0.4, color="#9ecae1", label="κ = 1 (inner splits only)")
    ax.bar(x + 0.2, 100 * table["coverage κ"], width=0.4, color="#1f77b4", label="κ from the other jobs")
    ax.axhline(90, color="black", lw=0.8, ls=":", label="target 90 %")
    ax.set_xticks(x, jobs, rotation=20)
    ax.set_yticks([0, 25, 50, 75, 100])
    ax.set_ylim(0, 105)
    ax.set_ylabel("coverage (%)")
    legend_outside(ax)
    return fig


def regime_table(rows, job: str = "cifar10"):
    """A user with one node: both interval models fitted on ``rows``' single-node rows only (K <= 4, κ =
    :data:`~perfkit.model.uncertainty.scale_intervals.DEFAULT_KAPPA`), scored on the multi-node rows with K <= 16.
    The second flags them as a regime (more nodes than any fit row), predicts them with the communication prior and
    widens their interval by ρ = :data:`~perfkit.model.uncertainty.scale_intervals.DEFAULT_REGIME_KAPPA`. Returns
    ``(table, note)``: per model the rows, rows flagged, MAPE (%) and coverage; ``note`` the model's regime note."""
    import pandas as pd

    one = rows[rows["n_nodes"] == 1]
    multi = rows[(rows["n_nodes"] > 1) & (rows["n_gpus"] <= 16)]
    fit_max = float(one["n_gpus"].max())
    hw = cluster_facts(_CLUSTER)
    prior = CommPriorStepModel(grad_bytes=gradient_bytes(job), intra_gbps=hw["intra_gbps"],
                               inter_gbps=hw["inter_gbps"])
    splits = factor_inner_splits(one["n_gpus"], fit_max)
    settings = dict(column="n_gpus", fit_max=fit_max, splits=splits, phases=[PHASE], inflation=DEFAULT_KAPPA)
    models = {"phase-aware, no regime": ScaleIntervalModel(PhaseAwareStepModel(), **settings),
              "regime: comm prior and ρ": ScaleIntervalModel(PhaseAwareStepModel(), nodes="n_nodes",
                                                             regime_inflation=DEFAULT_REGIME_KAPPA,
                                                             regime_estimator=prior, **settings)}
    y = multi[TARGET].to_numpy(dtype=float)
    out = []
    for name, m in models.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.fit(one[[*CONFIG, PHASE]], one[TARGET].to_numpy(dtype=float))
        iv = _intervals(m, multi)
        flagged = int(iv["regime"].sum()) if "regime" in iv else 0
        out.append({"model": name, "rows": len(y), "flagged regime": flagged,
                    "MAPE (%)": float(100 * np.mean(np.abs(iv["predicted"] - y) / y)),
                    "coverage": interval_coverage(y, iv["lower"], iv["upper"])})
    return pd.DataFrame(out).set_index("model"), models["regime: comm prior and ρ"].regime_note()


# ------------------------------------------------------------------------------------------------ figures
def _default_rows():
    return load_jobs()


def _figure_split():
    rows = _default_rows()
    return draw_split(rows, split_table(rows)[0], shown_batch(rows))


def _figure_phases():
    rows = _default_rows()
    s = split_table(rows)[0]
    models = fit_models(rows[rows["n_gpus"] <= s["fit_max"]], n_trees=30)
    return draw_phases(models, rows, shown_batch(rows), s["fit_max"])


def _figure_widening():
    rows = _default_rows()
    return draw_widening(slider_fits(rows, (16,), DEFAULT_KAPPA, n_trees=30), rows, shown_batch(rows), 16)


def _figure_coverage():
    frame = load_jobs(jobs=("cifar10", "imagenet", "deepspeech2"))
    return draw_coverage(transfer_table(frame, factor_splits(frame["n_gpus"]))[0])


#: every figure the notebook shows, drawn with its default inputs (quick budgets)
FIGURES = {"split": _figure_split, "phases": _figure_phases, "widening": _figure_widening,
           "coverage": _figure_coverage}


# ------------------------------------------------------------------------------------------------ exercises
def _split_cases() -> list:
    """GPU counts of two synthetic traces: 1-64 GPUs (a quarter of the largest is measured) and 1-11 GPUs (it is
    not: fit_max 2, test from 4, half the largest 5.5)."""
    rng = np.random.default_rng(6)
    a = np.repeat([1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 64], 3)
    return [rng.permutation(a), rng.permutation(np.repeat(np.arange(1, 12), 2))]


def _split_answers(answer) -> list | None:
    """The answer's (fit, test) masks on each case of :func:`_split_cases`; None when one is not a pair of boolean
    arrays of the rows' length."""
    out = []
    for k in _split_cases():
        got = call(answer, k.copy())
        if not (isinstance(got, (tuple, list)) and len(got) == 2):
            return None
        fit, test = (np.asarray(g) for g in got)
        if fit.shape != k.shape or test.shape != k.shape or fit.dtype != bool or test.dtype != bool:
            return None
        out.append((fit, test))
    return out


def _check_split(answer):
    got = _split_answers(answer)
    if got is None:
        return "shape"
    cases = []
    for k in _split_cases():
        s = factor_splits(k)
        cases.append({"k": k, "top": k.max(), "fit": k <= s["fit_max"], "test": k >= s["test_min"],
                      "fit<": k < s["fit_max"], "test>": k > s["test_min"], "after": k > s["fit_max"]})

    def every(rule) -> bool:
        return all(rule(c, f, t) for c, (f, t) in zip(cases, got))

    eq = np.array_equal
    if every(lambda c, f, t: eq(f, c["fit"]) and eq(t, c["test"])):
        return None
    if every(lambda c, f, t: eq(f, c["fit"]) and eq(t, c["k"] >= c["top"] / 2)):
        return "half-of-largest"
    if every(lambda c, f, t: (eq(f, c["fit"]) or eq(f, c["fit<"])) and (eq(t, c["test"]) or eq(t, c["test>"]))):
        return "strict"
    if every(lambda c, f, t: eq(f, c["k"] <= c["top"] / 2)):
        return "half-fit"
    if every(lambda c, f, t: eq(f, c["fit"]) and eq(t, c["after"])):
        return "no-gap"
    return "wrong"


def _check_distance(answer):
    k, fit_max = np.array([1.0, 4.0, 8.0, 16.0, 24.0, 32.0, 64.0]), 16.0
    got = call(answer, k.copy(), fit_max)
    if close(got, distance(k, fit_max)):
        return None
    ratio = k / fit_max
    for clip in (True, False):
        r = np.maximum(ratio, 1.0) if clip else ratio
        for log in (np.log, np.log10):
            if close(got, 1 + log(r)) or close(got, log(r)):
                return "log-base"
    if close(got, np.log2(np.maximum(ratio, 1.0))) or close(got, np.log2(ratio)):
        return "no-one"
    if close(got, 1 + np.log2(ratio)) or close(got, np.maximum(1 + np.log2(ratio), 0)):
        return "no-clip"
    return "wrong"


def _check_interval(answer):
    pred, d, q, kappa = np.array([0.2, 0.25, 0.3]), np.array([1.0, 2.0, 3.0]), 0.1, 1.5
    got = call(answer, pred.copy(), d.copy(), q, kappa)
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        return "shape"
    lower, upper = got

    def same(lo, hi):
        return close(lower, lo) and close(upper, hi)

    w = kappa * q * d
    if same(pred * np.exp(-w), pred * np.exp(w)):
        return None
    if same(pred * np.exp(w), pred * np.exp(-w)):
        return "order"
    if same(pred * (1 - w), pred * (1 + w)) or same(pred - w, pred + w):
        return "linear"
    if same(pred * np.exp(-q * d) / kappa, pred * np.exp(q * d) * kappa) \
            or same(pred * np.exp(-q * d) * kappa, pred * np.exp(q * d) * kappa):
        return "kappa-outside"
    if same(pred * np.exp(-q * d), pred * np.exp(q * d)):
        return "no-kappa"
    if same(pred * np.exp(-kappa * q), pred * np.exp(kappa * q)):
        return "no-distance"
    return "wrong"


def _kappa_cases() -> list:
    """(ratios, alpha) cases: 21 ratios at α = 0.1 (rank 20), 12 at α = 0.2 (rank 11), 5 at α = 0.1 (rank 6 > 5:
    the largest)."""
    rng = np.random.default_rng(66)
    return [(rng.lognormal(0, 0.5, 21), 0.1), (rng.lognormal(0, 0.5, 12), 0.2), (rng.lognormal(0, 0.5, 5), 0.1)]


def _kappa_variants(ratios, alpha) -> dict:
    """What each typical mistake of exercise 6.4 returns on one case (a list of candidates; empty where the mistake
    fails there)."""
    v = np.sort(ratios)
    n = len(v)
    rank = math.ceil(round((n + 1) * (1 - alpha), 9))
    low = math.ceil(round((n + 1) * alpha, 9))
    methods = ("linear", "higher", "lower", "nearest", "midpoint", "inverted_cdf")
    return {"plain-quantile": [np.quantile(v, 1 - alpha, method=m) for m in methods],
            "alpha": [v[low - 1], *(np.quantile(v, alpha, method=m) for m in methods)],
            "off-by-one": [v[rank]] if rank < n else [],
            "unsorted": [ratios[min(rank, n) - 1]]}


def _check_kappa(answer):
    cases = _kappa_cases()
    got = [call(answer, r.copy(), a) for r, a in cases[:2]]
    try:  # the case whose rank exceeds n: the answer must take the largest ratio
        got.append(call(answer, cases[2][0].copy(), cases[2][1]))
    except IndexError:
        got.append(None)
    right = [close(g, conformal_quantile(r, a, cap=True)) if g is not None else False
             for g, (r, a) in zip(got, cases)]
    if all(right):
        return None
    if right[0] and right[1]:
        return "no-cap"
    variants = [_kappa_variants(r, a) for r, a in cases]
    for key in ("plain-quantile", "alpha", "off-by-one", "unsorted"):
        if all(not v[key] or (g is not None and any(close(g, x) for x in v[key]))
               for g, v in zip(got[:2], variants[:2])):
            return key
    return "wrong"


EXERCISES = (
    Exercise("6.1", "factor_split", "the factor split of a column of GPU counts", _check_split, {
        "shape": "return a pair (fit, test) of boolean arrays, one entry per row of n_gpus.",
        "strict": "both ends of the split are inclusive: the rows AT fit_max belong to the fit rows and the rows AT "
                  "2·fit_max to the test rows. Check < against <=.",
        "half-fit": "the fit rows stop at a quarter of the largest count, not at half of it: with half, the test "
                    "rows would start at the largest count and the extrapolation would be at most 2×.",
        "no-gap": "the test rows start at twice fit_max, not just above it: rows between fit_max and 2·fit_max "
                  "(a 1.25× step) are in neither set, so every test row is at least a 2× extrapolation.",
        "half-of-largest": "the test rows start at 2·fit_max, where fit_max is the largest MEASURED count at most a "
                           "quarter of the largest. When a quarter of the largest is not itself measured (counts "
                           "1-11: fit_max 2), half the largest is not 2·fit_max.",
        "wrong": "fit_max is the largest measured count that is at most max(n_gpus) / 4; fit rows: n_gpus <= "
                 "fit_max; test rows: n_gpus >= 2·fit_max. Try it by hand on counts 1-11.",
    }),
    Exercise("6.2", "extrapolation_distance", "the extrapolation distance d", _check_distance, {
        "log-base": "the distance counts doublings: use log base 2 (np.log2), so that twice fit_max is d = 2.",
        "no-one": "d starts at 1 at the edge of the fit rows (1 + ...), so that the interval there is the plain "
                  "conformal one, q·1, not zero width.",
        "no-clip": "inside the measured range (K <= fit_max) d stays 1: clip K / fit_max at 1 before the log "
                   "(np.maximum), or rows inside the range get d < 1, even negative.",
        "wrong": "d = 1 at and below fit_max, 2 at twice fit_max, 3 at four times it. Compare yours on "
                 "K = 8, 16, 32, 64 with fit_max = 16.",
    }),
    Exercise("6.3", "widened_interval", "the interval ŷ·exp(±κ·q·d)", _check_interval, {
        "shape": "return a pair (lower, upper) of arrays, one entry per prediction.",
        "order": "lower first, then upper: lower is the smaller.",
        "linear": "the interval is multiplicative: the log half-width κ·q·d goes in an exponent. ŷ·(1 ± w) is "
                  "symmetric in seconds, not in ratios, and its lower end goes negative for w > 1.",
        "kappa-outside": "κ multiplies the log half-width inside the exponent, with q and d, not ŷ or the "
                         "bounds.",
        "no-kappa": "the inflation κ (transferred from other jobs) widens the half-width: κ·q·d, not q·d.",
        "no-distance": "the half-width grows with the distance: κ·q·d. Without d every row gets the same "
                       "width however far beyond the measured scale it lies.",
        "wrong": "lower = ŷ / exp(κ·q·d) and upper = ŷ · exp(κ·q·d), element by element.",
    }),
    Exercise("6.4", "conformal_kappa", "κ as the conformal quantile of the ratios", _check_kappa, {
        "plain-quantile": "a plain 90 % quantile is not the split-conformal one: take the ⌈(n+1)(1−α)⌉-th smallest "
                          "ratio (the finite-sample correction, Lei et al. 2018), not np.quantile.",
        "alpha": "κ must cover 1 − α of the ratios: the rank is ⌈(n+1)(1−α)⌉, near the top, not ⌈(n+1)α⌉.",
        "off-by-one": "the k-th smallest of a sorted array is at index k − 1 (Python counts from 0).",
        "unsorted": "sort the ratios before taking the k-th smallest.",
        "no-cap": "with few ratios the rank can exceed n (5 ratios at α = 0.1: rank 6); then return the largest "
                  "ratio.",
        "wrong": "sort the ratios; rank = ⌈(n+1)(1−α)⌉; return the rank-th smallest (the largest when rank > n).",
    }),
)
