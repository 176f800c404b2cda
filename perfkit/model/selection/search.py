"""Form search by cross-validation: which model form, with which terms, for these data?

The thesis fits one form (eq. 4.4) everywhere. :func:`search_forms` tries several
(the table forms of :mod:`perfkit.model.forms.registry`: the thesis form, the multiplicative power law of
:mod:`perfkit.model.forms.loglinear` with and without its interaction terms, and the hybrid
form of :mod:`perfkit.model.forms.hybrid` on analytic costs when the network is known),
scores each by K-fold cross-validated MAPE, and picks **the simplest candidate
within one standard error of the best** (the one-standard-error rule of Breiman et
al. 1984): a form with fewer fitted parameters wins unless a richer one is better by
more than the folds' noise. The table of candidates reads like Extra-P's list of
hypotheses: form, terms, number of parameters, CV MAPE ± its standard error, fit
time.

The chosen form is refitted on every row inside a
:class:`~perfkit.model.uncertainty.conformal.ConformalRegressor` (studentised cross-validation
scores from the same folds), so the result predicts with intervals:
``search.model_.predict_interval(X, 0.9)``.

Every candidate is scored on the same folds (``KFold(cv, shuffle=True,
random_state)``), so the comparison is paired; the standard error is the spread of
the per-fold MAPE over √K. Candidates are independent and run through joblib
(``n_jobs``).

``select="best"`` keeps the lowest CV MAPE instead; either way the table marks both winners and
:meth:`FormSearch.summary` says how far apart they are (the paired difference of their fold scores).
``reference=True`` also tunes the black boxes of :mod:`perfkit.model.selection.blackbox` on the same folds
(:func:`~perfkit.model.selection.blackbox.black_box_reference`), and the summary says how far the chosen form is from the
best of them.

Two more additions leave all of the above unchanged by default. ``extra_candidates`` appends candidates of other
forms (e.g. the step-time forms of :mod:`perfkit.model.forms.stepmodels`, :func:`step_candidates`) after the
registry's. ``select="extrapolation"`` with ``extrapolate=(column, fit_max)`` (the rows of ``X`` being those with
``column`` <= ``fit_max``) also scores every candidate by inner extrapolation splits of those rows
(:func:`perfkit.model.uncertainty.scale_intervals.inner_splits`, :func:`perfkit.model.uncertainty.extrapolation.select_by_extrapolation`:
fit on the rows up to a quarter and up to half of ``fit_max``, MAPE on the rows beyond, up to ``fit_max``) and
picks the lowest of those scores (ties: the first candidate), for a model meant to predict beyond ``fit_max``;
the table keeps the CV scores beside them (``extrap_mape``).
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._checks import check_int
from ..base import PerformanceForm, RowCapabilities
from .fitting import check_n_jobs, run_parallel
from ..forms.loglinear import LogLinearModel
from ..forms.generic import GenericPerformanceModel
from ..forms.hybrid import HybridModel
from ..forms.hybrid_sets import hybrid_variants
from ..forms.symbolic import SymbolicModel
from ..uncertainty.conformal import ConformalRegressor, predictable_rows
from .by_extrapolation import check_extrapolate, extrapolation_choice
from .metrics import mape
from ..forms.stepmodels import PhaseAwareStepModel, PolluxStepModel
from ..forms.registry import TABLE, get, table_forms
from ..validation import column_list, validate_frame, validate_target

__all__ = ["thesis_candidates", "loglinear_candidates", "hybrid_candidates", "symbolic_candidates", "Candidate",
           "FormSearch", "form_candidates", "search_forms", "n_parameters", "make_form", "one_standard_error_choice", "THESIS_SEARCH", "SELECTIONS", "step_candidates"]

#: how :func:`search_forms` picks a candidate: "1se", the fewest parameters within one standard error of the best
#: CV MAPE (the default; "cv" is the same rule); "best", the lowest CV MAPE; "extrapolation", inner extrapolation
#: splits (with ``extrapolate=(column, fit_max)``)
SELECTIONS = ("cv", "1se", "best", "extrapolation")


#: the thesis form's engine settings in a search: at most 100 generations of a population of 5 per power, the
#: powers searched on 300 rows (the linear parameters, the refinement's objective and the score use all
#: rows); a single fit (``--form thesis``) keeps the engine's defaults.
THESIS_SEARCH = {"maxiter": 100, "popsize": 5, "search_rows": 300}


@dataclass(frozen=True)
class Candidate:
    """One hypothesis: a form, its term set in words, and an unfitted estimator."""

    form: str
    terms: str
    estimator: Any


# ------------------------------------------------------------------------------ the forms
# each table form of perfkit.model.forms.registry names its builder here: f(roles, network, random_state, options);
# form_candidates checks the options and sets them on every candidate of their form afterwards
def thesis_candidates(roles, network, random_state, options):
    """The thesis form fitted to relative error: the search scores MAPE, which the relative error is the loss of
    (the MAE fit of eq. 4.9 is not tried)."""
    kw = dict(random_state=random_state, loss="relative", **THESIS_SEARCH)
    return [Candidate("thesis", "Σ a·I^p + Σ κ, × Π E^q, + C (eq. 4.4), relative error",
                      GenericPerformanceModel(**roles, **kw))]


def loglinear_candidates(roles, network, random_state, options):
    """The log-linear power law, from log-log powers alone up to every term (products of logs, level slopes and,
    with two or more categorical columns, level pairs, pair slopes and ridge penalties; segments with an extrinsic
    column)."""
    variants = [
        (dict(interactions=False, category_terms=False), "log-log powers + category levels"),
        (dict(interactions=False, category_terms=True), "powers + levels + level × log"),
        (dict(interactions=True, category_terms=False), "powers + levels + squares/products of logs"),
        (dict(interactions=True, category_terms=True), "powers + levels + products + level × log"),
    ]
    if len(roles["categorical"]) >= 2:
        variants.append((dict(interactions=True, category_terms=True, category_pairs=True),
                         "powers + levels + products + level × log + level pairs"))
    if roles["extrinsic"]:  # a segmented power law in an extrinsic column, breaks chosen by the lasso
        variants.append((dict(variants[-1][0], segments=True), variants[-1][1] + " + segments"))
    if len(roles["categorical"]) >= 2:  # every term, the combinations of levels shrunk by ridge penalties
        cells = len(roles["categorical"]) >= 3
        variants.append((dict(variants[-1][0], pair_slopes=True, cells=cells, select="ridge"),
                         variants[-1][1] + " + pair slopes" + (" + cells" if cells else "") + ", ridge"))
    return [Candidate("loglinear", words, LogLinearModel(**roles, **kw, random_state=random_state))
            for kw, words in variants]


def hybrid_candidates(roles, network, random_state, options):
    """The hybrid form's term sets on the analytic costs of ``network`` (none without a network)."""
    if network is None:
        return []
    return [Candidate("hybrid", words, HybridModel(network=network, **roles, **kw, random_state=random_state))
            for kw, words in hybrid_variants(network, roles)]


def symbolic_candidates(roles, network, random_state, options):
    """Symbolic regression in log space (gplearn), at most 20 nodes; the log costs of ``network`` when known."""
    kw = dict(network=network, random_state=random_state)
    words = "exp(a + b·f): an evolved formula of logs, level means and log costs, <= 20 nodes"
    return [Candidate("symbolic", words, SymbolicModel(**roles, **kw))]


def _check_options(options) -> dict:
    """``options`` checked: None, or a dict of table-form name → dict of that form's settings (by name)."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"options: expected a dict of form name → settings, got {type(options).__name__}")
    names = table_forms()
    for form, settings in options.items():
        if form not in names:
            raise ValueError(f"options: {form!r} is not a table form; expected keys among {sorted(names)}")
        if not isinstance(settings, dict):
            raise ValueError(f"options[{form!r}]: expected a dict of settings, got {type(settings).__name__}")
    return options


def _apply_options(form: str, estimator, settings: dict) -> None:
    """Set ``settings`` on one candidate of ``form``; ``ValueError`` naming a setting the form does not have."""
    known = estimator.get_params(deep=False)
    for name in settings:
        if name not in known:
            raise ValueError(f"options[{form!r}]: {name!r} is not a setting of the {form} form "
                             f"({type(estimator).__name__}); its settings: {', '.join(sorted(known))}")
    estimator.set_params(**settings)


def _check_forms(forms) -> list[str]:
    """The table forms ``forms`` names (all of them for "auto"), each checked against the registry."""
    names = table_forms()
    if forms == "auto" or forms is None:
        return list(names)
    given = column_list("forms", forms)
    for f in given:
        if f not in names:
            raise ValueError(f"form: unknown form {f!r}; expected 'auto' or one of {sorted(names)}")
    if not given:
        raise ValueError(f"forms: give 'auto' or at least one of {sorted(names)}")
    return given


def form_candidates(forms="auto", numeric=(), categorical=(), extrinsic=(), *, network=None, random_state=0,
                    options=None) -> list[Candidate]:
    """The candidates :func:`search_forms` tries: a list of :class:`Candidate` (unfitted estimators)."""
    roles = dict(numeric=column_list("numeric", numeric), categorical=column_list("categorical", categorical),
                 extrinsic=column_list("extrinsic", extrinsic))
    options = _check_options(options)
    out = []
    for f in _check_forms(forms):
        cands = get(f).candidates(roles, network, random_state, options)
        for cand in cands if options.get(f) else ():
            _apply_options(f, cand.estimator, options[f])
        out += cands
    if not out:
        raise ValueError(f"forms {forms!r}: no candidate applies (the hybrid form needs network=, one of the "
                         "networks perfkit has a cost model for)")
    return out


def step_candidates(gpus: str, nodes: str, batch: str, sync_column: str | None = None) -> list[Candidate]:
    """The step-time forms as candidates of :func:`search_forms` (``extra_candidates``): Pollux's model, and the
    phase-aware model (synchronisation ∝ ln K, plus a slope in the node count) when the measured synchronisation
    time ``sync_column`` is given (read in fit only)."""
    out = [Candidate("pollux", "(T_grad^γ + T_sync^γ)^(1/γ), T_sync linear in K (Pollux)",
                     PolluxStepModel(gpus, nodes, batch))]
    if sync_column is not None:
        words = f"(T_grad^γ + T_sync^γ)^(1/γ), T_sync ∝ ln K + slope·nodes, fitted with {sync_column}"
        out.append(Candidate("phases", words,
                             PhaseAwareStepModel(gpus, nodes, batch, sync_column=sync_column)))
    return out


def make_form(form: str, numeric=(), categorical=(), extrinsic=(), *, network=None, random_state=0, **settings):
    """One unfitted estimator of ``form``: the thesis's eq. 4.4 with the engine's defaults (MAE, as the thesis
    fits it); for "loglinear" products, level slopes and (with two or more categorical columns) level pairs, without
    the segments and pair slopes the search also tries; for "hybrid" the richest term set the search tries without
    the rates by the layer shape, which cover only the combinations of levels seen in fit (a search checks them by
    cross-validation); for any other form its last candidate. ``form`` is a table form of the registry
    (:func:`perfkit.model.forms.registry.table_forms`); a step form or an unknown name is one ``ValueError``
    naming ``form``.

    ``settings`` override the estimator's own (e.g. ``interactions=False``, ``loss="relative"``).
    """
    if get(form).kind != TABLE:
        raise ValueError(f"form: {form!r} is a step form (built from the GPU, node and batch columns, "
                         f"not by make_form); expected one of {list(table_forms())}")
    if form == "thesis":
        est = GenericPerformanceModel(numeric=numeric, categorical=categorical, extrinsic=extrinsic,
                                      random_state=random_state)
    elif form == "hybrid" and network is not None:  # the richest variant that covers any combination of levels
        roles = dict(numeric=column_list("numeric", numeric), categorical=column_list("categorical", categorical),
                     extrinsic=column_list("extrinsic", extrinsic))
        est = HybridModel(network=network, **roles, **hybrid_variants(network, roles, shape=False)[-1][0],
                          random_state=random_state)
    elif form == "loglinear":  # the richest variant without segments and pair slopes
        est = LogLinearModel(numeric=numeric, categorical=categorical, extrinsic=extrinsic, interactions=True,
                             category_terms=True, category_pairs=len(column_list("categorical", categorical)) >= 2,
                             random_state=random_state)
    else:
        est = form_candidates(form, numeric, categorical, extrinsic, network=network,
                              random_state=random_state)[-1].estimator
    return est.set_params(**settings) if settings else est


# ------------------------------------------------------------------------------ scoring
def n_parameters(model) -> int:
    """Number of fitted parameters of a fitted model form, its :attr:`~perfkit.model.base.PerformanceForm.n_parameters_`
    (the "simplest" of the one-standard-error rule); ``ValueError`` for any other model."""
    if not isinstance(model, PerformanceForm):
        raise ValueError(f"n_parameters: no parameter count for {type(model).__name__}")
    return int(model.n_parameters_)


def _score_fold(est, X, y, tr, te, categorical):
    """Fit one candidate on a fold: ``(n_params, seconds, model, predictions, mask)``, the predictions of the
    held-out rows the model can predict (:func:`~perfkit.model.uncertainty.conformal.predictable_rows`) that ``mask`` marks."""
    from sklearn.base import clone

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant columns in a fold etc.: the full fit reports them
        try:
            model = clone(est).fit(X.iloc[tr], y[tr])
        except ValueError as exc:
            raise ValueError(f"cv: a candidate cannot be fitted on the {len(tr)} rows to fit of a fold (use fewer "
                             f"folds or more rows): {exc}") from None
        took = time.perf_counter() - start
        ok = predictable_rows(model, X.iloc[tr], X.iloc[te], categorical)
        pred = np.asarray(model.predict(X.iloc[te][ok]), dtype=float) if ok.any() else np.zeros(0)
    return n_parameters(model), took, model, pred, ok


def _paired_scores(results, folds, y, n_cands):
    """Per candidate, the MAPE of each fold on the held-out rows that *every* candidate can predict (so the
    comparison stays paired), and the number of rows left out that way."""
    k = len(folds)
    scores, unscored = np.zeros((n_cands, k)), 0
    for j, (_, te) in enumerate(folds):
        rs = [results[i * k + j] for i in range(n_cands)]
        common = np.logical_and.reduce([r[4] for r in rs])
        if not common.any():
            raise ValueError(f"cv: no held-out row of fold {j + 1} of {k} can be predicted by every candidate "
                             "(each has a categorical level that the fold's rows to fit lack); use fewer folds or "
                             "more rows per level")
        unscored += int((~common).sum())
        for i, r in enumerate(rs):
            full = np.full(len(te), np.nan)
            full[r[4]] = r[3]
            scores[i, j] = mape(y[te][common], full[common])
    return scores, unscored


@dataclass
class FormSearch:
    """What :func:`search_forms` found.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per candidate: form, terms, n_params (mean over folds), cv_mape,
        cv_mape_se (%), fit_seconds (mean per fold), unscored (held-out rows with a category level their
        fold's training rows lack, or a combination of levels that a hybrid candidate has no rate for: not every
        candidate can predict them, so no candidate is scored on them), chosen (bool), within_1se.
    candidates : list of Candidate
    chosen : int
        Row of ``table`` that was picked.
    model_ : ConformalRegressor
        The chosen form refitted on every row, with conformal intervals (studentised by default)
        (``model_.predict_interval(X, 0.9)``); ``model_.estimator_`` is the fitted form.
    cv : int
    """

    table: Any
    candidates: list
    chosen: int
    model_: Any
    cv: int
    fit_time: float = 0.0
    folds: list = field(default_factory=list, repr=False)
    select: str = "cv"
    fold_mape: Any = field(default=None, repr=False)
    reference: Any = None

    @property
    def best_cv(self) -> int:
        """Row of ``table`` with the lowest CV MAPE."""
        return int(self.table["cv_mape"].idxmin())

    @property
    def one_se(self) -> int:
        """Row of ``table`` that the one-standard-error rule picks (:func:`one_standard_error_choice`)."""
        return one_standard_error_choice(self.table)

    def gap(self, row: int, other: int) -> tuple[float, float]:
        """``(mean, standard error)`` over folds of CV MAPE(row) − CV MAPE(other), in percentage points (paired:
        the same folds and held-out rows)."""
        return _paired_gap(self.fold_mape[row], self.fold_mape[other])

    def reference_gap(self) -> tuple[float, float]:
        """``(mean, standard error)`` over folds of CV MAPE(chosen) − CV MAPE(black-box reference), in percentage
        points (the same folds; each scored on the held-out rows it can predict); needs ``reference=True``."""
        if self.reference is None:
            raise ValueError("reference_gap: the search ran without reference=True")
        return _paired_gap(self.fold_mape[self.chosen], self.reference.fold_mape)

    @property
    def estimator_(self):
        """The chosen form, fitted on every row."""
        return self.model_.estimator_

    def predict(self, X):
        return self.model_.predict(X)

    def predict_interval(self, X, coverage=0.9):
        return self.model_.predict_interval(X, coverage)

    def level_bound_note(self) -> str:
        """A sentence when the chosen form predicts a numeric or extrinsic column only at the values measured
        (:meth:`~perfkit.model.base.RowCapabilities.level_bound_columns`), naming the best candidate by CV that
        predicts any value; "" otherwise."""
        def bound(est):
            return set(est.level_bound_columns()) if isinstance(est, RowCapabilities) else set()

        cols = sorted(bound(self.candidates[self.chosen].estimator))
        if not cols:
            return ""
        ranges = getattr(self.model_, "ranges_", {})
        shown = ", ".join(f"{c} ({ranges[c][0]:g} to {ranges[c][1]:g} measured)" if c in ranges else c for c in cols)
        text = (f"note: the chosen form predicts {shown} only at the values measured: a prediction or what-if at "
                "another value is not made (perfkit whatif leaves such rows out and says so)")
        free = [i for i, c in enumerate(self.candidates) if not bound(c.estimator) & set(cols)]
        if free:
            best = min(free, key=lambda i: self.table.loc[i, "cv_mape"])
            text += (f"; the best candidate that predicts any value: {self.table.loc[best, 'form']} "
                     f"({self.table.loc[best, 'terms']}), CV MAPE {self.table.loc[best, 'cv_mape']:.3g} %")
        return text

    def summary(self) -> str:
        """The candidates table (best first), the rule, and the chosen model's formula."""
        import pandas as pd

        by_extrapolation = self.select == "extrapolation"
        t = self.table.sort_values("extrap_mape" if by_extrapolation else "cv_mape").copy()
        t[""] = np.where(t["chosen"], "<- chosen", np.where(t["within_1se"], "within 1 se", ""))
        show = t[["form", "terms", "n_params", "cv_mape", "cv_mape_se", *(["extrap_mape"] if by_extrapolation else []),
                  "fit_seconds", ""]]
        with pd.option_context("display.width", 200, "display.max_colwidth", 60):
            body = show.to_string(index=False, float_format=lambda v: f"{v:.3g}")
        best = self.table.loc[self.table["cv_mape"].idxmin()]
        est = self.estimator_
        formula = est.formula() if isinstance(est, PerformanceForm) else ""
        rule = (f"rule: the fewest parameters among candidates within one standard error of the best "
                f"({best['cv_mape']:.3g} + {best['cv_mape_se']:.2g} %)")
        if self.select == "best":
            rule = f"rule: the lowest CV MAPE ({best['cv_mape']:.3g} %)"
        if by_extrapolation:
            rule = ("rule: the lowest extrap_mape, the MAPE (%) of inner extrapolation splits of the fit rows "
                    f"({self.table.attrs.get('splits', '')}), mean over the splits; the CV columns for comparison")
        lines = [f"form search: {len(t)} candidates, {self.cv}-fold CV MAPE (%), mean ± standard error over folds",
                 body, "", rule, self._winners_line(),
                 f"chosen: {self.table.loc[self.chosen, 'form']} ({self.table.loc[self.chosen, 'terms']})"]
        lines += [note for note in (self.level_bound_note(),) if note]
        if self.reference is not None:
            lines += ["", self.reference.summary(), self._reference_line()]
        if formula:
            lines.append(formula)
        lines.append(f"search time {self.fit_time:.1f} s")
        return "\n".join(lines)

    def _name(self, row: int) -> str:
        r = self.table.loc[row]
        return f"{r['form']} ({r['terms']}, {r['cv_mape']:.3g} %)"

    def _winners_line(self) -> str:
        """The winner by CV and by the one-standard-error rule, and how far apart they are."""
        best, one = self.best_cv, self.one_se
        if self.fold_mape is None:
            return ""
        if best == one:
            return f"by CV and by 1-SE: {self._name(best)} (select='best' and select='1se' agree)"
        d, se = self.gap(one, best)
        return (f"by CV: {self._name(best)}; by 1-SE: {self._name(one)}, {d:+.3g} ± {se:.2g} points by CV "
                "(paired over folds; choose with select='best' or '1se', perfkit fit --select)")

    def _reference_line(self) -> str:
        d, se = self.reference_gap()
        ref = self.reference
        verdict = ("no worse than" if d <= 0 else "within one standard error of" if d <= se else "worse than")
        return (f"chosen form − black-box reference ({ref.label}): {d:+.3g} ± {se:.2g} points of CV MAPE "
                f"(paired over folds): the chosen form is {verdict} the reference")

    def __repr__(self) -> str:
        row = self.table.loc[self.chosen]
        return (f"FormSearch({len(self.table)} candidates; chosen {row['form']} ({row['terms']}), "
                f"CV MAPE {row['cv_mape']:.3g} ± {row['cv_mape_se']:.2g} %)")


def _paired_gap(a, b) -> tuple[float, float]:
    """``(mean, standard error)`` of the fold-by-fold differences ``a − b`` (folds where either is NaN left out)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    d = d[np.isfinite(d)]
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("nan")


def one_standard_error_choice(table) -> int:
    """Row label of the candidate with the fewest parameters among those whose ``cv_mape`` is within one
    ``cv_mape_se`` of the best (ties: the lower CV MAPE, then the first row)."""
    best = table["cv_mape"].idxmin()
    ok = table[table["cv_mape"] <= table.loc[best, "cv_mape"] + table.loc[best, "cv_mape_se"]]
    return int(ok.sort_values(["n_params", "cv_mape"], kind="stable").index[0])


def search_forms(X, y, numeric=(), categorical=(), extrinsic=(), *, forms="auto", network=None, cv=5,
                 random_state=0, n_jobs=1, progress=False, options=None, intervals="studentized",
                 extra_candidates=(), select="cv", extrapolate=None, predict_drop=(), reference=False) -> FormSearch:
    """Try model forms by K-fold cross-validation and keep the simplest within one standard error of the best.

    Parameters
    ----------
    X : pandas.DataFrame
        Configurations, with the role columns (and, for the hybrid form, the columns
        its network's cost model reads).
    y : array_like
        Measured times, > 0.
    numeric, categorical, extrinsic : str or list of str
        Column roles, as for every model of perfkit.
    forms : "auto" or list of str
        Forms to try (table forms of :mod:`perfkit.model.forms.registry`); "auto" tries all that apply.
    network : str, optional
        A network of :data:`perfkit.model.forms.costs.NETWORKS`; enables the hybrid form.
    cv : int, default 5
        Folds (an integer >= 2; the rows must be at least 2·cv).
    random_state : int, default 0
        Seed of the folds and of every candidate.
    n_jobs : int, default 1
        joblib workers over candidates × folds (-1: all cores).
    progress : bool
        A tqdm bar over the fits.
    options : dict, optional
        Per-form estimator settings, e.g. ``{"thesis": {"maxiter": 100}}``.
    intervals : {"studentized", "cv+"}, default "studentized"
        How ``model_`` calibrates its intervals from the chosen candidate's fold models (the ``method`` of
        :class:`~perfkit.model.uncertainty.conformal.ConformalRegressor`).
    extra_candidates : list of Candidate, default ()
        Candidates tried after those of ``forms`` (e.g. :func:`step_candidates`).
    select : {"cv", "1se", "best", "extrapolation"}, default "cv"
        "cv" or "1se": the one-standard-error rule on the CV MAPE. "best": the lowest CV MAPE. "extrapolation":
        the lowest MAPE of inner extrapolation splits of the rows along ``extrapolate`` (the table's
        ``extrap_mape``; the CV columns stay beside it).
    extrapolate : (column, fit_max), optional
        With ``select="extrapolation"``: the scale column and the largest value of it that ``X`` is meant to
        hold (the inner splits are :func:`perfkit.model.uncertainty.scale_intervals.inner_splits` of ``X[column]``).
    predict_drop : list of str, default ()
        Columns measured in fit only (phases): the inner extrapolation predictions never see them.
    reference : bool, default False
        Also tune a random forest, gradient boosting and an RBF SVR on the same folds
        (:func:`perfkit.model.selection.blackbox.black_box_reference`): ``FormSearch.reference``, and the summary says how
        far the chosen form is from the best of them.

    Returns
    -------
    FormSearch
        ``table`` of candidates, ``model_`` (the chosen form with conformal intervals) and ``summary()``.
    """
    import pandas as pd
    from sklearn.model_selection import KFold

    k = check_int("cv", cv, minimum=2)
    check_int("random_state", random_state, minimum=0)
    if not isinstance(intervals, str) or intervals not in ("studentized", "cv+"):
        raise ValueError(f"intervals: expected 'studentized' or 'cv+', got {intervals!r}")
    if not isinstance(select, str) or select not in SELECTIONS:
        raise ValueError(f"select: expected one of {SELECTIONS}, got {select!r}")
    if not isinstance(reference, (bool, np.bool_)):
        raise ValueError(f"reference: expected True or False, got {reference!r}")
    n_jobs = check_n_jobs(n_jobs)
    cands = form_candidates(forms, numeric, categorical, extrinsic, network=network, random_state=random_state,
                            options=options) + _check_extra(extra_candidates)
    if not isinstance(X, pd.DataFrame):
        raise ValueError(f"X: expected a pandas DataFrame, got {type(X).__name__}")
    validate_frame(X, numeric, categorical, extrinsic)
    y = validate_target(y, X, positive=True)
    if len(X) < 2 * k:
        raise ValueError(f"X: {len(X)} rows are too few for cv={k} (need at least {2 * k})")
    if select == "extrapolation":
        check_extrapolate(X, extrapolate, predict_drop)
    start = time.perf_counter()
    folds = list(KFold(k, shuffle=True, random_state=int(random_state)).split(X))
    from joblib import delayed

    tasks = [delayed(_score_fold)(c.estimator, X, y, tr, te, categorical) for c in cands for tr, te in folds]
    results = run_parallel(n_jobs, None, tasks, len(tasks), "form search", progress)
    rows = []
    all_scores, unscored = _paired_scores(results, folds, y, len(cands))
    for i, c in enumerate(cands):
        res = results[i * k:(i + 1) * k]
        scores = all_scores[i]
        rows.append(dict(form=c.form, terms=c.terms, n_params=float(np.mean([r[0] for r in res])),
                         cv_mape=float(scores.mean()), cv_mape_se=float(scores.std(ddof=1) / np.sqrt(k)),
                         fit_seconds=float(np.mean([r[1] for r in res])), unscored=unscored))
    table = pd.DataFrame(rows)
    chosen = int(table["cv_mape"].idxmin()) if select == "best" else one_standard_error_choice(table)
    if select == "extrapolation":
        chosen = extrapolation_choice(table, cands, X, y, extrapolate, predict_drop, n_jobs, progress)
    best = int(table["cv_mape"].idxmin())
    table["within_1se"] = table["cv_mape"] <= table.loc[best, "cv_mape"] + table.loc[best, "cv_mape_se"]
    table["chosen"] = table.index == chosen
    # the chosen candidate's fold models and out-of-fold predictions are the intervals' calibration (same folds)
    res = results[chosen * k:(chosen + 1) * k]
    model = ConformalRegressor(cands[chosen].estimator, method=intervals, n_splits=k, random_state=int(random_state))
    model._fit_from_folds(X, y, folds, [r[2] for r in res], [r[3] for r in res], [r[4] for r in res])
    ref = None
    if reference:
        from .blackbox import black_box_reference

        ref = black_box_reference(X, y, numeric, categorical, extrinsic, folds=folds, random_state=random_state,
                                  n_jobs=n_jobs, progress=progress)
    return FormSearch(table=table, candidates=cands, chosen=chosen, model_=model, cv=k,
                      fit_time=time.perf_counter() - start, folds=folds, select=select, fold_mape=all_scores,
                      reference=ref)


# ------------------------------------------------------------------------------ extra candidates
def _check_extra(extra) -> list:
    extra = list(extra)
    if not all(isinstance(c, Candidate) for c in extra):
        raise ValueError("extra_candidates: expected a list of Candidate")
    return extra
