"""NVIDIA DeepLearningExamples' training-throughput tables (``data/external/nvidia_dle``): :func:`load_nvidia_dle`.

One row per cell of the READMEs' "Training performance" tables; :func:`resolve_batch` reads a
cell's per-GPU batch and :func:`normalise_precision` a header's precision.

>>> resolve_batch("128 and 256", "Batch size / GPU (TF32 and FP16)", "amp")
256
>>> resolve_batch("64 , 32", "Batch size / GPU: mixed precision, FP32", "fp32")
32
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from .._io import path_argument, read_csv
from .external_files import (MAX_BATCH, MAX_GPUS, check_step_time, count_column, external_dir, no_rows_error,
                             number_column, require_columns, row_where)

__all__ = ["load_nvidia_dle", "normalise_precision", "resolve_batch"]

_NVIDIA_REQUIRED = ("readme", "section", "gpus", "batch_col", "batch", "throughput_col", "throughput")
_HALF = {"amp", "fp16", "bf16"}
#: Precision words of a table header, in the order they appear.
_PRECISION_WORD = re.compile(r"mixed precision|\bAMP\b|\bFP16\b|\bBF16\b|\bTF32\b|\bFP32\b|\bTF\b", re.I)
#: README → order of an unlabelled "a/b" batch pair ("half" = AMP/FP16/BF16, "single" = FP32/TF32).
_BATCH_ORDER = {
    # its Training process section gives the mixed-precision batch first, then the FP32 one
    "PyTorch/Translation/Transformer/README.md": ("half", "single"),
}
#: Throughput unit in a column header or cell → (unit, factor to per second).
_UNITS = (
    (re.compile(r"img/s|images?/s", re.I), "images/s", 1.0),
    (re.compile(r"samples?/s", re.I), "samples/s", 1.0),
    (re.compile(r"sequences?/s", re.I), "sequences/s", 1.0),
    (re.compile(r"tok(?:en)?s?/s", re.I), "tokens/s", 1.0),
    (re.compile(r"mels?/s", re.I), "mels/s", 1.0),
    (re.compile(r"mol/ms", re.I), "molecules/s", 1000.0),
)
#: README → (unit, factor to per second) where its headers name no unit and the numbers need a scale.
_UNIT_OVERRIDES = {
    # its A100 table gives millions of samples/s without saying so
    "TensorFlow/Recommendation/NCF/README.md": ("samples/s", 1e6),
}
_NOT_TRAINING = re.compile(r"\b(evaluation|inference)\b", re.I)
_GPU_IN_SECTION = re.compile(r"(\d+)\s*x\s*([AHVTLP]\d{1,3})\s*(\d+)\s*G(?:B)?\b", re.I)
_SYSTEM = re.compile(r"\bDGX[- ]?(A100|H100|2H|1|2)\b", re.I)
#: Section words that tell one table of a README from another → variant tag.
_SECTION_TAGS = (
    (re.compile(r"pre-?training", re.I), lambda m: "pre-training"),
    (re.compile(r"fine-?tuning", re.I), lambda m: "fine-tuning"),
    (re.compile(r"\b(SQuAD|NER|GLUE)\b"), lambda m: m.group(1)),
    (re.compile(r"\bv1-(B\d)\b", re.I), lambda m: m.group(1).upper()),
    (re.compile(r"\bBase model\b", re.I), lambda m: "base model"),
)
#: ``other_cols`` keys that are settings of the run (the others are results: times, accuracies).
_SETTING_KEYS = {"sequence length": "seq", "model size": "size", "dimension": "dim", "dataset": "dataset",
                 "model": "model", "xla": "XLA", "generator": "generator"}


def normalise_precision(label) -> str | None:
    """``"Throughput - mixed precision"`` → ``"amp"``; likewise bf16, fp16, tf32, fp32; None if none is named.

    >>> normalise_precision("Throughput - TF32 + XLA"), normalise_precision("Throughput [samples/s] AMP")
    ('tf32', 'amp')
    """
    if label is None or (isinstance(label, float) and math.isnan(label)):
        return None
    s = str(label)
    for pattern, name in ((r"mixed precision|\bAMP\b", "amp"), (r"\bBF16\b", "bf16"), (r"\bFP16\b", "fp16"),
                          (r"\bTF32\b|\bTF\b", "tf32"), (r"\bFP32\b", "fp32")):
        if re.search(pattern, s, re.I):
            return name
    return None


def _kind(precision: str) -> str:
    return "half" if precision in _HALF else "single"


def _batch_values(text: str):
    """``"131,072"`` → [131072]; ``"64k"`` → [65536]; ``"16  and 32"``, ``"24, 10"``, ``"10240/5120"``,
    ``"8 : 16"`` → two values; None for anything else."""
    # at most 4000 digits (Python reads no longer number from text); a batch above MAX_BATCH is refused later
    if re.fullmatch(r"\d{1,3}(?:,\d{3}){1,1300}", text):
        return [int(text.replace(",", ""))]
    m = re.fullmatch(r"(\d{1,4000})\s*k", text, re.I)
    if m:  # "64k": 64 × 1024
        return [int(m.group(1)) * 1024]
    parts = re.split(r"\s*(?:\band\b|,|/|:)\s*", text)
    if not all(re.fullmatch(r"\d{1,4000}", p) for p in parts):
        return None
    return [int(p) for p in parts]


def _resolve_batch(batch, batch_col, precision: str, throughput_col="", readme=""):
    """``(batch per GPU, None)`` or ``(None, reason it cannot be resolved)``."""
    empty = batch is None or (isinstance(batch, float) and math.isnan(batch)) or not str(batch).strip()
    if empty:
        m = re.search(r"\bBS\s*=\s*(\d+)", str(throughput_col or ""))
        if m:  # "Throughput - TF32 (BS=104)": the per-GPU batch (the tables report weak scaling)
            return int(m.group(1)), None
        return None, "no batch size in the table"
    if isinstance(batch, (float, np.floating)):  # a column pandas read as numbers (a blank cell made it float)
        if not float(batch).is_integer():
            return None, "batch is not a whole number"
        batch = int(batch)
    text = str(batch).strip()
    want = _kind(precision)
    labelled = re.findall(r"(\d[\d,]*)\s*\(([^)]*)\)", text)
    if labelled:  # "128 (FP32) / 256 (AMP)", "128 (TF) / 256 (AMP)"
        by_kind = {}
        for number, label in labelled:
            p = normalise_precision(label)
            values = _batch_values(number)
            if p is None or not values or len(values) != 1:
                return None, "batch labels not understood"
            by_kind[_kind(p)] = values[0]
        if want not in by_kind:
            return None, "batch has no value for the row's precision"
        value = by_kind[want]
    else:
        values = _batch_values(text)
        if values is None:
            return None, "batch is not a number"
        if len(values) > 2:
            return None, "batch lists more than two values"
        if len(values) == 1 or values[0] == values[1]:
            value = values[0]
        else:
            words = [_kind(normalise_precision(w)) for w in _PRECISION_WORD.findall(str(batch_col or ""))]
            order = tuple(words) if len(words) == 2 and words[0] != words[1] else _BATCH_ORDER.get(str(readme))
            if order is None:
                return None, "two batch sizes without a precision order"
            value = values[order.index(want)]
    if value < 1:
        return None, "batch is 0"
    return value, None


def resolve_batch(batch, batch_col, precision: str, throughput_col: str = "", readme: str = "") -> int:
    """Per-GPU batch of one NVIDIA table cell, for the row's ``precision`` ("amp", "fp32", "tf32", "bf16", ...).

    A pair such as ``"128 and 256"`` gives (FP32 or TF32, AMP) batches in the order the header
    ``batch_col`` names them (``"Batch size / GPU (TF32 and FP16)"`` → TF32 first;
    ``"Batch size / GPU: mixed precision, FP32"`` → AMP first); labelled pairs
    (``"128 (FP32) / 256 (AMP)"``) by their labels; the one README whose header names no order
    by the order its text gives (``_BATCH_ORDER``). ``"131,072"`` is one number with a thousands
    separator, ``"64k"`` is 65,536. With no batch column, ``"(BS=104)"`` in ``throughput_col``
    is used.

    Raises
    ------
    ValueError
        When the string cannot be resolved (the message says why).

    >>> resolve_batch("5120/2560", "Batch size / GPU", "fp32", readme="PyTorch/Translation/Transformer/README.md")
    2560
    >>> resolve_batch(None, None, "tf32", "Throughput - TF32 (BS=104)")
    104
    """
    value, reason = _resolve_batch(batch, batch_col, precision, throughput_col, readme)
    if value is None:
        raise ValueError(f"batch {batch!r} (header {batch_col!r}, precision {precision!r}): {reason}")
    return value


def _unit(throughput_col, raw, readme=""):
    for text in (throughput_col, raw):
        if isinstance(text, str):
            for pattern, unit, factor in _UNITS:
                if pattern.search(text):
                    return unit, factor
    return _UNIT_OVERRIDES.get(str(readme), ("unspecified", 1.0))


def _variant(section: str, other_cols, throughput_col: str) -> str:
    tags = []
    headings = " / ".join(section.split(" / ")[1:])  # not the README's title (sometimes a stray heading)
    for pattern, tag in _SECTION_TAGS:
        m = pattern.search(headings)
        if m:
            tags.append(tag(m))
    if isinstance(other_cols, str):
        for part in other_cols.split(";"):
            key, _, value = part.partition("=")
            short = _SETTING_KEYS.get(key.strip().lower())
            if short and value.strip():
                value = value.strip()
                if short == "XLA":
                    value = {"yes": "on", "no": "off"}.get(value.lower(), value.lower())
                tags.append(f"{short}={value}")
    if re.search(r"\+\s*XLA", throughput_col, re.I):
        tags.append("XLA=on")
    if re.search(r"\+\s*ASP", throughput_col, re.I):
        tags.append("ASP")
    return ", ".join(dict.fromkeys(tags)) or "default"


_COLUMNS = ["model", "framework", "task", "variant", "gpu", "system", "nodes", "gpus", "n_gpus", "precision",
            "batch_per_gpu", "batch_global", "throughput", "throughput_unit", "t_iter", "readme", "section",
            "batch_col", "batch_raw", "precision_table", "throughput_col", "throughput_raw", "other_cols"]


def _read_nvidia(path):
    """``(frame, throughput, gpus, nodes)`` of the long-format file; optional columns added as NaN, cells checked."""
    df = read_csv(path, "NVIDIA DLE throughput file")
    require_columns(df, _NVIDIA_REQUIRED, path, "NVIDIA DLE throughput file")
    for c in ("nodes", "precision", "other_cols", "throughput_raw"):
        if c not in df.columns:
            df[c] = np.nan
    throughput = number_column(df, "throughput", path, "readme").to_numpy()
    for i, readme in enumerate(df["readme"]):
        if not isinstance(readme, str) or not readme.strip():
            raise ValueError(f"{path}: column 'readme', row {i + 1}, line {i + 2}: empty (the model is read from it)")
    gpus = count_column(df, "gpus", path, "readme")
    nodes = count_column(df, "nodes", path, "readme", allow_missing=True)
    return df, throughput, gpus, nodes


def _where_from(readme: str, section: str) -> dict:
    """``model``, ``framework``, ``task``, ``gpu`` and ``system`` of a cell, from its README path and section."""
    parts = Path(readme).parts
    gpu = _GPU_IN_SECTION.findall(section)
    system = _SYSTEM.search(section)
    return {
        "model": Path(readme).parent.name or readme,
        "framework": parts[0] if len(parts) > 1 else "unknown",
        "task": parts[1] if len(parts) > 2 else "unknown",
        "gpu": f"{gpu[-1][1].upper()} {gpu[-1][2]}GB" if gpu else "unknown",
        "system": ("DGX " + system.group(1).upper() if system.group(1).upper() in ("A100", "H100")
                   else "DGX-" + system.group(1).upper()) if system else "unknown",
    }


def _check_counts(path, at: str, batch: int, n_nodes: int, gpus: int) -> None:
    """One error naming the file, column and row (``at``) for a GPU count or batch no measured run has."""
    if n_nodes * gpus > MAX_GPUS:
        raise ValueError(f"{path}: column 'gpus', {at}: {n_nodes} node(s) x {gpus} GPUs is more than {MAX_GPUS:,} "
                         "GPUs; not a measurement")
    if batch * n_nodes * gpus > MAX_BATCH:
        raise ValueError(f"{path}: column 'batch', {at}: a batch of {batch} per GPU on {n_nodes * gpus} GPUs is "
                         f"more than {MAX_BATCH:.0e} samples per step; not a measurement")


def _nvidia_row(r, throughput: float, gpus: int, nodes: int, path=None, at: str = ""):
    """``(row, None, relabelled)`` for a kept cell, or ``(None, reason it is dropped, False)``; a cell whose counts
    or throughput are no measurement raises one error naming ``path``, the column and the row (``at``)."""
    readme, section = str(r.readme), str(r.section)
    throughput_col = str(r.throughput_col)
    if _NOT_TRAINING.search(section):
        return None, "not a training table (evaluation/inference section)", False
    if math.isnan(throughput):
        return None, "no throughput (N/A, '-' or empty cell)", False
    if throughput <= 0:
        return None, "throughput <= 0", False
    table_precision = normalise_precision(r.precision)
    precision = normalise_precision(throughput_col) or table_precision
    if precision is None:
        return None, "precision not named", False
    batch, reason = _resolve_batch(r.batch, r.batch_col, precision, throughput_col, readme)
    if batch is None:
        return None, reason, False
    relabelled = table_precision is not None and table_precision != precision
    unit, factor = _unit(throughput_col, r.throughput_raw, readme)
    n_nodes = int(nodes) if nodes > 0 else 1
    _check_counts(path, at, batch, n_nodes, int(gpus))
    n_gpus = n_nodes * int(gpus)
    thr = float(throughput) * factor
    t_iter = check_step_time(path, "throughput", at, thr, batch * n_gpus)
    where = _where_from(readme, section)
    row = {
        "model": where["model"], "framework": where["framework"], "task": where["task"],
        "variant": _variant(section, r.other_cols, throughput_col), "gpu": where["gpu"], "system": where["system"],
        "nodes": n_nodes, "gpus": int(gpus), "n_gpus": n_gpus, "precision": precision,
        "batch_per_gpu": batch, "batch_global": batch * n_gpus,
        "throughput": thr, "throughput_unit": unit, "t_iter": t_iter,
        "readme": readme, "section": section, "batch_col": r.batch_col, "batch_raw": r.batch,
        "precision_table": r.precision, "throughput_col": throughput_col,
        "throughput_raw": r.throughput_raw, "other_cols": r.other_cols,
    }
    return row, None, relabelled


def load_nvidia_dle(path=None):
    """NVIDIA DeepLearningExamples' training-throughput table cells as a tidy frame.

    Parameters
    ----------
    path : path, optional
        The long-format CSV (default ``data/external/nvidia_dle/training_throughput.csv``), with
        columns readme, section, gpus, batch_col, batch, throughput_col, throughput (nodes,
        precision, other_cols and throughput_raw are used when present).

    Returns
    -------
    pandas.DataFrame
        One row per cell with a throughput > 0 whose per-GPU batch could be resolved:

        ``model`` (the README's folder, e.g. ``"resnet50v1.5"``), ``framework`` (the path's first
        folder, e.g. PyTorch, TensorFlow, TensorFlow2, PaddlePaddle, DGLPyTorch, CUDA-Optimized;
        MxNet's tables give no batch size, so none of its rows is kept), ``task`` (the second
        folder: Classification, LanguageModeling, ...),
        ``variant`` (what tells one table of a README from another: pre-training / fine-tuning,
        sequence length, model size, XLA, ...; ``"default"`` if nothing), ``gpu`` (parsed from
        the section, e.g. ``"A100 80GB"``, ``"V100 16GB"``; ``"unknown"`` where the section names
        none), ``system`` (``"DGX A100"``, ``"DGX-1"``, ... or ``"unknown"``), ``nodes`` (1 where
        the table has no nodes column), ``gpus`` (as the table gives it: per node where there is a
        nodes column), ``n_gpus`` = nodes × gpus, ``precision`` (``"amp"``, ``"tf32"``,
        ``"fp32"``, ``"bf16"``; from the throughput column's header), ``batch_per_gpu``,
        ``batch_global`` = batch_per_gpu × n_gpus, ``throughput`` (over all GPUs, per second),
        ``throughput_unit`` (images/s, samples/s, sequences/s, tokens/s, mels/s, molecules/s, or
        unspecified where the header names none), and the target ``t_iter`` =
        ``batch_global / throughput`` (seconds per global step). The source cells stay in
        ``readme``, ``section``, ``batch_col``, ``batch_raw``, ``precision_table``,
        ``throughput_col``, ``throughput_raw``, ``other_cols``.

        ``frame.attrs["dropped"]`` maps each reason a row was left out to its count;
        ``frame.attrs["precision_relabelled"]`` counts kept rows whose ``precision`` column
        disagreed with the throughput header (the header is taken: the shipped file labels some
        TF32/FP32 cells of NCF and Wide & Deep "AMP").

    Notes
    -----
    The tables' throughput is the total over all GPUs, so ``t_iter`` multiplies the per-GPU
    batch by the GPU count. Where a table gives the batch per optimizer step with gradient
    accumulation (BERT pre-training), ``t_iter`` is the time of that whole step; where it gives
    the micro-batch (the multi-node tables), the time of one micro-batch.

    Throughput in mol/ms is converted to molecules/s, and TensorFlow NCF's table, in millions
    of samples/s without saying so in its header, to samples/s (``_UNIT_OVERRIDES``). Where the
    unit counts something other than the batch's elements (tokens, mel frames), ``t_iter`` is
    the step time divided by a per-model constant.

    Rows are dropped (and counted) for: a section that is not training (evaluation or
    inference tables), no throughput (N/A, "-" or empty), throughput <= 0, no precision named,
    and a batch that cannot be resolved (none in the table, unparsable, or a pair without a
    precision order). See :func:`resolve_batch`.

    Raises
    ------
    ValueError
        A missing column; an empty readme; a throughput, gpus or nodes cell that is not a
        number (gpus, nodes: not a whole number >= 1); more than ``MAX_GPUS`` GPUs or ``MAX_BATCH``
        samples per step; a throughput that gives a step longer than ``MAX_STEP_TIME`` (not a
        measurement); a table with no data rows or none kept. Each message names the file, column and row.
    """
    import pandas as pd

    path = (path_argument(path, "path") if path is not None
            else external_dir() / "nvidia_dle" / "training_throughput.csv")
    df, throughput, gpus, nodes = _read_nvidia(path)
    rows, dropped, relabelled = [], {}, 0
    for i, r in enumerate(df.itertuples(index=False)):
        row, reason, changed = _nvidia_row(r, throughput[i], gpus[i], nodes[i], path, row_where(df, i, "readme"))
        if row is None:
            dropped[reason] = dropped.get(reason, 0) + 1
            continue
        relabelled += changed
        rows.append(row)
    if not rows:
        raise no_rows_error(path, dropped)
    frame = pd.DataFrame(rows, columns=_COLUMNS)
    for c in ("nodes", "gpus", "n_gpus", "batch_per_gpu", "batch_global"):
        frame[c] = frame[c].astype("int64")
    frame.attrs["dataset"] = "nvidia_dle"
    frame.attrs["source"] = [str(path)]
    frame.attrs["dropped"] = dropped
    frame.attrs["precision_relabelled"] = relabelled
    return frame
