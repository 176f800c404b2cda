"""Chapter 7 (beyond the thesis): measure small, predict large.

The thesis asks how training time scales; its models are validated on held-out rows drawn from the range they
were fitted on. This chapter fits on the small end of a scale and scores the large end: step-time forms on
Pollux's cluster traces (fit <= 16 GPUs, predict 32–64), and our own measurements in batch size (Chapter 4)
and workers (Chapter 3). Three stages, as every chapter: :func:`~.compute.compute` (typed
:class:`~.compute.Ch7Results`, kept by the results cache), :func:`present` (tables, figures, claims, readings
from the results), :func:`analyse` joins them. The notebook ``notebooks/ch7_extrapolation.ipynb`` follows the
sections: 1 the traces; 2 the intervals; 3 our measurements; 4 the ledger.
"""
from __future__ import annotations

from ...report.claims import judge_all
from ...report.plots import whatif_figure
from ..common import run_chapter
from ..result import ChapterResult, checked_params
from . import figures, tables
from .claims import CLAIMS, Ch7Quantities
from .compute import Ch7Results, ScaleStudy, compute, inputs
from .params import Params, check_params
from .readings import ch7_readings

__all__ = ["Params", "check_params", "analyse", "present", "compute", "inputs", "CLAIMS", "Ch7Results",
           "Ch7Quantities", "ScaleStudy"]


def analyse(params: Params | None = None, /, **kwargs) -> ChapterResult:
    """Chapter 7: extrapolation to scale on Pollux's traces and on our Chapter 3–4 files.

    ``analyse(fit_max_gpus=16, ...)`` or ``analyse(check_params(...))``; the parameters are checked first (one
    :class:`~perfkit.chapters.result.ParameterError` before anything is fitted). Results computed before with the
    same parameters, data and code are read from the results cache (``cache=False`` recomputes).
    """
    p = checked_params(params, kwargs, Params, check_params)
    return run_chapter("ch7", p, inputs(p), compute, Ch7Results, present)


def _numbers(r: Ch7Results) -> dict:
    test = r.test
    ape = (test["selected"] - test["t_iter"]).abs() / test["t_iter"] * 100
    per_job = ape.groupby(test["job"]).mean()
    q = dict(selected=r.selected, fit_max=r.pollux.fit_max, test_min=r.pollux.test_min, test_max=r.pollux.test_max,
             n_test=len(test), n_fit=r.pollux.n_fit, gpu_counts=r.gpu_counts, coverage_level=r.coverage_level,
             worst_job=str(per_job.idxmax()), worst_job_mape=float(per_job.max()))
    if r.ch4 is not None:
        q["ch4_fit_max"] = r.ch4.fit_max
    if r.ch3 is not None:
        q["ch3_fit_max"] = r.ch3.fit_max
    return q


def present(r: Ch7Results, res: ChapterResult) -> ChapterResult:
    """Fill ``res`` from the results: tables, figures, the claims ledger, numbers, notes and readings."""
    T = res.tables
    between = [g for g in r.gpu_counts if r.pollux.fit_max < g < r.pollux.test_min]
    res.notes.append(f"Pollux traces: {len(r.measured)} rows of six jobs; fit on {r.pollux.n_fit} rows with <= "
                     f"{r.pollux.fit_max:g} GPUs, scored on {len(r.test)} rows with {r.pollux.test_min:g}–"
                     f"{r.pollux.test_max:g}; the rows with {between} GPUs are drawn, not scored")
    T["ext_scale_mape"] = tables.with_extrap(tables.by_group(r.pollux), r.extrap, "group")
    T["ext_scale_by_factor"] = tables.with_extrap(tables.by_factor(r.pollux), r.extrap, "factor")
    if r.extrap and r.extrap.get("status") != "ok":
        res.notes.append(f"Extra-P: not run ({r.extrap.get('note')})")
    T["ext_scale_selection"] = r.selection
    if r.selection_k is not None:
        T["ext_scale_selection_k"] = r.selection_k
    T["ext_scale_formulas"] = tables.formulas_table(r.formulas)
    T["ext_scale_coverage"] = tables.coverage_table(r.test, r.coverage_level, r.q_by_job, r.calibration)
    if r.clusters is not None:
        T["ext_scale_clusters"] = tables.clusters_table(r.clusters)
    elif r.clusters_note:
        res.notes.append(f"Other clusters: not shown ({r.clusters_note})")
    if r.small_runs is not None:
        T["ext_small_runs"] = tables.small_runs_table(r.small_runs)
    res.figures["ext_scale_curves"] = figures.scaling_curves(r)
    res.figures["ext_scale_by_factor"] = figures.error_by_factor(
        r.pollux, "Pollux traces: error by distance beyond the fitted GPUs (median over jobs)",
        "extrapolation factor (GPUs / fitted maximum)")
    if r.ch4 is not None:
        T["ext_ch4_batch"] = tables.by_factor(r.ch4).merge(tables.by_group(r.ch4)[["model", "all"]], on="model")
    if r.ch3 is not None:
        T["ext_ch3_workers"] = tables.by_group(r.ch3)
    if r.ch4 is not None or r.ch3 is not None:
        res.figures["ext_own_data"] = figures.own_data(r.ch4, r.ch3)
    if r.whatif_ch4 is not None:
        T["ext_whatif_ch4_batch"] = r.whatif_ch4
        res.figures["ext_whatif_ch4_batch"] = whatif_figure(
            r.whatif_ch4, "batch_size", title=f"what if: the batch size of one LeNet-5 configuration (log-linear form "
                                              f"fitted on batch <= {r.ch4.fit_max:g}; intervals widen beyond it)")
    res.numbers.update(_numbers(r))
    T["claims_ch7"] = judge_all("7", "Pollux traces; our Chapter 3–4 files", CLAIMS, Ch7Quantities.of(r))
    res.readings = ch7_readings(res)
    return res
