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

import numpy as np

from ..report.claims import Claim, fmt, judge_all
from ..report.uncertainty import B
from .ch4 import (FIT_CHECKS, MIN_SEEDS, SOURCES, _ratio_text, _slowest, check_steps_file, heldout_difference,
                  level_ratio)
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
    n_jobs: int = -1  # parallel fits (joblib; -1: every core; every fit is seeded, so the results do not change)
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


def _mean_of(fit: str, column: str):
    from .ch4 import _mean, seed_statistic

    return lambda q: seed_statistic(q["seed_params"][fit], [column], _mean) if fit in q["seed_params"] else None


def _above_ch4(q):
    """MAPE of Chapter 5's generic model minus Chapter 4's L2 fit, each over its own bootstrap of held-out rows."""
    from ..report.uncertainty import METRICS, SEED, Evidence, paired_bootstrap

    a = paired_bootstrap(q["heldout"]["y"], {"DE": q["heldout"]["pred"]["DE"]}, METRICS["MAPE"])["DE"]
    b = paired_bootstrap(q["ch4_heldout"]["y"], {"DE+L2": q["ch4_heldout"]["pred"]}, METRICS["MAPE"],
                         seed=[SEED, 4])["DE+L2"]
    return Evidence.from_samples(a[0] - b[0], a[1] - b[1], f"{B} bootstrap resamples of each chapter's held-out rows")


def _mape(q, name="DE"):
    from ..report.uncertainty import METRICS, Evidence, paired_bootstrap

    est, samples = paired_bootstrap(q["heldout"]["y"], q["heldout"]["pred"], METRICS["MAPE"])[name]
    return Evidence.from_samples(est, samples, SOURCES["heldout"])


def _seeds_text(q, fit, column, label):
    e = _mean_of(fit, column)(q)
    return f"{label} = {e.text(3)}" if e is not None else f"{label}: {_SEEDS}"


_SEEDS = f"needs {MIN_SEEDS} or more seeds for a seed-to-seed interval"

#: The claims of Chapter 5 and their rules, in ledger order.
CLAIMS = (
    Claim("q_batch", "batch size has almost no effect (q ≈ 0)", "§5.2.1, Table 5.2",
          "−0.1 <= mean q(batch) over seeds <= 0.1", needs=("seed_params",),
          quantity=_mean_of("DE+L2", "q[batch_size]"), side="in", threshold=(-0.1, 0.1),
          evidence=lambda q: _seeds_text(q, "DE+L2", "q[batch_size]", "q(batch)") + " (thesis −0.03 ± 0.002)",
          missing=_SEEDS),
    Claim("q_workers", "workers scale close to ideal (q ≈ −0.94)", "§5.2.2, Tables 5.2, 5.4",
          "−1.04 <= mean q(workers) over seeds <= −0.84", needs=("seed_params",),
          quantity=_mean_of("DE+L2", "q[workers]"), side="in", threshold=(-1.04, -0.84),
          evidence=lambda q: _seeds_text(q, "DE+L2", "q[workers]", "q(workers)") + " (thesis −0.94 ± 0.02)",
          missing=_SEEDS),
    Claim("lr_power", "the learning rate's power is close to zero", "§5.2.1, Table 5.2",
          "−0.1 <= mean p(learning rate) over seeds <= 0.1", needs=("seed_params",),
          quantity=_mean_of("DE+L2", "p[learning_rate]"), side="in", threshold=(-0.1, 0.1),
          evidence=lambda q: _seeds_text(q, "DE+L2", "p[learning_rate]", "p(learning rate)")
                             + " (thesis −0.04 ± 0.002)",
          missing=_SEEDS),
    Claim("sigmoid_slowest", "Sigmoid takes more time than ReLU and Tanh", "§5.2.1, Table 5.2",
          "time with sigmoid / with relu and / with tanh, other hyperparameters fixed, > 1 (the smaller ratio)",
          needs=("effects",), quantity=lambda q: _slowest(q, "activation", "sigmoid", ("relu", "tanh")), side=">",
          threshold=1.0,
          evidence=lambda q: "; ".join(_ratio_text(q, "activation", "sigmoid", o) for o in ("relu", "tanh"))),
    Claim("adam_over_sgd", "Adam takes more time than SGD", "§5.2.1, Table 5.2",
          "time with Adam / with SGD, other hyperparameters fixed, > 1", needs=("effects",),
          quantity=lambda q: level_ratio(q["effects"], "optimizer", "adam", "sgd"), side=">", threshold=1.0,
          evidence=lambda q: _ratio_text(q, "optimizer", "adam", "sgd")),
    Claim("mape_7", "the generic model's MAPE is about 7 %", "§5.3, Table 5.3", "MAPE < 10 %", needs=("heldout",),
          quantity=_mape, side="<", threshold=10.0, evidence=lambda q: f"MAPE DE {_mape(q).text(3)} %"),
    Claim("rf_equal", "random forest and the generic model are about equally accurate", "§5.2.2, Table 5.3",
          "−2 <= MAPE(DE) − MAPE(RF) <= 2 percentage points", needs=("heldout",),
          quantity=lambda q: heldout_difference(q, "DE", "RF"), side="in", threshold=(-2.0, 2.0),
          evidence=lambda q: f"MAPE DE {_mape(q).text(3)} % vs RF {_mape(q, 'RF').text(3)} %"),
    Claim("above_ch4", "errors are higher than in Chapter 4", "§5.3",
          "MAPE(ch5 DE+L2) − MAPE(ch4 DE+L2) > 0", needs=("heldout", "ch4_heldout"), quantity=_above_ch4, side=">",
          threshold=0.0, evidence=lambda q: f"MAPE ch5 − ch4 {_above_ch4(q).text(3)} points "
                                            f"(ch5 {fmt(_mape(q).estimate)} %, ch4 {fmt(q.get('ch4_l2_mape'))} %)",
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
    from ..data.thesis import figure_stem, framework_name, load_thesis_table
    from ..model.baselines import compare_models, make_baseline
    from ..model.fitting import fit_repeated
    from ..model.metrics import mape
    from ..model.scaling import core_bound, level_effects, scaling_power, volume_exponents
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
    q["heldout"] = {"y": np.asarray(y_test, dtype=float),
                    "pred": {k: np.asarray(m.predict(X_test), dtype=float) for k, m in models.items()}}
    q["r2"] = {k: float(v) for k, v in comparison["R2"].items()}
    q["mape_first300"] = dict(zip(table5_3.index, table5_3[f"{label}_MAPE_first300"]))
    # the thesis's numbers for the measured framework (THESIS_FIGURES: PyTorch's are 5.3 and 5.4)
    framework = framework_name(frame["framework"].iloc[0] if "framework" in frame.columns else label.split("-")[0])
    for name, model in (("de", fit.best), ("rf", rf)):
        fig, ax = plots.new_figure(figsize=(3.8, 4.2))
        plots.plot_pred_vs_measured(y_test, model.predict(X_test), ax=ax,
                                    title=f"{name.upper()} ({framework}, {label}, held out)",
                                    thesis_error=f"MAPE {t53[name.upper()]:.0f} % (Table 5.3, PyTorch)")
        F[figure_stem("ch5", f"{name}_pred_vs_measured", framework)] = fig

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
        y4, pred4 = ch4.heldout_predictions("DE+L2", quick=p.quick, dataset=p.ch4_dataset, target=p.target,
                                            n_jobs=p.n_jobs, progress=p.progress)
        q["ch4_l2_mape"] = float(ch4.error_row(y4, pred4)["MAPE"])
        q["ch4_heldout"] = {"y": y4, "pred": pred4}
    q["seed_params"] = {"DE+L2": fit.params}
    q["effects"] = level_effects(frame, p.target, [c for r in roles.values() for c in r])
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
