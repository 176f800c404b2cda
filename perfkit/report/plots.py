"""Every figure type of the chapters, drawn on a matplotlib Axes.

Each ``plot_*`` function draws on ``ax`` (a new figure when omitted) and returns
the Axes; :func:`new_figure` makes a figure outside pyplot, in perfkit's style, so
a notebook shows it with ``display(fig)`` and nothing is shown twice. Legends
sit outside the data; one colour per framework (:data:`FRAMEWORK_COLORS`); lines
that share a panel never share a colour and line style.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..schema import PHASE_LABELS
from .output import STYLE

__all__ = ["FRAMEWORK_COLORS", "framework_color", "new_figure", "plot_phase_bars", "plot_speedup", "plot_breakdown",
           "plot_pred_vs_measured", "plot_r2_vs_lambda", "plot_coef_paths", "plot_volume_exponents",
           "legend_outside"]

#: one colour per framework, shared by every figure
FRAMEWORK_COLORS = {
    "Chainer": "#1b9e77",
    "MXNet": "#d95f02",
    "TensorFlow": "#7570b3",
    "PyTorch": "#e7298a",
    "JAX": "#66a61e",
}


def framework_color(framework: str) -> str:
    """Colour of a framework in perfkit figures (grey for unknown ones)."""
    return FRAMEWORK_COLORS.get(str(framework).split(" ")[0], "#666666")


def new_figure(nrows: int = 1, ncols: int = 1, figsize=(5, 3.4), **kwargs):
    """``(fig, axes)`` in perfkit's style, made without pyplot (no global state, no double display)."""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=figsize, layout="constrained")
        axes = fig.subplots(nrows, ncols, **kwargs)
    return fig, axes


def _axes(ax, figsize):
    if ax is None:
        _, ax = new_figure(figsize=figsize)
    return ax


def legend_outside(ax, fontsize=7, **kwargs):
    """A legend to the right of the axes, off the data."""
    return ax.legend(frameon=False, fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), **kwargs)


def _line_styles(n: int):
    """``n`` distinct (colour, line style) pairs: tab10 colours first, then the same colours dashed, dotted, …"""
    import matplotlib

    colors = matplotlib.colormaps["tab10"].colors
    styles = ("-", "--", ":", "-.")
    return list(itertools.islice(((c, s) for s in styles for c in colors), n))


def plot_phase_bars(tidy, model: str, ax=None, phases=("t_io", "t_h2d", "t_md", "t_f", "t_b", "t_u", "t_iter")):
    """Grouped bars of phase times (mean ± std) per framework for one model (Figs. 3.2–3.4)."""
    sub = tidy[tidy["model"] == model]
    if sub.empty:
        raise ValueError(f"model: no rows for {model!r}; models are {sorted(tidy['model'].unique())}")
    ax = _axes(ax, (7, 3.2))
    frameworks = list(dict.fromkeys(sub["framework"]))
    phases = [p for p in phases if p in set(sub["phase"])]
    width = 0.8 / len(frameworks)
    x = np.arange(len(phases))
    for i, fw in enumerate(frameworks):
        f = sub[sub["framework"] == fw].set_index("phase").reindex(phases)
        ax.bar(x + (i - (len(frameworks) - 1) / 2) * width, f["mean"], width, yerr=f["std"].fillna(0),
               capsize=2, label=fw, color=framework_color(fw))
    ax.set_xticks(x, [PHASE_LABELS[p] for p in phases], rotation=30, ha="right")
    ax.set_ylabel("time per iteration (s)")
    ax.set_title(model)
    legend_outside(ax)
    return ax


def plot_speedup(pred, model: str, ax=None, unit: str = "workers"):
    """Speedup against the number of workers (``unit``: "workers", or "GPUs" for the thesis's numbers)."""
    sub = pred[pred["model"] == model]
    if sub.empty:
        raise ValueError(f"model: no rows for {model!r}")
    ax = _axes(ax, (4, 3.2))
    styles = {"thesis": "-", "paper": "--", "measured": ":"}
    for (fw, variant), g in sub.groupby(["framework", "variant"], sort=True):
        ax.plot(g["gpus"], g["speedup"], styles.get(variant, "-"), marker="o", color=framework_color(fw),
                label=f"{fw} ({variant})")
    g_max = int(sub["gpus"].max())
    ax.plot([1, g_max], [1, g_max], color="grey", lw=0.8, label="ideal")
    ax.set_xticks(range(1, g_max + 1))
    ax.set_xlabel(unit)
    ax.set_ylabel("speedup")
    ax.set_title(model)
    legend_outside(ax)
    return ax


def plot_breakdown(df, model: str, workers: int, ax=None,
                   phases=("t_md", "t_io", "t_h2d", "t_f", "t_b", "t_c", "t_u")):
    """Stacked mean phase times per worker for one model on ``workers`` workers (Figs. 3.8–3.13)."""
    import matplotlib

    sub = df[(df["model"] == model) & (df["workers"] == workers)]
    if sub.empty:
        raise ValueError(f"no rows for model {model!r} on {workers} workers")
    ax = _axes(ax, (4.5, 3.2))
    means = sub.groupby("rank")[list(phases)].mean() * 1e3
    bottom = np.zeros(len(means))
    colors = matplotlib.colormaps["tab10"].colors
    for i, p in enumerate(phases):
        vals = means[p].fillna(0).to_numpy()
        ax.bar([f"worker {r}" for r in means.index], vals, bottom=bottom, label=PHASE_LABELS.get(p, p),
               color=colors[i % len(colors)])
        bottom += vals
    it = sub.groupby("rank")["t_iter"].mean() * 1e3
    ax.plot(range(len(it)), it.to_numpy(), "k_", markersize=30, label="iteration (t_iter)")
    ax.set_ylabel("time per iteration (ms)")
    ax.set_title(f"{model}, {workers} workers")
    legend_outside(ax)
    return ax


def plot_pred_vs_measured(y_true, y_pred, ax=None, title: str = "", unit: str = "s", thesis_error: str = ""):
    """Predicted vs measured with y = x and a least-squares line (Figures 4.3–4.14, 5.3–5.4).

    ``thesis_error`` (e.g. ``"MAPE 7.2 % (PyTorch)"``) is printed beside ours, so the
    figure says what the thesis published for the same item.
    """
    from ..model.metrics import mape, r2

    y_true, y_pred = np.asarray(y_true, float), np.asarray(y_pred, float)
    ax = _axes(ax, (3.6, 3.4))
    ax.scatter(y_true, y_pred, s=6, alpha=0.5, color="#4C72B0", edgecolors="none", label="held-out rows")
    lo, hi = float(min(y_true.min(), y_pred.min())), float(max(y_true.max(), y_pred.max()))
    ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, label="y = x")
    slope, icpt = np.polyfit(y_true, y_pred, 1)
    ax.plot([lo, hi], [icpt + slope * lo, icpt + slope * hi], color="#C44E52", lw=1,
            label=f"least squares: {slope:.2f}x {icpt:+.2g}")
    ax.set_xlabel(f"measured ({unit})")
    ax.set_ylabel(f"predicted ({unit})")
    ours = f"ours: MAPE {mape(y_true, y_pred):.1f} %, R² {r2(y_true, y_pred):.3f}"
    ax.set_title("\n".join(filter(None, [title, ours, f"thesis: {thesis_error}" if thesis_error else ""])),
                 fontsize=8)
    ax.legend(frameon=False, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1)
    return ax


def plot_r2_vs_lambda(sweep, ax=None, metric: str = "r2_test"):
    """R² (held out) against λ for each penalty, mean ± std over seeds (Figure 4.15)."""
    ax = _axes(ax, (4.2, 3.2))
    m = sweep[sweep["quantity"] == metric].groupby(["penalty", "lam"])["value"].agg(["mean", "std"]).reset_index()
    for (pen, g), marker in zip(m.groupby("penalty"), ("o", "s", "^")):
        ax.errorbar(g["lam"], g["mean"], yerr=g["std"].fillna(0), marker=marker, ms=3, capsize=2, label=pen.upper())
    ax.set_xscale("log")
    ax.set_xlabel("λ")
    ax.set_ylabel("R² (held out)" if metric == "r2_test" else metric)
    legend_outside(ax, fontsize=8)
    return ax


_KIND_TITLES = {"a": "coefficients a and level constants κ", "p": "powers p of intrinsic parameters",
                "q": "powers q of extrinsic factors"}


def plot_coef_paths(sweep, penalty: str, axes=None, kinds=("a", "p", "q")):
    """Fitted parameters against λ for one penalty, mean over seeds, one panel per kind (Figures 4.16–4.17).

    Within a panel no two lines share a colour and a line style. Returns the axes.
    """
    sub = sweep[(sweep["penalty"] == penalty) & sweep["kind"].isin(kinds)]
    if sub.empty:
        raise ValueError(f"penalty: no {penalty!r} rows of kinds {kinds} in the sweep")
    kinds = [k for k in kinds if (sub["kind"] == k).any()]
    if axes is None:
        _, axes = new_figure(len(kinds), 1, figsize=(7.2, 2.3 * len(kinds)), sharex=True, squeeze=False)
        axes = axes[:, 0]
    for ax, kind in zip(axes, kinds):
        m = sub[sub["kind"] == kind].groupby(["quantity", "lam"])["value"].mean().reset_index()
        groups = list(m.groupby("quantity"))
        for (q, g), (color, style) in zip(groups, _line_styles(len(groups))):
            ax.plot(g["lam"], g["value"], lw=1.2, color=color, ls=style, label=q)
        ax.set_xscale("log")
        if kind == "a":
            ax.set_yscale("symlog", linthresh=1.0)
        ax.set_ylabel("value")
        ax.set_title(f"{penalty.upper()}: {_KIND_TITLES.get(kind, kind)}", fontsize=8)
        legend_outside(ax, fontsize=6, ncol=2 if len(groups) > 8 else 1)
    axes[-1].set_xlabel("λ")
    return axes


def plot_volume_exponents(table, ax=None, thesis_q_workers: float | None = None, full_voxels: int | None = None,
                          q_bound: float | None = None, cores: int | None = None):
    """q_workers and q_batch against voxel count, one colour per ``num_filters``; returns the Axes."""
    ax = _axes(ax, (5, 3.6))
    for f, g in table.groupby("num_filters"):
        line = ax.errorbar(g["voxels"], g["q_workers"], yerr=g["q_workers_se"], marker="o", capsize=2,
                           label=f"q(workers), {f} filters")
        ax.errorbar(g["voxels"], g["q_batch"], yerr=g["q_batch_se"], marker="s", ls="--", capsize=2,
                    color=line[0].get_color(), label=f"q(batch), {f} filters")
    if thesis_q_workers is not None:
        ax.axhline(thesis_q_workers, color="k", lw=0.8, ls=":", label=f"thesis q(workers) = {thesis_q_workers:g}")
    if q_bound is not None:
        ax.axhline(q_bound, color="tab:red", lw=0.8, ls=":", label=f"best q(workers) on {cores} cores = {q_bound:.2f}")
    if full_voxels is not None:
        ax.axvline(full_voxels, color="grey", lw=0.8, ls="-.", label="full 181×217×181 volume")
    ax.axhline(0.0, color="grey", lw=0.5)
    ax.set_xscale("log")
    ax.set_xlabel("voxels per volume")
    ax.set_ylabel("fitted exponent")
    legend_outside(ax)
    return ax
