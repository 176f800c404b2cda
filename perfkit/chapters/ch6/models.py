"""Chapter 6's model fits: the interpretable forms with conformal intervals, the black boxes, the hybrid form's
bootstrap refits, the what-if table and the fitted formulas. Every fit is seeded and runs on one BLAS thread."""
from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import KFold
from threadpoolctl import threadpool_limits

from ...model.selection.baselines import make_baseline
from ...model.selection.blackbox import black_box_reference
from ...model.forms.generic import TINY, GenericPerformanceModel
from ...model.uncertainty.conformal import ConformalRegressor, ExtrapolationWarning, predictable_rows
from ...model.selection.search import THESIS_SEARCH, make_form
from ...model.uncertainty.whatif import whatif
from .data import Split
from .params import COVERAGE, Params

__all__ = ["interpretable", "same_estimator", "JOB_COST", "fit_interval_model", "interval_rows", "fit_baseline",
           "fit_tuned", "compute_rate", "rate_samples", "whatif_table", "thesis_formula", "formula"]


def interpretable(method: str, s: Split, p: Params):
    """The unfitted estimator of an interpretable ``method`` on split ``s`` (None when it does not apply)."""

    if method in ("thesis", "thesis_rel"):
        kw = dict(THESIS_SEARCH) if p.quick else {}
        if method == "thesis_rel":
            kw["loss"] = "relative"
        return GenericPerformanceModel(**s.roles, random_state=0, scale=None, **kw)  # as Chapter 4 fits it
    if method == "loglinear":
        return make_form("loglinear", **s.roles)
    if method == "hybrid" and s.network is not None:
        return make_form("hybrid", **s.roles, network=s.network, **({"fixed": s.fixed} if s.fixed else {}))
    if method == "symbolic":
        return make_form("symbolic", **s.roles, network=s.network, **({"fixed": s.fixed} if s.fixed else {}))
    return None


def same_estimator(a, b) -> bool:
    """Whether two unfitted estimators are the same model (class and settings)."""
    try:
        return type(a) is type(b) and a.get_params() == b.get_params()
    except Exception:  # noqa: BLE001 - settings that cannot be compared are not the same
        return False


#: rough relative cost of one job of each kind, to start the longest first (a shorter tail on few cores)
JOB_COST = {"tuned": 6.0, "thesis": 5.0, "thesis_rel": 4.0, "symbolic": 4.0, "loglinear": 3.0, "RF": 2.0, "GB": 2.0,
            "rate": 1.0, "SVR": 0.5, "hybrid": 0.5}


def fit_interval_model(estimator, X, y, folds: int, intervals: bool = True):
    """``(model, seconds, note)``: ``estimator`` inside studentised conformal intervals (a plain fit without
    ``intervals``, or when they fail)."""


    start = time.perf_counter()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not intervals:
            model, note = clone(estimator).fit(X, y), "quick mode: one fit, no intervals"
        else:
            try:
                model = ConformalRegressor(estimator, method="studentized", n_splits=folds, random_state=0).fit(X, y)
                note = ""
            except ValueError as exc:  # e.g. a fold model predicting 0 s: no relative error, no interval
                model, note = clone(estimator).fit(X, y), f"no intervals ({exc})"
    return model, time.perf_counter() - start, note


def interval_rows(model, s: Split) -> np.ndarray:
    """Held-out rows that get an interval: every row for the studentised and split methods (one model predicts);
    for CV+, the rows that every fold model of ``model`` can predict (each of their category levels is in the
    fold's rows to fit). The folds are the ones :class:`~perfkit.model.ConformalRegressor` draws
    (``KFold(n_splits, shuffle=True, random_state)``)."""


    ok = np.ones(len(s.X_test), dtype=bool)
    if getattr(model, "method", "cv+") != "cv+":
        return ok
    folds = KFold(int(model.n_splits), shuffle=True, random_state=int(model.random_state)).split(s.X_fit)
    for (tr, _), fold_model in zip(folds, model.estimators_):
        ok &= predictable_rows(fold_model, s.X_fit.iloc[tr], s.X_test, s.roles["categorical"])
    return ok


def fit_baseline(kind: str, roles: dict, X, y):
    """``(model, seconds, "")``: the black box ``kind`` (RF, SVR, GB) fitted on one BLAS thread."""


    start = time.perf_counter()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make_baseline(kind.lower(), **roles, random_state=0).fit(X, y)
    return model, time.perf_counter() - start, ""


def fit_tuned(roles: dict, X, y, folds: int):
    """``(model, seconds, note)``: the calibrated black-box reference (the best of RF, gradient boosting and SVR,
    each tuned by ``folds``-fold CV on these rows, :func:`~perfkit.model.selection.blackbox.black_box_reference`) refitted on
    every row, on one BLAS thread; the note names the kind and setting chosen."""
    start = time.perf_counter()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = black_box_reference(X, y, **roles, cv=folds, random_state=0)
    return ref.model_, time.perf_counter() - start, f"{ref.label} (tuned by {folds}-fold CV)"


def compute_rate(model) -> float:
    """The hybrid form's compute rate (s per forward FLOP) on one worker, in its common regime.

    With rates by worker count the rate of ``workers=1``; with a regime (the smallest batch) the rate of the
    rows outside it (``batch_size≠…``); with one shared rate, that rate. NaN when the model has no such term.

    >>> class M: terms_ = [("compute", "workers=1; batch_size=8"), ("compute", "workers=1; batch_size≠8"),
    ...                    ("compute", "workers=2; batch_size≠8"), ("step", "")]; rates_ = [1.0, 2.0, 3.0, 4.0]
    >>> compute_rate(M())
    2.0
    """
    for (cost, level), rate in zip(model.terms_, model.rates_):
        if cost != "compute":
            continue
        parts = [part for part in level.split("; ") if part] if level else []
        if all(part == "workers=1" or ("≠" in part and "=" not in part) for part in parts):
            return float(rate)
    return float("nan")


def rate_samples(estimator, X, y, seeds) -> np.ndarray:
    """The compute rate of ``estimator`` refitted on bootstrap resamples of the rows (one per seed)."""

    out = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in seeds:
            idx = np.random.default_rng(seed).integers(0, len(y), size=len(y))
            try:
                out.append(compute_rate(clone(estimator).fit(X.iloc[idx], y[idx])))
            except ValueError:
                out.append(float("nan"))
    return np.asarray(out, dtype=float)


def whatif_table(model, base, workers, coverage: float = COVERAGE):
    """:func:`perfkit.model.uncertainty.whatif.whatif` over the worker counts ``workers`` (integers), without its
    extrapolation warning (the table marks those rows; the chapter reads them)."""

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        return whatif(model, base, "workers", [int(v) for v in workers], coverage)


#: coefficients (seconds) below this are written as 0: a bound-constrained fit leaves them at about 1e-40, digits
#: that carry no information
def thesis_formula(model, digits: int = 3) -> str:
    """The fitted thesis form (eq. 4.4) in one line (:meth:`GenericPerformanceModel.formula`)."""
    return model.formula(digits)


def formula(model) -> str:
    """The fitted formula of any form (:meth:`perfkit.model.base.PerformanceForm.formula`)."""
    return model.formula()
