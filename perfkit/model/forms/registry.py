"""The one registry of model forms: which forms exist, and everything the rest of perfkit reads about them.

Each :class:`Form` says a form's name (``--form NAME``), its class, the ``format`` string of its saved JSON, how
the form search builds its candidates, the inputs it needs besides the table's column roles, whether it is a
*table* form (a configuration table with numeric/categorical/extrinsic roles) or a *step* form (GPUs, nodes and
per-GPU batch), and, for each constructor parameter that can be wrong, one invalid example value with the text
its error contains (:class:`BadValue`).

The form search (:func:`perfkit.model.selection.search.search_forms`,
:func:`~perfkit.model.selection.search.make_form`), the JSON loader (:func:`perfkit.model.persist.load_model`),
``perfkit fit --form`` and the fit study's form names read this table; nothing else lists the forms. Classes and
candidate builders are named by module path and loaded on first use, so importing this module imports no form
(and no other perfkit module).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

__all__ = ["Form", "BadValue", "REGISTRY", "TABLE", "STEP", "HARDWARE", "INPUTS", "form_names", "table_forms",
           "step_forms", "hardware_forms", "get", "json_formats"]

#: the kinds of form: a configuration table with column roles, the step time of data-parallel training, or a table
#: joined to GPU datasheet columns (``--hardware``)
TABLE, STEP, HARDWARE = "table", "step", "hardware"

#: the inputs a form may need besides the table's column roles (a field of the fit study's spec each) → words
INPUTS = {
    "network": "a network with an analytic cost model (`--network`)",
    "gpus": "the GPU-count column (`--gpus`)",
    "nodes": "the node-count column (`--nodes`)",
    "batch": "the per-GPU batch column (`--batch`)",
    "phases": "one measured phase column, the synchronisation time per step (`--phases`)",
    "hardware": "a GPU-name column joined to the GPU spec table (`--hardware`)",
}


@dataclass(frozen=True)
class BadValue:
    """An invalid value of one constructor parameter: building the form with it and fitting on a valid table
    raises one ``ValueError`` whose message contains ``error`` (the parameter's name unless given)."""

    parameter: str
    value: Any
    error: str = ""

    @property
    def text(self) -> str:
        """The text the error must contain."""
        return self.error or self.parameter


def _load(path: str):
    """The object ``"module:name"`` names, the module relative to :mod:`perfkit.model`."""
    module, name = path.split(":")
    return getattr(importlib.import_module(f"perfkit.model.{module}"), name)


@dataclass(frozen=True)
class Form:
    """One model form. ``cls_path`` and ``candidates_path`` are ``"module:name"`` below :mod:`perfkit.model`,
    loaded on first use; ``candidates_path`` is None for a form the search tries only through
    :func:`~perfkit.model.selection.search.step_candidates` (the step forms). ``needs`` are keys of
    :data:`INPUTS`; ``invalid`` one :class:`BadValue` per constructor parameter that can be wrong."""

    name: str
    cls_path: str
    json_format: str
    kind: str
    candidates_path: str | None
    needs: tuple[str, ...]
    invalid: tuple[BadValue, ...]
    words: str

    @property
    def cls(self) -> type:
        """The form's class (imported on first use)."""
        return _load(self.cls_path)

    @property
    def location(self) -> tuple[str, str]:
        """``(module below perfkit.model, class name)``, without importing the class."""
        module, name = self.cls_path.split(":")
        return module, name

    def candidates(self, roles: dict, network, random_state, options: dict) -> list:
        """The form search's candidates of this form (``[]`` for a form without a builder)."""
        if self.candidates_path is None:
            return []
        return _load(self.candidates_path)(roles, network, random_state, options)


def _bad(*items) -> tuple[BadValue, ...]:
    return tuple(BadValue(*item) for item in items)


_ROLES = (("numeric", 5), ("categorical", 5), ("extrinsic", 5))
_STEP_COLUMNS = (("gpus", 5), ("nodes", 5), ("batch", 5))

#: every form, in the order of ``perfkit fit --form`` (the table forms first)
REGISTRY: tuple[Form, ...] = (
    Form("thesis", "forms.generic:GenericPerformanceModel", "perfkit.GenericPerformanceModel", TABLE,
         "selection.search:thesis_candidates", (),
         _bad(*_ROLES, ("penalty", "l3"), ("lam", -1.0), ("bounds", {"z": (0, 1)}), ("method", "simplex"),
              ("coding", "onehot"), ("random_state", -1), ("maxiter", 0), ("popsize", 0), ("tol", -1.0),
              ("irls_iter", 0), ("search_rows", 0),
              ("lam_powers", -1.0, "lam_powers: expected a finite number >= 0"),
              ("loss", "log2", "loss: expected one of ('absolute', 'relative'), got 'log2'"), ("scale", "units")),
         "the thesis's eq. 4.4: Σ a·I^p + Σ κ, times Π E^q, plus C"),
    Form("loglinear", "forms.loglinear:LogLinearModel", "perfkit.LogLinearModel", TABLE,
         "selection.search:loglinear_candidates", (),
         _bad(*_ROLES, ("interactions", "yes", "interactions: expected True or False"), ("category_terms", "yes"),
              ("category_pairs", "yes"), ("pair_slopes", "yes"), ("segments", "yes"),
              ("cells", "yes", "cells: expected True or False"),
              ("select", "elastic", "select: expected one of ('lasso', 'none', 'ridge'), got 'elastic'"),
              ("penalty", "big", "penalty: expected three numbers from 0 to 1e+06"),
              ("random_state", -1, "random_state: expected an integer >= 0")),
         "a power law in log space, with products of logs and per-level slopes"),
    Form("hybrid", "forms.hybrid:HybridModel", "perfkit.HybridModel", TABLE,
         "selection.search:hybrid_candidates", ("network",),
         _bad(*_ROLES, ("network", "vgg"), ("batch", "bs", "batch: 'bs' is not a numeric or extrinsic column"),
              ("workers", "padding", "workers: 'padding' is not a numeric or extrinsic column"),
              ("fixed", [("stride", 2)], "fixed: expected a dict of configuration key -> value"),
              ("modifiers", ["compute"]), ("regimes", ["stride"]), ("n_train", 0), ("random_state", -1)),
         "analytic costs of the network times fitted rates"),
    Form("symbolic", "forms.symbolic:SymbolicModel", "perfkit.SymbolicModel", TABLE,
         "selection.search:symbolic_candidates", (),
         _bad(*_ROLES, ("network", "vgg"), ("fixed", {"stride": 1}, "fixed: needs network"),
              ("function_set", "add,exp"),
              ("population_size", 5), ("generations", 0), ("tournament_size", 500),
              ("parsimony_coefficient", -1.0), ("max_nodes", 4), ("random_state", -1)),
         "symbolic regression in log space (gplearn), at most 20 nodes"),
    Form("pollux", "forms.stepmodels:PolluxStepModel", "perfkit.PolluxStepModel", STEP, None,
         ("gpus", "nodes", "batch"), _bad(*_STEP_COLUMNS),
         "Pollux's step time (T_grad^γ + T_sync^γ)^(1/γ), T_sync linear in the GPU count"),
    Form("phases", "forms.stepmodels:PhaseAwareStepModel", "perfkit.PhaseAwareStepModel", STEP, None,
         ("gpus", "nodes", "batch", "phases"),
         _bad(*_STEP_COLUMNS, ("sync_column", 5), ("sync_form", "tree"), ("sync_weight", -1.0),
              ("node_slope", "yes"), ("loss", "l2"), ("f_scale", 0.0)),
         "the step time with T_sync ∝ ln K plus a slope in the node count, fitted with the measured sync time"),
    Form("roofline", "forms.roofline:RooflineModel", "perfkit.RooflineModel", HARDWARE, None, ("hardware",),
         _bad(("workload", 5), ("peak", None), ("vector", 5), ("memory", ""), ("link", 5), ("batch", 5), ("gpus", 5),
              ("flops", 5), ("bytes", 5), ("terms", ["compute", "disk"]), ("smooth", 0.5),
              ("one_spec", "median")),
         "per workload, the GPU's resources' times b/peak, b/FP32, b/bandwidth, the host's, the all-reduce's, summed"),
)

_BY_NAME = {f.name: f for f in REGISTRY}


def form_names() -> tuple[str, ...]:
    """Every form's name, table forms first (the order of ``perfkit fit --form``)."""
    return tuple(_BY_NAME)


def table_forms() -> tuple[str, ...]:
    """The names of the table forms (the ones the form search builds candidates of)."""
    return tuple(f.name for f in REGISTRY if f.kind == TABLE)


def step_forms() -> tuple[str, ...]:
    """The names of the step forms (GPUs, nodes and per-GPU batch)."""
    return tuple(f.name for f in REGISTRY if f.kind == STEP)


def hardware_forms() -> tuple[str, ...]:
    """The names of the forms over GPU datasheet columns (``--hardware``)."""
    return tuple(f.name for f in REGISTRY if f.kind == HARDWARE)


def get(name: str) -> Form:
    """The form called ``name``; one ``ValueError`` naming ``form`` and the choices otherwise."""
    if not isinstance(name, str) or name not in _BY_NAME:
        raise ValueError(f"form: unknown form {name!r}; expected one of {list(_BY_NAME)}")
    return _BY_NAME[name]


def json_formats() -> dict[str, Form]:
    """The ``format`` string of each form's saved JSON → the form."""
    return {f.json_format: f for f in REGISTRY}
