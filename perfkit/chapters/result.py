"""What a chapter's analysis returns: :class:`ChapterResult`, and the checking of chapter parameters."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ChapterResult", "make_params"]


def make_params(cls, given: dict):
    """``cls(**given)`` for a chapter's ``Params`` dataclass; an unknown or mistyped parameter gets one clear error."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(given) - set(fields))
    if unknown:
        raise ValueError(f"{unknown[0]}: not a parameter of this chapter (parameters: {', '.join(fields)})")
    for name, value in given.items():
        default = fields[name].default
        want = type(default)
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            continue
        if want in (list, tuple) and isinstance(value, (list, tuple)):
            continue
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise ValueError(f"{name}: expected {want.__name__}, got {value!r}")
    return cls(**given)


@dataclass
class ChapterResult:
    """Tables, figures, fits, claims and readings of one chapter, computed once by ``analyse``.

    Attributes
    ----------
    chapter : str
        ``"ch3"``, ``"ch4"``, ``"ch5"``.
    params : object
        The chapter's ``Params``.
    tables : dict of str -> DataFrame
        Every table the chapter writes, by file stem (``"table4_2"``), in the tidy
        layout saved as CSV.
    views : dict of str -> DataFrame or Styler
        The same tables laid out for reading (rounded, units in headers, thesis and
        ours side by side); :meth:`view` falls back to the table.
    figures : dict of str -> matplotlib Figure
        Every figure, by file stem (``"fig4_3_de_pred_vs_measured"``).
    fits : dict
        Fitted models and repeated fits, by name (``"DE+L2"``).
    numbers : dict
        The key quantities (evidence of the claims, numbers the readings quote).
    readings : dict of str -> str
        A short Markdown paragraph per section that reads its result.
    notes : list of str
        Messages about the data (a scaled-down split, a section skipped).
    """

    chapter: str
    params: Any
    tables: dict = field(default_factory=dict)
    views: dict = field(default_factory=dict)
    figures: dict = field(default_factory=dict)
    fits: dict = field(default_factory=dict)
    numbers: dict = field(default_factory=dict)
    readings: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    @property
    def claims(self):
        """The claims ledger (the table ``claims_<chapter>``)."""
        return self.tables[f"claims_{self.chapter}"]

    def view(self, name: str):
        """The reader's layout of table ``name`` (the tidy table where there is none)."""
        if name in self.views:
            return self.views[name]
        if name in self.tables:
            from ..report.tables import rounded

            return rounded(self.tables[name])
        raise KeyError(f"{name}: no such table in {self.chapter}; tables: {', '.join(self.tables)}")

    def reading(self, section: str):
        """The reading of ``section`` as a Markdown object for ``display``."""
        from IPython.display import Markdown

        text = self.readings.get(section, f"*Nothing to read in this section on this data ({section!r} needs "
                                               "measurements the dataset does not have).*")
        return Markdown(text)

    def save(self, figures_dir=None) -> str:
        """Write every table (CSV), figure (PNG + SVG) and the chapter's findings (Markdown, the ``summary``
        reading the README quotes) under ``figures_dir/<chapter>/``; returns a one-line summary."""
        from ..report.output import savefig, savetable, savetext
        from ..schema import figures_dir as default_dir
        from . import findings

        out = figures_dir or None
        for name, table in self.tables.items():
            savetable(table, f"{self.chapter}/{name}", out)
        if "summary" in self.readings:
            savetext(findings([self]), f"{self.chapter}/findings_{self.chapter}", out)
        for name, fig in self.figures.items():
            savefig(fig, f"{self.chapter}/{name}", out)
        where = Path(out) if out else default_dir()
        return (f"{self.chapter}: {len(self.tables)} tables and {len(self.figures)} figures in "
                f"{where / self.chapter}")

    def summary(self) -> str:
        """Tables, figures and verdicts in a few lines."""
        verdicts = self.claims["verdict"].value_counts().to_dict() if f"claims_{self.chapter}" in self.tables else {}
        lines = [f"{self.chapter}: {len(self.tables)} tables, {len(self.figures)} figures",
                 "claims: " + ", ".join(f"{n} {v}" for v, n in verdicts.items())]
        return "\n".join(lines + self.notes)

    def __repr__(self) -> str:
        return f"<ChapterResult {self.chapter}: {len(self.tables)} tables, {len(self.figures)} figures>"
