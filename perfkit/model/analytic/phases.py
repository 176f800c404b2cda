"""The Chapter 3 phase model applied to data: phase tables, aggregation time, LIF, epochs and speedup.

The functions take tidy tables, either the thesis's (``perfkit.data.load_thesis_table``)
or measured per-iteration data in the :data:`perfkit.schema.CH3_COLUMNS` layout
(``perfkit.data.load_phases``), and return tidy frames in the layout of the matching
published table, so published and measured numbers go through the same code and
can be put side by side. Eq. 3.7 comes from :mod:`perfkit.model.analytic.equations`.
"""
from __future__ import annotations

import numpy as np

from ...schema import COMPUTE_PHASES, PHASES, steps_per_epoch
from .equations import VARIANTS, load_imbalance_factor, speedup_pipelined

__all__ = ["phase_wide", "summarise_phases", "predicted_speedups", "measured_table3_2", "measured_t_comm",
           "measured_lif", "epoch_frame", "measured_speedup", "phase_remainder", "overlap_vs_phased", "bootstrap_cells",
           "require_columns"]


def require_columns(df, columns, what: str) -> None:
    """``ValueError`` naming ``what`` and the columns of ``df`` that are missing."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {missing}; has {list(df.columns)}")


def phase_wide(tidy, value: str = "mean"):
    """Pivot a tidy Table 3.2-like frame to one row per (model, framework), one column per phase.

    Parameters
    ----------
    tidy : pandas.DataFrame
        Columns ``model``, ``framework``, ``phase`` and ``value``.
    value : str, default "mean"
        Column to spread.
    """
    require_columns(tidy, ("model", "framework", "phase", value), "phase_wide")
    wide = tidy.pivot_table(index=["model", "framework"], columns="phase", values=value, sort=False)
    cols = [p for p in PHASES if p in wide.columns]
    return wide[cols]


def summarise_phases(measured, by=("model", "framework", "workers")):
    """Mean ± std of each phase over iterations, in the tidy layout of Table 3.2.

    This is where measured data plugs into the Chapter 3 notebook: the output has
    the columns of the published table (``model``, ``framework``, ``phase``,
    ``mean``, ``std``) plus ``workers``, ``n`` and ``source = "measured"``.

    Parameters
    ----------
    measured : pandas.DataFrame
        One row per worker and iteration with the :data:`MEASURED_COLUMNS`.
        For several workers, each iteration is first reduced to the slowest
        worker's phases (the one that sets the pace in eq. 3.3).
    by : tuple of str
        Grouping columns.
    """
    import pandas as pd

    require_columns(measured, list(by) + ["iteration"], "summarise_phases")
    phases = [p for p in PHASES if p in measured.columns]
    if not phases:
        raise ValueError(f"summarise_phases: no phase columns among {list(measured.columns)}")
    keys = list(by) + ["iteration"]
    # per iteration: the worker with the longest iteration time represents it
    if "t_iter" in measured.columns and "rank" in measured.columns:
        idx = measured.groupby(keys, sort=False)["t_iter"].idxmax()
        per_iter = measured.loc[idx, keys + phases]
    else:
        per_iter = measured.groupby(keys, sort=False)[phases].max().reset_index()
    agg = per_iter.groupby(list(by), sort=False)[phases].agg(["mean", "std", "count"])
    rows = []
    for key, row in agg.iterrows():
        key = key if isinstance(key, tuple) else (key,)
        for p in phases:
            rows.append(dict(zip(by, key), phase=p, mean=row[(p, "mean")], std=row[(p, "std")],
                             n=int(row[(p, "count")])))
    out = pd.DataFrame(rows)
    out.insert(0, "source", "measured")
    return out


def predicted_speedups(phases_1, t_comm, variants=VARIANTS, t_md_multi: str = "same"):
    """Speedups on N workers predicted by eq. 3.7 from single-worker phases and t_c.

    Parameters
    ----------
    phases_1 : pandas.DataFrame
        Tidy single-worker phase means (Table 3.2 layout: model, framework, phase, mean).
    t_comm : pandas.DataFrame
        Aggregation times (Table 3.3 layout: model, framework, gpus, mean).
    variants : sequence of {"thesis", "paper"}
        Which forms of eq. 3.7 to evaluate.
    t_md_multi : {"same"}
        How t_md on N workers is obtained; only "same as on one worker" is
        available from the published numbers (and t'_io = t_io).

    Returns
    -------
    pandas.DataFrame
        Columns model, framework, gpus, variant, speedup, plus ``gpus = 1`` rows
        with speedup 1 (the reference of eq. 3.6). Labelled model predictions.
        A model × framework whose single-worker phases are not all timed (a phase
        fused into a native step is NaN) and a worker count without a timed t_c
        (overlapped runs) are left out: eq. 3.7 needs every term.
    """
    import pandas as pd

    if t_md_multi != "same":
        raise ValueError(f"t_md_multi: only 'same' is supported, got {t_md_multi!r}")
    require_columns(t_comm, ("model", "framework", "gpus", "mean"), "predicted_speedups(t_comm)")
    wide = phase_wide(phases_1)
    need = ["t_io", "t_h2d", "t_md", "t_f", "t_b", "t_u"]
    require_columns(wide, need, "predicted_speedups(phases_1)")
    rows = []
    for (model, fw), ph in wide.iterrows():
        if not np.all(np.isfinite(ph[need].to_numpy(dtype=float))):
            continue  # a phase fused into another (a native step): eq. 3.7 cannot be fed
        for variant in variants:
            rows.append(dict(model=model, framework=fw, gpus=1, variant=variant, speedup=1.0))
        comm = t_comm[(t_comm["model"] == model) & (t_comm["framework"] == fw)]
        for _, c in comm[np.isfinite(comm["mean"].to_numpy(dtype=float))].iterrows():
            for variant in variants:
                s = speedup_pipelined(
                    int(c["gpus"]), ph["t_io"], ph["t_h2d"], ph["t_f"], ph["t_b"], ph["t_u"],
                    c["mean"], t_md=ph["t_md"], variant=variant,
                )
                rows.append(dict(model=model, framework=fw, gpus=int(c["gpus"]), variant=variant, speedup=s))
    out = pd.DataFrame(rows).sort_values(["variant", "model", "framework", "gpus"], kind="stable")
    out.insert(0, "kind", "model prediction (eq. 3.7)")
    return out.reset_index(drop=True)


def measured_table3_2(df):
    """Table 3.2 layout (model, framework, phase, mean, std) for one worker."""
    one = df[df["workers"] == 1]
    if one.empty:
        raise ValueError("workers: no single-worker rows to build Table 3.2 from")
    return summarise_phases(one, by=("model", "framework", "workers")).drop(columns="workers")


def measured_t_comm(df):
    """Table 3.3 layout (model, framework, gpus, mean, std): t_c of the slowest worker per iteration."""
    multi = df[df["workers"] > 1]
    tidy = summarise_phases(multi, by=("model", "framework", "workers"))
    out = tidy[tidy["phase"] == "t_c"].rename(columns={"workers": "gpus"})
    return out[["source", "model", "framework", "gpus", "mean", "std", "n"]].reset_index(drop=True)


def _lif_per_iteration(df, compute=COMPUTE_PHASES):
    import pandas as pd

    w = df.assign(t_compute=df[list(compute)].sum(axis=1))
    parts = []
    for (model, fw, g), sub in w.groupby(["model", "framework", "workers"], sort=False):
        wide = sub.pivot_table(index="iteration", columns="rank", values="t_compute")
        if wide.shape[1] != g or wide.isna().any().any():
            raise ValueError(f"{model}, {g} workers: expected one row per rank and iteration")
        lif = load_imbalance_factor(wide.to_numpy(), axis=1) if g > 1 else np.ones(len(wide))
        parts.append(pd.DataFrame({"model": model, "framework": fw, "workers": g, "iteration": wide.index,
                                   "lif": np.asarray(lif, dtype=float)}))
    return pd.concat(parts, ignore_index=True)


def measured_lif(df, compute=COMPUTE_PHASES):
    """Table 3.4 layout (model, framework, gpus, mean, std): LIF (eq. 3.8) of per-worker compute time.

    Each iteration's LIF is ``N · max_i t_i / Σ_i t_i`` over workers, with
    ``t_i`` the sum of ``compute`` phases on worker ``i`` (the work before the
    all-reduce); the table gives its mean and standard deviation over iterations.
    """
    per = _lif_per_iteration(df[df["workers"] > 1], compute)
    agg = per.groupby(["model", "framework", "workers"], sort=False)["lif"].agg(["mean", "std", "count"]).reset_index()
    agg = agg.rename(columns={"workers": "gpus", "count": "n"})
    agg.insert(0, "source", "measured")
    return agg


def epoch_frame(df, n_train: int = 60000, compute=COMPUTE_PHASES):
    """Per-iteration data for eq. 3.9: ``epoch_time = ceil(n_train / (b·G)) × t_iter`` (slowest worker) and LIF.

    The thesis regresses epoch times on GPUs and LIF; the harness times
    iterations, so each timed iteration stands for an epoch of identical
    iterations. With one worker the LIF is 1 by definition.
    """
    it = df.groupby(["model", "framework", "workers", "iteration"], sort=False).agg(
        t_iter=("t_iter", "max"), batch_size=("batch_size", "first")).reset_index()
    if it["batch_size"].isna().any():
        raise ValueError("batch_size: needed to turn iterations into epochs (per-worker batch per row)")
    lif = _lif_per_iteration(df, compute)
    out = it.merge(lif, on=["model", "framework", "workers", "iteration"], how="left")
    out["lif"] = out["lif"].fillna(1.0)
    steps = [steps_per_epoch(n_train, b, g) for b, g in zip(out["batch_size"], out["workers"])]
    out["epoch_time"] = np.asarray(steps) * out["t_iter"].to_numpy()
    return out


def measured_speedup(df, n_train: int = 60000):
    """Measured speedup on G workers: epoch time on 1 worker / epoch time on G (mean t_iter of the slowest worker).

    The per-worker batch is fixed, so G workers need ``ceil(n_train/(b·G))``
    iterations per epoch: speedup = steps(1)·t_iter(1) / (steps(G)·t_iter(G)).
    Returns the layout of :func:`predicted_speedups` with ``variant = "measured"``.
    """
    import pandas as pd

    ep = epoch_frame(df, n_train)
    mean = ep.groupby(["model", "framework", "workers"], sort=False)["epoch_time"].mean().reset_index()
    rows = []
    for (model, fw), g in mean.groupby(["model", "framework"], sort=False):
        base = g.loc[g["workers"] == 1, "epoch_time"]
        if base.empty:
            raise ValueError(f"workers: {model} has no single-worker run to compute speedup from")
        for _, r in g.iterrows():
            rows.append(dict(kind="measured", model=model, framework=fw, gpus=int(r["workers"]), variant="measured",
                             speedup=float(base.iloc[0] / r["epoch_time"]), epoch_time=float(r["epoch_time"])))
    return pd.DataFrame(rows)


def phase_remainder(measured):
    """Per (framework, model, workers): mean t_iter and the mean and largest part of it that no phase covers.

    The harness's phases are consecutive intervals of one iteration, so they add
    up to ``t_iter`` but for its own bookkeeping between iterations; this is that
    remainder (``remainder_share`` = mean remainder / mean t_iter).
    """
    rem = measured.assign(rest=measured["t_iter"] - measured[list(PHASES[:-1])].fillna(0).sum(axis=1))
    by = (["framework"] if "framework" in rem.columns else []) + ["model", "workers"]
    out = rem.groupby(by, sort=False).agg(t_iter=("t_iter", "mean"), remainder=("rest", "mean"),
                                              remainder_max=("rest", "max")).reset_index()
    out["remainder_share"] = out["remainder"] / out["t_iter"]
    return out


def overlap_vs_phased(measured_all):
    """Mean iteration time (slowest worker) of the phased and the overlapped (native) mode per
    (framework, model, workers).

    Returns ``None`` when the data does not have both modes.
    """
    if not set(measured_all["mode"]) >= {"phased", "overlapped"}:
        return None
    by = (["framework"] if "framework" in measured_all.columns else []) + ["model", "workers"]
    it = measured_all.groupby(by + ["mode", "iteration"])["t_iter"].max().reset_index()
    overlap = it.pivot_table(index=by, columns="mode", values="t_iter", aggfunc="mean", sort=False)
    overlap = overlap[["overlapped", "phased"]].dropna()
    overlap["overlapped_over_phased"] = overlap["overlapped"] / overlap["phased"]
    return overlap


#: columns of each cell that :func:`bootstrap_cells` resamples
CELL_COLUMNS = ("t_io", "t_h2d", "t_md", "t_f", "t_b", "t_c", "t_u", "t_iter", "lif", "epoch_time")


def bootstrap_cells(measured_all, n_train: int = 60000, b: int | None = None, seed: int | None = None,
                    compute=COMPUTE_PHASES) -> dict:
    """Mean of every phase, the LIF and the epoch time of each measured run, and their bootstrap over iterations.

    One cell is a (mode, framework, model, workers) run. Each iteration is represented
    by its slowest worker (as in :func:`summarise_phases`), with the iteration's LIF
    (eq. 3.8, as in :func:`measured_lif`) and its epoch time (as in :func:`epoch_frame`).
    The iterations of a cell, in their order, are resampled ``b`` times by the stationary
    block bootstrap (:func:`perfkit.evidence.block_mean_bootstrap`: blocks of
    consecutive iterations, the expected block length chosen per cell from the
    autocorrelation of its columns; a seed per cell, derived from ``seed``), so the means
    of this function equal those of the tables and their resamples give the intervals
    of the Chapter 3 claims.

    Returns
    -------
    dict
        ``{(mode, framework, model, workers): {column: (mean, samples)}}`` for the
        columns of :data:`CELL_COLUMNS` (NaN where a column is absent, e.g. the epoch
        time without ``batch_size``).
    """
    import pandas as pd

    from ...evidence import B, SEED, block_mean_bootstrap

    b = B if b is None else b
    seed = SEED if seed is None else seed
    df = measured_all if "mode" in measured_all.columns else measured_all.assign(mode="phased")
    keys = ["mode", "framework", "model", "workers", "iteration"]
    require_columns(df, keys[1:] + ["t_iter"], "bootstrap_cells")
    phases = [p for p in PHASES if p in df.columns]
    rank = "rank" in df.columns
    idx = df.groupby(keys, sort=True)["t_iter"].idxmax() if rank else None
    per = df.loc[idx, keys + phases + (["batch_size"] if "batch_size" in df.columns else [])] if rank else \
        df.groupby(keys, sort=True)[phases].max().reset_index()
    lifs = []
    for mode, sub in df.groupby("mode", sort=True):
        if rank and set(compute) <= set(sub.columns):
            lifs.append(_lif_per_iteration(sub, compute).assign(mode=mode))
    per = per.merge(pd.concat(lifs, ignore_index=True), on=keys, how="left") if lifs else per.assign(lif=np.nan)
    per["lif"] = per["lif"].where(per["workers"] > 1, 1.0)
    if "batch_size" in per.columns and per["batch_size"].notna().all():
        steps = [steps_per_epoch(n_train, int(bs), int(g)) for bs, g in zip(per["batch_size"], per["workers"])]
        per["epoch_time"] = np.asarray(steps, dtype=float) * per["t_iter"].to_numpy()
    for col in CELL_COLUMNS:
        if col not in per.columns:
            per[col] = np.nan
    out = {}
    for k, (cell, sub) in enumerate(per.groupby(keys[:-1], sort=True)):
        sub = sub.sort_values("iteration", kind="stable")
        est, samples, _ = block_mean_bootstrap(sub[list(CELL_COLUMNS)].to_numpy(dtype=float), b=b, seed=[seed, k])
        out[tuple(cell)] = {c: (float(est[i]), samples[:, i]) for i, c in enumerate(CELL_COLUMNS)}
    return out
