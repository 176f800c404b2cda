"""Run a leave-one-group-out study (``split="group:COL"``, e.g. one GPU type at a time): :func:`run_grouped`.

Every row is predicted without its group twice over: by the procedure (the form chosen by leave one group out on
the *other* groups, :func:`~perfkit.model.selection.by_group.nested_group_study`, its interval as wide as the other
groups' held-out errors under the same procedure require), and by each baseline fitted on the other groups. The
errors are reported per held-out group and as the median over groups of each group's MAPE, with a 95 % interval from resampling the groups (:func:`group_bootstrap`); the margin
of the procedure over the best baseline is paired on the same resamples. The saved model is the form chosen on
all groups, fitted on every row, with intervals calibrated on its held-out-group errors
(:class:`~perfkit.model.uncertainty.group_intervals.GroupIntervalModel`).
"""
from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from ..evidence import B, SEED, bootstrap_indices, percentile_interval
from .result import StudyResult

__all__ = ["run_grouped", "group_bootstrap", "SELECTED"]

#: the procedure's name in the tables
SELECTED = "selected form"


def group_bootstrap(y, predictions: dict, groups, b: int = B, seed: int = SEED) -> dict:
    """Name → (median over groups of each group's MAPE (%), b resampled medians): the groups drawn with replacement,
    the same draws for every model (paired). Rows a model did not predict are left out of its group's MAPE."""
    y = np.asarray(y, dtype=float)
    g = np.asarray(groups, dtype=object)
    levels = sorted(set(g.tolist()), key=str)
    draws = bootstrap_indices(len(levels), b, seed)
    out = {}
    for name, p in predictions.items():
        ape = 100.0 * np.abs(np.asarray(p, dtype=float) - y) / y
        per = np.array([np.nanmean(ape[g == lv]) if np.isfinite(ape[g == lv]).any() else np.nan for lv in levels])
        out[name] = (float(np.nanmedian(per)), np.nanmedian(per[draws], axis=1))
    return out


def _say(progress: bool, say, text: str) -> None:
    say(text)
    if progress:
        print(text, file=sys.stderr, flush=True)


def _tables(y, preds: dict, groups, nested) -> tuple:
    """(per-group table, pooled table, margin) of the predictions."""
    from ..model.selection.by_group import group_mape
    from ..model.selection.metrics import mape, r2

    per = pd.DataFrame({name: group_mape(y, p, groups) for name, p in preds.items()})
    per.insert(0, "rows", pd.Series(groups).value_counts().reindex(per.index).to_numpy())
    per.insert(1, "chosen", nested.choices.set_index("group")["chosen"].reindex(per.index).to_numpy())
    per.index.name = "group"
    boot = group_bootstrap(y, preds, groups)
    rows = []
    for name, p in preds.items():
        ok = np.isfinite(p)
        est, samples = boot[name]
        lo, hi = percentile_interval(samples)
        rows.append({"model": name, "median_group_MAPE": est, "lo": lo, "hi": hi,
                     "MAPE": mape(y[ok], p[ok]), "R2": r2(y[ok], p[ok]),
                     "rows": int(ok.sum())})
    pooled = pd.DataFrame(rows).set_index("model")
    others = [n for n in preds if n != SELECTED]
    best = min(others, key=lambda n: boot[n][0])
    diff = boot[SELECTED][1] - boot[best][1]
    lo, hi = percentile_interval(diff)
    margin = {"vs": best, "estimate": boot[SELECTED][0] - boot[best][0], "lo": lo, "hi": hi}
    return per, pooled, margin


def run_grouped(spec, X, y, say, progress: bool) -> StudyResult:
    """The study ``spec`` (with ``split``) on the prepared ``X``, ``y``."""
    from ..model.selection.by_group import logo_predictions, nested_group_study, select_by_groups
    from ..model.uncertainty.extrapolation import interval_coverage
    from ..model.uncertainty.group_intervals import GroupIntervalModel
    from .hardware import group_baselines, group_candidates, group_column

    start = time.perf_counter()
    col, named = group_column(spec)
    groups = X[col].to_numpy(dtype=object)
    y = np.asarray(y, dtype=float)
    cands, bases = group_candidates(spec), group_baselines(spec)
    n_groups = len(set(groups.tolist()))
    header = [f"leave one {named} out: {n_groups} groups, {len(X)} rows; {len(cands)} candidate form(s) chosen on "
              f"the other groups alone (nested), {100 * spec.level:g} % intervals calibrated on the other groups' "
              f"held-out errors; baselines: {', '.join(bases)}"]
    _say(progress, say, header[0])
    nested = nested_group_study(cands, X, y, groups, spec.level, n_jobs=spec.n_jobs)
    preds = {SELECTED: nested.rows["predicted"].to_numpy(dtype=float)}
    for name, est in bases.items():
        _say(progress, say, f"baseline {name}: {n_groups} fits, one without each group")
        preds[name] = logo_predictions(est, X, y, groups)
    unscored = ~np.isfinite(preds[SELECTED])  # every model is scored on the rows the procedure predicts
    for name in bases:
        preds[name][unscored] = np.nan
    final = select_by_groups(cands, X, y, groups)
    model = GroupIntervalModel(cands[final.name], group=col, hardware=spec.hardware, precision=spec.precision,
                               gpu_specs=spec.gpu_specs, gpus=spec.gpus, batch=spec.batch).fit(X, y)
    per, pooled, margin = _tables(y, preds, groups, nested)
    iv = nested.rows
    ok = np.isfinite(iv["predicted"].to_numpy(dtype=float))
    coverage = {k: interval_coverage(y[ok], iv[f"lower{k}"].to_numpy()[ok], iv[f"upper{k}"].to_numpy()[ok])
                for k in ("", "_nested")}
    result = StudyResult(spec=spec, model=model, label=SELECTED, header=header, n_fit=len(X), n_test=int(ok.sum()),
                         fit_seconds=time.perf_counter() - start, model_summary=f"chosen on all groups: {final.name}\n"
                         + model.summary(), search_table=final.scores, held_out=pooled,
                         coverage=coverage[""], coverage_nested=coverage["_nested"],
                         coverage_rows=int(ok.sum()),
                         unscored_rows=int((~ok).sum()))
    result.groups, result.margin = per, margin
    result.predictions = pd.DataFrame({"group": groups, "measured": y, **preds, "lower": iv["lower"].to_numpy(),
                                       "upper": iv["upper"].to_numpy()})
    return result
