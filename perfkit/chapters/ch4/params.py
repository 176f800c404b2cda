"""Chapter 4's parameters (the notebook's ``parameters`` cell), their rules, and the check of a measured file."""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ...model.forms.generic import ENGINE_METHODS, GenericPerformanceModel
from ...schema import ROLES, resolve
from ..result import (Check, ParameterError, ParamsBase, at_least, existing_file, existing_files, grid, make_params,
                      number_at_least, one_of, output_folder, seed, show_path)

__all__ = ["Params", "check_params", "check_steps_file", "make_model", "TARGETS", "TARGET", "ENGINES", "FIT_CHECKS",
           "FRAMEWORK_DATASETS", "MACHINE_DATASETS", "SWEEP_COEFFICIENT_KINDS", "MIN_FRAMEWORK_ROWS"]

#: columns a chapter 4/5 model may take as its target (what ``perfkit collect`` times)
TARGETS = ("epoch_time", "step_time")
#: the static rule of ``target``; :func:`check_steps_file` checks it is a time column of the file
TARGET = Check("a column of the file holding a time, such as 'epoch_time' or 'step_time'",
               lambda v: isinstance(v, str) and bool(v.strip()))
#: fitting engines (the registry :data:`perfkit.model.forms.generic.ENGINE_METHODS`)
ENGINES = ENGINE_METHODS
#: the rules shared by every chapter that fits the generic model on a measured split (Chapters 4 and 5)
FIT_CHECKS = {
    "target": TARGET,
    "n_fit": at_least(2),
    "n_test": at_least(2, why="R² of the held-out rows needs two"),
    "split_seed": seed(),
    "seeds": at_least(1),
    "engine": one_of(*ENGINES),
    "n_jobs": at_least(1, also=(-1,), why="-1: every core"),
    "figures_dir": output_folder("figures/"),
}


#: the other frameworks' Chapter 4 files measured here, fitted beside ``dataset`` (same sampler and seed)
FRAMEWORK_DATASETS = tuple(f"data/measured/{fw}-cpu/ch4_lenet5.csv" for fw in ("tensorflow", "mxnet", "chainer", "jax"))
#: the main dataset's framework measured by the same harness and sampler on other machines (here 16 cores), fitted
#: beside ``dataset`` on the rows both measured (:mod:`.machines`)
MACHINE_DATASETS = ("data/measured/pytorch-cpu16/ch4_lenet5.csv",)
#: kinds of parameter of the λ sweep left out of the saved ``lambda_sweep.csv`` (§7):
#: the coefficients a, the categorical constants κ (``k``) and C
SWEEP_COEFFICIENT_KINDS = ("a", "k", "C")

#: fewest usable rows of a framework's file (its split is scaled down in proportion below n_fit + n_test)
MIN_FRAMEWORK_ROWS = 60


@dataclass(frozen=True)
class Params(ParamsBase):
    """Parameters of Chapter 4 (the notebook's ``parameters`` cell); :data:`Params.CHECKS` are their rules."""

    quick: bool = False  # small budgets for tests: fewer seeds, a short λ grid, few DE generations
    dataset: str = "data/measured/pytorch-cpu/ch4_lenet5.csv"  # perfkit collect ch4 output
    framework_datasets: tuple = FRAMEWORK_DATASETS  # other frameworks' ch4 files (same sampler and seed); () for one
    machine_datasets: tuple = MACHINE_DATASETS  # the same framework's ch4 files from other machines; () for none
    target: str = "epoch_time"  # column to model: epoch_time (the thesis reading) or step_time
    n_fit: int = 1000  # rows to fit on (the thesis: 1000; its journal paper: 900)
    n_test: int = 500  # rows held out (the thesis: 500; its journal paper: 600)
    split_seed: int = 0  # seed of the random fit/held-out split
    seeds: int = 10  # DE seeds per fit (Tables 4.2 and 4.3 report mean and std over 10)
    lam_l2: float = 0.001  # λ of the L2 fit of Table 4.3 (the thesis chose 1e-3)
    lam_l1: float = 0.001  # λ of the L1 fit compared in Table 4.4
    lams: tuple = (1e-6, 1e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 1.0)  # λ grid of Figs. 4.15-4.17
    sweep_seeds: int = 3  # DE seeds per λ in the sweep
    engine: str = "varpro"  # fitting engine: varpro (fast, default) or thesis (scipy DE over every parameter)
    n_jobs: int = -1  # parallel fits (joblib; -1: every core; every fit is seeded, so the results do not change)
    progress: bool = True  # progress bars for the fits and the sweep
    figures_dir: str = ""  # folder for figures and tables (ChapterResult.save); "" means figures/
    cache: bool = True  # read the results cache when parameters, data and code are unchanged (False: recompute)

    #: the rule of each parameter (``quick``, ``progress`` and ``cache`` need only be bools)
    CHECKS = {
        **FIT_CHECKS,
        "dataset": existing_file("a `perfkit collect ch4` output"),
        "framework_datasets": existing_files("`perfkit collect ch4`"),
        "machine_datasets": existing_files("`perfkit collect ch4`"),
        "lam_l2": number_at_least(0),
        "lam_l1": number_at_least(0),
        "lams": grid(number_at_least(0, strict=True), "finite numbers > 0 (a log axis)"),
        "sweep_seeds": at_least(1),
    }

    @property
    def n_seeds(self) -> int:
        return 2 if self.quick else self.seeds

    @property
    def de_kw(self) -> dict:
        """Engine settings: the engine's defaults at full budget, 60 generations in quick mode."""
        return dict(method=self.engine, maxiter=60) if self.quick else dict(method=self.engine)


def check_steps_file(name: str, path: str, target: str, roles: str, n_fit: int, n_test: int, quick: bool,
                     rows_hint: str = "lower n_fit/n_test") -> int:
    """Check a ``perfkit collect ch4``/``ch5`` file against the parameters; returns its usable rows (status ok).

    ``name`` is the parameter that names the file. The file must be a CSV with the
    columns of ``roles`` (:data:`perfkit.schema.ROLES`), ``status`` and ``target``, whose
    target is a positive number in every usable row, and (except in quick mode, where
    the split is scaled down) at least ``n_fit + n_test`` usable rows.
    """

    full = resolve(path)
    shown = show_path(full)
    try:
        df = pd.read_csv(full)
    except ValueError as exc:  # not CSV, empty, undecodable
        raise ParameterError(f"{name}: {shown} cannot be read as CSV ({exc}); expected a `perfkit collect "
                             f"{roles}` output") from None
    need = [c for role in ROLES[roles].values() for c in role] + ["status"] + (["volume"] if roles == "ch5" else [])
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ParameterError(f"{name}: {shown} has no column {missing[0]!r}; expected a `perfkit collect {roles}` "
                             f"output (columns {', '.join(need)}, and the target)")
    if target not in df.columns:
        raise ParameterError(f"target: {target!r} is not a column of {shown}; expected one of its time columns "
                             f"({', '.join(c for c in TARGETS if c in df.columns) or 'none found'})")
    if target in need:
        raise ParameterError(f"target: {target!r} is an input of the model (a configuration column of {shown}); "
                             f"expected one of its time columns ({', '.join(c for c in TARGETS if c in df.columns)})")
    ok = df[df["status"] == "ok"]
    if ok.empty:
        raise ParameterError(f"{name}: {shown} has no usable rows (status ok); expected a file with finished samples")
    y = pd.to_numeric(ok[target], errors="coerce")
    bad = ~(y > 0) | ~y.map(math.isfinite)
    if bad.any():
        row, value = ok.index[bad.to_numpy()][0], ok[target][bad].iloc[0]
        raise ParameterError(f"target: column {target!r} of {shown} is not a positive number in every usable row "
                             f"(row {row}: {value!r}); expected a time column")
    if n_fit + n_test > len(ok) and not quick:
        raise ParameterError(f"n_fit: {n_fit} + n_test {n_test} = {n_fit + n_test} rows asked for, but {shown} has "
                             f"{len(ok)} usable rows (status ok); {rows_hint}")
    return len(ok)


def check_params(**params) -> Params:
    """The checked :class:`Params` of Chapter 4, or one :class:`~perfkit.chapters.result.ParameterError`.

    Applies :data:`Params.CHECKS` (names, types, values; :func:`~perfkit.chapters.result.make_params`),
    then reads ``dataset``: ``target`` must be one of its columns and ``n_fit + n_test`` must not
    exceed its usable rows (quick mode scales the split down instead). Every file of
    ``framework_datasets`` and of ``machine_datasets`` must be a ch4 file with the target and at least
    :data:`MIN_FRAMEWORK_ROWS` usable rows (a partial collection is split in the proportion n_fit :
    n_test); neither list may name a file twice or the dataset itself, and a machine's file must hold
    the dataset's framework. Nothing is fitted.
    """
    p = make_params(Params, params)
    check_steps_file("dataset", p.dataset, p.target, "ch4", p.n_fit, p.n_test, p.quick)
    for name in ("framework_datasets", "machine_datasets"):
        _check_others(p, name)
    return p


def _check_others(p: Params, name: str) -> None:
    """The files of ``framework_datasets`` or ``machine_datasets`` (``name``): each once, not the dataset, each a
    ch4 file with enough usable rows; a machine's file of the dataset's framework."""
    items = getattr(p, name)
    files = [resolve(v) for v in (p.dataset, *items)]
    if len({f.resolve() for f in files}) < len(files):
        what = {"framework_datasets": "other frameworks' files",
                "machine_datasets": "the dataset's framework measured on other machines"}[name]
        raise ParameterError(f"{name}: {list(items)} names a file twice or the dataset itself; expected {what}, "
                             "each once")
    for item in items:
        n = check_steps_file(name, item, p.target, "ch4", p.n_fit, p.n_test, quick=True)
        if n < MIN_FRAMEWORK_ROWS and not p.quick:
            raise ParameterError(f"{name}: {item} has {n} usable rows (status ok); a "
                                 f"{'framework' if name == 'framework_datasets' else 'machine'}'s file needs at "
                                 f"least {MIN_FRAMEWORK_ROWS} (its split is scaled down in proportion)")
        if name == "machine_datasets" and _framework(item) != _framework(p.dataset):
            raise ParameterError(f"machine_datasets: {item} holds framework {_framework(item)!r}, the dataset "
                                 f"{_framework(p.dataset)!r}; expected the dataset's framework measured on another "
                                 "machine")


def _framework(path: str):
    """The ``framework`` of a ch4 file's first usable row (None without the column)."""
    df = pd.read_csv(resolve(path), usecols=lambda c: c in ("framework", "status"))
    ok = df[df["status"] == "ok"]
    return str(ok["framework"].iloc[0]) if "framework" in ok.columns and len(ok) else None


def make_model(roles="ch4", **kwargs):
    """A :class:`~perfkit.model.GenericPerformanceModel` with the column roles of a file kind (:data:`perfkit.schema.ROLES`).

    It fits in the data's units (``scale=None`` unless ``kwargs`` say otherwise): the thesis states its bounds
    [0, 1000] and its λ for times in seconds, and the chapters reproduce that fit.
    """
    kwargs.setdefault("scale", None)
    return GenericPerformanceModel(**(ROLES[roles] if isinstance(roles, str) else roles), **kwargs)
