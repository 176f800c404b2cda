"""Chapter 3's speedup claim on published multi-GPU throughput tables (Lambda's benchmarks, NVIDIA's DGX tables).

A *configuration* is one model run the same way (GPU kind, precision, per-GPU batch, and for NVIDIA the
framework, variant and system) on 1 and on more GPUs. Its speedup on G GPUs is throughput(G) / throughput(1) at
the same per-GPU batch: the thesis's speedup at a fixed per-GPU batch (Figs. 3.5–3.7). A model's speedup on
its largest G is the median over the configurations that reach that G; its interval resamples those
configurations (:data:`MIN_CONFIGS` at least, else the model is listed but not judged). The tables hold one
published number per cell: no synchronisation time, no phases, no per-GPU times, so only the speedup claim
can be decided on them.
"""
from __future__ import annotations

import numpy as np

from ...evidence import B, SEED, Evidence, bootstrap_indices

__all__ = ["THROUGHPUT_SOURCE", "MIN_CONFIGS", "throughput_quantities"]

THROUGHPUT_SOURCE = f"{B} bootstrap resamples of the configurations (GPU kind, precision, batch) of each model"
#: fewest configurations on a model's largest GPU count for its speedup to be judged
MIN_CONFIGS = 3


def throughput_quantities(frame, config: list, model: str = "model", seed=SEED) -> tuple[dict, list, list]:
    """``(quantities, curve rows, left out)`` of the speedup claim on a throughput table.

    ``frame`` has ``n_gpus``, ``throughput`` and the columns ``config`` and ``model`` name; rows of one
    configuration and GPU count are averaged (their median). Quantities: ``speedup_cells`` and ``speedup``,
    ``{(model, G): Evidence}`` on each model's largest G with at least :data:`MIN_CONFIGS` configurations.
    Curve rows: ``group`` (the model), ``workers``, ``speedup`` (median over its configurations), ``configs``.
    ``left out``: the models with too few configurations, as ``"model (n at G)"``.
    """
    keys = [model, *config]
    cell = frame.groupby(keys + ["n_gpus"], sort=True, dropna=False)["throughput"].median().reset_index()
    speed = []
    for key, g in cell.groupby(keys, sort=True, dropna=False):
        one = g.loc[g["n_gpus"] == 1, "throughput"]
        if len(one) and float(one.iloc[0]) > 0:
            for n, t in zip(g["n_gpus"], g["throughput"]):
                if n > 1:
                    speed.append((str(key[0]), int(n), float(t) / float(one.iloc[0])))
    q: dict = {"speedup_cells": {}, "speedup": {}}
    curve, left = [], []
    models = sorted({m for m, _, _ in speed})
    for k, m in enumerate(models):
        by_g: dict = {}
        for mm, n, s in speed:
            if mm == m:
                by_g.setdefault(n, []).append(s)
        for n in sorted(by_g):
            curve.append({"group": m, "workers": n, "speedup": float(np.median(by_g[n])), "configs": len(by_g[n])})
        top = max(by_g)
        vals = np.asarray(by_g[top])
        if len(vals) < MIN_CONFIGS:
            left.append(f"{m} ({len(vals)} at G={top})")
            continue
        draws = np.median(vals[bootstrap_indices(len(vals), B, seed=[seed, 41, k])], axis=1)
        e = Evidence.from_samples(float(np.median(vals)), draws, THROUGHPUT_SOURCE)
        q["speedup_cells"][(m, top)] = q["speedup"][(m, top)] = e
    return {k: v for k, v in q.items() if v}, curve, left
