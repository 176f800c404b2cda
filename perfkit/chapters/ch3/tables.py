"""Chapter 3's tables (tidy, as written to CSV) and their reader's layouts, from :class:`Ch3Results` alone."""
from __future__ import annotations

from ...report.tables import format_mean_std
from ...schema import CH3_MODELS, PHASES
from ...model.analytic.phases import require_columns
from .published import published_consistency, sum_check_3_2
from .results import Ch3Results

__all__ = ["table3_2_display", "chapter_tables", "consistency", "scaling_curves"]


def table3_2_display(tidy, digits: int = 4):
    """Table 3.2 layout: rows (model, phase), columns framework, cells ``mean ± std``."""
    require_columns(tidy, ("model", "framework", "phase", "mean", "std"), "table3_2_display")
    cells = tidy.assign(cell=[format_mean_std(m, s, digits) for m, s in zip(tidy["mean"], tidy["std"])])
    out = cells.pivot(index=["model", "phase"], columns="framework", values="cell")
    order = [(m, p) for m in CH3_MODELS for p in PHASES if (m, p) in out.index]
    rest = [i for i in out.index if i not in order]
    return out.loc[order + rest]


def consistency(results: Ch3Results):
    """The consistency checks of the published tables (:func:`~perfkit.chapters.ch3.published.published_consistency`)."""
    pub = results.published
    return published_consistency(pub.t32, pub.t34, pub.t35)


def _pivot(df, index, columns, name):
    """``df``'s ``mean`` with one column per value of ``columns``, named by ``name(value)``, as a flat table."""
    wide = df.pivot_table(index=index, columns=columns, values="mean", sort=False)
    wide.columns = [name(c) for c in wide.columns]
    return wide.reset_index()


def _phase_tables(r: Ch3Results, T: dict, V: dict) -> None:
    """§1–§3: Tables 3.2–3.4, published and measured."""
    pub, m = r.published, r.measured
    if m is not None:
        T["framework_setup"] = m.setup
    T["table3_2"] = pub.t32[["model", "framework", "phase", "mean", "std", "source", "table"]]
    V["table3_2"] = table3_2_display(pub.t32)
    if m is not None:
        T["table3_2_measured"], V["table3_2_measured"] = m.phases, table3_2_display(m.phases)
    T["table3_3"] = _pivot(pub.t33, ["model", "framework"], "gpus", lambda g: f"t_comm_{g}gpus_s")
    if r.multi_worker:
        T["table3_3_measured"] = m.t_comm
        view = m.t_comm.pivot_table(index=["model", "framework"], columns="gpus", values="mean", sort=False) * 1e3
        V["table3_3_measured"] = view.rename(columns=lambda g: f"t_c on {g} workers (ms)").round(3)
    T["table3_4"] = _pivot(pub.t34, ["framework", "model"], ["source", "gpus"], lambda c: f"{c[0]}_{c[1]}gpus")
    if r.multi_worker:
        T["table3_4_measured"] = m.lif


def _speedup_tables(r: Ch3Results, T: dict, V: dict) -> None:
    """§4–§6: speedups, overlap and Table 3.5."""
    pub, m = r.published, r.measured
    T["speedup_predicted_eq3_7"] = pub.predicted
    V["speedup_predicted_eq3_7"] = pub.predicted.pivot_table(index=["model", "framework"], columns=["variant", "gpus"],
                                                             values="speedup", sort=False).round(3)
    if r.multi_worker:
        T["speedup_measured"] = m.speedup
        V["speedup_measured"] = m.speedup.pivot_table(index=["model", "framework", "variant"], columns="gpus",
                                                      values="speedup", sort=False
                                                      ).rename(columns=lambda g: f"{g} workers").round(3)
    if m is not None and m.overlap is not None:
        T["overlap_vs_phased"] = m.overlap.reset_index()
        V["overlap_vs_phased"] = (m.overlap * [1e3, 1e3, 1]).round(3).rename(
            columns={"overlapped": "overlapped t_iter (ms)", "phased": "phased t_iter (ms)",
                     "overlapped_over_phased": "overlapped / phased"})
    T["table3_5_published"] = _pivot(pub.t35, ["model", "framework"], ["source", "quantity"],
                                      lambda c: f"{c[0]}_{c[1]}")
    if m is not None and m.lif_fit is not None:
        T["table3_5_measured"] = m.lif_fit


def scaling_curves(results: Ch3Results):
    """Every machine's measured speedup (and t_c where measured) per group (model or job) and worker count, the
    main file first: columns ``machine``, ``kind``, ``dataset``, ``group``, ``workers``, ``speedup``, ``t_c``."""
    import pandas as pd

    parts = []
    for m in ([results.main_machine] if results.main_machine is not None else []) + list(results.machines):
        if m.curves is None or not len(m.curves):
            continue
        c = m.curves.reindex(columns=["group", "workers", "speedup", "t_c"])
        parts.append(c.assign(machine=m.machine, kind=m.kind, dataset=m.dataset))
    if not parts:
        return None
    out = pd.concat(parts, ignore_index=True)
    return out[["machine", "kind", "dataset", "group", "workers", "speedup", "t_c"]]


def chapter_tables(results: Ch3Results) -> tuple[dict, dict]:
    """``(tables, views)``: every table of Chapter 3 but the claims ledger, by file stem, in section order, and
    the reader's layout of those that have one."""
    T: dict = {}
    V: dict = {}
    _phase_tables(results, T, V)
    _speedup_tables(results, T, V)
    T["table3_2_sum_check"] = sum_check_3_2(results.published.t32)
    checks = consistency(results)
    T["consistency_published"] = checks
    V["consistency_published"] = checks.groupby(["check", "verdict"]).size().rename("cells").to_frame()
    if results.measured is not None:
        T["sum_check_measured"] = results.measured.remainder
    curves = scaling_curves(results)
    if curves is not None:
        T["scaling_machines"] = curves
    return T, V
