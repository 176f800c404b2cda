"""Frameworks compared on identical configurations: paired time ratios by hyperparameter.

Every framework's ``perfkit collect ch4`` file draws its configurations with the same
sampler and seed, so sample ``i`` is the same LeNet-5 configuration in every framework.
The ratio of two frameworks' times on the same sample is then a framework effect, with
no sampling difference mixed in (the thesis sampled each framework independently).

:func:`paired_ratios` joins two or more files on ``sample_id`` and summarises the
ratio ``t(framework) / t(reference)`` overall and per level of each hyperparameter as a
geometric mean with a bootstrap interval over the paired configurations.

>>> import pandas as pd
>>> ref = pd.DataFrame({"sample_id": [0, 1, 2, 3], "status": "ok", "workers": [1, 1, 2, 2],
...                     "epoch_time": [1.0, 2.0, 1.0, 2.0]})
>>> other = ref.assign(epoch_time=[2.0, 4.0, 3.0, 6.0])
>>> t = paired_ratios({"pytorch-cpu": ref, "mxnet-cpu": other}, "epoch_time", ["workers"], b=200)
>>> [(r.factor, r.level, r.n, round(r.ratio, 6)) for r in t.itertuples()]
[('all', 'all', 4, 2.44949), ('workers', '1', 2, 2.0), ('workers', '2', 2, 3.0)]
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ...evidence import B, LEVEL, SEED, bootstrap_indices, percentile_interval

__all__ = ["paired_frame", "paired_ratios", "COLUMNS"]

#: columns of :func:`paired_ratios`
COLUMNS = ["framework", "reference", "factor", "level", "n", "ratio", "lo", "hi", "log_ratio_sd"]


def paired_frame(frames: Mapping, target: str, factors, reference: str | None = None):
    """One row per configuration measured (status ok) in the reference and in another framework.

    ``frames`` maps a label (``"pytorch-cpu"``) to a measured frame; the first label is the
    reference unless ``reference`` names one. Returns a long frame with ``framework``,
    ``sample_id``, the ``factors``, ``t_ref``, ``t`` and ``log_ratio = log(t / t_ref)``.
    A sample whose configuration differs between two files (another sampler or seed) is
    one clear :class:`ValueError` naming the sample and the column.
    """
    import pandas as pd

    labels = list(frames)
    if len(labels) < 2:
        raise ValueError(f"frames: a paired comparison needs two or more frameworks, got {labels}")
    ref = labels[0] if reference is None else reference
    if ref not in frames:
        raise ValueError(f"reference: {ref!r} is not one of {labels}")
    factors = list(factors)

    def ok(label):
        df = frames[label]
        need = ["sample_id", target, *factors]
        missing = [c for c in need if c not in df.columns]
        if missing:
            raise ValueError(f"{label}: column {missing[0]!r} missing (a paired comparison needs {', '.join(need)})")
        df = df[df["status"] == "ok"] if "status" in df.columns else df
        df = df.drop_duplicates("sample_id")
        return df[need].set_index("sample_id")

    base = ok(ref)
    parts = []
    for label in labels:
        if label == ref:
            continue
        other = ok(label)
        both = base.add_suffix("_ref").join(other, how="inner")
        for f in factors:
            differ = both[f].astype(str) != both[f"{f}_ref"].astype(str)
            if differ.any():
                sid = differ.idxmax()
                raise ValueError(f"{label}: sample {sid} is another configuration than in {ref} ({f} "
                                 f"{both.loc[sid, f]} vs {both.loc[sid, f + '_ref']}); a paired comparison "
                                 "needs files collected with the same sampler and seed")
        t, t_ref = both[target].astype(float), both[f"{target}_ref"].astype(float)
        out = both[factors].copy()
        out.insert(0, "framework", label)
        out["t_ref"], out["t"] = t_ref, t
        out["log_ratio"] = np.log(t / t_ref)
        parts.append(out.reset_index())
    return pd.concat(parts, ignore_index=True).assign(reference=ref)


def _summary(log_r: np.ndarray, b: int, seed) -> tuple[float, float, float, float]:
    est = float(np.exp(log_r.mean()))
    if len(log_r) < 2:
        return est, float("nan"), float("nan"), float("nan")
    idx = bootstrap_indices(len(log_r), b, seed)
    lo, hi = percentile_interval(np.exp(log_r[idx].mean(axis=1)), LEVEL)
    return est, lo, hi, float(log_r.std(ddof=1))


def paired_ratios(frames: Mapping, target: str, factors, reference: str | None = None, b: int = B, seed: int = SEED):
    """Geometric-mean time ratio of each framework to the reference, overall and per level of each factor.

    Returns a tidy frame (:data:`COLUMNS`): ``ratio`` = exp(mean log(t / t_ref)) over the
    paired configurations of the cell, ``lo``/``hi`` its 95 % bootstrap interval over those
    configurations, ``log_ratio_sd`` the spread of the per-configuration log ratios.
    """
    import pandas as pd

    long = paired_frame(frames, target, factors, reference)
    rows = []
    for k, (label, g) in enumerate(long.groupby("framework", sort=False)):
        cells = [("all", "all", g)] + [(f, lv, gg) for f in factors
                                       for lv, gg in sorted(g.groupby(f), key=lambda kv: _order(kv[0]))]
        for j, (factor, level, cell) in enumerate(cells):
            est, lo, hi, sd = _summary(cell["log_ratio"].to_numpy(dtype=float), b, [seed, k, j])
            rows.append(dict(framework=label, reference=g["reference"].iloc[0], factor=factor, level=str(level),
                             n=len(cell), ratio=est, lo=lo, hi=hi, log_ratio_sd=sd))
    return pd.DataFrame(rows, columns=COLUMNS)


def _order(level):
    """Numbers in numeric order, then words."""
    try:
        return (0, float(level), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(level))
