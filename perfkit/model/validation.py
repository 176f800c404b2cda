"""Input validation for every model: arrays of times, and tables of configurations.

Bad input gets one clear :class:`ValueError` naming the argument, column or row
at fault. :func:`as_times`, :func:`broadcast_named` and :func:`wrap_like` check
the arrays the Chapter 3 equations and the metrics take; :func:`validate_frame`
and :func:`validate_target` check a DataFrame against the column roles of the
generic performance model (numeric intrinsic, categorical intrinsic, extrinsic,
target).
"""
from __future__ import annotations

import difflib
from typing import Any, Sequence

import numpy as np

from .._checks import check_int, check_number

__all__ = ["validate_frame", "validate_target", "column_list", "missing_column_error", "numeric_column",
           "check_unique_roles", "check_int", "check_number", "as_times", "broadcast_named", "wrap_like", "MAX_TIME", "plain_value"]

#: Largest measured time (seconds) :func:`validate_target` accepts with ``positive=True``. No real
#: measurement comes near it (the universe is about 4e17 s old); beyond ~1e154 the squared errors
#: of MSE/RMSE/R² overflow float64, so such values would give NaN scores rather than an error.
MAX_TIME = 1e100


def column_list(name: str, value) -> list[str]:
    """Normalise a column argument (None, ``"a,b"`` or a sequence) to a list of names."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    try:
        out = [str(v) for v in value]
    except TypeError:
        raise ValueError(f"{name}: expected a list of column names, got {value!r}") from None
    return out


def missing_column_error(frame, col: str, role: str) -> ValueError:
    close = difflib.get_close_matches(col, [str(c) for c in frame.columns], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else f"; columns are {list(frame.columns)}"
    return ValueError(f"{role} column {col!r} not found{hint}")


def plain_value(v):
    """``v`` as a plain Python value (a numpy scalar's ``item()``), for messages that quote it."""
    return v.item() if isinstance(v, np.generic) else v


def _row_label(frame, pos: int):
    return plain_value(frame.index[pos])


def check_unique_roles(roles) -> None:
    """``ValueError`` if a column appears twice in ``[(role, column), ...]``, naming both roles."""
    seen: dict[str, str] = {}
    for role, col in roles:
        if col in seen:
            raise ValueError(f"column {col!r} is given twice (as {seen[col]} and as {role})")
        seen[col] = role


def numeric_column(frame, col: str, role: str) -> np.ndarray:
    """A column as floats; ``ValueError`` naming column and row for a non-numeric, missing or infinite value."""
    import pandas as pd

    s = frame[col]
    values = pd.to_numeric(s, errors="coerce")
    bad = values.isna().to_numpy() & s.notna().to_numpy()
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{role} column {col!r}: non-numeric value {plain_value(s.iloc[pos])!r} in row {_row_label(frame, pos)!r}")
    arr = values.to_numpy(dtype=float)
    nonfinite = ~np.isfinite(arr)
    if nonfinite.any():
        pos = int(np.flatnonzero(nonfinite)[0])
        raise ValueError(f"{role} column {col!r}: missing or non-finite value {arr[pos]} in row {_row_label(frame, pos)!r}")
    return arr


def validate_frame(
    X,
    numeric: Sequence[str] = (),
    categorical: Sequence[str] = (),
    extrinsic: Sequence[str] = (),
    *,
    categories: dict | None = None,
    min_rows: int = 1,
):
    """Check a table of configurations and return it as a DataFrame.

    Parameters
    ----------
    X : pandas.DataFrame
        One row per measured configuration.
    numeric, extrinsic : sequence of str
        Columns raised to a fitted power: they must be numeric, finite and > 0.
    categorical : sequence of str
        Columns treated as categories (any values but missing ones).
    categories : dict, optional
        Known levels per categorical column (from fitting); a level not in it
        raises an error naming the column, the value and the row.
    min_rows : int, default 1
        Fewest rows accepted.

    Returns
    -------
    pandas.DataFrame
        ``X`` itself (not copied).

    Raises
    ------
    ValueError
        Missing or misspelt column (with a suggestion), a column used twice,
        a column name that appears twice in ``X``, NaN/inf, non-numeric values,
        values <= 0 in a powered column, unseen categories, an empty frame or
        too few rows.
    """
    import pandas as pd

    if not isinstance(X, pd.DataFrame):
        raise ValueError(f"X: expected a pandas DataFrame, got {type(X).__name__}")
    roles = [("numeric", c) for c in numeric] + [("categorical", c) for c in categorical] + [
        ("extrinsic", c) for c in extrinsic
    ]
    if not roles:
        raise ValueError("no columns given: set numeric, categorical and/or extrinsic")
    check_unique_roles(roles)
    dup = X.columns.duplicated()
    if dup.any():
        name = plain_value(X.columns[int(np.flatnonzero(dup)[0])])
        raise ValueError(f"X: column {name!r} appears more than once; rename or drop the copies "
                         "(it is ambiguous which one the model should use)")
    if len(X) == 0:
        raise ValueError("X: the table is empty (0 rows)")
    if len(X) < min_rows:
        raise ValueError(f"X: {len(X)} rows are fewer than the {min_rows} needed (the model has that many parameters)")
    for role, col in roles:
        if col not in X.columns:
            raise missing_column_error(X, col, role)
        s = X[col]
        if role == "categorical":
            na = s.isna().to_numpy()
            if na.any():
                raise ValueError(f"categorical column {col!r}: missing value in row {_row_label(X, int(np.flatnonzero(na)[0]))!r}")
            if categories is not None:
                known = set(categories[col])
                unseen = ~s.isin(known).to_numpy()
                if unseen.any():
                    pos = int(np.flatnonzero(unseen)[0])
                    raise ValueError(
                        f"categorical column {col!r}: unseen category {plain_value(s.iloc[pos])!r} in row "
                        f"{_row_label(X, pos)!r}; known: {sorted(map(str, known))}"
                    )
            continue
        arr = numeric_column(X, col, role)
        nonpos = arr <= 0
        if nonpos.any():
            pos = int(np.flatnonzero(nonpos)[0])
            raise ValueError(
                f"{role} column {col!r}: value {arr[pos]:g} in row {_row_label(X, pos)!r} must be > 0 "
                "(it is raised to a fitted power)"
            )
    return X


def validate_target(y, X=None, name: str = "y", positive: bool = False):
    """Check the measured times: numeric, finite, one per row of ``X``. Returns a float array.

    Parameters
    ----------
    y : array_like
        The target values.
    X : pandas.DataFrame, optional
        Its rows label the errors (row labels of ``X``) and fix the expected length.
    name : str, default "y"
        How errors name the target (e.g. ``"target column 'time'"``).
    positive : bool, default False
        The values are measured times: every value must be > 0 and at most
        :data:`MAX_TIME` (1e100 s). Zero or negative times are not
        measurements, and values that large cannot be real durations (they are
        a unit error) and would overflow the squared-error metrics to NaN.
    """
    import pandas as pd

    if isinstance(y, str):
        raise ValueError(f"{name}: expected the target values, got the string {y!r} (pass X[{y!r}])")
    values = pd.to_numeric(pd.Series(np.asarray(y).ravel()), errors="coerce")
    raw = np.asarray(y).ravel()
    labels = X.index if X is not None and len(X) == len(raw) else pd.RangeIndex(len(raw))
    bad = values.isna().to_numpy()
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}: non-numeric or missing value {plain_value(raw[pos])!r} in row {plain_value(labels[pos])!r}")
    arr = values.to_numpy(dtype=float)
    nonfinite = ~np.isfinite(arr)
    if nonfinite.any():
        pos = int(np.flatnonzero(nonfinite)[0])
        raise ValueError(f"{name}: non-finite value {arr[pos]} in row {plain_value(labels[pos])!r}")
    if X is not None and len(arr) != len(X):
        raise ValueError(f"{name}: {len(arr)} values for {len(X)} rows of X")
    if positive:
        nonpos = arr <= 0
        if nonpos.any():
            pos = int(np.flatnonzero(nonpos)[0])
            raise ValueError(f"{name}: value {arr[pos]:g} in row {plain_value(labels[pos])!r} must be > 0 "
                             "(measured times are positive)")
        huge = arr > MAX_TIME
        if huge.any():
            pos = int(np.flatnonzero(huge)[0])
            raise ValueError(f"{name}: value {arr[pos]:g} in row {plain_value(labels[pos])!r} is too large for a time "
                             f"(limit {MAX_TIME:g} s; larger values overflow the fit's error metrics); "
                             "are the times in seconds?")
    return arr


# ----------------------------------------------------------------- arrays of times
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
