"""Measure small, predict large: a fitted form with prediction intervals that widen with the extrapolation distance.

A model fitted on the rows where a scale column (GPUs, workers, nodes, batch) is at most ``fit_max`` predicts the
rows beyond it. Its errors grow with how far beyond, so one interval width for every row is wrong twice: too
wide near the measured rows, too narrow far from them. :class:`ScaleIntervalModel` calibrates the interval on
**inner** extrapolation splits of the fit rows (:func:`inner_splits`: fit on the rows up to a quarter and up to
half of ``fit_max``, score the rows between that and ``fit_max``), with the split-conformal scores
|log(y/ŷ)| / d of :func:`perfkit.model.uncertainty.extrapolation.calibrate_extrapolation` (d = 1 + log2(value / inner max):
1 at the edge of the fit rows, 2 at twice it). At a new row the interval is ŷ·exp(±q·d), d = 1 + log2(value /
``fit_max``): the same as a plain conformal interval inside the fitted range and wider the farther beyond it
(:func:`perfkit.model.uncertainty.extrapolation.extrapolation_interval`). A row beyond the fitted range of any other
column of the form (a batch per GPU never measured, say) adds log2 of that distance to d as well.

The scores assume that the error per unit of distance is about the same at the inner splits' scale as beyond
``fit_max``: nothing guarantees it (``benchmarks/results/scale.md`` measures it). ``inflation`` (κ > 0, default 1)
multiplies q for that: κ measured on other groups that were fitted and predicted on the same split (e.g. other jobs
of the same cluster: :func:`perfkit.model.uncertainty.extrapolation.transfer_inflation` of their
:func:`~perfkit.model.uncertainty.extrapolation.inflation_ratios`), so that the interval of a new group uses its own fit rows
and the other groups' rows beyond ``fit_max``, never its own. The interval is then ŷ·exp(±κ·q·d).

The inner splits cannot see what only happens beyond ``fit_max`` (a network that saturates, a regime the rows never
held), and there the errors of two forms that fit the measured rows equally well part. ``alternative`` (a second
plausible form, fitted on the same rows) measures that: each row's half-width adds λ·δ, δ = |log(ŷ / ŷ_alt)| the two
forms' disagreement at that row and λ = ``disagreement``; on a ``regime`` row the alternative is ``estimator`` itself
(the prior's prediction against the fitted curve's); without an alternative, an estimator that blends two forms
(:class:`~perfkit.model.forms.median.BlendOfModels`) gives its members' spread as δ. The interval is then
ŷ·exp(±(κ·q·d + λ·δ)), with κ and λ calibrated together on other clusters' traces (:data:`DISAGREEMENT_KAPPA`,
:data:`DEFAULT_DISAGREEMENT`).

The model saves itself as JSON (``perfkit.ScaleIntervalModel``: the wrapped form's own document, the scores, the
fitted ranges and levels), never pickle.
"""
from __future__ import annotations

import math
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from ..._checks import check_number
from ..base import PerformanceForm, RowCapabilities
from .extrapolation import distance, extrapolation_predictions
from .conformal import ExtrapolationWarning
from ..persist import SavedModel, is_finite, jsonable, model_from_doc
from .ranges import check_saved_ranges, column_ranges, outside_fitted, range_distance
from ..validation import (column_list, first_bad_row, missing_column_error, numeric_column, target_column,
                         validate_target)

__all__ = ["ScaleIntervalModel", "default_fit_max", "inner_splits", "MIN_INNER_FIT", "MIN_INNER_TEST", "MAX_INFLATION",
           "DEFAULT_KAPPA", "DEFAULT_REGIME_KAPPA", "DEFAULT_DISAGREEMENT", "DISAGREEMENT_KAPPA",
           "DISAGREEMENT_REGIME_KAPPA"]

#: the fewest rows an inner split fits on and scores, so that a form can be fitted and the scores mean something
MIN_INNER_FIT = 5
MIN_INNER_TEST = 2
#: the inner splits fit on the rows up to fit_max / r for each r (largest first: the farthest extrapolation first)
INNER_RATIOS = (4.0, 2.0)
#: the inflation κ of a scaling study of one form (``--scale-of COL`` with ``--form``: no second option, no
#: disagreement term) unless told otherwise: the 90 % quantile of |log(y/ŷ)| / (q·d) over the rows beyond the fit
#: rows of every cluster's jobs (Pollux's and Sia's four, each cluster weighing the same), each job fitted as
#: ``perfkit fit --form phases --scale-of n_gpus`` with the step columns does on its rows with <= G/4 GPUs;
#: ``benchmarks/bench_small_runs.py --form phases`` recomputes it (``small_runs_summary.md``, with each cluster's
#: coverage under κ from the *other* clusters)
DEFAULT_KAPPA = 1.27
#: the factor ρ on the half-width of a ``regime`` row (one beyond the fit rows' node count) in a scaling study of one
#: form: ρ·κ is the same quantile over the multi-node rows (<= 16 GPUs) of each job's single-node fit, every cluster
#: weighing the same; recomputed with :data:`DEFAULT_KAPPA`
DEFAULT_REGIME_KAPPA = 0.68
#: λ, the weight of the disagreement δ between the prediction and ``alternative`` in a scaling study's half-width
#: κ·q·d + λ·δ (chosen with the κ below on the traces of ``benchmarks/bench_small_runs.py``, stated there)
DEFAULT_DISAGREEMENT = 3.0
#: κ with :data:`DEFAULT_DISAGREEMENT`: the 90 % quantile of max(|log(y/ŷ)| − λ·δ, 0) / (q·d) over the rows beyond
#: the fit rows of every cluster's jobs (Pollux's and Sia's four, each cluster weighing the same), each job fitted
#: as ``perfkit fit --form auto`` with the step columns does on its rows with <= G/4 GPUs;
#: ``benchmarks/bench_small_runs.py`` recomputes it, and scores each cluster with κ from the *other* clusters
DISAGREEMENT_KAPPA = 0.58
#: ρ with :data:`DEFAULT_DISAGREEMENT`: the same quantile over the multi-node rows of each job's single-node fit,
#: over :data:`DISAGREEMENT_KAPPA` (a regime row's half-width is ρ·κ·q·d + λ·δ, δ the prior against the fitted curve)
DISAGREEMENT_REGIME_KAPPA = 0.35
#: the largest ``inflation`` κ accepted (a wider factor on the log half-width gives intervals of 0 to inf seconds)
MAX_INFLATION = 100.0


def default_fit_max(values):
    """The default ``fit_max`` of a scale column: its largest value that is at most half its largest, so that the
    rows beyond reach at least twice the fitted maximum (a 2× extrapolation); None when no value is."""
    v = np.unique(np.asarray(values, dtype=float))
    below = v[v <= v.max() / 2.0]
    return float(below.max()) if len(below) else None


def inner_splits(values, fit_max, min_fit: int = MIN_INNER_FIT, min_test: int = MIN_INNER_TEST) -> list:
    """Inner extrapolation splits of the fit rows (``values``: their scale column, all <= ``fit_max``):
    ``[(inner_max, test_min, fit_max), ...]`` for inner_max the largest value <= fit_max / r (r of
    :data:`INNER_RATIOS`), test_min the next value above it; a split is kept when it fits on at least ``min_fit``
    rows and scores at least ``min_test``. Empty when none is."""
    v = np.asarray(values, dtype=float)
    out = []
    for r in INNER_RATIOS:
        below = v[v <= fit_max / r]
        if not len(below):
            continue
        m = float(below.max())
        above = v[(v > m) & (v <= fit_max)]
        if len(below) >= min_fit and len(above) >= min_test and all(s[0] != m for s in out):
            out.append((m, float(above.min()), float(fit_max)))
    return out


def _check_splits(splits, fit_max) -> list:
    ok = isinstance(splits, (list, tuple)) and len(splits) > 0 and all(
        isinstance(s, (list, tuple)) and len(s) == 3 and all(is_finite(x) and x > 0 for x in s)
        and s[0] < s[1] <= s[2] <= fit_max for s in splits)
    if not ok:
        raise ValueError(f"splits: expected a non-empty list of (inner_max, test_min, test_max) with inner_max < "
                         f"test_min <= test_max <= fit_max ({fit_max:g}), got {splits!r}")
    return [tuple(float(x) for x in s) for s in splits]


def _fit_other(name: str, form, X, y):
    """A clone of ``form`` (the setting ``name``) fitted on ``X``, ``y``; None without one."""
    if form is None:
        return None
    from sklearn.base import clone

    if not isinstance(form, PerformanceForm):
        raise ValueError(f"{name}: expected a perfkit model form, got {type(form).__name__}")
    return clone(form).fit(X, y)


def _refuse_nonfinite(X, bad, what: str) -> None:
    """One ``ValueError`` naming the first row of ``X`` marked ``bad`` (a prediction or interval not finite)."""
    at = first_bad_row(bad, X.index)
    if at:
        raise ValueError(f"X: the {what} for row {at[1]!r} is not a finite time > 0: its column values are far "
                         "outside the fitted range")


class ScaleIntervalModel(RowCapabilities, SavedModel, RegressorMixin, BaseEstimator):
    """A model form fitted on the rows with ``column`` <= ``fit_max``, with intervals that widen beyond it.

    Parameters
    ----------
    estimator : PerformanceForm
        The form (unfitted; cloned by :meth:`fit` and on each inner split).
    column : str
        The scale column (finite numbers > 0) along which the model extrapolates.
    fit_max : float
        The largest value of ``column`` among the fit rows (> 0).
    splits : list of (inner_max, test_min, test_max)
        Inner splits of the fit rows (:func:`inner_splits`): fit on ``column`` <= inner_max, score the rows with
        test_min <= ``column`` <= test_max.
    phases : list of str
        Columns measured in fit only (e.g. a synchronisation time): the inner predictions never see them.
    inflation : float, default 1.0
        κ > 0: the half-width is κ·q (:meth:`half_width`); 1 keeps the inner splits' q.
    nodes : str, optional
        The node-count column of a step-time model (``column`` its GPU count): rows that cross a boundary absent
        from the fit rows (more nodes than any fit row: the first multi-node row when every fit row ran on one node)
        are flagged ``regime`` (:meth:`regime`) and their half-width is multiplied by ``regime_inflation``.
    regime_inflation : float, default 1.0
        ρ > 0 on the half-width of the ``regime`` rows (e.g. :data:`DEFAULT_REGIME_KAPPA`, calibrated on other
        jobs' traces).
    regime_estimator : PerformanceForm, optional
        With ``nodes``: the form that predicts the ``regime`` rows instead of ``estimator`` (fitted on the same rows),
        e.g. :class:`~perfkit.model.forms.commprior.CommPriorStepModel`, whose synchronisation on a level the rows
        never measured comes from the hardware rather than from a curve fitted elsewhere.
    alternative : PerformanceForm, optional
        A second plausible form (unfitted; fitted on the same rows as ``estimator``): its disagreement with the
        prediction widens each row's interval by ``disagreement`` times |log(ŷ / ŷ_alt)|.
    disagreement : float, default 0.0
        λ >= 0, the weight of the disagreement δ in the half-width κ·q·d + λ·δ (0: δ is reported, not used). On a
        ``regime`` row predicted by ``regime_estimator``, δ compares it with ``estimator``.

    Attributes
    ----------
    estimator_ : PerformanceForm
        The form fitted on every fit row: :meth:`predict`.
    scores_ : numpy.ndarray
        |log(y/ŷ)| / d of the inner splits' scored rows (d from each split's inner_max), pooled.
    ranges_, levels_ : dict
        Fitted min–max of the form's numeric and extrinsic columns and of ``column``; levels of its categorical
        columns (:meth:`extrapolated`).
    alternative_ : PerformanceForm or None
        ``alternative`` fitted on every fit row.
    """

    json_format = "perfkit.ScaleIntervalModel"
    json_version = 1
    fitted_keys = ("estimator", "scores", "ranges", "levels", "fit_time")
    #: ``inflation``, ``nodes``, ``regime_inflation``: absent from files written before they existed (1, None, 1)
    #: ``disagreement``: absent from files written before it existed (0)
    optional_settings = ("inflation", "nodes", "regime_inflation", "disagreement")
    #: ``regime``: the fit rows' largest node count (only with ``nodes``)
    optional_fitted_keys = ("regime", "regime_estimator", "alternative")
    fitted_attribute = "scores_"

    def __init__(self, estimator=None, *, column="n_gpus", fit_max=1.0, splits=(), phases=(), inflation=1.0,
                 nodes=None, regime_inflation=1.0, regime_estimator=None, alternative=None, disagreement=0.0):
        self.estimator = estimator
        self.column = column
        self.fit_max = fit_max
        self.splits = splits
        self.phases = phases
        self.inflation = inflation
        self.nodes = nodes
        self.regime_inflation = regime_inflation
        self.regime_estimator = regime_estimator
        self.alternative = alternative
        self.disagreement = disagreement

    # ------------------------------------------------------------------ settings
    def _settings(self):
        if not isinstance(self.column, str) or not self.column:
            raise ValueError(f"column: expected a column name, got {self.column!r}")
        fit_max = check_number("fit_max", self.fit_max, positive=True)
        phases = column_list("phases", list(self.phases))
        if self.column in phases:
            raise ValueError(f"column {self.column!r} is a phase column (measured in fit only), not a scale column")
        self._inflation()
        if self.nodes is not None and (not isinstance(self.nodes, str) or not self.nodes or self.nodes == self.column
                                       or self.nodes in phases):
            raise ValueError(f"nodes: expected None or the node-count column (not {self.column!r} or a phase), got "
                             f"{self.nodes!r}")
        self._regime_inflation()
        self._disagreement()
        return fit_max, _check_splits(self.splits, fit_max), phases

    def _inflation(self) -> float:
        kappa = check_number("inflation", self.inflation, positive=True)
        if kappa > MAX_INFLATION:
            raise ValueError(f"inflation: expected at most {MAX_INFLATION:g} (κ widens the intervals' log half-width; "
                             f"transfer calibration gives about 1 to 3), got {self.inflation!r}")
        return kappa

    def _disagreement(self) -> float:
        lam = check_number("disagreement", self.disagreement)
        if lam > MAX_INFLATION:
            raise ValueError(f"disagreement: expected at most {MAX_INFLATION:g}, got {self.disagreement!r}")
        return lam

    def _regime_inflation(self) -> float:
        rho = check_number("regime_inflation", self.regime_inflation, positive=True)
        if rho > MAX_INFLATION:
            raise ValueError(f"regime_inflation: expected at most {MAX_INFLATION:g}, got {self.regime_inflation!r}")
        return rho

    @classmethod
    def _setting_names(cls) -> list:
        return ["column", "fit_max", "splits", "phases", "inflation", "nodes", "regime_inflation", "disagreement"]

    @classmethod
    def _from_settings(cls, settings):
        model = cls(None, **settings)
        return model, model._settings()

    def _settings_doc(self) -> dict:
        fit_max, splits, phases = self._settings()
        return {"column": self.column, "fit_max": fit_max, "splits": [list(s) for s in splits], "phases": phases,
                "inflation": self._inflation(), "nodes": self.nodes, "regime_inflation": self._regime_inflation(),
                "disagreement": self._disagreement()}

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit a clone of ``estimator`` on every row of ``X`` (all with ``column`` <= ``fit_max``), then
        calibrate on the inner splits; returns self."""
        from sklearn.base import clone

        if not isinstance(self.estimator, PerformanceForm):
            raise ValueError(f"estimator: expected a perfkit model form, got {type(self.estimator).__name__}")
        y = validate_target(y, X, positive=True)
        return self.calibrate(clone(self.estimator).fit(X, y), X, y)

    def calibrate(self, fitted, X, y, inner=None):
        """Keep ``fitted`` (``estimator`` already fitted on ``X``, ``y``) as :attr:`estimator_` and calibrate the
        intervals on the inner splits of ``X``; returns self. ``inner``: the estimator's predictions on each split
        already made (:func:`~perfkit.model.uncertainty.extrapolation.extrapolation_predictions` frames with the
        target in :func:`~perfkit.model.validation.target_column`'s column of ``X``), one per split, used as given."""
        start = time.perf_counter()
        fit_max, splits, phases = self._settings()
        if self.column not in X.columns:
            raise missing_column_error(X, self.column, "extrapolation")
        v = numeric_column(X, self.column, "extrapolation")
        if v.max() > fit_max:
            raise ValueError(f"column {self.column!r}: the fit rows reach {v.max():g}, above fit_max {fit_max:g}")
        y = validate_target(y, X, positive=True)
        target = target_column(X)
        frame = X.assign(**{target: y})
        scores = []
        if inner is not None and len(inner) != len(splits):
            raise ValueError(f"inner: expected one prediction frame per split ({len(splits)}), got {len(inner)}")
        for i, (inner_max, lo, hi) in enumerate(splits):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pred = inner[i] if inner is not None else extrapolation_predictions(
                        self.estimator, frame, self.column, inner_max, target, None, test_min=lo, test_max=hi,
                        predict_drop=phases)
            except ValueError as exc:
                raise ValueError(f"the interval's inner split (fit {self.column} <= {inner_max:g}, score "
                                 f"{lo:g} to {hi:g}): {exc}") from None
            ratio = pred[target].to_numpy(dtype=float) / pred["predicted"].to_numpy(dtype=float)
            if not np.all(np.isfinite(ratio) & (ratio > 0)):
                raise ValueError(f"the interval's inner split (fit {self.column} <= {inner_max:g}): a prediction is "
                                 "not a finite time > 0")
            scores += (np.abs(np.log(ratio)) / pred["distance"].to_numpy(dtype=float)).tolist()
        self._keep_fit(fitted, X, scores)
        self.regime_estimator_ = _fit_other("regime_estimator", self.regime_estimator, X, y) if (
            self.nodes is not None) else None
        self.alternative_ = _fit_other("alternative", self.alternative, X, y)
        self.fit_time_ = time.perf_counter() - start
        return self

    def _keep_fit(self, fitted, X, scores) -> None:
        if not isinstance(fitted, PerformanceForm):
            raise ValueError(f"estimator: expected a fitted perfkit model form, got {type(fitted).__name__}")
        self.estimator_ = fitted
        num = list(dict.fromkeys([*fitted.numeric_, *fitted.extrinsic_, self.column]))
        self.ranges_ = column_ranges(X, num)
        self.levels_ = {c: list(dict.fromkeys(jsonable(v) for v in X[c].tolist())) for c in fitted.categorical_}
        self.scores_ = np.asarray(scores, dtype=float)
        self.n_calibration_ = len(self.scores_)
        self.regime_ = None
        if self.nodes is not None:
            self.regime_ = {"nodes_max": float(self._nodes(X).max())}

    def _nodes(self, X):
        """The node counts of the rows of ``X`` (column ``nodes``), each >= 1."""
        if self.nodes not in X.columns:
            raise missing_column_error(X, self.nodes, "nodes")
        N = numeric_column(X, self.nodes, "nodes")
        at = first_bad_row(~(np.isfinite(N) & (N >= 1)), X.index)
        if at:
            raise ValueError(f"column {self.nodes!r}: value {N[at[0]]:g} in row {at[1]!r} is not a node count >= 1")
        return N

    def regime(self, X):
        """Boolean Series ``regime`` (index of ``X``): the rows that cross a boundary absent from the fit rows, more
        nodes than any fit row (the first multi-node row when every fit row ran on one node); all False without
        ``nodes``. More GPUs per node than measured is not a regime: on Sia's DGX nodes (NVSwitch) handing those rows
        to the communication prior made them worse."""
        import pandas as pd

        self._check_fitted()
        flags = np.zeros(len(X), dtype=bool)
        if getattr(self, "regime_", None):
            flags = self._nodes(X) > self.regime_["nodes_max"]
        return pd.Series(flags, index=X.index, name="regime")

    def regime_note(self) -> str:
        """The fit rows' regime in words and what a row beyond it gets ("" without ``nodes``)."""
        self._check_fitted()
        r = getattr(self, "regime_", None)
        if not r:
            return ""
        nodes = ("the fit rows hold no multi-node run" if r["nodes_max"] == 1 else
                 f"the fit rows reach {r['nodes_max']:g} nodes")
        rho = self._regime_inflation()
        widen = (f"their κ·q·d is scaled by ρ = {rho:.3g}" if rho != 1 else "their κ·q·d is not scaled further")
        if self._disagreement() > 0 and getattr(self, "regime_estimator_", None) is not None:
            widen += ", and the disagreement with the fitted curve widens them"
        other = getattr(self, "regime_estimator_", None)
        how = "" if other is None else f", predicted by the {type(other).__name__} (priced by the hardware),"
        return (f"regimes: {nodes}; rows on more nodes are marked regime (the network they cross was never measured)"
                f"{how} and {widen}")

    # ------------------------------------------------------------------ predict
    def predict(self, X):
        """The wrapped form's prediction (seconds) for the rows of ``X``; the ``regime`` rows from the regime
        estimator when there is one."""
        self._check_fitted()
        return self._predict(X, self.regime(X).to_numpy())

    def _predict(self, X, regime: np.ndarray) -> np.ndarray:
        """:meth:`predict` for the rows of ``X`` whose ``regime`` flags are already known."""
        return self._predictions(X, regime)[0]

    def _predictions(self, X, regime: np.ndarray):
        """(prediction, ``estimator_``'s prediction) of the rows of ``X`` whose ``regime`` flags are known."""
        base = np.asarray(self.estimator_.predict(X), dtype=float)
        pred = base.copy()  # the regime rows are replaced
        other = getattr(self, "regime_estimator_", None)
        if other is not None and regime.any():
            pred[regime] = np.asarray(other.predict(X[regime]), dtype=float)
        return pred, base

    def _reports_disagreement(self) -> bool:
        return (self._disagreement() > 0 or getattr(self, "alternative_", None) is not None
                or hasattr(self.estimator_, "spread"))

    def disagreement_of(self, X, pred, base, regime) -> np.ndarray:
        """δ = |log(ŷ / ŷ_alt)| per row of ``X`` (``pred`` its predictions, ``base`` ``estimator_``'s): ŷ_alt is
        ``estimator_``'s prediction on a ``regime`` row the regime estimator predicted, ``alternative_``'s on the
        others; without an alternative, the spread of a blending estimator's members (``estimator_.spread``), else
        δ = 0."""
        delta = np.zeros(len(X))
        if getattr(self, "alternative_", None) is not None:
            alt = np.asarray(self.alternative_.predict(X), dtype=float)
            _refuse_nonfinite(X, ~(np.isfinite(alt) & (alt > 0)), "alternative's prediction")
            delta = np.abs(np.log(pred / alt))
        elif hasattr(self.estimator_, "spread"):
            delta = np.asarray(self.estimator_.spread(X), dtype=float)
        if getattr(self, "regime_estimator_", None) is not None:
            delta = np.where(regime, np.abs(np.log(pred / base)), delta)
        return delta

    def fitted_ranges(self) -> dict | None:
        """``{column: (min, max)}`` in fit: the form's numeric and extrinsic columns and the scale column."""
        self._check_fitted()
        return self.ranges_

    def extrapolated(self, X):
        """Boolean Series: the rows of ``X`` outside the fitted ranges or with a level not seen in fit."""
        self._check_fitted()
        return outside_fitted(X, self.ranges_, self.levels_)[0]

    def half_width(self, coverage=0.9) -> float:
        """κ·q: ``inflation`` times q, the ⌈(n+1)·coverage⌉-th smallest score (inf when that rank exceeds the n
        scores)."""
        self._check_fitted()
        cov = check_number("coverage", coverage, positive=True)
        if cov >= 1:
            raise ValueError(f"coverage: expected a number strictly between 0 and 1, got {coverage!r}")
        n = self.n_calibration_
        rank = max(1, math.ceil(round((n + 1) * cov, 9)))
        return math.inf if rank > n else self._inflation() * float(np.partition(self.scores_, rank - 1)[rank - 1])

    def predict_interval(self, X, coverage=0.9):
        """DataFrame (index of ``X``) of ``predicted``, ``lower`` = ŷ·exp(−w), ``upper`` = ŷ·exp(w), ``distance``
        (d) and ``extrapolated``; warns (:class:`~perfkit.model.uncertainty.conformal.ExtrapolationWarning`) when a
        row lies outside the fitted data. w = q·d, q :meth:`half_width` (κ included; times ρ on a ``regime`` row),
        plus λ·δ with ``disagreement`` λ and δ :meth:`disagreement_of` (the column ``disagreement``, present with an
        ``alternative``, a blending estimator or λ > 0).

        d = 1 + log2(``column`` / ``fit_max``) beyond ``fit_max`` (1 up to it), plus, for every other numeric or
        extrinsic column of the form, log2 of how far the row lies beyond that column's fitted range
        (:func:`~perfkit.model.uncertainty.ranges.range_distance`): every extrapolated column widens the interval.
        The scores calibrate the scale column's distance only; the other columns' widening is the same rule, not
        calibrated on them."""
        import pandas as pd

        q = self.half_width(coverage)
        if self.column not in X.columns:
            raise missing_column_error(X, self.column, "extrapolation")
        v = numeric_column(X, self.column, "extrapolation")
        flags, outside = outside_fitted(X, self.ranges_, self.levels_)
        if outside:
            warnings.warn(outside + f": their intervals widen with the distance beyond {self.column} = "
                                    f"{float(self.fit_max):g}", ExtrapolationWarning, stacklevel=2)
        regime = self.regime(X).to_numpy()
        pred, base = self._predictions(X, regime)
        _refuse_nonfinite(X, ~(np.isfinite(pred) & (pred > 0)), "prediction")
        delta = self.disagreement_of(X, pred, base, regime)
        d = distance(v, float(self.fit_max)) + range_distance(X, self.ranges_, skip=(self.column,))
        q = np.where(regime, q * self._regime_inflation(), q) if not math.isinf(q) else q
        if np.isinf(q).any():
            lower, upper = np.zeros(len(X)), np.full(len(X), np.inf)
        else:
            w = q * d + self._disagreement() * delta
            with np.errstate(over="ignore"):
                lower, upper = pred * np.exp(-w), pred * np.exp(w)
            _refuse_nonfinite(X, ~(np.isfinite(upper) & (lower > 0)), "interval")
        out = pd.DataFrame({"predicted": pred, "lower": lower, "upper": upper, "distance": d,
                            "extrapolated": flags.to_numpy()}, index=X.index)
        if self._reports_disagreement():
            out["disagreement"] = delta
        return out.assign(regime=regime) if self.nodes is not None else out

    # ------------------------------------------------------------------ reports
    def summary(self) -> str:
        """The wrapped form's summary and the interval's calibration."""
        self._check_fitted()
        inner = self.estimator_.summary()
        q = self.half_width(0.9)
        splits = "; ".join(f"fit {self.column} <= {a:g}, score {b:g} to {c:g}" for a, b, c in self.splits)
        kappa = self._inflation()
        how = "" if kappa == 1 else f" times the inflation κ = {kappa:.3g}"
        lam = self._disagreement()
        if lam > 0:
            alt = getattr(self, "alternative_", None)
            against = (f"|log(ŷ/ŷ_alt)| against the {type(alt).__name__} fitted on the same rows" if alt is not None
                       else "the spread of the blended forms' log predictions" if hasattr(self.estimator_, "spread")
                       else "none (no second form)")
            how += (f"; plus λ·δ, λ = {lam:.3g}, δ the disagreement of two plausible forms: {against} (on a regime "
                    f"row, the prior's form against the fitted curve)")
        regime = self.regime_note()
        shape = "ŷ·exp(±q·d)" if lam == 0 else "ŷ·exp(±(q·d + λ·δ))"
        return (f"{inner}\n" + (f"{regime}\n" if regime else "") + f"intervals: {shape}, d = 1 + log2({self.column} / {float(self.fit_max):g}) beyond "
                f"the fit rows (1 within); 90 % q = {q:.3g} from {self.n_calibration_} scores |log(y/ŷ)|/d of the "
                f"inner splits ({splits}){how}")

    # ------------------------------------------------------------------ JSON
    def _fitted_doc(self) -> dict:
        return {"estimator": self.estimator_.to_doc(), "scores": [float(s) for s in self.scores_],
                "ranges": {c: [float(lo), float(hi)] for c, (lo, hi) in self.ranges_.items()},
                "levels": {c: list(lv) for c, lv in self.levels_.items()}, "fit_time": float(self.fit_time_),
                **({"regime": dict(self.regime_)} if getattr(self, "regime_", None) else {}),
                **({"regime_estimator": self.regime_estimator_.to_doc()}
                   if getattr(self, "regime_estimator_", None) is not None else {}),
                **({"alternative": self.alternative_.to_doc()}
                   if getattr(self, "alternative_", None) is not None else {})}

    @classmethod
    def _restore(cls, model, checked, reader):
        fail, f = reader.fail, reader.fitted
        est = model_from_doc(f["estimator"], reader.where)
        if not isinstance(est, PerformanceForm):
            raise fail(f"fitted.estimator: expected a model form, got {type(est).__name__}")
        scores = f["scores"]
        if not isinstance(scores, list) or not scores or not all(is_finite(s) and s >= 0 for s in scores):
            raise fail("fitted.scores: expected a non-empty list of finite numbers >= 0")
        num = list(dict.fromkeys([*est.numeric_, *est.extrinsic_, model.column]))
        ranges = check_saved_ranges(f["ranges"], num, fail) if f["ranges"] is not None else None
        if ranges is None:
            raise fail(f"fitted.ranges: expected one [min, max] for each of {num}")
        levels = f["levels"]
        if not isinstance(levels, dict) or sorted(levels) != sorted(est.categorical_) or not all(
                isinstance(lv, list) and lv and all(isinstance(x, str) or is_finite(x) for x in lv)
                for lv in levels.values()):
            raise fail(f"fitted.levels: expected one non-empty list of levels per categorical column "
                       f"{est.categorical_}")
        model.estimator = est
        model.estimator_, model.ranges_, model.levels_ = est, ranges, {c: list(v) for c, v in levels.items()}
        model.scores_ = np.asarray(scores, dtype=float)
        model.n_calibration_ = len(scores)
        model.fit_time_ = reader.number("fit_time", minimum=0)
        model.regime_ = _saved_regime(reader, model.nodes)
        model.regime_estimator_ = None
        if reader.get("regime_estimator") is not None:
            other = model_from_doc(reader["regime_estimator"], reader.where)
            if not isinstance(other, PerformanceForm) or model.regime_ is None:
                raise reader.fail("fitted.regime_estimator: expected a model form, with a regime (a nodes column)")
            model.regime_estimator_ = other
            model.regime_estimator = other
        model.alternative_ = None
        if reader.get("alternative") is not None:
            alt = model_from_doc(reader["alternative"], reader.where)
            if not isinstance(alt, PerformanceForm):
                raise reader.fail("fitted.alternative: expected a model form")
            model.alternative_ = model.alternative = alt
        return model


def _saved_regime(reader, nodes):
    """The saved ``regime`` (a model with ``nodes`` has one: its fit rows' largest node count)."""
    r = reader.get("regime")
    if nodes is None:
        if r is not None:
            raise reader.fail("fitted.regime: only a model with a nodes column has one")
        return None
    ok = isinstance(r, dict) and sorted(r) == ["nodes_max"] and all(is_finite(v) and v >= 1 for v in r.values())
    if not ok:
        raise reader.fail("fitted.regime: expected {nodes_max}, a number >= 1")
    return {k: float(v) for k, v in r.items()}
