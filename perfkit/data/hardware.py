"""Job and cluster facts for a communication prior (``data/external/hardware``): :func:`load_jobs`,
:func:`load_clusters`, :func:`gradient_bytes`, :func:`cluster_facts`.

Two small tables compiled from public sources (papers, datasheets, the Pollux and Sia artifacts' code), not
measurements; ``data/external/hardware.provenance.json`` gives their sources and sha256.

- ``jobs.csv``: one row per training job of the Pollux and Sia traces (``bert``, ``cifar10``, ``deepspeech2``,
  ``imagenet``, ``ncf``, ``yolov3``) with the model's parameter count and the bytes of one gradient element, so
  that :func:`gradient_bytes` gives the bytes a data-parallel step synchronises.
- ``clusters.csv``: one row per cluster (``aws``, Pollux's; ``azure``, ``dgx``, ``dgx-ext``, ``rtx``, ``quad``,
  Sia's) with the GPU, GPUs per node, nodes, and the intra-node (per GPU) and inter-node (per node) bandwidths
  in GB/s, one direction.

Guarantees: both loaders return every row of the file with the columns in :data:`JOB_COLUMNS` /
:data:`CLUSTER_COLUMNS` order; counts are ``int64`` (``parameters`` and ``grad_bytes_per_param``;
``gpus_per_node`` and ``nodes``), bandwidths ``float64``, everything else text (an empty ``note`` is ``""``).
A bandwidth is NaN only on a row whose ``confidence`` is ``"unknown"``. A user's own CSV with the same columns
(``path=``) passes the same checks. Anything else is one ``ValueError`` naming the file, the column and the
1-based data row (with its line) at fault; a missing file is a ``FileNotFoundError``.

>>> gradient_bytes("imagenet")
102228128
>>> cluster_facts("aws")["gpus_per_node"]
4
"""
from __future__ import annotations

import difflib
import math
import os
from pathlib import Path

import numpy as np

from .._io import path_argument
from .external_files import MAX_GPUS, external_dir, number_column, read_exact_table, row_where

__all__ = ["CLUSTER_COLUMNS", "CONFIDENCE_LEVELS", "GRAD_BYTES", "JOB_COLUMNS", "JOB_FAMILIES", "MAX_PARAMETERS",
           "cluster_facts", "gradient_bytes", "load_clusters", "load_jobs"]

#: Columns of ``jobs.csv`` (and of :func:`load_jobs`'s frame), in order.
JOB_COLUMNS = ("job", "model", "dataset", "family", "parameters", "grad_precision", "grad_bytes_per_param",
               "parameters_source", "model_source", "note")
#: Columns of ``clusters.csv`` (and of :func:`load_clusters`'s frame), in order.
CLUSTER_COLUMNS = ("cluster", "gpu", "gpus_per_node", "nodes", "intra_link", "intra_gbps", "inter_link",
                   "inter_gbps", "source", "confidence", "note")
#: The model families a job may name.
JOB_FAMILIES = ("cnn", "transformer", "rnn", "recommender", "detector")
#: Bytes of one gradient element for each ``grad_precision``.
GRAD_BYTES = {"fp32": 4, "fp16": 2}
#: ``confidence`` values: a source states the value for this very cluster; it comes from the datasheet of the
#: named hardware; or it was not found (the bandwidth may then be empty). A row gives the weakest of its values.
CONFIDENCE_LEVELS = ("stated", "datasheet", "unknown")
#: Most parameters a job may have: far above any trained model; a larger count is a typo.
MAX_PARAMETERS = 10**15
#: Text columns that may be empty.
_OPTIONAL_TEXT = ("note",)
_TABLES = {"jobs": ("jobs.csv", JOB_COLUMNS, "job table"),
           "clusters": ("clusters.csv", CLUSTER_COLUMNS, "cluster table")}


def _path(path, kind: str) -> Path:
    """The shipped table of ``kind`` (``path`` None) or the user's file ``path``."""
    if path is None:
        return external_dir() / "hardware" / _TABLES[kind][0]
    return path_argument(path, "path", f"the path of a CSV {_TABLES[kind][2]}")


def _read(path: Path, columns, what: str):
    """The table at ``path`` as text cells; its header must be exactly ``columns`` (any order), every row must
    have one cell per column and there must be at least one data row."""
    return read_exact_table(path, columns, what)


def _text(df, col: str, path, label: str, allowed=None) -> list:
    """Column ``col`` as stripped strings: non-empty (unless optional) and, with ``allowed``, one of them."""
    out = []
    for i, v in enumerate(df[col]):
        s = str(v).strip()
        if not s and col not in _OPTIONAL_TEXT:
            raise ValueError(f"{path}: column {col!r}, {row_where(df, i, label)}: empty; give a value")
        if allowed is not None and s not in allowed:
            raise ValueError(f"{path}: column {col!r}, {row_where(df, i, label)}: {v!r} is not one of "
                             f"{list(allowed)}")
        out.append(s)
    return out


def _names(df, col: str, path) -> list:
    """The key column (``job`` or ``cluster``): non-empty names, each once."""
    names = _text(df, col, path, col)
    seen = {}
    for i, name in enumerate(names):
        if name in seen:
            raise ValueError(f"{path}: column {col!r}, {row_where(df, i)}: {name!r} is named twice (also "
                             f"{row_where(df, seen[name])}); give each {col} one row")
        seen[name] = i
    return names


def _whole(df, col: str, path, label: str, top: int) -> np.ndarray:
    """Column ``col`` as whole numbers from 1 to ``top``; else one error naming the file, column and row."""
    num = number_column(df, col, path, label).to_numpy()
    for i, v in enumerate(num):
        if math.isnan(v) or v < 1 or v > top or v != int(v):
            raise ValueError(f"{path}: column {col!r}, {row_where(df, i, label)}: expected a whole number >= 1 "
                             f"and at most {top:,}, got {df[col].iloc[i]!r}")
    return num.astype(np.int64)


def _grad_bytes(df, path, precision: list) -> np.ndarray:
    """``grad_bytes_per_param``: 2 or 4, and the bytes of the row's ``grad_precision``."""
    num = number_column(df, "grad_bytes_per_param", path, "job").to_numpy()
    for i, v in enumerate(num):
        want, at = GRAD_BYTES[precision[i]], row_where(df, i, "job")
        if v not in (2, 4):
            raise ValueError(f"{path}: column 'grad_bytes_per_param', {at}: expected 2 or 4 (bytes of one fp16 or "
                             f"fp32 gradient element), got {df['grad_bytes_per_param'].iloc[i]!r}")
        if v != want:
            raise ValueError(f"{path}: column 'grad_bytes_per_param', {at}: {int(v)} bytes, but grad_precision "
                             f"{precision[i]!r} has {want} bytes per element")
    return num.astype(np.int64)


def _bandwidth(df, col: str, path, confidence: list) -> np.ndarray:
    """A bandwidth column (GB/s): finite and > 0; empty (NaN) only where ``confidence`` is ``"unknown"``."""
    num = number_column(df, col, path, "cluster").to_numpy()
    for i, v in enumerate(num):
        at = row_where(df, i, "cluster")
        if math.isnan(v) and confidence[i] != "unknown":
            raise ValueError(f"{path}: column {col!r}, {at}: empty, but confidence is {confidence[i]!r}; an "
                             "unknown bandwidth needs confidence 'unknown'")
        if not math.isnan(v) and not v > 0:
            raise ValueError(f"{path}: column {col!r}, {at}: expected GB/s > 0, got {df[col].iloc[i]!r}")
    return num.astype(float)


def _frame(columns: dict, order, path: Path, dataset: str):
    import pandas as pd

    frame = pd.DataFrame({c: columns[c] for c in order}, columns=list(order))
    for c in order:
        if frame[c].dtype.kind not in "if":  # text stays plain Python strings, whatever pandas' default
            frame[c] = frame[c].astype(object)
    frame.attrs["dataset"] = dataset
    frame.attrs["source"] = str(path)
    return frame


def load_jobs(path=None):
    """The job table: one row per job, checked.

    Parameters
    ----------
    path : path, optional
        A CSV with the columns of :data:`JOB_COLUMNS` (a user's own jobs); default the shipped
        ``data/external/hardware/jobs.csv``.

    Returns
    -------
    pandas.DataFrame
        :data:`JOB_COLUMNS`: ``job`` (unique), ``model``, ``dataset``, ``family`` (one of :data:`JOB_FAMILIES`),
        ``parameters`` (int64, 1 to :data:`MAX_PARAMETERS`), ``grad_precision`` (``fp32`` or ``fp16``),
        ``grad_bytes_per_param`` (int64, the precision's 4 or 2 bytes), ``parameters_source``, ``model_source``,
        ``note`` (may be ``""``). ``attrs``: ``dataset`` (``"hardware_jobs"``) and ``source`` (the file read).

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        An unreadable table; a missing or extra column; a row with more or fewer cells than the header; no data
        row; an empty required cell; a job named twice; a family or precision not listed above; ``parameters``
        not a whole number >= 1; ``grad_bytes_per_param`` not 2 or 4 or not the precision's. The message names
        the file, the column and the row.
    """
    path = _path(path, "jobs")
    df = _read(path, JOB_COLUMNS, "job table")
    cols = {"job": _names(df, "job", path)}
    for c in ("model", "dataset", "parameters_source", "model_source", "note"):
        cols[c] = _text(df, c, path, "job")
    cols["family"] = _text(df, "family", path, "job", JOB_FAMILIES)
    cols["grad_precision"] = _text(df, "grad_precision", path, "job", tuple(GRAD_BYTES))
    cols["parameters"] = _whole(df, "parameters", path, "job", MAX_PARAMETERS)
    cols["grad_bytes_per_param"] = _grad_bytes(df, path, cols["grad_precision"])
    return _frame(cols, JOB_COLUMNS, path, "hardware_jobs")


def load_clusters(path=None):
    """The cluster table: one row per cluster, checked.

    Parameters
    ----------
    path : path, optional
        A CSV with the columns of :data:`CLUSTER_COLUMNS` (the facts of a user's own cluster); default the
        shipped ``data/external/hardware/clusters.csv``.

    Returns
    -------
    pandas.DataFrame
        :data:`CLUSTER_COLUMNS`: ``cluster`` (unique), ``gpu``, ``gpus_per_node`` and ``nodes`` (int64, whole
        numbers >= 1), ``intra_link``, ``intra_gbps`` (per-GPU intra-node bandwidth, GB/s, one direction),
        ``inter_link``, ``inter_gbps`` (per-node network bandwidth, GB/s, one direction), ``source``,
        ``confidence`` (one of :data:`CONFIDENCE_LEVELS`), ``note`` (may be ``""``). Bandwidths are float64 and
        NaN (an empty cell) only where ``confidence`` is ``"unknown"``. ``attrs``: ``dataset``
        (``"hardware_clusters"``) and ``source``.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        An unreadable table; a missing or extra column; a row with more or fewer cells than the header; no data
        row; an empty required cell; a cluster named twice; a ``confidence`` not listed above; ``gpus_per_node``
        or ``nodes`` not a whole number >= 1; a bandwidth that is not a number > 0, or empty while
        ``confidence`` is not ``"unknown"``. The message names the file, the column and the row.
    """
    path = _path(path, "clusters")
    df = _read(path, CLUSTER_COLUMNS, "cluster table")
    cols = {"cluster": _names(df, "cluster", path)}
    for c in ("gpu", "intra_link", "inter_link", "source", "note"):
        cols[c] = _text(df, c, path, "cluster")
    cols["confidence"] = _text(df, "confidence", path, "cluster", CONFIDENCE_LEVELS)
    for c in ("gpus_per_node", "nodes"):
        cols[c] = _whole(df, c, path, "cluster", MAX_GPUS)
    for c in ("intra_gbps", "inter_gbps"):
        cols[c] = _bandwidth(df, c, path, cols["confidence"])
    return _frame(cols, CLUSTER_COLUMNS, path, "hardware_clusters")


def _table(table, kind: str):
    """``table`` as a checked frame: the shipped one (None), the file at a path, or a frame of the loader."""
    import pandas as pd

    loader = load_jobs if kind == "jobs" else load_clusters
    if table is None or isinstance(table, (str, os.PathLike)):
        return loader(table)
    columns = _TABLES[kind][1]
    if not isinstance(table, pd.DataFrame) or list(table.columns) != list(columns):
        raise ValueError(f"{kind}: expected None, the path of a CSV {_TABLES[kind][2]} or the frame "
                         f"{loader.__name__}() returns (columns {list(columns)}), got {type(table).__name__}")
    return table


def _row(frame, key: str, name, what: str):
    """The one row of ``frame`` whose ``key`` is ``name``; else an error naming the closest known names."""
    known = [str(k) for k in frame[key]]
    if not isinstance(name, str) or name not in known:
        close = difflib.get_close_matches(str(name), known, n=3)
        hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
        raise ValueError(f"{key}: unknown {what} {name!r}; {hint}known: {sorted(known)}")
    return frame.iloc[known.index(name)]


def gradient_bytes(job: str, jobs=None) -> int:
    """Bytes of one step's gradients of ``job``: ``parameters * grad_bytes_per_param``.

    ``jobs`` is None (the shipped table), the path of a user's job table, or :func:`load_jobs`'s frame. An
    unknown ``job`` is a ValueError naming the closest known jobs.
    """
    row = _row(_table(jobs, "jobs"), "job", job, "job")
    return int(row["parameters"]) * int(row["grad_bytes_per_param"])


def cluster_facts(cluster: str, clusters=None) -> dict:
    """The row of ``cluster`` as a dict of plain Python values (int counts, float bandwidths, NaN where unknown).

    ``clusters`` is None (the shipped table), the path of a user's cluster table, or :func:`load_clusters`'s
    frame. An unknown ``cluster`` is a ValueError naming the closest known clusters.
    """
    row = _row(_table(clusters, "clusters"), "cluster", cluster, "cluster")
    out = {}
    for c in CLUSTER_COLUMNS:
        v = row[c]
        out[c] = v.item() if isinstance(v, np.generic) else v
    return out
