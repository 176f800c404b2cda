"""The figure of a fit study: measured against predicted on the held-out rows and, with an extrapolation split,
the time along the scale column with the fitted range shaded. It reads only the result's stored tables."""
from __future__ import annotations

import numpy as np

from ..report.plots import legend_outside, new_figure

__all__ = ["plot_study"]


def plot_study(result):
    """A Figure: left, each model's predicted against the measured held-out times (log axes, the diagonal);
    right (with ``extrapolate``), measured and predicted times along the scale column, the fitted range shaded and
    the model's interval (at the spec's ``level``) as a band."""
    pred = result.predictions
    if pred is None:
        raise ValueError("this result has no held-out predictions to plot (its comparison did not run)")
    models = [c for c in pred.columns if c not in {"measured", "lower", "upper"} and
              not (result.scale and c == result.scale[0])]
    fig, axes = new_figure(1, 2 if result.scale else 1, figsize=(10, 3.8) if result.scale else (5, 3.8))
    axes = np.atleast_1d(axes)
    ax = axes[0]
    y = pred["measured"].to_numpy(dtype=float)
    for name in models:
        ax.scatter(y, pred[name].to_numpy(dtype=float), s=10, alpha=0.6, label=name)
    lo, hi = float(np.nanmin(y)), float(np.nanmax(y))
    ax.plot([lo, hi], [lo, hi], color="black", lw=0.8)
    ax.set(xscale="log", yscale="log", xlabel=f"measured {result.spec.target}", ylabel="predicted",
           title=f"held-out rows ({len(pred)})")
    legend_outside(ax)
    if result.scale:
        _scaling(axes[1], result, models)
    return fig


def _scaling(ax, result, models) -> None:
    col, top = result.scale
    pred, fit = result.predictions, result.fit_points
    if fit is not None:
        ax.scatter(fit[col], fit["measured"], s=6, color="0.6", label="fit rows")
    ax.scatter(pred[col], pred["measured"], s=6, color="black", label="held-out rows")
    by_value = pred.assign(_x=pred[col]).groupby("_x")
    x = by_value.size().index.to_numpy(dtype=float)
    if {"lower", "upper"} <= set(pred.columns):
        ax.fill_between(x, by_value["lower"].median().to_numpy(), by_value["upper"].median().to_numpy(), alpha=0.2,
                        label=f"{result.label}: {100 * result.spec.level:g} % interval (median per {col})")
    for name in models:
        ax.plot(x, by_value[name].median().to_numpy(), marker=".", lw=1, label=f"{name} (median)")
    lo = float(np.nanmin(fit[col])) if fit is not None else float(np.nanmin(x))
    ax.axvspan(lo, top, color="tab:green", alpha=0.08, label=f"fitted range ({col} <= {top:g})")
    ax.set(xscale="log", yscale="log", xlabel=col, ylabel=result.spec.target, title="measured small, predicted large")
    legend_outside(ax)
