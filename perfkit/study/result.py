"""A fit study's result: :class:`StudyResult`, its text report (:meth:`~StudyResult.summary`), its figure
(:meth:`~StudyResult.plot`) and its JSON file (:meth:`~StudyResult.to_json`, :meth:`~StudyResult.from_json`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["StudyResult", "StudyError", "StudyWarning", "FORMAT", "VERSION"]

#: ``format`` and ``version`` of a saved study
FORMAT = "perfkit.FitStudy"
VERSION = 1
#: the tables of a result saved as data (attribute → JSON key)
_TABLES = ("parameters", "seed_summary", "search_table", "held_out", "factors", "predictions", "fit_points", "groups")
_VALUES = ("label", "header", "n_fit", "n_test", "fit_seconds", "objective", "model_summary", "coverage",
           "coverage_nested", "coverage_rows", "unscored_rows", "inner", "inner_note", "margin")


class StudyWarning(UserWarning):
    """A fit that may not be what it seems: parameters on their bounds, seeds that disagree."""


class StudyError(ValueError):
    """The model was fitted but its comparison failed: ``model`` (and ``result``, partly filled) keep the fit."""

    def __init__(self, message: str, model=None, result=None):
        super().__init__(message)
        self.model = model
        self.result = result


@dataclass
class StudyResult:
    """What :func:`perfkit.study.run` found.

    Attributes
    ----------
    spec : FitSpec
        The study that was run.
    model
        The model to save and predict with: the best seed of the thesis form (calibrated with ``calibrate``), or
        the calibrated form or search choice; its intervals widen beyond MAX with ``extrapolate``.
    label : str
        The model's name in the tables ("generic model", "phases model", "auto model", ...).
    held_out : DataFrame
        Held-out errors, one row per model (the model, then the baselines): MAPE (%), R2, MAE, RMSE, MSE and a 95 %
        bootstrap interval of the MAPE (``MAPE_lo``, ``MAPE_hi``; resamples of the held-out rows, paired).
    coverage : float or None
        Share of the held-out rows inside the model's 90 % intervals (None without intervals).
    coverage_nested : float or None
        With ``split="group:COL"``: the same share when each held-out group's interval width comes from the other
        groups alone (an inner leave one group out, fits on one group fewer); ``coverage`` there takes the width
        from the other groups' held-out errors, as the saved model does for a new group. None otherwise.
    factors : DataFrame or None
        With ``extrapolate``: the MAPE (%) of every model by extrapolation factor COL / MAX.
    inner : dict or None
        With ``extrapolate``: MAPE (%) of the model's form and of the baselines on the inner extrapolation splits
        of the fit rows (what the fit rows alone say; ``inner_note`` says why it is missing when it failed).
    parameters, seed_summary, objective
        Thesis form: the best seed's parameters, their mean and spread over seeds, and how the seeds agree.
    search_table
        ``form="auto"``: every candidate's score.
    predictions, fit_points
        The held-out rows' measured and predicted times (and the 90 % interval), and the fit rows along the scale
        column: the data of :meth:`plot`.
    groups, margin
        With ``split="group:COL"``: each held-out group's rows, the form chosen without it and every model's MAPE
        (%); and the selected procedure's median group MAPE minus the best baseline's, with a 95 % interval from
        resampling the groups (``{"vs", "estimate", "lo", "hi"}``). ``held_out`` then holds each model's median
        group MAPE with its interval, its MAPE and R² over all rows.
    fit, search
        The repeated fit and the form search themselves (kept in memory, not saved).
    """

    spec: object
    model: object
    label: str
    header: list = field(default_factory=list)
    n_fit: int = 0
    n_test: int = 0
    scale: tuple | None = None
    fit_seconds: float = 0.0
    objective: dict | None = None
    parameters: pd.DataFrame | None = None
    seed_summary: pd.DataFrame | None = None
    model_summary: str = ""
    search_table: pd.DataFrame | None = None
    held_out: pd.DataFrame | None = None
    coverage: float | None = None
    coverage_nested: float | None = None
    coverage_rows: int = 0
    unscored_rows: int = 0
    inner: dict | None = None
    inner_note: str | None = None
    factors: pd.DataFrame | None = None
    predictions: pd.DataFrame | None = None
    fit_points: pd.DataFrame | None = None
    groups: pd.DataFrame | None = None
    margin: dict | None = None
    fit: object = field(default=None, repr=False)
    search: object = field(default=None, repr=False)

    # ------------------------------------------------------------------ predictions
    def predict(self, X) -> np.ndarray:
        """The model's predicted times for the configurations ``X``."""
        return self.model.predict(X)

    def predict_interval(self, X, coverage: float = 0.9) -> pd.DataFrame:
        """The model's predictions with intervals (``predicted``, ``lower``, ``upper``, ``extrapolated``)."""
        if not callable(getattr(self.model, "predict_interval", None)):
            raise ValueError("this study's model has no intervals: run it with calibrate=True (thesis form) or "
                             "any other form")
        return self.model.predict_interval(X, coverage)

    # ------------------------------------------------------------------ report
    def summary(self, header: bool = True) -> str:
        """The report, statsmodels-style: what ran (``header``), the fit, the held-out errors beside the baselines,
        the intervals' coverage, the inner comparison and the errors by extrapolation factor."""
        from .summary import render

        return render(self, header=header)

    def plot(self):
        """Measured against predicted on the held-out rows and, with ``extrapolate``, the time along the scale
        column with the fitted range shaded; a matplotlib Figure."""
        from .plots import plot_study

        return plot_study(self)

    # ------------------------------------------------------------------ JSON
    def to_doc(self) -> dict:
        """The result as a JSON document: the spec, the model's document and every table and number as data."""
        doc = {"format": FORMAT, "version": VERSION, "spec": self.spec.to_dict(), "model": self.model.to_doc(),
               "scale": list(self.scale) if self.scale else None}
        for key in _VALUES:
            doc[key] = getattr(self, key)
        for key in _TABLES:
            table = getattr(self, key)
            doc[key] = None if table is None else _table_doc(table)
        return doc

    def to_json(self, path=None) -> str:
        """The result as JSON text, also saved to ``path`` when given (atomic: a crash never leaves half a file);
        never pickle."""
        from ..model.persist import dump_json

        return dump_json(self.to_doc(), path)

    @classmethod
    def from_doc(cls, doc: dict) -> "StudyResult":
        """Rebuild a result from :meth:`to_doc`'s document (the model through its own JSON loader)."""
        from ..model.persist import model_from_doc
        from .spec import FitSpec

        if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
            raise ValueError(f"not a saved fit study (expected format {FORMAT!r}, version {VERSION})")
        spec = FitSpec(**doc["spec"])
        out = cls(spec=spec, model=model_from_doc(doc["model"]), label=doc["label"],
                  scale=tuple(doc["scale"]) if doc.get("scale") else None)
        for key in _VALUES:
            setattr(out, key, doc.get(key))
        for key in _TABLES:
            setattr(out, key, None if doc.get(key) is None else _table_from_doc(doc[key]))
        return out

    @classmethod
    def from_json(cls, path) -> "StudyResult":
        """Read a result saved by :meth:`to_json`."""
        from ..model.persist import load_json

        return cls.from_doc(load_json(path)[0])


def _table_doc(table: pd.DataFrame) -> dict:
    """A table as ``{"index": name or None, "columns": [...], "rows": [[...], ...]}`` (NaN as null)."""
    index = table.index.name
    frame = table.reset_index() if index is not None else table.reset_index(drop=True)
    rows = [[None if isinstance(v, float) and not np.isfinite(v) else (v.item() if isinstance(v, np.generic) else v)
             for v in row] for row in frame.itertuples(index=False, name=None)]
    return {"index": index, "columns": [str(c) for c in frame.columns], "rows": rows}


def _table_from_doc(doc: dict) -> pd.DataFrame:
    frame = pd.DataFrame(doc["rows"], columns=doc["columns"])
    frame = frame.apply(lambda c: c.astype(float) if c.map(lambda v: v is None or isinstance(v, (int, float))
                                                            and not isinstance(v, bool)).all()
                        and c.map(lambda v: v is None or isinstance(v, float)).any() else c)
    return frame.set_index(doc["index"]) if doc.get("index") else frame
