"""Chapter 7's parameters (the notebook's ``parameters`` cell) and their rules."""
from __future__ import annotations

from dataclasses import dataclass

from ..ch4 import FIT_CHECKS
from ..result import ParamsBase, at_least, existing_file, make_params, number_at_least, optional_file

__all__ = ["Params", "check_params", "inner_gpu_splits"]



@dataclass(frozen=True)
class Params(ParamsBase):
    """Parameters of Chapter 7 (the notebook's ``parameters`` cell); :data:`Params.CHECKS` are their rules."""

    quick: bool = False  # small budgets for tests: fewer candidates, one inner split, smaller tree grids
    fit_max_gpus: int = 16  # Pollux traces: fit on the rows with at most this many GPUs
    test_min_gpus: int = 32  # ... and predict the rows with at least this many (up to test_max_gpus)
    test_max_gpus: int = 64
    coverage: float = 0.9  # level of the prediction intervals that widen with the extrapolation distance
    ch4_dataset: str = "data/measured/pytorch-cpu/ch4_lenet5.csv"  # our Chapter 4 file; "" skips its study
    ch4_fit_max_batch: int = 32  # ... fit on batches up to this, predict the larger ones
    ch3_dataset: str = "data/measured/pytorch-cpu/ch3_phases.csv"  # our Chapter 3 file; "" skips its study
    ch3_fit_max_workers: int = 2  # ... fit on worker counts up to this, predict the larger ones
    extrap_results: str = "benchmarks/results/scale.json"  # Extra-P on the same split (bench_scale.py); missing or "": not run
    clusters_results: str = "benchmarks/results/scale_clusters.json"  # the protocol on other clusters (bench_scale_clusters.py); missing or "": not shown
    small_runs_results: str = "benchmarks/results/small_runs_summary.json"  # the CLI from small runs (bench_small_runs.py --summary); missing or "": not shown
    n_jobs: int = -1  # kept for the common interface (every fit here is single-threaded and seeded)
    progress: bool = True  # progress lines for the long parts
    figures_dir: str = ""  # folder for figures and tables (ChapterResult.save); "" means figures/
    cache: bool = True  # read the results cache when parameters, data and code are unchanged (False: recompute)

    CHECKS = {
        "fit_max_gpus": at_least(2),
        "test_min_gpus": at_least(2),
        "test_max_gpus": at_least(2),
        "coverage": number_at_least(0, strict=True),
        "ch4_dataset": existing_file("a `perfkit collect ch4` output", empty='"" to skip the batch-size study'),
        "ch4_fit_max_batch": at_least(1),
        "ch3_dataset": existing_file("a `perfkit collect ch3` output", empty='"" to skip the workers study'),
        "ch3_fit_max_workers": at_least(1),
        "extrap_results": optional_file('a path to a JSON file (read when it exists) or "" to leave Extra-P out'),
        "clusters_results": optional_file('a path to a JSON file (read when it exists) or "" to leave the other '
                                          'clusters out'),
        "small_runs_results": optional_file('a path to a JSON file (read when it exists) or "" to leave the '
                                            'small-runs study out'),
        "n_jobs": FIT_CHECKS["n_jobs"],
        "figures_dir": FIT_CHECKS["figures_dir"],
    }


def check_params(**params) -> Params:
    """The checked :class:`Params` of Chapter 7, or one :class:`~perfkit.chapters.result.ParameterError`.

    Besides :data:`Params.CHECKS`: ``coverage`` below 1, and fit_max_gpus < test_min_gpus <= test_max_gpus (the
    predicted rows lie beyond the fitted ones).
    """
    from ..result import ParameterError

    p = make_params(Params, params)
    if not p.coverage < 1:
        raise ParameterError(f"coverage: got {p.coverage!r}; expected a number in (0, 1)")
    if not p.fit_max_gpus < p.test_min_gpus <= p.test_max_gpus:
        raise ParameterError(f"test_min_gpus: got {p.test_min_gpus} (fit_max_gpus {p.fit_max_gpus}, test_max_gpus "
                             f"{p.test_max_gpus}); expected fit_max_gpus < test_min_gpus <= test_max_gpus")
    _check_against_traces(p)
    return p


def _check_against_traces(p: Params) -> None:
    """The GPU counts against Pollux's traces, before any work: some rows at or above ``test_min_gpus`` to
    predict, and fit rows up to ``fit_max_gpus`` that leave an inner split (skipped without the traces)."""
    from ...data.external import EXTERNAL_DATASETS
    from ..result import ParameterError

    if "pollux" not in EXTERNAL_DATASETS:
        return
    gpus = EXTERNAL_DATASETS["pollux"].load()["n_gpus"].astype(float)
    if not (gpus >= p.test_min_gpus).any():
        raise ParameterError(f"test_min_gpus: got {p.test_min_gpus}; Pollux's traces reach {gpus.max():g} GPUs, so "
                             f"no row would be predicted; expected at most {gpus.max():g}")
    if not inner_gpu_splits(gpus[gpus <= p.fit_max_gpus], p):
        raise ParameterError(f"fit_max_gpus: got {p.fit_max_gpus}; the traces' rows up to it leave no inner split "
                             "(fit on at least two GPU counts, score one above them); expected a larger fit_max_gpus")


def inner_gpu_splits(gpus, p: Params) -> list:
    """The inner extrapolation splits of the fit rows (fit on <= a GPUs, score b..c) that select the phase-aware
    form and calibrate its intervals: the factor rule of
    :func:`~perfkit.model.uncertainty.extrapolation.factor_inner_splits` on the measured GPU counts up to
    ``fit_max_gpus`` (on Pollux's counts and 16: (4, 8, 16), (6, 10, 16), (8, 12, 16); the first has the outer
    protocol's 2-4x factors); quick mode keeps the first. Empty when none is (:func:`check_params` refuses that)."""
    from ...model.uncertainty.extrapolation import factor_inner_splits

    splits = [tuple(int(x) if float(x).is_integer() else float(x) for x in s)
              for s in factor_inner_splits(gpus, p.fit_max_gpus)]
    return splits[:1] if p.quick else splits
