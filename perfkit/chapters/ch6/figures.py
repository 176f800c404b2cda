"""Chapter 6's figures, functions of its tables (no fitting): Fig. 6.1 (held-out MAPE of every method) and
Figs. 6.2-6.3 (what-if curves), drawn through :mod:`perfkit.report.plots`."""
from __future__ import annotations

import numpy as np
from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

from ...report import plots
from ...report.plots import whatif_figure
from .params import BLACK_BOXES, DATASET_NAMES, EXTRAP, INTERPRETABLE, METHODS, METHOD_LABELS, TUNED
from .results import WhatIf

__all__ = ["plot_heldout", "plot_whatif"]


def _log_ticks(ax, lo: float, hi: float) -> None:
    """Plain-number ticks 1-2-5 per decade on a log axis from ``lo`` to ``hi`` (no minor labels)."""

    ticks = [m * 10.0 ** e for e in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
             for m in (1, 2, 5) if lo <= m * 10.0 ** e <= hi]
    if len(ticks) > 7:
        ticks = [t for t in ticks if str(t).lstrip("0.").startswith("1")]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])


def _heldout_panel(ax, t, keys, ypos) -> None:
    """One dataset's panel of Fig. 6.1: ``t`` is its part of Table 6.1 indexed by method."""
    colours = {**{m: "#1f78b4" for m in INTERPRETABLE}, "auto": "#33a02c", **{m: "#777777" for m in BLACK_BOXES},
               TUNED: "#333333"}
    values = [float(t.loc[k, "MAPE"]) for k in keys if k in t.index and np.isfinite(t.loc[k, "MAPE"])]
    lows = [float(t.loc[k, "MAPE_lower"]) for k in keys if k in t.index and np.isfinite(t.loc[k, "MAPE_lower"])]
    highs = [float(t.loc[k, "MAPE_upper"]) for k in keys if k in t.index and np.isfinite(t.loc[k, "MAPE_upper"])]
    lo, hi = min(values + lows) / 1.6, max(values + highs) * 4.0
    for y, key in zip(ypos, keys):
        if key not in t.index or not np.isfinite(t.loc[key, "MAPE"]):
            ax.text(lo * 1.1, y, "not run" if key in EXTRAP else "n/a", va="center", fontsize=6, color="#777777")
            continue
        r = t.loc[key]
        colour = colours.get(key, "#e08214")
        if np.isfinite(r["MAPE_lower"]):
            ax.plot([r["MAPE_lower"], r["MAPE_upper"]], [y, y], "-", color=colour, lw=1.2)
        ax.plot([r["MAPE"]], [y], "D" if key in EXTRAP else "o", color=colour, ms=4)
        right = r["MAPE_upper"] if np.isfinite(r["MAPE_upper"]) else r["MAPE"]
        ax.text(right * 1.12, y, f"{r['MAPE']:.3g}", va="center", fontsize=6)
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    _log_ticks(ax, lo, hi)


def plot_heldout(table, datasets):
    """Fig. 6.1: held-out MAPE of every method per dataset, with 95 % bootstrap intervals (log scale), from
    Table 6.1 (:func:`~perfkit.chapters.ch6.tables.heldout_table`)."""

    ncols = min(4, len(datasets))
    nrows = -(-len(datasets) // ncols)
    fig, axes = plots.new_figure(nrows, ncols, figsize=(2.7 * ncols + 1.3, 3.6 * nrows), squeeze=False,
                                 sharey=True)
    keys = list(METHODS) + list(EXTRAP)
    ypos = np.arange(len(keys))[::-1]
    for ax in axes.flat[len(datasets):]:
        ax.set_visible(False)
    for ax, ds in zip(axes.flat, datasets):
        _heldout_panel(ax, table[table["dataset"] == ds].set_index("method"), keys, ypos)
        ax.set_title(DATASET_NAMES[ds], fontsize=8)
        ax.set_xlabel("held-out MAPE (%)")
        ax.grid(False, axis="y")
    for row in axes:
        row[0].set_yticks(ypos, [METHOD_LABELS.get(k, k) for k in keys], fontsize=7)
    return fig


def plot_whatif(ds: str, w: WhatIf):
    """Figs. 6.2-6.3: predicted epoch time, speedup and efficiency against workers, with intervals."""

    shown = ", ".join(f"{c}={v}" for c, v in w.base.items() if c != "workers")
    return whatif_figure(w.table, "workers", title=f"what if: {DATASET_NAMES[ds]}, {w.model}\nbase: {shown}")
