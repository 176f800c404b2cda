"""Chapter 5: the generic performance model on measured 3D-ResAttNet-18 training times, and the volume study.

Three stages, as every chapter: :func:`~.compute.compute` fits and measures (typed
:class:`~.compute.Ch5Results`, kept by the results cache), :func:`present` builds the tables, figures,
claims ledger and readings from the results, :func:`analyse` joins them. Sections (the notebook
``notebooks/ch5_resattnet3d.ipynb`` follows them): 1 Table 5.2; 2 Table 5.3 and Figs. 5.3–5.4; 3 Table 5.4 and
the claims; 4 the volume study.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...data.thesis import figure_stem, load_thesis_table
from ...model.analytic.scaling import scaling_power
from ...report import plots
from ...report.claims import judge_all
from ...schema import voxels
from ..ch4 import params_side_by_side
from ..ch4.tables import params_view, scaling_view
from ..common import run_chapter
from ..result import ChapterResult, checked_params
from .claims import CLAIMS, Ch5Quantities
from .compute import Ch5Results, VolumeStudy, compute, inputs
from .params import VOLUME_COLUMNS, Params, check_params
from .readings import ch5_readings

__all__ = ["Params", "check_params", "analyse", "present", "compute", "inputs", "CLAIMS", "Ch5Results",
           "Ch5Quantities", "VolumeStudy", "VOLUME_COLUMNS"]


def analyse(params: Params | None = None, /, **kwargs) -> ChapterResult:
    """Chapter 5 on a measured 3D-ResAttNet-18 file (and a volume study).

    ``analyse(n_fit=900, ...)`` or ``analyse(check_params(...))``; the parameters (:class:`Params`)
    are checked first (:func:`check_params`): a value that is not allowed raises one
    :class:`~perfkit.chapters.result.ParameterError` before anything is fitted. Results computed before
    with the same parameters, data and code are read from the results cache (``cache=False`` recomputes).
    """
    p = checked_params(params, kwargs, Params, check_params)
    return run_chapter("ch5", p, inputs(p), compute, Ch5Results, present)


def _table5_3(r: Ch5Results, t53):
    table = r.comparison[["MAPE", "MAE", "RMSE", "R2"]].rename(columns=lambda c: f"{r.label}_{c}").rename_axis("method")
    table["thesis_MAPE"] = t53.reindex(table.index).to_numpy()
    table[f"{r.label}_MAPE_first300"] = [r.mape_first300[k] for k in table.index]
    return table.reset_index()


def _table5_4(r: Ch5Results, power: dict):
    t54 = load_thesis_table("5.4")
    return pd.DataFrame([dict(source=r.label, **power),
                         dict(source="thesis Table 5.4", q_workers=float(t54["mean"].iloc[0]),
                              q_workers_std=float(t54["std"].iloc[0]))])


def _prediction_figures(r: Ch5Results, t53) -> dict:
    """Figs. 5.3–5.4: predicted against measured on the held-out rows (the thesis's numbers for PyTorch)."""
    out = {}
    for name, key in (("de", "DE"), ("rf", "RF")):
        fig, ax = plots.new_figure(figsize=(3.8, 4.2))
        plots.plot_pred_vs_measured(r.y_test, r.preds[key], ax=ax,
                                    title=f"{name.upper()} ({r.framework}, {r.label}, held out)",
                                    thesis_error=f"MAPE {t53[name.upper()]:.0f} % (Table 5.3, PyTorch)")
        out[figure_stem("ch5", f"{name}_pred_vs_measured", r.framework)] = fig
    return out


def volume_figure(v: VolumeStudy, thesis_q_workers: float):
    """§4: the exponents against the volume size, with the thesis's q(workers) and the cores' bound."""
    fig, ax = plots.new_figure(figsize=(6.8, 3.8))
    plots.plot_volume_exponents(v.table, ax=ax, thesis_q_workers=thesis_q_workers, q_bound=v.q_bound, cores=v.cores)
    ax.set_title(f"exponents vs volume size ({v.source})")
    return fig


def _numbers(r: Ch5Results, power: dict, table5_3) -> dict:
    q = dict(label=r.label, n_rows=r.n_rows, n_fit=r.n_fit, n_test=r.n_test, volumes=r.volumes,
             mape={k: float(v) for k, v in r.comparison["MAPE"].items()}, heldout=r.heldout,
             r2={k: float(v) for k, v in r.comparison["R2"].items()},
             mape_first300=dict(zip(table5_3["method"], table5_3[f"{r.label}_MAPE_first300"])), **power,
             thesis_q_workers=float(load_thesis_table("5.4")["mean"].iloc[0]), seed_params={"DE+L2": r.fit.params},
             effects=r.effects)
    if r.ch4_heldout is not None:
        q.update(ch4_l2_mape=r.ch4_l2_mape, ch4_heldout=r.ch4_heldout)
    if r.volume is not None:
        q.update(q_bound=r.volume.q_bound, cores=r.volume.cores, volume_table=r.volume.table,
                 full_voxels=voxels("181x217x181"))
    return q


def present(r: Ch5Results, res: ChapterResult) -> ChapterResult:
    """Fill ``res`` from the results: tables and views, figures, the claims ledger, numbers, notes and readings."""

    p, T, V = res.params, res.tables, res.views
    res.notes.append(f"{r.n_rows} successful samples ({r.label}, volume {', '.join(r.volumes)}); fit on {r.n_fit}, "
                     f"held out {r.n_test}")
    if r.n_rows < p.n_fit + p.n_test:
        res.notes.append(f"quick mode: fewer samples than {p.n_fit} + {p.n_test}, so the split was scaled down")
    res.fits["DE+L2"] = r.fit
    summary = r.fit.summary()
    T["table5_2"] = params_side_by_side(summary, table="5.2", label=r.label)
    V["table5_2"] = params_view(T["table5_2"])
    t53 = load_thesis_table("5.3").set_index("method")["mean"] * 100  # the thesis prints a fraction
    T["table5_3"] = _table5_3(r, t53)
    res.figures.update(_prediction_figures(r, t53))
    (qw, qw_sd), (qb, qb_sd) = scaling_power(summary, "workers"), scaling_power(summary, "batch_size")
    power = dict(q_workers=qw, q_workers_std=qw_sd, q_batch=qb, q_batch_std=qb_sd)
    T["table5_4"] = _table5_4(r, power)
    V["table5_4"] = scaling_view(T["table5_4"])
    res.numbers.update(_numbers(r, power, T["table5_3"]))
    T["claims_ch5"] = judge_all("5", f"{r.label}/{Path(r.path).name}", CLAIMS, Ch5Quantities.of(r))
    if r.volume is not None:
        T["ext_volume_exponents"] = r.volume.table
        res.figures["ext_volume_exponents"] = volume_figure(r.volume, res.numbers["thesis_q_workers"])
    res.readings = ch5_readings(res)
    return res
