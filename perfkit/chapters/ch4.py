"""Chapter 4: the generic performance model on measured LeNet-5 training times.

:func:`analyse` fits the generic model (eq. 4.4, :class:`perfkit.model.GenericPerformanceModel`)
to a ``perfkit collect ch4`` file split as the thesis split it, and computes

1. the measured dataset (what the sampler rejected, epoch times by workers);
2. Table 4.2 and Figs. 4.3-4.5: fits without regularisation, 10 seeds;
3. Table 4.3 and Figs. 4.6-4.8: L2, λ = 1e-3;
4. Table 4.4: L1 against L2;
5. Table 4.5, journal Table 6 and conference Table II: the scaling power of workers;
6. Figs. 4.9-4.14, journal Table 5 and conference Table I: random forest and SVR;
7. Figs. 4.15-4.17: R² and coefficients against λ;
8. the claims ledger (:data:`CLAIMS`).

Figures the thesis draws once per framework carry the number of the measured framework
(:data:`perfkit.data.thesis.THESIS_FIGURES`: PyTorch data gives ``fig4_5_de_pred_vs_measured``,
TensorFlow data ``fig4_3_…``); ``ChapterResult.figures_of(slug)`` finds them whatever the number.

The notebook ``notebooks/ch4_generic_model.ipynb`` calls :func:`analyse`, shows its
tables and figures and explains them. Chapter 5 reuses :func:`heldout_errors`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..report.claims import Claim, fmt, judge_all
from ..report.uncertainty import B
from ..schema import ROLES, THESIS_EXTRINSIC
from .result import (ChapterResult, Check, ParameterError, ParamsBase, at_least, checked_params, existing_file,
                     existing_files, grid, make_params, number_at_least, one_of, output_folder, show_path)

__all__ = ["Params", "check_params", "check_steps_file", "analyse", "CLAIMS", "make_model", "params_side_by_side",
           "error_row", "thesis_mape", "heldout_errors", "heldout_predictions", "level_ratio", "r2_drop",
           "seed_statistic", "framework_powers", "claims_by_framework", "FRAMEWORK_DATASETS", "FRAMEWORK_KEYS"]

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


#: the other frameworks' Chapter 4 files measured here, fitted beside ``dataset`` (same sampler and seed)
FRAMEWORK_DATASETS = tuple(f"data/measured/{fw}-cpu/ch4_lenet5.csv" for fw in ("tensorflow", "mxnet", "chainer", "jax"))
#: kinds of parameter of the λ sweep left out of the saved ``lambda_sweep.csv`` (see :func:`analyse`, §7):
#: the coefficients a, the categorical constants κ (``k``) and C
SWEEP_COEFFICIENT_KINDS = ("a", "k", "C")

#: fewest usable rows of a framework's file (its split is scaled down in proportion below n_fit + n_test)
MIN_FRAMEWORK_ROWS = 60


@dataclass(frozen=True)
class Params(ParamsBase):
    """Parameters of Chapter 4 (the notebook's ``parameters`` cell); :data:`Params.CHECKS` are their rules."""

    quick: bool = False  # small budgets for tests: fewer seeds, a short λ grid, few DE generations
    dataset: str = "data/measured/pytorch-cpu/ch4_lenet5.csv"  # perfkit collect ch4 output
    framework_datasets: tuple = FRAMEWORK_DATASETS  # other frameworks' ch4 files (same sampler and seed); () for one
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
    n_jobs: int = -1  # parallel fits (joblib; -1: every core; every fit is seeded, so the results do not change)
    progress: bool = True  # progress bars for the fits and the sweep
    figures_dir: str = ""  # folder for figures and tables (ChapterResult.save); "" means figures/

    #: the rule of each parameter (``quick`` and ``progress`` need only be bools)
    CHECKS = {
        **FIT_CHECKS,
        "dataset": existing_file("a `perfkit collect ch4` output"),
        "framework_datasets": existing_files("`perfkit collect ch4`"),
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
    exceed its usable rows (quick mode scales the split down instead). Every file of
    ``framework_datasets`` must be a ch4 file with the target and at least
    :data:`MIN_FRAMEWORK_ROWS` usable rows; a shorter one (a partial collection) is split in
    the proportion n_fit : n_test. Nothing is fitted.
    """
    p = make_params(Params, params)
    check_steps_file("dataset", p.dataset, p.target, "ch4", p.n_fit, p.n_test, p.quick)
    for item in p.framework_datasets:
        n = check_steps_file("framework_datasets", item, p.target, "ch4", p.n_fit, p.n_test, quick=True)
        if n < MIN_FRAMEWORK_ROWS and not p.quick:
            raise ParameterError(f"framework_datasets: {item} has {n} usable rows (status ok); a framework's file "
                                 f"needs at least {MIN_FRAMEWORK_ROWS} (its split is scaled down in proportion)")
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


def thesis_mape(method: str, table: str = "journal5", framework: str | None = None) -> str:
    """The thesis's published MAPE of ``method`` per framework, as figure text (``"TensorFlow 5 %, …"``);
    ``framework`` keeps that framework's only, where the table has it."""
    from ..data.thesis import framework_name, load_thesis_table

    t = load_thesis_table(table)
    t = t[(t["metric"] == "MAPE") & (t["method"] == method)]
    if framework is not None and (t["framework"] == framework_name(framework)).any():
        t = t[t["framework"] == framework_name(framework)]
    return ", ".join(f"{r.framework} {r.mean:g} %" for r in t.itertuples())


def heldout_errors(fit_name: str = "DE+L2", **params) -> dict:
    """Held-out errors (:func:`error_row`) of one Chapter 4 fit, without the rest of the chapter.

    Chapter 5 compares its errors with Chapter 4's through this function: the same
    data, split, seeds and engine as :func:`analyse` give the same numbers.
    """
    return error_row(*heldout_predictions(fit_name, **params))


def heldout_predictions(fit_name: str = "DE+L2", **params):
    """``(y_test, predictions)`` of one Chapter 4 fit on its held-out rows (as :func:`heldout_errors`), as arrays."""
    from ..data.measured import load_steps, thesis_split
    from ..model.fitting import fit_repeated
    from ..schema import resolve

    fits = ("DE", "DE+L1", "DE+L2")
    if fit_name not in fits:
        raise ParameterError(f"fit_name: got {fit_name!r}; expected one of {', '.join(map(repr, fits))}")
    p = check_params(**{"framework_datasets": (), **params})  # one file: the other frameworks' are not read
    penalty, lam = {"DE": (None, 0.0), "DE+L1": ("l1", p.lam_l1), "DE+L2": ("l2", p.lam_l2)}[fit_name]
    X, y, _ = load_steps(resolve(p.dataset), target=p.target)
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=p.n_fit, n_test=p.n_test, seed=p.split_seed)
    kw = dict(penalty=penalty, lam=lam) if penalty else {}
    fit = fit_repeated(make_model(**kw, **p.de_kw), X_fit, y_fit, seeds=p.n_seeds, n_jobs=p.n_jobs,
                       progress=p.progress, desc=f"Chapter 4 {fit_name} fits")
    return np.asarray(y_test, dtype=float), np.asarray(fit.best.predict(X_test), dtype=float)


# ------------------------------------------------------------------------------------------- claims
_B = f"{B} bootstrap resamples"
#: where the resamples of each kind of quantity come from (the ledger's ``resampling`` column)
SOURCES = {
    "heldout": f"{_B} of the held-out rows, the same rows for every model (paired)",
    "heldout_fw": f"{_B} of each framework's held-out rows, the same row positions in every framework (paired where "
                  "the files hold the same configurations)",
    "seeds": f"{_B} of the fit's seeds",
    "sweep": f"{_B} of the seeds at each λ",
    "effects": f"{B} draws from the normal approximation (HC3 covariance) of an OLS fit of log time on every "
               "hyperparameter as a category, over all measured rows",
    "power": f"{B} draws from the normal approximation (HC3 covariance) of an OLS fit of log time on log workers, "
             "log batch size and every other hyperparameter as a category, per framework",
    "printed": f"printed numbers, each drawn {B} times uniformly within ±½ unit of its last digit",
    "exact": "none: printed numbers compared beyond their rounding (exact)",
}
#: fewest seeds a seed-to-seed interval is computed from (two seeds give a degenerate bootstrap)
MIN_SEEDS = 3
#: what §4.3.5 and §4.4 rank: these frameworks scale better than TensorFlow
BETTER_THAN_TF = ("MXNet", "PyTorch")


def heldout_metric(q, metric: str = "MAPE") -> dict:
    """``{model: (estimate, samples)}`` of a held-out ``metric`` over the paired bootstrap of ``q["heldout"]``."""
    from ..report.uncertainty import METRICS, paired_bootstrap

    h = q["heldout"]
    return paired_bootstrap(h["y"], h["pred"], METRICS[metric])


def heldout_difference(q, a: str, b: str, metric: str = "MAPE", ratio: bool = False):
    """``metric(a) − metric(b)`` (or their ratio) on the same resampled held-out rows, as :class:`Evidence`."""
    from ..report.uncertainty import Evidence

    m = heldout_metric(q, metric)
    if a not in m or b not in m:
        return None
    (ea, sa), (eb, sb) = m[a], m[b]
    if ratio:
        with np.errstate(divide="ignore", invalid="ignore"):
            return Evidence.from_samples(ea / eb, sa / sb, SOURCES["heldout"])
    return Evidence.from_samples(ea - eb, sa - sb, SOURCES["heldout"])


def _l2_over_l1(q):
    from ..report.uncertainty import Evidence

    parts = [heldout_difference(q, "DE+L2", "DE+L1", m, ratio=True) for m in ("MAPE", "MSE", "RMSE")]
    return None if None in parts else Evidence.combine(np.max, parts)


def _svr_margin(q):
    from ..report.uncertainty import Evidence

    m = heldout_metric(q, "MAPE")
    if "SVR" not in m or len(m) < 2:
        return None
    others = [k for k in ("DE", "DE+L2", "RF") if k in m]
    est = m["SVR"][0] - max(m[k][0] for k in others)
    samples = m["SVR"][1] - np.max(np.vstack([m[k][1] for k in others]), axis=0)
    return Evidence.from_samples(est, samples, SOURCES["heldout"])


def seed_statistic(params, columns, stat, seed=None):
    """``stat(values, axis)`` of the per-seed ``params`` (a :attr:`RepeatedFit.params` table) over ``columns``,
    with its bootstrap over seeds; None with fewer than :data:`MIN_SEEDS` seeds or no such column."""
    from ..report.uncertainty import SEED, Evidence, seed_bootstrap

    cols = [c for c in columns if c in params.columns]
    if len(params) < MIN_SEEDS or not cols:
        return None
    est, samples = seed_bootstrap(params[cols].to_numpy(dtype=float), stat, seed=SEED if seed is None else seed)
    return Evidence.from_samples(est, samples, SOURCES["seeds"])


def _cols(params, prefix):
    return [c for c in params.columns if any(c.startswith(pfx) for pfx in prefix)]


def _resolution(v, axis):
    """:func:`~perfkit.model.fitting.spread_resolution` of the mean over seeds along ``axis``."""
    from ..model.fitting import spread_resolution

    return spread_resolution(v.mean(axis=axis))


def _sd(v, axis):
    """Std over seeds, at least the :func:`_resolution` (so a ratio of two spreads is not a ratio of two
    tolerances, and it moves continuously when a spread crosses the resolution)."""
    return np.maximum(v.std(axis=axis, ddof=1), _resolution(v, axis))


#: parameter values below this (in seconds of epoch time per unit) are zero for the seed statistics: a C of
#: 1e-40 on one seed and 1e-23 on another is 0 on both, not a coefficient of variation of 3
ZERO = 1e-9


def _cv(v, axis):
    """Coefficient of variation over seeds, its std at least the :func:`_resolution`; 0 where every seed
    gives exactly 0 (a switched-off term)."""
    v = np.where(np.abs(v) < ZERO, 0.0, v)
    mean = np.abs(v.mean(axis=axis))
    sd = v.std(axis=axis, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((sd == 0) & (mean == 0), 0.0, np.maximum(sd, _resolution(v, axis)) / mean)


def _max_sd(v, axis):
    return _sd(v, axis).max(axis=-1)


def _median_cv(v, axis):
    return np.nanmedian(_cv(v, axis), axis=-1)


def _median_sd(v, axis):
    return np.median(_sd(v, axis), axis=-1)


def _mean(v, axis):
    return v.mean(axis=axis)[..., 0]


def _stat(q, fit, columns, stat):
    pp = q["seed_params"].get(fit)
    if pp is None:
        return None
    return seed_statistic(pp, columns if isinstance(columns, list) else _cols(pp, columns), stat)


def _power_floor(pp) -> float:
    """One resolution for every power of a fit: :attr:`RepeatedFit.SPREAD_RESOLUTION` × the largest mean |p| or
    |q| (at least 1). A per-power floor (:func:`_resolution`) would make the ratio of two spreads that are both
    below it a ratio of two tolerances (p near 3 against q near 0.4: "3 times more variable" where neither varies)."""
    from ..model.fitting import spread_resolution

    cols = _cols(pp, ("p[", "q["))
    return float(spread_resolution(pp[cols].mean().abs().max()))


def _powers_spread(q, prefix, reduce):
    """``reduce`` over the powers of ``prefix`` of their std over seeds (no regularisation), each at least
    :func:`_power_floor`, with its bootstrap over seeds; None without seed parameters."""
    pp = q["seed_params"].get("DE")
    if pp is None or len(pp) < MIN_SEEDS:
        return None
    floor = _power_floor(pp)
    return seed_statistic(pp, _cols(pp, prefix),
                          lambda v, axis: reduce(np.maximum(v.std(axis=axis, ddof=1), floor), axis=-1))


def _intrinsic_vary(q):
    from ..report.uncertainty import Evidence

    p_sd, q_sd = _powers_spread(q, ("p[",), np.median), _powers_spread(q, ("q[",), np.max)
    if p_sd is None or q_sd is None:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        return Evidence.combine(lambda a, axis: a[0] / a[1], [p_sd, q_sd])


def _l2_spread(q):
    """Per resample, the larger of two ratios L2 / no regularisation: median relative spread of the coefficients
    a (and categorical constants k), and median spread of the powers p, over seeds."""
    from ..report.uncertainty import SEED, Evidence

    de, l2 = q["seed_params"].get("DE"), q["seed_params"].get("DE+L2")
    if de is None or l2 is None or len(de) < MIN_SEEDS or len(l2) < MIN_SEEDS:
        return None
    ratios = []
    for prefix, stat in ((("a[", "k["), _median_cv), (("p[",), _median_sd)):
        a = seed_statistic(l2, _cols(l2, prefix), stat, seed=[SEED, 1])
        b = seed_statistic(de, _cols(de, prefix), stat)
        if a is None or b is None:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios.append(Evidence.combine(lambda x, axis: x[0] / x[1], [a, b]))
    return Evidence.combine(np.max, ratios)


def level_ratio(effects, factor: str, level: str, reference: str, seed=None):
    """Time at ``factor=level`` over time at ``factor=reference``, other hyperparameters fixed, as :class:`Evidence`.

    ``effects`` is ``(params, cov, levels)`` of :func:`perfkit.model.scaling.level_effects`; the draws come
    from the coefficients' normal approximation (``seed``: another seed for independent draws, e.g. one per
    framework). None when a level was not measured.
    """
    from ..report.uncertainty import SEED, Evidence, normal_draws

    params, cov, levels = effects
    names = list(params.index)
    if level not in levels.get(factor, ()) or reference not in levels.get(factor, ()):
        return None
    w = np.zeros(len(names))
    for lv, sign in ((level, 1.0), (reference, -1.0)):
        if f"{factor}={lv}" in names:  # the reference level has no column (β = 0)
            w[names.index(f"{factor}={lv}")] += sign
    draws = normal_draws(params.to_numpy(), cov.to_numpy(), seed=SEED if seed is None else seed)
    return Evidence.from_samples(float(np.exp(w @ params.to_numpy())), np.exp(draws @ w), SOURCES["effects"])


def _ratio_text(q, factor, level, reference) -> str:
    e = level_ratio(q["effects"], factor, level, reference)
    if e is None:
        return f"{level} or {reference} not measured"
    return f"time with {level} / with {reference}: {e.text(3)}"


def _slowest(q, factor, level, others):
    from ..report.uncertainty import Evidence

    parts = [level_ratio(q["effects"], factor, level, o) for o in others]
    return None if None in parts else Evidence.combine(np.min, parts)


def framework_powers(frame, target: str, roles) -> dict:
    """``{framework: Evidence}``: q(workers) of each framework of a measured file (OLS of log time), ``{}`` for one."""
    from ..model.scaling import level_effects
    from ..report.uncertainty import SEED, Evidence, normal_draws

    if "framework" not in frame.columns or frame["framework"].nunique() < 2:
        return {}
    factors = [c for r in roles.values() for c in r]
    out = {}
    for k, (fw, sub) in enumerate(frame.groupby("framework", sort=True)):
        params, cov, _ = level_effects(sub, target, factors, log_columns=("workers", "batch_size"))
        i = list(params.index).index("log(workers)")
        draws = normal_draws(params.to_numpy(), cov.to_numpy(), seed=[SEED, k])[:, i]  # independent per framework
        out[str(fw)] = Evidence.from_samples(float(params.iloc[i]), draws, SOURCES["power"])
    return out


def _ranking(q):
    from ..report.uncertainty import Evidence

    by = {str(fw).lower(): e for fw, e in q["framework_q"].items()}
    tf = by.get("tensorflow")
    others = [by[b.lower()] for b in BETTER_THAN_TF if b.lower() in by]
    if tf is None or not others:
        return None
    return Evidence.combine(np.min, [Evidence.combine(lambda a, axis: a[0] - a[1], [tf, o]) for o in others])


def _worst(key, side):
    from ..report.claims import worst

    return lambda q: worst(q[key], side)


def _off(cells, side, threshold) -> str:
    bad = [f"{'/'.join(map(str, c)) if isinstance(c, tuple) else c}: {fmt(e.estimate)}" for c, e in cells.items()
           if (e.estimate >= threshold if side == "<" else e.estimate <= threshold)]
    return "; ".join(bad) or "none"


def _metric_text(q, names=("DE", "DE+L2", "RF", "SVR"), metric="MAPE", unit=" %") -> str:
    from ..report.uncertainty import fmt_interval, percentile_interval

    m = heldout_metric(q, metric)
    return ", ".join(f"{k} {fmt(m[k][0])}{unit} {fmt_interval(*percentile_interval(m[k][1]))}" for k in names if k in m)


def _seed_std(v) -> float:
    """Std over seeds of one parameter as the ledger prints it: 0 at or below the fits' :func:`_resolution` (seeds
    that reach one optimum differ there by the refinement's tolerance, differently on each CPU), values below
    :data:`ZERO` counted as 0."""
    from ..model.fitting import resolved_std

    v = np.where(np.abs(np.asarray(v, dtype=float)) < ZERO, 0.0, np.asarray(v, dtype=float))
    return float(resolved_std(v.std(ddof=1) if len(v) > 1 else 0.0, v.mean()))


def _seed_mean(v) -> float:
    v = np.asarray(v, dtype=float)
    return float(np.where(np.abs(v) < ZERO, 0.0, v).mean())


def _spread_text(q, column, label) -> str:
    v = q["seed_params"]["DE"][column]
    return f"{label} = {fmt(_seed_mean(v))} ± {fmt(_seed_std(v))} over {len(v)} seeds"


def _l2_spread_text(q) -> str:
    parts = []
    for what, prefix, stat in (("median relative std of a", ("a[", "k["), _median_cv),
                               ("median std of p", ("p[",), _median_sd)):
        parts.append(f"{what}: no reg. {fmt(_stat(q, 'DE', prefix, stat).estimate)}, "
                     f"L2 {fmt(_stat(q, 'DE+L2', prefix, stat).estimate)}")
    return "; ".join(parts)


def _pairs_text(pairs, unit: str = "") -> str:
    return "; ".join(f"{fw}: {a:g}{unit} vs {b:g}{unit}" for fw, (a, b) in pairs.items())


#: the thesis's L2 fit is most accurate on this framework (Table 4.4: MXNet 7 %, TensorFlow 10 %, PyTorch 27 %)
MOST_ACCURATE = "MXNet"
#: Adam costs more than SGD in these frameworks and less in MXNet (§4.3.1-4.3.2, Table 4.2)
ADAM_DEARER = ("PyTorch", "TensorFlow")


def _most_accurate(q):
    """Per resample, the smallest margin MAPE(other) − MAPE(MXNet) of the L2 fit over the thesis's other frameworks."""
    from ..report.uncertainty import Evidence

    m = q["framework_mape"]
    others = [m[fw] for fw in ("TensorFlow", "PyTorch") if fw in m]
    if MOST_ACCURATE not in m or not others:
        return None
    return Evidence.combine(np.min, [Evidence.combine(lambda a, axis: a[0] - a[1], [o, m[MOST_ACCURATE]])
                                     for o in others])


def _most_accurate_text(q) -> str:
    return "held-out MAPE of the L2 fit: " + "; ".join(f"{fw} {e.text(3)} %" for fw, e in q["framework_mape"].items())


def _adam_direction(q):
    """Per resample, the smallest of log(Adam / SGD) in PyTorch and TensorFlow and log(SGD / Adam) in MXNet."""
    from ..report.uncertainty import SEED, Evidence

    eff = q["framework_effects"]
    parts = []
    for k, fw in enumerate(sorted(eff)):
        if fw in ADAM_DEARER or fw == "MXNet":
            r = level_ratio(eff[fw], "optimizer", "adam", "sgd", seed=[SEED, k])
            if r is None:
                return None
            sign = 1.0 if fw in ADAM_DEARER else -1.0
            parts.append(Evidence.combine(lambda a, axis, s=sign: s * np.log(a[0]), [r]))
    if "MXNet" not in eff or not set(ADAM_DEARER) & set(eff):
        return None
    return Evidence.combine(np.min, parts)


def _adam_text(q) -> str:
    eff = q["framework_effects"]
    return "time with adam / with sgd: " + "; ".join(
        f"{fw} {level_ratio(eff[fw], 'optimizer', 'adam', 'sgd').text(3)}" for fw in sorted(eff))


_SEEDS = f"needs {MIN_SEEDS} or more seeds for a seed-to-seed interval"
_ONE_FW = "cannot be tested: one framework measured (framework_datasets)"
_T5 = "journal Table 5 (data/thesis/journal_table5.csv)"
#: the claims about frameworks, judged once on every framework's data (the others are judged per framework)
FRAMEWORK_KEYS = ("framework_ranking", "fw_mxnet_most_accurate", "fw_adam_direction")

#: The claims of Chapter 4 and their rules, in ledger order: measured claims, then claims about the published tables.
CLAIMS = (
    Claim("l2_beats_l1", "L2 beats L1 on MAPE, MSE and RMSE", "§4.3.4, Table 4.4",
          "L2 / L1 < 1 for MAPE, MSE and RMSE (the largest ratio), both at lambda {lam_l2:g} / {lam_l1:g}",
          needs=("heldout",), quantity=_l2_over_l1, side="<", threshold=1.0,
          evidence=lambda q: "; ".join(f"{m}: L2 / L1 {heldout_difference(q, 'DE+L2', 'DE+L1', m, ratio=True).text(3)}"
                                       for m in ("MAPE", "MSE", "RMSE"))),
    Claim("r2_falls", "R² falls once λ exceeds 1e-3", "§4.3.4, Figure 4.15",
          "R² at the grid's λ <= 1e-3 nearest to it minus mean R² at the grid's λ in (1e-3, 1e-2] > 0, "
          "for L1 and L2 (the smaller drop)", needs=("sweep_r2",), quantity=lambda q: r2_drop(q["sweep_r2"]), side=">",
          threshold=0.0,
          evidence=lambda q: r2_drop_text(q["sweep_r2"]),
          missing=f"the λ grid does not straddle 1e-3, or fewer than {MIN_SEEDS} seeds per λ"),
    Claim("stable_q", "the extrinsic powers q are stable across seeds", "§4.3.1, Table 4.2",
          "largest std of q over seeds (no regularisation) <= 0.1", needs=("seed_params",),
          quantity=lambda q: _stat(q, "DE", ("q[",), _max_sd), side="<", threshold=0.1,
          evidence=lambda q: "std over seeds: " + "; ".join(
              f"{c}: {fmt(_seed_std(q['seed_params']['DE'][c]))}" for c in _cols(q["seed_params"]["DE"], ("q[",))),
          missing=_SEEDS),
    Claim("stable_C", "the constant C is stable across seeds", "§4.3.1, Table 4.2",
          "coefficient of variation of C over seeds (no regularisation) <= 0.1", needs=("seed_params",),
          quantity=lambda q: _stat(q, "DE", ["C"], lambda v, axis: _cv(v, axis)[..., 0]), side="<", threshold=0.1,
          evidence=lambda q: _spread_text(q, "C", "C"), missing=_SEEDS),
    Claim("intrinsic_vary", "the intrinsic parameters vary more across seeds than the extrinsic ones",
          "§4.3.1, Table 4.2",
          "median std of the intrinsic powers p / largest std of the extrinsic powers q > 1", needs=("seed_params",),
          quantity=_intrinsic_vary, side=">", threshold=1.0,
          evidence=lambda q: (f"median std of p {fmt(_powers_spread(q, ('p[',), np.median).estimate)} vs largest "
                              f"std of q {fmt(_powers_spread(q, ('q[',), np.max).estimate)} (each at least "
                              f"{fmt(_power_floor(q['seed_params']['DE']))}, the fits' resolution)"),
          missing=_SEEDS),
    Claim("l2_reduces_variance", "L2 reduces the seed-to-seed variance of the intrinsic parameters",
          "§4.3.2, §4.3.4, §4.4; Tables 4.2 vs 4.3",
          "L2 / no regularisation < 1 for the median relative std of a and for the median std of p (the larger ratio)",
          needs=("seed_params",), quantity=_l2_spread, side="<", threshold=1.0,
          evidence=_l2_spread_text, missing=_SEEDS),
    Claim("q_workers", "q of workers is close to −1 (good scaling)", "§4.3.5, Table 4.5",
          "−1.15 <= mean q(workers) over seeds <= −0.85", needs=("seed_params",),
          quantity=lambda q: _stat(q, "DE", ["q[workers]"], _mean), side="in", threshold=(-1.15, -0.85),
          evidence=lambda q: f"q(workers) = {_stat(q, 'DE', ['q[workers]'], _mean).text(3)}", missing=_SEEDS),
    Claim("q_batch", "larger batches shorten the time (negative q of batch size)", "§4.3.2, Tables 4.2–4.3",
          "mean q(batch) over seeds < 0", needs=("seed_params",),
          quantity=lambda q: _stat(q, "DE", ["q[batch_size]"], _mean), side="<", threshold=0.0,
          evidence=lambda q: f"q(batch) = {_stat(q, 'DE', ['q[batch_size]'], _mean).text(3)} (thesis −0.87 to "
                             "−1.35)",
          missing=_SEEDS),
    Claim("rf_slightly_better", "random forest is slightly more accurate than the generic model (DE)",
          "§4.3.3, journal Table 5", "0 <= MAPE(DE) − MAPE(RF) <= 5 percentage points", needs=("heldout",),
          quantity=lambda q: heldout_difference(q, "DE", "RF"), side="in", threshold=(0.0, 5.0),
          evidence=lambda q: f"MAPE DE − RF {heldout_difference(q, 'DE', 'RF').text(3)} points; " + _metric_text(q)),
    Claim("svr_worst", "SVR fits worst", "§4.3.3, journal Table 5",
          "MAPE(SVR) − the highest MAPE of the other models > 0", needs=("heldout",), quantity=_svr_margin, side=">",
          threshold=0.0, evidence=lambda q: "MAPE " + _metric_text(q)),
    Claim("adam_over_sgd", "Adam takes more time than SGD (PyTorch, TensorFlow; MXNet the other way)",
          "§4.3.1, §4.3.2, Table 4.2", "time with Adam / with SGD, other hyperparameters fixed, > 1",
          needs=("effects",), quantity=lambda q: level_ratio(q["effects"], "optimizer", "adam", "sgd"), side=">",
          threshold=1.0, evidence=lambda q: _ratio_text(q, "optimizer", "adam", "sgd")),
    Claim("same_over_valid", "'same' padding takes more time than 'valid'", "§4.3.1, Table 4.2",
          "time with same / with valid padding, other hyperparameters fixed, > 1", needs=("effects",),
          quantity=lambda q: level_ratio(q["effects"], "padding", "same", "valid"), side=">", threshold=1.0,
          evidence=lambda q: _ratio_text(q, "padding", "same", "valid")),
    Claim("framework_ranking", "MXNet and PyTorch scale better than TensorFlow", "§4.3.5, §4.4, Table 4.5",
          "q(workers) of TensorFlow minus q(workers) of MXNet and PyTorch > 0 (the smaller margin)",
          needs=("framework_q",), quantity=_ranking, side=">", threshold=0.0,
          evidence=lambda q: "q(workers): " + "; ".join(f"{fw} {e.text(3)}" for fw, e in q["framework_q"].items()),
          missing="cannot be tested: one framework measured (the ranking needs TensorFlow and MXNet or PyTorch)"),
    Claim("fw_mxnet_most_accurate", "the generic model (L2) predicts MXNet most accurately", "§4.3.4, Table 4.4",
          "MAPE of the L2 fit of TensorFlow and PyTorch minus MXNet's > 0 (the smaller margin, percentage points)",
          needs=("framework_mape",), quantity=_most_accurate, side=">", threshold=0.0, evidence=_most_accurate_text,
          missing=_ONE_FW + "; needs MXNet and TensorFlow or PyTorch"),
    Claim("fw_adam_direction", "Adam takes more time than SGD in PyTorch and TensorFlow, less in MXNet",
          "§4.3.1, §4.3.2, Table 4.2",
          "log(time with Adam / with SGD) > 0 in PyTorch and TensorFlow and < 0 in MXNet, other hyperparameters fixed "
          "(the smallest margin)", needs=("framework_effects",), quantity=_adam_direction, side=">", threshold=0.0,
          evidence=_adam_text, missing=_ONE_FW + "; needs MXNet and PyTorch or TensorFlow"),
    Claim("published_a_bounds", "published: every fitted a lies in the bounds [0, 1000]",
          "§4.1.1 bounds, Tables 4.2–4.3",
          "smallest distance of a printed a inside [0, 1000] > 0", needs=("published_a",),
          quantity=_worst("published_a", ">"), side=">", threshold=0.0,
          evidence=lambda q: "outside: " + _off(q["published_a"], ">", 0.0),
          data="thesis Tables 4.2, 4.3 (data/thesis/table4_2.csv, table4_3.csv)"),
    Claim("published_44_vs_j5", "published: thesis Table 4.4 and journal Table 5 agree on the MAPE of the L2 fits",
          "Table 4.4 vs journal Table 5", "largest |difference| beyond the rounding of both < 0",
          needs=("published_44_vs_j5",), quantity=_worst("published_44_vs_j5", "<"), side="<", threshold=0.0,
          evidence=lambda q: _pairs_text(q["published_44_vs_j5_values"], " %"),
          data="thesis Table 4.4, journal Table 5 (data/thesis/)"),
    Claim("published_45_vs_43", "published: Table 4.5 repeats the q of GPUs of Table 4.3",
          "§4.3.5, Table 4.5 vs Table 4.3",
          "largest |difference| beyond the rounding of both < 0", needs=("published_45_vs_43",),
          quantity=_worst("published_45_vs_43", "<"), side="<", threshold=0.0,
          evidence=lambda q: _pairs_text(q["published_45_vs_43_values"]),
          data="thesis Tables 4.3, 4.5 (data/thesis/)"),
    Claim("published_rf_beats_de", "published: random forest beats DE in every framework", "§4.3.3, journal Table 5",
          "largest MAPE(RF) − MAPE(DE) over frameworks < 0", needs=("published_rf_vs_de",),
          quantity=_worst("published_rf_vs_de", "<"), side="<", threshold=0.0,
          evidence=lambda q: "RF − DE MAPE (points): " + "; ".join(f"{fw} {fmt(e.estimate)}"
                                                                   for fw, e in q["published_rf_vs_de"].items()),
          data=_T5),
)


def r2_drop(sweep_r2: dict):
    """R² at or just below λ = 1e-3 minus the mean R² just above it, the smaller over penalties (:class:`Evidence`).

    ``sweep_r2`` is ``{penalty: {λ: per-seed held-out R²}}``. For each penalty λ0 is the
    largest grid value <= 1e-3 and the comparison values are the grid's λ in
    (1e-3, 1e-2]; each λ's seeds are resampled. None when the grid does not straddle
    1e-3 that way or a λ has fewer than :data:`MIN_SEEDS` seeds.
    """
    from ..report.uncertainty import SEED, Evidence, seed_bootstrap

    drops = []
    for k, (pen, by_lam) in enumerate(sorted(sweep_r2.items())):
        lams = sorted(by_lam)
        lo = [lam for lam in lams if lam <= 1e-3 * (1 + 1e-9)]
        hi = [lam for lam in lams if 1e-3 * (1 + 1e-9) < lam <= 1e-2 * (1 + 1e-9)]
        if not lo or not hi or any(len(by_lam[lam]) < MIN_SEEDS for lam in [lo[-1], *hi]):
            return None
        (e0, s0), *rest = [seed_bootstrap(by_lam[lam], seed=[SEED, k, i]) for i, lam in enumerate([lo[-1], *hi])]
        est = e0 - np.mean([e for e, _ in rest])
        samples = s0 - np.mean(np.vstack([s for _, s in rest]), axis=0)
        drops.append(Evidence.from_samples(est, samples, SOURCES["sweep"]))
    return Evidence.combine(np.min, drops) if drops else None


def r2_drop_text(sweep_r2: dict) -> str:
    """The R² means the drop compares, per penalty."""
    parts = []
    for pen, by_lam in sorted(sweep_r2.items()):
        lams = sorted(by_lam)
        lo = [lam for lam in lams if lam <= 1e-3 * (1 + 1e-9)]
        hi = [lam for lam in lams if 1e-3 * (1 + 1e-9) < lam <= 1e-2 * (1 + 1e-9)]
        if lo and hi:
            parts.append(f"{pen.upper()}: R² {fmt(np.mean(by_lam[lo[-1]]))} at λ={lo[-1]:g} vs "
                         + ", ".join(f"{fmt(np.mean(by_lam[lam]))} at {lam:g}" for lam in hi)
                         + f" ({min(len(v) for v in by_lam.values())} seeds)")
    return "; ".join(parts) or "the λ grid does not straddle 1e-3"


def _published_quantities(q: dict) -> None:
    """The published-number checks (tables 4.2, 4.3, 4.4, 4.5, journal 5) into ``q``, as ``{cell: Evidence}``."""
    from ..data.thesis import load_thesis_table
    from ..report.uncertainty import Evidence, half_unit, rounding_draws

    def drawn(values: dict, func=lambda x: x):
        keys = list(values)
        d = rounding_draws([values[k] for k in keys])
        return {k: Evidence.from_samples(func(values[k]), func(d[:, i]), SOURCES["printed"])
                for i, k in enumerate(keys)}

    def exact(pairs: dict):
        return {k: Evidence.exact(abs(a - b) - half_unit(a) - half_unit(b), SOURCES["exact"])
                for k, (a, b) in pairs.items()}

    t42, t43 = load_thesis_table("4.2"), load_thesis_table("4.3")
    a = {(r.table, r.framework, r.term): float(r.mean) for t in (t42, t43) for r in t[t["symbol"] == "a"].itertuples()}
    q["published_a"] = drawn(a, lambda x: np.minimum(x, 1000.0 - x))
    t44m = load_thesis_table("4.4")
    t44m = t44m[(t44m["metric"] == "MAPE") & (t44m["penalty"] == "L2")].set_index("framework")["mean"]
    j5 = load_thesis_table("journal5")
    j5m = j5[(j5["metric"] == "MAPE") & (j5["method"] == "DE+L2")].set_index("framework")["mean"]
    q["published_44_vs_j5_values"] = {fw: (float(t44m[fw]), float(j5m[fw])) for fw in t44m.index if fw in j5m.index}
    q["published_44_vs_j5"] = exact(q["published_44_vs_j5_values"])
    q45 = load_thesis_table("4.5").set_index("framework")["mean"]
    q43 = t43[(t43["parameter"] == "gpus") & (t43["symbol"] == "q")].set_index("framework")["mean"]
    q["published_45_vs_43_values"] = {fw: (float(q45[fw]), float(q43[fw])) for fw in q45.index if fw in q43.index}
    q["published_45_vs_43"] = exact(q["published_45_vs_43_values"])
    j5all = j5[j5["metric"] == "MAPE"].pivot_table(index="framework", columns="method", values="mean")
    d = rounding_draws(j5all[["RF", "DE"]].to_numpy().ravel()).reshape(-1, len(j5all), 2)
    q["published_rf_vs_de"] = {fw: Evidence.from_samples(j5all.loc[fw, "RF"] - j5all.loc[fw, "DE"],
                                                         d[:, i, 0] - d[:, i, 1], SOURCES["printed"])
                               for i, fw in enumerate(j5all.index)}


def _params_view(table):
    """Table 4.2/4.3 for reading: one ``mean ± std`` cell per source."""
    from ..report.tables import mean_std_columns

    cols = [c[:-5] for c in table.columns if c.endswith("_mean")]
    view = mean_std_columns(table.drop(columns=["table"]), {c: (f"{c}_mean", f"{c}_std") for c in cols})
    return view.rename(columns={c: (f"thesis {c}" if c in ("TensorFlow", "MXNet", "PyTorch") else f"ours ({c})")
                                for c in cols})


# ------------------------------------------------------------------------------------------ analyse
def _fit_framework(p: Params, data_path, F: dict) -> dict:
    """Sections 1-7 of the chapter on one framework's file: its fits, baselines, sweep and per-framework numbers.

    Draws the framework's prediction figures into ``F`` under the thesis's numbers
    (:func:`perfkit.data.thesis.figure_stem`) and returns a dict of what the tables, the
    cross-framework sections and the ledger need (``q`` holds the framework's claim quantities).
    """
    from ..data.measured import load_provenance, load_steps, thesis_split
    from ..data.thesis import figure_number, figure_stem, framework_name
    from ..model.baselines import compare_models, make_baseline
    from ..model.fitting import fit_repeated, regularisation_sweep
    from ..model.scaling import level_effects
    from ..report import plots

    label = data_path.parent.name  # e.g. pytorch-cpu
    X, y, frame = load_steps(data_path, target=p.target)
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=p.n_fit, n_test=p.n_test, seed=p.split_seed)
    framework = framework_name(frame["framework"].iloc[0] if "framework" in frame.columns else label.split("-")[0])
    fw_label = f"{framework} ({label})"
    q = dict(label=label, framework=framework, n_rows=len(frame), n_fit=len(X_fit), n_test=len(X_test),
             target=p.target, lam_l2=p.lam_l2, lam_l1=p.lam_l1, provenance=load_provenance(data_path))
    fit_kw = dict(seeds=p.n_seeds, n_jobs=p.n_jobs, progress=p.progress)
    fits = {}

    def pred_fig(model, slug, title, method):
        number = figure_number("ch4", slug, framework)
        thesis = (f"Fig. {number}, MAPE {thesis_mape(method, framework=framework)} (journal Table 5)" if number else
                  f"MAPE {thesis_mape(method)} (journal Table 5)")
        fig, ax = plots.new_figure(figsize=(3.8, 4.2))
        plots.plot_pred_vs_measured(y_test, model.predict(X_test), ax=ax, title=title, thesis_error=thesis)
        F[figure_stem("ch4", slug, framework)] = fig

    def desc(what):
        return f"{framework}: {what}"

    # §2 Table 4.2, no regularisation; §3 Table 4.3, L2; §4 Table 4.4, L1
    fits["DE"] = fit_repeated(make_model(**p.de_kw), X_fit, y_fit, desc=desc("Table 4.2 DE fits"), **fit_kw)
    pred_fig(fits["DE"].best, "de_pred_vs_measured", f"generic model, no regularisation ({fw_label}, held out)", "DE")
    fits["DE+L2"] = fit_repeated(make_model(penalty="l2", lam=p.lam_l2, **p.de_kw), X_fit, y_fit,
                                 desc=desc("Table 4.3 DE+L2 fits"), **fit_kw)
    pred_fig(fits["DE+L2"].best, "de_l2_pred_vs_measured", f"generic model, L2 λ={p.lam_l2:g} ({fw_label}, held out)",
             "DE+L2")
    fits["DE+L1"] = fit_repeated(make_model(penalty="l1", lam=p.lam_l1, **p.de_kw), X_fit, y_fit,
                                 desc=desc("Table 4.4 DE+L1 fits"), **fit_kw)
    preds = {k: np.asarray(fits[k].best.predict(X_test), dtype=float) for k in ("DE", "DE+L1", "DE+L2")}
    q["errors"] = {k: error_row(y_test, v) for k, v in preds.items()}
    q["heldout"] = {"y": np.asarray(y_test, dtype=float), "pred": preds}
    q["q_workers"], q["q_workers_std"] = _power(fits["DE"], "workers")
    q["q_batch"], q["q_batch_std"] = _power(fits["DE"], "batch_size")

    # §6 baselines
    roles = ROLES["ch4"]
    fitted = {"RF": make_baseline("rf", **roles, random_state=0).fit(X_fit, y_fit),
              "SVR": make_baseline("svr", **roles).fit(X_fit, y_fit)}
    fits.update(fitted)
    models = {"DE": fits["DE"].best, "DE+L2": fits["DE+L2"].best, **fitted}
    comparison = compare_models(models, X_fit, y_fit, X_test, y_test, prefitted=set(models))
    q["mape"] = {k: float(v) for k, v in comparison["MAPE"].items()}
    preds.update({k: np.asarray(m.predict(X_test), dtype=float) for k, m in fitted.items()})
    pred_fig(fitted["RF"], "rf_pred_vs_measured", f"random forest ({fw_label}, held out)", "RF")
    pred_fig(fitted["SVR"], "svr_pred_vs_measured", f"SVR ({fw_label}, held out)", "SVM")

    # §7 λ sweep (Figs. 4.15-4.17 draw every framework's together)
    grid = [1e-4, 1e-2, 1.0] if p.quick else list(p.lams)
    sweep = regularisation_sweep(make_model(**p.de_kw), X_fit, y_fit, X_test, y_test, penalties=("l1", "l2"),
                                 lams=grid, seeds=range(1 if p.quick else p.sweep_seeds), n_jobs=p.n_jobs,
                                 progress=p.progress, desc=desc("Figs. 4.15–4.17 λ sweep"))
    r2 = sweep[sweep["quantity"] == "r2_test"]
    q["sweep_r2"] = {pen: {float(lam): g.sort_values("seed")["value"].to_numpy(dtype=float)
                           for lam, g in gp.groupby("lam")} for pen, gp in r2.groupby("penalty")}
    # the claims' quantities: per-seed parameters and what each hyperparameter level costs
    q["seed_params"] = {k: fits[k].params for k in ("DE", "DE+L2")}
    q["effects"] = level_effects(frame, p.target, [c for r in roles.values() for c in r])
    return dict(label=label, framework=framework, fw_label=fw_label, path=data_path, frame=frame, X_fit=X_fit,
                X_test=X_test, y_fit=y_fit, y_test=y_test, fits=fits, preds=preds, comparison=comparison,
                sweep=sweep, q=q)


def _power(fit, column):
    from ..model.scaling import scaling_power

    return scaling_power(fit.summary(), column)


def _merge_frameworks(tables, on):
    """Left-join per-framework tables that share the key columns ``on`` (the first table's rows, in its order)."""
    out = tables[0]
    for t in tables[1:]:
        out = out.merge(t, on=on, how="left", sort=False)
    return out


def _side_by_side(parts, key: str, table: str):
    """Table 4.2/4.3: every framework's mean ± std per parameter, then the thesis's columns."""
    tables = [params_side_by_side(part["fits"][key].summary(), table=table, label=part["label"]) for part in parts]
    on = ["table", "parameter", "level", "kind", "symbol"]
    ours = [t[on + [f"{part['label']}_mean", f"{part['label']}_std"]] for t, part in zip(tables, parts)]
    thesis = tables[0].drop(columns=[c for c in tables[0].columns if c.startswith(parts[0]["label"] + "_")])
    return _merge_frameworks([*ours, thesis], on)


def analyse(params: Params | None = None, /, **kwargs) -> ChapterResult:
    """Chapter 4 on measured LeNet-5 files: ``analyse(n_fit=900, ...)`` or ``analyse(check_params(...))``.

    ``dataset`` and every file of ``framework_datasets`` are analysed alike (Tables 4.2-4.5, the
    baselines, the λ sweep, the claims), then side by side: a column per framework in the tables, a
    figure per framework numbered as the thesis numbers it, a line per framework in Figs. 4.15-4.17,
    the paired comparison of the frameworks on identical configurations and one model fitted on
    every framework's data. The parameters (:class:`Params`) are checked first
    (:func:`check_params`): a value that is not allowed raises one
    :class:`~perfkit.chapters.result.ParameterError` before anything is fitted.
    """
    import pandas as pd

    from ..data.thesis import figure_stem, load_thesis_table
    from ..report import plots
    from ..schema import resolve

    p = checked_params(params, kwargs, Params, check_params)
    res = ChapterResult("ch4", p)
    T, V, F, q, fits = res.tables, res.views, res.figures, res.numbers, res.fits
    paths = [resolve(p.dataset)] + [path for path in map(resolve, p.framework_datasets) if path != resolve(p.dataset)]
    parts = [_fit_framework(p, path, F) for path in paths]
    main = parts[0]
    q.update(main["q"])
    fits.update(main["fits"])
    for part in parts[1:]:
        fits.update({f"{k} ({part['framework']})": v for k, v in part["fits"].items()})
    q["per_framework"] = {part["label"]: part["q"] for part in parts}
    for part in parts:
        res.notes.append(f"{part['q']['n_rows']} successful samples in {show_path(part['path'])}; fit on "
                         f"{part['q']['n_fit']}, held out {part['q']['n_test']}"
                         + (" (fewer samples than n_fit + n_test: the split was scaled down in proportion)"
                            if part["q"]["n_rows"] < p.n_fit + p.n_test else ""))
    labels = [part["label"] for part in parts]

    # §1 the measured datasets
    V["dataset"] = pd.concat({part["label"]: part["frame"].groupby("workers")[p.target].describe()
                              for part in parts}, names=["framework", "workers"]).round(3).rename(
        columns=lambda c: f"{c} (s)" if c not in ("count",) else "samples")

    # §2-§3 Tables 4.2 and 4.3: a column per framework, then the thesis's
    for key, table, name in (("DE", "4.2", "table4_2"), ("DE+L2", "4.3", "table4_3")):
        T[name] = _side_by_side(parts, key, table)
        V[name] = _params_view(T[name])

    # §4 Table 4.4, L1 against L2: a column per framework
    rows = [dict(penalty=pen, metric=metric, **{part["label"]: part["q"]["errors"][key][metric] for part in parts})
            for pen, key in (("L1", "DE+L1"), ("L2", "DE+L2")) for metric in ("MAPE", "MSE", "RMSE")]
    t44 = load_thesis_table("4.4").pivot_table(index=["penalty", "metric"], columns="framework",
                                               values="mean").reset_index()
    t44.columns = [c if c in ("penalty", "metric") else f"thesis_{c}" for c in t44.columns]
    T["table4_4"] = pd.DataFrame(rows).merge(t44, on=["penalty", "metric"], how="left")

    # §5 Table 4.5, journal Table 6, conference Table II: the scaling power of workers, a row per framework and fit
    ours_q = []
    for part in parts:
        for key in ("DE", "DE+L2"):
            qw, qw_sd = _power(part["fits"][key], "workers")
            qb, qb_sd = _power(part["fits"][key], "batch_size")
            ours_q.append(dict(fit=key, framework=part["label"], q_workers=qw, q_workers_std=qw_sd, q_batch=qb,
                               q_batch_std=qb_sd))
    for key, name, source in (("4.5", "table4_5", "thesis Table 4.5"), ("journal6", "journal_table6", "journal Table 6"),
                              ("conference2", "conference_table2", "conference Table II")):
        rows = ours_q + [dict(fit=source, framework=r.framework, q_workers=r.mean)
                         for r in load_thesis_table(key).itertuples()]
        T[name] = pd.DataFrame(rows)
        V[name] = _scaling_view(T[name])

    # §6 baselines, journal Table 5 and conference Table I: columns per framework, then the thesis's
    j5 = load_thesis_table("journal5")
    j5 = j5[j5["metric"] == "MAPE"].pivot_table(index="method", columns="framework", values="mean")
    j5.columns = [f"thesis_{c}" for c in j5.columns]
    journal5 = pd.concat([part["comparison"][["MAPE", "MSE", "RMSE", "R2"]].rename(
        columns=lambda c, lb=part["label"]: f"{lb}_{c}") for part in parts], axis=1).rename(index={"SVR": "SVM"})
    T["journal_table5"] = journal5.join(j5, how="outer").rename_axis("method").reset_index()
    c1 = load_thesis_table("conference1")
    c1 = c1[c1["metric"] == "MAE"].pivot_table(index="method", columns="framework", values="mean")
    c1.columns = [f"thesis_{c}" for c in c1.columns]
    conf1 = pd.concat([part["comparison"].loc[["DE", "RF", "SVR"], ["MAE", "MAPE", "R2"]].rename(
        columns=lambda c, lb=part["label"]: f"{lb}_{c}") for part in parts], axis=1).rename(index={"SVR": "SVM"})
    T["conference_table1"] = conf1.join(c1, how="outer").rename_axis("method").reset_index()

    # §7 λ sweep, Figs. 4.15-4.17: a line (4.15) or a column pair (4.16, 4.17) per framework
    sweeps = {part["fw_label"]: part["sweep"] for part in parts}
    full = pd.concat([part["sweep"].assign(framework=part["label"]) for part in parts], ignore_index=True)
    # The saved table holds what the data determine, per fit: R², MAPE, the objective and the powers p, q. The
    # coefficients a, κ and C of the weakly penalised MAE fits are not determined to the writer's 1e-3: the
    # objective is flat along directions that trade them (TensorFlow, L1, λ = 1e-5: κ(tanh) 0.147 under one set of
    # BLAS kernels, 0.150 under another and 0.146-0.149 across seeds, the objective the same to 5e-9). They are
    # drawn in Figs. 4.16-4.17 and kept, per fit, in ``numbers["lambda_sweep_coefficients"]``.
    coefficient = full["kind"].isin(SWEEP_COEFFICIENT_KINDS)
    T["lambda_sweep"] = full[~coefficient].reset_index(drop=True)
    q["lambda_sweep_coefficients"] = full[coefficient].reset_index(drop=True)
    axes = plots.plot_r2_vs_lambda(sweeps, chosen_lam=p.lam_l2)
    axes[0].figure.suptitle("held-out R² against λ", fontsize=9)
    F[figure_stem("ch4", "r2_vs_lambda")] = axes[0].figure
    for slug, panels in (("intrinsic_coef_paths", "intrinsic"), ("categorical_extrinsic_coef_paths",
                                                                   "categorical_extrinsic")):
        axes = plots.plot_coef_paths(sweeps, [k for k, _ in plots.COEF_PANELS[panels]], chosen_lam=p.lam_l2)
        F[figure_stem("ch4", slug)] = axes[0][0].figure
    r2 = full[full["quantity"] == "r2_test"]
    V["lambda_sweep"] = r2.groupby(["framework", "penalty", "lam"], sort=False)["value"].mean().unstack(
        ["framework", "penalty"]).rename(columns=lambda c: f"R² held out, {c.upper()}", level=1).round(4)

    # §1 the epoch extrapolation check beside each framework's file (`perfkit collect epoch`), when measured
    _epoch_section(parts, T, V)

    # §9 the frameworks on identical configurations, §10 one model across frameworks
    if len(parts) > 1:
        _paired_section(p, parts, T, V, F, q)
        _pooled_section(p, parts, T, V, q)

    # §8 claims: each framework's measured claims, the framework claims, the published numbers
    frame = pd.concat([part["frame"] for part in parts], ignore_index=True)
    q["frameworks"] = sorted(set(frame["framework"].astype(str))) if "framework" in frame.columns else []
    q["framework_q"] = framework_powers(frame, p.target, ROLES["ch4"]) or None
    _framework_quantities(parts, q)
    _published_quantities(q)
    measured = [c for c in CLAIMS if not c.data and c.key not in FRAMEWORK_KEYS]
    ledger = [judge_all("4", f"{main['label']}/{main['path'].name}", measured, q),
              judge_all("4", ", ".join(f"{lb}/{paths[0].name}" for lb in labels),
                        [c for c in CLAIMS if c.key in FRAMEWORK_KEYS], q)]
    for part in parts[1:]:
        led = judge_all("4", f"{part['label']}/{part['path'].name}", measured, part["q"])
        ledger.append(led.assign(key=led["key"] + "." + part["label"].split("-")[0]))
    ledger.append(judge_all("4", "", [c for c in CLAIMS if c.data], q))
    T["claims_ch4"] = pd.concat(ledger, ignore_index=True)
    if len(parts) > 1:
        V["claims_by_framework"] = claims_by_framework(T["claims_ch4"], labels)
    from .readings import ch4_readings

    res.readings = ch4_readings(res)
    return res


def claims_by_framework(ledger, labels):
    """The measured claims' verdicts, a column per framework (the ledger's ``key.framework`` rows)."""
    import pandas as pd

    base = [c.key for c in CLAIMS if not c.data and c.key not in FRAMEWORK_KEYS]
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


def _framework_quantities(parts, q) -> None:
    """Per framework (the thesis's spelling): the held-out MAPE of the L2 fit and the level effects, for the
    framework claims; paired bootstrap over held-out row positions (the same configurations when the files
    hold the same samples)."""
    from ..report.uncertainty import METRICS, SEED, Evidence, paired_bootstrap

    if len(parts) < 2:
        q["framework_mape"] = q["framework_effects"] = None
        return
    q["framework_mape"] = {}
    for k, part in enumerate(parts):
        h = part["q"]["heldout"]
        est, samples = paired_bootstrap(h["y"], {"DE+L2": h["pred"]["DE+L2"]}, METRICS["MAPE"], seed=SEED)["DE+L2"]
        q["framework_mape"][part["framework"]] = Evidence.from_samples(est, samples, SOURCES["heldout_fw"])
    q["framework_effects"] = {part["framework"]: part["q"]["effects"] for part in parts}


#: the hyperparameters of the paired comparison's figure, in its panel order (the table has every one)
PAIRED_FACTORS = ("workers", "batch_size", "num_filters", "kernel_size", "stride", "padding", "pool_size",
                  "activation", "optimizer", "dataset", "dropout", "learning_rate")


def _paired_section(p, parts, T, V, F, q) -> None:
    """§9: each framework's time over the main framework's on the same configurations, by hyperparameter."""
    from ..model.paired import paired_ratios
    from ..report import plots

    frames = {part["label"]: part["frame"] for part in parts}
    table = paired_ratios(frames, p.target, PAIRED_FACTORS, reference=parts[0]["label"])
    T["ext_paired_ratios"] = table
    F["ext_paired_framework_ratios"] = plots.plot_paired_ratios(table)
    cell = table.assign(cell=[f"{r:.3g} [{lo:.3g}, {hi:.3g}]" for r, lo, hi in zip(table["ratio"], table["lo"],
                                                                                      table["hi"])])
    V["ext_paired_ratios"] = cell.pivot_table(index=["factor", "level"], columns="framework", values="cell",
                                              aggfunc="first", sort=False)
    q["paired"] = table


def _pooled_section(p, parts, T, V, q) -> None:
    """§10: one model fitted on every framework's fit rows with the framework as a categorical input, against the
    per-framework fits, on each framework's held-out rows (the thesis fits each framework separately)."""
    import pandas as pd

    from ..model.baselines import make_baseline
    from ..model.fitting import fit_repeated
    from ..model.search import make_form
    from ..report.uncertainty import METRICS, Evidence, paired_bootstrap, percentile_interval

    roles = {k: list(v) for k, v in ROLES["ch4"].items()}
    pooled_roles = {**roles, "categorical": roles["categorical"] + ["framework"]}

    def tagged(part, X):
        return X.assign(framework=part["label"].split("-")[0])

    X_fit = pd.concat([tagged(part, part["X_fit"]) for part in parts], ignore_index=True)
    y_fit = pd.concat([part["y_fit"] for part in parts], ignore_index=True)
    seeds = min(p.n_seeds, 3)
    pooled = {
        "DE+L2": fit_repeated(make_model(pooled_roles, penalty="l2", lam=p.lam_l2, **p.de_kw), X_fit, y_fit,
                              seeds=seeds, n_jobs=p.n_jobs, progress=p.progress,
                              desc="every framework: DE+L2 fits").best,
        "log-linear": make_form("loglinear", **pooled_roles).fit(X_fit, y_fit),
        "RF": make_baseline("rf", **pooled_roles, random_state=0).fit(X_fit, y_fit),
    }
    rows = []
    for part in parts:
        own = {"DE+L2": part["preds"]["DE+L2"], "RF": part["preds"]["RF"],
               "log-linear": make_form("loglinear", **roles).fit(part["X_fit"], part["y_fit"]).predict(part["X_test"])}
        X_test = tagged(part, part["X_test"])
        preds = {}
        for method in pooled:
            preds[f"{method} own"] = np.asarray(own[method], dtype=float)
            preds[f"{method} pooled"] = np.asarray(pooled[method].predict(X_test), dtype=float)
        boot = paired_bootstrap(part["y_test"], preds, METRICS["MAPE"])
        for method in pooled:
            (e_own, s_own), (e_pool, s_pool) = boot[f"{method} own"], boot[f"{method} pooled"]
            d = Evidence.from_samples(e_pool - e_own, s_pool - s_own)
            lo, hi = percentile_interval(s_pool)
            rows.append(dict(framework=part["label"], method=method, n_test=len(part["y_test"]), mape_own=e_own,
                             mape_pooled=e_pool, pooled_lo=lo, pooled_hi=hi, difference=d.estimate,
                             difference_lo=d.lo, difference_hi=d.hi))
    table = pd.DataFrame(rows)
    T["ext_pooled_vs_per_framework"] = table
    V["ext_pooled_vs_per_framework"] = table.assign(
        **{"MAPE own fit (%)": table["mape_own"].round(1),
           "MAPE one model (%)": [f"{e:.1f} [{lo:.1f}, {hi:.1f}]" for e, lo, hi in
                                  zip(table["mape_pooled"], table["pooled_lo"], table["pooled_hi"])],
           "one model − own (points)": [f"{e:+.1f} [{lo:+.1f}, {hi:+.1f}]" for e, lo, hi in
                                        zip(table["difference"], table["difference_lo"], table["difference_hi"])]}
    ).set_index(["framework", "method"])[["MAPE own fit (%)", "MAPE one model (%)", "one model − own (points)"]]
    q["pooled"] = table
    q["pooled_models"] = pooled


#: the epoch extrapolation check's file, beside each framework's ch4 file
EPOCH_CHECK = "epoch_check.csv"


def _epoch_section(parts, T, V) -> None:
    """§1: how far ``steps_per_epoch × step time`` (the fitted target) is from one whole timed epoch, per framework.

    Reads ``epoch_check.csv`` beside each framework's file (``perfkit collect epoch``); frameworks without one are
    left out, and nothing is written when none has one. The interval of the median error is a bootstrap over the
    checked configurations.
    """
    import pandas as pd

    from ..report.uncertainty import percentile_interval, seed_bootstrap

    rows = []
    for part in parts:
        path = part["path"].parent / EPOCH_CHECK
        if not path.exists():
            continue
        df = pd.read_csv(path)
        ok = df[df["status"] == "ok"]
        err = pd.to_numeric(ok["epoch_error"], errors="coerce").dropna().to_numpy(dtype=float)
        if len(err) < 2:
            continue
        est, samples = seed_bootstrap(err, np.median)
        lo, hi = percentile_interval(samples)
        rows.append(dict(framework=part["label"], checks=len(err), skipped=int((df["status"] != "ok").sum()),
                         median_error=est, median_lo=lo, median_hi=hi, abs_error_median=float(np.median(np.abs(err))),
                         abs_error_max=float(np.max(np.abs(err))), share_within_5pct=float(np.mean(np.abs(err) <= 0.05)),
                         epoch_steps_median=float(ok["epoch_steps"].median()),
                         epoch_measured_median_s=float(ok["epoch_measured"].median())))
    if not rows:
        return
    table = pd.DataFrame(rows)
    T["ext_epoch_extrapolation"] = table
    V["ext_epoch_extrapolation"] = table.assign(
        **{"median error (%)": [f"{100 * e:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]" for e, lo, hi in
                                zip(table["median_error"], table["median_lo"], table["median_hi"])],
           "median |error| (%)": (100 * table["abs_error_median"]).round(1),
           "max |error| (%)": (100 * table["abs_error_max"]).round(1),
           "within 5 %": (100 * table["share_within_5pct"]).round(0).astype(int).astype(str) + " %"}
    ).set_index("framework")[["checks", "median error (%)", "median |error| (%)", "max |error| (%)", "within 5 %"]]


def _scaling_view(table):
    from ..report.tables import mean_std_columns

    return mean_std_columns(table, {"q(workers)": ("q_workers", "q_workers_std"),
                                    "q(batch)": ("q_batch", "q_batch_std")}).fillna("")
