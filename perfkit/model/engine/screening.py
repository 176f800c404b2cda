"""Screening of refinement starts: each start refined through the first stage on a subset of rows, ranked by
its exact objective on every row, and only the starts near the best refined to the end.

A start that lands on a point another start (or a ``known`` point) already reached is refined no further
(:func:`coincide`). Every function here takes the refinement's stages (:data:`perfkit.model.engine.newton.REFINE_STAGES`
or another path) and returns fits as ``(objective, lin, powers, converged, message)``.
"""
from __future__ import annotations

import numpy as np

from .newton import refine
from .problem import Problem

__all__ = ["screen", "screened", "screening_rows", "coincide", "SCREEN_RTOL", "SCREEN_TOL", "SCREEN_ROWS"]


#: a start whose exact objective after the first refinement stage is within this relative distance of the
#: best start's is refined to the end too (a gap larger than this is far above what the later stages change)
SCREEN_RTOL = 1e-3
#: tolerance of the screening stage (the starts that pass it are refined again at the full tolerance)
SCREEN_TOL = 1e-6


def coincide(a, b) -> bool:
    """Whether two screened starts ``(objective, lin, powers)`` landed on one point: objectives within 1e-9
    (relative) and every parameter within 100 × :data:`SCREEN_TOL` (relative to max(|x|, 1)), the spread that
    the screening stage's step tolerance leaves between two runs to one minimum along a flat valley."""
    xa, xb = np.concatenate([a[1], a[2]]), np.concatenate([b[1], b[2]])
    return (abs(a[0] - b[0]) <= 1e-9 * abs(b[0])
            and float(np.max(np.abs(xa - xb) / np.maximum(np.abs(xb), 1.0), initial=0.0)) <= 100 * SCREEN_TOL)


#: a problem with more rows than this screens its starts, and scans a term's power, on an evenly spaced subset of
#: this many rows (:func:`screening_rows`); the starts that pass are refined on every row
SCREEN_ROWS = 5000


def screening_rows(problem: Problem) -> Problem:
    """``problem`` itself, or for more than :data:`SCREEN_ROWS` rows the same problem on that many evenly spaced
    rows: screening only ranks starts and moves them into their basins, which a subset does as well at a
    fraction of the cost. The subset is made once per problem."""
    n = len(problem.y)
    if n <= SCREEN_ROWS:
        return problem
    subset = problem.__dict__.get("_screening_rows")
    if subset is None:
        subset = problem.rows(np.unique(np.linspace(0, n - 1, SCREEN_ROWS).round().astype(int)))
        problem.__dict__["_screening_rows"] = subset
    return subset


def screen(problem: Problem, starts, stages, known=()) -> list:
    """Refine ``(lin, powers)`` starts; returns ``(objective, lin, powers, converged, message)`` per start refined to
    the end.

    Every start gets the first refinement stage at a loose tolerance (:data:`SCREEN_TOL`; on
    :func:`screening_rows`), its exact objective on every row ranking it; starts that land on
    one point there (:func:`coincide`) are refined on once, and those that come within :data:`SCREEN_RTOL` of
    the best are refined through every stage at the full tolerance. A start refined to a higher objective than
    its own keeps its own (never worse than the search's answer). A start that lands on one of the ``known``
    screened points (``(objective, lin, powers)``, e.g. the basin a hop starts from) is not refined further.
    """
    points, subset = [], screening_rows(problem)
    for lin, powers in starts:
        start = (lin, powers, problem.exact(lin, powers))
        lin1, pw1, conv, msg = refine(subset, lin, powers, stages[:1], tol=SCREEN_TOL)
        point = (problem.exact(lin1, pw1), lin1, pw1)
        if not any(coincide(point, s[0]) for s in points) and not any(coincide(point, k) for k in known):
            points.append((point, start))
    if not points:
        return []
    best1 = min(s[0][0] for s in points)
    finals = []
    for (obj1, lin1, pw1), start in points:
        if obj1 - best1 > SCREEN_RTOL * abs(best1):
            continue
        lin1, pw1, conv, msg = refine(problem, lin1, pw1, stages)
        obj = problem.exact(lin1, pw1)
        if obj > start[2]:
            lin1, pw1, obj = start[0], start[1], start[2]
        finals.append((obj, lin1, pw1, conv, msg))
    return finals


def screened(problem: Problem, fit, stages):
    """The screening point ``(objective, lin, powers)`` of a refined ``fit`` along ``stages``: where a start
    that returns to the fit's basin lands in :func:`screen`."""
    lin, powers = refine(screening_rows(problem), fit[1], fit[2], stages[:1], tol=SCREEN_TOL)[:2]
    return problem.exact(lin, powers), lin, powers
