"""Lambda Labs' PyTorch training benchmarks (``data/external/lambda``) as a tidy frame: :func:`load_lambda`."""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from .._io import path_argument, read_csv
from .external_files import (MAX_BATCH, check_step_time, count_column, external_dir, no_rows_error, number_column,
                             require_columns)

__all__ = ["PLAUSIBLE_PER_GPU", "load_lambda"]

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
_COLUMNS = ["model", "precision", "gpu", "n_gpus", "batch_per_gpu", "batch_global", "throughput", "t_iter",
            "t_sample", "watt", "price", "watt_per_gpu", "price_per_gpu", "config"]


def _lambda_gpu(name: str):
    """``"Dell 2x H100 80GB SXM5"`` → ``("Dell H100 80GB SXM5", 2)``; a name without a count → ``(name, None)``."""
    m = _GPU_COUNT.search(name)
    if not m:
        return " ".join(name.split()), None
    return " ".join((name[:m.start()] + " " + name[m.end():]).split()), int(m.group(1))


def _read_lambda(path):
    """``(frame, model columns, GPU counts, {column: floats})`` of one Lambda file, its rows checked."""
    df = read_csv(path, "Lambda benchmark file")
    require_columns(df, _LAMBDA_DESCRIPTORS, path, "Lambda benchmark file")
    models = [c for c in df.columns if c not in _LAMBDA_DESCRIPTORS]
    if not models:
        raise ValueError(f"{path}: no model columns (expected columns after {list(_LAMBDA_DESCRIPTORS)})")
    if df.empty:
        raise ValueError(f"{path}: no GPU rows")
    names = df["name_gpu"]
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name.strip():
            empty = name is None or (isinstance(name, float) and math.isnan(name)) or not str(name).strip()
            what = "empty GPU name" if empty else f"expected a GPU configuration's name (text), got {name!r}"
            raise ValueError(f"{path}: column 'name_gpu', row {i + 1}, line {i + 2}: {what}")
    dup = names.str.strip().duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(f"{path}: column 'name_gpu', row {i + 1}, line {i + 2}: {names.iloc[i]!r} appears twice")
    n = count_column(df, "num_gpu", path, "name_gpu")
    for i, name in enumerate(names):
        counted = _lambda_gpu(name)[1]
        counted = 1 if counted is None else counted  # a name without a count is one GPU; "0x A100" is 0, not 1
        if counted != n[i]:
            raise ValueError(f"{path}: row {i + 1} ({name!r}), line {i + 2}: the name says {counted} GPU(s) "
                             f"but column 'num_gpu' says {n[i]}")
    numbers = {c: number_column(df, c, path, "name_gpu").to_numpy() for c in ["watt", "price"] + models}
    for c in ("watt", "price"):
        nonpos = numbers[c] <= 0  # NaN (an empty cell) passes: the rows keep it as unknown
        if nonpos.any():
            i = int(np.flatnonzero(nonpos)[0])
            raise ValueError(f"{path}: column {c!r}, row {i + 1} ({names.iloc[i]!r}), line {i + 2}: "
                             f"{numbers[c][i]:g} is not a {c} (expected a number > 0 or an empty cell)")
    return df, models, n, numbers


def _read_lambda_pair(tp_path, bs_path):
    """The throughput and batch files of one precision, read and checked to list the same GPU rows and models."""
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
        for c in ("watt", "price"):  # one configuration: the same power and price in both files
            x, y = tp_num[c][i], bs_num[c][i]
            if x != y and not (math.isnan(x) and math.isnan(y)):
                raise ValueError(f"column {c!r}, row {i + 1} ({a!r}), line {i + 2}: {tp_path} has "
                                 f"{tp_num[c][i]:g}, {bs_path} has {bs_num[c][i]:g}; the two files describe the same "
                                 "configurations")
    return tp, bs, models, n, tp_num, bs_num


def _lambda_cells(prec: str, tp_path, bs_path, dropped: dict) -> list:
    """One row per measured (GPU configuration, model) cell of one precision; cells left out counted in ``dropped``."""
    tp, bs, models, n, tp_num, bs_num = _read_lambda_pair(tp_path, bs_path)
    rows = []
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
            at = f"row {i + 1} ({config!r}), line {i + 2}"
            where = f"column {m!r}, {at}"
            if thr < 0:
                raise ValueError(f"{tp_path}: {where}: negative throughput {thr!r}")
            if math.isnan(batch) or batch < 1 or batch > MAX_BATCH or batch != int(batch):
                raise ValueError(f"{bs_path}: {where}: expected a whole batch size >= 1 and at most {MAX_BATCH:.0e} "
                                 f"where {tp_path.name} gives a throughput, got {float(batch)!r}")
            batch = int(batch)
            if batch % n[i]:
                raise ValueError(f"{bs_path}: {where}: global batch {batch} is not divisible by "
                                 f"num_gpu {n[i]}")
            rows.append({
                "model": m, "precision": prec, "gpu": gpu, "n_gpus": int(n[i]),
                "batch_per_gpu": batch // int(n[i]), "batch_global": batch,
                "throughput": float(thr), "t_iter": check_step_time(tp_path, m, at, thr, batch),
                "t_sample": 1.0 / thr,
                "watt": tp_num["watt"][i], "price": tp_num["price"][i],
                "watt_per_gpu": tp_num["watt"][i] / n[i], "price_per_gpu": tp_num["price"][i] / n[i],
                "config": config,
            })
    return rows


def _lambda_frame(rows: list):
    """The cells as a frame, with ``per_gpu_vs_best_single`` (NaN where no 1-GPU row of the model and precision)."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=_COLUMNS)
    for c in ("n_gpus", "batch_per_gpu", "batch_global"):
        frame[c] = frame[c].astype("int64")
    best = frame[frame["n_gpus"] == 1].groupby(["model", "precision"])["throughput"].max()
    ref = [best.get((m, p), np.nan) for m, p in zip(frame["model"], frame["precision"])]
    frame["per_gpu_vs_best_single"] = frame["throughput"] / frame["n_gpus"] / np.asarray(ref, dtype=float)
    return frame


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
    The ``bs`` files give the GLOBAL batch (per-GPU batch × ``num_gpu``), so
    ``batch_per_gpu = batch_global / n_gpus``; a global batch that is not a whole multiple
    of ``num_gpu`` raises.

    A throughput of 0 or an empty cell means "not measured" and is dropped.

    What one "sample" is follows each model's training script (images for resnet50 and ssd,
    sequences for BERT, user-item pairs for ncf; tokens for gnmt and Transformer-XL, mel
    frames for tacotron2, audio samples for waveglow, as the matching NVIDIA tables state).
    For the last four ``t_iter`` is the step time divided by a per-model constant (items per
    batch element); in log space a ``model`` level absorbs it.

    The screen. Data-parallel training runs the same per-GPU batch on every GPU, so per GPU it can
    at best match a single GPU; a row more than :data:`PLAUSIBLE_PER_GPU` times above it is not a
    measurement of training speed. ``data/external/README.md`` lists the rows the screen removes
    from the shipped files.

    Raises
    ------
    ValueError
        A bad ``precision``; a file with a missing column, a non-numeric cell, a watt or price <= 0, a GPU count that
        disagrees with the name or is above ``MAX_GPUS``, a batch that is missing, not a whole number,
        above ``MAX_BATCH`` or not divisible by the GPU count where a throughput is given, a throughput
        that gives a step longer than ``MAX_STEP_TIME`` (not a measurement); throughput and batch files
        whose GPU rows or model columns disagree; files with no measured cell. Each message names the
        file and the column or row.
    """
    if precision is None:
        precisions = _LAMBDA_PRECISIONS
    elif precision in _LAMBDA_PRECISIONS:
        precisions = (precision,)
    else:
        raise ValueError(f"precision: expected one of {_LAMBDA_PRECISIONS} or None, got {precision!r}")
    if not isinstance(screen, (bool, np.bool_)):
        raise ValueError(f"screen: expected True or False, got {screen!r}")
    folder = path_argument(root, "root") if root is not None else external_dir() / "lambda"
    rows, dropped, sources = [], {}, []
    for prec in precisions:
        tp_path = folder / f"pytorch-train-throughput-{prec}.csv"
        bs_path = folder / f"pytorch-train-bs-{prec}.csv"
        sources += [str(tp_path), str(bs_path)]
        rows += _lambda_cells(prec, tp_path, bs_path, dropped)
    if not rows:
        raise no_rows_error(folder, dropped)
    frame = _lambda_frame(rows)
    if screen:
        out = (frame["per_gpu_vs_best_single"] > PLAUSIBLE_PER_GPU).to_numpy()
        if out.any():
            dropped[_SCREEN_REASON.format(PLAUSIBLE_PER_GPU)] = int(out.sum())
            frame = frame[~out].reset_index(drop=True)
    frame.attrs["dataset"] = "lambda_screened" if screen else "lambda"
    frame.attrs["source"] = sources
    frame.attrs["dropped"] = dropped
    return frame
