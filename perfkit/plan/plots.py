"""The figure of a plan: every configuration's predicted hours against its cost (log-log) with its interval, one
marker and colour per flag, the Pareto front as a line and the deadline or budget dashed: :func:`plot_plan`."""
from __future__ import annotations

import numpy as np

from ..report.plots import legend_outside, new_figure

__all__ = ["FLAG_STYLES", "plot_plan"]

#: flag → (marker, colour, filled): measured GPUs filled, unmeasured ones hollow; extrapolated in scale in red hues
FLAG_STYLES = {
    "interpolated": ("o", "#1f78b4", True),
    "extrapolated in scale": ("s", "#e31a1c", True),
    "unmeasured GPU": ("^", "#33a02c", False),
    "unmeasured GPU, extrapolated in scale": ("D", "#ff7f00", False),
}


def _log_ticks(axis, lo: float, hi: float) -> None:
    """Plain numbers on a log axis: the decades always, 2 and 5 in between when it spans at most two decades."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    if hi / lo <= 100:
        axis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if v > 0 and f"{v:.0e}"[0] in "25" else ""))
    else:
        axis.set_minor_formatter(NullFormatter())


def _limits(lo, hi) -> tuple[float, float]:
    lo, hi = float(np.min(lo)), float(np.max(hi))
    return lo / 1.5, hi * 1.5


def plot_plan(result, title: str = ""):
    """A Figure of the plan ``result`` (a :class:`~perfkit.plan.planner.PlanResult`): x the predicted hours, y
    the cost in USD, both log; error bars the intervals; the Pareto front (no configuration both faster and
    cheaper) a line through its points, each labelled ``n × GPU``; the deadline a dashed vertical line, the budget a
    dashed horizontal one."""
    t = result.table
    fig, ax = new_figure(figsize=(6.4, 4.0))
    for flag, (marker, colour, filled) in FLAG_STYLES.items():
        rows = t[t["flag"] == flag]
        if not len(rows):
            continue
        h, c = rows["hours"].to_numpy(dtype=float), rows["cost"].to_numpy(dtype=float)
        xerr = np.vstack([h - rows["hours_lo"].to_numpy(dtype=float), rows["hours_hi"].to_numpy(dtype=float) - h])
        yerr = np.vstack([c - rows["cost_lo"].to_numpy(dtype=float), rows["cost_hi"].to_numpy(dtype=float) - c])
        ax.errorbar(h, c, xerr=xerr, yerr=yerr, fmt=marker, color=colour, mfc=colour if filled else "white", ms=5,
                    elinewidth=0.6, capsize=0, alpha=0.85, label=f"{flag} ({len(rows)})")
    front = t[t["pareto"]].sort_values("hours")
    ax.plot(front["hours"], front["cost"], "-", color="0.3", lw=1, zorder=0, label="Pareto front")
    for i, (_, row) in enumerate(front.iterrows()):  # neighbours of the front alternate above and below it
        ax.annotate(f"{row['n_gpus']}×{row['gpu']}", (row["hours"], row["cost"]), xytext=(4, 3 if i % 2 else -8),
                    textcoords="offset points", fontsize=5.5, color="0.25")
    if result.deadline_hours is not None:
        ax.axvline(result.deadline_hours, ls="--", color="0.2", lw=1, label=f"deadline {result.deadline_hours:g} h")
    if result.budget is not None:
        ax.axhline(result.budget, ls="--", color="0.2", lw=1, label=f"budget ${result.budget:,.4g}")
    xlo, xhi = _limits(np.append(t["hours_lo"], result.deadline_hours or t["hours_lo"].min()),
                       np.append(t["hours_hi"], result.deadline_hours or t["hours_hi"].max()))
    ylo, yhi = _limits(np.append(t["cost_lo"], result.budget or t["cost_lo"].min()),
                       np.append(t["cost_hi"], result.budget or t["cost_hi"].max()))
    ax.set(xscale="log", yscale="log", xlim=(xlo, xhi), ylim=(ylo, yhi), xlabel="hours to train (predicted)",
           ylabel="cost (USD)")
    _log_ticks(ax.xaxis, xlo, xhi)
    _log_ticks(ax.yaxis, ylo, yhi)
    legend_outside(ax)
    ax.set_title(title or f"{' '.join(map(str, result.workload.values()))}: {result.target} "
                 f"({100 * result.coverage:g} % intervals)", fontsize=8)
    return fig
