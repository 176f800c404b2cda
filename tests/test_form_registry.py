"""The registry of model forms (perfkit.model.forms.registry): one generated invalid-parameter test per form and
parameter (building and fitting the form on a small valid table with that one bad value is one ValueError naming
the parameter), and the agreement of everything derived from it: ``perfkit fit --form``, the fit study's forms,
the form search's candidates, the saved-JSON formats and the step forms."""
import argparse
import inspect
import json
import re
import subprocess
import sys
import warnings
from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfkit.cli.fit import add_arguments
from perfkit.model.base import PerformanceForm
from perfkit.model.forms.registry import (HARDWARE, INPUTS, REGISTRY, STEP, TABLE, form_names, get, hardware_forms,
                                          json_formats, step_forms, table_forms)
from perfkit.model.persist import WRAPPER_FORMATS, model_formats
from perfkit.model.selection.search import form_candidates, make_form, step_candidates
from perfkit.study.spec import FitSpec

ROLES = dict(numeric=["num_filters", "kernel_size", "pool_size", "stride"],
             categorical=["padding", "activation", "dataset", "optimizer"], extrinsic=["batch_size", "workers"])
STEP_COLUMNS = dict(gpus="n_gpus", nodes="n_nodes", batch="batch_per_gpu")
#: valid settings of each form on the small tables below (short fits for the thesis and symbolic forms)
VALID = {"thesis": dict(ROLES, maxiter=2, popsize=5, search_rows=50), "loglinear": ROLES,
         "hybrid": dict(ROLES, network="lenet5"), "symbolic": dict(ROLES, population_size=50, generations=2),
         "pollux": STEP_COLUMNS, "phases": dict(STEP_COLUMNS, sync_column="sync_time"),
         "roofline": dict(workload=["model"], batch="batch_per_gpu", gpus="n_gpus")}
#: every format a saved model had before the registry (files saved then must still load)
SAVED_FORMATS = {"perfkit.GenericPerformanceModel", "perfkit.LogLinearModel", "perfkit.HybridModel",
                 "perfkit.ConformalRegressor", "perfkit.PolluxStepModel", "perfkit.PhaseAwareStepModel",
                 "perfkit.ScaleIntervalModel", "perfkit.SymbolicModel", "perfkit.MedianOfModels",
                 "perfkit.CommPriorStepModel", "perfkit.BoostedStepModel", "perfkit.RooflineModel",
                 "perfkit.GroupIntervalModel", "perfkit.BlendOfModels"}


@pytest.fixture(scope="module")
def tables():
    """Kind → (X, y): 60 measured LeNet-5 rows for the table forms; 26 placements with a sync column for the step
    forms; 40 of Lambda's fp16 rows with the GPU spec columns joined for the hardware forms."""
    from perfkit.data.gpu_specs import join_hardware
    from perfkit.data.lambda_labs import load_lambda

    df = pd.read_csv(Path(__file__).resolve().parents[1] / "data/measured/pytorch-cpu/ch4_lenet5.csv")
    df = df[df["status"] == "ok"].head(60).reset_index(drop=True)
    rows = [(k, n, b) for k in (1, 2, 4, 8, 16) for n in (1, 2, 4) if n <= k for b in (8, 32)]
    steps = pd.DataFrame(rows, columns=list(STEP_COLUMNS.values()))
    y_step = (0.02 + 0.004 * steps["batch_per_gpu"] + 0.01 * np.log(steps["n_gpus"]) + 0.001 * steps["n_nodes"])
    steps["sync_time"] = 0.01 * np.log(steps["n_gpus"]) + 0.001
    hw = load_lambda(screen=True)
    hw = join_hardware(hw[(hw["precision"] == "fp16") & hw["model"].isin(["resnet50", "ssd"])].head(40), "gpu",
                       "precision").reset_index(drop=True)
    return {TABLE: (df[[c for cols in ROLES.values() for c in cols]].copy(), df["epoch_time"].to_numpy()),
            STEP: (steps, y_step.to_numpy()), HARDWARE: (hw.drop(columns=["t_iter"]), hw["t_iter"].to_numpy())}


def _fit(form, tables, **change):
    X, y = tables[form.kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a constant column: not what these tests are about
        return form.cls(**{**VALID[form.name], **change}).fit(X, y)


# ---------------------------------------------------------------------------------- the generated bad values
CASES = [pytest.param(form, bad, id=f"{form.name}-{bad.parameter}") for form in REGISTRY for bad in form.invalid]


@pytest.mark.parametrize("form, bad", CASES)
def test_a_bad_parameter_is_one_error_naming_it(form, bad, tables):
    with pytest.raises(ValueError, match="^" + re.escape(bad.text)):
        _fit(form, tables, **{bad.parameter: bad.value})


@pytest.mark.parametrize("form", REGISTRY, ids=form_names())
def test_the_valid_settings_fit(form, tables):
    """The generated cases differ from a fit that works by their one bad value."""
    X, _ = tables[form.kind]
    assert np.all(np.isfinite(_fit(form, tables).predict(X)))


@pytest.mark.parametrize("form", REGISTRY, ids=form_names())
def test_every_constructor_parameter_has_a_bad_value(form):
    params = list(inspect.signature(form.cls.__init__).parameters)[1:]
    named = [bad.parameter for bad in form.invalid]
    assert sorted(named) == sorted(params)  # each once, and no name that is not a parameter


# ---------------------------------------------------------------------------------- agreement
def test_names_and_kinds():
    assert form_names() == table_forms() + step_forms() + hardware_forms() == tuple(f.name for f in REGISTRY)
    assert set(table_forms()) == {"thesis", "loglinear", "hybrid", "symbolic"}
    assert set(step_forms()) == {"pollux", "phases"}
    assert set(hardware_forms()) == {"roofline"}
    assert all(f.kind in (TABLE, STEP, HARDWARE) and get(f.name) is f for f in REGISTRY)
    assert all(set(f.needs) <= set(INPUTS) for f in REGISTRY)
    assert set(INPUTS) <= {f.name for f in fields(FitSpec)}  # each input is a field of the fit study
    with pytest.raises(ValueError, match="^form: unknown form 'nope'"):
        get("nope")


def test_the_cli_and_the_fit_study_offer_the_registry_forms():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    action = next(a for a in parser._actions if "--form" in a.option_strings)
    assert list(action.choices) == [*form_names(), "auto"]
    with pytest.raises(ValueError) as err:
        FitSpec(target="t", form="nope")
    assert all(repr(name) in str(err.value) or name in str(err.value) for name in form_names())


def test_the_search_builds_the_table_forms_and_the_step_candidates_the_step_forms():
    cands = form_candidates("auto", **ROLES, network="lenet5")
    assert list(dict.fromkeys(c.form for c in cands)) == [f for f in table_forms() if get(f).candidates_path]
    assert all(type(c.estimator) is get(c.form).cls for c in cands)
    steps = step_candidates(**STEP_COLUMNS, sync_column="sync_time")
    assert [c.form for c in steps] == list(step_forms())
    assert all(type(c.estimator) is get(c.form).cls for c in steps)
    assert all((get(f).candidates_path is None) == (get(f).kind in (STEP, HARDWARE)) for f in form_names())
    for name in table_forms():
        assert type(make_form(name, **ROLES, network="lenet5")) is get(name).cls
    with pytest.raises(ValueError, match="^form: 'pollux' is a step form"):
        make_form("pollux", **ROLES)


def test_the_json_formats_are_the_registry_and_the_wrappers():
    assert set(model_formats()) == SAVED_FORMATS
    assert model_formats() == {**{f.json_format: f.location for f in REGISTRY}, **WRAPPER_FORMATS}
    assert not set(json_formats()) & set(WRAPPER_FORMATS)
    for form in REGISTRY:
        assert form.cls.json_format == form.json_format and issubclass(form.cls, PerformanceForm)
    built_by_the_study = ("MedianOfModels", "BlendOfModels", "CommPriorStepModel", "BoostedStepModel")  # GroupIntervalModel wraps one  # forms that --form does not name
    for module, name in WRAPPER_FORMATS.values():  # the other wrappers hold a form; they are not one
        cls = getattr(__import__(f"perfkit.model.{module}", fromlist=[name]), name)
        assert issubclass(cls, PerformanceForm) == (name in built_by_the_study)


def test_the_registry_imports_no_form():
    code = ("import json, sys, perfkit.model.forms.registry as r; r.form_names(); print(json.dumps(sorted("
            "m for m in sys.modules if m.startswith('perfkit.model.') or m in ('numpy', 'sklearn'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == ["perfkit.model.forms", "perfkit.model.forms.registry"]
