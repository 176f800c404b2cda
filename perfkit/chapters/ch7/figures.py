"""Chapter 7's figures: pure functions of :class:`~.compute.Ch7Results` (nothing is fitted here)."""
from __future__ import annotations

import numpy as np

from ...report import plots

__all__ = ["scaling_curves", "error_by_factor", "own_data"]

#: the models drawn on the scaling curves, and how
_CURVES = (("selected", "C0", "-"), ("Pollux's model", "C1", "--"), ("random forest (tuned)", "C2", ":"))


def _curve_batch(rows):
    """The per-GPU batch of a job measured at the most GPU counts beyond the fit range (ties: the larger)."""
    counts = rows.groupby("batch_per_gpu")["n_gpus"].nunique()
    return float(counts[counts == counts.max()].index.max())


def _panel(ax, job, measured, pred, fit_max, test_min):
    b = _curve_batch(pred[pred["job"] == job])
    m = measured[(measured["job"] == job) & (measured["batch_per_gpu"] == b)]
    p = pred[(pred["job"] == job) & (pred["batch_per_gpu"] == b)].groupby("n_gpus").median(numeric_only=True)
    ax.axvspan(0.9, fit_max, color="0.92", lw=0)
    fit = m[m["n_gpus"] <= fit_max]
    beyond = m[m["n_gpus"] > fit_max]
    ax.scatter(fit["n_gpus"], fit["t_iter"], s=9, color="0.55", label="measured, fitted")
    ax.scatter(beyond["n_gpus"], beyond["t_iter"], s=12, color="k", label="measured, predicted")
    ax.fill_between(p.index, p["lower"], p["upper"], color="C0", alpha=0.18, lw=0, label="interval (selected)")
    for name, colour, style in _CURVES:
        if name in p.columns:
            ax.plot(p.index, p[name], color=colour, ls=style, lw=1.4, label=name)
    ax.axvline(test_min, color="0.6", lw=0.6, ls="--")
    ax.set_xscale("log", base=2)
    ax.set_title(f"{job} (per-GPU batch {b:g})")
    ax.set_xlabel("GPUs")
    ax.set_ylabel("step time (s)")


def scaling_curves(r):
    """Per job: the measured step time against GPUs at one per-GPU batch, the fitted range shaded, and the
    predictions beyond it (median per GPU count) with the selected model's interval."""
    jobs = sorted(r.measured["job"].unique())
    fig, axes = plots.new_figure(2, 3, figsize=(11.5, 6.4))
    for ax, job in zip(np.ravel(axes), jobs):
        _panel(ax, job, r.measured, r.pollux.predictions, r.pollux.fit_max, r.pollux.test_min)
    handles, labels = np.ravel(axes)[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=6, fontsize=8, frameon=False)
    fig.suptitle(f"Fitted on <= {r.pollux.fit_max:g} GPUs (shaded), predicted to {r.pollux.test_max:g}: Pollux's "
                 f"traces; scored from {r.pollux.test_min:g} GPUs (dashed line)", fontsize=10)
    return fig


def error_by_factor(study, title: str, xlabel: str):
    """MAPE (%) against the extrapolation factor, one line per model (the median over groups)."""
    e = study.errors
    e = e[(e["group"] == "median") & (e["factor"].astype(str) != "all")]
    fig, ax = plots.new_figure(figsize=(6.2, 3.8))
    for k, name in enumerate(study.models):
        g = e[e["model"] == name]
        ax.plot(g["factor"].astype(float), g["mape"], marker="o", ms=4, lw=1.6 if k == 0 else 1.1,
                label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("MAPE (%)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    return fig


def own_data(ch4, ch3):
    """Our measurements: MAPE (%) of every model beyond the fitted batch sizes (Chapter 4) and workers
    (Chapter 3, per network), as grouped bars (seaborn)."""
    import seaborn as sns

    studies = [s for s in (ch4, ch3) if s is not None]
    fig, axes = plots.new_figure(1, len(studies), figsize=(5.2 * len(studies), 3.8), squeeze=False)
    for ax, s in zip(axes[0], studies):
        e = s.errors[(s.errors["factor"].astype(str) == "all") & (s.errors["group"] != "median")]
        sns.barplot(data=e.assign(group=e["group"].astype(str)), x="group", y="mape", hue="model",
                    hue_order=s.models, ax=ax)
        what = "batch" if s.column == "batch_size" else "workers"
        ax.set_xlabel("network" if s.groups else "")
        ax.set_ylabel("MAPE beyond the fitted range (%)")
        ax.set_title(f"our {s.name.split('_')[0]} data: fit {what} <= {s.fit_max:g}, predict up to {s.test_max:g}",
                     fontsize=9)
        ax.legend(fontsize=7, frameon=False)
    return fig
