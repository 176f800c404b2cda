"""Chapter 3's figures (Figs. 3.2–3.13), drawn from :class:`Ch3Results` alone through :mod:`perfkit.report.plots`."""
from __future__ import annotations

import pandas as pd

from ...report import plots
from ...schema import CH3_MODELS
from .results import Ch3Results

__all__ = ["FIGURE_NUMBERS", "BREAKDOWN_FIGURES", "phase_figures", "speedup_figures", "measured_speedup_figures",
           "breakdown_figures", "machine_figures", "chapter_figures"]

#: model → (number of its phase figure, number of its speedup figure)
FIGURE_NUMBERS = {"CNN": (2, 5), "MLP": (3, 6), "Autoencoder": (4, 7)}
#: (model, workers) → number of its breakdown figure
BREAKDOWN_FIGURES = {("CNN", 2): 8, ("MLP", 2): 9, ("Autoencoder", 2): 10, ("CNN", 3): 11, ("MLP", 3): 12,
                     ("Autoencoder", 3): 13}


def phase_figures(results: Ch3Results) -> dict:
    """Figs. 3.2–3.4: phase times on one worker, published (solid) and measured (hatched), per model."""

    both = results.published.t32
    if results.measured is not None:
        both = pd.concat([both, results.measured.phases], ignore_index=True)
    out = {}
    for model in CH3_MODELS:
        if model not in set(both["model"]):
            continue
        fig, ax = plots.new_figure(figsize=(8.5, 3.6))
        plots.plot_phase_bars(both, model, ax=ax)
        ax.set_yscale("log")
        ax.set_title(f"{model}: phase times on one worker (thesis Table 3.2 on GPUs, solid; ours measured on CPU, "
                     "hatched)", fontsize=9)
        out[f"fig3_{FIGURE_NUMBERS[model][0]}_phases_{model.lower()}"] = fig
    return out


def speedup_figures(results: Ch3Results) -> dict:
    """Figs. 3.5–3.7 as eq. 3.7 predicts them from the published Tables 3.2 + 3.3."""
    out = {}
    for model in CH3_MODELS:
        fig, ax = plots.new_figure(figsize=(5.6, 3.4))
        plots.plot_speedup(results.published.predicted, model, ax=ax, unit="GPUs")
        ax.set_title(f"{model}: speedup predicted by eq. 3.7\n(from Tables 3.2 + 3.3; not measured)", fontsize=8)
        out[f"fig3_{FIGURE_NUMBERS[model][1]}_speedup_{model.lower()}_eq3_7"] = fig
    return out


def measured_speedup_figures(results: Ch3Results) -> dict:
    """Figs. 3.5–3.7 measured: every framework's speedup, and eq. 3.7 from the main framework's phases."""
    if not results.multi_worker:
        return {}
    speedups, label = results.measured.speedup, results.label
    out = {}
    for model in CH3_MODELS:
        if model not in set(speedups["model"]):
            continue
        fig, ax = plots.new_figure(figsize=(6.8, 3.6))
        shown = speedups[(speedups["variant"] == "measured") | (speedups["framework"] == label)]
        plots.plot_speedup(shown, model, ax=ax, unit="workers")
        ax.set_title(f"{model}: measured speedup of every framework (dotted)"
                     + (f",\nand eq. 3.7 from {label.split(' (')[0]}'s phases" if label else ""), fontsize=8)
        out[f"fig3_{FIGURE_NUMBERS[model][1]}_speedup_{model.lower()}_measured"] = fig
    return out


def breakdown_figures(results: Ch3Results) -> dict:
    """Figs. 3.8–3.13: mean phase times per worker on 2 and 3 workers, one panel per framework."""
    m = results.measured
    if m is None:
        return {}
    means = m.breakdown
    out = {}
    for (model, g), num in BREAKDOWN_FIGURES.items():
        fws = [fw for fw in m.frameworks if ((means["framework"] == fw) & (means["model"] == model)
                                             & (means["workers"] == g)).any()]
        if not fws:
            continue
        fig, axes = plots.new_figure(1, len(fws), figsize=(2.3 * len(fws) + 1.6, 3.4), sharey=True, squeeze=False)
        for i, (fw, ax) in enumerate(zip(fws, axes[0])):
            plots.plot_breakdown(means[means["framework"] == fw], model, g, ax=ax, legend=False)
            ax.set_title(fw.split(" (")[0], fontsize=8)
            if i:
                ax.set_ylabel("")
        handles, labels = axes[0][0].get_legend_handles_labels()  # one legend below the panels, over none of them
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=7, frameon=False)
        fig.suptitle(f"{model}, {g} workers: mean phase times per worker ({m.mode})", fontsize=9)
        out[f"fig3_{num}_breakdown_{model.lower()}_{g}w"] = fig
    return out


def machine_figures(results: Ch3Results) -> dict:
    """``fig_scaling_machines``: measured speedup (left) and aggregation time t_c (right) against the workers, one
    colour per machine, one line per model or job, the ideal speedup dashed (log axes; :func:`.tables.scaling_curves`)."""
    from .tables import scaling_curves

    curves = scaling_curves(results)
    if curves is None:
        return {}
    fig, (left, right) = plots.new_figure(1, 2, figsize=(10, 4.2))
    colours = plots.machine_colours(list(dict.fromkeys(curves["machine"])))
    for machine, g in curves.groupby("machine", sort=False):
        for i, (group, c) in enumerate(g.groupby("group", sort=False)):
            c = c.sort_values("workers")
            label = machine if i == 0 else None
            one = pd.DataFrame({"workers": [1], "speedup": [1.0]}) if 1 not in set(c["workers"]) else None
            sp = pd.concat([one, c[["workers", "speedup"]]]) if one is not None else c
            left.plot(sp["workers"], sp["speedup"], "-", marker=".", lw=1, color=colours[machine], label=label,
                      alpha=0.8)
            tc = c.dropna(subset=["t_c"])
            tc = tc[tc["workers"] > 1]
            if len(tc):
                right.plot(tc["workers"], tc["t_c"] * 1e3, "-", marker=".", lw=1, color=colours[machine],
                           label=label if right.get_legend_handles_labels()[1].count(machine) == 0 else None,
                           alpha=0.8)
    top = float(curves["workers"].max())
    left.plot([1, top], [1, top], "k--", lw=0.8, label="ideal (speedup = G)")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("workers (GPUs or processes) G")
    left.set_ylabel("measured speedup at a fixed per-worker batch")
    right.set_ylabel("aggregation time t_c (ms)")
    left.set_title("Speedup, every machine (thesis Figs. 3.5–3.7)", fontsize=9)
    right.set_title("Gradient aggregation time where it is measured", fontsize=9)
    left.legend(fontsize=7, frameon=False)
    if right.get_legend_handles_labels()[0]:
        right.legend(fontsize=7, frameon=False)
    return {"fig_scaling_machines": fig}


def chapter_figures(results: Ch3Results) -> dict:
    """Every figure of Chapter 3, by file stem, in the chapter's order."""
    return {**phase_figures(results), **speedup_figures(results), **measured_speedup_figures(results),
            **breakdown_figures(results), **machine_figures(results)}
