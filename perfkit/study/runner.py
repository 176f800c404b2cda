"""Run a fit study: :func:`run` checks the data against the spec, splits it, fits (or searches), calibrates, and
sets the baselines, the held-out errors, the errors by extrapolation factor and the inner comparison beside the
model, in a :class:`~perfkit.study.result.StudyResult`."""
from __future__ import annotations

import math
import sys
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..model.roles import IgnoredColumnWarning
from ..progress import duration
from .compare import baselines, factor_table, held_out_table, inner_comparison
from .constraints import name
from .data import prepare
from .result import StudyError, StudyResult, StudyWarning
from .spec import AUTO, DEFAULT_FORM, PHASE_FORM, FitSpec
from .split import Split, split

__all__ = ["run", "phases_note"]


def _say(progress: bool, text: str) -> None:
    if progress:
        print(text, file=sys.stderr, flush=True)


def phases_note(spec: FitSpec) -> str:
    """The line that says which forms use the phase columns and which ignore them ("" without phases)."""
    if not spec.phases:
        return ""
    from .constraints import given

    names = ",".join(spec.phases)
    flag = name("phases")
    if spec.form == PHASE_FORM:
        return (f"{flag} {names}: the phases form is fitted with it as the measured synchronisation time per step "
                "(in fit only: predictions need the configuration alone)")
    if spec.uses_phases and spec.scale_study is not None:
        return (f"{flag} {names}: the phase-aware candidates are fitted with it (in fit only); Pollux's model "
                "cannot use measured phases and ignores it")
    if spec.uses_phases:
        return (f"{flag} {names}: the phases candidate is fitted with it (in fit only); the other candidates "
                "cannot use measured phases and ignore it")
    which = "the forms searched (thesis, loglinear, hybrid)" if spec.form == AUTO else f"the {spec.form} form"
    hint = (f"; the phases form can ({given('form', 'phases')} or auto with {name('gpus')}, {name('nodes')}, "
            f"{name('batch')})")
    return f"{flag} {names}: {which} cannot use measured phases: ignored (never read as features){hint}"


def run(spec: FitSpec, data, *, progress: bool = True, echo=None) -> StudyResult:
    """Run the study ``spec`` on ``data`` (a DataFrame, one row per measured configuration).

    Every check of the data and of the split runs before the first fit. ``echo`` (a callable taking a line, e.g.
    ``print``) receives the lines that say what is about to run, as they happen (they also open
    :meth:`StudyResult.summary`); with ``progress`` the time left and the seeds' progress go to stderr. Warnings
    (bounds reached, seeds that disagree, rows outside the fitted ranges) are issued as Python warnings.

    Raises ``ValueError`` naming the parameter, column or row at fault; :class:`~perfkit.study.result.StudyError`
    (a ``ValueError``) when the model was fitted but its comparison failed: its ``model`` keeps the fit.
    """
    if not isinstance(spec, FitSpec):
        raise ValueError(f"spec: expected a perfkit.study.FitSpec, got {type(spec).__name__}")
    X, y = prepare(spec, data)
    say = echo or (lambda line: None)
    if spec.split is not None:  # leave one group out: its own runner
        from .grouped import run_grouped

        return run_grouped(spec, X, y, say, progress)
    sp = split(spec, X, y)
    header = [line for line in (phases_note(spec),) if line]
    for line in header:
        say(line)
    with warnings.catch_warnings():
        # the table's other columns are expected here: the spec's roles say what is read
        warnings.simplefilter("ignore", IgnoredColumnWarning)
        runner = _thesis if spec.form == DEFAULT_FORM else _other
        return runner(spec, sp, header, say, progress)


# ---------------------------------------------------------------------------------------------- the thesis form
def _fit_seeds(spec: FitSpec, model, sp: Split, progress: bool):
    """Seed 0 alone (timed), then seeds 1..N-1 in parallel with the time left on stderr."""
    from ..model.roles import ConstantColumnWarning
    from ..model.selection.fitting import RepeatedFit, fit_repeated

    start = time.perf_counter()
    first = fit_repeated(model, sp.X_fit, sp.y_fit, seeds=[0], n_jobs=1, progress=False)
    took = time.perf_counter() - start
    models, seeds = list(first.models), [0]
    if spec.seeds > 1:
        from joblib import effective_n_jobs

        rest = spec.seeds - 1
        workers = max(1, min(rest, effective_n_jobs(spec.n_jobs)))
        _say(progress, f"seed 1/{spec.seeds} took {duration(took)}; about {duration(took * math.ceil(rest / workers))}"
                       f" left ({rest} more, {workers} at a time)")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstantColumnWarning)  # already issued for seed 1
            more = fit_repeated(model, sp.X_fit, sp.y_fit, seeds=range(1, spec.seeds), n_jobs=spec.n_jobs,
                                desc="seeds", progress=progress)
        models += more.models
        seeds += more.seeds
    return RepeatedFit(models=models, seeds=seeds)


def _warn_fit(rep) -> None:
    """Warnings of a repeated fit: parameters on their bounds, seeds that did not reach one objective."""
    from ..model.selection.fitting import parameters_on_bounds

    on_bounds = parameters_on_bounds(rep.best)
    if on_bounds:
        why = ("a, κ and C in [0, 1000] assume times in seconds with --scale none: is the target in seconds?"
               if rep.best.scales_ is None else "a, κ and C in [0, 1000] times the median time; q and p in [-5, 5]")
        warnings.warn(f"{'; '.join(on_bounds)}: the fit is limited by the bounds of its parameters ({why})",
                      StudyWarning, stacklevel=3)
    if not rep.converged:
        warnings.warn("the fit may not have converged: " + (
            "only one seed reached the best objective; run more --seeds" if rep.n_agree < 2 else
            "the final refinement stopped at its iteration limit"), StudyWarning, stacklevel=3)


def _thesis(spec: FitSpec, sp: Split, header, say, progress) -> StudyResult:
    """``form="thesis"``: ``seeds`` fits, the best kept (calibrated with ``calibrate``), compared, by factor."""
    from .data import thesis_model

    line = (f"fitting the generic model on {len(sp.X_fit)} rows ({spec.seeds} seeds, {spec.method} engine); "
            f"{sp.held_out()}")
    header.append(line)
    say(line)
    start = time.perf_counter()
    rep = _fit_seeds(spec, thesis_model(spec), sp, progress)
    _warn_fit(rep)
    saved = rep.best
    if spec.calibrate:
        saved = _calibrate(spec, rep.best, sp, progress)
    result = StudyResult(spec=spec, model=saved, label="generic model", header=header, n_fit=len(sp.X_fit),
                         n_test=len(sp.X_test), scale=sp.scale, fit=rep, fit_seconds=time.perf_counter() - start,
                         objective=dict(best=float(rep.best.objective_), n_agree=int(rep.n_agree),
                                        n_seeds=len(rep.models), rtol=float(rep.AGREE_RTOL),
                                        spread=float(rep.objective_spread), converged=bool(rep.converged)),
                         parameters=rep.best.params_.drop(columns=["column", "level"]),
                         seed_summary=_seed_summary(rep) if spec.seeds > 1 else None)
    kinds = spec.baselines or (("rf", "gb") if sp.scale else ("rf",))
    return _compare(result, rep.best, sp, kinds, inner_estimator=clone(rep.best) if sp.scale else None)


def _seed_summary(rep) -> pd.DataFrame:
    s = rep.summary()
    cols = [c for c in s.columns if c.endswith(("_mean", "_std")) and s[c].notna().any()]
    return s[["term"] + cols]


def _calibrate(spec: FitSpec, best, sp: Split, progress):
    """``calibrate``: conformal intervals around refits of the best seed's settings (widening with the distance
    beyond MAX with ``extrapolate``)."""
    from ..model.roles import ConstantColumnWarning
    from ..model.uncertainty.conformal import ConformalRegressor

    if sp.scale is not None:
        return _scale_model(spec, clone(best), sp, fitted=best)
    _say(progress, f"calibrating 90 %-style intervals: {spec.cv} more fits of the best seed's settings")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantColumnWarning)
        return ConformalRegressor(clone(best), method=spec.intervals, n_splits=spec.cv, random_state=0).fit(
            sp.X_fit, sp.y_fit)


def _scale_model(spec: FitSpec, estimator, sp: Split, fitted=None, regime_estimator=None, inner=None,
                 alternative=None, two_options=False):
    """``estimator`` with intervals that widen beyond (COL, MAX), calibrated on the inner splits of the fit rows
    (fitted on them unless ``fitted``, the same form already fitted on the fit rows, is given), their half-width
    multiplied by ``inflation``; with ``two_options`` (a consensus that weighed two: ``alternative`` the other one,
    or ``estimator`` a blend of both), the half-width adds their disagreement and κ, ρ, λ are the constants
    calibrated with it."""
    from ..model.uncertainty import scale_intervals as si

    col, top = sp.scale
    regime = {}
    if spec.scale_study is not None and spec.step_roles and col == spec.gpus:  # regimes: nodes and GPUs per node
        rho = si.DISAGREEMENT_REGIME_KAPPA if two_options else si.DEFAULT_REGIME_KAPPA
        regime = dict(nodes=spec.nodes, regime_inflation=rho, regime_estimator=regime_estimator)
    kappa = si.DISAGREEMENT_KAPPA if two_options and spec.inflation is None else spec.kappa
    model = si.ScaleIntervalModel(estimator, column=col, fit_max=top, splits=_splits(spec, sp),
                                  phases=list(spec.phases), inflation=kappa, alternative=alternative,
                                  disagreement=si.DEFAULT_DISAGREEMENT if two_options else 0.0, **regime)
    if inner is not None and fitted is None:  # the inner predictions already made: fit once, calibrate on them
        fitted = clone(estimator).fit(sp.X_fit, np.asarray(sp.y_fit, dtype=float))
    if fitted is None:
        return model.fit(sp.X_fit, sp.y_fit)
    return model.calibrate(fitted, sp.X_fit, sp.y_fit, inner=inner)


def _splits(spec: FitSpec, sp: Split) -> list:
    """The inner extrapolation splits of the fit rows that calibrate the intervals (and, in a scaling study, choose
    the model): :func:`~perfkit.model.selection.by_scale.scale_splits` in a scaling study (the rule the default κ was
    transferred with), else :func:`~perfkit.model.uncertainty.scale_intervals.inner_splits`."""
    from ..model.selection.by_scale import scale_splits
    from ..model.uncertainty.scale_intervals import inner_splits

    col, top = sp.scale
    values = np.asarray(sp.X_fit[col], dtype=float)
    return scale_splits(values, top) if spec.scale_study is not None else inner_splits(values, top)


def kappa_line(spec: FitSpec, model=None) -> str:
    """Where the intervals' inflation κ (and the disagreement's weight λ of ``model``, the saved model) came from,
    in words ("" when κ is 1 outside a scaling study)."""
    if spec.scale_study is None and spec.inflation is None:
        return ""
    lam = float(getattr(model, "disagreement", 0.0) or 0.0)
    kappa = float(getattr(model, "inflation", spec.kappa))
    plus = ("" if lam == 0 else f", plus λ = {lam:g} times the disagreement between the consensus's two options "
            "(on a regime row, between the prior's form and the fitted curve)")
    if spec.inflation is not None:
        return f"intervals beyond the fitted scale widened by κ = {kappa:g} ({name('inflation')}){plus}"
    if lam:
        return (f"intervals beyond the fitted scale widened by κ = {kappa:g}{plus}: κ and λ calibrated together on "
                f"the shipped Pollux traces and Sia's four clusters (their rows at 2-4× the small runs' largest GPU "
                f"count; {name('inflation')} K overrides κ)")
    return (f"intervals beyond the fitted scale widened by κ = {kappa:g}, calibrated on the shipped Pollux traces "
            f"and Sia's four clusters (how much further their rows at 2-4× the small runs' largest GPU count fell than "
            f"their inner splits promised; {name('inflation')} K overrides it)")


# ---------------------------------------------------------------------------------------------- the other forms
def _step_form(spec: FitSpec):
    from ..model.forms.registry import get

    extra = {"sync_column": spec.phases[0]} if spec.form == PHASE_FORM else {}
    return get(spec.form).cls(spec.gpus, spec.nodes, spec.batch, **extra)


def _search(spec: FitSpec, sp: Split, header, say, progress):
    """``form="auto"``: the form search (the step forms with their columns; chosen by inner extrapolation splits
    with ``extrapolate``); returns (saved model, search, summary lines)."""
    from ..model.selection.search import search_forms, step_candidates

    if spec.scale_study is not None and spec.step_roles:
        return _scale_search(spec, sp, header, say)
    options = {"hybrid": {"fixed": spec.fixed}, "symbolic": {"fixed": spec.fixed}} if spec.fixed else None
    step = spec.step_roles
    extra = step_candidates(**step, sync_column=spec.phases[0] if spec.phases else None) if step else []
    how = f"{spec.cv}-fold CV" + (" and inner extrapolation splits" if sp.scale else "")
    line = f"form search on {len(sp.X_fit)} rows ({how}); {sp.held_out()}"
    header.append(line)
    say(line)
    by_scale = (dict(select="extrapolation", extrapolate=sp.scale, predict_drop=list(spec.phases)) if sp.scale
                else dict(select=spec.select or "1se"))
    search = search_forms(sp.X_fit, sp.y_fit, **spec.roles, network=spec.network, cv=spec.cv, n_jobs=spec.n_jobs,
                          progress=progress, options=options, intervals=spec.intervals, extra_candidates=extra,
                          reference=spec.reference, **by_scale)
    lines = ["", search.summary()]
    if sp.scale is None:
        return search.model_, search, lines
    model = _scale_model(spec, search.candidates[search.chosen].estimator, sp, fitted=search.estimator_)
    kappa = kappa_line(spec)
    return model, search, lines + ["", model.summary().splitlines()[-1]] + ([kappa] if kappa else [])


def _scale_search(spec: FitSpec, sp: Split, header, say):
    """A scaling study with the step columns: the step-form family scored on inner extrapolation splits of the
    rows, the median of the best k kept, intervals that widen beyond the largest scale; returns (saved model,
    choice, summary lines)."""
    from ..model.selection.by_scale import choose_by_scale, step_family

    col, top = sp.scale
    splits = _splits(spec, sp)
    comm = _hardware_prior(spec, header, say)
    family = step_family(**spec.step_roles, sync_column=spec.phases[0] if spec.phases else None, comm=comm,
                         boosted=True)
    shown = "; ".join(f"fit {col} <= {a:g}, score {b:g} to {c:g}" for a, b, c in splits)
    line = (f"scaling study on {len(sp.X_fit)} rows ({col} up to {top:g}): {len(family)} step forms scored on "
            f"inner extrapolation splits ({shown}); {sp.held_out()}")
    header.append(line)
    say(line)
    choice = choose_by_scale(family, sp.X_fit, sp.y_fit, col, splits, predict_drop=list(spec.phases))
    ranked = [c for c in choice.scores.candidate if c.startswith("comm[")]  # the best prior form on the inner splits
    model = _scale_model(spec, choice.estimator, sp, regime_estimator=family[ranked[0]] if ranked else None,
                         inner=choice.inner, alternative=choice.alternative, two_options=choice.two_options)
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        table = choice.scores.head(8).to_string(index=False, float_format=lambda v: f"{v:.3g}")
        options = choice.options.to_string(index=False, float_format=lambda v: f"{v:.3g}")
    lines = ["", f"chosen: {choice.label} (inner MAPE {choice.score:.3g} %), of:", options,
             "best candidates on the inner splits (MAPE %):", table]
    dropped = choice.scores.attrs.get("dropped") or {}
    if dropped:
        lines.append("left out (could not be fitted on an inner split): " + "; ".join(
            f"{k}: {v}" for k, v in dropped.items()))
    kappa, regime = kappa_line(spec, model), model.regime_note()
    lines += [""] + ([regime] if regime else []) + [model.summary().splitlines()[-1]] + ([kappa] if kappa else [])
    return model, choice, lines


def _hardware_prior(spec: FitSpec, header, say) -> dict | None:
    """The communication prior of ``cluster`` and ``job`` (None without them), said in a header line."""
    from ..model.selection.by_scale import hardware_prior

    if spec.cluster is None:
        return None
    comm = hardware_prior(spec.cluster, spec.job)
    net = "unknown" if comm["inter_gbps"] is None else f"{comm['inter_gbps']:g} GB/s"
    line = (f"communication prior: job {spec.job} synchronises {comm['grad_bytes']:.4g} bytes a step; cluster "
            f"{spec.cluster}: {comm['intra_gbps']:g} GB/s per GPU inside a node, network {net}")
    header.append(line)
    say(line)
    return comm


def _prior_form(spec: FitSpec, sp: Split, comm: dict):
    """The communication-prior form that prices a scaling study's regime rows: of its losses and weights, the one
    that scores best on the inner extrapolation splits (as the consensus's regime rows take)."""
    from ..model.selection.by_scale import choose_by_scale, step_family

    family = {k: v for k, v in step_family(**spec.step_roles, sync_column=spec.phases[0] if spec.phases else None,
                                           comm=comm).items() if k.startswith("comm[")}
    choice = choose_by_scale(family, sp.X_fit, sp.y_fit, sp.scale[0], _splits(spec, sp),
                             predict_drop=list(spec.phases), rule="best-k")
    return family[choice.scores.candidate.iloc[0]]


def _fit_form(spec: FitSpec, sp: Split, header, say):
    """One form (not the search), calibrated; returns (saved model, summary lines)."""
    from ..model.selection.search import make_form
    from ..model.uncertainty.conformal import ConformalRegressor

    if spec.is_step_form:
        est = _step_form(spec)
    else:
        est = make_form(spec.form, **spec.roles, network=spec.network, **({"fixed": spec.fixed} if spec.fixed else {}))
    line = f"fitting the {spec.form} form on {len(sp.X_fit)} rows; {sp.held_out()}"
    header.append(line)
    say(line)
    if sp.scale is not None:
        comm = _hardware_prior(spec, header, say)
        prior = _prior_form(spec, sp, comm) if comm is not None else None
        model = _scale_model(spec, est, sp, regime_estimator=prior)
        kappa = kappa_line(spec, model)
        return model, ["", model.summary()] + ([kappa] if kappa else [])
    model = ConformalRegressor(est, method=spec.intervals, n_splits=spec.cv, random_state=0).fit(sp.X_fit, sp.y_fit)
    return model, ["", model.estimator_.summary()]


def _other(spec: FitSpec, sp: Split, header, say, progress) -> StudyResult:
    """Every form but the thesis's: fit (or search), calibrate intervals, compare, by factor."""
    start = time.perf_counter()
    search = None
    if spec.form == AUTO:
        model, search, lines = _search(spec, sp, header, say, progress)
    else:
        model, lines = _fit_form(spec, sp, header, say)
    result = StudyResult(spec=spec, model=model, label=f"{spec.form} model", header=header, n_fit=len(sp.X_fit),
                         n_test=len(sp.X_test), scale=sp.scale, search=search, model_summary="\n".join(lines),
                         search_table=None if search is None else _search_table(search),
                         fit_seconds=time.perf_counter() - start)
    inner = model.estimator if sp.scale is not None else None
    return _compare(result, model, sp, spec.baselines or ("rf", "gb"), inner_estimator=inner)


def _search_table(search) -> pd.DataFrame:
    """The candidates' scores: the form search's table, or a scaling study's inner scores."""
    return (search.table if hasattr(search, "table") else search.scores).copy()


# ---------------------------------------------------------------------------------------------- the comparison
def _compare(result: StudyResult, model, sp: Split, kinds, inner_estimator=None) -> StudyResult:
    """The held-out comparison of ``result``'s model with the baselines of ``kinds`` (fitted on the fit rows),
    the coverage of its intervals, the inner comparison and the errors by factor; a failure keeps the model
    (:class:`StudyError`)."""
    try:
        return _fill(result, model, sp, kinds, inner_estimator)
    except ValueError as exc:
        raise StudyError(str(exc), model=result.model, result=result) from None


def _fill(result: StudyResult, model, sp: Split, kinds, inner_estimator) -> StudyResult:
    from ..model.uncertainty.conformal import ExtrapolationWarning, coverage_of, predictable_rows

    spec = result.spec
    X_te, y_te = sp.X_test, sp.y_test
    if not len(X_te):  # a scaling study: nothing held out; what the fit rows alone say
        result.fit_points = pd.DataFrame({sp.scale[0]: np.asarray(sp.X_fit[sp.scale[0]], dtype=float),
                                          "measured": np.asarray(sp.y_fit, dtype=float)})
        _inner(result, inner_estimator, sp)
        return result
    if result.fit is None:  # a calibrated form: some held-out rows may lie outside what it can predict
        ok = predictable_rows(model, sp.X_fit, X_te, spec.categorical)
        if not ok.all():
            result.unscored_rows = int((~ok).sum())
            X_te, y_te = X_te[ok], y_te[ok]
    others = {name: m.fit(sp.X_fit, np.asarray(sp.y_fit, dtype=float))
              for name, m in baselines(spec, kinds).items()}
    scored = {result.label: model if result.fit is None else result.fit.best, **others}
    iv = None
    if callable(getattr(result.model, "predict_interval", None)):
        with warnings.catch_warnings():
            if sp.scale:  # every held-out row lies beyond the fit rows by design: no warning for each
                warnings.simplefilter("ignore", ExtrapolationWarning)
            iv = result.model.predict_interval(X_te, spec.level)
        result.coverage = float(coverage_of(iv, y_te))
        result.coverage_rows = int(len(y_te))
    part = Split(sp.X_fit, X_te, sp.y_fit, y_te, sp.scale)
    preds = {name: np.asarray(m.predict(X_te), dtype=float) for name, m in scored.items()}
    result.held_out = held_out_table(scored, part, preds)
    result.predictions = _predictions(sp, X_te, y_te, preds, iv)
    if sp.scale:
        result.fit_points = pd.DataFrame({sp.scale[0]: np.asarray(sp.X_fit[sp.scale[0]], dtype=float),
                                          "measured": np.asarray(sp.y_fit, dtype=float)})
        _inner(result, inner_estimator, sp)
        result.factors = factor_table(preds, y_te, X_te[sp.scale[0]], sp.scale)
    return result


def _predictions(sp: Split, X_te, y_te, preds: dict, iv) -> pd.DataFrame:
    out = pd.DataFrame({"measured": np.asarray(y_te, dtype=float)})
    if sp.scale:
        out.insert(0, sp.scale[0], np.asarray(X_te[sp.scale[0]], dtype=float))
    for name, p in preds.items():
        out[name] = p
    if iv is not None:
        out["lower"] = np.asarray(iv["lower"], dtype=float)
        out["upper"] = np.asarray(iv["upper"], dtype=float)
    return out


def _inner(result: StudyResult, estimator, sp: Split) -> None:
    """MAPE (%) of the model's form and of the baselines on the inner splits of the fit rows (a failure, e.g. a
    level the inner fit rows lack, is noted: the comparison is left out, not the fit)."""
    models = {result.label: estimator, **baselines(result.spec, ("rf", "gb"))}
    try:
        result.inner = inner_comparison(models, sp.X_fit, sp.y_fit, sp.scale, result.spec.phases,
                                        splits=_splits(result.spec, sp))
    except ValueError as exc:
        result.inner_note = str(exc).splitlines()[0]
