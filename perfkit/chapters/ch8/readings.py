"""What each section of Chapter 8 says, written from the numbers the chapter computed (data-dependent text only)."""
from __future__ import annotations

import numpy as np

from ...evidence import verdict
from ..common import verdict_counts, verdict_text
from .compute import SELECTED

__all__ = ["ch8_readings"]

_SIDES = {"holds": "better than", "does not hold": "worse than", "inconclusive": "not distinguishable from"}


def _usd(v: float) -> str:
    return f"${v:,.2f}" if v < 100 else f"${v:,.0f}"


def _study_text(s) -> str:
    pooled = s.pooled.set_index("model")
    sel = pooled.loc[SELECTED]
    others = pooled.drop(index=SELECTED)["median_group_MAPE"]
    m = s.margin
    g = s.groups.set_index("group")[SELECTED]
    side = _SIDES[verdict(m["lo"], m["hi"], "<", 0.0)]
    return (f"**{s.label}** ({len(s.groups)} GPU types, {int(sel['rows'])} rows): one GPU type left out, the "
            f"selected form errs {sel['median_group_MAPE']:.1f} % (median over GPU types; 95 % interval "
            f"[{sel['lo']:.1f}, {sel['hi']:.1f}]); the best baseline, {others.idxmin()}, {others.min():.1f} %: the "
            f"selected form is {side} it (margin {m['estimate']:+.1f} points [{m['lo']:+.1f}, {m['hi']:+.1f}]). Best "
            f"predicted GPU: {g.idxmin()} ({g.min():.1f} %); worst: {g.idxmax()} ({g.max():.1f} %). The 90 % "
            f"intervals cover {100 * s.coverage:.1f} % of the held-out rows{_nested(s)}. Chosen on all GPUs: "
            f"{s.final}.")


def _nested(s) -> str:
    """The coverage when each GPU's width comes from the other GPUs alone (fits on one GPU fewer), in words."""
    if s.coverage_nested is None:
        return ""
    return f" ({100 * s.coverage_nested:.1f} % with each GPU's width from the other GPUs alone, one GPU fewer)"


def _gpu_share(study) -> float:
    """The share (%) of the variance of log(predicted / measured) of the selected form that the held-out GPUs'
    means explain: a level per GPU, which one measured row of the GPU could fix."""
    rows = study.rows[np.isfinite(study.rows[SELECTED].to_numpy(dtype=float))]
    lr = np.log(rows[SELECTED] / rows["measured"])
    return float(100 * lr.groupby(rows["group"]).transform("mean").var() / lr.var())


def _bias_text(res) -> str:
    lines = []
    for name, s in res.results.studies.items():
        b = res.tables[f"xhw_{name}_bias"].set_index("held-out GPU")[SELECTED]
        lines.append(f"{s.label}: the selected form is slowest against {b.idxmax()} ({b.max():+.0f} %: it predicts "
                     f"longer steps than measured) and fastest against {b.idxmin()} ({b.min():+.0f} %); a level per "
                     f"GPU explains {_gpu_share(s):.0f} % of the variance of its log errors")
    return "; ".join(lines) + "."


def ch8_readings(res) -> dict:
    """A short Markdown paragraph per section; ``summary`` joins the studies' and the ledger's."""
    r = res.results
    out = {f"study_{name}": _study_text(s) for name, s in r.studies.items()}
    out["bias"] = _bias_text(res)
    plan = None if r.plan is None else r.plan.table
    if plan is not None and len(plan):
        top = plan.iloc[0]
        out["plan"] = (f"With the model of the study {r.plan_source!r}, the first-ranked configuration is "
                       f"{int(top['n_gpus'])} × {top['gpu']} ({top['flag']}): {top['hours']:.3g} h "
                       f"[{top['hours_lo']:.3g}, {top['hours_hi']:.3g}] for about ${top['cost']:,.0f} "
                       f"[{top['cost_lo']:,.0f}, {top['cost_hi']:,.0f}]; {int(plan['pareto'].sum())} of "
                       f"{len(plan)} configurations are on the time–cost front.")
    claims = res.tables["claims_ch8"]
    first = next(iter(r.studies))
    out["claims"] = (f"{verdict_counts(claims)}. On {r.studies[first].label}: within 10 % "
                     f"{verdict_text(claims, f'{first}_median_10')}; better than every baseline "
                     f"{verdict_text(claims, f'{first}_beats_baselines')}; coverage "
                     f"{verdict_text(claims, f'{first}_coverage')}.")
    out["summary"] = " ".join([out[f"study_{name}"] for name in r.studies] + [out["claims"]])
    return out
