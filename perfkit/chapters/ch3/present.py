"""Chapter 3's presentation stage: :func:`present` fills a :class:`~perfkit.chapters.result.ChapterResult` from
:class:`Ch3Results` (tables, views, figures, claims ledger, numbers, notes, readings); nothing is fitted."""
from __future__ import annotations

from ...report.claims import fmt, judge_all
from ..result import ChapterResult
from .claims import CLAIMS
from .figures import chapter_figures
from .machines import machine_ledger
from .readings import ch3_readings
from .results import Ch3Results
from .tables import chapter_tables

__all__ = ["present", "claims_ledger", "machine_verdicts"]


def claims_ledger(results: Ch3Results, data: str):
    """The claims ledger of :data:`~perfkit.chapters.ch3.claims.CLAIMS` on ``results``; ``data`` names the measured
    file the claims are judged on."""
    return judge_all("3", data, CLAIMS, results.quantities)


def machine_verdicts(by_machine):
    """The machine ledger as one row per claim and one column per machine: ``verdict (estimate [interval])``."""
    cells = [v if not iv else f"{v} ({fmt(e)} {iv})" if iv != "exact" else f"{v} ({fmt(e)})"
             for v, e, iv in zip(by_machine["verdict"], by_machine["estimate"], by_machine["interval"])]
    wide = by_machine.assign(cell=cells).pivot(index=["key", "claim"], columns="machine", values="cell")
    order = list(dict.fromkeys(by_machine["key"]))
    wide = wide.reindex(columns=list(dict.fromkeys(by_machine["machine"])))
    return wide.loc[sorted(wide.index, key=lambda k: order.index(k[0]))]


def present(results: Ch3Results, res: ChapterResult) -> None:
    """Fill ``res`` (whose ``params`` are the chapter's) from ``results``."""
    res.tables, res.views = chapter_tables(results)
    res.figures = chapter_figures(results)
    res.numbers = results.quantities.numbers()
    res.notes = list(results.notes)
    res.tables["claims_ch3"] = claims_ledger(results, res.params.measured_csv or "published tables only")
    if results.machines or results.main_machine is not None:
        by_machine = machine_ledger(results.main_machine, res.tables["claims_ch3"], results.machines)
        res.tables["claims_ch3_machines"] = by_machine
        res.views["claims_ch3_machines"] = machine_verdicts(by_machine)
    res.readings = ch3_readings(results, res.tables["claims_ch3"], res.tables.get("claims_ch3_machines"))
