"""The claims ledger: each quantitative claim of a chapter as a declarative rule, judged on our data.

A :class:`Claim` states what the thesis says and where, the rule in words, the
quantities it needs and two small functions: one that turns those quantities into
a verdict, one that writes the evidence. A chapter computes its quantities once
(a plain dict) and :func:`judge_all` turns its claims into the ledger table, with
the verdicts ``holds``, ``does not hold`` or ``cannot be tested here`` (when a
quantity is missing or the test returns None). Verdicts are computed, never typed,
and every rule is unit-tested on quantities that make it hold and fail.

>>> c = Claim("q_workers", "q of workers is close to −1", "Table 4.5", "|q + 1| <= 0.15",
...           needs=("q",), test=lambda q: abs(q["q"] + 1) <= 0.15, evidence=lambda q: f"q = {fmt(q['q'])}")
>>> c.judge({"q": -0.9})["verdict"], c.judge({"q": -0.2})["verdict"], c.judge({})["verdict"]
('holds', 'does not hold', 'cannot be tested here')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

__all__ = ["Claim", "VERDICTS", "COLUMNS", "judge_all", "fmt"]

VERDICTS = ("holds", "does not hold", "cannot be tested here")
#: columns of a ledger table
COLUMNS = ["chapter", "claim", "thesis", "verdict", "evidence", "rule", "data"]


def fmt(x, digits: int = 3) -> str:
    """Compact number for evidence strings."""
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "n/a"
    return f"{x:.{digits}g}"


@dataclass(frozen=True)
class Claim:
    """One claim of the thesis and the rule that tests it.

    Parameters
    ----------
    key : str
        Short identifier (unit tests and cross-references use it).
    claim : str
        What the thesis says, in a few words.
    thesis : str
        Where it says it (section, table or figure).
    rule : str
        The rule in words; ``{name}`` fields are filled from the quantities.
    needs : tuple of str
        Quantities the rule needs; if one is missing (or None) the claim cannot be tested.
    test : callable
        ``test(quantities) -> bool | None``; None means "cannot be tested here".
    evidence : callable
        ``evidence(quantities) -> str``, the numbers behind the verdict.
    missing : str
        Evidence text when a needed quantity is missing.
    """

    key: str
    claim: str
    thesis: str
    rule: str
    needs: tuple = ()
    test: Callable[[Mapping], bool | None] = lambda q: None
    evidence: Callable[[Mapping], str] = lambda q: ""
    missing: str = ""

    def judge(self, quantities: Mapping) -> dict:
        """The ledger row of this claim on ``quantities``."""
        absent = [n for n in self.needs if quantities.get(n) is None]
        if absent:
            holds, evidence = None, self.missing or f"not available: {', '.join(absent)}"
        else:
            holds, evidence = self.test(quantities), self.evidence(quantities)
        verdict = VERDICTS[2] if holds is None else VERDICTS[0] if bool(holds) else VERDICTS[1]
        try:
            rule = self.rule.format(**quantities)
        except (KeyError, IndexError, ValueError):
            rule = self.rule
        return {"claim": self.claim, "thesis": self.thesis, "verdict": verdict, "evidence": evidence, "rule": rule}


def judge_all(chapter: str, data: str, claims, quantities: Mapping):
    """The ledger table of ``claims`` on ``quantities`` (columns :data:`COLUMNS`)."""
    import pandas as pd

    rows = [dict(chapter=chapter, **c.judge(quantities), data=data) for c in claims]
    return pd.DataFrame(rows, columns=COLUMNS)
