"""Measure small, predict large: step-time models fitted on <= 16 GPUs predict 32-64 GPUs (Pollux's traces).

Run: ``.venv/bin/python benchmarks/bench_scale.py``. Writes ``benchmarks/results/scale.json`` and ``.md``
with machine info. About a minute on 2 cores (every fit single-threaded).

Data: Pollux's published traces (OSDI 2021, AWS, 16 nodes × 4 NVIDIA T4; Apache-2.0), six jobs, through
:func:`perfkit.data.pollux.load_pollux` (shipped under ``data/external/pollux/``). Protocol, per job (each job modelled on its own): fit on every row with ``n_gpus`` <= 16 (all
placement rows and the scalability rows with <= 16 GPUs), test on the rows with 32-64 GPUs; the rows with
20, 24 and 28 GPUs are in neither set. Metric: MAPE (%) of ``t_iter`` on the test rows, per job, per
extrapolation factor (n_gpus / 16: 2 = 32 GPUs ... 4 = 64 GPUs) and the median over the six jobs.
``sync_time`` (a measured phase) is given to ``fit`` only: every prediction is made without it.

Models: Chapter 7's (``perfkit/chapters/ch7/compute.py``): the phase-aware model selected by the inner
protocol (below), :class:`PolluxStepModel`, the project's :class:`LogLinearModel` (extrinsic n_gpus,
batch_per_gpu, n_nodes; default lasso with interactions, and with ``interactions=False``), and a random forest
and gradient boosting on the log configuration columns (log target), tuned by 5-fold CV on the fit rows only
(fixed seeds). Chapter 7 presents the same protocol; this script times it and records the machine.

Extra-P (PMNF automated empirical performance modelling, PyPI ``extrap`` 4.2.5) is one more row: per job,
one model fitted on the job's fit rows over the parameters n_gpus, batch_per_gpu and n_nodes (a parameter with
one value in the job's fit rows is left out; rows with identical coordinates are repetitions, Extra-P models
their mean), Extra-P's default modeler and options, predicting the same test rows. It runs in its own virtualenv
(``build/extrap-venv``; it pins numpy < 2, never a perfkit dependency) through ``bench_extrap.py``'s helpers
(:func:`bench_extrap.plan_variant` with one group per job, :func:`bench_extrap.run_helper`; the input files
are under ``build/extrap-work/scale-*.jsonl``). Without that virtualenv the row says "not run" and the rest
runs as before. Its MAPEs, formulas and version are in ``scale.json`` under ``"extrap"``.

Selection without the test rows: every candidate of :func:`candidates` is scored by inner extrapolation
splits of the fit rows (fit <= 4 GPUs → score 8-16, the same 2-4× factors as the outer protocol; <= 6 →
10-16; <= 8 → 12-16), score = mean over the splits of the median MAPE over the jobs; the best is refitted on
the fit rows. Its 90 % intervals are split-conformal on the same inner splits (per job, scores
|log(y/ŷ)| / d with d = 1 + log2(n_gpus / fit_max), the interval ŷ·exp(±q·d)).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info, numeric_summary, write_results  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "scale"
ROOT = Path(__file__).resolve().parents[1]
EXTRAP_PYTHON = ROOT / "build" / "extrap-venv" / "bin" / "python"  # bench_extrap.DEFAULT_PYTHON
EXTRAP = "Extra-P (PMNF)"
EXTRAP_OPTIONS = "default"  # bench_extrap.OPTIONS: Extra-P's default modeler settings
JOBS = ("bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3")
CONFIG = ["n_gpus", "batch_per_gpu", "n_nodes"]
FIT_MAX, TEST_MIN, TEST_MAX = 16, 32, 64
INNER_SPLITS = [(4, 8, 16), (6, 10, 16), (8, 12, 16)]
ALPHA = 0.1
SEED = 0


# ------------------------------------------------------------------------------ data
def traces():
    """(frame of job, study, n_gpus, n_nodes, batch_per_gpu, t_iter, sync_time; where it came from)."""
    from perfkit.data.pollux import load_pollux

    cols = ["job", "study", *CONFIG, "t_iter", "sync_time"]
    return load_pollux()[cols].reset_index(drop=True), "data/external/pollux (perfkit.data.pollux.load_pollux())"


# ------------------------------------------------------------------------------ models
def candidates() -> dict:
    """The phase-aware candidates and Pollux's model: Chapter 7's (:func:`perfkit.chapters.ch7.compute.candidates`)."""
    from perfkit.chapters.ch7.compute import candidates as chapter_candidates

    return chapter_candidates()


def baselines() -> dict:
    """Chapter 7's baselines (:func:`perfkit.chapters.ch7.compute.pollux_baselines`)."""
    from perfkit.chapters.ch7.compute import pollux_baselines

    return pollux_baselines()


# ------------------------------------------------------------------------------ protocol
def run(frame, extrap_python=EXTRAP_PYTHON):
    import pandas as pd
    from sklearn.base import clone

    from perfkit.model.extrapolation import (calibrate_extrapolation, extrapolation_errors, extrapolation_interval,
                                             interval_coverage, scale_split, select_by_extrapolation)

    fit_rows, _ = scale_split(frame, "n_gpus", FIT_MAX)
    t0 = time.perf_counter()
    best, scores = select_by_extrapolation(candidates(), fit_rows, "n_gpus", "t_iter", INNER_SPLITS,
                                           predict_drop=["sync_time"])
    t_select = time.perf_counter() - t0
    chosen = candidates()[best]
    models = {f"selected: {best}": chosen, **baselines()}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table, preds = extrapolation_errors(models, frame, "n_gpus", FIT_MAX, "t_iter", test_min=TEST_MIN,
                                            test_max=TEST_MAX, predict_drop=["sync_time"], return_predictions=True)
    t_outer = time.perf_counter() - t0
    q = calibrate_extrapolation(chosen, fit_rows, "n_gpus", "t_iter", INNER_SPLITS, alpha=ALPHA,
                                predict_drop=["sync_time"])
    p = preds[f"selected: {best}"]
    lo, hi = extrapolation_interval(p.predicted, p.n_gpus, FIT_MAX, p.job.map(q))
    inside = (p.t_iter >= lo) & (p.t_iter <= hi)
    cover = {"all": interval_coverage(p.t_iter, lo, hi), "n": int(len(p)),
             "by_job": {j: float(inside[p.job == j].mean()) for j in JOBS},
             "by_factor": {f"{f:g}": float(inside[p.factor == f].mean()) for f in sorted(p.factor.unique())},
             "q_by_job": q, "median_relative_halfwidth": float(np.median((hi - lo) / 2 / p.predicted))}
    formulas = {j: clone(chosen).fit(*_xy(fit_rows[fit_rows.job == j])).formula() for j in JOBS}
    seconds = {"selection": t_select, "outer": t_outer}
    xtable, extrap = run_extrap(frame, extrap_python)
    if xtable is not None:
        table = pd.concat([table, xtable], ignore_index=True)
    seconds["extrap"] = extrap["seconds"]["wall"] if "seconds" in extrap else None
    return dict(best=best, scores=scores, table=table, coverage=cover, formulas=formulas, seconds=seconds,
                extrap=extrap)


def _xy(d):
    return d.drop(columns=["t_iter"]), d.t_iter.to_numpy(dtype=float)


def run_extrap(frame, python):
    """Extra-P on the outer split, one model per job (``bench_extrap``'s helpers, variant b_all grouped by job).

    Returns ``(error table rows as extrapolation_errors' table, the "extrap" record for scale.json)``; the table
    is None when Extra-P did not run (no virtualenv at ``python``)."""
    from perfkit.model.extrapolation import error_table, scale_split

    where = Path(os.path.abspath(python))  # not resolved: the venv's python links to the base interpreter
    shown = str(where.relative_to(ROOT)) if where.is_relative_to(ROOT) else str(python)
    base = dict(model=EXTRAP, parameters_offered=CONFIG, options=EXTRAP_OPTIONS, python_path=shown)
    if not Path(python).exists():
        return None, dict(base, status="not run", note=f"no Extra-P environment at {python}: python3 -m venv "
                          "build/extrap-venv && build/extrap-venv/bin/pip install extrap==4.2.5")
    import bench_extrap as bx

    t0 = time.perf_counter()
    fit_rows, _ = scale_split(frame, "n_gpus", FIT_MAX)
    _, test_rows = scale_split(frame, "n_gpus", FIT_MAX, TEST_MIN, TEST_MAX)
    Xf, Xt = fit_rows[["job", *CONFIG]].reset_index(drop=True), test_rows[["job", *CONFIG]].reset_index(drop=True)
    yf = fit_rows.t_iter.to_numpy(dtype=float)
    roles = {"numeric": CONFIG, "extrinsic": [], "categorical": ["job"]}
    bx.WORK.mkdir(parents=True, exist_ok=True)
    (bx.WORK / "extrap_model.py").write_text(bx.HELPER.lstrip())
    tasks, owner, info = bx.plan_variant("scale", "b_all", Xf, Xt, yf, roles, "scale")
    distinct = info.pop("_distinct")
    info.pop("_diagnostic", None)
    out, wall = bx.run_helper(python, tasks, f"scale-{EXTRAP_OPTIONS}", bx.OPTIONS[EXTRAP_OPTIONS])
    pred = np.full(len(Xt), np.nan)
    by_id = {t["id"]: t for t in out["tasks"]}
    models, errors, warns = {}, {}, {}
    for t in tasks:
        r = by_id[t["id"]]
        for w in r.get("warnings", []):
            warns[w] = warns.get(w, 0) + 1
        if not r["ok"]:
            errors[t["group"]] = r["error"]
            continue
        models[t["group"]] = dict(formula=r["formula"], params=r["params"],
                                  values_per_param={c: distinct[t["group"]][c] for c in r["params"]},
                                  coordinates=r["coordinates"], fit_rows=len(t["fit_rows"]), test_rows=len(t["rows"]),
                                  smape_fit=r["smape"], fit_seconds=round(r["fit_seconds"], 4))
        pred[t["rows"]] = [np.nan if v is None else v for v in r["predictions"]]
    ok = np.isfinite(pred)
    p = test_rows.reset_index(drop=True).assign(predicted=pred, factor=Xt.n_gpus.to_numpy(dtype=float) / FIT_MAX)
    table = error_table(p[ok], "t_iter", "job", EXTRAP) if ok.any() else None
    rec = dict(base, status="ok" if ok.all() else ("partial" if ok.any() else "no model"),
               version=out["extrap_version"], extrap_numpy=out["numpy"], extrap_python=out["python"],
               modeler=sorted({by_id[t["id"]].get("modeler") for t in tasks if by_id[t["id"]]["ok"]}),
               fit_max=FIT_MAX, test_min=TEST_MIN, test_max=TEST_MAX,
               rows_predicted=int(ok.sum()), rows_unpredictable=int((~ok).sum()),
               unpredictable_reasons=info.get("unpredictable_reasons", {}),
               negative_predictions=int(np.sum(pred[ok] <= 0)), model_errors=errors, warnings=warns,
               formulas={j: m["formula"] for j, m in models.items()}, models=models)
    if table is not None:
        allf = table[table.factor.astype(str) == "all"].set_index("group").mape
        med = table[(table.group == "median") & (table.factor.astype(str) != "all")]
        per = table[(table.group != "median") & (table.factor.astype(str) != "all")]
        rec.update(by_job={j: float(allf[j]) for j in JOBS if j in allf.index}, median=float(allf["median"]),
                   by_factor={f"{float(f):g}": float(m) for f, m in zip(med.factor, med.mape)},
                   by_job_factor={j: {f"{float(f):g}": float(m) for f, m in zip(g.factor, g.mape)}
                                  for j, g in per.groupby("group", sort=False)})
    rec["seconds"] = dict(wall=time.perf_counter() - t0, helper_wall=wall,
                          fit=float(sum(m["fit_seconds"] for m in models.values())))
    return table, rec


# ------------------------------------------------------------------------------ report
def _pivot(table):
    """model × (jobs, median) of the overall MAPE, and model × factor of the median over jobs."""
    allf = table[table.factor.astype(str) == "all"].pivot(index="model", columns="group", values="mape")
    med = table[(table.group == "median") & (table.factor.astype(str) != "all")]
    byf = med.assign(factor=med.factor.astype(float)).pivot(index="model", columns="factor", values="mape")
    order = list(dict.fromkeys(table.model))
    return allf.loc[order, [*JOBS, "median"]], byf.loc[order]


def markdown(res, machine, frame, source) -> str:
    allf, byf = _pivot(res["table"])
    x = res["extrap"]
    if EXTRAP not in allf.index:  # Extra-P did not run: its row says so
        allf.loc[EXTRAP] = np.nan
        byf.loc[EXTRAP] = np.nan
    if x["status"] == "ok":
        xnote = (f"{EXTRAP}: Extra-P {x['version']} (numpy {x['extrap_numpy']}, own virtualenv), default modeler "
                 f"({', '.join(x['modeler'])}), one model per job over {', '.join(CONFIG)}; all "
                 f"{x['rows_predicted']} test rows predicted ({x['negative_predictions']} at or below zero).")
    elif x["status"] == "not run":
        xnote = f"{EXTRAP}: not run ({x['note']})."
    else:
        xnote = (f"{EXTRAP}: {x['rows_unpredictable']} of {x['rows_predicted'] + x['rows_unpredictable']} test rows "
                 f"not predicted ({x['unpredictable_reasons'] or x['model_errors']}); its MAPEs are over the rest.")
    if x.get("formulas"):
        xformulas = ["", "## Extra-P model per job (fitted on the fit rows)", "",
                     *[f"- {j}: `{f}` ({m['coordinates']} distinct coordinates over "
                       + ", ".join(f"{c} ({n})" for c, n in m["values_per_param"].items())
                       + f" values; SMAPE on the points fitted {m['smape_fit']:.1f} %)"
                       for j, f, m in ((j, x["formulas"][j], x["models"][j]) for j in JOBS if j in x["formulas"])]]
        if x.get("warnings"):
            xformulas += ["", "Warnings Extra-P raised (number of models): "
                          + "; ".join(f"{n} × `{w}`" for w, n in x["warnings"].items())]
    else:
        xformulas = ["", "## Extra-P model per job", "", f"Not run: {x.get('note', x.get('model_errors'))}."]
    gpus = sorted(frame.n_gpus.unique().tolist())
    between = [g for g in gpus if FIT_MAX < g < TEST_MIN]
    lines = [
        "# Measure small, predict large: step time at 32-64 GPUs from runs on <= 16 (Pollux traces)", "",
        f"Machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, numpy "
        f"{machine['versions'].get('numpy')}, scipy {machine['versions'].get('scipy')}, sklearn "
        f"{machine['versions'].get('sklearn')}; commit {machine.get('git_commit')}; {machine.get('date')}.", "",
        f"Numeric environment: {numeric_summary(machine['numeric'])}.", "",
        f"Data: {source}; {len(frame)} rows, six jobs. GPU counts: {gpus}. Fit: n_gpus <= {FIT_MAX}; test: "
        f"{TEST_MIN} <= n_gpus <= {TEST_MAX}; the rows with {between} GPUs are in neither set. `sync_time` is "
        "passed to fit only; predictions see n_gpus, n_nodes, batch_per_gpu.", "",
        f"Selected (inner splits {INNER_SPLITS}, no test row seen): **{res['best']}**.", "",
        "## MAPE % on the test rows, per job", "", _md(allf), "", xnote, "",
        "## MAPE % by extrapolation factor (n_gpus / 16), median over the six jobs", "", _md(byf), "",
        f"## 90 % intervals of the selected model (split-conformal on the inner splits, α = {ALPHA})", "",
        f"Coverage on the {res['coverage']['n']} test rows: **{100 * res['coverage']['all']:.1f} %** "
        f"(median half-width {100 * res['coverage']['median_relative_halfwidth']:.0f} % of the prediction).", "",
        "| " + " | ".join(["job", *JOBS]) + " |", "|" + "---|" * (len(JOBS) + 1),
        "| coverage % | " + " | ".join(f"{100 * res['coverage']['by_job'][j]:.0f}" for j in JOBS) + " |",
        "| q (log units per distance) | " + " | ".join(f"{res['coverage']['q_by_job'][j]:.3f}" for j in JOBS) + " |",
        "", "By factor: " + ", ".join(f"{k}×: {100 * v:.0f} %" for k, v in res["coverage"]["by_factor"].items()),
        "", "## Inner selection (fit rows only): median MAPE % over jobs per inner split", "",
        _md(res["scores"].set_index("candidate")), "",
        "## Selected model per job (fitted on the fit rows)", "",
        *[f"- {j}: `{f}`" for j, f in res["formulas"].items()],
        *xformulas,
    ]
    return "\n".join(lines)


def _md(df) -> str:
    cols = [str(c) for c in df.columns]
    out = ["| " + " | ".join([str(df.index.name or ""), *cols]) + " |", "|" + "---|" * (len(cols) + 1)]
    for idx, row in df.iterrows():
        out.append("| " + " | ".join([str(idx), *[f"{v:.1f}" if np.isfinite(v) else "not run"
                                                   for v in row.to_numpy(dtype=float)]]) + " |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(OUT), help="results path without suffix")
    ap.add_argument("--extrap-python", default=str(EXTRAP_PYTHON),
                    help="the interpreter of the virtualenv Extra-P is installed in (missing: Extra-P not run)")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    frame, source = traces()
    with threadpool_limits(1):
        res = run(frame, Path(args.extrap_python))
    machine = machine_info()
    md = markdown(res, machine, frame, source)
    print(md)
    allf, byf = _pivot(res["table"])
    out = {"machine": machine, "source": source, "protocol": {
        "fit_max": FIT_MAX, "test_min": TEST_MIN, "test_max": TEST_MAX, "inner_splits": INNER_SPLITS,
        "alpha": ALPHA, "gpu_counts": sorted(frame.n_gpus.unique().tolist()), "seed": SEED},
        "selected": res["best"], "mape_by_job": allf.to_dict(orient="index"),
        "mape_median_by_factor": {m: {f"{k:g}": v for k, v in r.items()} for m, r in byf.to_dict(orient="index").items()},
        "table": res["table"].assign(factor=res["table"].factor.astype(str)).to_dict(orient="records"),
        "inner_scores": res["scores"].to_dict(orient="records"), "coverage": res["coverage"],
        "formulas": res["formulas"], "seconds": res["seconds"], "extrap": res["extrap"]}
    write_results(args.out, out, md)


if __name__ == "__main__":
    main()
