"""Chapter 6's tables, functions of :class:`~perfkit.chapters.ch6.results.Ch6Results` (no fitting): Table 6.1
(held-out accuracy of every method, tidy and for reading), 6.2 (the search's candidates), 6.3 (the formulas) and
6.6 (the hybrid form's rates)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...model.selection.metrics import mape, r2
from ...report.tables import rounded, sig
from ...evidence import METRICS, paired_bootstrap, percentile_interval
from .claims import coverage_evidence
from .params import DATASETS, EXTRAP, METHODS, METHOD_LABELS
from .results import Ch6Results, DatasetFit

__all__ = ["heldout_table", "heldout_view", "candidates_table", "candidates_view", "formulas_table", "rates_table"]


def _method_rows(f: DatasetFit) -> list:

    ci = {m: percentile_interval(samples)
          for m, (_, samples) in paired_bootstrap(f.y_test, f.preds, METRICS["MAPE"]).items()}
    rows = []
    for m, fit in f.methods.items():
        cov_e = coverage_evidence(*fit.inside) if fit.inside is not None else None
        nan = float("nan")
        rows.append(dict(dataset=f.name, method=m, label=METHOD_LABELS[m], form=fit.form, n_params=fit.n_params,
                         MAPE=float(mape(f.y_test, fit.pred)), MAPE_lower=ci[m][0], MAPE_upper=ci[m][1],
                         R2=float(r2(f.y_test, fit.pred)), coverage=fit.coverage,
                         coverage_lower=cov_e.lo if cov_e else nan, coverage_upper=cov_e.hi if cov_e else nan,
                         extrapolated=fit.extrapolated, n_test=f.n_test, unscored=f.unscored, note=fit.note))
    return rows


def _extrap_rows(f: DatasetFit) -> list:
    nan = float("nan")
    return [dict(dataset=f.name, method=label, label=label, form=f"Extra-P PMNF, variant {EXTRAP[label]}",
                 n_params=nan, MAPE=r["MAPE"], MAPE_lower=nan, MAPE_upper=nan, R2=nan, coverage=nan,
                 coverage_lower=nan, coverage_upper=nan, extrapolated=0, n_test=f.n_test,
                 unscored=f.unscored, note=r["note"])
            for label, r in f.extrap.items()]


def heldout_table(r: Ch6Results):
    """Table 6.1, tidy: per dataset and method the held-out MAPE with its 95 % paired-bootstrap interval, R², the
    share inside the 90 % intervals with its Clopper-Pearson interval, and Extra-P's rows; datasets in
    :data:`DATASETS` order, methods in :data:`METHODS` order, then Extra-P's."""

    fits = [r.fits[ds] for ds in r.datasets]
    table = pd.concat([pd.DataFrame([row for f in fits for row in _method_rows(f)]),
                       pd.DataFrame([row for f in fits for row in _extrap_rows(f)])], ignore_index=True)
    order = {m: i for i, m in enumerate(list(METHODS) + list(EXTRAP))}
    table = table.sort_values(["dataset", "method"], key=lambda c: c.map(
        {d: i for i, d in enumerate(DATASETS)} if c.name == "dataset" else order), kind="stable")
    return table.reset_index(drop=True)


def heldout_view(table, datasets):
    """Table 6.1 for reading: one row per method, per dataset MAPE [95 % interval], R² and the 90 % coverage."""


    out = {}
    for ds in datasets:
        t = table[table["dataset"] == ds].set_index("method")
        mape_col, r2_col, cov_col = [], [], []
        for key in t.index:
            r = t.loc[key]
            if np.isfinite(r["MAPE"]):
                ci = (f" [{sig(r['MAPE_lower'])}, {sig(r['MAPE_upper'])}]" if np.isfinite(r["MAPE_lower"]) else "")
                mape_col.append(sig(r["MAPE"]) + ci)
            else:
                mape_col.append("not run" if key in EXTRAP else "")
            r2_col.append(sig(r["R2"]) if np.isfinite(r["R2"]) else "")
            cov_col.append(f"{100 * r['coverage']:.1f} %" if np.isfinite(r["coverage"]) else "")
        out[(ds, "MAPE % [95 %]")] = pd.Series(mape_col, index=t.index)
        out[(ds, "R²")] = pd.Series(r2_col, index=t.index)
        out[(ds, "in 90 % interval")] = pd.Series(cov_col, index=t.index)
    order = [m for m in list(METHODS) + list(EXTRAP) if any(m in s.index for s in out.values())]
    view = pd.DataFrame(out).reindex(order)
    view.index = [METHOD_LABELS.get(m, m) for m in view.index]
    return view


def candidates_table(r: Ch6Results):
    """Table 6.2: every dataset's search candidates (without their fit times)."""

    parts = []
    for ds in r.datasets:
        t = r.fits[ds].candidates.drop(columns=["fit_seconds"]).copy()
        t.insert(0, "dataset", ds)
        parts.append(t)
    return pd.concat(parts, ignore_index=True)


def candidates_view(table):
    """A search's candidates, best CV MAPE first, with the one-standard-error choice marked."""

    t = table.sort_values("cv_mape", kind="stable").copy()
    t["choice"] = np.where(t["chosen"], "chosen", np.where(t["within_1se"], "within 1 se", ""))
    t = t[["form", "terms", "n_params", "cv_mape", "cv_mape_se", "unscored", "choice"]]
    return rounded(t.rename(columns={"cv_mape": "CV MAPE (%)", "cv_mape_se": "± se", "n_params": "parameters"}))


def formulas_table(r: Ch6Results):
    """Table 6.3: the fitted formulas (auto-selected form, hybrid, thesis form) per dataset."""

    return pd.DataFrame([row for ds in r.datasets for row in r.fits[ds].formulas])


def rates_table(r: Ch6Results):
    """Table 6.6: the hybrid form's rates on Chapters 4 and 5 (None when it was fitted on neither)."""

    rates = [r.fits[ds].rates for ds in ("ch4", "ch5") if ds in r.fits and r.fits[ds].rates is not None]
    return pd.concat(rates, ignore_index=True) if rates else None
