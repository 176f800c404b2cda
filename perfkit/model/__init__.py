"""Model: the equations and models of the thesis, their fitting, baselines and metrics.

- :mod:`.equations`: Chapter 3, eqs. 3.1-3.8; :mod:`.phases` applies them to phase tables;
- :mod:`.generic`: the generic performance model (eq. 4.4), a scikit-learn estimator, with its
  engines as plain functions in :mod:`.engines`; :mod:`.fitting`: repeated fits and λ sweeps;
- :mod:`.baselines`: random forest, SVR and gradient boosting; :mod:`.lif`: the eq. 3.9 regression;
- :mod:`.scaling`: scaling exponents; :mod:`.metrics`: MAPE (4.13), R² (3.10-3.12) and others;
- :mod:`.forms`: model forms beyond the thesis (a power law fitted in log space, with interactions);
  :mod:`.costs`: analytic costs (FLOPs, activations, parameters) of every network the harness measures, and
  :mod:`.hybrid`: the form that fits rates to them; :mod:`.search`: which form, by cross-validation;
  :mod:`.intervals`: conformal prediction intervals for any of them; :mod:`.persist`: one loader of saved models; :mod:`.whatif`: one column varied;
- :mod:`.validation`: the input checks every model runs;
- :mod:`.base`: the interface every model form implements (:class:`~.base.PerformanceForm`: ``formula``,
  ``summary``, ``n_parameters_``, ``to_doc``/``from_doc``, optional ``leverage``/``predictable``), with
  :mod:`.roles` (column roles, constant columns), :mod:`.terms` (the log-linear form's terms) and :mod:`.logfit`
  (its solvers: lasso, least squares, ridge);
- the engines' parts: :mod:`.problem` (the cost and its linear solve), :mod:`.search_cost` (the compiled
  search cost), :mod:`.newton` (the bounded Newton refinement), :mod:`.screening`, :mod:`.hops`,
  :mod:`.canonical`; :mod:`.fitcache`: the disk cache of fits.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the real imports, for readers and linters; at run time each loads on first use
    from . import equations, metrics, generic, engines, fitting, baselines, lif, phases, scaling, validation
    from . import forms, intervals, costs, hybrid, search, persist
    from .equations import evaluate, iteration_time_multi, iteration_time_pipelined, iteration_time_sgd, iteration_time_single, iteration_time_ssgd, load_imbalance_factor, speedup, speedup_pipelined
    from .metrics import mae, mape, mse, r2, regression_report, rmse
    from .generic import GenericPerformanceModel
    from .engines import ENGINES
    from .fitting import RepeatedFit, choose_lambda_cv, fit_repeated, regularisation_sweep
    from .baselines import compare_models, make_baseline, train_test_split_frame
    from .lif import fit_lif_regression, lif_from_worker_times
    from .scaling import core_bound, scaling_power, volume_exponents
    from .validation import validate_frame, validate_target
    from .forms import LogLinearModel
    from .intervals import ConformalRegressor, ExtrapolationWarning, coverage_of, extrapolation
    from .costs import add_costs, network_costs
    from .hybrid import HybridModel
    from .search import make_form, search_forms
    from .persist import load_model
    from .whatif import model_columns, whatif
    from .base import PerformanceForm
    from .stepmodels import PhaseAwareStepModel, PolluxStepModel
    from .extrapolation import extrapolation_errors, scale_split, select_by_extrapolation
    from .scale_intervals import ScaleIntervalModel
    from .symbolic import SymbolicModel

#: public name → the module that defines it
_EXPORTS = {
    "iteration_time_sgd": "equations",
    "iteration_time_ssgd": "equations",
    "iteration_time_multi": "equations",
    "iteration_time_single": "equations",
    "iteration_time_pipelined": "equations",
    "speedup": "equations",
    "speedup_pipelined": "equations",
    "load_imbalance_factor": "equations",
    "evaluate": "equations",
    "mape": "metrics",
    "mae": "metrics",
    "mse": "metrics",
    "rmse": "metrics",
    "r2": "metrics",
    "regression_report": "metrics",
    "GenericPerformanceModel": "generic",
    "ENGINES": "engines",
    "fit_repeated": "fitting",
    "regularisation_sweep": "fitting",
    "choose_lambda_cv": "fitting",
    "RepeatedFit": "fitting",
    "make_baseline": "baselines",
    "compare_models": "baselines",
    "train_test_split_frame": "baselines",
    "fit_lif_regression": "lif",
    "lif_from_worker_times": "lif",
    "scaling_power": "scaling",
    "volume_exponents": "scaling",
    "core_bound": "scaling",
    "validate_frame": "validation",
    "validate_target": "validation",
    "LogLinearModel": "forms",
    "ConformalRegressor": "intervals",
    "ExtrapolationWarning": "intervals",
    "coverage_of": "intervals",
    "extrapolation": "intervals",
    "model_columns": "whatif",
    "add_costs": "costs",
    "network_costs": "costs",
    "HybridModel": "hybrid",
    "search_forms": "search",
    "make_form": "search",
    "load_model": "persist",
    "whatif": "whatif",
    "PerformanceForm": "base",
    "PolluxStepModel": "stepmodels",
    "PhaseAwareStepModel": "stepmodels",
    "scale_split": "extrapolation",
    "extrapolation_errors": "extrapolation",
    "select_by_extrapolation": "extrapolation",
    "ScaleIntervalModel": "scale_intervals",
    "SymbolicModel": "symbolic",
}
_SUBMODULES = ('equations', 'metrics', 'generic', 'engines', 'fitting', 'baselines', 'lif', 'phases', 'scaling', 'validation',
               'forms', 'intervals', 'costs', 'hybrid', 'search', 'persist', 'whatif', 'base', 'roles', 'terms',
               'stepmodels', 'extrapolation', 'unitscale', 'ranges', 'scale_intervals', 'symbolic')

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
    "equations",
    "metrics",
    "generic",
    "engines",
    "fitting",
    "baselines",
    "lif",
    "phases",
    "scaling",
    "validation",
    "forms",
    "intervals",
    "costs",
    "hybrid",
    "search",
    "persist",
    "whatif",
]


__getattr__, __dir__ = attach(__name__, globals(), _EXPORTS, _SUBMODULES)
