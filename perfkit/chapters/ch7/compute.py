"""Chapter 7's computation: measure small, predict large, into :class:`Ch7Results`.

Three extrapolation studies, each fitted on the small end of one scale column and scored beyond it
(:mod:`perfkit.model.uncertainty.extrapolation`):

1. **Pollux's traces** (six jobs on 16 nodes × 4 T4, :func:`perfkit.data.pollux.load_pollux`), each job
   modelled on its own: fit on the rows with at most ``fit_max_gpus`` GPUs, predict those with
   ``test_min_gpus``–``test_max_gpus``. The step-time form is chosen among the phase-aware candidates
   (:func:`candidates`) by inner extrapolation splits of the fit rows only (:func:`inner_gpu_splits`). Its
   intervals are calibrated per job on the same inner splits and widened by κ, how much further the **other** jobs'
   scored rows fell than their own inner splits promised (:func:`~perfkit.model.uncertainty.extrapolation.calibrate_transfer`,
   leave-one-job-out: no scored row of a job calibrates that job's interval). Baselines on the same split: Pollux's own model
   (re-implemented), the log-linear form, and a random forest and gradient boosting on log features tuned by
   cross-validation on the fit rows. The measured ``sync_time`` is given to ``fit`` only.
2. **Our Chapter 4 file** in the one extrinsic factor we can stretch: fit on batch <= ``ch4_fit_max_batch``,
   predict the larger batches (the thesis form, the log-linear and hybrid forms, random forest, boosting).
3. **Our Chapter 3 file** in workers: fit on <= ``ch3_fit_max_workers`` workers, predict more, per network.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from ..._io import read_json
from ...data.external import EXTERNAL_DATASETS
from ...data.measured import load_steps, provenance_path
from ...model.selection.baselines import LABELS, make_baseline
from ...model.selection.by_scale import step_family
from ...model.uncertainty.extrapolation import (calibrate_transfer, error_table, extrapolation_interval,
                                                extrapolation_predictions, scale_split, select_median_of_top)
from ...model.forms.loglinear import LogLinearModel
from ...model.forms.generic import GenericPerformanceModel
from ...model.selection.search import make_form
from ...model.uncertainty.scale_intervals import ScaleIntervalModel, inner_splits
from ...model.forms.median import MedianOfModels
from ...model.forms.stepmodels import PolluxStepModel
from ...model.uncertainty.whatif import whatif
from ...schema import ROLES, resolve
from ..store import Results, storable
from .params import Params, inner_gpu_splits
from .small_runs import finite_number, read_small_runs

__all__ = ["Ch7Results", "ScaleStudy", "compute", "inputs", "candidates", "pollux_baselines", "tuned_trees",
           "select_step_model", "SELECTED", "CONFIG", "read_clusters", "read_extrap", "clusters_split_note"]

#: the configuration columns of a step: GPUs, per-GPU batch, nodes
CONFIG = ["n_gpus", "batch_per_gpu", "n_nodes"]
#: the name of the selected phase-aware model in the tables
SELECTED = "selected"
_SEED = 0


@storable
@dataclass
class ScaleStudy:
    """One extrapolation study: the test rows with every model's prediction, and their errors.

    ``predictions``: the rows beyond ``fit_max`` (group, the scale column, ``factor`` = column / fit_max, target,
    and one column per model); ``errors``: :func:`perfkit.model.uncertainty.extrapolation.error_table` of every model on the
    rows between ``test_min`` and ``test_max``.
    """

    name: str
    column: str
    fit_max: float
    test_min: float
    test_max: float
    target: str
    groups: str | None
    models: list
    predictions: object
    errors: object
    n_fit: int


@dataclass
class Ch7Results(Results):
    """Chapter 7's results."""

    source: str
    gpu_counts: list
    selected: str
    selection: object
    q_by_job: dict
    coverage_level: float
    formulas: dict
    pollux: ScaleStudy
    measured: object
    ch4: ScaleStudy | None = None
    ch3: ScaleStudy | None = None
    whatif_ch4: object = None  # perfkit whatif of the Chapter 4 log-linear form over every batch size
    extrap: dict | None = None  # Extra-P's MAPEs on the same split (benchmarks/bench_scale.py), or why not
    calibration: object = None  # per job: q_inner, kappa, q, n_reference (calibrate_transfer)
    selection_k: object = None  # the inner score of the median of the best k candidates, per k
    clusters: object = None  # the same protocol on other clusters' traces (bench_scale_clusters.py), or None
    clusters_note: str = ""  # why the other clusters are not shown (their file was made on another Pollux split)
    small_runs: object = None  # the CLI from small runs on every cluster (bench_small_runs.py --summary), or None

    @property
    def test(self):
        """Pollux's scored rows (test_min..test_max GPUs) with their predictions and the selected model's interval."""
        p = self.pollux.predictions
        return p[(p["n_gpus"] >= self.pollux.test_min) & (p["n_gpus"] <= self.pollux.test_max)]


def candidates(quick: bool = False) -> dict:
    """The phase-aware step-time candidates (simplest first: a tie goes to the first) and Pollux's model
    (:func:`perfkit.model.selection.by_scale.step_family` on the traces' columns)."""
    return step_family(quick=quick)


def select_step_model(fit_rows, splits, forms: dict, predict_drop=("sync_time",)):
    """The step-time model of the traces, chosen on inner splits of the fit rows only: the median of the best k
    candidates of ``forms`` (:func:`perfkit.model.uncertainty.extrapolation.select_median_of_top`; k = 1 is the best
    candidate itself). Returns ``(label, unfitted model, candidate scores, scores per k)``."""
    names, scores, k_scores = select_median_of_top(forms, fit_rows, "n_gpus", "t_iter", list(splits),
                                                   predict_drop=list(predict_drop))
    if len(names) == 1:
        return names[0], forms[names[0]], scores, k_scores
    label = f"median of the best {len(names)}: " + ", ".join(names)
    return label, MedianOfModels([(n, forms[n]) for n in names]), scores, k_scores


def _log_config(X):
    return np.log(np.asarray(X[CONFIG], dtype=float))


def tuned_trees(kind: str, quick: bool = False):
    """A random forest (``"rf"``) or gradient boosting (``"gb"``) on the log configuration and log target,
    tuned by 5-fold cross-validation on the rows it is fitted on."""
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    if kind == "rf":
        est = RandomForestRegressor(n_estimators=50 if quick else 100, random_state=_SEED, n_jobs=1)
        grid = {"min_samples_leaf": [3] if quick else [1, 3, 10], "max_features": [1.0] if quick else [1.0, 0.6]}
    else:
        est = GradientBoostingRegressor(random_state=_SEED)
        grid = ({"n_estimators": [100], "max_depth": [3]} if quick else
                {"n_estimators": [100, 300], "max_depth": [2, 3], "learning_rate": [0.05, 0.1]})
    search = GridSearchCV(est, grid, cv=KFold(3 if quick else 5, shuffle=True, random_state=_SEED),
                          scoring="neg_mean_absolute_error", n_jobs=1)
    return make_pipeline(FunctionTransformer(_log_config),
                         TransformedTargetRegressor(search, func=np.log, inverse_func=np.exp))


def pollux_baselines(quick: bool = False) -> dict:
    """The models every extrapolation of the traces is compared with, on the same split."""
    return {"Pollux's model": PolluxStepModel(),
            "log-linear": LogLinearModel(extrinsic=CONFIG),
            "log-linear, no interactions": LogLinearModel(extrinsic=CONFIG, interactions=False),
            "random forest (tuned)": tuned_trees("rf", quick),
            "gradient boosting (tuned)": tuned_trees("gb", quick)}


def inputs(p: Params) -> list[Path]:
    """Every file :func:`compute` reads: Pollux's traces and provenance, our measured files and theirs."""
    ds = EXTERNAL_DATASETS["pollux"]
    root = ds.provenance_path().parent
    paths = [ds.provenance_path(), *sorted((root / "pollux").glob("*/*.csv"))]
    ours = [resolve(v) for v in (p.ch4_dataset, p.ch3_dataset) if v]
    extra = [resolve(v) for v in (p.extrap_results, p.clusters_results, p.small_runs_results)
             if v and resolve(v).exists()]
    return paths + ours + [provenance_path(path) for path in ours] + extra


#: the columns of a cluster's row in ``clusters_results`` (``benchmarks/bench_scale_clusters.py``)
CLUSTER_KEYS = ("cluster", "jobs", "fit_max", "test_min", "test_max", "inner_splits", "selected_mape", "place",
                "models", "best_baseline", "best_baseline_mape", "coverage", "test_rows", "kendall_tau_vs_pollux")
#: columns a row may lack (results written before them): the selected model's margin over the best baseline, points,
#: and its 95 % interval ``[lo, hi]``; the selected model's and the best baseline's scores on the inner splits (%)
OPTIONAL_CLUSTER_KEYS = ("margin", "margin_interval", "inner_selected", "inner_best_baseline",
                         "inner_best_baseline_score")


def read_clusters(p: Params) -> list | None:
    """The rows of ``clusters_results`` (the same protocol on every cluster's traces, written by
    ``benchmarks/bench_scale_clusters.py``), or None when it is "" or missing; a file that is not such a result is
    one :class:`~perfkit.chapters.result.ParameterError` naming it."""
    from ..result import ParameterError

    if not p.clusters_results or not resolve(p.clusters_results).exists():
        return None
    try:
        rows = read_json(resolve(p.clusters_results), str(p.clusters_results))["clusters"]
        if not isinstance(rows, list) or not rows:
            raise ValueError("'clusters' is not a non-empty list")
        out = [{**{k: r[k] for k in CLUSTER_KEYS}, **{k: r.get(k) for k in OPTIONAL_CLUSTER_KEYS}} for r in rows]
        for r in out:
            _check_cluster_row(r)
        names = [r["cluster"] for r in out]
        if len(set(names)) < len(names):
            raise ValueError(f"a cluster appears twice in {names}")
        return out
    except (ValueError, KeyError, TypeError) as exc:
        missing = f"no key {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0]
        raise ParameterError(f"clusters_results: {p.clusters_results} is not a bench_scale_clusters.py result "
                             f"(a 'clusters' list of rows with {', '.join(CLUSTER_KEYS)}): {missing}") from None


def clusters_split_note(p: Params, rows) -> str:
    """Why the rows of ``clusters_results`` do not belong beside this chapter's Pollux study, or "": the file's
    Pollux row was computed on another split (its other clusters then used that protocol too)."""
    split = (p.fit_max_gpus, p.test_min_gpus, p.test_max_gpus)
    for r in rows or ():
        theirs = (r["fit_max"], r["test_min"], r["test_max"])
        if r["cluster"].lower() == "pollux" and theirs != split:
            return (f"{p.clusters_results} was computed on the Pollux split fit <= {theirs[0]:g} → {theirs[1]:g}–"
                    f"{theirs[2]:g} GPUs, not this chapter's fit <= {split[0]:g} → {split[1]:g}–{split[2]:g}; run "
                    "benchmarks/bench_scale_clusters.py on this split to compare the clusters")
    return ""


def _check_cluster_row(r: dict) -> None:
    """One row of ``clusters_results``: every value of the type and range ``bench_scale_clusters.py`` writes; else
    one ValueError naming the cluster and the key."""
    where = f"cluster {r['cluster']!r}" if isinstance(r["cluster"], str) else f"cluster {r['cluster']!r} (a name?)"
    bad = [k for k, ok in (
        ("cluster", isinstance(r["cluster"], str) and r["cluster"]),
        ("jobs", isinstance(r["jobs"], list) and r["jobs"] and all(isinstance(j, str) for j in r["jobs"])),
        *((k, finite_number(r[k], 0) and r[k] > 0) for k in ("fit_max", "test_min", "test_max")),
        *((k, isinstance(r[k], int) and not isinstance(r[k], bool) and r[k] >= 1)
          for k in ("inner_splits", "place", "models", "test_rows")),
        ("place", r["place"] <= r["models"] if isinstance(r["place"], int) and isinstance(r["models"], int) else 1),
        ("best_baseline", isinstance(r["best_baseline"], str)),
        *((k, finite_number(r[k], 0)) for k in ("selected_mape", "best_baseline_mape")),
        ("coverage", finite_number(r["coverage"], 0, 1)),
        ("kendall_tau_vs_pollux", r["kendall_tau_vs_pollux"] is None or finite_number(r["kendall_tau_vs_pollux"], -1, 1)),
        ("margin", r["margin"] is None or finite_number(r["margin"]))) if not ok]
    if bad:
        raise ValueError(f"{where}: {bad[0]} {r[bad[0]]!r} is not what bench_scale_clusters.py writes")
    iv = r["margin_interval"]
    if iv is not None and not (isinstance(iv, list) and len(iv) == 2 and all(finite_number(v) for v in iv)
                               and iv[0] <= iv[1]):
        raise ValueError(f"{where}: margin_interval {iv!r} is not [lo, hi]")
    for key in ("inner_selected", "inner_best_baseline_score"):
        if r[key] is not None and not finite_number(r[key], 0):
            raise ValueError(f"{where}: {key} {r[key]!r} is not a number")
    if (r["inner_selected"] is None) != (r["inner_best_baseline_score"] is None) or (
            r["inner_best_baseline_score"] is not None and not isinstance(r["inner_best_baseline"], str)):
        raise ValueError(f"{where}: inner_selected, inner_best_baseline and inner_best_baseline_score go together "
                         "(numbers and a baseline's name)")


def read_extrap(p: Params) -> dict:
    """Extra-P's MAPEs on this chapter's split from ``extrap_results`` (``benchmarks/bench_scale.py``): by job,
    the median and by factor, or ``{"status": "not run", "note": why}`` (no file, another split, not run)."""
    if not p.extrap_results:
        return {"status": "not run", "note": 'extrap_results is ""'}
    path = resolve(p.extrap_results)
    if not path.exists():
        return {"status": "not run", "note": f"{p.extrap_results} not found (run benchmarks/bench_scale.py)"}
    from ..result import ParameterError

    try:
        e = read_json(path, f"extrap_results: {p.extrap_results}").get("extrap", {})
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    if not isinstance(e, dict):
        raise ParameterError(f"extrap_results: {p.extrap_results} is not a bench_scale.py result (its 'extrap' is "
                             "not an object)")
    split = (e.get("fit_max"), e.get("test_min"), e.get("test_max"))
    if e.get("status") != "ok":
        return {"status": "not run", "note": str(e.get("note", f"status {e.get('status')!r} in {p.extrap_results}"))}
    if split != (p.fit_max_gpus, p.test_min_gpus, p.test_max_gpus):
        return {"status": "not run", "note": f"{p.extrap_results} is for the split {split}, not this one"}
    tables = {k: e.get(k) for k in ("by_job", "by_factor")}
    bad = [k for k, v in tables.items() if not (isinstance(v, dict) and all(
        isinstance(x, str) and finite_number(m, 0) for x, m in v.items()))]
    if bad or not finite_number(e.get("median"), 0):
        raise ParameterError(f"extrap_results: {p.extrap_results}: extrap.{bad[0] if bad else 'median'} is not "
                             "what bench_scale.py writes (MAPEs >= 0 by job and by factor, and their median)")
    return {"status": "ok", "by_job": e["by_job"], "median": e["median"], "by_factor": e["by_factor"],
            "formulas": e.get("formulas", {}), "version": e.get("version", "")}


def _say(p: Params, text: str) -> None:
    if p.progress:
        print(f"[perfkit] ch7 · {text}", flush=True)


def _study(name, models, frame, column, fit_max, target, groups, test_min, test_max, predict_drop=()):
    """Fit every model on the rows <= fit_max (per group) and predict every row beyond; score test_min..test_max."""
    preds, errors = None, []
    for label, model in models.items():
        pred = extrapolation_predictions(model, frame, column, fit_max, target, groups, predict_drop=predict_drop)
        scored = pred[(pred[column] >= test_min) & (pred[column] <= test_max)]
        errors.append(error_table(scored, target, groups, label))
        keep = [c for c in (groups, column, "factor", "distance", target) if c is not None]
        if preds is None:
            preds = pred[[*keep, *[c for c in ("n_nodes", "batch_per_gpu", "study") if c in pred.columns]]].copy()
        preds[label] = pred["predicted"].to_numpy()
    n_fit = len(scale_split(frame, column, fit_max)[0])
    return ScaleStudy(name=name, column=column, fit_max=float(fit_max), test_min=float(test_min),
                      test_max=float(test_max), target=target, groups=groups, models=list(models),
                      predictions=preds.reset_index(drop=True),
                      errors=pd.concat(errors, ignore_index=True), n_fit=n_fit)


def _pollux(p: Params):
    """Study 1: select the phase-aware form (inner splits), compare it with the baselines, calibrate intervals."""
    frame = EXTERNAL_DATASETS["pollux"].load()[["job", "study", *CONFIG, "t_iter", "sync_time"]]
    splits = inner_gpu_splits(frame["n_gpus"], p)
    fit_rows = scale_split(frame, "n_gpus", p.fit_max_gpus)[0]
    forms = candidates(p.quick)
    _say(p, f"Pollux: choosing among {len(forms)} step-time forms on inner splits {list(splits)}")
    best, chosen, scores, k_scores = select_step_model(fit_rows, splits, forms)  # unfitted: the scores fit clones
    _say(p, f"Pollux: {best} chosen; fitting it and {len(pollux_baselines())} baselines per job")
    study = _study("pollux", {SELECTED: chosen, **pollux_baselines(p.quick)}, frame, "n_gpus", p.fit_max_gpus,
                   "t_iter", "job", p.test_min_gpus, p.test_max_gpus, predict_drop=["sync_time"])
    _say(p, "Pollux: calibrating the intervals (each job's inner splits, the other jobs' inflation)")
    calibration = calibrate_transfer(chosen, frame, "n_gpus", p.fit_max_gpus, "t_iter", splits,
                                     test_min=p.test_min_gpus, test_max=p.test_max_gpus, alpha=1 - p.coverage,
                                     predict_drop=["sync_time"])
    q = {str(k): float(v) for k, v in calibration["q"].items()}
    pr = study.predictions
    pr["lower"], pr["upper"] = extrapolation_interval(pr[SELECTED], pr["n_gpus"], p.fit_max_gpus, pr["job"].map(q))
    formulas = {}
    for job, rows in fit_rows.groupby("job", sort=True):
        formulas[job] = clone(chosen).fit(rows.drop(columns=["t_iter", "job"]), rows["t_iter"].to_numpy()).formula()
    return frame, best, scores, q, formulas, study, calibration, k_scores


def _ch4_frame(p: Params) -> pd.DataFrame | None:
    """Our Chapter 4 file (``ch4_dataset``) as the configurations and ``epoch_time``; None when it is ""; a file
    that is not a Chapter 4 output is one ParameterError naming it."""
    from ..result import ParameterError

    if not p.ch4_dataset:
        return None
    try:
        X, y, _ = load_steps(resolve(p.ch4_dataset), target="epoch_time", roles="ch4")
    except ValueError as exc:
        raise ParameterError(f"ch4_dataset: {str(exc).splitlines()[0]}") from None
    return X.assign(epoch_time=np.asarray(y, dtype=float))


def _ch4(p: Params, frame) -> ScaleStudy | None:
    """Study 2: our Chapter 4 file (:func:`_ch4_frame`), fitted on the small batches and predicting the large
    ones."""
    if frame is None:
        return None
    roles = ROLES["ch4"]
    if p.quick:
        frame = frame.iloc[:400]
    models = {"thesis form (eq. 4.4)": GenericPerformanceModel(**roles, random_state=_SEED,
                                                               **({"maxiter": 60} if p.quick else {})),
              "log-linear": make_form("loglinear", **roles),
              "hybrid (LeNet-5 costs)": make_form("hybrid", **roles, network="lenet5"),
              **{LABELS[k]: make_baseline(k, **roles, random_state=_SEED) for k in ("rf", "gb")}}
    big = float(frame["batch_size"].max())
    _say(p, f"our Chapter 4 file: fit on batch <= {p.ch4_fit_max_batch}, predict up to {big:g}")
    study = _study("ch4_batch", models, frame, "batch_size", p.ch4_fit_max_batch, "epoch_time", None,
                   np.nextafter(p.ch4_fit_max_batch, np.inf), big)
    return study, _ch4_whatif(frame, models["log-linear"], p)


def _ch4_whatif(frame, form, p: Params):
    """``perfkit whatif`` of the log-linear form fitted on batch <= ``ch4_fit_max_batch`` with intervals that
    widen beyond it (:class:`~perfkit.model.uncertainty.scale_intervals.ScaleIntervalModel`), over every measured batch size,
    from the first fitted configuration."""
    fit = frame[frame["batch_size"] <= p.ch4_fit_max_batch]
    X, y = fit.drop(columns=["epoch_time"]), fit["epoch_time"].to_numpy(dtype=float)
    splits = inner_splits(X["batch_size"], p.ch4_fit_max_batch)
    model = ScaleIntervalModel(form, column="batch_size", fit_max=p.ch4_fit_max_batch, splits=splits).fit(X, y)
    base = X.iloc[0].to_dict()
    sizes = sorted(int(v) for v in frame["batch_size"].unique())
    return whatif(model, base, "batch_size", sizes, p.coverage)


def _ch3_frame(p: Params) -> pd.DataFrame | None:
    """One row per timed iteration of each successful Chapter 3 sample of ``ch3_dataset``: the slowest worker's
    ``t_iter``; None when it is ""; a file that is not a Chapter 3 output, or a cell of a successful row that is no
    measurement (:func:`perfkit.data.measured.phase_rows`), is one ParameterError naming it."""
    from ...data.measured import phase_rows
    from ..result import ParameterError

    if not p.ch3_dataset:
        return None
    try:
        d = phase_rows(resolve(p.ch3_dataset))
    except ValueError as exc:
        raise ParameterError(f"ch3_dataset: {str(exc).splitlines()[0]}") from None
    it = d.groupby(["model", "mode", "workers", "iteration"], sort=True)["t_iter"].max().reset_index()
    return it.drop(columns=["iteration"])


def _ch3(p: Params, frame) -> ScaleStudy | None:
    """Study 3: our Chapter 3 file (:func:`_ch3_frame`), each network fitted on few workers and predicting more."""
    if frame is None:
        return None
    if p.quick:
        frame = frame.groupby(["model", "mode", "workers"], sort=True).head(40).reset_index(drop=True)
    roles = dict(categorical=["mode"], extrinsic=["workers"])
    models = {"log-linear": LogLinearModel(**roles),
              "thesis form (eq. 4.4)": GenericPerformanceModel(**roles, random_state=_SEED,
                                                               **({"maxiter": 60} if p.quick else {})),
              **{LABELS[k]: make_baseline(k, **roles, random_state=_SEED) for k in ("rf", "gb")}}
    most = float(frame["workers"].max())
    _say(p, f"our Chapter 3 file: fit on <= {p.ch3_fit_max_workers} workers, predict up to {most:g}")
    return _study("ch3_workers", models, frame, "workers", p.ch3_fit_max_workers, "t_iter", "model",
                  np.nextafter(p.ch3_fit_max_workers, np.inf), most)


def _check_beyond(frame, column, name, fit_max) -> None:
    """The study's file has values of ``column`` above ``fit_max`` (parameter ``name``) to predict, and some at or
    below it to fit on; else one ParameterError naming the parameter."""
    from ..result import ParameterError

    if frame is None:
        return
    v = frame[column].to_numpy(dtype=float)
    if not ((v <= fit_max).any() and (v > fit_max).any()):
        raise ParameterError(f"{name}: got {fit_max}; the file's {column} runs from {v.min():g} to {v.max():g}, so "
                             "there must be rows at or below it to fit on and rows above it to predict")


def compute(p: Params) -> Ch7Results:
    """Every study of Chapter 7 (single-threaded BLAS: the results do not depend on the core count)."""
    clusters, extrap = read_clusters(p), read_extrap(p)  # before any fit: a bad file is one error at once
    small_runs = read_small_runs(p)
    clusters_note = clusters_split_note(p, clusters)
    clusters = None if clusters_note else clusters
    ch4_frame, ch3_frame = _ch4_frame(p), _ch3_frame(p)  # ... and a bad dataset too
    _check_beyond(ch4_frame, "batch_size", "ch4_fit_max_batch", p.ch4_fit_max_batch)
    _check_beyond(ch3_frame, "workers", "ch3_fit_max_workers", p.ch3_fit_max_workers)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant columns and convergence notes of the baselines' refits
        frame, best, scores, q, formulas, study, calibration, k_scores = _pollux(p)
        ch4, w4 = _ch4(p, ch4_frame) or (None, None)
        ch3 = _ch3(p, ch3_frame)
    return Ch7Results(source="data/external/pollux (load_pollux)", gpu_counts=sorted(frame["n_gpus"].unique().tolist()),
                      selected=best, selection=scores, q_by_job=q, coverage_level=p.coverage, formulas=formulas,
                      pollux=study, measured=frame, ch4=ch4, ch3=ch3, whatif_ch4=w4, extrap=extrap,
                      calibration=calibration, selection_k=k_scores, clusters=clusters,
                      clusters_note=clusters_note, small_runs=small_runs)
