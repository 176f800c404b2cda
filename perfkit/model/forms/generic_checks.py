"""The checks of :class:`~perfkit.model.forms.generic.GenericPerformanceModel`'s settings and of a saved model's values.

Each raises one ``ValueError`` naming the setting, key or saved value at fault.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..persist import is_finite, is_number

__all__ = ["DEFAULT_BOUNDS", "check_bounds", "check_random_state", "check_saved_values"]

#: default parameter bounds (thesis §4.1.1): a, κ and C in [0, 1000]; p and q in [-5, 5]. With ``scale="data"``
#: the bounds of a, κ and C apply to the dimensionless parameters (:mod:`perfkit.model.unitscale`)
DEFAULT_BOUNDS = {"a": (0.0, 1000.0), "C": (0.0, 1000.0), "p": (-5.0, 5.0), "q": (-5.0, 5.0)}


def check_saved_values(reader, bounds, coef, powers, n_numeric) -> None:
    """The relations a fit keeps between a saved model's values and its ``bounds``: every power within its bound
    (``p`` numeric, ``q`` extrinsic; 0 for a constant column), and a coefficient never negative where its lower
    bound is not (``a`` and the level constants, then ``C``): a fit never leaves them, whatever the units of the
    data, so a file that does was edited."""
    for j, v in enumerate(powers):
        lo, hi = bounds["p" if j < n_numeric else "q"]
        if v != 0 and not lo - 1e-9 * (1 + abs(lo)) <= v <= hi + 1e-9 * (1 + abs(hi)):
            raise reader.fail(f"fitted.powers[{j}]: {v:g} is outside its bound [{lo:g}, {hi:g}]")
    for j, v in enumerate(coef):
        key = "C" if j == len(coef) - 1 else "a"
        if bounds[key][0] >= 0 and v < 0:
            raise reader.fail(f"fitted.coef[{j}]: {v:g} is negative, but its bound {key} is "
                              f"[{bounds[key][0]:g}, {bounds[key][1]:g}]")


def check_bounds(value) -> dict:
    """``bounds`` merged over :data:`DEFAULT_BOUNDS`; one clear ``ValueError`` naming the bad entry."""
    bounds = dict(DEFAULT_BOUNDS)
    if value is None:
        return bounds
    if not isinstance(value, Mapping):
        raise ValueError(f"bounds: expected a dict such as {{'p': (-5, 5)}} with keys a, p, q, C, got {value!r}")
    for key, val in value.items():
        if key not in DEFAULT_BOUNDS:
            raise ValueError(f"bounds: unknown key {key!r}; use a, p, q, C")
        pair = list(val) if isinstance(val, (list, tuple, np.ndarray)) else None
        if pair is None or len(pair) != 2 or not all(is_number(v) for v in pair):
            raise ValueError(f"bounds[{key!r}]: expected a (lower, upper) pair of numbers, got {val!r}")
        if not all(is_finite(v) for v in pair):
            raise ValueError(f"bounds[{key!r}]: expected finite numbers, got {val!r}")
        lo, hi = (float(v) for v in pair)
        if not lo < hi:
            raise ValueError(f"bounds[{key!r}]: lower {lo} must be below upper {hi}")
        bounds[key] = (lo, hi)
    return bounds


def check_random_state(value) -> None:
    """None, an integer >= 0, or a NumPy Generator / RandomState / SeedSequence / BitGenerator."""
    if value is None or isinstance(value, (np.random.Generator, np.random.RandomState, np.random.SeedSequence,
                                           np.random.BitGenerator)):
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"random_state: expected None, an integer >= 0 or a numpy Generator/RandomState, "
                         f"got {value!r}")
