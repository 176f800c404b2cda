"""Checks of single settings shared by every layer (the collector, the model, the CLI): stdlib only.

Each returns the value normalised or raises one clear ``ValueError`` naming the setting.
"""
from __future__ import annotations

import math
import numbers

__all__ = ["check_int", "check_number"]


def check_int(name: str, value, minimum: int = 1, allow_none: bool = False):
    """``value`` as an int if it is an integer >= ``minimum`` (or None when allowed); else one clear ``ValueError``.

    Booleans and floats (even whole ones such as ``3.0``) are refused: a count is an integer.
    NumPy integers are accepted.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        what = f"an integer >= {minimum}" + (" or None" if allow_none else "")
        raise ValueError(f"{name}: expected {what}, got {value!r}")
    return int(value)


def check_number(name: str, value, *, positive: bool = False) -> float:
    """``value`` as a float if it is a finite number >= 0 (> 0 with ``positive``); else one clear ``ValueError``."""
    ok = not isinstance(value, bool) and isinstance(value, numbers.Real)
    try:
        x = float(value) if ok else math.nan
    except OverflowError:  # an int too large for float64
        x = math.inf
    if not (ok and math.isfinite(x) and (x > 0 if positive else x >= 0)):
        raise ValueError(f"{name}: expected a finite number {'> 0' if positive else '>= 0'}, got {value!r}")
    return x
