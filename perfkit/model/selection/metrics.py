"""Error metrics used by the thesis: MAPE (eq. 4.13), MAE, MSE, RMSE and R² (eqs. 3.10–3.12).

scikit-learn does the arithmetic where it already has the metric; this module adds
input checks that name the argument at fault and the thesis's conventions
(MAPE in percent).
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["mape", "mae", "mse", "rmse", "r2", "regression_report"]


def _pair(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    out = []
    for name, value in (("y_true", y_true), ("y_pred", y_pred)):
        try:
            arr = np.asarray(value, dtype=float).ravel()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}: expected numbers, got {value!r}") from exc
        if arr.size == 0:
            raise ValueError(f"{name}: empty input")
        bad = ~np.isfinite(arr)
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name}: non-finite value {float(arr[pos])!r} at position {pos}")
        out.append(arr)
    if out[0].shape != out[1].shape:
        raise ValueError(
            f"mismatched lengths: y_true has {out[0].size} values, y_pred has {out[1].size}"
        )
    return out[0], out[1]


def mape(y_true, y_pred, relative_to: str = "measured") -> float:
    """Mean absolute percentage error in percent (eq. 4.13).

    .. math:: MAPE = \\frac{100}{n} \\sum_i \\left| \\frac{y_i - x_i}{d_i} \\right|

    Parameters
    ----------
    y_true : array_like
        Measured times y_i.
    y_pred : array_like
        Predicted times x_i.
    relative_to : {"measured", "predicted"}, default "measured"
        Denominator d_i. The usual definition (and scikit-learn's) divides by the
        measured value. Eq. 4.13 as printed divides by the *predicted* value;
        pass ``"predicted"`` to reproduce that reading.

    Returns
    -------
    float
        MAPE in percent (8.0 means 8 %).

    Examples
    --------
    >>> round(mape([1.0, 2.0], [1.1, 1.8]), 12)
    10.0
    """
    t, p = _pair(y_true, y_pred)
    if relative_to == "measured":
        denom, name = t, "y_true"
    elif relative_to == "predicted":
        denom, name = p, "y_pred"
    else:
        raise ValueError(f"relative_to: expected 'measured' or 'predicted', got {relative_to!r}")
    zero = denom == 0
    if zero.any():
        raise ValueError(f"{name}: zero value at position {int(np.flatnonzero(zero)[0])}; MAPE divides by it")
    return float(np.mean(np.abs((t - p) / denom)) * 100.0)


def mae(y_true, y_pred) -> float:
    """Mean absolute error, in the units of the data (eq. 4.9 without the model).

    Examples
    --------
    >>> mae([1.0, 2.0], [1.5, 1.0])
    0.75
    """
    from sklearn.metrics import mean_absolute_error

    return float(mean_absolute_error(*_pair(y_true, y_pred)))


def mse(y_true, y_pred) -> float:
    """Mean squared error.

    Examples
    --------
    >>> mse([1.0, 2.0], [1.5, 1.0])
    0.625
    """
    from sklearn.metrics import mean_squared_error

    return float(mean_squared_error(*_pair(y_true, y_pred)))


def rmse(y_true, y_pred) -> float:
    """Root mean squared error.

    Examples
    --------
    >>> round(rmse([0.0, 0.0], [3.0, 4.0]) ** 2, 12)
    12.5
    """
    return float(np.sqrt(mse(y_true, y_pred)))


def r2(y_true, y_pred) -> float:
    """Coefficient of determination (eqs. 3.10–3.12).

    .. math:: R^2 = 1 - \\frac{\\sum (t - t')^2}{\\sum (t - \\bar t)^2}

    Examples
    --------
    >>> r2([1.0, 2.0, 3.0], [1.0, 2.0, 4.0])
    0.5
    """
    from sklearn.metrics import r2_score

    t, p = _pair(y_true, y_pred)
    if t.size < 2:
        raise ValueError("y_true: R² needs at least 2 values")
    if np.all(t == t[0]):
        raise ValueError("y_true: all values are equal, so R² is undefined (total sum of squares is 0)")
    return float(r2_score(t, p))


def regression_report(y_true, y_pred) -> dict[str, float]:
    """All five metrics at once: MAPE (%), MAE, MSE, RMSE, R².

    Returns
    -------
    dict
        ``{"MAPE": ..., "MAE": ..., "MSE": ..., "RMSE": ..., "R2": ...}``
    """
    return {
        "MAPE": mape(y_true, y_pred),
        "MAE": mae(y_true, y_pred),
        "MSE": mse(y_true, y_pred),
        "RMSE": rmse(y_true, y_pred),
        "R2": r2(y_true, y_pred),
    }
