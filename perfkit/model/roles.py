"""Column roles of every model form: the columns, the levels seen in fit, and the constant columns.

Every form takes the same three roles (numeric intrinsic, categorical intrinsic, extrinsic) and learns the
same facts about them in ``fit``: the levels of each categorical column (sorted as strings), the columns that
hold one value only (:func:`constant_columns`, reported once per fit by :func:`warn_constant_columns` as a
:class:`ConstantColumnWarning`), and the scikit-learn attributes ``n_features_in_`` (the number of role
columns) and ``feature_names_in_`` (their names: numeric, categorical, extrinsic).
"""
from __future__ import annotations

import warnings

import numpy as np

from .persist import jsonable
from .validation import column_list

__all__ = ["ConstantColumnWarning", "role_lists", "levels_seen", "constant_columns", "warn_constant_columns",
           "record_roles"]


class ConstantColumnWarning(UserWarning):
    """A numeric or extrinsic column is constant (its power is fixed at 0), or a categorical has one level."""


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
