"""What each section's result says, written from the numbers a chapter computed.

Every paragraph is generated from :attr:`ChapterResult.numbers` and its tables, so
the notebooks' readings and the README's "What our measurements show" (the
``summary`` reading of each chapter, see :func:`perfkit.chapters.findings`) can
never disagree with the data.
"""
from __future__ import annotations

import math

from ..report.claims import fmt

__all__ = ["ch3_readings", "ch4_readings", "ch5_readings", "ch6_readings", "verdict_counts"]


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


def ch3_readings(res) -> dict:
    q, T = res.numbers, res.tables
    out = {}
    if "table3_2_measured" not in T:
        out["phases"] = "Only the published numbers were given: see the table for which phases dominate."
        out["summary"] = "Chapter 3 was run on the published tables only."
        return out
    m = T["table3_2_measured"]
    m = m[~m["phase"].isin(["t_iter"])]
    top = m.sort_values("mean", ascending=False).groupby(["framework", "model"], sort=False).head(2)
    tops = {f"{fw.split(' (')[0]} {mod}": sorted(g["phase"]) for (fw, mod), g in top.groupby(["framework", "model"])}
    fb = all(v == ["t_b", "t_f"] for v in tops.values())
    n_fw = m["framework"].nunique()
    out["phases"] = (f"Backward and forward are the two largest phases of every measured model in "
                     f"{'each of the ' + str(n_fw) + ' frameworks' if n_fw > 1 else 'our runs'}, as in the thesis."
                     if fb else "The two largest measured phases per framework and model: "
                     + "; ".join(f"{k}: {', '.join(v)}" for k, v in tops.items()) + ".")
    if "t_c" in q:
        grows = all(t3 > t2 for t2, t3 in q["t_c"].values())
        out["aggregation"] = (f"{_short(q.get('label'), 'The')}: the all-reduce time " + ("grows" if grows else "does not always grow")
                              + " from 2 to 3 workers: " + "; ".join(f"{k} {1e3 * a:.2f} → {1e3 * b:.2f} ms"
                                                                      for k, (a, b) in q["t_c"].items()) + ".")
    if "table3_4_measured" in T:
        lif = T["table3_4_measured"]
        out["lif"] = (f"Measured LIF lies between {lif['mean'].min():.3f} and {lif['mean'].max():.3f}"
                      + (f" over {lif['framework'].nunique()} frameworks." if lif["framework"].nunique() > 1 else "."))
        if "lif_rho" in q:
            rho = q["lif_rho"]
            out["lif"] += (f" Higher LIF goes with {'lower' if rho.estimate < 0 else 'higher'} efficiency (Spearman "
                           f"ρ = {rho.estimate:.2f}, 95 % interval [{rho.lo:.2f}, {rho.hi:.2f}] over "
                           f"{q.get('lif_cells', '?')} cells); the claim \"higher LIF, lower speedup\" (ρ ≤ −0.5) "
                           f"{_verdict(T['claims_ch3'], 'lif_vs_speedup')}.")
    if "speedup_table" in q:
        sp = q["speedup_table"]
        parts = []
        for model, g in sp[sp["gpus"] > 1].groupby("model", sort=False):
            parts.append(f"{model} " + " / ".join(f"{v:.2f}×" for v in g.sort_values("gpus")["speedup"]))
        errs = {k[5:]: max(e.estimate for e in v.values()) for k, v in q.items() if k.startswith("eq37_") and v}
        out["speedup"] = (f"{_short(q.get('label'), 'Measured')}: measured speedup on 2 / 3 workers: " + "; ".join(parts) + ". Eq. 3.7 fed with our own "
                          "single-worker phases and measured t_c predicts them within "
                          + ", ".join(f"{100 * v:.0f} % ({k} form)" for k, v in sorted(errs.items())) + ".")
    if "overlap" in q:
        vals = [e.estimate for e in q["overlap"].values()]
        out["overlap"] = (f"{_short(q.get('label'), 'The')}: DDP's overlapped all-reduce takes {min(vals):.2f}–{max(vals):.2f}× the phased iteration "
                          "time on 2 and 3 workers: " + ("it helps everywhere." if max(vals) < 1 else
                                                        "overlap does not pay off in every cell on this machine."))
    if "lif_r2" in q:
        out["regression"] = ("The eq. 3.9 regression on our data reaches R² "
                             + ", ".join(f"{e.estimate:.2f} [{e.lo:.2f}, {e.hi:.2f}] ({k})"
                                         for k, e in q["lif_r2"].items())
                             + " (95 % intervals), with one point per timed iteration.")
    fw_text = _framework_reading(T, q)
    if fw_text:
        out["frameworks"] = fw_text
    chk = T["consistency_published"]
    bad = chk[chk["verdict"] == "inconsistent"].groupby("check").size()
    out["published"] = ("Inconsistent published cells per check: "
                        + "; ".join(f"{k}: {v}" for k, v in bad.items()) + ".") if len(bad) else \
        "Every published check is consistent."
    out["claims"] = f"In the claims ledger (measured and published) {verdict_counts(T['claims_ch3'])}."
    out["summary"] = " ".join(out[k] for k in ("phases", "aggregation", "speedup", "overlap", "regression",
                                               "frameworks", "claims") if k in out)
    return out


def _short(label, default: str) -> str:
    """``"PyTorch (cpu, measured)"`` → ``"PyTorch"``; ``default`` without a label."""
    return str(label).split(" (")[0] if label else default


def _framework_reading(T, q) -> str:
    """The frameworks side by side: all-reduce time on 2 workers, best measured speedup, the framework claims."""
    if len(q.get("frameworks", [])) < 2 or "table3_3_measured" not in T or "speedup_measured" not in T:
        return ""
    tc = T["table3_3_measured"]
    tc2 = tc[tc["gpus"] == 2].groupby("framework", sort=False)["mean"].mean() * 1e3
    sp = T["speedup_measured"]
    sp = sp[(sp["variant"] == "measured") & (sp["gpus"] > 1)].groupby("framework", sort=False)["speedup"].max()
    text = ("All-reduce on 2 workers, mean over the three models: "
            + ", ".join(f"{_short(fw, '?')} {v:.1f} ms" for fw, v in tc2.sort_values().items())
            + ". Best measured speedup on 2 or 3 workers: "
            + ", ".join(f"{_short(fw, '?')} {v:.2f}×" for fw, v in sp.sort_values(ascending=False).items()) + ".")
    led = T["claims_ch3"]
    fw_rows = led[led["key"].str.startswith("fw_") | (led["key"] == "framework_ranking")]
    if len(fw_rows):
        text += " The thesis's framework claims on our runs: " + "; ".join(
            f"\"{r.claim}\" {r.verdict}" for r in fw_rows.itertuples()) + "."
    return text


def ch4_readings(res) -> dict:
    q, T = res.numbers, res.tables
    out = {}
    s = q.get("provenance", {}).get("sampler")
    if s:
        out["dataset"] = (f"{q['n_rows']} measured configurations ({q['label']}); the sampler drew {s['drawn']} from "
                          f"Table 4.1 and rejected {s['drawn'] - s['accepted']} whose feature maps collapse, before "
                          f"anything ran. Fitted on {q['n_fit']}, held out {q['n_test']}.")
    else:
        out["dataset"] = f"{q['n_rows']} measured configurations; fitted on {q['n_fit']}, held out {q['n_test']}."
    e, mp = q["errors"], q["mape"]
    out["fits"] = (f"Without regularisation the generic model reaches a held-out MAPE of {e['DE']['MAPE']:.1f} % "
                   f"(R² {e['DE']['R2']:.2f}); with L2 {e['DE+L2']['MAPE']:.1f} % (R² {e['DE+L2']['R2']:.2f}). "
                   "The additive intrinsic sum Σ aᵢIᵢ^pᵢ cannot form the products that set a step's cost "
                   "(filters × kernel² × image size).")
    out["l1_l2"] = (f"L1 against L2 at λ = {q['lam_l1']:g} / {q['lam_l2']:g}: MAPE {e['DE+L1']['MAPE']:.1f} % vs "
                    f"{e['DE+L2']['MAPE']:.1f} %; the claim \"L2 beats L1\" "
                    f"{_verdict(T['claims_ch4'], 'l2_beats_l1')}.")
    out["scaling"] = (f"q(workers) = {fmt(q['q_workers'], 2)} ± {fmt(q['q_workers_std'], 1)} and q(batch) = "
                      f"{fmt(q['q_batch'], 2)} ± {fmt(q['q_batch_std'], 1)} (no regularisation, over seeds), against "
                      "the thesis's −0.73 to −1.02 for workers on GPUs.")
    out["baselines"] = (f"Held-out MAPE: random forest {mp['RF']:.1f} %, SVR {mp['SVR']:.1f} %, generic model "
                        f"{mp['DE']:.1f} % (L2 {mp['DE+L2']:.1f} %).")
    out["sweep"] = f"R² falls once λ exceeds 1e-3: {_verdict(T['claims_ch4'], 'r2_falls')}."
    out["claims"] = f"In the claims ledger (measured and published) {verdict_counts(T['claims_ch4'])}."
    per = q.get("per_framework", {})
    if len(per) > 1:
        out["frameworks"] = ("Per framework, held-out MAPE of the generic model with L2 against the random forest: "
                             + "; ".join(f"{v['framework']} {v['errors']['DE+L2']['MAPE']:.1f} % vs "
                                         f"{v['mape']['RF']:.1f} % ({v['n_fit']} fitted, {v['n_test']} held out)"
                                         for v in per.values())
                             + f". The thesis's framework claims: MXNet and PyTorch scale better than TensorFlow "
                             f"{_verdict(T['claims_ch4'], 'framework_ranking')}; the L2 fit is most accurate on MXNet "
                             f"{_verdict(T['claims_ch4'], 'fw_mxnet_most_accurate')}; Adam dearer than SGD in PyTorch "
                             f"and TensorFlow, cheaper in MXNet {_verdict(T['claims_ch4'], 'fw_adam_direction')}.")
    if "ext_epoch_extrapolation" in T:
        t = T["ext_epoch_extrapolation"]
        out["epoch"] = ("The fitted target multiplies the step time by the steps of an epoch. Timing whole epochs "
                        "(`perfkit collect epoch`) checks that extrapolation; median error, 95 % interval: "
                        + "; ".join(f"{r.framework} {100 * r.median_error:+.1f} % [{100 * r.median_lo:+.1f}, "
                                    f"{100 * r.median_hi:+.1f}] over {r.checks} epochs ({100 * r.share_within_5pct:.0f} % "
                                    "within 5 %)" for r in t.itertuples()) + ".")
    if "paired" in q:
        t = q["paired"]
        overall = t[t["factor"] == "all"]
        ref = overall["reference"].iloc[0]
        out["paired"] = (f"On the same configurations, time relative to {ref} (geometric mean, 95 % interval): "
                         + "; ".join(f"{r.framework} {r.ratio:.2f} [{r.lo:.2f}, {r.hi:.2f}] over {r.n}"
                                     for r in overall.itertuples()) + ".")
        spread = t[t["factor"] != "all"].groupby(["framework", "factor"])["ratio"].agg(lambda v: v.max() / v.min())
        top = spread.groupby(level=0).idxmax()
        out["paired"] += (" The ratio moves most with " + "; ".join(
            f"{fw}: {fac} ({spread[(fw, fac)]:.1f}× between its levels)" for fw, (_, fac) in top.items()) + ".")
    if "pooled" in q:
        t = q["pooled"]
        parts = []
        for method, g in t.groupby("method", sort=False):
            better = int((g["difference_hi"] < 0).sum())
            worse = int((g["difference_lo"] > 0).sum())
            parts.append(f"{method}: one model is better in {better}, worse in {worse} and not distinguishable in "
                         f"{len(g) - better - worse} of {len(g)} frameworks")
        out["pooled"] = ("One model fitted on every framework's data, the framework a categorical input, against a "
                         "fit per framework (held-out MAPE, 95 % interval of the difference): " + "; ".join(parts)
                         + ".")
    keys = ("fits", "baselines", "scaling", "frameworks", "epoch", "paired", "pooled", "claims")
    out["summary"] = " ".join(out[k] for k in keys if k in out)
    return out


def ch5_readings(res) -> dict:
    q, T = res.numbers, res.tables
    out = {}
    out["fit"] = (f"{q['n_rows']} measured configurations (volume {', '.join(q['volumes'])}), fitted on "
                  f"{q['n_fit']}, held out {q['n_test']}; L2 fit over seeds: q(workers) = "
                  f"{fmt(q['q_workers'], 2)} ± {fmt(q['q_workers_std'], 1)}, q(batch) = {fmt(q['q_batch'], 2)} ± "
                  f"{fmt(q['q_batch_std'], 1)}.")
    out["errors"] = (f"Held-out MAPE: generic model {q['mape']['DE']:.1f} % (R² {q['r2']['DE']:.2f}; "
                     f"{q['mape_first300']['DE']:.1f} % on the first 300 held-out rows), random forest "
                     f"{q['mape']['RF']:.1f} % (R² {q['r2']['RF']:.2f}); the thesis reports about 7 % for both.")
    ch4 = f" Chapter 4's L2 fit gives {q['ch4_l2_mape']:.1f} %." if "ch4_l2_mape" in q else ""
    out["claims"] = (f"q(workers) against the thesis's {q['thesis_q_workers']:g}: "
                     f"{_verdict(T['claims_ch5'], 'q_workers')}.{ch4} In the claims ledger "
                     f"{verdict_counts(T['claims_ch5'])}.")
    if "volume_table" in q:
        parts = []
        for f, g in q["volume_table"].groupby("num_filters"):
            lo, hi = g.iloc[0], g.iloc[-1]
            parts.append(f"with {f} filters q(batch) goes from {lo['q_batch']:+.2f} to {hi['q_batch']:+.2f} and "
                         f"q(workers) from {lo['q_workers']:+.2f} to {hi['q_workers']:+.2f}")
        g0 = q["volume_table"]
        out["volume"] = (f"From {g0['volume'].iloc[0]} to {g0['volume'].iloc[-1]} "
                         f"({g0['voxels'].max() / g0['voxels'].min():.1f}× the voxels) " + "; ".join(parts)
                         + f". The best q(workers) {q['cores']} cores allow for 1–3 workers is {q['q_bound']:.2f}.")
    out["summary"] = " ".join(out[k] for k in ("errors", "fit", "claims", "volume") if k in out)
    return out


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
