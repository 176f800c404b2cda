"""Input validation for every model: arrays of times, and tables of configurations.

Bad input gets one clear :class:`ValueError` naming the argument, column or row
at fault. :func:`as_times`, :func:`broadcast_named` and :func:`wrap_like` check
the arrays the Chapter 3 equations and the metrics take; :func:`validate_frame`
and :func:`validate_target` check a DataFrame against the column roles of the
generic performance model (numeric intrinsic, categorical intrinsic, extrinsic,
target).
"""
from __future__ import annotations

import datetime
import difflib
import numbers
import unicodedata
from typing import Any, Sequence

import numpy as np

from .._checks import check_int, check_number

__all__ = ["validate_frame", "validate_target", "check_levels", "column_list", "missing_column_error", "numeric_column",
           "check_unique_roles", "as_times", "broadcast_named", "wrap_like", "MAX_TIME",
           "MISSING_LEVEL_HINT", "plain_value", "first_bad_row", "target_column"]

#: Largest measured time (seconds) :func:`validate_target` accepts with ``positive=True``. No real
#: measurement comes near it (the universe is about 4e17 s old); beyond ~1e154 the squared errors
#: of MSE/RMSE/R² overflow float64, so such values would give NaN scores rather than an error.
MAX_TIME = 1e100

#: How to keep a level that reads as missing (``.format(col=name)``). A categorical column has no missing
#: values: ``None``, NaN and ``pd.NA`` are not levels, and a CSV reader turns the cells ``NA``, ``None``,
#: ``null``, ``NaN`` and empty ones into them.
MISSING_LEVEL_HINT = ("if it is a level (a cell 'NA', 'None', 'null' or empty in a CSV is read as missing), give it "
                      "a name that is not missing, e.g. X[{col!r}].fillna('none'), or read the file with "
                      "pandas.read_csv(..., keep_default_na=False) (perfkit fit/predict/whatif: --na-is-level)")


def column_list(name: str, value) -> list[str]:
    """Normalise a column argument (None, ``"a,b"`` or a sequence of strings) to a list of names.

    Column names are strings: a name of another type (the integer ``0``) is one ``ValueError`` that
    says so, since ``0`` and ``"0"`` are different columns of a table and models save names as text.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    try:
        if isinstance(value, (bytes, bytearray)):
            raise TypeError
        out = list(value)
    except TypeError:
        raise ValueError(f"{name}: expected a list of column names, got {value!r}") from None
    for v in out:
        if not isinstance(v, str):
            v = plain_value(v)
            raise ValueError(f"{name}: column name {v!r} is {type(v).__name__ if v is not None else 'None'}, "
                             f"not a string; column names are strings (give {str(v)!r}, and name the table's "
                             "columns with strings: X.columns = X.columns.astype(str))")
    return [str(v) for v in out]


def _same_text(a: str, b: str) -> bool:
    return unicodedata.normalize("NFKC", a) == unicodedata.normalize("NFKC", b)


def _name_mismatch(names: list, col) -> str | None:
    """Why ``col`` matches none of ``names`` though one has the same text: another type, another Unicode
    form, or spaces around it; None if none has. The names are shown as ``ascii()`` can type them."""
    for c in names:
        if not isinstance(c, str) and str(plain_value(c)) == str(col):
            c = plain_value(c)
            return (f"the table's column is the {type(c).__name__} {c!r}, not the string {str(col)!r}; "
                    "name the table's columns with strings (X.columns = X.columns.astype(str))")
    if not isinstance(col, str):
        return None
    texts = [c for c in names if isinstance(c, str) and c != col]
    for c in texts:
        if _same_text(c, col):
            return (f"the table's column {ascii(c)} is the same text in another Unicode form than {ascii(col)}; "
                    f"give it exactly as {ascii(c)} or rename it")
    for c in texts:
        if _same_text(c.strip(), col.strip()):
            return (f"the table's column is {c!r}, with spaces around the name (a header with a space after "
                    f"a comma gives such names); remove the spaces from the header, or give the name exactly as {c!r} "
                    "(a comma-separated list of names drops them)")
    return None


def missing_column_error(frame, col: str, role: str) -> ValueError:
    """The error for a ``role`` column ``col`` that ``frame`` lacks: it says why a column of the same text does
    not match (another type, Unicode form or spaces around it), else suggests a close name (shown exactly)."""
    names = list(frame.columns)
    why = _name_mismatch(names, col)
    if why:
        return ValueError(f"{role} column {col!r} not found: {why}")
    shown = {str(plain_value(c)): plain_value(c) for c in names}
    close = difflib.get_close_matches(str(col), list(shown), n=1)
    hint = f"; did you mean {shown[close[0]]!r}?" if close else f"; columns are {[plain_value(c) for c in names]}"
    return ValueError(f"{role} column {col!r} not found{hint}")


def plain_value(v):
    """``v`` as a plain Python value (a numpy scalar's ``item()``), for messages that quote it."""
    return v.item() if isinstance(v, np.generic) else v


def _row_label(frame, pos: int):
    return plain_value(frame.index[pos])


def target_column(X) -> str:
    """A column name not in ``X`` for the target when a frame holds it beside the configurations
    (``__perfkit_target__``, with ``_`` appended while taken)."""
    name = "__perfkit_target__"
    while name in X.columns:
        name += "_"
    return name


def first_bad_row(bad, index):
    """``(position, label)`` of the first row that ``bad`` (a boolean array) marks, the label as a plain value for
    messages; None when none is marked."""
    hits = np.flatnonzero(np.asarray(bad, dtype=bool))
    return (int(hits[0]), plain_value(index[int(hits[0])])) if len(hits) else None


def check_unique_roles(roles) -> None:
    """``ValueError`` if a column appears twice in ``[(role, column), ...]``, naming both roles."""
    seen: dict[str, str] = {}
    for role, col in roles:
        if col in seen:
            raise ValueError(f"column {col!r} is given twice (as {seen[col]} and as {role})")
        seen[col] = role


#: what a dtype that is no real numbers holds → (one such value, how to give it as real numbers)
_NOT_REAL = {
    "complex numbers": ("a complex number", "give the real part (.real) if that is what was measured"),
    "dates or times": ("a date or time", "give a number instead (e.g. seconds since a start)"),
    "durations": ("a duration", "give them as seconds (.dt.total_seconds())"),
    "periods": ("a period", "give a number instead"),
    "intervals": ("an interval", "give a number instead (e.g. each interval's midpoint)"),
    "True/False values": ("True/False", "give numbers (.astype(int)) or make it a categorical column"),
}


def _not_real_dtype(dtype) -> str | None:
    """What a column of ``dtype`` holds when that is not real numbers (a key of ``_NOT_REAL``), else None."""
    import pandas as pd

    if isinstance(dtype, pd.CategoricalDtype):
        return _not_real_dtype(dtype.categories.dtype)
    if isinstance(dtype, pd.PeriodDtype):
        return "periods"
    if isinstance(dtype, pd.IntervalDtype):
        return "intervals"
    if isinstance(dtype, pd.BooleanDtype):
        return "True/False values"
    kind = getattr(dtype, "kind", "")
    return {"c": "complex numbers", "M": "dates or times", "m": "durations", "b": "True/False values"}.get(kind)


def _not_real_value(v) -> str | None:
    """What ``v`` (a cell of an object column) is when it is not a real number nor text, else None."""
    import pandas as pd

    if isinstance(v, (bool, np.bool_)):
        return "True/False values"
    if isinstance(v, (complex, np.complexfloating)):
        return "complex numbers"
    if isinstance(v, (datetime.date, datetime.time, np.datetime64)):
        return "dates or times"
    if isinstance(v, (datetime.timedelta, np.timedelta64)):
        return "durations"
    if isinstance(v, (pd.Period, pd.Interval)):
        return "periods" if isinstance(v, pd.Period) else "intervals"
    return None


def _check_real(s, name: str, labels) -> None:
    """``ValueError`` naming ``name`` and the dtype (or the row and value) when ``s`` holds no real numbers:
    complex numbers, dates, durations, periods, intervals, True/False, or an integer too large for a float."""
    what = _not_real_dtype(s.dtype)
    if what:
        raise ValueError(f"{name}: dtype {s.dtype} holds {what}, not real numbers; {_NOT_REAL[what][1]}")
    if s.dtype != object:
        return
    for pos, v in enumerate(s.to_numpy()):
        what = _not_real_value(v)
        if what:
            raise ValueError(f"{name}: value {v!r} in row {plain_value(labels[pos])!r} is {_NOT_REAL[what][0]}, "
                             f"not a real number; {_NOT_REAL[what][1]}")
        if isinstance(v, numbers.Integral) and not isinstance(v, str):
            try:
                float(v)
            except OverflowError:
                raise ValueError(f"{name}: value in row {plain_value(labels[pos])!r} is an integer too large for "
                                 f"a float ({len(str(abs(int(v))))} digits)") from None


def numeric_column(frame, col: str, role: str) -> np.ndarray:
    """A column as floats; ``ValueError`` naming column and row for a non-numeric, missing or infinite value,
    and naming the column and dtype for one that holds no real numbers (complex, dates, durations, True/False)."""
    import pandas as pd

    s = frame[col]
    _check_real(s, f"{role} column {col!r}", frame.index)
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


def _check_table(X, min_rows: int) -> None:
    """The table as a whole: one name per column (not a MultiIndex), no name twice, at least ``min_rows`` rows."""
    import pandas as pd

    if isinstance(X.columns, pd.MultiIndex):
        raise ValueError(f"X: its columns have {X.columns.nlevels} levels (a MultiIndex, e.g. "
                         f"{plain_value(X.columns[0])!r}); perfkit reads one name per column: flatten them first, e.g. "
                         "X.columns = ['_'.join(map(str, c)) for c in X.columns]")
    dup = X.columns.duplicated()
    if dup.any():
        name = plain_value(X.columns[int(np.flatnonzero(dup)[0])])
        raise ValueError(f"X: column {name!r} appears more than once; rename or drop the copies "
                         "(it is ambiguous which one the model should use)")
    if len(X) == 0:
        raise ValueError("X: the table is empty (0 rows)")
    if len(X) < min_rows:
        raise ValueError(f"X: {len(X)} rows are fewer than the {min_rows} needed (the model has that many parameters)")


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
        Missing or misspelt column (with a suggestion, or the reason a column of
        the same text does not match: an integer name, another Unicode form,
        spaces around it), a column used twice, a column name that appears twice
        in ``X``, a categorical level a saved model could not keep (in fit, without
        ``categories``: :func:`check_levels`), NaN/inf, non-numeric values, a numeric or extrinsic column
        whose dtype or values are not real numbers (complex, dates, durations,
        periods, intervals, True/False; named with the dtype), values <= 0 in a
        powered column, a missing level (the message says how to keep ``NA`` or
        ``None`` as a level), unseen categories, an empty frame or too few rows.
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
    _check_table(X, min_rows)
    for role, col in roles:
        if col not in X.columns:
            raise missing_column_error(X, col, role)
        s = X[col]
        if role == "categorical":
            na = s.isna().to_numpy()
            if na.any():
                pos = int(np.flatnonzero(na)[0])
                raise ValueError(f"categorical column {col!r}: missing value {plain_value(s.iloc[pos])!r} in row "
                                 f"{_row_label(X, pos)!r}; " + MISSING_LEVEL_HINT.format(col=col))
            check_levels(X, [col], None if categories is None else categories[col])  # True is not the level 1
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


def check_levels(X, categorical, known=None) -> None:
    """Every level of the ``categorical`` columns of ``X`` is one a saved model keeps as it is: a string or a
    finite number (True/False, inf, dates, tuples and other objects would not read back from the model's JSON).
    Raises one ValueError naming the column, the level and its type; with ``known`` (a fitted model's levels,
    in predict) it says that the level is not one of them (True is never the level 1)."""
    import pandas as pd

    from .persist import is_finite

    for col in categorical:
        for level in pd.unique(X[col].to_numpy(dtype=object)):
            value = level.item() if hasattr(level, "item") and not isinstance(level, str) else level
            if (isinstance(value, bool) or not (isinstance(value, str) or is_finite(value))) and known is not None:
                raise ValueError(f"categorical column {col!r}: level {value!r} ({type(level).__name__}) is not one "
                                 f"of the fitted levels {sorted(map(str, known))} (True/False are not read as 1/0)")
            if isinstance(value, bool) or not (isinstance(value, str) or is_finite(value)):
                raise ValueError(f"categorical column {col!r}: level {value!r} ({type(level).__name__}) cannot be "
                                 "saved in the model's JSON and read back as the same level; write the levels as "
                                 "text (e.g. yes/no) or as numbers")


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
    raw = np.asarray(y).ravel()
    labels = X.index if X is not None and len(X) == len(raw) else pd.RangeIndex(len(raw))
    _check_real(pd.Series(raw), name, labels)
    values = pd.to_numeric(pd.Series(raw), errors="coerce")
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
        at = first_bad_row(arr <= 0, labels)
        if at:
            raise ValueError(f"{name}: value {arr[at[0]]:g} in row {at[1]!r} must be > 0 (measured times are positive)")
        at = first_bad_row(arr > MAX_TIME, labels)
        if at:
            raise ValueError(f"{name}: value {arr[at[0]]:g} in row {at[1]!r} is too large for a time (limit "
                             f"{MAX_TIME:g} s; larger values overflow the fit's error metrics); are the times in seconds?")
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
