"""The fitting engines of the generic performance model, as plain functions.

:class:`Problem` holds one fit's encoded data (log intrinsic and extrinsic values,
one-hot levels, measured times), its bounds, its penalty and its row weights. For
given powers (p, q) the model is linear in (a, κ, C): :func:`design` builds the
design matrix ``[F·I^p, F·onehot, 1]`` with ``F = Π E^q``, :func:`objective` is
eq. 4.9 plus the penalty of eqs. 4.11-4.12 and :func:`solve_linear` finds the
linear parameters for fixed powers. Every function is batched over a population
of candidates (leading axis P).

Two options of the thesis form, both off by default (``None``: exactly the code
path without them):

* ``lam_powers``: the powers (p, q) get their own strength, the penalty is
  λ·R(a, κ) + λ_p·R(p, q) (the thesis's Chapter 6 future work); ``None`` is λ_p = λ.
  :func:`solve_linear` sees only the linear part and uses λ.
* ``weights``: row weights w of the absolute errors, mean w·|y − ŷ|; the
  relative-error loss is w = 1/y. For fixed powers this is the same linear
  problem on rows scaled by w (:func:`solve_linear` solves it so), and the
  refinement's residuals are w·(y − ŷ).

Engines (:data:`ENGINES`) take a :class:`Problem` and a seed generator and return
an :class:`EngineResult`:

``thesis``
    :func:`scipy.optimize.differential_evolution` with its default settings on a
    scalar cost over all parameters, as the thesis did.
``varpro``
    Variable projection: differential evolution over the powers only, on a subset of rows
    (:data:`SEARCH_DEFAULTS`), the whole population evaluated at once (:class:`SearchCost`,
    compiled where numba is available), each candidate's linear part from a few
    iteratively reweighted least-squares steps (each solved inside the bounds); then
    :func:`refine` (the primal–dual Newton method of :mod:`perfkit.model.newton`) of every
    parameter together on all rows from the best few distinct members of the final
    population, the lowest exact objective kept; then every switched-off intrinsic term
    (with L1, also every term the smoothed penalty left stuck near 0, :func:`_stuck_terms`)
    tried on again at either power bound and from a scan of its power, every small live
    term's power re-scanned (:func:`_switched_on`, each start refined along two
    continuation paths) and every small live one held off (:func:`_switched_off`), round
    after round until a round gains nothing (:data:`HOP_RTOL`), and :func:`canonical`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

__all__ = ["Problem", "EngineResult", "ENGINES", "design", "penalty_value", "objective", "solve_linear",
           "fit_thesis", "fit_varpro", "CHUNK_BYTES", "REFINE_STAGES", "refine", "SEARCH_DEFAULTS"]

CHUNK_BYTES = 500_000  # design-matrix bytes per chunk of candidates (keeps the batch in cache)


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
        (:mod:`perfkit.model._kernels`) ``hot`` (each row's one-hot columns, :func:`~perfkit.model._kernels.hot_index`)
        and ``tables`` (distinct values, :func:`~perfkit.model._kernels.distinct`)."""
        cached = self.__dict__.get("_arrays")
        if cached is None:
            from . import _kernels

            L, E = np.ascontiguousarray(self.log_i, float), np.ascontiguousarray(self.log_e, float)
            cached = dict(L=L, E=E, y=np.ascontiguousarray(self.y, float),
                          w=np.ones(len(self.y)) if self.weights is None else np.ascontiguousarray(self.weights, float),
                          hot=_kernels.hot_index(np.asarray(self.onehot, float)), tables=_kernels.distinct(L, E))
            self.__dict__["_arrays"] = cached
        return cached


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

    Each reweighted least-squares problem is solved with the bounds, by a few passes of an active
    set: parameters that leave their bounds are fixed at them and the rest solved again; a fixed
    parameter whose gradient points back inside is released. (Solving without the bounds and
    clipping, as before, is not the bounded solution when several constants sit at 0, and the
    search then saw a landscape 4-10 % above the objective, ranking basins wrongly.)
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
            at_lo = (at_lo & ~release) | new_lo
            at_hi = (at_hi & ~release) | new_hi
        b = np.clip(b, lo, hi)
        r = y[None, :] - np.matmul(Phi, b[:, :, None])[:, :, 0]
        w = 1.0 / (2.0 * np.maximum(np.abs(r), eps))
    return b


def _engine_args(maxiter, popsize, tol, irls_iter=1, search_rows=None, n_starts=1):
    """Check the engine settings: one clear ``ValueError`` naming the bad one (no silent fallback to a default).

    ``maxiter``, ``popsize`` and ``tol`` are None (the engine's default) or, for the first two,
    integers >= 1 and, for ``tol``, a finite number > 0; ``irls_iter`` an integer >= 1; ``search_rows``
    None (all rows) or an integer >= 1; ``n_starts`` an integer >= 1.
    """
    from .validation import check_int, check_number

    check_int("maxiter", maxiter, allow_none=True)
    check_int("popsize", popsize, allow_none=True)
    if tol is not None:
        check_number("tol", tol, positive=True)
    check_int("irls_iter", irls_iter)
    check_int("search_rows", search_rows, allow_none=True)
    check_int("n_starts", n_starts)


def _recorder(history: list):
    """A differential-evolution callback that appends the best cost of each generation to ``history``."""

    def record(intermediate_result):  # scipy passes an OptimizeResult to a callback with this parameter name
        history.append(float(intermediate_result.fun))

    return record


def fit_thesis(problem: Problem, rng, *, maxiter=None, popsize=None, tol=None, **_) -> EngineResult:
    """The thesis's engine: scipy's differential evolution (default settings) over every parameter."""
    from scipy.optimize import differential_evolution

    _engine_args(maxiter, popsize, tol)
    pb = problem
    K, n_p = pb.n_linear, pb.n_p
    lo, hi = pb.lin_bounds
    history: list[float] = []
    all_bounds = [(lo[i], hi[i]) for i in range(K)] + list(pb.pow_bounds)

    def cost(x):
        lin, pw = x[None, :K], x[None, K:]
        Phi = design(pw[:, :n_p], pw[:, n_p:], pb.log_i, pb.log_e, pb.onehot)
        return float(_cost(pb, lin, pw, Phi)[0])

    res = differential_evolution(cost, all_bounds, seed=rng, callback=_recorder(history),
                                 maxiter=1000 if maxiter is None else int(maxiter),
                                 popsize=15 if popsize is None else int(popsize),
                                 tol=0.01 if tol is None else float(tol))
    return EngineResult(res.x[:K], res.x[K:], res.nit, history)


def _solve(problem: Problem, Phi, n_iter):
    """:func:`solve_linear` with the problem's penalty and row weights."""
    return solve_linear(Phi, problem.y, problem.lin_bounds, problem.penalty, problem.lam, n_iter=n_iter,
                        weights=problem.weights)


def _cost(problem: Problem, lin, powers, Phi):
    """:func:`objective` with the problem's penalty (both λ) and row weights."""
    return objective(lin, powers, Phi, problem.y, problem.penalty, problem.lam, problem.lam_powers, problem.weights)


def _linear_for(problem: Problem, powers, irls_iter):
    """Best linear parameters for fixed powers on all rows (the lower-objective of two IRLS lengths)."""
    cost = SearchCost(problem, irls_iter)
    cands = [cost.solve(np.atleast_2d(powers), k * irls_iter) for k in (3, 5)]
    return min(cands, key=lambda c: c[1][0])[0][0]


def _polish(problem: Problem, powers, irls_iter):
    """Refine the best powers with Powell's method on the profiled cost."""
    from scipy.optimize import minimize

    def profile(pw):
        pw = np.atleast_2d(pw)
        Phi = problem.design(pw)
        lin = _solve(problem, Phi, 3 * irls_iter)
        return float(_cost(problem, lin, pw, Phi)[0])

    if powers.size:
        res = minimize(profile, powers, method="Powell", bounds=problem.pow_bounds,
                       options={"maxfev": 400, "xtol": 1e-4, "ftol": 1e-7})
        if res.fun < profile(powers):
            powers = res.x
    return powers


#: smoothing widths of the refinement's continuation, relative to the mean |y| (the last one is below any
#: resolution the MAE can see: the smoothed and the exact objective then agree to about 1e-7 relative)
REFINE_STAGES = (1e-2, 1e-4, 1e-6)


def _unpack(x, problem: Problem):
    """Split ``x`` = (a, κ, C, p, q) and compute F = Π E^q, T = I^p and the intrinsic sum."""
    pb = problem
    K, n_p = pb.n_linear, pb.n_p
    b, pw = x[:K], x[K:]
    p, q = pw[:n_p], pw[n_p:]
    n = len(pb.y)
    F = np.exp(pb.log_e @ q) if q.size else np.ones(n)
    T = np.exp(pb.log_i * p) if n_p else np.zeros((n, 0))
    inner = T @ b[:n_p] + pb.onehot @ b[n_p:K - 1]
    return b, F, T, inner


def _penalised(problem: Problem, size: int):
    """``(index, lam)``: the penalised entries of x = (a, κ, C, p, q), C never, and each one's λ."""
    K = problem.n_linear
    if problem.lam_powers is None:
        if problem.penalty is None or problem.lam <= 0:
            return np.zeros(0, dtype=int), np.zeros(0)
        index = np.delete(np.arange(size), K - 1)  # C is not penalised
        return index, np.full(len(index), problem.lam)
    if problem.penalty is None:
        return np.zeros(0, dtype=int), np.zeros(0)
    lams = np.where(np.arange(size) < K, problem.lam, problem.lam_powers)
    index = np.flatnonzero((lams > 0) & (np.arange(size) != K - 1))
    return index, lams[index]


def _scale(problem: Problem) -> float:
    """Mean |y| (of the weighted rows, w·y, when the problem has row weights): the size of a residual."""
    y = problem.y if problem.weights is None else problem.weights * problem.y
    return float(np.mean(np.abs(y)))


def refine(problem: Problem, lin, powers, stages=REFINE_STAGES, tol=None):
    """Refine every parameter together on the smoothed objective, δ shrinking over ``stages``.

    The global search only finds the right basin: its linear parameters come from a few reweighted
    least-squares steps, and the landscape it sees (on a subset of rows) is not the objective's. Refining
    powers and linear parameters jointly, then narrowing the smoothing, reaches the bottom of the basin, so
    fits from different seeds, and on different CPUs, agree. The method is the bounded primal–dual Newton
    method of :mod:`perfkit.model.newton` on the exact Hessian of the smoothed objective.

    Returns ``(lin, powers, converged, message)``; ``converged`` is whether the last stage met its step
    tolerance (``tol``; None: :data:`perfkit.model.newton.STEP_TOL`) rather than its iteration cap.
    """
    from .newton import STEP_TOL
    from .newton import refine as newton_refine

    return newton_refine(problem, lin, powers, stages, STEP_TOL if tol is None else tol)


#: starts refined per fit: the search's best and the next distinct members of its final population
N_STARTS = 4


#: the varpro search's default relative tolerance (scipy's 0.01 stopped it while a tenth of its population
#: was still in other basins: on Table 4.2's data 4 of 10 seeds then ended 0.4 % above the best objective)
VARPRO_TOL = 1e-3


#: the varpro search's defaults: generations, population size per power, rows searched (a seeded subset). The
#: search only has to put the refinement's starts into the right basins; the refinement, on all rows, and the
#: switched-on/off rounds find the bottom (on Chapter 4's fits 300 rows and 60 generations reach the optimum
#: of 300 generations on 20 000 rows; ``tests/test_convergence.py``)
SEARCH_DEFAULTS = {"maxiter": 60, "popsize": 5, "search_rows": 300}


class SearchCost:
    """The search's cost of a population, (D, S) → (S,): for each candidate's powers, the linear part by
    :func:`solve_linear` (``irls_iter`` reweighting steps) and the exact objective, on the problem's rows.

    With the compiled kernel (:func:`perfkit.model._kernels.enabled`) the rows are visited one by one with the
    one-hot block as indices; otherwise the numpy code runs in cache-sized chunks of candidates.
    """

    def __init__(self, problem: Problem, irls_iter: int):
        from . import _kernels

        self.pb, self.irls_iter = problem, int(irls_iter)
        self.compiled = _kernels.enabled()
        if self.compiled:
            pb = problem
            a = pb.arrays()
            (self.hidx, self.hval), self.L, self.E, self.y, self.w = a["hot"], a["L"], a["E"], a["y"], a["w"]
            self.lo, self.hi = (np.ascontiguousarray(b, float) for b in pb.lin_bounds)
            self.lam = float(pb.lam)
            self.lam_p = float(pb.lam if pb.lam_powers is None else pb.lam_powers)
            self.pen = {None: 0, "l1": 1, "l2": 2}[pb.penalty]
        else:
            self.chunk = max(1, int(CHUNK_BYTES // (8 * len(problem.y) * problem.n_linear)))

    def __call__(self, pw_t):
        return self.solve(np.atleast_2d(pw_t.T))[1]

    def solve(self, powers, n_iter=None):
        """``(lin, cost)`` of each row of ``powers`` (S, D): its linear parameters (S, K) by :func:`solve_linear`
        with ``n_iter`` reweighting steps (None: ``irls_iter``) and the exact objective (S,)."""
        pb, n_p = self.pb, self.pb.n_p
        n_iter = self.irls_iter if n_iter is None else int(n_iter)
        pw_all = np.ascontiguousarray(powers, float)
        S = pw_all.shape[0]
        out, lin = np.empty(S), np.empty((S, pb.n_linear))
        if self.compiled:
            from . import _kernels

            n = len(self.y)
            FF = np.exp(pw_all[:, n_p:] @ self.E.T) if pw_all.shape[1] > n_p else np.ones((S, n))
            TT = np.exp(self.L[None, :, :] * pw_all[:, None, :n_p])
            _kernels.search_cost(pw_all, np.ascontiguousarray(FF), TT, self.hidx, self.hval, self.y, self.w,
                                 self.lo, self.hi, self.pen, self.lam, self.lam_p, n_iter, ACTIVE_SET_PASSES, n_p,
                                 pb.n_linear, out, lin)
            return lin, out
        for s0 in range(0, S, self.chunk):
            pw = pw_all[s0:s0 + self.chunk]
            Phi = design(pw[:, :n_p], pw[:, n_p:], pb.log_i, pb.log_e, pb.onehot)
            lin[s0:s0 + self.chunk] = _solve(pb, Phi, n_iter)
            out[s0:s0 + self.chunk] = _cost(pb, lin[s0:s0 + self.chunk], pw, Phi)
        return lin, out


def fit_varpro(problem: Problem, rng, *, maxiter=None, popsize=None, tol=None, irls_iter=3,
               search_rows=SEARCH_DEFAULTS["search_rows"], refine_stages=REFINE_STAGES, n_starts=N_STARTS,
               **_) -> EngineResult:
    """Variable projection: DE over the powers with the linear part solved per candidate (:class:`SearchCost`),
    then :func:`refine` of all parameters together on all rows from ``n_starts`` distinct starts (the best
    one kept), the switched-on/off rounds and :func:`canonical`.

    The global search uses at most ``search_rows`` rows (a seeded random subset; None: all) and, by default,
    :data:`SEARCH_DEFAULTS`' generations and population; the refinement uses all rows. ``refine_stages=()``
    skips the refinement and polishes the powers with Powell's method instead (the engine before the
    refinement was added).
    """
    from scipy.optimize import differential_evolution

    _engine_args(maxiter, popsize, tol, irls_iter, search_rows, n_starts)
    n_rows = len(problem.y)
    if search_rows is not None and n_rows > int(search_rows):
        search = problem.rows(np.sort(rng.choice(n_rows, size=int(search_rows), replace=False)))
    else:
        search = problem
    history: list[float] = []
    if not problem.pow_bounds:  # nothing nonlinear: one linear solve
        res_x, n_iter, res_pop = np.zeros(0), 0, np.zeros((0, 0))
    else:
        res = differential_evolution(SearchCost(search, irls_iter), problem.pow_bounds, seed=rng,
                                     callback=_recorder(history), vectorized=True,
                                     updating="deferred", polish=False,
                                     maxiter=SEARCH_DEFAULTS["maxiter"] if maxiter is None else int(maxiter),
                                     popsize=SEARCH_DEFAULTS["popsize"] if popsize is None else int(popsize),
                                     tol=VARPRO_TOL if tol is None else float(tol))
        res_x, n_iter = res.x, res.nit
        res_pop = res.population[np.argsort(res.population_energies, kind="stable")]
    if not refine_stages:  # the engine before the refinement: a Powell polish of the powers alone
        powers = _polish(search, res_x, irls_iter)
        return EngineResult(_linear_for(problem, powers, irls_iter), powers, n_iter, history)
    return _refine_best(problem, _distinct_starts(res_pop, res_x, n_starts), irls_iter, refine_stages,
                        n_iter, history, hop_rounds=HOP_ROUNDS)


#: a start whose exact objective after the first refinement stage is within this relative distance of the
#: best start's is refined to the end too (a gap larger than this is far above what the later stages change)
SCREEN_RTOL = 1e-3
#: tolerance of the screening stage (the starts that pass it are refined again at the full tolerance)
SCREEN_TOL = 1e-6


def _distinct_starts(population, best, n_starts, min_distance=0.1):
    """Up to ``n_starts`` power vectors: the search's best, then the next best members of its final population
    that differ from every one already taken by more than ``min_distance`` in some power."""
    starts = [np.asarray(best, float)]
    for cand in population:
        if len(starts) >= n_starts:
            break
        if all(np.max(np.abs(cand - s)) > min_distance for s in starts):
            starts.append(np.asarray(cand, float))
    return starts


def _coincide(a, b) -> bool:
    """Whether two screened starts ``(objective, lin, powers)`` landed on one point: objectives within 1e-9
    (relative) and every parameter within 100 × :data:`SCREEN_TOL` (relative to max(|x|, 1)), the spread that
    the screening stage's step tolerance leaves between two runs to one minimum (along a flat valley, 1.5e-6
    on the synthetic benchmark of ``benchmarks/bench_generic.py``)."""
    xa, xb = np.concatenate([a[1], a[2]]), np.concatenate([b[1], b[2]])
    return (abs(a[0] - b[0]) <= 1e-9 * abs(b[0])
            and float(np.max(np.abs(xa - xb) / np.maximum(np.abs(xb), 1.0), initial=0.0)) <= 100 * SCREEN_TOL)


#: a problem with more rows than this screens its starts, and scans a term's power, on an evenly spaced subset of
#: this many rows (:func:`_screening_rows`); the starts that pass are refined on every row
SCREEN_ROWS = 5000


def _screening_rows(problem: Problem) -> Problem:
    """``problem`` itself, or for more than :data:`SCREEN_ROWS` rows the same problem on that many evenly spaced
    rows: screening only ranks starts and moves them into their basins, which a subset does as well at a
    fraction of the cost (on 100 000 rows the screening of four starts took three quarters of a fit). The subset
    is made once per problem."""
    n = len(problem.y)
    if n <= SCREEN_ROWS:
        return problem
    subset = problem.__dict__.get("_screening_rows")
    if subset is None:
        subset = problem.rows(np.unique(np.linspace(0, n - 1, SCREEN_ROWS).round().astype(int)))
        problem.__dict__["_screening_rows"] = subset
    return subset


def _screen(problem: Problem, starts, stages, known=()) -> list:
    """Refine ``(lin, powers)`` starts; returns ``(objective, lin, powers, converged, message)`` per start refined to
    the end.

    Every start gets the first refinement stage at a loose tolerance (:data:`SCREEN_TOL`; on
    :func:`_screening_rows`), its exact objective on every row ranking it; starts that land on
    one point there (:func:`_coincide`) are refined on once, and those that come within :data:`SCREEN_RTOL` of
    the best are refined through every stage at the full tolerance. A start refined to a higher objective than
    its own keeps its own (never worse than the search's answer). A start that lands on one of the ``known``
    screened points (``(objective, lin, powers)``, e.g. the basin a hop starts from) is not refined further.
    """
    screened, subset = [], _screening_rows(problem)
    for lin, powers in starts:
        start = (lin, powers, _exact(problem, lin, powers))
        lin1, pw1, conv, msg = refine(subset, lin, powers, stages[:1], tol=SCREEN_TOL)
        point = (_exact(problem, lin1, pw1), lin1, pw1)
        if not any(_coincide(point, s[0]) for s in screened) and not any(_coincide(point, k) for k in known):
            screened.append((point, start))
    if not screened:
        return []
    best1 = min(s[0][0] for s in screened)
    finals = []
    for (obj1, lin1, pw1), start in screened:
        if obj1 - best1 > SCREEN_RTOL * abs(best1):
            continue
        lin1, pw1, conv, msg = refine(problem, lin1, pw1, stages)
        obj = _exact(problem, lin1, pw1)
        if obj > start[2]:
            lin1, pw1, obj = start[0], start[1], start[2]
        finals.append((obj, lin1, pw1, conv, msg))
    return finals


#: most rounds of :func:`_switched_on` starts and :func:`_switched_off` fits after the search's starts (each
#: round starts from the best so far; the rounds stop as soon as one gains no more than :data:`HOP_RTOL`)
HOP_ROUNDS = 8
#: a round that lowers the objective by at most this (relative) found the same basin: the rounds stop
HOP_RTOL = 1e-7
#: a switched-on term starts with this share of the mean |y| as its mean contribution
HOP_SHARE = 0.01
#: smoothing widths of the second path along which every switched-on start is refined (the first is
#: :data:`REFINE_STAGES`): which neighbouring basin a start reaches depends on the continuation's path, and on
#: Chapter 4's fits neither path alone reached every lower basin the other found (unregularised PyTorch: only
#: this one; Chainer L1 λ = 3e-4: only the other), so both are refined and the lowest kept
HOP_STAGES = (1e-3, 1e-4, 1e-5, 1e-6)


def _switched_on(problem: Problem, lin, powers) -> list:
    """Starts that switch each switched-off intrinsic term of a fit back on, at either bound of its power.

    A term whose coefficient sits at 0 has no gradient that would turn it on, so the refinement cannot leave a
    basin in which it is off, and basins with a term on or off can differ by less than 0.1 % of the objective
    (Chapter 4: PyTorch's dropout term at p = −5, Chainer's learning-rate term). Which one the search's starts
    fall into depends on the last bits of the arithmetic. Trying every switched-off term on, from a small
    coefficient (mean contribution :data:`HOP_SHARE` of the mean |y|) at each power bound, lets the refinement
    reach the lower basin from either side. With an L1 penalty a term the smoothed penalty left a few δ above 0
    (:func:`_stuck_terms`) counts as switched off too.
    """
    lin, powers = canonical(problem, lin, powers)
    lo, hi = problem.lin_bounds
    F, T = _weighted_terms(problem, lin, powers)
    target = HOP_SHARE * _scale(problem)
    stuck = _stuck_terms(problem, lin, powers, F, T)
    starts = []
    for j in range(problem.n_p):
        if not lo[j] <= 0.0 < hi[j]:
            continue
        if not (lin[j] == 0.0 or j in stuck):
            if _small(problem, lin, F, T, j):  # live but small: its power re-scanned
                starts.extend(_scanned_start(problem, powers, j))
            continue
        for bound in dict.fromkeys(problem.pow_bounds[j]):
            pw = powers.copy()
            pw[j] = bound
            size = float(np.mean(np.abs(F * np.exp(problem.log_i[:, j] * bound))))
            if not np.isfinite(size) or size <= 0.0:
                continue
            ln = lin.copy()
            ln[j] = min(target / size, hi[j])
            starts.append((ln, pw))
        starts.extend(_scanned_start(problem, powers, j))
    return starts


#: powers tried by :func:`_scanned_start` (clipped to the term's bounds)
SCAN_POWERS = np.linspace(-5.0, 5.0, 41)


def _scanned_start(problem: Problem, powers, j) -> list:
    """One more start for switched-off term ``j``: its power scanned over :data:`SCAN_POWERS` (the other powers
    fixed, the linear part by reweighted least squares on :func:`_screening_rows`), the lowest objective among the powers at
    which the term's coefficient comes out above 0 kept (none: no start).

    The starts at the power bounds leave the refinement to find the term's power from a far-away point; which
    basin it reaches from there depends on its path (the Newton refinement returns to the switched-off basin on
    Chapter 4's TensorFlow L1 λ = 0.03 fit, where the basin with the term on is 1.2 % lower).
    The scan makes the switched-on move independent of the local method.
    """
    lo_p, hi_p = problem.pow_bounds[j]
    grid = np.unique(np.clip(SCAN_POWERS, lo_p, hi_p))
    if len(grid) < 2:
        return []
    P = np.repeat(np.asarray(powers, float)[None], len(grid), axis=0)
    P[:, j] = grid
    rows = _screening_rows(problem)
    L, cost = SearchCost(rows, 9).solve(P)
    F = np.exp(rows.log_e @ P[0, rows.n_p:]) if rows.log_e.shape[1] else np.ones(len(rows.y))
    size = np.mean(np.abs(F[None, :] * np.exp(np.outer(grid, rows.log_i[:, j]))), axis=1)  # mean |F·I^p| per power
    # a start with the term on (above a tenth of the switched-on starts' share): where it stays off, the
    # refinement has nothing new to try
    on = L[:, j] * size > 0.1 * HOP_SHARE * _scale(rows)
    if not on.any():
        return []
    k = int(np.flatnonzero(on)[np.argmin(cost[on])])
    return [(L[k], P[k])]


def _small(problem: Problem, lin, F, T, j) -> bool:
    """Whether intrinsic term ``j``'s mean contribution |a·F·T| is below :data:`HOP_SHARE` of the mean |y|."""
    return bool(np.mean(np.abs(F * lin[j] * T[:, j])) < HOP_SHARE * _scale(problem))


def _stuck_terms(problem: Problem, lin, powers, F, T) -> set:
    """The intrinsic terms of an L1 fit that are off in all but name: each live, small (:func:`_small`), and setting
    its coefficient to 0 does not raise the exact objective.

    The refinement smooths |a| to √(a² + δ²), whose slope vanishes at 0: a coefficient that the exact L1 objective
    puts at 0 stops at a few δ instead (Chapter 4, TensorFlow, L1 λ = 0.03: the stride term at a = 1e-5, p = 0).
    Such a term is not at 0, so it used not to be tried on again, and whether the basin with it on (there 1.2 %
    lower) was reached depended on the BLAS kernels.
    """
    if problem.penalty != "l1" or not problem.lam > 0:
        return set()
    stuck, current = set(), None
    for j in range(problem.n_p):
        if lin[j] == 0.0 or not _small(problem, lin, F, T, j):
            continue
        current = _exact(problem, lin, powers) if current is None else current
        zeroed = lin.copy()
        zeroed[j] = 0.0
        if _exact(problem, zeroed, powers) <= current:
            stuck.add(j)
    return stuck


def _switched_off(problem: Problem, lin, powers, stages, screened=None) -> list:
    """Fits with one small live intrinsic term switched off (its mean contribution below :data:`HOP_SHARE` of the
    mean |y|), each the bottom of the basin with that term off; ``(objective, lin, powers, converged, message)``.

    The mirror of :func:`_switched_on`: the refinement cannot leave a basin in which a term is on for a nearby one
    in which it is off either, when the other terms must move together to take over its share (Chapter 4, MXNet,
    L1, λ = 1e-3: the learning-rate term on at p = 0.16 under one set of BLAS kernels, off under another, the
    objectives 1.9e-5 apart). A start with the term off is not enough: refined freely, the term comes back on. So
    the term is held at 0 (coefficient and power) through every refinement stage: the bottom of the basin with the
    term off, a fit of the full problem too. (Where switching the term on again from there is lower still, the next
    round's :func:`_switched_on` starts find it.) (That term carried 0.1 % of the mean time, every
    other one 1.4 % or more; a term that carries more cannot be switched off without a large rise, so it is not
    tried, which keeps the cost of these fits small.) With ``screened``, the fit's own screening point
    (:func:`_screened`), each held fit is screened first like a start (:func:`_screen`) and refined on only if it
    comes within :data:`SCREEN_RTOL` of that point.
    """
    lin, powers = canonical(problem, lin, powers)
    lo, hi = problem.lin_bounds
    F, T = _weighted_terms(problem, lin, powers)
    finals = []
    for j in range(problem.n_p):
        if lin[j] == 0.0 or not lo[j] <= 0.0 <= hi[j] or not _small(problem, lin, F, T, j):
            continue
        lo_p, hi_p = problem.pow_bounds[j]
        p0 = min(max(0.0, lo_p), hi_p)
        lo_j, hi_j = lo.copy(), hi.copy()
        lo_j[j] = hi_j[j] = 0.0
        held = replace(problem, lin_bounds=(lo_j, hi_j),
                       pow_bounds=[(p0, p0) if i == j else b for i, b in enumerate(problem.pow_bounds)])
        ln, pw = lin.copy(), powers.copy()
        ln[j], pw[j] = 0.0, p0
        if screened is not None:  # screened as the starts are: far above the fit's own screening point, no more
            ln, pw = refine(_screening_rows(held), ln, pw, stages[:1], tol=SCREEN_TOL)[:2]
            if _exact(problem, ln, pw) - screened[0] > SCREEN_RTOL * abs(screened[0]):
                continue
        ln, pw, conv, msg = refine(held, ln, pw, stages)
        ln, pw = canonical(problem, ln, pw)
        finals.append((_exact(problem, ln, pw), ln, pw, conv, msg))
    return finals


def _screened(problem: Problem, fit, stages):
    """The screening point ``(objective, lin, powers)`` of a refined ``fit`` along ``stages``: where a start
    that returns to the fit's basin lands in :func:`_screen`."""
    lin, powers = refine(_screening_rows(problem), fit[1], fit[2], stages[:1], tol=SCREEN_TOL)[:2]
    return _exact(problem, lin, powers), lin, powers


def _refine_best(problem: Problem, starts, irls_iter, stages, n_iter, history, hop_rounds: int = HOP_ROUNDS) -> EngineResult:
    """Refine several starts and keep the lowest exact objective; then try switched-off terms on and live ones off.

    The search's profiled cost solves the linear part only approximately, so basins whose objectives differ
    by less than that error can be ranked wrongly, and which one wins then depends on the last bits of the
    arithmetic (the CPU). Every start is screened and refined (:func:`_screen`); then, for up to ``hop_rounds``
    rounds, the starts of :func:`_switched_on` from the best fit so far are refined along ``stages`` and along
    :data:`HOP_STAGES` (those that screening returns to the best fit's own basin no further), the fits of
    :func:`_switched_off` made, and a lower objective replaces it.
    """
    subset = _screening_rows(problem)  # each start's linear part only has to start the screening there
    finals = _screen(problem, [(_linear_for(subset, pw, irls_iter), pw) for pw in starts], stages)
    best = min(finals, key=lambda f: f[0])
    n_refined, n_hops = len(finals), 0
    for _ in range(hop_rounds):
        hops = _switched_on(problem, best[1], best[2])
        paths = (stages, HOP_STAGES)
        known = [_screened(problem, best, path) for path in paths] if hops else []
        finals = [f for path, k in zip(paths, known) for f in _screen(problem, hops, path, [k])] \
            + _switched_off(problem, best[1], best[2], stages, known[0] if known else None)
        if not finals:
            break
        n_hops += len(finals)  # starts refined with one term switched on, fits with one off
        cand = min(finals, key=lambda f: f[0])
        if not cand[0] < best[0]:
            break
        gain, best = best[0] - cand[0], cand
        if gain <= HOP_RTOL * abs(best[0]):  # the same basin, refined a little further: no new round
            break
    obj, lin, powers, converged, message = best
    lin, powers = canonical(problem, lin, powers)
    lin = canonical_levels(problem, lin)
    if len(starts) > 1:
        message += f"; best of {len(starts)} starts ({n_refined} refined to the end)"
    if n_hops:
        message += f" and {n_hops} with one term switched on or off"
    return EngineResult(lin, powers, n_iter, history, converged, message)


def _weighted_terms(problem: Problem, lin, powers):
    """``(F, T)`` of :func:`_unpack`, F times the row weights (if any): a term's contribution to the weighted
    residuals, the rows :func:`_scale` measures, is coef × F × T (or × the one-hot column)."""
    _, F, T, _ = _unpack(np.concatenate([lin, powers]), problem)
    return (F if problem.weights is None else F * problem.weights), T


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
    tol = DEAD_RTOL * max(_scale(problem), 1e-300)
    F, T = _weighted_terms(problem, lin, powers)
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
    directions, not all; where a fit stops along the others depends on the last bits of the arithmetic, so the
    printed constants differed between CPUs while every prediction agreed. This picks one point of that flat
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


def _exact(problem: Problem, lin, powers) -> float:
    pw = np.atleast_2d(powers)
    return float(_cost(problem, np.atleast_2d(lin), pw, problem.design(pw))[0])


#: ``method`` name → engine
ENGINES: dict[str, Callable[..., EngineResult]] = {"varpro": fit_varpro, "thesis": fit_thesis}
