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

from .dataset import column_list, validate_frame, validate_target

__all__ = ["GenericPerformanceModel", "DEFAULT_BOUNDS", "METHODS"]

#: default parameter bounds (thesis §4.1.1): a, κ and C in [0, 1000]; p and q in [-5, 5]
DEFAULT_BOUNDS = {"a": (0.0, 1000.0), "C": (0.0, 1000.0), "p": (-5.0, 5.0), "q": (-5.0, 5.0)}
METHODS = ("varpro", "thesis")
_PENALTIES = (None, "l1", "l2")
_CHUNK_BYTES = 500_000  # design-matrix bytes per chunk of candidates (keeps the batch in cache)


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

    # ------------------------------------------------------------ evaluation
    @staticmethod
    def _design(p, q, log_i, log_e, onehot):
        """Design matrices for a population of powers: (P, N, K) with columns [F·I^p, F·onehot, 1]."""
        P = p.shape[0]
        n = log_i.shape[0] if log_i.size else onehot.shape[0]
        F = np.exp(log_e @ q.T).T if q.shape[1] else np.ones((P, n))  # (P, N)
        cols = []
        if p.shape[1]:
            cols.append(F[:, :, None] * np.exp(log_i[None, :, :] * p[:, None, :]))
        if onehot.shape[1]:
            cols.append(F[:, :, None] * onehot[None, :, :])
        cols.append(np.ones((P, n, 1)))
        return np.concatenate(cols, axis=2)

    def _penalty_value(self, lin, powers):
        """λ·R(x) over x = (a, κ, p, q), C excluded. lin: (P, K) with C last; powers: (P, D)."""
        if self.penalty is None or self._lam == 0:
            return np.zeros(lin.shape[0])
        x = np.concatenate([lin[:, :-1], powers], axis=1)
        r = np.abs(x).sum(axis=1) if self.penalty == "l1" else (x**2).sum(axis=1)
        return self._lam * r

    def _solve_linear(self, Phi, y, lin0=None, n_iter=6):
        """IRLS for min mean|y - Phi b| + penalty, b clipped to bounds; batched over candidates."""
        P, N, K = Phi.shape
        lo, hi = self._lin_bounds
        pen = np.ones(K)
        pen[-1] = 0.0  # C is not penalised
        w = np.ones((P, N))
        b = lin0
        eps = 1e-6 * max(float(np.mean(np.abs(y))), 1e-12)
        for _ in range(n_iter):
            PwT = Phi.transpose(0, 2, 1) * w[:, None, :]  # (P, K, N)
            A = np.matmul(PwT, Phi) / N
            rhs = np.matmul(PwT, y) / N
            scale = np.trace(A, axis1=1, axis2=2) / K
            reg = 1e-9 * scale[:, None] * np.ones(K)
            if self.penalty == "l2" and self._lam > 0:
                reg = reg + 2.0 * self._lam * pen  # d/db of λ b²; loss scaled as Σ w r² / (2N)
            elif self.penalty == "l1" and self._lam > 0 and b is not None:
                reg = reg + self._lam * pen / np.maximum(np.abs(b), 1e-8)
            A = A + reg[:, :, None] * np.eye(K)[None]
            try:
                b = np.linalg.solve(A, rhs[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                b = np.stack([np.linalg.lstsq(A[i], rhs[i], rcond=None)[0] for i in range(P)])
            b = np.clip(b, lo, hi)
            r = y[None, :] - np.matmul(Phi, b[:, :, None])[:, :, 0]
            w = 1.0 / (2.0 * np.maximum(np.abs(r), eps))
        return b

    def _objective(self, lin, powers, Phi, y):
        pred = np.matmul(Phi, lin[:, :, None])[:, :, 0]
        return np.mean(np.abs(y[None, :] - pred), axis=1) + self._penalty_value(lin, powers)

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
        from scipy.optimize import differential_evolution

        num, cat, ext, lam, bounds = self._settings()
        self._lam = lam
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
        self._lin_bounds = (lo, hi)
        pow_bounds = [bounds["p"]] * len(num) + [bounds["q"]] * len(ext)
        log_i, log_e, onehot = self._encode(X, num, cat, ext)
        n_p = len(num)
        rng = np.random.default_rng(self.random_state)
        history: list[float] = []

        def record(intermediate_result):
            history.append(float(intermediate_result.fun))

        start = time.perf_counter()
        if self.method == "thesis":
            all_bounds = [(lo[i], hi[i]) for i in range(K)] + pow_bounds

            def cost(x):
                lin, pw = x[None, :K], x[None, K:]
                Phi = self._design(pw[:, :n_p], pw[:, n_p:], log_i, log_e, onehot)
                return float(self._objective(lin, pw, Phi, y)[0])

            res = differential_evolution(cost, all_bounds, seed=rng, callback=record,
                                         maxiter=self.maxiter or 1000, popsize=self.popsize or 15, tol=self.tol)
            lin, powers = res.x[:K], res.x[K:]
            n_iter = res.nit
        else:
            n_rows = len(X)
            if self.search_rows is not None and n_rows > int(self.search_rows):
                rows = np.sort(rng.choice(n_rows, size=int(self.search_rows), replace=False))
                s_log_i, s_log_e, s_onehot, s_y = log_i[rows], log_e[rows], onehot[rows], y[rows]
            else:
                s_log_i, s_log_e, s_onehot, s_y = log_i, log_e, onehot, y
            if not pow_bounds:  # nothing nonlinear: one linear solve
                res_x = np.zeros(0)
                n_iter = 0
            else:
                chunk = max(1, int(_CHUNK_BYTES // (8 * len(s_y) * K)))

                def cost(pw_t):  # (D, S) -> (S,), evaluated in cache-sized chunks of candidates
                    pw_all = np.atleast_2d(pw_t.T)
                    out = np.empty(pw_all.shape[0])
                    for s0 in range(0, pw_all.shape[0], chunk):
                        pw = pw_all[s0:s0 + chunk]
                        Phi = self._design(pw[:, :n_p], pw[:, n_p:], s_log_i, s_log_e, s_onehot)
                        lin = self._solve_linear(Phi, s_y, n_iter=self.irls_iter)
                        out[s0:s0 + chunk] = self._objective(lin, pw, Phi, s_y)
                    return out

                res = differential_evolution(cost, pow_bounds, seed=rng, callback=record, vectorized=True,
                                             updating="deferred", polish=False, maxiter=self.maxiter or 300,
                                             popsize=self.popsize or 10, tol=self.tol)
                res_x, n_iter = res.x, res.nit
            powers = self._polish(res_x, s_y, s_log_i, s_log_e, s_onehot, n_p, pow_bounds)
            lin = self._linear_for(powers, y, log_i, log_e, onehot, n_p)
        self.fit_time_ = time.perf_counter() - start
        self.coef_ = np.asarray(lin, dtype=float)
        self.powers_ = np.asarray(powers, dtype=float)
        Phi = self._design(self.powers_[None, :n_p], self.powers_[None, n_p:], log_i, log_e, onehot)
        self.objective_ = float(self._objective(self.coef_[None], self.powers_[None], Phi, y)[0])
        self.n_iter_ = int(n_iter)
        self.history_ = history
        self.n_features_in_ = len(num) + len(cat) + len(ext)
        return self

    def _linear_for(self, powers, y, log_i, log_e, onehot, n_p):
        """Best linear parameters for fixed powers on all rows (the lower-objective of two IRLS lengths)."""
        pw = np.atleast_2d(powers)
        Phi = self._design(pw[:, :n_p], pw[:, n_p:], log_i, log_e, onehot)
        cands = [self._solve_linear(Phi, y, n_iter=k * self.irls_iter) for k in (3, 5)]
        objs = [self._objective(c, pw, Phi, y)[0] for c in cands]
        return cands[int(np.argmin(objs))][0]

    def _polish(self, powers, y, log_i, log_e, onehot, n_p, pow_bounds):
        """Refine the best powers with Powell's method on the profiled cost."""
        from scipy.optimize import minimize

        def profile(pw):
            pw = np.atleast_2d(pw)
            Phi = self._design(pw[:, :n_p], pw[:, n_p:], log_i, log_e, onehot)
            lin = self._solve_linear(Phi, y, n_iter=3 * self.irls_iter)
            return float(self._objective(lin, pw, Phi, y)[0])

        if powers.size:
            res = minimize(profile, powers, method="Powell", bounds=pow_bounds,
                           options={"maxfev": 400, "xtol": 1e-4, "ftol": 1e-7})
            if res.fun < profile(powers):
                powers = res.x
        return powers

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
        Phi = self._design(self.powers_[None, :n_p], self.powers_[None, n_p:], log_i, log_e, onehot)
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
