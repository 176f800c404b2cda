"""What each section's result says, written from the numbers a chapter computed.

Every paragraph is generated from :attr:`ChapterResult.numbers` and its tables, so
the notebooks' readings and the README's "What our measurements show" (the
``summary`` reading of each chapter, see :func:`perfkit.chapters.findings`) can
never disagree with the data.
"""
from __future__ import annotations

import math

from ..report.claims import fmt

__all__ = ["ch6_readings", "verdict_counts"]


def verdict_counts(claims) -> str:
    """``"3 of 9 claims hold, 4 do not, 1 is inconclusive, 1 cannot be tested here"``."""
    n = claims["verdict"].value_counts()
    hold, fail = n.get("holds", 0), n.get("does not hold", 0)
    parts = [f"{hold} of {len(claims)} claims {'holds' if hold == 1 else 'hold'}",
             f"{fail} {'does' if fail == 1 else 'do'} not",
             f"{n.get('inconclusive', 0)} {'is' if n.get('inconclusive', 0) == 1 else 'are'} inconclusive"]
    if n.get("cannot be tested here", 0):
        parts.append(f"{n['cannot be tested here']} cannot be tested here")
    return ", ".join(parts)


def _verdict(claims, key: str) -> str:
    """Claim ``key``'s verdict with its estimate and interval: ``"holds (0.42, 95 % interval [0.3, 0.5])"``."""
    row = claims[claims["key"] == key]
    if not len(row):
        return "not judged"
    r = row.iloc[0]
    if r["verdict"] == "cannot be tested here" or not r["interval"]:
        return r["verdict"]
    where = "exact" if r["interval"] == "exact" else f"95 % interval {r['interval']}"
    return f"{r['verdict']} ({fmt(r['estimate'])}, {where})"


def _pct(x) -> str:
    return "n/a" if math.isnan(x) else f"{x:.3g} %"


def ch6_readings(res) -> dict:
    from .ch6 import BLACK_BOXES, DATASET_NAMES, METHOD_LABELS

    q, T = res.numbers, res.tables
    out = {}
    rows = q["rows"]
    out["data"] = ("; ".join(f"{DATASET_NAMES[ds]} ({r['source']}): fit on {r['fit']}, held out {r['test']}"
                             + (f" (+{r['unscored']} with a category level never fitted, not scored)"
                                if r["unscored"] else "") for ds, r in rows.items()) + ".")
    parts = []
    for ds in q["datasets"]:
        m = q["mape"][ds]
        box = min(BLACK_BOXES, key=lambda k: m[k])
        parts.append(f"{ds}: auto-selected {q['auto_form'][ds]} {_pct(m['auto'])} against the thesis form's "
                     f"{_pct(m['thesis'])} and the best black box ({METHOD_LABELS[box]}) {_pct(m[box])}")
    out["heldout"] = "Held-out MAPE: " + "; ".join(parts) + "."
    out["search"] = ("The search kept " + "; ".join(
        f"{q['auto_form'][ds]} ({q['auto_terms'][ds]}) on {ds}" for ds in q["datasets"])
        + f", each the simplest candidate within one standard error of the best {q['folds']}-fold CV MAPE.")
    cov = [f"{ds} {100 * q['coverage'][ds]['auto']:.1f} %" for ds in q["datasets"] if "auto" in q["coverage"][ds]]
    out["coverage"] = (f"The auto-selected model's 90 % intervals hold {', '.join(cov)} of the held-out rows "
                       "(the ledger asks for 85-95 %).")
    w = []
    for ds, d in q.get("whatif", {}).items():
        t = d["table"]
        last = t.iloc[-1]
        inside = t[~t["extrapolated"]]
        top = inside.iloc[-1] if len(inside) else t.iloc[0]
        w.append(f"on {ds} ({d['model']}) the predicted speedup at {int(top['workers'])} workers is "
                 f"{top['speedup']:.2f} [{top['speedup_lower']:.2f}, {top['speedup_upper']:.2f}] and at "
                 f"{int(last['workers'])} workers {last['speedup']:.2f} [{last['speedup_lower']:.2f}, "
                 f"{last['speedup_upper']:.2f}]"
                 + (f", extrapolated beyond {int(top['workers'])}" if t["extrapolated"].any() else ""))
    if w:
        out["whatif"] = ("For the median one-worker configuration, " + "; ".join(w)
                         + ". The speedup intervals join two 90 % time intervals, so they are conservative; "
                         "past the measured worker counts they rest on the form alone.")
    if q.get("compute_rate"):
        r = q["compute_rate"]
        out["rates"] = (f"The hybrid form's compute rate on one worker is {fmt(r['ch4'][0])} s per forward FLOP "
                        f"on LeNet-5 and {fmt(r['ch5'][0])} on 3D-ResAttNet-18 (the same CPU); the claim that they agree "
                        f"within 20 %: {_verdict(T['claims_ch6'], 'compute_rate')}.")
    ex = []
    for ds in q["datasets"]:
        for label, r in q["extrap"][ds].items():
            if not math.isnan(r["MAPE"]):
                ex.append(f"{label} {_pct(r['MAPE'])} on {ds}")
    out["extrap"] = ("Extra-P, from benchmarks/results/extrap.json on the same splits: " + ", ".join(ex) + "."
                     if ex else "Extra-P was not run on these splits (benchmarks/bench_extrap.py).")
    verdicts = T["claims_ch6"].set_index("key")["verdict"]
    rf = [ds for ds in q["datasets"] if verdicts.get(f"auto_vs_rf[{ds}]") == "holds"]
    out["claims"] = (f"In the claims ledger {verdict_counts(T['claims_ch6'])}; the auto-selected model is "
                     f"significantly more accurate than the random forest on "
                     f"{', '.join(rf) if rf else 'no dataset'}.")
    out["formulas"] = _formulas_markdown(T["table6_3_formulas"], DATASET_NAMES)
    out["summary"] = " ".join(out[k] for k in ("heldout", "coverage", "rates", "claims") if k in out)
    return out


#: factors of a formula written out in the notebook (the CSV keeps every one)
FORMULA_FACTORS = 60


def _formulas_markdown(table, names) -> str:
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
