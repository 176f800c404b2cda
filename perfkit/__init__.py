"""perfkit — performance modelling of distributed deep-learning training.

A workbench that reproduces and extends Kavarakuntla (2023), *Performance
modelling for scalable deep learning*. Submodules are imported lazily, so
``import perfkit`` is fast and has no side effects.

Modules
-------
equations
    Chapter 3 S-SGD phase model: eqs. 3.1–3.8.
metrics
    MAPE (4.13), MAE, MSE, RMSE, R² (3.10–3.12).
thesis
    The thesis's published tables as tidy DataFrames.
figures
    The single writer of figures and tables.
ch3
    Chapter 3 analysis helpers used by the notebook.
lif
    Eq. 3.9: OLS regression of epoch time on workers and LIF.
generic
    Chapter 4 generic performance model (eq. 4.4), a scikit-learn estimator.
fitting
    Repeated fits, L1/L2 sweeps over λ, cross-validated λ (joblib-parallel).
baselines
    Random forest and SVR pipelines and the comparison table.
dataset
    Validation of user tables.
synthetic
    Table 4.1-shaped synthetic data for tests and benchmarks (not measurements).
sampler
    Table 4.1 LeNet-5 configuration sampler with geometry rejection.
collect, harness, protocol
    ``perfkit collect``: measurement campaigns, worker groups and the crash-safe
    sample log, the JSON-lines protocol between collector and framework adapters.
torch_worker, torch_models
    The PyTorch adapter and the models it times (import PyTorch).
imagedata
    Synthetic image tensors of the real shapes; MNIST IDX and CIFAR-10 loaders.
provenance
    Machine facts recorded beside datasets and benchmark results.
ch3measured, ch4, claims
    Chapter 3 and 4 analysis of measured data, and the claims ledger.
resattnet3d
    3D-ResAttNet-18 for Chapter 5 (imports PyTorch).
ch5
    Chapter 5 extension: scaling exponents against the volume size.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    # equations (Chapter 3)
    "iteration_time_sgd": "equations",
    "iteration_time_ssgd": "equations",
    "iteration_time_multi": "equations",
    "iteration_time_single": "equations",
    "iteration_time_pipelined": "equations",
    "speedup": "equations",
    "speedup_pipelined": "equations",
    "load_imbalance_factor": "equations",
    "evaluate": "equations",
    # metrics
    "mape": "metrics",
    "mae": "metrics",
    "mse": "metrics",
    "rmse": "metrics",
    "r2": "metrics",
    "regression_report": "metrics",
    # thesis reference data
    "load_thesis_table": "thesis",
    "list_thesis_tables": "thesis",
    # Chapter 4: generic model, fits, baselines
    "GenericPerformanceModel": "generic",
    "fit_repeated": "fitting",
    "regularisation_sweep": "fitting",
    "choose_lambda_cv": "fitting",
    "make_baseline": "baselines",
    "compare_models": "baselines",
    "train_test_split_frame": "baselines",
    # Chapter 3: LIF regression (eq. 3.9)
    "fit_lif_regression": "lif",
    "lif_from_worker_times": "lif",
    # output
    "savefig": "figures",
    "savetable": "figures",
    "use_style": "figures",
    # measurement harness
    "sample_configs": "sampler",
    "check_geometry": "sampler",
    "machine_info": "provenance",
    # paths
    "data_dir": "paths",
    "figures_dir": "paths",
    "repo_root": "paths",
}
_SUBMODULES = ("equations", "metrics", "thesis", "figures", "paths", "ch3", "reproduce", "cli", "generic",
               "fitting", "baselines", "lif", "dataset", "synthetic", "sampler", "collect", "harness", "protocol",
               "torch_worker", "torch_models", "imagedata", "provenance", "ch3measured", "ch4", "claims",
               "resattnet3d", "ch5")

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    if name in _EXPORTS:
        module = importlib.import_module(f".{_EXPORTS[name]}", __name__)
        value = getattr(module, name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'perfkit' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | set(_SUBMODULES))
