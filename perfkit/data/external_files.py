"""The folder of the shipped third-party data, and column readers whose errors name the file, column and row.

Shared by the loaders of :mod:`perfkit.data.external` (:mod:`perfkit.data.lambda_labs`,
:mod:`perfkit.data.nvidia_dle`).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..schema import data_dir

__all__ = ["MAX_BATCH", "MAX_GPUS", "MAX_STEP_TIME", "check_step_time", "count_column", "external_dir", "no_rows_error",
           "number_column", "require_columns", "row_where"]

#: Most GPUs (or nodes) one measured run can have: no machine has ten million GPUs; a count above it is not a
#: measurement (and a huge one would overflow the frame's integer columns).
MAX_GPUS = 10**7
#: Largest batch (per GPU or global, in samples) a measured run can have; the shipped files reach 8e7.
MAX_BATCH = 10**12
#: Longest time per step (seconds) a throughput may give: no measured step comes near it; a throughput so small
#: (or 0 underflowed, e.g. ``1e-320``) that the step would take longer is not a measurement.
MAX_STEP_TIME = 1e100
#: Shortest time per step (seconds) a measurement may have: no training step takes less than a nanosecond (a
#: denormal such as ``1e-320`` is a corrupted cell)
MIN_STEP_TIME = 1e-9


def external_dir() -> Path:
    """Folder of the shipped third-party data: ``data/external/`` (or ``$PERFKIT_DATA/external``)."""
    return data_dir() / "external"


def _plain(v):
    """``v`` as a plain Python value (a NumPy scalar's ``item()``), for messages that quote it."""
    return v.item() if isinstance(v, np.generic) else v


def row_where(df, i: int, label=None) -> str:
    """``"row 3 ('label value'), line 4"``: the data row ``i`` (0-based) of a CSV read with one header line."""
    return f"row {i + 1}" + (f" ({df[label].iloc[i]!r})" if label else "") + f", line {i + 2}"


def number_column(df, col: str, path, label=None):
    """Column ``col`` as floats; one error naming the file, row and column for a cell that is no number.

    Empty cells become NaN (the callers decide what a missing value means). ``label``
    names a column whose value identifies the row in the message.
    """
    import pandas as pd

    raw = df[col]
    flags = raw.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy()  # True/False is no count
    if flags.any():
        i = int(np.flatnonzero(flags)[0])
        raise ValueError(f"{path}: column {col!r}, {row_where(df, i, label)}: {_plain(raw.iloc[i])!r} is not a number")
    try:
        num = pd.to_numeric(raw, errors="coerce").astype(float)
    except (ValueError, OverflowError):  # a cell of thousands of digits
        num = pd.Series([_to_float(v) for v in raw], index=raw.index, dtype=float)
    text = raw.astype(str).str.strip()
    bad = (num.isna() & raw.notna() & (text != "") & (text.str.lower() != "nan")) | np.isinf(num)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueError(f"{path}: column {col!r}, {row_where(df, i, label)}: {_plain(raw.iloc[i])!r} is not a finite number")
    return num


def _to_float(v) -> float:
    """``float(v)``, or inf for a number too long or too large for a float (refused as not finite)."""
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError):
        return math.inf


def require_columns(df, columns, path, what: str) -> None:
    """Every name of ``columns`` is a column of ``df``, else one error naming the file and the first missing one."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: column {missing[0]!r} missing (a {what} needs {list(columns)})")


def count_column(df, col: str, path, label=None, allow_missing: bool = False):
    """Whole numbers from 1 to :data:`MAX_GPUS` (GPU or node counts) as an int array; NaN kept as -1 when
    ``allow_missing``. Anything else is one error naming the file, column and row."""
    values = df[col]
    num = number_column(df, col, path, label)
    out = np.full(len(num), -1, dtype=np.int64)
    for i, v in enumerate(num.to_numpy()):
        if math.isnan(v) and allow_missing:
            continue
        if math.isnan(v) or v < 1 or v > MAX_GPUS or v != int(v):
            raise ValueError(f"{path}: column {col!r}, {row_where(df, i, label)}: expected a whole number >= 1 "
                             f"and at most {MAX_GPUS:,}, got {_plain(values.iloc[i])!r}")
        out[i] = int(v)
    return out


def check_step_time(path, col: str, at: str, throughput: float, batch_global: int) -> float:
    """``batch_global / throughput`` (seconds per step), after checking that it is a measurement: a finite
    throughput > 0 and a step of at most :data:`MAX_STEP_TIME` s; else one error naming the file, column and
    cell (``at``)."""
    throughput = float(throughput)
    try:
        t = batch_global / throughput if math.isfinite(throughput) and throughput > 0 else math.inf
    except OverflowError:
        t = math.inf
    if not (MIN_STEP_TIME <= t <= MAX_STEP_TIME):
        raise ValueError(f"{path}: column {col!r}, {at}: throughput {throughput!r} with a global batch of "
                         f"{batch_global} gives {t:g} s per step; that is not a measurement")
    return t


def no_rows_error(path, dropped: dict) -> ValueError:
    """The error for a table that gives no measurement: only a header, or every row left out (``dropped``)."""
    if not dropped:
        return ValueError(f"{path}: no data rows (only a header); the table is empty")
    return ValueError(f"{path}: no row is a usable measurement (rows left out: {dropped})")


def read_exact_table(path, columns, what: str):
    """The CSV at ``path`` as a DataFrame of text cells (every cell kept as written, e.g. a placement's digits), its
    header exactly ``columns`` (any order) and in that order; every row one cell per column, at least one data row.
    Anything else is one ``ValueError`` naming the file (and the column or row)."""
    import csv

    import pandas as pd

    from .._io import read_csv

    read_csv(path, what)  # the clear errors for a missing, unreadable or non-CSV file and a duplicate column
    with open(path, newline="", encoding="utf-8-sig") as fh:
        try:
            header, *rows = list(csv.reader(fh))
        except csv.Error as exc:
            raise ValueError(f"{what} {str(path)!r}: not a readable CSV ({exc})") from None
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(f"{path}: column {missing[0]!r} missing (a {what} has the columns {list(columns)})")
    extra = [c for c in header if c not in columns]
    if extra:
        raise ValueError(f"{path}: column {extra[0]!r} is not a column of a {what} (expected {list(columns)})")
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"{path}: row {i + 1}, line {i + 2}: {len(row)} cells where the header has "
                             f"{len(header)} columns {header}")
    if not rows:
        raise ValueError(f"{path}: no data rows (only a header); the table is empty")
    return pd.DataFrame(rows, columns=header, dtype=object)[list(columns)]
