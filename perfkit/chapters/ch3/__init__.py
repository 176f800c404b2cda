"""Chapter 3: the S-SGD phase model on the published tables and on our measurements.

:func:`analyse` computes every table, figure and claim of the chapter from the
thesis's Tables 3.2-3.5 (``data/thesis/``) and a ``perfkit collect ch3`` file:

1. Table 3.2 and Figs. 3.2-3.4: phase times on one worker;
2. Table 3.3: gradient aggregation time on 2 and 3 workers;
3. Table 3.4: the load imbalance factor (eq. 3.8);
4. speedup: eq. 3.7 on the published tables, and Figs. 3.5-3.7 measured;
5. Figs. 3.8-3.13: the iteration on 2 and 3 workers, and what overlap buys;
6. Table 3.5: the regression of epoch time on workers and LIF (eq. 3.9);
7. do the published numbers add up;
8. the claims ledger (:data:`CLAIMS`).

It runs in three stages: :func:`compute` (:mod:`.compute`) gives the typed :class:`Ch3Results`
(:mod:`.results`), kept in the results cache (:mod:`perfkit.chapters.cache`); :func:`present`
(:mod:`.present`) draws the tables (:mod:`.tables`), figures (:mod:`.figures`), claims ledger
(:mod:`.claims`) and readings (:mod:`.readings`) from them. The parameters and their defaults are
:class:`Params` (:mod:`.params`).

The notebook ``notebooks/ch3_sgd_phase_model.ipynb`` calls :func:`analyse`,
shows its tables and figures and explains them.
"""
from __future__ import annotations

from ..common import run_chapter
from ..result import ChapterResult, checked_params
from .claims import CLAIMS, framework_ranking
from .compute import compute, framework_setup, inputs
from .figures import BREAKDOWN_FIGURES, FIGURE_NUMBERS
from .params import FRAMEWORK_CSVS, MODES, VARIANTS, Params, check_params
from .present import present
from .published import published_consistency, published_quantities, sum_check_3_2
from .quantities import (BETTER_THAN_TF, SOURCES, framework_quantities, framework_speedups, measured_quantities,
                         regression_quantities)
from .readings import ch3_readings
from .results import Ch3Quantities, Ch3Results, Measured, Published
from .tables import table3_2_display

__all__ = ["Params", "check_params", "analyse", "compute", "inputs", "present", "Ch3Results", "Ch3Quantities",
           "Published", "Measured", "CLAIMS", "FIGURE_NUMBERS", "BREAKDOWN_FIGURES", "table3_2_display",
           "sum_check_3_2", "published_consistency", "published_quantities", "measured_quantities",
           "regression_quantities", "framework_ranking", "framework_quantities", "framework_speedups",
           "framework_setup", "ch3_readings", "FRAMEWORK_CSVS", "VARIANTS", "MODES", "SOURCES", "BETTER_THAN_TF"]


def analyse(params: Params | None = None, /, **kwargs) -> ChapterResult:
    """Chapter 3 on the published tables and (unless ``measured_csv=""``) a measured file.

    ``analyse(n_train=50000, ...)`` or ``analyse(check_params(...))``; the parameters (:class:`Params`)
    are checked first (:func:`check_params`): a value that is not allowed raises one
    :class:`~perfkit.chapters.result.ParameterError` before anything is computed. The computed results
    come from the results cache when the parameters, input files and code are unchanged
    (``cache=False`` recomputes them).
    """
    p = checked_params(params, kwargs, Params, check_params)
    return run_chapter("ch3", p, inputs(p), compute, Ch3Results, present)
