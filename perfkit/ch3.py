"""Chapter 3 analysis: phase tables, eq. 3.7 speedup predictions, consistency checks, plots.

The functions take tidy tables — the thesis transcriptions from
:func:`perfkit.load_thesis_table`, or measured per-iteration data in the
:data:`MEASURED_COLUMNS` layout — so the Chapter 3 notebook runs the same code on
published and on measured numbers.
"""
from __future__ import annotations

import numpy as np

from .equations import VARIANTS, speedup_pipelined

__all__ = [
    "PHASES",
    "PHASE_LABELS",
    "MEASURED_COLUMNS",
    "phase_wide",
    "format_mean_std",
    "table3_2_display",
    "summarise_phases",
    "predicted_speedups",
    "sum_check_3_2",
    "published_consistency",
    "plot_phase_bars",
    "plot_speedup",
    "FRAMEWORK_COLORS",
    "framework_color",
]

#: Phases of one iteration in the order of Table 3.2 (t_c added for multi-worker data).
PHASES = ("t_io", "t_h2d", "t_md", "t_f", "t_b", "t_c", "t_u", "t_iter")
PHASE_LABELS = {
    "t_io": "I/O",
    "t_h2d": "H→D copy",
    "t_md": "split",
    "t_f": "forward",
    "t_b": "backward",
    "t_c": "aggregation",
    "t_u": "update",
    "t_iter": "iteration",
}
#: Columns of a measured per-iteration Chapter 3 file (one row per worker and iteration).
MEASURED_COLUMNS = ("model", "framework", "workers", "rank", "iteration") + PHASES

_MODEL_ORDER = ("CNN", "MLP", "Autoencoder")


#: one colour per framework, shared by every figure
FRAMEWORK_COLORS = {
    "Chainer": "#1b9e77",
    "MXNet": "#d95f02",
    "TensorFlow": "#7570b3",
    "PyTorch": "#e7298a",
    "JAX": "#66a61e",
}


def framework_color(framework: str) -> str:
    """Colour of a framework in perfkit figures (grey for unknown ones)."""
    return FRAMEWORK_COLORS.get(str(framework).split(" ")[0], "#666666")


def _require(df, columns, what):
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
    _require(tidy, ("model", "framework", "phase", value), "phase_wide")
    wide = tidy.pivot_table(index=["model", "framework"], columns="phase", values=value, sort=False)
    cols = [p for p in PHASES if p in wide.columns]
    return wide[cols]


def format_mean_std(mean, std, digits: int = 4) -> str:
    """``"0.4009 ± 0.024"`` with ``digits`` significant digits; just the mean when std is missing."""

    def fmt(x):
        return np.format_float_positional(float(x), precision=digits, fractional=False, trim="-")

    if std is None or (isinstance(std, float) and np.isnan(std)):
        return fmt(mean)
    return f"{fmt(mean)} ± {fmt(std)}"


def table3_2_display(tidy, digits: int = 4):
    """Table 3.2 layout: rows (model, phase), columns framework, cells ``mean ± std``."""
    _require(tidy, ("model", "framework", "phase", "mean", "std"), "table3_2_display")
    cells = tidy.assign(cell=[format_mean_std(m, s, digits) for m, s in zip(tidy["mean"], tidy["std"])])
    out = cells.pivot(index=["model", "phase"], columns="framework", values="cell")
    order = [(m, p) for m in _MODEL_ORDER for p in PHASES if (m, p) in out.index]
    rest = [i for i in out.index if i not in order]
    return out.loc[order + rest]


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

    _require(measured, list(by) + ["iteration"], "summarise_phases")
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
    """
    import pandas as pd

    if t_md_multi != "same":
        raise ValueError(f"t_md_multi: only 'same' is supported, got {t_md_multi!r}")
    _require(t_comm, ("model", "framework", "gpus", "mean"), "predicted_speedups(t_comm)")
    wide = phase_wide(phases_1)
    need = ["t_io", "t_h2d", "t_md", "t_f", "t_b", "t_u"]
    _require(wide, need, "predicted_speedups(phases_1)")
    rows = []
    for (model, fw), ph in wide.iterrows():
        for variant in variants:
            rows.append(dict(model=model, framework=fw, gpus=1, variant=variant, speedup=1.0))
        comm = t_comm[(t_comm["model"] == model) & (t_comm["framework"] == fw)]
        for _, c in comm.iterrows():
            for variant in variants:
                s = speedup_pipelined(
                    int(c["gpus"]), ph["t_io"], ph["t_h2d"], ph["t_f"], ph["t_b"], ph["t_u"],
                    c["mean"], t_md=ph["t_md"], variant=variant,
                )
                rows.append(dict(model=model, framework=fw, gpus=int(c["gpus"]), variant=variant, speedup=s))
    out = pd.DataFrame(rows).sort_values(["variant", "model", "framework", "gpus"], kind="stable")
    out.insert(0, "kind", "model prediction (eq. 3.7)")
    return out.reset_index(drop=True)


def sum_check_3_2(tidy, decimals: int = 4):
    """Does t_iter equal the sum of its phases in each cell of Table 3.2?

    Each printed value carries a rounding error of up to half a unit in the last
    printed digit, so a sum of k terms matches when it is within
    ``(k + 1) * 0.5 * 10**-decimals`` of t_iter.

    Returns
    -------
    pandas.DataFrame
        Per (model, framework): printed t_iter, sum of all phases, sum without
        t_md, the differences, and a verdict.
    """
    wide = phase_wide(tidy)
    parts = ["t_io", "t_h2d", "t_md", "t_f", "t_b", "t_u"]
    _require(wide, parts + ["t_iter"], "sum_check_3_2")
    half = 0.5 * 10.0 ** -decimals
    out = wide[["t_iter"]].copy()
    out["sum_all"] = wide[parts].sum(axis=1)
    out["sum_without_t_md"] = wide[[p for p in parts if p != "t_md"]].sum(axis=1)
    out["diff_all"] = out["t_iter"] - out["sum_all"]
    out["diff_without_t_md"] = out["t_iter"] - out["sum_without_t_md"]
    tol_all, tol_wo = (len(parts) + 1) * half, len(parts) * half
    verdict = []
    for _, r in out.iterrows():
        d_all, d_wo = abs(r["diff_all"]), abs(r["diff_without_t_md"])
        if d_all <= tol_all and d_all <= d_wo:
            verdict.append("adds up with all phases")
        elif d_wo <= tol_wo:
            verdict.append("adds up only without t_md")
        else:
            verdict.append("does not add up")
    out["verdict"] = verdict
    return out.reset_index()


def _check(rows, check, scope, published, computed, holds, guide=""):
    rows.append(dict(check=check, scope=scope, published=published, computed=computed,
                     verdict="consistent" if holds else "inconsistent", guide_item=guide))


def published_consistency(t32, t34, t35):
    """Consistency checks on the published Chapter 3 numbers.

    Parameters
    ----------
    t32, t34, t35 : pandas.DataFrame
        ``load_thesis_table("3.2")``, ``("3.4")`` and ``("3.5")`` (all sources).

    Returns
    -------
    pandas.DataFrame
        One row per check: check, scope, published value, computed value,
        verdict (consistent / inconsistent) and the matching item of the
        reading guide's list of things that do not add up.
    """
    import pandas as pd

    rows: list[dict] = []
    for _, r in sum_check_3_2(t32).iterrows():
        _check(rows, "t_iter = sum of phases (Table 3.2, eq. 3.4)", f"{r['model']}/{r['framework']}",
               f"{r['t_iter']:.4f}", f"all {r['sum_all']:.4f}; without t_md {r['sum_without_t_md']:.4f}",
               r["verdict"] == "adds up with all phases", "1")
    md = t32[t32["phase"] == "t_md"].set_index(["model", "framework"])["mean"]
    for model in md.index.get_level_values(0).unique():
        diff = md[(model, "Chainer")] - md[model].drop("Chainer")
        _check(rows, "text: Chainer's t_md is 0.3 s longer than MXNet's and TensorFlow's", model, "0.3 s",
               f"{diff.min():.4f}-{diff.max():.4f} s longer", bool(np.all(np.abs(diff - 0.3) < 0.05)), "5")
    for src, g in t34.groupby("source", sort=True):
        low = g[g["mean"] < 1.0]
        _check(rows, "LIF >= 1 in every cell (eq. 3.8)", f"{src}: {len(g)} cells",
               f"min {g['mean'].min():g}", f"{len(low)} cells below 1", low.empty)
    if {"thesis", "paper_iucc2021"} <= set(t35["source"]):
        key = ["model", "framework", "quantity"]
        th = t35[t35["source"] == "thesis"].set_index(key)["mean"]
        pa = t35[t35["source"] == "paper_iucc2021"].set_index(key)["mean"]
        for idx in th.index.intersection(pa.index):
            if idx[2] == "r2":
                continue
            _check(rows, "Table 3.5 = paper eqs. 10-18", f"{idx[0]}/{idx[1]} {idx[2]}",
                   f"thesis {th[idx]:g}", f"paper {pa[idx]:g}", bool(np.isclose(th[idx], pa[idx])), "4")
    return pd.DataFrame(rows)


def plot_phase_bars(tidy, model: str, ax=None, phases=("t_io", "t_h2d", "t_md", "t_f", "t_b", "t_u", "t_iter")):
    """Grouped bars of phase times (mean ± std) per framework for one model (Figs. 3.2–3.4)."""
    import matplotlib.pyplot as plt

    sub = tidy[tidy["model"] == model]
    if sub.empty:
        raise ValueError(f"model: no rows for {model!r}; models are {sorted(tidy['model'].unique())}")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.2))
    frameworks = list(dict.fromkeys(sub["framework"]))
    phases = [p for p in phases if p in set(sub["phase"])]
    width = 0.8 / len(frameworks)
    x = np.arange(len(phases))
    for i, fw in enumerate(frameworks):
        f = sub[sub["framework"] == fw].set_index("phase").reindex(phases)
        ax.bar(x + (i - (len(frameworks) - 1) / 2) * width, f["mean"], width, yerr=f["std"].fillna(0),
               capsize=2, label=fw, color=framework_color(fw))
    ax.set_xticks(x, [PHASE_LABELS[p] for p in phases])
    ax.set_ylabel("time per iteration (s)")
    ax.set_title(model)
    ax.legend(frameon=False)
    return ax


def plot_speedup(pred, model: str, ax=None):
    """Speedup vs workers for one model, one line per framework and eq. 3.7 variant."""
    import matplotlib.pyplot as plt

    sub = pred[pred["model"] == model]
    if sub.empty:
        raise ValueError(f"model: no rows for {model!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(4, 3.2))
    styles = {"thesis": "-", "paper": "--", "measured": ":"}
    for (fw, variant), g in sub.groupby(["framework", "variant"], sort=True):
        ax.plot(g["gpus"], g["speedup"], styles.get(variant, "-"), marker="o", color=framework_color(fw),
                label=f"{fw} ({variant})")
    g_max = int(sub["gpus"].max())
    ax.plot([1, g_max], [1, g_max], color="grey", lw=0.8, label="ideal")
    ax.set_xticks(range(1, g_max + 1))
    ax.set_xlabel("workers (GPUs)")
    ax.set_ylabel("speedup")
    ax.set_title(model)
    ax.legend(frameon=False, fontsize=7)
    return ax
