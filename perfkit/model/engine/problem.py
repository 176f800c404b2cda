"""One fit of the generic performance model as the engines see it: the encoded data and the exact objective.

:class:`Problem` holds one fit's encoded data (log intrinsic and extrinsic values, one-hot levels, measured
times), its bounds, its penalty and its row weights. For given powers (p, q) the model is linear in (a, κ, C):
:func:`design` builds the design matrix ``[F·I^p, F·onehot, 1]`` with ``F = Π E^q``, :func:`objective` is
eq. 4.9 plus the penalty of eqs. 4.11-4.12 and :func:`solve_linear` finds the linear parameters for fixed
powers. Every function is batched over a population of candidates (leading axis P).

Two options of the thesis form, both off by default (``None``: exactly the code path without them):

* ``lam_powers``: the powers (p, q) get their own strength, the penalty is λ·R(a, κ) + λ_p·R(p, q) (the
  thesis's Chapter 6 future work); ``None`` is λ_p = λ. :func:`solve_linear` sees only the linear part and
  uses λ.
* ``weights``: row weights w of the absolute errors, mean w·|y − ŷ|; the relative-error loss is w = 1/y. For
  fixed powers this is the same linear problem on rows scaled by w (:func:`solve_linear` solves it so), and
  the refinement's residuals are w·(y − ŷ).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .kernel_rows import distinct, hot_index

__all__ = ["Problem", "EngineResult", "design", "penalty_value", "objective", "solve_linear", "ACTIVE_SET_PASSES"]


@dataclass
class Problem:
    """One fit: encoded data, bounds, penalty and row weights.

    ``log_i`` (N, n_p) and ``log_e`` (N, n_q) are the logs of the numeric and
    extrinsic columns, ``onehot`` (N, levels) the categorical levels kept, ``y``
    (N,) the measured times; ``lin_bounds`` = (lower, upper) arrays of the K linear
    parameters (C last), ``pow_bounds`` one (lower, upper) pair per power.
    ``lam`` is λ of (a, κ), ``lam_powers`` λ of (p, q) (None: ``lam``); ``weights``
    (N,) weight each row's absolute error (None: 1; 1/y gives the relative error).
    """

    log_i: np.ndarray
    log_e: np.ndarray
    onehot: np.ndarray
    y: np.ndarray
    lin_bounds: tuple
    pow_bounds: list
    penalty: str | None = None
    lam: float = 0.0
    lam_powers: float | None = None
    weights: np.ndarray | None = None

    @property
    def n_p(self) -> int:
        return self.log_i.shape[1]

    @property
    def n_linear(self) -> int:
        return len(self.lin_bounds[0])

    def rows(self, index) -> "Problem":
        """The same problem on a subset of rows."""
        return Problem(self.log_i[index], self.log_e[index], self.onehot[index], self.y[index], self.lin_bounds,
                       self.pow_bounds, self.penalty, self.lam, self.lam_powers,
                       None if self.weights is None else self.weights[index])

    def design(self, powers) -> np.ndarray:
        pw = np.atleast_2d(powers)
        return design(pw[:, :self.n_p], pw[:, self.n_p:], self.log_i, self.log_e, self.onehot)

    def arrays(self) -> dict:
        """The rows as the search cost and the refinement read them, made once per problem: contiguous float
        ``L`` (log_i), ``E`` (log_e), ``y`` and ``w`` (row weights, 1 without), and for the compiled kernels
        (:mod:`perfkit.model.engine._kernels`) ``hot`` (each row's one-hot columns,
        :func:`~perfkit.model.engine.kernel_rows.hot_index`) and ``tables`` (distinct values,
        :func:`~perfkit.model.engine.kernel_rows.distinct`)."""
        cached = self.__dict__.get("_arrays")
        if cached is None:
            L, E = np.ascontiguousarray(self.log_i, float), np.ascontiguousarray(self.log_e, float)
            cached = dict(L=L, E=E, y=np.ascontiguousarray(self.y, float),
                          w=np.ones(len(self.y)) if self.weights is None else np.ascontiguousarray(self.weights, float),
                          hot=hot_index(np.asarray(self.onehot, float)), tables=distinct(L, E))
            self.__dict__["_arrays"] = cached
        return cached

    def residual_scale(self) -> float:
        """Mean |y| (of the weighted rows, w·y, when the problem has row weights): the size of a residual."""
        y = self.y if self.weights is None else self.weights * self.y
        return float(np.mean(np.abs(y)))

    def penalised_entries(self, size: int):
        """``(index, lam)``: the penalised entries of x = (a, κ, C, p, q) (``size`` entries), C never, and each
        one's λ."""
        K = self.n_linear
        if self.lam_powers is None:
            if self.penalty is None or self.lam <= 0:
                return np.zeros(0, dtype=int), np.zeros(0)
            index = np.delete(np.arange(size), K - 1)  # C is not penalised
            return index, np.full(len(index), self.lam)
        if self.penalty is None:
            return np.zeros(0, dtype=int), np.zeros(0)
        lams = np.where(np.arange(size) < K, self.lam, self.lam_powers)
        index = np.flatnonzero((lams > 0) & (np.arange(size) != K - 1))
        return index, lams[index]

    def unpack(self, x):
        """Split ``x`` = (a, κ, C, p, q): ``(b, F, T, inner)`` with b = (a, κ, C), F = Π E^q, T = I^p and the
        intrinsic sum T·a + onehot·κ."""
        K, n_p = self.n_linear, self.n_p
        b, pw = x[:K], x[K:]
        p, q = pw[:n_p], pw[n_p:]
        n = len(self.y)
        F = np.exp(self.log_e @ q) if q.size else np.ones(n)
        T = np.exp(self.log_i * p) if n_p else np.zeros((n, 0))
        inner = T @ b[:n_p] + self.onehot @ b[n_p:K - 1]
        return b, F, T, inner

    def weighted_terms(self, lin, powers):
        """``(F, T)`` of :meth:`unpack`, F times the row weights (if any): a term's contribution to the weighted
        residuals, the rows :meth:`residual_scale` measures, is coef × F × T (or × the one-hot column)."""
        _, F, T, _ = self.unpack(np.concatenate([lin, powers]))
        return (F if self.weights is None else F * self.weights), T

    def solve(self, Phi, n_iter):
        """:func:`solve_linear` with the problem's penalty and row weights."""
        return solve_linear(Phi, self.y, self.lin_bounds, self.penalty, self.lam, n_iter=n_iter,
                            weights=self.weights)

    def cost(self, lin, powers, Phi):
        """:func:`objective` with the problem's penalty (both λ) and row weights."""
        return objective(lin, powers, Phi, self.y, self.penalty, self.lam, self.lam_powers, self.weights)

    def exact(self, lin, powers) -> float:
        """The exact objective (:meth:`cost`) of one fit ``(lin, powers)`` on every row."""
        pw = np.atleast_2d(powers)
        return float(self.cost(np.atleast_2d(lin), pw, self.design(pw))[0])


@dataclass
class EngineResult:
    """What an engine found: linear parameters (a, κ, C), powers (p, q), generations and per-generation best cost."""

    lin: np.ndarray
    powers: np.ndarray
    n_iter: int
    history: list = field(default_factory=list)
    converged: bool | None = None  # the local refinement met its tolerance (None: no refinement was run)
    message: str = ""


def design(p, q, log_i, log_e, onehot):
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


def penalty_value(lin, powers, penalty, lam, lam_powers=None):
    """λ·R(a, κ) + λ_p·R(p, q), C excluded, with R = Σ|x| (l1) or Σx² (l2). lin: (P, K) with C last;
    powers: (P, D). ``lam_powers`` None (or equal to ``lam``) is λ_p = λ: one sum λ·R(x) over x = (a, κ, p, q)."""
    if lam_powers is None or lam_powers == lam:
        if penalty is None or lam == 0:
            return np.zeros(lin.shape[0])
        x = np.concatenate([lin[:, :-1], powers], axis=1)
        r = np.abs(x).sum(axis=1) if penalty == "l1" else (x**2).sum(axis=1)
        return lam * r
    if penalty is None:
        return np.zeros(lin.shape[0])

    def r(x):
        return np.abs(x).sum(axis=1) if penalty == "l1" else (x**2).sum(axis=1)

    return lam * r(lin[:, :-1]) + lam_powers * r(powers)


def objective(lin, powers, Phi, y, penalty, lam, lam_powers=None, weights=None):
    """Mean absolute error (eq. 4.9) plus the penalty, for each candidate of the population.

    ``weights`` (N,): the mean of weights·|y − ŷ| instead (1/y: the mean relative error); None: eq. 4.9.
    ``lam_powers``: λ of the powers (see :func:`penalty_value`).
    """
    pred = np.matmul(Phi, lin[:, :, None])[:, :, 0]
    err = np.abs(y[None, :] - pred)
    if weights is not None:
        err = err * np.asarray(weights, float)[None, :]
    return np.mean(err, axis=1) + penalty_value(lin, powers, penalty, lam, lam_powers)


#: active-set passes per reweighted solve of :func:`solve_linear`
ACTIVE_SET_PASSES = 4


def solve_linear(Phi, y, lin_bounds, penalty, lam, lin0=None, n_iter=6, passes=ACTIVE_SET_PASSES, weights=None):
    """IRLS for min mean|y - Phi b| + penalty with b inside its bounds; batched over candidates.

    The penalty is λ·R over the linear parameters but C (the powers are fixed here, so a separate λ of the
    powers plays no part). ``weights`` (N,) minimise mean w·|y - Phi b| instead: the same problem on the
    rows of ``Phi`` and ``y`` scaled by w (None: unweighted).

    Each reweighted least-squares problem is solved with the bounds (:func:`_bounded_solve`); its weights are
    1 / (2·max(|r|, ε)) of the last solution's residuals r.
    """
    if weights is not None:  # w·|y - Phi b| = |w·y - (w·Phi) b|
        w_rows = np.asarray(weights, float)
        Phi = Phi * w_rows[None, :, None]
        y = np.asarray(y, float) * w_rows
    P, N, K = Phi.shape
    lo = np.broadcast_to(np.asarray(lin_bounds[0], float), (P, K))
    hi = np.broadcast_to(np.asarray(lin_bounds[1], float), (P, K))
    pen = np.ones(K)
    pen[-1] = 0.0  # C is not penalised
    eye = np.eye(K)[None]
    w = np.ones((P, N))
    b = lin0
    eps = 1e-6 * max(float(np.mean(np.abs(y))), 1e-12)
    at_lo = np.zeros((P, K), bool)
    at_hi = np.zeros((P, K), bool)
    for _ in range(n_iter):
        PwT = Phi.transpose(0, 2, 1) * w[:, None, :]  # (P, K, N)
        A = np.matmul(PwT, Phi) / N
        rhs = np.matmul(PwT, y) / N
        scale = np.trace(A, axis1=1, axis2=2) / K
        reg = 1e-9 * scale[:, None] * np.ones(K)
        if penalty == "l2" and lam > 0:
            reg = reg + 2.0 * lam * pen  # d/db of λ b²; loss scaled as Σ w r² / (2N)
        elif penalty == "l1" and lam > 0 and b is not None:
            reg = reg + lam * pen / np.maximum(np.abs(b), 1e-8)
        A = A + reg[:, :, None] * eye
        b = _bounded_solve(A, rhs, lo, hi, at_lo, at_hi, passes, b)
        b = np.clip(b, lo, hi)
        r = y[None, :] - np.matmul(Phi, b[:, :, None])[:, :, 0]
        w = 1.0 / (2.0 * np.maximum(np.abs(r), eps))
    return b


def _bounded_solve(A, rhs, lo, hi, at_lo, at_hi, passes, b):
    """Solve A b = rhs inside [lo, hi] by a few passes of an active set (batched over candidates): parameters
    that leave their bounds are fixed at them and the rest solved again; a fixed parameter whose gradient points
    back inside is released. ``at_lo``/``at_hi`` (the active set) are updated in place and carry over to the next
    reweighted solve; ``b`` (the last solution) is returned where no pass runs."""
    P, K = rhs.shape
    eye = np.eye(K)[None]
    for _pass in range(passes):
        act = at_lo | at_hi
        fixed = np.where(at_lo, lo, np.where(at_hi, hi, 0.0))
        M = np.where(act[:, :, None] | act[:, None, :], 0.0, A) + act[:, :, None] * eye
        r = np.where(act, fixed, rhs - np.matmul(A, fixed[:, :, None])[:, :, 0])
        try:
            b = np.linalg.solve(M, r[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:
            b = np.stack([np.linalg.lstsq(M[i], r[i], rcond=None)[0] for i in range(P)])
        grad = np.matmul(A, b[:, :, None])[:, :, 0] - rhs
        release = (at_lo & (grad < 0)) | (at_hi & (grad > 0))
        new_lo, new_hi = ~act & (b < lo), ~act & (b > hi)
        if not (release.any() or new_lo.any() or new_hi.any()):
            break
        at_lo[...] = (at_lo & ~release) | new_lo
        at_hi[...] = (at_hi & ~release) | new_hi
    return b
