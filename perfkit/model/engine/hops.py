"""Moves between neighbouring basins of the varpro engine: one intrinsic term switched on or off.

A term whose coefficient sits at 0 has no gradient that would turn it on, and a small live term cannot be
switched off by the refinement when the other terms must move together to take over its share. So, from a
refined fit, :func:`switched_on` makes starts with each switched-off (or, under L1, stuck: :func:`stuck_terms`)
term on again, and :func:`switched_off` fits with each small live term held at 0. The engine
(:func:`perfkit.model.engine.engines.refine_best`) refines these round after round while a round gains more than
:data:`HOP_RTOL`.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .canonical import canonical
from .newton import refine
from .problem import Problem
from .screening import SCREEN_RTOL, SCREEN_TOL, screening_rows
from .search_cost import SearchCost

__all__ = ["switched_on", "switched_off", "scanned_start", "stuck_terms", "is_small", "HOP_ROUNDS", "HOP_RTOL",
           "HOP_SHARE", "HOP_STAGES", "SCAN_POWERS"]


#: most rounds of :func:`switched_on` starts and :func:`switched_off` fits after the search's starts (each
#: round starts from the best so far; the rounds stop as soon as one gains no more than :data:`HOP_RTOL`)
HOP_ROUNDS = 8
#: a round that lowers the objective by at most this (relative) found the same basin: the rounds stop
HOP_RTOL = 1e-7
#: a switched-on term starts with this share of the mean |y| as its mean contribution
HOP_SHARE = 0.01
#: smoothing widths of the second path along which every switched-on start is refined (the first is
#: :data:`~perfkit.model.engine.newton.REFINE_STAGES`): which neighbouring basin a start reaches depends on the
#: continuation's path, and neither path alone reaches every lower basin the other does, so both are refined and
#: the lowest kept
HOP_STAGES = (1e-3, 1e-4, 1e-5, 1e-6)


def switched_on(problem: Problem, lin, powers) -> list:
    """Starts that switch each switched-off intrinsic term of a fit back on, at either bound of its power.

    A term whose coefficient sits at 0 has no gradient that would turn it on, so the refinement cannot leave a
    basin in which it is off, and basins with a term on or off can differ by a small fraction of the objective.
    Which one the search's starts fall into depends on the last bits of the arithmetic. Trying every
    switched-off term on, from a small
    coefficient (mean contribution :data:`HOP_SHARE` of the mean |y|) at each power bound, lets the refinement
    reach the lower basin from either side. With an L1 penalty a term the smoothed penalty left a few δ above 0
    (:func:`stuck_terms`) counts as switched off too.
    """
    lin, powers = canonical(problem, lin, powers)
    lo, hi = problem.lin_bounds
    F, T = problem.weighted_terms(lin, powers)
    target = HOP_SHARE * problem.residual_scale()
    stuck = stuck_terms(problem, lin, powers, F, T)
    starts = []
    for j in range(problem.n_p):
        if not lo[j] <= 0.0 < hi[j]:
            continue
        if not (lin[j] == 0.0 or j in stuck):
            if is_small(problem, lin, F, T, j):  # live but small: its power re-scanned
                starts.extend(scanned_start(problem, powers, j))
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
        starts.extend(scanned_start(problem, powers, j))
    return starts


#: powers tried by :func:`scanned_start` (clipped to the term's bounds)
SCAN_POWERS = np.linspace(-5.0, 5.0, 41)


def scanned_start(problem: Problem, powers, j) -> list:
    """One more start for switched-off term ``j``: its power scanned over :data:`SCAN_POWERS` (the other powers
    fixed, the linear part by reweighted least squares on :func:`~perfkit.model.engine.screening.screening_rows`), the
    lowest objective among the powers at which the term's coefficient comes out above 0 kept (none: no start).

    The starts at the power bounds leave the refinement to find the term's power from a far-away point; which
    basin it reaches from there depends on its path. The scan makes the switched-on move independent of the
    local method.
    """
    lo_p, hi_p = problem.pow_bounds[j]
    grid = np.unique(np.clip(SCAN_POWERS, lo_p, hi_p))
    if len(grid) < 2:
        return []
    P = np.repeat(np.asarray(powers, float)[None], len(grid), axis=0)
    P[:, j] = grid
    rows = screening_rows(problem)
    L, cost = SearchCost(rows, 9).solve(P)
    F = np.exp(rows.log_e @ P[0, rows.n_p:]) if rows.log_e.shape[1] else np.ones(len(rows.y))
    size = np.mean(np.abs(F[None, :] * np.exp(np.outer(grid, rows.log_i[:, j]))), axis=1)  # mean |F·I^p| per power
    # a start with the term on (above a tenth of the switched-on starts' share): where it stays off, the
    # refinement has nothing new to try
    on = L[:, j] * size > 0.1 * HOP_SHARE * rows.residual_scale()
    if not on.any():
        return []
    k = int(np.flatnonzero(on)[np.argmin(cost[on])])
    return [(L[k], P[k])]


def is_small(problem: Problem, lin, F, T, j) -> bool:
    """Whether intrinsic term ``j``'s mean contribution |a·F·T| is below :data:`HOP_SHARE` of the mean |y|."""
    return bool(np.mean(np.abs(F * lin[j] * T[:, j])) < HOP_SHARE * problem.residual_scale())


def stuck_terms(problem: Problem, lin, powers, F, T) -> set:
    """The intrinsic terms of an L1 fit that are off in all but name: each live, small (:func:`is_small`), and
    setting its coefficient to 0 does not raise the exact objective.

    The refinement smooths |a| to √(a² + δ²), whose slope vanishes at 0: a coefficient that the exact L1 objective
    puts at 0 stops at a few δ instead. :func:`switched_on` tries such a term on again like one at 0.
    """
    if problem.penalty != "l1" or not problem.lam > 0:
        return set()
    stuck, current = set(), None
    for j in range(problem.n_p):
        if lin[j] == 0.0 or not is_small(problem, lin, F, T, j):
            continue
        current = problem.exact(lin, powers) if current is None else current
        zeroed = lin.copy()
        zeroed[j] = 0.0
        if problem.exact(zeroed, powers) <= current:
            stuck.add(j)
    return stuck


def switched_off(problem: Problem, lin, powers, stages, screened=None) -> list:
    """Fits with one small live intrinsic term switched off (its mean contribution below :data:`HOP_SHARE` of the
    mean |y|), each the bottom of the basin with that term off; ``(objective, lin, powers, converged, message)``.

    The mirror of :func:`switched_on`: the refinement cannot leave a basin in which a term is on for a nearby one
    in which it is off either, when the other terms must move together to take over its share. A start with the
    term off is not enough: refined freely, the term comes back on. So the term is held at 0 (coefficient and
    power) through every refinement stage: the bottom of the basin with the term off, a fit of the full problem
    too. (Where switching the term on again from there is lower still, the next round's :func:`switched_on` starts
    find it.) A term that carries more than :data:`HOP_SHARE` cannot be switched off without a large rise, so it is
    not tried, which keeps the cost of these fits small. With ``screened``, the fit's own screening point
    (:func:`~perfkit.model.engine.screening.screened`), each held fit is screened first like a start
    (:func:`~perfkit.model.engine.screening.screen`) and refined on only if it comes within
    :data:`~perfkit.model.engine.screening.SCREEN_RTOL` of that point.
    """
    lin, powers = canonical(problem, lin, powers)
    lo, hi = problem.lin_bounds
    F, T = problem.weighted_terms(lin, powers)
    finals = []
    for j in range(problem.n_p):
        if lin[j] == 0.0 or not lo[j] <= 0.0 <= hi[j] or not is_small(problem, lin, F, T, j):
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
            ln, pw = refine(screening_rows(held), ln, pw, stages[:1], tol=SCREEN_TOL)[:2]
            if problem.exact(ln, pw) - screened[0] > SCREEN_RTOL * abs(screened[0]):
                continue
        ln, pw, conv, msg = refine(held, ln, pw, stages)
        ln, pw = canonical(problem, ln, pw)
        finals.append((problem.exact(ln, pw), ln, pw, conv, msg))
    return finals
