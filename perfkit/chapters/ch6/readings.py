"""What each section of Chapter 6 says, written from its results and tables (data-dependent text only)."""
from __future__ import annotations

import math

from ...report.claims import fmt
from ..common import verdict_counts, verdict_text
from .params import BLACK_BOXES, DATASET_NAMES, INTERPRETABLE, METHOD_LABELS, TUNED
from .results import Ch6Results

__all__ = ["readings", "ch6_readings", "formulas_markdown", "FORMULA_FACTORS", "pct"]

#: factors of a formula written out in the notebook (the CSV keeps every one)
FORMULA_FACTORS = 60


def pct(x) -> str:
    """A MAPE as ``"12.3 %"`` (three significant digits), ``"n/a"`` for NaN."""
    return "n/a" if math.isnan(x) else f"{x:.3g} %"


def _whatif_text(r: Ch6Results) -> str:
    w = []
    for ds, f in r.fits.items():
        if f.whatif is None:
            continue
        t = f.whatif.table
        last = t.iloc[-1]
        inside = t[~t["extrapolated"]]
        top = inside.iloc[-1] if len(inside) else t.iloc[0]
        w.append(f"on {ds} ({f.whatif.model}) the predicted speedup at {int(top['workers'])} workers is "
                 f"{top['speedup']:.2f} [{top['speedup_lower']:.2f}, {top['speedup_upper']:.2f}] and at "
                 f"{int(last['workers'])} workers {last['speedup']:.2f} [{last['speedup_lower']:.2f}, "
                 f"{last['speedup_upper']:.2f}]"
                 + (f", extrapolated beyond {int(top['workers'])}" if t["extrapolated"].any() else ""))
    if not w:
        return ""
    return ("For the median one-worker configuration, " + "; ".join(w)
            + ". The speedup intervals join two 90 % time intervals, so they are conservative; "
            "past the measured worker counts they rest on the form alone.")


def _accuracy(r: Ch6Results, mape: dict) -> dict:
    """The data, held-out, search and coverage readings; ``mape`` is ``{dataset: {method: MAPE}}``."""
    out = {"data": "; ".join(f"{DATASET_NAMES[ds]} ({f.source}): fit on {f.n_fit}, held out {f.n_test}"
                             + (f" (+{f.unscored} with a category level never fitted, not scored)"
                                if f.unscored else "") for ds, f in r.fits.items()) + "."}
    parts = []
    for ds in r.datasets:
        m = mape[ds]
        box = min(BLACK_BOXES, key=lambda k: m[k])
        tuned = f", tuned by CV {pct(m[TUNED])}" if TUNED in m else ""
        parts.append(f"{ds}: auto-selected {r.fits[ds].auto_form} {pct(m['auto'])} against the thesis form's "
                     f"{pct(m['thesis'])} and the best black box ({METHOD_LABELS[box]}) {pct(m[box])}{tuned}")
    out["heldout"] = "Held-out MAPE: " + "; ".join(parts) + "."
    sym = [f"{ds} {pct(mape[ds]['symbolic'])}" for ds in r.datasets if "symbolic" in mape[ds]]
    if sym:
        best = [ds for ds in r.datasets if "symbolic" in mape[ds]
                and mape[ds]["symbolic"] <= min(mape[ds].get(k, float("inf")) for k in INTERPRETABLE)]
        out["symbolic"] = ("Symbolic regression (gplearn, at most 20 nodes, in log space) reaches " + ", ".join(sym)
                           + " held-out MAPE; it is the most accurate interpretable form on "
                           + (", ".join(best) if best else "none of the datasets")
                           + " (Table 6.3 prints its formula beside the others).")
    out["search"] = ("The search kept " + "; ".join(
        f"{r.fits[ds].auto_form} ({r.fits[ds].auto_terms}) on {ds}" for ds in r.datasets)
        + f", each the simplest candidate within one standard error of the best {r.folds}-fold CV MAPE.")
    cov = [f"{ds} {100 * r.fits[ds].coverage['auto']:.1f} %" for ds in r.datasets if "auto" in r.fits[ds].coverage]
    out["coverage"] = (f"The auto-selected model's 90 % intervals hold {', '.join(cov)} of the held-out rows "
                       "(the ledger asks for 85-95 %).")
    return out


def readings(r: Ch6Results, tables: dict) -> dict:
    """Section → Markdown paragraph, from the results ``r`` and the chapter's ``tables`` (Table 6.1 for the
    MAPEs, the ledger for the verdicts, Table 6.3 for the formulas)."""
    T = tables
    heldout = T["table6_1_heldout"]
    mape = {ds: {row.method: row.MAPE for row in heldout[heldout["dataset"] == ds].itertuples()} for ds in r.datasets}
    out = _accuracy(r, mape)
    whatif = _whatif_text(r)
    if whatif:
        out["whatif"] = whatif
    if r.compute_rate:
        rate = r.compute_rate
        out["rates"] = (f"The hybrid form's compute rate on one worker is {fmt(rate['ch4'][0])} s per forward FLOP "
                        f"on LeNet-5 and {fmt(rate['ch5'][0])} on 3D-ResAttNet-18 (the same CPU); the claim that they "
                        f"agree within 20 %: {verdict_text(T['claims_ch6'], 'compute_rate')}.")
    ex = [f"{label} {pct(row['MAPE'])} on {ds}" for ds in r.datasets for label, row in r.fits[ds].extrap.items()
          if not math.isnan(row["MAPE"])]
    out["extrap"] = ("Extra-P, from benchmarks/results/extrap.json on the same splits: " + ", ".join(ex) + "."
                     if ex else "Extra-P was not run on these splits (benchmarks/bench_extrap.py).")
    verdicts = T["claims_ch6"].set_index("key")["verdict"]
    rf = [ds for ds in r.datasets if verdicts.get(f"auto_vs_rf[{ds}]") == "holds"]
    out["claims"] = (f"In the claims ledger {verdict_counts(T['claims_ch6'])}; the auto-selected model is "
                     f"significantly more accurate than the random forest on "
                     f"{', '.join(rf) if rf else 'no dataset'}.")
    out["formulas"] = formulas_markdown(T["table6_3_formulas"], DATASET_NAMES)
    out["summary"] = " ".join(out[k] for k in ("heldout", "coverage", "rates", "claims") if k in out)
    return out


def ch6_readings(res) -> dict:
    """The readings of a Chapter 6 :class:`~perfkit.chapters.result.ChapterResult` (:func:`readings` of its
    results and tables)."""
    return readings(res.results, res.tables)


def formulas_markdown(table, names) -> str:
    """Each fitted formula of Table 6.3 as a Markdown code block, wrapped at its factors and terms."""
    blocks = []
    for r in table.itertuples():
        text = r.formula
        sep = " · " if text.count(" · ") >= text.count(" + ") else " + "
        head, parts = (text.split(" = ", 1) + [""])[:2] if " = " in text else ("", text)
        items = parts.split(sep)
        more = len(items) - FORMULA_FACTORS
        items = items[:FORMULA_FACTORS]
        lines, line = [], (head + " = " if head else "")
        for i, item in enumerate(items):
            piece = item + (sep.rstrip() if i < len(items) - 1 else "")
            if len(line) + len(piece) > 110 and line.strip():
                lines.append(line.rstrip())
                line = "    "
            line += piece + " "
        lines.append(line.rstrip())
        if more > 0:
            lines.append(f"    … and {more} more factors (every one in table6_3_formulas.csv)")
        blocks.append(f"**{names[r.dataset]}**, {r.form}:\n\n```\n" + "\n".join(lines) + "\n```")
    return "\n\n".join(blocks)
