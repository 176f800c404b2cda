"""Chapter 6, beyond the thesis: other model forms, prediction intervals, other people's data, what-if curves.

The thesis ends (§6.1) with future work: refine the generic expression so that its terms can
interact, treat powers and coefficients differently, try the model on other frameworks and
applications, put it to use in practical systems, and look for better expressions automatically.
:func:`analyse` takes those steps on the datasets of :data:`DATASETS`: our measured files (Chapter 4's
LeNet-5 in PyTorch, split 1000/500, and Chapter 5's 3D-ResAttNet-18, split 900/600, as the thesis split
them; LeNet-5 in TensorFlow and MXNet, 1000/500, and in Chapter 4's 500-row Chainer and JAX files,
333/167) and the third-party ones shipped in ``data/external/`` (Lambda's GPU benchmarks and NVIDIA
DeepLearningExamples' published tables, split 2/3 to fit), and computes

1. Table 6.1 and Fig. 6.1: held-out MAPE (with a 95 % bootstrap interval), R² and the share of the
   held-out rows inside 90 % conformal intervals (studentised, :class:`perfkit.model.ConformalRegressor`)
   of every interpretable form: the thesis form (eq. 4.4, default engine, MAE and relative loss),
   the log-space power law (:class:`perfkit.model.LogLinearModel`, its richest variant), the hybrid
   form on analytic costs (:class:`perfkit.model.HybridModel`, our networks only) and the form the
   cross-validated search picks (:func:`perfkit.model.selection.search.search_forms`); beside them the black
   boxes (random forest, SVR, gradient boosting) and, where ``benchmarks/results/extrap.json``
   holds it for the same split, Extra-P;
2. Table 6.2: the search's candidates (CV MAPE ± standard error, parameters, the one-standard-error
   choice) per dataset; Table 6.3: the fitted formulas;
3. Tables 6.4-6.5, Figs. 6.2-6.3: what-if curves on our data: predicted epoch time, speedup and
   efficiency against the number of workers (1-8 by default) for the median configuration on one
   worker, with 90 % intervals and the extrapolated counts marked;
4. Table 6.6: the hybrid form's rates on Chapters 4 and 5 (is a FLOP as costly in both?);
5. the claims ledger (:data:`CLAIMS`), every verdict decided from an interval.

The package runs in three stages: :func:`compute` (every fit; :mod:`.compute`) returns
:class:`Ch6Results` (:mod:`.results`), kept in the results cache (:mod:`perfkit.chapters.cache`) under
the parameters, the content of every input file (:func:`inputs`) and the code; :func:`present` draws the
tables, figures, ledger and readings from them. The fit times in ``result.numbers["timings"]`` are
machine-dependent (the stored ones on a cache hit): the notebook shows them, nothing writes them to
``figures/``.

The notebook ``notebooks/ch6_beyond_the_thesis.ipynb`` calls :func:`analyse`, shows its tables
and figures and explains them.
"""
from __future__ import annotations

from ..common import run_chapter
from ..result import ChapterResult, checked_params
from .claims import (CLAIMS, SOURCES, Ch6Quantities, best_black_box_ratio, coverage_evidence, heldout_mape,
                     mape_difference, rate_ratio, tuned_difference)
from .compute import compute, inputs
from .data import Split, dataset_files, load_split, median_base, read_extrap
from .figures import plot_heldout, plot_whatif
from ...model.forms.generic import TINY
from .models import compute_rate, fit_tuned, formula, rate_samples, thesis_formula, whatif_table
from .params import (BLACK_BOXES, COVERAGE, COVERAGE_BAND, DATASET_NAMES, DATASETS, EXTERNAL_TEST, EXTRAP, FORMS,
                     FRAMEWORKS, INTERPRETABLE, MEASURED, METHOD_LABELS, METHODS, QUICK_CV, QUICK_DATASETS,
                     NON_FORMS, QUICK_FORMS, QUICK_RATE_B, QUICK_ROWS, RATE_B, RATE_FACTOR, TUNED, WHATIF_DATASETS,
                     WHATIF_FALLBACK, Params, check_params, roles_key)
from .present import present
from .readings import FORMULA_FACTORS, ch6_readings, formulas_markdown, readings
from .results import Ch6Results, DatasetFit, MethodFit, WhatIf
from .tables import candidates_table, candidates_view, formulas_table, heldout_table, heldout_view, rates_table

__all__ = ["analyse", "Params", "check_params", "roles_key", "compute", "inputs", "present",
           # results
           "Ch6Results", "DatasetFit", "MethodFit", "WhatIf",
           # claims
           "CLAIMS", "SOURCES", "Ch6Quantities", "heldout_mape", "mape_difference", "best_black_box_ratio",
           "coverage_evidence", "rate_ratio", "tuned_difference",
           # data and fits
           "Split", "load_split", "dataset_files", "median_base", "read_extrap", "compute_rate", "rate_samples",
           "fit_tuned", "whatif_table", "thesis_formula", "formula", "TINY",
           # tables, figures, readings
           "heldout_table", "heldout_view", "candidates_table", "candidates_view", "formulas_table", "rates_table",
           "plot_heldout", "plot_whatif", "readings", "ch6_readings", "formulas_markdown", "FORMULA_FACTORS",
           # the design's constants
           "FRAMEWORKS", "DATASETS", "DATASET_NAMES", "MEASURED", "EXTERNAL_TEST", "QUICK_ROWS", "QUICK_CV",
           "QUICK_FORMS", "QUICK_RATE_B", "QUICK_DATASETS", "FORMS", "COVERAGE", "COVERAGE_BAND", "RATE_B",
           "RATE_FACTOR", "INTERPRETABLE", "BLACK_BOXES", "TUNED", "NON_FORMS", "METHODS", "METHOD_LABELS", "EXTRAP",
           "WHATIF_DATASETS", "WHATIF_FALLBACK"]

def analyse(params: Params | None = None, /, **kwargs) -> ChapterResult:
    """Chapter 6 on the measured files and the third-party datasets.

    ``analyse(datasets=["ch4"], ...)`` or ``analyse(check_params(...))``; the parameters (:class:`Params`)
    are checked first (:func:`check_params`): a value that is not allowed raises one
    :class:`~perfkit.chapters.result.ParameterError` before anything is fitted. With unchanged parameters,
    input files and code the results are read from the results cache (``cache=False`` recomputes them).
    """
    p = checked_params(params, kwargs, Params, check_params)
    return run_chapter("ch6", p, inputs(p), compute, Ch6Results, present)
