"""The interface every model form implements (Extra-P's modeler and scikit-learn's estimator as models).

A form (:class:`~perfkit.model.forms.generic.GenericPerformanceModel`, the thesis's eq. 4.4;
:class:`~perfkit.model.forms.loglinear.LogLinearModel`; :class:`~perfkit.model.forms.hybrid.HybridModel`) is a
:class:`PerformanceForm`: a scikit-learn regressor (settings in ``__init__``, ``fit`` returns self, fitted
attributes end in ``_``, ``NotFittedError`` before ``fit``, ``n_features_in_`` and ``feature_names_in_``
after it) that also

- writes itself out: :meth:`~PerformanceForm.formula` (the fitted model in one line) and
  :meth:`~PerformanceForm.summary` (a printable report), and counts its fitted parameters,
  :attr:`~PerformanceForm.n_parameters_` (the "simplest" of the form search's one-standard-error rule);
- saves itself as JSON through the one codec of :mod:`perfkit.model.persist`
  (:meth:`~perfkit.model.persist.SavedModel.to_doc` / ``from_doc``, ``to_json`` / ``from_json``);
- states its optional capabilities (:class:`RowCapabilities`): ``has_leverage`` says whether
  :meth:`~RowCapabilities.leverage` exists, and :meth:`~RowCapabilities.predictable` says which rows it can
  predict. Code that uses a model asks these, never ``hasattr``.
"""
from __future__ import annotations

from abc import ABCMeta, abstractmethod
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from .persist import SavedModel

__all__ = ["PerformanceForm", "RowCapabilities", "leverage_of_model", "predictable_mask"]


class RowCapabilities:
    """The optional capabilities of a fitted model, stated by the class rather than found by probing.

    ``has_leverage`` (class attribute): whether :meth:`leverage` gives the leverage of a row; a model without
    one raises ``NotImplementedError`` there. :meth:`predictable` is always there: by default every row
    whose categorical levels were seen in fit is predictable (the caller checks the levels).
    """

    #: whether :meth:`leverage` gives each row's leverage (False: the model has none)
    has_leverage: ClassVar[bool] = False

    def leverage(self, X) -> np.ndarray:
        """Leverage of the rows of ``X``: the variance of the fitted value there in units of the residual
        variance (forms with ``has_leverage``); studentised conformal intervals widen by √(1 + h)."""
        raise NotImplementedError(f"{type(self).__name__} has no leverage (has_leverage is False)")

    def predictable(self, X) -> np.ndarray:
        """Mask of the rows of ``X`` the fitted model can predict, given that their categorical levels were
        seen in fit: all True unless a form has rates or terms for only some combinations of levels."""
        return np.ones(len(X), dtype=bool)

    def fitted_ranges(self) -> dict | None:
        """``{column: (min, max)}`` of the numeric and extrinsic columns in fit, for a form that keeps them (what
        ``perfkit predict`` flags an extrapolation by); None for one that does not."""
        return None

    def level_bound_columns(self) -> list:
        """The numeric or extrinsic columns that the form (as set, fitted or not) predicts only at values seen
        in fit, e.g. a rate per measured worker count: [] for a form that predicts any value."""
        return []


def leverage_of_model(model, X) -> np.ndarray:
    """``model.leverage(X)`` for a model with ``has_leverage``, checked finite and >= 0; zeros for any other
    model (a form without leverage, a baseline pipeline)."""
    if not (isinstance(model, RowCapabilities) and model.has_leverage):
        return np.zeros(len(X))
    h = np.asarray(model.leverage(X), dtype=float).ravel()
    if not np.all(np.isfinite(h) & (h >= 0)):
        raise ValueError(f"estimator: {type(model).__name__}.leverage gave a value that is not a finite number >= 0")
    return h


def predictable_mask(model, X) -> np.ndarray:
    """``model.predictable(X)`` for a model with :class:`RowCapabilities`; all True for any other estimator."""
    if not isinstance(model, RowCapabilities):
        return np.ones(len(X), dtype=bool)
    return np.asarray(model.predictable(X), dtype=bool)


class PerformanceForm(RowCapabilities, SavedModel, RegressorMixin, BaseEstimator, metaclass=ABCMeta):
    """Base class of every model form: a scikit-learn regressor of times that writes and saves itself.

    A subclass implements ``_settings`` (every setting checked, one ``ValueError`` naming a bad one), ``fit``,
    ``predict``, :meth:`formula`, :meth:`summary`, :attr:`n_parameters_`, and the codec's hooks
    ``_fitted_doc`` / ``_restore`` with its ``json_format`` and ``fitted_keys``
    (:class:`~perfkit.model.persist.SavedModel`). ``fit`` sets ``numeric_``, ``categorical_``, ``extrinsic_``
    and ``n_features_in_`` (:func:`perfkit.model.roles.record_roles`).
    """

    @abstractmethod
    def _settings(self):
        """Every setting checked; returns the checked values (the column roles first)."""

    @abstractmethod
    def fit(self, X, y):
        """Fit to measured times ``y`` (> 0) of the configurations ``X`` (a DataFrame); returns self."""

    @abstractmethod
    def predict(self, X):
        """Predicted times for the rows of ``X``."""

    @abstractmethod
    def formula(self, digits: int = 3) -> str:
        """The fitted model in one line, coefficients to ``digits`` significant digits."""

    @abstractmethod
    def summary(self) -> str:
        """A printable report: the form, its settings, the fit and the table of fitted parameters."""

    @property
    @abstractmethod
    def n_parameters_(self) -> int:
        """Number of fitted parameters."""

    @property
    def feature_names_in_(self) -> np.ndarray:
        """Names of the role columns the fitted model reads: numeric, categorical, extrinsic (an object array)."""
        if self.fitted_attribute not in vars(self):
            raise AttributeError(f"{type(self).__name__} is not fitted yet: it has no feature_names_in_")
        return np.asarray(self.numeric_ + self.categorical_ + self.extrinsic_, dtype=object)
