"""Chapter 8's figures: pure functions of :class:`~.compute.Ch8Results` (nothing is fitted here)."""
from __future__ import annotations

import numpy as np

from ...data.gpu_specs import peak_for
from ...report import plots
from .compute import SELECTED
from .tables import bias, roofline

__all__ = ["errors_by_gpu", "roofline_panels", "bias_by_gpu", "ROOFLINE_GPUS"]

#: the GPUs of the roofline picture: one per generation Lambda measured
ROOFLINE_GPUS = ("V100 16GB SXM2", "A100 80GB SXM4", "H100 80GB SXM5", "RTX 4090")
_MARKERS = ("o", "s", "^", "D", "v", "P")


def errors_by_gpu(studies: dict):
    """Per study, each held-out GPU type's MAPE (%) for every model (log scale), GPUs sorted by the selected
    form's error."""
    n = len(studies)
    cols = min(n, 2)
    rows = -(-n // cols)
    fig, axes = plots.new_figure(rows, cols, figsize=(5.6 * cols, 3.9 * rows + 0.6), squeeze=False)
    for ax in np.ravel(axes)[n:]:
        ax.set_visible(False)
    for ax, s in zip(np.ravel(axes), studies.values()):
        g = s.groups.sort_values(SELECTED)
        y = np.arange(len(g))
        for k, m in enumerate(s.models):
            ax.scatter(g[m], y, marker=_MARKERS[k % len(_MARKERS)], s=22, label=m, alpha=0.85)
        ax.set_yticks(y, g["group"], fontsize=7)
        ax.set_xscale("log")
        ax.axvline(10, color="0.5", lw=0.7, ls="--")
        ax.set(xlabel="MAPE (%) with the GPU left out", title=s.label)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=8, frameon=False)
    fig.suptitle("Each GPU type predicted by models fitted without it (dashed: 10 %)", fontsize=10)
    return fig


def _roof_points(study, specs):
    """Single-GPU rows of a Lambda study: each workload's effective intensity and achieved effective TFLOP/s."""
    coef = roofline(study)
    keys = list(study.workload)
    rows = study.rows[study.rows["n_gpus"] == 1].merge(coef[keys + ["compute", "intensity"]], on=keys)
    rows = rows[np.isfinite(rows["intensity"]) & (rows["compute"] > 0)]
    rows = rows.assign(achieved=rows["compute"] * rows["batch_per_gpu"] / rows["measured"])
    return rows


def roofline_panels(study, specs):
    """The effective roofline of four GPUs: per workload (single-GPU rows), its fitted arithmetic intensity
    against the effective TFLOP/s it reached, under min(peak, bandwidth × intensity) for each precision."""
    pts = _roof_points(study, specs)
    spec = specs.set_index("gpu")
    gpus = [g for g in ROOFLINE_GPUS if g in set(pts["group"])]
    fig, axes = plots.new_figure(1, len(gpus), figsize=(3.3 * len(gpus), 3.6), squeeze=False, sharey=True)
    x = np.logspace(np.log10(max(pts["intensity"].min() / 2, 1e-3)), np.log10(pts["intensity"].max() * 2), 100)
    precisions = sorted(set(pts["precision"]))
    for ax, gpu in zip(axes[0], gpus):
        row = spec.loc[gpu]
        for k, prec in enumerate(precisions):
            roof = np.minimum(peak_for(prec, row), row["mem_gbps"] * x / 1000.0)
            ax.plot(x, roof, color=f"C{k}", lw=1.2, label=f"roof, {prec}")
            p = pts[(pts["group"] == gpu) & (pts["precision"] == prec)]
            ax.scatter(p["intensity"], p["achieved"], s=16, color=f"C{k}", alpha=0.8, label=f"workloads, {prec}")
        ax.set(xscale="log", yscale="log", xlabel="effective FLOP per byte", title=gpu)
    axes[0][0].set_ylabel("effective TFLOP/s reached")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=8, frameon=False)
    fig.suptitle(f"{study.label}: what bounds each workload (the roofline form's fitted work per sample; one GPU)",
                 fontsize=10)
    return fig


def bias_by_gpu(study):
    """Per held-out GPU, the median signed error (%) of each model: where a form is systematically slow or fast."""
    b = bias(study).sort_values(SELECTED)
    fig, ax = plots.new_figure(figsize=(6.4, 0.28 * len(b) + 1.6))
    y = np.arange(len(b))
    for k, m in enumerate(study.models):
        ax.scatter(b[m], y, marker=_MARKERS[k % len(_MARKERS)], s=22, label=m, alpha=0.85)
    ax.axvline(0, color="0.4", lw=0.8)
    ax.set_yticks(y, b["held-out GPU"], fontsize=7)
    ax.set(xlabel="median signed error (%): predicted / measured − 1", title=f"{study.label}: bias per GPU")
    plots.legend_outside(ax)
    return fig
