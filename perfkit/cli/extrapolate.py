"""``perfkit fit`` measuring small and predicting large: the measured phases (``--phases``), the step forms
(``--form pollux|phases`` with ``--gpus/--nodes/--batch``) and the extrapolation split (``--extrapolate
COL[:MAX]``): the checks of their columns, the split, the models with widening intervals, and the report by
extrapolation factor.

Imported by :mod:`perfkit.cli.fitting` only when a fit runs.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..model.scale_intervals import MIN_INNER_FIT, MIN_INNER_TEST, ScaleIntervalModel, default_fit_max, inner_splits
from ..model.stepmodels import STEP_FORMS, step_columns
from ..model.validation import column_list, first_bad_row, missing_column_error, numeric_column, target_column
from .fit_checks import AUTO, MIN_HELD_OUT, PHASE_FORM, STEP_FLAGS, parse_extrapolate, uses_phases

__all__ = ["check_measure_columns", "extrapolation_split", "phases_line", "step_form", "step_roles",
           "baseline_roles", "scale_model", "factor_table", "fitted_baselines", "print_factor_table",
           "inner_comparison", "print_inner_comparison",
           "MAX_FACTOR_ROWS"]

#: with more distinct extrapolation factors than this, the table groups them by doubling (1-2×, 2-4×, ...)
MAX_FACTOR_ROWS = 12


def step_roles(args) -> dict | None:
    """``{"gpus": COL, "nodes": COL, "batch": COL}`` of the step flags, or None when they are not given."""
    if args.gpus is None:
        return None
    return {f: getattr(args, f).strip() for f in STEP_FLAGS}


def _role_of(col, roles, step, target):
    """The flag that already names ``col`` (``--target``, ``--numeric`` ..., ``--gpus`` ...), or None."""
    if col == target:
        return "--target"
    for role, cols in roles.items():
        if col in cols:
            return f"--{role}"
    for flag, c in (step or {}).items():
        if col == c:
            return f"--{flag}"
    return None


def _check_phases(X, y, phases, roles, step, target) -> None:
    """Each ``--phases`` column: in the CSV, no other role (never a feature), numbers, finite, >= 0 and at most the
    row's ``--target`` ``y`` (a phase is part of the step)."""
    if len(set(phases)) < len(phases):
        raise ValueError(f"--phases {','.join(phases)}: a column is named twice")
    for col in phases:
        taken = _role_of(col, roles, step, target)
        if taken:
            raise ValueError(f"column {col!r} is {taken} and cannot also be --phases (a measured phase is read in fit "
                             "only, never as a feature of the configuration)")
        if col not in X.columns:
            raise missing_column_error(X, col, "--phases")
        v = numeric_column(X, col, "--phases")
        at = first_bad_row(v < 0, X.index)
        if at:
            raise ValueError(f"--phases column {col!r}: value {v[at[0]]:g} in row {at[1]!r} is negative; a measured "
                             "phase is a time >= 0 (seconds per step)")
        at = first_bad_row(v > np.asarray(y, dtype=float), X.index)
        if at:
            raise ValueError(f"--phases column {col!r}: value {v[at[0]]:g} in row {at[1]!r} is more than the row's "
                             f"--target {target!r} ({np.asarray(y)[at[0]]:g}); a measured phase is part of the step "
                             "(the same units?)")


def check_measure_columns(args, X, y, roles) -> list:
    """The columns of ``--phases``, the step flags and ``--extrapolate`` checked against the data ``X`` (the CSV
    without its target ``y``) and the roles, before any fit; returns the phase columns."""
    phases = column_list("phases", args.phases)
    step = step_roles(args)
    _check_phases(X, y, phases, roles, step, args.target)
    if step:
        for flag, col in step.items():
            if col == args.target:
                raise ValueError(f"column {col!r} is the --target and cannot also be --{flag}")
            if col not in X.columns:
                raise missing_column_error(X, col, f"--{flag}")
        step_columns(X, step["gpus"], step["nodes"], step["batch"])  # whole counts, nodes <= GPUs, batch > 0
    if args.extrapolate is not None:
        col, _ = parse_extrapolate(args.extrapolate)
        if col == args.target or col in phases:
            raise ValueError(f"--extrapolate {args.extrapolate}: column {col!r} is the "
                             f"{'--target' if col == args.target else '--phases column'}; extrapolate along a "
                             "column of the configuration (GPUs, nodes, batch)")
        if col not in X.columns:
            raise missing_column_error(X, col, "--extrapolate")
        v = numeric_column(X, col, "--extrapolate")
        at = first_bad_row(v <= 0, X.index)
        if at:
            raise ValueError(f"--extrapolate column {col!r}: value {v[at[0]]:g} in row {at[1]!r} is not > 0 (the "
                             "extrapolation factor is the value / MAX)")
        read = [*roles["numeric"], *roles["extrinsic"], *(step.values() if step else ())]
        if col not in read:
            raise ValueError(f"--extrapolate {args.extrapolate}: column {col!r} is not one the model reads (it reads "
                             f"{', '.join(map(repr, read)) or 'no numeric column'}); extrapolate along a numeric "
                             "column of the configuration (--numeric, --extrinsic, --gpus, --nodes or --batch)")
    return phases


def extrapolation_split(args, X, y, min_fit: int):
    """``((X_fit, X_test, y_fit, y_test), (COL, MAX))``: fit on the rows with COL <= MAX, test on the rows beyond.

    MAX defaults to the largest value of COL that is at most half its largest
    (:func:`~perfkit.model.scale_intervals.default_fit_max`), so that the held-out rows reach at least twice the
    fitted maximum. Refused: fewer than ``min_fit`` fit rows or :data:`~perfkit.cli.fit_checks.MIN_HELD_OUT`
    test rows; for a model with intervals (every form but a thesis form without ``--calibrate``), fit rows that
    leave no inner split (:func:`~perfkit.model.scale_intervals.inner_splits`)."""
    col, top = parse_extrapolate(args.extrapolate)
    v = np.asarray(X[col], dtype=float)
    if top is None:
        top = default_fit_max(v)
        if top is None:
            raise ValueError(f"--extrapolate {col}: no value of {col!r} is at most half its largest ({v.max():g}), "
                             f"so no default MAX; give one, e.g. --extrapolate {col}:{np.unique(v)[0]:g}")
    fit = v <= top
    n_fit, n_test = int(fit.sum()), int((~fit).sum())
    where = f"--extrapolate {col}:{top:g}"
    if n_fit < min_fit or n_test < MIN_HELD_OUT:
        raise ValueError(f"{where}: {n_fit} rows have {col} <= {top:g} and {n_test} lie above it; the fit needs at "
                         f"least {min_fit} rows and the test at least {MIN_HELD_OUT} (values of {col}: "
                         f"{_values(v)}); give another MAX")
    if (args.form != "thesis" or args.calibrate) and not inner_splits(v[fit], top):
        raise ValueError(f"{where}: the {n_fit} fit rows leave no inner split to calibrate the intervals that widen "
                         f"with the distance (fit on the rows with {col} up to {top / 4:g} or {top / 2:g}, at least "
                         f"{MIN_INNER_FIT}, score at least {MIN_INNER_TEST} rows above, up to {top:g}); give a "
                         "larger MAX")
    split = (X[fit], X[~fit], y[fit], y[~fit])
    return split, (col, float(top))


def _values(v) -> str:
    u = np.unique(v)
    shown = ", ".join(f"{x:g}" for x in u[:12])
    return shown + (" ..." if len(u) > 12 else "")


def phases_line(args, phases) -> str:
    """The line that says which forms use the ``--phases`` columns and which ignore them ("" without phases)."""
    if not phases:
        return ""
    names = ",".join(phases)
    if args.form == PHASE_FORM:
        return (f"--phases {names}: the phases form is fitted with it as the measured synchronisation time per step "
                "(in fit only: predictions need the configuration alone)")
    if uses_phases(args):
        return (f"--phases {names}: the phases candidate is fitted with it (in fit only); the other candidates "
                "cannot use measured phases and ignore it")
    which = ("the forms searched (thesis, loglinear, hybrid)" if args.form == AUTO else f"the {args.form} form")
    hint = "; the phases form can (--form phases or auto with --gpus, --nodes, --batch)"
    return f"--phases {names}: {which} cannot use measured phases: ignored (never read as features){hint}"


def step_form(args, phases):
    """The unfitted step form of ``--form pollux|phases`` on the columns of the step flags."""
    step = step_roles(args)
    cls = STEP_FORMS[args.form]
    extra = {"sync_column": phases[0]} if args.form == PHASE_FORM else {}
    return cls(step["gpus"], step["nodes"], step["batch"], **extra)


def baseline_roles(args, roles) -> dict:
    """The roles the random forest and gradient boosting read: the form's, with the step columns as extrinsic."""
    step = step_roles(args) or {}
    taken = {c for cols in roles.values() for c in cols}
    extra = [c for c in step.values() if c not in taken]
    return {**roles, "extrinsic": [*roles["extrinsic"], *extra]}


def scale_model(estimator, scale, phases, X_tr, y_tr, fitted=None, inflation=1.0) -> ScaleIntervalModel:
    """``estimator`` with intervals that widen beyond ``scale`` = (COL, MAX), calibrated on the inner splits of
    the fit rows (fitted on them unless ``fitted``, the same form already fitted on ``X_tr``, is given), their
    half-width multiplied by ``inflation`` (κ, ``--inflation``)."""
    col, top = scale
    splits = inner_splits(np.asarray(X_tr[col], dtype=float), top)
    model = ScaleIntervalModel(estimator, column=col, fit_max=top, splits=splits, phases=list(phases),
                               inflation=inflation)
    return model.fit(X_tr, y_tr) if fitted is None else model.calibrate(fitted, X_tr, y_tr)


def _factor_labels(values, top):
    """Per row its extrapolation factor's label (``2×``; by doubling, ``1-2×``, with many factors) and sort key."""
    f = np.asarray(values, dtype=float) / top
    if len(np.unique(f)) <= MAX_FACTOR_ROWS:
        return [f"{x:.3g}×" for x in f], f
    hi = 2.0 ** np.ceil(np.log2(f) - 1e-9)
    return [f"{h / 2:g}-{h:g}×" for h in hi], hi


def factor_table(predictions: dict, y, values, scale) -> pd.DataFrame:
    """MAPE (%) of each model's ``predictions`` (name → array) on the test rows by extrapolation factor
    (COL / MAX) and over all: rows ``factor``, columns COL (the values), ``rows`` and one per model."""
    col, top = scale
    labels, keys = _factor_labels(values, top)
    y = np.asarray(y, dtype=float)
    ape = {name: 100.0 * np.abs(np.asarray(p, dtype=float) - y) / y for name, p in predictions.items()}
    frame = pd.DataFrame({"factor": labels, "key": keys, col: np.asarray(values, dtype=float), **ape})
    rows = []
    for (label, _), g in frame.groupby(["factor", "key"], sort=False):
        lo, hi = g[col].min(), g[col].max()
        rows.append({"factor": label, "_k": g["key"].iloc[0], col: f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}",
                     "rows": len(g), **{n: g[n].mean() for n in predictions}})
    out = pd.DataFrame(rows).sort_values("_k").drop(columns="_k")
    total = {"factor": "all", col: "", "rows": len(frame), **{n: frame[n].mean() for n in predictions}}
    return pd.concat([out, pd.DataFrame([total])], ignore_index=True)


def fitted_baselines(args, roles, X_tr, y_tr) -> dict:
    """The random forest and gradient boosting (on :func:`baseline_roles`) fitted on the fit rows, so that the
    held-out table and the table by factor score the same fits."""
    from ..model.baselines import make_baseline

    broles = baseline_roles(args, roles)
    out = {"random forest": make_baseline("rf", **broles, random_state=0, n_jobs=args.jobs),
           "gradient boosting": make_baseline("gb", **broles, random_state=0)}
    return {name: m.fit(X_tr, np.asarray(y_tr, dtype=float)) for name, m in out.items()}


def inner_comparison(estimators: dict, X_tr, y_tr, scale, phases=()) -> dict:
    """Name → MAPE (%) of each unfitted estimator of ``estimators`` on the inner extrapolation splits of the fit rows
    (:func:`~perfkit.model.scale_intervals.inner_splits`, those that calibrate the intervals), averaged over the
    splits; empty without a split. Fit rows only: the held-out rows are never read."""
    from ..model.extrapolation import select_by_extrapolation

    col, top = scale
    splits = inner_splits(np.asarray(X_tr[col], dtype=float), top)
    if not splits:
        return {}
    target = target_column(X_tr)
    frame = X_tr.assign(**{target: np.asarray(y_tr, dtype=float)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, scores = select_by_extrapolation(estimators, frame, col, target, splits, groups=None,
                                            predict_drop=list(phases))
    score = dict(zip(scores.candidate, scores.score))
    return {name: float(score[name]) for name in estimators}


def print_inner_comparison(args, roles, form_name: str, estimator, X_tr, y_tr, scale, phases=()) -> None:
    """One line with the MAPE (%) of the form and of the baselines on the inner splits of the fit rows: what the fit
    rows alone say of extrapolating this range (a hint, not a verdict: on Sia's dgx traces their preference for a
    forest held beyond MAX, on Pollux's cifar10 job it did not; ``benchmarks/results/scale_clusters.md``)."""
    from ..model.baselines import make_baseline

    broles = baseline_roles(args, roles)
    models = {form_name: estimator,
              "random forest": make_baseline("rf", **broles, random_state=0, n_jobs=args.jobs),
              "gradient boosting": make_baseline("gb", **broles, random_state=0)}
    try:
        mape = inner_comparison(models, X_tr, y_tr, scale, phases)
    except ValueError as exc:  # e.g. a level the inner fit rows lack: the comparison is left out, not the fit
        print(f"\ninner splits of the fit rows: no comparison ({str(exc).splitlines()[0]})")
        return
    if not mape:
        return
    print("\ninner splits of the fit rows (extrapolating within them, the rows beyond MAX unseen): MAPE (%) "
          + ", ".join(f"{name} {v:.3g}" for name, v in mape.items()))


def print_factor_table(models: dict, X_te, y_te, scale) -> None:
    """The MAPE (%) of each fitted model of ``models`` on the held-out rows by extrapolation factor."""
    col, top = scale
    preds = {name: m.predict(X_te) for name, m in models.items()}
    table = factor_table(preds, y_te, X_te[col], scale)
    print(f"\nextrapolation errors: MAPE (%) of the {len(X_te)} held-out rows ({col} > {top:g}; fitted on {col} <= "
          f"{top:g}) by factor {col} / {top:g}:")
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
