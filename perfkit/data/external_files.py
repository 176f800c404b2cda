"""The folder of the shipped third-party data, and column readers whose errors name the file, column and row.

Shared by the loaders of :mod:`perfkit.data.external` (:mod:`perfkit.data.lambda_labs`,
:mod:`perfkit.data.nvidia_dle`).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..schema import data_dir

__all__ = ["count_column", "external_dir", "number_column", "require_columns"]


def external_dir() -> Path:
    """Folder of the shipped third-party data: ``data/external/`` (or ``$PERFKIT_DATA/external``)."""
    return data_dir() / "external"


def _where(df, i: int, label) -> str:
    return f"row {i + 1}" + (f" ({df[label].iloc[i]!r})" if label else "") + f", line {i + 2}"


def number_column(df, col: str, path, label=None):
    """Column ``col`` as floats; one error naming the file, row and column for a cell that is no number.

    Empty cells become NaN (the callers decide what a missing value means). ``label``
    names a column whose value identifies the row in the message.
    """
    import pandas as pd

    raw = df[col]
    num = pd.to_numeric(raw, errors="coerce").astype(float)
    text = raw.astype(str).str.strip()
    bad = (num.isna() & raw.notna() & (text != "") & (text.str.lower() != "nan")) | np.isinf(num)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueError(f"{path}: column {col!r}, {_where(df, i, label)}: {raw.iloc[i]!r} is not a finite number")
    return num


def require_columns(df, columns, path, what: str) -> None:
    """Every name of ``columns`` is a column of ``df``, else one error naming the file and the first missing one."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: column {missing[0]!r} missing (a {what} needs {list(columns)})")


def count_column(df, col: str, path, label=None, allow_missing: bool = False):
    """Whole numbers >= 1 (GPU or node counts) as an int array; NaN kept as -1 when ``allow_missing``."""
    values = df[col]
    num = number_column(df, col, path, label)
    out = np.full(len(num), -1, dtype=np.int64)
    for i, v in enumerate(num.to_numpy()):
        if math.isnan(v) and allow_missing:
            continue
        if math.isnan(v) or v < 1 or v != int(v):
            raise ValueError(f"{path}: column {col!r}, {_where(df, i, label)}: expected a whole number >= 1, "
                             f"got {values.iloc[i]!r}")
        out[i] = int(v)
    return out
