"""Chapter 3's parameters: :class:`Params` (the defaults, in one place), their rules and :func:`check_params`."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ...schema import CH3_COLUMNS, resolve
from ..result import (Check, ParameterError, ParamsBase, at_least, existing_file, existing_files, grid, make_params, one_of,
                      output_folder, show_path)

__all__ = ["Params", "check_params", "VARIANTS", "MODES", "FRAMEWORK_CSVS", "MACHINES", "MACHINE_SOURCE_NAMES"]

#: forms of eq. 3.7 (:data:`perfkit.model.analytic.equations.VARIANTS`)
VARIANTS = ("thesis", "paper")
#: modes of a ``perfkit collect ch3`` file
MODES = ("phased", "overlapped")
#: the named machine datasets (:data:`perfkit.chapters.ch3.machines.MACHINE_SOURCES`): GPU-cluster traces and
#: multi-GPU throughput tables shipped under ``data/external/``
MACHINE_SOURCE_NAMES = ("pollux", "lambda", "nvidia_dle")
#: the machine datasets judged beside the main file by default: 16-core CPU, one GPU, a GPU cluster, GPU servers
MACHINES = ("data/measured/pytorch-cpu16/ch3_phases.csv", "data/measured/pytorch-cuda/ch3_phases.csv", "pollux",
            "lambda", "nvidia_dle")
#: the other frameworks' measured files shown beside PyTorch's (``perfkit collect ch3 --framework ...``)
FRAMEWORK_CSVS = tuple(f"data/measured/{fw}-cpu/ch3_phases.csv" for fw in ("tensorflow", "mxnet", "chainer", "jax"))


@dataclass(frozen=True)
class Params(ParamsBase):
    """Parameters of Chapter 3 (the notebook's ``parameters`` cell); :data:`Params.CHECKS` are their rules."""

    quick: bool = False  # accepted for symmetry with the other chapters: every section is fast
    speedup_variants: tuple = ("thesis", "paper")  # forms of eq. 3.7 to evaluate
    measured_csv: str = "data/measured/pytorch-cpu/ch3_phases.csv"  # perfkit collect ch3 output; "" = published only
    measured_mode: str = "phased"  # phased (explicit all-reduce, separates t_c) or overlapped (DDP)
    framework_csvs: tuple = FRAMEWORK_CSVS  # more frameworks' ch3 files, shown beside measured_csv; () for one
    machines: tuple = MACHINES  # other machines' datasets, each judged on its own: ch3 files or "pollux", "lambda",
    # "nvidia_dle"; () for none
    n_train: int = 60000  # training images per epoch (MNIST) for epoch times and speedup
    figures_dir: str = ""  # folder for figures and tables (ChapterResult.save); "" means figures/
    cache: bool = True  # read the results cache (False: recompute)

    QUICK_CHANGES_RESULTS = False  # quick mode computes exactly the full run: no quick mark on its figures
    #: the rule of each parameter (``quick`` and ``cache`` need only be bools)
    CHECKS = {
        "speedup_variants": grid(one_of(*VARIANTS), f"forms of eq. 3.7 from {', '.join(map(repr, VARIANTS))}",
                                 distinct=True),
        "measured_csv": existing_file("a `perfkit collect ch3` output", empty='"" for the published tables only'),
        "measured_mode": one_of(*MODES),
        "framework_csvs": existing_files("`perfkit collect ch3`"),
        "machines": grid(Check("a `perfkit collect ch3` output or one of " + ", ".join(map(repr, MACHINE_SOURCE_NAMES)),
                               lambda v: isinstance(v, str) and bool(v.strip())),
                         "machine datasets: `perfkit collect ch3` files or " + ", ".join(map(repr, MACHINE_SOURCE_NAMES)),
                         distinct=True, empty=True),
        "n_train": at_least(1),
        "figures_dir": output_folder("figures/"),
    }


def check_params(**params) -> Params:
    """The checked :class:`Params` of Chapter 3, or one :class:`~perfkit.chapters.result.ParameterError`.

    Applies :data:`Params.CHECKS` (names, types, values; :func:`~perfkit.chapters.result.make_params`),
    then reads ``measured_csv`` (unless ``""``): it must have the Chapter 3 columns and rows of
    ``measured_mode``; so must every file of ``framework_csvs``. Nothing is computed.
    """
    p = make_params(Params, params)
    if p.measured_csv:
        _check_ch3_file("measured_csv", p.measured_csv, p.measured_mode)
    for item in p.framework_csvs:
        _check_ch3_file("framework_csvs", item, p.measured_mode)
    main = resolve(p.measured_csv).resolve() if p.measured_csv else None
    for item in p.machines:
        if item in MACHINE_SOURCE_NAMES:
            continue
        if not resolve(item).is_file():
            raise ParameterError(f"machines: {item!r} is neither a file nor one of "
                                 f"{', '.join(map(repr, MACHINE_SOURCE_NAMES))}; expected `perfkit collect ch3` "
                                 "outputs or those names")
        if main is not None and resolve(item).resolve() == main:
            raise ParameterError(f"machines: {item!r} is measured_csv itself; expected other machines' files")
        _check_ch3_file("machines", item, p.measured_mode)
    return p


def _check_ch3_file(name: str, value: str, mode: str) -> None:
    """One :class:`ParameterError` naming ``name`` unless ``value`` is a readable ch3 file with ``mode`` rows."""

    path = resolve(value)
    try:
        df = pd.read_csv(path)
    except ValueError as exc:  # not CSV, empty, undecodable
        raise ParameterError(f"{name}: {show_path(path)} cannot be read as CSV ({exc}); expected a "
                             "`perfkit collect ch3` output") from None
    missing = [c for c in CH3_COLUMNS if c not in df.columns]
    if missing:
        raise ParameterError(f"{name}: {show_path(path)} has no column {missing[0]!r}; expected a "
                             f"`perfkit collect ch3` output (columns {', '.join(CH3_COLUMNS)})")
    from ...data.measured import phase_rows

    try:  # the cells of its successful rows: phase times, worker counts, names (each error names file and line)
        ok = phase_rows(path)
    except ValueError as exc:
        raise ParameterError(f"{name}: {str(exc).splitlines()[0]}; expected a `perfkit collect ch3` output") from None
    modes = sorted(set(ok["mode"]))
    if mode not in modes:
        raise ParameterError(f"measured_mode: {show_path(path)} has no usable {mode!r} rows "
                             f"(status ok); expected one of its modes {modes}")
