"""Chapter 4's figures, each drawn from the results alone (:class:`~.results.Ch4Results`); nothing is fitted here,
so a restyled figure is one call on stored results.

Figures the thesis draws once per framework carry the number of the measured framework
(:data:`perfkit.data.thesis.THESIS_FIGURES`).
"""
from __future__ import annotations

from ...data.thesis import figure_number, figure_stem
from ...report import plots
from .tables import thesis_mape

__all__ = ["PREDICTION_FIGURES", "prediction_figure", "prediction_figures", "r2_vs_lambda", "coefficient_paths",
           "paired_ratios_figure", "machines_figure", "figures"]

#: the held-out prediction figures of each framework: (slug, model, title, the thesis's method name)
PREDICTION_FIGURES = (
    ("de_pred_vs_measured", "DE", "generic model, no regularisation", "DE"),
    ("de_l2_pred_vs_measured", "DE+L2", "generic model, L2 λ={lam:g}", "DE+L2"),
    ("rf_pred_vs_measured", "RF", "random forest", "RF"),
    ("svr_pred_vs_measured", "SVR", "SVR", "SVM"),
)


def prediction_figure(part, slug: str, model: str, title: str, method: str):
    """Predicted against measured time of ``model`` on ``part``'s held-out rows, with the thesis's MAPE."""
    number = figure_number("ch4", slug, part.framework)
    thesis = (f"Fig. {number}, MAPE {thesis_mape(method, framework=part.framework)} (journal Table 5)" if number else
              f"MAPE {thesis_mape(method)} (journal Table 5)")
    fig, ax = plots.new_figure(figsize=(3.8, 4.2))
    plots.plot_pred_vs_measured(part.y_test, part.preds[model], ax=ax,
                                title=f"{title.format(lam=part.lam_l2)} ({part.fw_label}, held out)",
                                thesis_error=thesis)
    return fig


def prediction_figures(part) -> dict:
    """Every prediction figure of one framework, by file stem."""
    return {figure_stem("ch4", slug, part.framework): prediction_figure(part, slug, model, title, method)
            for slug, model, title, method in PREDICTION_FIGURES}


def _sweeps(r) -> dict:
    return {part.fw_label: part.sweep for part in r.parts}


def r2_vs_lambda(r, chosen_lam: float):
    """Fig. 4.15: held-out R² against λ, a line per framework."""
    axes = plots.plot_r2_vs_lambda(_sweeps(r), chosen_lam=chosen_lam)
    axes[0].figure.suptitle("held-out R² against λ", fontsize=9)
    return axes[0].figure


def coefficient_paths(r, panels: str, chosen_lam: float):
    """Fig. 4.16 (``panels="intrinsic"``) or 4.17 (``"categorical_extrinsic"``): parameters against λ."""
    axes = plots.plot_coef_paths(_sweeps(r), [k for k, _ in plots.COEF_PANELS[panels]], chosen_lam=chosen_lam)
    fig = axes[0][0].figure
    fig.suptitle(f"fitted parameters against λ (mean over seeds); dotted line: λ = {chosen_lam:g}, the λ of the "
                 "chapter's L2 fits", fontsize=9)
    return fig


def paired_ratios_figure(r):
    """§8: each framework's time over the main framework's on the same configurations."""
    return plots.plot_paired_ratios(r.paired)


#: the epoch-time ticks (s) of :func:`machines_figure`'s log axis, those within the data's range drawn
_TIME_TICKS = (0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300, 500, 1000)


def machines_figure(machines):
    """Eq. 4.4 per machine (:class:`~.results.MachineFit`): the median epoch time against workers (left, log
    axes) and the fitted q(workers) with its 95 % interval (right; 0: no gain from workers, −1: ideal scaling)."""
    import matplotlib
    from matplotlib.ticker import FuncFormatter, NullFormatter

    colours = matplotlib.colormaps["tab10"].colors
    fig, (left, right) = plots.new_figure(1, 2, figsize=(9, 3.6))
    for i, m in enumerate(machines):
        workers = sorted(m.median_time)
        left.plot(workers, [m.median_time[w] for w in workers], "-o", ms=4, lw=1.2, color=colours[i % 10],
                  label=f"{m.machine}")
        q = m.q_workers
        right.errorbar([i], [q.estimate], yerr=[[q.estimate - q.lo], [q.hi - q.estimate]], fmt="o", capsize=4,
                       color=colours[i % 10])
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.set_xticks(sorted({w for m in machines for w in m.median_time}))
    left.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    times = [t for m in machines for t in m.median_time.values()]
    left.set_yticks([t for t in _TIME_TICKS if min(times) / 1.2 <= t <= max(times) * 1.2])
    left.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    left.yaxis.set_minor_formatter(NullFormatter())
    left.set_xlabel("workers G")
    left.set_ylabel("median epoch time (s)")
    left.set_title(f"median epoch time, the first {machines[0].n} configurations of each machine", fontsize=8)
    left.legend(fontsize=7, frameon=False)
    right.axhline(0.0, color="k", lw=0.8)
    right.axhline(-1.0, color="k", lw=0.8, ls="--", label="q = −1: ideal scaling")
    right.set_xticks(range(len(machines)), [m.machine.replace(" (", "\n(") for m in machines], fontsize=7)
    right.set_xlim(-0.6, len(machines) - 0.4)
    right.set_ylabel("q(workers) of eq. 4.4")
    right.set_title("fitted q(workers), 95 % interval (bootstrap of the fit rows)", fontsize=8)
    right.legend(fontsize=7, frameon=False)
    return fig


def figures(r, lam_l2: float) -> dict:
    """Every figure of the chapter, by file stem."""
    out = {}
    for part in r.parts:
        out.update(prediction_figures(part))
    out[figure_stem("ch4", "r2_vs_lambda")] = r2_vs_lambda(r, lam_l2)
    for slug, panels in (("intrinsic_coef_paths", "intrinsic"),
                         ("categorical_extrinsic_coef_paths", "categorical_extrinsic")):
        out[figure_stem("ch4", slug)] = coefficient_paths(r, panels, lam_l2)
    if r.paired is not None:
        out["ext_paired_framework_ratios"] = paired_ratios_figure(r)
    if r.machines:
        out["ext_machines_q_workers"] = machines_figure(r.machines)
    return out
