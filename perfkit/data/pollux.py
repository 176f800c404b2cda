"""Pollux's published cluster traces (``data/external/pollux``) as a tidy frame: :func:`load_pollux`.

Measured data-parallel step times of six training jobs on 16 AWS g4dn.12xlarge nodes (4 NVIDIA T4 GPUs each),
from the artifact of Qiao et al., "Pollux: Co-adaptive Cluster Scheduling for Goodput-Optimized Deep Learning"
(OSDI 2021). Each job has two tables: ``placements.csv`` gives the number of GPUs on each node of the run
(1 to 16 GPUs on at most 4 nodes), ``scalability.csv`` only the node and GPU counts (6 to 64 GPUs on 6 to 16
nodes).

Other clusters' traces in the same format (e.g. the Sia artifact's ``<job>/placements-<cluster>.csv`` and
``<job>/scalability-<cluster>.csv``, one digit per node up to 9 GPUs per node) are read, with the same checks, by
:func:`load_traces`.

>>> placement_layout("1222")
(4, 7, 2, 1, 1.1428571428571428)
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from .._io import path_argument
from .external_files import (MAX_BATCH, MAX_GPUS, MAX_STEP_TIME, MIN_STEP_TIME, count_column, external_dir,
                             number_column, read_exact_table, row_where)

__all__ = ["POLLUX_COLUMNS", "POLLUX_JOBS", "POLLUX_STUDIES", "load_pollux", "load_traces", "placement_layout"]

#: The six jobs of the traces, one folder each.
POLLUX_JOBS = ("bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3")
#: The two tables of each job; ``load_pollux(study=...)`` takes one of these or ``"all"``.
POLLUX_STUDIES = ("placements", "scalability")
#: Columns of each table, as published.
_HEADERS = {
    "placements": ("placement", "local_bsz", "step_time", "sync_time"),
    "scalability": ("num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"),
}
#: Columns of :func:`load_pollux`'s frame, in order.
POLLUX_COLUMNS = ["job", "study", "placement", "n_nodes", "n_gpus", "gpus_per_node_max", "gpus_per_node_min",
                  "load_imbalance", "batch_per_gpu", "batch_global", "t_iter", "sync_time", "source"]
_PLACEMENT = re.compile(r"[1-9]+")
_CLUSTER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def placement_layout(placement: str) -> tuple:
    """``(n_nodes, n_gpus, gpus_per_node_max, gpus_per_node_min, load_imbalance)`` of a placement string.

    One digit per node, the digit being the node's GPU count: ``"1222"`` is 4 nodes holding 1, 2, 2 and 2 GPUs
    (7 GPUs). ``load_imbalance`` is the load imbalance factor of eq. 3.8
    (:func:`perfkit.model.analytic.equations.load_imbalance_factor`) applied to the per-node GPU counts:
    ``max / mean = n_nodes * max / n_gpus`` (1 for an even spread, above 1 otherwise).

    Raises
    ------
    ValueError
        ``placement`` is not a non-empty string of the digits 1 to 9.
    """
    if not isinstance(placement, str) or not _PLACEMENT.fullmatch(placement):
        raise ValueError(f"placement: expected the digits 1-9 (GPUs per node), got {placement!r}")
    counts = [int(c) for c in placement]
    n_nodes, n_gpus = len(counts), sum(counts)
    return n_nodes, n_gpus, max(counts), min(counts), n_nodes * max(counts) / n_gpus


def _read_table(path, study: str):
    """The table at ``path`` as text cells (placements keep their digits), its header checked to be exactly the
    published one, every row checked to have one cell per column and at least one data row present."""
    return read_exact_table(path, _HEADERS[study], f"Pollux {study} table")


def _whole(df, col: str, path, top: int) -> np.ndarray:
    """Column ``col`` as whole numbers from 1 to ``top``; else one error naming the file, column and row."""
    num = number_column(df, col, path).to_numpy()
    for i, v in enumerate(num):
        if math.isnan(v) or v < 1 or v > top or v != int(v):
            raise ValueError(f"{path}: column {col!r}, {row_where(df, i)}: expected a whole number >= 1 and at "
                             f"most {top:,}, got {df[col].iloc[i]!r}")
    return num.astype(np.int64)


def _times(df, path) -> tuple:
    """``(step_time, sync_time)`` as floats, checked: ``MIN_STEP_TIME`` <= step_time <= ``MAX_STEP_TIME``, 0 <=
    sync_time <= step_time; else one error naming the file, column and row."""
    step = number_column(df, "step_time", path).to_numpy()
    sync = number_column(df, "sync_time", path).to_numpy()
    for i in range(len(df)):
        at = row_where(df, i)
        if not MIN_STEP_TIME <= step[i] <= MAX_STEP_TIME:  # NaN (an empty cell) fails too
            raise ValueError(f"{path}: column 'step_time', {at}: expected seconds > 0 (at least {MIN_STEP_TIME:g}) "
                             f"and at most {MAX_STEP_TIME:g}, got {df['step_time'].iloc[i]!r}")
        if not sync[i] >= 0:
            raise ValueError(f"{path}: column 'sync_time', {at}: expected seconds >= 0, "
                             f"got {df['sync_time'].iloc[i]!r}")
        if sync[i] > step[i]:
            raise ValueError(f"{path}: column 'sync_time', {at}: {float(sync[i])!r} s is longer than the step "
                             f"(step_time {float(step[i])!r} s); synchronisation is part of the step")
    return step, sync


def _layouts(df, path) -> list:
    """:func:`placement_layout` of every row of a placements table; one error naming the file, row and cell
    for a placement that is not made of the digits 1-9 or has more than ``MAX_GPUS`` GPUs."""
    out = []
    for i, p in enumerate(df["placement"]):
        if not isinstance(p, str) or not _PLACEMENT.fullmatch(p):
            raise ValueError(f"{path}: column 'placement', {row_where(df, i)}: expected the digits 1-9 "
                             f"(GPUs on each node), got {p!r}")
        out.append(placement_layout(p))
        if out[-1][1] > MAX_GPUS:
            raise ValueError(f"{path}: column 'placement', {row_where(df, i)}: {out[-1][1]:,} GPUs; a run has "
                             f"at most {MAX_GPUS:,}")
    return out


def _check_global(df, path, batch, n_gpus) -> np.ndarray:
    """``batch * n_gpus`` (the global batch), at most :data:`MAX_BATCH`; else one error naming the row."""
    for i in range(len(df)):
        if int(batch[i]) * int(n_gpus[i]) > MAX_BATCH:
            raise ValueError(f"{path}: column 'local_bsz', {row_where(df, i)}: a per-GPU batch of {batch[i]} on "
                             f"{n_gpus[i]} GPUs is a global batch above {MAX_BATCH:.0e}; not a measurement")
    return batch * n_gpus


def _study_rows(job: str, study: str, path, source: str) -> dict:
    """The columns of :data:`POLLUX_COLUMNS` for one job's table, every row checked."""
    df = _read_table(path, study)
    n = len(df)
    batch = _whole(df, "local_bsz", path, MAX_BATCH)
    step, sync = _times(df, path)
    if study == "placements":
        layouts = _layouts(df, path)
        n_nodes, n_gpus, hi, lo, lif = (np.asarray(v) for v in zip(*layouts))
        placement = list(df["placement"])
    else:  # the layout of a scalability run is not published: no per-node counts, no imbalance
        n_nodes = count_column(df, "num_nodes", path)
        n_gpus = count_column(df, "num_replicas", path)
        over = np.flatnonzero(n_nodes > n_gpus)
        if len(over):
            raise ValueError(f"{path}: column 'num_nodes', {row_where(df, int(over[0]))}: {n_nodes[over[0]]} nodes "
                             f"for {n_gpus[over[0]]} GPUs (num_replicas); a node of the run holds at least one GPU")
        hi = lo = lif = np.full(n, np.nan)
        placement = [""] * n
    return {"job": [job] * n, "study": [study] * n, "placement": placement, "n_nodes": n_nodes, "n_gpus": n_gpus,
            "gpus_per_node_max": hi, "gpus_per_node_min": lo, "load_imbalance": lif, "batch_per_gpu": batch,
            "batch_global": _check_global(df, path, batch, n_gpus), "t_iter": step, "sync_time": sync,
            "source": [source] * n}


def _frame(parts: list):
    """The per-table columns as one frame with the dtypes :func:`load_pollux` documents."""
    import pandas as pd

    frame = pd.concat([pd.DataFrame(p, columns=POLLUX_COLUMNS) for p in parts], ignore_index=True)
    for c in ("n_nodes", "n_gpus", "batch_per_gpu", "batch_global"):
        frame[c] = frame[c].astype("int64")
    for c in ("gpus_per_node_max", "gpus_per_node_min", "load_imbalance", "t_iter", "sync_time"):
        frame[c] = frame[c].astype(float)
    for c in ("job", "study", "placement", "source"):
        frame[c] = frame[c].astype(object)
    return frame


def load_pollux(study: str = "all", root=None):
    """Pollux's traces as a tidy frame: one row per measured row of the published tables, none left out.

    Parameters
    ----------
    study : {"all", "placements", "scalability"}
        Both tables of every job, or one kind.
    root : path, optional
        Folder holding ``<job>/placements.csv`` and ``<job>/scalability.csv`` for each job of
        :data:`POLLUX_JOBS` (default ``data/external/pollux``).

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`POLLUX_COLUMNS`, placements rows before scalability rows within each job:

        - ``job`` and ``study`` (``"placements"`` or ``"scalability"``);
        - ``placement``: the published digit string (GPUs on each node, e.g. ``"1222"``) on placements rows;
          ``""`` on scalability rows, whose layout the traces do not give;
        - ``n_nodes`` (placements: digits; scalability: ``num_nodes``) and ``n_gpus`` (placements: sum of
          the digits; scalability: ``num_replicas``), int;
        - ``gpus_per_node_max``, ``gpus_per_node_min`` and ``load_imbalance``, float: on placements rows the
          largest and smallest digit and :func:`placement_layout`'s load imbalance factor (``max / mean`` of
          the per-node GPU counts, eq. 3.8 applied to GPU counts, >= 1); NaN on scalability rows, because
          which node ran how many replicas is not published (``num_replicas`` is often not a multiple of
          ``num_nodes``) and no spread is assumed;
        - ``batch_per_gpu`` (``local_bsz``) and ``batch_global`` = ``batch_per_gpu * n_gpus``, int;
        - ``t_iter`` (``step_time``: seconds per data-parallel step, the target) and ``sync_time`` (seconds of
          that step spent synchronising gradients, ``0 <= sync_time <= t_iter``);
        - ``source``: the table's path relative to the folder above ``root`` (``pollux/<job>/<study>.csv``
          for the shipped files, as in ``data/external/pollux.provenance.json``).

        ``frame.attrs``: ``dataset`` (``"pollux"``), ``source`` (the tables read) and ``dropped`` (rows left
        out, by reason: always empty, since every published row is a measurement and a bad row refuses the table).

    Raises
    ------
    FileNotFoundError
        A table of :data:`POLLUX_JOBS` is missing under ``root``.
    ValueError
        A bad ``study``; a table that is unreadable, lacks a column or has one more, has a row with more or
        fewer cells than the header, or has no data row; a cell that is empty or not a finite number; a count
        (``num_nodes``, ``num_replicas``, ``local_bsz``) that is not a whole number >= 1 (at most ``MAX_GPUS``;
        ``MAX_BATCH`` for batches and the global batch); a placement not made of the digits 1-9; a
        ``step_time`` <= 0 or above ``MAX_STEP_TIME``; a ``sync_time`` < 0 or above ``step_time``. Each message
        names the file and the column or row at fault (rows 1-based, with their line in the file).
    """
    studies = _studies(study)
    folder = path_argument(root, "root") if root is not None else external_dir() / "pollux"
    return _load(folder, POLLUX_JOBS, studies, None, "pollux")


def _studies(study) -> tuple:
    if study == "all":
        return POLLUX_STUDIES
    if study in POLLUX_STUDIES:
        return (study,)
    raise ValueError(f"study: expected 'all' or one of {POLLUX_STUDIES}, got {study!r}")


def _table_name(study: str, cluster) -> str:
    return f"{study}.csv" if cluster is None else f"{study}-{cluster}.csv"


def _load(folder: Path, jobs, studies, cluster, dataset: str):
    parts, sources = [], []
    for job in jobs:
        for s in studies:
            name = _table_name(s, cluster)
            path = folder / job / name
            sources.append(str(path))
            parts.append(_study_rows(job, s, path, f"{folder.resolve().name}/{job}/{name}"))
    frame = _frame(parts)
    frame.attrs["dataset"] = dataset
    frame.attrs["source"] = sources
    frame.attrs["dropped"] = {}
    return frame


def load_traces(root, cluster=None, jobs=None, study: str = "all"):
    """Step-time traces in Pollux's format from any cluster, as :func:`load_pollux`'s frame.

    Parameters
    ----------
    root : path
        Folder with one sub-folder per job, each holding ``placements[-<cluster>].csv`` and
        ``scalability[-<cluster>].csv`` (the columns of Pollux's tables, in any order: ``placement``, one digit
        1-9 per node, or ``num_nodes`` and ``num_replicas``; ``local_bsz``, ``step_time``, ``sync_time``).
    cluster : str, optional
        The tables' suffix (``"rtx"`` reads ``placements-rtx.csv``); None reads ``placements.csv``.
    jobs : list of str, optional
        The jobs to read (each must have the tables). None: every sub-folder of ``root`` that has every table of
        ``study`` for ``cluster``, sorted by name; ``frame.attrs["skipped"]`` names the sub-folders that have only
        some of them.
    study : {"all", "placements", "scalability"}
        Both tables or one kind.

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`POLLUX_COLUMNS`, every row checked as :func:`load_pollux` checks it (the same
        errors, naming the file, column and row); ``attrs``: ``dataset`` (``"traces"``), ``cluster``, ``jobs``,
        ``source``, ``skipped`` and ``dropped`` (always empty).

    Raises
    ------
    FileNotFoundError
        ``root`` is not a folder; a table of a job named in ``jobs`` is missing; no job has the tables.
    ValueError
        A bad ``study``, ``cluster`` (letters, digits, ``_``, ``.``, ``-``) or ``jobs``; a table that fails
        :func:`load_pollux`'s checks.
    """
    studies = _studies(study)
    if cluster is not None and (not isinstance(cluster, str) or not _CLUSTER.fullmatch(cluster)):
        raise ValueError(f"cluster: expected a name of letters, digits, '_', '.' or '-' (the tables' suffix), "
                         f"got {cluster!r}")
    folder = path_argument(root, "root", "the path of a folder")
    if not folder.is_dir():
        raise FileNotFoundError(f"root: {str(folder)!r} is not a folder (one sub-folder per job expected)")
    names = [_table_name(s, cluster) for s in studies]
    skipped = []
    if jobs is None:
        found = []
        for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
            have = [(sub / n).is_file() for n in names]
            if all(have):
                found.append(sub.name)
            elif any(have):
                skipped.append(sub.name)
        if not found:
            raise FileNotFoundError(f"{folder}: no job folder holds {' and '.join(names)}")
        jobs = found
    else:
        given = jobs
        jobs = [] if isinstance(jobs, str) or not hasattr(jobs, "__iter__") else list(jobs)
        if not jobs or not all(isinstance(j, str) and j and "/" not in j and "\x00" not in j and j not in (".", "..")
                               for j in jobs):
            raise ValueError(f"jobs: expected a non-empty list of job folder names, got {given!r}")
        if len(set(jobs)) < len(jobs):
            raise ValueError(f"jobs: a job is named twice in {jobs} (its rows would be read twice)")
    frame = _load(folder, list(jobs), studies, cluster, "traces")
    frame.attrs.update(cluster=cluster, jobs=list(jobs), skipped=skipped)
    return frame
