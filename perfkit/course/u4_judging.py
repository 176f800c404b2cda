"""Unit 4 of the course, "Judging a model": what the notebook ``notebooks/course/u4_judging.ipynb`` computes and
draws, and its exercises' checks.

- :func:`load_split`, :func:`fit_models`: the measured LeNet-5 step times, split to fit and held out, and the two
  models the unit judges (the log-linear form and a random forest);
- :func:`score_table` (MAPE and R² of :mod:`perfkit.model.selection.metrics`): the two scores, on held-out rows, by cross-validation and (leaking)
  on the rows used to fit;
- :func:`scale_slow_errors`, :func:`draw_disagreement`, :func:`draw_error_shares`: why MAPE and R² can rank two
  models differently (a few slow configurations carry most of the squared error);
- :func:`conformal_setup`, :func:`draw_coverage` (the half-width: :func:`perfkit.model.uncertainty.extrapolation.conformal_quantile`): split-conformal intervals (Lei et
  al. 2018) and their coverage at any level;
- :func:`paired_margin`, :func:`draw_margin`: the margin between two models with a paired bootstrap interval.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..model.selection.metrics import mape, r2
from ..model.uncertainty.extrapolation import conformal_quantile
from .exercises import Exercise, call, close

__all__ = ["load_split", "fit_loglinear", "fit_models", "score_table", "scale_slow_errors", "draw_disagreement",
           "draw_error_shares", "conformal_setup", "intervals_at", "draw_coverage",
           "paired_margin", "draw_margin", "FIGURES", "EXERCISES", "DATASET"]

#: the shipped measurements the unit reads (relative to the repository)
DATASET = "data/measured/pytorch-cpu/ch4_lenet5.csv"
_A, _B = "log-linear", "random forest"


# ------------------------------------------------------------------------------------------- data and models
def load_split(dataset: str = DATASET, target: str = "step_time", n_rows: int | None = None, seed: int = 0) -> dict:
    """The successful rows of ``dataset`` (the first ``n_rows``; all when None), split 2 : 1 at random (``seed``)
    into rows to fit and held-out rows: ``{"X_fit", "X_test", "y_fit", "y_test"}`` (DataFrames / Series)."""
    from ..data.measured import load_steps, thesis_split
    from ..schema import resolve

    X, y, _ = load_steps(resolve(dataset), target=target)
    if n_rows is not None:
        X, y = X.iloc[:n_rows], y.iloc[:n_rows]
    n_fit = int(round(2 * len(X) / 3))
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=n_fit, n_test=len(X) - n_fit, seed=seed)
    return {"X_fit": X_fit, "X_test": X_test, "y_fit": y_fit, "y_test": y_test}


def _factories(seed: int = 0, n_trees: int = 200) -> dict:
    from ..model.selection.baselines import make_baseline
    from ..model.selection.search import make_form
    from ..schema import ROLES

    roles = ROLES["ch4"]
    return {_A: lambda: make_form("loglinear", **roles, random_state=seed),
            _B: lambda: make_baseline("rf", **roles, random_state=seed, n_estimators=n_trees)}


def fit_loglinear(split: dict, seed: int = 0, **settings):
    """The log-linear form with ``settings`` overriding its defaults (e.g. ``category_pairs=False``: without the
    level-pair terms), fitted on ``split``'s rows to fit."""
    from ..model.selection.search import make_form
    from ..schema import ROLES

    return make_form("loglinear", **ROLES["ch4"], random_state=seed, **settings).fit(split["X_fit"], split["y_fit"])


def fit_models(split: dict, seed: int = 0, n_trees: int = 200) -> dict:
    """The log-linear form (``make_form("loglinear")``, least squares on log t) and a random forest (``n_trees``
    trees on t in seconds), each fitted on ``split``'s rows to fit: ``{name: fitted model}``."""
    return {name: make().fit(split["X_fit"], split["y_fit"]) for name, make in _factories(seed, n_trees).items()}


# ------------------------------------------------------------------------------------------- the two scores
def score_table(split: dict, models: dict, seed: int = 0, folds: int = 5, n_trees: int = 200):
    """MAPE (%) and R² of each model three ways: on the held-out rows, by ``folds``-fold cross-validation of the rows
    to fit (each row predicted by a model that did not see it), and on the rows used to fit (leakage: an optimistic
    score). One row per model and way of scoring."""
    import pandas as pd
    from sklearn.model_selection import KFold

    X, y = split["X_fit"], split["y_fit"].to_numpy(dtype=float)
    rows = []
    for name, make in _factories(seed, n_trees).items():
        oof = np.empty(len(y))
        for tr, te in KFold(folds, shuffle=True, random_state=seed).split(X):
            oof[te] = make().fit(X.iloc[tr], y[tr]).predict(X.iloc[te])
        held = models[name].predict(split["X_test"])
        fitted = models[name].predict(X)
        for way, (yy, p) in {"held out": (split["y_test"], held), f"{folds}-fold CV": (y, oof),
                             "rows used to fit (leak)": (y, fitted)}.items():
            rows.append({"model": name, "scored on": way, "MAPE %": mape(yy, p), "R²": r2(yy, p)})
    return pd.DataFrame(rows).pivot(index="scored on", columns="model", values=["MAPE %", "R²"])


# ------------------------------------------------------------------------------------------- when they disagree
def scale_slow_errors(y, pred, factor: float = 1.0, share: float = 0.05):
    """``pred`` with the log errors log(ŷ/y) on the slowest ``share`` of the rows (largest ``y``) multiplied by
    ``factor`` (ŷ becomes y·(ŷ/y)^factor: a 20 % error becomes about 44 % at factor 2, never a negative time); the
    other rows unchanged. Returns ``(new predictions, boolean mask of the slow rows)``."""
    y, pred = np.asarray(y, dtype=float), np.asarray(pred, dtype=float)
    k = max(1, int(round(share * len(y))))
    slow = np.zeros(len(y), dtype=bool)
    slow[np.argsort(y)[-k:]] = True
    out = pred.copy()
    out[slow] = y[slow] * (pred[slow] / y[slow]) ** factor
    return out, slow


def draw_disagreement(y, preds: dict, factor: float = 1.0, share: float = 0.05):
    """Three panels: MAPE and R² of the two models of ``preds`` (the first one's log errors on the slowest ``share``
    of the rows multiplied by ``factor``, :func:`scale_slow_errors`), and its predictions against the measured
    times, the slow rows marked."""
    from ..report.plots import new_figure

    names = list(preds)
    y = np.asarray(y, dtype=float)
    scaled, slow = scale_slow_errors(y, preds[names[0]], factor, share)
    p = {names[0]: scaled, **{n: np.asarray(preds[n], dtype=float) for n in names[1:]}}
    fig, (a, b, c) = new_figure(1, 3, figsize=(9.6, 3.0))
    colours = ("#1f77b4", "#ff7f0e")
    for ax, metric, fn in ((a, "MAPE (%) — lower is better", mape), (b, "R² — higher is better", r2)):
        vals = [fn(y, p[n]) for n in names]
        ax.bar(range(len(names)), vals, color=colours[:len(names)])
        ax.set_xticks(range(len(names)), names)
        ax.set_title(metric, fontsize=8)
        for i, v in enumerate(vals):
            ax.annotate(f"{v:.2f}" if fn is r2 else f"{v:.0f}", (i, v), ha="center", va="bottom", fontsize=8)
    b.set_ylim(min(0.0, *(r2(y, p[n]) for n in names)) - 0.1, 1.15)
    c.loglog(y[~slow], p[names[0]][~slow], ".", ms=3, color=colours[0], alpha=0.6, label="other rows")
    c.loglog(y[slow], p[names[0]][slow], "o", ms=4, color="#d62728", label=f"slowest {100 * share:.0f} %")
    lo, hi = y.min() / 2, y.max() * 2
    c.plot([lo, hi], [lo, hi], color="grey", lw=0.8)
    c.set_xlabel("measured (s)")
    c.set_ylabel(f"{names[0]} predicted (s)")
    c.set_title(f"log errors on the slow rows × {factor:g}", fontsize=8)
    c.legend(fontsize=7, loc="upper left")
    return fig


def draw_error_shares(y, preds: dict):
    """Per model: the share of the total squared error (what R² sums) and of the total relative error (what MAPE
    sums) carried by the slowest rows, against the share of rows counted from the slowest."""
    from ..report.plots import new_figure

    y = np.asarray(y, dtype=float)
    order = np.argsort(y)[::-1]
    frac = np.arange(1, len(y) + 1) / len(y)
    fig, axes = new_figure(1, len(preds), figsize=(3.6 * len(preds), 3.0), sharey=True)
    for ax, (name, p) in zip(np.atleast_1d(axes), preds.items()):
        e = np.asarray(p, dtype=float)[order] - y[order]
        ax.plot(100 * frac, 100 * np.cumsum(e ** 2) / np.sum(e ** 2), label="squared error (R²)")
        rel = np.abs(e) / y[order]
        ax.plot(100 * frac, 100 * np.cumsum(rel) / np.sum(rel), ls="--", label="relative error (MAPE)")
        ax.plot([0, 100], [0, 100], color="grey", lw=0.6, ls=":")
        ax.set_xlim(0, 30)
        ax.set_title(name, fontsize=8)
        ax.set_xlabel("slowest rows (% of rows)")
    np.atleast_1d(axes)[0].set_ylabel("share of the total error (%)")
    np.atleast_1d(axes)[0].legend(fontsize=7, loc="lower right")
    return fig


# ------------------------------------------------------------------------------------------- conformal intervals
def conformal_setup(split: dict, seed: int = 0, calibration: float = 0.3) -> dict:
    """Split conformal on the log-linear form: a ``calibration`` share of the rows to fit is held out, the form is
    fitted on the rest; returns its calibration ``scores`` |log(y/ŷ)|, its held-out predictions ``pred``, the
    measured ``y`` and the fitted :class:`~perfkit.model.uncertainty.conformal.ConformalRegressor` ``model``."""
    from ..model.uncertainty.conformal import ConformalRegressor

    model = ConformalRegressor(_factories(seed)[_A](), method="split", calibration=calibration,
                               random_state=seed).fit(split["X_fit"], split["y_fit"])
    return {"scores": np.asarray(model.scores_, dtype=float), "pred": model.predict(split["X_test"]),
            "y": split["y_test"].to_numpy(dtype=float), "model": model}


def intervals_at(setup: dict, coverage: float):
    """Lower and upper ends ŷ·e^{∓q} of the split conformal intervals of the held-out rows at ``coverage``."""
    q = conformal_quantile(setup["scores"], 1.0 - coverage)
    return setup["pred"] * np.exp(-q), setup["pred"] * np.exp(q)


def draw_coverage(setup: dict, coverage: float = 0.8, shown: int = 40):
    """Two panels: the intervals at ``coverage`` of ``shown`` held-out rows (sorted by prediction) with the measured
    times, inside or outside; and the held-out coverage against the nominal one over a grid of levels."""
    from ..report.plots import new_figure

    lo, hi = intervals_at(setup, coverage)
    y, pred = setup["y"], setup["pred"]
    fig, (a, b) = new_figure(1, 2, figsize=(8.6, 3.1))
    idx = np.linspace(0, len(y) - 1, min(shown, len(y))).astype(int)
    idx = idx[np.argsort(pred[idx])]
    x = np.arange(len(idx))
    inside = (y[idx] >= lo[idx]) & (y[idx] <= hi[idx])
    a.vlines(x, lo[idx], hi[idx], color="#9ecae1", lw=3)
    a.plot(x[inside], y[idx][inside], ".", color="#1f77b4", label="measured, inside")
    a.plot(x[~inside], y[idx][~inside], "x", color="#d62728", label="measured, outside")
    a.set_yscale("log")
    a.set_xlabel("held-out rows, by prediction")
    a.set_ylabel("step time (s)")
    a.set_title(f"{100 * coverage:.0f} % intervals, half-width ×{math.exp(conformal_quantile(setup['scores'], 1 - coverage)):.2f}",
                fontsize=8)
    a.legend(fontsize=7, loc="upper left")
    grid = np.linspace(0.5, 0.95, 10)
    got = [np.mean((y >= lo_) & (y <= hi_)) for lo_, hi_ in (intervals_at(setup, g) for g in grid)]
    b.plot(100 * grid, 100 * np.asarray(got), marker="o", ms=3, label="held-out coverage")
    b.plot([50, 95], [50, 95], color="grey", lw=0.8, ls=":", label="nominal")
    b.axvline(100 * coverage, color="grey", lw=0.6)
    b.set_xlabel("nominal coverage (%)")
    b.set_ylabel("measured inside (%)")
    b.set_title(f"at {100 * coverage:.0f} %: {100 * np.mean((y >= lo) & (y <= hi)):.0f} % inside", fontsize=8)
    b.legend(fontsize=7, loc="upper left")
    return fig


# ------------------------------------------------------------------------------------------- paired margin
def paired_margin(y, pred_a, pred_b, metric: str = "MAPE", b: int = 2000, seed: int = 0) -> dict:
    """``metric`` of model A minus that of model B (:data:`perfkit.evidence.METRICS`) on the rows ``y``, with 95 %
    bootstrap intervals: ``paired`` (the same resampled rows for both models) and ``unpaired`` (independent
    resamples, which ignore that the two models err on the same hard rows)."""
    from ..evidence import METRICS, bootstrap_indices, paired_bootstrap, percentile_interval

    y, pa, pb = (np.asarray(v, dtype=float) for v in (y, pred_a, pred_b))
    fn = METRICS[metric]
    out = paired_bootstrap(y, {"a": pa, "b": pb}, fn, b=b, seed=seed)
    paired = out["a"][1] - out["b"][1]
    other = bootstrap_indices(len(y), b, seed + 1)
    unpaired = out["a"][1] - fn(y[other], pb[other])
    return {"metric": metric, "margin": out["a"][0] - out["b"][0], "paired": paired, "unpaired": unpaired,
            "paired_ci": percentile_interval(paired), "unpaired_ci": percentile_interval(unpaired)}


def draw_margin(result: dict, names=(_A, _B)):
    """Histograms of the bootstrap margins (paired and unpaired) with their 95 % intervals and zero marked."""
    from ..report.plots import new_figure

    fig, ax = new_figure(1, 1, figsize=(5.6, 3.0))
    bins = np.linspace(min(result["paired"].min(), result["unpaired"].min()),
                       max(result["paired"].max(), result["unpaired"].max()), 50)
    for key, colour in (("unpaired", "#bbbbbb"), ("paired", "#1f77b4")):
        lo, hi = result[f"{key}_ci"]
        ax.hist(result[key], bins=bins, color=colour, alpha=0.7, label=f"{key}: [{lo:.1f}, {hi:.1f}]")
    ax.axvline(0.0, color="black", lw=0.8)
    ax.axvline(result["margin"], color="#d62728", lw=1.0, ls="--", label=f"margin {result['margin']:.1f}")
    ax.set_xlabel(f"{result['metric']} of {names[0]} − {names[1]}")
    ax.set_ylabel("bootstrap draws")
    ax.legend(fontsize=7, loc="upper left")
    return fig


# ------------------------------------------------------------------------------------------- figures for the tests
@lru_cache(maxsize=1)
def _default():
    split = load_split(n_rows=600)
    models = fit_models(split, n_trees=60)
    preds = {n: m.predict(split["X_test"]) for n, m in models.items()}
    return split, preds


def _fig_disagreement():
    split, preds = _default()
    return draw_disagreement(split["y_test"], preds, factor=4.0)


def _fig_shares():
    split, preds = _default()
    return draw_error_shares(split["y_test"], preds)


def _fig_coverage():
    return draw_coverage(conformal_setup(_default()[0]), 0.8)


def _fig_margin():
    split, preds = _default()
    return draw_margin(paired_margin(split["y_test"], preds[_A], preds[_B], b=500))


#: name → zero-argument callable drawing each figure the notebook shows (on a subset of the rows, for speed)
FIGURES = {"disagreement": _fig_disagreement, "error_shares": _fig_shares, "coverage": _fig_coverage,
           "margin": _fig_margin}


# ------------------------------------------------------------------------------------------- exercise checks
def _cases(seed: int = 4):
    """Measured-like times (log-normal) and predictions with errors of both signs, a bias and a few slow rows."""
    rng = np.random.default_rng(seed)
    y = np.exp(rng.normal(-4.0, 1.0, 60))
    pred = y * np.exp(rng.normal(0.05, 0.35, 60)) + 0.002
    return y, pred


def _check_mape(answer):
    y, pred = _cases()
    got = call(answer, y, pred)
    want = mape(y, pred)
    if close(got, want):
        return None
    if close(got, want / 100):
        return "fraction"
    if close(got, 100 * np.mean(np.abs(pred - y) / pred)):
        return "by-prediction"
    if close(abs(float(np.asarray(got, dtype=float))), abs(100 * np.mean((pred - y) / y))):
        return "no-abs"
    return "wrong"


def _check_r2(answer):
    y, pred = _cases(5)
    pred = 0.7 * pred + 0.3 * y.mean() + 0.004
    got = call(answer, y, pred)
    sse, sst = np.sum((y - pred) ** 2), np.sum((y - y.mean()) ** 2)
    if close(got, r2(y, pred)):
        return None
    if close(got, sse / sst) or close(got, 1 - sst / sse):
        return "inverted"
    if close(got, np.corrcoef(y, pred)[0, 1] ** 2):
        return "corr-squared"
    if close(got, 1 - np.var(y - pred) / np.var(y)):
        return "biased"
    if close(got, 1 - sse / np.sum((y - pred.mean()) ** 2)):
        return "pred-mean"
    return "wrong"


#: (n scores, alpha) of the halfwidth check: every plain quantile differs from the conformal rank, which is < n
_HALF_CASES = ((13, 0.2), (24, 0.1), (27, 0.2))


def _check_halfwidth(answer):
    rng = np.random.default_rng(7)
    data = [(rng.exponential(0.2, n), a) for n, a in _HALF_CASES]
    got = [call(answer, s.copy(), a) for s, a in data]
    if not all(close(g, conformal_quantile(s, a)) for g, (s, a) in zip(got, data)):
        for method in ("linear", "higher", "nearest", "lower", "midpoint", "inverted_cdf", "closest_observation"):
            if all(close(g, np.quantile(s, 1 - a, method=method)) for g, (s, a) in zip(got, data)):
                return "no-correction"
        ranks = [math.ceil(round((len(s) + 1) * (1 - a), 9)) for s, a in data]
        for shift in (1, -1):
            if all(close(g, np.sort(s)[r - 1 + shift]) for g, (s, a), r in zip(got, data, ranks)):
                return "off-by-one"
        if all(close(g, np.sort(s)[math.ceil((len(s) + 1) * a) - 1]) for g, (s, a) in zip(got, data)):
            return "alpha-swapped"
        return "wrong"
    small = call(answer, rng.exponential(0.2, 5), 0.1)
    return None if close(small, math.inf) else "no-inf"


def _check_coverage(answer):
    lower = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    upper = lower * 2
    y = np.array([1.5, 2.0, 6.0, 8.0, 4.0, 1.2, 3.9, 2.5, 7.0, 1.0])  # 2 on an end, 3 below, 1 above
    got = call(answer, lower, upper, y)
    inside = (y >= lower) & (y <= upper)
    if close(got, inside.mean()):
        return None
    if close(got, 100 * inside.mean()):
        return "percent"
    if close(got, inside.sum()):
        return "count"
    if close(got, np.mean((y > lower) & (y < upper))):
        return "strict"
    if close(got, np.mean(y <= upper)) or close(got, np.mean(y >= lower)):
        return "one-sided"
    return "wrong"


EXERCISES = (
    Exercise("4.1", "mape", "MAPE in percent of the measured times", _check_mape, {
        "fraction": "Your value is 100 times too small: MAPE is reported in percent, not as a fraction.",
        "by-prediction": "You divided by the prediction. The error is relative to what was measured, the one "
                         "quantity that does not depend on the model.",
        "no-abs": "Positive and negative errors cancel in your mean: take the size of each relative error first.",
        "wrong": "Compute |prediction − measured| / measured for every row, average, and express it in percent."}),
    Exercise("4.2", "r2", "R² = 1 − SSE/SST on the rows scored", _check_r2, {
        "inverted": "A perfect model must get 1 and a model no better than the mean 0: check which of SSE and SST "
                    "goes on top, and that you subtract from one.",
        "corr-squared": "The squared correlation forgives any bias and any scale error (predicting 2y gets 1). "
                        "R² compares the errors themselves with the spread of the measured times.",
        "biased": "Variances subtract the mean error, so a model that is off by a constant is not penalised. Sum "
                  "the squared errors themselves.",
        "pred-mean": "SST is the spread of the measured times around their own mean, not around the mean of the "
                     "predictions.",
        "wrong": "R² = 1 − Σ(y − ŷ)² / Σ(y − ȳ)², with ȳ the mean of the measured times of the rows you score."}),
    Exercise("4.3", "conformal_halfwidth", "split-conformal half-width: the ⌈(n+1)(1−α)⌉-th smallest score",
             _check_halfwidth, {
                 "no-correction": "That is the plain empirical quantile. The guarantee needs the finite-sample "
                                  "rank: the ⌈(n+1)(1−α)⌉-th smallest of the n scores — slightly higher.",
                 "off-by-one": "Close: your rank is one off. Ranks count from 1, Python indices from 0.",
                 "alpha-swapped": "You used α where 1 − α belongs: the half-width should grow with the coverage.",
                 "no-inf": "Right on the usual cases; but with 5 scores and α = 0.1 the rank ⌈6·0.9⌉ = 6 exceeds n. "
                           "No finite score guarantees 90 % then: return an unbounded half-width (math.inf).",
                 "wrong": "Sort the scores and take the one at rank k = ⌈(n+1)(1−α)⌉ (counting from 1)."}),
    Exercise("4.4", "coverage", "share of measured times inside [lower, upper]", _check_coverage, {
        "percent": "Return a fraction between 0 and 1, as coverage_of does, not a percentage.",
        "count": "That is how many rows are inside; divide by the number of rows.",
        "strict": "A measured time exactly on an end of its interval is inside: the interval is closed.",
        "one-sided": "Check both ends: a time below the lower end is outside as well.",
        "wrong": "A row is covered when lower ≤ y ≤ upper; the coverage is the share of covered rows."}),
)
