"""Switched-off terms and undetermined categorical constants, each written one way.

Where the data do not determine a parameter, where a fit leaves it depends on the last bits of the arithmetic.
:func:`canonical` writes a term that adds nothing to any prediction with coefficient 0 and power 0;
:func:`canonical_levels` picks one set of categorical constants among those that give every row the same sum.
Neither changes a prediction beyond its stated tolerance nor raises the objective.
"""
from __future__ import annotations

import numpy as np

from .problem import Problem

__all__ = ["canonical", "canonical_levels", "DEAD_RTOL", "LEVELS_RTOL"]


#: a term whose contribution to every prediction is below this fraction of the mean |y| is switched off
DEAD_RTOL = 1e-9


def canonical(problem: Problem, lin, powers):
    """The fit with switched-off terms written one way: coefficient 0 and, for an intrinsic term, power 0.

    A term whose coefficient has reached its lower bound (a ≈ 0) adds nothing to any prediction, so its
    power is not determined by the data: where the refinement leaves it (at −5, 0 or +5) depends on the
    last bits of the arithmetic. Setting the coefficient to 0 and the power to 0 (or the bound nearest to
    0) changes no prediction by more than :data:`DEAD_RTOL` of the mean |y|, never raises the penalty, and
    makes fits from different seeds and CPUs comparable term by term.
    """
    lin, powers = np.array(lin, float), np.array(powers, float)
    K, n_p = problem.n_linear, problem.n_p
    lo, hi = problem.lin_bounds
    tol = DEAD_RTOL * max(problem.residual_scale(), 1e-300)
    F, T = problem.weighted_terms(lin, powers)
    size = np.concatenate([np.max(np.abs(F[:, None] * T), axis=0) if n_p else np.zeros(0),
                           np.max(np.abs(F[:, None] * problem.onehot), axis=0) if K > n_p + 1 else np.zeros(0)])
    for j in np.flatnonzero(np.abs(lin[:K - 1]) * size < tol):
        if lo[j] <= 0.0 <= hi[j]:
            lin[j] = 0.0
            if j < n_p:
                lo_p, hi_p = problem.pow_bounds[j]
                powers[j] = min(max(0.0, lo_p), hi_p)
    return lin, powers


#: a rewritten set of categorical constants must reproduce every row's sum of constants to this (relative to
#: the largest constant); otherwise the fit's own constants are kept
LEVELS_RTOL = 1e-9


def canonical_levels(problem: Problem, lin):
    """The categorical constants κ written one way where the data do not determine them.

    With a constant for every level of every categorical column (the thesis's coding), only each row's sum of
    constants is determined: raising every level of one column and lowering every level of another by the same
    amount, or, where one column's levels nest inside another's (NVIDIA's variants inside models), moving a
    constant between a model and its variants, changes no prediction. Bounds (κ ≥ 0) block some of these
    directions, not all; where a fit stops along the others depends on the last bits of the arithmetic (the
    CPU), while every prediction is the same. This picks one point of that flat
    set: the linear program min Σₖ wₖκₖ (wₖ = 1 + (k + 1)/(L + 1), rising with the level's position, so a
    constant is carried by the earliest column that can carry it) over the constants that give every training
    row the same sum, inside the bounds and, with an L1 penalty, with the same Σκ. The answer is a vertex,
    recomputed from its free constants by least squares. Nothing changes where the constants are determined (the
    one-hot matrix has full rank, or the flat set is one point), with an L2 penalty (which already picks one
    point), or where the program fails or its answer misses a row's sum by more than :data:`LEVELS_RTOL`.
    """
    lin = np.array(lin, float)
    n_p, L = problem.n_p, problem.onehot.shape[1]
    if L < 2 or (problem.penalty == "l2" and problem.lam > 0):
        return lin
    A = np.unique(problem.onehot, axis=0)
    if np.linalg.matrix_rank(A) == L:
        return lin
    lo, hi = (np.asarray(b, float)[n_p:n_p + L] for b in problem.lin_bounds)
    kappa = lin[n_p:n_p + L]
    A_eq, b_eq = A, A @ kappa
    if problem.penalty == "l1" and problem.lam > 0:
        if np.any(lo < 0):
            return lin
        A_eq, b_eq = np.vstack([A, np.ones(L)]), np.append(b_eq, kappa.sum())
    scale = float(np.max(np.abs(kappa)))
    if not scale > 0:
        return lin
    from scipy.optimize import linprog

    w = 1.0 + np.arange(1, L + 1) / (L + 1)
    res = linprog(w, A_eq=A_eq, b_eq=b_eq / scale, bounds=list(zip(lo / scale, hi / scale)), method="highs")
    if res.status != 0:
        return lin
    z = res.x * scale
    tol = 1e-9 * scale
    at_lo, at_hi = z - lo <= tol, hi - z <= tol
    new = np.where(at_lo, lo, np.where(at_hi, hi, z))
    free = ~(at_lo | at_hi)
    if free.any():
        rest = b_eq - A_eq[:, ~free] @ new[~free]
        new[free] = np.linalg.lstsq(A_eq[:, free], rest, rcond=None)[0]
    if (np.max(np.abs(A_eq @ new - b_eq)) > LEVELS_RTOL * scale or np.any(new < lo - tol)
            or np.any(new > hi + tol)):
        return lin
    lin[n_p:n_p + L] = np.clip(new, lo, hi)
    return lin
