"""Chapter 4: the generic performance model (eq. 4.4) as a scikit-learn estimator.

.. math::
    t(I, E) = \\Big(\\sum_{i} a_i I_i^{p_i} + \\sum_{c} \\kappa_{c, \\ell(c)}\\Big)
              \\prod_j E_j^{q_j} + C

Numeric intrinsic hyperparameters I_i get a coefficient a_i and a power p_i;
each level ℓ of a categorical intrinsic hyperparameter c gets a constant κ
(the thesis's parametrisation, Tables 4.2/4.3); extrinsic scaling factors E_j
(workers, batch size) get a power q_j; C is additive.

**Identifiability.** With the thesis's coding every level of every categorical
parameter has its own constant. Exactly one level of each categorical is active
in every row, so adding k to all levels of one categorical and subtracting k from
all levels of another leaves every prediction unchanged: the constants are only
determined up to such shifts (and a numeric term with p = 0 is one more
constant). That is one reason the unregularised fits in Table 4.2 scatter so much
between seeds. ``coding="reference"`` keeps all levels of the first categorical
and fixes the first level of each other categorical at 0, which removes the
shifts; the L2 penalty also picks one solution (the smallest). Otherwise the fit
writes its constants one way where the data leave them free (the earliest column
carries what it can, :func:`perfkit.model.engine.canonical.canonical_levels`), so that the
printed constants, not only the predictions, are the same on every CPU.

**Objective** (eqs. 4.9, 4.11, 4.12): the mean absolute error plus
λ·Σ|x| (``penalty="l1"``) or λ·Σx² (``penalty="l2"``). The printed equations sum
the penalty over samples k = 1..N; we read it as a sum over the parameters (as the
text says) and, as the text says, exclude C: x = (a, κ, p, q).

Two options of this objective, both off by default (the defaults give the thesis's
objective, bit for bit):

* ``lam_powers`` regularises the powers separately from the coefficients (the
  thesis's Chapter 6 future work): the penalty is λ·Σ r(a, κ) + λ_p·Σ r(p, q), with
  r(x) = |x| (l1) or x² (l2), C still excluded. ``None`` means λ_p = λ.
* ``loss="relative"`` fits the relative error, mean |y − ŷ| / y (+ the penalty),
  instead of eq. 4.9's absolute error: what a fit in log space optimises to first
  order, and what the held-out MAPE rewards. For fixed powers it is the same linear
  problem with every row's residual weighted by 1/y, so both engines, the
  reweighted least squares and the refinement run unchanged on weighted rows.

**Engines.** ``method="thesis"`` runs :func:`scipy.optimize.differential_evolution`
with its default settings on a scalar cost over all parameters, as the thesis
did. ``method="varpro"`` (default) uses variable projection: for fixed powers
(p, q) the model is linear in (a, κ, C), so differential evolution searches only
the powers, with the whole population's cost evaluated at once, and each
candidate's linear parameters come from a few iteratively reweighted least-squares
steps for the absolute-error loss (clipped to their bounds). A refinement of every
parameter together (:func:`perfkit.model.engine.newton.refine`) from the few best distinct
candidates then reaches the bottom of the basin. Both engines report the exact objective.
"""
from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_limits

from ..._checks import check_int
from ..base import PerformanceForm
from ..engine.engines import ENGINES, SEARCH_DEFAULTS, check_engine_args
from ..engine.problem import Problem, design, objective
from ..persist import json_tree, jsonable
from .generic_checks import DEFAULT_BOUNDS, check_bounds, check_random_state, check_saved_values
from ..uncertainty.ranges import check_saved_ranges, column_ranges
from ..unitscale import SCALES, check_scales, data_scales, scale_logs, to_data_units
from ..roles import (ConstantColumnWarning, constant_columns, levels_seen, record_roles, role_lists,
                    warn_constant_columns)
from ..._checks import check_number
from ..validation import validate_frame, validate_target

__all__ = ["GenericPerformanceModel", "ENGINE_METHODS",
           "JSON_FORMAT",
           "JSON_VERSION", "LOSSES", "TINY", "PENALTIES", "CODINGS"]

#: ``format`` and newest ``version`` of the model JSON that :meth:`GenericPerformanceModel.to_json` writes
JSON_FORMAT = "perfkit.GenericPerformanceModel"
JSON_VERSION = 1

#: the fitting engines ``method`` accepts (the names of :data:`perfkit.model.engine.engines.ENGINES`)
ENGINE_METHODS = tuple(ENGINES)
#: the penalties of the fit (``penalty``), and the codings of categorical columns (``coding``)
PENALTIES = (None, "l1", "l2")
CODINGS = ("thesis", "reference")
#: choices of ``loss``: eq. 4.9's mean absolute error, or the mean relative error |y − ŷ| / y
LOSSES = ("absolute", "relative")
#: coefficients (seconds) below this are left out of :meth:`GenericPerformanceModel.formula`: a bound-constrained
#: fit leaves them at 1e-40 or so, digits that mean nothing
TINY = 1e-12
_FITTED_KEYS = ("numeric", "categorical", "extrinsic", "categories", "kept_levels", "linear_names", "power_names",
                "coef", "powers", "objective", "n_iter", "fit_time", "history")


class GenericPerformanceModel(PerformanceForm):
    """Generic performance model of the thesis (eq. 4.4), fitted by differential evolution.

    Parameters
    ----------
    numeric : list of str or str
        Numeric intrinsic columns (each gets a coefficient a and a power p).
        A comma-separated string is accepted.
    categorical : list of str or str
        Categorical intrinsic columns (one constant per level).
    extrinsic : list of str or str
        Extrinsic scaling columns (each gets a power q), e.g. workers, batch size.
    penalty : {None, "l1", "l2"}
        Regularisation of the cost (eqs. 4.11, 4.12).
    lam : float, default 0.0
        Regularisation strength λ (of every parameter but C; with ``lam_powers``
        set, of the coefficients a and constants κ only).
    lam_powers : float or None, default None
        Regularisation strength of the powers p and q, a finite number >= 0
        (> 0 needs a penalty): the penalty becomes λ·Σ r(a, κ) + lam_powers·Σ r(p, q)
        with r(x) = |x| (l1) or x² (l2). None (default): the same λ as the
        coefficients, the thesis's penalty.
    loss : {"absolute", "relative"}, default "absolute"
        What the fit minimises besides the penalty: "absolute" is the mean
        absolute error of eq. 4.9 (the thesis); "relative" the mean relative
        error, mean |y − ŷ| / y, which weights fast and slow configurations
        alike (what MAPE measures; a log-space fit optimises it to first order).
    bounds : dict, optional
        Bounds per kind: keys "a" (coefficients and categorical constants),
        "p", "q", "C", each a (lower, upper) pair of finite numbers with
        lower < upper; missing keys take :data:`DEFAULT_BOUNDS`.
    scale : {"data", None}, default "data"
        "data": fit unit-free (:mod:`perfkit.model.unitscale`): the times and
        every numeric and extrinsic column are divided by their medians, the
        bounds of a, κ, C and the penalty apply to those dimensionless
        parameters, and the fitted coefficients are written back in the data's
        units; the same data in other units gives the same fit, scaled. None:
        the thesis's convention, bounds and λ in the target's units (seconds).
    method : {"varpro", "thesis"}
        Fitting engine (see module docstring).
    coding : {"thesis", "reference"}
        Categorical coding: a constant for every level (thesis), or the first
        level of every categorical but the first fixed at 0 (identifiable).
    random_state : int, numpy Generator/RandomState or None
        Seed of the differential evolution (an integer >= 0). A Generator or
        RandomState is used as it is (and saved as ``null`` by :meth:`to_json`).
    maxiter : int, optional
        Maximum generations, an integer >= 1 (None: 1000 for "thesis", scipy's
        default; 60 for "varpro", :data:`perfkit.model.engine.engines.SEARCH_DEFAULTS`).
        0, negative or non-integer values raise.
    popsize : int, optional
        Population size multiplier, scipy's meaning, an integer >= 1 (None: 15
        for "thesis", scipy's default; 5 for "varpro", which searches only the powers).
    tol : float, optional
        Relative convergence tolerance of the differential evolution, a finite
        number > 0 (None: 0.01 for "thesis", scipy's default; 1e-3 for "varpro",
        whose search is cheap enough to run until its population agrees).
    irls_iter : int, default 3
        Reweighted least-squares steps per candidate (varpro engine), an
        integer >= 1; the final polish uses more.
    search_rows : int or None, default 300
        The varpro engine's global search uses at most this many rows (a seeded
        random subset, an integer >= 1): it only has to find the basins, and the
        refinement, the linear parameters and the reported objective always use
        all rows. ``None`` searches on all rows.

    Every setting is checked when ``fit`` starts; a bad one raises one
    ``ValueError`` naming it (e.g. ``bounds['p']: expected a (lower, upper)
    pair of numbers, got 3``).

    Attributes
    ----------
    params_ : pandas.DataFrame
        Fitted parameters: term, kind, column, level, a, p, q, C.
    coef_ : numpy.ndarray
        Linear parameters (a, κ, C) in the order of ``linear_names_``.
    powers_ : numpy.ndarray
        Powers (p, q) in the order of ``power_names_``.
    objective_ : float
        Final value of the cost on the training data: MAE (``loss="absolute"``) or
        mean relative error (``loss="relative"``) plus the penalty, of the
        problem solved (with ``scale="data"`` the times divided by
        ``scales_["target"]``).
    scales_ : dict or None
        ``{"target": median time, "columns": {column: median}}`` of a unit-free
        fit; None for a fit in the data's units (``scale=None``).
    ranges_ : dict
        ``{column: (min, max)}`` of the numeric and extrinsic columns in fit.
    n_iter_ : int
        Generations of differential evolution.
    history_ : list of float
        Best cost after each generation.
    converged_ : bool or None
        Whether the varpro engine's final refinement (all parameters together, a bounded primal–dual Newton
        method on the smoothed objective, :func:`perfkit.model.engine.newton.refine`) met its tolerance; None
        for the thesis engine, which has no such test. Across seeds,
        :class:`perfkit.model.selection.fitting.RepeatedFit` reports the spread of the objectives.
    fit_time_ : float
        Wall time of the fit in seconds.
    categories_ : dict
        Levels of each categorical column seen in fit.
    constant_columns_ : dict
        Columns that had a single value in the training data, column → value
        (see :meth:`fit`): numeric and extrinsic ones have their power fixed at 0.
    n_parameters_ : int
        Fitted parameters: the linear ones (a, κ, C) and the powers (p, q).
    """

    json_format = JSON_FORMAT
    json_version = JSON_VERSION
    fitted_keys = _FITTED_KEYS
    optional_fitted_keys = ("constant_columns", "converged", "scales", "ranges")
    #: constructor parameters that a model JSON may lack (added after version 1 was defined): their defaults are used
    optional_settings = ("lam_powers", "loss", "scale")
    fitted_attribute = "coef_"

    def __init__(
        self,
        numeric=(),
        categorical=(),
        extrinsic=(),
        penalty=None,
        lam=0.0,
        bounds=None,
        method="varpro",
        coding="thesis",
        random_state=None,
        maxiter=None,
        popsize=None,
        tol=None,
        irls_iter=3,
        search_rows=SEARCH_DEFAULTS["search_rows"],
        lam_powers=None,
        loss="absolute",
        scale="data",
    ):
        self.numeric = numeric
        self.categorical = categorical
        self.extrinsic = extrinsic
        self.penalty = penalty
        self.lam = lam
        self.bounds = bounds
        self.method = method
        self.coding = coding
        self.random_state = random_state
        self.maxiter = maxiter
        self.popsize = popsize
        self.tol = tol
        self.irls_iter = irls_iter
        self.search_rows = search_rows
        self.lam_powers = lam_powers
        self.loss = loss
        self.scale = scale


    # ------------------------------------------------------------------ setup
    def check_settings(self):
        """Check every setting and the column roles before any data is read (``ValueError`` naming the one at
        fault); returns what :meth:`fit` works from."""
        return self._settings()

    def _settings(self):
        num, cat, ext = role_lists(self.numeric, self.categorical, self.extrinsic)
        if self.penalty not in PENALTIES:
            raise ValueError(f"penalty: expected None, 'l1' or 'l2', got {self.penalty!r}")
        try:
            lam = float(self.lam)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"lam: expected a number >= 0, got {self.lam!r}") from None
        if not np.isfinite(lam) or lam < 0:
            raise ValueError(f"lam: expected a number >= 0, got {self.lam!r}")
        if self.penalty is None and lam > 0:
            raise ValueError("lam > 0 needs penalty='l1' or 'l2'")
        lam_powers = None if self.lam_powers is None else check_number("lam_powers", self.lam_powers)
        if self.penalty is None and lam_powers is not None and lam_powers > 0:
            raise ValueError("lam_powers > 0 needs penalty='l1' or 'l2'")
        if not (isinstance(self.loss, str) and self.loss in LOSSES):
            raise ValueError(f"loss: expected one of {LOSSES}, got {self.loss!r}")
        if self.method not in ENGINE_METHODS:
            raise ValueError(f"method: expected one of {ENGINE_METHODS}, got {self.method!r}")
        if not any(self.scale is v or (isinstance(self.scale, str) and self.scale == v) for v in SCALES):
            raise ValueError(f"scale: expected 'data' (fit unit-free) or None (the thesis: bounds and λ in the "
                             f"target's units), got {self.scale!r}")
        if self.coding not in CODINGS:
            raise ValueError(f"coding: expected 'thesis' or 'reference', got {self.coding!r}")
        bounds = check_bounds(self.bounds)
        check_random_state(self.random_state)
        check_engine_args(self.maxiter, self.popsize, self.tol, self.irls_iter, self.search_rows)
        if not (num or cat):
            raise ValueError("the model needs at least one intrinsic column (numeric or categorical)")
        return num, cat, ext, lam, bounds, lam_powers, self.loss

    def _encode(self, X, num, cat, ext):
        """Log numeric/extrinsic values and one-hot categorical levels."""
        log_i = np.log(X[num].to_numpy(dtype=float)) if num else np.zeros((len(X), 0))
        log_e = np.log(X[ext].to_numpy(dtype=float)) if ext else np.zeros((len(X), 0))
        blocks = []
        for c in cat:
            levels = self.kept_levels_[c]
            col = X[c].to_numpy()
            blocks.append(np.stack([col == lv for lv in levels], axis=1).astype(float)
                          if levels else np.zeros((len(X), 0)))
        onehot = np.concatenate(blocks, axis=1) if blocks else np.zeros((len(X), 0))
        return log_i, log_e, onehot

    # -------------------------------------------------------------------- fit
    def fit(self, X, y):
        """Fit the model to measured times.

        Parameters
        ----------
        X : pandas.DataFrame
            Configurations, with the columns named in numeric/categorical/extrinsic.
        y : array_like
            Measured times (seconds), one per row of X: finite, > 0 and at
            most :data:`perfkit.model.validation.MAX_TIME` (1e100; a larger
            value is a unit error and would overflow the error metrics).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A bad setting, column or time (naming it and the row), or a fit
            whose objective or parameters are not finite (values too large for
            float64).

        Warns
        -----
        ConstantColumnWarning
            Once per fit, naming every constant column. A numeric or extrinsic
            column with a single value cannot determine its power: the power is
            fixed at 0 (a numeric term becomes the constant ``a·F``, like a
            categorical level; an extrinsic factor becomes 1), reported as
            ``p = 0`` / ``q = 0`` in :attr:`params_`, and listed in
            ``constant_columns_``. ``predict`` still needs the column (any
            value > 0; it no longer changes the prediction). A categorical
            column with one level keeps its one constant (it cannot be told
            apart from C and the other constants).
        """
        num, cat, ext, lam, bounds, lam_powers, loss = self._settings()
        validate_frame(X, num, cat, ext)
        y = validate_target(y, X, positive=True)
        record_roles(self, num, cat, ext)
        self.categories_ = levels_seen(X, cat)
        constant = constant_columns(X, num, cat, ext, self.categories_)
        self._name_parameters(len(X))
        K = len(self.linear_names_)
        lo = np.array([bounds["a"][0]] * (K - 1) + [bounds["C"][0]])
        hi = np.array([bounds["a"][1]] * (K - 1) + [bounds["C"][1]])
        pow_bounds = [(0.0, 0.0) if c in constant else bounds[kind]
                      for kind, cols in (("p", num), ("q", ext)) for c in cols]
        if constant:
            warn_constant_columns(constant, num, ext)
        self.constant_columns_ = constant
        self.ranges_ = column_ranges(X, [*num, *ext])
        log_i, log_e, onehot = self._encode(X, num, cat, ext)
        scales = data_scales(X, y, num, ext) if self.scale == "data" else None
        if scales is not None:  # the dimensionless problem (perfkit.model.unitscale)
            y = y / scales["target"]
            log_i, log_e = scale_logs(log_i, log_e, scales, num, ext)
        weights = None if loss == "absolute" else 1.0 / y  # relative error: every row's residual weighted by 1/y
        problem = Problem(log_i, log_e, onehot, y, (lo, hi), pow_bounds, self.penalty, lam, lam_powers, weights)
        start = time.perf_counter()
        # one BLAS thread: the matrices are small (threads only add overhead and contention with joblib
        # workers), and a result that depends on the thread count would be one more machine dependence
        with np.errstate(over="ignore", invalid="ignore"), threadpool_limits(1):  # overflows lose; checked below
            found = ENGINES[self.method](problem, np.random.default_rng(self.random_state), maxiter=self.maxiter,
                                         popsize=self.popsize, tol=self.tol, irls_iter=self.irls_iter,
                                         search_rows=self.search_rows)
        self.fit_time_ = time.perf_counter() - start
        self._record(found, problem, y, lam, lam_powers, weights, scales)
        return self

    def _name_parameters(self, n_rows: int) -> None:
        """The kept levels and the names of the linear parameters and powers; ``ValueError`` when the rows are
        fewer than the parameters."""
        num, cat, ext = self.numeric_, self.categorical_, self.extrinsic_
        self.kept_levels_ = {
            c: (lv[1:] if self.coding == "reference" and k > 0 else lv)
            for k, (c, lv) in enumerate(self.categories_.items())
        }
        self.linear_names_ = (
            [f"a[{c}]" for c in num]
            + [f"k[{c}={lv}]" for c in cat for lv in self.kept_levels_[c]]
            + ["C"]
        )
        self.power_names_ = [f"p[{c}]" for c in num] + [f"q[{c}]" for c in ext]
        n_params = len(self.linear_names_) + len(self.power_names_)
        if n_rows < n_params:
            raise ValueError(f"X: {n_rows} rows are fewer than the {n_params} parameters of the model")

    def _record(self, found, problem, y, lam, lam_powers, weights, scales) -> None:
        """The fitted attributes from an engine's result (the coefficients in the data's units; the objective
        that of the problem solved); ``ValueError`` when they are not finite."""
        self.coef_ = np.asarray(found.lin, dtype=float)
        self.powers_ = np.asarray(found.powers, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            self.objective_ = float(objective(self.coef_[None], self.powers_[None], problem.design(self.powers_), y,
                                              self.penalty, lam, lam_powers, weights)[0])
            if scales is not None:
                self.coef_ = to_data_units(self.coef_, self.powers_, scales, self.numeric_, self.extrinsic_)
        self.scales_ = scales
        self.n_iter_ = int(found.n_iter)
        self.history_ = found.history
        self.converged_ = found.converged
        bad = [name for name, v in (("objective", [self.objective_]), ("coefficients", self.coef_),
                                    ("powers", self.powers_)) if not np.all(np.isfinite(v))]
        if bad:
            del self.coef_  # not a usable model
            raise ValueError(f"the fit produced non-finite {' and '.join(bad)}: the times or column values are too "
                             "large for float64 when raised to the fitted powers; are the times in seconds and the "
                             "columns in sensible units?")

    # ---------------------------------------------------------------- predict
    def predict(self, X):
        """Predicted times for the configurations in ``X`` (same columns as in fit).

        Raises ``ValueError`` for the checks of :func:`~perfkit.model.validation.validate_frame`
        and for a row whose prediction overflows (not finite), naming the row.
        """
        self._check_fitted()
        validate_frame(X, self.numeric_, self.categorical_, self.extrinsic_, categories=self.categories_)
        log_i, log_e, onehot = self._encode(X, self.numeric_, self.categorical_, self.extrinsic_)
        n_p = len(self.numeric_)
        with np.errstate(over="ignore", invalid="ignore"):
            Phi = design(self.powers_[None, :n_p], self.powers_[None, n_p:], log_i, log_e, onehot)
            pred = Phi[0] @ self.coef_
        bad = ~np.isfinite(pred)
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            row = jsonable(X.index[pos])
            raise ValueError(f"X: the prediction for row {row!r} is not finite ({pred[pos]}): its column values are "
                             "too large for the fitted powers")
        return pred

    def fitted_ranges(self) -> dict | None:
        """``{column: (min, max)}`` of the numeric and extrinsic columns in fit (None for a file written before
        models kept them)."""
        self._check_fitted()
        return self.ranges_

    # --------------------------------------------------------------- reports
    @property
    def params_(self):
        """Fitted parameters as a tidy DataFrame (term, kind, column, level, a, p, q, C)."""
        import pandas as pd

        self._check_fitted()
        rows = []
        nan = float("nan")
        n_p = len(self.numeric_)
        for i, c in enumerate(self.numeric_):
            rows.append(dict(term=c, kind="numeric", column=c, level="", a=self.coef_[i], p=self.powers_[i], q=nan, C=nan))
        j = n_p
        for c in self.categorical_:
            for lv in self.categories_[c]:
                if lv in self.kept_levels_[c]:
                    val = self.coef_[j]
                    j += 1
                else:
                    val = 0.0  # reference level
                rows.append(dict(term=f"{c}={lv}", kind="categorical", column=c, level=str(lv), a=val, p=nan, q=nan, C=nan))
        for k, c in enumerate(self.extrinsic_):
            rows.append(dict(term=c, kind="extrinsic", column=c, level="", a=nan, p=nan, q=self.powers_[n_p + k], C=nan))
        rows.append(dict(term="C", kind="constant", column="", level="", a=nan, p=nan, q=nan, C=self.coef_[-1]))
        return pd.DataFrame(rows)

    @property
    def n_parameters_(self) -> int:
        """Fitted parameters: the linear ones (a, κ, C) and the powers (p, q)."""
        self._check_fitted()
        return len(self.coef_) + len(self.powers_)

    def formula(self, digits: int = 3) -> str:
        """The fitted model (eq. 4.4) in one line: ``t = (Σ a·I^p + Σ κ[c=ℓ]) · Π E^q + C``, coefficients to
        ``digits`` significant digits; a numeric term or level with a coefficient below :data:`TINY` is left
        out, and C too when it is below :data:`TINY`."""
        d = check_int("digits", digits, minimum=1)
        t = self.params_

        def g(v):
            return f"{v:.{d}g}"

        scales = getattr(self, "scales_", None)
        tiny = TINY * (1.0 if scales is None else scales["target"])
        inner = [f"{g(r.a)}·{r.column}^{g(r.p)}" for r in t[t["kind"] == "numeric"].itertuples() if abs(r.a) >= tiny]
        inner += [f"{g(r.a)}·[{r.term}]" for r in t[t["kind"] == "categorical"].itertuples() if abs(r.a) >= tiny]
        outer = [f"{r.column}^{g(r.q)}" for r in t[t["kind"] == "extrinsic"].itertuples()]
        c = float(t.loc[t["kind"] == "constant", "C"].iloc[0])
        return ("t = (" + " + ".join(inner or ["0"]) + ")" + "".join(f" · {o}" for o in outer)
                + (f" + {g(c)}" if abs(c) >= tiny else ""))

    def summary(self) -> str:
        """A printable report: the form, the settings of the fit, its objective, the formula and :attr:`params_`."""
        import pandas as pd

        self._check_fitted()
        penalty = "none" if self.penalty is None else f"{self.penalty}, λ {float(self.lam):g}" + (
            "" if self.lam_powers is None else f", λ of the powers {float(self.lam_powers):g}")
        converged = "" if self.converged_ is None else f"; refinement converged: {self.converged_}"
        lines = [
            "GenericPerformanceModel (eq. 4.4): t = (Σ a·I^p + Σ κ[c=ℓ]) · Π E^q + C",
            f"  columns: numeric {self.numeric_}, categorical {self.categorical_}, extrinsic {self.extrinsic_}",
            f"  fit: {self.method} engine, {self.loss} error, penalty {penalty}, {self.coding} coding; "
            f"{self.n_parameters_} parameters; " + _units_text(getattr(self, "scales_", None)),
            f"  objective {self.objective_:.6g} after {self.n_iter_} generations{converged}; "
            f"fit {self.fit_time_:.2f} s",
        ]
        if self.constant_columns_:
            lines.append(f"  constant columns (power 0): {self.constant_columns_}")
        lines += [f"  {self.formula()}", ""]
        with pd.option_context("display.max_rows", None, "display.width", 200):
            table = self.params_.to_string(index=False, float_format=lambda v: f"{v:.4g}", na_rep="")
        return "\n".join(lines) + table

    # ------------------------------------------------------------------ JSON
    def _settings_doc(self) -> dict:
        """Every constructor parameter; a ``random_state`` that is a NumPy Generator/RandomState is saved as
        ``null``."""
        settings = {k: json_tree(v) for k, v in self.get_params().items()}
        if not isinstance(settings["random_state"], int):
            settings["random_state"] = None
        return settings

    def _fitted_doc(self) -> dict:
        """The ``fitted`` object of :meth:`to_doc`: roles, levels, parameter names and values, the fit's record."""
        return {
            "numeric": self.numeric_,
            "categorical": self.categorical_,
            "extrinsic": self.extrinsic_,
            "categories": {c: [jsonable(v) for v in lv] for c, lv in self.categories_.items()},
            "kept_levels": {c: [jsonable(v) for v in lv] for c, lv in self.kept_levels_.items()},
            "linear_names": self.linear_names_,
            "power_names": self.power_names_,
            "coef": self.coef_.tolist(),
            "powers": self.powers_.tolist(),
            "objective": self.objective_,
            "n_iter": self.n_iter_,
            "fit_time": self.fit_time_,
            "history": [float(v) for v in self.history_],
            "constant_columns": {c: jsonable(v) for c, v in self.constant_columns_.items()},
            "converged": self.converged_,
            "scales": self.scales_,
            "ranges": {c: [lo, hi] for c, (lo, hi) in self.ranges_.items()},
        }

    @classmethod
    def _restore(cls, model, checked, reader):
        """Check a document's ``fitted`` object and set it on ``model``.

        ``constant_columns`` and ``converged`` may be absent (files of earlier perfkit versions); column lists
        must match the settings, kept levels be levels, ``coef``/``powers`` finite and as long as their names.
        """
        num, cat, ext = checked[:3]
        reader.roles(num, cat, ext)
        categories = reader.levels("categories", cat, as_seen=True)
        kept = reader.levels("kept_levels", cat)
        for c in cat:
            if not categories[c]:
                raise reader.fail(f"fitted.categories[{c!r}]: no levels")
            extra = [lv for lv in kept[c] if lv not in categories[c]]
            if extra:
                raise reader.fail(f"fitted.kept_levels[{c!r}]: level {extra[0]!r} is not in fitted.categories")
        n_lin = len(num) + sum(len(kept[c]) for c in cat) + 1
        linear_names, power_names = reader.names("linear_names"), reader.names("power_names")
        if len(linear_names) != n_lin:
            raise reader.fail(f"fitted.linear_names: expected {n_lin} names, got {len(linear_names)}")
        if len(power_names) != len(num) + len(ext):
            raise reader.fail(f"fitted.power_names: expected {len(num) + len(ext)} names, got {len(power_names)}")
        converged = reader.get("converged")
        if converged is not None and not isinstance(converged, bool):
            raise reader.fail(f"fitted.converged: expected true, false or null, got {reader.short(converged)}")
        record_roles(model, num, cat, ext)
        model.categories_ = {c: list(categories[c]) for c in cat}
        model.kept_levels_ = {c: list(kept[c]) for c in cat}
        model.linear_names_, model.power_names_ = list(linear_names), list(power_names)
        model.coef_ = np.asarray(reader.numbers("coef", n_lin), dtype=float)
        model.powers_ = np.asarray(reader.numbers("powers", len(power_names)), dtype=float)
        check_saved_values(reader, checked[4], model.coef_, model.powers_, len(num))
        model.objective_, model.n_iter_ = reader.number("objective"), int(reader.count("n_iter"))
        model.fit_time_ = reader.number("fit_time", minimum=0)
        model.history_ = [float(v) for v in reader.numbers("history", finite=False)]
        model.constant_columns_ = reader.constant_columns(num + cat + ext)
        model.converged_ = converged
        model.scales_ = check_scales(reader.get("scales"), num, ext, reader.fail)
        if model.scales_ is not None and model.scale is None:
            raise reader.fail("fitted.scales: given, but settings.scale is null (a fit in the data's units has none)")
        model.ranges_ = check_saved_ranges(reader.get("ranges"), num + ext, reader.fail)
        if model.scales_ is None:  # fitted in the data's units (files written before unit-free fitting too)
            model.scale = None
        return model


#: the warning of constant columns (:func:`perfkit.model.roles.warn_constant_columns`), by its earlier name
_warn_constant = warn_constant_columns


def _units_text(scales) -> str:
    """How the fit treated units, for :meth:`GenericPerformanceModel.summary`."""
    if scales is None:
        return "in the data's units (bounds and λ too)"
    return f"unit-free (target / {scales['target']:.4g})"
