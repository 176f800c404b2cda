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
shifts; the L2 penalty also picks one solution (the smallest).

**Objective** (eqs. 4.9, 4.11, 4.12): the mean absolute error plus
λ·Σ|x| (``penalty="l1"``) or λ·Σx² (``penalty="l2"``). The printed equations sum
the penalty over samples k = 1..N; we read it as a sum over the parameters (as the
text says) and, as the text says, exclude C: x = (a, κ, p, q).

**Engines.** ``method="thesis"`` runs :func:`scipy.optimize.differential_evolution`
with its default settings on a scalar cost over all parameters, as the thesis
did. ``method="varpro"`` (default) uses variable projection: for fixed powers
(p, q) the model is linear in (a, κ, C), so differential evolution searches only
the powers, with the whole population's cost evaluated at once, and each
candidate's linear parameters come from a few iteratively reweighted least-squares
steps for the absolute-error loss (clipped to their bounds). A final local
polish refines the best candidate. Both engines report the exact objective.
"""
from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from .engines import ENGINES, Problem, design, objective
from .validation import column_list, validate_frame, validate_target

__all__ = ["GenericPerformanceModel", "DEFAULT_BOUNDS", "METHODS"]

#: default parameter bounds (thesis §4.1.1): a, κ and C in [0, 1000]; p and q in [-5, 5]
DEFAULT_BOUNDS = {"a": (0.0, 1000.0), "C": (0.0, 1000.0), "p": (-5.0, 5.0), "q": (-5.0, 5.0)}
METHODS = tuple(ENGINES)
_PENALTIES = (None, "l1", "l2")


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
        Regularisation strength λ.
    bounds : dict, optional
        Bounds per kind: keys "a" (coefficients and categorical constants),
        "p", "q", "C"; missing keys take :data:`DEFAULT_BOUNDS`.
    method : {"varpro", "thesis"}
        Fitting engine (see module docstring).
    coding : {"thesis", "reference"}
        Categorical coding: a constant for every level (thesis), or the first
        level of every categorical but the first fixed at 0 (identifiable).
    random_state : int or None
        Seed of the differential evolution.
    maxiter : int, optional
        Maximum generations (default: 1000 for "thesis", scipy's default; 300 for "varpro").
    popsize : int, optional
        Population size multiplier, scipy's meaning (default: 15 for "thesis",
        scipy's default; 10 for "varpro", which searches only the powers).
    tol : float, default 0.01
        Relative convergence tolerance of the differential evolution (scipy's default).
    irls_iter : int, default 3
        Reweighted least-squares steps per candidate (varpro engine); the final
        polish uses more.
    search_rows : int or None, default 20000
        The varpro engine's global search and polish use at most this many rows
        (a seeded random subset); the linear parameters and the reported
        objective always use all rows. ``None`` searches on all rows.

    Attributes
    ----------
    params_ : pandas.DataFrame
        Fitted parameters: term, kind, column, level, a, p, q, C.
    coef_ : numpy.ndarray
        Linear parameters (a, κ, C) in the order of ``linear_names_``.
    powers_ : numpy.ndarray
        Powers (p, q) in the order of ``power_names_``.
    objective_ : float
        Final value of the cost (MAE + penalty) on the training data.
    n_iter_ : int
        Generations of differential evolution.
    history_ : list of float
        Best cost after each generation.
    fit_time_ : float
        Wall time of the fit in seconds.
    categories_ : dict
        Levels of each categorical column seen in fit.
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
        tol=0.01,
        irls_iter=3,
        search_rows=20000,
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

    # ------------------------------------------------------------------ setup
    def _settings(self):
        num = column_list("numeric", self.numeric)
        cat = column_list("categorical", self.categorical)
        ext = column_list("extrinsic", self.extrinsic)
        if self.penalty not in _PENALTIES:
            raise ValueError(f"penalty: expected None, 'l1' or 'l2', got {self.penalty!r}")
        try:
            lam = float(self.lam)
        except (TypeError, ValueError):
            raise ValueError(f"lam: expected a number >= 0, got {self.lam!r}") from None
        if not np.isfinite(lam) or lam < 0:
            raise ValueError(f"lam: expected a number >= 0, got {self.lam!r}")
        if self.penalty is None and lam > 0:
            raise ValueError("lam > 0 needs penalty='l1' or 'l2'")
        if self.method not in METHODS:
            raise ValueError(f"method: expected one of {METHODS}, got {self.method!r}")
        if self.coding not in ("thesis", "reference"):
            raise ValueError(f"coding: expected 'thesis' or 'reference', got {self.coding!r}")
        bounds = dict(DEFAULT_BOUNDS)
        for key, val in (self.bounds or {}).items():
            if key not in DEFAULT_BOUNDS:
                raise ValueError(f"bounds: unknown key {key!r}; use a, p, q, C")
            lo, hi = (float(v) for v in val)
            if not lo < hi:
                raise ValueError(f"bounds[{key!r}]: lower {lo} must be below upper {hi}")
            bounds[key] = (lo, hi)
        if not (num or cat):
            raise ValueError("the model needs at least one intrinsic column (numeric or categorical)")
        return num, cat, ext, lam, bounds

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
            Measured times (seconds), one per row of X.

        Returns
        -------
        self
        """
        num, cat, ext, lam, bounds = self._settings()
        validate_frame(X, num, cat, ext)
        y = validate_target(y, X)
        self.numeric_, self.categorical_, self.extrinsic_ = num, cat, ext
        self.categories_ = {c: sorted(X[c].unique().tolist(), key=str) for c in cat}
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
        pow_bounds = [bounds["p"]] * len(num) + [bounds["q"]] * len(ext)
        problem = Problem(*self._encode(X, num, cat, ext), y, (lo, hi), pow_bounds, self.penalty, lam)
        start = time.perf_counter()
        found = ENGINES[self.method](problem, np.random.default_rng(self.random_state), maxiter=self.maxiter,
                                     popsize=self.popsize, tol=self.tol, irls_iter=self.irls_iter,
                                     search_rows=self.search_rows)
        self.fit_time_ = time.perf_counter() - start
        self.coef_ = np.asarray(found.lin, dtype=float)
        self.powers_ = np.asarray(found.powers, dtype=float)
        self.objective_ = float(objective(self.coef_[None], self.powers_[None], problem.design(self.powers_), y,
                                          self.penalty, lam)[0])
        self.n_iter_ = int(found.n_iter)
        self.history_ = found.history
        self.n_features_in_ = len(num) + len(cat) + len(ext)
        return self

    # ---------------------------------------------------------------- predict
    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("GenericPerformanceModel is not fitted yet; call fit first")

    def predict(self, X):
        """Predicted times for the configurations in ``X`` (same columns as in fit)."""
        self._check_fitted()
        validate_frame(X, self.numeric_, self.categorical_, self.extrinsic_, categories=self.categories_)
        log_i, log_e, onehot = self._encode(X, self.numeric_, self.categorical_, self.extrinsic_)
        n_p = len(self.numeric_)
        Phi = design(self.powers_[None, :n_p], self.powers_[None, n_p:], log_i, log_e, onehot)
        return Phi[0] @ self.coef_

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
            File to write; the JSON text is returned either way.
        """
        self._check_fitted()
        doc: dict[str, Any] = {
            "format": "perfkit.GenericPerformanceModel",
            "version": 1,
            "settings": {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.get_params().items()},
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
                "history": self.history_,
            },
        }
        text = json.dumps(doc, indent=1)
        if path is not None:
            from pathlib import Path

            Path(path).write_text(text)
        return text

    @classmethod
    def from_json(cls, source) -> "GenericPerformanceModel":
        """Rebuild a fitted model from :meth:`to_json` output (a JSON string or a file path)."""
        from pathlib import Path

        text = str(source)
        if not text.lstrip().startswith("{"):
            text = Path(source).read_text()
        doc = json.loads(text)
        if doc.get("format") != "perfkit.GenericPerformanceModel":
            raise ValueError("not a perfkit.GenericPerformanceModel JSON document (missing 'format')")
        model = cls(**doc["settings"])
        f = doc["fitted"]
        model.numeric_, model.categorical_, model.extrinsic_ = f["numeric"], f["categorical"], f["extrinsic"]
        model.categories_ = f["categories"]
        model.kept_levels_ = f["kept_levels"]
        model.linear_names_, model.power_names_ = f["linear_names"], f["power_names"]
        model.coef_ = np.asarray(f["coef"], dtype=float)
        model.powers_ = np.asarray(f["powers"], dtype=float)
        model.objective_, model.n_iter_ = f["objective"], f["n_iter"]
        model.fit_time_, model.history_ = f["fit_time"], f["history"]
        model.n_features_in_ = len(model.numeric_) + len(model.categorical_) + len(model.extrinsic_)
        return model


def _jsonable(v):
    if isinstance(v, np.generic):
        return v.item()
    return v
