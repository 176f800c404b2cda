"""Unit 5 of the course, "Beyond the thesis: log-space forms, the search, black boxes": what the notebook
``notebooks/course/u5_beyond.ipynb`` computes and draws, and its exercises' checks.

- :func:`load_split`, :func:`draw_multiplicative`, :func:`compare_forms`: step times multiply, so a power law
  fitted in log space beats the thesis's additive intrinsic sum (eq. 4.4);
- :func:`run_search`: perfkit's form search (:func:`perfkit.model.selection.search.search_forms`) on a budget;
- :func:`extrapolation_fits`, :func:`draw_extrapolation`: fit on the rows up to a batch-size cutoff and predict
  beyond it; tree ensembles (a random forest, gradient boosting) stay inside the targets they were fitted on.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..model.selection.metrics import mape
from .exercises import Exercise, call, close

__all__ = ["load_split", "draw_multiplicative", "compare_forms", "run_search", "extrapolation_fits",
           "draw_extrapolation", "beyond_table", "FIGURES", "EXERCISES", "DATASET"]

#: the shipped measurements the unit reads (relative to the repository)
DATASET = "data/measured/pytorch-cpu/ch4_lenet5.csv"
_COLOURS = {"measured": "black", "log-linear": "#1f77b4", "random forest": "#ff7f0e",
            "gradient boosting": "#2ca02c"}


def load_split(dataset: str = DATASET, n_rows: int | None = None, seed: int = 0) -> dict:
    """The successful rows of ``dataset`` (the first ``n_rows``; all when None) with their step times, split 2 : 1
    at random (``seed``): ``{"X", "y", "X_fit", "X_test", "y_fit", "y_test"}``."""
    from ..data.measured import load_steps, thesis_split
    from ..schema import resolve

    X, y, _ = load_steps(resolve(dataset), target="step_time")
    if n_rows is not None:
        X, y = X.iloc[:n_rows], y.iloc[:n_rows]
    n_fit = int(round(2 * len(X) / 3))
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=n_fit, n_test=len(X) - n_fit, seed=seed)
    return {"X": X, "y": y, "X_fit": X_fit, "X_test": X_test, "y_fit": y_fit, "y_test": y_test}


def draw_multiplicative(X, y, column: str = "num_filters", by: str = "batch_size"):
    """Median step time against ``column`` for each level of ``by``, on linear and on log-log axes (parallel lines
    in log-log: the two multiply with fixed powers; lines that come together: their costs add)."""
    from ..report.plots import new_figure

    med = y.groupby([X[by], X[column]]).median().unstack(by)
    fig, (a, b) = new_figure(1, 2, figsize=(8.0, 3.0))
    for level in med.columns:
        a.plot(med.index, 1000 * med[level], marker="o", ms=3, label=f"{by} {level}")
        b.loglog(med.index, 1000 * med[level], marker="o", ms=3)
    for ax in (a, b):
        ax.set_xlabel(column)
        ax.set_xticks(list(med.index), [str(v) for v in med.index])
        ax.minorticks_off()
    lo, hi = 1000 * float(np.nanmin(med.to_numpy())), 1000 * float(np.nanmax(med.to_numpy()))
    ticks = [v for v in (1, 2, 5, 10, 20, 50, 100, 200, 500) if lo <= v <= hi]
    b.set_yticks(ticks, [str(v) for v in ticks])
    a.set_ylabel("median step time (ms)")
    a.set_title("linear axes", fontsize=8)
    b.set_title("log-log axes", fontsize=8)
    a.legend(fontsize=7, loc="upper left")
    return fig


def compare_forms(split: dict, seed: int = 0, de_maxiter: int | None = None) -> dict:
    """Held-out predictions of the thesis form (eq. 4.4: an additive intrinsic sum times extrinsic powers, fitted by
    differential evolution; ``de_maxiter`` generations, the engine's default when None), of the plain log-linear
    power law and of the log-linear form with its interaction terms: ``{name: predictions}``."""
    from ..model.selection.search import make_form
    from ..schema import ROLES

    roles = ROLES["ch4"]
    thesis = make_form("thesis", **roles, random_state=seed, **({} if de_maxiter is None else {"maxiter": de_maxiter}))
    forms = {"thesis form (additive sum)": thesis,
             "log-linear, powers only": make_form("loglinear", **roles, random_state=seed, interactions=False,
                                                  category_terms=False, category_pairs=False),
             "log-linear with interactions": make_form("loglinear", **roles, random_state=seed)}
    return {name: f.fit(split["X_fit"], split["y_fit"]).predict(split["X_test"]) for name, f in forms.items()}


def run_search(split: dict, quick: bool = False, seed: int = 0):
    """:func:`~perfkit.model.selection.search.search_forms` on the rows to fit, among the thesis form and the
    log-linear term sets (3-fold CV; quick: the log-linear ones on 400 rows), one-standard-error rule. Returns the
    :class:`~perfkit.model.selection.search.FormSearch`."""
    from ..model.selection.search import search_forms
    from ..schema import ROLES

    X, y = split["X_fit"], split["y_fit"]
    if quick:
        X, y = X.iloc[:400], y.iloc[:400]
    return search_forms(X, y, **ROLES["ch4"], forms=["loglinear"] if quick else ["thesis", "loglinear"], cv=3,
                        random_state=seed)


# ------------------------------------------------------------------------------------------- beyond the range
def extrapolation_fits(X, y, cutoff: int, column: str = "batch_size", seed: int = 0, n_trees: int = 100):
    """Fit the log-linear form, a random forest and gradient boosting (:func:`perfkit.model.selection.baselines
    .make_baseline`) on the rows with ``column`` <= ``cutoff``; returns a frame of every row's ``column``,
    measured time, ``beyond`` (not fitted on) and each model's prediction, with ``attrs["train_max"]`` the
    largest time fitted."""
    import pandas as pd

    from ..model.selection.baselines import make_baseline
    from ..model.selection.search import make_form
    from ..schema import ROLES

    roles = ROLES["ch4"]
    inside = (X[column] <= cutoff).to_numpy()
    models = {"log-linear": make_form("loglinear", **roles, random_state=seed, interactions=False,
                                      category_terms=False, category_pairs=False),
              "random forest": make_baseline("rf", **roles, random_state=seed, n_estimators=n_trees),
              "gradient boosting": make_baseline("gb", **roles, random_state=seed, n_estimators=n_trees,
                                                 learning_rate=0.1)}
    out = pd.DataFrame({column: X[column].to_numpy(), "measured": np.asarray(y, dtype=float), "beyond": ~inside})
    for name, m in models.items():
        out[name] = m.fit(X[inside], y[inside]).predict(X)
    out.attrs["train_max"] = float(np.max(np.asarray(y, dtype=float)[inside]))
    return out


def beyond_table(fits, cutoff: int, column: str = "batch_size"):
    """Per model (and the measured times): the growth of the geometric mean time from ``column`` = ``cutoff`` to its
    largest value, the MAPE on the rows beyond the cutoff, and the share of those rows under-predicted."""
    import pandas as pd

    b = fits[fits["beyond"]]
    g = _geomean_by(fits, column)
    names = [c for c in _COLOURS if c in fits.columns]
    return pd.DataFrame({f"growth {cutoff} → {g.index.max()}": {n: float(g[n].iloc[-1] / g.loc[cutoff, n])
                                                                 for n in names},
                         "MAPE beyond (%)": {n: mape(b["measured"], b[n]) for n in names[1:]},
                         "share under-predicted": {n: float(np.mean(b[n] < b["measured"])) for n in names[1:]}})


def _geomean_by(fits, column: str):
    cols = [c for c in _COLOURS if c in fits.columns]
    return np.exp(np.log(fits[cols]).groupby(fits[column]).mean())


def draw_extrapolation(X, y, log2_cutoff: int = 5, column: str = "batch_size", seed: int = 0, n_trees: int = 100):
    """Fit on the rows with ``column`` <= 2**``log2_cutoff`` (:func:`extrapolation_fits`) and draw: the geometric
    mean of measured and predicted times per ``column`` value (rows beyond the cutoff shaded), and each model's
    predictions beyond the cutoff against the measured times, with the largest time fitted."""
    from ..report.plots import new_figure

    cutoff = 2 ** int(log2_cutoff)
    fits = extrapolation_fits(X, y, cutoff, column, seed, n_trees)
    g = _geomean_by(fits, column)
    fig, (a, b) = new_figure(1, 2, figsize=(8.8, 3.2))
    for name in g.columns:
        a.plot(g.index, 1000 * g[name], marker="o", ms=3, color=_COLOURS[name], label=name,
               ls="-" if name == "measured" else "--")
    a.axvspan(cutoff, g.index.max() * 1.2, color="grey", alpha=0.12)
    a.set_xscale("log", base=2)
    a.set_xticks(list(g.index), [str(v) for v in g.index])
    a.minorticks_off()
    a.set_xlabel(f"{column} (shaded: beyond the cutoff {cutoff})")
    a.set_ylabel("geometric mean step time (ms)")
    a.legend(fontsize=7, loc="upper left")
    beyond = fits[fits["beyond"]]
    if len(beyond):
        for name in [c for c in g.columns if c != "measured"]:
            b.loglog(beyond["measured"], beyond[name], ".", ms=3, alpha=0.5, color=_COLOURS[name], label=name)
        lo, hi = beyond["measured"].min() / 2, beyond["measured"].max() * 2
        b.plot([lo, hi], [lo, hi], color="grey", lw=0.8)
        b.axhline(fits.attrs["train_max"], color="#d62728", lw=0.8, ls=":", label="largest time fitted")
        b.legend(fontsize=7, loc="upper left")
    b.set_xlabel("measured beyond the cutoff (s)")
    b.set_ylabel("predicted (s)")
    b.set_title(f"fitted on {column} ≤ {cutoff}", fontsize=8)
    return fig


# ------------------------------------------------------------------------------------------- figures for the tests
@lru_cache(maxsize=1)
def _default():
    return load_split(n_rows=600)


def _fig_multiplicative():
    d = _default()
    return draw_multiplicative(d["X"], d["y"])


def _fig_forms():
    from ..report.teaching import draw_pred_vs_measured

    d = _default()
    return draw_pred_vs_measured(d["y_test"], compare_forms(d, de_maxiter=20))


def _fig_extrapolation():
    d = _default()
    return draw_extrapolation(d["X"], d["y"], 5, n_trees=40)


#: name → zero-argument callable drawing each figure the notebook shows (on a subset of the rows, for speed)
FIGURES = {"multiplicative": _fig_multiplicative, "forms": _fig_forms, "extrapolation": _fig_extrapolation}


# ------------------------------------------------------------------------------------------- exercise checks
def _features(seed: int = 5, n: int = 40):
    """Positive features (powers of two) and times that follow an exact power law times a small noise."""
    rng = np.random.default_rng(seed)
    X = 2.0 ** rng.integers(1, 8, size=(n, 3))
    t = np.exp(-5.0) * X[:, 0] ** 0.5 * X[:, 1] ** 1.0 * X[:, 2] ** -0.3 * np.exp(rng.normal(0, 0.05, n))
    return X, t


def _lstsq(A, b):
    return np.linalg.lstsq(A, b, rcond=None)[0]


def _with_one(A):
    return np.column_stack([np.ones(len(A)), A])


def _check_fit(answer):
    X, t = _features()
    got = np.asarray(call(answer, X.copy(), t.copy()), dtype=float).ravel()
    if close(got, _lstsq(_with_one(np.log(X)), np.log(t)), rel=1e-5, abs_=1e-8):
        return None
    if got.shape == (X.shape[1],):
        return "no-intercept"
    for key, want in (("linear-target", _lstsq(_with_one(np.log(X)), t)),
                      ("log10", _lstsq(_with_one(np.log10(X)), np.log10(t))),
                      ("raw-features", _lstsq(_with_one(X), np.log(t)))):
        if close(got, want, rel=1e-5, abs_=1e-8):
            return key
    return "wrong"


def _check_predict(answer):
    X, _ = _features(6, 12)
    beta = np.array([-5.0, 0.5, 1.0, -0.3])
    got = call(answer, beta.copy(), X.copy())
    lin = beta[0] + np.log(X) @ beta[1:]
    if close(got, np.exp(lin)):
        return None
    if close(got, lin):
        return "no-exp"
    if close(got, 10 ** lin) or close(got, np.exp(beta[0] + np.log10(X) @ beta[1:])):
        return "log10-mix"
    if close(got, np.exp(np.log(X) @ beta[1:])):
        return "no-intercept"
    return "wrong"


def _check_growth(answer):
    rng = np.random.default_rng(8)
    batch = np.repeat([8, 16, 32, 64], 10)
    times = np.exp(rng.normal(-4, 0.8, 40)) * (batch / 8.0) ** 0.6
    got = call(answer, batch.copy(), times.copy(), 16, 64)
    logs = {b: np.log(times[batch == b]).mean() for b in (16, 64)}
    if close(got, np.exp(logs[64] - logs[16])):
        return None
    if close(got, np.exp(logs[16] - logs[64])):
        return "inverted"
    if close(got, times[batch == 64].mean() / times[batch == 16].mean()):
        return "arithmetic"
    if close(got, logs[64] - logs[16]):
        return "log-ratio"
    return "wrong"


def _check_design(answer):
    X, _ = _features(7, 10)
    got = call(answer, X.copy(), 0, 2)
    L = np.log(X)
    if close(got, np.column_stack([np.ones(len(X)), L, L[:, 0] * L[:, 2]])):
        return None
    if close(got, np.column_stack([np.ones(len(X)), L, np.log(X[:, 0] * X[:, 2])])):
        return "log-of-product"
    if close(got, np.column_stack([np.ones(len(X)), L, X[:, 0] * X[:, 2]])):
        return "raw-product"
    if close(got, np.column_stack([L, L[:, 0] * L[:, 2]])):
        return "no-intercept"
    return "wrong"


EXERCISES = (
    Exercise("5.1", "fit_loglinear", "least squares of log t on [1, log x]: the coefficients", _check_fit, {
        "no-intercept": "One coefficient is missing: without a column of ones the fit is forced through "
                        "log t = 0 at x = 1. Put the intercept first.",
        "linear-target": "You fitted the time itself. The power law is linear in log t, not in t.",
        "log10": "Base-10 logarithms change the intercept (the slopes survive): use the natural log, np.log, "
                 "throughout, so that exp undoes it.",
        "raw-features": "Take the logarithm of the features too: log t = β0 + Σ β_k log x_k.",
        "wrong": "Build A = [1, log x_1, …, log x_k] (n × (k+1)) and solve A β ≈ log t with np.linalg.lstsq."}),
    Exercise("5.2", "predict_loglinear", "predicted times from the coefficients", _check_predict, {
        "no-exp": "Those are predictions of log t: undo the logarithm.",
        "log10-mix": "The coefficients were fitted with natural logs: use np.log on X and np.exp on the result, "
                     "not base 10 on either side.",
        "no-intercept": "β0 is missing: it scales every prediction by the same factor e^β0.",
        "wrong": "t̂ = exp(β0 + Σ β_k log x_k) for every row."}),
    Exercise("5.3", "growth_ratio", "growth of the geometric-mean time from batch lo to batch hi", _check_growth, {
        "inverted": "Your ratio is upside down: times at hi over times at lo, so growth is above 1.",
        "arithmetic": "The arithmetic mean is dominated by the slowest configurations. Average the logarithms "
                      "(a geometric mean), as for any quantity that spans orders of magnitude.",
        "log-ratio": "That is the log of the ratio: exponentiate it.",
        "wrong": "Geometric mean of the times with batch == hi divided by that with batch == lo."}),
    Exercise("5.4", "interaction_design", "design matrix with an interaction of two log features", _check_design, {
        "log-of-product": "log(x_i·x_j) = log x_i + log x_j is already a sum of two columns of the design: it adds "
                          "nothing (the matrix loses rank). An interaction is the product of the logs.",
        "raw-product": "Work in log space: the product of the two log features, not of the raw values.",
        "no-intercept": "Keep the intercept column of ones first, then the k log features, then the interaction.",
        "wrong": "Columns: 1, log x_1 … log x_k, then log x_i · log x_j (n × (k+2))."}),
)
