"""Measure small, predict large: step-time models fitted on the small end of a cluster's traces predict the large end.

Run: ``.venv/bin/python benchmarks/bench_scale.py`` (Pollux's traces; writes ``benchmarks/results/scale.json`` and
``.md``) or ``.venv/bin/python benchmarks/bench_scale.py --traces DIR --cluster NAME`` (another cluster's traces in
Pollux's format, ``DIR/<job>/{placements,scalability}-NAME.csv``, read by :func:`perfkit.data.pollux.load_traces`;
writes ``benchmarks/results/scale_NAME.json`` and ``.md``). A few minutes on 2 cores (every fit single-threaded).

Data: Pollux's published traces (OSDI 2021, AWS, 16 nodes × 4 NVIDIA T4; Apache-2.0), six jobs, through
:func:`perfkit.data.pollux.load_pollux` (shipped under ``data/external/pollux/``); or another cluster's (e.g. the Sia
artifact's, not shipped: their provenance, ``DIR/provenance.json`` when present, is copied into the results).

Protocol, the same code on every cluster, each job modelled on its own. The split is one rule by extrapolation
factor (:func:`perfkit.model.uncertainty.extrapolation.factor_splits` on the traces' GPU counts): fit on every row with
``n_gpus`` <= fit_max, the largest GPU count <= max / 4; test on the rows from 2·fit_max to max GPUs; the rows in
between are in neither set. On Pollux's traces: fit <= 16, test 32-64. Metric: MAPE (%) of ``t_iter`` on the test
rows, per job, per extrapolation factor (n_gpus / fit_max) and the median over the jobs. ``sync_time`` (a measured
phase) is given to ``fit`` only: every prediction is made without it.

Models: Chapter 7's (``perfkit/chapters/ch7/compute.py``): the phase-aware model selected by the inner protocol
(below), :class:`PolluxStepModel`, the project's :class:`LogLinearModel` (extrinsic n_gpus, batch_per_gpu, n_nodes;
default lasso with interactions, and with ``interactions=False``), and a random forest and gradient boosting on the
log configuration columns (log target), tuned by 5-fold CV on the fit rows only (fixed seeds).

Extra-P (PMNF automated empirical performance modelling, PyPI ``extrap`` 4.2.5) is one more row: per job,
one model fitted on the job's fit rows over the parameters n_gpus, batch_per_gpu and n_nodes (a parameter with
one value in the job's fit rows is left out; rows with identical coordinates are repetitions, Extra-P models
their mean), Extra-P's default modeler and options, predicting the same test rows. It runs in its own virtualenv
(``build/extrap-venv``; it pins numpy < 2, never a perfkit dependency) through ``bench_extrap.py``'s helpers
(:func:`bench_extrap.plan_variant` with one group per job, :func:`bench_extrap.run_helper`; the input files
are under ``build/extrap-work/``). Without that virtualenv (or with ``--no-extrap``) the row says "not run" and
the rest runs as before. Its MAPEs, formulas and version are in the results under ``"extrap"``.

Selection without the test rows (:func:`perfkit.chapters.ch7.compute.select_step_model`): every candidate of
:func:`candidates` is scored by the inner splits of the fit rows (the rule's inner splits; on Pollux's traces fit
<= 4 GPUs → score 8-16, the same 2-4× factors as the outer protocol; <= 6 → 10-16; <= 8 → 12-16), score = mean
over the splits of the median MAPE over the jobs; then the median of the best k candidates' predictions is scored
the same way for every k, and the best k is refitted on the fit rows (k = 1: the best candidate alone).

What the fit rows alone said (:func:`inner_check`): the baselines (not Extra-P) scored on the same inner splits as
the candidates, beside the selected model's inner score; they are never candidates, so this changes no selection:
it says whether the fit rows already favoured a baseline where the selected model later loses to one.

90 % intervals of the selected model, two calibrations (both never use a job's own test rows for its interval):
"inner" splits only (per job, split-conformal scores |log(y/ŷ)| / d on the inner splits, d = 1 + log2(n_gpus /
fit_max), interval ŷ·exp(±q·d)), and "transfer" (the reported one): the job's inner q times κ, the conformal 90 %
quantile of the other jobs' test-row scores divided by their own inner q
(:func:`perfkit.model.uncertainty.extrapolation.calibrate_transfer`, leave-one-job-out).
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
CONFIG = ["n_gpus", "batch_per_gpu", "n_nodes"]
#: Pollux's split, which the factor rule (perfkit.model.uncertainty.extrapolation.factor_splits) must reproduce on its traces
POLLUX_SPLIT = (16, 32, 64, [(4, 8, 16), (6, 10, 16), (8, 12, 16)])
ALPHA = 0.1
SEED = 0
SELECTED = "selected"  # the role of the selected model in the rankings


# ------------------------------------------------------------------------------ data
def traces(root=None, cluster=None):
    """(frame of job, study, n_gpus, n_nodes, batch_per_gpu, t_iter, sync_time; where it came from; provenance).

    Without ``root``: Pollux's shipped traces. With it: :func:`perfkit.data.pollux.load_traces` of ``root`` for
    ``cluster``; the provenance is ``root/provenance.json``'s entries for the files read (None without it)."""
    import json

    from perfkit.data.pollux import load_pollux, load_traces

    cols = ["job", "study", *CONFIG, "t_iter", "sync_time"]
    if root is None:
        return (load_pollux()[cols].reset_index(drop=True), "data/external/pollux (perfkit.data.pollux.load_pollux())",
                {"note": "shipped with perfkit: data/external/pollux.provenance.json", "files": {}})
    frame = load_traces(root, cluster)
    where = Path(os.path.abspath(root))
    shown = str(where.relative_to(ROOT)) if where.is_relative_to(ROOT) else str(root)
    source = f"{shown} (perfkit.data.pollux.load_traces(root, {cluster!r})), jobs {frame.attrs['jobs']}"
    prov_path = Path(root) / "provenance.json"
    prov = None
    if prov_path.exists():
        doc = json.loads(prov_path.read_text())
        files = {f"{j}/{st}-{cluster}.csv" for j in frame.attrs["jobs"] for st in ("placements", "scalability")}
        prov = {"note": doc.get("dataset", ""), "files": {k: v for k, v in doc.get("files", {}).items() if k in files}}
    return frame[cols].reset_index(drop=True), source, prov


def protocol(frame) -> dict:
    """The outer and inner splits of the traces' GPU counts by the factor rule (the same on every cluster)."""
    from perfkit.model.uncertainty.extrapolation import factor_splits

    split = factor_splits(frame["n_gpus"])
    return {"fit_max": split["fit_max"], "test_min": split["test_min"], "test_max": split["test_max"],
            "inner_splits": [tuple(x) for x in split["inner"]], "jobs": sorted(frame["job"].unique().tolist())}


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
def _coverage(p, lo, hi, jobs, q_by_job, extra=None):
    inside = (p.t_iter >= lo) & (p.t_iter <= hi)
    return {"all": float(inside.mean()), "n": int(len(p)),
            "by_job": {j: float(inside[p.job == j].mean()) for j in jobs},
            "by_factor": {f"{f:.3g}": float(inside[p.factor == f].mean()) for f in sorted(p.factor.unique())},
            "q_by_job": {j: float(q_by_job[j]) for j in jobs}, **(extra or {}),
            "median_relative_halfwidth": float(np.median((hi - lo) / 2 / p.predicted)),
            "median_relative_halfwidth_by_job": {j: float(np.median(((hi - lo) / 2 / p.predicted)[p.job == j]))
                                                 for j in jobs}}


def run(frame, proto, extrap_python=EXTRAP_PYTHON, tag="scale"):
    import pandas as pd
    from sklearn.base import clone

    from perfkit.chapters.ch7.compute import select_step_model
    from perfkit.model.uncertainty.extrapolation import (calibrate_extrapolation, calibrate_transfer, extrapolation_errors,
                                             extrapolation_interval, scale_split)

    fit_max, test_min, test_max, inner = proto["fit_max"], proto["test_min"], proto["test_max"], proto["inner_splits"]
    fit_rows, _ = scale_split(frame, "n_gpus", fit_max)
    t0 = time.perf_counter()
    best, chosen, scores, k_scores = select_step_model(fit_rows, inner, candidates())
    t_select = time.perf_counter() - t0
    t0 = time.perf_counter()
    check = inner_check(fit_rows, inner, k_scores)
    t_check = time.perf_counter() - t0
    models = {f"{SELECTED}: {best}": chosen, **baselines()}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table, preds = extrapolation_errors(models, frame, "n_gpus", fit_max, "t_iter", test_min=test_min,
                                            test_max=test_max, predict_drop=["sync_time"], return_predictions=True)
    t_outer = time.perf_counter() - t0
    jobs = proto["jobs"]
    p = preds[f"{SELECTED}: {best}"]
    t0 = time.perf_counter()
    q_inner = calibrate_extrapolation(chosen, fit_rows, "n_gpus", "t_iter", inner, alpha=ALPHA,
                                      predict_drop=["sync_time"])
    lo, hi = extrapolation_interval(p.predicted, p.n_gpus, fit_max, p.job.map(q_inner))
    cover_inner = _coverage(p, lo, hi, jobs, q_inner)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = calibrate_transfer(chosen, frame, "n_gpus", fit_max, "t_iter", inner, test_min=test_min,
                                test_max=test_max, alpha=ALPHA, predict_drop=["sync_time"])
    lo, hi = extrapolation_interval(p.predicted, p.n_gpus, fit_max, p.job.map(tr["q"]))
    cover = _coverage(p, lo, hi, jobs, tr["q"].to_dict(),
                      {"q_inner_by_job": tr["q_inner"].to_dict(), "kappa_by_job": tr["kappa"].to_dict(),
                       "n_reference_by_job": {k: int(v) for k, v in tr["n_reference"].items()}})
    t_intervals = time.perf_counter() - t0
    formulas = {j: clone(chosen).fit(*_xy(fit_rows[fit_rows.job == j])).formula() for j in jobs}
    seconds = {"selection": t_select, "inner_check": t_check, "outer": t_outer, "intervals": t_intervals}
    xtable, extrap = run_extrap(frame, proto, extrap_python, tag)
    if xtable is not None:
        table = pd.concat([table, xtable], ignore_index=True)
    seconds["extrap"] = extrap["seconds"]["wall"] if "seconds" in extrap else None
    return dict(best=best, scores=scores, k_scores=k_scores, inner_check=check, table=table, coverage=cover,
                coverage_inner=cover_inner,
                formulas=formulas, seconds=seconds, extrap=extrap, preds=preds)


def inner_check(fit_rows, inner, k_scores) -> dict:
    """What the fit rows alone say of the baselines: every baseline of :func:`baselines` scored on the same inner
    splits as the candidates (:func:`perfkit.model.uncertainty.extrapolation.select_by_extrapolation`: mean over the splits of
    the median MAPE over the jobs), beside the selected model's inner score (its best k's). The selection never
    reads these scores (the baselines are not candidates); they say whether the fit rows already favoured a
    baseline over the selected model. Extra-P is not scored here (it runs in its own environment on the outer
    split only)."""
    from perfkit.model.uncertainty.extrapolation import select_by_extrapolation

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, scores = select_by_extrapolation(baselines(), fit_rows, "n_gpus", "t_iter", list(inner),
                                            predict_drop=["sync_time"])
    selected = float(k_scores.score.min())
    best = scores.iloc[0]
    return {"selected_score": selected, "best_baseline": str(best.candidate),
            "best_baseline_score": float(best.score),
            "favours": "baseline" if float(best.score) < selected else "selected",
            "baselines": scores.to_dict(orient="records"),
            "rule": "inner splits of the fit rows only; score = mean over the splits of the median MAPE over jobs; "
                    "'favours' is 'baseline' when the best baseline's score is below the selected model's"}


def evidence(preds, selected, extrap_median=None) -> dict:
    """The selected model's median MAPE over the jobs and its margin over the best baseline (chosen on the point
    estimates), each with a 95 % percentile interval over B bootstrap resamples of the test rows within each job,
    every model scored on the same resamples (paired), as Chapter 7's ledger decides ``median_10`` and
    ``beats_baselines`` (``perfkit.chapters.ch7.claims.grouped_mape``). Extra-P's rows are not resampled: when
    its median (``extrap_median``) is the best baseline's, it is taken as exact."""
    from perfkit.chapters.ch7.claims import grouped_mape
    from perfkit.evidence import B as RESAMPLES, SEED as BOOT_SEED, Evidence

    names = list(preds)
    base = preds[names[0]]
    frame = base[["job", "t_iter"]].copy()
    for n in names:
        p = preds[n]
        if not p.index.equals(base.index):
            raise ValueError(f"evidence: the test rows of {n!r} differ from those of {names[0]!r}")
        frame[n] = p["predicted"].to_numpy(dtype=float)
    m = grouped_mape(frame, "t_iter", names, "job")
    best = min((n for n in names if n != selected), key=lambda n: m[n][0])
    est, samples, vs = m[selected][0] - m[best][0], m[selected][1] - m[best][1], best
    if extrap_median is not None and np.isfinite(extrap_median) and extrap_median < m[best][0]:
        est, samples, vs = m[selected][0] - extrap_median, m[selected][1] - extrap_median, EXTRAP
    sel, margin = Evidence.from_samples(*m[selected]), Evidence.from_samples(est, samples)
    return {"selected_median": {"estimate": sel.estimate, "interval": [sel.lo, sel.hi]},
            "margin": {"vs": vs, "estimate": margin.estimate, "interval": [margin.lo, margin.hi]},
            "resamples": RESAMPLES, "seed": BOOT_SEED,
            "rule": "percentile intervals over bootstrap resamples of the test rows within each job (paired); "
                    "margin = median MAPE(selected) - the best baseline's (Extra-P's median exact, not resampled)"}


def _xy(d):
    return d.drop(columns=["t_iter", "job"]), d.t_iter.to_numpy(dtype=float)


def run_extrap(frame, proto, python, tag="scale"):
    """Extra-P on the outer split, one model per job (``bench_extrap``'s helpers, variant b_all grouped by job).

    Returns ``(error table rows as extrapolation_errors' table, the "extrap" record for the results)``; the table
    is None when Extra-P did not run (no virtualenv at ``python``)."""
    from perfkit.model.uncertainty.extrapolation import error_table, scale_split

    fit_max, test_min, test_max, jobs = proto["fit_max"], proto["test_min"], proto["test_max"], proto["jobs"]
    base = dict(model=EXTRAP, parameters_offered=CONFIG, options=EXTRAP_OPTIONS)
    if python is None:
        return None, dict(base, status="not run", note="--no-extrap")
    where = Path(os.path.abspath(python))  # not resolved: the venv's python links to the base interpreter
    shown = str(where.relative_to(ROOT)) if where.is_relative_to(ROOT) else str(python)
    base["python_path"] = shown
    if not Path(python).exists():
        return None, dict(base, status="not run", note=f"no Extra-P environment at {python}: python3 -m venv "
                          "build/extrap-venv && build/extrap-venv/bin/pip install extrap==4.2.5")
    import bench_extrap as bx

    t0 = time.perf_counter()
    fit_rows, _ = scale_split(frame, "n_gpus", fit_max)
    _, test_rows = scale_split(frame, "n_gpus", fit_max, test_min, test_max)
    Xf, Xt = fit_rows[["job", *CONFIG]].reset_index(drop=True), test_rows[["job", *CONFIG]].reset_index(drop=True)
    yf = fit_rows.t_iter.to_numpy(dtype=float)
    roles = {"numeric": CONFIG, "extrinsic": [], "categorical": ["job"]}
    bx.WORK.mkdir(parents=True, exist_ok=True)
    (bx.WORK / "extrap_model.py").write_text(bx.HELPER.lstrip())
    tasks, owner, info = bx.plan_variant(tag, "b_all", Xf, Xt, yf, roles, tag)
    distinct = info.pop("_distinct")
    info.pop("_diagnostic", None)
    out, wall = bx.run_helper(python, tasks, f"{tag}-{EXTRAP_OPTIONS}", bx.OPTIONS[EXTRAP_OPTIONS])
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
    p = test_rows.reset_index(drop=True).assign(predicted=pred, factor=Xt.n_gpus.to_numpy(dtype=float) / fit_max)
    table = error_table(p[ok], "t_iter", "job", EXTRAP) if ok.any() else None
    rec = dict(base, status="ok" if ok.all() else ("partial" if ok.any() else "no model"),
               version=out["extrap_version"], extrap_numpy=out["numpy"], extrap_python=out["python"],
               modeler=sorted({by_id[t["id"]].get("modeler") for t in tasks if by_id[t["id"]]["ok"]}),
               fit_max=_num(fit_max), test_min=_num(test_min), test_max=_num(test_max),
               rows_predicted=int(ok.sum()), rows_unpredictable=int((~ok).sum()),
               unpredictable_reasons=info.get("unpredictable_reasons", {}),
               negative_predictions=int(np.sum(pred[ok] <= 0)), model_errors=errors, warnings=warns,
               formulas={j: m["formula"] for j, m in models.items()}, models=models)
    if table is not None:
        allf = table[table.factor.astype(str) == "all"].set_index("group").mape
        med = table[(table.group == "median") & (table.factor.astype(str) != "all")]
        per = table[(table.group != "median") & (table.factor.astype(str) != "all")]
        rec.update(by_job={j: float(allf[j]) for j in jobs if j in allf.index}, median=float(allf["median"]),
                   by_factor={f"{float(f):.3g}": float(m) for f, m in zip(med.factor, med.mape)},
                   by_job_factor={j: {f"{float(f):.3g}": float(m) for f, m in zip(g.factor, g.mape)}
                                  for j, g in per.groupby("group", sort=False)})
    rec["seconds"] = dict(wall=time.perf_counter() - t0, helper_wall=wall,
                          fit=float(sum(m["fit_seconds"] for m in models.values())))
    return table, rec


def _num(v):
    """A whole float as an int (16.0 -> 16), for the records Chapter 7 compares with its integer parameters."""
    return int(v) if float(v).is_integer() else float(v)


# ------------------------------------------------------------------------------ report
def _pivot(table, jobs):
    """model × (jobs, median) of the overall MAPE, and model × factor of the median over jobs."""
    allf = table[table.factor.astype(str) == "all"].pivot(index="model", columns="group", values="mape")
    med = table[(table.group == "median") & (table.factor.astype(str) != "all")]
    byf = med.assign(factor=med.factor.astype(float)).pivot(index="model", columns="factor", values="mape")
    order = list(dict.fromkeys(table.model))
    return allf.loc[order, [*jobs, "median"]], byf.loc[order]


def ranking(allf) -> list:
    """Model roles (``selected`` for the selected phase-aware model) by median MAPE, best first; models not run last."""
    med = allf["median"].rename(lambda m: SELECTED if str(m).startswith(f"{SELECTED}:") else m)
    return [m for m in med.sort_values(kind="stable").index if np.isfinite(med[m])]


def _title(proto, name):
    return (f"# Measure small, predict large: step time at {_num(proto['test_min'])}-{_num(proto['test_max'])} GPUs "
            f"from runs on <= {_num(proto['fit_max'])} ({name} traces)")


def _coverage_lines(cov, jobs, what, extra_rows=()):
    lines = [f"Coverage on the {cov['n']} test rows: **{100 * cov['all']:.1f} %** (median half-width "
             f"{100 * cov['median_relative_halfwidth']:.0f} % of the prediction).", "",
             "| " + " | ".join(["job", *jobs]) + " |", "|" + "---|" * (len(jobs) + 1),
             "| coverage % | " + " | ".join(f"{100 * cov['by_job'][j]:.0f}" for j in jobs) + " |",
             "| median half-width % | " + " | ".join(f"{100 * cov['median_relative_halfwidth_by_job'][j]:.0f}"
                                                    for j in jobs) + " |"]
    for key, label, spec in extra_rows:
        lines.append(f"| {label} | " + " | ".join(format(cov[key][j], spec) for j in jobs) + " |")
    lines += [f"| q ({what}) | " + " | ".join(f"{cov['q_by_job'][j]:.3f}" for j in jobs) + " |", "",
              "By factor: " + ", ".join(f"{k}×: {100 * v:.0f} %" for k, v in cov["by_factor"].items())]
    return lines


def markdown(res, machine, frame, source, proto, name, provenance=None, reference=None) -> str:
    import pandas as pd

    jobs = proto["jobs"]
    allf, byf = _pivot(res["table"], jobs)
    x = res["extrap"]
    fit_max, test_min, test_max = (_num(proto[k]) for k in ("fit_max", "test_min", "test_max"))
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
                       for j, f, m in ((j, x["formulas"][j], x["models"][j]) for j in jobs if j in x["formulas"])]]
        if x.get("warnings"):
            xformulas += ["", "Warnings Extra-P raised (number of models): "
                          + "; ".join(f"{n} × `{w}`" for w, n in x["warnings"].items())]
    else:
        xformulas = ["", "## Extra-P model per job", "", f"Not run: {x.get('note', x.get('model_errors'))}."]
    gpus = sorted(frame.n_gpus.unique().tolist())
    between = [g for g in gpus if fit_max < g < test_min]
    inner = [tuple(_num(v) for v in s) for s in proto["inner_splits"]]
    rank = ranking(allf)
    lines = [
        _title(proto, name), "",
        f"Machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, numpy "
        f"{machine['versions'].get('numpy')}, scipy {machine['versions'].get('scipy')}, sklearn "
        f"{machine['versions'].get('sklearn')}; commit {machine.get('git_commit')}; {machine.get('date')}.", "",
        f"Numeric environment: {numeric_summary(machine['numeric'])}.", "",
        f"Data: {source}; {len(frame)} rows, {len(jobs)} jobs. GPU counts: {gpus}. Split by factor "
        f"(`factor_splits`: fit <= the largest count <= max/4, test from 2× that to max): fit: n_gpus <= {fit_max}; "
        f"test: {test_min} <= n_gpus <= {test_max}; the rows with {between} GPUs are in neither set. `sync_time` "
        "is passed to fit only; predictions see n_gpus, n_nodes, batch_per_gpu.", "",
    ]
    if provenance and provenance.get("files"):
        lines += ["Provenance (copied verbatim, not redistributed here; " + provenance.get("note", "") + "):", "",
                  *[f"- `{k}`: {v['repo']}@{v['commit'][:12]} `{v['path']}` ({v['bytes']} bytes, sha256 "
                    f"{v['sha256'][:16]}…)" for k, v in sorted(provenance["files"].items())], ""]
    lines += [
        f"Selected (inner splits {inner}, no test row seen): **{res['best']}**.", "",
        "Ranking by median MAPE: " + " < ".join(rank) + ".", "",
    ]
    if res.get("inner_check"):
        c = res["inner_check"]
        lines += [f"What the fit rows alone said (inner splits, the baselines scored as the candidates but never "
                  f"selectable): the selected model {c['selected_score']:.1f} %, the best baseline "
                  f"({c['best_baseline']}) {c['best_baseline_score']:.1f} %: "
                  + ("**the fit rows favoured a baseline**." if c["favours"] == "baseline" else
                     "the fit rows favoured the selected model."), ""]
    if res.get("evidence"):
        ev = res["evidence"]
        sm, mg = ev["selected_median"], ev["margin"]
        lines += [f"With {ev['resamples']} bootstrap resamples of the test rows within each job (paired): the selected "
                  f"model's median MAPE {sm['estimate']:.2f} % [{sm['interval'][0]:.2f}, {sm['interval'][1]:.2f}]; "
                  f"its margin over the best baseline ({mg['vs']}) {mg['estimate']:+.2f} points "
                  f"[{mg['interval'][0]:+.2f}, {mg['interval'][1]:+.2f}]"
                  + (" (Extra-P's median taken as exact)" if mg["vs"] == EXTRAP else "") + ".", ""]
    if reference is not None:
        lines += [f"Pollux's traces (benchmarks/results/scale.json) rank: {' < '.join(reference['ranking'])}; "
                  f"the selected model is first on both: {reference['same_first']}; Kendall τ between the two "
                  f"rankings (models on both): {reference['kendall_tau']:.2f}.", ""]
    lines += [
        "## MAPE % on the test rows, per job", "", _md(allf), "", xnote, "",
        f"## MAPE % by extrapolation factor (n_gpus / {fit_max}), median over the jobs", "", _md(byf), "",
        f"## 90 % intervals of the selected model (α = {ALPHA})", "",
        "Transfer calibration (reported): per job, q = κ · q_inner, q_inner its split-conformal half-width on its "
        "inner splits, κ the conformal 90 % quantile over the **other** jobs' test rows of |log(y/ŷ)| / d divided "
        "by their own q_inner (leave-one-job-out; no row of a job's test set calibrates its interval); interval "
        "ŷ·exp(±q·d), d = 1 + log2(n_gpus / fit_max).", "",
        *_coverage_lines(res["coverage"], jobs, "log units per distance",
                         [("q_inner_by_job", "q_inner", ".3f"), ("kappa_by_job", "κ (other jobs)", ".2f")]),
        "", "Inner splits only (q = q_inner, the calibration before transfer):", "",
        *_coverage_lines(res["coverage_inner"], jobs, "log units per distance"),
        "", "## Inner selection (fit rows only): median MAPE % over jobs per inner split", "",
        _md(res["scores"].set_index("candidate")), "",
        "The median of the best k candidates (ranked as above), scored on the same inner splits; the best k is "
        "selected (the smallest on a tie):", "", _md(res["k_scores"].set_index("k")), "",
        "The baselines on the same inner splits (fit rows only; not candidates, never selected):", "",
        _md(pd.DataFrame(res["inner_check"]["baselines"]).set_index("candidate")), "",
        "## Selected model per job (fitted on the fit rows)", "",
        *[f"- {j}: `{f}`" for j, f in res["formulas"].items()],
        *xformulas,
    ]
    return "\n".join(lines)


def _md(df) -> str:
    cols = [f"{c:.3g}" if isinstance(c, float) else str(c) for c in df.columns]
    out = ["| " + " | ".join([str(df.index.name or ""), *cols]) + " |", "|" + "---|" * (len(cols) + 1)]
    for idx, row in df.iterrows():
        out.append("| " + " | ".join([str(idx), *[f"{v:.1f}" if np.isfinite(v) else "not run"
                                                   for v in row.to_numpy(dtype=float)]]) + " |")
    return "\n".join(out)


def compare_rankings(rank, reference_rank) -> dict:
    """How ``rank`` agrees with ``reference_rank`` (both lists of model roles, best first): Kendall τ over the
    models on both, and whether the selected model is first on both."""
    from scipy.stats import kendalltau

    common = [m for m in reference_rank if m in rank]
    tau = float(kendalltau([reference_rank.index(m) for m in common], [rank.index(m) for m in common]).statistic)
    return {"ranking": list(reference_rank), "kendall_tau": tau, "models": common,
            "same_first": bool(rank[0] == SELECTED and reference_rank[0] == SELECTED)}


def main(argv=None):
    import json

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=None, help="folder of another cluster's traces (<job>/<table>-CLUSTER.csv); "
                    "default: Pollux's shipped traces")
    ap.add_argument("--cluster", default=None, help="the tables' suffix under --traces (e.g. rtx)")
    ap.add_argument("--out", default=None, help="results path without suffix (default: results/scale or "
                    "results/scale_CLUSTER)")
    ap.add_argument("--extrap-python", default=str(EXTRAP_PYTHON),
                    help="the interpreter of the virtualenv Extra-P is installed in (missing: Extra-P not run)")
    ap.add_argument("--no-extrap", action="store_true", help="leave Extra-P out")
    args = ap.parse_args(argv)
    if (args.traces is None) != (args.cluster is None):
        ap.error("--traces and --cluster go together")
    from threadpoolctl import threadpool_limits

    frame, source, provenance = traces(args.traces, args.cluster)
    proto = protocol(frame)
    name = "Pollux" if args.traces is None else f"{args.cluster} cluster"
    if args.traces is None:
        got = (proto["fit_max"], proto["test_min"], proto["test_max"], [list(s) for s in proto["inner_splits"]])
        want = POLLUX_SPLIT[:3] + ([list(s) for s in POLLUX_SPLIT[3]],)
        assert got == want, f"the factor rule gives {got} on Pollux's traces, not {want}"
    out_path = args.out or (str(OUT) if args.traces is None else str(OUT.with_name(f"scale_{args.cluster}")))
    tag = "scale" if args.traces is None else f"scale_{args.cluster}"
    with threadpool_limits(1):
        res = run(frame, proto, None if args.no_extrap else Path(args.extrap_python), tag)
    machine = machine_info()
    allf, byf = _pivot(res["table"], proto["jobs"])
    rank = ranking(allf)
    res["evidence"] = evidence(res["preds"], f"{SELECTED}: {res['best']}",
                               float(allf.loc[EXTRAP, "median"]) if EXTRAP in allf.index else None)
    reference = None
    ref_path = OUT.with_suffix(".json")
    if args.traces is not None and ref_path.exists():
        import pandas as pd

        ref = pd.DataFrame(json.loads(ref_path.read_text())["mape_by_job"]).T.astype(float)
        reference = compare_rankings(rank, ranking(ref))
    md = markdown(res, machine, frame, source, proto, name, provenance, reference)
    print(md)
    out = {"machine": machine, "source": source, "provenance": provenance, "protocol": {
        "fit_max": _num(proto["fit_max"]), "test_min": _num(proto["test_min"]), "test_max": _num(proto["test_max"]),
        "inner_splits": [[_num(v) for v in s] for s in proto["inner_splits"]], "jobs": proto["jobs"],
        "rule": "perfkit.model.uncertainty.extrapolation.factor_splits on the traces' GPU counts",
        "alpha": ALPHA, "gpu_counts": sorted(frame.n_gpus.unique().tolist()), "seed": SEED},
        "selected": res["best"], "ranking": rank, "ranking_vs_pollux": reference, "evidence": res["evidence"],
        "mape_by_job": allf.to_dict(orient="index"),
        "mape_median_by_factor": {m: {f"{k:.3g}": v for k, v in r.items()} for m, r in byf.to_dict(orient="index").items()},
        "table": res["table"].assign(factor=res["table"].factor.astype(str)).to_dict(orient="records"),
        "inner_scores": res["scores"].to_dict(orient="records"),
        "inner_scores_by_k": res["k_scores"].to_dict(orient="records"), "inner_check": res["inner_check"],
        "coverage": res["coverage"],
        "coverage_method": "transfer (perfkit.model.uncertainty.extrapolation.calibrate_transfer)",
        "coverage_inner_only": res["coverage_inner"],
        "formulas": res["formulas"], "seconds": res["seconds"], "extrap": res["extrap"]}
    write_results(out_path, out, md)


if __name__ == "__main__":
    main()
