"""The fitting engines of the generic performance model, as plain functions.

An engine (:data:`ENGINES`) takes a :class:`~perfkit.model.engine.problem.Problem` (one fit's encoded data, bounds,
penalty and row weights; its objective and linear solve live in :mod:`perfkit.model.engine.problem`) and a seed
generator and returns an :class:`~perfkit.model.engine.problem.EngineResult`:

``thesis``
    :func:`scipy.optimize.differential_evolution` with its default settings on a scalar cost over all
    parameters, as the thesis did.
``varpro``
    Variable projection: differential evolution over the powers only, on a subset of rows
    (:data:`SEARCH_DEFAULTS`), the whole population evaluated at once
    (:class:`~perfkit.model.engine.search_cost.SearchCost`, compiled where numba is available), each candidate's linear
    part from a few iteratively reweighted least-squares steps (each solved inside the bounds); then
    :func:`refine_best`: the refinement (the primal–dual Newton method of :mod:`perfkit.model.engine.newton`) of every
    parameter together on all rows from the best few distinct members of the final population, screened
    (:mod:`perfkit.model.engine.screening`), the lowest exact objective kept; then every switched-off intrinsic term
    tried on again and every small live one held off (:mod:`perfkit.model.engine.hops`), round after round until a round
    gains nothing (:data:`~perfkit.model.engine.hops.HOP_RTOL`); and the fit written one way
    (:mod:`perfkit.model.engine.canonical`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .canonical import canonical, canonical_levels
from .hops import HOP_ROUNDS, HOP_RTOL, HOP_STAGES, switched_off, switched_on
from .newton import REFINE_STAGES
from .problem import EngineResult, Problem, design
from .screening import screen, screened, screening_rows
from .search_cost import SearchCost, linear_for
from ..._checks import check_int, check_number

__all__ = ["ENGINES", "fit_thesis", "fit_varpro", "SEARCH_DEFAULTS", "check_engine_args", "refine_best",
           "distinct_starts", "N_STARTS", "VARPRO_TOL"]


def check_engine_args(maxiter, popsize, tol, irls_iter=1, search_rows=None, n_starts=1):
    """Check the engine settings: one clear ``ValueError`` naming the bad one (no silent fallback to a default).

    ``maxiter``, ``popsize`` and ``tol`` are None (the engine's default) or, for the first two,
    integers >= 1 and, for ``tol``, a finite number > 0; ``irls_iter`` an integer >= 1; ``search_rows``
    None (all rows) or an integer >= 1; ``n_starts`` an integer >= 1.
    """
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

    check_engine_args(maxiter, popsize, tol)
    pb = problem
    K, n_p = pb.n_linear, pb.n_p
    lo, hi = pb.lin_bounds
    history: list[float] = []
    all_bounds = [(lo[i], hi[i]) for i in range(K)] + list(pb.pow_bounds)

    def cost(x):
        lin, pw = x[None, :K], x[None, K:]
        Phi = design(pw[:, :n_p], pw[:, n_p:], pb.log_i, pb.log_e, pb.onehot)
        return float(pb.cost(lin, pw, Phi)[0])

    res = differential_evolution(cost, all_bounds, seed=rng, callback=_recorder(history),
                                 maxiter=1000 if maxiter is None else int(maxiter),
                                 popsize=15 if popsize is None else int(popsize),
                                 tol=0.01 if tol is None else float(tol))
    return EngineResult(res.x[:K], res.x[K:], res.nit, history)


def _polish(problem: Problem, powers, irls_iter):
    """Refine the best powers with Powell's method on the profiled cost."""
    from scipy.optimize import minimize

    def profile(pw):
        pw = np.atleast_2d(pw)
        Phi = problem.design(pw)
        lin = problem.solve(Phi, 3 * irls_iter)
        return float(problem.cost(lin, pw, Phi)[0])

    if powers.size:
        res = minimize(profile, powers, method="Powell", bounds=problem.pow_bounds,
                       options={"maxfev": 400, "xtol": 1e-4, "ftol": 1e-7})
        if res.fun < profile(powers):
            powers = res.x
    return powers


#: starts refined per fit: the search's best and the next distinct members of its final population
N_STARTS = 4


#: the varpro search's default relative tolerance (scipy's 0.01 can stop the search while part of its population
#: is still in other basins)
VARPRO_TOL = 1e-3


#: the varpro search's defaults: generations, population size per power, rows searched (a seeded subset). The
#: search only has to put the refinement's starts into the right basins; the refinement, on all rows, and the
#: switched-on/off rounds find the bottom (``tests/test_convergence.py`` checks that every seed reaches one fit)
SEARCH_DEFAULTS = {"maxiter": 60, "popsize": 5, "search_rows": 300}


def fit_varpro(problem: Problem, rng, *, maxiter=None, popsize=None, tol=None, irls_iter=3,
               search_rows=SEARCH_DEFAULTS["search_rows"], refine_stages=REFINE_STAGES, n_starts=N_STARTS,
               **_) -> EngineResult:
    """Variable projection: DE over the powers with the linear part solved per candidate (:class:`SearchCost`),
    then :func:`refine_best`: :func:`refine` of all parameters together on all rows from ``n_starts``
    distinct starts (the best one kept), the switched-on/off rounds and :func:`canonical`.

    The global search uses at most ``search_rows`` rows (a seeded random subset; None: all) and, by default,
    :data:`SEARCH_DEFAULTS`' generations and population; the refinement uses all rows. ``refine_stages=()``
    skips the refinement and the rounds and polishes the powers with Powell's method instead.
    """
    from scipy.optimize import differential_evolution

    check_engine_args(maxiter, popsize, tol, irls_iter, search_rows, n_starts)
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
    if not refine_stages:  # no refinement: a Powell polish of the powers alone
        powers = _polish(search, res_x, irls_iter)
        return EngineResult(linear_for(problem, powers, irls_iter), powers, n_iter, history)
    return refine_best(problem, distinct_starts(res_pop, res_x, n_starts), irls_iter, refine_stages,
                       n_iter, history, hop_rounds=HOP_ROUNDS)


def distinct_starts(population, best, n_starts, min_distance=0.1):
    """Up to ``n_starts`` power vectors: the search's best, then the next best members of its final population
    that differ from every one already taken by more than ``min_distance`` in some power."""
    starts = [np.asarray(best, float)]
    for cand in population:
        if len(starts) >= n_starts:
            break
        if all(np.max(np.abs(cand - s)) > min_distance for s in starts):
            starts.append(np.asarray(cand, float))
    return starts


def refine_best(problem: Problem, starts, irls_iter, stages, n_iter, history, hop_rounds: int = HOP_ROUNDS
                ) -> EngineResult:
    """Refine several starts and keep the lowest exact objective; then try switched-off terms on and live ones off.

    The search's profiled cost solves the linear part only approximately, so basins whose objectives differ
    by less than that error can be ranked wrongly, and which one wins then depends on the last bits of the
    arithmetic (the CPU). Every start is screened and refined (:func:`~perfkit.model.engine.screening.screen`); then, for
    up to ``hop_rounds`` rounds, the starts of :func:`~perfkit.model.engine.hops.switched_on` from the best fit so far are
    refined along ``stages`` and along :data:`~perfkit.model.engine.hops.HOP_STAGES` (those that screening returns to the
    best fit's own basin no further), the fits of :func:`~perfkit.model.engine.hops.switched_off` made, and a lower
    objective replaces it.
    """
    subset = screening_rows(problem)  # each start's linear part only has to start the screening there
    finals = screen(problem, [(linear_for(subset, pw, irls_iter), pw) for pw in starts], stages)
    best = min(finals, key=lambda f: f[0])
    n_refined, n_hops = len(finals), 0
    for _ in range(hop_rounds):
        hops = switched_on(problem, best[1], best[2])
        paths = (stages, HOP_STAGES)
        known = [screened(problem, best, path) for path in paths] if hops else []
        finals = [f for path, k in zip(paths, known) for f in screen(problem, hops, path, [k])] \
            + switched_off(problem, best[1], best[2], stages, known[0] if known else None)
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


#: ``method`` name → engine
ENGINES: dict[str, Callable[..., EngineResult]] = {"varpro": fit_varpro, "thesis": fit_thesis}
