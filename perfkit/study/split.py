"""The rows a study fits on and the rows it scores: a random held-out share, or the rows beyond a scale column's
MAX (:func:`split`). Every size is checked before the first fit, so no fit is run only to fail on its score."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .constraints import given, name
from .data import check_target_spread
from .spec import AUTO, MIN_HELD_OUT, FitSpec

__all__ = ["Split", "split", "held_out_rows", "extrapolation_split", "scale_study_split"]


@dataclass(frozen=True)
class Split:
    """The fit rows (``X_fit``, ``y_fit``) and the held-out rows (``X_test`` without the phase columns: they are
    predicted from the configuration alone, ``y_test``); ``scale`` = (COL, MAX) of an extrapolation split, else
    None."""

    X_fit: pd.DataFrame
    X_test: pd.DataFrame
    y_fit: pd.Series
    y_test: pd.Series
    scale: tuple | None = None

    def held_out(self) -> str:
        """"40 rows held out" (and where, for an extrapolation split)."""
        scale = self.scale
        if scale and not len(self.X_test):
            return f"no row held out: a scaling study beyond {scale[0]} = {scale[1]:g}"
        return f"{len(self.X_test)} rows held out" + (f" ({scale[0]} > {scale[1]:g})" if scale else "")


def held_out_rows(value: float, n_rows: int | None = None, min_fit: int = 2) -> int | None:
    """``test_size`` as a number of held-out rows (None when ``n_rows`` is not given: only the form is checked).

    A value strictly between 0 and 1 is a share of the rows (rounded up, as scikit-learn does); a whole number
    >= 1 is a row count. Anything else (0, negatives, 1.5, NaN) is an error, and so is a split that holds out fewer
    than :data:`~perfkit.study.spec.MIN_HELD_OUT` rows or leaves fewer than ``min_fit`` rows to fit.
    """
    flag = name("test_size")
    if not math.isfinite(value) or value <= 0 or (value >= 1 and value != int(value)):
        raise ValueError(f"{flag}: expected a share strictly between 0 and 1 or a whole number of rows >= 1, "
                         f"got {value:g}")
    if n_rows is None:
        return None
    low, high = MIN_HELD_OUT, n_rows - max(min_fit, 1)
    if n_rows < 2:
        raise ValueError(f"{flag} {value:g}: the data has {n_rows} row; fitting and testing need at least 2")
    n_test = math.ceil(value * n_rows) if value < 1 else int(value)
    if not 1 <= n_test <= n_rows - 1:
        raise ValueError(f"{flag} {value:g}: holding out {n_test} of the {n_rows} rows leaves nothing to fit; "
                         f"give a share in (0, 1) or 1 to {n_rows - 1} rows")
    allowed = (f"give a share in (0, 1) that holds out {low} to {high} rows, or a row count from {low} to {high}"
               if low <= high else f"the data has {n_rows} rows; at least {low + max(min_fit, 1)} are needed")
    if n_test < low:
        raise ValueError(f"{flag} {value:g}: holds out {n_test} of the {n_rows} rows; scoring the fit (R², "
                         f"coverage) needs at least {low} held-out rows; {allowed}")
    if n_rows - n_test < min_fit:
        raise ValueError(f"{flag} {value:g}: holding out {n_test} of the {n_rows} rows leaves {n_rows - n_test} "
                         f"to fit; the fit needs at least {min_fit}; {allowed}")
    return n_test


def _values(v) -> str:
    u = np.unique(v)
    shown = ", ".join(f"{x:g}" for x in u[:12])
    return shown + (" ..." if len(u) > 12 else "")


def _snapped(v, top: float, where: str, col: str) -> float:
    """MAX snapped to the largest value of the column at most MAX (the rows fitted end there, so the extrapolation
    factor and the intervals' distance start there), with a warning when that moves it."""
    import warnings

    from .result import StudyWarning

    below = v[v <= top]
    if not len(below) or below.max() == top or v.max() <= top:  # nothing to snap, or nothing held out
        return top
    snapped = float(below.max())
    warnings.warn(f"{where}: no row has {col} = {top:g}; the fit rows end at {col} = {snapped:g}, so MAX is "
                  f"{snapped:g} (the extrapolation factors and the intervals' distance are measured from it)",
                  StudyWarning, stacklevel=4)
    return snapped


def extrapolation_split(spec: FitSpec, X, y, min_fit: int):
    """``((X_fit, X_test, y_fit, y_test), (COL, MAX))``: fit on the rows with COL <= MAX, test on the rows beyond.

    MAX defaults to the largest value of COL that is at most half its largest
    (:func:`~perfkit.model.uncertainty.scale_intervals.default_fit_max`), so that the held-out rows reach at least
    twice the fitted maximum. Refused: fewer than ``min_fit`` fit rows or ``MIN_HELD_OUT`` test rows; for a model
    with intervals, fit rows that leave no inner split
    (:func:`~perfkit.model.uncertainty.scale_intervals.inner_splits`)."""
    from ..model.uncertainty.scale_intervals import MIN_INNER_FIT, MIN_INNER_TEST, default_fit_max, inner_splits

    col, top = spec.scale_column
    flag = name("extrapolate")
    v = np.asarray(X[col], dtype=float)
    if top is None:
        top = default_fit_max(v)
        if top is None:
            raise ValueError(f"{flag} {col}: no value of {col!r} is at most half its largest ({v.max():g}), so no "
                             f"default MAX; give one, e.g. {flag} {col}:{np.unique(v)[0]:g}")
    else:
        top = _snapped(v, top, f"{flag} {col}:{top:g}", col)
    fit = v <= top
    n_fit, n_test = int(fit.sum()), int((~fit).sum())
    where = f"{flag} {col}:{top:g}"
    if n_fit < min_fit or n_test < MIN_HELD_OUT:
        raise ValueError(f"{where}: {n_fit} rows have {col} <= {top:g} and {n_test} lie above it; the fit needs at "
                         f"least {min_fit} rows and the test at least {MIN_HELD_OUT} (values of {col}: "
                         f"{_values(v)}); give another MAX")
    if spec.calibrated and not inner_splits(v[fit], top):
        raise ValueError(f"{where}: the {n_fit} fit rows leave no inner split to calibrate the intervals that widen "
                         f"with the distance (fit on the rows with {col} up to {top / 4:g} or {top / 2:g}, at least "
                         f"{MIN_INNER_FIT}, score at least {MIN_INNER_TEST} rows above, up to {top:g}); give a "
                         "larger MAX")
    return (X[fit], X[~fit], y[fit], y[~fit]), (col, float(top))


def scale_study_split(spec: FitSpec, X, y) -> Split:
    """A scaling study's rows (``spec.scale_study``): every row is fitted and none held out; ``scale`` = (COL, its
    largest value). Refused: rows whose values of COL leave no inner extrapolation split
    (:func:`~perfkit.model.selection.by_scale.scale_splits`)."""
    from ..model.selection.by_scale import scale_splits

    col = spec.scale_study
    v = np.asarray(X[col], dtype=float)
    if not scale_splits(v):
        raise ValueError(f"{name('scale_of')} {col}: the rows' values of {col!r} ({_values(v)}) leave no inner "
                         f"extrapolation split (fit on the values up to half the largest, {v.max() / 2:g}, from at "
                         "least two distinct values, and score larger ones): measure more distinct values of it")
    return Split(X, X.iloc[:0].drop(columns=list(spec.phases)), y, y.iloc[:0], (col, float(v.max())))


def split(spec: FitSpec, X, y) -> Split:
    """The fit and held-out rows of ``spec`` (see :class:`Split`), every size checked: the folds the search or the
    intervals need, the split's own limits, a held-out target that varies. A scaling study holds out nothing
    (:func:`scale_study_split`)."""
    from ..model.selection.baselines import train_test_split_frame

    if spec.scale_study is not None:
        return scale_study_split(spec, X, y)

    uses_folds = spec.reads_cv  # the form search and the intervals refit on folds
    folds = spec.cv * (2 if spec.form == AUTO else 1) if uses_folds else 2  # the search needs 2 rows per fold
    needs = "the form search needs 2·cv" if spec.form == AUTO else "the intervals need cv"
    cv = given("cv", spec.cv)
    if uses_folds and folds > len(X) - 2:  # named before a split's own limits would blame test_size or MAX
        raise ValueError(f"{cv}: {needs} = {folds} rows to fit, and the data has {len(X)} rows (at least 2 are held "
                         f"out); give a smaller {name('cv')}")
    if spec.extrapolate is not None:
        parts, scale = extrapolation_split(spec, X, y, 2)
        hint = f"; give another MAX ({name('extrapolate')} {scale[0]}:MAX)"
    else:
        n_test = held_out_rows(spec.held_out, len(X), min_fit=2)
        parts, scale = tuple(train_test_split_frame(X, y, test_size=n_test, random_state=0)), None
        hint = f"; give another {name('test_size')}"
    if uses_folds and len(parts[0]) < folds:
        n_fit, n_test = len(parts[0]), len(parts[1])
        if scale:
            where = f"{name('extrapolate')} {scale[0]}:{scale[1]:g} leaves {n_fit} rows to fit"
        else:
            where = (f"{given('test_size', spec.held_out)}: holding out {n_test} of the {len(X)} rows leaves {n_fit} "
                     "to fit")
        raise ValueError(f"{where}; the fit needs at least {folds} ({cv}: {needs} = {folds}); give a smaller "
                         f"{name('cv')}" + (" or a larger MAX" if scale else f" or a smaller {name('test_size')}"))
    check_target_spread(parts[3], f"target column {spec.target!r} on the {len(parts[3])} held-out rows", hint=hint)
    return Split(parts[0], parts[1].drop(columns=list(spec.phases)), parts[2], parts[3], scale)
