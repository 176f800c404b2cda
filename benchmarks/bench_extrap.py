"""Extra-P (PMNF, automated empirical performance modelling) as a comparison point.

Extra-P (PyPI ``extrap``, pins numpy < 2) is never a dependency of perfkit. It lives in its own
virtualenv outside the package, and this script, run with the project's environment, calls it as a
subprocess:

    python3 -m venv build/extrap-venv
    build/extrap-venv/bin/pip install extrap==4.2.5
    .venv/bin/python benchmarks/bench_extrap.py [--only ch4 ch5 ch4_tensorflow ... lambda lambda_screened nvidia_dle] [--variants a b b_all c]

This side prepares the data and the splits with perfkit and computes the metrics with
``perfkit.mape``. For each model to build it writes one Extra-P JSON Lines input file
(``{"params": {...}, "metric": "time", "value": [repetitions]}``, one line per distinct coordinate:
rows with identical numeric coordinates are its repetitions) under ``build/extrap-work/``. A helper
run by the Extra-P environment's interpreter (written to ``build/extrap-work/extrap_model.py``)
reads each file with Extra-P's own reader, models it with the default modeler (the multi-parameter
modeler over the default single-parameter modeler; the single-parameter modeler when the file has one
parameter), and writes the formula and the predictions at the held-out points as JSON. Every input
file can be modelled again by hand: ``build/extrap-venv/bin/extrap --json FILE.jsonl``.

Datasets and splits (the same as perfkit's table in docs/forms.md, "Held-out results on every dataset"):
- ch4: ``load_steps(ch4_lenet5.csv, "epoch_time", "ch4")``, ``thesis_split(n_fit=1000, n_test=500, seed=0)``;
- ch5: ``load_steps(ch5_resattnet3d.csv, "epoch_time", "ch5")``, ``thesis_split(n_fit=900, n_test=600, seed=0)``;
- ch4_tensorflow, ch4_mxnet (1000/500), ch4_chainer, ch4_jax (333/167): each framework's ``ch4_lenet5.csv`` as ch4;
- lambda, lambda_screened, nvidia_dle: ``load_external(name)``, ``train_test_split_frame(test_size=1/3, random_state=0)``.

Variants (Extra-P models numeric parameters only; a parameter with one value in the rows to fit is
left out, since it cannot be modelled):
- a: one model over all numeric and extrinsic parameters, categoricals ignored;
- b: one model per level of the most important categorical: the one whose levels explain the largest
  share of the variance of log time in the rows to fit (eta squared; fit rows only, no peeking);
- b_all: one model per combination of all the categoricals;
- c: one model over the extrinsic parameters only (workers/GPUs, batch), the classic scaling use.
  On lambda and nvidia_dle the extrinsic parameters are the only numeric ones, so c is a.
In b and b_all a group gets a model when its rows to fit have at least 5 distinct coordinates
(Extra-P's ``min_measurement_points``; below it Extra-P only warns). Held-out rows of a group without
a model, of a level never seen in the rows to fit, or with a non-finite prediction are counted as
unpredictable, and the MAPE is over the rows predicted.

Writes ``benchmarks/results/extrap.json`` and ``.md`` with machine info (a run with ``--only`` or
``--variants`` updates those entries and keeps the others).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info, write_results  # noqa: E402

from perfkit import mape  # noqa: E402
from perfkit.chapters.ch6 import DATASETS as CH6_DATASETS  # noqa: E402
from perfkit.chapters.ch6 import MEASURED, Params, roles_key  # noqa: E402
from perfkit.data.external import load_external  # noqa: E402
from perfkit.data.measured import load_steps, thesis_split  # noqa: E402
from perfkit.model.selection.baselines import train_test_split_frame  # noqa: E402
from perfkit.schema import ROLES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"
WORK = ROOT / "build" / "extrap-work"
DEFAULT_PYTHON = ROOT / "build" / "extrap-venv" / "bin" / "python"
DATASETS = list(CH6_DATASETS)  # Chapter 6's datasets, in its order (the order of the results tables)
VARIANTS = ["a", "b", "b_all", "c"]
# modeler settings tried for every variant: Extra-P's defaults, and its strong-scaling setting (negative
# exponents in the single-parameter building blocks; ``extrap --options allow_negative_exponents=True``;
# the default terms only grow, while a time per epoch falls with the batch and the workers)
OPTIONS = {"default": {}, "negexp": {"allow_negative_exponents": True}}
MIN_POINTS = 5  # Extra-P's min_measurement_points (multi- and single-parameter modelers)
TIMEOUT_S = 600

HELPER = r'''
"""Run by the Extra-P environment: model each task's JSON Lines file, predict its held-out points."""
import json, platform, sys, time, traceback, warnings
import numpy as np
import extrap
from extrap.fileio.file_reader.json_file_reader import JsonFileReader
from extrap.modelers.model_generator import ModelGenerator

manifest = json.load(open(sys.argv[1]))
out = {"extrap_version": extrap.__version__, "numpy": np.__version__, "python": platform.python_version(),
       "tasks": []}
for task in manifest["tasks"]:
    res = {"id": task["id"]}
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            experiment = JsonFileReader().read_experiment(task["input"])
            t1 = time.perf_counter()
            generator = ModelGenerator(experiment)  # the default modeler, mean of the repetitions
            modeler = generator.modeler
            target = getattr(modeler, "single_parameter_modeler", None) or modeler
            for k, v in task.get("options", {}).items():  # options of the single-parameter modeler
                setattr(target, k, v)
            generator.model_all()
            t2 = time.perf_counter()
        params = [p.name for p in experiment.parameters]
        assert params == task["params"], (params, task["params"])
        (model,) = generator.models.values()
        function = model.hypothesis.function
        points = np.asarray(task["predict"], dtype=float).reshape(-1, len(params))
        if len(points):
            pred = function.evaluate(points[:, 0] if len(params) == 1 else points.T)
            pred = np.broadcast_to(np.asarray(pred, dtype=float), (len(points),))
        else:
            pred = np.zeros(0)
        res.update(ok=True, modeler=generator.modeler.NAME, params=params,
                   coordinates=len(experiment.coordinates), read_seconds=t1 - t0, fit_seconds=t2 - t1,
                   formula=function.to_string(*experiment.parameters),
                   smape=float(model.hypothesis.SMAPE), ar2=float(model.hypothesis.AR2),
                   predictions=[float(v) if np.isfinite(v) else None for v in pred])
    except Exception as exc:  # recorded as the task's exact error
        res.update(ok=False, error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=3))
    res["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    out["tasks"].append(res)
json.dump(out, open(sys.argv[2], "w"), indent=1)
'''


# ---------------------------------------------------------------- data


def load(name):
    """``(X_fit, X_test, y_fit, y_test, roles)`` on the split of perfkit's table (Chapter 6's, ``ch6.MEASURED``)."""
    if name in MEASURED:
        _, (n_fit, n_test) = MEASURED[name]
        key = roles_key(name)
        X, y, _ = load_steps(ROOT / getattr(Params(), f"{name}_dataset"), target="epoch_time", roles=key)
        Xf, Xt, yf, yt = thesis_split(X, y, n_fit=n_fit, n_test=n_test, seed=0)
        roles = {k: list(v) for k, v in ROLES[key].items()}
    else:
        frame, ds = load_external(name)
        roles = dict(numeric=list(ds.numeric), categorical=list(ds.categorical), extrinsic=list(ds.extrinsic))
        X = frame[roles["numeric"] + roles["categorical"] + roles["extrinsic"]]
        Xf, Xt, yf, yt = train_test_split_frame(X, frame[ds.target], test_size=1 / 3, random_state=0)
    return (Xf.reset_index(drop=True), Xt.reset_index(drop=True),
            np.asarray(yf, dtype=float), np.asarray(yt, dtype=float), roles)


def eta_squared(labels, y):
    """Share of the variance of log y explained by the levels of one categorical."""
    ly = pd.Series(np.log(y))
    means = ly.groupby(np.asarray(labels)).transform("mean")
    return float(((means - ly.mean()) ** 2).sum() / ((ly - ly.mean()) ** 2).sum())


# ---------------------------------------------------------------- one Extra-P input file per model


def write_input(path, Xf, yf, params):
    """Extra-P JSON Lines: one line per distinct coordinate, its rows as repetitions."""
    df = Xf[params].astype(float).copy()
    df["_y"] = yf
    lines = [json.dumps({"params": dict(zip(params, map(float, key if isinstance(key, tuple) else (key,)))),
                         "metric": "time", "value": [float(v) for v in g["_y"]]})
             for key, g in df.groupby(params, sort=True)]
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def plan_variant(name, variant, Xf, Xt, yf, roles, tag):
    """Tasks for the helper and, per held-out row, the task predicting it (None: unpredictable)."""
    numeric = roles["numeric"] + roles["extrinsic"]
    cats = roles["categorical"]
    info = {}
    if variant in ("a", "c"):
        cols = numeric if variant == "a" else roles["extrinsic"]
        fit_groups = {"all": np.arange(len(Xf))}
        test_groups = {"all": np.arange(len(Xt))}
        info["parameters_offered"] = cols
    else:
        if variant == "b":
            eta = {c: eta_squared(Xf[c], yf) for c in cats}
            key = [max(eta, key=eta.get)]
            info["eta_squared_log_time"] = eta
        else:
            key = cats
        info["grouped_by"] = key
        fk = Xf[key].astype(str).agg(" | ".join, axis=1)
        tk = Xt[key].astype(str).agg(" | ".join, axis=1)
        fit_groups = {g: np.flatnonzero(fk.values == g) for g in sorted(fk.unique())}
        test_groups = {g: np.flatnonzero(tk.values == g) for g in sorted(tk.unique())}
        cols = numeric
    tasks, owner, groups = [], np.full(len(Xt), None, dtype=object), []  # owner: the task predicting a row
    reasons = {}
    unseen = [g for g in test_groups if g not in fit_groups]
    if unseen:
        reasons["level not in the rows to fit"] = int(sum(len(test_groups[g]) for g in unseen))
        info["levels_not_in_fit"] = len(unseen)
    for i, (g, rows_f) in enumerate(fit_groups.items()):
        sub = Xf.iloc[rows_f]
        distinct = {c: int(sub[c].nunique()) for c in cols}
        params = [c for c in cols if distinct[c] > 1]
        rows_t = test_groups.get(g, np.array([], dtype=int))
        n_coord = int(sub[params].drop_duplicates().shape[0]) if params else 1
        entry = dict(group=g, fit_rows=len(rows_f), test_rows=len(rows_t), params=params,
                     distinct_values=distinct, coordinates=n_coord)
        groups.append(entry)
        if not params or n_coord < MIN_POINTS:
            why = ("no numeric parameter varies in its rows to fit" if not params else
                   f"fewer than {MIN_POINTS} distinct coordinates in its rows to fit")
            entry["modelled"] = False
            entry["reason"] = why
            if len(rows_t):
                reasons[why] = reasons.get(why, 0) + len(rows_t)
            continue
        entry["modelled"] = True
        tid = f"{tag}-{i}"
        path = WORK / f"{tid}.jsonl"
        write_input(path, sub, yf[rows_f], params)
        tasks.append(dict(id=tid, input=str(path), params=params,
                          predict=Xt.iloc[rows_t][params].astype(float).values.tolist(), rows=rows_t.tolist(),
                          group=g, fit_rows=rows_f.tolist()))
        owner[rows_t] = tid
    info["groups"] = len(groups)
    info["groups_not_modelled"] = {}
    for e in groups:
        if not e["modelled"]:
            info["groups_not_modelled"][e["reason"]] = info["groups_not_modelled"].get(e["reason"], 0) + 1
    if len(groups) > 1:
        counts = [e["coordinates"] for e in groups]
        info["coordinates_per_group"] = dict(min=min(counts), median=float(np.median(counts)), max=max(counts))
    # the parameters' distinct values in the rows to fit of each modelled group are in models_detail
    info["_distinct"] = {e["group"]: e["distinct_values"] for e in groups if e["modelled"]}
    info["unpredictable_reasons"] = reasons
    if not tasks:
        # no group is modelled: hand Extra-P the largest one anyway (not scored) to record what it says
        cand = [e for e in groups if e["params"] and e["coordinates"] >= 2]
        if cand:
            e = max(cand, key=lambda e: (e["coordinates"], e["fit_rows"]))
            rows_f = fit_groups[e["group"]]
            path = WORK / f"{tag}-diagnostic.jsonl"
            write_input(path, Xf.iloc[rows_f], yf[rows_f], e["params"])
            info["_diagnostic"] = dict(id=f"{tag}-diagnostic", input=str(path), params=e["params"], predict=[],
                                       group=e["group"], coordinates=e["coordinates"],
                                       distinct_values=e["distinct_values"])
    return tasks, owner, info


def run_helper(python, tasks, tag, options):
    manifest, out = WORK / f"{tag}.manifest.json", WORK / f"{tag}.out.json"
    manifest.write_text(json.dumps({"tasks": [dict({k: t[k] for k in ("id", "input", "params", "predict")},
                                                   options=options) for t in tasks]}))
    out.unlink(missing_ok=True)
    t = time.perf_counter()
    proc = subprocess.run([str(python), str(WORK / "extrap_model.py"), str(manifest), str(out)],
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    wall = time.perf_counter() - t
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"Extra-P helper failed (rc {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(out.read_text()), wall


def bench_variant(python, name, variant, option, data):
    Xf, Xt, yf, yt, roles = data
    tag = f"{name}-{variant}"
    tasks, owner, info = plan_variant(name, variant, Xf, Xt, yf, roles, tag)
    distinct = info.pop("_distinct")
    diagnostic = info.pop("_diagnostic", None)
    res = dict(dataset=name, variant=variant, options=option, modeler_options=OPTIONS[option],
               fit_rows=len(Xf), test_rows=len(Xt), **info)
    if not tasks:
        most = info.get("coordinates_per_group", {}).get("max")
        res.update(models=0, rows_predicted=0, rows_unpredictable=len(Xt), mape=None, extrap_version=None,
                   error=f"no group has >= {MIN_POINTS} distinct coordinates in its rows to fit (at most {most})")
        if diagnostic:
            out, _ = run_helper(python, [diagnostic], f"{tag}-{option}-diagnostic", OPTIONS[option])
            d = out["tasks"][0]
            res["diagnostic"] = dict(note="Extra-P run on the group with the most coordinates anyway; not scored",
                                     group=diagnostic["group"], coordinates=diagnostic["coordinates"],
                                     distinct_values=diagnostic["distinct_values"], ok=d["ok"],
                                     formula=d.get("formula"), error=d.get("error"), warnings=d["warnings"])
            res.update(extrap_version=out["extrap_version"], extrap_numpy=out["numpy"], extrap_python=out["python"])
        return res
    out, wall = run_helper(python, tasks, f"{tag}-{option}", OPTIONS[option])
    pred = np.full(len(Xt), np.nan)
    by_id = {t["id"]: t for t in out["tasks"]}
    errors, formulas, fit_s, warns, modelers = {}, {}, 0.0, {}, set()
    for t in tasks:
        r = by_id[t["id"]]
        for w in r.get("warnings", []):
            warns[w] = warns.get(w, 0) + 1
        if not r["ok"]:
            errors[t["group"]] = r["error"]
            owner[t["rows"]] = None
            continue
        fit_s += r["fit_seconds"]
        formulas[t["group"]] = dict(formula=r["formula"],  # parameters modelled: their distinct values to fit
                                    values_per_param={c: distinct[t["group"]][c] for c in r["params"]},
                                    coordinates=r["coordinates"], fit_rows=len(t["fit_rows"]),
                                    test_rows=len(t["rows"]), fit_seconds=round(r["fit_seconds"], 4),
                                    smape_fit=r["smape"])
        modelers.add(r["modeler"])
        vals = np.array([np.nan if v is None else v for v in r["predictions"]], dtype=float)
        pred[t["rows"]] = vals
    ok = np.isfinite(pred)
    nonfinite = int(np.sum(~ok & np.array([o is not None for o in owner])))
    if nonfinite:
        res["unpredictable_reasons"]["non-finite prediction"] = nonfinite
    if errors:
        res["unpredictable_reasons"]["Extra-P raised an error"] = int(sum(
            len(t["rows"]) for t in tasks if t["group"] in errors))
    res.update(extrap_version=out["extrap_version"], extrap_numpy=out["numpy"], extrap_python=out["python"],
               modeler=sorted(modelers), models=len(formulas), model_errors=errors, models_detail=formulas,
               warnings=warns,
               rows_predicted=int(ok.sum()), rows_unpredictable=int((~ok).sum()),
               mape=float(mape(yt[ok], pred[ok])) if ok.any() else None,
               median_ape=float(100 * np.median(np.abs(yt[ok] - pred[ok]) / yt[ok])) if ok.any() else None,
               negative_predictions=int(np.sum(pred[ok] <= 0)),
               fit_seconds=fit_s, helper_wall_seconds=wall)
    if variant in ("a", "c") and formulas:
        res["formula"] = formulas["all"]["formula"]  # per group in b and b_all: models_detail
    return res


# ---------------------------------------------------------------- report


def _fmt(v, spec):
    return "—" if v is None else format(v, spec)


def _order(r):
    return (DATASETS.index(r["dataset"]), VARIANTS.index(r["variant"]), list(OPTIONS).index(r["options"]))


def _markdown(res):
    m = res["machine"]
    rows = sorted(res["results"].values(), key=_order)
    lines = ["# Extra-P as a comparison point", "",
             f"Extra-P {res.get('extrap_version', '?')} (PyPI `extrap`), run from its own virtualenv "
             f"(`build/extrap-venv`, numpy {res.get('extrap_numpy', '?')}, Python {res.get('extrap_python', '?')}) as a "
             "subprocess of `benchmarks/bench_extrap.py`; never a perfkit dependency. Default modeler (multi-parameter "
             "PMNF over the default single-parameter modeler), mean of the repetitions. Splits as in perfkit's table "
             "(docs/forms.md, \"Held-out results on every dataset\"): ch4 1000/500 and ch5 900/600 (`thesis_split`, seed 0), "
             "the other frameworks' LeNet-5 files as Chapter 6 splits them (ch4_tensorflow and ch4_mxnet 1000/500, "
             "ch4_chainer and ch4_jax 333/167), lambda, lambda_screened and nvidia_dle 2/3 fit (`train_test_split_frame`, seed 0).", "",
             f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}, Python {m['python']} "
             f"(perfkit side: numpy {m['versions'].get('numpy', '?')}); commit {m['git_commit']}; {m['date']}. "
             f"Whole run {res.get('wall_seconds_last_run', float('nan')):.0f} s.", "",
             "Variants: **a** one model over all numeric + extrinsic parameters (categoricals ignored); **b** one "
             "model per level of the most important categorical (largest eta² of log time on the rows to fit); "
             "**b_all** one model per combination of all categoricals; **c** extrinsic parameters only. "
             "Options: **default** Extra-P's defaults; **negexp** its strong-scaling setting "
             "(`allow_negative_exponents=True` for the single-parameter modeler: the default PMNF terms only grow, "
             "while the time per epoch or step falls with the batch and the workers). "
             "MAPE is over the held-out rows predicted; *unpredictable* rows are those of a group without a model "
             f"(fewer than {MIN_POINTS} distinct coordinates to fit, Extra-P's minimum), of a level not in the rows "
             "to fit, or with an error. MdAPE: the median absolute percentage error over the same rows; "
             "≤ 0: predictions at or below zero among them. Fit s: Extra-P's modelling time, summed over the models "
             "(reading the input excluded).", "",
             "| dataset | variant | options | grouped by | models | held-out MAPE (%) | MdAPE (%) | rows predicted "
             "| rows unpredictable | ≤ 0 | fit s | Extra-P |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    best, full = {}, {}
    for r in rows:
        if r.get("same_as"):
            lines.append(f"| {r['dataset']} | {r['variant']} | {r['options']} | — | same as {r['same_as']} "
                         f"| — | — | — | — | — | — | — |")
            continue
        by = ", ".join(r.get("grouped_by", [])) or "—"
        lines.append(f"| {r['dataset']} | {r['variant']} | {r['options']} | {by} | {r.get('models', 0)} "
                     f"| {_fmt(r.get('mape'), '.1f')} | {_fmt(r.get('median_ape'), '.1f')} "
                     f"| {r['rows_predicted']} / {r['test_rows']} | {r['rows_unpredictable']} "
                     f"| {r.get('negative_predictions', '—')} | {_fmt(r.get('fit_seconds'), '.2f')} "
                     f"| {r.get('extrap_version') or '—'} |")
        if r.get("mape") is not None and (r["dataset"] not in best or r["mape"] < best[r["dataset"]]["mape"]):
            best[r["dataset"]] = r
        if r.get("mape") is not None and r["rows_unpredictable"] == 0 and (
                r["dataset"] not in full or r["mape"] < full[r["dataset"]]["mape"]):
            full[r["dataset"]] = r

    def say(d, b):
        return f"{d}: **{b['variant']} / {b['options']}** {b['mape']:.1f} % on {b['rows_predicted']}/{b['test_rows']} rows"

    lines += ["", "Best variant per dataset (lowest held-out MAPE over the rows it predicts): "
              + "; ".join(say(d, b) for d, b in best.items()) + ".", "",
              "Best among the variants that predict every held-out row: "
              + "; ".join(say(d, b) for d, b in full.items()) + ".", ""]
    lines += ["## Models of variant a (one model, all numeric parameters)", ""]
    for r in rows:
        if r["variant"] != "a":
            continue
        if r.get("formula"):
            d = r["models_detail"]["all"]
            over = ", ".join(f"{p} ({n})" for p, n in d["values_per_param"].items())
            lines.append(f"- **{r['dataset']}**, {r['options']} ({d['coordinates']} distinct coordinates over "
                         f"{over} values; SMAPE on the points fitted {d['smape_fit']:.1f} %): "
                         f"`{r['formula']}`")
        else:
            lines.append(f"- **{r['dataset']}**, {r['options']}: no model — {r.get('error') or r.get('model_errors')}")
    c_rows = [r for r in rows if r["variant"] == "c" and r.get("formula")]
    if c_rows:
        lines += ["", "Variant c (extrinsic parameters only):", ""]
        lines += [f"- **{r['dataset']}**, {r['options']}: `{r['formula']}`" for r in c_rows]
    lines += ["", "## Unpredictable rows and errors", ""]
    for r in rows:
        if r.get("unpredictable_reasons") or r.get("model_errors") or r.get("error"):
            parts = [f"{r['error']}"] if r.get("error") else []
            parts += [f"{why}: {n} rows" for why, n in r.get("unpredictable_reasons", {}).items()]
            parts += [f"Extra-P error in group {g}: `{e}`" for g, e in r.get("model_errors", {}).items()]
            if r.get("groups_not_modelled"):
                parts.append("groups without a model: " + ", ".join(
                    f"{n} ({why})" for why, n in r["groups_not_modelled"].items()))
            d = r.get("diagnostic")
            if d:
                parts.append(f"Extra-P run anyway on its largest group ({d['group']}, {d['coordinates']} coordinates, "
                             f"distinct values {d['distinct_values']}, not scored): "
                             + (f"model `{d['formula']}`" if d["ok"] else f"error `{d['error']}`")
                             + (f", warnings: {'; '.join(f'`{w}`' for w in d['warnings'])}" if d["warnings"] else ""))
            lines.append(f"- {r['dataset']} {r['variant']} {r['options']}: " + "; ".join(parts))
    warn = {}
    for r in rows:
        for w, n in r.get("warnings", {}).items():
            warn[w] = warn.get(w, 0) + n
    if warn:
        lines += ["", "Warnings Extra-P raised (number of models, all runs):", ""]
        lines += [f"- {n} × `{w}`" for w, n in sorted(warn.items(), key=lambda kv: -kv[1])]
    if res.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {n}" for n in res["notes"]]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", choices=DATASETS, default=None)
    ap.add_argument("--variants", nargs="*", choices=VARIANTS, default=None)
    ap.add_argument("--options", nargs="*", choices=list(OPTIONS), default=None,
                    help="modeler settings: default, negexp (negative exponents)")
    ap.add_argument("--extrap-python", default=str(DEFAULT_PYTHON),
                    help="the interpreter of the virtualenv Extra-P is installed in")
    ap.add_argument("--out", default=str(RESULTS / "extrap"))
    args = ap.parse_args(argv)
    python = Path(args.extrap_python)
    if not python.exists():
        sys.exit(f"no Extra-P environment at {python}: run\n  python3 -m venv build/extrap-venv\n"
                 "  build/extrap-venv/bin/pip install extrap==4.2.5")
    datasets, variants, options = args.only or DATASETS, args.variants or VARIANTS, args.options or list(OPTIONS)
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "extrap_model.py").write_text(HELPER.lstrip())
    out = Path(args.out)
    res = json.loads(out.with_suffix(".json").read_text()) if out.with_suffix(".json").exists() else {}
    res.setdefault("results", {})
    res["machine"] = machine_info()
    t_all = time.perf_counter()
    for name in datasets:
        data = load(name)
        roles = data[4]
        for variant in variants:
            for option in options:
                key = f"{name}/{variant}/{option}"
                if variant == "c" and set(roles["extrinsic"]) == set(roles["numeric"] + roles["extrinsic"]):
                    res["results"][key] = dict(dataset=name, variant=variant, options=option, same_as="a",
                                               test_rows=len(data[1]),
                                               note="the extrinsic parameters are the only numeric ones")
                    print(f"{key}: same as a (the only numeric parameters are extrinsic)", flush=True)
                    continue
                r = bench_variant(python, name, variant, option, data)
                r["measured"] = dict(date=res["machine"]["date"], git_commit=res["machine"]["git_commit"])
                res["results"][key] = r
                print(f"{key}: MAPE {_fmt(r.get('mape'), '.2f')} % on {r['rows_predicted']}/{r['test_rows']} rows, "
                      f"{r['rows_unpredictable']} unpredictable, {r.get('models', 0)} models, "
                      f"fit {_fmt(r.get('fit_seconds'), '.2f')} s", flush=True)
                if r.get("extrap_numpy"):
                    res.update(extrap_version=r["extrap_version"], extrap_numpy=r["extrap_numpy"],
                               extrap_python=r["extrap_python"])
    res["wall_seconds_last_run"] = time.perf_counter() - t_all
    res["notes"] = [
        "Extra-P models numeric parameters only; categoricals are ignored in a and c and used for grouping in b, b_all.",
        "Rows with identical numeric coordinates (in a group) are passed as repetitions of one measurement point; "
        "Extra-P models their mean.",
        f"A group is modelled when its rows to fit have >= {MIN_POINTS} distinct coordinates (Extra-P's "
        "min_measurement_points); parameters constant within the group are left out of its model. Extra-P itself "
        "only warns when a parameter has fewer than 5 values (see the warnings).",
        "The input files and the helper are under build/extrap-work/ (git-ignored); "
        "`build/extrap-venv/bin/extrap --json build/extrap-work/<dataset>-<variant>-<i>.jsonl` models one again.",
    ]
    write_results(out, res, _markdown(res))
    print(f"({res['wall_seconds_last_run']:.0f} s)")


if __name__ == "__main__":
    main()
