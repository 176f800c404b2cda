"""Chapter 4's tables, each a function of the results (:class:`~.results.Ch4Results`): the tidy table the
chapter writes as CSV and, where it helps, a view laid out for reading."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...data.thesis import framework_name, load_thesis_table
from ...report.claims import fmt
from ...report.tables import mean_std_columns
from ...schema import THESIS_EXTRINSIC
from .claims import CLAIMS, FRAMEWORK_KEYS, MACHINE_KEYS
from .params import SWEEP_COEFFICIENT_KINDS

__all__ = ["params_side_by_side", "params_view", "scaling_view", "dataset_view", "side_by_side", "table4_4",
           "scaling_tables", "baseline_tables", "lambda_sweep", "lambda_sweep_view", "epoch_view", "paired_view",
           "pooled_view", "claims_by_framework", "thesis_mape", "q_workers_by_machine",
           "q_workers_by_machine_view"]


def params_side_by_side(summary, table: str = "4.2", label: str = "ours"):
    """Our mean ± std per parameter (from ``RepeatedFit.summary()``) beside the thesis's table.

    Returns one row per (parameter, symbol) with ``ours_mean``, ``ours_std`` and
    ``<framework>_mean``/``_std`` for each framework of the thesis table.
    """
    rows = []
    for _, r in summary.iterrows():
        kind = r["kind"]
        col = r["column"] if kind != "constant" else "C"
        level = r["level"] if kind == "categorical" else ""
        param = THESIS_EXTRINSIC.get(col, col) if kind == "extrinsic" else col
        symbols = {"numeric": ["a", "p"], "categorical": ["a"], "extrinsic": ["q"], "constant": ["C"]}[kind]
        for sym in symbols:
            rows.append(dict(parameter=param, level=level or "", kind=kind, symbol=sym,
                             ours_mean=r[f"{sym}_mean"], ours_std=r[f"{sym}_std"]))
    ours = pd.DataFrame(rows)
    t = load_thesis_table(table, source="thesis").copy()
    t["level"] = t["level"].fillna("").astype(str)
    wide = t.pivot_table(index=["parameter", "level", "symbol"], columns="framework", values=["mean", "std"],
                         aggfunc="first")
    wide.columns = [f"{fw}_{stat}" for stat, fw in wide.columns]
    wide = wide[sorted(wide.columns, key=lambda c: (c.rsplit("_", 1)[0], c.endswith("std")))].reset_index()
    out = ours.merge(wide, on=["parameter", "level", "symbol"], how="left")
    out.insert(0, "table", f"Table {table}")
    out = out.rename(columns={"ours_mean": f"{label}_mean", "ours_std": f"{label}_std"})
    return out


def thesis_mape(method: str, table: str = "journal5", framework: str | None = None) -> str:
    """The thesis's published MAPE of ``method`` per framework, as figure text (``"TensorFlow 5 %, …"``);
    ``framework`` keeps that framework's only, where the table has it."""

    t = load_thesis_table(table)
    t = t[(t["metric"] == "MAPE") & (t["method"] == method)]
    if framework is not None and (t["framework"] == framework_name(framework)).any():
        t = t[t["framework"] == framework_name(framework)]
    return ", ".join(f"{r.framework} {r.mean:g} %" for r in t.itertuples())


def params_view(table):
    """Table 4.2/4.3 for reading: one ``mean ± std`` cell per source."""
    cols = [c[:-5] for c in table.columns if c.endswith("_mean")]
    view = mean_std_columns(table.drop(columns=["table"]), {c: (f"{c}_mean", f"{c}_std") for c in cols})
    return view.rename(columns={c: (f"thesis {c}" if c in ("TensorFlow", "MXNet", "PyTorch") else f"ours ({c})")
                                for c in cols})


def scaling_view(table):
    """Table 4.5 (and its journal and conference twins) for reading: ``mean ± std`` cells."""
    return mean_std_columns(table, {"q(workers)": ("q_workers", "q_workers_std"),
                                    "q(batch)": ("q_batch", "q_batch_std")}).fillna("")


def dataset_view(r, target: str):
    """§1: the measured epoch times of each framework by workers."""
    return pd.concat({part.label: part.frame.groupby("workers")[target].describe() for part in r.parts},
                     names=["framework", "workers"]).round(3).rename(
        columns=lambda c: f"{c} (s)" if c not in ("count",) else "samples")


def _merge_frameworks(tables, on):
    """Left-join per-framework tables that share the key columns ``on`` (the first table's rows, in its order)."""
    out = tables[0]
    for t in tables[1:]:
        out = out.merge(t, on=on, how="left", sort=False)
    return out


def side_by_side(r, key: str, table: str):
    """Table 4.2/4.3: every framework's mean ± std per parameter, then the thesis's columns."""
    tables = [params_side_by_side(part.fits[key].summary(), table=table, label=part.label) for part in r.parts]
    on = ["table", "parameter", "level", "kind", "symbol"]
    ours = [t[on + [f"{part.label}_mean", f"{part.label}_std"]] for t, part in zip(tables, r.parts)]
    thesis = tables[0].drop(columns=[c for c in tables[0].columns if c.startswith(r.parts[0].label + "_")])
    return _merge_frameworks([*ours, thesis], on)


def table4_4(r):
    """§4 Table 4.4, L1 against L2: a column per framework, then the thesis's."""
    rows = [dict(penalty=pen, metric=metric, **{part.label: part.errors[key][metric] for part in r.parts})
            for pen, key in (("L1", "DE+L1"), ("L2", "DE+L2")) for metric in ("MAPE", "MSE", "RMSE")]
    t44 = load_thesis_table("4.4").pivot_table(index=["penalty", "metric"], columns="framework",
                                               values="mean").reset_index()
    t44.columns = [c if c in ("penalty", "metric") else f"thesis_{c}" for c in t44.columns]
    return pd.DataFrame(rows).merge(t44, on=["penalty", "metric"], how="left")


def scaling_tables(r) -> dict:
    """§5 Table 4.5, journal Table 6 and conference Table II: q of workers and batch, a row per framework and fit."""
    ours = []
    for part in r.parts:
        for key in ("DE", "DE+L2"):
            qw, qw_sd = part.power(key, "workers")
            qb, qb_sd = part.power(key, "batch_size")
            ours.append(dict(fit=key, framework=part.label, q_workers=qw, q_workers_std=qw_sd, q_batch=qb,
                             q_batch_std=qb_sd))
    out = {}
    for key, name, source in (("4.5", "table4_5", "thesis Table 4.5"), ("journal6", "journal_table6", "journal Table 6"),
                              ("conference2", "conference_table2", "conference Table II")):
        out[name] = pd.DataFrame(ours + [dict(fit=source, framework=t.framework, q_workers=t.mean)
                                         for t in load_thesis_table(key).itertuples()])
    return out


def _thesis_columns(table: str, metric: str):
    t = load_thesis_table(table)
    t = t[t["metric"] == metric].pivot_table(index="method", columns="framework", values="mean")
    t.columns = [f"thesis_{c}" for c in t.columns]
    return t


def baseline_tables(r) -> dict:
    """§6 journal Table 5 and conference Table I: the baselines' held-out metrics, per framework, then the thesis's."""
    journal5 = pd.concat([part.comparison[["MAPE", "MSE", "RMSE", "R2"]].rename(
        columns=lambda c, lb=part.label: f"{lb}_{c}") for part in r.parts], axis=1).rename(index={"SVR": "SVM"})
    conf1 = pd.concat([part.comparison.loc[["DE", "RF", "SVR"], ["MAE", "MAPE", "R2"]].rename(
        columns=lambda c, lb=part.label: f"{lb}_{c}") for part in r.parts], axis=1).rename(index={"SVR": "SVM"})
    return {"journal_table5": journal5.join(_thesis_columns("journal5", "MAPE"), how="outer").rename_axis(
                "method").reset_index(),
            "conference_table1": conf1.join(_thesis_columns("conference1", "MAE"), how="outer").rename_axis(
                "method").reset_index()}


def lambda_sweep(r):
    """§7: ``(saved, coefficients)``: the λ sweep of every framework, split into what the data determine per fit
    (R², MAPE, the objective and the powers p, q; saved as ``lambda_sweep.csv``) and the coefficients a, κ and C
    (:data:`~.params.SWEEP_COEFFICIENT_KINDS`), which the objective does not pin down to the writer's precision
    in weakly penalised fits; they are drawn in Figs. 4.16–4.17."""
    full = pd.concat([part.sweep.assign(framework=part.label) for part in r.parts], ignore_index=True)
    coefficient = full["kind"].isin(SWEEP_COEFFICIENT_KINDS)
    return full[~coefficient].reset_index(drop=True), full[coefficient].reset_index(drop=True)


def lambda_sweep_view(r):
    """Held-out R² per λ, a column per framework and penalty."""
    full = pd.concat([part.sweep.assign(framework=part.label) for part in r.parts], ignore_index=True)
    r2 = full[full["quantity"] == "r2_test"]
    return r2.groupby(["framework", "penalty", "lam"], sort=False)["value"].mean().unstack(
        ["framework", "penalty"]).rename(columns=lambda c: f"R² held out, {c.upper()}", level=1).round(4)


def epoch_view(table):
    """§1 the epoch extrapolation check for reading."""
    return table.assign(
        **{"median error (%)": [f"{100 * e:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]" for e, lo, hi in
                                zip(table["median_error"], table["median_lo"], table["median_hi"])],
           "median |error| (%)": (100 * table["abs_error_median"]).round(1),
           "max |error| (%)": (100 * table["abs_error_max"]).round(1),
           "within 5 %": (100 * table["share_within_5pct"]).round(0).astype(int).astype(str) + " %"}
    ).set_index("framework")[["checks", "median error (%)", "median |error| (%)", "max |error| (%)", "within 5 %"]]


def paired_view(table):
    """§8 the paired ratios for reading: a ``ratio [lo, hi]`` cell per framework and level."""
    cell = table.assign(cell=[f"{r:.3g} [{lo:.3g}, {hi:.3g}]" for r, lo, hi in zip(table["ratio"], table["lo"],
                                                                                      table["hi"])])
    return cell.pivot_table(index=["factor", "level"], columns="framework", values="cell", aggfunc="first",
                            sort=False)


def pooled_view(table):
    """§9 one model across frameworks against a model per framework, for reading."""
    return table.assign(
        **{"MAPE own fit (%)": table["mape_own"].round(1),
           "MAPE one model (%)": [f"{e:.1f} [{lo:.1f}, {hi:.1f}]" for e, lo, hi in
                                  zip(table["mape_pooled"], table["pooled_lo"], table["pooled_hi"])],
           "one model − own (points)": [f"{e:+.1f} [{lo:+.1f}, {hi:+.1f}]" for e, lo, hi in
                                        zip(table["difference"], table["difference_lo"], table["difference_hi"])]}
    ).set_index(["framework", "method"])[["MAPE own fit (%)", "MAPE one model (%)", "one model − own (points)"]]


def claims_by_framework(ledger, labels):
    """The measured claims' verdicts, a column per framework (the ledger's ``key.framework`` rows)."""
    base = [c.key for c in CLAIMS if not c.data and c.key not in FRAMEWORK_KEYS + MACHINE_KEYS]
    by_key = ledger.set_index("key")
    rows = []
    for key in base:
        if key not in by_key.index:
            continue
        row = {"claim": by_key.loc[key, "claim"]}
        for k, lb in enumerate(labels):
            name = key if k == 0 else f"{key}.{lb.split('-')[0]}"
            if name in by_key.index:
                r = by_key.loc[name]
                row[lb] = r["verdict"] + (f" {fmt(r['estimate'])} {r['interval']}" if r["interval"] else "")
        rows.append(row)
    return pd.DataFrame(rows).set_index("claim")


def q_workers_by_machine(machines) -> pd.DataFrame:
    """Eq. 4.4 per machine on the rows every machine measured (:class:`~.results.MachineFit`), a row per machine:
    ``machine``, ``file``, ``rows`` (``n_fit`` + ``n_test``), ``q_workers`` with its 95 % interval
    (``q_workers_lo``, ``q_workers_hi``), the held-out ``mape`` (%) with its interval, and
    ``median_time_G<w>``: the median epoch time (s) at each worker count any machine measured (empty where
    this one did not)."""
    workers = sorted({w for m in machines for w in m.median_time})
    return pd.DataFrame([dict(machine=m.machine, file=f"{m.label}/{m.file.name}", rows=m.n, n_fit=m.n_fit,
                              n_test=m.n_test, q_workers=m.q_workers.estimate, q_workers_lo=m.q_workers.lo,
                              q_workers_hi=m.q_workers.hi, mape=m.mape.estimate, mape_lo=m.mape.lo, mape_hi=m.mape.hi,
                              **{f"median_time_G{w}": m.median_time.get(w, np.nan) for w in workers})
                         for m in machines])


def q_workers_by_machine_view(table) -> pd.DataFrame:
    """:func:`q_workers_by_machine` for reading: ``estimate [lo, hi]`` cells, times in seconds."""
    times = [c for c in table.columns if c.startswith("median_time_G")]
    view = table.assign(**{
        "q(workers) [95 %]": [f"{e:+.2f} [{lo:+.2f}, {hi:+.2f}]" for e, lo, hi in
                              zip(table["q_workers"], table["q_workers_lo"], table["q_workers_hi"])],
        "held-out MAPE (%)": [f"{e:.1f} [{lo:.1f}, {hi:.1f}]" for e, lo, hi in
                              zip(table["mape"], table["mape_lo"], table["mape_hi"])],
        **{f"median epoch G={c[len('median_time_G'):]} (s)": table[c].round(1) for c in times}})
    return view.set_index("machine")[["file", "rows", "q(workers) [95 %]", "held-out MAPE (%)",
                                      *[f"median epoch G={c[len('median_time_G'):]} (s)" for c in times]]]
