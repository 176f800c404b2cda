"""What every chapter shares: the three-stage ``analyse`` (compute → typed results → presentation), claim
quantities as typed objects, and the words the readings use for a ledger.

A chapter package provides ``compute(params) -> Results`` (:mod:`perfkit.chapters.store`), the input files
its results depend on, and ``present(results, result)`` that fills a :class:`ChapterResult` with tables,
figures, the claims ledger and readings from the results alone. :func:`run_chapter` joins them through the
results cache (:mod:`perfkit.chapters.cache`), so a second run with unchanged parameters, data and code
presents stored results instead of computing them again.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from ..report.claims import fmt
from ..report.output import mark_quick
from .cache import cached_compute
from .result import ChapterResult

__all__ = ["run_chapter", "Quantities", "verdict_counts", "verdict_text", "short_label"]


def run_chapter(chapter: str, p, inputs, compute: Callable, cls: type, present: Callable) -> ChapterResult:
    """The :class:`ChapterResult` of ``chapter`` on checked parameters ``p``: ``compute(p)`` (or the cached
    results, unless ``p.cache`` is False), then ``present(results, result)``; with ``p.quick`` (in a chapter
    whose quick mode changes results: ``QUICK_CHANGES_RESULTS``) every figure carries
    :data:`~perfkit.report.output.QUICK_MARK`."""
    results, info = cached_compute(chapter, p, inputs, compute, cls, cache=getattr(p, "cache", True))
    res = ChapterResult(chapter, p, results=results, cache_info=info)
    present(results, res)
    if getattr(p, "quick", False) and getattr(p, "QUICK_CHANGES_RESULTS", True):  # say so on the figures' face
        for fig in res.figures.values():
            mark_quick(fig)
    return res


@dataclasses.dataclass
class Quantities:
    """Base of a chapter's claim quantities: a dataclass whose fields the claims read by name (``needs``).

    :meth:`memo` keeps a value computed from the quantities (a bootstrap, say), so a claim's evidence text
    reuses the number its verdict was decided from instead of computing it again.
    """

    def __post_init__(self):
        self._memo = {}

    def memo(self, key, compute: Callable):
        """``compute()`` the first time ``key`` is asked for, the same object afterwards."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def get(self, name: str, default=None):
        """The quantity ``name`` (None-valued or absent: ``default``)."""
        value = getattr(self, name, None)
        return default if value is None else value

    def fields(self) -> dict:
        """Every quantity by name (for the claims' rule templates)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


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


def verdict_text(claims, key: str) -> str:
    """Claim ``key``'s verdict with its estimate and interval: ``"holds (0.42, 95 % interval [0.3, 0.5])"``."""
    row = claims[claims["key"] == key]
    if not len(row):
        return "not judged"
    r = row.iloc[0]
    if r["verdict"] == "cannot be tested here" or not r["interval"]:
        return r["verdict"]
    where = "exact" if r["interval"] == "exact" else f"95 % interval {r['interval']}"
    return f"{r['verdict']} ({fmt(r['estimate'])}, {where})"


def short_label(label, default: str) -> str:
    """``"PyTorch (cpu, measured)"`` → ``"PyTorch"``; ``default`` without a label."""
    return str(label).split(" (")[0] if label else default
