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
carries what it can, :func:`perfkit.model.engines.canonical_levels`), so that the
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
parameter together (:func:`perfkit.model.engines.refine`) from the few best distinct
candidates then reaches the bottom of the basin. Both engines report the exact objective.
"""
from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from threadpoolctl import threadpool_limits

from .engines import ENGINES, SEARCH_DEFAULTS, Problem, _engine_args, design, objective
from .validation import check_number, column_list, validate_frame, validate_target

__all__ = ["GenericPerformanceModel", "ConstantColumnWarning", "DEFAULT_BOUNDS", "METHODS", "JSON_FORMAT",
           "JSON_VERSION"]

#: ``format`` and newest ``version`` of the model JSON that :meth:`GenericPerformanceModel.to_json` writes
JSON_FORMAT = "perfkit.GenericPerformanceModel"
JSON_VERSION = 1


class ConstantColumnWarning(UserWarning):
    """A numeric or extrinsic column is constant (its power is fixed at 0), or a categorical has one level."""

#: default parameter bounds (thesis §4.1.1): a, κ and C in [0, 1000]; p and q in [-5, 5]
DEFAULT_BOUNDS = {"a": (0.0, 1000.0), "C": (0.0, 1000.0), "p": (-5.0, 5.0), "q": (-5.0, 5.0)}
METHODS = tuple(ENGINES)
_PENALTIES = (None, "l1", "l2")
#: choices of ``loss``: eq. 4.9's mean absolute error, or the mean relative error |y − ŷ| / y
LOSSES = ("absolute", "relative")
#: constructor parameters that a model JSON may lack (added after version 1 was defined): their defaults are used
_OPTIONAL_SETTINGS = ("lam_powers", "loss")


class GenericPerformanceModel(RegressorMixin, BaseEstimator):
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
        default; 60 for "varpro", :data:`perfkit.model.engines.SEARCH_DEFAULTS`).
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
        mean relative error (``loss="relative"``) plus the penalty.
    n_iter_ : int
        Generations of differential evolution.
    history_ : list of float
        Best cost after each generation.
    converged_ : bool or None
        Whether the varpro engine's final refinement (all parameters together, a bounded primal–dual Newton
        method on the smoothed objective, :func:`perfkit.model.engines.refine`) met its tolerance; None
        for the thesis engine, which has no such test. Across seeds,
        :class:`perfkit.model.fitting.RepeatedFit` reports the spread of the objectives.
    fit_time_ : float
        Wall time of the fit in seconds.
    categories_ : dict
        Levels of each categorical column seen in fit.
    constant_columns_ : dict
        Columns that had a single value in the training data, column → value
        (see :meth:`fit`): numeric and extrinsic ones have their power fixed at 0.
    """

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

    # ------------------------------------------------------------------ setup
    def _settings(self):
        num = column_list("numeric", self.numeric)
        cat = column_list("categorical", self.categorical)
        ext = column_list("extrinsic", self.extrinsic)
        if self.penalty not in _PENALTIES:
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
        if self.method not in METHODS:
            raise ValueError(f"method: expected one of {METHODS}, got {self.method!r}")
        if self.coding not in ("thesis", "reference"):
            raise ValueError(f"coding: expected 'thesis' or 'reference', got {self.coding!r}")
        bounds = _check_bounds(self.bounds)
        _check_random_state(self.random_state)
        _engine_args(self.maxiter, self.popsize, self.tol, self.irls_iter, self.search_rows)
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
        self.numeric_, self.categorical_, self.extrinsic_ = num, cat, ext
        self.categories_ = {c: sorted(X[c].unique().tolist(), key=str) for c in cat}
        constant = {}
        for c in num + ext:
            values = X[c].to_numpy(dtype=float)
            if np.all(values == values[0]):
                constant[c] = _jsonable(values[0])
        for c in cat:
            if len(self.categories_[c]) == 1:
                constant[c] = _jsonable(self.categories_[c][0])
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
        if len(X) < n_params:
            raise ValueError(f"X: {len(X)} rows are fewer than the {n_params} parameters of the model")
        K = len(self.linear_names_)
        lo = np.array([bounds["a"][0]] * (K - 1) + [bounds["C"][0]])
        hi = np.array([bounds["a"][1]] * (K - 1) + [bounds["C"][1]])
        pow_bounds = [(0.0, 0.0) if c in constant else bounds[kind]
                      for kind, cols in (("p", num), ("q", ext)) for c in cols]
        if constant:
            _warn_constant(constant, num, ext)
        self.constant_columns_ = constant
        weights = None if loss == "absolute" else 1.0 / y  # relative error: every row's residual weighted by 1/y
        problem = Problem(*self._encode(X, num, cat, ext), y, (lo, hi), pow_bounds, self.penalty, lam, lam_powers,
                          weights)
        start = time.perf_counter()
        # one BLAS thread: the matrices are small (threads only add overhead and contention with joblib
        # workers), and a result that depends on the thread count would be one more machine dependence
        with np.errstate(over="ignore", invalid="ignore"), threadpool_limits(1):  # overflows lose; checked below
            found = ENGINES[self.method](problem, np.random.default_rng(self.random_state), maxiter=self.maxiter,
                                         popsize=self.popsize, tol=self.tol, irls_iter=self.irls_iter,
                                         search_rows=self.search_rows)
        self.fit_time_ = time.perf_counter() - start
        self.coef_ = np.asarray(found.lin, dtype=float)
        self.powers_ = np.asarray(found.powers, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            self.objective_ = float(objective(self.coef_[None], self.powers_[None], problem.design(self.powers_), y,
                                              self.penalty, lam, lam_powers, weights)[0])
        self.n_iter_ = int(found.n_iter)
        self.history_ = found.history
        self.converged_ = found.converged
        self.n_features_in_ = len(num) + len(cat) + len(ext)
        bad = [name for name, v in (("objective", [self.objective_]), ("coefficients", self.coef_),
                                    ("powers", self.powers_)) if not np.all(np.isfinite(v))]
        if bad:
            del self.coef_  # not a usable model
            raise ValueError(f"the fit produced non-finite {' and '.join(bad)}: the times or column values are too "
                             "large for float64 when raised to the fitted powers; are the times in seconds and the "
                             "columns in sensible units?")
        return self

    # ---------------------------------------------------------------- predict
    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("GenericPerformanceModel is not fitted yet; call fit first")

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
            row = _jsonable(X.index[pos])
            raise ValueError(f"X: the prediction for row {row!r} is not finite ({pred[pos]}): its column values are "
                             "too large for the fitted powers")
        return pred

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

    # ------------------------------------------------------------------ JSON
    def to_json(self, path=None) -> str:
        """Serialise the settings and fitted parameters as JSON (never pickle).

        Parameters
        ----------
        path : path, optional
            File to write, replaced atomically (:func:`perfkit._io.atomic_write`:
            a crash never leaves half a model); the JSON text is returned either way.

        The document is ``{"format": "perfkit.GenericPerformanceModel", "version": 1,
        "settings": {every constructor parameter}, "fitted": {...}}``; a
        ``random_state`` that is a NumPy Generator/RandomState is saved as ``null``.
        """
        self._check_fitted()
        settings = {k: _json_tree(v) for k, v in self.get_params().items()}
        if not isinstance(settings["random_state"], int):
            settings["random_state"] = None
        doc: dict[str, Any] = {
            "format": JSON_FORMAT,
            "version": JSON_VERSION,
            "settings": settings,
            "fitted": {
                "numeric": self.numeric_,
                "categorical": self.categorical_,
                "extrinsic": self.extrinsic_,
                "categories": {c: [_jsonable(v) for v in lv] for c, lv in self.categories_.items()},
                "kept_levels": {c: [_jsonable(v) for v in lv] for c, lv in self.kept_levels_.items()},
                "linear_names": self.linear_names_,
                "power_names": self.power_names_,
                "coef": self.coef_.tolist(),
                "powers": self.powers_.tolist(),
                "objective": self.objective_,
                "n_iter": self.n_iter_,
                "fit_time": self.fit_time_,
                "history": [float(v) for v in self.history_],
                "constant_columns": {c: _jsonable(v) for c, v in getattr(self, "constant_columns_", {}).items()},
                "converged": getattr(self, "converged_", None),
            },
        }
        return _dump_json(doc, path)

    @classmethod
    def from_json(cls, source) -> "GenericPerformanceModel":
        """Rebuild a fitted model from :meth:`to_json` output (a JSON string or a file path).

        ``source`` is JSON text (a string starting with ``{`` or ``[``) or a
        path. The whole document is checked before anything is built: an
        object with ``format`` ``"perfkit.GenericPerformanceModel"``, an integer
        ``version`` this perfkit reads (1), ``settings`` with exactly the
        constructor parameters (valid values; ``lam_powers`` and ``loss`` may be
        absent, as in files from earlier perfkit versions, and then take their
        defaults), and ``fitted`` with every key
        :meth:`to_json` writes (``constant_columns`` may be absent, as in files
        from earlier perfkit versions), column lists of strings that match the
        settings, and finite ``coef``/``powers`` of the lengths the names give.
        Anything else raises one ``ValueError`` naming the key (and the file);
        a missing file raises ``FileNotFoundError``.
        """
        doc, where = _load_json(source)
        return _model_from_doc(cls, doc, where)


def _json_tree(v):
    """Settings as plain JSON values (tuples and arrays as lists, NumPy scalars as Python ones)."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_json_tree(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json_tree(x) for k, x in v.items()}
    return v


def _json_kind(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null",
            int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def _dump_json(doc, path=None) -> str:
    """A model document as JSON text, also written atomically to ``path`` when given (every ``to_json``)."""
    text = json.dumps(doc, indent=1)
    if path is not None:
        from .._io import atomic_write

        atomic_write(path, text)
    return text


def _load_json(source):
    """Parse a model JSON (text or file) → (document, ``" 'path'"`` or ``""`` for error messages)."""
    import os

    if isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
        text, where = source, ""
    elif isinstance(source, (str, os.PathLike)):
        from .._io import check_input_file

        path = check_input_file(source, "model JSON")
        where = f" {str(path)!r}"
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"model JSON{where}: not a text file (cannot decode it as UTF-8)") from None
    else:
        raise ValueError(f"model JSON: expected JSON text or a file path, got {type(source).__name__}")
    try:
        return json.loads(text), where
    except json.JSONDecodeError as exc:
        raise ValueError(f"model JSON{where}: invalid JSON at line {exc.lineno}, column {exc.colno}: "
                         f"{exc.msg}") from None
    except RecursionError:
        raise ValueError(f"model JSON{where}: nested too deeply (not a model file)") from None


_FITTED_KEYS = ("numeric", "categorical", "extrinsic", "categories", "kept_levels", "linear_names", "power_names",
                "coef", "powers", "objective", "n_iter", "fit_time", "history")


def _check_envelope(cls, doc, where: str, json_format: str, json_version: int, fitted_keys, optional_keys=(),
                    optional_settings=()):
    """The checks every model JSON shares: an object with ``format`` = ``json_format``, a supported ``version``,
    ``settings`` holding exactly ``cls``'s parameters (any of ``optional_settings`` may be missing: the
    constructor's default is used; all valid for ``cls._settings()``) and ``fitted``
    holding ``fitted_keys`` (plus any of ``optional_keys``). Returns ``(model, checked, fitted, fail, short)``:
    the unfitted model, what its ``_settings()`` returned, the ``fitted`` object, and the error and ``repr``
    helpers for the caller's own checks."""

    def fail(msg):
        return ValueError(f"model JSON{where}: {msg}")

    def short(v):
        r = repr(v)
        return r if len(r) <= 60 else r[:57] + "..."

    if not isinstance(doc, dict):
        raise fail(f"expected an object at the top level, got {_json_kind(doc)}")
    if "format" not in doc:
        raise fail(f"not a {json_format} document ('format' is missing)")
    if doc["format"] != json_format:
        raise fail(f"format {short(doc['format'])} is not {json_format!r}: not a {json_format} document")
    if "version" not in doc:
        raise fail("'version' is missing")
    version = doc["version"]
    if isinstance(version, bool) or not isinstance(version, int):
        raise fail(f"version: expected an integer, got {short(version)}")
    if version > json_version:
        raise fail(f"version {version} is newer than this perfkit supports ({json_version}); upgrade perfkit")
    if version < 1:
        raise fail(f"version {version} is not a valid version (1 to {json_version})")
    for key in doc:
        if key not in ("format", "version", "settings", "fitted"):
            raise fail(f"unexpected key {key!r} at the top level")
    for key in ("settings", "fitted"):
        if key not in doc:
            raise fail(f"{key!r} is missing")
        if not isinstance(doc[key], dict):
            raise fail(f"{key}: expected an object, got {_json_kind(doc[key])}")
    settings, f = doc["settings"], doc["fitted"]
    params = cls._get_param_names()
    for key in settings:
        if key not in params:
            raise fail(f"settings: unexpected key {key!r} (not a {cls.__name__} parameter)")
    for key in params:
        if key not in settings and key not in optional_settings:
            raise fail(f"settings: {key!r} is missing")
    model = cls(**settings)
    try:
        checked = model._settings()
    except ValueError as exc:
        raise fail(f"settings: {exc}") from None
    for key in fitted_keys:
        if key not in f:
            raise fail(f"fitted: {key!r} is missing")
    for key in f:
        if key not in tuple(fitted_keys) + tuple(optional_keys):
            raise fail(f"fitted: unexpected key {key!r}")
    return model, checked, f, fail, short


def _model_from_doc(cls, doc, where: str):
    """Check a parsed model JSON completely, then build the fitted model."""
    model, (num, cat, ext, *_), f, fail, short = _check_envelope(
        cls, doc, where, JSON_FORMAT, JSON_VERSION, _FITTED_KEYS, ("constant_columns", "converged"),
        _OPTIONAL_SETTINGS)

    def names(key):
        v = f[key]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise fail(f"fitted.{key}: expected a list of strings, got {short(v)}")
        return v

    def scalar(x):
        return isinstance(x, str) or _finite(x)

    def levels(key, cols):
        v = f[key]
        if not isinstance(v, dict) or sorted(v) != sorted(cols):
            raise fail(f"fitted.{key}: expected an object with one list of levels per categorical column {cols}, "
                       f"got {short(v)}")
        for c, lv in v.items():
            if not isinstance(lv, list) or not all(scalar(x) for x in lv):
                raise fail(f"fitted.{key}[{c!r}]: expected a list of levels (strings or numbers), got {short(lv)}")
        return v

    def numbers(key, n=None, finite=True):
        v = f[key]
        ok = isinstance(v, list) and all(_finite(x) or (not finite and isinstance(x, float)) for x in v)
        if not ok:
            what = "finite numbers" if finite else "numbers"
            raise fail(f"fitted.{key}: expected a list of {what}, got {short(v)}")
        if n is not None and len(v) != n:
            raise fail(f"fitted.{key}: expected {n} values, got {len(v)}")
        return v

    fitted_roles = (names("numeric"), names("categorical"), names("extrinsic"))
    if fitted_roles != (num, cat, ext):
        raise fail(f"fitted columns {list(fitted_roles)} do not match the settings' numeric/categorical/extrinsic "
                   f"{[num, cat, ext]}")
    categories = levels("categories", cat)
    kept = levels("kept_levels", cat)
    for c in cat:
        if not categories[c]:
            raise fail(f"fitted.categories[{c!r}]: no levels")
        extra = [lv for lv in kept[c] if lv not in categories[c]]
        if extra:
            raise fail(f"fitted.kept_levels[{c!r}]: level {extra[0]!r} is not in fitted.categories")
    n_lin = len(num) + sum(len(kept[c]) for c in cat) + 1
    linear_names, power_names = names("linear_names"), names("power_names")
    if len(linear_names) != n_lin:
        raise fail(f"fitted.linear_names: expected {n_lin} names, got {len(linear_names)}")
    if len(power_names) != len(num) + len(ext):
        raise fail(f"fitted.power_names: expected {len(num) + len(ext)} names, got {len(power_names)}")
    coef = numbers("coef", n_lin)
    powers = numbers("powers", len(power_names))
    for key, minimum in (("objective", None), ("fit_time", 0.0)):
        v = f[key]
        if not _finite(v) or (minimum is not None and v < minimum):
            raise fail(f"fitted.{key}: expected a finite number{' >= 0' if minimum is not None else ''}, "
                       f"got {short(v)}")
    if isinstance(f["n_iter"], bool) or not isinstance(f["n_iter"], int) or f["n_iter"] < 0:
        raise fail(f"fitted.n_iter: expected an integer >= 0, got {short(f['n_iter'])}")
    history = numbers("history", finite=False)
    constant = f.get("constant_columns", {})
    converged = f.get("converged")
    if converged is not None and not isinstance(converged, bool):
        raise fail(f"fitted.converged: expected true, false or null, got {short(converged)}")
    if not isinstance(constant, dict) or not all(c in num + cat + ext and scalar(v) for c, v in constant.items()):
        raise fail(f"fitted.constant_columns: expected an object of model column -> value, got {short(constant)}")

    model.numeric_, model.categorical_, model.extrinsic_ = num, cat, ext
    model.categories_ = {c: list(categories[c]) for c in cat}
    model.kept_levels_ = {c: list(kept[c]) for c in cat}
    model.linear_names_, model.power_names_ = list(linear_names), list(power_names)
    model.coef_ = np.asarray(coef, dtype=float)
    model.powers_ = np.asarray(powers, dtype=float)
    model.objective_, model.n_iter_ = float(f["objective"]), int(f["n_iter"])
    model.fit_time_, model.history_ = float(f["fit_time"]), [float(v) for v in history]
    model.constant_columns_ = dict(constant)
    model.converged_ = converged
    model.n_features_in_ = len(num) + len(cat) + len(ext)
    return model


def _warn_constant(constant: dict, num, ext) -> None:
    import warnings

    parts = []
    for c, v in constant.items():
        if c in num:
            parts.append(f"numeric column {c!r} is constant (every row is {v!r}): its power cannot be determined; "
                         "the term is fixed at p = 0 (a constant, like a categorical level)")
        elif c in ext:
            parts.append(f"extrinsic column {c!r} is constant (every row is {v!r}): its power cannot be determined; "
                         "it is fixed at q = 0 (factor 1)")
        else:
            parts.append(f"categorical column {c!r} has one level ({v!r}): its constant cannot be told apart from C")
    warnings.warn("; ".join(parts) + ". Vary these columns in the measurements to fit their effect.",
                  ConstantColumnWarning, stacklevel=3)


def _jsonable(v):
    if isinstance(v, np.generic):
        return v.item()
    return v


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _finite(v) -> bool:
    """``v`` is a number that float64 holds finitely (an int too large for float64 is not)."""
    try:
        return _is_number(v) and bool(np.isfinite(float(v)))
    except OverflowError:
        return False


def _check_bounds(value) -> dict:
    """``bounds`` merged over :data:`DEFAULT_BOUNDS`; one clear ``ValueError`` naming the bad entry."""
    from collections.abc import Mapping

    bounds = dict(DEFAULT_BOUNDS)
    if value is None:
        return bounds
    if not isinstance(value, Mapping):
        raise ValueError(f"bounds: expected a dict such as {{'p': (-5, 5)}} with keys a, p, q, C, got {value!r}")
    for key, val in value.items():
        if key not in DEFAULT_BOUNDS:
            raise ValueError(f"bounds: unknown key {key!r}; use a, p, q, C")
        pair = list(val) if isinstance(val, (list, tuple, np.ndarray)) else None
        if pair is None or len(pair) != 2 or not all(_is_number(v) for v in pair):
            raise ValueError(f"bounds[{key!r}]: expected a (lower, upper) pair of numbers, got {val!r}")
        if not all(_finite(v) for v in pair):
            raise ValueError(f"bounds[{key!r}]: expected finite numbers, got {val!r}")
        lo, hi = (float(v) for v in pair)
        if not lo < hi:
            raise ValueError(f"bounds[{key!r}]: lower {lo} must be below upper {hi}")
        bounds[key] = (lo, hi)
    return bounds


def _check_random_state(value) -> None:
    """None, an integer >= 0, or a NumPy Generator / RandomState / SeedSequence / BitGenerator."""
    if value is None or isinstance(value, (np.random.Generator, np.random.RandomState, np.random.SeedSequence,
                                           np.random.BitGenerator)):
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"random_state: expected None, an integer >= 0 or a numpy Generator/RandomState, "
                         f"got {value!r}")
