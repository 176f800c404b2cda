"""Chapter 6's computation: :func:`compute` fits every form on every dataset and returns :class:`Ch6Results`;
:func:`inputs` names every file it reads (the results cache's key hashes them).

Every model is seeded and fits on one BLAS thread, so the results do not depend on ``n_jobs``. The fit times
(``Ch6Results.timings``) depend on the machine; nothing writes them to ``figures/``.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import delayed

from ...model.selection.fitting import run_parallel
from ...model.uncertainty.conformal import ExtrapolationWarning, coverage_of, predictable_rows
from ...model.selection.search import n_parameters, search_forms
from ...evidence import SEED
from ...schema import resolve
from .data import dataset_files, load_split, median_base, read_extrap
from .models import (JOB_COST, compute_rate, fit_baseline, fit_interval_model, fit_tuned, formula, interpretable,
                     interval_rows, rate_samples, same_estimator, whatif_table)
from .params import (BLACK_BOXES, COVERAGE, EXTRAP, INTERPRETABLE, METHOD_LABELS, NON_FORMS, QUICK_ROWS, TUNED,
                     WHATIF_DATASETS, WHATIF_FALLBACK, Params)
from .results import Ch6Results, DatasetFit, MethodFit, WhatIf

__all__ = ["compute", "inputs"]


def inputs(p: Params) -> list[Path]:
    """Every file :func:`compute` reads with parameters ``p``: each analysed dataset's files
    (:func:`~perfkit.chapters.ch6.data.dataset_files`) and the Extra-P results file (when named)."""
    files = [f for ds in p.analysed for f in dataset_files(ds, p)]
    files += [resolve(p.extrap_results)] if p.extrap_results else []
    return list(dict.fromkeys(files))


def _data_notes(splits: dict, p: Params) -> list[str]:
    notes = [f"{ds}: {s.source}, fit on {len(s.y_fit)}, held out {len(s.y_test)}"
             + (f" ({s.unscored} more held-out rows have a category level no row to fit has: not scored)"
                if s.unscored else "") for ds, s in splits.items()]
    if p.quick:
        left = [ds for ds in p.datasets if ds not in splits]
        notes.append(f"quick mode: {QUICK_ROWS[0]}/{QUICK_ROWS[1]} rows per dataset, forms "
                     f"{', '.join(p.searched_forms)}, {p.folds} folds, the thesis form with the search's engine "
                     "budget and no intervals" + (f"; {', '.join(left)} left out" if left else ""))
    return notes


def _search(s, p: Params, notes: list, timings: list):
    """The form search on split ``s`` (candidates × folds in parallel) and the split without the held-out rows
    the chosen model cannot predict (a hybrid's rates by levels cover only the combinations seen in fit)."""

    forms = [f for f in p.searched_forms if f != "hybrid" or s.network is not None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = search_forms(s.X_fit, s.y_fit, **s.roles, forms=forms, network=s.network, cv=p.folds,
                              random_state=0, n_jobs=p.n_jobs, progress=p.progress,
                              options={"thesis": {"scale": None},
                                       **({"hybrid": {"fixed": s.fixed}, "symbolic": {"fixed": s.fixed}} if s.fixed
                                          else {})})
    covered = predictable_rows(search.estimator_, s.X_fit, s.X_test, s.roles["categorical"])
    if not covered.all():
        lost = int((~covered).sum())
        s = replace(s, X_test=s.X_test[covered], y_test=s.y_test[covered], unscored=s.unscored + lost)
        notes.append(f"{s.name}: {lost} more held-out rows have a combination of levels the auto-selected "
                     f"{search.table.loc[search.chosen, 'form']} form has no rate for: not scored")
    timings.append(dict(dataset=s.name, method="auto", what="form search: CV of every candidate, then the chosen "
                        "one's intervals", seconds=search.fit_time))
    for r in search.table.itertuples():
        timings.append(dict(dataset=s.name, method=f"candidate: {r.form} ({r.terms})", what="one fold fit, mean",
                            seconds=r.fit_seconds))
    return search, s


def _jobs(splits: dict, searches: dict, p: Params):
    """The fits of one parallel batch, the longest first: the interpretable forms with intervals (but the one the
    search already fitted), the black boxes and the hybrid's bootstrap refits; and the reused search models."""

    jobs, reuse = [], {}
    for ds, s in splits.items():
        chosen = searches[ds].candidates[searches[ds].chosen].estimator
        for m in INTERPRETABLE:
            est = interpretable(m, s, p)
            if est is None:
                continue
            if same_estimator(est, chosen) and searches[ds].cv == p.folds:
                reuse[(ds, m)] = searches[ds].model_
                continue
            intervals = not (p.quick and m in ("thesis", "thesis_rel", "symbolic"))
            jobs.append(((ds, m), delayed(fit_interval_model)(est, s.X_fit, s.y_fit, p.folds, intervals)))
        for m in BLACK_BOXES:
            jobs.append(((ds, m), delayed(fit_baseline)(m, s.roles, s.X_fit, s.y_fit)))
        jobs.append(((ds, TUNED), delayed(fit_tuned)(s.roles, s.X_fit, s.y_fit, p.folds)))
        if ds in ("ch4", "ch5") and s.network is not None:
            k = ("ch4", "ch5").index(ds)
            for i, c in enumerate(np.array_split(np.arange(p.rate_b), min(p.rate_b, 8))):
                jobs.append(((ds, "rate", i), delayed(rate_samples)(interpretable("hybrid", s, p), s.X_fit, s.y_fit,
                                                                    [[SEED, 6, k, int(b)] for b in c])))
    jobs.sort(key=lambda job: -JOB_COST.get(job[0][1], 0.0))  # stable: dataset order within a kind
    return jobs, reuse


def _run_batch(jobs: list, p: Params, timings: list) -> dict:
    start = time.perf_counter()
    done = run_parallel(p.n_jobs, None, [j for _, j in jobs], len(jobs), "Chapter 6: intervals, baselines, bootstrap",
                     p.progress)
    timings.append(dict(dataset="all", method="batch", what="every fit of section 2 and the hybrid's bootstrap, "
                        "in parallel (wall time)", seconds=time.perf_counter() - start))
    return {key: out for (key, _), out in zip(jobs, done)}


def _with_intervals(model, s, note: str):
    """``(est, pred, coverage, inside, extrapolated, note)`` of a model with conformal intervals."""

    est = model.estimator_
    pred = np.asarray(est.predict(s.X_test), dtype=float)
    ok = interval_rows(model, s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        iv = model.predict_interval(s.X_test[ok], COVERAGE)
    cov = coverage_of(iv, s.y_test[ok])
    n_iv = int(ok.sum())
    if not ok.all():
        note = (note + "; " if note else "") + (f"{int((~ok).sum())} held-out rows have no interval (a "
                                                "category level missing from a fold's rows)")
    return est, pred, cov, (round(cov * n_iv), n_iv), int(iv["extrapolated"].sum()), note


def _score(s, search, entries: dict, reused: set, p: Params, timings: list) -> dict:
    """Every method's :class:`MethodFit` on split ``s``'s held-out rows; ``entries`` maps a method to
    ``(model, seconds, note)``."""

    row = search.table.loc[search.chosen]
    methods = {}
    for m, (model, seconds, note) in entries.items():
        has_iv = callable(getattr(model, "predict_interval", None))
        if has_iv:
            est, pred, cov, inside, extrapolated, note = _with_intervals(model, s, note)
        else:
            est, pred, cov, inside, extrapolated = model, np.asarray(model.predict(s.X_test), dtype=float), \
                float("nan"), None, 0
        one_fit = seconds if m in NON_FORMS else getattr(est, "fit_time_", float("nan"))
        timings.append(dict(dataset=s.name, method=m, what="one fit on every row to fit", seconds=float(one_fit)))
        if m != "auto" and has_iv and m not in reused:
            timings.append(dict(dataset=s.name, method=m, what=f"fit with intervals ({p.folds} folds + 1)",
                                seconds=float(seconds)))
        form = (f"{row['form']}: {row['terms']}" if m == "auto" else note if m == TUNED else
                "" if m in BLACK_BOXES else METHOD_LABELS[m])
        methods[m] = MethodFit(pred=pred, form=form, coverage=cov, inside=inside, extrapolated=extrapolated,
                               n_params=float(n_parameters(est)) if m not in NON_FORMS else float("nan"),
                               note="" if m == TUNED else note)
    return methods


def _formulas(ds: str, search, models: dict, reused: set) -> list:
    """The rows of Table 6.3 on ``ds``: the auto-selected form, then the hybrid (unless it is the auto-selected
    model), the symbolic form and the thesis form."""
    row = search.table.loc[search.chosen]
    out = [dict(dataset=ds, method="auto", form=f"{row['form']}: {row['terms']}", formula=formula(search.estimator_))]
    for m in ("hybrid", "symbolic", "thesis"):
        if m in models and not (m != "thesis" and m in reused):
            est = models[m][0]
            out.append(dict(dataset=ds, method=m, form=METHOD_LABELS[m],
                            formula=formula(getattr(est, "estimator_", est))))
    return out


def _whatif(ds: str, s, search, models: dict, p: Params, notes: list):
    """The what-if curve of ``ds`` from the first interpretable model with intervals that predicts every worker
    count (the auto-selected form, then :data:`WHATIF_FALLBACK`), or None."""
    base = median_base(s)
    row = search.table.loc[search.chosen]
    tried = [(f"auto-selected ({row['form']})", search.model_)] + [
        (METHOD_LABELS[m], models[m][0]) for m in WHATIF_FALLBACK if m in models]
    for name, model in tried:
        if not callable(getattr(model, "predict_interval", None)):
            continue
        try:
            table = whatif_table(model, base, p.whatif_workers)
        except ValueError as exc:
            notes.append(f"what-if {ds}: {name} cannot predict every worker count ({exc}); the next form is used")
            continue
        return WhatIf(model=name, base=base, table=table, stem=f"table6_{4 + WHATIF_DATASETS.index(ds)}_whatif_{ds}")
    notes.append(f"what-if {ds}: no interpretable form with intervals can predict these worker counts")
    return None


def _hybrid_rates(ds: str, models: dict, batch: dict):
    """``(rates table, (compute rate, bootstrap samples))`` of the hybrid form on ``ds``, or ``(None, None)``."""
    if ds not in ("ch4", "ch5") or "hybrid" not in models:
        return None, None
    model = models["hybrid"][0]
    est = getattr(model, "estimator_", model)
    t = est.params_.drop(columns=["counts"])
    t.insert(0, "dataset", ds)
    samples = np.concatenate([out for key, out in batch.items() if key[:2] == (ds, "rate")])
    return t, (compute_rate(est), samples)


def _dataset_fit(s, search, batch: dict, reuse: dict, extrap: dict, p: Params, notes: list,
                 timings: list) -> DatasetFit:
    """Everything computed on one split, from its search and the batch's fits."""
    ds = s.name
    models = {m: batch[(ds, m)] for m in (*INTERPRETABLE, *NON_FORMS) if (ds, m) in batch}
    reused = {m for d, m in reuse if d == ds}
    models.update({m: (reuse[(ds, m)], 0.0, "the auto-selected model (the same form and settings)") for m in reused})
    entries = {"auto": (search.model_, search.fit_time, ""),
               **{m: models[m] for m in (*INTERPRETABLE, *NON_FORMS) if m in models}}
    methods = _score(s, search, entries, reused, p, timings)
    row = search.table.loc[search.chosen]
    rates, rate = _hybrid_rates(ds, models, batch)
    return DatasetFit(name=ds, source=s.source, n_fit=len(s.y_fit), unscored=s.unscored, y_test=s.y_test,
                      methods=methods, candidates=search.table, auto_form=str(row["form"]),
                      auto_terms=str(row["terms"]), formulas=_formulas(ds, search, models, reused), extrap=extrap,
                      models={m: e[0] for m, e in entries.items() if type(e[0]).__module__.startswith("perfkit.")},
                      whatif=_whatif(ds, s, search, models, p, notes) if ds in WHATIF_DATASETS else None,
                      rates=rates, compute_rate=rate)


def compute(p: Params) -> Ch6Results:
    """Chapter 6 on checked parameters ``p``: per dataset the form search, then every interpretable form with
    conformal intervals, the black boxes and the hybrid form's bootstrap refits in one parallel batch; the
    held-out predictions, the formulas, Extra-P's rows, the what-if curves and the hybrid form's rates."""

    splits = {ds: load_split(ds, p) for ds in p.analysed}
    notes, timings, searches = _data_notes(splits, p), [], {}
    for ds in list(splits):
        searches[ds], splits[ds] = _search(splits[ds], p, notes, timings)
    jobs, reuse = _jobs(splits, searches, p)
    batch = _run_batch(jobs, p, timings)
    extrap = read_extrap(p.extrap_results, splits) if p.extrap_results else \
        {ds: {label: {"MAPE": float("nan"), "note": "not run (extrap_results is \"\")"} for label in EXTRAP}
         for ds in splits}
    fits = {ds: _dataset_fit(s, searches[ds], batch, reuse, extrap[ds], p, notes, timings) for ds, s in splits.items()}
    return Ch6Results(datasets=list(splits), folds=p.folds, quick=p.quick, rate_b=p.rate_b, fits=fits, notes=notes,
                      timings=pd.DataFrame(timings))
