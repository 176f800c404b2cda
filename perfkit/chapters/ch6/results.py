"""Chapter 6's computed results as typed data (:class:`Ch6Results`): per dataset its held-out rows, every
method's predictions, interval counts and fitted perfkit models, the search's candidates, the formulas, Extra-P's
rows, the what-if table and the hybrid form's rates. Tables, figures, claims and readings are functions of it."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..store import Results, storable

__all__ = ["MethodFit", "WhatIf", "DatasetFit", "Ch6Results"]


@storable
@dataclass
class MethodFit:
    """One method on one dataset: its held-out predictions and what Table 6.1 says of it.

    ``inside`` is ``(held-out rows inside their interval, rows with an interval)``, None without intervals;
    ``coverage`` the share the interval code measured (NaN without intervals); ``n_params`` NaN for a black box.
    """

    pred: np.ndarray
    form: str
    n_params: float
    coverage: float
    inside: tuple | None
    extrapolated: int
    note: str


@storable
@dataclass
class WhatIf:
    """A what-if curve: the model that drew it (its label), the base configuration, the table and its file stem."""

    model: str
    base: dict
    table: object
    stem: str

    def as_dict(self) -> dict:
        """``{"model", "base", "table", "stem"}`` (``result.numbers["whatif"][dataset]``)."""
        return dict(model=self.model, base=self.base, table=self.table, stem=self.stem)


@storable
@dataclass
class DatasetFit:
    """Everything computed on one dataset.

    ``methods`` maps a method (:data:`~perfkit.chapters.ch6.METHODS`) to its :class:`MethodFit`, the
    auto-selected form first; ``models`` the fitted perfkit models among them (the black boxes are kept as
    predictions only); ``candidates`` is the search's table (:class:`perfkit.model.selection.search.FormSearch`);
    ``formulas`` the rows of Table 6.3; ``extrap`` Extra-P's rows (label → ``{"MAPE", "note"}``);
    ``rates`` the hybrid form's rates table and ``compute_rate`` its compute rate with its bootstrap refits
    (ch4 and ch5 only).
    """

    name: str
    source: str
    n_fit: int
    unscored: int
    y_test: np.ndarray
    methods: dict
    models: dict
    candidates: object
    auto_form: str
    auto_terms: str
    formulas: list
    extrap: dict
    whatif: WhatIf | None = None
    rates: object = None
    compute_rate: tuple | None = None

    @property
    def n_test(self) -> int:
        """Held-out rows scored (every method predicts them)."""
        return len(self.y_test)

    @property
    def preds(self) -> dict:
        """Held-out predictions by method."""
        return {m: f.pred for m, f in self.methods.items()}

    @property
    def coverage(self) -> dict:
        """Share of held-out rows inside their interval, by method with intervals."""
        return {m: f.inside[0] / f.inside[1] for m, f in self.methods.items() if f.inside is not None}

    @property
    def inside(self) -> dict:
        """``(rows inside, rows with an interval)`` by method with intervals."""
        return {m: f.inside for m, f in self.methods.items() if f.inside is not None}

    @property
    def rows(self) -> dict:
        """Rows fitted, held out and left unscored, and the source file."""
        return dict(fit=self.n_fit, test=self.n_test, unscored=self.unscored, source=self.source)


@dataclass
class Ch6Results(Results):
    """Chapter 6's results: one :class:`DatasetFit` per dataset analysed (in order), the folds, the hybrid's
    bootstrap refits, the messages about the data and the fit times (machine-dependent; never written to
    ``figures/``)."""

    datasets: list
    folds: int
    quick: bool
    rate_b: int
    fits: dict
    notes: list = field(default_factory=list)
    timings: object = None

    @property
    def compute_rate(self) -> dict | None:
        """``{"ch4": (rate, samples), "ch5": ...}`` when the hybrid form was fitted on both, else None."""
        rates = {ds: f.compute_rate for ds, f in self.fits.items() if f.compute_rate is not None}
        return rates if len(rates) >= 2 else None

    @property
    def label(self) -> str:
        """The data the ledger is judged on: every dataset's source."""
        return " + ".join(self.fits[ds].source for ds in self.datasets)
