"""The text report of a :class:`~perfkit.study.result.StudyResult` (what ``perfkit fit`` prints)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..progress import duration
from .compare import ERROR_COLUMNS

__all__ = ["render"]


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def render(result, header: bool = True) -> str:
    """The report of ``result``: the lines that opened the run (``header``), then the fit (the thesis form's seeds
    and parameters, or the form's or search's summary), and the comparison."""
    lines = list(result.header) if header else []
    if result.groups is not None:
        return "\n".join(lines + _grouped(result))
    if result.objective is not None:
        lines += _thesis_fit(result)
    else:
        lines += [result.model_summary, "", f"fit and calibration took {duration(result.fit_seconds)}"]
        if result.unscored_rows:
            lines.append(f"{result.unscored_rows} of {result.n_test} held-out rows have a combination of levels the "
                         f"chosen model has no rate for; every model is scored on the other "
                         f"{result.n_test - result.unscored_rows}")
        lines += _coverage(result)
    if result.held_out is not None:
        lines += _held_out(result)
    if result.objective is not None:
        lines += _coverage(result)
    lines += _inner(result) + _factors(result)
    return "\n".join(lines)


def _thesis_fit(result) -> list:
    o = result.objective
    lines = ["", f"best objective {o['best']:.6g}; {o['n_agree']} of {o['n_seeds']} seeds reached it (to {o['rtol']:g} "
             f"relative); spread over seeds {o['spread']:.2g} (relative)"]
    with pd.option_context("display.width", 160, "display.max_rows", 200, "display.float_format", _fmt):
        lines += ["", "parameters (best seed):", result.parameters.to_string(index=False)]
        if result.seed_summary is not None and _seeds_agree(result.seed_summary, o["rtol"]):
            lines += ["", f"every seed gave these parameters (mean ± std over the {o['n_seeds']} seeds: std 0 to "
                          f"{o['rtol']:g} relative for every one)"]
        elif result.seed_summary is not None:
            lines += ["", f"mean ± std over {o['n_seeds']} seeds:", result.seed_summary.to_string(index=False)]
    return lines


def _seeds_agree(summary, rtol: float) -> bool:
    """Whether every parameter's std over the seeds is within ``rtol`` of its mean (absolute below 1e-12)."""
    for std in [c for c in summary.columns if c.endswith("_std")]:
        mean = summary[std[:-4] + "_mean"].to_numpy(dtype=float)
        sd = summary[std].to_numpy(dtype=float)
        known = ~np.isnan(sd)
        if np.any(sd[known] > rtol * np.abs(mean[known]) + 1e-12):
            return False
    return True


def _scored(result) -> int:
    """How many held-out rows every model was scored on."""
    return result.n_test - result.unscored_rows


def _held_out(result) -> list:
    table = result.held_out
    with pd.option_context("display.width", 160, "display.max_rows", 200, "display.float_format", _fmt):
        lines = ["", "held-out errors:", table[ERROR_COLUMNS].to_string()]
    if {"MAPE_lo", "MAPE_hi"} <= set(table.columns):
        lines.append(f"MAPE 95 % intervals (bootstrap of the {_scored(result)} held-out rows): "
                     + ", ".join(f"{name} [{r.MAPE_lo:.3g}, {r.MAPE_hi:.3g}]" for name, r in table.iterrows()))
    return lines + _disagreement(table)


def _disagreement(table) -> list:
    """One sentence when MAPE and R² rank the models differently (they weigh errors differently)."""
    mape, r2 = table["MAPE"].astype(float), table["R2"].astype(float)
    if len(table) < 2 or mape.isna().any() or r2.isna().any():
        return []
    by_mape, by_r2 = mape.idxmin(), r2.idxmax()
    if by_mape == by_r2:
        return []
    return [f"MAPE and R² disagree: {by_mape} has the lowest MAPE ({mape[by_mape]:.3g} %), {by_r2} the highest R² "
            f"({r2[by_r2]:.3g}); MAPE weighs every row's relative error alike, R² the squared errors in seconds, so "
            "the long runs decide it"]


def _coverage(result) -> list:
    if result.coverage is None:
        return []
    scale = result.scale
    widen = f" (widening with the distance beyond {scale[0]} = {scale[1]:g})" if scale else ""
    return [f"{100 * result.spec.level:g} % intervals{widen} cover {100 * result.coverage:.1f} % of the "
            f"{result.coverage_rows} held-out rows"]


def _inner(result) -> list:
    if result.inner_note:
        return ["", f"inner splits of the fit rows: no comparison ({result.inner_note})"]
    if not result.inner:
        return []
    return ["", "inner splits of the fit rows (extrapolating within them, the rows beyond MAX unseen): MAPE (%) "
            + ", ".join(f"{name} {v:.3g}" for name, v in result.inner.items())]


def _factors(result) -> list:
    if result.factors is None:
        return []
    col, top = result.scale
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        table = result.factors.to_string(index=False, float_format=lambda v: f"{v:.3g}")
    return ["", f"extrapolation errors: MAPE (%) of the {_scored(result)} held-out rows ({col} > "
            f"{top:g}; fitted on {col} <= {top:g}) by factor {col} / {top:g}:", table]


def _grouped(result) -> list:
    """A leave-one-group-out study: the chosen form, the errors per held-out group, the pooled errors with their
    intervals, the margin over the best baseline and the intervals' coverage."""
    m = result.margin
    with pd.option_context("display.width", 200, "display.max_rows", 200, "display.max_columns", 20):
        per = result.groups.to_string(float_format=lambda v: f"{v:.3g}")
        pooled = result.held_out.to_string(float_format=lambda v: f"{v:.3g}")
    side = ("the interval lies below 0: the selected form is better" if m["hi"] < 0 else
            "the interval lies above 0: the baseline is better" if m["lo"] > 0 else
            "the interval contains 0: neither is clearly better")
    lines = [result.model_summary, "", f"fit and leave-one-group-out scoring took {duration(result.fit_seconds)}", "",
             "MAPE (%) of each held-out group (each predicted by fits without it; 'chosen': the form the other "
             "groups chose):", per, "", "over the groups (median of the groups' MAPE, 95 % interval from resampling "
             "the groups; MAPE and R² over all rows):", pooled, "",
             f"margin: selected form − {m['vs']} = {m['estimate']:+.3g} points [{m['lo']:+.3g}, {m['hi']:+.3g}] "
             f"({side})"]
    if result.unscored_rows:
        lines.append(f"{result.unscored_rows} rows could not be predicted without their group (a workload only "
                     "that group ran); they are left out of every model's errors")
    nested = [] if result.coverage_nested is None else [
        f"(each group's width: the other groups' held-out errors, as the saved model's for a new group; from the "
        f"other groups alone, fitted on one group fewer: {100 * result.coverage_nested:.1f} %)"]
    return lines + _coverage(result) + nested
