"""Chapter 5: the generic model on 3D-ResAttNet-18, and how its exponents depend on the volume size.

:func:`analyse` fits the generic model with L2 (10 seeds) to a ``perfkit collect ch5``
file split as the thesis split it (900 fit / 600 held out) and computes

1. Table 5.2: the L2 fit, mean ± std over seeds;
2. Table 5.3 and Figs. 5.3-5.4: the generic model against a random forest;
3. Table 5.4: the scaling power of workers, and the claims ledger (:data:`CLAIMS`),
   which compares the errors with Chapter 4's (:func:`perfkit.chapters.ch4.heldout_errors`);
4. extension: the worker and batch exponents against the volume size
   (a ``perfkit collect ch5vol`` file), beside the best q(workers) the machine allows.

The notebook ``notebooks/ch5_resattnet3d.ipynb`` calls :func:`analyse`, shows its
tables and figures and explains them.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..report.claims import Claim, fmt, judge_all
from .ch4 import FIT_CHECKS, check_steps_file
from .result import (ChapterResult, ParameterError, ParamsBase, checked_params, existing_file, make_params,
                     number_at_least, show_path)

__all__ = ["Params", "check_params", "analyse", "CLAIMS"]

#: columns of the volume study that section 4 needs besides the target (:func:`perfkit.model.scaling.volume_exponents`)
VOLUME_COLUMNS = ("workers", "batch_size", "num_filters", "volume")


@dataclass(frozen=True)
class Params(ParamsBase):
    """Parameters of Chapter 5 (the notebook's ``parameters`` cell); :data:`Params.CHECKS` are their rules."""

    quick: bool = False  # small budgets for tests: fewer seeds and DE generations
    dataset: str = "data/measured/pytorch-cpu/ch5_resattnet3d.csv"  # perfkit collect ch5 output
    target: str = "epoch_time"  # column to model: epoch_time (431 scans) or step_time
    n_fit: int = 900  # rows to fit on (the thesis: 900)
    n_test: int = 600  # rows held out (the thesis: 600)
    split_seed: int = 0  # seed of the random fit/held-out split
    seeds: int = 10  # DE seeds (Table 5.2 reports mean and std over 10)
    lam: float = 0.001  # L2 λ of the Table 5.2 fit
    engine: str = "varpro"  # fitting engine: varpro (fast, default) or thesis
    n_jobs: int = 1  # parallel fits (joblib)
    volume_study: str = "data/measured/pytorch-cpu/ch5_volume_scaling.csv"  # perfkit collect ch5vol output; "" skips §4
    ch4_dataset: str = "data/measured/pytorch-cpu/ch4_lenet5.csv"  # Chapter 4 data to compare errors with; "" skips
    progress: bool = True  # progress bars for the fits
    figures_dir: str = ""  # folder for figures and tables (ChapterResult.save); "" means figures/

    #: the rule of each parameter (``quick`` and ``progress`` need only be bools)
    CHECKS = {
        **FIT_CHECKS,
        "dataset": existing_file("a `perfkit collect ch5` output"),
        "lam": number_at_least(0),
        "volume_study": existing_file("a `perfkit collect ch5vol` output", empty='"" to skip section 4'),
        "ch4_dataset": existing_file("a `perfkit collect ch4` output", empty='"" to skip the comparison'),
    }


def check_params(**params) -> Params:
    """The checked :class:`Params` of Chapter 5, or one :class:`~perfkit.chapters.result.ParameterError`.

    Applies :data:`Params.CHECKS` (names, types, values; :func:`~perfkit.chapters.result.make_params`),
    then reads the files: ``dataset`` must have ``target`` and at least ``n_fit + n_test`` usable rows
    (quick mode scales the split down instead), ``ch4_dataset`` enough rows for Chapter 4's default
    split, and ``volume_study`` the columns section 4 needs. Nothing is fitted.
    """
    import pandas as pd

    from ..schema import resolve
    from .ch4 import Params as Ch4Params

    p = make_params(Params, params)
    check_steps_file("dataset", p.dataset, p.target, "ch5", p.n_fit, p.n_test, p.quick)
    if p.ch4_dataset:
        ch4 = Ch4Params()
        hint = 'Chapter 4 splits it as its notebook does; give ch4_dataset="" to skip the comparison'
        check_steps_file("ch4_dataset", p.ch4_dataset, p.target, "ch4", ch4.n_fit, ch4.n_test, p.quick, rows_hint=hint)
    if p.volume_study:
        path = resolve(p.volume_study)
        try:
            columns = pd.read_csv(path, nrows=0).columns
        except ValueError as exc:  # not CSV, empty, undecodable
            raise ParameterError(f"volume_study: {show_path(path)} cannot be read as CSV ({exc}); expected a "
                                 '`perfkit collect ch5vol` output or "" to skip section 4') from None
        missing = [c for c in (p.target, *VOLUME_COLUMNS) if c not in columns]
        if missing:
            raise ParameterError(f"volume_study: {show_path(path)} has no column {missing[0]!r} (target "
                                 f"{p.target!r}); expected a `perfkit collect ch5vol` output or \"\" to skip section 4")
    return p


#: The claims of Chapter 5 and their rules, in ledger order.
CLAIMS = (
    Claim("q_batch", "batch size has almost no effect (q ≈ 0)", "Table 5.2", "|q| <= 0.1", needs=("q_batch",),
          test=lambda q: abs(q["q_batch"]) <= 0.1,
          evidence=lambda q: f"q(batch) = {fmt(q['q_batch'])} ± {fmt(q['q_batch_std'])}"),
    Claim("q_workers", "workers scale close to ideal (q ≈ −0.94)", "Tables 5.2, 5.4", "|q + 0.94| <= 0.1",
          needs=("q_workers",), test=lambda q: abs(q["q_workers"] + 0.94) <= 0.1,
          evidence=lambda q: f"q(workers) = {fmt(q['q_workers'])} ± {fmt(q['q_workers_std'])}"),
    Claim("mape_7", "the generic model's MAPE is about 7 %", "Table 5.3", "MAPE <= 10 %", needs=("mape",),
          test=lambda q: q["mape"]["DE"] <= 10, evidence=lambda q: f"MAPE DE {fmt(q['mape']['DE'])} %"),
    Claim("rf_equal", "random forest and the generic model are about equally accurate", "Table 5.3",
          "within 2 percentage points", needs=("mape",), test=lambda q: abs(q["mape"]["RF"] - q["mape"]["DE"]) <= 2,
          evidence=lambda q: f"MAPE DE {fmt(q['mape']['DE'])} % vs RF {fmt(q['mape']['RF'])} %"),
    Claim("above_ch4", "errors are higher than in Chapter 4", "§5.2", "ch5 MAPE above ch4 MAPE",
          needs=("mape", "ch4_l2_mape"), test=lambda q: q["mape"]["DE"] > q["ch4_l2_mape"],
          evidence=lambda q: f"MAPE ch5 DE+L2 {fmt(q['mape']['DE'])} % vs ch4 DE+L2 {fmt(q['ch4_l2_mape'])} %",
          missing="no Chapter 4 dataset given"),
)


def analyse(params: Params | None = None, /, **kwargs) -> ChapterResult:
    """Chapter 5 on a measured 3D-ResAttNet-18 file (and a volume study).

    ``analyse(n_fit=900, ...)`` or ``analyse(check_params(...))``; the parameters (:class:`Params`)
    are checked first (:func:`check_params`): a value that is not allowed raises one
    :class:`~perfkit.chapters.result.ParameterError` before anything is fitted.
    """
    import pandas as pd

    from ..data.measured import load_provenance, load_steps, thesis_split
    from ..data.thesis import load_thesis_table
    from ..model.baselines import compare_models, make_baseline
    from ..model.fitting import fit_repeated
    from ..model.metrics import mape
    from ..model.scaling import core_bound, scaling_power, volume_exponents
    from ..report import plots
    from ..schema import ROLES, resolve, voxels
    from . import ch4

    p = checked_params(params, kwargs, Params, check_params)
    res = ChapterResult("ch5", p)
    T, V, F, q, fits = res.tables, res.views, res.figures, res.numbers, res.fits
    data_path = resolve(p.dataset)
    label = data_path.parent.name
    roles = ROLES["ch5"]
    n_seeds = 2 if p.quick else p.seeds
    de_kw = dict(method=p.engine, maxiter=60) if p.quick else dict(method=p.engine)
    X, y, frame = load_steps(data_path, target=p.target, roles="ch5")
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=p.n_fit, n_test=p.n_test, seed=p.split_seed)
    q.update(label=label, n_rows=len(frame), n_fit=len(X_fit), n_test=len(X_test),
             volumes=sorted(set(frame["volume"])))
    res.notes.append(f"{len(frame)} successful samples ({label}, volume {', '.join(sorted(set(frame['volume'])))}); "
                     f"fit on {len(X_fit)}, held out {len(X_test)}")
    if len(frame) < p.n_fit + p.n_test:
        res.notes.append(f"quick mode: fewer samples than {p.n_fit} + {p.n_test}, so the split was scaled down")

    # §1 Table 5.2
    fit = fit_repeated(ch4.make_model("ch5", penalty="l2", lam=p.lam, **de_kw), X_fit, y_fit, seeds=n_seeds,
                       n_jobs=p.n_jobs, progress=p.progress, desc="Table 5.2: DE+L2 fits")
    fits["DE+L2"] = fit
    summary = fit.summary()
    T["table5_2"] = ch4.params_side_by_side(summary, table="5.2", label=label)
    V["table5_2"] = ch4._params_view(T["table5_2"])

    # §2 Table 5.3, Figs. 5.3-5.4
    rf = make_baseline("rf", **roles, random_state=0).fit(X_fit, y_fit)
    fits["RF"] = rf
    models = {"DE": fit.best, "RF": rf}
    comparison = compare_models(models, X_fit, y_fit, X_test, y_test, prefitted=set(models))
    t53 = load_thesis_table("5.3").set_index("method")["mean"] * 100  # the thesis prints a fraction
    table5_3 = comparison[["MAPE", "MAE", "RMSE", "R2"]].rename(columns=lambda c: f"{label}_{c}").rename_axis("method")
    table5_3["thesis_MAPE"] = t53.reindex(table5_3.index).to_numpy()
    table5_3[f"{label}_MAPE_first300"] = [mape(y_test.iloc[:300], models[k].predict(X_test.iloc[:300]))
                                          for k in table5_3.index]
    T["table5_3"] = table5_3.reset_index()
    q["mape"] = {k: float(v) for k, v in comparison["MAPE"].items()}
    q["r2"] = {k: float(v) for k, v in comparison["R2"].items()}
    q["mape_first300"] = dict(zip(table5_3.index, table5_3[f"{label}_MAPE_first300"]))
    for num, name, model in ((3, "de", fit.best), (4, "rf", rf)):
        fig, ax = plots.new_figure(figsize=(3.8, 4.2))
        plots.plot_pred_vs_measured(y_test, model.predict(X_test), ax=ax, title=f"{name.upper()} ({label}, held out)",
                                    thesis_error=f"MAPE {t53[name.upper()]:.0f} % (Table 5.3)")
        F[f"fig5_{num}_{name}_pred_vs_measured"] = fig

    # §3 Table 5.4 and the claims
    qw, qw_sd = scaling_power(summary, "workers")
    qb, qb_sd = scaling_power(summary, "batch_size")
    q.update(q_workers=qw, q_workers_std=qw_sd, q_batch=qb, q_batch_std=qb_sd)
    t54 = load_thesis_table("5.4")
    q["thesis_q_workers"] = float(t54["mean"].iloc[0])
    T["table5_4"] = pd.DataFrame([dict(source=label, q_workers=qw, q_workers_std=qw_sd, q_batch=qb, q_batch_std=qb_sd),
                                  dict(source="thesis Table 5.4", q_workers=float(t54["mean"].iloc[0]),
                                       q_workers_std=float(t54["std"].iloc[0]))])
    V["table5_4"] = ch4._scaling_view(T["table5_4"])
    if p.ch4_dataset:
        ch4_err = ch4.heldout_errors("DE+L2", quick=p.quick, dataset=p.ch4_dataset, target=p.target,
                                     n_jobs=p.n_jobs, progress=p.progress)
        q["ch4_l2_mape"] = float(ch4_err["MAPE"])
    T["claims_ch5"] = judge_all("5", f"{label}/{data_path.name}", CLAIMS, q)

    # §4 volume study (check_params made sure the file exists unless volume_study is "")
    vs_path = resolve(p.volume_study) if p.volume_study else None
    if vs_path is not None:
        vs = pd.read_csv(vs_path)
        prov = load_provenance(vs_path)
        machine, device = prov.get("machine", {}), prov.get("identity", {}).get("device", "cpu")
        table_vol = volume_exponents(vs, target=p.target)
        T["ext_volume_exponents"] = table_vol
        cores = machine.get("cores_usable") or machine.get("cores")
        q_bound = core_bound(vs["workers"].unique(), cores, device)
        q.update(q_bound=q_bound, cores=cores, volume_table=table_vol)
        fig, ax = plots.new_figure(figsize=(6.8, 3.8))
        plots.plot_volume_exponents(table_vol, ax=ax, thesis_q_workers=q["thesis_q_workers"], q_bound=q_bound,
                                    cores=cores)
        ax.set_title(f"exponents vs volume size ({vs_path.parent.name})")
        F["ext_volume_exponents"] = fig
        q["full_voxels"] = voxels("181x217x181")
    from .readings import ch5_readings

    res.readings = ch5_readings(res)
    return res
