"""Chapter 8 (beyond the thesis): measure here, predict there.

The thesis models the hardware it measured. A reader who does not own the GPU asks another question: how long will
my job take on *that* GPU, and what will it cost? This chapter predicts each GPU type of Lambda's benchmarks and of
NVIDIA's DGX tables from its spec sheet alone (the GPU spec table, :mod:`perfkit.data.gpu_specs`), with models
fitted on the other GPU types, and plans with the result. Three stages, as every chapter:
:func:`~.compute.compute` (typed :class:`~.compute.Ch8Results`, kept by the results cache), :func:`present`
(tables, figures, claims, readings from the results), :func:`analyse` joins them. The notebook
``notebooks/ch8_cross_hardware.ipynb`` follows the sections: 1 the spec table; 2 one GPU left out; 3 the
roofline; 4 what each form gets wrong; 5 planning; 6 the ledger.
"""
from __future__ import annotations

from ...report.claims import judge_all
from ..common import run_chapter
from ..result import ChapterResult, checked_params
from . import figures, tables
from .claims import CLAIMS, Ch8Quantities
from .compute import Ch8Results, CrossStudy, compute, inputs
from .params import Params, check_params
from .readings import ch8_readings

__all__ = ["Params", "check_params", "analyse", "present", "compute", "inputs", "CLAIMS", "Ch8Results",
           "Ch8Quantities", "CrossStudy"]


def analyse(params: Params | None = None, /, **kwargs) -> ChapterResult:
    """Chapter 8: one GPU type left out at a time on Lambda's and NVIDIA's tables, the roofline, a plan.

    ``analyse(datasets=["lambda"], ...)`` or ``analyse(check_params(...))``; the parameters are checked first
    (one :class:`~perfkit.chapters.result.ParameterError` before anything is fitted). Results computed before with
    the same parameters, data and code are read from the results cache (``cache=False`` recomputes).
    """
    p = checked_params(params, kwargs, Params, check_params)
    return run_chapter("ch8", p, inputs(p), compute, Ch8Results, present)


def _numbers(r: Ch8Results) -> dict:
    q = {"studies": list(r.studies), "plan_source": r.plan_source}
    for name, s in r.studies.items():
        sel = s.pooled.set_index("model").loc["selected form"]
        q[f"{name}_median"] = float(sel["median_group_MAPE"])
        q[f"{name}_coverage"] = 100 * s.coverage
        q[f"{name}_margin"] = float(s.margin["estimate"])
        q[f"{name}_gpus"] = len(s.groups)
    return q


def present(r: Ch8Results, res: ChapterResult) -> ChapterResult:
    """Fill ``res`` from the results: tables, figures, the claims ledger, numbers, notes and readings."""
    T = res.tables
    T["xhw_specs"] = r.specs
    T["xhw_overview"] = tables.overview(r.studies)
    T["xhw_search"] = tables.search(r.studies)
    for name, s in r.studies.items():
        T[f"xhw_{name}_by_gpu"] = tables.by_gpu(s)
        T[f"xhw_{name}_by_workload"] = tables.by_workload(s)
        T[f"xhw_{name}_bias"] = tables.bias(s)
        T[f"xhw_{name}_roofline"] = tables.roofline(s)
        res.notes.append(f"{s.label}: {len(s.rows)} rows of {len(s.groups)} GPU types, {s.seconds:.0f} s")
    res.figures["xhw_errors"] = figures.errors_by_gpu(r.studies)
    lam = next((s for n, s in r.studies.items() if n.startswith("lambda")), None)
    if lam is not None:
        res.figures["xhw_roofline"] = figures.roofline_panels(lam, r.specs)
        res.figures["xhw_bias"] = figures.bias_by_gpu(lam)
    if r.plan is not None:
        T["xhw_plan"] = r.plan.table
        res.figures["xhw_plan"] = r.plan.plot()
    res.numbers.update(_numbers(r))
    T["claims_ch8"] = judge_all("8", "Lambda's and NVIDIA's tables, one GPU type left out", CLAIMS,
                                Ch8Quantities.of(r, res.params.coverage))
    res.readings = ch8_readings(res)
    return res
