"""The data a model was fitted on, as ranges and levels, and the rows of a table that lie outside it.

Every fitted :class:`~perfkit.model.forms.generic.GenericPerformanceModel` keeps the min–max of its numeric and
extrinsic columns (``ranges_``, saved in its JSON), and so does every
:class:`~perfkit.model.uncertainty.conformal.ConformalRegressor` (with the levels of its categorical columns), so that
``perfkit predict`` flags an extrapolation whether or not the model was calibrated.
"""
from __future__ import annotations

import numpy as np

from ..persist import is_finite
from ..validation import missing_column_error, numeric_column

__all__ = ["column_ranges", "outside_fitted", "range_distance", "check_saved_ranges"]


def column_ranges(X, columns) -> dict:
    """``{column: (min, max)}`` of the numeric ``columns`` of ``X`` (``ValueError`` naming a missing one)."""
    out = {}
    for c in columns:
        if c not in X.columns:
            raise missing_column_error(X, c, "numeric")
        v = numeric_column(X, c, "numeric")
        out[c] = (float(v.min()), float(v.max()))
    return out


def range_distance(X, ranges: dict, skip=()) -> np.ndarray:
    """Per row of ``X``, Σ over the columns of ``ranges`` (but ``skip``) of log2 of how far the value lies beyond
    its fitted range: log2(value / max) above it, log2(min / value) below it, 0 inside (and for a range that
    does not lie above 0, where a ratio means nothing). ``ValueError`` when ``X`` lacks a column."""
    out = np.zeros(len(X))
    for c, (lo, hi) in ranges.items():
        if c in skip or not (lo > 0 and hi > 0):
            continue
        if c not in X.columns:
            raise missing_column_error(X, c, "numeric")
        v = numeric_column(X, c, "numeric")
        v = np.where(v > 0, v, lo)  # a value <= 0 (which the forms refuse) has no ratio: counted as inside
        out += np.log2(np.maximum(np.maximum(v / hi, lo / v), 1.0))
    return out


def outside_fitted(X, ranges: dict, levels: dict | None = None):
    """``(flags, message)``: the Boolean Series (index of ``X``, name ``extrapolated``) of the rows with a value
    outside its column's fitted ``ranges`` or a level not in ``levels``, and "k of n rows lie outside the fitted
    data (column: what)", or "" when no row does. ``ValueError`` when ``X`` lacks a column."""
    import pandas as pd

    if not isinstance(X, pd.DataFrame):
        raise ValueError(f"X: expected a pandas DataFrame, got {type(X).__name__}")
    flags = np.zeros(len(X), dtype=bool)
    faults = []
    for c, (lo, hi) in ranges.items():
        if c not in X.columns:
            raise missing_column_error(X, c, "numeric")
        v = numeric_column(X, c, "numeric")
        below, above = v < lo, v > hi
        if below.any() or above.any():
            flags |= below | above
            what = [f"{int(m.sum())} below the fitted min {lo:g}" for m in (below,) if m.any()] + \
                   [f"{int(m.sum())} above the fitted max {hi:g}" for m in (above,) if m.any()]
            faults.append(f"{c!r}: " + ", ".join(what))
    for c, known in (levels or {}).items():
        if c not in X.columns:
            raise missing_column_error(X, c, "categorical")
        unseen = ~X[c].isin(known).to_numpy()
        if unseen.any():
            flags |= unseen
            new = list(dict.fromkeys(X[c].to_numpy()[unseen].tolist()))
            faults.append(f"{c!r}: unseen level{'s' if len(new) > 1 else ''} "
                          + ", ".join(repr(v) for v in new[:5]) + (" ..." if len(new) > 5 else ""))
    message = f"{int(flags.sum())} of {len(X)} rows lie outside the fitted data ({'; '.join(faults)})"
    return pd.Series(flags, index=X.index, name="extrapolated"), message if faults else ""


def check_saved_ranges(value, columns, fail) -> dict | None:
    """A saved ``ranges`` object checked: None (a file written before models kept their ranges), or exactly one
    ``[min, max]`` of finite numbers with min ≤ max per column of ``columns``; ``fail(message)`` builds the error."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != set(columns):
        raise fail(f"fitted.ranges: expected one [min, max] for each of {list(columns)}")
    out = {}
    for c, r in value.items():
        if not (isinstance(r, list) and len(r) == 2 and all(is_finite(x) for x in r)):
            raise fail(f"fitted.ranges[{c!r}]: expected [min, max] of finite numbers, got {r!r}")
        if r[0] > r[1]:
            raise fail(f"fitted.ranges[{c!r}]: min {r[0]!r} is above max {r[1]!r}")
        out[c] = (float(r[0]), float(r[1]))
    return out
