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

from ..report.claims import Claim, fmt, judge_all, worst
from ..report.uncertainty import B
from ..report.tables import format_mean_std
from ..model.phases import _require, phase_wide
from ..schema import CH3_COLUMNS, CH3_MODELS, PHASES
from .result import (ChapterResult, ParameterError, ParamsBase, at_least, checked_params, existing_file,
                     existing_files, grid, make_params, one_of, output_folder, show_path)

__all__ = ["Params", "check_params", "analyse", "CLAIMS", "FIGURE_NUMBERS", "BREAKDOWN_FIGURES", "table3_2_display",
           "sum_check_3_2", "published_consistency", "published_quantities", "measured_quantities", "framework_ranking",
           "framework_quantities", "framework_setup", "FRAMEWORK_CSVS"]

#: model → (number of its phase figure, number of its speedup figure)
FIGURE_NUMBERS = {"CNN": (2, 5), "MLP": (3, 6), "Autoencoder": (4, 7)}
#: (model, workers) → number of its breakdown figure
BREAKDOWN_FIGURES = {("CNN", 2): 8, ("MLP", 2): 9, ("Autoencoder", 2): 10, ("CNN", 3): 11, ("MLP", 3): 12,
                     ("Autoencoder", 3): 13}


#: forms of eq. 3.7 (:data:`perfkit.model.equations.VARIANTS`)
VARIANTS = ("thesis", "paper")
#: modes of a ``perfkit collect ch3`` file
MODES = ("phased", "overlapped")
#: the other frameworks' measured files shown beside PyTorch's (``perfkit collect ch3 --framework ...``)
FRAMEWORK_CSVS = tuple(f"data/measured/{fw}-cpu/ch3_phases.csv" for fw in ("tensorflow", "mxnet", "chainer", "jax"))


@dataclass(frozen=True)
class Params(ParamsBase):
    """Parameters of Chapter 3 (the notebook's ``parameters`` cell); :data:`Params.CHECKS` are their rules."""

    quick: bool = False  # accepted for symmetry with the other chapters: every section is fast
    speedup_variants: tuple = ("thesis", "paper")  # forms of eq. 3.7 to evaluate
    measured_csv: str = "data/measured/pytorch-cpu/ch3_phases.csv"  # perfkit collect ch3 output; "" = published only
    measured_mode: str = "phased"  # phased (explicit all-reduce, separates t_c) or overlapped (DDP)
    framework_csvs: tuple = FRAMEWORK_CSVS  # more frameworks' ch3 files, shown beside measured_csv; () for one
    n_train: int = 60000  # training images per epoch (MNIST) for epoch times and speedup
    figures_dir: str = ""  # folder for figures and tables (ChapterResult.save); "" means figures/

    #: the rule of each parameter (``quick`` needs only be a bool)
    CHECKS = {
        "speedup_variants": grid(one_of(*VARIANTS), f"forms of eq. 3.7 from {', '.join(map(repr, VARIANTS))}",
                                 distinct=True),
        "measured_csv": existing_file("a `perfkit collect ch3` output", empty='"" for the published tables only'),
        "measured_mode": one_of(*MODES),
        "framework_csvs": existing_files("`perfkit collect ch3`"),
        "n_train": at_least(1),
        "figures_dir": output_folder("figures/"),
    }


def check_params(**params) -> Params:
    """The checked :class:`Params` of Chapter 3, or one :class:`~perfkit.chapters.result.ParameterError`.

    Applies :data:`Params.CHECKS` (names, types, values; :func:`~perfkit.chapters.result.make_params`),
    then reads ``measured_csv`` (unless ``""``): it must have the Chapter 3 columns and rows of
    ``measured_mode``; so must every file of ``framework_csvs``. Nothing is computed.
    """
    p = make_params(Params, params)
    if p.measured_csv:
        _check_ch3_file("measured_csv", p.measured_csv, p.measured_mode)
    for item in p.framework_csvs:
        _check_ch3_file("framework_csvs", item, p.measured_mode)
    return p


def _check_ch3_file(name: str, value: str, mode: str) -> None:
    """One :class:`ParameterError` naming ``name`` unless ``value`` is a readable ch3 file with ``mode`` rows."""
    import pandas as pd

    from ..schema import resolve

    path = resolve(value)
    try:
        df = pd.read_csv(path)
    except ValueError as exc:  # not CSV, empty, undecodable
        raise ParameterError(f"{name}: {show_path(path)} cannot be read as CSV ({exc}); expected a "
                             "`perfkit collect ch3` output") from None
    missing = [c for c in CH3_COLUMNS if c not in df.columns]
    if missing:
        raise ParameterError(f"{name}: {show_path(path)} has no column {missing[0]!r}; expected a "
                             f"`perfkit collect ch3` output (columns {', '.join(CH3_COLUMNS)})")
    ok = df[df["status"] == "ok"] if "status" in df.columns else df
    modes = sorted(set(ok["mode"])) if "mode" in ok.columns else (["phased"] if len(ok) else [])
    if mode not in modes:
        raise ParameterError(f"measured_mode: {show_path(path)} has no usable {mode!r} rows "
                             f"(status ok); expected one of its modes {modes}")


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
_B = f"{B} bootstrap resamples"
#: where the resamples of each kind of quantity come from (the ledger's ``resampling`` column)
SOURCES = {
    "iterations": f"{_B} of the iterations of each run",
    "cells": f"{_B} of the iterations of each run and of the (model, workers) cells",
    "rows": f"{_B} of the rows (timed iterations) of each model's regression",
    "ols": f"{B} draws from the OLS fit's normal approximation (coefficient ± standard error)",
    "printed": f"printed numbers, each drawn {B} times uniformly within ±½ unit of its last digit",
    "exact": "none: printed numbers compared beyond their rounding (exact)",
}
_NO_MULTI = "no multi-worker measurements given"
_NO_FIT = "the regression is not identifiable on this data"
_NO_FWS = "cannot be tested: needs measured runs of TensorFlow, MXNet and Chainer (framework_csvs)"
#: what §3.4.2 and §3.5 rank: these frameworks scale better than TensorFlow
BETTER_THAN_TF = ("MXNet", "Chainer")


def _cell(c) -> str:
    """``("CNN", 2)`` → ``"CNN G=2"``; other tuples joined with ``/``."""
    if not isinstance(c, tuple):
        return str(c)
    if len(c) == 2 and isinstance(c[1], (int, np.integer)):
        return f"{c[0]} G={c[1]}"
    return "/".join(map(str, c))


def _cells_text(cells, digits: int = 3, scale: float = 1.0, unit: str = "") -> str:
    """``"CNN G=2: 0.96 [0.94, 0.98]; ..."``: every cell's estimate and interval."""
    return "; ".join(f"{_cell(c)}: {e.map(lambda x: scale * x).text(digits)}{unit}" for c, e in cells.items())


def _framework_key(label: str) -> str:
    """``"MXNet (gpu, measured)"`` → ``"mxnet"``."""
    return str(label).split(" (")[0].strip().lower()


def framework_ranking(speedups, better=BETTER_THAN_TF, worse: str = "TensorFlow"):
    """Per resample, the smallest margin by which a ``better`` framework's speedup exceeds ``worse``'s, over models.

    ``speedups`` maps a framework label to ``{model: Evidence}`` (the measured speedup
    on the largest worker count). Returns None when ``worse`` or every ``better``
    framework is missing, or when they share no model.
    """
    from ..report.uncertainty import Evidence

    by = {_framework_key(fw): cells for fw, cells in speedups.items()}
    ref = by.get(worse.lower())
    others = [by[b.lower()] for b in better if b.lower() in by]
    if ref is None or not others:
        return None
    diffs = [Evidence.combine(lambda a, axis: a[0] - a[1], [o[m], ref[m]]) for o in others for m in o if m in ref]
    return Evidence.combine(np.min, diffs) if diffs else None


def _ranking_text(q) -> str:
    sp = q["framework_speedup"]
    return "; ".join(f"{fw}: " + ", ".join(f"{m} {e.text(3)}" for m, e in cells.items()) for fw, cells in sp.items())


def _published_cells(values: dict):
    """``{cell: Evidence}`` of printed ``values`` (``{cell: number}``), drawn within their rounding."""
    from ..report.uncertainty import Evidence, rounding_draws

    keys = list(values)
    draws = rounding_draws([values[k] for k in keys])
    return {k: Evidence.from_samples(values[k], draws[:, i], SOURCES["printed"]) for i, k in enumerate(keys)}


def published_quantities(t32, t33, t34, t35, variants=VARIANTS) -> dict:
    """The Chapter 3 claims about the thesis's own tables, as ``{cell: Evidence}`` per claim.

    * ``published_lif``: every LIF of Table 3.4 (thesis and paper), drawn within its rounding;
    * ``published_t33_growth``: t_comm(3 GPUs) − t_comm(2 GPUs) of Table 3.3 per model and framework;
    * ``published_eq37_rank``: eq. 3.7 on Tables 3.2 + 3.3, speedup of MXNet/Chainer minus TensorFlow's per
      (model, GPUs, form, framework);
    * ``published_t35_vs_paper``: |thesis − paper| of each Table 3.5 coefficient beyond the rounding of both (exact);
    * ``published_sum_of_phases``: |t_iter − Σ phases| of each Table 3.2 cell beyond the rounding of its terms
      (exact);
    * ``published_chainer_md``: how far Chainer's t_md minus MXNet's or TensorFlow's is from the text's 0.3 s.
    """
    from ..model.equations import speedup_pipelined
    from ..report.uncertainty import SEED, Evidence, half_unit, rounding_draws

    out = {}
    out["published_lif"] = _published_cells({(r.source, r.model, r.framework, int(r.gpus)): float(r.mean)
                                             for r in t34.itertuples()})
    tc = t33.pivot_table(index=["model", "framework"], columns="gpus", values="mean", sort=False)
    draws = rounding_draws(tc[[2, 3]].to_numpy().ravel()).reshape(-1, len(tc), 2)
    out["published_t33_growth"] = {
        (m, fw): Evidence.from_samples(tc.loc[(m, fw), 3] - tc.loc[(m, fw), 2], draws[:, i, 1] - draws[:, i, 0],
                                       SOURCES["printed"]) for i, (m, fw) in enumerate(tc.index)}
    # eq. 3.7 on the printed phases and t_comm, every number drawn within its rounding
    wide = phase_wide(t32)
    need = ["t_io", "t_h2d", "t_md", "t_f", "t_b", "t_u"]
    ph_draws = rounding_draws(wide[need].to_numpy().ravel()).reshape(-1, len(wide), len(need))
    tc_draws = rounding_draws(tc[[2, 3]].to_numpy().ravel(), seed=[SEED, 1]).reshape(-1, len(tc), 2)
    speed = {}
    for i, (model, fw) in enumerate(wide.index):
        if (model, fw) not in tc.index:
            continue
        j = list(tc.index).index((model, fw))
        point = dict(zip(need, wide.loc[(model, fw), need]))
        drawn = {k: ph_draws[:, i, n] for n, k in enumerate(need)}
        for gi, g in enumerate((2, 3)):
            for variant in variants:
                est = speedup_pipelined(g, point["t_io"], point["t_h2d"], point["t_f"], point["t_b"], point["t_u"],
                                        tc.loc[(model, fw), g], t_md=point["t_md"], variant=variant)
                smp = speedup_pipelined(g, drawn["t_io"], drawn["t_h2d"], drawn["t_f"], drawn["t_b"], drawn["t_u"],
                                        tc_draws[:, j, gi], t_md=drawn["t_md"], variant=variant)
                speed[(model, g, variant, fw)] = Evidence.from_samples(est, smp, SOURCES["printed"])
    rank = {}
    for (model, g, variant, fw), e in speed.items():
        if fw in BETTER_THAN_TF and (model, g, variant, "TensorFlow") in speed:
            tf = speed[(model, g, variant, "TensorFlow")]
            rank[(model, g, variant, fw)] = Evidence.combine(lambda a, axis: a[0] - a[1], [e, tf])
    out["published_eq37_rank"] = rank
    out["published_eq37_speedups"] = speed
    if {"thesis", "paper_iucc2021"} <= set(t35["source"]):
        key = ["model", "framework", "quantity"]
        th = t35[t35["source"] == "thesis"].set_index(key)["mean"]
        pa = t35[t35["source"] == "paper_iucc2021"].set_index(key)["mean"]
        out["published_t35_vs_paper"] = {
            idx: Evidence.exact(abs(th[idx] - pa[idx]) - half_unit(th[idx]) - half_unit(pa[idx]), SOURCES["exact"])
            for idx in th.index.intersection(pa.index) if idx[2] != "r2"}
        out["published_t35_values"] = {idx: (float(th[idx]), float(pa[idx])) for idx in th.index.intersection(pa.index)}
    parts = ["t_io", "t_h2d", "t_md", "t_f", "t_b", "t_u"]
    t32w = phase_wide(t32)
    out["published_sum_of_phases"] = {
        (m, fw): Evidence.exact(abs(r["t_iter"] - r[parts].sum()) - half_unit(r["t_iter"])
                                - sum(half_unit(r[c]) for c in parts), SOURCES["exact"])
        for (m, fw), r in t32w.iterrows()}
    md = t32[t32["phase"] == "t_md"].set_index(["model", "framework"])["mean"]
    md_cells = _published_cells({k: float(v) for k, v in md.items()})
    out["published_chainer_md"] = {
        (m, fw): Evidence.combine(lambda a, axis: np.abs(a[0] - a[1] - 0.3),
                                  [md_cells[(m, "Chainer")], md_cells[(m, fw)]])
        for m, fw in md.index if fw != "Chainer" and (m, "Chainer") in md.index}
    return out


def measured_quantities(measured_all, mode: str = "phased", n_train: int = 60000, variants=VARIANTS) -> dict:
    """The Chapter 3 claims on measured data, as ``{cell: Evidence}`` per claim (``{}`` without multi-worker runs).

    Every quantity is a mean over the iterations of a run, with its bootstrap over
    iterations (:func:`perfkit.model.phases.bootstrap_cells`):

    * ``t_c_ratio``: t_c on 3 workers over t_c on 2, per model;
    * ``speedup_cells`` and ``speedup``: measured speedup per (model, workers), and its best over 2-3 workers;
    * ``eq37_<variant>``: |eq. 3.7's prediction / measured speedup − 1| per (model, workers);
    * ``lif_rho``: Spearman's ρ of LIF with speedup/G over the (model, workers) cells (the cells are
      resampled too), ``lif_cells`` their number;
    * ``overlap``: overlapped over phased iteration time per (model, workers), when both modes were timed.
    """
    from ..model.equations import speedup_pipelined
    from ..model.phases import bootstrap_cells
    from ..report.uncertainty import SEED, Evidence, bootstrap_indices, spearman

    cells = bootstrap_cells(measured_all, n_train=n_train)
    src = SOURCES["iterations"]
    fws = sorted({k[1] for k in cells if k[0] == mode})
    if not fws:
        return {}
    run = {(k[2], k[3]): v for k, v in cells.items() if k[0] == mode and k[1] == fws[0]}
    order = {m: i for i, m in enumerate(CH3_MODELS)}
    models = sorted({m for m, _ in run}, key=lambda m: (order.get(m, len(order)), m))
    q: dict = {}

    def ev(num, den):
        return Evidence.from_samples(num[0] / den[0], num[1] / den[1], src)

    ratio = {m: ev(run[(m, 3)]["t_c"], run[(m, 2)]["t_c"]) for m in models if (m, 2) in run and (m, 3) in run}
    ratio = {m: e for m, e in ratio.items() if e.finite}
    if ratio:
        q["t_c_ratio"] = ratio
    sp = {(m, g): ev(run[(m, 1)]["epoch_time"], run[(m, g)]["epoch_time"]) for m in models
          for g in sorted(g for mm, g in run if mm == m and g > 1) if (m, 1) in run}
    sp = {c: e for c, e in sp.items() if e.finite}
    if not sp:
        return q
    q["speedup_cells"] = sp
    q["speedup"] = {m: Evidence.combine(np.max, [e for (mm, _), e in sp.items() if mm == m])
                    for m in models if any(mm == m for mm, _ in sp)}
    need = ("t_io", "t_h2d", "t_f", "t_b", "t_u")
    for variant in variants:
        errs = {}
        for (m, g), e in sp.items():
            one, multi = run[(m, 1)], run[(m, g)]
            pred = [speedup_pipelined(g, *(one[k][i] for k in need), multi["t_c"][i], t_md=one["t_md"][i],
                                      variant=variant) for i in (0, 1)]
            errs[(m, g)] = Evidence.from_samples(abs(pred[0] / e.estimate - 1), np.abs(pred[1] / e.samples - 1), src)
        q[f"eq37_{variant}"] = {c: e for c, e in errs.items() if e.finite}
    lif_cells = [c for c in sp if np.isfinite(run[c]["lif"][0])]
    if len(lif_cells) > 2:
        lif = np.column_stack([run[c]["lif"][1] for c in lif_cells])
        eff = np.column_stack([sp[c].samples / c[1] for c in lif_cells])
        est = float(spearman([run[c]["lif"][0] for c in lif_cells], [sp[c].estimate / c[1] for c in lif_cells]))
        pick = bootstrap_indices(len(lif_cells), len(lif), seed=[SEED, 99])
        rows = np.arange(len(lif))[:, None]
        q["lif_rho"] = Evidence.from_samples(est, spearman(lif[rows, pick], eff[rows, pick]), SOURCES["cells"])
        q["lif_cells"] = len(lif_cells)
    ov = {}
    for (md, fw, m, g), v in cells.items():  # both modes timed: overlapped over phased iteration time
        if md == "overlapped" and g > 1 and ("phased", fw, m, g) in cells:
            ov[(m, g)] = ev(v["t_iter"], cells[("phased", fw, m, g)]["t_iter"])
    if ov:
        q["overlap"] = dict(sorted(ov.items(), key=lambda kv: (order.get(kv[0][0], len(order)), kv[0][1])))
    return q


def regression_quantities(epochs, fitted) -> dict:
    """``lif_r2`` (bootstrap over rows) and ``lif_beta2`` (the fit's standard error) per model of eq. 3.9.

    ``epochs`` is :func:`perfkit.model.phases.epoch_frame` of the measured runs, ``fitted``
    the Table 3.5 layout of :func:`perfkit.model.lif.fit_lif_regression` on it (with ``se_beta2``).
    R² is refitted on each resample of a model's rows by least squares (three
    coefficients, cheap); β2's draws come from its normal approximation.
    """
    from ..report.uncertainty import SEED, Evidence, bootstrap_indices

    r2, beta2 = {}, {}
    for k, r in enumerate(fitted.itertuples()):
        sub = epochs[epochs["model"] == r.model]
        X = np.column_stack([np.ones(len(sub)), sub["workers"].to_numpy(float), sub["lif"].to_numpy(float)])
        y = sub["epoch_time"].to_numpy(float)
        idx = bootstrap_indices(len(y), B, seed=[SEED, 7, k])
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
    ``cells``, when given, is its :func:`perfkit.model.phases.bootstrap_cells` (computed otherwise).
    """
    from ..model.phases import bootstrap_cells
    from ..report.uncertainty import Evidence

    cells = bootstrap_cells(measured_split, n_train=n_train) if cells is None else cells
    out: dict = {}
    for (mode, fw, m, g), v in cells.items():
        base = cells.get((mode, fw, m, 1))
        top = max(gg for (mm, ff, mo, gg) in cells if (mm, ff, mo) == (mode, fw, m))
        if g == top and g > 1 and base is not None:
            e = Evidence.from_samples(base["epoch_time"][0] / v["epoch_time"][0],
                                      base["epoch_time"][1] / v["epoch_time"][1], SOURCES["iterations"])
            if e.finite:
                out.setdefault(fw, {})[m] = e
    return out


def _contrast(cells, column, subject, others, models, workers, op, mode="phased") -> dict:
    """``{(model, G, other): Evidence}`` of ``op(column of subject, column of other)`` per resample.

    ``cells`` is :func:`perfkit.model.phases.bootstrap_cells` output; frameworks are
    matched by name (``"MXNet"`` finds ``"MXNet (cpu, measured)"``). Cells missing
    on either side are left out.
    """
    from ..report.uncertainty import Evidence

    by = {}
    for (md, fw, m, g), v in cells.items():
        if md == mode:
            by[(_framework_key(fw), m, g)] = v
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


def framework_setup(paths):
    """One row per measured file: framework, versions, collective and the segments of each mode.

    Read from the provenance beside each file (what the workers reported in ``hello``,
    on their largest worker count); a field the adapter did not report reads
    ``"not recorded"``.
    """
    import json

    import pandas as pd

    from ..data.measured import FRAMEWORK_NAMES
    from ..measure.provenance import provenance_path

    rows = []
    for path in paths:
        try:
            prov = json.loads(provenance_path(path).read_text())
        except (OSError, ValueError):
            prov = {}
        adapters = prov.get("adapters") or {}
        hello = adapters[max(adapters, key=int)] if adapters else {}
        fw = hello.get("framework") or (prov.get("identity") or {}).get("framework", "?")
        seg = hello.get("segments") or {}
        versions = hello.get("versions") or {}
        rows.append({"framework": FRAMEWORK_NAMES.get(fw, fw), "file": show_path(path),
                     "versions": ", ".join(f"{k} {v}" for k, v in versions.items() if v) or "not recorded",
                     "aggregation": hello.get("collective") or hello.get("backend") or "not recorded",
                     "phased": " | ".join(seg.get("phased", [])) or "not recorded",
                     "overlapped (native step)": " | ".join(seg.get("overlapped", [])) or "not recorded"})
    return pd.DataFrame(rows)


def framework_quantities(measured_split, n_train: int = 60000, mode: str = "phased") -> dict:
    """The thesis's framework comparisons on measured runs of several frameworks (one label per framework).

    * ``framework_speedup``: :func:`framework_speedups`;
    * ``fw_mxnet_efficiency``: MXNet's speedup / G on each model's most workers (``{(model, G): Evidence}``);
    * ``fw_mxnet_tc``: t_c of TensorFlow and Chainer over MXNet's, per model and G = 2, 3;
    * ``fw_tf_lif``: TensorFlow's LIF minus MXNet's and Chainer's, per model and G = 2, 3;
    * ``fw_tf_cnn_forward``: TensorFlow's CNN t_f over MXNet's and Chainer's, one worker;
    * ``fw_mxnet_backward``: MXNet's t_b over TensorFlow's and Chainer's, per model, one worker.

    Each has its bootstrap over iterations (the runs are independent, so resample i of one
    run is paired with resample i of another).
    """
    from ..model.phases import bootstrap_cells
    from ..report.uncertainty import Evidence

    cells = bootstrap_cells(measured_split, n_train=n_train)
    out: dict = {}
    speed = framework_speedups(measured_split, n_train=n_train, cells=cells)
    if speed:
        out["framework_speedup"] = speed
    mx = {k: v for k, v in cells.items() if k[0] == mode and _framework_key(k[1]) == "mxnet"}
    eff = {}
    for m in CH3_MODELS:
        gs = sorted(g for (_, _, mm, g) in mx if mm == m)
        if len(gs) > 1 and gs[0] == 1:
            one, top = mx[(mode, _fw_label(mx, m), m, 1)], mx[(mode, _fw_label(mx, m), m, gs[-1])]
            e = Evidence.from_samples(one["epoch_time"][0] / top["epoch_time"][0] / gs[-1],
                                      one["epoch_time"][1] / top["epoch_time"][1] / gs[-1], SOURCES["iterations"])
            if e.finite:
                eff[(m, gs[-1])] = e
    if eff:
        out["fw_mxnet_efficiency"] = eff
    ratio, diff = (lambda a, b: a / b), (lambda a, b: a - b)
    found = {
        "fw_mxnet_tc": _contrast(cells, "t_c", "MXNet", ("TensorFlow", "Chainer"), CH3_MODELS, (2, 3),
                                 lambda a, b: b / a, mode),
        "fw_tf_lif": _contrast(cells, "lif", "TensorFlow", ("MXNet", "Chainer"), CH3_MODELS, (2, 3), diff, mode),
        "fw_tf_cnn_forward": _contrast(cells, "t_f", "TensorFlow", ("MXNet", "Chainer"), ("CNN",), (1,), ratio,
                                       mode),
        "fw_mxnet_backward": _contrast(cells, "t_b", "MXNet", ("TensorFlow", "Chainer"), CH3_MODELS, (1,), ratio,
                                       mode),
    }
    out.update({k: v for k, v in found.items() if v})
    return out


def _fw_label(cells, model) -> str:
    return next(fw for (_, fw, m, _) in cells if m == model)


def _published(key, claim, thesis, rule, side, threshold, evidence, data):
    from ..report.claims import worst

    return Claim(key, claim, thesis, rule, needs=(key,), quantity=lambda q: worst(q[key], side), side=side,
                 threshold=threshold, evidence=evidence, data=data)


def _off(cells, side, threshold, label=_cell, digits: int = 3) -> list[str]:
    """The cells whose estimate is on the wrong side of ``threshold``."""
    bad = [(c, e) for c, e in cells.items() if (e.estimate >= threshold if side == "<" else e.estimate <= threshold)]
    return [f"{label(c)} {fmt(e.estimate, digits)}" for c, e in bad]


def _t35_text(q):
    cells, vals = q["published_t35_vs_paper"], q.get("published_t35_values", {})
    bad = [c for c, e in cells.items() if e.estimate > 0]
    shown = "; ".join(f"{c[0]}/{c[1]} {c[2]}: {vals[c][0]:g} vs {vals[c][1]:g}" if c in vals else _cell(c)
                      for c in bad[:4])
    more = ", …" if len(bad) > 4 else ""
    return f"{len(bad)} of {len(cells)} coefficients differ beyond rounding" + (f" ({shown}{more})" if bad else "")


def _rank_text(cells) -> str:
    """Per (model, framework): in how many (GPUs, form) cells eq. 3.7 puts TensorFlow ahead."""
    groups: dict = {}
    for (model, _, _, fw), e in cells.items():
        groups.setdefault((fw, model), []).append(e.estimate <= 0)
    parts = [f"{m} vs {fw} in {sum(v)} of {len(v)}" for (fw, m), v in groups.items() if any(v)]
    return ("TensorFlow ahead (2–3 GPUs × thesis/paper form): " + "; ".join(parts)) if parts else \
        "TensorFlow behind in every cell"


_T32 = "thesis Table 3.2 (data/thesis/table3_2.csv)"
_T33 = "thesis Table 3.3 (data/thesis/table3_3.csv)"

#: The claims of Chapter 3 and their rules, in ledger order: measured claims, then claims about the published tables.
CLAIMS = (
    Claim("t_c_grows", "gradient aggregation time grows from 2 to 3 workers", "§3.4.2, Table 3.3",
          "t_c(3) / t_c(2) > 1 for every model (the smallest ratio)", needs=("t_c_ratio",),
          quantity=lambda q: worst(q["t_c_ratio"], ">"), side=">", threshold=1.0,
          evidence=lambda q: "t_c(3)/t_c(2): " + _cells_text(q["t_c_ratio"]), missing=_NO_MULTI),
    Claim("lif_vs_speedup", "higher LIF goes with lower speedup (strongly correlated)", "§3.4.3, §3.5",
          "Spearman ρ of LIF with speedup/G over the (model, G) cells <= −0.5", needs=("lif_rho",),
          quantity=lambda q: q["lif_rho"], side="<", threshold=-0.5,
          evidence=lambda q: f"ρ = {q['lif_rho'].text(2)} over {q.get('lif_cells', '?')} (model, G) cells",
          missing=_NO_MULTI),
    Claim("speedup", "more workers speed training up", "§3.4.2, Figures 3.5–3.7",
          "best speedup on 2 or 3 workers > 1 for every model (the smallest)", needs=("speedup",),
          quantity=lambda q: worst(q["speedup"], ">"), side=">", threshold=1.0,
          evidence=lambda q: "best speedup: " + _cells_text(q["speedup"]), missing=_NO_MULTI),
    *(Claim(f"eq37_{v}", f"eq. 3.7 ({v} form) predicts the measured speedup", "eq. 3.7",
            "relative error <= 20 % in every multi-worker cell (the largest)", needs=(f"eq37_{v}",),
            quantity=lambda q, v=v: worst(q[f"eq37_{v}"], "<"), side="<", threshold=0.2,
            evidence=lambda q, v=v: "relative error: " + _cells_text(q[f"eq37_{v}"], 2, 100, " %"),
            missing=_NO_MULTI) for v in VARIANTS),
    Claim("overlap", "overlapping gradient aggregation with backward shortens the iteration",
          "§3.2.4 (the overlap behind eq. 3.7's max), §3.4.2",
          "overlapped / phased iteration time < 1 in every multi-worker cell (the largest)", needs=("overlap",),
          quantity=lambda q: worst(q["overlap"], "<"), side="<", threshold=1.0,
          evidence=lambda q: "overlapped / phased: " + _cells_text(q["overlap"]),
          missing="needs both the phased and the overlapped mode"),
    Claim("lif_regression", "epoch time is well explained by workers and LIF (eq. 3.9)", "§3.4.3, Table 3.5",
          "R² >= 0.9 for every model (the smallest), as the published fits", needs=("lif_r2",),
          quantity=lambda q: worst(q["lif_r2"], ">"), side=">", threshold=0.9,
          evidence=lambda q: "R²: " + _cells_text(q["lif_r2"]), missing=_NO_FIT),
    Claim("lif_coefficient", "load imbalance lengthens the epoch (β2 > 0 in eq. 3.9)", "§3.4.3, Table 3.5",
          "β2 (seconds per unit of LIF) > 0 for every model (the smallest)", needs=("lif_beta2",),
          quantity=lambda q: worst(q["lif_beta2"], ">"), side=">", threshold=0.0,
          evidence=lambda q: "β2: " + _cells_text(q["lif_beta2"]), missing=_NO_FIT),
    Claim("framework_ranking", "MXNet and Chainer scale better than TensorFlow", "§3.4.2, §3.5",
          "measured speedup on the most workers: MXNet's and Chainer's minus TensorFlow's > 0 in every model "
          "(the smallest margin)", needs=("framework_speedup",),
          quantity=lambda q: framework_ranking(q["framework_speedup"]), side=">", threshold=0.0, evidence=_ranking_text,
          missing=_NO_FWS),
    Claim("fw_mxnet_linear", "MXNet scales linearly from one to three workers", "§3.4.2, Figures 3.5–3.7",
          "MXNet's speedup / G on each model's most workers >= 0.9 (the smallest)", needs=("fw_mxnet_efficiency",),
          quantity=lambda q: worst(q["fw_mxnet_efficiency"], ">"), side=">", threshold=0.9,
          evidence=lambda q: "speedup / G: " + _cells_text(q["fw_mxnet_efficiency"]), missing=_NO_FWS),
    Claim("fw_mxnet_aggregation", "MXNet aggregates gradients faster than TensorFlow and Chainer",
          "§3.4.2, Figures 3.8–3.13", "t_c of TensorFlow and of Chainer over MXNet's > 1 for every model on 2 and 3 "
          "workers (the smallest ratio; phased mode: each framework's explicit collective)", needs=("fw_mxnet_tc",),
          quantity=lambda q: worst(q["fw_mxnet_tc"], ">"), side=">", threshold=1.0,
          evidence=lambda q: "t_c(other) / t_c(MXNet): " + _cells_text(q["fw_mxnet_tc"]), missing=_NO_FWS),
    Claim("fw_tf_lif", "TensorFlow's poor scaling goes with the highest load imbalance", "§3.4.3, Table 3.4",
          "LIF of TensorFlow minus MXNet's and Chainer's > 0 for every model on 2 and 3 workers (the smallest)",
          needs=("fw_tf_lif",), quantity=lambda q: worst(q["fw_tf_lif"], ">"), side=">", threshold=0.0,
          evidence=lambda q: "LIF(TF) − LIF(other): " + _cells_text(q["fw_tf_lif"]), missing=_NO_FWS),
    Claim("fw_tf_cnn_forward", "TensorFlow's CNN forward pass is slower than MXNet's and Chainer's",
          "§3.4.1, Table 3.2, Figure 3.2", "t_f(TensorFlow) / t_f(other) > 1 for the CNN on one worker (the smallest)",
          needs=("fw_tf_cnn_forward",), quantity=lambda q: worst(q["fw_tf_cnn_forward"], ">"), side=">",
          threshold=1.0, evidence=lambda q: "t_f ratio: " + _cells_text(q["fw_tf_cnn_forward"]), missing=_NO_FWS),
    Claim("fw_mxnet_backward", "MXNet's backward pass is slower than TensorFlow's and Chainer's",
          "§3.4.1, Table 3.2", "t_b(MXNet) / t_b(other) > 1 for every model on one worker (the smallest)",
          needs=("fw_mxnet_backward",), quantity=lambda q: worst(q["fw_mxnet_backward"], ">"), side=">",
          threshold=1.0, evidence=lambda q: "t_b ratio: " + _cells_text(q["fw_mxnet_backward"]), missing=_NO_FWS),
    _published("published_lif", "published: LIF >= 1 in every cell (eq. 3.8)", "§3.4.3, Table 3.4",
               "smallest printed LIF > 1", ">", 1.0,
               lambda q: f"smallest LIF {fmt(min(e.estimate for e in q['published_lif'].values()))} over "
                         f"{len(q['published_lif'])} cells (thesis and paper)",
               "thesis Table 3.4, paper Table IV (data/thesis/table3_4.csv)"),
    _published("published_t35_vs_paper", "published: Table 3.5 = paper eqs. 10-18",
               "Table 3.5, Appendix A eqs. 10–18",
               "largest |thesis − paper| beyond the rounding of both < 0", "<", 0.0, _t35_text,
               "thesis Table 3.5, paper eqs. 10–18 (data/thesis/table3_5.csv)"),
    _published("published_sum_of_phases", "published: t_iter = sum of phases (Table 3.2, eq. 3.3)",
               "Table 3.2, eqs. 3.1/3.3", "largest |t_iter − Σ phases| beyond the rounding of its terms < 0", "<",
               0.0,
               lambda q: "cells that do not add up: "
                         + (", ".join(_off(q["published_sum_of_phases"], "<", 0.0, digits=2)) or "none")
                         + " (excess in s)", _T32),
    _published("published_chainer_md", "published: text: Chainer's t_md is 0.3 s longer than MXNet's and TensorFlow's",
               "§3.4.1, Table 3.2", "largest |Chainer − other − 0.3 s| < 0.05 s", "<", 0.05,
               lambda q: "|difference − 0.3 s|: " + _cells_text(q["published_chainer_md"], 4), _T32),
    _published("published_t33_growth",
               "published: Table 3.3's aggregation time grows from 2 to 3 GPUs, as the text says",
               "§3.4.2, Table 3.3", "smallest t_comm(3) − t_comm(2) > 0 (in s)", ">", 0.0,
               lambda q: "falls from 2 to 3 GPUs: " + (", ".join(_off(q["published_t33_growth"], ">", 0.0)) or "none")
                         + " s", _T33),
    _published("published_eq37_rank", "published: eq. 3.7 on Tables 3.2 + 3.3 ranks MXNet and Chainer above "
               "TensorFlow, as the text says", "§3.4.2, §3.5, eq. 3.7",
               "smallest predicted speedup of MXNet or Chainer minus TensorFlow's, over models, 2–3 GPUs and both "
               "forms > 0", ">", 0.0,
               lambda q: _rank_text(q["published_eq37_rank"]),
               "thesis Tables 3.2, 3.3 (data/thesis/) through eq. 3.7"),
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

    measured = measured_all = label = None
    if p.measured_csv:
        mpath = resolve(p.measured_csv)
        measured_all = load_phases(mpath, mode=None)
        measured = measured_all[measured_all["mode"] == p.measured_mode].reset_index(drop=True)
        if measured.empty:
            raise ValueError(f"measured_mode: no {p.measured_mode!r} rows in {mpath}")
        label = measured["framework"].iloc[0]
        res.notes.append(f"measured: {mpath.name}, {len(measured)} rows ({p.measured_mode}), {label}; models "
                         f"{sorted(measured['model'].unique())}, workers {sorted(int(w) for w in measured['workers'].unique())}")
    # every framework side by side: the main file's, then framework_csvs (each row keeps its own framework)
    every_all = measured_all
    for item in p.framework_csvs:
        path = resolve(item)
        other = load_phases(path, mode=None, split_frameworks=True)
        res.notes.append(f"measured: {show_path(path)}, {int((other['mode'] == p.measured_mode).sum())} rows "
                         f"({p.measured_mode}), {', '.join(sorted(set(other['framework'])))}")
        every_all = other if every_all is None else pd.concat([every_all, other], ignore_index=True)
    every = None if every_all is None else every_all[every_all["mode"] == p.measured_mode].reset_index(drop=True)
    files = ([resolve(p.measured_csv)] if p.measured_csv else []) + [resolve(f) for f in p.framework_csvs]
    if files:
        T["framework_setup"] = framework_setup(files)
    multi = measured is not None and bool((measured["workers"] > 1).any())
    q["label"] = label
    frameworks = list(dict.fromkeys(every["framework"])) if every is not None else []
    q["frameworks"] = frameworks

    # §1 Table 3.2, Figs. 3.2-3.4
    T["table3_2"] = t32[["model", "framework", "phase", "mean", "std", "source", "table"]]
    V["table3_2"] = table3_2_display(t32)
    both32 = t32
    if every is not None:
        t32m = ph.measured_table3_2(every)
        T["table3_2_measured"], V["table3_2_measured"] = t32m, table3_2_display(t32m)
        both32 = pd.concat([t32, t32m], ignore_index=True)
    for model in CH3_MODELS:
        if model not in set(both32["model"]):
            continue
        fig, ax = plots.new_figure(figsize=(8.5, 3.6))
        plots.plot_phase_bars(both32, model, ax=ax)
        ax.set_yscale("log")
        ax.set_title(f"{model}: phase times on one worker (thesis Table 3.2 on GPUs, solid; ours measured on CPU, "
                     "hatched)", fontsize=9)
        F[f"fig3_{FIGURE_NUMBERS[model][0]}_phases_{model.lower()}"] = fig

    # §2 Table 3.3
    table3_3 = t33.pivot_table(index=["model", "framework"], columns="gpus", values="mean", sort=False)
    table3_3.columns = [f"t_comm_{g}gpus_s" for g in table3_3.columns]
    T["table3_3"] = table3_3.reset_index()
    every_multi = every is not None and bool((every["workers"] > 1).any())
    if every_multi:
        t33m = ph.measured_t_comm(every)
        T["table3_3_measured"] = t33m
        view = t33m.pivot_table(index=["model", "framework"], columns="gpus", values="mean", sort=False) * 1e3
        V["table3_3_measured"] = view.rename(columns=lambda g: f"t_c on {g} workers (ms)").round(3)
    if multi:
        tc = ph.measured_t_comm(measured).pivot_table(index="model", columns="gpus", values="mean")
        if {2, 3} <= set(tc.columns):
            q["t_c"] = {m: (float(tc.loc[m, 2]), float(tc.loc[m, 3])) for m in tc.index}

    # §3 Table 3.4
    table3_4 = t34.pivot_table(index=["framework", "model"], columns=["source", "gpus"], values="mean", sort=False)
    table3_4.columns = [f"{src}_{g}gpus" for src, g in table3_4.columns]
    T["table3_4"] = table3_4.reset_index()
    if every_multi:
        T["table3_4_measured"] = ph.measured_lif(every)

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
    if every_multi:
        sp_meas = ph.measured_speedup(every, n_train=p.n_train)
        sp_pred = ph.predicted_speedups(t32m, t33m, variants=p.speedup_variants)
        sp_pred = sp_pred[sp_pred["framework"].isin(frameworks)]
        speedups = pd.concat([sp_meas, sp_pred], ignore_index=True)
        T["speedup_measured"] = speedups
        V["speedup_measured"] = speedups.pivot_table(index=["model", "framework", "variant"], columns="gpus",
                                                     values="speedup", sort=False
                                                     ).rename(columns=lambda g: f"{g} workers").round(3)
        for model in CH3_MODELS:
            if model not in set(speedups["model"]):
                continue
            fig, ax = plots.new_figure(figsize=(6.8, 3.6))
            shown = speedups[(speedups["variant"] == "measured") | (speedups["framework"] == label)]
            plots.plot_speedup(shown, model, ax=ax, unit="workers")
            ax.set_title(f"{model}: measured speedup of every framework (dotted)"
                         + (f",\nand eq. 3.7 from {label.split(' (')[0]}'s phases" if label else ""), fontsize=8)
            F[f"fig3_{FIGURE_NUMBERS[model][1]}_speedup_{model.lower()}_measured"] = fig
    if multi:
        q["speedup_table"] = ph.measured_speedup(measured, n_train=p.n_train)
        # the claims' quantities, each with its bootstrap over iterations
        q.update(measured_quantities(measured_all, mode=p.measured_mode, n_train=p.n_train,
                                     variants=p.speedup_variants))
    if every_multi and len(frameworks) >= 2:
        q.update(framework_quantities(every, n_train=p.n_train))

    # §5 Figs. 3.8-3.13 and overlap
    if every is not None:
        for (model, g), num in BREAKDOWN_FIGURES.items():
            fws = [fw for fw in frameworks if ((every["framework"] == fw) & (every["model"] == model)
                                                & (every["workers"] == g)).any()]
            if not fws:
                continue
            fig, axes = plots.new_figure(1, len(fws), figsize=(2.3 * len(fws) + 1.6, 3.4), sharey=True,
                                         squeeze=False)
            for i, (fw, ax) in enumerate(zip(fws, axes[0])):
                plots.plot_breakdown(every[every["framework"] == fw], model, g, ax=ax, legend=i == len(fws) - 1)
                ax.set_title(fw.split(" (")[0], fontsize=8)
                if i:
                    ax.set_ylabel("")
            fig.suptitle(f"{model}, {g} workers: mean phase times per worker ({p.measured_mode})", fontsize=9)
            F[f"fig3_{num}_breakdown_{model.lower()}_{g}w"] = fig
        overlap = ph.overlap_vs_phased(every_all)
        if overlap is not None:
            T["overlap_vs_phased"] = overlap.reset_index()
            V["overlap_vs_phased"] = (overlap * [1e3, 1e3, 1]).round(3).rename(
                columns={"overlapped": "overlapped t_iter (ms)", "phased": "phased t_iter (ms)",
                         "overlapped_over_phased": "overlapped / phased"})

    # §6 Table 3.5
    table3_5 = t35.pivot_table(index=["model", "framework"], columns=["source", "quantity"], values="mean", sort=False)
    table3_5.columns = [f"{src}_{qq}" for src, qq in table3_5.columns]
    T["table3_5_published"] = table3_5.reset_index()
    if every_multi:
        ep = ph.epoch_frame(every, n_train=p.n_train)
        try:
            t35m = fit_lif_regression(ep, time="epoch_time", workers="workers", lif="lif", by=["model", "framework"])
        except ValueError as exc:  # e.g. LIF constant within a worker count: the fit is not identifiable
            res.notes.append(f"Table 3.5 cannot be refitted on this data: {exc}")
        else:
            T["table3_5_measured"] = t35m
            if multi:  # the claims are about the main framework's fit
                mine = t35m[t35m["framework"] == label].reset_index(drop=True)
                q.update(regression_quantities(ep[ep["framework"] == label], mine))

    # §7 do the numbers add up
    T["table3_2_sum_check"] = sum_check_3_2(t32)
    consistency = published_consistency(t32, t34, t35)
    T["consistency_published"] = consistency
    V["consistency_published"] = consistency.groupby(["check", "verdict"]).size().rename("cells").to_frame()
    q.update(published_quantities(t32, t33, t34, t35, variants=VARIANTS))
    if every is not None:
        sum_m = ph.phase_remainder(every)
        T["sum_check_measured"] = sum_m
        q["remainder_share"] = float(sum_m["remainder_share"].max())
        # a check of the harness, not a claim of the thesis: its phases add up to t_iter by construction
        res.notes.append(f"harness check: the measured phases add up to t_iter but for at most "
                         f"{100 * q['remainder_share']:.2f} % (largest mean remainder per model and worker count)")

    # §8 claims
    T["claims_ch3"] = judge_all("3", p.measured_csv or "published tables only", CLAIMS, q)
    from .readings import ch3_readings

    res.readings = ch3_readings(res)
    return res
