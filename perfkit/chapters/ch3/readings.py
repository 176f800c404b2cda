"""What each section of Chapter 3 says on this data: short Markdown paragraphs from :class:`Ch3Results` and the
claims ledger alone (:func:`ch3_readings`)."""
from __future__ import annotations

from ..common import short_label, verdict_counts, verdict_text
from .results import Ch3Results
from .tables import consistency

__all__ = ["ch3_readings"]


def _phases(r: Ch3Results) -> str:
    m = r.measured.phases
    m = m[~m["phase"].isin(["t_iter"])]
    top = m.sort_values("mean", ascending=False).groupby(["framework", "model"], sort=False).head(2)
    tops = {f"{fw.split(' (')[0]} {mod}": sorted(g["phase"]) for (fw, mod), g in top.groupby(["framework", "model"])}
    fb = all(v == ["t_b", "t_f"] for v in tops.values())
    n_fw = m["framework"].nunique()
    return (f"Backward and forward are the two largest phases of every measured model in "
            f"{'each of the ' + str(n_fw) + ' frameworks' if n_fw > 1 else 'our runs'}, as in the thesis."
            if fb else "The two largest measured phases per framework and model: "
            + "; ".join(f"{k}: {', '.join(v)}" for k, v in tops.items()) + ".")


def _aggregation(r: Ch3Results) -> str:
    t_c = {m: dict(sorted(v.items())) for m, v in r.quantities.t_c.items() if v}
    grows = all(all(b > a for a, b in zip(list(v.values()), list(v.values())[1:])) for v in t_c.values())
    counts = sorted({g for v in t_c.values() for g in v})
    return (f"{short_label(r.label, 'The')}: the all-reduce time " + ("grows" if grows else "does not always grow")
            + f" from {' to '.join(map(str, counts))} workers: "
            + "; ".join(f"{k} " + " → ".join(f"{1e3 * v:.2f}" for v in vals.values()) + " ms"
                        for k, vals in t_c.items()) + ".")


def _lif(r: Ch3Results, ledger) -> str:
    lif, q = r.measured.lif, r.quantities
    text = (f"Measured LIF lies between {lif['mean'].min():.3f} and {lif['mean'].max():.3f}"
            + (f" over {lif['framework'].nunique()} frameworks." if lif["framework"].nunique() > 1 else "."))
    if q.lif_rho is not None:
        rho = q.lif_rho
        text += (f" Higher LIF goes with {'lower' if rho.estimate < 0 else 'higher'} efficiency (Spearman "
                 f"ρ = {rho.estimate:.2f}, 95 % interval [{rho.lo:.2f}, {rho.hi:.2f}] over "
                 f"{q.get('lif_cells', '?')} cells); the claim \"higher LIF, lower speedup\" (ρ ≤ −0.5) "
                 f"{verdict_text(ledger, 'lif_vs_speedup')}.")
    return text


def _speedup(r: Ch3Results) -> str:
    q = r.quantities
    sp = q.speedup_table
    parts = []
    for model, g in sp[sp["gpus"] > 1].groupby("model", sort=False):
        parts.append(f"{model} " + " / ".join(f"{v:.2f}×" for v in g.sort_values("gpus")["speedup"]))
    errs = {k[5:]: max(e.estimate for e in v.values()) for k, v in q.numbers().items()
            if k.startswith("eq37_") and v}
    counts = " / ".join(str(int(g)) for g in sorted(sp.loc[sp["gpus"] > 1, "gpus"].unique()))
    return (f"{short_label(r.label, 'Measured')}: measured speedup on {counts} workers: " + "; ".join(parts)
            + ". Eq. 3.7 fed with our own single-worker phases and measured t_c predicts them within "
            + ", ".join(f"{100 * v:.0f} % ({k} form)" for k, v in sorted(errs.items())) + ".")


def _overlap(r: Ch3Results) -> str:
    vals = [e.estimate for e in r.quantities.overlap.values()]
    return (f"{short_label(r.label, 'The')}: DDP's overlapped all-reduce takes {min(vals):.2f}–{max(vals):.2f}× the "
            "phased iteration time on more than one worker: " + ("it helps everywhere." if max(vals) < 1 else
                                                          "overlap does not pay off in every cell on this machine."))


def _regression(r: Ch3Results) -> str:
    return ("The eq. 3.9 regression on our data reaches R² "
            + ", ".join(f"{e.estimate:.2f} [{e.lo:.2f}, {e.hi:.2f}] ({k})" for k, e in r.quantities.lif_r2.items())
            + " (95 % intervals; one point per timed iteration, resampled in blocks).")


def _frameworks(r: Ch3Results, ledger) -> str:
    """The frameworks side by side: all-reduce time on 2 workers, best measured speedup, the framework claims."""
    if len(r.quantities.frameworks or []) < 2 or not r.multi_worker:
        return ""
    tc = r.measured.t_comm
    tc2 = tc[tc["gpus"] == 2].groupby("framework", sort=False)["mean"].mean() * 1e3
    sp = r.measured.speedup
    sp = sp[(sp["variant"] == "measured") & (sp["gpus"] > 1)].groupby("framework", sort=False)["speedup"].max()
    text = ("All-reduce on 2 workers, mean over the three models: "
            + ", ".join(f"{short_label(fw, '?')} {v:.1f} ms" for fw, v in tc2.sort_values().items())
            + ". Best measured speedup on more than one worker: "
            + ", ".join(f"{short_label(fw, '?')} {v:.2f}×" for fw, v in sp.sort_values(ascending=False).items())
            + ".")
    fw_rows = ledger[ledger["key"].str.startswith("fw_") | (ledger["key"] == "framework_ranking")]
    if len(fw_rows):
        text += " The thesis's framework claims on our runs: " + "; ".join(
            f"\"{row.claim}\" {row.verdict}" for row in fw_rows.itertuples()) + "."
    return text


def _published(r: Ch3Results) -> str:
    chk = consistency(r)
    bad = chk[chk["verdict"] == "inconsistent"].groupby("check").size()
    return ("Inconsistent published cells per check: " + "; ".join(f"{k}: {v}" for k, v in bad.items()) + ".") \
        if len(bad) else "Every published check is consistent."


#: the claims whose verdict per machine the machines reading names
_MACHINE_CLAIMS = {"speedup": "more workers speed training up", "t_c_grows": "aggregation time grows with workers",
                   "eq37_thesis": "eq. 3.7 (thesis form) within 20 %"}


def _machines(by_machine) -> str:
    """What holds where: per machine, the speedup, aggregation and eq. 3.7 verdicts and how many claims it decides."""
    parts = []
    for machine, rows in by_machine.groupby("machine", sort=False):
        decided = rows["verdict"].isin(["holds", "does not hold"])
        said = []
        for key, words in _MACHINE_CLAIMS.items():
            row = rows[rows["key"] == key]
            if len(row) and row["verdict"].iloc[0] != "cannot be tested here":
                said.append(f"\"{words}\" {verdict_text(rows, key)}")
        text = "; ".join(said) if said else "none of the scaling claims can be tested (" + \
            rows["evidence"].iloc[0].rstrip(".") + ")"
        parts.append(f"**{machine}** ({int(decided.sum())} of {len(rows)} claims decided): {text}.")
    return " ".join(parts)


def ch3_readings(results: Ch3Results, ledger, by_machine=None) -> dict:
    """``{section: Markdown}`` of Chapter 3 on ``results``, its claims ledger ``ledger`` and the machine ledger
    ``by_machine`` (:func:`~perfkit.chapters.ch3.machines.machine_ledger`); ``summary`` says first what holds on
    which machine, then joins the measured sections and the ledger's counts (docs/findings.md)."""
    r, q = results, results.quantities
    if r.measured is None:
        return {"phases": "Only the published numbers were given: see the table for which phases dominate.",
                "summary": "Chapter 3 was run on the published tables only."}
    out = {"phases": _phases(r)}
    if q.t_c is not None:
        out["aggregation"] = _aggregation(r)
    if r.multi_worker:
        out["lif"] = _lif(r, ledger)
    if q.speedup_table is not None:
        out["speedup"] = _speedup(r)
    if q.overlap is not None:
        out["overlap"] = _overlap(r)
    if q.lif_r2 is not None:
        out["regression"] = _regression(r)
    fw_text = _frameworks(r, ledger)
    if fw_text:
        out["frameworks"] = fw_text
    out["published"] = _published(r)
    out["claims"] = f"In the claims ledger (measured and published) {verdict_counts(ledger)}."
    if by_machine is not None and len(by_machine):
        out["machines"] = _machines(by_machine)
    out["summary"] = " ".join(out[k] for k in ("machines", "phases", "aggregation", "speedup", "overlap",
                                               "regression", "frameworks", "claims") if k in out)
    return out
