"""The solvers of the log-linear form (:class:`~perfkit.model.forms.loglinear.LogLinearModel`), in log space.

:func:`lasso_mask` picks terms (LassoCV on standardised terms), :func:`hierarchy_closure` keeps the terms a kept
product is made of, :func:`least_squares` refits the kept terms, :func:`ridge` fits every term with per-term
penalties (:func:`ridge_penalties`), and :func:`times_from_log` turns fitted log times into times. Each works on
centred, scaled columns and returns the coefficients of the columns as given.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..persist import jsonable

__all__ = ["CV_FOLDS", "RIDGE_PENALTY", "MAX_PENALTY", "lasso_mask", "hierarchy_closure", "least_squares", "ridge_penalties",
           "ridge", "times_from_log"]

#: folds of the lasso's cross-validation
CV_FOLDS = 5
_RIDGE = 1e-8  # relative ridge of a rank-deficient least-squares fit (on standardised terms)
#: ``select="ridge"``: the default penalties of the level pairs, the pair slopes and the cells, relative to the number
#: of rows, on standardised terms (chosen by 5-fold CV on the fit rows of Lambda's screened benchmarks: docs/forms.md)
RIDGE_PENALTY = (0.01, 0.5, 0.5)
#: ``select="ridge"``: the largest penalty accepted (at 1e6 × the rows a penalised term is already 0 to working
#: precision; a larger one would overflow the normal equations)
MAX_PENALTY = 1e6
#: ``select="ridge"``: the penalty of every other term (powers, levels, products, level slopes, hinges): nearly none
_RIDGE_MAIN = 1e-5
_RIDGE_TIER = {"level_pair": 0, "pair_slope": 1, "level_cell": 2}
#: a lasso coefficient at most this times the largest one (on standardised terms) counts as 0: the term is dropped
_LASSO_ZERO = 1e-8


def lasso_mask(F, z, random_state=0):
    """Boolean mask of the columns of ``F`` that LassoCV keeps, and its alpha (``KFold(CV_FOLDS, shuffle=True,
    random_state)``; coordinate descent on the Gram matrix of the standardised columns: the same path as on the
    columns themselves, several times faster). A coefficient at most 1e-8 times the largest counts as 0: it is zero
    to the solver's precision, and whether coordinate descent leaves it at exactly 0 or at 1e-11 depends on the
    BLAS kernels' rounding, so keeping it would make the kept terms depend on them."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LassoCV
    from sklearn.model_selection import KFold

    mean, scale = F.mean(axis=0), F.std(axis=0)
    scale[scale == 0] = 1.0
    cv = KFold(CV_FOLDS, shuffle=True, random_state=int(random_state))
    lasso = LassoCV(cv=cv, max_iter=20000, tol=1e-6, selection="cyclic", random_state=int(random_state),
                    precompute=True)
    with warnings.catch_warnings():
        # the smallest alphas of the path may stop short of the tolerance; the chosen alpha is refitted
        warnings.simplefilter("ignore", ConvergenceWarning)
        lasso.fit((F - mean) / scale, z)
    coef = np.abs(lasso.coef_)
    return coef > _LASSO_ZERO * max(float(coef.max(initial=0.0)), np.finfo(float).tiny), float(lasso.alpha_)


def hierarchy_closure(specs, keep):
    """Close a selection under hierarchy: a kept product term keeps the terms it is made of."""
    keep = np.array(keep, dtype=bool)
    index = {s: i for i, s in enumerate(specs)}
    for i in reversed(range(len(specs))):  # a term's parents come before it: the last closes first
        if keep[i]:
            for p in specs[i].parents():
                keep[index[p]] = True
    return keep


def least_squares(F, z):
    """Intercept and coefficients of z ~ 1 + F by least squares on centred, scaled columns.

    When the columns are linearly dependent (rank below their number) a ridge of
    1e-8 times the number of rows (on the standardised columns, whose squared norm
    is the number of rows) picks one solution.
    """
    n, p = F.shape
    if p == 0:
        return float(np.mean(z)), np.zeros(0)
    mean, scale = F.mean(axis=0), F.std(axis=0)
    scale[scale == 0] = 1.0
    Z = (F - mean) / scale
    zc = z - z.mean()
    beta, _, rank, _ = np.linalg.lstsq(Z, zc, rcond=None)
    if rank < p:
        beta = np.linalg.solve(Z.T @ Z + _RIDGE * n * np.eye(p), Z.T @ zc)
    coef = beta / scale
    return float(z.mean() - mean @ coef), coef


def ridge_penalties(specs, penalty) -> np.ndarray:
    """Per term, its ridge penalty: ``penalty[tier]`` for the level pairs (0), pair slopes (1) and cells (2), a
    negligible one for every other term."""
    return np.array([float(penalty[_RIDGE_TIER[t.kind]]) if t.kind in _RIDGE_TIER else _RIDGE_MAIN for t in specs])


def ridge(F, z, penalties):
    """Intercept, coefficients and effective degrees of freedom of z ~ 1 + F by ridge regression on centred, scaled
    columns with penalty ``penalties · n`` per column: β = A⁻¹Zᵀ(z − z̄), A = ZᵀZ + diag(penalties·n) (a Cholesky
    solve: A is positive definite for penalties > 0). The effective degrees of freedom are trace(A⁻¹ZᵀZ), the
    trace of the hat matrix (the intercept not counted)."""
    from scipy.linalg import cho_factor, cho_solve

    n, p = F.shape
    if p == 0:
        return float(np.mean(z)), np.zeros(0), 0.0
    mean, scale = F.mean(axis=0), F.std(axis=0)
    scale[scale == 0] = 1.0
    Z = (F - mean) / scale
    G = Z.T @ Z
    try:
        factor = cho_factor(G + np.diag(np.asarray(penalties, dtype=float) * n))
    except np.linalg.LinAlgError:
        raise ValueError("penalty: a penalty of 0 leaves the level pairs, pair slopes or cells undetermined on these "
                         "rows (their columns repeat the other terms'); give penalties > 0") from None
    beta = cho_solve(factor, Z.T @ (z - z.mean()))
    df = float(np.trace(cho_solve(factor, G)))
    coef = beta / scale
    return float(z.mean() - mean @ coef), coef, df


def times_from_log(eta, X) -> np.ndarray:
    """exp(``eta``), the times of a form fitted in log space; a row whose time is not a finite number > 0 (its log
    overflows or underflows) is one ``ValueError`` naming the row of ``X``."""
    eta = np.asarray(eta, dtype=float)
    with np.errstate(all="ignore"):
        pred = np.exp(eta)
    bad = ~(np.isfinite(pred) & (pred > 0))
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise ValueError(f"X: the prediction for row {jsonable(X.index[pos])!r} is not a finite time > 0 (log t = "
                         f"{eta[pos]:g}): its column values are far outside the fitted range")
    return pred
