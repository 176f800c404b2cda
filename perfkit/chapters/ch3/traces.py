"""Chapter 3's claims on GPU-cluster traces: Pollux's measured step and synchronisation times at 1-64 GPUs.

Each trace row is one data-parallel run: a placement (GPUs per node), the per-GPU batch, the step time and the
seconds of that step spent synchronising gradients. In the thesis's terms (Chapter 3):

* compute = step − synchronisation (the traces do not split forward, backward and update), t_c = the measured
  synchronisation time;
* speedup on G GPUs at a fixed per-GPU batch = G · step(1) / step(G) (samples per second over one GPU's);
* eq. 3.7 fed with compute(1) as its one compute phase and t_c(G): ``S = G · c₁ / (c₁ + t_c(G))`` (the traces
  give no t_io, t_h2d, t_md or t_u, so its thesis and paper forms coincide);
* the load imbalance factor of eq. 3.8 applied to the GPUs per node of a placement (``"1222"``: 4 · 2 / 7);
  the traces give no per-GPU times, so it is the imbalance of the layout, not of measured work;
* eq. 3.9: epoch time (``n_train`` samples) on G and that LIF, per job.

Every job is read at one per-GPU batch (:func:`reference_batch`), and a cell of G GPUs is the median over the
runs with G GPUs (every placement and the scalability study). Intervals: each row's step and synchronisation
times are multiplied, in each of :data:`~perfkit.evidence.B` resamples, by the relative deviation of
a row drawn from the same job's *replicates* (runs of the same GPU counts per node in another node order, e.g.
``"1123"`` and ``"1213"``, at the same batch), which measure how much a repeated run moves; the regression and
correlation also resample their rows.
"""
from __future__ import annotations

import numpy as np

from ...evidence import B, SEED, Evidence, bootstrap_indices, spearman
from .quantities import log_slope

__all__ = ["TRACE_SOURCE", "reference_batch", "replicate_deviations", "trace_quantities"]

TRACE_SOURCE = (f"{B} resamples: each trace row's step and synchronisation times scaled by the relative deviation of "
                "a replicate run of the same job (the same GPUs per node in another node order), rows resampled for "
                "the regression and the correlation")


def reference_batch(job_rows) -> int:
    """The per-GPU batch a job is read at: of the batches measured on the most GPU counts, the middle one (the
    lower of two)."""
    counts = job_rows.groupby("batch_per_gpu")["n_gpus"].nunique()
    best = sorted(int(b) for b in counts.index[counts == counts.max()])
    return best[(len(best) - 1) // 2]


def replicate_deviations(job_rows) -> np.ndarray:
    """``(n, 2)`` log deviations (step, synchronisation) of each replicate run from its group's mean.

    A group is the placement rows of one batch with the same GPU counts per node (in any node order); groups of
    one run give none (a ``(0, 2)`` array when no group has two). Deviations are scaled by ``sqrt(k / (k − 1))``
    for a group of ``k`` runs, so their spread is that of one run; a group with a zero synchronisation time gives
    synchronisation deviations of 0 (a zero stays zero).
    """
    rows = job_rows[job_rows["study"] == "placements"]
    key = [str(int(b)) + ":" + "".join(sorted(str(p))) for b, p in zip(rows["batch_per_gpu"], rows["placement"])]
    values = rows[["t_iter", "sync_time"]].to_numpy(float)
    out = []
    for k in sorted(set(key)):
        at = np.flatnonzero(np.asarray(key) == k)
        if len(at) > 1:
            v = values[at]
            if not (v[:, 1] > 0).all():  # a zero sync time stays zero: no synchronisation deviation
                v = np.column_stack([v[:, 0], np.ones(len(at))])
            logs = np.log(v)
            out.append((logs - logs.mean(axis=0)) * np.sqrt(len(at) / (len(at) - 1)))
    return np.vstack(out) if out else np.zeros((0, 2))


def _perturbed(rows, dev, seed) -> tuple[np.ndarray, np.ndarray]:
    """``(step, sync)``: ``(B + 1, n)`` arrays, row 0 the measured values, rows 1.. the resamples."""
    pick = np.random.default_rng(seed).integers(0, len(dev), size=(B, len(rows)))
    step = rows["t_iter"].to_numpy(float)
    sync = rows["sync_time"].to_numpy(float)
    step_b = step * np.exp(dev[pick, 0])
    sync_b = np.minimum(sync * np.exp(dev[pick, 1]), step_b)  # a step's synchronisation cannot exceed the step
    return np.vstack([step, step_b]), np.vstack([sync, sync_b])


def _cell_medians(values, gpus) -> dict:
    """``{G: (B + 1,) medians over the rows of G GPUs}``."""
    return {int(g): np.median(values[:, gpus == g], axis=1) for g in np.unique(gpus)}


def _ev(arr) -> Evidence:
    return Evidence.from_samples(float(arr[0]), arr[1:], TRACE_SOURCE)


def _ols(X, y):
    """Least squares per resample: ``(coefficients (…, p), R² (…,))`` of ``y (…, n)`` on ``X (…, n, p)``."""
    xtx = np.einsum("...ni,...nj->...ij", X, X)
    xty = np.einsum("...ni,...n->...i", X, y)
    beta = np.einsum("...ij,...j->...i", np.linalg.pinv(xtx), xty)
    res = y - np.einsum("...ni,...i->...n", X, beta)
    sst = ((y - y.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(sst > 0, 1 - (res ** 2).sum(axis=-1) / sst, np.nan)
    return beta, r2


def _job(job, rows, dev, n_train, seed) -> dict:
    """One job's cells at its batch: speedups, t_c trend, eq. 3.7 errors, and where the placement LIF varies, its
    correlation with efficiency and eq. 3.9; ``dev`` are the replicate deviations its resamples draw from."""
    b = reference_batch(rows)
    at = rows[rows["batch_per_gpu"] == b].reset_index(drop=True)
    step, sync = _perturbed(at, dev, [*seed, 1])
    gpus = at["n_gpus"].to_numpy(int)
    st, sy = _cell_medians(step, gpus), _cell_medians(sync, gpus)
    out = {"batch": b, "curve": [], "speedup": {}, "eq37": {}}
    if 1 not in st:
        return out
    c1 = st[1] - sy[1]
    for g in sorted(st):
        s = g * st[1] / st[g]
        out["curve"].append({"group": job, "workers": g, "speedup": float(s[0]), "t_c": float(sy[g][0]),
                             "batch_per_gpu": b})
        if g > 1:
            out["speedup"][(job, g)] = _ev(s)
            pred = g * c1 / (c1 + sy[g])
            out["eq37"][(job, g)] = _ev(np.abs(pred / s - 1))
    multi = [g for g in sorted(sy) if g > 1]
    if len(multi) >= 2:
        e = log_slope(multi, [(sy[g][0], sy[g][1:]) for g in multi], TRACE_SOURCE)
        out["t_c_trend"] = ((job, multi[-1]), e)
    pl = at["study"].to_numpy() == "placements"
    lif = at["load_imbalance"].to_numpy(float)
    if pl.sum() >= 4 and len(np.unique(lif[pl & (gpus > 1)])) > 1:  # a constant LIF (one node) explains nothing
        idx = np.flatnonzero(pl)
        pick = np.vstack([idx, idx[bootstrap_indices(len(idx), B, seed=[*seed, 2])]])  # row 0: the rows as measured
        rows_b = np.arange(B + 1)[:, None]
        g_b, lif_b = gpus[pick].astype(float), lif[pick]
        epoch = n_train / (g_b * b) * step[rows_b, pick]
        X = np.stack([np.ones_like(g_b), g_b, lif_b], axis=-1)
        beta, r2 = _ols(X, epoch)
        out["lif_r2"], out["lif_beta2"] = _ev(r2), _ev(beta[:, 2])
        multi_rows = g_b > 1
        eff = st[1][:, None] / step[rows_b, pick]
        rho = np.array([spearman(lif_b[i][multi_rows[i]], eff[i][multi_rows[i]]) for i in range(B + 1)])
        out["lif_rho"], out["lif_cells"] = _ev(rho), int((gpus[idx] > 1).sum())
    return out


def trace_quantities(traces, n_train: int = 60000, seed=SEED) -> tuple[dict, list, str]:
    """``(quantities, curve rows, why none)`` of Chapter 3's claims on trace rows
    (:func:`perfkit.data.pollux.load_pollux`); ``why none`` is ``""`` unless no quantity has an honest interval
    (no run of the traces was repeated), and then says so, with no quantities and no curves.

    A job without replicate runs draws its resamples from the deviations of the other jobs of the same traces.
    The LIF quantities of a job need at least four placement rows and a LIF that varies over its multi-GPU
    placements (on one node it is always 1).

    Quantities (``{cell: Evidence}``, cells ``(job, G)``): ``speedup_cells``, ``speedup`` (each job's largest G),
    ``t_c_trend`` (slope of log t_c on log G over G >= 2), ``eq37_thesis`` (|eq. 3.7 / measured − 1|), and per
    job ``lif_r2``, ``lif_beta2`` of eq. 3.9; ``lif_rho`` is the largest (least negative) Spearman ρ of
    placement LIF with efficiency over the jobs, per resample. Curve rows: ``group`` (the job), ``workers``,
    ``speedup``, ``t_c`` (s) and ``batch_per_gpu``, one per job and G.
    """
    q: dict = {"speedup_cells": {}, "speedup": {}, "t_c_trend": {}, "eq37_thesis": {}, "lif_r2": {},
               "lif_beta2": {}}
    rhos, cells, curve = [], 0, []
    jobs = list(traces.groupby("job", sort=True))
    devs = {job: replicate_deviations(rows) for job, rows in jobs}
    pooled = np.vstack(list(devs.values()))
    if not len(pooled):  # no run was repeated: the noise cannot be estimated, so no claim gets an interval
        return {}, [], "no repeated runs (the same GPUs per node in another node order) to estimate the noise"
    for k, (job, rows) in enumerate(jobs):
        dev = devs[job] if len(devs[job]) else pooled  # a job without replicates borrows the cluster's
        j = _job(str(job), rows, dev, n_train, [seed, 31, k])
        curve += j["curve"]
        if j["speedup"]:
            q["speedup_cells"].update(j["speedup"])
            top = max(j["speedup"], key=lambda c: c[1])
            q["speedup"][top] = j["speedup"][top]
        q["eq37_thesis"].update(j["eq37"])
        if "t_c_trend" in j:
            q["t_c_trend"][j["t_c_trend"][0]] = j["t_c_trend"][1]
        if "lif_r2" in j:
            q["lif_r2"][str(job)], q["lif_beta2"][str(job)] = j["lif_r2"], j["lif_beta2"]
            if j["lif_rho"].finite:
                rhos.append(j["lif_rho"])
                cells += j["lif_cells"]
    q = {k: v for k, v in q.items() if v}
    if rhos:
        q["lif_rho"], q["lif_cells"] = Evidence.combine(np.max, rhos), cells
    return q, curve, ""
