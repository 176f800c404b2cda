"""Chapter 7's tables: pure functions of :class:`~.compute.Ch7Results`."""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["by_group", "by_factor", "clusters_table", "coverage_table", "formulas_table", "with_extrap",
           "small_runs_table"]

#: the row label of Extra-P's results (read from benchmarks/results/scale.json)
EXTRAP = "Extra-P (PMNF; bench_scale.py)"


def by_group(study) -> pd.DataFrame:
    """Model × group MAPE (%) on the scored rows (all factors), with the median over groups last."""
    e = study.errors
    t = e[e["factor"].astype(str) == "all"].pivot(index="model", columns="group", values="mape")
    cols = [c for c in t.columns if c != "median"] + (["median"] if "median" in t.columns else [])
    return t.loc[study.models, cols].rename_axis(columns=None).reset_index()


def by_factor(study) -> pd.DataFrame:
    """Model × extrapolation factor (column / fit_max) MAPE (%), the median over groups (or all rows)."""
    e = study.errors
    e = e[(e["group"] == "median") & (e["factor"].astype(str) != "all")]
    t = e.assign(factor=[f"{float(f):g}×" for f in e["factor"]]).pivot(index="model", columns="factor",
                                                                         values="mape")
    order = sorted(t.columns, key=lambda c: float(c[:-1]))
    return t.loc[study.models, order].rename_axis(columns=None).reset_index()


def coverage_table(test, level: float, q_by_job: dict, calibration=None) -> pd.DataFrame:
    """Share (%) of the scored rows inside the selected model's intervals, per job and per factor, with the
    fitted half-width q (log units per unit of distance) and the median relative half-width; with ``calibration``
    (:func:`perfkit.model.uncertainty.extrapolation.calibrate_transfer`'s table) also each job's inner q and inflation κ."""
    inside = (test["t_iter"] >= test["lower"]) & (test["t_iter"] <= test["upper"])
    half = (test["upper"] - test["lower"]) / 2 / test["selected"]
    cal = {} if calibration is None else calibration.to_dict(orient="index")
    rows = [dict(where=f"job {j}", n=int((test["job"] == j).sum()), coverage=100 * float(inside[test["job"] == j].mean()),
                 q=q_by_job.get(j, np.nan), median_half_width=100 * float(half[test["job"] == j].median()),
                 **({} if calibration is None else {"q_inner": cal.get(j, {}).get("q_inner", np.nan),
                                                    "kappa": cal.get(j, {}).get("kappa", np.nan)}))
            for j in sorted(test["job"].unique())]
    rows += [dict(where=f"{f:g}× the fitted GPUs", n=int((test["factor"] == f).sum()),
                  coverage=100 * float(inside[test["factor"] == f].mean()), q=np.nan,
                  median_half_width=100 * float(half[test["factor"] == f].median()))
             for f in sorted(test["factor"].unique())]
    rows.append(dict(where="all", n=len(test), coverage=100 * float(inside.mean()), q=np.nan,
                     median_half_width=100 * float(half.median())))
    return pd.DataFrame(rows).assign(stated=100 * level)


def formulas_table(formulas: dict) -> pd.DataFrame:
    """One row per job: the selected form fitted on that job's fit rows, as one formula."""
    return pd.DataFrame([dict(job=j, formula=f) for j, f in formulas.items()])


def with_extrap(table, extrap: dict | None, kind: str):
    """``table`` (:func:`by_group` or :func:`by_factor` of the traces) with a row for Extra-P when it was run on
    the same split (NaN cells where its results lack a column)."""
    if not extrap or extrap.get("status") != "ok":
        return table
    if kind == "group":
        row = {**extrap["by_job"], "median": extrap["median"]}
    else:
        row = {f"{float(k):g}×": v for k, v in extrap["by_factor"].items()}
    extra = pd.DataFrame([{"model": EXTRAP, **{c: row.get(c, np.nan) for c in table.columns if c != "model"}}])
    return pd.concat([table, extra], ignore_index=True)


def clusters_table(rows) -> pd.DataFrame:
    """One row per cluster (:func:`~.compute.read_clusters`): the split, the selected model's median MAPE and place,
    the best baseline, the selected model's margin over it (points, with its 95 % interval; NaN in results written
    before the margin), the coverage of the 90 % intervals, Kendall's τ against Pollux's ranking, and what the fit
    rows alone said: the selected model's and the best baseline's scores on the inner splits (NaN and "" in results
    written before them)."""
    return pd.DataFrame([{
        "cluster": r["cluster"], "jobs": len(r["jobs"]),
        "fit → test GPUs": f"<= {r['fit_max']:g} → {r['test_min']:g}–{r['test_max']:g}",
        "inner splits": r["inner_splits"],
        "inner: selected %": np.nan if r.get("inner_selected") is None else r["inner_selected"],
        "inner: best baseline": r.get("inner_best_baseline") or "",
        "inner: best baseline %": (np.nan if r.get("inner_best_baseline_score") is None
                                   else r["inner_best_baseline_score"]),
        "selected MAPE %": r["selected_mape"],
        "place": f"{r['place']} of {r['models']}", "best baseline": r["best_baseline"],
        "best baseline MAPE %": r["best_baseline_mape"],
        "margin, points": np.nan if r.get("margin") is None else r["margin"],
        "margin lower": np.nan if r.get("margin_interval") is None else r["margin_interval"][0],
        "margin upper": np.nan if r.get("margin_interval") is None else r["margin_interval"][1],
        "coverage %": 100 * r["coverage"],
        "test rows": r["test_rows"],
        "Kendall τ vs Pollux": np.nan if r["kendall_tau_vs_pollux"] is None else r["kendall_tau_vs_pollux"]}
        for r in rows])


def small_runs_table(rows) -> pd.DataFrame:
    """One row per cluster of the small-runs study (:func:`~.small_runs.read_small_runs`): the CLI's median MAPE, the
    best baseline, the margin with its 95 % interval, the coverage of the 90 % intervals over every scored row and
    over the regime-crossing rows alone (each also with κ, ρ calibrated on the other clusters only: the honest
    figure, since the shipped constants saw every cluster), and those rows' MAPE with and without the communication
    prior."""
    nan = lambda v: np.nan if v is None else v  # noqa: E731
    return pd.DataFrame([{
        "cluster": r["cluster"], "jobs": len(r["jobs"]),
        "fit → test GPUs": f"<= {r['fit_max']:g} → {r['test_min']:g}–{r['test_max']:g}",
        "CLI MAPE %": r["mape"], "best baseline": r["best_baseline"], "best baseline MAPE %": r["best_baseline_mape"],
        "margin, points": r["margin"], "margin lower": r["margin_interval"][0], "margin upper": r["margin_interval"][1],
        "coverage %": 100 * r["coverage"], "coverage %, κ of the other clusters": 100 * nan(r["coverage_others"]),
        "test rows": r["test_rows"], "regime rows": r["regime_rows"],
        "regime coverage %": 100 * nan(r["regime_coverage"]),
        "regime coverage %, ρ of the other clusters": 100 * nan(r["regime_coverage_others"]),
        "regime MAPE %, with the prior": nan(r["regime_mape_with_prior"]),
        "regime MAPE %, without": nan(r["regime_mape_without_prior"]), "κ": r["kappa"]} for r in rows])
