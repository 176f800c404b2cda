"""Chapter 4's computation: every fit, baseline, sweep and regression, into :class:`~.results.Ch4Results`.

Nothing here draws or formats; :func:`compute` is what the results cache stores, :func:`inputs` the files
its results depend on.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...data.measured import load_provenance, load_steps, provenance_path, thesis_split
from ...data.thesis import framework_name
from ...model.selection.baselines import compare_models, make_baseline
from ...model.selection.fitting import fit_repeated, regularisation_sweep
from ...model.selection.paired import paired_ratios
from ...model.analytic.scaling import level_effects
from ...model.selection.search import make_form
from ...evidence import (METRICS, SEED, B, Evidence, normal_draws, paired_bootstrap, percentile_interval,
                                   seed_bootstrap)
from ...schema import ROLES, resolve
from ..result import ParameterError
from .machines import compare_machines, machine_inputs
from .params import Params, check_params, make_model
from .results import FIT_NAMES, Ch4Results, FrameworkFit, error_row

__all__ = ["compute", "inputs", "fit_framework", "heldout_errors", "heldout_predictions", "framework_powers",
           "dataset_paths", "EPOCH_CHECK", "PAIRED_FACTORS", "POWER_SOURCE"]

#: the epoch extrapolation check's file, beside each framework's ch4 file
EPOCH_CHECK = "epoch_check.csv"
#: the hyperparameters of the paired comparison's figure, in its panel order (the table has every one)
PAIRED_FACTORS = ("workers", "batch_size", "num_filters", "kernel_size", "stride", "padding", "pool_size",
                  "activation", "optimizer", "dataset", "dropout", "learning_rate")
#: where the draws of each framework's q(workers) come from (the ledger's ``resampling`` column)
POWER_SOURCE = ("{B} draws from the normal approximation (HC3 covariance) of an OLS fit of log time on log workers, "
                "log batch size and every other hyperparameter as a category, per framework")


def dataset_paths(p: Params) -> list[Path]:
    """The measured files the chapter analyses: ``dataset`` first, then each other framework's file."""
    main = resolve(p.dataset)
    return [main] + [path for path in map(resolve, p.framework_datasets) if path != main]


def inputs(p: Params) -> list[Path]:
    """Every file :func:`compute` reads: the measured files, their provenance and their epoch checks, and the
    machines' files and their provenance."""
    out = []
    for path in dataset_paths(p):
        out += [path, provenance_path(path), path.parent / EPOCH_CHECK]
    return out + machine_inputs(p)


def _fit_generic(p: Params, X_fit, y_fit, framework: str) -> dict:
    """§2–§4: the repeated fits without regularisation (Table 4.2), with L2 (Table 4.3) and with L1 (Table 4.4)."""

    kw = dict(seeds=p.n_seeds, n_jobs=p.n_jobs, progress=p.progress)
    settings = {"DE": ({}, "Table 4.2 DE fits"), "DE+L2": (dict(penalty="l2", lam=p.lam_l2), "Table 4.3 DE+L2 fits"),
                "DE+L1": (dict(penalty="l1", lam=p.lam_l1), "Table 4.4 DE+L1 fits")}
    return {name: fit_repeated(make_model(**settings[name][0], **p.de_kw), X_fit, y_fit,
                               desc=f"{framework}: {settings[name][1]}", **kw) for name in ("DE", "DE+L2", "DE+L1")}


def _sweep(p: Params, X_fit, y_fit, X_test, y_test, framework: str):
    """§7: the λ sweep of Figs. 4.15–4.17."""

    grid = [1e-4, 1e-2, 1.0] if p.quick else list(p.lams)
    return regularisation_sweep(make_model(**p.de_kw), X_fit, y_fit, X_test, y_test, penalties=("l1", "l2"),
                                lams=grid, seeds=range(1 if p.quick else p.sweep_seeds), n_jobs=p.n_jobs,
                                progress=p.progress, desc=f"{framework}: Figs. 4.15–4.17 λ sweep")


def fit_framework(p: Params, data_path: Path) -> FrameworkFit:
    """Sections 1–7 of the chapter on one framework's file: its fits, baselines, sweep and level effects."""

    label = data_path.parent.name  # e.g. pytorch-cpu
    X, y, frame = load_steps(data_path, target=p.target)
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=p.n_fit, n_test=p.n_test, seed=p.split_seed)
    framework = framework_name(frame["framework"].iloc[0] if "framework" in frame.columns else label.split("-")[0])
    fits = _fit_generic(p, X_fit, y_fit, framework)
    preds = {k: np.asarray(fits[k].best.predict(X_test), dtype=float) for k in FIT_NAMES}
    roles = ROLES["ch4"]
    baselines = {"RF": make_baseline("rf", **roles, random_state=0).fit(X_fit, y_fit),
                 "SVR": make_baseline("svr", **roles).fit(X_fit, y_fit)}
    models = {"DE": fits["DE"].best, "DE+L2": fits["DE+L2"].best, **baselines}
    comparison = compare_models(models, X_fit, y_fit, X_test, y_test, prefitted=set(models))
    preds.update({k: np.asarray(m.predict(X_test), dtype=float) for k, m in baselines.items()})
    return FrameworkFit(label=label, framework=framework, path=str(data_path), target=p.target, lam_l2=p.lam_l2,
                        lam_l1=p.lam_l1, provenance=load_provenance(data_path), frame=frame, n_fit=len(X_fit),
                        y_test=np.asarray(y_test, dtype=float), fits=fits, preds=preds, comparison=comparison,
                        sweep=_sweep(p, X_fit, y_fit, X_test, y_test, framework),
                        effects=level_effects(frame, p.target, [c for r in roles.values() for c in r]))


def framework_powers(frame, target: str, roles) -> dict:
    """``{framework: Evidence}``: q(workers) of each framework of a measured file (OLS of log time), ``{}`` for one."""

    if "framework" not in frame.columns or frame["framework"].nunique() < 2:
        return {}
    factors = [c for r in roles.values() for c in r]
    out = {}
    for k, (fw, sub) in enumerate(frame.groupby("framework", sort=True)):
        params, cov, _ = level_effects(sub, target, factors, log_columns=("workers", "batch_size"))
        i = list(params.index).index("log(workers)")
        draws = normal_draws(params.to_numpy(), cov.to_numpy(), seed=[SEED, k])[:, i]  # independent per framework
        out[str(fw)] = Evidence.from_samples(float(params.iloc[i]), draws, POWER_SOURCE.format(B=B))
    return out


def _paired(p: Params, parts):
    """§8: each framework's time over the main framework's on the same configurations, by hyperparameter."""

    return paired_ratios({part.label: part.frame for part in parts}, p.target, PAIRED_FACTORS,
                         reference=parts[0].label)


def _split(p: Params, part: FrameworkFit):
    X, y, _ = load_steps(part.file, target=p.target)
    return thesis_split(X, y, n_fit=p.n_fit, n_test=p.n_test, seed=p.split_seed)


def _pooled_models(p: Params, X_fit, y_fit, roles: dict) -> dict:

    return {
        "DE+L2": fit_repeated(make_model(roles, penalty="l2", lam=p.lam_l2, **p.de_kw), X_fit, y_fit,
                              seeds=min(p.n_seeds, 3), n_jobs=p.n_jobs, progress=p.progress,
                              desc="every framework: DE+L2 fits").best,
        "log-linear": make_form("loglinear", **roles).fit(X_fit, y_fit),
        "RF": make_baseline("rf", **roles, random_state=0).fit(X_fit, y_fit),
    }


def _pooled(p: Params, parts):
    """§9: one model fitted on every framework's fit rows with the framework as a categorical input, against the
    per-framework fits, on each framework's held-out rows (the thesis fits each framework separately)."""


    roles = {k: list(v) for k, v in ROLES["ch4"].items()}
    splits = [_split(p, part) for part in parts]
    tag = [part.label.split("-")[0] for part in parts]
    X_fit = pd.concat([s[0].assign(framework=t) for s, t in zip(splits, tag)], ignore_index=True)
    y_fit = pd.concat([s[2] for s in splits], ignore_index=True)
    pooled = _pooled_models(p, X_fit, y_fit, {**roles, "categorical": roles["categorical"] + ["framework"]})
    rows = []
    for part, (Xf, Xt, yf, yt), t in zip(parts, splits, tag):
        own = {"DE+L2": part.preds["DE+L2"], "RF": part.preds["RF"],
               "log-linear": make_form("loglinear", **roles).fit(Xf, yf).predict(Xt)}
        preds = {}
        for method in pooled:
            preds[f"{method} own"] = np.asarray(own[method], dtype=float)
            preds[f"{method} pooled"] = np.asarray(pooled[method].predict(Xt.assign(framework=t)), dtype=float)
        boot = paired_bootstrap(yt, preds, METRICS["MAPE"])
        for method in pooled:
            (e_own, s_own), (e_pool, s_pool) = boot[f"{method} own"], boot[f"{method} pooled"]
            d = Evidence.from_samples(e_pool - e_own, s_pool - s_own)
            lo, hi = percentile_interval(s_pool)
            rows.append(dict(framework=part.label, method=method, n_test=len(yt), mape_own=e_own, mape_pooled=e_pool,
                             pooled_lo=lo, pooled_hi=hi, difference=d.estimate, difference_lo=d.lo,
                             difference_hi=d.hi))
    return pd.DataFrame(rows)


def _epoch(parts):
    """§1: how far ``steps_per_epoch × step time`` (the fitted target) is from one whole timed epoch, per framework.

    Reads ``epoch_check.csv`` beside each framework's file (``perfkit collect epoch``); frameworks without one are
    left out, and None when none has one. The interval of the median error is a bootstrap over the checked
    configurations.
    """


    rows = []
    for part in parts:
        path = part.file.parent / EPOCH_CHECK
        if not path.exists():
            continue
        df = pd.read_csv(path)
        ok = df[df["status"] == "ok"]
        err = pd.to_numeric(ok["epoch_error"], errors="coerce").dropna().to_numpy(dtype=float)
        if len(err) < 2:
            continue
        est, samples = seed_bootstrap(err, np.median)
        lo, hi = percentile_interval(samples)
        rows.append(dict(framework=part.label, checks=len(err), skipped=int((df["status"] != "ok").sum()),
                         median_error=est, median_lo=lo, median_hi=hi, abs_error_median=float(np.median(np.abs(err))),
                         abs_error_max=float(np.max(np.abs(err))), share_within_5pct=float(np.mean(np.abs(err) <= 0.05)),
                         epoch_steps_median=float(ok["epoch_steps"].median()),
                         epoch_measured_median_s=float(ok["epoch_measured"].median())))
    return pd.DataFrame(rows) if rows else None


def compute(p: Params) -> Ch4Results:
    """Fit every framework's file (:func:`fit_framework`), then the sections across frameworks, then eq. 4.4 on
    each machine's file (:func:`~.machines.compare_machines`)."""

    parts = [fit_framework(p, path) for path in dataset_paths(p)]
    frame = pd.concat([part.frame for part in parts], ignore_index=True)
    several = len(parts) > 1
    return Ch4Results(parts=parts, paired=_paired(p, parts) if several else None,
                      pooled=_pooled(p, parts) if several else None, epoch=_epoch(parts),
                      framework_q=framework_powers(frame, p.target, ROLES["ch4"]) or None,
                      machines=compare_machines(p))


def heldout_predictions(fit_name: str = "DE+L2", **params):
    """``(y_test, predictions)`` of one Chapter 4 fit on its held-out rows, as arrays, without the rest of the
    chapter: the same data, split, seeds and engine as the chapter give the same numbers."""

    if fit_name not in FIT_NAMES:
        raise ParameterError(f"fit_name: got {fit_name!r}; expected one of {', '.join(map(repr, FIT_NAMES))}")
    p = check_params(**{"framework_datasets": (), "machine_datasets": (), **params})  # one file: no other is read
    penalty, lam = {"DE": (None, 0.0), "DE+L1": ("l1", p.lam_l1), "DE+L2": ("l2", p.lam_l2)}[fit_name]
    X, y, _ = load_steps(resolve(p.dataset), target=p.target)
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=p.n_fit, n_test=p.n_test, seed=p.split_seed)
    kw = dict(penalty=penalty, lam=lam) if penalty else {}
    fit = fit_repeated(make_model(**kw, **p.de_kw), X_fit, y_fit, seeds=p.n_seeds, n_jobs=p.n_jobs,
                       progress=p.progress, desc=f"Chapter 4 {fit_name} fits")
    return np.asarray(y_test, dtype=float), np.asarray(fit.best.predict(X_test), dtype=float)


def heldout_errors(fit_name: str = "DE+L2", **params) -> dict:
    """Held-out errors (:func:`~.results.error_row`) of one Chapter 4 fit (:func:`heldout_predictions`)."""
    return error_row(*heldout_predictions(fit_name, **params))
