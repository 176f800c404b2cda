"""The claims ledger: each quantitative claim of Chapters 3–4, tested on our data.

Every verdict is computed from data in the repository, never typed. A row
records the claim, where the thesis makes it, our verdict (``holds``,
``does not hold``, ``cannot be tested here``), the evidence in numbers and the
rule that turned the evidence into the verdict.
"""
from __future__ import annotations

import numpy as np

__all__ = ["Ledger", "VERDICTS", "fmt"]

VERDICTS = ("holds", "does not hold", "cannot be tested here")


class Ledger:
    """Collects claims and writes them as one table."""

    def __init__(self, chapter: str, data: str):
        self.chapter, self.data = chapter, data
        self.rows: list[dict] = []

    def add(self, claim: str, where: str, holds, evidence: str, rule: str) -> None:
        """Record one claim; ``holds`` is True, False or None (cannot be tested)."""
        if holds is None:
            verdict = "cannot be tested here"
        else:
            verdict = "holds" if bool(holds) else "does not hold"
        self.rows.append(dict(chapter=self.chapter, claim=claim, thesis=where, verdict=verdict, evidence=evidence,
                              rule=rule, data=self.data))

    def frame(self):
        import pandas as pd

        return pd.DataFrame(self.rows, columns=["chapter", "claim", "thesis", "verdict", "evidence", "rule", "data"])


def fmt(x, digits: int = 3) -> str:
    """Compact number for evidence strings."""
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "n/a"
    return f"{x:.{digits}g}"
