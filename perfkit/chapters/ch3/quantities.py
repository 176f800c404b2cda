"""The claims' quantities on measured Chapter 3 runs, each an :class:`~perfkit.evidence.Evidence` per cell.

Every quantity is a mean over the iterations of a run with its stationary block bootstrap over the
iterations (:func:`perfkit.model.analytic.phases.bootstrap_cells`: blocks of consecutive iterations, as the
iteration times of a run are autocorrelated); runs of different frameworks are independent, so resample
*i* of one run is paired with resample *i* of another.
"""
from __future__ import annotations

import numpy as np

from ...model.analytic.equations import speedup_pipelined
from ...model.analytic.phases import bootstrap_cells
from ...evidence import (B, SEED, Evidence, bootstrap_indices, optimal_block_length, spearman,
                                   stationary_bootstrap_indices)
from ...schema import CH3_MODELS
from .params import VARIANTS

__all__ = ["SOURCES", "BETTER_THAN_TF", "framework_key", "log_slope", "measured_quantities", "regression_quantities",
           "framework_speedups", "framework_quantities"]

_B = f"{B} bootstrap resamples"
#: where the resamples of each kind of quantity come from (the ledger's ``resampling`` column)
SOURCES = {
    "iterations": f"{B} stationary block-bootstrap resamples of the iterations of each run (blocks of consecutive "
                  "iterations, automatic block length)",
    "cells": f"{B} stationary block-bootstrap resamples of the iterations of each run (automatic block length) "
             "and bootstrap resamples of the (model, workers) cells",
    "rows": f"{B} stationary block-bootstrap resamples of the rows (timed iterations) of each model's regression, "
            "within each run (automatic block length)",
    "ols": f"{B} draws from the OLS fit's normal approximation (coefficient ± standard error)",
    "printed": f"printed numbers, each drawn {B} times uniformly within ±½ unit of its last digit",
    "exact": "none: printed numbers compared beyond their rounding (exact)",
}
#: what §3.4.2 and §3.5 rank: these frameworks scale better than TensorFlow
BETTER_THAN_TF = ("MXNet", "Chainer")
_PHASES_37 = ("t_io", "t_h2d", "t_f", "t_b", "t_u")


def framework_key(label: str) -> str:
    """``"MXNet (gpu, measured)"`` → ``"mxnet"``: a framework label matched by name."""
    return str(label).split(" (")[0].strip().lower()


def log_slope(workers, pairs, source=SOURCES["iterations"]) -> Evidence:
    """The least-squares slope of log(value) on log(G) over ``workers``, per resample.

    ``pairs`` holds one ``(estimate, samples)`` per worker count (positive values); the estimate is the slope
    through the estimates, each resample's slope the one through that resample's values. With two worker
    counts it is the log ratio of their values over the log ratio of the counts.
    """
    x = np.log(np.asarray(workers, dtype=float))
    xc = x - x.mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        est = np.log(np.asarray([p[0] for p in pairs], dtype=float))
        samples = np.log(np.column_stack([np.asarray(p[1], dtype=float) for p in pairs]))
    den = float((xc * xc).sum())  # sums, not BLAS dots: the same bits under every kernel
    return Evidence.from_samples(float(((est - est.mean()) * xc).sum()) / den,
                                 ((samples - samples.mean(axis=1, keepdims=True)) * xc).sum(axis=1) / den, source)


def _ratio(num, den, source=SOURCES["iterations"]) -> Evidence:
    """``num / den`` of two ``(estimate, samples)`` pairs."""
    return Evidence.from_samples(num[0] / den[0], num[1] / den[1], source)


def measured_quantities(measured_all, mode: str = "phased", n_train: int = 60000, variants=VARIANTS) -> dict:
    """The Chapter 3 claims on measured data, as ``{cell: Evidence}`` per claim (``{}`` without multi-worker runs).

    * ``t_c_trend``: per model, the slope of log t_c on log G over the worker counts G >= 2 measured (at least
      two of them): > 0 when the aggregation time grows with the workers (on G = 2, 3 it is
      log(t_c(3) / t_c(2)) / log 1.5); the cell is ``(model, largest G)``;
    * ``speedup_cells`` and ``speedup``: measured speedup per (model, workers), and the speedup on each model's
      largest worker count (the cell ``(model, G)``);
    * ``eq37_<variant>``: |eq. 3.7's prediction / measured speedup − 1| per (model, workers);
    * ``lif_rho``: Spearman's ρ of LIF with speedup/G over the (model, workers) cells (the cells are
      resampled too), ``lif_cells`` their number;
    * ``overlap``: overlapped over phased iteration time per (model, workers), when both modes were timed.

    Only the first framework (by name) of ``mode`` is used; a key is absent when its cells are.
    """
    cells = bootstrap_cells(measured_all, n_train=n_train)
    fws = sorted({k[1] for k in cells if k[0] == mode})
    if not fws:
        return {}
    run = {(k[2], k[3]): v for k, v in cells.items() if k[0] == mode and k[1] == fws[0]}
    order = {m: i for i, m in enumerate(CH3_MODELS)}
    models = sorted({m for m, _ in run}, key=lambda m: (order.get(m, len(order)), m))
    q: dict = {}
    trend = {}
    for m in models:
        multi = sorted(g for mm, g in run if mm == m and g > 1 and np.isfinite(run[(m, g)]["t_c"][0]))
        if len(multi) >= 2:
            e = log_slope(multi, [run[(m, g)]["t_c"] for g in multi])
            if e.finite:
                trend[(m, multi[-1])] = e
    if trend:
        q["t_c_trend"] = trend
    sp = {(m, g): _ratio(run[(m, 1)]["epoch_time"], run[(m, g)]["epoch_time"]) for m in models
          for g in sorted(g for mm, g in run if mm == m and g > 1) if (m, 1) in run}
    sp = {c: e for c, e in sp.items() if e.finite}
    if not sp:
        return q
    q["speedup_cells"] = sp
    q["speedup"] = {(m, g): sp[(m, g)] for m in models
                    for g in [max((gg for mm, gg in sp if mm == m), default=None)] if g is not None}
    for variant in variants:
        errors = _eq37_errors(run, sp, variant)
        if errors:  # none where every run fuses phases (overlapped): the claim cannot be tested then
            q[f"eq37_{variant}"] = errors
    q.update(_lif_rho(run, sp))
    ov = {}
    for (md, fw, m, g), v in cells.items():  # both modes timed: overlapped over phased iteration time
        if md == "overlapped" and g > 1 and ("phased", fw, m, g) in cells:
            ov[(m, g)] = _ratio(v["t_iter"], cells[("phased", fw, m, g)]["t_iter"])
    if ov:
        q["overlap"] = dict(sorted(ov.items(), key=lambda kv: (order.get(kv[0][0], len(order)), kv[0][1])))
    return q


def _eq37_errors(run, sp, variant) -> dict:
    """``{(model, G): Evidence}`` of |eq. 3.7 (``variant``) on the run's phases / measured speedup − 1|, for the
    cells whose phases and t_c were all timed on their own (not a native, overlapped step)."""
    src = SOURCES["iterations"]
    errs = {}
    for (m, g), e in sp.items():
        one, multi = run[(m, 1)], run[(m, g)]
        terms = [one[k][0] for k in (*_PHASES_37, "t_md")] + [multi["t_c"][0]]
        if not np.all(np.isfinite(terms)):  # a phase fused into a native step: eq. 3.7 cannot be fed
            continue
        pred = [speedup_pipelined(g, *(one[k][i] for k in _PHASES_37), multi["t_c"][i], t_md=one["t_md"][i],
                                  variant=variant) for i in (0, 1)]
        errs[(m, g)] = Evidence.from_samples(abs(pred[0] / e.estimate - 1), np.abs(pred[1] / e.samples - 1), src)
    return {c: e for c, e in errs.items() if e.finite}


def _lif_rho(run, sp) -> dict:
    """``lif_rho`` and ``lif_cells`` over the cells with a finite LIF (none with fewer than three)."""
    lif_cells = [c for c in sp if np.isfinite(run[c]["lif"][0])]
    if len(lif_cells) <= 2:
        return {}
    lif = np.column_stack([run[c]["lif"][1] for c in lif_cells])
    eff = np.column_stack([sp[c].samples / c[1] for c in lif_cells])
    est = float(spearman([run[c]["lif"][0] for c in lif_cells], [sp[c].estimate / c[1] for c in lif_cells]))
    pick = bootstrap_indices(len(lif_cells), len(lif), seed=[SEED, 99])
    rows = np.arange(len(lif))[:, None]
    return {"lif_rho": Evidence.from_samples(est, spearman(lif[rows, pick], eff[rows, pick]), SOURCES["cells"]),
            "lif_cells": len(lif_cells)}


def _run_blocks(rows, seed, columns=("epoch_time", "lif")) -> np.ndarray:
    """``(B, len(rows))`` positions of ``rows``: each run's iterations (in order) drawn by the stationary bootstrap.

    A run is a (framework, workers) group of ``rows``; each keeps its number of rows, and
    its expected block length is the largest :func:`optimal_block_length` of ``columns``.
    """
    pos = np.arange(len(rows))
    parts = []
    by = [c for c in ("framework", "workers") if c in rows.columns]
    order = rows.assign(_pos=pos)
    order = order.sort_values(by + [c for c in ("iteration",) if c in rows.columns], kind="stable")
    for j, (_, run) in enumerate(order.groupby(by, sort=True) if by else [(None, order)]):
        block = max([1.0] + [optimal_block_length(run[c].to_numpy(float)) for c in columns if c in run.columns])
        at = run["_pos"].to_numpy()
        parts.append(at[stationary_bootstrap_indices(len(at), block, B, seed=[*seed, j])])
    return np.concatenate(parts, axis=1)


def regression_quantities(epochs, fitted) -> dict:
    """``lif_r2`` (bootstrap over rows) and ``lif_beta2`` (the fit's standard error) per model of eq. 3.9.

    ``epochs`` is :func:`perfkit.model.analytic.phases.epoch_frame` of the measured runs, ``fitted``
    the Table 3.5 layout of :func:`perfkit.model.analytic.lif.fit_lif_regression` on it (with ``se_beta2``).
    R² is refitted on each resample of a model's rows by least squares (:func:`_run_blocks`: the
    iterations of each run resampled in blocks); β2's draws come from its normal approximation.
    """
    r2, beta2 = {}, {}
    for k, r in enumerate(fitted.itertuples()):
        sub = epochs[epochs["model"] == r.model]
        X = np.column_stack([np.ones(len(sub)), sub["workers"].to_numpy(float), sub["lif"].to_numpy(float)])
        y = sub["epoch_time"].to_numpy(float)
        idx = _run_blocks(sub, seed=[SEED, 7, k])
        Xb, yb = X[idx], y[idx]
        xtx = np.einsum("bni,bnj->bij", Xb, Xb)
        xty = np.einsum("bni,bn->bi", Xb, yb)
        beta = np.einsum("bij,bj->bi", np.linalg.pinv(xtx), xty)
        res = yb - np.einsum("bni,bi->bn", Xb, beta)
        sst = ((yb - yb.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            samples = np.where(sst > 0, 1 - (res ** 2).sum(axis=1) / sst, np.nan)
        r2[r.model] = Evidence.from_samples(r.r2, samples, SOURCES["rows"])
        draws = np.random.default_rng([SEED, 8, k]).normal(r.beta2, r.se_beta2, size=B)
        beta2[r.model] = Evidence.from_samples(r.beta2, draws, SOURCES["ols"])
    return {"lif_r2": r2, "lif_beta2": beta2} if r2 else {}


def framework_speedups(measured_split, n_train: int = 60000, cells=None) -> dict:
    """``{framework: {model: Evidence}}``: the measured speedup on each model's largest worker count.

    ``measured_split`` holds one framework label per row (``load_phases(..., split_frameworks=True)``);
    ``cells``, when given, is its :func:`perfkit.model.analytic.phases.bootstrap_cells` (computed otherwise).
    """
    cells = bootstrap_cells(measured_split, n_train=n_train) if cells is None else cells
    out: dict = {}
    for (mode, fw, m, g), v in cells.items():
        base = cells.get((mode, fw, m, 1))
        top = max(gg for (mm, ff, mo, gg) in cells if (mm, ff, mo) == (mode, fw, m))
        if g == top and g > 1 and base is not None:
            e = _ratio(base["epoch_time"], v["epoch_time"])
            if e.finite:
                out.setdefault(fw, {})[m] = e
    return out


def _contrast(cells, column, subject, others, models, workers, op, mode="phased") -> dict:
    """``{(model, G, other): Evidence}`` of ``op(column of subject, column of other)`` per resample.

    ``cells`` is :func:`perfkit.model.analytic.phases.bootstrap_cells` output; frameworks are
    matched by name (``"MXNet"`` finds ``"MXNet (cpu, measured)"``). Cells missing
    on either side are left out.
    """
    by = {}
    for (md, fw, m, g), v in cells.items():
        if md == mode:
            by[(framework_key(fw), m, g)] = v
    out = {}
    for m in models:
        for g in workers:
            a = by.get((subject.lower(), m, g))
            for o in others:
                b = by.get((o.lower(), m, g))
                if a is None or b is None:
                    continue
                e = Evidence.from_samples(op(a[column][0], b[column][0]), op(a[column][1], b[column][1]),
                                          SOURCES["iterations"])
                if e.finite:
                    out[(m, g, o)] = e
    return out


def _mxnet_efficiency(cells, mode) -> dict:
    """``{(model, largest G): Evidence}``: the slope of MXNet's measured speedup on G through the origin, over the
    worker counts measured (``Σ G·S(G) / Σ G²``, with S(1) = 1): 1 for linear scaling, whatever counts were run."""
    mx = {k: v for k, v in cells.items() if k[0] == mode and framework_key(k[1]) == "mxnet"}
    eff = {}
    for m in CH3_MODELS:
        gs = sorted(g for (_, _, mm, g) in mx if mm == m)
        if len(gs) > 1 and gs[0] == 1:
            label = next(fw for (_, fw, mm, _) in mx if mm == m)
            one = mx[(mode, label, m, 1)]["epoch_time"]
            speed = [(one[0] / mx[(mode, label, m, g)]["epoch_time"][0],
                      one[1] / mx[(mode, label, m, g)]["epoch_time"][1]) for g in gs]
            den = float(sum(g * g for g in gs))
            e = Evidence.from_samples(sum(g * s[0] for g, s in zip(gs, speed)) / den,
                                      sum(g * s[1] for g, s in zip(gs, speed)) / den, SOURCES["iterations"])
            if e.finite:
                eff[(m, gs[-1])] = e
    return eff


def framework_quantities(measured_split, n_train: int = 60000, mode: str = "phased") -> dict:
    """The thesis's framework comparisons on measured runs of several frameworks (one label per framework).

    * ``framework_speedup``: :func:`framework_speedups`;
    * ``fw_mxnet_efficiency``: the slope of MXNet's speedup on G through the origin, over the worker counts
      measured (``{(model, largest G): Evidence}``);
    * ``fw_mxnet_tc``: t_c of TensorFlow and Chainer over MXNet's, per model and every G >= 2 measured;
    * ``fw_tf_lif``: TensorFlow's LIF minus MXNet's and Chainer's, per model and every G >= 2 measured;
    * ``fw_tf_cnn_forward``: TensorFlow's CNN t_f over MXNet's and Chainer's, one worker;
    * ``fw_mxnet_backward``: MXNet's t_b over TensorFlow's and Chainer's, per model, one worker.

    A key is absent when none of its cells can be computed.
    """
    cells = bootstrap_cells(measured_split, n_train=n_train)
    out: dict = {}
    speed = framework_speedups(measured_split, n_train=n_train, cells=cells)
    if speed:
        out["framework_speedup"] = speed
    eff = _mxnet_efficiency(cells, mode)
    if eff:
        out["fw_mxnet_efficiency"] = eff
    ratio, diff = (lambda a, b: a / b), (lambda a, b: a - b)
    multi = tuple(sorted({g for (md, _, _, g) in cells if md == mode and g > 1}))
    found = {
        "fw_mxnet_tc": _contrast(cells, "t_c", "MXNet", ("TensorFlow", "Chainer"), CH3_MODELS, multi,
                                 lambda a, b: b / a, mode),
        "fw_tf_lif": _contrast(cells, "lif", "TensorFlow", ("MXNet", "Chainer"), CH3_MODELS, multi, diff, mode),
        "fw_tf_cnn_forward": _contrast(cells, "t_f", "TensorFlow", ("MXNet", "Chainer"), ("CNN",), (1,), ratio,
                                       mode),
        "fw_mxnet_backward": _contrast(cells, "t_b", "MXNet", ("TensorFlow", "Chainer"), CH3_MODELS, (1,), ratio,
                                       mode),
    }
    out.update({k: v for k, v in found.items() if v})
    return out
