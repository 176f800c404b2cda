"""Every figure type of the chapters, drawn on a matplotlib Axes.

Each ``plot_*`` function draws on ``ax`` (a new figure when omitted) and returns
the Axes; :func:`new_figure` makes a figure outside pyplot, in perfkit's style, so
a notebook shows it with ``display(fig)`` and nothing is shown twice. Legends
sit outside the data; one colour per framework (:data:`FRAMEWORK_COLORS`); lines
that share a panel never share a colour and line style.
"""
from __future__ import annotations

import itertools
import textwrap

import numpy as np

from ..schema import PHASE_LABELS
from .output import STYLE

__all__ = ["FRAMEWORK_COLORS", "framework_color", "machine_colours", "new_figure", "plot_phase_bars", "plot_speedup", "plot_breakdown",
           "plot_pred_vs_measured", "plot_r2_vs_lambda", "plot_coef_paths", "plot_volume_exponents",
           "legend_outside", "COEF_PANELS", "plot_paired_ratios"]

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


def machine_colours(machines) -> dict:
    """One colour per machine, in order (the colour-blind-safe tab10 cycle)."""
    import matplotlib

    cycle = matplotlib.colormaps["tab10"].colors
    return {m: cycle[i % len(cycle)] for i, m in enumerate(machines)}


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
        measured = "measured" in str(fw)  # ours hatched, the thesis's solid: the same framework keeps its colour
        ax.bar(x + (i - (len(frameworks) - 1) / 2) * width, f["mean"], width, yerr=f["std"].fillna(0),
               capsize=2, label=fw, color=framework_color(fw), hatch="///" if measured else None,
               edgecolor="white" if measured else None, linewidth=0)
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
        name = str(fw).split(" (")[0]  # "PyTorch (cpu, measured)" → "PyTorch"
        label = f"{name}, measured" if variant == "measured" else f"{name}, eq. 3.7 ({variant}'s form)"
        ax.plot(g["gpus"], g["speedup"], styles.get(variant, "-"), marker="o", color=framework_color(fw),
                label=label)
    g_max = int(sub["gpus"].max())
    ax.plot([1, g_max], [1, g_max], color="grey", lw=0.8, label="ideal")
    ax.set_xticks(range(1, g_max + 1))
    ax.set_xlabel(unit)
    ax.set_ylabel("speedup")
    ax.set_title(model)
    legend_outside(ax)
    return ax


def plot_breakdown(df, model: str, workers: int, ax=None,
                   phases=("t_md", "t_io", "t_h2d", "t_f", "t_b", "t_c", "t_u"), legend: bool = True):
    """Stacked mean phase times per worker for one model on ``workers`` workers (Figs. 3.8–3.13).

    Phases a framework cannot separate (NaN, e.g. aggregation fused into the update) stack as zero.
    """
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
    if legend:
        legend_outside(ax)
    return ax


def plot_pred_vs_measured(y_true, y_pred, ax=None, title: str = "", unit: str = "s", thesis_error: str = ""):
    """Predicted vs measured with y = x and a least-squares line (Figures 4.3–4.14, 5.3–5.4).

    ``thesis_error`` (e.g. ``"MAPE 7.2 % (PyTorch)"``) is printed beside ours, so the
    figure says what the thesis published for the same item.
    """
    from ..model.selection.metrics import mape, r2

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


def _sweeps(sweeps, label: str) -> dict:
    """``{framework label: sweep}`` from one :func:`~perfkit.model.selection.fitting.regularisation_sweep` table or a dict."""
    out = {label: sweeps} if hasattr(sweeps, "columns") else dict(sweeps)
    if not out:
        raise ValueError("sweeps: expected a regularisation_sweep table or a non-empty dict of them")
    return out


def _penalties(sweeps: dict, penalties) -> list:
    found = [p for p in penalties if any((sw["penalty"] == p).any() for sw in sweeps.values())]
    if not found:
        raise ValueError(f"penalties: none of {tuple(penalties)} in the sweep")
    return found


#: the thesis's panels of Figures 4.16 and 4.17 (captions, thesis l. 1169–1173): (kind of parameter, what it is)
COEF_PANELS = {
    "intrinsic": (("a", "coefficients a of the intrinsic parameters"), ("p", "powers p of the intrinsic parameters")),
    "categorical_extrinsic": (("k", "constants of the categorical levels"),
                              ("q", "powers q of the extrinsic parameters")),
}


def plot_r2_vs_lambda(sweeps, axes=None, metric: str = "r2_test", label: str = "measured", penalties=("l1", "l2"),
                      chosen_lam: float | None = None):
    """Held-out R² against λ as the thesis's Figure 4.15 has it: panel (a) L1, panel (b) L2, a line per framework
    (mean ± std over the sweep's seeds). Returns the axes.

    ``sweeps`` is one :func:`~perfkit.model.selection.fitting.regularisation_sweep` table (its framework called ``label``)
    or a dict ``{framework: sweep}``; ``chosen_lam`` draws a dotted line at the λ of the fits (the thesis: 1e-3).
    """
    sweeps = _sweeps(sweeps, label)
    pens = _penalties(sweeps, penalties)
    if axes is None:
        _, axes = new_figure(1, len(pens), figsize=(3.1 * len(pens) + 1.6, 3.0), sharey=True, squeeze=False)
        axes = axes[0]
    for i, (ax, pen) in enumerate(zip(axes, pens)):
        for (fw, sweep), marker in zip(sweeps.items(), itertools.cycle("os^Dv")):
            m = sweep[(sweep["quantity"] == metric) & (sweep["penalty"] == pen)].groupby("lam")["value"].agg(
                ["mean", "std"])
            if not m.empty:
                ax.errorbar(m.index, m["mean"], yerr=m["std"].fillna(0), marker=marker, ms=3, capsize=2,
                            color=framework_color(fw), label=fw)
        if chosen_lam:
            ax.axvline(chosen_lam, color="grey", lw=0.8, ls=":", label=f"λ of the fits: {chosen_lam:g}")
        ax.set_xscale("log")
        ax.set_xlabel("λ")
        ax.set_title(f"({'abcdefgh'[i]}) {pen.upper()}", fontsize=9)
    axes[0].set_ylabel("R² (held out)" if metric == "r2_test" else metric)
    legend_outside(axes[-1], fontsize=7)
    return axes


def plot_coef_paths(sweeps, kinds=("a", "p"), axes=None, label: str = "measured", penalties=("l1", "l2"),
                    chosen_lam: float | None = None):
    """Fitted parameters against λ (mean over seeds) as the thesis's Figures 4.16–4.17 have them: a row per
    kind of parameter, i.e. the thesis's panels (a), (b) (:data:`COEF_PANELS`: ``("a", "p")`` for 4.16,
    ``("k", "q")`` for 4.17), and a column per framework and penalty (L1, L2). Returns the 2-D array of axes.

    ``sweeps`` is one :func:`~perfkit.model.selection.fitting.regularisation_sweep` table (its framework called ``label``)
    or a dict ``{framework: sweep}``. Within a row a parameter keeps its colour and line style in every column,
    and no two lines of a panel share both; the columns of a row share the y axis, so L1 and L2 compare.
    """
    sweeps = _sweeps(sweeps, label)
    pens = _penalties(sweeps, penalties)
    titles = {k: t for panels in COEF_PANELS.values() for k, t in panels}
    kinds = [k for k in kinds if any((sw["kind"] == k).any() for sw in sweeps.values())]
    if not kinds:
        raise ValueError("kinds: none of the asked kinds of parameter is in the sweep")
    if len(sweeps) > 2 and axes is None:
        return _coef_paths_by_framework(sweeps, kinds, pens, titles, chosen_lam)
    columns = [(fw, pen) for fw in sweeps for pen in pens]
    if axes is None:
        _, axes = new_figure(len(kinds), len(columns), figsize=(3.0 * len(columns) + 2.2, 2.6 * len(kinds)),
                             sharex=True, sharey="row", squeeze=False)
    for r, kind in enumerate(kinds):
        names = sorted({q for sw in sweeps.values() for q in sw.loc[sw["kind"] == kind, "quantity"]})
        styles = dict(zip(names, _line_styles(len(names))))
        for c, (fw, pen) in enumerate(columns):
            _coef_panel(axes[r][c], sweeps[fw], kind, pen, names, styles, chosen_lam)
            axes[r][c].set_title(f"({'abcdefgh'[r]}) {fw}, {pen.upper()}", fontsize=8)
            if r == len(kinds) - 1:
                axes[r][c].set_xlabel("λ")
        axes[r][0].set_ylabel(textwrap.fill(titles.get(kind, kind), 26), fontsize=8)
        legend_outside(axes[r][-1], fontsize=6, ncol=2 if len(names) > 8 else 1)
    return axes


def _coef_panel(ax, sw, kind, pen, names, styles, chosen_lam):
    m = sw[(sw["kind"] == kind) & (sw["penalty"] == pen)].groupby(["quantity", "lam"])["value"].mean()
    for name in names:
        if name in m.index.get_level_values(0):
            g = m.loc[name]
            color, style = styles[name]
            ax.plot(g.index, g.to_numpy(), lw=1.2, color=color, ls=style, label=name.split("[", 1)[-1].rstrip("]"))
    if chosen_lam:
        ax.axvline(chosen_lam, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log")
    if kind == "a":
        ax.set_yscale("symlog", linthresh=1.0)
    if kind in ("p", "q"):
        ax.axhline(0.0, color="grey", lw=0.5)


def _coef_paths_by_framework(sweeps, kinds, pens, titles, chosen_lam):
    """Figures 4.16-4.17 with three or more frameworks: a row per framework, a column per (kind, penalty); the
    columns of one kind share the y axis, so L1 and L2 and the frameworks compare."""
    columns = [(kind, pen) for kind in kinds for pen in pens]
    fig, axes = new_figure(len(sweeps), len(columns), figsize=(2.9 * len(columns), 2.2 * len(sweeps) + 1.4),
                           sharex=True, squeeze=False)
    for kind in kinds:
        names = sorted({q for sw in sweeps.values() for q in sw.loc[sw["kind"] == kind, "quantity"]})
        styles = dict(zip(names, _line_styles(len(names))))
        cols = [c for c, (k, _) in enumerate(columns) if k == kind]
        for r, fw in enumerate(sweeps):
            for c in cols:
                ax = axes[r][c]
                if (r, c) != (0, cols[0]):
                    ax.sharey(axes[0][cols[0]])
                _coef_panel(ax, sweeps[fw], kind, columns[c][1], names, styles, chosen_lam)
                ax.set_title(f"({'abcdefgh'[kinds.index(kind)]}) {fw}, {columns[c][1].upper()}", fontsize=7)
                if r == len(sweeps) - 1:
                    ax.set_xlabel("λ")
        for r in range(len(sweeps)):
            axes[r][cols[0]].set_ylabel(textwrap.fill(titles.get(kind, kind), 26), fontsize=7)
        handles, labels = axes[0][cols[0]].get_legend_handles_labels()
        fig.legend(handles, labels, frameon=False, fontsize=6, ncol=4 if len(names) > 8 else 3,
                   loc="outside lower left" if kind == kinds[0] else "outside lower right",
                   title=f"({'abcdefgh'[kinds.index(kind)]}) {titles.get(kind, kind)}", title_fontsize=7)
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


def whatif_figure(table, column: str, title: str = ""):
    """Predicted time, speedup and efficiency against ``column``, with intervals (``perfkit whatif``, Figs. 6.2–6.3).

    ``table`` is a :func:`perfkit.model.uncertainty.whatif.whatif` table. Extrapolated points are drawn hollow and red:
    their intervals carry no coverage guarantee; the grid values inside the fitted range are shaded grey. A
    numeric ``column`` spanning 8× or more gets a log2 axis with a tick at every value. A non-numeric ``column``
    gets the time and speedup panels only.
    """
    from matplotlib.ticker import FuncFormatter

    numeric = "efficiency" in table.columns
    x = table[column].to_numpy(dtype=float) if numeric else np.arange(len(table), dtype=float)
    ext = table["extrapolated"].to_numpy(dtype=bool)
    panels = [("predicted", "lower", "upper", "predicted time (s)"),
              ("speedup", "speedup_lower", "speedup_upper", f"speedup over {column} = {table[column].iloc[0]}")]
    if numeric:
        panels.append(("efficiency", "efficiency_lower", "efficiency_upper", "efficiency"))
    fig, axes = new_figure(1, len(panels), figsize=(3.5 * len(panels), 3.4))
    wide = numeric and x.min() > 0 and x.max() / x.min() >= 8  # powers of two and the like: a log2 axis
    for ax, (col, lo, hi, label) in zip(np.atleast_1d(axes), panels):
        y = table[col].to_numpy(dtype=float)
        if numeric and (~ext).any():  # the grid values inside the data the model was fitted on
            ax.axvspan(x[~ext].min(), x[~ext].max(), color="0.9", lw=0, zorder=0, label="fitted range")
        ax.fill_between(x, table[lo], table[hi], color="#1f78b4", alpha=0.2, lw=0, label="90 % interval")
        ax.plot(x, y, "-", color="#1f78b4", lw=1)
        ax.plot(x[~ext], y[~ext], "o", color="#1f78b4", ms=4, label="inside the fitted range")
        ax.plot(x[ext], y[ext], "o", mfc="white", color="#e31a1c", ms=4, label="extrapolated")
        if col == "speedup" and numeric:
            ax.plot(x, x / x[0], ":", color="#555555", lw=1, label="ideal")
        if col == "efficiency":
            ax.axhline(1.0, ls=":", color="#555555", lw=1)
        ax.set_xlabel(column)
        ax.set_ylabel(label)
        if wide:
            ax.set_xscale("log", base=2)
            ax.set_xticks(x, [f"{v:g}" for v in x])
            ax.minorticks_off()
        else:
            ax.set_xticks(x, [str(v) for v in table[column]] if not numeric else None)
    axes = np.atleast_1d(axes)
    axes[0].set_yscale("log")
    axes[0].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axes[0].yaxis.set_minor_formatter(FuncFormatter(
        lambda v, _: f"{v:g}" if v > 0 and f"{v:.0e}"[0] in "25" else ""))
    legend_outside(axes[-1])
    fig.suptitle(title or f"what if {column} changes (the other columns fixed)", fontsize=8)
    return fig


def plot_paired_ratios(table, factors=None, ncols: int = 5):
    """Time ratio of each framework to the reference on identical configurations, by hyperparameter level.

    ``table`` is :func:`perfkit.model.selection.paired.paired_ratios`'s: one panel per factor (the
    first panel the overall ratio), one marker series per framework with its 95 % interval, on a
    log axis with the reference (ratio 1) drawn as a line.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from ..data.thesis import framework_name

    factors = list(factors or [f for f in dict.fromkeys(table["factor"]) if f != "all"])
    panels = ["all", *factors]
    nrows = -(-len(panels) // ncols)
    fig, axes = new_figure(nrows, ncols, figsize=(2.5 * ncols, 2.2 * nrows), squeeze=False, sharey=True)
    labels = list(dict.fromkeys(table["framework"]))
    width = 0.7 / max(len(labels), 1)
    ref = framework_name(str(table["reference"].iloc[0]).split("-")[0]) if len(table) else "reference"
    for ax, factor in zip(axes.flat, panels):
        cells = table[table["factor"] == factor]
        levels = list(dict.fromkeys(cells["level"]))
        for k, label in enumerate(labels):
            c = cells[cells["framework"] == label].set_index("level").reindex(levels)
            x = np.arange(len(levels)) + (k - (len(labels) - 1) / 2) * width
            name = framework_name(label.split("-")[0])
            err = np.vstack([c["ratio"] - c["lo"], c["hi"] - c["ratio"]])
            ax.errorbar(x, c["ratio"], yerr=np.nan_to_num(err), fmt="o", ms=3, lw=0.8, capsize=1.5,
                        color=framework_color(name), label=name)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 7.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(np.arange(len(levels)))
        ax.set_xticklabels(levels, fontsize=6, rotation=30 if max(map(len, levels), default=0) > 4 else 0)
        ax.set_title("every configuration" if factor == "all" else factor, fontsize=8)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel(f"time / {ref} time")
    legend_outside(axes.flat[min(ncols, len(panels)) - 1])
    fig.suptitle(f"Same configurations, other frameworks: geometric-mean time ratio to {ref} (95 % interval)",
                 fontsize=9)
    return fig
