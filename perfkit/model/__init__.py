"""Model: the equations and models of the thesis, their fitting, their uncertainty and their selection.

The core, flat in this package, is what every model form shares: :mod:`.base` (the interface every form
implements, :class:`~.base.PerformanceForm`), :mod:`.roles` (column roles, levels seen in fit, constant
columns), :mod:`.validation` (the input checks every model runs), :mod:`.persist` (the one JSON codec of saved
models) and :mod:`.unitscale` (unit-free fitting). Everything else lives in a subpackage by concept:

- :mod:`.analytic`: Chapter 3's S-SGD phase model (:mod:`~.analytic.equations`, eqs. 3.1-3.8), applied to phase
  tables (:mod:`~.analytic.phases`), the eq. 3.9 LIF regression (:mod:`~.analytic.lif`) and scaling exponents
  (:mod:`~.analytic.scaling`);
- :mod:`.forms`: the model forms: eq. 4.4 (:mod:`~.forms.generic`), the log-linear power law with its terms and
  solvers (:mod:`~.forms.loglinear`, :mod:`~.forms.terms`, :mod:`~.forms.logfit`), the hybrid form with its
  analytic costs (:mod:`~.forms.hybrid`, :mod:`~.forms.costs`), symbolic regression (:mod:`~.forms.symbolic`)
  and the step-time models (:mod:`~.forms.stepmodels`);
- :mod:`.engine` (internal): how eq. 4.4 is fitted: the problem, the varpro search and its compiled kernels,
  the Newton refinement, screening, hops, canonical forms, and the disk cache of fits;
- :mod:`.uncertainty`: conformal intervals (:mod:`~.uncertainty.conformal`), intervals that widen with the
  extrapolation distance (:mod:`~.uncertainty.scale_intervals`, :mod:`~.uncertainty.extrapolation`), leverage,
  fitted ranges and the what-if of one column (:mod:`~.uncertainty.whatif`);
- :mod:`.selection`: which model: the form search (:mod:`~.selection.search`), the black-box reference, the
  baselines, repeated fits and λ sweeps (:mod:`~.selection.fitting`), the metrics and paired comparisons.

Layers run one way: nothing here imports :mod:`perfkit.report`, :mod:`perfkit.chapters` or :mod:`perfkit.cli`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the real imports, for readers and linters; at run time each loads on first use
    from . import analytic, base, engine, forms, persist, roles, selection, uncertainty, unitscale, validation
    from .analytic.equations import evaluate, iteration_time_multi, iteration_time_pipelined, iteration_time_sgd, iteration_time_single, iteration_time_ssgd, load_imbalance_factor, speedup, speedup_pipelined
    from .selection.metrics import mae, mape, mse, r2, regression_report, rmse
    from .forms.generic import GenericPerformanceModel
    from .engine.engines import ENGINES
    from .selection.fitting import RepeatedFit, choose_lambda_cv, fit_repeated, regularisation_sweep
    from .selection.baselines import compare_models, make_baseline, train_test_split_frame
    from .analytic.lif import fit_lif_regression, lif_from_worker_times
    from .analytic.scaling import core_bound, scaling_power, volume_exponents
    from .validation import validate_frame, validate_target
    from .forms.loglinear import LogLinearModel
    from .uncertainty.conformal import ConformalRegressor, ExtrapolationWarning, coverage_of, extrapolation
    from .forms.costs import add_costs, network_costs
    from .forms.hybrid import HybridModel
    from .selection.search import make_form, search_forms
    from .persist import load_model
    from .uncertainty.whatif import model_columns, whatif
    from .base import PerformanceForm
    from .forms.stepmodels import PhaseAwareStepModel, PolluxStepModel
    from .uncertainty.extrapolation import extrapolation_errors, scale_split, select_by_extrapolation
    from .uncertainty.scale_intervals import ScaleIntervalModel
    from .forms.symbolic import SymbolicModel

#: public name → the module that defines it
_EXPORTS = {
    "iteration_time_sgd": "analytic.equations",
    "iteration_time_ssgd": "analytic.equations",
    "iteration_time_multi": "analytic.equations",
    "iteration_time_single": "analytic.equations",
    "iteration_time_pipelined": "analytic.equations",
    "speedup": "analytic.equations",
    "speedup_pipelined": "analytic.equations",
    "load_imbalance_factor": "analytic.equations",
    "evaluate": "analytic.equations",
    "mape": "selection.metrics",
    "mae": "selection.metrics",
    "mse": "selection.metrics",
    "rmse": "selection.metrics",
    "r2": "selection.metrics",
    "regression_report": "selection.metrics",
    "GenericPerformanceModel": "forms.generic",
    "ENGINES": "engine.engines",
    "fit_repeated": "selection.fitting",
    "regularisation_sweep": "selection.fitting",
    "choose_lambda_cv": "selection.fitting",
    "RepeatedFit": "selection.fitting",
    "make_baseline": "selection.baselines",
    "compare_models": "selection.baselines",
    "train_test_split_frame": "selection.baselines",
    "fit_lif_regression": "analytic.lif",
    "lif_from_worker_times": "analytic.lif",
    "scaling_power": "analytic.scaling",
    "volume_exponents": "analytic.scaling",
    "core_bound": "analytic.scaling",
    "validate_frame": "validation",
    "validate_target": "validation",
    "LogLinearModel": "forms.loglinear",
    "ConformalRegressor": "uncertainty.conformal",
    "ExtrapolationWarning": "uncertainty.conformal",
    "coverage_of": "uncertainty.conformal",
    "extrapolation": "uncertainty.conformal",
    "model_columns": "uncertainty.whatif",
    "add_costs": "forms.costs",
    "network_costs": "forms.costs",
    "HybridModel": "forms.hybrid",
    "search_forms": "selection.search",
    "make_form": "selection.search",
    "load_model": "persist",
    "whatif": "uncertainty.whatif",
    "PerformanceForm": "base",
    "PolluxStepModel": "forms.stepmodels",
    "PhaseAwareStepModel": "forms.stepmodels",
    "scale_split": "uncertainty.extrapolation",
    "extrapolation_errors": "uncertainty.extrapolation",
    "select_by_extrapolation": "uncertainty.extrapolation",
    "ScaleIntervalModel": "uncertainty.scale_intervals",
    "SymbolicModel": "forms.symbolic",
}
_SUBMODULES = ('analytic', 'engine', 'forms', 'selection', 'uncertainty', 'base', 'persist', 'roles',
               'unitscale', 'validation')

__all__ = [
    "ConformalRegressor",
    "PhaseAwareStepModel",
    "PolluxStepModel",
    "ScaleIntervalModel",
    "SymbolicModel",
    "extrapolation_errors",
    "scale_split",
    "select_by_extrapolation",
    "PerformanceForm",
    "extrapolation",
    "model_columns",
    "ENGINES",
    "ExtrapolationWarning",
    "GenericPerformanceModel",
    "HybridModel",
    "LogLinearModel",
    "RepeatedFit",
    "add_costs",
    "choose_lambda_cv",
    "compare_models",
    "core_bound",
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
    "load_imbalance_factor",
    "load_model",
    "mae",
    "make_baseline",
    "make_form",
    "mape",
    "mse",
    "network_costs",
    "r2",
    "regression_report",
    "regularisation_sweep",
    "rmse",
    "scaling_power",
    "search_forms",
    "speedup",
    "speedup_pipelined",
    "train_test_split_frame",
    "validate_frame",
    "validate_target",
    "volume_exponents",
    "whatif",
    "whatif",
    "analytic",
    "engine",
    "forms",
    "selection",
    "uncertainty",
    "base",
    "persist",
    "roles",
    "unitscale",
    "validation",
]


__getattr__, __dir__ = attach(__name__, globals(), _EXPORTS, _SUBMODULES)
