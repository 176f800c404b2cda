"""What-if: one configuration, one column varied, the predicted time with its interval, speedup and efficiency.

``perfkit whatif`` is this function and :func:`perfkit.report.plots.whatif_figure`.
"""
from __future__ import annotations

import numpy as np

__all__ = ["whatif"]


def whatif(model, base: dict, column: str, values, coverage: float = 0.9):
    """Predict ``base`` with ``column`` set to each of ``values``.

    Parameters
    ----------
    model : fitted model with ``predict_interval`` (a :class:`~perfkit.model.intervals.ConformalRegressor`,
        or a :class:`~perfkit.model.search.FormSearch`)
    base : dict
        The configuration: every column the model needs.
    column : str
        The column to vary (e.g. "workers").
    values : sequence
        Its values, the first being the reference of the speedup.
    coverage : float
        Interval coverage, strictly between 0 and 1.

    Returns
    -------
    pandas.DataFrame
        ``column``, predicted, lower, upper, extrapolated, speedup (time at the first value / time), and,
        when the values are numbers, efficiency (speedup / (value / first value)). The model's
        :class:`~perfkit.model.intervals.ExtrapolationWarning` is passed on.
    """
    import pandas as pd

    if not callable(getattr(model, "predict_interval", None)):
        raise ValueError("model: it has no predict_interval; wrap it in ConformalRegressor (or fit with a --form)")
    grid = list(values)
    if not grid:
        raise ValueError(f"values: give at least one value of {column!r}")
    if not isinstance(base, dict):
        raise ValueError(f"base: expected a dict of column -> value, got {type(base).__name__}")
    rows = pd.DataFrame([dict(base, **{column: v}) for v in grid])
    iv = model.predict_interval(rows, coverage)
    table = pd.DataFrame({column: grid, "predicted": iv["predicted"].to_numpy(), "lower": iv["lower"].to_numpy(),
                          "upper": iv["upper"].to_numpy(), "extrapolated": iv["extrapolated"].to_numpy()})
    table["speedup"] = table["predicted"].iloc[0] / table["predicted"]
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in grid):
        table["efficiency"] = table["speedup"] / (np.asarray(grid, dtype=float) / float(grid[0]))
    return table
