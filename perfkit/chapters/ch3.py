"""Chapter 3: the S-SGD phase model on the published tables and on our measurements.

:func:`analyse` computes every table, figure and claim of the chapter from the
thesis's Tables 3.2-3.5 (``data/thesis/``) and a ``perfkit collect ch3`` file:

1. Table 3.2 and Figs. 3.2-3.4: phase times on one worker;
2. Table 3.3: gradient aggregation time on 2 and 3 workers;
3. Table 3.4: the load imbalance factor (eq. 3.8);
4. speedup: eq. 3.7 on the published tables, and Figs. 3.5-3.7 measured;
5. Figs. 3.8-3.13: the iteration on 2 and 3 workers, and what overlap buys;
6. Table 3.5: the regression of epoch time on workers and LIF (eq. 3.9);
7. do the published numbers add up;
8. the claims ledger (:data:`CLAIMS`).

The notebook ``notebooks/ch3_sgd_phase_model.ipynb`` calls :func:`analyse`,
shows its tables and figures and explains them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..report.claims import Claim, fmt, judge_all
from ..report.tables import format_mean_std
from ..model.phases import _require, phase_wide
from ..schema import CH3_COLUMNS, CH3_MODELS, PHASES
from .result import (ChapterResult, ParameterError, ParamsBase, at_least, checked_params, existing_file, grid,
                     make_params, one_of, output_folder, show_path)

__all__ = ["Params", "check_params", "analyse", "CLAIMS", "FIGURE_NUMBERS", "BREAKDOWN_FIGURES", "table3_2_display",
           "sum_check_3_2", "published_consistency"]

#: model → (number of its phase figure, number of its speedup figure)
FIGURE_NUMBERS = {"CNN": (2, 5), "MLP": (3, 6), "Autoencoder": (4, 7)}
#: (model, workers) → number of its breakdown figure
BREAKDOWN_FIGURES = {("CNN", 2): 8, ("MLP", 2): 9, ("Autoencoder", 2): 10, ("CNN", 3): 11, ("MLP", 3): 12,
                     ("Autoencoder", 3): 13}


#: forms of eq. 3.7 (:data:`perfkit.model.equations.VARIANTS`)
VARIANTS = ("thesis", "paper")
#: modes of a ``perfkit collect ch3`` file
MODES = ("phased", "overlapped")


@dataclass(frozen=True)
class Params(ParamsBase):
    """Parameters of Chapter 3 (the notebook's ``parameters`` cell); :data:`Params.CHECKS` are their rules."""

    quick: bool = False  # accepted for symmetry with the other chapters: every section is fast
    speedup_variants: tuple = ("thesis", "paper")  # forms of eq. 3.7 to evaluate
    measured_csv: str = "data/measured/pytorch-cpu/ch3_phases.csv"  # perfkit collect ch3 output; "" = published only
    measured_mode: str = "phased"  # phased (explicit all-reduce, separates t_c) or overlapped (DDP)
    n_train: int = 60000  # training images per epoch (MNIST) for epoch times and speedup
    figures_dir: str = ""  # folder for figures and tables (ChapterResult.save); "" means figures/

    #: the rule of each parameter (``quick`` needs only be a bool)
    CHECKS = {
        "speedup_variants": grid(one_of(*VARIANTS), f"forms of eq. 3.7 from {', '.join(map(repr, VARIANTS))}",
                                 distinct=True),
        "measured_csv": existing_file("a `perfkit collect ch3` output", empty='"" for the published tables only'),
        "measured_mode": one_of(*MODES),
        "n_train": at_least(1),
        "figures_dir": output_folder("figures/"),
    }


def check_params(**params) -> Params:
    """The checked :class:`Params` of Chapter 3, or one :class:`~perfkit.chapters.result.ParameterError`.

    Applies :data:`Params.CHECKS` (names, types, values; :func:`~perfkit.chapters.result.make_params`),
    then reads ``measured_csv`` (unless ``""``): it must have the Chapter 3 columns and rows of
    ``measured_mode``. Nothing is computed.
    """
    import pandas as pd

    from ..schema import resolve

    p = make_params(Params, params)
    if p.measured_csv:
        path = resolve(p.measured_csv)
        try:
            df = pd.read_csv(path)
        except ValueError as exc:  # not CSV, empty, undecodable
            raise ParameterError(f"measured_csv: {show_path(path)} cannot be read as CSV ({exc}); expected a "
                                 "`perfkit collect ch3` output") from None
        missing = [c for c in CH3_COLUMNS if c not in df.columns]
        if missing:
            raise ParameterError(f"measured_csv: {show_path(path)} has no column {missing[0]!r}; expected a "
                                 f"`perfkit collect ch3` output (columns {', '.join(CH3_COLUMNS)})")
        ok = df[df["status"] == "ok"] if "status" in df.columns else df
        modes = sorted(set(ok["mode"])) if "mode" in ok.columns else (["phased"] if len(ok) else [])
        if p.measured_mode not in modes:
            raise ParameterError(f"measured_mode: {show_path(path)} has no usable {p.measured_mode!r} rows "
                                 f"(status ok); expected one of its modes {modes}")
    return p


def table3_2_display(tidy, digits: int = 4):
    """Table 3.2 layout: rows (model, phase), columns framework, cells ``mean ± std``."""
    _require(tidy, ("model", "framework", "phase", "mean", "std"), "table3_2_display")
    cells = tidy.assign(cell=[format_mean_std(m, s, digits) for m, s in zip(tidy["mean"], tidy["std"])])
    out = cells.pivot(index=["model", "phase"], columns="framework", values="cell")
    order = [(m, p) for m in CH3_MODELS for p in PHASES if (m, p) in out.index]
    rest = [i for i in out.index if i not in order]
    return out.loc[order + rest]


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


# ------------------------------------------------------------------------------------------- claims
def _eq37(variant):
    key = f"eq37_{variant}"
    return Claim(
        key, f"eq. 3.7 ({variant} form) predicts the measured speedup", "eq. 3.7", "within 20 % in every cell",
        needs=(key,), test=lambda q: q[key]["max"] <= 0.2,
        evidence=lambda q: f"largest relative error {fmt(100 * q[key]['max'])} % over {q[key]['n']} cells")


def _published(check):
    return Claim(
        f"published: {check}", f"published: {check}", "see consistency_published.csv", "every cell consistent",
        needs=(f"published: {check}",), test=lambda q: q[f"published: {check}"] == 1.0,
        evidence=lambda q: f"{fmt(100 * q[f'published: {check}'])} % of cells consistent")


_NO_MULTI = "no multi-worker measurements given"

#: The claims of Chapter 3 and their rules, in ledger order.
CLAIMS = (
    Claim("sum_of_phases", "an iteration is the sum of its phases (eq. 3.3/3.4)", "§3.3, Table 3.2",
          "remainder below 1 % in every model and worker count", needs=("remainder_share",),
          test=lambda q: q["remainder_share"] < 0.01,
          evidence=lambda q: f"largest mean remainder {fmt(100 * q['remainder_share'])} % of t_iter", missing=_NO_MULTI),
    Claim("t_c_grows", "gradient aggregation time grows from 2 to 3 workers", "Table 3.3",
          "t_c(3) > t_c(2) for every model", needs=("t_c",),
          test=lambda q: all(t3 > t2 for t2, t3 in q["t_c"].values()),
          evidence=lambda q: "; ".join(f"{m}: {fmt(t2)} s -> {fmt(t3)} s" for m, (t2, t3) in q["t_c"].items()),
          missing=_NO_MULTI),
    Claim("lif_vs_speedup", "higher LIF goes with lower speedup", "§3.4.3, Tables 3.4–3.5", "negative correlation",
          needs=("lif_rho",), test=lambda q: None if not np.isfinite(q["lif_rho"][0]) else q["lif_rho"][0] < 0,
          evidence=lambda q: (f"Spearman correlation of LIF with speedup/G over {q['lif_rho'][1]} (model, G) cells: "
                              f"{fmt(q['lif_rho'][0])}"), missing=_NO_MULTI),
    Claim("speedup", "more workers speed training up", "Figures 3.5–3.7",
          "speedup above 1 on some worker count, every model", needs=("best_speedup",),
          test=lambda q: all(v > 1 for v in q["best_speedup"].values()),
          evidence=lambda q: "; ".join(f"{m}: best speedup {fmt(v)}" for m, v in q["best_speedup"].items()),
          missing=_NO_MULTI),
    _eq37("paper"),
    _eq37("thesis"),
    Claim("overlap", "overlapping aggregation with backward shortens the iteration (eq. 3.5 vs 3.3)", "§3.3",
          "overlapped/phased iteration time below 1 in every multi-worker cell", needs=("overlap",),
          test=lambda q: all(v < 1 for v in q["overlap"].values()),
          evidence=lambda q: "; ".join(f"{m} G={g}: {fmt(v)}" for (m, g), v in q["overlap"].items()),
          missing="needs both the phased and the overlapped mode"),
    Claim("lif_regression", "epoch time is well explained by workers and LIF (eq. 3.9)", "Table 3.5",
          "R² >= 0.9 for every model, as the published fits", needs=("lif_r2",),
          test=lambda q: all(v >= 0.9 for v in q["lif_r2"].values()),
          evidence=lambda q: "; ".join(f"{m}: R² {fmt(v)}" for m, v in q["lif_r2"].items()),
          missing="the regression is not identifiable on this data"),
    _published("LIF >= 1 in every cell (eq. 3.8)"),
    _published("Table 3.5 = paper eqs. 10-18"),
    _published("t_iter = sum of phases (Table 3.2, eq. 3.4)"),
    _published("text: Chainer's t_md is 0.3 s longer than MXNet's and TensorFlow's"),
)


# ------------------------------------------------------------------------------------------ analyse
def analyse(params: Params | None = None, /, **kwargs) -> ChapterResult:
    """Chapter 3 on the published tables and (unless ``measured_csv=""``) a measured file.

    ``analyse(n_train=50000, ...)`` or ``analyse(check_params(...))``; the parameters (:class:`Params`)
    are checked first (:func:`check_params`): a value that is not allowed raises one
    :class:`~perfkit.chapters.result.ParameterError` before anything is computed.
    """
    import pandas as pd

    from ..data.measured import load_phases
    from ..data.thesis import load_thesis_table
    from ..model import phases as ph
    from ..model.lif import fit_lif_regression
    from ..report import plots
    from ..schema import resolve

    p = checked_params(params, kwargs, Params, check_params)
    res = ChapterResult("ch3", p)
    T, V, F, q = res.tables, res.views, res.figures, res.numbers
    t32, t33, t34, t35 = (load_thesis_table(n) for n in ("3.2", "3.3", "3.4", "3.5"))

    measured = measured_all = None
    if p.measured_csv:
        mpath = resolve(p.measured_csv)
        measured_all = load_phases(mpath, mode=None)
        measured = measured_all[measured_all["mode"] == p.measured_mode].reset_index(drop=True)
        if measured.empty:
            raise ValueError(f"measured_mode: no {p.measured_mode!r} rows in {mpath}")
        label = measured["framework"].iloc[0]
        res.notes.append(f"measured: {mpath.name}, {len(measured)} rows ({p.measured_mode}), {label}; models "
                         f"{sorted(measured['model'].unique())}, workers {sorted(int(w) for w in measured['workers'].unique())}")
    multi = measured is not None and bool((measured["workers"] > 1).any())
    q["label"] = label if measured is not None else None

    # §1 Table 3.2, Figs. 3.2-3.4
    T["table3_2"] = t32[["model", "framework", "phase", "mean", "std", "source", "table"]]
    V["table3_2"] = table3_2_display(t32)
    both32 = t32
    if measured is not None:
        t32m = ph.measured_table3_2(measured)
        T["table3_2_measured"], V["table3_2_measured"] = t32m, table3_2_display(t32m)
        both32 = pd.concat([t32, t32m], ignore_index=True)
    for model in CH3_MODELS:
        if model not in set(both32["model"]):
            continue
        fig, ax = plots.new_figure(figsize=(7.5, 3.4))
        plots.plot_phase_bars(both32, model, ax=ax)
        ax.set_yscale("log")
        ax.set_title(f"{model}: phase times on one worker (thesis Table 3.2 on GPUs; ours measured)", fontsize=9)
        F[f"fig3_{FIGURE_NUMBERS[model][0]}_phases_{model.lower()}"] = fig

    # §2 Table 3.3
    table3_3 = t33.pivot_table(index=["model", "framework"], columns="gpus", values="mean", sort=False)
    table3_3.columns = [f"t_comm_{g}gpus_s" for g in table3_3.columns]
    T["table3_3"] = table3_3.reset_index()
    if multi:
        t33m = ph.measured_t_comm(measured)
        T["table3_3_measured"] = t33m
        view = t33m.pivot_table(index="model", columns="gpus", values="mean", sort=False) * 1e3
        V["table3_3_measured"] = view.rename(columns=lambda g: f"t_c on {g} workers (ms)").round(3)
        tc = t33m.pivot_table(index="model", columns="gpus", values="mean")
        if {2, 3} <= set(tc.columns):
            q["t_c"] = {m: (float(tc.loc[m, 2]), float(tc.loc[m, 3])) for m in tc.index}

    # §3 Table 3.4
    table3_4 = t34.pivot_table(index=["framework", "model"], columns=["source", "gpus"], values="mean", sort=False)
    table3_4.columns = [f"{src}_{g}gpus" for src, g in table3_4.columns]
    T["table3_4"] = table3_4.reset_index()
    if multi:
        t34m = ph.measured_lif(measured)
        T["table3_4_measured"] = t34m

    # §4 speedup
    pred = ph.predicted_speedups(t32, t33, variants=p.speedup_variants)
    T["speedup_predicted_eq3_7"] = pred
    V["speedup_predicted_eq3_7"] = pred.pivot_table(index=["model", "framework"], columns=["variant", "gpus"],
                                                    values="speedup", sort=False).round(3)
    for model in CH3_MODELS:
        fig, ax = plots.new_figure(figsize=(5.6, 3.4))
        plots.plot_speedup(pred, model, ax=ax, unit="GPUs")
        ax.set_title(f"{model}: speedup predicted by eq. 3.7\n(from Tables 3.2 + 3.3; not measured)", fontsize=8)
        F[f"fig3_{FIGURE_NUMBERS[model][1]}_speedup_{model.lower()}_eq3_7"] = fig
    if multi:
        sp_meas = ph.measured_speedup(measured, n_train=p.n_train)
        sp_pred = ph.predicted_speedups(t32m, t33m, variants=p.speedup_variants)
        sp_pred = sp_pred[sp_pred["framework"] == label]
        speedups = pd.concat([sp_meas, sp_pred], ignore_index=True)
        T["speedup_measured"] = speedups
        V["speedup_measured"] = speedups.pivot_table(index=["model", "variant"], columns="gpus", values="speedup",
                                                     sort=False).rename(columns=lambda g: f"{g} workers").round(3)
        for model in CH3_MODELS:
            if model not in set(speedups["model"]):
                continue
            fig, ax = plots.new_figure(figsize=(5.6, 3.4))
            plots.plot_speedup(speedups, model, ax=ax, unit="workers")
            ax.set_title(f"{model}: measured speedup and eq. 3.7\n({label})", fontsize=8)
            F[f"fig3_{FIGURE_NUMBERS[model][1]}_speedup_{model.lower()}_measured"] = fig
        eff = sp_meas[sp_meas["gpus"] > 1].merge(t34m.rename(columns={"mean": "lif"}), on=["model", "gpus"],
                                                 suffixes=("", "_l"))
        eff["efficiency"] = eff["speedup"] / eff["gpus"]
        rho = float(eff[["lif", "efficiency"]].corr(method="spearman").iloc[0, 1]) if len(eff) > 2 else float("nan")
        q["lif_rho"] = (rho, len(eff))
        q["best_speedup"] = {m: float(v) for m, v in sp_meas.groupby("model")["speedup"].max().items()}
        q["speedup_table"] = sp_meas
        cmp = sp_pred[sp_pred["gpus"] > 1].merge(sp_meas[["model", "gpus", "speedup"]], on=["model", "gpus"],
                                                 suffixes=("", "_measured"))
        cmp["rel_err"] = (cmp["speedup"] / cmp["speedup_measured"] - 1).abs()
        for variant, g in cmp.groupby("variant"):
            q[f"eq37_{variant}"] = {"max": float(g["rel_err"].max()), "n": len(g)}

    # §5 Figs. 3.8-3.13 and overlap
    if measured is not None:
        for (model, g), num in BREAKDOWN_FIGURES.items():
            if not ((measured["model"] == model) & (measured["workers"] == g)).any():
                continue
            fig, ax = plots.new_figure(figsize=(5.8, 3.4))
            plots.plot_breakdown(measured, model, g, ax=ax)
            ax.set_title(f"{model}, {g} workers ({label}, {p.measured_mode})", fontsize=8)
            F[f"fig3_{num}_breakdown_{model.lower()}_{g}w"] = fig
        overlap = ph.overlap_vs_phased(measured_all)
        if overlap is not None:
            T["overlap_vs_phased"] = overlap.reset_index()
            V["overlap_vs_phased"] = (overlap * [1e3, 1e3, 1]).round(3).rename(
                columns={"overlapped": "overlapped t_iter (ms)", "phased": "phased t_iter (ms)",
                         "overlapped_over_phased": "overlapped / phased"})
            m = overlap.reset_index()
            m = m[m["workers"] > 1]
            q["overlap"] = {(r.model, int(r.workers)): float(r.overlapped_over_phased) for r in m.itertuples()}

    # §6 Table 3.5
    table3_5 = t35.pivot_table(index=["model", "framework"], columns=["source", "quantity"], values="mean", sort=False)
    table3_5.columns = [f"{src}_{qq}" for src, qq in table3_5.columns]
    T["table3_5_published"] = table3_5.reset_index()
    if multi:
        ep = ph.epoch_frame(measured, n_train=p.n_train)
        try:
            t35m = fit_lif_regression(ep, time="epoch_time", workers="workers", lif="lif", by=["model", "framework"])
        except ValueError as exc:  # e.g. LIF constant within a worker count: the fit is not identifiable
            res.notes.append(f"Table 3.5 cannot be refitted on this data: {exc}")
        else:
            T["table3_5_measured"] = t35m
            q["lif_r2"] = {m: float(v) for m, v in t35m.set_index("model")["r2"].items()}

    # §7 do the numbers add up
    T["table3_2_sum_check"] = sum_check_3_2(t32)
    consistency = published_consistency(t32, t34, t35)
    T["consistency_published"] = consistency
    V["consistency_published"] = consistency.groupby(["check", "verdict"]).size().rename("cells").to_frame()
    for check, share in consistency.groupby("check")["verdict"].agg(lambda v: (v == "consistent").mean()).items():
        q[f"published: {check}"] = float(share)
    if measured is not None:
        sum_m = ph.phase_remainder(measured)
        T["sum_check_measured"] = sum_m
        if multi:
            q["remainder_share"] = float(sum_m["remainder_share"].max())

    # §8 claims
    T["claims_ch3"] = judge_all("3", p.measured_csv or "published tables only", CLAIMS, q)
    from .readings import ch3_readings

    res.readings = ch3_readings(res)
    return res
