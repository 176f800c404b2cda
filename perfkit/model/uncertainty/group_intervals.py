"""Intervals for a group never measured (a GPU from its spec sheet): :class:`GroupIntervalModel`.

A model form fitted on every row predicts; its intervals come from the errors it made on *whole held-out groups*
(leave one group out, :func:`perfkit.model.selection.by_group.logo_predictions`): the scores are |log(y / ŷ)| of
every row predicted without its group, and the interval at coverage 1 − α is [ŷ·e^(−q), ŷ·e^(q)] with q their
⌈(n+1)(1 − α)⌉-th smallest. That is the split-conformal quantile on held-out-group rows: what a new group's rows
should expect if it is like the groups measured (exchangeable groups), not what a measured group's new rows
expect (their errors are smaller; the intervals are then conservative).

Every prediction row says whether its group was measured (``measured_group``) and whether it lies outside the
fitted ranges of the form's columns (``extrapolated``): the flags a planner shows beside each row.

With ``hardware`` (the GPU-name column), a table without the GPU's spec columns gets them joined from the GPU spec
table (:func:`perfkit.data.gpu_specs.join_hardware`, ``precision`` choosing the peak, ``gpu_specs`` a table of your
own) before every fit and prediction: a saved model then predicts from GPU names alone.
"""
from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone

from ..base import PerformanceForm, RowCapabilities, predictable_mask
from ..persist import SavedModel, is_finite, jsonable, model_from_doc
from ..selection.by_group import group_folds, log_scores, logo_predictions
from ..validation import validate_target
from .extrapolation import conformal_quantile

__all__ = ["GroupIntervalModel", "JSON_FORMAT"]

JSON_FORMAT = "perfkit.GroupIntervalModel"


class GroupIntervalModel(RowCapabilities, SavedModel, RegressorMixin, BaseEstimator):
    """A form whose intervals are calibrated on leave-one-group-out errors.

    Parameters
    ----------
    estimator : PerformanceForm
        The form (unfitted; it is cloned).
    group : str
        The column whose levels are the groups (e.g. ``hw_gpu``, the canonical GPU name).
    hardware, precision : str, optional
        The GPU-name and precision columns to join the spec columns on (when a table lacks them).
    gpu_specs : str, optional
        The path of your own GPU spec table (default: the shipped one).
    gpus, batch : str, optional
        The names of the GPU-count and per-GPU batch columns the form reads (kept so that a planner can build
        configurations; not read here).

    Attributes
    ----------
    estimator_ : PerformanceForm
        The form fitted on every row.
    scores_ : ndarray
        |log(y / ŷ)| of every row predicted by the fit without its group (rows no such fit can predict are left out).
    groups_ : list
        The groups measured, sorted as text.
    precisions_ : list
        With ``precision``: the precisions of the fit rows (sorted), so that a prediction for another one can be
        refused by a caller; empty otherwise.
    """

    json_format = JSON_FORMAT
    json_version = 1
    fitted_keys = ("estimator", "scores", "groups", "precisions", "fit_time")
    fitted_attribute = "scores_"

    def __init__(self, estimator=None, *, group="hw_gpu", hardware=None, precision=None, gpu_specs=None, gpus=None,
                 batch=None):
        self.estimator = estimator
        self.group = group
        self.hardware = hardware
        self.precision = precision
        self.gpu_specs = gpu_specs
        self.gpus = gpus
        self.batch = batch

    def _settings(self):
        if not isinstance(self.estimator, PerformanceForm):
            raise ValueError(f"estimator: expected a perfkit model form, got {type(self.estimator).__name__}")
        _check_names(self.group, self.hardware, self.precision, self.gpu_specs, self.gpus, self.batch)
        return self.group.strip()

    def _joined(self, X):
        """``X`` with the GPU spec columns (joined on ``hardware`` when it lacks them)."""
        from ...data.gpu_specs import HARDWARE_COLUMNS, join_hardware

        if self.hardware is None or all(c in X.columns for c in HARDWARE_COLUMNS):
            return X
        return join_hardware(X, self.hardware, self.precision, self.gpu_specs)

    def fit(self, X, y):
        """Fit the form on every row and score it by leave one group out; returns self."""
        start = time.perf_counter()
        group = self._settings()
        if group not in getattr(X, "columns", ()) and not (self.hardware and group == "hw_gpu"):
            raise ValueError(f"group: no column {group!r} in the data")
        y = validate_target(y, X, positive=True)
        X = self._joined(X)
        g = X[group].to_numpy(dtype=object)
        folds = group_folds(g, f"group {group!r}")
        scores = log_scores(y, logo_predictions(self.estimator, X, y, g, folds))
        if not len(scores):
            raise ValueError(f"group {group!r}: no row can be predicted without its group, so no interval can be "
                             "calibrated")
        self.estimator_ = clone(self.estimator).fit(X, y)
        self.scores_ = np.sort(scores)
        self.groups_ = sorted({str(v) for v in g})
        self.precisions_ = sorted({str(v) for v in X[self.precision]}) if self.precision in X.columns else []
        self.fit_time_ = time.perf_counter() - start
        return self

    def predict(self, X):
        self._check_fitted()
        return np.asarray(self.estimator_.predict(self._joined(X)), dtype=float)

    def predictable(self, X) -> np.ndarray:
        self._check_fitted()
        return predictable_mask(self.estimator_, self._joined(X))

    def fitted_ranges(self) -> dict | None:
        self._check_fitted()
        return self.estimator_.fitted_ranges()

    def half_width(self, coverage: float = 0.9) -> float:
        """q, the log half-width of the intervals at ``coverage`` (inf when the scores are too few for it)."""
        self._check_fitted()
        if isinstance(coverage, bool) or not is_finite(coverage) or not 0 < coverage < 1:
            raise ValueError(f"coverage: expected a number strictly between 0 and 1, got {coverage!r}")
        return conformal_quantile(self.scores_, 1.0 - float(coverage))

    def predict_interval(self, X, coverage: float = 0.9):
        """``predicted``, ``lower``, ``upper``, ``measured_group`` (the row's group was fitted) and ``extrapolated``
        (a column outside its fitted range) for every row of ``X``, on its index."""
        import pandas as pd

        from .conformal import extrapolation

        q = self.half_width(coverage)
        X = self._joined(X)
        pred = self.predict(X)
        flags, _ = extrapolation(self.estimator_, X)
        group = self.group.strip()
        measured = X[group].astype(str).isin(self.groups_).to_numpy() if group in X.columns \
            else np.zeros(len(X), dtype=bool)
        with np.errstate(over="ignore"):
            lower, upper = pred * np.exp(-q), pred * np.exp(q)
        return pd.DataFrame({"predicted": pred, "lower": lower, "upper": upper, "measured_group": measured,
                             "extrapolated": np.zeros(len(X), dtype=bool) if flags is None else flags.to_numpy()},
                            index=X.index)

    def summary(self) -> str:
        self._check_fitted()
        return (f"{self.estimator_.summary()}\nintervals: leave one {self.group} out over {len(self.groups_)} groups, "
                f"{len(self.scores_)} held-out rows; 90 % half-width ×/÷ {np.exp(self.half_width(0.9)):.3g}")

    # ------------------------------------------------------------------ JSON
    @classmethod
    def _setting_names(cls) -> list:
        return ["group", "hardware", "precision", "gpu_specs", "gpus", "batch"]

    def _settings_doc(self) -> dict:
        return {k: getattr(self, k) for k in self._setting_names()}

    @classmethod
    def _from_settings(cls, settings):
        _check_names(*(settings.get(k) for k in cls._setting_names()))
        return cls(None, **settings), None

    def _fitted_doc(self) -> dict:
        return {"estimator": self.estimator_.to_doc(), "scores": [float(s) for s in self.scores_],
                "groups": [jsonable(g) for g in self.groups_], "precisions": list(self.precisions_),
                "fit_time": float(self.fit_time_)}

    @classmethod
    def _restore(cls, model, checked, reader):
        estimator = model_from_doc(reader["estimator"], reader.where)
        if not isinstance(estimator, PerformanceForm):
            raise reader.fail(f"fitted.estimator: expected a model form, got {type(estimator).__name__}")
        scores = reader.numbers("scores")
        if not scores or any(s < 0 for s in scores):
            raise reader.fail("fitted.scores: expected a non-empty list of finite numbers >= 0")
        model.estimator, model.estimator_ = estimator, estimator
        model.scores_ = np.sort(np.asarray(scores, dtype=float))
        model.groups_ = reader.names("groups")
        model.precisions_ = reader.names("precisions")
        model.fit_time_ = reader.number("fit_time", minimum=0)
        return model


def _check_names(group, hardware, precision, gpu_specs, gpus=None, batch=None) -> None:
    """``group`` a column name; ``hardware``, ``precision``, ``gpu_specs``, ``gpus``, ``batch`` None or text
    (``precision`` and ``gpu_specs`` only with ``hardware``)."""
    if not isinstance(group, str) or not group.strip():
        raise ValueError(f"group: expected a column name, got {group!r}")
    for key, v in (("hardware", hardware), ("precision", precision), ("gpu_specs", gpu_specs), ("gpus", gpus),
                   ("batch", batch)):
        if v is not None and (not isinstance(v, str) or not v.strip()):
            raise ValueError(f"{key}: expected a column name (gpu_specs: a path) or None, got {v!r}")
    if hardware is None and (precision is not None or gpu_specs is not None):
        raise ValueError("precision/gpu_specs: they choose the spec columns joined on hardware; give hardware too")
