"""Chapter 8's computation: measure here, predict there, into :class:`Ch8Results`.

Each study (:data:`~.params.DATASETS`) is one fit study across hardware (:func:`perfkit.study.run` with
``split="group:gpu"``): every GPU type of the data left out in turn, the form chosen and its intervals calibrated
on the other GPUs alone (nested), beside a random forest, gradient boosting and the log-linear form with spec
columns, each fitted without the held-out GPU. The GPU spec table (:mod:`perfkit.data.gpu_specs`) gives every row
its GPU's peak, FP32 rate, memory and link bandwidth.

- Lambda's rows: workload = (model, precision); the per-GPU batch is Lambda's (it differs by GPU memory).
- NVIDIA's DeepLearningExamples tables (DGX-1 V100 16 GB, DGX-2 V100 32 GB, DGX A100 40/80 GB): workload = (model,
  framework, variant, throughput unit) and ``mode`` (mixed: AMP/BF16, full: FP32/TF32), so that V100's FP32 rows
  and A100's TF32 rows are one workload, each on its own peak.

Then the roofline form fitted on every row of each study (its effective roofline: what bounds each workload), and
a planning example (:func:`perfkit.plan.plan`) with the model of the Lambda study of the plan's precision.
"""
from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ...data.external import EXTERNAL_DATASETS
from ...data.external_files import external_dir
from ...data.gpu_specs import load_gpu_specs
from ...data.lambda_labs import load_lambda
from ...data.nvidia_dle import load_nvidia_dle
from ..store import Results, storable
from .params import DATASET_NAMES, QUICK_DATASETS, Params

__all__ = ["Ch8Results", "CrossStudy", "compute", "inputs", "study_frame", "STEP_COLUMNS", "SELECTED"]

#: the configuration columns every study reads besides its workload: the GPU, its count and the per-GPU batch
STEP_COLUMNS = ["gpu", "precision", "n_gpus", "batch_per_gpu"]
#: the procedure's name in the tables (:data:`perfkit.study.grouped.SELECTED`)
SELECTED = "selected form"
_MIXED = ("amp", "bf16", "fp16")


@storable
@dataclass
class CrossStudy:
    """One study across hardware: every row predicted without its GPU, and what that says.

    ``rows``: per row its ``group`` (the canonical GPU), the workload columns, ``precision``, ``n_gpus``, ``batch_per_gpu``,
    ``measured``, one column per model (``selected form`` first) and the selected form's ``lower``/``upper``;
    ``groups``, ``pooled``, ``margin``, ``coverage``, ``coverage_nested``: :class:`~perfkit.study.result.StudyResult`'s
    tables and shares;
    ``search``: every candidate's median group MAPE on all groups (the saved model's choice, ``final``);
    ``model``: the saved model (:class:`~perfkit.model.uncertainty.group_intervals.GroupIntervalModel`);
    ``roofline``: per workload the roofline form's coefficients fitted on every row."""

    name: str
    label: str
    workload: list
    rows: object
    models: list
    groups: object
    pooled: object
    margin: dict
    coverage: float
    search: object
    final: str
    model: object
    roofline: object
    seconds: float
    coverage_nested: float | None = None  # the coverage with each GPU's width from the other GPUs alone


@dataclass
class Ch8Results(Results):
    """Chapter 8's results."""

    studies: dict
    specs: object  # the spec table's rows of the GPUs the studies hold
    plan: object = None  # the planning example (perfkit.plan.PlanResult: its ranked table and assumptions)
    plan_source: str = ""  # which study's model planned
    quick: bool = False


def inputs(p: Params) -> list[Path]:
    """Every file :func:`compute` reads: the spec table, Lambda's and NVIDIA's files and their provenance."""
    paths = [external_dir() / "hardware" / "gpu_specs.csv", external_dir() / "hardware.provenance.json",
             EXTERNAL_DATASETS["lambda"].provenance_path(),
             EXTERNAL_DATASETS["nvidia_dle"].provenance_path()]
    root = external_dir()
    return paths + sorted((root / "lambda").glob("*.csv")) + sorted((root / "nvidia_dle").glob("*.csv"))


def _lambda(p: Params, precision: str | None):
    f = load_lambda(screen=p.lambda_screen)
    if precision is not None:
        f = f[f["precision"] == precision]
    return f[["model", *STEP_COLUMNS, "t_iter"]].reset_index(drop=True), ["model"] + ([] if precision else
                                                                                      ["precision"])


def _nvidia():
    f = load_nvidia_dle()
    f = f[np.isfinite(f["t_iter"]) & (f["t_iter"] > 0)].copy()
    f["mode"] = np.where(f["precision"].isin(_MIXED), "mixed", "full")
    f["workload"] = f["model"] + " | " + f["framework"] + " | " + f["variant"] + " | " + f["throughput_unit"]
    return f[["workload", "mode", *STEP_COLUMNS, "t_iter"]].reset_index(drop=True), ["workload", "mode"]


def study_frame(p: Params, name: str):
    """``(rows, workload columns)`` of the study ``name``."""
    if name == "nvidia_dle":
        return _nvidia()
    return _lambda(p, None if name == "lambda" else name.split("_")[1])


def _spec(p: Params, workload):
    from ...study import FitSpec

    return FitSpec(target="t_iter", categorical=workload, form="roofline" if p.quick else "auto", hardware="gpu",
                   precision="precision", gpus="n_gpus", batch="batch_per_gpu", split="group:gpu", level=p.coverage,
                   baselines=() if p.quick else ("rf", "gb"), n_jobs=1 if p.quick else p.n_jobs)


def _roofline(frame, workload):
    """The roofline form on every row of the study (the joined spec columns), its coefficients per workload."""
    from ...data.gpu_specs import join_hardware
    from ...model.forms.roofline import RooflineModel

    X = join_hardware(frame.drop(columns="t_iter"), "gpu", "precision")
    m = RooflineModel(workload=workload, batch="batch_per_gpu", gpus="n_gpus").fit(X, frame["t_iter"])
    return m.coefficients()


def _study(p: Params, name: str, say) -> CrossStudy:
    from ...study import run

    frame, workload = study_frame(p, name)
    start = time.perf_counter()
    result = run(_spec(p, workload), frame, progress=False, echo=say)
    pred = result.predictions
    keep = list(dict.fromkeys([*workload, "precision", "n_gpus", "batch_per_gpu"]))
    rows = pd.concat([frame[keep].reset_index(drop=True),
                      pred.reset_index(drop=True)], axis=1)
    models = [c for c in pred.columns if c not in ("group", "measured", "lower", "upper")]
    return CrossStudy(name=name, label=DATASET_NAMES[name], workload=list(workload), rows=rows, models=models,
                      groups=result.groups.reset_index(), pooled=result.held_out.reset_index(),
                      margin=dict(result.margin), coverage=float(result.coverage), search=result.search_table,
                      final=result.model_summary.splitlines()[0].removeprefix("chosen on all groups: "),
                      model=result.model, roofline=_roofline(frame, workload),
                      seconds=time.perf_counter() - start, coverage_nested=result.coverage_nested)


def _plan(p: Params, studies: dict):
    """The planning example: the model of the Lambda study of the plan's precision (or both precisions')."""
    from ...plan import plan
    from ...plan.menu import lambda_menu

    source = f"lambda_{p.plan_precision}" if f"lambda_{p.plan_precision}" in studies else "lambda"
    study = studies[source]
    workload = {"model": p.plan_model, "precision": p.plan_precision}
    result = plan(study.model, workload, epochs=p.plan_epochs, dataset_size=p.plan_dataset_size,
                  menu=lambda_menu(amortize_years=p.amortize_years), deadline_hours=p.plan_deadline_hours,
                  coverage=p.coverage)
    return result, source


def _used_specs(studies: dict):
    specs = load_gpu_specs()
    used = set().union(*(set(s.rows["group"]) for s in studies.values()))
    cols = ["gpu", "architecture", "form_factor", "fp32_tflops", "tensor_fp16_tflops", "tensor_tf32_tflops",
            "mem_gbps", "mem_gb", "link", "link_gbps", "confidence"]
    return specs[specs["gpu"].isin(used)][cols].reset_index(drop=True)


def compute(p: Params) -> Ch8Results:
    """Every study of Chapter 8 (single-threaded BLAS: the results do not depend on the core count)."""
    names = list(p.datasets)[:QUICK_DATASETS] if p.quick else list(p.datasets)

    def say(line):
        if p.progress:
            print(line, file=sys.stderr, flush=True)

    studies = {}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant columns in a fold, convergence notes of the baselines
        for name in names:
            say(f"Chapter 8: {DATASET_NAMES[name]}")
            studies[name] = _study(p, name, say)
        planned, source = _plan(p, studies)
    return Ch8Results(studies=studies, specs=_used_specs(studies), plan=planned, plan_source=source, quick=p.quick)
