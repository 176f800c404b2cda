"""A study's table checked against its spec before any fit: the target, the roles, the phases, the step columns
and the extrapolation column (:func:`prepare`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..model.validation import (check_levels, first_bad_row, missing_column_error, numeric_column, validate_frame,
                                validate_target)
from .constraints import given, name
from .spec import STEP_ROLES, FitSpec

__all__ = ["prepare", "check_target_spread", "thesis_model"]


def check_target_spread(y, what: str, hint: str = "") -> None:
    """``y`` has at least two different values: a constant target leaves nothing to model and no held-out R²."""
    values = pd.Series(np.asarray(y)).unique()
    if len(values) < 2:
        shown = f"{values[0]:g}" if len(values) else "nothing"
        raise ValueError(f"{what} is constant (every row is {shown}): there is no variation to model and the "
                         f"held-out R² is undefined{hint}")


def prepare(spec: FitSpec, frame) -> tuple:
    """``(X, y)`` of ``frame`` checked for ``spec``: ``X`` the table without the target, ``y`` the target (times
    > 0, not constant) as a float Series. Raises one ``ValueError`` naming the column (and row) at fault."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"data: expected a pandas DataFrame (one row per measured configuration), got "
                         f"{type(frame).__name__}")
    if len(frame) == 0:
        raise ValueError("data: the table has no rows")
    target = spec.target
    if target not in frame.columns:
        raise missing_column_error(frame, target, "target")
    for role, cols in spec.roles.items():
        if target in cols:
            raise ValueError(f"column {target!r} is the {name('target')} and cannot also be {name(role)}")
    if spec.form == "auto" and not (spec.numeric or spec.categorical) and spec.step_roles and not spec.scale_study:
        raise ValueError(f"{given('form', 'auto')}: the table forms it searches need {name('numeric')} or "
                         f"{name('categorical')} columns; with the step columns alone "
                         f"({name('gpus')}/{name('nodes')}/{name('batch')}) fit {given('form', 'phases')} or "
                         f"{given('form', 'pollux')}")
    if spec.split is not None:
        return _prepare_grouped(spec, frame)
    X = frame.drop(columns=[target])
    step_search = spec.form == "auto" and spec.scale_study is not None and spec.step_roles
    if not spec.is_step_form and not step_search:  # a scaling study with the step columns searches step forms only
        thesis_model(spec).check_settings()  # the column roles, before any work
        validate_frame(X, **spec.roles)
    y = pd.Series(validate_target(frame[target], X, name=f"target column {target!r}", positive=True),
                  index=frame.index, name=target)
    check_levels(X, spec.categorical)
    check_target_spread(y, f"target column {target!r}")
    _check_phases(spec, X, y)
    _check_step_columns(spec, X)
    _check_scale_column(spec, X)
    return X, y


def _prepare_grouped(spec: FitSpec, frame) -> tuple:
    """``(X, y)`` of a leave-one-group-out study: the GPU spec columns joined (``hardware``), the roles of the forms
    and baselines checked, the group column present with enough groups."""
    from ..data.gpu_specs import join_hardware
    from ..model.selection.by_group import group_folds
    from .hardware import group_column, hardware_roles

    target = spec.target
    if spec.hardware is not None:
        if spec.hardware == target:
            raise ValueError(f"column {target!r} is the {name('target')} and cannot also be {name('hardware')}")
        specs = _spec_table(spec)
        try:
            frame = join_hardware(frame, spec.hardware, spec.precision, specs)
        except ValueError as exc:
            raise ValueError(_join_error(spec, str(exc))) from None
    X = frame.drop(columns=[target])
    roles = hardware_roles(spec)
    if not any(roles.values()):
        raise ValueError(f"{name('split')} {spec.split}: no column to model; give {name('hardware')}, "
                         f"{name('numeric')} or {name('categorical')} columns")
    validate_frame(X, **roles)
    y = pd.Series(validate_target(frame[target], X, name=f"target column {target!r}", positive=True),
                  index=frame.index, name=target)
    check_levels(X, spec.categorical)
    check_target_spread(y, f"target column {target!r}")
    col, named = group_column(spec)
    if col not in X.columns:
        raise missing_column_error(X, named, name("split"))
    group_folds(X[col].to_numpy(dtype=object), f"{name('split')} {spec.split}")
    return X, y


def _join_error(spec: FitSpec, text: str) -> str:
    """A message of the spec join, opened with the flag at fault (``--precision`` for a bad precision cell)."""
    for key in ("hardware", "precision"):
        if text.startswith(f"{key}: "):
            return f"{name(key)} {getattr(spec, key)}: {text[len(key) + 2:]}"
    if spec.precision and text.startswith(f"column {spec.precision!r}"):
        return f"{name('precision')} {spec.precision}: {text}"
    return f"{name('hardware')} {spec.hardware}: {text}"


def _spec_table(spec: FitSpec):
    """The GPU spec table of ``spec``: the shipped one, or ``gpu_specs`` read and checked (its errors name the
    flag)."""
    from ..data.gpu_specs import load_gpu_specs

    try:
        return load_gpu_specs(spec.gpu_specs)
    except (ValueError, FileNotFoundError) as exc:
        raise type(exc)(f"{name('gpu_specs')} {spec.gpu_specs}: {exc}" if spec.gpu_specs else str(exc)) from None


def thesis_model(spec: FitSpec):
    """The thesis form of ``spec``, unfitted (its settings checked against the roles)."""
    from ..model.forms.generic import GenericPerformanceModel

    return GenericPerformanceModel(**spec.roles, penalty=spec.penalty, lam=spec.lam, method=spec.method,
                                   coding=spec.coding, scale=None if spec.scale == "none" else spec.scale)


def _role_of(spec: FitSpec, col):
    """The parameter that already names ``col`` (target, a role, a step column), or None."""
    if col == spec.target:
        return name("target")
    for role, cols in spec.roles.items():
        if col in cols:
            return name(role)
    for role in STEP_ROLES:
        if col == getattr(spec, role):
            return name(role)
    return None


def _check_phases(spec: FitSpec, X, y) -> None:
    """Each phase column: in the table, no other role (never a feature), numbers, finite, >= 0 and at most the
    row's target (a phase is part of the step)."""
    phases = list(spec.phases)
    flag = name("phases")
    if len(set(phases)) < len(phases):
        raise ValueError(f"{flag} {','.join(phases)}: a column is named twice")
    for col in phases:
        taken = _role_of(spec, col)
        if taken:
            raise ValueError(f"column {col!r} is {taken} and cannot also be {flag} (a measured phase is read in fit "
                             "only, never as a feature of the configuration)")
        if col not in X.columns:
            raise missing_column_error(X, col, flag)
        v = numeric_column(X, col, flag)
        at = first_bad_row(v < 0, X.index)
        if at:
            raise ValueError(f"{flag} column {col!r}: value {v[at[0]]:g} in row {at[1]!r} is negative; a measured "
                             "phase is a time >= 0 (seconds per step)")
        at = first_bad_row(v > np.asarray(y, dtype=float), X.index)
        if at:
            raise ValueError(f"{flag} column {col!r}: value {v[at[0]]:g} in row {at[1]!r} is more than the row's "
                             f"{name('target')} {spec.target!r} ({np.asarray(y)[at[0]]:g}); a measured phase is part "
                             "of the step (the same units?)")


def _check_step_columns(spec: FitSpec, X) -> None:
    """The step columns present, none the target; whole counts, nodes <= GPUs, batch > 0."""
    step = spec.step_roles
    if not step:
        return
    from ..model.forms.stepmodels import step_columns

    for role, col in step.items():
        if col == spec.target:
            raise ValueError(f"column {col!r} is the {name('target')} and cannot also be {name(role)}")
        if col not in X.columns:
            raise missing_column_error(X, col, name(role))
    step_columns(X, step["gpus"], step["nodes"], step["batch"])


def _check_scale_column(spec: FitSpec, X) -> None:
    """The column of ``extrapolate`` (or of a scaling study, ``scale_of``): present, numbers > 0, read by the model,
    neither the target nor a phase."""
    if spec.extrapolate is not None:
        col, _ = spec.scale_column
        flag, text = name("extrapolate"), spec.extrapolate
    elif spec.scale_study is not None:
        col = spec.scale_study
        flag, text = name("scale_of"), col
    else:
        return
    if col == spec.target or col in spec.phases:
        what = name("target") if col == spec.target else f"{name('phases')} column"
        raise ValueError(f"{flag} {text}: column {col!r} is the {what}; extrapolate along a column of the "
                         "configuration (GPUs, nodes, batch)")
    if col not in X.columns:
        raise missing_column_error(X, col, flag)
    v = numeric_column(X, col, flag)
    at = first_bad_row(v <= 0, X.index)
    if at:
        raise ValueError(f"{flag} column {col!r}: value {v[at[0]]:g} in row {at[1]!r} is not > 0 (the "
                         "extrapolation factor is the value / MAX)")
    read = [*spec.numeric, *spec.extrinsic, *(spec.step_roles or {}).values()]
    if col not in read:
        raise ValueError(f"{flag} {text}: column {col!r} is not one the model reads (it reads "
                         f"{', '.join(map(repr, read)) or 'no numeric column'}); extrapolate along a numeric column of "
                         f"the configuration ({name('numeric')}, {name('extrinsic')}, {name('gpus')}, {name('nodes')} "
                         f"or {name('batch')})")
