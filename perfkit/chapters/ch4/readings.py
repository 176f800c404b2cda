"""What each section of Chapter 4 says, written from the numbers the chapter computed (data-dependent text only)."""
from __future__ import annotations

from ...report.claims import fmt
from ..common import verdict_counts, verdict_text

__all__ = ["ch4_readings"]


def ch4_readings(res) -> dict:
    """A short Markdown paragraph per section, from ``res.numbers`` and ``res.tables``; ``summary`` joins them."""
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
                    f"{verdict_text(T['claims_ch4'], 'l2_beats_l1')}.")
    out["scaling"] = (f"q(workers) = {fmt(q['q_workers'], 2)} ± {fmt(q['q_workers_std'], 1)} and q(batch) = "
                      f"{fmt(q['q_batch'], 2)} ± {fmt(q['q_batch_std'], 1)} (no regularisation, over seeds), against "
                      "the thesis's −0.73 to −1.02 for workers on GPUs.")
    out["baselines"] = (f"Held-out MAPE: random forest {mp['RF']:.1f} %, SVR {mp['SVR']:.1f} %, generic model "
                        f"{mp['DE']:.1f} % (L2 {mp['DE+L2']:.1f} %).")
    out["sweep"] = f"R² falls once λ exceeds 1e-3: {verdict_text(T['claims_ch4'], 'r2_falls')}."
    out["claims"] = f"In the claims ledger (measured and published) {verdict_counts(T['claims_ch4'])}."
    for key, write in (("frameworks", _frameworks), ("epoch", _epoch), ("paired", _paired), ("pooled", _pooled),
                       ("machines", _machines)):
        text = write(q, T)
        if text:
            out[key] = text
    keys = ("fits", "baselines", "scaling", "machines", "frameworks", "epoch", "paired", "pooled", "claims")
    out["summary"] = " ".join(out[k] for k in keys if k in out)
    return out


def _frameworks(q, T) -> str:
    per = q.get("per_framework", {})
    if len(per) < 2:
        return ""
    return ("Per framework, held-out MAPE of the generic model with L2 against the random forest: "
            + "; ".join(f"{v['framework']} {v['errors']['DE+L2']['MAPE']:.1f} % vs {v['mape']['RF']:.1f} % "
                        f"({v['n_fit']} fitted, {v['n_test']} held out)" for v in per.values())
            + f". The thesis's framework claims: MXNet and PyTorch scale better than TensorFlow "
            f"{verdict_text(T['claims_ch4'], 'framework_ranking')}; the L2 fit is most accurate on MXNet "
            f"{verdict_text(T['claims_ch4'], 'fw_mxnet_most_accurate')}; Adam dearer than SGD in PyTorch "
            f"and TensorFlow, cheaper in MXNet {verdict_text(T['claims_ch4'], 'fw_adam_direction')}.")


def _epoch(q, T) -> str:
    if "ext_epoch_extrapolation" not in T:
        return ""
    t = T["ext_epoch_extrapolation"]
    return ("The fitted target multiplies the step time by the steps of an epoch. Timing whole epochs "
            "(`perfkit collect epoch`) checks that extrapolation; median error, 95 % interval: "
            + "; ".join(f"{r.framework} {100 * r.median_error:+.1f} % [{100 * r.median_lo:+.1f}, "
                        f"{100 * r.median_hi:+.1f}] over {r.checks} epochs ({100 * r.share_within_5pct:.0f} % "
                        "within 5 %)" for r in t.itertuples()) + ".")


def _paired(q, T) -> str:
    if "paired" not in q:
        return ""
    t = q["paired"]
    overall = t[t["factor"] == "all"]
    ref = overall["reference"].iloc[0]
    text = (f"On the same configurations, time relative to {ref} (geometric mean, 95 % interval): "
            + "; ".join(f"{r.framework} {r.ratio:.2f} [{r.lo:.2f}, {r.hi:.2f}] over {r.n}"
                        for r in overall.itertuples()) + ".")
    spread = t[t["factor"] != "all"].groupby(["framework", "factor"])["ratio"].agg(lambda v: v.max() / v.min())
    top = spread.groupby(level=0).idxmax()
    return text + (" The ratio moves most with " + "; ".join(
        f"{fw}: {fac} ({spread[(fw, fac)]:.1f}× between its levels)" for fw, (_, fac) in top.items()) + ".")


def _pooled(q, T) -> str:
    if "pooled" not in q:
        return ""
    parts = []
    for method, g in q["pooled"].groupby("method", sort=False):
        better = int((g["difference_hi"] < 0).sum())
        worse = int((g["difference_lo"] > 0).sum())
        parts.append(f"{method}: one model is better in {better}, worse in {worse} and not distinguishable in "
                     f"{len(g) - better - worse} of {len(g)} frameworks")
    return ("One model fitted on every framework's data, the framework a categorical input, against a "
            "fit per framework (held-out MAPE, 95 % interval of the difference): " + "; ".join(parts) + ".")


def _machine_text(m, T) -> str:
    times = ", ".join(f"{m.median_time[w]:.1f}" for w in sorted(m.median_time))
    workers = "/".join(str(w) for w in sorted(m.median_time))
    crowded = max(m.median_time)
    share = (f", where up to {crowded} workers share {m.cores} cores" if m.cores and crowded > m.cores else "")
    return (f"on the {m.machine}{share}, q(workers) = {m.q_workers.estimate:+.2f} [{m.q_workers.lo:+.2f}, "
            f"{m.q_workers.hi:+.2f}] (\"more workers shorten the epoch\" "
            f"{_verdict(T, m)}), held-out MAPE "
            f"{m.mape.estimate:.1f} %, median epoch {times} s at G = {workers}")


def _machines(q, T) -> str:
    machines = q.get("machines")
    if not machines:
        return ""
    m0 = machines[0]
    text = (f"Eq. 4.4 fitted on the first {m0.n} configurations each machine measured ({m0.n_fit} fitted, "
            f"{m0.n_test} held out; 95 % intervals from a bootstrap of the fit rows): "
            + "; against that, ".join(_machine_text(m, T) for m in machines) + ".")
    verdicts = {m.machine: _verdict(T, m) for m in machines}
    holds = [m for m in machines[1:] if verdicts[m.machine] == "holds"]
    if holds and verdicts[m0.machine] != "holds":
        text += (f" The same harness, sampler and model find more workers shortening the epoch on the "
                 f"{holds[0].machine} but not on the {m0.machine} (there the claim "
                 f"{'is inconclusive' if verdicts[m0.machine] == 'inconclusive' else verdicts[m0.machine]}): "
                 "the main dataset's q(workers) tells about its machine rather than about eq. 4.4.")
    return text


def _verdict(T, m) -> str:
    rows = T["claims_ch4"][T["claims_ch4"]["key"] == f"q_workers_negative.{m.label}"]
    return str(rows["verdict"].iloc[0]) if len(rows) else "not judged"
