"""Third-party training-throughput measurements (``data/external/``) as tidy tables.

No one here measured these numbers: they are shipped, byte for byte as published, so that the
models can be checked on other people's machines. ``data/external/README.md`` lists the files,
and each dataset has a ``<name>.provenance.json`` beside its folder (source repository, commit,
paths, units, licence, and how the file was derived).

``lambda``
    Lambda Labs' GPU benchmarks (`lambdal/deeplearning-benchmark`, ``pytorch/*.csv``): 53 GPU
    configurations (1, 2, 4 or 8 GPUs) × 10 models × {fp16, fp32}. :func:`load_lambda`.
``lambda_screened``
    The same without the 22 rows that fail a physical screen (``load_lambda(screen=True)``).
``nvidia_dle``
    The "Training performance" tables of NVIDIA DeepLearningExamples' READMEs, one row per table
    cell. :func:`load_nvidia_dle`.

Both loaders return one row per measured throughput with the target ``t_iter``: seconds per
global step, ``global batch / throughput``. The rows a loader leaves out are counted, by reason,
in ``frame.attrs["dropped"]``. :data:`EXTERNAL_DATASETS` maps each name to an
:class:`ExternalDataset`: the loader, the target, and the columns' modelling roles in the
vocabulary of :class:`perfkit.model.LogLinearModel` (``numeric``, ``categorical``, ``extrinsic``)::

    frame, ds = load_external("lambda")
    model = LogLinearModel(**ds.roles).fit(frame, frame[ds.target])

A malformed file raises one ``ValueError`` naming the file and the column or row at fault.

>>> resolve_batch("128 and 256", "Batch size / GPU (TF32 and FP16)", "amp")
256
>>> resolve_batch("64 , 32", "Batch size / GPU: mixed precision, FP32", "fp32")
32
"""
from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .._io import read_csv
from ..schema import data_dir

__all__ = [
    "EXTERNAL_DATASETS",
    "ExternalDataset",
    "PLAUSIBLE_PER_GPU",
    "external_dir",
    "load_external",
    "load_lambda",
    "load_nvidia_dle",
    "normalise_precision",
    "resolve_batch",
]


def external_dir() -> Path:
    """Folder of the shipped third-party data: ``data/external/`` (or ``$PERFKIT_DATA/external``)."""
    return data_dir() / "external"


# ------------------------------------------------------------------------------------ helpers
def _numbers(df, col: str, path, label=None):
    """Column ``col`` as floats; one error naming the file, row and column for a cell that is no number.

    Empty cells become NaN (the callers decide what a missing value means).
    """
    import pandas as pd

    raw = df[col]
    num = pd.to_numeric(raw, errors="coerce").astype(float)
    text = raw.astype(str).str.strip()
    bad = (num.isna() & raw.notna() & (text != "") & (text.str.lower() != "nan")) | np.isinf(num)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        where = f"row {i + 1}" + (f" ({df[label].iloc[i]!r})" if label else "") + f", line {i + 2}"
        raise ValueError(f"{path}: column {col!r}, {where}: {raw.iloc[i]!r} is not a finite number")
    return num


def _require(df, columns, path, what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: column {missing[0]!r} missing (a {what} needs {list(columns)})")


def _counts(df, col: str, path, label=None, allow_missing: bool = False):
    """Whole numbers >= 1 (GPU or node counts) as an int array; NaN kept as -1 when ``allow_missing``."""
    values = df[col]
    num = _numbers(df, col, path, label)
    out = np.full(len(num), -1, dtype=np.int64)
    for i, v in enumerate(num.to_numpy()):
        if math.isnan(v) and allow_missing:
            continue
        if math.isnan(v) or v < 1 or v != int(v):
            where = f"row {i + 1}" + (f" ({df[label].iloc[i]!r})" if label else "") + f", line {i + 2}"
            raise ValueError(f"{path}: column {col!r}, {where}: expected a whole number >= 1, "
                             f"got {values.iloc[i]!r}")
        out[i] = int(v)
    return out


# ----------------------------------------------------------------------------------- Lambda
#: Descriptor columns of a Lambda file; every other column is one model's numbers.
_LAMBDA_DESCRIPTORS = ("name_gpu", "num_gpu", "watt", "price")
_LAMBDA_PRECISIONS = ("fp16", "fp32")
#: The physical screen of :func:`load_lambda` (``screen=True``): a data-parallel run does the same work per GPU
#: as one GPU does, so its throughput per GPU cannot much exceed what the fastest single GPU in the file reaches
#: for the same model and precision. Rows above this many times that are not measurements of training speed.
PLAUSIBLE_PER_GPU = 2.0
_SCREEN_REASON = "implausible scaling: throughput per GPU > {:g}x the fastest single GPU's (same model and precision)"
#: "2x", "8x ", "4x" glued to the GPU ("4xV100") in a configuration's name.
_GPU_COUNT = re.compile(r"(?:^|(?<=\s))(\d+)\s*x\s*(?=[A-Za-z])")


def _lambda_gpu(name: str):
    """``"Dell 2x H100 80GB SXM5"`` → ``("Dell H100 80GB SXM5", 2)``; a name without a count → ``(name, None)``."""
    m = _GPU_COUNT.search(name)
    if not m:
        return " ".join(name.split()), None
    return " ".join((name[:m.start()] + " " + name[m.end():]).split()), int(m.group(1))


def _read_lambda(path):
    df = read_csv(path, "Lambda benchmark file")
    _require(df, _LAMBDA_DESCRIPTORS, path, "Lambda benchmark file")
    models = [c for c in df.columns if c not in _LAMBDA_DESCRIPTORS]
    if not models:
        raise ValueError(f"{path}: no model columns (expected columns after {list(_LAMBDA_DESCRIPTORS)})")
    if df.empty:
        raise ValueError(f"{path}: no GPU rows")
    names = df["name_gpu"]
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{path}: column 'name_gpu', row {i + 1}, line {i + 2}: empty GPU name")
    dup = names.str.strip().duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(f"{path}: column 'name_gpu', row {i + 1}, line {i + 2}: {names.iloc[i]!r} appears twice")
    n = _counts(df, "num_gpu", path, "name_gpu")
    for i, name in enumerate(names):
        counted = _lambda_gpu(name)[1] or 1
        if counted != n[i]:
            raise ValueError(f"{path}: row {i + 1} ({name!r}), line {i + 2}: the name says {counted} GPU(s) "
                             f"but column 'num_gpu' says {n[i]}")
    numbers = {c: _numbers(df, c, path, "name_gpu").to_numpy() for c in ["watt", "price"] + models}
    return df, models, n, numbers


def load_lambda(precision: str | None = None, root=None, screen: bool = False):
    """Lambda Labs' PyTorch training benchmarks as a tidy frame: one row per (GPU configuration, model, precision).

    Parameters
    ----------
    precision : {"fp16", "fp32"} or None
        One precision's files, or both (None).
    root : path, optional
        Folder holding ``pytorch-train-throughput-{fp16,fp32}.csv`` and
        ``pytorch-train-bs-{fp16,fp32}.csv`` (default ``data/external/lambda``).
    screen : bool, default False
        Leave out the rows whose throughput per GPU is more than :data:`PLAUSIBLE_PER_GPU` (2) times the
        fastest single GPU's for the same model and precision (``per_gpu_vs_best_single`` > 2; see Notes);
        they are counted in ``frame.attrs["dropped"]``. The files are not changed.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``precision``, ``gpu`` (the configuration's name without its GPU count, e.g.
        ``"Dell H100 80GB SXM5"``), ``n_gpus``, ``batch_per_gpu``, ``batch_global``,
        ``throughput`` (samples/s over all GPUs, as Lambda reports it), ``t_iter`` =
        ``batch_global / throughput`` (s per step), ``t_sample`` = ``1 / throughput`` (s),
        ``watt`` and ``price`` (the whole configuration's, as in the files),
        ``watt_per_gpu``, ``price_per_gpu``, ``config`` (the file's ``name_gpu``), and
        ``per_gpu_vs_best_single``: throughput / n_gpus over the largest 1-GPU throughput of the same model and
        precision in the frame (NaN where no 1-GPU row of that model and precision is loaded).
        ``frame.attrs["dropped"]`` counts the cells left out, by reason.

    Notes
    -----
    The ``bs`` files give the GLOBAL batch (per-GPU batch × ``num_gpu``). In the shipped files
    every global batch is a whole multiple of ``num_gpu`` (0 exceptions in 1,060 cells), so
    ``batch_per_gpu = batch_global / n_gpus`` exactly; a file where it is not raises.

    A throughput of 0 (40 cells per precision in the shipped files: Transformer-XL base and
    large on the Dell, DellTexas, SMC, 1CC and RAIDZ1 H100 systems) or an empty cell means
    "not measured" and is dropped.

    What one "sample" is follows each model's training script (images for resnet50 and ssd,
    sequences for BERT, user-item pairs for ncf; tokens for gnmt and Transformer-XL, mel
    frames for tacotron2, audio samples for waveglow, as the matching NVIDIA tables state).
    For the last four ``t_iter`` is the step time divided by a per-model constant (items per
    batch element); in log space a ``model`` level absorbs it.

    The screen. Data-parallel training runs the same per-GPU batch on every GPU, so per GPU it can
    at best match a single GPU (``per_gpu_vs_best_single`` is 0.03–1.48 for every model but ncf in the
    shipped files). ncf on the H100 SXM5 systems of Dell, DellTexas, SMC, 1CC and RAIDZ1 (4 and 8 GPUs)
    and of LambdaCloud (8 GPUs) reports 2.4–47× the fastest single H100's per-GPU throughput: 13
    billion samples/s, steps of 3 ms where one GPU takes 190 ms. ``screen=True`` leaves out these 22
    rows; the 2-GPU ncf rows of the same systems (1.5–1.9×) stay.

    Raises
    ------
    ValueError
        A bad ``precision``; a file with a missing column, a non-numeric cell, a GPU count that
        disagrees with the name, a batch that is missing, not a whole number or not divisible by
        the GPU count where a throughput is given; throughput and batch files whose GPU rows or
        model columns disagree. Each message names the file and the column or row.
    """
    import pandas as pd

    if precision is None:
        precisions = _LAMBDA_PRECISIONS
    elif precision in _LAMBDA_PRECISIONS:
        precisions = (precision,)
    else:
        raise ValueError(f"precision: expected one of {_LAMBDA_PRECISIONS} or None, got {precision!r}")
    if not isinstance(screen, (bool, np.bool_)):
        raise ValueError(f"screen: expected True or False, got {screen!r}")
    folder = Path(root) if root is not None else external_dir() / "lambda"
    rows, dropped, sources = [], {}, []
    for prec in precisions:
        tp_path = folder / f"pytorch-train-throughput-{prec}.csv"
        bs_path = folder / f"pytorch-train-bs-{prec}.csv"
        sources += [str(tp_path), str(bs_path)]
        tp, models, n, tp_num = _read_lambda(tp_path)
        bs, bs_models, bs_n, bs_num = _read_lambda(bs_path)
        for a, b, pa, pb in ((models, bs_models, tp_path, bs_path), (bs_models, models, bs_path, tp_path)):
            extra = [c for c in a if c not in b]
            if extra:
                raise ValueError(f"{pa}: model column {extra[0]!r} is not in {pb}; "
                                 "the two files must list the same models")
        if len(tp) != len(bs):
            raise ValueError(f"{tp_path} has {len(tp)} GPU rows but {bs_path} has {len(bs)}; their GPU rows must agree")
        for i in range(len(tp)):
            a, b = tp["name_gpu"].iloc[i].strip(), bs["name_gpu"].iloc[i].strip()
            if a != b or n[i] != bs_n[i]:
                raise ValueError(f"GPU rows disagree at row {i + 1} (line {i + 2}): {tp_path} has {a!r} "
                                 f"({n[i]} GPUs), {bs_path} has {b!r} ({bs_n[i]} GPUs)")
        for i in range(len(tp)):
            config = tp["name_gpu"].iloc[i].strip()
            gpu = _lambda_gpu(config)[0]
            for m in models:
                thr, batch = tp_num[m][i], bs_num[m][i]
                if math.isnan(thr):
                    dropped["throughput missing (empty cell)"] = dropped.get("throughput missing (empty cell)", 0) + 1
                    continue
                if thr == 0:
                    dropped["throughput 0 (not measured)"] = dropped.get("throughput 0 (not measured)", 0) + 1
                    continue
                where = f"column {m!r}, row {i + 1} ({config!r}), line {i + 2}"
                if thr < 0:
                    raise ValueError(f"{tp_path}: {where}: negative throughput {thr!r}")
                if math.isnan(batch) or batch < 1 or batch != int(batch):
                    raise ValueError(f"{bs_path}: {where}: expected a whole batch size >= 1 where "
                                     f"{tp_path.name} gives a throughput, got {bs[m].iloc[i]!r}")
                batch = int(batch)
                if batch % n[i]:
                    raise ValueError(f"{bs_path}: {where}: global batch {batch} is not divisible by "
                                     f"num_gpu {n[i]}")
                rows.append({
                    "model": m, "precision": prec, "gpu": gpu, "n_gpus": int(n[i]),
                    "batch_per_gpu": batch // int(n[i]), "batch_global": batch,
                    "throughput": float(thr), "t_iter": batch / thr, "t_sample": 1.0 / thr,
                    "watt": tp_num["watt"][i], "price": tp_num["price"][i],
                    "watt_per_gpu": tp_num["watt"][i] / n[i], "price_per_gpu": tp_num["price"][i] / n[i],
                    "config": config,
                })
    columns = ["model", "precision", "gpu", "n_gpus", "batch_per_gpu", "batch_global", "throughput", "t_iter",
               "t_sample", "watt", "price", "watt_per_gpu", "price_per_gpu", "config"]
    frame = pd.DataFrame(rows, columns=columns)
    for c in ("n_gpus", "batch_per_gpu", "batch_global"):
        frame[c] = frame[c].astype("int64")
    best = frame[frame["n_gpus"] == 1].groupby(["model", "precision"])["throughput"].max()
    ref = [best.get((m, p), np.nan) for m, p in zip(frame["model"], frame["precision"])]
    frame["per_gpu_vs_best_single"] = frame["throughput"] / frame["n_gpus"] / np.asarray(ref, dtype=float)
    if screen:
        out = (frame["per_gpu_vs_best_single"] > PLAUSIBLE_PER_GPU).to_numpy()
        if out.any():
            dropped[_SCREEN_REASON.format(PLAUSIBLE_PER_GPU)] = int(out.sum())
            frame = frame[~out].reset_index(drop=True)
    frame.attrs["dataset"] = "lambda_screened" if screen else "lambda"
    frame.attrs["source"] = sources
    frame.attrs["dropped"] = dropped
    return frame


# ----------------------------------------------------------------------- NVIDIA DLE READMEs
_NVIDIA_REQUIRED = ("readme", "section", "gpus", "batch_col", "batch", "throughput_col", "throughput")
_HALF = {"amp", "fp16", "bf16"}
#: Precision words of a table header, in the order they appear.
_PRECISION_WORD = re.compile(r"mixed precision|\bAMP\b|\bFP16\b|\bBF16\b|\bTF32\b|\bFP32\b|\bTF\b", re.I)
#: README → order of an unlabelled "a/b" batch pair ("half" = AMP/FP16/BF16, "single" = FP32/TF32).
_BATCH_ORDER = {
    # "we used mixed precision training with a batch size of 5120 per GPU ... To use FP32, reduce
    # the batch size to 2560" (the README's Training process section): "5120/2560" is (AMP, FP32).
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
    # Its table gives 20.18 (TF32) ... 89.88 for 1 to 8 A100s with a 1,048,576 global batch: millions of
    # samples/s (the README's earlier table gave 9,255,160 items/s for 1 V100 in FP32; this one 9.73).
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
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+", text):
        return [int(text.replace(",", ""))]
    m = re.fullmatch(r"(\d+)\s*k", text, re.I)
    if m:  # DLRM's "4k / 8k / 64k": 64k x 1 GPU = 8k x 8 = 4k x 16 = the 65,536 global batch
        return [int(m.group(1)) * 1024]
    parts = re.split(r"\s*(?:\band\b|,|/|:)\s*", text)
    if not all(re.fullmatch(r"\d+", p) for p in parts):
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
    The tables' throughput is the total over all GPUs (in the shipped file an 8-GPU cell is 3.0
    to 11 times the 1-GPU cell of the same table, batch and precision; none is per GPU), so
    ``t_iter`` multiplies the per-GPU batch by the GPU count. Where a table gives the batch per
    optimizer step with gradient accumulation (BERT pre-training: 8192 per GPU), ``t_iter`` is
    the time of that whole step; where it gives the micro-batch (the multi-node tables: 128 with
    64 accumulation steps), the time of one micro-batch.

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
        number (gpus, nodes: not a whole number >= 1), naming the row.
    """
    import pandas as pd

    path = Path(path) if path is not None else external_dir() / "nvidia_dle" / "training_throughput.csv"
    df = read_csv(path, "NVIDIA DLE throughput file")
    _require(df, _NVIDIA_REQUIRED, path, "NVIDIA DLE throughput file")
    for c in ("nodes", "precision", "other_cols", "throughput_raw"):
        if c not in df.columns:
            df[c] = np.nan
    throughput = _numbers(df, "throughput", path, "readme").to_numpy()
    for i, readme in enumerate(df["readme"]):
        if not isinstance(readme, str) or not readme.strip():
            raise ValueError(f"{path}: column 'readme', row {i + 1}, line {i + 2}: empty (the model is read from it)")
    gpus = _counts(df, "gpus", path, "readme")
    nodes = _counts(df, "nodes", path, "readme", allow_missing=True)
    rows, dropped, relabelled = [], {}, 0

    def drop(reason):
        dropped[reason] = dropped.get(reason, 0) + 1

    for i, r in enumerate(df.itertuples(index=False)):
        readme, section = str(r.readme), str(r.section)
        throughput_col = str(r.throughput_col)
        if _NOT_TRAINING.search(section):
            drop("not a training table (evaluation/inference section)")
            continue
        if math.isnan(throughput[i]):
            drop("no throughput (N/A, '-' or empty cell)")
            continue
        if throughput[i] <= 0:
            drop("throughput <= 0")
            continue
        table_precision = normalise_precision(r.precision)
        precision = normalise_precision(throughput_col) or table_precision
        if precision is None:
            drop("precision not named")
            continue
        batch, reason = _resolve_batch(r.batch, r.batch_col, precision, throughput_col, readme)
        if batch is None:
            drop(reason)
            continue
        if table_precision is not None and table_precision != precision:
            relabelled += 1
        unit, factor = _unit(throughput_col, r.throughput_raw, readme)
        n_nodes = int(nodes[i]) if nodes[i] > 0 else 1
        n_gpus = n_nodes * int(gpus[i])
        thr = float(throughput[i]) * factor
        parts = Path(readme).parts
        gpu = _GPU_IN_SECTION.findall(section)
        system = _SYSTEM.search(section)
        rows.append({
            "model": Path(readme).parent.name or readme,
            "framework": parts[0] if len(parts) > 1 else "unknown",
            "task": parts[1] if len(parts) > 2 else "unknown",
            "variant": _variant(section, r.other_cols, throughput_col),
            "gpu": f"{gpu[-1][1].upper()} {gpu[-1][2]}GB" if gpu else "unknown",
            "system": ("DGX " + system.group(1).upper() if system.group(1).upper() in ("A100", "H100")
                       else "DGX-" + system.group(1).upper()) if system else "unknown",
            "nodes": n_nodes, "gpus": int(gpus[i]), "n_gpus": n_gpus, "precision": precision,
            "batch_per_gpu": batch, "batch_global": batch * n_gpus,
            "throughput": thr, "throughput_unit": unit, "t_iter": batch * n_gpus / thr,
            "readme": readme, "section": section, "batch_col": r.batch_col, "batch_raw": r.batch,
            "precision_table": r.precision, "throughput_col": throughput_col,
            "throughput_raw": r.throughput_raw, "other_cols": r.other_cols,
        })
    columns = ["model", "framework", "task", "variant", "gpu", "system", "nodes", "gpus", "n_gpus", "precision",
               "batch_per_gpu", "batch_global", "throughput", "throughput_unit", "t_iter", "readme", "section",
               "batch_col", "batch_raw", "precision_table", "throughput_col", "throughput_raw", "other_cols"]
    frame = pd.DataFrame(rows, columns=columns)
    for c in ("nodes", "gpus", "n_gpus", "batch_per_gpu", "batch_global"):
        frame[c] = frame[c].astype("int64")
    frame.attrs["dataset"] = "nvidia_dle"
    frame.attrs["source"] = [str(path)]
    frame.attrs["dropped"] = dropped
    frame.attrs["precision_relabelled"] = relabelled
    return frame


# ---------------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class ExternalDataset:
    """One shipped third-party dataset: how to load it and what its columns are for.

    ``numeric``, ``categorical`` and ``extrinsic`` are the roles of
    :class:`perfkit.model.LogLinearModel` (``LogLinearModel(**dataset.roles)``); ``target`` is
    the time column to fit (seconds).
    """

    name: str
    loader: Callable
    target: str
    numeric: tuple
    categorical: tuple
    extrinsic: tuple
    description: str
    citation: str
    files: str = ""  # the shipped dataset whose folder and provenance it reads (default: ``name``)

    @property
    def roles(self) -> dict:
        """``{"numeric": [...], "categorical": [...], "extrinsic": [...]}``."""
        return {"numeric": list(self.numeric), "categorical": list(self.categorical),
                "extrinsic": list(self.extrinsic)}

    @property
    def features(self) -> list:
        """Every role column, numeric then categorical then extrinsic."""
        return [*self.numeric, *self.categorical, *self.extrinsic]

    def provenance_path(self, root=None) -> Path:
        """``data/external/<files or name>.provenance.json`` (or under ``root``)."""
        return (Path(root) if root is not None else external_dir()) / f"{self.files or self.name}.provenance.json"

    def load(self, **kwargs):
        """The tidy frame (``kwargs`` go to the loader), checked by :meth:`check`."""
        return self.check(self.loader(**kwargs))

    def check(self, frame):
        """``frame`` unchanged if every role column and the target are present, without NaN, and the numbers > 0."""
        for col in [*self.features, self.target]:
            if col not in frame.columns:
                raise ValueError(f"{self.name}: column {col!r} missing")
            if frame[col].isna().any():
                raise ValueError(f"{self.name}: column {col!r} has missing values")
        for col in [*self.numeric, *self.extrinsic, self.target]:
            values = frame[col].to_numpy(dtype=float)
            if not np.all(np.isfinite(values) & (values > 0)):
                raise ValueError(f"{self.name}: column {col!r} has values <= 0 or not finite")
        return frame


#: Dataset name → :class:`ExternalDataset`. ``numeric`` is empty in both: neither source describes
#: its models by numbers, and a GPU descriptor (Lambda's ``watt_per_gpu``, ``price_per_gpu``) is a
#: function of ``gpu``, so beside it it would only repeat the level (use it instead of ``gpu`` to
#: predict a GPU left out of the fit). The GPU and batch counts scale the run: extrinsic.
EXTERNAL_DATASETS = {
    "lambda": ExternalDataset(
        name="lambda",
        loader=load_lambda,
        target="t_iter",
        numeric=(),
        categorical=("model", "gpu", "precision"),
        extrinsic=("n_gpus", "batch_per_gpu"),
        description=("Lambda Labs GPU benchmarks: PyTorch training throughput of 10 models (NVIDIA "
                     "DeepLearningExamples scripts) on 53 GPU configurations (1/2/4/8 GPUs), fp16 and fp32."),
        citation=("Lambda, Inc. (Lambda Labs), deeplearning-benchmark, https://github.com/lambdal/deeplearning-benchmark, "
                  "commit aa5addb6a53675a649a80036dad548f1c27cbcc4 (2025-12-17), pytorch/pytorch-train-"
                  "{throughput,bs}-{fp16,fp32}.csv. No licence file in the repository; shipped with attribution."),
    ),
    "nvidia_dle": ExternalDataset(
        name="nvidia_dle",
        loader=load_nvidia_dle,
        target="t_iter",
        numeric=(),
        categorical=("model", "variant", "framework", "gpu", "precision"),
        extrinsic=("n_gpus", "batch_per_gpu"),
        description=("NVIDIA DeepLearningExamples README 'Training performance' tables: total training "
                     "throughput on DGX-1/DGX-2 (V100) and DGX A100 systems, 1 to 256 GPUs, AMP/TF32/FP32/BF16."),
        citation=("NVIDIA Corporation, DeepLearningExamples, https://github.com/NVIDIA/DeepLearningExamples, "
                  "commit 729963dd47e7c8bd462ad10bfac7a7b0b604e6dd (2024-04-04), */README.md 'Training "
                  "performance' tables. Apache-2.0 (per-model LICENSE files, as far as checked)."),
    ),
}


#: Lambda's benchmarks without the rows that fail the physical screen of :func:`load_lambda` (``screen=True``)
EXTERNAL_DATASETS["lambda_screened"] = replace(
    EXTERNAL_DATASETS["lambda"], name="lambda_screened", loader=functools.partial(load_lambda, screen=True),
    files="lambda", description=("Lambda Labs GPU benchmarks without the 22 ncf rows whose throughput per GPU is "
                                 "more than twice the fastest single GPU's (load_lambda(screen=True)): 958 of 980 "
                                 "measured cells."))


def load_external(name: str, **kwargs):
    """``(frame, dataset)`` for a name of :data:`EXTERNAL_DATASETS`; ``kwargs`` go to its loader.

    Raises
    ------
    ValueError
        An unknown name (the message lists the known ones), or a frame that fails
        :meth:`ExternalDataset.check`.
    """
    if name not in EXTERNAL_DATASETS:
        raise ValueError(f"external dataset {name!r} unknown; known: {sorted(EXTERNAL_DATASETS)}")
    dataset = EXTERNAL_DATASETS[name]
    return dataset.load(**kwargs), dataset
