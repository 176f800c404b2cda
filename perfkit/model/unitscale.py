"""Unit-free fitting of eq. 4.4: the target and the power-law columns divided by their medians.

With ``scale="data"`` (the default of :class:`~perfkit.model.forms.generic.GenericPerformanceModel`) the fit works on

.. math:: y / s = \\Big(\\sum_i a'_i (I_i/m_i)^{p_i} + \\sum \\kappa'\\Big) \\prod_j (E_j/m_j)^{q_j} + C'

where s is the median of the measured times and m the median of each numeric or extrinsic column. The bounds of
a', κ', C' and the penalty λ apply to these dimensionless parameters, so a fit of the same data in seconds,
milliseconds or any multiple of them, or with a column in other units, solves the same problem: the predictions
scale with the target's unit and the powers do not change. The fitted coefficients are then written back in the
data's own units (:func:`to_data_units`), so predicting needs no scales:

    a = a'·s·m_i^(−p_i)·M,   κ = κ'·s·M,   C = C'·s,   with M = Π_j m_j^(−q_j).

``scale=None`` is the thesis's convention (§4.1.1): the bounds [0, 1000] and λ are in the target's units
(seconds), so the same data in microseconds is a different problem. The chapters that reproduce the thesis use it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["SCALES", "data_scales", "scaled_coefficients", "to_data_units", "check_scales"]

#: the choices of ``scale``: divide by the data's medians, or fit in the data's own units (the thesis)
SCALES = ("data", None)


def data_scales(X, y, numeric, extrinsic) -> dict:
    """``{"target": median(y), "columns": {column: median}}`` for the numeric and extrinsic columns (all > 0)."""
    return {"target": float(np.median(np.asarray(y, dtype=float))),
            "columns": {c: float(np.median(X[c].to_numpy(dtype=float))) for c in [*numeric, *extrinsic]}}


def _factors(scales, powers, numeric, extrinsic, n_linear):
    """The factor that turns each scaled linear parameter into data units (numeric a, level κ, then C)."""
    n_p = len(numeric)
    s = scales["target"]
    log_m = np.array([np.log(scales["columns"][c]) for c in [*numeric, *extrinsic]], dtype=float)
    log_outer = -float(np.dot(powers[n_p:], log_m[n_p:]))  # log M
    factors = np.full(n_linear, s * np.exp(log_outer))
    factors[:n_p] = s * np.exp(log_outer - powers[:n_p] * log_m[:n_p])
    factors[-1] = s
    return factors


def to_data_units(lin, powers, scales, numeric, extrinsic) -> np.ndarray:
    """The linear parameters (a, κ, C) of a scaled fit in the data's units."""
    lin = np.asarray(lin, dtype=float)
    return lin * _factors(scales, np.asarray(powers, dtype=float), numeric, extrinsic, len(lin))


def scaled_coefficients(coef, powers, scales, numeric, extrinsic) -> np.ndarray:
    """The inverse of :func:`to_data_units`: the dimensionless a', κ', C' that the bounds apply to (``coef``
    itself when ``scales`` is None)."""
    coef = np.asarray(coef, dtype=float)
    if scales is None:
        return coef
    return coef / _factors(scales, np.asarray(powers, dtype=float), numeric, extrinsic, len(coef))


def scale_logs(log_i, log_e, scales, numeric, extrinsic):
    """``log(I/m)`` and ``log(E/m)`` from the logs of the columns."""
    m = scales["columns"]
    shift_i = np.array([np.log(m[c]) for c in numeric], dtype=float)
    shift_e = np.array([np.log(m[c]) for c in extrinsic], dtype=float)
    return log_i - shift_i, log_e - shift_e


def check_scales(value, numeric, extrinsic, fail) -> dict | None:
    """A saved ``scales`` object checked: None, or a positive finite ``target`` and one positive finite median per
    numeric and extrinsic column; ``fail(message)`` builds the error."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"target", "columns"}:
        raise fail("fitted.scales: expected null or {\"target\": number, \"columns\": {column: number}}")
    cols = value["columns"]
    if not isinstance(cols, dict) or set(cols) != {*numeric, *extrinsic}:
        raise fail(f"fitted.scales.columns: expected one median for each of {[*numeric, *extrinsic]}")
    out = {"target": value["target"], "columns": dict(cols)}
    for name, v in [("target", value["target"]), *((f"columns[{c!r}]", cols[c]) for c in cols)]:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) or v <= 0:
            raise fail(f"fitted.scales.{name}: expected a finite number > 0, got {v!r}")
    out["target"] = float(out["target"])
    out["columns"] = {c: float(v) for c, v in cols.items()}
    return out
