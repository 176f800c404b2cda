"""Unit 3 · Fitting the generic performance model: what ``notebooks/course/u3_generic_model.ipynb`` computes and
draws, and the checks of its exercises.

The unit fits the thesis's Chapter 4 model (eq. 4.4),
``t = (Σ_i a_i I_i^p_i) · Π_j E_j^q_j + C``, to measured LeNet-5 epoch times (``perfkit collect ch4``), split as
the thesis split them (:func:`load`).

- :func:`roles_table`: which column is intrinsic numeric, intrinsic categorical or extrinsic;
- :func:`de_history`, :func:`draw_de`: differential evolution on a four-parameter model, every generation kept, and
  the population at one generation (the widget's slider);
- :func:`fit_table`, :func:`fit_models`: the generic model fitted without and with L2 regularisation;
- :func:`lambda_sweep`: L1 against L2 as λ grows (drawn by :func:`perfkit.report.teaching.draw_lambda_sweep`);
- :func:`coding_table`: the thesis's categorical coding is not identifiable, shown on the data;
- :data:`FIGURES` and :data:`EXERCISES`.
"""
from __future__ import annotations

import numpy as np

from ..chapters.ch4 import make_model
from ..data.measured import load_steps, thesis_split
from ..model.selection.fitting import regularisation_sweep
from ..report import teaching
from ..schema import ROLES, resolve
from .exercises import Exercise, call, close

__all__ = ["DATASET", "load", "roles_table", "de_history", "draw_de", "fit_models", "fit_table", "lambda_sweep",
           "coding_table", "FIGURES", "EXERCISES"]

#: the notebook's default data: LeNet-5 epoch times measured with PyTorch on a 2-core CPU
DATASET = "data/measured/pytorch-cpu/ch4_lenet5.csv"


def load(dataset=DATASET, n_rows: int = 400, seed: int = 0) -> dict:
    """The first ``n_rows`` measured configurations of ``dataset``, split 70 % to fit and 30 % held out
    (:func:`perfkit.data.measured.thesis_split` with ``seed``): ``{"X_fit", "X_test", "y_fit", "y_test"}``."""
    X, y, _ = load_steps(resolve(dataset))
    X, y = X.iloc[:n_rows], y.iloc[:n_rows]
    n_fit = int(0.7 * len(X))
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=n_fit, n_test=len(X) - n_fit, seed=seed)
    return {"X_fit": X_fit, "X_test": X_test, "y_fit": y_fit, "y_test": y_test}


def roles_table(X):
    """One row per column of ``X``: its role in eq. 4.4 (:data:`perfkit.schema.ROLES` ``["ch4"]``) and the values
    measured."""
    import pandas as pd

    rows = []
    for role, columns in ROLES["ch4"].items():
        for c in columns:
            values = sorted(X[c].unique()) if role != "categorical" else sorted(X[c].astype(str).unique())
            rows.append({"column": c, "role": role, "values": ", ".join(f"{v:g}" if role != "categorical" else v
                                                                       for v in values)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- differential evolution, every generation

def de_history(batch, workers, y, generations: int = 40, seed: int = 0, popsize: int = 15) -> dict:
    """Differential evolution (scipy's, its default strategy) on
    :func:`perfkit.report.teaching.power_law_objective`, ``t = a·b^q_b·G^q_G + C`` with
    ``θ = (log10 a, q_b, q_G, C)`` in :data:`perfkit.report.teaching.DE_BOUNDS`, run for ``generations``
    generations with ``seed``.

    Returns ``{"population": [array (NP, 4) per generation 0..generations], "energies": [...],
    "best": array of the best objective per generation, "bounds": ...}``. DE is deterministic for a seed, so the
    run stopped after g generations is this run at generation g.
    """
    from scipy.optimize import differential_evolution

    args = tuple(np.asarray(v, dtype=float) for v in (batch, workers, y))
    settings = dict(args=args, seed=seed, popsize=popsize, polish=False, tol=0.0, init="latinhypercube")

    def run(maxiter, callback=None):
        return differential_evolution(teaching.power_law_objective, teaching.DE_BOUNDS, maxiter=maxiter,
                                      callback=callback, **settings)

    start = run(0)
    pops, energies = [np.asarray(start.population)], [np.asarray(start.population_energies)]

    def watch(intermediate_result):
        pops.append(np.array(intermediate_result.population))
        energies.append(np.array(intermediate_result.population_energies))

    try:
        run(generations, watch)
    except AttributeError:  # a scipy whose callback does not carry the population: rerun to each generation
        pops, energies = pops[:1], energies[:1]
        for g in range(1, generations + 1):
            r = run(g)
            pops.append(np.asarray(r.population))
            energies.append(np.asarray(r.population_energies))
    return {"population": pops, "energies": energies, "best": np.array([e.min() for e in energies]),
            "bounds": teaching.DE_BOUNDS}


def _plain_axis(axis, n: int = 4) -> None:
    """Few ticks with plain labels (no offset, no scientific notation)."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    axis.set_major_locator(MaxNLocator(n))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))


def draw_de(history, generation: int = 0):
    """Three panels at ``generation``: the population in the (q_b, q_G) plane and in the (log10 a, C) plane
    (colour: log10 of the objective, one scale for every generation; grey: generation 0), and the best objective
    of every generation with this one marked."""
    from ..report.plots import new_figure

    g = int(np.clip(generation, 0, len(history["population"]) - 1))
    pop, energy = history["population"][g], np.log10(history["energies"][g])
    first = history["population"][0]
    every = np.log10(np.concatenate(history["energies"]))
    lo, hi = float(every.min()), float(np.quantile(every, 0.95))
    b = history["bounds"]
    fig, axes = new_figure(1, 3, figsize=(10.0, 3.1))
    points = None
    for ax, (i, j), names in zip(axes[:2], ((1, 2), (0, 3)), (("q_b (batch power)", "q_G (workers power)"),
                                                               ("log10 a", "C (s)"))):
        ax.scatter(first[:, i], first[:, j], s=8, color="0.85", label="generation 0")
        points = ax.scatter(pop[:, i], pop[:, j], c=energy, s=12, cmap="viridis_r", vmin=lo, vmax=hi)
        best = int(np.argmin(energy))
        ax.scatter(pop[best, i], pop[best, j], marker="*", s=110, color="#d62728", label="best")
        ax.set_xlim(*b[i])
        ax.set_ylim(*b[j])
        ax.set_xlabel(names[0])
        ax.set_ylabel(names[1])
        _plain_axis(ax.xaxis)
        _plain_axis(ax.yaxis)
    axes[0].set_title(f"generation {g}", fontsize=9)
    axes[1].legend(fontsize=7, loc="upper right")
    bar = fig.colorbar(points, ax=axes[1], label="log10 objective", shrink=0.9)
    _plain_axis(bar.ax.yaxis)
    gens = np.arange(len(history["best"]))
    axes[2].plot(gens, np.log10(history["best"]), color="#1f77b4")
    axes[2].plot([g], [np.log10(history["best"][g])], marker="o", color="#d62728")
    axes[2].set_xlabel("generation")
    axes[2].set_ylabel("log10 best objective")
    axes[2].set_title(f"best objective {history['best'][g]:.4f}", fontsize=9)
    _plain_axis(axes[2].xaxis, 5)
    _plain_axis(axes[2].yaxis)
    return fig


# ---------------------------------------------------------------- the full model, λ, the coding

def fit_models(data: dict, quick: bool = False, seed: int = 0) -> dict:
    """Eq. 4.4 fitted to ``data["X_fit"]`` without regularisation and with L2 at the thesis's λ = 1e-3
    (:func:`perfkit.chapters.ch4.make_model`; quick: 40 generations)."""
    budget = dict(maxiter=40) if quick else {}
    return {"no penalty": make_model(random_state=seed, **budget).fit(data["X_fit"], data["y_fit"]),
            "L2, λ = 1e-3": make_model(random_state=seed, penalty="l2", lam=1e-3, **budget).fit(data["X_fit"],
                                                                                                  data["y_fit"])}


def fit_table(models: dict, data: dict):
    """Per fitted model: the powers of batch and workers, the constant C, the number of powers at a bound (±5) and
    the held-out MAPE (%)."""
    import pandas as pd

    rows = []
    y = data["y_test"].to_numpy(dtype=float)
    for name, m in models.items():
        params = m.params_
        q = params.set_index("term")["q"]
        p = params["p"].dropna().to_numpy(dtype=float)
        rows.append({"fit": name, "q (batch_size)": q["batch_size"], "q (workers)": q["workers"],
                     "C (s)": float(params["C"].dropna().iloc[0]), "powers at ±5": int(np.sum(np.abs(p) >= 5 - 1e-9)),
                     "held-out MAPE (%)": 100 * float(np.mean(np.abs(m.predict(data["X_test"]) - y) / y))})
    return pd.DataFrame(rows).set_index("fit")


def lambda_sweep(data: dict, quick: bool = False, seed: int = 0):
    """:func:`perfkit.model.selection.fitting.regularisation_sweep` of L1 and L2 over a λ grid (quick: four λ and
    40 generations per fit)."""
    lams = [1e-4, 1e-2, 1.0, 10.0] if quick else [1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0]
    budget = dict(maxiter=40) if quick else {}
    return regularisation_sweep(make_model(**budget), data["X_fit"], data["y_fit"], data["X_test"], data["y_test"],
                                penalties=("l1", "l2"), lams=lams, seeds=(seed,), progress=False)


def coding_table(X, column: str = "activation", other: str = "optimizer", seed: int = 0):
    """:func:`perfkit.report.teaching.coding_demo` on ``X`` as a table (two sets of level constants that give the
    same predictions on every row) and its summary dict."""
    import pandas as pd

    demo = teaching.coding_demo(X, column, other, seed=seed)
    table = pd.DataFrame({"constants A": demo["constants_a"], "constants B": demo["constants_b"]},
                         index=demo["levels"])
    return table, demo


def _figure_de():
    data = load()
    history = de_history(data["X_fit"]["batch_size"], data["X_fit"]["workers"], data["y_fit"])
    return draw_de(history, len(history["best"]) - 1)


def _figure_fits():
    data = load()
    models = fit_models(data, quick=True)
    return teaching.draw_pred_vs_measured(data["y_test"], {k: m.predict(data["X_test"]) for k, m in models.items()})


#: every figure the notebook shows, drawn with the notebook's default inputs (quick budgets)
FIGURES = {
    "de-generations": _figure_de,
    "pred-vs-measured": _figure_fits,
    "lambda-sweep": lambda: teaching.draw_lambda_sweep(lambda_sweep(load(), quick=True)),
}


# ---------------------------------------------------------------- exercise 3.1: eq. 4.4, vectorised

def _eq44_inputs():
    rng = np.random.default_rng(4)
    I = rng.choice([2.0, 3.0, 4.0, 8.0, 16.0], size=(7, 3))
    E = rng.choice([1.0, 2.0, 3.0, 8.0, 64.0], size=(7, 2))
    return I, E, np.array([0.5, 2.0, 0.1]), np.array([1.5, -0.5, 2.0]), np.array([-0.9, -0.6]), 0.3


def _check_eq44(answer):
    I, E, a, p, q, C = _eq44_inputs()
    got = call(answer, I.copy(), E.copy(), a.copy(), p.copy(), q.copy(), C)
    intrinsic, scale = (a * I ** p).sum(axis=1), (E ** q).prod(axis=1)
    if np.shape(got) != (I.shape[0],):
        return "shape"
    variants = {None: intrinsic * scale + C, "extrinsic-added": intrinsic + scale + C,
                "extrinsic-summed": intrinsic * (E ** q).sum(axis=1) + C, "c-scaled": (intrinsic + C) * scale}
    return next((k for k, v in variants.items() if close(got, v)), "wrong")


# ---------------------------------------------------------------- exercise 3.2: the regularised cost

def _cost_cases():
    rng = np.random.default_rng(5)
    t = rng.uniform(1.0, 20.0, 9)
    t_hat = t * rng.uniform(0.7, 1.3, 9)
    x = np.array([0.8, 2.5, -1.2, 1.5, -0.6, 4.0])  # a1, a2, p1, p2, q1, C
    return [(t, t_hat, x, 0.1, "l1"), (t, t_hat, x, 0.05, "l2")]


def _cost_variants(t, t_hat, x, lam, penalty) -> dict:
    def pen(kind, v):
        return float(np.sum(np.abs(v)) if kind == "l1" else np.sum(v ** 2))

    other = "l2" if penalty == "l1" else "l1"
    mae = float(np.mean(np.abs(t - t_hat)))
    reg = lam * pen(penalty, x[:-1])
    return {None: mae + reg, "penalised-c": mae + lam * pen(penalty, x),
            "l1-l2-swapped": mae + lam * pen(other, x[:-1]), "squared-error": float(np.mean((t - t_hat) ** 2)) + reg,
            "relative-error": float(np.mean(np.abs(t - t_hat) / t)) + reg,
            "sum-not-mean": float(np.sum(np.abs(t - t_hat))) + reg}


def _check_cost(answer):
    cases = _cost_cases()
    got = [call(answer, t.copy(), th.copy(), x.copy(), lam, pen) for t, th, x, lam, pen in cases]
    expected = [_cost_variants(*case) for case in cases]
    for key in expected[0]:
        if all(close(g, e[key]) for g, e in zip(got, expected)):
            return key
    return "wrong"


# ---------------------------------------------------------------- exercise 3.3: one DE step

def _sphere(v):
    return float(np.sum(np.asarray(v, dtype=float) ** 2))


def _de_cases():
    pop = np.array([[3.0, -3.0, 2.5, 3.0], [0.2, 0.1, -0.3, 0.4], [0.6, -0.2, 0.1, 0.3], [0.1, 0.3, 0.2, -0.2],
                    [0.05, -0.1, 0.0, 0.1], [2.5, -2.0, 2.0, 2.5]])
    u = np.array([0.1, 0.9, 0.3, 0.95])  # CR = 0.5: coordinates 0 and 2 from the mutant, 1 and 3 by chance not
    better = dict(pop=pop, i=0, r1=1, r2=2, r3=5, F=0.5, CR=0.5, u=u, j_rand=3)
    worse = dict(pop=pop, i=4, r1=5, r2=2, r3=3, F=0.8, CR=0.5, u=u, j_rand=1)
    return [better, worse]


def _de_variants(pop, i, r1, r2, r3, F, CR, u, j_rand) -> dict:
    def step(base, take, select=True):
        mutant = pop[base] + F * (pop[r2] - pop[r3])
        trial = np.where(take, mutant, pop[i])
        return trial if not select or _sphere(trial) <= _sphere(pop[i]) else pop[i].copy()

    forced = np.arange(pop.shape[1]) == j_rand
    return {None: step(r1, (u < CR) | forced), "no-jrand": step(r1, u < CR),
            "crossover-inverted": step(r1, (u >= CR) | forced), "no-selection": step(r1, (u < CR) | forced, False),
            "base-is-target": step(i, (u < CR) | forced)}


def _check_de_step(answer):
    cases = _de_cases()
    got = [call(answer, c["pop"].copy(), _sphere, c["i"], c["r1"], c["r2"], c["r3"], c["F"], c["CR"], c["u"].copy(),
                c["j_rand"]) for c in cases]
    expected = [_de_variants(**c) for c in cases]
    for key in expected[0]:
        if all(close(g, e[key]) for g, e in zip(got, expected)):
            return key
    return "wrong"


# ---------------------------------------------------------------- exercise 3.4: identifiable constants

def _coding_cases():
    import pandas as pd

    full = pd.DataFrame([dict(activation=a, optimizer=o, padding=p) for a in ("relu", "tanh", "sigmoid")
                         for o in ("adam", "sgd") for p in ("same", "valid")] * 2)
    # every mnist run used padding "same" and every cifar10 run "valid": two columns, one partition of the rows
    tied = pd.DataFrame([dict(dataset=d, padding=p, activation=a) for d, p in (("mnist", "same"), ("cifar10", "valid"))
                         for a in ("relu", "tanh", "sigmoid")])
    return [(full, ["activation", "optimizer", "padding"]), (tied, ["dataset", "padding", "activation"])]


def _coding_variants(X, columns) -> list:
    import pandas as pd

    def rank(drop_first):
        return int(np.linalg.matrix_rank(pd.get_dummies(X[columns].astype(str), drop_first=drop_first)
                                         .to_numpy(dtype=float)))

    levels = [X[c].nunique() for c in columns]
    return [(None, rank(False)), ("counted-columns", sum(levels)), ("drop-first", rank(True)),
            ("drop-first", sum(levels) - len(levels)), ("formula-not-data", sum(levels) - len(levels) + 1)]


def _check_coding(answer):
    cases = _coding_cases()
    got = [call(answer, X.copy(), list(cols)) for X, cols in cases]
    expected = [_coding_variants(X, cols) for X, cols in cases]
    for n, (key, _) in enumerate(expected[0]):
        if all(close(g, e[n][1]) for g, e in zip(got, expected)):
            return key
    return "wrong"


EXERCISES = (
    Exercise("3.1", "generic_time", "eq. 4.4 as a vectorised function", _check_eq44, {
        "shape": "Return one predicted time per row of I (shape (N,)). Which axis holds the hyperparameters, and "
                 "which the configurations?",
        "extrinsic-added": "You added the extrinsic part. In eq. 4.4 the scaling factors multiply the intrinsic "
                           "time: doubling the workers should scale the whole intrinsic sum.",
        "extrinsic-summed": "The extrinsic factors combine by a product (eq. 4.3), each raised to its own power, "
                            "not by a sum.",
        "c-scaled": "C sits outside the product in eq. 4.4: a fixed cost that no batch size or worker count "
                    "scales.",
        "wrong": "Not quite. Build it in two parts: the intrinsic sum over the columns of I, and the product over "
                 "the columns of E, then combine them as eq. 4.4 does.",
    }),
    Exercise("3.2", "regularised_cost", "the cost of eqs. 4.9–4.12 with an L1 or L2 penalty", _check_cost, {
        "penalised-c": "The thesis penalises every parameter except the constant C (the last entry of x): a fixed "
                       "cost is not a sign of an over-complex model.",
        "l1-l2-swapped": "L1 and L2 are the wrong way round: L1 (lasso) adds the absolute values, L2 (ridge) the "
                         "squares.",
        "squared-error": "Eq. 4.9 is the mean absolute error, not the mean squared error: it weighs a large miss "
                         "less than squaring would.",
        "relative-error": "You divided by the measured time: that is a relative error (what MAPE reports). Eq. 4.9 "
                          "uses the absolute error in seconds.",
        "sum-not-mean": "The data term is a mean over the N measurements (divide by N), so λ means the same "
                        "whatever the number of rows.",
        "wrong": "Not quite. Two parts: the data term of eq. 4.9 and λ times the penalty of eq. 4.11 or 4.12, taken "
                 "over the parameters of x except C.",
    }),
    Exercise("3.3", "de_step", "one differential-evolution step for one member", _check_de_step, {
        "no-jrand": "In the case where every u_j is above CR your trial is the target itself. Binomial crossover "
                    "always takes the coordinate j_rand from the mutant, so the trial differs in at least one.",
        "crossover-inverted": "The mutant's coordinates are taken where u_j < CR (a high CR takes more from the "
                              "mutant); yours takes them where u_j ≥ CR.",
        "no-selection": "The trial replaces the member only if its cost is not worse; otherwise the member stays. "
                        "Your step kept a worse trial.",
        "base-is-target": "The mutant starts from x_r1, another member, not from the member being updated: "
                          "v = x_r1 + F·(x_r2 − x_r3).",
        "wrong": "Not quite. Three steps: mutation from r1, r2, r3 and F; binomial crossover with u, CR and j_rand; "
                 "greedy selection with cost.",
    }),
    Exercise("3.4", "identifiable_constants", "how many categorical constants the data can determine",
             _check_coding, {
                 "counted-columns": "That is the number of constants in the thesis's coding, one per level. Some "
                                    "of them can be traded against each other without changing any prediction: "
                                    "count the independent directions of the indicator matrix.",
                 "drop-first": "Dropping a level per column is how you would *fix* the coding, and it also drops "
                               "the shared intercept. Count for the thesis's coding: one indicator per level.",
                 "formula-not-data": "Right for a rich enough design, but the data decide: when two columns split "
                                     "the rows the same way (every mnist run used padding 'same'), the data cannot "
                                     "tell their constants apart. Compute it from X.",
                 "wrong": "Not quite. Build the indicator matrix of the listed columns (one 0/1 column per level, "
                          "pandas.get_dummies) and count how many of its columns are linearly independent.",
             }),
)
