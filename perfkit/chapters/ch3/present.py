"""Chapter 3's presentation stage: :func:`present` fills a :class:`~perfkit.chapters.result.ChapterResult` from
:class:`Ch3Results` (tables, views, figures, claims ledger, numbers, notes, readings); nothing is fitted."""
from __future__ import annotations

from ...report.claims import judge_all
from ..result import ChapterResult
from .claims import CLAIMS
from .figures import chapter_figures
from .readings import ch3_readings
from .results import Ch3Results
from .tables import chapter_tables

__all__ = ["present", "claims_ledger"]


def claims_ledger(results: Ch3Results, data: str):
    """The claims ledger of :data:`~perfkit.chapters.ch3.claims.CLAIMS` on ``results``; ``data`` names the measured
    file the claims are judged on."""
    return judge_all("3", data, CLAIMS, results.quantities)


def present(results: Ch3Results, res: ChapterResult) -> None:
    """Fill ``res`` (whose ``params`` are the chapter's) from ``results``."""
    res.tables, res.views = chapter_tables(results)
    res.figures = chapter_figures(results)
    res.numbers = results.quantities.numbers()
    res.notes = list(results.notes)
    res.tables["claims_ch3"] = claims_ledger(results, res.params.measured_csv or "published tables only")
    res.readings = ch3_readings(results, res.tables["claims_ch3"])
