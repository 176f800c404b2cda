"""Chapter 4: the generic performance model on measured LeNet-5 training times.

:func:`analyse` fits the generic model (eq. 4.4, :class:`perfkit.model.GenericPerformanceModel`)
to a ``perfkit collect ch4`` file split as the thesis split it, and computes

1. the measured dataset (what the sampler rejected, epoch times by workers);
2. Table 4.2 and Figs. 4.3-4.5: fits without regularisation, 10 seeds;
3. Table 4.3 and Figs. 4.6-4.8: L2, λ = 1e-3;
4. Table 4.4: L1 against L2;
5. Table 4.5: the scaling power of workers;
6. Figs. 4.9-4.14 and journal Table 5: random forest and SVR;
7. Figs. 4.15-4.17: R² and coefficients against λ;
8. the claims ledger (:data:`CLAIMS`).

The notebook ``notebooks/ch4_generic_model.ipynb`` calls :func:`analyse`, shows its
tables and figures and explains them. Chapter 5 reuses :func:`heldout_errors`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..report.claims import Claim, fmt, judge_all
from ..schema import ROLES, THESIS_EXTRINSIC
from .result import (ChapterResult, Check, ParameterError, ParamsBase, at_least, checked_params, existing_file, grid,
                     make_params, number_at_least, one_of, output_folder, show_path)

__all__ = ["Params", "check_params", "check_steps_file", "analyse", "CLAIMS", "make_model", "params_side_by_side",
           "error_row", "thesis_mape", "heldout_errors"]

#: columns a chapter 4/5 model may take as its target (what ``perfkit collect`` times)
TARGETS = ("epoch_time", "step_time")
#: the static rule of ``target``; :func:`check_steps_file` checks it is a time column of the file
TARGET = Check("a column of the file holding a time, such as 'epoch_time' or 'step_time'",
               lambda v: isinstance(v, str) and bool(v.strip()))
#: fitting engines (:data:`perfkit.model.generic.METHODS`)
ENGINES = ("varpro", "thesis")
#: the rules shared by every chapter that fits the generic model on a measured split (Chapters 4 and 5)
FIT_CHECKS = {
    "target": TARGET,
    "n_fit": at_least(2),
    "n_test": at_least(2, why="R² of the held-out rows needs two"),
    "split_seed": at_least(0),
    "seeds": at_least(1),
    "engine": one_of(*ENGINES),
    "n_jobs": at_least(1, also=(-1,), why="-1: every core"),
    "figures_dir": output_folder("figures/"),
}


@dataclass(frozen=True)
class Params(ParamsBase):
    """Parameters of Chapter 4 (the notebook's ``parameters`` cell); :data:`Params.CHECKS` are their rules."""

    quick: bool = False  # small budgets for tests: fewer seeds, a short λ grid, few DE generations
    dataset: str = "data/measured/pytorch-cpu/ch4_lenet5.csv"  # perfkit collect ch4 output
    target: str = "epoch_time"  # column to model: epoch_time (the thesis reading) or step_time
    n_fit: int = 1000  # rows to fit on (the thesis: 1000; its journal paper: 900)
    n_test: int = 500  # rows held out (the thesis: 500; its journal paper: 600)
    split_seed: int = 0  # seed of the random fit/held-out split
    seeds: int = 10  # DE seeds per fit (Tables 4.2 and 4.3 report mean and std over 10)
    lam_l2: float = 0.001  # λ of the L2 fit of Table 4.3 (the thesis chose 1e-3)
    lam_l1: float = 0.001  # λ of the L1 fit compared in Table 4.4
    lams: tuple = (1e-6, 1e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 1.0)  # λ grid of Figs. 4.15-4.17
    sweep_seeds: int = 3  # DE seeds per λ in the sweep
    engine: str = "varpro"  # fitting engine: varpro (fast, default) or thesis (scipy DE over every parameter)
    n_jobs: int = 1  # parallel fits (joblib)
    progress: bool = True  # progress bars for the fits and the sweep
    figures_dir: str = ""  # folder for figures and tables (ChapterResult.save); "" means figures/

    #: the rule of each parameter (``quick`` and ``progress`` need only be bools)
    CHECKS = {
        **FIT_CHECKS,
        "dataset": existing_file("a `perfkit collect ch4` output"),
        "lam_l2": number_at_least(0),
        "lam_l1": number_at_least(0),
        "lams": grid(number_at_least(0, strict=True), "finite numbers > 0 (a log axis)"),
        "sweep_seeds": at_least(1),
    }

    @property
    def n_seeds(self) -> int:
        return 2 if self.quick else self.seeds

    @property
    def de_kw(self) -> dict:
        """Engine settings: the engine's defaults at full budget, 60 generations in quick mode."""
        return dict(method=self.engine, maxiter=60) if self.quick else dict(method=self.engine)


def check_steps_file(name: str, path: str, target: str, roles: str, n_fit: int, n_test: int, quick: bool,
                     rows_hint: str = "lower n_fit/n_test") -> int:
    """Check a ``perfkit collect ch4``/``ch5`` file against the parameters; returns its usable rows (status ok).

    ``name`` is the parameter that names the file. The file must be a CSV with the
    columns of ``roles`` (:data:`perfkit.schema.ROLES`), ``status`` and ``target``, whose
    target is a positive number in every usable row, and (except in quick mode, where
    the split is scaled down) at least ``n_fit + n_test`` usable rows.
    """
    import pandas as pd

    from ..schema import resolve

    full = resolve(path)
    shown = show_path(full)
    try:
        df = pd.read_csv(full)
    except ValueError as exc:  # not CSV, empty, undecodable
        raise ParameterError(f"{name}: {shown} cannot be read as CSV ({exc}); expected a `perfkit collect "
                             f"{roles}` output") from None
    need = [c for role in ROLES[roles].values() for c in role] + ["status"] + (["volume"] if roles == "ch5" else [])
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ParameterError(f"{name}: {shown} has no column {missing[0]!r}; expected a `perfkit collect {roles}` "
                             f"output (columns {', '.join(need)}, and the target)")
    if target not in df.columns:
        raise ParameterError(f"target: {target!r} is not a column of {shown}; expected one of its time columns "
                             f"({', '.join(c for c in TARGETS if c in df.columns) or 'none found'})")
    ok = df[df["status"] == "ok"]
    if ok.empty:
        raise ParameterError(f"{name}: {shown} has no usable rows (status ok); expected a file with finished samples")
    y = pd.to_numeric(ok[target], errors="coerce")
    bad = ~(y > 0) | ~y.map(math.isfinite)
    if bad.any():
        row, value = ok.index[bad.to_numpy()][0], ok[target][bad].iloc[0]
        raise ParameterError(f"target: column {target!r} of {shown} is not a positive number in every usable row "
                             f"(row {row}: {value!r}); expected a time column")
    if n_fit + n_test > len(ok) and not quick:
        raise ParameterError(f"n_fit: {n_fit} + n_test {n_test} = {n_fit + n_test} rows asked for, but {shown} has "
                             f"{len(ok)} usable rows (status ok); {rows_hint}")
    return len(ok)


def check_params(**params) -> Params:
    """The checked :class:`Params` of Chapter 4, or one :class:`~perfkit.chapters.result.ParameterError`.

    Applies :data:`Params.CHECKS` (names, types, values; :func:`~perfkit.chapters.result.make_params`),
    then reads ``dataset``: ``target`` must be one of its columns and ``n_fit + n_test`` must not
    exceed its usable rows (quick mode scales the split down instead). Nothing is fitted.
    """
    p = make_params(Params, params)
    check_steps_file("dataset", p.dataset, p.target, "ch4", p.n_fit, p.n_test, p.quick)
    return p


def make_model(roles="ch4", **kwargs):
    """A :class:`~perfkit.model.GenericPerformanceModel` with the column roles of a file kind (:data:`perfkit.schema.ROLES`)."""
    from ..model.generic import GenericPerformanceModel

    return GenericPerformanceModel(**(ROLES[roles] if isinstance(roles, str) else roles), **kwargs)


def params_side_by_side(summary, table: str = "4.2", label: str = "ours"):
    """Our mean ± std per parameter (from ``RepeatedFit.summary()``) beside the thesis's table.

    Returns one row per (parameter, symbol) with ``ours_mean``, ``ours_std`` and
    ``<framework>_mean``/``_std`` for each framework of the thesis table.
    """
    import pandas as pd

    from ..data.thesis import load_thesis_table

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


def error_row(y_true, y_pred) -> dict:
    """MAPE (%), MAE, MSE, RMSE and R² of held-out predictions."""
    from ..model.metrics import mae, mape, mse, r2, rmse

    return {"MAPE": mape(y_true, y_pred), "MAE": mae(y_true, y_pred), "MSE": mse(y_true, y_pred),
            "RMSE": rmse(y_true, y_pred), "R2": r2(y_true, y_pred)}


def thesis_mape(method: str, table: str = "journal5") -> str:
    """The thesis's published MAPE of ``method`` per framework, as figure text (``"5 % TensorFlow, …"``)."""
    from ..data.thesis import load_thesis_table

    t = load_thesis_table(table)
    t = t[(t["metric"] == "MAPE") & (t["method"] == method)]
    return ", ".join(f"{r.framework} {r.mean:g} %" for r in t.itertuples())


def heldout_errors(fit_name: str = "DE+L2", **params) -> dict:
    """Held-out errors (:func:`error_row`) of one Chapter 4 fit, without the rest of the chapter.

    Chapter 5 compares its errors with Chapter 4's through this function: the same
    data, split, seeds and engine as :func:`analyse` give the same numbers.
    """
    from ..data.measured import load_steps, thesis_split
    from ..model.fitting import fit_repeated
    from ..schema import resolve

    fits = ("DE", "DE+L1", "DE+L2")
    if fit_name not in fits:
        raise ParameterError(f"fit_name: got {fit_name!r}; expected one of {', '.join(map(repr, fits))}")
    p = check_params(**params)
    penalty, lam = {"DE": (None, 0.0), "DE+L1": ("l1", p.lam_l1), "DE+L2": ("l2", p.lam_l2)}[fit_name]
    X, y, _ = load_steps(resolve(p.dataset), target=p.target)
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=p.n_fit, n_test=p.n_test, seed=p.split_seed)
    kw = dict(penalty=penalty, lam=lam) if penalty else {}
    fit = fit_repeated(make_model(**kw, **p.de_kw), X_fit, y_fit, seeds=p.n_seeds, n_jobs=p.n_jobs,
                       progress=p.progress, desc=f"Chapter 4 {fit_name} fits")
    return error_row(y_test, fit.best.predict(X_test))


# ------------------------------------------------------------------------------------------- claims
def _stable(q):
    s = q["stability"]
    return (s["q_sd"] < s["p_sd"]) and (s["c_rel"] < s["a_rel"])


#: The claims of Chapter 4 and their rules, in ledger order.
CLAIMS = (
    Claim("l2_beats_l1", "L2 beats L1 on MAPE, MSE and RMSE", "Table 4.4",
          "L2 lower on all three, both at lambda {lam_l2:g} / {lam_l1:g}", needs=("errors",),
          test=lambda q: all(q["errors"]["DE+L2"][m] < q["errors"]["DE+L1"][m] for m in ("MAPE", "MSE", "RMSE")),
          evidence=lambda q: "; ".join(f"{m}: L2 {fmt(q['errors']['DE+L2'][m])} vs L1 {fmt(q['errors']['DE+L1'][m])}"
                                       for m in ("MAPE", "MSE", "RMSE"))),
    Claim("r2_falls", "R² falls once λ exceeds 1e-3", "Figure 4.15", "drop of more than 0.01 for both penalties",
          needs=("r2_drop",), test=lambda q: all(d > 0.01 for d in q["r2_drop"].values()),
          evidence=lambda q: "; ".join(f"{p.upper()}: best R² at λ<=1e-3 minus worst at λ>1e-3 = {fmt(d)}"
                                       for p, d in q["r2_drop"].items()),
          missing="the λ grid does not straddle 1e-3"),
    Claim("stable_extrinsic", "extrinsic powers and C are stable across seeds; intrinsic parameters vary", "Table 4.2",
          "q varies less than p, and C (relative) less than a (relative)", needs=("stability",), test=_stable,
          evidence=lambda q: (f"largest std of q over seeds {fmt(q['stability']['q_sd'])} vs median std of p "
                              f"{fmt(q['stability']['p_sd'])}; relative std of C {fmt(q['stability']['c_rel'])} vs "
                              f"median relative std of a {fmt(q['stability']['a_rel'])}"),
          missing="one seed only"),
    Claim("q_workers", "q of workers is close to −1 (good scaling)", "Table 4.5", "|q + 1| <= 0.15",
          needs=("q_workers",), test=lambda q: abs(q["q_workers"] + 1) <= 0.15,
          evidence=lambda q: f"q(workers) = {fmt(q['q_workers'])}"),
    Claim("q_batch", "q of batch size is close to −1", "Tables 4.2–4.3", "|q + 1| <= 0.15",
          needs=("q_batch",), test=lambda q: abs(q["q_batch"] + 1) <= 0.15,
          evidence=lambda q: f"q(batch) = {fmt(q['q_batch'])}"),
    Claim("rf_beats_de", "random forest is slightly more accurate than the generic model (DE)",
          "§4 text; journal Table 5", "RF MAPE below DE MAPE", needs=("mape",),
          test=lambda q: q["mape"]["RF"] < q["mape"]["DE"],
          evidence=lambda q: f"MAPE RF {fmt(q['mape']['RF'])} % vs DE {fmt(q['mape']['DE'])} %"),
    Claim("svr_worst", "SVR fits worst", "journal Table 5", "SVR has the highest MAPE", needs=("mape",),
          test=lambda q: q["mape"]["SVR"] == max(q["mape"].values()),
          evidence=lambda q: "MAPE " + ", ".join(f"{k} {fmt(v)} %" for k, v in q["mape"].items())),
    Claim("published_a_bounds", "published: every fitted a lies in the bounds [0, 1000]", "Table 4.3 vs §4.3 bounds",
          "no negative a in Table 4.3", needs=("negative_a",), test=lambda q: not q["negative_a"],
          evidence=lambda q: "; ".join(q["negative_a"]) or "none negative"),
    Claim("published_44_vs_j5", "published: thesis Table 4.4 and journal Table 5 agree on the MAPE of the L2 fits",
          "Table 4.4 vs journal Table 5", "equal MAPE per framework", needs=("mape_44_vs_j5",),
          test=lambda q: not q["mape_44_vs_j5"],
          evidence=lambda q: "; ".join(f"{fw}: {a} % vs {b} %" for fw, (a, b) in q["mape_44_vs_j5"].items()) or "equal"),
    Claim("published_45_vs_43", "published: Table 4.5 repeats the q of GPUs of Table 4.3", "Table 4.5 vs Table 4.3",
          "equal q per framework", needs=("q_45_vs_43",), test=lambda q: not q["q_45_vs_43"],
          evidence=lambda q: "; ".join(f"{fw}: {a} vs {b}" for fw, (a, b) in q["q_45_vs_43"].items()) or "equal"),
    Claim("published_rf_beats_de", "published: random forest beats DE in every framework", "journal Table 5",
          "RF MAPE below DE MAPE in each framework", needs=("rf_worse",), test=lambda q: not q["rf_worse"],
          evidence=lambda q: "RF worse than DE for " + (", ".join(q["rf_worse"]) or "none")),
)


def _published_quantities(q: dict) -> None:
    """The published-number checks (tables 4.3, 4.4, 4.5, journal 5) into ``q``."""
    from ..data.thesis import load_thesis_table

    t43 = load_thesis_table("4.3")
    neg = t43[(t43["symbol"] == "a") & (t43["mean"] < 0)]
    q["negative_a"] = [f"{r.framework} {r.term}: a = {r.mean}" for r in neg.itertuples()]
    t44m = load_thesis_table("4.4")
    t44m = t44m[(t44m["metric"] == "MAPE") & (t44m["penalty"] == "L2")].set_index("framework")["mean"]
    j5 = load_thesis_table("journal5")
    j5m = j5[(j5["metric"] == "MAPE") & (j5["method"] == "DE+L2")].set_index("framework")["mean"]
    q["mape_44_vs_j5"] = {fw: (t44m[fw], j5m[fw]) for fw in t44m.index if fw in j5m.index and t44m[fw] != j5m[fw]}
    q45 = load_thesis_table("4.5").set_index("framework")["mean"]
    q43 = t43[(t43["parameter"] == "gpus") & (t43["symbol"] == "q")].set_index("framework")["mean"]
    q["q_45_vs_43"] = {fw: (q45[fw], q43[fw]) for fw in q45.index if fw in q43.index and q45[fw] != q43[fw]}
    j5all = j5[j5["metric"] == "MAPE"].pivot_table(index="framework", columns="method", values="mean")
    q["rf_worse"] = [fw for fw in j5all.index if j5all.loc[fw, "RF"] > j5all.loc[fw, "DE"]]


def _params_view(table):
    """Table 4.2/4.3 for reading: one ``mean ± std`` cell per source."""
    from ..report.tables import mean_std_columns

    cols = [c[:-5] for c in table.columns if c.endswith("_mean")]
    view = mean_std_columns(table.drop(columns=["table"]), {c: (f"{c}_mean", f"{c}_std") for c in cols})
    return view.rename(columns={c: (f"thesis {c}" if c in ("TensorFlow", "MXNet", "PyTorch") else f"ours ({c})")
                                for c in cols})


# ------------------------------------------------------------------------------------------ analyse
def analyse(params: Params | None = None, /, **kwargs) -> ChapterResult:
    """Chapter 4 on a measured LeNet-5 file: ``analyse(n_fit=900, ...)`` or ``analyse(check_params(...))``.

    The parameters (:class:`Params`) are checked first (:func:`check_params`): a value that is
    not allowed raises one :class:`~perfkit.chapters.result.ParameterError` before anything is fitted.
    """
    import pandas as pd

    from ..data.measured import load_provenance, load_steps, thesis_split
    from ..data.thesis import load_thesis_table
    from ..model.baselines import compare_models, make_baseline
    from ..model.fitting import fit_repeated, regularisation_sweep
    from ..model.scaling import scaling_power
    from ..report import plots
    from ..schema import resolve

    p = checked_params(params, kwargs, Params, check_params)
    res = ChapterResult("ch4", p)
    T, V, F, q, fits = res.tables, res.views, res.figures, res.numbers, res.fits
    q.update(lam_l2=p.lam_l2, lam_l1=p.lam_l1)
    data_path = resolve(p.dataset)
    label = data_path.parent.name  # e.g. pytorch-cpu
    X, y, frame = load_steps(data_path, target=p.target)
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=p.n_fit, n_test=p.n_test, seed=p.split_seed)
    q.update(label=label, n_rows=len(frame), n_fit=len(X_fit), n_test=len(X_test), target=p.target)
    q["provenance"] = load_provenance(data_path)
    res.notes.append(f"{len(frame)} successful samples in {data_path.name} ({label}); fit on {len(X_fit)}, "
                     f"held out {len(X_test)}")
    if len(frame) < p.n_fit + p.n_test:
        res.notes.append(f"quick mode: fewer samples than {p.n_fit} + {p.n_test}, so the split was scaled down")
    V["dataset"] = frame.groupby("workers")[p.target].describe().round(3).rename(
        columns=lambda c: f"{c} (s)" if c not in ("count",) else "samples")
    fit_kw = dict(seeds=p.n_seeds, n_jobs=p.n_jobs, progress=p.progress)

    def pred_fig(model, name, title, thesis):
        fig, ax = plots.new_figure(figsize=(3.8, 4.2))
        plots.plot_pred_vs_measured(y_test, model.predict(X_test), ax=ax, title=title, thesis_error=thesis)
        F[name] = fig

    # §2 Table 4.2, no regularisation
    fits["DE"] = fit_repeated(make_model(**p.de_kw), X_fit, y_fit, desc="Table 4.2: DE fits", **fit_kw)
    T["table4_2"] = params_side_by_side(fits["DE"].summary(), table="4.2", label=label)
    V["table4_2"] = _params_view(T["table4_2"])
    pred_fig(fits["DE"].best, "fig4_3_de_pred_vs_measured", f"generic model, no regularisation ({label}, held out)",
             "MAPE " + thesis_mape("DE"))

    # §3 Table 4.3, L2
    fits["DE+L2"] = fit_repeated(make_model(penalty="l2", lam=p.lam_l2, **p.de_kw), X_fit, y_fit,
                                 desc="Table 4.3: DE+L2 fits", **fit_kw)
    T["table4_3"] = params_side_by_side(fits["DE+L2"].summary(), table="4.3", label=label)
    V["table4_3"] = _params_view(T["table4_3"])
    pred_fig(fits["DE+L2"].best, "fig4_6_de_l2_pred_vs_measured",
             f"generic model, L2 λ={p.lam_l2:g} ({label}, held out)", "MAPE " + thesis_mape("DE+L2"))

    # §4 Table 4.4, L1 against L2
    fits["DE+L1"] = fit_repeated(make_model(penalty="l1", lam=p.lam_l1, **p.de_kw), X_fit, y_fit,
                                 desc="Table 4.4: DE+L1 fits", **fit_kw)
    errors = {k: error_row(y_test, fits[k].best.predict(X_test)) for k in ("DE", "DE+L1", "DE+L2")}
    q["errors"] = errors
    rows = [dict(penalty=pen, metric=metric, ours=errors[key][metric])
            for pen, key in (("L1", "DE+L1"), ("L2", "DE+L2")) for metric in ("MAPE", "MSE", "RMSE")]
    table4_4 = pd.DataFrame(rows)
    t44 = load_thesis_table("4.4").pivot_table(index=["penalty", "metric"], columns="framework",
                                               values="mean").reset_index()
    table4_4 = table4_4.merge(t44, on=["penalty", "metric"], how="left")
    table4_4.columns = [c if c in ("penalty", "metric", "ours") else f"thesis_{c}" for c in table4_4.columns]
    T["table4_4"] = table4_4.rename(columns={"ours": label})

    # §5 Table 4.5, scaling power
    rows = []
    for key in ("DE", "DE+L2"):
        qw, qw_sd = scaling_power(fits[key].summary(), "workers")
        qb, qb_sd = scaling_power(fits[key].summary(), "batch_size")
        rows.append(dict(fit=key, framework=label, q_workers=qw, q_workers_std=qw_sd, q_batch=qb, q_batch_std=qb_sd))
    t45 = load_thesis_table("4.5")
    rows += [dict(fit="thesis Table 4.5", framework=r.framework, q_workers=r.mean) for r in t45.itertuples()]
    T["table4_5"] = pd.DataFrame(rows)
    V["table4_5"] = _scaling_view(T["table4_5"])
    q["q_workers"], q["q_workers_std"] = scaling_power(fits["DE"].summary(), "workers")
    q["q_batch"], q["q_batch_std"] = scaling_power(fits["DE"].summary(), "batch_size")

    # §6 baselines, journal Table 5
    roles = ROLES["ch4"]
    fitted = {"RF": make_baseline("rf", **roles, random_state=0).fit(X_fit, y_fit),
              "SVR": make_baseline("svr", **roles).fit(X_fit, y_fit)}
    fits.update(fitted)
    models = {"DE": fits["DE"].best, "DE+L2": fits["DE+L2"].best, **fitted}
    comparison = compare_models(models, X_fit, y_fit, X_test, y_test, prefitted=set(models))
    q["mape"] = {k: float(v) for k, v in comparison["MAPE"].items()}
    pred_fig(fitted["RF"], "fig4_9_rf_pred_vs_measured", f"random forest ({label}, held out)",
             "MAPE " + thesis_mape("RF"))
    pred_fig(fitted["SVR"], "fig4_12_svr_pred_vs_measured", f"SVR ({label}, held out)", "MAPE " + thesis_mape("SVM"))
    j5 = load_thesis_table("journal5")
    j5 = j5[j5["metric"] == "MAPE"].pivot_table(index="method", columns="framework", values="mean")
    j5.columns = [f"thesis_{c}" for c in j5.columns]
    journal5 = comparison[["MAPE", "MSE", "RMSE", "R2"]].rename(columns=lambda c: f"{label}_{c}")
    journal5 = journal5.rename(index={"SVR": "SVM"})
    T["journal_table5"] = journal5.join(j5, how="outer").rename_axis("method").reset_index()

    # §7 λ sweep, Figs. 4.15-4.17
    grid = [1e-4, 1e-2, 1.0] if p.quick else list(p.lams)
    sweep = regularisation_sweep(make_model(**p.de_kw), X_fit, y_fit, X_test, y_test, penalties=("l1", "l2"),
                                 lams=grid, seeds=range(1 if p.quick else p.sweep_seeds), n_jobs=p.n_jobs,
                                 progress=p.progress)
    T["lambda_sweep"] = sweep
    fig, ax = plots.new_figure(figsize=(5.2, 3.3))
    plots.plot_r2_vs_lambda(sweep, ax=ax)
    ax.set_title(f"held-out R² against λ ({label})", fontsize=9)
    F["fig4_15_r2_vs_lambda"] = fig
    for num, pen in ((16, "l1"), (17, "l2")):
        axes = plots.plot_coef_paths(sweep, pen)
        F[f"fig4_{num}_{pen}_coef_paths"] = axes[0].figure
    r2_by_lam = sweep[sweep["quantity"] == "r2_test"].groupby(["penalty", "lam"])["value"].mean().unstack(0)
    V["lambda_sweep"] = r2_by_lam.rename(columns=lambda c: f"R² held out, {c.upper()}").round(4)
    lam_hi = [lam for lam in r2_by_lam.index if lam > 1e-3]
    lam_lo = [lam for lam in r2_by_lam.index if lam <= 1e-3]
    if lam_hi and lam_lo:
        q["r2_drop"] = {pen: r2_by_lam.loc[lam_lo, pen].max() - r2_by_lam.loc[lam_hi, pen].min()
                        for pen in r2_by_lam.columns}

    # §8 claims
    pp = fits["DE"].params
    if p.n_seeds > 1:
        sd, mean = pp.std(), pp.mean().abs()
        a_cols = [c for c in pp.columns if c.startswith("a[")]
        q["stability"] = dict(q_sd=float(sd[[c for c in pp.columns if c.startswith("q[")]].max()),
                              p_sd=float(sd[[c for c in pp.columns if c.startswith("p[")]].median()),
                              c_rel=float(sd["C"] / mean["C"]), a_rel=float((sd[a_cols] / mean[a_cols]).median()))
    _published_quantities(q)
    T["claims_ch4"] = judge_all("4", f"{data_path.parent.name}/{data_path.name}", CLAIMS, q)
    from .readings import ch4_readings

    res.readings = ch4_readings(res)
    return res


def _scaling_view(table):
    from ..report.tables import mean_std_columns

    return mean_std_columns(table, {"q(workers)": ("q_workers", "q_workers_std"),
                                    "q(batch)": ("q_batch", "q_batch_std")}).fillna("")
