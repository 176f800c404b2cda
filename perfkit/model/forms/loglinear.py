"""Model forms beyond the thesis: a multiplicative power law fitted in log space.

The generic performance model (eq. 4.4, :mod:`perfkit.model.forms.generic`) adds power
terms, t = (Σ a·I^p + Σ κ)·Π E^q + C. Measured epoch times span orders of
magnitude and the effects of the hyperparameters multiply rather than add, so a
sum of powers cannot form the products the data needs. :class:`LogLinearModel`
takes logs instead:

.. math::
    \\log t = \\beta_0 + \\sum_j \\beta_j \\log x_j + \\sum_{c,\\ell} \\kappa_{c\\ell}[c = \\ell]
              + \\sum_{j \\le k} \\beta_{jk} \\log x_j \\log x_k
              + \\sum_{c,\\ell,j} \\gamma_{c\\ell j}[c = \\ell] \\log x_j

that is t = e^{β₀} · Π x_j^{β_j} · Π e^{κ[c=ℓ]} · (interaction factors): a power
law whose powers may shift with the other columns, with the column itself
(β_jk, j ≤ k: the squares (log x_j)² bend the power law, e.g. an optimum batch
size) and with a category's level (γ). The x_j are
the numeric intrinsic and the extrinsic columns; each
categorical column uses reference coding (its first level, in sorted order, is
the baseline with κ = 0). Least squares in log space minimises squared
*relative* errors, which is what MAPE rewards, and it is a convex problem with one
answer: no restarts, no seeds to average over. The terms are the dataclasses of
:mod:`perfkit.model.forms.terms`.

Term selection (``select="lasso"``, default): :class:`sklearn.linear_model.LassoCV`
on the standardised candidate terms picks the terms with a non-zero coefficient
(5-fold cross-validation, shuffled with ``random_state``); the chosen set is closed
under hierarchy (a kept product term keeps the log terms and level indicators it is
made of, so the model does not depend on the units of the columns); then the kept
terms are refitted by ordinary least squares, which removes the lasso's shrinkage.
``select="none"`` fits every candidate term by least squares.
"""
from __future__ import annotations

import itertools
import time

import numpy as np

from ..._checks import check_int
from ..base import PerformanceForm
from ..uncertainty.leverage import leverage_basis, leverage_of
from .logfit import (CV_FOLDS, MAX_PENALTY, RIDGE_PENALTY, hierarchy_closure, lasso_mask, least_squares, ridge,
                     ridge_penalties, times_from_log)
from ..persist import is_finite, jsonable
from ..roles import constant_columns, levels_seen, record_roles, role_lists, warn_constant_columns
from .terms import (KIND_SETTING, TERMS, Hinge, Interaction, Level, LevelCell, LevelPair, LevelSlope, PairSlope, Power,
                    terms_from_doc)
from ..validation import validate_frame, validate_target

__all__ = ["LogLinearModel", "SELECT", "TERM_KINDS", "JSON_FORMAT", "JSON_VERSION", "MIN_SLOPE_VALUES", "MAX_KNOTS"]

#: ``format`` and newest ``version`` of the JSON that :meth:`LogLinearModel.to_json` writes
JSON_FORMAT = "perfkit.LogLinearModel"
JSON_VERSION = 1
#: term selection methods of :class:`LogLinearModel`
SELECT = ("lasso", "none", "ridge")
#: kinds of term (:data:`perfkit.model.forms.terms.TERMS`): log x (its coefficient is a power), log x·log z, a category
#: level, a level times log x, a pair of levels, a pair of levels times log x
TERM_KINDS = tuple(TERMS)
_FITTED_KEYS = ("numeric", "categorical", "extrinsic", "categories", "log_columns", "constant_columns", "terms",
                "coef", "intercept", "alpha", "n_candidates", "residual_std", "smearing", "fit_time", "leverage")
#: values of x a pair of levels needs on its rows in fit for a slope term of its own (``pair_slopes``)
MIN_SLOPE_VALUES = 2
#: most breaks per extrinsic column that ``segments`` tries
MAX_KNOTS = 7


def _knots(values) -> list[float]:
    """The breaks a hinge of ``values`` may take: the distinct values strictly inside their range, at most
    :data:`MAX_KNOTS` of them evenly spaced in rank (as Python floats)."""
    inner = np.unique(np.asarray(values, dtype=float))[1:-1]
    if len(inner) > MAX_KNOTS:
        inner = inner[np.unique(np.round(np.linspace(0, len(inner) - 1, MAX_KNOTS)).astype(int))]
    return [float(v) for v in inner]


class LogLinearModel(PerformanceForm):
    """Multiplicative power law with interactions, fitted by least squares on log t.

    Parameters
    ----------
    numeric : list of str or str
        Numeric intrinsic columns (values > 0); each enters as log x. A
        comma-separated string is accepted.
    categorical : list of str or str
        Categorical intrinsic columns; every level but the first (sorted as
        strings) gets a constant κ, a factor e^κ on t.
    extrinsic : list of str or str
        Extrinsic scaling columns (values > 0), e.g. workers, batch size; they
        enter like the numeric ones.
    interactions : bool, default True
        Add log x_j · log x_k for every pair of numeric/extrinsic columns,
        squares (j = k) included: the power of x_j then changes with x_k and
        with x_j itself. A square is left out for a column with fewer than 3
        distinct values in fit (it would repeat log x_j).
    category_terms : bool, default True
        Add [c = ℓ] · log x_j for every non-reference level ℓ of every
        categorical c and every numeric/extrinsic column x_j: the level changes
        the power of x_j.
    category_pairs : bool, default False
        Add [c₁ = ℓ₁]·[c₂ = ℓ₂] for every pair of non-reference levels of two
        categorical columns that occur together in fit: a factor for that
        combination (e.g. one model on one GPU runs faster than the model's and
        the GPU's factors multiply to).
    pair_slopes : bool, default False
        Add [c₁ = ℓ₁]·[c₂ = ℓ₂]·log x_j for those pairs and every numeric/extrinsic
        column x_j: the combination changes the power of x_j (e.g. one model
        scales differently over the GPUs of one system), for each x_j that takes
        at least :data:`MIN_SLOPE_VALUES` values on the pair's rows in fit.
        Needs ``category_terms`` and ``category_pairs`` (a kept term keeps the
        terms it is made of). A pair not seen in fit has no such term: its rows
        get the levels' own terms. With few rows per pair the least-squares refit can overfit; the form search
        tries it as one candidate among others and lets cross-validation judge.
    segments : bool, default False
        Add a hinge max(0, log x − log b) for every extrinsic column x and every break b among its values in fit
        strictly between its smallest and largest (at most :data:`MAX_KNOTS`, evenly spaced in rank): above the
        break the power of x changes by the hinge's coefficient, a segmented power law in x, continuous at the
        break (Extra-P's segmented models, here chosen by the lasso among every break).
    cells : bool, default False
        With ``select="ridge"`` and three or more categorical columns: add [c₁ = ℓ₁]·…·[c_k = ℓ_k] for every cell
        (a combination of a level of every categorical column) seen in fit, reference levels included
        (:class:`~perfkit.model.forms.terms.LevelCell`): each cell's own factor, shrunk towards what its levels and
        pairs say. A cell not seen in fit gets no factor of its own.
    select : {"lasso", "none", "ridge"}, default "lasso"
        ``"lasso"``: keep the terms that :class:`~sklearn.linear_model.LassoCV`
        (standardised terms, ``KFold(5, shuffle=True, random_state)``) gives a
        non-zero coefficient (above 1e-8 times the largest: smaller ones are 0 to the solver's precision, and
        keeping them would depend on the BLAS kernels), closed under hierarchy, then refit them by
        ordinary least squares. ``"none"``: least squares on every candidate
        term (with a tiny ridge, 1e-8 relative, when the terms are linearly
        dependent). ``"ridge"``: keep every candidate term and shrink the level pairs, the pair slopes and the
        cells towards 0 by the ridge penalties ``penalty`` (partial pooling: a combination of levels with few rows
        stays close to what its levels say); the other terms are fitted with a negligible penalty (1e-5).
        :attr:`n_parameters_` is then the effective number of parameters, the trace of the hat matrix plus one.
    penalty : (float, float, float), optional
        ``select="ridge"``: the ridge penalties of the level pairs, the pair slopes and the cells, each from 0 to
        1e6, in units of the number of rows on standardised terms; default :data:`RIDGE_PENALTY`.
    random_state : int, default 0
        Seed of the cross-validation folds of ``select="lasso"`` (an integer >= 0).

    Every setting is checked when ``fit`` starts; a bad one raises one
    ``ValueError`` naming it.

    Notes
    -----
    ``predict`` returns exp(η̂), the fitted geometric mean: the **median** of t
    under log-normal errors, not its mean. No retransformation correction is
    applied; multiply by :attr:`smearing_` (Duan's smearing factor, the mean of
    e^residual on the training rows) for an estimate of the mean.

    The coefficient of a ``power`` term is the power (d log t / d log x) of its
    column where every column is 1 (all logs 0) and every categorical is at its
    reference level, and a ``level`` coefficient is that level's effect there:
    with interactions or category terms that point usually lies outside the
    measured data (batch size 1, learning rate 1). :meth:`powers_at` gives the
    local power of every column at any configurations. With
    ``interactions=False`` and ``category_terms=False`` the coefficients are the
    powers and level effects everywhere.

    The fit runs with one BLAS thread and deterministic solvers (coordinate
    descent with cyclic order, LAPACK least squares), so refits on any machine
    agree to the last bits of floating point.

    Attributes
    ----------
    terms_ : list of str
        Names of the kept terms, e.g. ``"log(batch_size)"``,
        ``"log(batch_size)·log(workers)"``, ``"log(batch_size)^2"``, ``"activation=relu"``,
        ``"activation=relu·log(num_filters)"``.
    term_specs_ : list of perfkit.model.forms.terms.Term
        The same terms as frozen dataclasses: :class:`~perfkit.model.forms.terms.Power`,
        :class:`~perfkit.model.forms.terms.Interaction`, :class:`~perfkit.model.forms.terms.Level`,
        :class:`~perfkit.model.forms.terms.LevelSlope`, :class:`~perfkit.model.forms.terms.LevelPair`,
        :class:`~perfkit.model.forms.terms.PairSlope`, :class:`~perfkit.model.forms.terms.Hinge` (saved as ``[kind, *fields]``
        lists).
    coef_ : numpy.ndarray
        Coefficient of each kept term (log space).
    intercept_ : float
        β₀; e^β₀ is the time when every log term is 0 and every category at its reference level.
    n_terms_ : int
        Number of kept terms.
    n_candidates_ : int
        Number of candidate terms before selection.
    alpha_ : float or None
        Penalty LassoCV chose (on standardised terms); None for ``select="none"`` and ``"ridge"``.
    effective_df_ : float or None
        ``select="ridge"``: the trace of the hat matrix (the intercept not counted); None otherwise.
    residual_std_ : float
        Standard deviation of the log residuals on the training rows (≈ relative error).
    smearing_ : float
        Duan's smearing factor, mean(e^residual) on the training rows (see Notes).
    fit_time_ : float
        Wall time of the fit in seconds.
    n_fit_, leverage_center_, leverage_scale_, leverage_basis_
        Rows of fit, and the centring, scaling and :func:`~perfkit.model.uncertainty.conformal.leverage_basis` of their kept
        terms: what :meth:`leverage` needs.
    categories_ : dict
        Levels of each categorical column seen in fit (sorted as strings; the first is the reference).
    log_columns_ : list of str
        Numeric and extrinsic columns that enter the model (the constant ones are left out).
    constant_columns_ : dict
        Columns with a single value in fit, column → value: a numeric/extrinsic
        one cannot determine its power (it is left out, power 0, with a
        :class:`~perfkit.model.roles.ConstantColumnWarning`); a categorical
        with one level has no terms.
    params_ : pandas.DataFrame
        term, kind, coefficient, power (for ``power`` terms), factor (e^coefficient
        for the intercept and the levels).
    """

    def __init__(self, numeric=(), categorical=(), extrinsic=(), *, interactions=True, category_terms=True,
                 category_pairs=False, pair_slopes=False, segments=False, cells=False, select="lasso", penalty=None,
                 random_state=0):
        self.numeric = numeric
        self.categorical = categorical
        self.extrinsic = extrinsic
        self.interactions = interactions
        self.category_terms = category_terms
        self.category_pairs = category_pairs
        self.pair_slopes = pair_slopes
        self.segments = segments
        self.cells = cells
        self.select = select
        self.penalty = penalty
        self.random_state = random_state

    json_format = JSON_FORMAT
    json_version = JSON_VERSION
    fitted_keys = _FITTED_KEYS
    optional_settings = ("category_pairs", "pair_slopes", "segments", "cells", "penalty")
    optional_fitted_keys = ("effective_df",)
    fitted_attribute = "coef_"

    @property
    def has_leverage(self) -> bool:
        """Whether :meth:`leverage` applies: every fit but ``select="ridge"`` (whose leverage would need a basis as
        large as its terms times the rows; its conformal intervals are not studentised)."""
        return self.select != "ridge"

    # ------------------------------------------------------------------ setup
    def _penalty(self) -> tuple:
        """The ridge penalties in use: ``penalty``, or :data:`RIDGE_PENALTY` when it is None."""
        return RIDGE_PENALTY if self.penalty is None else tuple(self.penalty)

    def _settings(self):
        num, cat, ext = role_lists(self.numeric, self.categorical, self.extrinsic)
        for name in ("interactions", "category_terms", "category_pairs", "pair_slopes", "segments", "cells"):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name}: expected True or False, got {value!r}")
        if self.pair_slopes and not (self.category_terms and self.category_pairs):
            raise ValueError("pair_slopes: needs category_terms=True and category_pairs=True (the terms a pair's "
                             "slope is made of)")
        if not isinstance(self.select, str) or self.select not in SELECT:
            raise ValueError(f"select: expected one of {SELECT}, got {self.select!r}")
        if self.cells and self.select != "ridge":
            raise ValueError("cells: needs select='ridge' (a cell may hold reference levels, which only a penalty "
                             "can tell apart from the levels' own terms)")
        if self.penalty is not None:
            pen = self.penalty
            ok = (isinstance(pen, (list, tuple, np.ndarray)) and np.ndim(pen) == 1 and len(pen) == 3
                  and all(is_finite(v) and 0 <= float(v) <= MAX_PENALTY for v in pen))
            if not ok:
                raise ValueError(f"penalty: expected three numbers from 0 to {MAX_PENALTY:g} (level pairs, pair "
                                 f"slopes, cells), got {pen!r}")
            if self.select != "ridge":
                raise ValueError(f"penalty: only select='ridge' uses it (select={self.select!r})")
        check_int("random_state", self.random_state, minimum=0)
        if not (num or cat or ext):
            raise ValueError("no columns given: set numeric, categorical and/or extrinsic")
        return num, cat, ext

    def _candidates(self, X) -> list:
        """The candidate terms, in the order the selection sees them."""
        logs, specs = self.log_columns_, []
        levels = {c: lv[1:] for c, lv in self.categories_.items()}
        specs += [Power(c) for c in logs]
        specs += [Level(c, lv) for c, lvs in levels.items() for lv in lvs]
        if self.interactions:
            specs += [Interaction(a, b) for a, b in itertools.combinations_with_replacement(logs, 2)
                      if a != b or X[a].nunique() >= 3]
        if self.category_terms:
            specs += [LevelSlope(c, lv, x) for c, lvs in levels.items() for lv in lvs for x in logs]
        if self.category_pairs:
            for c1, c2 in itertools.combinations(list(levels), 2):
                seen = set(zip(X[c1].tolist(), X[c2].tolist()))
                pairs = [(l1, l2) for l1 in levels[c1] for l2 in levels[c2] if (l1, l2) in seen]
                specs += [LevelPair(c1, l1, c2, l2) for l1, l2 in pairs]
                if self.pair_slopes:  # only where the pair's rows can tell a slope: 3 or more values of x
                    for l1, l2 in pairs:
                        rows = (X[c1] == l1).to_numpy() & (X[c2] == l2).to_numpy()
                        specs += [PairSlope(c1, l1, c2, l2, x) for x in logs
                                  if X.loc[rows, x].nunique() >= MIN_SLOPE_VALUES]
        if self.segments:
            specs += [Hinge(x, knot) for x in self.extrinsic_ if x in logs for knot in _knots(X[x])]
        if self.cells and len(levels) >= 3:
            cols = list(levels)
            seen = sorted(set(zip(*(X[c].tolist() for c in cols))), key=lambda cell: tuple(map(str, cell)))
            specs += [LevelCell(tuple(cols), cell) for cell in seen]
        return specs

    def _logs(self, X) -> dict:
        return {c: np.log(X[c].to_numpy(dtype=float)) for c in self.log_columns_}

    def _design(self, X, specs):
        """Matrix of the terms ``specs`` for the rows of X (already validated)."""
        logs = self._logs(X)
        cols = [t.values(X, logs) for t in specs]
        return np.column_stack(cols) if cols else np.zeros((len(X), 0))

    # -------------------------------------------------------------------- fit
    def fit(self, X, y):
        """Fit log t on the candidate terms (see the class docstring).

        Parameters
        ----------
        X : pandas.DataFrame
            Configurations, with the columns named in numeric/categorical/extrinsic;
            numeric and extrinsic values must be > 0.
        y : array_like
            Measured times, one per row of X, finite and > 0.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A bad setting, a missing column, a value <= 0 or non-numeric in a
            numeric/extrinsic column, a bad time (each naming the column and row),
            or fewer than 5 rows for ``select="lasso"`` (2 for ``"none"``).
        """
        from threadpoolctl import threadpool_limits

        num, cat, ext = self._settings()
        min_rows = CV_FOLDS if self.select == "lasso" else 2
        validate_frame(X, num, cat, ext)
        if len(X) < min_rows:
            raise ValueError(f"X: {len(X)} rows are fewer than the {min_rows} that select={self.select!r} needs")
        y = validate_target(y, X, positive=True)
        start = time.perf_counter()
        record_roles(self, num, cat, ext)
        self.categories_ = levels_seen(X, cat)
        constant = constant_columns(X, num, cat, ext, self.categories_)
        if constant:
            warn_constant_columns(constant, num, ext)
        self.constant_columns_ = constant
        self.log_columns_ = [c for c in num + ext if c not in constant]
        candidates = self._candidates(X)
        F = self._design(X, candidates)
        z = np.log(y)
        # one BLAS thread: small matrices, and a result that depends on the thread count is a machine dependence
        with threadpool_limits(1):
            self.effective_df_ = None
            if self.select == "lasso" and candidates:
                keep, self.alpha_ = lasso_mask(F, z, self.random_state)
                keep = hierarchy_closure(candidates, keep)
            else:
                keep, self.alpha_ = np.ones(len(candidates), dtype=bool), None
            if self.select == "ridge":
                pen = ridge_penalties(candidates, self._penalty())
                intercept, coef, self.effective_df_ = ridge(F, z, pen)
            else:
                intercept, coef = least_squares(F[:, keep], z)
        self.term_specs_ = [s for s, k in zip(candidates, keep) if k]
        self.terms_ = [t.name() for t in self.term_specs_]
        self.coef_ = coef
        self.intercept_ = float(intercept)
        self.n_terms_ = len(self.terms_)
        self.n_candidates_ = len(candidates)
        self._record_fit(F[:, keep], z)
        self.fit_time_ = time.perf_counter() - start
        return self

    def _record_fit(self, F, z) -> None:
        """The leverage arrays and the residual statistics of the kept terms ``F`` on the rows of fit (a ridge fit
        keeps an empty leverage basis: see :attr:`has_leverage`)."""
        from threadpoolctl import threadpool_limits

        mean, scale = F.mean(axis=0), F.std(axis=0)
        scale[scale == 0] = 1.0
        with threadpool_limits(1):
            self.leverage_basis_ = (leverage_basis((F - mean) / scale) if self.has_leverage
                                    else np.zeros((F.shape[1], 0)))
        self.leverage_center_, self.leverage_scale_, self.n_fit_ = mean, scale, len(z)
        resid = z - (self.intercept_ + F @ self.coef_)
        self.residual_std_ = float(np.std(resid))
        self.smearing_ = float(np.mean(np.exp(resid)))

    # ---------------------------------------------------------------- predict
    def _validated(self, X):
        self._check_fitted()
        validate_frame(X, self.numeric_, self.categorical_, self.extrinsic_, categories=self.categories_)
        return X

    def predict_log(self, X):
        """Predicted log t (η̂) for the configurations in ``X``."""
        self._validated(X)
        return self.intercept_ + self._design(X, self.term_specs_) @ self.coef_

    def predict(self, X):
        """Predicted times exp(η̂) — the median under log-normal errors (see Notes) — for the rows of ``X``.

        Raises ``ValueError`` for the checks of :func:`~perfkit.model.validation.validate_frame`
        (missing column, value <= 0, a category level not seen in fit: each naming the column,
        value and row) and for a row whose prediction overflows, naming the row.
        """
        return times_from_log(self.predict_log(X), X)

    def leverage(self, X) -> np.ndarray:
        """Leverage of the rows of ``X``: the variance of the fitted log t there in units of the residual variance,
        h(x) = 1/n + zᵀ(ZᵀZ)⁺z with z the kept terms of x and Z those of the n rows of fit (centred and scaled as
        in the fit). A prediction error there has variance σ²(1 + h): studentised conformal intervals
        (:class:`~perfkit.model.uncertainty.conformal.ConformalRegressor`, ``method="studentized"``) widen by √(1 + h).
        ``select="ridge"`` has none (:attr:`has_leverage`): ``NotImplementedError``."""
        if not self.has_leverage:
            raise NotImplementedError("LogLinearModel(select='ridge') has no leverage (has_leverage is False)")
        self._validated(X)
        Z = (self._design(X, self.term_specs_) - self.leverage_center_) / self.leverage_scale_
        return 1.0 / self.n_fit_ + leverage_of(Z, self.leverage_basis_)

    def powers_at(self, X):
        """Local power d log t / d log x of every numeric/extrinsic column at the rows of ``X``.

        Returns a DataFrame (index of ``X``, one column per entry of :attr:`log_columns_`):
        the exponent that a small relative change of that column has on t at that
        configuration, e.g. -0.9 for batch_size: 1 % more batch, 0.9 % less time.
        """
        import pandas as pd

        self._validated(X)
        logs = self._logs(X)
        out = {c: np.zeros(len(X)) for c in self.log_columns_}
        for term, b in zip(self.term_specs_, self.coef_):
            term.add_powers(b, X, logs, out)
        return pd.DataFrame(out, index=X.index)

    # --------------------------------------------------------------- reports
    @property
    def n_parameters_(self) -> int:
        """Fitted parameters: the kept terms and the intercept; for ``select="ridge"`` the effective number, the
        trace of the hat matrix plus one (rounded)."""
        self._check_fitted()
        if self.effective_df_ is not None:
            return int(round(self.effective_df_)) + 1
        return len(self.term_specs_) + 1

    @property
    def params_(self):
        """Fitted terms as a DataFrame: term, kind, coefficient, power, factor."""
        import pandas as pd

        self._check_fitted()
        nan = float("nan")
        rows = [dict(term="(intercept)", kind="intercept", coefficient=self.intercept_, power=nan,
                     factor=float(np.exp(self.intercept_)))]
        for term, name, b in zip(self.term_specs_, self.terms_, self.coef_):
            rows.append(dict(term=name, kind=term.kind, coefficient=float(b),
                             power=float(b) if term.kind == "power" else nan,
                             factor=float(np.exp(b)) if term.kind == "level" else nan))
        return pd.DataFrame(rows, columns=["term", "kind", "coefficient", "power", "factor"])

    def formula(self, digits: int = 3) -> str:
        """The fitted model as one line, e.g. ``t = 3.2e-05 · batch_size^-0.39 · exp(0.12·[activation=tanh])``.

        Terms appear in the order constant, powers, levels, level pairs, interactions, level slopes, pair slopes;
        coefficients are rounded to ``digits`` significant digits.
        """
        self._check_fitted()
        d = check_int("digits", digits, minimum=1)

        def g(v):
            return f"{v:.{d}g}"

        parts = [g(np.exp(self.intercept_))]
        for term, b in sorted(zip(self.term_specs_, self.coef_), key=lambda tb: tb[0].order):
            parts.append(term.factor(g(b)))
        return "t = " + " · ".join(parts)

    def summary(self) -> str:
        """A printable report: the settings, the selection, the fit quality and the table of :attr:`params_`."""
        import pandas as pd

        self._check_fitted()
        sel = (f"LassoCV ({CV_FOLDS}-fold, alpha {self.alpha_:.3g} on standardised terms), then least squares"
               if self.alpha_ is not None else "none (least squares on every candidate)")
        if self.effective_df_ is not None:
            pen = self._penalty()
            sel = (f"ridge on every candidate (penalties: level pairs {pen[0]:g}, pair slopes {pen[1]:g}, cells "
                   f"{pen[2]:g}); {self.effective_df_:.1f} effective parameters besides the intercept")
        lines = [
            "LogLinearModel: log t = β₀ + Σ coefficient · term;  t = exp(log t)",
            f"  columns: numeric {self.numeric_}, categorical {self.categorical_}, extrinsic {self.extrinsic_}",
            f"  terms: {self.n_terms_} kept of {self.n_candidates_} candidates "
            f"(interactions={bool(self.interactions)}, category_terms={bool(self.category_terms)})",
            f"  selection: {sel}",
            f"  residual sd of log t on the training rows: {self.residual_std_:.4g}; "
            f"smearing factor {self.smearing_:.4g}; fit {self.fit_time_:.2f} s",
            "  prediction: exp(log t), the median under log-normal errors; power: at every column = 1 (see powers_at)",
            "",
        ]
        with pd.option_context("display.max_rows", None, "display.width", 200):
            table = self.params_.to_string(index=False, float_format=lambda v: f"{v:.4g}", na_rep="")
        return "\n".join(lines) + table

    # ------------------------------------------------------------------ JSON
    def _fitted_doc(self) -> dict:
        """The ``fitted`` object of :meth:`to_doc`: the roles, levels, terms (``[kind, *fields]`` lists),
        coefficients, fit statistics and the leverage arrays."""
        return {
            "numeric": self.numeric_,
            "categorical": self.categorical_,
            "extrinsic": self.extrinsic_,
            "categories": {c: [jsonable(v) for v in lv] for c, lv in self.categories_.items()},
            "log_columns": self.log_columns_,
            "constant_columns": {c: jsonable(v) for c, v in self.constant_columns_.items()},
            "terms": [t.to_list() for t in self.term_specs_],
            "coef": [float(v) for v in self.coef_],
            "intercept": self.intercept_,
            "alpha": self.alpha_,
            **({"effective_df": self.effective_df_} if self.effective_df_ is not None else {}),
            "n_candidates": self.n_candidates_,
            "residual_std": self.residual_std_,
            "smearing": self.smearing_,
            "fit_time": self.fit_time_,
            "leverage": {"n": self.n_fit_, "center": [float(v) for v in self.leverage_center_],
                         "scale": [float(v) for v in self.leverage_scale_],
                         "basis": [[float(v) for v in row] for row in self.leverage_basis_]},
        }

    @classmethod
    def _restore(cls, model, checked, reader):
        """Check a document's ``fitted`` object (terms of known columns and levels, finite coefficients, ...)
        and set it on ``model``."""
        num, cat, ext = checked
        reader.roles(num, cat, ext)
        categories = reader.levels("categories", cat, nonempty=True, as_seen=True)
        log_columns = reader.names("log_columns")
        if any(c not in num + ext for c in log_columns):
            raise reader.fail(f"fitted.log_columns: {reader.short(log_columns)} are not all numeric/extrinsic "
                              "columns")
        constant = reader.constant_columns(num + cat + ext)
        expected = [c for c in num + ext if c not in constant]
        if log_columns != expected:
            raise reader.fail(f"fitted.log_columns: expected the numeric/extrinsic columns that are not constant, "
                              f"{expected}, got {reader.short(log_columns)}")
        specs = terms_from_doc(reader, categories, log_columns, {k: getattr(model, k) for k in KIND_SETTING.values()})
        coef = reader["coef"]
        if not isinstance(coef, list) or not all(is_finite(x) for x in coef) or len(coef) != len(specs):
            raise reader.fail(f"fitted.coef: expected {len(specs)} finite numbers (one per term), got "
                              f"{reader.short(coef)}")
        lev = reader.leverage(len(specs), ("n", "center", "scale", "basis"))
        model.n_fit_, model.leverage_center_ = lev["n"], lev["center"]
        model.leverage_scale_, model.leverage_basis_ = lev["scale"], lev["basis"]
        record_roles(model, num, cat, ext)
        model.categories_ = {c: list(categories[c]) for c in cat}
        model.log_columns_ = list(log_columns)
        model.constant_columns_ = constant
        model.term_specs_ = specs
        model.terms_ = [t.name() for t in specs]
        model.coef_ = np.asarray(coef, dtype=float)
        model.intercept_ = reader.number("intercept")
        model.alpha_ = reader.number("alpha", minimum=0, allow_none=True)
        model.effective_df_ = (reader.number("effective_df", minimum=0, maximum=len(specs))
                               if "effective_df" in reader.fitted else None)
        if (model.effective_df_ is None) != (model.select != "ridge"):
            raise reader.fail("fitted.effective_df: expected exactly when select='ridge'")
        model.n_terms_ = len(specs)
        model.n_candidates_ = reader.count("n_candidates", minimum=len(specs))
        model.residual_std_ = reader.number("residual_std", minimum=0)
        model.smearing_ = reader.number("smearing", minimum=0)
        model.fit_time_ = reader.number("fit_time", minimum=0)
        return model
