"""Tables laid out for a reader: numbers rounded to what they carry, mean ± std in one cell, claims in full.

The tidy tables a chapter saves as CSV keep every digit; these helpers make the
views a notebook displays.

>>> format_mean_std(0.40091, 0.0243)
'0.4009 ± 0.0243'
>>> pm(-0.5581, 0.0543)
'−0.558 ± 0.054'
>>> pm(2.2e-06, 3.0e-07)
'2.20e-6 ± 3.0e-7'
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["format_mean_std", "pm", "sig", "rounded", "mean_std_columns", "claims_view"]


def format_mean_std(mean, std, digits: int = 4) -> str:
    """``"0.4009 ± 0.024"`` with ``digits`` significant digits; just the mean when std is missing."""

    def fmt(x):
        return np.format_float_positional(float(x), precision=digits, fractional=False, trim="-")

    if std is None or (isinstance(std, float) and np.isnan(std)):
        return fmt(mean)
    return f"{fmt(mean)} ± {fmt(std)}"


def sig(x, digits: int = 3) -> str:
    """``x`` with ``digits`` significant digits, plain where readable, scientific for very small or large values."""
    if x is None:
        return ""
    if isinstance(x, (np.integer, int)) and not isinstance(x, bool):
        return str(int(x))
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(x):
        return "" if math.isnan(x) else str(x)
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e6:
        return np.format_float_positional(x, precision=digits, fractional=False, trim="-").replace("-", "−", 1)
    return f"{x:.{digits - 1}e}".replace("e-0", "e-").replace("e+0", "e+").replace("-", "−", 1 if x < 0 else 0)


def pm(mean, std, std_digits: int = 2) -> str:
    """``mean ± std`` with the std to ``std_digits`` significant digits and the mean to the same decimal place."""
    if std is None or not np.isfinite(std) or std == 0:
        return sig(mean)
    if not np.isfinite(mean):
        return ""
    exp = math.floor(math.log10(abs(std))) - (std_digits - 1)  # place of the std's last digit
    if -4 <= exp < 3:
        decimals = max(0, -exp)
        m, s = f"{mean:.{decimals}f}", f"{round(std, -exp):.{decimals}f}"
    else:
        em = math.floor(math.log10(abs(mean))) if mean else exp
        m, s = f"{mean:.{max(0, em - exp)}e}", f"{std:.{std_digits - 1}e}"
        m, s = (v.replace("e-0", "e-").replace("e+0", "e+") for v in (m, s))
    return f"{'−' + m[1:] if m.startswith('-') else m} ± {s}"


def rounded(df, digits: int = 3):
    """A copy of ``df`` with floats shown to ``digits`` significant digits and integers as plain integers."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype.kind in "fiu":
            out[col] = [sig(v, digits) for v in out[col]]
    return out


def mean_std_columns(df, pairs: dict, drop: bool = True):
    """Replace each ``{label: (mean_col, std_col)}`` pair of columns by one ``mean ± std`` column ``label``."""
    out = df.copy()
    for label, (m, s) in pairs.items():
        if m not in out.columns:
            continue
        std = out[s] if s in out.columns else [np.nan] * len(out)
        pos = list(out.columns).index(m)
        values = [pm(a, b) if np.isfinite(a) else "" for a, b in zip(out[m].astype(float), std)]
        if drop:
            out = out.drop(columns=[c for c in (m, s) if c in out.columns])
        out.insert(min(pos, len(out.columns)), label, values)
    return out


def claims_view(claims):
    """The ledger with every text in full, wrapped, left-aligned, verdicts coloured.

    The estimate is shown to three significant digits, its 95 % interval beside it and
    ``agree`` (the share of resamples on the claim's side of its threshold) as a
    percentage; ``—`` where a quantity has no resamples (printed numbers compared exactly).
    """
    colours = {"holds": "#1b7837", "does not hold": "#b2182b", "inconclusive": "#b35806",
               "cannot be tested here": "#777777"}
    view = claims.drop(columns=[c for c in ("chapter", "key", "data") if c in claims.columns])
    if "estimate" in view.columns:
        view = view.assign(estimate=[f"{v:.3g}" if np.isfinite(v) else "" for v in view["estimate"].astype(float)])
    if "agree" in view.columns:
        tested = view["verdict"] != "cannot be tested here" if "verdict" in view.columns else True
        view = view.assign(agree=[(f"{100 * v:.0f} %" if np.isfinite(v) else ("—" if t else ""))
                                  for v, t in zip(view["agree"].astype(float), np.broadcast_to(tested, len(view)))])
    return (view.style.hide(axis="index")
            .set_properties(**{"text-align": "left", "white-space": "normal", "vertical-align": "top"})
            .map(lambda v: f"color: {colours.get(v, 'inherit')}; font-weight: bold", subset=["verdict"])
            .set_table_styles([{"selector": "th", "props": "text-align: left"}]))
