"""perfkit — performance modelling of distributed deep-learning training.

A workbench that reproduces and extends Kavarakuntla (2023), *Performance
modelling for scalable deep learning*. The packages follow the data flow::

    measure  →  data  →  model  →  chapters  →  report
    (perfkit collect)  (data/)  (fits)  (analyse)  (figures/)

:mod:`perfkit.schema`
    What every stage agrees on: phases, columns of each measured file, the epoch
    formula ⌈N/(B·G)⌉·t, the volume codec, paths inside the repository.
:mod:`perfkit.measure`
    ``perfkit collect``: plans, worker groups, the line protocol, the crash-safe
    sample log, provenance, the Table 4.1/5.1 spaces and the framework adapters.
:mod:`perfkit.data`
    The thesis's published tables, loaders of measured files, synthetic data.
:mod:`perfkit.model`
    Equations 3.1-3.9, the generic model (eq. 4.4) and its engines, repeated fits
    and λ sweeps, baselines, scaling exponents, metrics, input validation.
:mod:`perfkit.chapters`
    One module per chapter, each with ``analyse(**params) -> ChapterResult``, and
    the papermill runner of the chapter notebooks.
:mod:`perfkit.report`
    The single writer of figures and tables, the figure types, reader tables and
    the claims ledger.

The most used names are importable from ``perfkit`` itself. Nothing heavy loads
until it is used, so ``import perfkit`` is fast and has no side effects.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import attach
from ._version import __version__

from . import schema
from .schema import data_dir, figures_dir, repo_root

if TYPE_CHECKING:  # the real imports, for readers and linters; at run time each loads on first use
    from . import chapters, cli, data, measure, model, report, study
    from .data.thesis import list_thesis_tables, load_thesis_table
    from .measure.provenance import machine_info
    from .measure.spaces import check_geometry, sample_configs
    from .model.selection.baselines import compare_models, make_baseline, train_test_split_frame
    from .model.analytic.equations import (evaluate, iteration_time_multi, iteration_time_pipelined, iteration_time_sgd,
                                  iteration_time_single, iteration_time_ssgd, load_imbalance_factor, speedup,
                                  speedup_pipelined)
    from .model.selection.fitting import choose_lambda_cv, fit_repeated, regularisation_sweep
    from .model.forms.loglinear import LogLinearModel
    from .model.forms.generic import GenericPerformanceModel
    from .model.forms.hybrid import HybridModel
    from .model.uncertainty.conformal import ConformalRegressor, coverage_of
    from .model.persist import load_model
    from .model.selection.search import make_form, search_forms
    from .model.uncertainty.whatif import whatif
    from .model.analytic.lif import fit_lif_regression, lif_from_worker_times
    from .model.selection.metrics import mae, mape, mse, r2, regression_report, rmse
    from .report.output import savefig, savetable, use_style
    from .study.result import StudyResult
    from .study.spec import FitSpec

#: public name → the module that defines it
_EXPORTS = {
    # Chapter 3 equations
    **dict.fromkeys(["iteration_time_sgd", "iteration_time_ssgd", "iteration_time_multi", "iteration_time_single",
                     "iteration_time_pipelined", "speedup", "speedup_pipelined", "load_imbalance_factor",
                     "evaluate"], "model.analytic.equations"),
    # metrics
    **dict.fromkeys(["mape", "mae", "mse", "rmse", "r2", "regression_report"], "model.selection.metrics"),
    # the thesis's published tables
    **dict.fromkeys(["load_thesis_table", "list_thesis_tables"], "data.thesis"),
    # Chapter 4: generic model, fits, baselines
    "GenericPerformanceModel": "model.forms.generic",
    **dict.fromkeys(["fit_repeated", "regularisation_sweep", "choose_lambda_cv"], "model.selection.fitting"),
    **dict.fromkeys(["make_baseline", "compare_models", "train_test_split_frame"], "model.selection.baselines"),
    # beyond the thesis: a power law in log space, conformal intervals
    "LogLinearModel": "model.forms.loglinear",
    "HybridModel": "model.forms.hybrid",
    **dict.fromkeys(["search_forms", "make_form"], "model.selection.search"),
    "load_model": "model.persist",
    "whatif": "model.uncertainty.whatif",
    **dict.fromkeys(["ConformalRegressor", "coverage_of"], "model.uncertainty.conformal"),
    # Chapter 3: LIF regression (eq. 3.9)
    **dict.fromkeys(["fit_lif_regression", "lif_from_worker_times"], "model.analytic.lif"),
    # output
    **dict.fromkeys(["savefig", "savetable", "use_style"], "report.output"),
    # measurement
    **dict.fromkeys(["sample_configs", "check_geometry"], "measure.spaces"),
    "machine_info": "measure.provenance",
    # the fit study (perfkit.study.run runs a FitSpec)
    "FitSpec": "study.spec",
    "StudyResult": "study.result",
}
_SUBPACKAGES = ("measure", "data", "model", "chapters", "report", "study", "cli")

__all__ = [
    "ConformalRegressor",
    "FitSpec",
    "StudyResult",
    "GenericPerformanceModel",
    "HybridModel",
    "LogLinearModel",
    "check_geometry",
    "choose_lambda_cv",
    "compare_models",
    "coverage_of",
    "evaluate",
    "fit_lif_regression",
    "fit_repeated",
    "iteration_time_multi",
    "iteration_time_pipelined",
    "iteration_time_sgd",
    "iteration_time_single",
    "iteration_time_ssgd",
    "lif_from_worker_times",
    "list_thesis_tables",
    "load_imbalance_factor",
    "load_model",
    "load_thesis_table",
    "machine_info",
    "mae",
    "make_baseline",
    "make_form",
    "mape",
    "mse",
    "r2",
    "regression_report",
    "regularisation_sweep",
    "rmse",
    "sample_configs",
    "savefig",
    "savetable",
    "search_forms",
    "speedup",
    "speedup_pipelined",
    "train_test_split_frame",
    "use_style",
    "whatif",
    "data_dir",
    "figures_dir",
    "repo_root",
    "schema",
    "__version__",
    "measure",
    "data",
    "model",
    "study",
    "chapters",
    "report",
    "cli",
]


__getattr__, __dir__ = attach(__name__, globals(), _EXPORTS, _SUBPACKAGES)
