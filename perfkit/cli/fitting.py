"""The work of ``perfkit fit``: read and split the data, fit, compare with baselines, save.

Imported by :func:`perfkit.cli.fit.run` only when a fit runs, so that the
other commands do not load the model and its libraries.
"""
from __future__ import annotations

import math
import sys
import time
import warnings

import pandas as pd
from sklearn.base import clone

from .._io import check_output, is_perfkit_model, read_csv
from ..model.baselines import compare_models, make_baseline, train_test_split_frame
from ..model.fitting import RepeatedFit, fit_repeated, parameters_on_bounds
from ..model.generic import ConstantColumnWarning, GenericPerformanceModel
from ..model.intervals import ConformalRegressor, ExtrapolationWarning, coverage_of, predictable_rows
from ..model.roles import IgnoredColumnWarning
from ..model.search import make_form, search_forms, step_candidates
from ..model.stepmodels import STEP_FORMS
from ..model.validation import check_levels, column_list, missing_column_error, validate_frame, validate_target
from .common import duration, pairs, print_warnings
from .extrapolate import (check_measure_columns, extrapolation_split, fitted_baselines, phases_line,
                          print_factor_table, print_inner_comparison, scale_model, step_form, step_roles)
from .fit_checks import (AUTO, DEFAULT_FORM, DEFAULT_PENALTY, DEFAULT_TEST_SIZE, check_fit_flags, check_form_flags,
                         check_target_spread, held_out_rows)

__all__ = ["fit_command", "fit_other_form", "fit_thesis_form", "prepare"]

#: the columns of the held-out comparison table that are printed
ERROR_COLUMNS = ["MAPE", "R2", "MAE", "RMSE"]


def fit_command(args) -> None:
    """``perfkit fit`` after argparse: the checks, then the thesis form's seeds or another form (see
    :func:`perfkit.cli.fit.run`)."""
    check_fit_flags(args)
    check_output(args.out, "--out", inputs=[args.csv], ours=is_perfkit_model)
    model, roles, fixed, split, scale, phases = prepare(args)
    if phases:
        print(phases_line(args, phases), flush=True)
    with warnings.catch_warnings():
        # the CSV's other columns are expected here: the roles given on the command line say what is read
        warnings.simplefilter("ignore", IgnoredColumnWarning)
        if args.form != DEFAULT_FORM:
            return fit_other_form(args, roles, fixed, *split, scale=scale, phases=phases)
        fit_thesis_form(args, model, roles, *split, scale=scale, phases=phases)


def prepare(args):
    """``(unfitted thesis-form model, column roles, --fixed constants, (X_tr, X_te, y_tr, y_te), scale, phases)``,
    all checked: ``scale`` (COL, MAX) of ``--extrapolate`` or None; ``phases`` the ``--phases`` columns, dropped
    from ``X_te`` (the held-out rows are predicted from the configuration alone)."""
    df = read_csv(args.csv, "data CSV", na_is_level=args.na_is_level, require_rows=True)
    if args.target not in df.columns:
        raise missing_column_error(df, args.target, "target")
    roles = dict(numeric=column_list("numeric", args.numeric), categorical=column_list("categorical", args.categorical),
                 extrinsic=column_list("extrinsic", args.extrinsic))
    for role, cols in roles.items():
        if args.target in cols:
            raise ValueError(f"column {args.target!r} is the --target and cannot also be --{role}")
    penalty = None if args.penalty == DEFAULT_PENALTY else args.penalty
    model = GenericPerformanceModel(**roles, penalty=penalty, lam=args.lam, method=args.method, coding=args.coding,
                                    scale=None if args.scale == "none" else args.scale)
    check_form_flags(args)
    if args.form == AUTO and not (roles["numeric"] or roles["categorical"]) and step_roles(args):
        raise ValueError("--form auto: the table forms it searches need --numeric or --categorical columns; with "
                         "the step columns alone (--gpus/--nodes/--batch) fit --form phases or --form pollux")
    if args.form not in STEP_FORMS:  # the step forms read --gpus/--nodes/--batch instead
        model.check_settings()  # the column roles, before any work
    fixed = pairs(args.fixed, "--fixed")
    X = df.drop(columns=[args.target])
    if args.form not in STEP_FORMS:
        validate_frame(X, **roles)
    y = pd.Series(validate_target(df[args.target], X, name=f"target column {args.target!r}", positive=True),
                  index=df.index, name=args.target)
    check_levels(X, roles["categorical"])
    check_target_spread(y, f"target column {args.target!r}")
    phases = check_measure_columns(args, X, y, roles)
    split, scale = _split(args, X, y)
    return model, roles, fixed, (split[0], split[1].drop(columns=phases), split[2], split[3]), scale, phases


def _split(args, X, y):
    """The fit and held-out rows: the rows beyond ``--extrapolate COL[:MAX]`` (and (COL, MAX)), or a random
    ``--test-size`` share (and None)."""
    uses_folds = args.form != DEFAULT_FORM or args.calibrate  # the form search and the intervals refit on folds
    folds = args.cv * (2 if args.form == AUTO else 1) if uses_folds else 2  # the search needs 2 rows per fold
    needs = "the form search needs 2·cv" if args.form == AUTO else "the intervals need cv"
    if uses_folds and folds > len(X) - 2:  # named before a split's own limits would blame --test-size or MAX
        raise ValueError(f"--cv {args.cv}: {needs} = {folds} rows to fit, and the data has {len(X)} rows (at least 2 "
                         "are held out); give a smaller --cv")
    if args.extrapolate is not None:
        split, scale = extrapolation_split(args, X, y, 2)
        hint = f"; give another MAX (--extrapolate {scale[0]}:MAX)"
    else:
        n_test = held_out_rows(DEFAULT_TEST_SIZE if args.test_size is None else args.test_size, len(X),
                               min_fit=2)
        split, scale = tuple(train_test_split_frame(X, y, test_size=n_test, random_state=0)), None
        hint = "; give another --test-size"
    if uses_folds and len(split[0]) < folds:
        n_fit, n_test = len(split[0]), len(split[1])
        if scale:
            where = f"--extrapolate {scale[0]}:{scale[1]:g} leaves {n_fit} rows to fit"
        else:
            where = (f"--test-size {DEFAULT_TEST_SIZE if args.test_size is None else args.test_size:g}: holding out "
                     f"{n_test} of the {len(X)} rows leaves {n_fit} to fit")
        raise ValueError(f"{where}; the fit needs at least {folds} (--cv {args.cv}: {needs} = {folds}); give a "
                         "smaller --cv" + (" or a larger MAX" if scale else " or a smaller --test-size"))
    check_target_spread(split[3], f"target column {args.target!r} on the {len(split[3])} held-out rows", hint=hint)
    return split, scale


def _held_out(X_te, scale) -> str:
    """"40 rows held out" (and where, with --extrapolate)."""
    return f"{len(X_te)} rows held out" + (f" ({scale[0]} > {scale[1]:g})" if scale else "")


def _fit_seeds(args, model, X_tr, y_tr) -> RepeatedFit:
    """Seed 0 alone (timed, its warnings printed), then seeds 1..N-1 in parallel with the time left on stderr."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = fit_repeated(model, X_tr, y_tr, seeds=[0], n_jobs=1, progress=False)
    print_warnings(caught)
    took = time.perf_counter() - start
    models, seeds = list(first.models), [0]
    if args.seeds > 1:
        from joblib import effective_n_jobs

        rest = args.seeds - 1
        workers = max(1, min(rest, effective_n_jobs(args.jobs)))
        print(f"seed 1/{args.seeds} took {duration(took)}; about {duration(took * math.ceil(rest / workers))} "
              f"left ({rest} more, {workers} at a time)", file=sys.stderr, flush=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstantColumnWarning)  # already reported for seed 1
            more = fit_repeated(model, X_tr, y_tr, seeds=range(1, args.seeds), n_jobs=args.jobs, desc="seeds")
        models += more.models
        seeds += more.seeds
    return RepeatedFit(models=models, seeds=seeds)


def _print_seeds(args, rep: RepeatedFit, roles, X_tr, X_te, y_tr, y_te, baselines=None) -> None:
    """The best objective and how many seeds reached it, the parameters, and the held-out errors beside a forest's."""
    best = rep.best
    print(f"\nbest objective {best.objective_:.6g}; {rep.n_agree} of {len(rep.models)} seeds reached it "
          f"(to {rep.AGREE_RTOL:g} relative); spread over seeds {rep.objective_spread:.2g} (relative)")
    if not rep.converged:
        print("perfkit: warning: the fit may not have converged: "
              + ("only one seed reached the best objective; run more --seeds" if rep.n_agree < 2 else
                 "the final refinement stopped at its iteration limit"), file=sys.stderr)
    with pd.option_context("display.width", 160, "display.max_rows", 200, "display.float_format", "{:.4g}".format):
        print("\nparameters (best seed):")
        print(best.params_.drop(columns=["column", "level"]).to_string(index=False))
        if args.seeds > 1:
            s = rep.summary()
            cols = [c for c in s.columns if c.endswith(("_mean", "_std")) and s[c].notna().any()]
            print(f"\nmean ± std over {args.seeds} seeds:")
            print(s[["term"] + cols].to_string(index=False))
        others = baselines or {"random forest": make_baseline("rf", **roles, random_state=0, n_jobs=args.jobs)}
        table = compare_models({"generic model": best, **others}, X_tr, y_tr, X_te, y_te,
                               prefitted={"generic model", *(baselines or {})})
        print("\nheld-out errors:")
        print(table[ERROR_COLUMNS].to_string())


def _calibrate(args, best, X_tr, y_tr) -> ConformalRegressor:
    """``--calibrate``: conformal intervals around refits of the best seed's settings."""
    from sklearn.base import clone

    print(f"calibrating 90 %-style intervals: {args.cv} more fits of the best seed's settings", file=sys.stderr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantColumnWarning)
        return ConformalRegressor(clone(best), method=args.intervals, n_splits=args.cv,
                                  random_state=0).fit(X_tr, y_tr)


def _report_then_save(model, out: str, report, saved: str = "") -> None:
    """``report()`` (the held-out comparison), then ``model`` saved to ``out`` — saved even when the report
    fails, so a finished fit is never lost; the report's error then says where the model is."""
    try:
        report()
    except ValueError as exc:
        model.to_json(out)
        raise ValueError(f"{exc} (the fitted model is saved in {out})") from None
    model.to_json(out)  # atomic: a crash never leaves half a model
    print(f"\nsaved {out}{saved}")


def fit_thesis_form(args, model, roles, X_tr, X_te, y_tr, y_te, scale=None, phases=()) -> None:
    """``perfkit fit --form thesis``: ``--seeds`` fits, the best kept (calibrated with ``--calibrate``: intervals
    that widen with the distance with ``--extrapolate``), compared on the held-out rows, saved."""
    print(f"fitting the generic model on {len(X_tr)} rows ({args.seeds} seeds, {args.method} engine); "
          f"{_held_out(X_te, scale)}", flush=True)
    rep = _fit_seeds(args, model, X_tr, y_tr)
    on_bounds = parameters_on_bounds(rep.best)
    if on_bounds:
        why = ("a, κ and C in [0, 1000] assume times in seconds with --scale none: is the target in seconds?"
               if rep.best.scales_ is None else "a, κ and C in [0, 1000] times the median time; q and p in [-5, 5]")
        print(f"perfkit: warning: {'; '.join(on_bounds)}: the fit is limited by the bounds of its parameters "
              f"({why})", file=sys.stderr, flush=True)
    best = rep.best
    if args.calibrate:
        best = (_calibrate(args, rep.best, X_tr, y_tr) if scale is None
                else scale_model(clone(rep.best), scale, phases, X_tr, y_tr, fitted=rep.best,
                                 inflation=args.inflation))

    def report():
        baselines = fitted_baselines(args, roles, X_tr, y_tr) if scale else None
        _print_seeds(args, rep, roles, X_tr, X_te, y_tr, y_te, baselines)
        if args.calibrate:
            _print_coverage(best, X_te, y_te, scale)
        if scale:
            print_inner_comparison(args, roles, "generic model", clone(rep.best), X_tr, y_tr, scale, phases)
            print_factor_table({"generic model": rep.best, **baselines}, X_te, y_te, scale)

    _report_then_save(best, args.out, report)


def _search(args, roles, fixed, X_tr, X_te, y_tr, scale, phases):
    """``--form auto``: the form search (with the step forms given their flags; chosen by inner extrapolation
    splits with ``--extrapolate``), its table printed; the choice with its intervals."""
    options = {"hybrid": {"fixed": fixed}, "symbolic": {"fixed": fixed}} if fixed else None
    step = step_roles(args)
    extra = step_candidates(**step, sync_column=phases[0] if phases else None) if step else []
    how = f"{args.cv}-fold CV" + (" and inner extrapolation splits" if scale else "")
    print(f"form search on {len(X_tr)} rows ({how}); {_held_out(X_te, scale)}", flush=True)
    by_scale = dict(select="extrapolation", extrapolate=scale, predict_drop=phases) if scale else \
        dict(select=args.select or "1se")
    search = search_forms(X_tr, y_tr, **roles, network=args.network, cv=args.cv, n_jobs=args.jobs,
                          progress=True, options=options, intervals=args.intervals, extra_candidates=extra,
                          reference=not args.no_reference, **by_scale)
    print("\n" + search.summary())
    if scale is None:
        return search.model_
    model = scale_model(search.candidates[search.chosen].estimator, scale, phases, X_tr, y_tr,
                        fitted=search.estimator_, inflation=args.inflation)
    print("\n" + model.summary().splitlines()[-1])
    return model


def _fit_or_search(args, roles, fixed, X_tr, X_te, y_tr, scale=None, phases=()):
    """The calibrated model of ``--form`` (or the form search's choice with ``--form auto``), its summary printed;
    with ``--extrapolate`` its intervals widen with the distance beyond the fit rows."""
    if args.form == AUTO:
        return _search(args, roles, fixed, X_tr, X_te, y_tr, scale, phases)
    if args.form in STEP_FORMS:
        est = step_form(args, phases)
    else:
        est = make_form(args.form, **roles, network=args.network, **({"fixed": fixed} if fixed else {}))
    print(f"fitting the {args.form} form on {len(X_tr)} rows; {_held_out(X_te, scale)}", flush=True)
    if scale is not None:
        model = scale_model(est, scale, phases, X_tr, y_tr, inflation=args.inflation)
        print("\n" + model.summary())
        return model
    model = ConformalRegressor(est, method=args.intervals, n_splits=args.cv, random_state=0).fit(X_tr, y_tr)
    print("\n" + model.estimator_.summary())
    return model


def fit_other_form(args, roles, fixed, X_tr, X_te, y_tr, y_te, scale=None, phases=()) -> None:
    """``perfkit fit --form loglinear|hybrid|pollux|phases|auto``: fit (or search), calibrate intervals, compare,
    save."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _fit_or_search(args, roles, fixed, X_tr, X_te, y_tr, scale, phases)
    print_warnings(caught)
    print(f"\nfit and calibration took {duration(time.perf_counter() - start)}")
    widen = f" that widen beyond {scale[0]} = {scale[1]:g}" if scale else ""
    _report_then_save(model, args.out, lambda: _compare_other(args, model, roles, X_tr, X_te, y_tr, y_te, scale),
                      saved=f" (with its intervals{widen}: perfkit predict {args.out} CONFIGS.csv --interval 0.9)")


def _print_coverage(model, X_te, y_te, scale) -> None:
    """The share of the held-out rows inside the model's 90 % intervals."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if scale:  # every held-out row lies beyond the fit rows by design: no warning for each
            warnings.simplefilter("ignore", ExtrapolationWarning)
        iv = model.predict_interval(X_te, 0.9)
    print_warnings(caught)
    widen = f" (widening with the distance beyond {scale[0]} = {scale[1]:g})" if scale else ""
    print(f"90 % intervals{widen} cover {100 * coverage_of(iv, y_te):.1f} % of the {len(y_te)} held-out rows")


def _compare_other(args, model, roles, X_tr, X_te, y_tr, y_te, scale=None) -> None:
    """The held-out coverage of ``model``'s 90 % intervals and its errors beside a forest's and boosting's."""
    ok = predictable_rows(model, X_tr, X_te, roles["categorical"])
    if not ok.all():  # e.g. a hybrid with rates by shape, and a held-out combination of levels the fit never had
        print(f"{int((~ok).sum())} of {len(X_te)} held-out rows have a combination of levels the chosen model has "
              f"no rate for; every model is scored on the other {int(ok.sum())}")
        X_te, y_te = X_te[ok], y_te[ok]
    _print_coverage(model, X_te, y_te, scale)
    name = f"{args.form} model"
    if scale or step_roles(args):  # fitted here once, for both tables; on the step columns too
        baselines = fitted_baselines(args, roles, X_tr, y_tr)
    else:
        baselines = {"random forest": make_baseline("rf", **roles, random_state=0, n_jobs=args.jobs),
                     "gradient boosting": make_baseline("gb", **roles, random_state=0)}
    models = {name: model, **baselines}
    with pd.option_context("display.width", 160, "display.float_format", "{:.4g}".format):
        table = compare_models(models, X_tr, y_tr, X_te, y_te,
                               prefitted={name, *(baselines if scale or step_roles(args) else ())})
        print("\nheld-out errors:")
        print(table[ERROR_COLUMNS].to_string())
    if scale:
        print_inner_comparison(args, roles, name, model.estimator, X_tr, y_tr, scale, model.phases)
        print_factor_table(models, X_te, y_te, scale)
