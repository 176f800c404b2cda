"""What-if: one configuration, one column varied, the predicted time with its interval, speedup and efficiency.

``perfkit whatif`` is this function and :func:`perfkit.report.plots.whatif_figure`.
"""
from __future__ import annotations

import numpy as np

__all__ = ["whatif", "model_columns"]


def model_columns(model):
    """The columns ``model`` reads, in the order of its roles (numeric, categorical, extrinsic), or None when it
    does not say: a :class:`~perfkit.model.uncertainty.conformal.ConformalRegressor` or a
    :class:`~perfkit.model.selection.search.FormSearch` (their form's roles), or a form (its ``feature_names_in_``)."""
    inner = getattr(model, "model_", model)
    names = getattr(getattr(inner, "estimator_", inner), "feature_names_in_", None)  # None when not fitted
    return None if names is None else list(names)


def _predictable(model, rows, column: str, grid) -> np.ndarray:
    """Mask of the rows the model can predict (:func:`~perfkit.model.base.predictable_mask`); warns
    (:class:`~perfkit.model.uncertainty.conformal.ExtrapolationWarning`) naming the values it cannot, and
    ``ValueError`` when it cannot predict the first value (the speedup's reference)."""
    import warnings

    from ..base import RowCapabilities, predictable_mask
    from .conformal import ExtrapolationWarning

    inner = getattr(model, "model_", model)
    ok = predictable_mask(inner, rows)
    if ok.all():
        return ok
    bound = inner.level_bound_columns() if isinstance(inner, RowCapabilities) else []
    why = (f"the model predicts {', '.join(bound)} only at the values measured" if bound else
           "the model has no rate for that combination of levels")
    if not ok[0]:
        raise ValueError(f"values: the first value, {column} = {grid[0]!r}, is the speedup's reference and the model "
                         f"cannot predict it ({why}); start from a value it was fitted on")
    skipped = ", ".join(str(v) for v, good in zip(grid, ok) if not good)
    warnings.warn(f"{column} = {skipped}: not predicted ({why}); those rows are left empty and marked "
                  "extrapolated", ExtrapolationWarning, stacklevel=3)
    return ok


def whatif(model, base: dict, column: str, values, coverage: float = 0.9):
    """Predict ``base`` with ``column`` set to each of ``values``.

    Parameters
    ----------
    model : fitted model with ``predict_interval`` (a :class:`~perfkit.model.uncertainty.conformal.ConformalRegressor`,
        or a :class:`~perfkit.model.selection.search.FormSearch`)
    base : dict
        The configuration: every column the model needs.
    column : str
        The column to vary (e.g. "workers").
    values : sequence
        Its values, the first being the reference of the speedup; numbers must be finite.
    coverage : float
        Interval coverage, strictly between 0 and 1.

    Returns
    -------
    pandas.DataFrame
        ``column``, predicted, lower, upper, extrapolated, speedup (time at the first value / time) with
        speedup_lower/upper ([lower₀/upper, upper₀/lower]: both times inside their intervals, so at least
        1 − 2α coverage, conservative), and, when the values are numbers > 0, efficiency (speedup / (value /
        first value)) with efficiency_lower/upper. The model's
        :class:`~perfkit.model.uncertainty.conformal.ExtrapolationWarning` is passed on. A value the model cannot
        predict (a hybrid form with a rate per measured worker count, asked for another count) leaves its row
        empty (NaN), marked extrapolated, and one ExtrapolationWarning names those values.

    Raises
    ------
    ValueError
        ``column`` is not a column the model reads (:func:`model_columns`: varying it would change nothing), or
        the target; a number that is not finite; a first value the model cannot predict; the errors of
        ``predict_interval``.
    """
    import pandas as pd

    if not callable(getattr(model, "predict_interval", None)):
        raise ValueError("model: it has no predict_interval; wrap it in ConformalRegressor (or fit with a --form)")
    grid = list(values)
    if not grid:
        raise ValueError(f"values: give at least one value of {column!r}")
    if not isinstance(base, dict):
        raise ValueError(f"base: expected a dict of column -> value, got {type(base).__name__}")
    used = model_columns(model)
    if used is not None and column not in used:
        raise ValueError(f"column {column!r}: the model does not read it, so varying it would change nothing; "
                         f"it reads {', '.join(map(repr, used))}")
    numeric = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in grid)
    if numeric and not np.isfinite(np.asarray(grid, dtype=float)).all():
        raise ValueError(f"values: {column!r} = {grid}: every value must be a finite number")
    rows = pd.DataFrame([dict(base, **{column: v}) for v in grid])
    ok = _predictable(model, rows, column, grid)
    iv = model.predict_interval(rows[ok], coverage)
    t, lo, hi = (np.full(len(grid), np.nan) for _ in range(3))
    for out, c in ((t, "predicted"), (lo, "lower"), (hi, "upper")):
        out[ok] = iv[c].to_numpy(dtype=float)
    flags = np.ones(len(grid), dtype=bool)
    flags[ok] = iv["extrapolated"].to_numpy(dtype=bool)
    table = pd.DataFrame({column: grid, "predicted": t, "lower": lo, "upper": hi, "extrapolated": flags})
    # the speedup's interval joins the two time intervals: both times inside their intervals (at least
    # 1 − 2α together; conservative, as the two errors of one configuration are correlated)
    speed, s_lo, s_hi = t[0] / t, lo[0] / hi, hi[0] / lo
    s_lo[0] = s_hi[0] = 1.0  # the reference itself
    table["speedup"], table["speedup_lower"], table["speedup_upper"] = speed, s_lo, s_hi
    if numeric and min(grid) > 0:  # an efficiency needs a ratio of positive values
        ratio = np.asarray(grid, dtype=float) / float(grid[0])
        table["efficiency"], table["efficiency_lower"], table["efficiency_upper"] = \
            speed / ratio, s_lo / ratio, s_hi / ratio
    return table
