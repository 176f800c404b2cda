"""Do the thesis's printed Chapter 3 numbers add up: the checks of Tables 3.2–3.5 and their claims' quantities."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...model.analytic.equations import speedup_pipelined
from ...model.analytic.phases import phase_wide, require_columns
from ...evidence import SEED, Evidence, half_unit, rounding_draws
from .params import VARIANTS
from .quantities import BETTER_THAN_TF, SOURCES

__all__ = ["PARTS", "sum_check_3_2", "published_consistency", "published_quantities"]

#: the phases whose sum is t_iter (eq. 3.3)
PARTS = ["t_io", "t_h2d", "t_md", "t_f", "t_b", "t_u"]


def sum_check_3_2(tidy, decimals: int = 4):
    """Does t_iter equal the sum of its phases in each cell of Table 3.2?

    Each printed value carries a rounding error of up to half a unit in the last
    printed digit, so a sum of k terms matches when it is within
    ``(k + 1) * 0.5 * 10**-decimals`` of t_iter.

    Returns
    -------
    pandas.DataFrame
        Per (model, framework): printed t_iter, sum of all phases, sum without
        t_md, the differences, and a verdict.
    """
    wide = phase_wide(tidy)
    require_columns(wide, PARTS + ["t_iter"], "sum_check_3_2")
    half = 0.5 * 10.0 ** -decimals
    out = wide[["t_iter"]].copy()
    out["sum_all"] = wide[PARTS].sum(axis=1)
    out["sum_without_t_md"] = wide[[p for p in PARTS if p != "t_md"]].sum(axis=1)
    out["diff_all"] = out["t_iter"] - out["sum_all"]
    out["diff_without_t_md"] = out["t_iter"] - out["sum_without_t_md"]
    tol_all, tol_wo = (len(PARTS) + 1) * half, len(PARTS) * half
    verdict = []
    for _, r in out.iterrows():
        d_all, d_wo = abs(r["diff_all"]), abs(r["diff_without_t_md"])
        if d_all <= tol_all and d_all <= d_wo:
            verdict.append("adds up with all phases")
        elif d_wo <= tol_wo:
            verdict.append("adds up only without t_md")
        else:
            verdict.append("does not add up")
    out["verdict"] = verdict
    return out.reset_index()


def _check(rows, check, scope, published, computed, holds, guide=""):
    rows.append(dict(check=check, scope=scope, published=published, computed=computed,
                     verdict="consistent" if holds else "inconsistent", guide_item=guide))


def _thesis_and_paper(t35):
    """Table 3.5's thesis and paper values, by (model, framework, quantity); None without both sources."""
    if not {"thesis", "paper_iucc2021"} <= set(t35["source"]):
        return None
    key = ["model", "framework", "quantity"]
    return (t35[t35["source"] == "thesis"].set_index(key)["mean"],
            t35[t35["source"] == "paper_iucc2021"].set_index(key)["mean"])


def published_consistency(t32, t34, t35):
    """Consistency checks on the published Chapter 3 numbers.

    Parameters
    ----------
    t32, t34, t35 : pandas.DataFrame
        ``load_thesis_table("3.2")``, ``("3.4")`` and ``("3.5")`` (all sources).

    Returns
    -------
    pandas.DataFrame
        One row per check: check, scope, published value, computed value,
        verdict (consistent / inconsistent) and the matching item of the
        reading guide's list of things that do not add up.
    """

    rows: list[dict] = []
    for _, r in sum_check_3_2(t32).iterrows():
        _check(rows, "t_iter = sum of phases (Table 3.2, eq. 3.4)", f"{r['model']}/{r['framework']}",
               f"{r['t_iter']:.4f}", f"all {r['sum_all']:.4f}; without t_md {r['sum_without_t_md']:.4f}",
               r["verdict"] == "adds up with all phases", "1")
    md = t32[t32["phase"] == "t_md"].set_index(["model", "framework"])["mean"]
    for model in md.index.get_level_values(0).unique():
        diff = md[(model, "Chainer")] - md[model].drop("Chainer")
        _check(rows, "text: Chainer's t_md is 0.3 s longer than MXNet's and TensorFlow's", model, "0.3 s",
               f"{diff.min():.4f}-{diff.max():.4f} s longer", bool(np.all(np.abs(diff - 0.3) < 0.05)), "5")
    for src, g in t34.groupby("source", sort=True):
        low = g[g["mean"] < 1.0]
        _check(rows, "LIF >= 1 in every cell (eq. 3.8)", f"{src}: {len(g)} cells",
               f"min {g['mean'].min():g}", f"{len(low)} cells below 1", low.empty)
    both = _thesis_and_paper(t35)
    if both is not None:
        th, pa = both
        for idx in th.index.intersection(pa.index):
            if idx[2] == "r2":
                continue
            _check(rows, "Table 3.5 = paper eqs. 10-18", f"{idx[0]}/{idx[1]} {idx[2]}",
                   f"thesis {th[idx]:g}", f"paper {pa[idx]:g}", bool(np.isclose(th[idx], pa[idx])), "4")
    return pd.DataFrame(rows)


def _published_cells(values: dict):
    """``{cell: Evidence}`` of printed ``values`` (``{cell: number}``), drawn within their rounding."""
    keys = list(values)
    draws = rounding_draws([values[k] for k in keys])
    return {k: Evidence.from_samples(values[k], draws[:, i], SOURCES["printed"]) for i, k in enumerate(keys)}


def _eq37_speedups(t32, tc, variants) -> dict:
    """``{(model, G, form, framework): Evidence}``: eq. 3.7 on the printed phases and t_comm, each number drawn
    within its rounding."""
    wide = phase_wide(t32)
    ph_draws = rounding_draws(wide[PARTS].to_numpy().ravel()).reshape(-1, len(wide), len(PARTS))
    tc_draws = rounding_draws(tc[[2, 3]].to_numpy().ravel(), seed=[SEED, 1]).reshape(-1, len(tc), 2)
    speed = {}
    for i, (model, fw) in enumerate(wide.index):
        if (model, fw) not in tc.index:
            continue
        j = list(tc.index).index((model, fw))
        point = dict(zip(PARTS, wide.loc[(model, fw), PARTS]))
        drawn = {k: ph_draws[:, i, n] for n, k in enumerate(PARTS)}
        for gi, g in enumerate((2, 3)):
            for variant in variants:
                est = speedup_pipelined(g, point["t_io"], point["t_h2d"], point["t_f"], point["t_b"], point["t_u"],
                                        tc.loc[(model, fw), g], t_md=point["t_md"], variant=variant)
                smp = speedup_pipelined(g, drawn["t_io"], drawn["t_h2d"], drawn["t_f"], drawn["t_b"], drawn["t_u"],
                                        tc_draws[:, j, gi], t_md=drawn["t_md"], variant=variant)
                speed[(model, g, variant, fw)] = Evidence.from_samples(est, smp, SOURCES["printed"])
    return speed


def _eq37_rank(speed) -> dict:
    """Per (model, G, form, framework in :data:`BETTER_THAN_TF`): its eq. 3.7 speedup minus TensorFlow's."""
    rank = {}
    for (model, g, variant, fw), e in speed.items():
        if fw in BETTER_THAN_TF and (model, g, variant, "TensorFlow") in speed:
            tf = speed[(model, g, variant, "TensorFlow")]
            rank[(model, g, variant, fw)] = Evidence.combine(lambda a, axis: a[0] - a[1], [e, tf])
    return rank


def published_quantities(t32, t33, t34, t35, variants=VARIANTS) -> dict:
    """The Chapter 3 claims about the thesis's own tables, as ``{cell: Evidence}`` per claim.

    * ``published_lif``: every LIF of Table 3.4 (thesis and paper), drawn within its rounding;
    * ``published_t33_growth``: t_comm(3 GPUs) − t_comm(2 GPUs) of Table 3.3 per model and framework;
    * ``published_eq37_rank``: eq. 3.7 on Tables 3.2 + 3.3, speedup of MXNet/Chainer minus TensorFlow's per
      (model, GPUs, form, framework); ``published_eq37_speedups`` the speedups themselves;
    * ``published_t35_vs_paper``: |thesis − paper| of each Table 3.5 coefficient beyond the rounding of both (exact),
      ``published_t35_values`` the two printed values;
    * ``published_sum_of_phases``: |t_iter − Σ phases| of each Table 3.2 cell beyond the rounding of its terms
      (exact);
    * ``published_chainer_md``: how far Chainer's t_md minus MXNet's or TensorFlow's is from the text's 0.3 s.
    """
    out = {}
    out["published_lif"] = _published_cells({(r.source, r.model, r.framework, int(r.gpus)): float(r.mean)
                                             for r in t34.itertuples()})
    tc = t33.pivot_table(index=["model", "framework"], columns="gpus", values="mean", sort=False)
    draws = rounding_draws(tc[[2, 3]].to_numpy().ravel()).reshape(-1, len(tc), 2)
    out["published_t33_growth"] = {
        (m, fw): Evidence.from_samples(tc.loc[(m, fw), 3] - tc.loc[(m, fw), 2], draws[:, i, 1] - draws[:, i, 0],
                                       SOURCES["printed"]) for i, (m, fw) in enumerate(tc.index)}
    speed = _eq37_speedups(t32, tc, variants)
    out["published_eq37_rank"] = _eq37_rank(speed)
    out["published_eq37_speedups"] = speed
    both = _thesis_and_paper(t35)
    if both is not None:
        th, pa = both
        out["published_t35_vs_paper"] = {
            idx: Evidence.exact(abs(th[idx] - pa[idx]) - half_unit(th[idx]) - half_unit(pa[idx]), SOURCES["exact"])
            for idx in th.index.intersection(pa.index) if idx[2] != "r2"}
        out["published_t35_values"] = {idx: (float(th[idx]), float(pa[idx])) for idx in th.index.intersection(pa.index)}
    t32w = phase_wide(t32)
    out["published_sum_of_phases"] = {
        (m, fw): Evidence.exact(abs(r["t_iter"] - r[PARTS].sum()) - half_unit(r["t_iter"])
                                - sum(half_unit(r[c]) for c in PARTS), SOURCES["exact"])
        for (m, fw), r in t32w.iterrows()}
    md = t32[t32["phase"] == "t_md"].set_index(["model", "framework"])["mean"]
    md_cells = _published_cells({k: float(v) for k, v in md.items()})
    out["published_chainer_md"] = {
        (m, fw): Evidence.combine(lambda a, axis: np.abs(a[0] - a[1] - 0.3),
                                  [md_cells[(m, "Chainer")], md_cells[(m, fw)]])
        for m, fw in md.index if fw != "Chainer" and (m, "Chainer") in md.index}
    return out
