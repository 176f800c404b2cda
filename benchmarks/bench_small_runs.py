"""Measured small, predict large, as a user would: ``perfkit fit --form auto`` on a file of small runs only.

Run: ``.venv/bin/python benchmarks/bench_small_runs.py --clusters Pollux --out benchmarks/results/small_runs_pollux``
(Pollux's shipped traces, and the calibration of the regime flag's ρ) and ``... --clusters azure,dgx,dgx-ext,rtx
--out benchmarks/results/small_runs_sia`` (the Sia clusters whose tables are in ``build/external/sia``,
not shipped: see ``benchmarks/README.md``); each writes ``.json`` and ``.md``. About 1 minute per job on 2 cores.

Protocol, per cluster and per job (each job a user with one file), the split of
:func:`perfkit.model.uncertainty.extrapolation.factor_splits` on the cluster's GPU counts (fit on the rows with at
most fit_max GPUs, the largest count <= G/4, G the cluster's largest; score the rows from 2·fit_max up, >= G/2 where
G = 4·fit_max):

1. the job's rows with at most fit_max GPUs are written to a CSV **holding nothing else**;
2. ``perfkit fit CSV --target t_iter --form auto --gpus n_gpus --nodes n_nodes --batch batch_per_gpu --phases
   sync_time --cluster CLUSTER --job JOB --out MODEL`` (the CLI itself, in this process), which runs a scaling
   study from those rows alone (the step forms and the communication-prior form of the hardware tables chosen on
   inner extrapolation splits, intervals widened by the default κ);
3. ``perfkit predict MODEL TEST.csv --interval 0.9`` on the job's rows with >= 2·fit_max GPUs.

Baselines on the same fit rows and test rows: Chapter 7's (Pollux's model, the log-linear form with and without
interactions, a random forest and gradient boosting tuned by CV on the fit rows;
:func:`perfkit.chapters.ch7.compute.pollux_baselines`). Reported per cluster: the median over jobs of each model's
MAPE (%), the CLI model's margin over the best baseline with a 95 % interval (bootstrap of the test rows within each
job, every model on the same resamples: ``bench_scale.evidence``), the 90 % intervals' coverage, and the ratios
|log(y/ŷ)|/d over the job's inner q from which :data:`perfkit.model.uncertainty.scale_intervals.DEFAULT_KAPPA` is
recomputed (the conformal 90 % quantile of Pollux's pooled ratios). Pollux's coverage with that κ is in-sample for
κ; the line "leave-one-job-out" gives Pollux's coverage with κ from the other five jobs' ratios instead.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info, write_results  # noqa: E402
from bench_scale import baselines, evidence, protocol, traces  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).resolve().parent / "results" / "small_runs"
WORK = ROOT / "build" / "small-runs"
SIA = ROOT / "build" / "external" / "sia"
SIA_CLUSTERS = ("azure", "dgx", "dgx-ext", "rtx")
CONFIG = ["n_gpus", "n_nodes", "batch_per_gpu"]
CLI = "the CLI (perfkit fit --form auto)"
#: the hardware table's name of each cluster (Pollux ran on AWS g4dn.12xlarge nodes)
CLUSTER = {"Pollux": "aws"}
FIT_FLAGS = ["--target", "t_iter", "--form", "auto", "--gpus", "n_gpus", "--nodes", "n_nodes", "--batch",
             "batch_per_gpu", "--phases", "sync_time"]
#: the form of a scaling study of one form (``--form``; its κ and ρ are DEFAULT_KAPPA and DEFAULT_REGIME_KAPPA)
ONE_FORM = "phases"
#: what this run fits (``--form``): "auto", the consensus, or one form
SETTINGS = {"form": "auto"}


def fit_flags() -> list:
    """The fit flags of this run: :data:`FIT_FLAGS`, or with ``--form FORM`` a scaling study of that one form
    (``--scale-of n_gpus``: no second option, no disagreement term)."""
    form = SETTINGS["form"]
    if form == "auto":
        return list(FIT_FLAGS)
    flags = list(FIT_FLAGS)
    flags[flags.index("auto")] = form
    return flags + ["--scale-of", "n_gpus"]


def cli_name() -> str:
    """The CLI model's name in the tables of this run (:data:`CLI` for the consensus)."""
    return CLI if SETTINGS["form"] == "auto" else f"the CLI (perfkit fit --form {SETTINGS['form']} --scale-of n_gpus)"


def work() -> Path:
    """The folder of this run's files (one per form, so that the two runs never share a model file)."""
    return WORK if SETTINGS["form"] == "auto" else WORK / SETTINGS["form"]


def _cli(argv: list, log: Path) -> None:
    """``perfkit ARGV`` in this process, its output appended to ``log``; a non-zero status is an error."""
    from perfkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main([str(a) for a in argv])
    with open(log, "a") as fh:
        fh.write(f"$ perfkit {' '.join(map(str, argv))}\n{out.getvalue()}{err.getvalue()}\n")
    if code != 0:
        raise RuntimeError(f"perfkit {' '.join(map(str, argv))} exited {code}: {err.getvalue().strip()}")


def _hardware(cluster: str, job: str) -> list:
    """``--cluster``/``--job`` of the hardware tables (the communication prior), as a user would give them."""
    return ["--cluster", cluster, "--job", job]


def run_job(job_rows, fit_max, test_min, folder: Path, cluster: str) -> dict:
    """One job as a user: fit by the CLI on its small rows, predict its large rows; the baselines beside it."""
    from perfkit.model.persist import load_model

    cols = CONFIG + ["t_iter", "sync_time"]
    fit = job_rows[job_rows.n_gpus <= fit_max][cols].reset_index(drop=True)
    test = job_rows[job_rows.n_gpus >= test_min][cols].reset_index(drop=True)
    folder.mkdir(parents=True, exist_ok=True)
    fit_csv, test_csv, model, pred_csv, log = (folder / n for n in ("fit.csv", "test.csv", "model.json",
                                                                    "predicted.csv", "cli.log"))
    fit.to_csv(fit_csv, index=False)
    test.drop(columns=["sync_time"]).to_csv(test_csv, index=False)
    log.write_text("")
    t0 = time.perf_counter()
    job = str(job_rows.job.iloc[0])
    _cli(["fit", fit_csv, *fit_flags(), *_hardware(cluster, job), "--out", model], log)
    _cli(["predict", model, test_csv, "--interval", "0.9", "--out", pred_csv], log)
    seconds = time.perf_counter() - t0
    pred = pd.read_csv(pred_csv)
    saved = load_model(model)
    q_inner = saved.half_width(0.9) / saved._inflation()
    out = {cli_name(): pred["predicted"].to_numpy(dtype=float)}
    X_fit, y_fit = fit[CONFIG], fit["t_iter"].to_numpy(dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, est in baselines().items():
            out[name] = np.asarray(est.fit(X_fit, y_fit).predict(test[CONFIG]), dtype=float)
    y = test["t_iter"].to_numpy(dtype=float)
    regime = pred["regime"].to_numpy(dtype=bool) if "regime" in pred else np.zeros(len(pred), dtype=bool)
    return {"test": test, "predictions": out, "lower": pred["lower"].to_numpy(), "upper": pred["upper"].to_numpy(),
            "regime": regime, "ratio": needed(y, pred, saved, q_inner),
            "ratio_plain": needed(y, pred, saved, q_inner, lam=0.0), "q_inner": q_inner,
            "kappa": saved._inflation(), "disagreement": saved._disagreement(), "seconds": seconds,
            "chosen": saved.estimator_.formula(3)[:200], "n_fit": len(fit), "n_test": len(test)}


def needed(y, pred, saved, q, lam=None) -> np.ndarray:
    """Per row, the factor on q·d that its interval needed: max(|log(y/ŷ)| − λ·δ, 0) / (q·d), λ the saved model's
    ``disagreement`` (or ``lam``) and δ the prediction's ``disagreement`` column (0 without); the row is inside an
    interval of half-width κ·q·d + λ·δ exactly when this is <= κ. ``lam=0`` gives the rule without the disagreement
    (:data:`~perfkit.model.uncertainty.scale_intervals.DEFAULT_KAPPA`'s)."""
    ae = np.abs(np.log(y / pred["predicted"].to_numpy(dtype=float)))
    delta = pred["disagreement"].to_numpy(dtype=float) if "disagreement" in pred else np.zeros(len(pred))
    lam = saved._disagreement() if lam is None else lam
    return np.maximum(ae - lam * delta, 0.0) / (q * pred["distance"].to_numpy(dtype=float))


def run_cluster(frame, name: str) -> dict:
    """Every job of one cluster (:func:`run_job`), then the cluster's medians, margin and coverage."""
    proto = protocol(frame)
    fit_max, test_min = proto["fit_max"], proto["test_min"]
    jobs = {}
    for job in proto["jobs"]:
        print(f"{name}: {job}", file=sys.stderr, flush=True)
        jobs[job] = run_job(frame[frame.job == job], fit_max, test_min, work() / name / job, CLUSTER.get(name, name))
    preds = {}
    for model in jobs[proto["jobs"][0]]["predictions"]:
        parts = [pd.DataFrame({"job": j, "t_iter": r["test"]["t_iter"].to_numpy(), "predicted": r["predictions"][model]})
                 for j, r in jobs.items()]
        preds[model] = pd.concat(parts, ignore_index=True)
    y = preds[cli_name()]["t_iter"].to_numpy()
    lo = np.concatenate([r["lower"] for r in jobs.values()])
    hi = np.concatenate([r["upper"] for r in jobs.values()])
    inside = (y >= lo) & (y <= hi)
    regime = np.concatenate([r["regime"] for r in jobs.values()])
    mape = {m: float(np.median([np.mean(np.abs(p[p.job == j].predicted - p[p.job == j].t_iter) / p[p.job == j].t_iter)
                                * 100 for j in proto["jobs"]])) for m, p in preds.items()}
    return {"protocol": {k: (float(v) if isinstance(v, (int, float, np.floating)) else v) for k, v in proto.items()
                         if k != "inner_splits"},
            "mape_median": mape, "mape_by_job": {m: {j: float(np.mean(np.abs(p[p.job == j].predicted
                                                                               - p[p.job == j].t_iter)
                                                                        / p[p.job == j].t_iter) * 100)
                                                      for j in proto["jobs"]} for m, p in preds.items()},
            "evidence": evidence(preds, cli_name()), "coverage": float(inside.mean()), "n_test": int(len(y)),
            "regime_rows": int(regime.sum()),
            "regime_coverage": float(inside[regime].mean()) if regime.any() else None,
            "coverage_by_job": {j: float(np.mean((r["test"].t_iter >= r["lower"]) & (r["test"].t_iter <= r["upper"])))
                                for j, r in jobs.items()},
            "ratios": {j: r["ratio"].tolist() for j, r in jobs.items()},
            "ratios_plain": {j: r["ratio_plain"].tolist() for j, r in jobs.items()},
            "q_inner": {j: r["q_inner"] for j, r in jobs.items()}, "kappa": jobs[proto["jobs"][0]]["kappa"],
            "chosen": {j: r["chosen"] for j, r in jobs.items()},
            "seconds_cli": {j: r["seconds"] for j, r in jobs.items()}}


def run_regime(frame, name: str = "Pollux") -> dict:
    """The regime protocol on one cluster: per job, the CLI fitted on its single-node rows only, then every
    multi-node row with at most 16 GPUs predicted (each crosses the node boundary the fit rows never did); ratio =
    max(|log(y/ŷ)| − λ·δ, 0)/d over the saved κ·q (:func:`needed`: the factor ρ the row needed). ρ is the 90 %
    quantile of every cluster's ratios (:func:`calibration`)."""
    from perfkit.model.persist import load_model

    from perfkit.model.uncertainty.scale_intervals import DEFAULT_KAPPA

    cols = CONFIG + ["t_iter", "sync_time"]
    ratios, plain, per_qd, inside, mape = {}, {}, {}, {}, {}
    for job in sorted(frame.job.unique()):
        rows = frame[frame.job == job]
        fit = rows[rows.n_nodes == 1][cols].reset_index(drop=True)
        test = rows[(rows.n_nodes > 1) & (rows.n_gpus <= 16)][cols].reset_index(drop=True)
        if fit.n_gpus.nunique() < 3 or not len(test):
            continue
        folder = work() / "regime" / name / job
        folder.mkdir(parents=True, exist_ok=True)
        fit.to_csv(folder / "fit.csv", index=False)
        test.drop(columns=["sync_time"]).to_csv(folder / "test.csv", index=False)
        (folder / "cli.log").write_text("")
        print(f"{name} regime: {job}", file=sys.stderr, flush=True)
        _cli(["fit", folder / "fit.csv", *fit_flags(), *_hardware(CLUSTER.get(name, name), job), "--out",
              folder / "model.json"], folder / "cli.log")
        _cli(["predict", folder / "model.json", folder / "test.csv", "--interval", "0.9", "--out",
              folder / "predicted.csv"], folder / "cli.log")
        pred = pd.read_csv(folder / "predicted.csv")
        saved = load_model(folder / "model.json")
        rho = saved._regime_inflation()
        y = test["t_iter"].to_numpy(dtype=float)
        ratios[job] = needed(y, pred, saved, saved.half_width(0.9)).tolist()
        # over q·d alone (any κ): what a scaling study of one form calibrates ρ·κ from (one_form_calibration)
        per_qd[job] = needed(y, pred, saved, saved.half_width(0.9) / saved._inflation()).tolist()
        # the rule without the disagreement: ratios over κ·q with the κ of that rule (DEFAULT_REGIME_KAPPA's)
        plain[job] = needed(y, pred, saved, saved.half_width(0.9) / saved._inflation() * DEFAULT_KAPPA, 0.0).tolist()
        inside[job] = float(np.mean((y >= pred["lower"]) & (y <= pred["upper"])))
        mape[job] = float(np.mean(np.abs(pred["predicted"].to_numpy() - y) / y) * 100)
        prior = saved.regime_estimator_
        mape_by = {"the CLI's model": mape[job]}
        if prior is not None:  # the same rows from the chosen model alone, for the prior's contribution
            alone = np.asarray(saved.estimator_.predict(test[CONFIG]), dtype=float)
            mape_by["without the prior (the chosen model)"] = float(np.mean(np.abs(alone - y) / y) * 100)
        mape[job] = mape_by
        assert pred["regime"].all(), f"{job}: a multi-node row of a single-node fit is not marked regime"
    return {"ratios": ratios, "ratios_plain": plain, "ratios_qd": per_qd, "rho_saved": rho, "rho": balanced_quantile({name: pooled(ratios)}),
            "coverage_by_job": inside, "mape": mape,
            "coverage": float(np.mean([v <= rho for r in ratios.values() for v in r])),
            "n_rows": int(sum(len(r) for r in ratios.values()))}


def regime_summary(regime: dict | None) -> dict:
    """The regime protocol's rows, coverage with the shipped ρ, and the median over jobs of the MAPE with and
    without the communication prior (None without it)."""
    if not regime or not regime.get("ratios"):
        return {"regime_rows": 0, "regime_coverage": None, "regime_mape_with_prior": None,
                "regime_mape_without_prior": None}
    with_prior = [m["the CLI's model"] for m in regime["mape"].values()]
    without = [m.get("without the prior (the chosen model)", np.nan) for m in regime["mape"].values()]
    return {"regime_rows": regime["n_rows"], "regime_coverage": regime["coverage"],
            "regime_mape_with_prior": float(np.median(with_prior)),
            "regime_mape_without_prior": None if np.isnan(without).any() else float(np.median(without))}


def pooled(ratios: dict) -> list:
    """Every job's ratios (job → list) in one list."""
    return [v for r in ratios.values() for v in r]


def balanced_quantile(groups: dict, level: float = 0.9, exclude=None) -> float:
    """The ``level`` quantile of the values of ``groups`` (name → values) pooled with each group weighing the same
    (a cluster of 6000 rows counts as much as one of 900), group ``exclude`` left out: the smallest value with at
    least ``level`` of the weight at or below it."""
    parts = [np.asarray(v, dtype=float) for g, v in groups.items() if g != exclude and len(v)]
    vals = np.concatenate(parts)
    weight = np.concatenate([np.full(len(v), 1.0 / len(v)) for v in parts])
    order = np.argsort(vals, kind="stable")
    cum = np.cumsum(weight[order]) / weight.sum()
    return float(vals[order][min(int(np.searchsorted(cum, level - 1e-12)), len(vals) - 1)])


def calibration(main: dict, regime: dict) -> dict:
    """κ and ρ of the intervals from every cluster's ratios (``main``: cluster → the ratios of its rows with >= G/2
    GPUs; ``regime``: cluster → those of its multi-node rows under single-node fits), each cluster weighing the
    same; per cluster, the factor its own rows needed and its coverage with κ (ρ) from the *other* clusters."""
    from perfkit.model.uncertainty.scale_intervals import DEFAULT_DISAGREEMENT

    out = {"lambda": DEFAULT_DISAGREEMENT, "kappa": balanced_quantile(main),
           "rho": balanced_quantile(regime) if regime else None, "clusters": {}}
    for c in main:
        row = {"kappa_needed": balanced_quantile({c: main[c]})}
        if len(main) > 1:
            k = balanced_quantile(main, exclude=c)
            row.update(kappa_others=k, coverage_others=float(np.mean(np.asarray(main[c]) <= k)))
        if c in regime:
            row["rho_needed"] = balanced_quantile({c: regime[c]})
            if len(regime) > 1:
                r = balanced_quantile(regime, exclude=c)
                row.update(rho_others=r, regime_coverage_others=float(np.mean(np.asarray(regime[c]) <= r)))
        out["clusters"][c] = row
    return out


def one_form_calibration(main: dict, regime_qd: dict) -> dict:
    """κ and ρ of a scaling study of one form (no disagreement term): κ the 90 % quantile of every cluster's ratios
    |log(y/ŷ)|/(q·d) (``main``), ρ that of the regime rows' ratios over q·d (``regime_qd``) divided by κ, each
    cluster weighing the same; per cluster, the factors its own rows needed and its coverage with κ and ρ from the
    *other* clusters (a regime row is inside when its ratio over q·d is at most ρ·κ)."""
    kappa = balanced_quantile(main)
    out = {"lambda": 0.0, "kappa": kappa, "rho": balanced_quantile(regime_qd) / kappa if regime_qd else None,
           "clusters": {}}
    for c in main:
        row = {"kappa_needed": balanced_quantile({c: main[c]}), "coverage": float(np.mean(np.asarray(main[c]) <= kappa))}
        k = None
        if len(main) > 1:
            k = balanced_quantile(main, exclude=c)
            row.update(kappa_others=k, coverage_others=float(np.mean(np.asarray(main[c]) <= k)))
        if c in regime_qd:
            values = np.asarray(regime_qd[c])
            row.update(rho_needed=balanced_quantile({c: regime_qd[c]}) / kappa,
                       regime_coverage=float(np.mean(values <= out["rho"] * kappa)))
            if len(regime_qd) > 1 and k is not None:
                both = balanced_quantile(regime_qd, exclude=c)  # ρ·κ of the others
                row.update(rho_others=both / k, regime_coverage_others=float(np.mean(values <= both)))
        out["clusters"][c] = row
    return out


def ratios_of(docs: list, key: str = "ratios") -> tuple:
    """(main, regime): cluster → pooled ratios, from the results documents ``docs`` of :func:`main` (the regime
    rows' ``key``: ``"ratios"`` over the saved κ·q·d, ``"ratios_qd"`` over q·d)."""
    main, regime = {}, {}
    for doc in docs:
        for name, r in doc["clusters"].items():
            main[name] = pooled(r["ratios"])
            reg = doc.get("regime") if name == "Pollux" else r.get("regime")
            if reg and reg.get(key):
                regime[name] = pooled(reg[key])
    return main, regime


def markdown(results: dict, machine: dict, regime=None) -> str:
    form = "`perfkit fit --form auto`" if SETTINGS["form"] == "auto" else \
        f"`perfkit fit --form {SETTINGS['form']} --scale-of n_gpus` (a scaling study of one form)"
    lines = [f"# Measured small, predict large through the CLI: {form} on a file of small runs",
             "", f"Machine: {machine['cpu']}, {machine['cores']} cores; commit {machine['git_commit']}; "
             f"{machine['date']}.", "",
             f"Per job: a CSV holding only its rows with <= G/4 GPUs; {form} with the step flags "
             "and `--phases sync_time`; `perfkit predict --interval 0.9` on its rows with >= G/2 GPUs. MAPE: median "
             "over the cluster's jobs. Margin: the CLI model's median minus the best baseline's, points, 95 % "
             "bootstrap interval (test rows resampled within each job, paired).", "",
             "| cluster | jobs | fit → test GPUs | CLI MAPE % [95 %] | best baseline (MAPE %) | margin [95 %] | "
             "90 % coverage (rows) | of the regime rows (rows) | κ |", "|---|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        p, ev = r["protocol"], r["evidence"]
        s, m = ev["selected_median"], ev["margin"]
        lines.append(f"| {name} | {len(p['jobs'])} | <= {p['fit_max']:g} → {p['test_min']:g}–{p['test_max']:g} | "
                     f"{s['estimate']:.1f} [{s['interval'][0]:.1f}, {s['interval'][1]:.1f}] | {m['vs']} "
                     f"({r['mape_median'][m['vs']]:.1f}) | {m['estimate']:+.1f} [{m['interval'][0]:+.1f}, "
                     f"{m['interval'][1]:+.1f}] | {100 * r['coverage']:.1f} % ({r['n_test']}) | "
                     + (f"{100 * r['regime_coverage']:.1f} % ({r['regime_rows']})" if r.get("regime_rows") else "none")
                     + f" | {r['kappa']:g} |")
    rule = ("half-width κ·q·d + λ·δ (δ the disagreement between the consensus's two options, or on a regime row "
            "between the prior's form and the fitted curve)" if SETTINGS["form"] == "auto" else
            "half-width κ·q·d (one form: no second option, no disagreement term; a regime row ρ·κ·q·d)")
    lines += ["", f"Intervals: {rule}, κ and ρ calibrated on every cluster "
                  "together (`bench_small_runs.py --summary`, `small_runs_summary.md`: each cluster's coverage with κ "
                  "and ρ from the other clusters). The factor each cluster's own rows needed (the 90 % quantile of "
                  "max(|log(y/ŷ)| − λ·δ, 0)/(q·d)): " + ", ".join(
                      f"{n} {balanced_quantile({n: pooled(r['ratios'])}):.2f}" for n, r in results.items()) + "."]
    if regime:
        lines += ["", f"Regime flag on Pollux's single-node fits ({regime['n_rows']} multi-node rows with <= 16 GPUs): "
                      f"ρ needed {regime['rho']:.3f} (shipped ρ = {regime['rho_saved']:g}); coverage of those rows "
                      f"with the shipped ρ: {100 * regime['coverage']:.1f} %.", "",
                  "MAPE % of those rows per job (the regime rows are predicted by the communication-prior form; "
                  "beside it, the model the rule chose, which only extrapolates what the single-node rows show):", "",
                  "| job | " + " | ".join(regime["mape"]) + " |", "|---|" + "---|" * len(regime["mape"])]
        for what in next(iter(regime["mape"].values())):
            lines.append(f"| {what} | " + " | ".join(f"{m.get(what, float('nan')):.1f}" for m in regime["mape"].values())
                         + " |")
        lines += [""]
    lines += ["", "## Regime protocol: fitted on single-node rows, scored on multi-node rows (<= 16 GPUs)", "",
              "Per job the CLI on its single-node rows only; every multi-node row is a regime row (predicted by the "
              "communication-prior form, its interval widened by ρ). On Pollux this calibrates ρ (coverage 90 % by "
              "construction); elsewhere it checks it. MAPE: median over jobs.", "",
              "| cluster | jobs | rows | coverage with ρ | MAPE % with the prior | without |", "|---|---|---|---|---|---|"]
    for name, reg in [("Pollux", regime)] + [(n, r.get("regime")) for n, r in results.items() if n != "Pollux"]:
        if not reg or not reg.get("ratios"):
            continue
        r = regime_summary(reg)
        without = r["regime_mape_without_prior"]
        lines.append(f"| {name} | {len(reg['ratios'])} | {r['regime_rows']} | {100 * r['regime_coverage']:.1f} % | "
                     f"{r['regime_mape_with_prior']:.1f} | {'–' if without is None else f'{without:.1f}'} |")
    lines += ["", "## MAPE % per model (median over jobs)", ""]
    models = list(next(iter(results.values()))["mape_median"])
    lines += ["| model | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]
    for m in models:
        lines.append(f"| {m} | " + " | ".join(f"{r['mape_median'][m]:.1f}" for r in results.values()) + " |")
    return "\n".join(lines) + "\n"


def prior_contribution(name: str, res: dict) -> dict:
    """The regime rows of one cluster's test rows predicted with and without the communication prior: the saved
    models of :func:`run_job` (``build/small-runs/NAME/JOB/model.json``) predict their test rows twice, once as
    saved (the prior's form on the regime rows) and once by the chosen model alone. MAPE % over those rows (None
    when the cluster has none)."""
    from perfkit.model.persist import load_model

    y_all, with_prior, without = [], [], []
    for job in res["protocol"]["jobs"]:
        folder = work() / name / job
        model = load_model(folder / "model.json")
        test = pd.read_csv(folder / "test.csv")
        mask = model.regime(test).to_numpy()
        if not mask.any():
            continue
        rows = test[mask]
        y_all.append(rows["t_iter"].to_numpy(dtype=float))
        with_prior.append(model.predict(rows))
        without.append(np.asarray(model.estimator_.predict(rows), dtype=float))
    if not y_all:
        return {"regime_rows": 0, "with_prior": None, "without_prior": None}
    y = np.concatenate(y_all)
    ape = lambda p: float(np.mean(np.abs(np.concatenate(p) - y) / y) * 100)  # noqa: E731
    return {"regime_rows": int(len(y)), "with_prior": ape(with_prior), "without_prior": ape(without)}


SUMMARY_KEYS = ("cluster", "jobs", "fit_max", "test_min", "test_max", "mape", "best_baseline", "best_baseline_mape",
                "margin", "margin_interval", "coverage", "test_rows", "regime_rows", "regime_coverage",
                "regime_mape_with_prior", "regime_mape_without_prior", "kappa", "coverage_others",
                "regime_coverage_others")


def summary(paths, one_form=()) -> dict:
    """One row per cluster of the results files ``paths`` (what Chapter 7 reads: ``small_runs_results``); with
    ``one_form`` (the results files of a scaling study of one form) also their calibration (``"one_form"``)."""
    import json

    rows, docs = [], [json.loads(Path(path).read_text()) for path in paths]
    cal = calibration(*ratios_of(docs))
    for doc in docs:
        for name, r in doc["clusters"].items():
            c = cal["clusters"][name]
            ev, p = r["evidence"], r["protocol"]
            reg = regime_summary(doc.get("regime") if name == "Pollux" else r.get("regime"))
            rows.append(dict(zip(SUMMARY_KEYS, (
                name, p["jobs"], p["fit_max"], p["test_min"], p["test_max"], ev["selected_median"]["estimate"],
                ev["margin"]["vs"], r["mape_median"][ev["margin"]["vs"]], ev["margin"]["estimate"],
                ev["margin"]["interval"], r["coverage"], r["n_test"], reg["regime_rows"], reg["regime_coverage"],
                reg["regime_mape_with_prior"], reg["regime_mape_without_prior"], r["kappa"],
                c.get("coverage_others"), c.get("regime_coverage_others")))))
    out = {"clusters": rows, "calibration": cal, "files": [str(Path(p).relative_to(ROOT)) for p in paths],
            "rule": "bench_small_runs.py: per job, perfkit fit --form auto on the rows <= G/4 GPUs, predict >= G/2; "
                    "regime_*: the same CLI fitted on each job's single-node rows, scored on its multi-node rows "
                    "(<= 16 GPUs); *_others: with κ (ρ) calibrated on the other clusters' rows only"}
    if one_form:
        out["one_form"] = one_form_summary(one_form)
    return out


def one_form_summary(paths) -> dict:
    """The scaling study of one form (``--form ONE_FORM`` runs, ``paths``): per cluster its median MAPE and margin,
    and the calibration of DEFAULT_KAPPA and DEFAULT_REGIME_KAPPA (:func:`one_form_calibration`)."""
    import json

    docs = [json.loads(Path(path).read_text()) for path in paths]
    rows = []
    for doc in docs:
        for name, r in doc["clusters"].items():
            ev = r["evidence"]
            rows.append({"cluster": name, "mape": ev["selected_median"]["estimate"], "best_baseline": ev["margin"]["vs"],
                         "best_baseline_mape": r["mape_median"][ev["margin"]["vs"]], "margin": ev["margin"]["estimate"],
                         "margin_interval": ev["margin"]["interval"], "test_rows": r["n_test"]})
    return {"form": docs[0]["form"], "clusters": rows, "calibration": one_form_calibration(*ratios_of(docs, "ratios_qd")),
            "files": [str(Path(p).relative_to(ROOT)) for p in paths]}


def summary_markdown(doc: dict) -> str:
    """The calibration of κ and ρ over every cluster and each cluster's coverage with the other clusters' κ, ρ."""
    cal = doc["calibration"]
    pct = lambda v: "–" if v is None else f"{100 * v:.1f} %"  # noqa: E731
    num = lambda v: "–" if v is None else f"{v:.2f}"  # noqa: E731
    lines = ["# Intervals from small runs: κ and ρ calibrated on every cluster, judged on the others", "",
             f"Read from {', '.join(f'`{f}`' for f in doc['files'])} (`bench_small_runs.py --summary`). A row beyond "
             f"the fit rows gets the half-width κ·q·d + λ·δ (λ = {cal['lambda']:g}; a regime row ρ·κ·q·d + λ·δ). κ "
             "is the 90 % quantile of max(|log(y/ŷ)| − λ·δ, 0)/(q·d) over every cluster's rows with >= G/2 GPUs, "
             "each cluster weighing the same; ρ the same over the multi-node rows of the single-node fits, over κ·q·d."
             f" Over every cluster: κ = {cal['kappa']:.3f}" + (f", ρ = {cal['rho']:.3f}" if cal["rho"] else "") + ".",
             "", "Each cluster's coverage with κ (ρ) from the *other* clusters only is the honest figure (the shipped "
             "constants saw every cluster):", "",
             "| cluster | κ its rows needed | κ of the others | coverage, κ of the others | coverage, shipped κ | "
             "ρ its rows needed | ρ of the others | regime coverage, ρ of the others | regime coverage, shipped ρ |",
             "|---|---|---|---|---|---|---|---|---|"]
    shipped = {r["cluster"]: r for r in doc["clusters"]}
    for name, c in cal["clusters"].items():
        r = shipped[name]
        lines.append(f"| {name} | {num(c['kappa_needed'])} | {num(c.get('kappa_others'))} | "
                     f"{pct(c.get('coverage_others'))} | {pct(r['coverage'])} | {num(c.get('rho_needed'))} | "
                     f"{num(c.get('rho_others'))} | {pct(c.get('regime_coverage_others'))} | "
                     f"{pct(r['regime_coverage'])} |")
    if doc.get("one_form"):
        lines += one_form_markdown(doc["one_form"], pct, num)
    return "\n".join(lines) + "\n"


def one_form_markdown(one: dict, pct, num) -> list:
    """The section of :func:`summary_markdown` on a scaling study of one form."""
    cal = one["calibration"]
    lines = ["", f"## A scaling study of one form (`--form {one['form']} --scale-of n_gpus`): DEFAULT_KAPPA and "
             "DEFAULT_REGIME_KAPPA", "",
             f"Read from {', '.join(f'`{f}`' for f in one['files'])}. No second option, so no disagreement term: the "
             "half-width is κ·q·d (a regime row ρ·κ·q·d). κ is the 90 % quantile of |log(y/ŷ)|/(q·d) over every "
             "cluster's rows with >= G/2 GPUs, ρ·κ that over the multi-node rows of the single-node fits, each "
             f"cluster weighing the same. Over every cluster: κ = {cal['kappa']:.3f}"
             + (f", ρ = {cal['rho']:.3f}" if cal["rho"] else "") + ".", "",
             "| cluster | MAPE % | best baseline (MAPE %) | margin [95 %] | κ its rows needed | κ of the others | "
             "coverage, κ of the others | coverage, κ of every cluster | ρ its rows needed | ρ of the others | "
             "regime coverage, ρ of the others | regime coverage, ρ of every cluster |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in one["clusters"]:
        c = cal["clusters"][r["cluster"]]
        lo, hi = r["margin_interval"]
        lines.append(f"| {r['cluster']} | {r['mape']:.1f} | {r['best_baseline']} ({r['best_baseline_mape']:.1f}) | "
                     f"{r['margin']:+.1f} [{lo:+.1f}, {hi:+.1f}] | {num(c['kappa_needed'])} | "
                     f"{num(c.get('kappa_others'))} | {pct(c.get('coverage_others'))} | {pct(c['coverage'])} | "
                     f"{num(c.get('rho_needed'))} | {num(c.get('rho_others'))} | "
                     f"{pct(c.get('regime_coverage_others'))} | {pct(c.get('regime_coverage'))} |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clusters", default="Pollux," + ",".join(SIA_CLUSTERS),
                    help="comma-separated: Pollux and Sia clusters (read from build/external/sia when present)")
    ap.add_argument("--out", default=str(OUT), help="results path without suffix")
    ap.add_argument("--summary", action="store_true",
                    help="only gather results/small_runs_pollux.json and small_runs_sia.json into "
                         "results/small_runs_summary.json (what Chapter 7 reads)")
    ap.add_argument("--form", default="auto",
                    help=f"auto (the consensus, default) or one form, e.g. {ONE_FORM}: a scaling study of that form "
                         "alone (--scale-of n_gpus), whose ratios calibrate DEFAULT_KAPPA and DEFAULT_REGIME_KAPPA")
    ap.add_argument("--no-regime", dest="regime", action="store_false",
                    help="skip the calibration of the regime flag's ρ on Pollux's single-node rows")
    args = ap.parse_args(argv)
    SETTINGS["form"] = args.form
    if args.summary:
        import json

        files = [p for p in (OUT.with_name("small_runs_pollux.json"), OUT.with_name("small_runs_sia.json")) if p.exists()]
        one = [p for p in (OUT.with_name(f"small_runs_pollux_{ONE_FORM}.json"),
                           OUT.with_name(f"small_runs_sia_{ONE_FORM}.json")) if p.exists()]
        doc = summary(files, one)
        OUT.with_name("small_runs_summary.json").write_text(json.dumps(doc, indent=1) + "\n")
        OUT.with_name("small_runs_summary.md").write_text(summary_markdown(doc))
        print(f"wrote {OUT.with_name('small_runs_summary.json')} and .md")
        return
    results, regime = {}, None
    for name in [c.strip() for c in args.clusters.split(",") if c.strip()]:
        if name == "Pollux":
            frame, source, provenance = traces()
            if args.regime:
                regime = run_regime(frame)
        elif not any(SIA.glob(f"*/scalability-{name}.csv")):
            print(f"{name}: no tables in {SIA}; skipped", file=sys.stderr)
            continue
        else:
            frame, source, provenance = traces(SIA, name)
        results[name] = {**run_cluster(frame, name), "source": source, "provenance": provenance}
        results[name]["prior"] = prior_contribution(name, results[name])
        if args.regime and name != "Pollux":  # the shipped ρ checked on another cluster's single-node fits
            results[name]["regime"] = run_regime(frame, name)
    machine = machine_info()
    md = markdown(results, machine, regime)
    print(md)
    write_results(args.out, {"machine": machine, "form": args.form, "clusters": results, "regime": regime}, md)


if __name__ == "__main__":
    main()
