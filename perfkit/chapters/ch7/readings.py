"""What each section of Chapter 7 says, written from the numbers the chapter computed (data-dependent text only)."""
from __future__ import annotations

import numpy as np

from ...report.claims import fmt
from ...evidence import verdict
from ..common import verdict_counts, verdict_text

__all__ = ["ch7_readings", "margin_side"]

#: the ledger's verdict on "the selected model's margin over the best baseline < 0", in words
_SIDES = {"holds": "better", "does not hold": "worse", "inconclusive": "not distinguishable"}


def margin_side(lo: float, hi: float) -> str:
    """Where the 95 % interval ``[lo, hi]`` of the selected model's margin over the best baseline lies, by the
    ledger's rule (:func:`perfkit.evidence.verdict` of "margin < 0"): "better" below 0, "worse" above,
    "not distinguishable" when it touches or holds 0."""
    return _SIDES[verdict(lo, hi, "<", 0.0)]


def _best(table, column="median"):
    t = table.set_index("model")[column].sort_values()
    return t.index[0], float(t.iloc[0])


def ch7_readings(res) -> dict:
    """A short Markdown paragraph per section, from ``res.numbers`` and ``res.tables``; ``summary`` joins them."""
    q, T = res.numbers, res.tables
    out = {}
    mape = T["ext_scale_mape"].set_index("model")["median"]
    others = mape.drop("selected")
    out["pollux"] = (f"Fitted on <= {q['fit_max']:g} GPUs and scored on {q['test_min']:g}–{q['test_max']:g} "
                     f"({q['n_test']} rows of six jobs), the selected step-time form ({q['selected']}, chosen on "
                     f"inner splits of the fit rows only) errs {mape['selected']:.1f} % (median over jobs); the "
                     f"best baseline, {others.idxmin()}, {others.min():.1f} %, and the worst, {others.idxmax()}, "
                     f"{others.max():.1f} %. Worst job for the selected form: {q['worst_job']} "
                     f"({q['worst_job_mape']:.1f} %).")
    cov = T["ext_scale_coverage"].set_index("where")
    kappa = cov["kappa"].dropna() if "kappa" in cov.columns else None
    how = ("" if kappa is None or not len(kappa) else
           f" and widened by the other jobs' inflation κ ({kappa.min():.2f}–{kappa.max():.2f}: how much further their "
           "scored rows fell than their own inner splits promised)")
    out["intervals"] = (f"Its {fmt(100 * q['coverage_level'])} % intervals widen with log2 of the distance beyond "
                        f"the fitted GPUs; calibrated on each job's inner splits{how}, they cover "
                        f"{cov.loc['all', 'coverage']:.0f} % of the scored rows (median half-width "
                        f"{cov.loc['all', 'median_half_width']:.0f} % of the prediction): "
                        f"{verdict_text(T['claims_ch7'], 'coverage')} against the 80–95 % band.")
    own = []
    if "ext_ch4_batch" in T:
        name, value = _best(T["ext_ch4_batch"], "all")
        own.append(f"on our LeNet-5 epoch times, fitted on batch <= {q['ch4_fit_max']:g}, the best extrapolation to "
                   f"larger batches is the {name} at {value:.1f} %")
    if "ext_ch3_workers" in T:
        name, value = _best(T["ext_ch3_workers"])
        own.append(f"on our Chapter 3 iterations, fitted on <= {q['ch3_fit_max']:g} workers, the {name} "
                   f"({value:.1f} %, median over networks)")
    out["own"] = ("Beyond the traces: " + "; ".join(own) + ".") if own else ""
    out["clusters"] = ""
    if "ext_scale_clusters" in T:
        c = T["ext_scale_clusters"]
        others = c[c["cluster"] != "Pollux"]
        first = others["place"].str.startswith("1 of")
        out["clusters"] = (f"The same code on {len(others)} other clusters' traces (bench_scale_clusters.py): the "
                           f"selected form is first on {int(first.sum())} of them"
                           + (f" (not on {', '.join(_not_first(others[~first]))})" if (~first).any() else "")
                           + f"; its intervals cover {others['coverage %'].min():.0f}–"
                             f"{others['coverage %'].max():.0f} % there.")
    out["small_runs"] = _small_runs(T["ext_small_runs"]) if "ext_small_runs" in T else ""
    out["claims"] = f"In the claims ledger {verdict_counts(T['claims_ch7'])}."
    out["summary"] = " ".join(out[k] for k in ("pollux", "intervals", "clusters", "small_runs", "own", "claims")
                              if out[k])
    return out


def _not_first(rows) -> list[str]:
    """Each cluster where the selected form is not first, with its margin over the best baseline and that margin's
    95 % interval where the results hold it (worse: the interval lies above 0; not distinguishable: it holds 0), and
    whether the fit rows' inner splits already favoured a baseline there."""
    out = []
    for _, m in rows.iterrows():
        margin = m["margin, points"]
        if not np.isfinite(margin):
            out.append(str(m["cluster"]))
            continue
        out.append(f"{m['cluster']}: {margin:+.1f} points behind {m['best baseline']} [{m['margin lower']:+.1f}, "
                   f"{m['margin upper']:+.1f}], {margin_side(m['margin lower'], m['margin upper'])}"
                   + _inner_said(m))
    return out


def _inner_said(m) -> str:
    """Whether the fit rows alone (the inner splits) already favoured a baseline; "" in results without it."""
    sel, base = m.get("inner: selected %", np.nan), m.get("inner: best baseline %", np.nan)
    if not (np.isfinite(sel) and np.isfinite(base)):
        return ""
    if base < sel:
        return (f"; the fit rows foresaw it ({m['inner: best baseline']} {base:.1f} % vs {sel:.1f} % on the inner "
                "splits)")
    return f"; the fit rows did not foresee it (selected {sel:.1f} % vs {m['inner: best baseline']} {base:.1f} % inner)"


def _small_runs(t) -> str:
    """What the CLI gave from small runs, per cluster: its median MAPE against the best baseline (with the margin's
    side by its 95 % interval), the coverage, and the regime rows with and without the prior."""
    parts = [f"{r['cluster']} {r['CLI MAPE %']:.1f} % (best baseline {r['best baseline MAPE %']:.1f} %, "
             f"{margin_side(r['margin lower'], r['margin upper'])})" for _, r in t.iterrows()]
    regime = t[t["regime rows"] > 0]
    text = (f"Through the CLI from small runs alone (bench_small_runs.py: one job's file of the rows up to a quarter "
            f"of the largest GPU count, perfkit fit --form auto with the hardware): {'; '.join(parts)}; its 90 % "
            f"intervals cover {t['coverage %'].min():.0f}–{t['coverage %'].max():.0f} % of the scored rows"
            + (f" ({t['coverage %, κ of the other clusters'].min():.0f}–"
               f"{t['coverage %, κ of the other clusters'].max():.0f} % with κ calibrated on the other clusters "
               "only)" if t["coverage %, κ of the other clusters"].notna().all() else "") + ".")
    if len(regime):
        text += (" On the rows on more nodes than any fit row (" + "; ".join(
            f"{r['cluster']}: {int(r['regime rows'])} rows, covered {r['regime coverage %']:.0f} %"
            + ("" if np.isnan(r["regime coverage %, ρ of the other clusters"]) else
               f" ({r['regime coverage %, ρ of the other clusters']:.0f} % with ρ of the other clusters)") + ", MAPE "
            f"{r['regime MAPE %, with the prior']:.1f} % with the communication prior, "
            f"{r['regime MAPE %, without']:.1f} % without" for _, r in regime.iterrows()) + ").")
    return text
