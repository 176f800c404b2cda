"""Column roles of every model form: the columns, the levels seen in fit, and the constant columns.

Every form takes the same three roles (numeric intrinsic, categorical intrinsic, extrinsic) and learns the
same facts about them in ``fit``: the levels of each categorical column (sorted as strings), the columns that
hold one value only (:func:`constant_columns`, reported once per fit by :func:`warn_constant_columns` as a
:class:`ConstantColumnWarning`), and the scikit-learn attributes ``n_features_in_`` (the number of role
columns) and ``feature_names_in_`` (their names: numeric, categorical, extrinsic).

A form reads only its role columns: :func:`warn_ignored_columns` names the other columns of a table it is given
(an :class:`IgnoredColumnWarning`); :func:`count_column` and :func:`column_equals` are the checks of a column of
counts (whole numbers >= 1) and of a column that must hold a constant the form uses.
"""
from __future__ import annotations

import warnings

import numpy as np

from .persist import jsonable
from .validation import column_list, numeric_column, plain_value

__all__ = ["ConstantColumnWarning", "IgnoredColumnWarning", "role_lists", "levels_seen", "constant_columns",
           "warn_constant_columns", "warn_ignored_columns", "record_roles", "count_column", "column_equals"]


class ConstantColumnWarning(UserWarning):
    """A numeric or extrinsic column is constant (its power is fixed at 0), or a categorical has one level."""


class IgnoredColumnWarning(UserWarning):
    """A table given to a form holds columns that are none of the form's columns: the form does not read them."""


def role_lists(numeric, categorical, extrinsic) -> tuple[list, list, list]:
    """The three role settings as lists of column names (a comma-separated string is accepted)."""
    return (column_list("numeric", numeric), column_list("categorical", categorical),
            column_list("extrinsic", extrinsic))


def levels_seen(X, categorical) -> dict:
    """Levels of each categorical column of ``X``, sorted as strings (the first is a form's reference level)."""
    return {c: sorted(X[c].unique().tolist(), key=str) for c in categorical}


def constant_columns(X, num, cat, ext, categories) -> dict:
    """Columns with a single value in ``X``, column → that value (a Python scalar): numeric and extrinsic
    columns by their float values, categorical ones by their levels (``categories``, :func:`levels_seen`)."""
    constant = {}
    for c in num + ext:
        values = X[c].to_numpy(dtype=float)
        if np.all(values == values[0]):
            constant[c] = jsonable(values[0])
    for c in cat:
        if len(categories[c]) == 1:
            constant[c] = jsonable(categories[c][0])
    return constant


def warn_constant_columns(constant: dict, num, ext, stacklevel: int = 3) -> None:
    """One :class:`ConstantColumnWarning` naming every column of ``constant`` (:func:`constant_columns`) and
    what a form does with it; ``stacklevel`` as for :func:`warnings.warn` (the default, 3, names the caller of
    the ``fit`` that calls this)."""
    parts = []
    for c, v in constant.items():
        if c in num:
            parts.append(f"numeric column {c!r} is constant (every row is {v!r}): its power cannot be determined; "
                         "the term is fixed at p = 0 (a constant, like a categorical level)")
        elif c in ext:
            parts.append(f"extrinsic column {c!r} is constant (every row is {v!r}): its power cannot be determined; "
                         "it is fixed at q = 0 (factor 1)")
        else:
            parts.append(f"categorical column {c!r} has one level ({v!r}): its constant cannot be told apart from C")
    warnings.warn("; ".join(parts) + ". Vary these columns in the measurements to fit their effect.",
                  ConstantColumnWarning, stacklevel=stacklevel)


def record_roles(model, num, cat, ext) -> None:
    """Set the fitted roles on ``model``: ``numeric_``, ``categorical_``, ``extrinsic_`` and ``n_features_in_``."""
    model.numeric_, model.categorical_, model.extrinsic_ = num, cat, ext
    model.n_features_in_ = len(num) + len(cat) + len(ext)


def warn_ignored_columns(model, X, stacklevel: int = 3) -> None:
    """One :class:`IgnoredColumnWarning` naming the columns of ``X`` that are none of ``model``'s fitted columns
    (``numeric_``, ``categorical_``, ``extrinsic_``): the form reads only its own columns, so a value there
    changes no prediction. Nothing is said when ``X`` has no such column."""
    used = set(model.numeric_) | set(model.categorical_) | set(model.extrinsic_)
    extra = [c.item() if isinstance(c, np.generic) else c for c in X.columns if c not in used]
    if extra:
        shown = extra if len(extra) <= 12 else extra[:12] + [f"... {len(extra) - 12} more"]
        warnings.warn(f"{type(model).__name__} reads only its columns {sorted(used)}; it ignores column(s) {shown} "
                      "of the table (they change no prediction)", IgnoredColumnWarning, stacklevel=stacklevel)


def count_column(X, col, role: str = "count") -> np.ndarray:
    """Column ``col`` of ``X`` as floats, each a whole number >= 1 (a batch, workers, a training-set size):
    one ``ValueError`` naming the ``role`` and column, the value and the row otherwise."""
    v = numeric_column(X, col, role)
    bad = ~((v >= 1) & (v == np.floor(v)))
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise ValueError(f"column {col!r}: value {v[pos]:g} in row {plain_value(X.index[pos])!r} is not a whole "
                         "number >= 1 (a count of samples or workers)")
    return v


def column_equals(values, used, key) -> np.ndarray:
    """Mask of the entries of the column ``values`` equal to ``used`` (a value, or one per row; ``key`` names the
    configuration key): a ``volume`` as three sizes, text as text, numbers as floats (NaN equals nothing)."""
    import pandas as pd

    from ..schema import parse_volume

    raw = values.to_numpy()
    if key == "volume":
        def sizes(v):
            try:
                return tuple(parse_volume(v, name=key))
            except (ValueError, TypeError):
                return None
        want = sizes(used)
        return np.array([want is not None and sizes(v) == want for v in raw], dtype=bool)
    if isinstance(used, str):
        return np.array([isinstance(v, str) and v == used for v in raw], dtype=bool)
    got = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    return got == np.asarray(used, dtype=float)
