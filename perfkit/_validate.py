"""Input checks shared by the equation and metric functions.

Every public function of perfkit validates its inputs here so that bad input
gives one clear :class:`ValueError` naming the argument at fault.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_times", "broadcast_named", "wrap_like"]


def _index_of(value: Any):
    """Return the pandas index of a Series, or None for anything else."""
    index = getattr(value, "index", None)
    if index is not None and getattr(value, "ndim", 0) == 1:
        return index
    return None


def as_times(name: str, value: Any, *, allow_zero: bool = True) -> np.ndarray:
    """Convert ``value`` to a float array of times and check it.

    Parameters
    ----------
    name : str
        Name of the argument, used in error messages.
    value : array_like
        Scalar, list, NumPy array or pandas Series of times in seconds.
    allow_zero : bool, default True
        Whether zero is an acceptable time.

    Returns
    -------
    numpy.ndarray
        The values as a float array (0-d for scalars).

    Raises
    ------
    ValueError
        If the values are not numeric, not finite or negative (or zero when
        ``allow_zero`` is False).
    """
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected numeric times, got {value!r}") from exc
    if arr.size == 0:
        raise ValueError(f"{name}: empty input")
    bad = ~np.isfinite(arr)
    if bad.any():
        pos = int(np.flatnonzero(bad.ravel())[0])
        raise ValueError(f"{name}: non-finite value {float(arr.ravel()[pos])!r} at position {pos}")
    neg = arr < 0 if allow_zero else arr <= 0
    if neg.any():
        pos = int(np.flatnonzero(neg.ravel())[0])
        what = "negative" if allow_zero else "non-positive"
        raise ValueError(
            f"{name}: {what} time {float(arr.ravel()[pos])!r} at position {pos}; times must be "
            + (">= 0" if allow_zero else "> 0")
        )
    return arr


def broadcast_named(**arrays: np.ndarray) -> dict[str, np.ndarray]:
    """Broadcast named arrays together, naming the culprits on a shape mismatch."""
    try:
        out = np.broadcast_arrays(*arrays.values())
    except ValueError:
        shapes = ", ".join(f"{k}{tuple(np.shape(v))}" for k, v in arrays.items())
        raise ValueError(f"mismatched lengths: cannot broadcast {shapes}") from None
    return dict(zip(arrays.keys(), out))


def wrap_like(result: np.ndarray, *inputs: Any):
    """Return a float for 0-d results, a Series if any input was a Series."""
    result = np.asarray(result, dtype=float)
    if result.ndim == 0:
        return float(result)
    for value in inputs:
        index = _index_of(value)
        if index is not None and len(index) == result.shape[0] and result.ndim == 1:
            import pandas as pd

            return pd.Series(result, index=index)
    return result
