"""Chapter 5's parameters (the notebook's ``parameters`` cell), their rules and the check of its files."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ...schema import resolve
from .. import ch4
from ..ch4 import FIT_CHECKS, check_steps_file
from ..result import ParameterError, ParamsBase, existing_file, make_params, number_at_least, show_path

__all__ = ["Params", "check_params", "VOLUME_COLUMNS"]

#: columns of the volume study that section 4 needs besides the target (:func:`perfkit.model.analytic.scaling.volume_exponents`)
VOLUME_COLUMNS = ("workers", "batch_size", "num_filters", "volume")


@dataclass(frozen=True)
class Params(ParamsBase):
    """Parameters of Chapter 5 (the notebook's ``parameters`` cell); :data:`Params.CHECKS` are their rules."""

    quick: bool = False  # small budgets for tests: fewer seeds and DE generations
    dataset: str = "data/measured/pytorch-cpu/ch5_resattnet3d.csv"  # perfkit collect ch5 output
    target: str = "epoch_time"  # column to model: epoch_time (431 scans) or step_time
    n_fit: int = 900  # rows to fit on (the thesis: 900)
    n_test: int = 600  # rows held out (the thesis: 600)
    split_seed: int = 0  # seed of the random fit/held-out split
    seeds: int = 10  # DE seeds (Table 5.2 reports mean and std over 10)
    lam: float = 0.001  # L2 λ of the Table 5.2 fit
    engine: str = "varpro"  # fitting engine: varpro (fast, default) or thesis
    n_jobs: int = -1  # parallel fits (joblib; -1: every core; every fit is seeded, so the results do not change)
    volume_study: str = "data/measured/pytorch-cpu/ch5_volume_scaling.csv"  # perfkit collect ch5vol output; "" skips §4
    ch4_dataset: str = "data/measured/pytorch-cpu/ch4_lenet5.csv"  # Chapter 4 data to compare errors with; "" skips
    progress: bool = True  # progress bars for the fits
    figures_dir: str = ""  # folder for figures and tables (ChapterResult.save); "" means figures/
    cache: bool = True  # read the results cache when parameters, data and code are unchanged (False: recompute)

    #: the rule of each parameter (``quick``, ``progress`` and ``cache`` need only be bools)
    CHECKS = {
        **FIT_CHECKS,
        "dataset": existing_file("a `perfkit collect ch5` output"),
        "lam": number_at_least(0),
        "volume_study": existing_file("a `perfkit collect ch5vol` output", empty='"" to skip section 4'),
        "ch4_dataset": existing_file("a `perfkit collect ch4` output", empty='"" to skip the comparison'),
    }


def check_params(**params) -> Params:
    """The checked :class:`Params` of Chapter 5, or one :class:`~perfkit.chapters.result.ParameterError`.

    Applies :data:`Params.CHECKS` (names, types, values; :func:`~perfkit.chapters.result.make_params`),
    then reads the files: ``dataset`` must have ``target`` and at least ``n_fit + n_test`` usable rows
    (quick mode scales the split down instead), ``ch4_dataset`` enough rows for Chapter 4's default
    split, and ``volume_study`` the columns section 4 needs. Nothing is fitted.
    """

    p = make_params(Params, params)
    check_steps_file("dataset", p.dataset, p.target, "ch5", p.n_fit, p.n_test, p.quick)
    if p.ch4_dataset:
        split = ch4.Params()
        hint = 'Chapter 4 splits it as its notebook does; give ch4_dataset="" to skip the comparison'
        check_steps_file("ch4_dataset", p.ch4_dataset, p.target, "ch4", split.n_fit, split.n_test, p.quick,
                         rows_hint=hint)
    if p.volume_study:
        path = resolve(p.volume_study)
        try:
            columns = pd.read_csv(path, nrows=0).columns
        except ValueError as exc:  # not CSV, empty, undecodable
            raise ParameterError(f"volume_study: {show_path(path)} cannot be read as CSV ({exc}); expected a "
                                 '`perfkit collect ch5vol` output or "" to skip section 4') from None
        missing = [c for c in (p.target, *VOLUME_COLUMNS) if c not in columns]
        if missing:
            raise ParameterError(f"volume_study: {show_path(path)} has no column {missing[0]!r} (target "
                                 f"{p.target!r}); expected a `perfkit collect ch5vol` output or \"\" to skip section 4")
    return p
