"""The hardware a plan may choose from: a menu of offers, one row per GPU type (:func:`menu`, :func:`load_menu`,
:func:`lambda_menu`, :func:`check_menu`).

A menu is a DataFrame with the columns of :data:`MENU_COLUMNS`: ``gpu`` (the canonical name of the GPU spec table,
:mod:`perfkit.data.gpu_specs`), ``price_per_gpu_hour`` (USD per GPU and hour, > 0), ``gpus`` (a tuple of the GPU
counts offered, whole numbers >= 1, sorted, each once) and ``batch_per_gpu`` (the per-GPU batch to plan with, NaN
where the offer does not say). ``attrs["source"]`` says where it came from and ``attrs["assumption"]`` states how
its prices were made ("" when they are the user's own).

Guarantees: every menu these functions return has one row per canonical GPU, every price finite and > 0, every
count a whole number from 1 to :data:`~perfkit.data.external_files.MAX_GPUS`, every batch NaN or a whole number
>= 1. A bad cell is one ``ValueError`` naming the file (or ``menu``), the column and the row; an unknown GPU is
the spec table's error (the column, the row and the closest known names).

>>> offers = lambda_menu()                                                       # doctest: +SKIP
>>> offers.set_index("gpu").loc["H100 80GB SXM5", "gpus"]                        # doctest: +SKIP
(1, 2, 4, 8)
"""
from __future__ import annotations

import csv
import math
import os

import numpy as np

from ..data.external_files import MAX_GPUS

__all__ = ["MENU_COLUMNS", "HOURS_PER_YEAR", "lambda_menu", "load_menu", "check_menu", "menu"]

#: the columns of a menu (``batch_per_gpu`` optional in a file or a frame given)
MENU_COLUMNS = ("gpu", "price_per_gpu_hour", "gpus", "batch_per_gpu")
_REQUIRED = MENU_COLUMNS[:3]
#: hours of 24/7 use in a year (the amortisation of :func:`lambda_menu`)
HOURS_PER_YEAR = 8760
#: the largest per-GPU batch a menu may give (as :data:`perfkit.data.external_files.MAX_BATCH`)
_MAX_BATCH = 10**12


def _blank(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip())


def _where(where: str, col: str, i: int, gpu, line: bool) -> str:
    """``"FILE: column 'gpus', row 3 ('RTX 4090'), line 4"`` (``line`` for a file: its header is line 1)."""
    label = "" if _blank(gpu) else f" ({str(gpu).strip()!r})"
    return f"{where}: column {col!r}, row {i + 1}{label}" + (f", line {i + 2}" if line else "")


def _number(v):
    """A cell as a float (NaN for an empty one), or None when it is no number."""
    if _blank(v):
        return math.nan
    if isinstance(v, (bool, np.bool_)):
        return None
    try:
        return float(str(v).strip()) if isinstance(v, str) else float(v)
    except (TypeError, ValueError):
        return None


def _counts(v) -> tuple | None:
    """A ``gpus`` cell (``"1;2;4"``, a number, or a list of numbers) as sorted distinct whole numbers from 1 to
    MAX_GPUS, or None when it is not one."""
    if isinstance(v, str):
        parts = [p.strip() for p in v.replace(",", ";").split(";")]
    elif isinstance(v, (list, tuple, set, np.ndarray)):
        parts = list(v)
    else:
        parts = [v]
    out = set()
    for p in parts:
        x = _number(p)
        if x is None or not math.isfinite(x) or x != int(x) or not 1 <= x <= MAX_GPUS:
            return None
        out.add(int(x))
    return tuple(sorted(out)) or None


def _prices(frame, where: str, line: bool) -> list:
    out = []
    for i, (v, gpu) in enumerate(zip(frame["price_per_gpu_hour"], frame["gpu"])):
        x = _number(v)
        if x is None or not math.isfinite(x) or x <= 0:
            what = "empty" if x is not None and math.isnan(x) else f"got {v!r}"
            raise ValueError(f"{_where(where, 'price_per_gpu_hour', i, gpu, line)}: expected a price in USD per "
                             f"GPU and hour > 0, {what}")
        out.append(x)
    return out


def _offered(frame, where: str, line: bool) -> list:
    out = []
    for i, (v, gpu) in enumerate(zip(frame["gpus"], frame["gpu"])):
        counts = None if not isinstance(v, (list, tuple, set, np.ndarray)) and _blank(v) else _counts(v)
        if counts is None:
            raise ValueError(f"{_where(where, 'gpus', i, gpu, line)}: expected the GPU counts offered, whole numbers "
                             f"from 1 to {MAX_GPUS:,} separated by ';' (e.g. 1;2;4;8), got {v!r}")
        out.append(counts)
    return out


def _batches(frame, where: str, line: bool) -> list:
    if "batch_per_gpu" not in frame.columns:
        return [math.nan] * len(frame)
    out = []
    for i, (v, gpu) in enumerate(zip(frame["batch_per_gpu"], frame["gpu"])):
        x = _number(v)
        if x is None or (not math.isnan(x) and (x != int(x) or not 1 <= x <= _MAX_BATCH)):
            raise ValueError(f"{_where(where, 'batch_per_gpu', i, gpu, line)}: expected a per-GPU batch, a whole "
                             f"number >= 1 (or an empty cell: the planner's default), got {v!r}")
        out.append(x)
    return out


def _canonical(frame, where: str, specs, line: bool) -> list:
    from ..data.gpu_specs import canonical_gpus

    for i, v in enumerate(frame["gpu"]):
        if _blank(v) or not isinstance(v, str):
            raise ValueError(f"{_where(where, 'gpu', i, None, line)}: expected a GPU name of the spec table, got "
                             f"{'an empty cell' if _blank(v) else repr(v)}")
    try:
        names = list(canonical_gpus(list(frame["gpu"]), "gpu", specs))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    first = {}
    for i, name in enumerate(names):
        if name in first:
            raise ValueError(f"{_where(where, 'gpu', i, frame['gpu'].iloc[i], line)}: {name} is also offered in row "
                             f"{first[name] + 1}; give each GPU type one row (its counts in 'gpus')")
        first[name] = i
    return names


def check_menu(frame, where: str = "menu", specs=None, line: bool = False):
    """``frame`` (the columns of :data:`MENU_COLUMNS`, ``batch_per_gpu`` optional) as a checked menu.

    ``where`` opens every error (a file's path, or ``menu``); ``line`` adds the file line of a row; ``specs`` is
    the GPU spec table to canonicalise the names with (default the shipped one). Raises ``ValueError`` for a
    missing or unknown column, no row, an unknown GPU, a GPU on two rows, a price that is not > 0, counts that are
    not whole numbers >= 1, a batch that is not a whole number >= 1.
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{where}: expected a table (DataFrame) of offers, got {type(frame).__name__}")
    missing = [c for c in _REQUIRED if c not in frame.columns]
    extra = [str(c) for c in frame.columns if c not in MENU_COLUMNS]
    if missing or extra:
        what = f"no column {missing[0]!r}" if missing else f"unknown column {extra[0]!r}"
        raise ValueError(f"{where}: {what}; a menu has the columns {', '.join(_REQUIRED)} and optionally "
                         "batch_per_gpu")
    if not len(frame):
        raise ValueError(f"{where}: no offers (the menu has no rows)")
    frame = frame.reset_index(drop=True)
    out = pd.DataFrame({"gpu": _canonical(frame, where, specs, line),
                        "price_per_gpu_hour": _prices(frame, where, line),
                        "gpus": _offered(frame, where, line),
                        "batch_per_gpu": _batches(frame, where, line)})
    out["gpu"] = out["gpu"].astype(object)
    out.attrs.update(source=str(frame.attrs.get("source", where)), assumption=str(frame.attrs.get("assumption", "")))
    return out


def load_menu(path, specs=None):
    """The menu in the CSV ``path``: columns ``gpu,price_per_gpu_hour,gpus[,batch_per_gpu]``, ``gpus`` like
    ``1;2;4;8``. Every bad cell is one ``ValueError`` naming the file, the column and the row (and its line)."""
    import pandas as pd

    from .._io import check_input_file, path_argument

    p = check_input_file(path_argument(path, "menu", "the path of a CSV menu"), "menu CSV")
    try:
        with open(p, newline="", encoding="utf-8-sig") as fh:
            header = [h.strip() for h in next(csv.reader(fh), [])]
        frame = pd.read_csv(p, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (pd.errors.EmptyDataError, StopIteration):
        raise ValueError(f"menu CSV {str(p)!r} is empty") from None
    except (pd.errors.ParserError, csv.Error, ValueError) as exc:  # UnicodeDecodeError
        raise ValueError(f"menu CSV {str(p)!r}: not a readable CSV ({str(exc).strip().splitlines()[0]})") from None
    twice = [h for i, h in enumerate(header) if h in header[:i]]
    if twice:
        raise ValueError(f"menu CSV {str(p)!r}: column {twice[0]!r} appears twice in the header; rename one of them")
    frame.columns = header
    frame.attrs["source"] = str(p)
    return check_menu(frame, str(p), specs, line=True)


def lambda_menu(amortize_years: float = 3.0, specs=None):
    """Lambda's GPU servers as a menu: per canonical GPU, the GPU counts Lambda's benchmark configurations have,
    and the median of their ``price_per_gpu`` (a configuration's purchase price in USD over its GPUs) amortised
    over ``amortize_years`` years of 24/7 use: price / (years × 8760 h).

    That amortisation is an assumption, not a rental price: power, cooling, hosting and idle time are not counted
    and no resale value is subtracted. ``attrs["assumption"]`` states it in words (a plan's summary prints it).
    """
    import pandas as pd

    from ..data.gpu_specs import canonical_gpus
    from ..data.lambda_labs import load_lambda

    years = amortize_years
    if isinstance(years, (bool, np.bool_)) or not isinstance(years, (int, float, np.number)) \
            or not math.isfinite(years) or years <= 0:
        raise ValueError(f"amortize_years: expected a number of years > 0, got {years!r}")

    rows = load_lambda(screen=False)
    rows = rows.assign(canonical=canonical_gpus(rows["gpu"].tolist(), "gpu", specs))
    configs = rows.drop_duplicates("config")
    offers = []
    for gpu, group in configs.groupby("canonical", sort=True):
        offers.append({"gpu": gpu, "price_per_gpu_hour": float(np.median(group["price_per_gpu"])) / (
            float(years) * HOURS_PER_YEAR), "gpus": tuple(sorted({int(n) for n in group["n_gpus"]}))})
    frame = pd.DataFrame(offers)
    frame.attrs.update(source="lambda", assumption=(
        f"prices: Lambda's purchase price per GPU (a server's price over its GPUs, median over Lambda's servers "
        f"with that GPU) amortised over {float(years):g} years of 24/7 use (price / ({float(years):g} × "
        f"{HOURS_PER_YEAR} h)); power, hosting and idle time not counted"))
    return check_menu(frame, "lambda menu", specs)


def menu(source="lambda", specs=None, amortize_years: float = 3.0):
    """A checked menu from ``source``: ``"lambda"`` (:func:`lambda_menu` with ``amortize_years``), the path of a
    CSV (:func:`load_menu`), or a DataFrame of offers (:func:`check_menu`)."""
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        return check_menu(source, "menu", specs)
    if isinstance(source, str) and source.strip().lower() == "lambda":
        return lambda_menu(amortize_years, specs)
    if isinstance(source, (str, os.PathLike)):
        return load_menu(source, specs)
    raise ValueError(f"menu: expected 'lambda', the path of a CSV menu or a DataFrame of offers, got "
                     f"{type(source).__name__}")
