"""GPU datasheet facts (``data/external/hardware/gpu_specs.csv``) and their join onto a table of measurements:
:func:`load_gpu_specs`, :func:`gpu_spec`, :func:`canonical_gpus`, :func:`hardware_columns`, :func:`join_hardware`.

One row per GPU model, every value from the vendor's datasheet or architecture whitepaper (the ``source`` column
says which document gives which value; ``data/external/hardware.provenance.json`` the file's sha256). These are
facts, not measurements: what lets a model fitted on some GPUs predict another from its spec sheet.

Guarantees: :func:`load_gpu_specs` returns every row of the file with the columns of :data:`GPU_SPEC_COLUMNS` in
order; numbers are ``float64`` (NaN only in :data:`OPTIONAL_NUMBERS`), text is ``str``. Every name in ``gpu`` and
``aliases`` names one row only. A user's own CSV with the same columns (``path=``) passes the same checks.
:func:`hardware_columns` gives, for every row of a table, the GPU's canonical name and its spec values under the
names of :data:`HARDWARE_COLUMNS`, the peak for the row's precision chosen by :func:`peak_for`. An unknown GPU
name is one ``ValueError`` naming the column, the row and the closest known names; so is an unknown precision.

>>> gpu_spec("LambdaCloud V100 16GB")["gpu"]
'V100 16GB SXM2'
"""
from __future__ import annotations

import difflib
import math
import os

import numpy as np

from .._io import path_argument
from .external_files import external_dir, number_column, read_exact_table, row_where

__all__ = ["GPU_SPEC_COLUMNS", "HARDWARE_COLUMNS", "HALF_PRECISIONS", "FULL_PRECISIONS", "OPTIONAL_NUMBERS",
           "load_gpu_specs", "gpu_spec", "canonical_gpus", "peak_for", "hardware_columns", "join_hardware"]

#: Columns of ``gpu_specs.csv`` (and of :func:`load_gpu_specs`'s frame), in order.
GPU_SPEC_COLUMNS = ("gpu", "aliases", "vendor", "architecture", "year", "form_factor", "fp32_tflops", "fp16_tflops",
                    "tensor_fp16_tflops", "tensor_tf32_tflops", "mem_gbps", "mem_gb", "sms", "boost_mhz", "l2_mb",
                    "tdp_w", "link", "link_gbps", "source", "confidence", "note")
_NUMBERS = ("year", "fp32_tflops", "fp16_tflops", "tensor_fp16_tflops", "tensor_tf32_tflops", "mem_gbps", "mem_gb",
            "sms", "boost_mhz", "l2_mb", "tdp_w", "link_gbps")
#: Numbers a GPU may lack (an empty cell): a vector FP16 rate no document states, TF32 before Ampere, tensor cores
#: a GPU does not have.
OPTIONAL_NUMBERS = ("fp16_tflops", "tensor_fp16_tflops", "tensor_tf32_tflops")
_TEXT = ("gpu", "vendor", "architecture", "form_factor", "link", "source", "confidence")
_OPTIONAL_TEXT = ("aliases", "note")
#: Precisions trained on tensor cores at half width (mixed precision): the peak is ``tensor_fp16_tflops``.
HALF_PRECISIONS = ("fp16", "amp", "bf16", "mixed", "half")
#: Full-width precisions: the peak is ``tensor_tf32_tflops`` where the GPU has TF32 tensor cores (NVIDIA's
#: containers, which Lambda's and DeepLearningExamples' scripts run in, allow TF32 for FP32 training from Ampere
#: on), else ``fp32_tflops``.
FULL_PRECISIONS = ("fp32", "tf32", "full")
#: The columns :func:`hardware_columns` adds, in order (``hw_gpu`` is the canonical name).
HARDWARE_COLUMNS = ("hw_gpu", "hw_peak_tflops", "hw_fp32_tflops", "hw_mem_gbps", "hw_mem_gb", "hw_sms",
                    "hw_boost_mhz", "hw_l2_mb", "hw_link_gbps")
_LARGEST = {"year": 2100, "sms": 10_000, "boost_mhz": 10_000, "tdp_w": 10_000}


def _path(path):
    if path is None:
        return external_dir() / "hardware" / "gpu_specs.csv"
    return path_argument(path, "path", "the path of a CSV GPU spec table")


def _text(df, col: str, path) -> list:
    out = []
    for i, v in enumerate(df[col]):
        s = "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v).strip()
        if not s and col not in _OPTIONAL_TEXT:
            raise ValueError(f"{path}: column {col!r}, {row_where(df, i, 'gpu')}: empty; give a value")
        out.append(s)
    return out


def _numbers(df, col: str, path) -> np.ndarray:
    num = number_column(df, col, path, "gpu").to_numpy(dtype=float)
    top = _LARGEST.get(col, 1e7)
    for i, v in enumerate(num):
        if math.isnan(v) and col in OPTIONAL_NUMBERS:
            continue
        if math.isnan(v) or not 0 < v <= top:
            what = "empty" if math.isnan(v) else f"got {df[col].iloc[i]!r}"
            raise ValueError(f"{path}: column {col!r}, {row_where(df, i, 'gpu')}: expected a number > 0 and at most "
                             f"{top:g}, {what}")
    return num


def _names(gpus: list, aliases: list, df, path) -> dict:
    """``{name: row}`` over every GPU name and alias; a name on two rows is an error naming both."""
    seen = {}
    for i, (gpu, more) in enumerate(zip(gpus, aliases)):
        for name in [gpu] + [a.strip() for a in more.split(";") if a.strip()]:
            if name in seen and seen[name] != i:
                raise ValueError(f"{path}: {row_where(df, i, 'gpu')}: the name {name!r} also names "
                                 f"{row_where(df, seen[name], 'gpu')}; give each name one row")
            seen[name] = i
    return seen


def load_gpu_specs(path=None):
    """The GPU spec table, one row per GPU model, checked.

    Parameters
    ----------
    path : path, optional
        A CSV with the columns of :data:`GPU_SPEC_COLUMNS` (your own GPUs); default the shipped
        ``data/external/hardware/gpu_specs.csv``.

    Returns
    -------
    pandas.DataFrame
        :data:`GPU_SPEC_COLUMNS`; ``attrs["names"]`` maps every name and alias to its row's ``gpu``,
        ``attrs["source"]`` is the file read.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        A missing or extra column, a row with more or fewer cells than the header, no data row, an empty required
        cell, a number that is not > 0 (or empty outside :data:`OPTIONAL_NUMBERS`), a name or alias on two rows.
        The message names the file, the column and the row.
    """
    import pandas as pd

    path = _path(path)
    df = read_exact_table(path, GPU_SPEC_COLUMNS, "GPU spec table")
    cols = {c: _text(df, c, path) for c in _TEXT + _OPTIONAL_TEXT}
    cols.update({c: _numbers(df, c, path) for c in _NUMBERS})
    names = _names(cols["gpu"], cols["aliases"], df, path)
    frame = pd.DataFrame({c: cols[c] for c in GPU_SPEC_COLUMNS}, columns=list(GPU_SPEC_COLUMNS))
    for c in _TEXT + _OPTIONAL_TEXT:
        frame[c] = frame[c].astype(object)
    frame.attrs.update(dataset="hardware_gpus", source=str(path),
                       names={name: cols["gpu"][i] for name, i in names.items()})
    return frame


def _specs(specs):
    """``specs`` as a checked frame: None (the shipped table), a path, or :func:`load_gpu_specs`'s frame."""
    import pandas as pd

    if specs is None or isinstance(specs, (str, os.PathLike)):
        return load_gpu_specs(specs)
    if not isinstance(specs, pd.DataFrame) or list(specs.columns) != list(GPU_SPEC_COLUMNS) \
            or "names" not in specs.attrs:
        raise ValueError(f"specs: expected None, the path of a CSV GPU spec table or the frame load_gpu_specs() "
                         f"returns, got {type(specs).__name__}")
    return specs


def _unknown(name, known, where: str) -> ValueError:
    close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.4)
    hint = f"; closest known: {', '.join(repr(c) for c in close)}" if close else ""
    return ValueError(f"{where}: unknown GPU {name!r}{hint}. Add a row (or an alias) to the GPU spec table "
                      "(data/external/hardware/gpu_specs.csv, or your own with specs=/--gpu-specs)")


def gpu_spec(name: str, specs=None) -> dict:
    """The spec row of the GPU ``name`` (its canonical name or any alias) as plain Python values; an unknown
    name is a ValueError naming the closest known names."""
    specs = _specs(specs)
    names = specs.attrs["names"]
    if not isinstance(name, str) or name.strip() not in names:
        raise _unknown(name, list(names), "gpu")
    row = specs[specs["gpu"] == names[name.strip()]].iloc[0]
    return {c: (row[c].item() if isinstance(row[c], np.generic) else row[c]) for c in GPU_SPEC_COLUMNS}


def canonical_gpus(values, column: str = "gpu", specs=None) -> np.ndarray:
    """The canonical GPU name of every value (a name or alias of the spec table); the first unknown one is a
    ValueError naming ``column``, its 1-based row and the closest known names."""
    specs = _specs(specs)
    names = specs.attrs["names"]
    out = []
    for i, v in enumerate(values):
        key = v.strip() if isinstance(v, str) else v
        if key not in names:
            raise _unknown(v, list(names), f"column {column!r}, row {i + 1}")
        out.append(names[key])
    return np.asarray(out, dtype=object)


def peak_for(precision: str, row) -> float:
    """The peak TFLOP/s a training step in ``precision`` can reach on the GPU of spec ``row`` (a mapping):
    half precisions (:data:`HALF_PRECISIONS`) the dense FP16 tensor rate, full ones (:data:`FULL_PRECISIONS`)
    the TF32 tensor rate, each falling back to the FP32 rate where the GPU has no such cores."""
    p = str(precision).strip().lower()
    if p in HALF_PRECISIONS:
        key = "tensor_fp16_tflops"
    elif p in FULL_PRECISIONS:
        key = "tensor_tf32_tflops"
    else:
        raise ValueError(f"precision {precision!r}: expected one of {HALF_PRECISIONS + FULL_PRECISIONS}")
    value = float(row[key])
    return value if math.isfinite(value) else float(row["fp32_tflops"])


def hardware_columns(frame, gpu: str, precision: str | None = None, specs=None):
    """The spec columns (:data:`HARDWARE_COLUMNS`) of every row of ``frame``, on ``frame``'s index.

    ``gpu`` names the column of GPU names (canonical names or aliases of the spec table); ``precision``, optional,
    the column of training precisions (:func:`peak_for`); without it the peak is the full-precision one.
    """
    import pandas as pd

    if gpu not in frame.columns:
        raise ValueError(f"hardware: no column {gpu!r} in the data (columns: {list(frame.columns)})")
    if precision is not None and precision not in frame.columns:
        raise ValueError(f"precision: no column {precision!r} in the data (columns: {list(frame.columns)})")
    specs = _specs(specs)
    names = canonical_gpus(frame[gpu].tolist(), gpu, specs)
    rows = specs.set_index("gpu").loc[names]
    prec = frame[precision].tolist() if precision is not None else ["fp32"] * len(frame)
    peaks = []
    for i, (p, (_, row)) in enumerate(zip(prec, rows.iterrows())):
        try:
            peaks.append(peak_for(p, row))
        except ValueError as exc:
            raise ValueError(f"column {precision!r}, row {i + 1}: {exc}") from None
    out = pd.DataFrame({"hw_gpu": names, "hw_peak_tflops": peaks}, index=frame.index)
    for col in HARDWARE_COLUMNS[2:]:
        out[col] = rows[col[3:]].to_numpy(dtype=float)
    return out


def join_hardware(frame, gpu: str, precision: str | None = None, specs=None):
    """``frame`` with :func:`hardware_columns` appended (a column of that name already there is an error)."""
    import pandas as pd

    clash = [c for c in HARDWARE_COLUMNS if c in frame.columns]
    if clash:
        raise ValueError(f"hardware: the data already has the column(s) {clash} that the spec join adds; rename them")
    return pd.concat([frame, hardware_columns(frame, gpu, precision, specs)], axis=1)
