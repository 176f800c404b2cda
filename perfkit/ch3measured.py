"""Chapter 3 on measured data: the harness's per-iteration phases in the thesis's tables.

Input is ``ch3_phases.csv`` from ``perfkit collect ch3`` (one row per worker
and iteration). Every function returns a tidy frame in the layout of the
matching published table (see :mod:`perfkit.thesis`), so the notebook can put
ours and the thesis's side by side.
"""
from __future__ import annotations

import math

import numpy as np

from .ch3 import PHASES, summarise_phases
from .equations import load_imbalance_factor

__all__ = ["MODEL_NAMES", "load_phases", "measured_table3_2", "measured_t_comm", "measured_lif", "epoch_frame",
           "measured_speedup", "plot_breakdown", "COMPUTE_PHASES"]

MODEL_NAMES = {"cnn": "CNN", "mlp": "MLP", "ae": "Autoencoder"}
#: per-worker work whose imbalance the LIF measures (everything before the all-reduce)
COMPUTE_PHASES = ("t_md", "t_io", "t_h2d", "t_f", "t_b")


def load_phases(path, framework_label: str | None = None, mode: str | None = "phased"):
    """Read a ``ch3_phases.csv``; keep successful rows of ``mode`` (None: all modes).

    Model keys become the thesis's names (CNN, MLP, Autoencoder) and
    ``framework`` becomes ``framework_label`` (default e.g. ``"PyTorch (cpu, measured)"``).
    """
    import pandas as pd

    from .ch3 import MEASURED_COLUMNS

    df = pd.read_csv(path)
    missing = [c for c in MEASURED_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: column {missing[0]!r} missing (a Chapter 3 file needs {list(MEASURED_COLUMNS)})")
    defaults = {"status": "ok", "mode": "phased", "device": "", "batch_size": np.nan}
    for col, value in defaults.items():
        if col not in df.columns:
            df[col] = value
    df = df[df["status"] == "ok"].copy()
    if mode is not None:
        if mode not in set(df["mode"]):
            raise ValueError(f"mode: {path} has modes {sorted(set(df['mode']))}, not {mode!r}")
        df = df[df["mode"] == mode]
    if framework_label is None:
        fw = df["framework"].iloc[0]
        dev = df["device"].iloc[0]
        framework_label = f"{ {'pytorch': 'PyTorch'}.get(fw, fw)} ({dev + ', ' if dev else ''}measured)"
    df["model"] = df["model"].map(MODEL_NAMES).fillna(df["model"])
    df["framework"] = framework_label
    return df.reset_index(drop=True)


def measured_table3_2(df):
    """Table 3.2 layout (model, framework, phase, mean, std) for one worker."""
    one = df[df["workers"] == 1]
    if one.empty:
        raise ValueError("workers: no single-worker rows to build Table 3.2 from")
    return summarise_phases(one, by=("model", "framework", "workers")).drop(columns="workers")


def measured_t_comm(df):
    """Table 3.3 layout (model, framework, gpus, mean, std): t_c of the slowest worker per iteration."""
    multi = df[df["workers"] > 1]
    tidy = summarise_phases(multi, by=("model", "framework", "workers"))
    out = tidy[tidy["phase"] == "t_c"].rename(columns={"workers": "gpus"})
    return out[["source", "model", "framework", "gpus", "mean", "std", "n"]].reset_index(drop=True)


def _lif_per_iteration(df, compute=COMPUTE_PHASES):
    import pandas as pd

    w = df.assign(t_compute=df[list(compute)].sum(axis=1))
    parts = []
    for (model, fw, g), sub in w.groupby(["model", "framework", "workers"], sort=False):
        wide = sub.pivot_table(index="iteration", columns="rank", values="t_compute")
        if wide.shape[1] != g or wide.isna().any().any():
            raise ValueError(f"{model}, {g} workers: expected one row per rank and iteration")
        lif = load_imbalance_factor(wide.to_numpy(), axis=1) if g > 1 else np.ones(len(wide))
        parts.append(pd.DataFrame({"model": model, "framework": fw, "workers": g, "iteration": wide.index,
                                   "lif": np.asarray(lif, dtype=float)}))
    return pd.concat(parts, ignore_index=True)


def measured_lif(df, compute=COMPUTE_PHASES):
    """Table 3.4 layout (model, framework, gpus, mean, std): LIF (eq. 3.8) of per-worker compute time.

    Each iteration's LIF is ``N · max_i t_i / Σ_i t_i`` over workers, with
    ``t_i`` the sum of ``compute`` phases on worker ``i`` (the work before the
    all-reduce); the table gives its mean and standard deviation over iterations.
    """
    per = _lif_per_iteration(df[df["workers"] > 1], compute)
    agg = per.groupby(["model", "framework", "workers"], sort=False)["lif"].agg(["mean", "std", "count"]).reset_index()
    agg = agg.rename(columns={"workers": "gpus", "count": "n"})
    agg.insert(0, "source", "measured")
    return agg


def epoch_frame(df, n_train: int = 60000, compute=COMPUTE_PHASES):
    """Per-iteration data for eq. 3.9: ``epoch_time = ceil(n_train / (b·G)) × t_iter`` (slowest worker) and LIF.

    The thesis regresses epoch times on GPUs and LIF; the harness times
    iterations, so each timed iteration stands for an epoch of identical
    iterations. With one worker the LIF is 1 by definition.
    """
    it = df.groupby(["model", "framework", "workers", "iteration"], sort=False).agg(
        t_iter=("t_iter", "max"), batch_size=("batch_size", "first")).reset_index()
    if it["batch_size"].isna().any():
        raise ValueError("batch_size: needed to turn iterations into epochs (per-worker batch per row)")
    lif = _lif_per_iteration(df, compute)
    out = it.merge(lif, on=["model", "framework", "workers", "iteration"], how="left")
    out["lif"] = out["lif"].fillna(1.0)
    steps = [math.ceil(n_train / (b * g)) for b, g in zip(out["batch_size"], out["workers"])]
    out["epoch_time"] = np.asarray(steps) * out["t_iter"].to_numpy()
    return out


def measured_speedup(df, n_train: int = 60000):
    """Measured speedup on G workers: epoch time on 1 worker / epoch time on G (mean t_iter of the slowest worker).

    The per-worker batch is fixed, so G workers need ``ceil(n_train/(b·G))``
    iterations per epoch: speedup = steps(1)·t_iter(1) / (steps(G)·t_iter(G)).
    Returns the layout of :func:`perfkit.ch3.predicted_speedups` with ``variant = "measured"``.
    """
    import pandas as pd

    ep = epoch_frame(df, n_train)
    mean = ep.groupby(["model", "framework", "workers"], sort=False)["epoch_time"].mean().reset_index()
    rows = []
    for (model, fw), g in mean.groupby(["model", "framework"], sort=False):
        base = g.loc[g["workers"] == 1, "epoch_time"]
        if base.empty:
            raise ValueError(f"workers: {model} has no single-worker run to compute speedup from")
        for _, r in g.iterrows():
            rows.append(dict(kind="measured", model=model, framework=fw, gpus=int(r["workers"]), variant="measured",
                             speedup=float(base.iloc[0] / r["epoch_time"]), epoch_time=float(r["epoch_time"])))
    return pd.DataFrame(rows)


def plot_breakdown(df, model: str, workers: int, ax=None, phases=("t_md", "t_io", "t_h2d", "t_f", "t_b", "t_c", "t_u")):
    """Stacked mean phase times per worker for one model on ``workers`` workers (Figs. 3.8–3.13)."""
    import matplotlib.pyplot as plt

    from .ch3 import PHASE_LABELS

    sub = df[(df["model"] == model) & (df["workers"] == workers)]
    if sub.empty:
        raise ValueError(f"no rows for model {model!r} on {workers} workers")
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.2))
    means = sub.groupby("rank")[list(phases)].mean() * 1e3
    bottom = np.zeros(len(means))
    colors = plt.get_cmap("tab10").colors
    for i, p in enumerate(phases):
        vals = means[p].fillna(0).to_numpy()
        ax.bar([f"worker {r}" for r in means.index], vals, bottom=bottom, label=PHASE_LABELS.get(p, p),
               color=colors[i % len(colors)])
        bottom += vals
    it = sub.groupby("rank")["t_iter"].mean() * 1e3
    ax.plot(range(len(it)), it.to_numpy(), "k_", markersize=30, label="t_iter")
    ax.set_ylabel("time per iteration (ms)")
    ax.set_title(f"{model}, {workers} workers")
    ax.legend(frameon=False, fontsize=6, ncol=2)
    return ax
