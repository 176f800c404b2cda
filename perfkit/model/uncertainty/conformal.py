"""Conformal prediction intervals for any time model, on the relative error.

A point prediction of an epoch time says nothing about how far off it may be.
:class:`ConformalRegressor` wraps any regressor with ``fit``/``predict`` (a
:class:`~perfkit.model.forms.loglinear.LogLinearModel`, a
:class:`~perfkit.model.forms.generic.GenericPerformanceModel`, a baseline pipeline of
:func:`~perfkit.model.selection.baselines.make_baseline`) and turns held-out errors into
intervals: if the new configurations are exchangeable with the training ones
(drawn the same way), an interval of ``coverage=0.9`` contains the measured time of
about 90 % of them.

Three ways to get the errors (``method``):

- ``"studentized"`` (the default): K-fold out-of-fold errors, each divided by
  √(1 + h), with h the row's leverage under the fold model that predicted it (the
  variance of that model's prediction there, in units of the residual variance); the
  interval is the model fitted on every row, widened by √(1 + h(x)) with its own
  leverage. A fold model has fewer rows than the model on all rows, so its errors are
  larger, by more the more terms the model has per row; the leverage corrects for
  that (for least squares on fixed terms it is exact: the error at x has variance
  σ²(1 + h(x))). The forms whose class says ``has_leverage`` (the log-linear and hybrid
  forms, :class:`~perfkit.model.base.RowCapabilities`) give h; for any other estimator
  h = 0 (plain cross-validated errors around the model on all rows). No finite-sample
  guarantee.
- ``"cv+"``: the CV+ construction (Barber et al. 2021) from the K fold models:
  at least 1 − 2α in theory, about 1 − α when the fold models are about as good as
  the model on all rows; conservative when they are not (many terms per row).
- ``"split"``: a held-out calibration share; exactly the 1 − α guarantee, on a model
  fitted to fewer rows.

The nonconformity score is the relative error in log space, R = |log(y / ŷ)|: times
span orders of magnitude, so the interval is a factor, ŷ·e^{−q} to ŷ·e^{q}, wider
for slow configurations in seconds but the same in percent.

The guarantee says nothing about configurations outside the measured ones: a row
with a value beyond the fitted range of a column, or a category level never seen,
is flagged by :meth:`ConformalRegressor.extrapolated` (and :func:`extrapolation`, which also says how many rows
and which columns), and :meth:`~ConformalRegressor.predict_interval` warns
(:class:`ExtrapolationWarning`) naming the columns; the interval of a row beyond a fitted range widens with the
distance (log2 of how far beyond, per column), so a far extrapolation never gets the width of a measured one.
"""
from __future__ import annotations

import math
import numbers
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from ..._checks import check_int
from ..base import PerformanceForm, RowCapabilities, leverage_of_model, predictable_mask
from ..selection.baselines import FrameValidator
from .leverage import leverage_basis, leverage_of
from ..persist import SavedModel, is_finite, jsonable, leverage_from_doc, model_from_doc
from .ranges import column_ranges, outside_fitted, range_distance
from ..validation import column_list, missing_column_error, validate_target

__all__ = ["ConformalRegressor", "ExtrapolationWarning", "coverage_of", "extrapolation", "seen_rows",
           "predictable_rows", "INTERVAL_METHODS", "JSON_FORMAT",
           "JSON_VERSION"]

#: the interval calibration methods :class:`ConformalRegressor` accepts (``method``)
INTERVAL_METHODS = ("cv+", "studentized", "split")
#: ``format`` and newest ``version`` of the JSON that :meth:`ConformalRegressor.to_json` writes
JSON_FORMAT = "perfkit.ConformalRegressor"
JSON_VERSION = 1
_SETTINGS = ("method", "n_splits", "calibration", "random_state")
_FITTED = ("estimator", "estimators", "scores", "fold", "ranges", "levels", "fit_time")
_CHUNK = 4_000_000  # test rows × training rows held in memory at once by the CV+ quantiles


class ExtrapolationWarning(UserWarning):
    """Rows to predict lie outside the fitted range of a column, or have a category level not seen in fit."""


class ConformalRegressor(RowCapabilities, SavedModel, RegressorMixin, BaseEstimator):
    """Conformal prediction intervals on the relative error |log(y / ŷ)| of any regressor.

    Parameters
    ----------
    estimator : regressor
        Any object with ``fit(X, y)`` and ``predict(X)`` whose predictions are
        > 0 (times). It is cloned (:func:`sklearn.base.clone`); the object given
        is left untouched, fitted or not.
    method : {"studentized", "cv+", "split"}, default "studentized"
        ``"studentized"``: K-fold cross-validation; each row's score is the error of
        the fold model that did not see it divided by √(1 + leverage) (see the
        module docstring); intervals around the model on all rows.
        ``"cv+"``: K-fold cross-validation; each row's score comes from the fold
        model that did not see it, and the fold models are kept to build
        intervals by the CV+ construction (see :meth:`predict_interval`).
        ``"split"``: a random ``calibration`` share of the rows is held out; the
        model fitted on the rest gives the scores and the predictions.
    n_splits : int, default 5
        Folds of ``"studentized"`` and ``"cv+"`` (an integer >= 2).
    calibration : float, default 0.25
        Share of rows held out to calibrate ``"split"`` (strictly between 0 and 1).
    random_state : int, default 0
        Seed of the folds or of the calibration split (an integer >= 0).

    Attributes
    ----------
    estimator_ : regressor
        The model whose predictions are the ``predicted`` column and :meth:`predict`:
        fitted on all rows for ``"studentized"`` and ``"cv+"``, on the rows not held out for ``"split"``
        (the model the split guarantee is about).
    estimators_ : list of regressor
        ``"cv+"``: the K fold models (fold k fitted without the rows of fold k).
        ``"studentized"`` and ``"split"``: ``[estimator_]``.
    scores_ : numpy.ndarray
        Nonconformity scores |log(y / ŷ)| (divided by √(1 + h) for ``"studentized"``):
        out-of-fold for ``"studentized"`` and ``"cv+"`` (one per
        training row, except rows with a category level that their fold's
        training rows lack: no fold model can predict those), on the calibration
        rows for ``"split"``.
    fold_ : numpy.ndarray
        ``"studentized"`` and ``"cv+"``: the fold of each scored row (for ``"cv+"`` an index into
        ``estimators_``);
        ``"split"``: zeros, one per calibration row.
    n_calibration_ : int
        Number of scores (n in the conformal quantile).
    ranges_ : dict
        Numeric/extrinsic column → (min, max) seen in fit.
    levels_ : dict
        Categorical column → levels seen in fit.
    fit_time_ : float
        Wall time of ``fit`` in seconds.

    Notes
    -----
    It saves itself through the codec of :mod:`perfkit.model.persist` (``to_doc``/``from_doc``,
    ``to_json``/``from_json``) when its models are perfkit forms, and says which rows it can predict
    (:meth:`predictable`), but it is not a :class:`~perfkit.model.base.PerformanceForm`: it wraps any
    regressor, black boxes included, so a formula or a parameter count is its estimator's
    (``estimator_.formula()`` for a form).
    """

    json_format = JSON_FORMAT
    json_version = JSON_VERSION
    fitted_keys = _FITTED
    fitted_attribute = "scores_"

    def __init__(self, estimator, *, method="studentized", n_splits=5, calibration=0.25, random_state=0):
        self.estimator = estimator
        self.method = method
        self.n_splits = n_splits
        self.calibration = calibration
        self.random_state = random_state

    # ------------------------------------------------------------------ setup
    def _settings(self):
        for name in ("fit", "predict"):
            if not callable(getattr(self.estimator, name, None)):
                raise ValueError(f"estimator: {type(self.estimator).__name__} has no {name}() method")
        if not isinstance(self.method, str) or self.method not in INTERVAL_METHODS:
            raise ValueError(f"method: expected one of {INTERVAL_METHODS}, got {self.method!r}")
        check_int("n_splits", self.n_splits, minimum=2)
        cal = self.calibration
        if isinstance(cal, bool) or not isinstance(cal, numbers.Real) or not 0 < float(cal) < 1:
            raise ValueError(f"calibration: expected a share strictly between 0 and 1, got {cal!r}")
        check_int("random_state", self.random_state, minimum=0)

    def _roles(self, X):
        """(numeric-like columns, categorical columns) to check for extrapolation: the roles of a perfkit form or
        of a :func:`~perfkit.model.selection.baselines.make_baseline` pipeline's check step, else the dtypes of ``X``."""
        from sklearn.pipeline import Pipeline

        est = self.estimator
        if isinstance(est, Pipeline) and est.steps and isinstance(est.steps[0][1], FrameValidator):
            est = est.steps[0][1]
        if isinstance(est, (PerformanceForm, FrameValidator)):
            num = column_list("numeric", est.numeric) + column_list("extrinsic", est.extrinsic)
            return num, column_list("categorical", est.categorical)
        import pandas as pd

        num = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c]) and not pd.api.types.is_bool_dtype(X[c])]
        return num, [c for c in X.columns if c not in num]

    # -------------------------------------------------------------------- fit
    def fit(self, X, y):
        """Fit the model(s) and compute the nonconformity scores.

        Parameters
        ----------
        X : pandas.DataFrame
            Configurations (what the wrapped estimator takes).
        y : array_like
            Measured times, finite and > 0.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A bad setting, a bad time, too few rows for the folds or the
            calibration split, or a prediction <= 0 or not finite (no relative
            error), naming the row.
        """
        import pandas as pd
        from sklearn.base import clone

        self._settings()
        if not isinstance(X, pd.DataFrame):
            raise ValueError(f"X: expected a pandas DataFrame, got {type(X).__name__}")
        y = validate_target(y, X, positive=True)
        n = len(X)
        start = time.perf_counter()
        num, cat = self._record_ranges(X)
        if self.method in ("cv+", "studentized"):
            from sklearn.model_selection import KFold

            k = int(self.n_splits)
            if n < 2 * k:
                raise ValueError(f"X: {n} rows are too few for n_splits={k} (need at least {2 * k})")
            folds, models, preds, seens = [], [], [], []
            for tr, te in KFold(k, shuffle=True, random_state=int(self.random_state)).split(X):
                model = clone(self.estimator).fit(X.iloc[tr], y[tr])
                seen = predictable_rows(model, X.iloc[tr], X.iloc[te], cat)  # e.g. a level the fold never saw
                folds.append((tr, te)), models.append(model), seens.append(seen)
                preds.append(_positive_predictions(model, X.iloc[te[seen]]))
            self.estimator_ = clone(self.estimator).fit(X, y)
            self._scores_from_folds(X, y, folds, models, preds, seens)
        else:
            n_cal = int(math.ceil(float(self.calibration) * n))
            if n_cal < 1 or n - n_cal < 2:
                raise ValueError(f"X: {n} rows are too few to hold out calibration={self.calibration!r} "
                                 "and still fit on the rest")
            perm = np.random.default_rng(int(self.random_state)).permutation(n)
            cal, tr = np.sort(perm[:n_cal]), np.sort(perm[n_cal:])
            self.estimator_ = clone(self.estimator).fit(X.iloc[tr], y[tr])
            self.estimators_ = [self.estimator_]
            pred = _positive_predictions(self.estimator_, X.iloc[cal])
            self.scores_ = np.abs(np.log(y[cal]) - np.log(pred))
            self.fold_ = np.zeros(n_cal, dtype=int)
        self.n_calibration_ = len(self.scores_)
        self.fit_time_ = time.perf_counter() - start
        return self

    def _record_ranges(self, X):
        """Fitted min–max of the numeric columns and levels of the categorical ones (the extrapolation guard)."""
        num, cat = self._roles(X)
        self.ranges_ = column_ranges(X, num)
        for c in cat:
            if c not in X.columns:
                raise missing_column_error(X, c, "categorical")
        self.levels_ = {c: list(dict.fromkeys(X[c].tolist())) for c in cat}
        return num, cat

    def _scores_from_folds(self, X, y, folds, models, predictions, seen):
        """Out-of-fold scores from the fold models (``predictions``: theirs for the rows ``seen`` marks in each
        fold's test rows); for ``"studentized"`` each divided by √(1 + h) with h the row's leverage under its
        fold model (:func:`~perfkit.model.base.leverage_of_model`). Keeps the fold models for ``"cv+"``, only the model on all rows else."""
        fold, pred, lev = np.full(len(X), -1, dtype=int), np.ones(len(X)), np.zeros(len(X))
        for i, ((_, te), model, ok, p) in enumerate(zip(folds, models, seen, predictions)):
            p = np.asarray(p, dtype=float)
            bad = ~(np.isfinite(p) & (p > 0))
            if bad.any():
                raise ValueError(f"estimator: fold {i} predicts {p[bad][0]:g}, not a finite time > 0; intervals on "
                                 "the relative error need positive predictions")
            pred[te[ok]], fold[te[ok]] = p, i
            if self.method == "studentized" and ok.any():
                lev[te[ok]] = leverage_of_model(model, X.iloc[te[ok]])
        scored = fold >= 0
        if not scored.any():
            raise ValueError("X: no row could be scored: every held-out row has a category level its fold lacks")
        self.scores_ = np.abs(np.log(y[scored]) - np.log(pred[scored])) / np.sqrt(1.0 + lev[scored])
        self.fold_ = fold[scored]
        self.estimators_ = list(models) if self.method == "cv+" else [self.estimator_]

    def _fit_from_folds(self, X, y, folds, models, predictions, seen):
        """CV+ or studentised scores from fold models fitted elsewhere (:func:`perfkit.model.selection.search.search_forms` has
        them already).

        ``folds`` are the (train, test) index pairs of ``KFold(n_splits, shuffle=True, random_state)`` on X,
        ``models`` the fitted fold models, ``predictions`` their predictions for the test rows that ``seen``
        (one mask per fold) marks. Only the model on all rows is fitted here.
        """
        from sklearn.base import clone

        self._settings()
        if self.method == "split":
            raise ValueError("method: fold models calibrate 'cv+' or 'studentized', not 'split'")
        y = validate_target(y, X, positive=True)
        start = time.perf_counter()
        self._record_ranges(X)
        self.estimator_ = clone(self.estimator).fit(X, y)
        self._scores_from_folds(X, y, folds, models, predictions, seen)
        self.n_calibration_ = len(self.scores_)
        self.fit_time_ = time.perf_counter() - start
        return self

    # ---------------------------------------------------------------- predict
    def predict(self, X):
        """Point predictions of :attr:`estimator_`."""
        self._check_fitted()
        return np.asarray(self.estimator_.predict(X), dtype=float).ravel()

    def predictable(self, X) -> np.ndarray:
        """Mask of the rows of ``X`` that the model on all rows and, for CV+, every fold model can predict
        (:func:`predictable_rows`; all True for forms that predict any row with levels seen in fit)."""
        self._check_fitted()
        ok = np.ones(len(X), dtype=bool)
        for m in [self.estimator_] + (list(self.estimators_) if self.method == "cv+" else []):
            ok &= predictable_mask(m, X)
        return ok

    def predict_interval(self, X, coverage=0.9):
        """Prediction intervals for the rows of ``X``.

        Parameters
        ----------
        X : pandas.DataFrame
            Configurations to predict.
        coverage : float, default 0.9
            Target coverage 1 − α, strictly between 0 and 1.

        Returns
        -------
        pandas.DataFrame
            Index of ``X``; columns ``predicted`` (:attr:`estimator_`'s
            prediction), ``lower``, ``upper`` (times) and ``extrapolated``
            (:meth:`extrapolated`).

        Notes
        -----
        With n scores, the conformal quantile is the ⌈(n+1)·coverage⌉-th
        smallest (at least the 1st: any coverage in (0, 1) gives an interval, and
        its width never shrinks as the coverage grows), i.e. the empirical quantile
        at level ⌈(n+1)·coverage⌉/n. When
        that rank exceeds n (coverage above n/(n+1): too few rows for the
        coverage asked), the interval is unbounded: ``lower`` 0, ``upper`` inf.

        ``"split"``: ``lower = ŷ·e^{−q}``, ``upper = ŷ·e^{q}`` with q that
        quantile of the calibration scores.

        ``"studentized"``: the same with q·√(1 + h(x)), h(x) the leverage of the row
        under the model on all rows (0 for an estimator without ``leverage``).

        ``"cv+"``: the CV+ construction (Barber, Candès, Ramdas, Tibshirani 2021)
        on the log scale, with the fold models μ₋ₖ: ``log lower`` is the
        ⌊α(n+1)⌋-th smallest of log μ₋ₖ₍ᵢ₎(x) − Rᵢ and ``log upper`` the
        ⌈(1−α)(n+1)⌉-th smallest of log μ₋ₖ₍ᵢ₎(x) + Rᵢ over the training rows i
        (k(i) the fold of row i, α = 1 − coverage). The interval is not centred
        on ``predicted`` (the model fitted on all rows), which it usually but
        not always contains. Below a coverage of about 1/2 the two ends can cross; the interval is then the
        point between them (log scale), of width 0.

        A row beyond the fitted range of a numeric or extrinsic column has its log half-width multiplied by
        d = 1 + Σ log2(how far beyond, per column) (:func:`~perfkit.model.uncertainty.ranges.range_distance`; 2
        at twice the largest value fitted): wider the farther out, by a rule, not a guarantee.

        Warns
        -----
        ExtrapolationWarning
            Once per call when any row is extrapolated, naming the columns at fault;
            the coverage guarantee does not hold for those rows.

        Raises
        ------
        ValueError
            ``coverage`` not a number strictly between 0 and 1; the errors of the
            wrapped estimator's ``predict``; a prediction <= 0 or not finite.
        """
        import pandas as pd

        self._check_fitted()
        cov = _check_coverage(coverage)
        flags, outside = self._extrapolation(X)
        if outside:
            warnings.warn(outside + ": the coverage guarantee does not hold for them", ExtrapolationWarning,
                          stacklevel=2)
        pred = _positive_predictions(self.estimator_, X)
        n = self.n_calibration_
        rank_hi = max(1, math.ceil(round((n + 1) * cov, 9)))  # the rounding keeps 0.9 · 10 from landing on 9.000…01
        if rank_hi > n:
            lower, upper = np.zeros(len(X)), np.full(len(X), np.inf)
        elif self.method in ("split", "studentized"):
            q = np.partition(self.scores_, rank_hi - 1)[rank_hi - 1]
            if self.method == "studentized":
                q = q * np.sqrt(1.0 + leverage_of_model(self.estimator_, X))
            lower, upper = pred * np.exp(-q), pred * np.exp(q)
        else:
            rank_lo = n + 1 - rank_hi  # = ⌊α(n+1)⌋, without the rounding error of 1 − coverage
            log_fold = np.log(np.stack([_positive_predictions(m, X) for m in self.estimators_]))  # K × m
            lower, upper = np.empty(len(X)), np.empty(len(X))
            step = max(1, _CHUNK // n)
            for s in range(0, len(X), step):
                mu = log_fold[:, s:s + step][self.fold_].T  # rows × n: log μ₋ₖ₍ᵢ₎(x)
                lo = np.partition(mu - self.scores_, rank_lo - 1, axis=1)[:, rank_lo - 1]
                hi = np.partition(mu + self.scores_, rank_hi - 1, axis=1)[:, rank_hi - 1]
                lower[s:s + step], upper[s:s + step] = np.exp(lo), np.exp(hi)
            cross = lower > upper  # only below a coverage of about 1/2
            lower[cross] = upper[cross] = np.sqrt(lower[cross] * upper[cross])
        lower, upper = _widen_beyond(lower, upper, 1.0 + range_distance(X, self.ranges_))
        return pd.DataFrame({"predicted": pred, "lower": lower, "upper": upper, "extrapolated": flags.to_numpy()},
                            index=X.index)

    # ---------------------------------------------------------- extrapolation
    def level_bound_columns(self) -> list:
        """The wrapped estimator's :meth:`~perfkit.model.base.RowCapabilities.level_bound_columns` ([] for an
        estimator without them)."""
        inner = getattr(self, "estimator_", self.estimator)
        return list(inner.level_bound_columns()) if isinstance(inner, RowCapabilities) else []

    def _extrapolation(self, X):
        """(flags, message): the Boolean Series of :meth:`extrapolated` and "k of n rows lie outside the fitted data
        (column: what)", or "" when no row does."""
        return outside_fitted(X, self.ranges_, self.levels_)

    def extrapolated(self, X):
        """Boolean Series (index of ``X``): the row has a numeric/extrinsic value outside the fitted
        min–max of its column, or a category level not seen in fit.

        The columns are the wrapped estimator's ``numeric``/``extrinsic`` (ranges) and
        ``categorical`` (levels) when it has those attributes (or, for a
        :func:`~perfkit.model.selection.baselines.make_baseline` pipeline, its first step has);
        otherwise every numeric-dtype column of the training table is checked for range
        and every other column for levels.
        """
        self._check_fitted()
        return self._extrapolation(X)[0]

    # ------------------------------------------------------------------ JSON
    @classmethod
    def _setting_names(cls) -> list:
        return list(_SETTINGS)

    @classmethod
    def _from_settings(cls, settings):
        model = cls(None, **settings)
        check_int("n_splits", model.n_splits, minimum=2)
        check_int("random_state", model.random_state, minimum=0)
        if not isinstance(model.method, str) or model.method not in INTERVAL_METHODS:
            raise ValueError(f"method: expected one of {INTERVAL_METHODS}, got {model.method!r}")
        cal = model.calibration
        if isinstance(cal, bool) or not is_finite(cal) or not 0 < cal < 1:
            raise ValueError(f"calibration: expected a share strictly between 0 and 1, got {cal!r}")
        return model, None

    def _settings_doc(self) -> dict:
        return {k: jsonable(getattr(self, k)) for k in _SETTINGS}

    def _fitted_doc(self) -> dict:
        """The wrapped models (their own documents; the fold models for ``"cv+"`` only), the scores and the fitted
        ranges; ``ValueError`` when a wrapped model cannot be saved (not a perfkit form)."""
        for m in [self.estimator_] + list(self.estimators_):
            if not isinstance(m, SavedModel):
                raise ValueError(f"estimator: {type(m).__name__} cannot be saved as JSON (no to_json); "
                                 "wrap a perfkit model form")
        return {"estimator": self.estimator_.to_doc(),
                "estimators": [m.to_doc() for m in self.estimators_] if self.method == "cv+" else [],
                "scores": [float(s) for s in self.scores_], "fold": [int(k) for k in self.fold_],
                "ranges": {c: [float(lo), float(hi)] for c, (lo, hi) in self.ranges_.items()},
                "levels": {c: [jsonable(v) for v in lv] for c, lv in self.levels_.items()},
                "fit_time": float(self.fit_time_)}

    @classmethod
    def _restore(cls, model, checked, reader):
        """The wrapped models (:func:`perfkit.model.persist.model_from_doc`), then the scores, folds, ranges and
        levels, each checked (a fold model of another form or roles, a fold index out of range, a score that is
        not a finite number >= 0, a min above its max, ... raise one ``ValueError`` naming the key)."""
        fail, f = reader.fail, reader.fitted
        estimator = model_from_doc(f["estimator"], reader.where)
        if not isinstance(estimator, PerformanceForm):
            raise fail(f"fitted.estimator: expected a model form, got {type(estimator).__name__}")
        roles = list(estimator.feature_names_in_)
        if not isinstance(f["estimators"], list):
            raise fail("fitted.estimators: expected a list of model documents")
        estimators = ([model_from_doc(d, reader.where) for d in f["estimators"]] if model.method == "cv+"
                      else [estimator])
        if model.method == "cv+" and len(estimators) != model.n_splits:
            raise fail(f"fitted.estimators: expected n_splits = {model.n_splits} fold models, got {len(estimators)}")
        for i, m in enumerate(estimators):
            if type(m) is not type(estimator) or list(m.feature_names_in_) != roles:
                raise fail(f"fitted.estimators[{i}]: a fold model of another form or other columns than "
                           f"fitted.estimator ({type(estimator).__name__} on {roles})")
        scores, fold = f["scores"], f["fold"]
        if not isinstance(scores, list) or not scores or not all(is_finite(s) and s >= 0 for s in scores):
            raise fail("fitted.scores: expected a non-empty list of finite numbers >= 0")
        n_folds = {"cv+": len(estimators), "studentized": model.n_splits, "split": 1}[model.method]
        if not isinstance(fold, list) or len(fold) != len(scores) or not all(
                isinstance(k, int) and not isinstance(k, bool) and 0 <= k < n_folds for k in fold):
            raise fail(f"fitted.fold: expected {len(scores)} fold indices from 0 to {n_folds - 1}")
        ranges = f["ranges"]
        if not isinstance(ranges, dict) or not all(isinstance(r, list) and len(r) == 2 and all(is_finite(x) for x in r)
                                                   for r in ranges.values()):
            raise fail("fitted.ranges: expected column -> [min, max]")
        for c, (lo, hi) in ranges.items():
            if lo > hi:
                raise fail(f"fitted.ranges: column {c!r} has min {lo!r} above max {hi!r}")
        if not isinstance(f["levels"], dict) or not all(isinstance(lv, list) and lv for lv in f["levels"].values()):
            raise fail("fitted.levels: expected column -> non-empty list of levels")
        if set(ranges) & set(f["levels"]) or set(ranges) | set(f["levels"]) != set(roles):
            raise fail(f"fitted.ranges, fitted.levels: expected exactly the columns of the model, {roles}")
        model.estimator = estimator
        model.estimator_, model.estimators_ = estimator, estimators
        model.scores_, model.fold_ = np.asarray(scores, dtype=float), np.asarray(fold, dtype=int)
        model.n_calibration_ = len(scores)
        model.ranges_ = {c: (float(lo), float(hi)) for c, (lo, hi) in ranges.items()}
        model.levels_ = {c: list(lv) for c, lv in f["levels"].items()}
        model.fit_time_ = float(f["fit_time"]) if is_finite(f["fit_time"]) else 0.0
        return model


def extrapolation(model, X):
    """Which rows of ``X`` lie outside the data ``model`` was fitted on, and a line that says how many and where.

    ``model``: a fitted :class:`ConformalRegressor`, anything holding one as ``model_`` (a
    :class:`~perfkit.model.selection.search.FormSearch`), or a form that keeps its fitted ranges
    (:meth:`~perfkit.model.base.RowCapabilities.fitted_ranges`, e.g. the thesis form). Returns ``(flags, message)``:
    the Boolean Series of the rows outside and e.g. ``"2 of 9 rows lie outside the fitted data ('gpus': 2 above
    the fitted max 8)"`` ("" when no row does); ``(None, "")`` for a model that kept no fitted ranges. Raises
    ``ValueError`` when ``X`` lacks a column of the model.
    """
    inner = getattr(model, "model_", model)
    if isinstance(inner, ConformalRegressor):
        inner._check_fitted()
        return inner._extrapolation(X)
    ranges = inner.fitted_ranges() if isinstance(inner, RowCapabilities) else None
    if ranges is None:
        return None, ""
    return outside_fitted(X, ranges)


def seen_rows(X_train, X_test, categorical) -> np.ndarray:
    """Mask of the rows of ``X_test`` whose every categorical level occurs in ``X_train``.

    A model cannot predict a level it has never seen (every form refuses it by
    name); cross-validation scores the other rows and counts these.
    """
    ok = np.ones(len(X_test), dtype=bool)
    for c in column_list("categorical", categorical):
        ok &= X_test[c].isin(set(X_train[c])).to_numpy()
    return ok


def predictable_rows(model, X_train, X_test, categorical) -> np.ndarray:
    """Mask of the rows of ``X_test`` that ``model`` (fitted on ``X_train``) can predict: every categorical level
    seen (:func:`seen_rows`) and every row its :meth:`~perfkit.model.base.RowCapabilities.predictable` covers (the
    hybrid form's modified rates exist only for the combinations of levels seen in fit)."""
    ok = seen_rows(X_train, X_test, categorical)
    if ok.any():
        ok[ok] = predictable_mask(model, X_test[ok])
    return ok


def _widen_beyond(lower, upper, d):
    """``(lower, upper)`` with each row's log half-width times ``d`` around its log centre (rows with d = 1, inside
    every fitted range, unchanged; an unbounded interval stays unbounded)."""
    wide = (d > 1.0) & np.isfinite(upper) & (lower > 0)
    if not wide.any():
        return lower, upper
    lo, hi = np.log(lower[wide]), np.log(upper[wide])
    centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0 * d[wide]
    lower, upper = lower.copy(), upper.copy()
    with np.errstate(over="ignore"):
        lower[wide], upper[wide] = np.exp(centre - half), np.exp(centre + half)
    return lower, upper


def _check_coverage(coverage) -> float:
    ok = not isinstance(coverage, (bool, np.bool_)) and isinstance(coverage, numbers.Real)
    if not (ok and 0.0 < float(coverage) < 1.0):
        raise ValueError(f"coverage: expected a number strictly between 0 and 1 (e.g. 0.9), got {coverage!r}")
    return float(coverage)


def _positive_predictions(model, X) -> np.ndarray:
    pred = np.asarray(model.predict(X), dtype=float).ravel()
    bad = ~(np.isfinite(pred) & (pred > 0))
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        label = X.index[pos]
        label = jsonable(label)
        raise ValueError(f"estimator: prediction {pred[pos]:g} for row {label!r} is not a finite time > 0; "
                         "intervals on the relative error need positive predictions")
    return pred


def coverage_of(intervals, y) -> float:
    """Fraction of the measured times ``y`` inside [lower, upper] of ``intervals`` (a :meth:`predict_interval` table).

    Raises ``ValueError`` when ``intervals`` lacks ``lower``/``upper`` or ``y`` has another length.
    """
    import pandas as pd

    if not isinstance(intervals, pd.DataFrame) or not {"lower", "upper"} <= set(intervals.columns):
        raise ValueError("intervals: expected a DataFrame with columns 'lower' and 'upper' (from predict_interval)")
    values = validate_target(y, name="y")
    if len(values) != len(intervals):
        raise ValueError(f"y: {len(values)} values for {len(intervals)} intervals")
    if len(values) == 0:
        raise ValueError("y: no values")
    lo, hi = intervals["lower"].to_numpy(dtype=float), intervals["upper"].to_numpy(dtype=float)
    return float(np.mean((values >= lo) & (values <= hi)))
