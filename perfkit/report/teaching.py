"""Lessons of the course (``notebooks/course/``) that units 2 and 3 draw on: what they compute and draw.

Each lesson is one function that returns numbers or a figure, so the notebook only
calls, shows and explains, and every widget has a static fallback: a widget calls
the same function with the slider's values that the static cell calls with fixed
ones. Everything here is small enough to run in seconds on a laptop.

- :func:`iteration_phases` / :func:`draw_iteration`: one S-SGD iteration from measured
  phases (eq. 3.2) and the speedup of eq. 3.7 as workers, batch and aggregation time move;
- :func:`communication_table`: measured speedups against ideal and against "compute scales,
  communication does not";
- :func:`power_law_objective` / :func:`de_generations`: differential evolution watched
  generation by generation on a four-parameter fit;
- :func:`coding_demo`: why one constant per categorical level is not identifiable;
- :func:`draw_lambda_sweep`: L1 against L2 as λ grows;
- :func:`draw_pred_vs_measured`: additive against multiplicative forms.
"""
from __future__ import annotations

import numpy as np

__all__ = ["iteration_phases", "draw_iteration", "speedup_curve", "communication_table",
           "power_law_objective", "de_generations", "coding_demo", "draw_lambda_sweep",
           "draw_pred_vs_measured", "PHASES"]

#: the phases of one iteration (eq. 3.2; t_md the batch split of eq. 3.5)
PHASES = ("t_io", "t_h2d", "t_md", "t_f", "t_b", "t_c", "t_u")
#: phases whose cost follows the per-worker batch; t_u (the optimizer) and t_c (one gradient) do not
_PER_SAMPLE = ("t_io", "t_h2d", "t_f", "t_b")


def iteration_phases(phases_csv, model: str = "cnn", framework: str = "pytorch") -> dict:
    """Mean phase times (s) of one phased single-worker iteration of ``model``, the per-worker batch they were
    timed at, and the measured aggregation time ``t_c`` on each worker count (``{"t_c": {2: …, 3: …}}``)."""
    import pandas as pd

    df = pd.read_csv(phases_csv)
    df = df[(df["status"] == "ok") & (df["mode"] == "phased") & (df["model"] == model)
            & (df["framework"] == framework)]
    if df.empty:
        raise ValueError(f"{phases_csv}: no phased rows of model {model!r} in framework {framework!r}")
    one = df[df["workers"] == 1]
    out = {p: float(one[p].mean()) for p in PHASES if p != "t_c"}
    out["batch"] = int(one["batch_size"].iloc[0])
    out["t_c_measured"] = {int(g): float(d["t_c"].mean()) for g, d in df[df["workers"] > 1].groupby("workers")}
    return out


def speedup_curve(ph: dict, workers, batch: int, t_c: float, variant: str = "thesis"):
    """Eq. 3.7's speedup on each worker count, with the per-sample phases scaled to ``batch`` per worker and the
    aggregation time ``t_c`` (s) on every count above one (a gradient's size does not depend on the batch)."""
    from ..model.analytic.equations import speedup_pipelined

    scale = batch / ph["batch"]
    g = np.asarray(workers, dtype=float)
    t_c_g = np.where(g > 1, t_c, 0.0)
    return np.asarray(speedup_pipelined(g, ph["t_io"] * scale, ph["t_h2d"] * scale, ph["t_f"] * scale,
                                        ph["t_b"] * scale, ph["t_u"], t_c_g, t_md=ph["t_md"], variant=variant),
                      dtype=float)


def draw_iteration(ph: dict, workers: int = 2, batch: int = 64, t_c_ms: float = 10.0, max_workers: int = 8):
    """Two panels: the phases of one iteration on ``workers`` equal workers (eq. 3.3, stacked), and eq. 3.7's
    speedup against the worker count for this batch and aggregation time, with ideal scaling."""
    from .plots import new_figure

    scale = batch / ph["batch"]
    t = {p: ph[p] * (scale if p in _PER_SAMPLE else 1.0) for p in PHASES if p != "t_c"}
    t["t_c"] = t_c_ms / 1000 if workers > 1 else 0.0
    fig, (a, b) = new_figure(1, 2, figsize=(8.4, 3.2))
    bottom = 0.0
    colours = dict(zip(PHASES, ("#8c8c8c", "#bcbd22", "#17becf", "#1f77b4", "#ff7f0e", "#d62728", "#2ca02c")))
    for p in PHASES:
        a.bar([0], [1000 * t[p]], bottom=[bottom], color=colours[p], label=p, width=0.5)
        bottom += 1000 * t[p]
    a.set_xticks([0], [f"G = {workers}, b = {batch}"])
    a.set_ylabel("time of one iteration (ms)")
    a.set_xlim(-0.8, 1.6)
    a.legend(fontsize=7, loc="upper right")
    a.set_title(f"eq. 3.3: t_iter = {bottom:.1f} ms")
    g = np.arange(1, max_workers + 1)
    s = speedup_curve(ph, g, batch, t_c_ms / 1000)
    b.plot(g, g, ls=":", color="grey", label="ideal (S = G)")
    b.plot(g, s, marker="o", label=f"eq. 3.7, t_c = {t_c_ms:.3g} ms")
    b.axvline(workers, color="grey", lw=0.6)
    b.set_xlabel("workers G")
    b.set_ylabel("speedup S")
    b.set_title(f"S({workers}) = {s[workers - 1]:.2f}")
    b.legend(fontsize=7)
    return fig


def communication_table(phases_csv, framework: str = "pytorch", n_train: int = 60000):
    """Per model and worker count: measured speedup (epoch time on one worker / on G, phased runs), ideal G,
    and the speedup if only communication were added to perfectly divided compute,
    ``G · t_iter(1) / (t_iter(1) + t_c(G))`` — what is left over is the cost that is not communication."""
    import pandas as pd

    from ..model.analytic.phases import measured_speedup

    df = pd.read_csv(phases_csv)
    df = df[(df["status"] == "ok") & (df["mode"] == "phased") & (df["framework"] == framework)]
    sp = measured_speedup(df, n_train=n_train)
    it = df.groupby(["model", "workers"])[["t_iter", "t_c"]].mean()
    rows = []
    for r in sp.itertuples():
        t1 = it.loc[(r.model, 1), "t_iter"]
        tc = it.loc[(r.model, r.gpus), "t_c"] if r.gpus > 1 else 0.0
        rows.append(dict(model=r.model, workers=r.gpus, measured=r.speedup, ideal=float(r.gpus),
                         communication_only=r.gpus * t1 / (t1 + tc), t_c_ms=1000 * tc,
                         t_c_share=tc / it.loc[(r.model, r.gpus), "t_iter"]))
    return pd.DataFrame(rows)


def power_law_objective(theta, batch, workers, y):
    """Mean squared relative error of ``t = a · b^q_b · G^q_G + C`` with ``theta = (log10 a, q_b, q_G, C)``."""
    log_a, qb, qg, c = theta
    pred = 10.0 ** log_a * batch ** qb * workers ** qg + c
    return float(np.mean(((pred - y) / y) ** 2))


#: search box of :func:`de_generations`: log10 a, q_b, q_G, C (seconds)
DE_BOUNDS = ((-1.0, 4.0), (-2.0, 1.0), (-2.0, 2.0), (0.0, 5.0))


def de_generations(batch, workers, y, generations=(0, 2, 5, 15, 40), seed: int = 0, popsize: int = 15):
    """Differential evolution on :func:`power_law_objective`, stopped after each count of ``generations``.

    DE is deterministic for a seed, so the run stopped after g generations *is* the
    longer run seen at generation g. Returns ``{"snapshots": {g: (population, energies)},
    "best": [(generation, objective, theta)], "bounds": DE_BOUNDS}``.
    """
    from scipy.optimize import differential_evolution

    args = tuple(np.asarray(v, dtype=float) for v in (batch, workers, y))
    best = []

    def watch(intermediate_result):
        best.append((len(best) + 1, float(intermediate_result.fun), np.asarray(intermediate_result.x)))

    snapshots = {}
    for g in generations:
        res = differential_evolution(power_law_objective, DE_BOUNDS, args=args, seed=seed, popsize=popsize,
                                     maxiter=max(int(g), 0), polish=False, tol=0.0, init="latinhypercube",
                                     callback=watch if g == max(generations) else None)
        snapshots[int(g)] = (np.asarray(res.population), np.asarray(res.population_energies))
    return {"snapshots": snapshots, "best": best, "bounds": DE_BOUNDS}


def coding_demo(X, column: str, other: str, seed: int = 0) -> dict:
    """The thesis's coding of two categorical columns (one constant per level, added to the intrinsic sum) on the
    rows of ``X``: the design matrix is rank deficient, and shifting every level of ``column`` up by δ and every
    level of ``other`` down by δ leaves every prediction unchanged."""
    import pandas as pd

    d1 = pd.get_dummies(X[column]).to_numpy(dtype=float)
    d2 = pd.get_dummies(X[other]).to_numpy(dtype=float)
    D = np.hstack([d1, d2])
    rng = np.random.default_rng(seed)
    k1, k2 = rng.uniform(0.5, 2.0, d1.shape[1]), rng.uniform(0.5, 2.0, d2.shape[1])
    delta = 0.7
    a = d1 @ k1 + d2 @ k2
    b = d1 @ (k1 + delta) + d2 @ (k2 - delta)
    return {"columns": D.shape[1], "rank": int(np.linalg.matrix_rank(D)), "constants_a": np.r_[k1, k2],
            "constants_b": np.r_[k1 + delta, k2 - delta], "max_prediction_difference": float(np.max(np.abs(a - b))),
            "levels": [f"{column}={v}" for v in pd.get_dummies(X[column]).columns]
            + [f"{other}={v}" for v in pd.get_dummies(X[other]).columns]}


def draw_lambda_sweep(sweep):
    """Held-out R² and the number of intrinsic coefficients left (|a| > 1e-6) against λ, one line per penalty."""
    from .plots import new_figure

    fig, (a, b) = new_figure(1, 2, figsize=(7.4, 2.9))
    for pen, g in sweep.groupby("penalty"):
        r2 = g[g["quantity"] == "r2_test"].groupby("lam")["value"].mean()
        a.semilogx(r2.index, r2.values, marker="o", label=pen.upper())
        coef = g[g["kind"] == "a"]
        alive = coef.assign(alive=coef["value"].abs() > 1e-6).groupby(["lam", "seed"])["alive"].sum()
        alive = alive.groupby("lam").mean()
        b.semilogx(alive.index, alive.values, marker="o", label=pen.upper())
    a.set_xlabel("λ")
    a.set_ylabel("held-out R²")
    b.set_xlabel("λ")
    b.set_ylabel("intrinsic terms with |a| > 1e-6")
    a.legend(fontsize=7)
    return fig


def draw_pred_vs_measured(y, preds: dict):
    """One panel per model: predicted against measured held-out times on log axes, with its MAPE."""
    from .plots import new_figure

    fig, axes = new_figure(1, len(preds), figsize=(3.3 * len(preds), 3.2))
    y = np.asarray(y, dtype=float)
    lo, hi = y.min() / 2, y.max() * 2
    for ax, (name, p) in zip(np.atleast_1d(axes), preds.items()):
        p = np.asarray(p, dtype=float)
        mape = 100 * np.mean(np.abs(p - y) / y)
        ax.loglog(y, np.clip(p, lo, hi), ".", ms=3, alpha=0.6)
        ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8)
        ax.set_title(f"{name}: MAPE {mape:.0f} %", fontsize=8)
        ax.set_xlabel("measured (s)")
    np.atleast_1d(axes)[0].set_ylabel("predicted (s)")
    return fig
