"""The claims ledger: each quantitative claim of a chapter as a declarative rule, judged with its uncertainty.

A :class:`Claim` states what the thesis says and where, the rule in words, the
quantities it needs, a function that turns them into an :class:`Evidence` (a point
estimate, its 95 % interval and the resamples behind it; see
:mod:`perfkit.evidence`), the side of a threshold the claim puts that
quantity on, and a function that writes the numbers behind the verdict. A chapter
computes its quantities once (a plain dict) and :func:`judge_all` turns its claims
into the ledger table. The verdict is

``holds``
    the whole 95 % interval is on the claim's side of the threshold;
``does not hold``
    the whole interval is on the other side;
``inconclusive``
    the interval straddles or touches the threshold;
``cannot be tested here``
    a needed quantity is missing (or the rule returns None).

The ledger also shows the estimate, the interval and ``agree``: the share of the
resamples that lie on the claim's side of the threshold (so about 1 for a claim
that holds, about 0 for one that does not; empty for a quantity computed exactly
from printed numbers). A compound rule ("in every model") combines its parts per
resample (:meth:`Evidence.combine`), e.g. as the worst cell. Verdicts are computed,
never typed, and every rule is unit-tested on quantities that make it hold, fail
and be inconclusive.

>>> c = Claim("q_workers", "q of workers is close to −1", "Table 4.5", "−1.15 <= q <= −0.85", needs=("q",),
...           quantity=lambda q: Evidence.from_samples(np.mean(q["q"]), q["q"]), side="in", threshold=(-1.15, -0.85))
>>> [c.judge({"q": q})["verdict"] for q in ([-0.9, -0.95, -1.0], [-0.2, -0.3], [-0.8, -0.9], None)]
['holds', 'does not hold', 'inconclusive', 'cannot be tested here']
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from ..evidence import Evidence, agreement, fmt_interval, verdict as _verdict

__all__ = ["Claim", "NotComputable", "VERDICTS", "COLUMNS", "judge_all", "fmt", "worst"]

VERDICTS = ("holds", "does not hold", "inconclusive", "cannot be tested here")
#: columns of a ledger table
COLUMNS = ["chapter", "key", "claim", "thesis", "verdict", "estimate", "interval", "agree", "evidence", "rule",
           "resampling", "data"]


class NotComputable(ValueError):
    """Raised by a claim's evidence function when its numbers do not exist on this data (a level not measured,
    too few seeds); the ledger then says the quantity cannot be computed. Any other exception is a bug and
    propagates."""


def fmt(x, digits: int = 3) -> str:
    """Compact number for evidence strings."""
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "n/a"
    return f"{x:.{digits}g}"


def worst(cells: Mapping, side: str) -> Evidence:
    """The cell that is furthest from the claim, per resample: the max for a ``"<"`` claim, the min for ``">"``.

    A claim about every cell (every model, every worker count) holds when its
    worst cell does; ``cells`` maps a cell to its :class:`Evidence`.

    >>> worst({"a": Evidence.exact(1.0), "b": Evidence.exact(3.0)}, ">").estimate
    1.0
    """
    if side not in ("<", ">"):
        raise ValueError(f"side: expected '<' or '>', got {side!r}")
    return Evidence.combine(np.max if side == "<" else np.min, list(cells.values()))


@dataclass(frozen=True)
class Claim:
    """One claim of the thesis and the rule that tests it.

    Parameters
    ----------
    key : str
        Short identifier (unit tests and cross-references use it).
    claim : str
        What the thesis says, in a few words; ``{name}`` fields are filled from the quantities (a chapter's
        parameters, e.g. the GPU counts fitted on).
    thesis : str
        Where it says it (section, table, figure or equation); ``{name}`` fields are filled likewise.
    rule : str
        The rule in words; ``{name}`` fields are filled from the quantities.
    needs : tuple of str
        Quantities the rule needs; if one is missing (or None) the claim cannot be tested.
    quantity : callable
        ``quantity(quantities) -> Evidence | None``: the number the verdict is decided
        from, with its interval; None (or a non-finite estimate) means "cannot be tested here".
    side : {"<", ">", "in"}
        The claim says the quantity is below ``threshold``, above it, or inside the
        closed band ``threshold = (low, high)``.
    threshold : float or (float, float)
        The stated threshold (a band for ``side="in"``).
    evidence : callable
        ``evidence(quantities) -> str``, the numbers behind the verdict (per cell, with intervals).
    missing : str
        Evidence text when a needed quantity is missing.
    data : str
        What the claim is judged on, when it is not the chapter's measured file
        (e.g. ``"thesis Tables 3.2, 3.3"`` for a check of the published numbers).
    """

    key: str
    claim: str
    thesis: str
    rule: str
    needs: tuple = ()
    quantity: Callable[[Mapping], Evidence | None] = lambda q: None
    side: str = "<"
    threshold: float | tuple = 0.0
    evidence: Callable[[Mapping], str] = lambda q: ""
    missing: str = ""
    data: str = ""

    def evaluate(self, quantities) -> Evidence | None:
        """The :class:`Evidence` of this claim on ``quantities``, or None when it cannot be computed."""
        if any(quantities.get(n) is None for n in self.needs):
            return None
        ev = self.quantity(quantities)
        return ev if ev is not None and ev.finite else None

    def judge(self, quantities: Mapping) -> dict:
        """The ledger row of this claim on ``quantities`` (the columns of :data:`COLUMNS` but chapter and data)."""
        absent = [n for n in self.needs if quantities.get(n) is None]
        ev = None if absent else self.evaluate(quantities)
        if absent:
            text = self.missing or f"not available: {', '.join(absent)}"
        else:
            try:
                text = self.evidence(quantities)
            except Exception as exc:
                # where the quantity itself could not be computed, its evidence may fail the same way; where the
                # quantity exists, only NotComputable is expected, and anything else is a bug that propagates
                if ev is not None and not isinstance(exc, NotComputable):
                    raise
                text = ""
            text = text or self.missing or "the quantity cannot be computed on this data"
        if ev is None:
            verdict, estimate, interval, agree, source = VERDICTS[3], float("nan"), "", float("nan"), ""
        else:
            verdict = _verdict(ev.lo, ev.hi, self.side, self.threshold)
            estimate, agree, source = ev.estimate, agreement(ev.samples, self.side, self.threshold), ev.source
            interval = "exact" if ev.samples is None and ev.lo == ev.hi else fmt_interval(ev.lo, ev.hi)
        values = {k: v for k, v in (quantities.items() if isinstance(quantities, Mapping) else
                                    quantities.fields().items()) if v is not None}
        return {"key": self.key, "claim": _fill(self.claim, values), "thesis": _fill(self.thesis, values),
                "verdict": verdict, "estimate": estimate, "interval": interval, "agree": agree, "evidence": text,
                "rule": _fill(self.rule, values), "resampling": source}


class _Unknown:
    """A field a chapter did not compute on this data: shown as "…" (never a default number)."""

    def __format__(self, spec) -> str:
        return "…"


class _Fields(dict):
    def __missing__(self, key):
        return _Unknown()


def _fill(template: str, values: dict) -> str:
    """``template`` with its ``{name}`` fields filled from ``values``; a field not computed on this data shows as
    "…" rather than a number; a template that does not format stays as written."""
    try:
        return template.format_map(_Fields(values))
    except (IndexError, ValueError, TypeError, AttributeError):
        return template


def judge_all(chapter: str, data: str, claims, quantities: Mapping):
    """The ledger table of ``claims`` on ``quantities`` (columns :data:`COLUMNS`).

    ``data`` names what the claims are judged on; a claim with its own ``data``
    (a check of the thesis's printed tables) names that instead.
    """
    import pandas as pd

    rows = [dict(chapter=chapter, **c.judge(quantities), data=c.data or data) for c in claims]
    return pd.DataFrame(rows, columns=COLUMNS)
