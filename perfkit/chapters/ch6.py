"""Chapter 6, beyond the thesis: other model forms, prediction intervals, other people's data, what-if curves.

The thesis ends (§6.1) with future work: refine the generic expression so that its terms can
interact, treat powers and coefficients differently, try the model on other frameworks and
applications, put it to use in practical systems, and look for better expressions automatically.
:func:`analyse` takes those steps on eight datasets: our measured files (Chapter 4's LeNet-5 in
PyTorch, split 1000/500, and Chapter 5's 3D-ResAttNet-18, split 900/600, as the thesis split them;
LeNet-5 in TensorFlow and MXNet, 1000/500, and in Chapter 4's 500-row Chainer and JAX files, 333/167)
and two third-party ones shipped in ``data/external/`` (Lambda's GPU benchmarks and NVIDIA
DeepLearningExamples' published tables, split 2/3 to fit), and computes

1. Table 6.1 and Fig. 6.1: held-out MAPE (with a 95 % bootstrap interval), R² and the share of the
   held-out rows inside 90 % conformal intervals (studentised, :class:`perfkit.model.ConformalRegressor`)
   of every interpretable form: the thesis form (eq. 4.4, default engine, MAE and relative loss),
   the log-space power law (:class:`perfkit.model.LogLinearModel`, its richest variant), the hybrid
   form on analytic costs (:class:`perfkit.model.HybridModel`, our networks only) and the form the
   cross-validated search picks (:func:`perfkit.model.search.search_forms`); beside them the black
   boxes (random forest, SVR, gradient boosting) and, where ``benchmarks/results/extrap.json``
   holds it for the same split, Extra-P;
2. Table 6.2: the search's candidates (CV MAPE ± standard error, parameters, the one-standard-error
   choice) per dataset; Table 6.3: the fitted formulas;
3. Tables 6.4-6.5, Figs. 6.2-6.3: what-if curves on our data: predicted epoch time, speedup and
   efficiency against the number of workers (1-8 by default) for the median configuration on one
   worker, with 90 % intervals and the extrapolated counts marked;
4. Table 6.6: the hybrid form's rates on Chapters 4 and 5 (is a FLOP as costly in both?);
5. the claims ledger (:data:`CLAIMS`), every verdict decided from an interval.

Nothing here is cached: every run fits everything again. Every model is seeded and fits with one
BLAS thread, so the numbers do not depend on ``n_jobs``, and the verdicts come from intervals, so
the last digits that another CPU's BLAS kernels move cannot change them. The fit times in
``result.numbers["timings"]`` are machine-dependent: the notebook shows them, nothing writes them to
``figures/`` (so a second run, or a run on another machine, leaves the committed outputs as they are).

The notebook ``notebooks/ch6_beyond_the_thesis.ipynb`` calls :func:`analyse`, shows its tables
and figures and explains them.
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np

from ..report.claims import Claim, fmt, judge_all
from ..report.uncertainty import B, SEED
from .ch4 import TARGET, check_steps_file
from .result import (ChapterResult, Check, ParameterError, ParamsBase, at_least, checked_params, existing_file, grid,
                     make_params, one_of, output_folder, show_path)

__all__ = ["Params", "check_params", "analyse", "CLAIMS", "DATASETS", "METHODS", "compute_rate", "coverage_evidence",
           "read_extrap", "whatif_table"]

#: the other frameworks' Chapter 4 files (the same sampler and seed as PyTorch's ``ch4``): dataset → framework
FRAMEWORKS = {"ch4_tensorflow": "TensorFlow", "ch4_mxnet": "MXNet", "ch4_chainer": "Chainer", "ch4_jax": "JAX"}
#: datasets Chapter 6 compares on: our measured files, then the third-party ones (``perfkit.data.external``)
DATASETS = ("ch4", "ch5", *FRAMEWORKS, "lambda", "lambda_screened", "nvidia_dle")
#: what each dataset is, for tables and figures
DATASET_NAMES = {"ch4": "LeNet-5, ours (CPU)", "ch5": "3D-ResAttNet-18, ours (CPU)",
                 **{ds: f"LeNet-5, {fw}, ours (CPU)" for ds, fw in FRAMEWORKS.items()},
                 "lambda": "Lambda GPU benchmarks",
                 "lambda_screened": "Lambda GPU benchmarks, screened",
                 "nvidia_dle": "NVIDIA DeepLearningExamples"}
#: our measured datasets: the cost-model network of the hybrid form and the split (fit, held out): the thesis's,
#: and 2/3 of the 500 rows measured in Chainer and JAX (as Chapter 4 splits them)
MEASURED = {"ch4": ("lenet5", (1000, 500)), "ch5": ("resattnet3d", (900, 600)),
            "ch4_tensorflow": ("lenet5", (1000, 500)), "ch4_mxnet": ("lenet5", (1000, 500)),
            "ch4_chainer": ("lenet5", (333, 167)), "ch4_jax": ("lenet5", (333, 167))}
#: share of a third-party dataset held out (the rest is fitted)
EXTERNAL_TEST = 1 / 3
#: quick mode: rows fitted and held out per dataset (a third-party dataset is first subsampled to their sum)
QUICK_ROWS = (300, 150)
#: quick mode: folds, forms searched, bootstrap refits of the hybrid (the thesis form gets the search's engine budget,
#: :data:`perfkit.model.search.THESIS_SEARCH`)
QUICK_CV, QUICK_FORMS, QUICK_RATE_B = 3, ("loglinear", "hybrid"), 50
#: quick mode: the datasets kept (NVIDIA DLE's five categoricals make its level-pair log-linear candidate and the
#: thesis form's refinement take 10-30 s a fit, too slow for a smoke test); the thesis form is fitted once, without
#: intervals
QUICK_DATASETS = ("ch4", "ch5", "lambda")
#: forms the search can try (:data:`perfkit.model.search.FORMS`)
FORMS = ("thesis", "loglinear", "hybrid")
#: nominal coverage of the prediction intervals
COVERAGE = 0.9
#: the band the coverage claim allows around :data:`COVERAGE`
COVERAGE_BAND = (0.85, 0.95)
#: bootstrap refits of the hybrid form per measured dataset (the compute-rate claim)
RATE_B = 200
#: the compute-rate claim: the ratio of Chapter 5's to Chapter 4's rate lies within this factor of 1
RATE_FACTOR = 1.2
#: the interpretable forms fitted with conformal intervals, then the black boxes, in table order
INTERPRETABLE = ("thesis", "thesis_rel", "loglinear", "hybrid")
BLACK_BOXES = ("RF", "SVR", "GB")
METHODS = ("auto", *INTERPRETABLE, *BLACK_BOXES)
#: method → label in tables and figures
METHOD_LABELS = {"auto": "auto-selected form", "thesis": "thesis form (eq. 4.4, MAE)",
                 "thesis_rel": "thesis form, relative loss", "loglinear": "log-linear (richest)",
                 "hybrid": "hybrid (costs × rates)", "RF": "random forest", "SVR": "SVR", "GB": "gradient boosting"}
#: Extra-P rows of Table 6.1: label → key of ``benchmarks/results/extrap.json`` under ``<dataset>/`` (variants fixed
#: in advance, never picked on the held-out rows: a, one model of every numeric parameter; b, one model per level
#: of the categorical that explains most of the fit rows' variance; both Extra-P's default modeler)
EXTRAP = {"Extra-P (a)": "a/default", "Extra-P (b)": "b/default"}
#: the what-if curves: datasets (ours: the worker count is a column) and the interpretable fallback when the
#: auto-selected form cannot predict a worker count it has not seen (a hybrid with one rate per worker level)
WHATIF_DATASETS = ("ch4", "ch5")
WHATIF_FALLBACK = ("loglinear", "thesis_rel", "thesis")


def _extrap_file(v):
    if v == "":
        return True
    if not isinstance(v, str) or not v.strip():
        return False
    from ..schema import resolve

    path = resolve(v)
    return f"{v!r} is a folder ({path})" if path.is_dir() else True


@dataclass(frozen=True)
class Params(ParamsBase):
    """Parameters of Chapter 6 (the notebook's ``parameters`` cell); :data:`Params.CHECKS` are their rules."""

    quick: bool = False  # small budgets for tests: 300/150 rows, loglinear and hybrid, 3 folds, no nvidia_dle
    datasets: tuple = DATASETS  # ours: ch4, ch5, ch4_<framework> (LeNet-5 in 4 more frameworks); lambda (as
    # published), lambda_screened (without the 22 ncf rows above 2x a single GPU's throughput per GPU), nvidia_dle
    ch4_dataset: str = "data/measured/pytorch-cpu/ch4_lenet5.csv"  # perfkit collect ch4 output (split 1000/500)
    ch5_dataset: str = "data/measured/pytorch-cpu/ch5_resattnet3d.csv"  # perfkit collect ch5 output (split 900/600)
    ch4_tensorflow_dataset: str = "data/measured/tensorflow-cpu/ch4_lenet5.csv"  # TensorFlow's ch4 file (1000/500)
    ch4_mxnet_dataset: str = "data/measured/mxnet-cpu/ch4_lenet5.csv"  # MXNet's ch4 file (1000/500)
    ch4_chainer_dataset: str = "data/measured/chainer-cpu/ch4_lenet5.csv"  # Chainer's ch4 file (333/167)
    ch4_jax_dataset: str = "data/measured/jax-cpu/ch4_lenet5.csv"  # JAX's ch4 file (333/167)
    target: str = "epoch_time"  # column of the measured files to model: epoch_time or step_time
    split_seed: int = 0  # seed of every fit/held-out split
    forms: tuple = FORMS  # forms the search tries (quick mode: loglinear and hybrid)
    cv: int = 5  # folds of the form search and of the intervals (quick mode: 3)
    whatif_workers: tuple = (1, 2, 3, 4, 5, 6, 7, 8)  # worker counts of the what-if curves (speedup relative to the first)
    extrap_results: str = "benchmarks/results/extrap.json"  # Extra-P results (bench_extrap.py); missing or "": not run
    n_jobs: int = -1  # parallel fits (joblib; -1: every core; every fit is seeded, so the results do not change)
    progress: bool = True  # progress bars for the fits
    figures_dir: str = ""  # folder for figures and tables (ChapterResult.save); "" means figures/

    #: the rule of each parameter (``quick`` and ``progress`` need only be bools)
    CHECKS = {
        "datasets": grid(one_of(*DATASETS), "dataset names (" + ", ".join(DATASETS) + ")", distinct=True),
        "ch4_dataset": existing_file("a `perfkit collect ch4` output"),
        "ch5_dataset": existing_file("a `perfkit collect ch5` output"),
        **{f"{ds}_dataset": existing_file(f"a `perfkit collect ch4` output of {fw}") for ds, fw in FRAMEWORKS.items()},
        "target": TARGET,
        "split_seed": at_least(0),
        "forms": grid(one_of(*FORMS), "form names (" + ", ".join(FORMS) + ")", distinct=True),
        "cv": at_least(2),
        "whatif_workers": grid(at_least(1), "worker counts (integers >= 1)", distinct=True),
        "extrap_results": Check('a path to a JSON file (read when it exists) or "" to leave Extra-P out', _extrap_file),
        "n_jobs": at_least(1, also=(-1,), why="-1: every core"),
        "figures_dir": output_folder("figures/"),
    }

    @property
    def folds(self) -> int:
        return min(self.cv, QUICK_CV) if self.quick else self.cv

    @property
    def analysed(self) -> list:
        """Datasets analysed, in :data:`DATASETS` order: ``datasets``, in quick mode only those of
        :data:`QUICK_DATASETS` (all given if none is)."""
        given = [ds for ds in DATASETS if ds in self.datasets]
        if not self.quick:
            return given
        return [ds for ds in given if ds in QUICK_DATASETS] or given

    @property
    def searched_forms(self) -> list:
        """Forms the search tries: ``forms``, in quick mode only those of :data:`QUICK_FORMS` (all of them if none)."""
        if not self.quick:
            return list(self.forms)
        return [f for f in self.forms if f in QUICK_FORMS] or list(QUICK_FORMS)


def check_params(**params) -> Params:
    """The checked :class:`Params` of Chapter 6, or one :class:`~perfkit.chapters.result.ParameterError`.

    Applies :data:`Params.CHECKS` (names, types, values; :func:`~perfkit.chapters.result.make_params`), then
    reads the measured files that ``datasets`` names: each must have ``target`` and enough usable rows for the
    thesis's split (quick mode scales it down instead). A third-party dataset needs a form other than the
    hybrid (which needs the network's cost model). Nothing is fitted.
    """
    from ..schema import resolve

    p = make_params(Params, params)
    for ds in MEASURED:
        if ds in p.analysed:
            name, (n_fit, n_test) = f"{ds}_dataset", MEASURED[ds][1]
            rows = check_steps_file(name, getattr(p, name), p.target, _roles_key(ds), n_fit, n_test, quick=True)
            if rows < n_fit + n_test and not p.quick:
                raise ParameterError(f"{name}: {show_path(resolve(getattr(p, name)))} has {rows} usable rows (status ok), "
                                     f"fewer than the thesis's split of {n_fit} + {n_test}; expected a complete "
                                     f"`perfkit collect {_roles_key(ds)}` output, or leave {ds} out of datasets")
    external = [ds for ds in p.analysed if ds not in MEASURED]
    if external and not [f for f in p.searched_forms if f != "hybrid"]:
        raise ParameterError(f"forms: got {list(p.forms)!r}, which leaves no form for {external[0]} (the hybrid form "
                             "needs the cost model of a network we measured); expected 'thesis' and/or 'loglinear' too")
    return p


# ------------------------------------------------------------------------------------------- data
def _roles_key(ds: str) -> str:
    """The :data:`perfkit.schema.ROLES` entry of a measured dataset: ch5's, or ch4's for every LeNet-5 file."""
    return "ch5" if ds == "ch5" else "ch4"


@dataclass
class Split:
    """One dataset split for Chapter 6: rows to fit, held-out rows every model can predict, column roles."""

    name: str
    X_fit: object
    X_test: object
    y_fit: np.ndarray
    y_test: np.ndarray
    roles: dict
    network: str | None
    fixed: dict | None
    frame: object
    y_all: np.ndarray
    X_all: object
    source: str
    unscored: int


def _load(ds: str, p: Params) -> Split:
    """The split of dataset ``ds``: the thesis's for ours, 2/3 to fit for the third-party ones; held-out rows with
    a category level that no row to fit has are left out (no model can predict them) and counted."""
    from ..data.external import load_external
    from ..data.measured import load_steps, thesis_split
    from ..model.baselines import train_test_split_frame
    from ..model.intervals import seen_rows
    from ..schema import ROLES, resolve

    if ds in MEASURED:
        network, (n_fit, n_test) = MEASURED[ds]
        if p.quick:
            n_fit, n_test = QUICK_ROWS
        path = resolve(getattr(p, f"{ds}_dataset"))
        X, y, frame = load_steps(path, target=p.target, roles=_roles_key(ds))
        X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=n_fit, n_test=n_test, seed=p.split_seed)
        roles = {k: list(v) for k, v in ROLES[_roles_key(ds)].items()}
        from ..model.costs import CONFIG_KEYS

        keys = [k for group in CONFIG_KEYS[network] for k in group]
        cols = [c for r in roles.values() for c in r]
        fixed = {}
        for k in keys:
            if k not in cols and k in frame.columns and frame[k].nunique() == 1:
                v = frame[k].iloc[0]
                fixed[k] = v.item() if isinstance(v, np.generic) else v
        source = f"{path.parent.name}/{path.name}"
    else:
        network, fixed = None, None
        frame, meta = load_external(ds)
        roles = {"numeric": list(meta.numeric), "categorical": list(meta.categorical),
                 "extrinsic": list(meta.extrinsic)}
        if p.quick and len(frame) > sum(QUICK_ROWS):
            frame = frame.sample(n=sum(QUICK_ROWS), random_state=p.split_seed).reset_index(drop=True)
        X = frame[[c for r in roles.values() for c in r]].copy()
        y = frame[meta.target].astype(float)
        X_fit, X_test, y_fit, y_test = train_test_split_frame(X, y, test_size=EXTERNAL_TEST, random_state=p.split_seed)
        source = f"data/external/{ds} ({meta.target})"
    seen = seen_rows(X_fit, X_test, roles["categorical"])
    return Split(ds, X_fit, X_test[seen], np.asarray(y_fit, dtype=float), np.asarray(y_test, dtype=float)[seen],
                 roles, network, fixed or None, frame, np.asarray(y, dtype=float), X, source, int((~seen).sum()))


# ------------------------------------------------------------------------------------------ models
def _interpretable(method: str, s: Split, p: Params):
    """The unfitted estimator of an interpretable ``method`` on split ``s`` (None when it does not apply)."""
    from ..model.generic import GenericPerformanceModel
    from ..model.search import make_form

    if method in ("thesis", "thesis_rel"):
        from ..model.search import THESIS_SEARCH

        kw = dict(THESIS_SEARCH) if p.quick else {}
        if method == "thesis_rel":
            kw["loss"] = "relative"
        return GenericPerformanceModel(**s.roles, random_state=0, **kw)
    if method == "loglinear":
        return make_form("loglinear", **s.roles)
    if method == "hybrid" and s.network is not None:
        return make_form("hybrid", **s.roles, network=s.network, **({"fixed": s.fixed} if s.fixed else {}))
    return None


def _same(a, b) -> bool:
    """Whether two unfitted estimators are the same model (class and settings)."""
    try:
        return type(a) is type(b) and a.get_params() == b.get_params()
    except Exception:  # noqa: BLE001 - settings that cannot be compared are not the same
        return False


#: rough relative cost of one job of each kind, to start the longest first (a shorter tail on few cores)
_COST = {"thesis": 5.0, "thesis_rel": 4.0, "loglinear": 3.0, "RF": 2.0, "GB": 2.0, "rate": 1.0, "SVR": 0.5,
         "hybrid": 0.5}


def _fit_interval_model(estimator, X, y, folds: int, intervals: bool = True):
    """``(model, seconds, note)``: ``estimator`` inside studentised conformal intervals (a plain fit without
    ``intervals``, or when they fail)."""
    from sklearn.base import clone
    from threadpoolctl import threadpool_limits

    from ..model.intervals import ConformalRegressor

    start = time.perf_counter()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not intervals:
            model, note = clone(estimator).fit(X, y), "quick mode: one fit, no intervals"
        else:
            try:
                model = ConformalRegressor(estimator, method="studentized", n_splits=folds, random_state=0).fit(X, y)
                note = ""
            except ValueError as exc:  # e.g. a fold model predicting 0 s: no relative error, no interval
                model, note = clone(estimator).fit(X, y), f"no intervals ({exc})"
    return model, time.perf_counter() - start, note


def _interval_rows(model, s: Split) -> np.ndarray:
    """Held-out rows that get an interval: every row for the studentised and split methods (one model predicts);
    for CV+, the rows that every fold model of ``model`` can predict (each of their category levels is in the
    fold's rows to fit). The folds are the ones :class:`~perfkit.model.ConformalRegressor` draws
    (``KFold(n_splits, shuffle=True, random_state)``)."""
    from sklearn.model_selection import KFold

    from ..model.intervals import predictable_rows

    ok = np.ones(len(s.X_test), dtype=bool)
    if getattr(model, "method", "cv+") != "cv+":
        return ok
    folds = KFold(int(model.n_splits), shuffle=True, random_state=int(model.random_state)).split(s.X_fit)
    for (tr, _), fold_model in zip(folds, model.estimators_):
        ok &= predictable_rows(fold_model, s.X_fit.iloc[tr], s.X_test, s.roles["categorical"])
    return ok


def _fit_baseline(kind: str, roles: dict, X, y):
    from threadpoolctl import threadpool_limits

    from ..model.baselines import make_baseline

    start = time.perf_counter()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make_baseline(kind.lower(), **roles, random_state=0).fit(X, y)
    return model, time.perf_counter() - start, ""


def compute_rate(model) -> float:
    """The hybrid form's compute rate (s per forward FLOP) on one worker, in its common regime.

    With rates by worker count the rate of ``workers=1``; with a regime (the smallest batch) the rate of the
    rows outside it (``batch_size≠…``); with one shared rate, that rate. NaN when the model has no such term.

    >>> class M: terms_ = [("compute", "workers=1; batch_size=8"), ("compute", "workers=1; batch_size≠8"),
    ...                    ("compute", "workers=2; batch_size≠8"), ("step", "")]; rates_ = [1.0, 2.0, 3.0, 4.0]
    >>> compute_rate(M())
    2.0
    """
    for (cost, level), rate in zip(model.terms_, model.rates_):
        if cost != "compute":
            continue
        parts = [part for part in level.split("; ") if part] if level else []
        if all(part == "workers=1" or ("≠" in part and "=" not in part) for part in parts):
            return float(rate)
    return float("nan")


def _rate_samples(estimator, X, y, seeds) -> np.ndarray:
    """The compute rate of ``estimator`` refitted on bootstrap resamples of the rows (one per seed)."""
    from sklearn.base import clone
    from threadpoolctl import threadpool_limits

    out = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in seeds:
            idx = np.random.default_rng(seed).integers(0, len(y), size=len(y))
            try:
                out.append(compute_rate(clone(estimator).fit(X.iloc[idx], y[idx])))
            except ValueError:
                out.append(float("nan"))
    return np.asarray(out, dtype=float)


# --------------------------------------------------------------------------------------- Extra-P
def read_extrap(path, splits: dict) -> dict:
    """Extra-P's held-out MAPE per dataset from ``bench_extrap.py``'s JSON: ``{dataset: {label: row}}``.

    ``row`` has ``MAPE`` (NaN when there is none) and ``note``. A variant of :data:`EXTRAP` counts only when the
    file has it for the dataset on the same split (rows fitted and held out as here); otherwise the row says why
    not ("not run", "another split", "no model"). ``path`` "" or a missing file: every row "not run".
    """
    import json

    from ..schema import resolve

    doc = {}
    where = ""
    if path:
        full = resolve(path)
        where = show_path(full)
        if full.is_file():
            try:
                doc = json.loads(full.read_text())
            except (ValueError, UnicodeDecodeError):
                doc = {}
    results = doc.get("results", {}) if isinstance(doc, dict) else {}
    out = {}
    for ds, s in splits.items():
        rows = {}
        for label, key in EXTRAP.items():
            r = results.get(f"{ds}/{key}") if isinstance(results, dict) else None
            nan = float("nan")
            if not isinstance(r, dict):
                rows[label] = {"MAPE": nan, "note": f"not run (no {ds}/{key} in {where})" if where else "not run"}
                continue
            n_fit, n_test = r.get("fit_rows"), r.get("test_rows")
            if (n_fit, n_test) != (len(s.y_fit), len(s.y_test) + s.unscored):
                rows[label] = {"MAPE": nan, "note": f"not shown: {where} is on another split ({n_fit}/{n_test} rows, "
                                                    f"here {len(s.y_fit)}/{len(s.y_test) + s.unscored})"}
                continue
            value = r.get("mape")
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            predicted = r.get("rows_predicted")
            rows[label] = {"MAPE": float(value) if ok else nan,
                           "note": (f"{where}: Extra-P {r.get('extrap_version', '')}, {predicted} of {n_test} held-out "
                                    "rows predicted" if ok else f"{where}: no model for this split")}
        out[ds] = rows
    return out


# ------------------------------------------------------------------------------------ what-if
def whatif_table(model, base, workers, coverage: float = COVERAGE):
    """:func:`perfkit.model.whatif.whatif` over the worker counts ``workers`` (integers), without its
    extrapolation warning (the table marks those rows; the chapter reads them)."""
    from ..model.intervals import ExtrapolationWarning
    from ..model.whatif import whatif

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        return whatif(model, base, "workers", [int(v) for v in workers], coverage)


def _median_base(s: Split) -> dict:
    """The configuration of the median-time row on one worker (the lower median; every row when none has one)."""
    X, y = s.X_all, s.y_all
    one = np.flatnonzero(X["workers"].to_numpy() == 1) if "workers" in X.columns else np.arange(len(y))
    one = one if one.size else np.arange(len(y))
    order = one[np.argsort(y[one], kind="stable")]
    row = X.iloc[int(order[(len(order) - 1) // 2])]
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}


# ------------------------------------------------------------------------------------------- claims
_B = f"{B} bootstrap resamples"
#: where the resamples of each kind of quantity come from (the ledger's ``resampling`` column)
SOURCES = {
    "heldout": f"{_B} of the held-out rows, the same rows for every model (paired)",
    "coverage": "Clopper-Pearson 95 % interval of a binomial share (held-out rows inside their interval)",
    "rates": "bootstrap resamples of each dataset's fit rows, the hybrid form refitted on each",
}


def _heldout_mape(q, ds):
    from ..report.uncertainty import METRICS, paired_bootstrap

    h = q["heldout"].get(ds)
    if h is None:
        return None
    return paired_bootstrap(h["y"], h["pred"], METRICS["MAPE"])


def mape_difference(q, ds, a, b):
    """MAPE(a) − MAPE(b) on dataset ``ds``'s held-out rows, over the same resamples, as :class:`Evidence`."""
    from ..report.uncertainty import Evidence

    m = _heldout_mape(q, ds)
    if m is None or a not in m or b not in m:
        return None
    (ea, sa), (eb, sb) = m[a], m[b]
    return Evidence.from_samples(ea - eb, sa - sb, SOURCES["heldout"])


def best_black_box_ratio(q, ds, a="auto"):
    """MAPE(a) / the lowest MAPE of the black boxes, per resample (the best box of each resample), as Evidence."""
    from ..report.uncertainty import Evidence

    m = _heldout_mape(q, ds)
    boxes = [k for k in BLACK_BOXES if m is not None and k in m]
    if m is None or a not in m or not boxes:
        return None
    best_e = min(m[k][0] for k in boxes)
    best_s = np.min(np.vstack([m[k][1] for k in boxes]), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return Evidence.from_samples(m[a][0] / best_e, m[a][1] / best_s, SOURCES["heldout"])


def coverage_evidence(inside: int, n: int):
    """The share ``inside / n`` with its Clopper-Pearson 95 % interval (:class:`Evidence` without resamples).

    >>> e = coverage_evidence(90, 100); round(e.estimate, 2), round(e.lo, 3), round(e.hi, 3)
    (0.9, 0.824, 0.951)
    """
    from scipy.stats import beta

    from ..report.uncertainty import Evidence

    if n < 1:
        return None
    lo = float(beta.ppf(0.025, inside, n - inside + 1)) if inside > 0 else 0.0
    hi = float(beta.ppf(0.975, inside + 1, n - inside)) if inside < n else 1.0
    return Evidence(inside / n, lo, hi, None, SOURCES["coverage"])


def _coverage(q, ds, method="auto"):
    c = q["inside"].get(ds, {}).get(method)
    return None if c is None else coverage_evidence(*c)


def rate_ratio(q):
    """Chapter 5's compute rate over Chapter 4's (hybrid form, one worker), over their bootstrap refits."""
    from ..report.uncertainty import Evidence

    r = q["compute_rate"]
    if "ch4" not in r or "ch5" not in r:
        return None
    (e4, s4), (e5, s5) = r["ch4"], r["ch5"]
    n = min(len(s4), len(s5))
    with np.errstate(divide="ignore", invalid="ignore"):
        return Evidence.from_samples(e5 / e4, s5[:n] / s4[:n], f"{n} {SOURCES['rates']}")


def _mape_text(q, ds, *methods):
    m = _heldout_mape(q, ds)
    from ..report.uncertainty import Evidence

    parts = []
    for k in methods:
        if k in m:
            e = Evidence.from_samples(m[k][0], m[k][1])
            name = q["auto_form"][ds] if k == "auto" else k
            parts.append(f"{name} {e.text(3)} %")
    return "MAPE " + ", ".join(parts)


def _boxes_text(q, ds):
    return _mape_text(q, ds, "auto", *BLACK_BOXES)


def _coverage_text(q, ds):
    c = q["inside"][ds]["auto"]
    e = coverage_evidence(*c)
    return (f"{c[0]} of {c[1]} held-out rows inside the {int(100 * COVERAGE)} % intervals of {q['auto_form'][ds]}: "
            f"{e.text(3)}")


def _rate_text(q):
    r = q["compute_rate"]
    e = rate_ratio(q)
    return (f"ρ_F(ch4) {fmt(r['ch4'][0])}, ρ_F(ch5) {fmt(r['ch5'][0])} s per forward FLOP; ratio ch5/ch4 "
            f"{e.text(3)}")


def _dataset_claims(ds: str) -> tuple:
    name = DATASET_NAMES[ds]
    missing = f"{ds} is not among the datasets analysed"
    future = "§6.1 (refinement of the performance model)" if ds in MEASURED else \
        "§6.1 (extending the model to other applications and frameworks)"
    return (
        Claim(f"auto_vs_rf[{ds}]", f"{name}: the auto-selected interpretable model is at least as accurate as the "
              "random forest", f"{future}; the thesis's comparison: §4.3.4, §5.2.2",
              "MAPE(auto) − MAPE(RF) < 0 percentage points", needs=("heldout",),
              quantity=lambda q, ds=ds: mape_difference(q, ds, "auto", "RF"), side="<", threshold=0.0,
              evidence=lambda q, ds=ds: _mape_text(q, ds, "auto", "RF"), missing=missing),
        Claim(f"auto_vs_boxes[{ds}]", f"{name}: the auto-selected model is within 1.2× the MAPE of the best black box",
              f"{future}", "MAPE(auto) / min(MAPE(RF), MAPE(SVR), MAPE(GB)) < 1.2 (the best box of each resample)",
              needs=("heldout",), quantity=lambda q, ds=ds: best_black_box_ratio(q, ds), side="<", threshold=1.2,
              evidence=lambda q, ds=ds: _boxes_text(q, ds), missing=missing),
        Claim(f"auto_vs_thesis[{ds}]", f"{name}: the auto-selected form is more accurate than the thesis form",
              "§6.1 (more complex interactions between the terms; better expressions)",
              "MAPE(auto) − MAPE(thesis form, MAE) < 0 percentage points", needs=("heldout",),
              quantity=lambda q, ds=ds: mape_difference(q, ds, "auto", "thesis"), side="<", threshold=0.0,
              evidence=lambda q, ds=ds: _mape_text(q, ds, "auto", "thesis"), missing=missing),
        Claim(f"coverage[{ds}]", f"{name}: 90 % intervals of the auto-selected model cover 85-95 % of the held-out "
              "rows", "§6.1 (integration into practical systems: a prediction needs its uncertainty)",
              "0.85 <= share of held-out rows inside their 90 % interval <= 0.95", needs=("inside",),
              quantity=lambda q, ds=ds: _coverage(q, ds), side="in", threshold=COVERAGE_BAND,
              evidence=lambda q, ds=ds: _coverage_text(q, ds), missing=missing),
    )


#: The claims of Chapter 6 and their rules, in ledger order: four per dataset, then the compute rate.
CLAIMS = tuple(c for ds in DATASETS for c in _dataset_claims(ds)) + (
    Claim("compute_rate", "the hybrid form's compute rate (s per FLOP, one worker) is the same in Chapters 4 and 5 "
          f"within {100 * (RATE_FACTOR - 1):.0f} %", "§6.1 (refinement; hybrid of analytical and empirical modelling, "
          "Chapter 6 introduction)", f"1/{RATE_FACTOR:g} <= ρ_F(ch5) / ρ_F(ch4) <= {RATE_FACTOR:g}",
          needs=("compute_rate",), quantity=rate_ratio, side="in", threshold=(1 / RATE_FACTOR, RATE_FACTOR),
          evidence=_rate_text, missing="needs the hybrid form on both ch4 and ch5"),
)


# ------------------------------------------------------------------------------------------- figures
def _log_ticks(ax, lo: float, hi: float) -> None:
    """Plain-number ticks 1-2-5 per decade on a log axis from ``lo`` to ``hi`` (no minor labels)."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    ticks = [m * 10.0 ** e for e in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
             for m in (1, 2, 5) if lo <= m * 10.0 ** e <= hi]
    if len(ticks) > 7:
        ticks = [t for t in ticks if str(t).lstrip("0.").startswith("1")]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])


def _plot_heldout(table, datasets):
    """Fig. 6.1: held-out MAPE of every method per dataset, with 95 % bootstrap intervals (log scale)."""
    from ..report import plots

    ncols = min(4, len(datasets))
    nrows = -(-len(datasets) // ncols)
    fig, axes = plots.new_figure(nrows, ncols, figsize=(2.7 * ncols + 1.3, 3.6 * nrows), squeeze=False,
                                 sharey=True)
    keys = list(METHODS) + list(EXTRAP)
    ypos = np.arange(len(keys))[::-1]
    colours = {**{m: "#1f78b4" for m in INTERPRETABLE}, "auto": "#33a02c", **{m: "#777777" for m in BLACK_BOXES}}
    for ax in axes.flat[len(datasets):]:
        ax.set_visible(False)
    for ax, ds in zip(axes.flat, datasets):
        t = table[table["dataset"] == ds].set_index("method")
        values = [float(t.loc[k, "MAPE"]) for k in keys if k in t.index and np.isfinite(t.loc[k, "MAPE"])]
        lows = [float(t.loc[k, "MAPE_lower"]) for k in keys if k in t.index and np.isfinite(t.loc[k, "MAPE_lower"])]
        highs = [float(t.loc[k, "MAPE_upper"]) for k in keys if k in t.index and np.isfinite(t.loc[k, "MAPE_upper"])]
        lo, hi = min(values + lows) / 1.6, max(values + highs) * 4.0
        for y, key in zip(ypos, keys):
            if key not in t.index or not np.isfinite(t.loc[key, "MAPE"]):
                ax.text(lo * 1.1, y, "not run" if key in EXTRAP else "n/a", va="center", fontsize=6, color="#777777")
                continue
            r = t.loc[key]
            colour = colours.get(key, "#e08214")
            if np.isfinite(r["MAPE_lower"]):
                ax.plot([r["MAPE_lower"], r["MAPE_upper"]], [y, y], "-", color=colour, lw=1.2)
            ax.plot([r["MAPE"]], [y], "D" if key in EXTRAP else "o", color=colour, ms=4)
            right = r["MAPE_upper"] if np.isfinite(r["MAPE_upper"]) else r["MAPE"]
            ax.text(right * 1.12, y, f"{r['MAPE']:.3g}", va="center", fontsize=6)
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        _log_ticks(ax, lo, hi)
        ax.set_title(DATASET_NAMES[ds], fontsize=8)
        ax.set_xlabel("held-out MAPE (%)")
        ax.grid(False, axis="y")
    for row in axes:
        row[0].set_yticks(ypos, [METHOD_LABELS.get(k, k) for k in keys], fontsize=7)
    return fig


def _plot_whatif(table, ds, model_name, base_text):
    """Figs. 6.2-6.3: predicted epoch time, speedup and efficiency against workers, with intervals."""
    from ..report.plots import whatif_figure

    return whatif_figure(table, "workers", title=f"what if: {DATASET_NAMES[ds]}, {model_name}\n{base_text}")


# ------------------------------------------------------------------------------------------ formulas
#: coefficients (seconds) below this are written as 0: a bound-constrained fit leaves them at 1e-40 or so, digits
#: that differ from run to run and mean nothing
TINY = 1e-12


def thesis_formula(model, digits: int = 3) -> str:
    """The fitted thesis form (eq. 4.4) in one line: ``t = (Σ a·I^p + Σ κ[c=ℓ]) · Π E^q + C`` (terms with
    a coefficient below :data:`TINY` left out)."""
    t = model.params_

    def g(v):
        return f"{v:.{digits}g}"

    inner = [f"{g(r.a)}·{r.column}^{g(r.p)}" for r in t[t["kind"] == "numeric"].itertuples() if abs(r.a) >= TINY]
    inner += [f"{g(r.a)}·[{r.term}]" for r in t[t["kind"] == "categorical"].itertuples() if abs(r.a) >= TINY]
    outer = [f"{r.column}^{g(r.q)}" for r in t[t["kind"] == "extrinsic"].itertuples()]
    c = float(t.loc[t["kind"] == "constant", "C"].iloc[0])
    return ("t = (" + " + ".join(inner or ["0"]) + ")" + "".join(f" · {o}" for o in outer)
            + (f" + {g(c)}" if abs(c) >= TINY else ""))


def _formula(model) -> str:
    return model.formula() if hasattr(model, "formula") else thesis_formula(model)


# ------------------------------------------------------------------------------------------ analyse
def analyse(params: Params | None = None, /, **kwargs) -> ChapterResult:
    """Chapter 6 on the measured files and the third-party datasets.

    ``analyse(datasets=["ch4"], ...)`` or ``analyse(check_params(...))``; the parameters (:class:`Params`)
    are checked first (:func:`check_params`): a value that is not allowed raises one
    :class:`~perfkit.chapters.result.ParameterError` before anything is fitted.
    """
    import pandas as pd
    from joblib import delayed

    from ..model.fitting import _parallel
    from ..model.intervals import ExtrapolationWarning, coverage_of, predictable_rows
    from ..model.metrics import mape, r2
    from ..model.search import n_parameters, search_forms
    from ..report.uncertainty import METRICS, paired_bootstrap, percentile_interval

    p = checked_params(params, kwargs, Params, check_params)
    res = ChapterResult("ch6", p)
    T, V, F, q, fits = res.tables, res.views, res.figures, res.numbers, res.fits
    folds = p.folds
    datasets = p.analysed
    splits = {ds: _load(ds, p) for ds in datasets}
    q.update(datasets=datasets, folds=folds, quick=p.quick,
             rows={ds: dict(fit=len(s.y_fit), test=len(s.y_test), unscored=s.unscored, source=s.source)
                   for ds, s in splits.items()})
    for ds, s in splits.items():
        res.notes.append(f"{ds}: {s.source}, fit on {len(s.y_fit)}, held out {len(s.y_test)}"
                         + (f" ({s.unscored} more held-out rows have a category level no row to fit has: not scored)"
                            if s.unscored else ""))
    if p.quick:
        left = [ds for ds in p.datasets if ds not in datasets]
        res.notes.append(f"quick mode: {QUICK_ROWS[0]}/{QUICK_ROWS[1]} rows per dataset, forms "
                         f"{', '.join(p.searched_forms)}, {folds} folds, the thesis form with the search's engine "
                         "budget and no intervals" + (f"; {', '.join(left)} left out" if left else ""))
    timings = []

    # §1 the form search per dataset (its candidates × folds in parallel)
    searches = {}
    for ds, s in splits.items():
        forms = [f for f in p.searched_forms if f != "hybrid" or s.network is not None]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            searches[ds] = search_forms(s.X_fit, s.y_fit, **s.roles, forms=forms, network=s.network, cv=folds,
                                        random_state=0, n_jobs=p.n_jobs, progress=p.progress,
                                        options={"hybrid": {"fixed": s.fixed}} if s.fixed else None)
        fits[f"search[{ds}]"] = searches[ds]
        # held-out rows the chosen model has no rate for (a hybrid's rates by levels cover the combinations seen
        # in fit) are left out for every method, like a level no row to fit has, and counted
        covered = predictable_rows(searches[ds].estimator_, s.X_fit, s.X_test, s.roles["categorical"])
        if not covered.all():
            lost = int((~covered).sum())
            splits[ds] = s = replace(s, X_test=s.X_test[covered], y_test=s.y_test[covered], unscored=s.unscored + lost)
            q["rows"][ds].update(test=len(s.y_test), unscored=s.unscored)
            res.notes.append(f"{ds}: {lost} more held-out rows have a combination of levels the auto-selected "
                             f"{searches[ds].table.loc[searches[ds].chosen, 'form']} form has no rate for: not scored")
        timings.append(dict(dataset=ds, method="auto", what="form search: CV of every candidate, then the chosen "
                            "one's intervals", seconds=searches[ds].fit_time))
        for r in searches[ds].table.itertuples():
            timings.append(dict(dataset=ds, method=f"candidate: {r.form} ({r.terms})", what="one fold fit, mean",
                                seconds=r.fit_seconds))

    # §2 the interpretable forms with conformal intervals, the black boxes and the hybrid's bootstrap refits (section 4),
    # every fit in one parallel batch, the longest first
    jobs, reuse = [], {}
    n_rate = QUICK_RATE_B if p.quick else RATE_B
    for ds, s in splits.items():
        chosen = searches[ds].candidates[searches[ds].chosen].estimator
        for m in INTERPRETABLE:
            est = _interpretable(m, s, p)
            if est is None:
                continue
            if _same(est, chosen) and searches[ds].cv == folds:
                reuse[(ds, m)] = searches[ds].model_
                continue
            intervals = not (p.quick and m in ("thesis", "thesis_rel"))
            jobs.append(((ds, m), delayed(_fit_interval_model)(est, s.X_fit, s.y_fit, folds, intervals)))
        for m in BLACK_BOXES:
            jobs.append(((ds, m), delayed(_fit_baseline)(m, s.roles, s.X_fit, s.y_fit)))
        if ds in ("ch4", "ch5") and s.network is not None:
            k = ("ch4", "ch5").index(ds)
            for i, c in enumerate(np.array_split(np.arange(n_rate), min(n_rate, 8))):
                jobs.append(((ds, "rate", i), delayed(_rate_samples)(_interpretable("hybrid", s, p), s.X_fit, s.y_fit,
                                                                     [[SEED, 6, k, int(b)] for b in c])))
    jobs.sort(key=lambda job: -_COST.get(job[0][1], 0.0))  # stable: dataset order within a kind
    start = time.perf_counter()
    done = _parallel(p.n_jobs, None, [j for _, j in jobs], len(jobs), "Chapter 6: intervals, baselines, bootstrap",
                     p.progress)
    timings.append(dict(dataset="all", method="batch", what="every fit of section 2 and the hybrid's bootstrap, "
                        "in parallel (wall time)", seconds=time.perf_counter() - start))
    results = {key: out for (key, _), out in zip(jobs, done)}
    models = {key: out for key, out in results.items() if len(key) == 2}
    for key, model in reuse.items():
        models[key] = (model, 0.0, "the auto-selected model (the same form and settings)")

    # held-out predictions, intervals and the tidy Table 6.1
    rows, heldout, inside = [], {}, {}
    auto_form, auto_terms = {}, {}
    for ds, s in splits.items():
        sr = searches[ds]
        chosen_row = sr.table.loc[sr.chosen]
        auto_form[ds], auto_terms[ds] = str(chosen_row["form"]), str(chosen_row["terms"])
        entries = {"auto": (sr.model_, sr.fit_time, "")}
        entries.update({m: models[(ds, m)] for m in (*INTERPRETABLE, *BLACK_BOXES) if (ds, m) in models})
        preds, inside[ds] = {}, {}
        for m, (model, seconds, note) in entries.items():
            fits[f"{m}[{ds}]"] = model
            has_iv = callable(getattr(model, "predict_interval", None))
            extrapolated = 0
            if has_iv:
                est = model.estimator_
                pred = np.asarray(est.predict(s.X_test), dtype=float)
                ok = _interval_rows(model, s)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ExtrapolationWarning)
                    iv = model.predict_interval(s.X_test[ok], COVERAGE)
                cov = coverage_of(iv, s.y_test[ok])
                n_iv = int(ok.sum())
                inside[ds][m] = (round(cov * n_iv), n_iv)  # rows inside their interval, rows with one
                extrapolated = int(iv["extrapolated"].sum())
                if not ok.all():
                    note = (note + "; " if note else "") + (f"{int((~ok).sum())} held-out rows have no interval (a "
                                                            "category level missing from a fold's rows)")
            else:
                pred, cov, est = np.asarray(model.predict(s.X_test), dtype=float), float("nan"), model
            preds[m] = pred
            one_fit = getattr(est, "fit_time_", float("nan"))
            if m in BLACK_BOXES:
                one_fit = seconds
            timings.append(dict(dataset=ds, method=m, what="one fit on every row to fit", seconds=float(one_fit)))
            if m != "auto" and has_iv and (ds, m) not in reuse:
                timings.append(dict(dataset=ds, method=m, what=f"fit with intervals ({folds} folds + 1)",
                                    seconds=float(seconds)))
            cov_e = coverage_evidence(*inside[ds][m]) if m in inside[ds] else None
            form = (f"{auto_form[ds]}: {auto_terms[ds]}" if m == "auto" else
                    "" if m in BLACK_BOXES else METHOD_LABELS[m])
            rows.append(dict(dataset=ds, method=m, label=METHOD_LABELS[m], form=form,
                             n_params=float(n_parameters(est)) if m not in BLACK_BOXES else float("nan"),
                             MAPE=float(mape(s.y_test, pred)), R2=float(r2(s.y_test, pred)),
                             coverage=cov, coverage_lower=cov_e.lo if cov_e else float("nan"),
                             coverage_upper=cov_e.hi if cov_e else float("nan"),
                             extrapolated=extrapolated, n_test=len(s.y_test), unscored=s.unscored, note=note))
        heldout[ds] = {"y": s.y_test, "pred": preds}
    q.update(heldout=heldout, inside=inside, auto_form=auto_form, auto_terms=auto_terms)
    table = pd.DataFrame(rows)
    ci = {}
    for ds in datasets:
        for m, (est, samples) in paired_bootstrap(heldout[ds]["y"], heldout[ds]["pred"], METRICS["MAPE"]).items():
            ci[(ds, m)] = percentile_interval(samples)
    table.insert(table.columns.get_loc("MAPE") + 1, "MAPE_lower", [ci[(d, m)][0] for d, m in
                                                                  zip(table["dataset"], table["method"])])
    table.insert(table.columns.get_loc("MAPE_lower") + 1, "MAPE_upper", [ci[(d, m)][1] for d, m in
                                                                        zip(table["dataset"], table["method"])])
    extrap = read_extrap(p.extrap_results, splits) if p.extrap_results else \
        {ds: {label: {"MAPE": float("nan"), "note": "not run (extrap_results is \"\")"} for label in EXTRAP}
         for ds in datasets}
    q["extrap"] = extrap
    nan = float("nan")
    extra = [dict(dataset=ds, method=label, label=label, form=f"Extra-P PMNF, variant {EXTRAP[label]}",
                  n_params=nan, MAPE=r["MAPE"], MAPE_lower=nan, MAPE_upper=nan, R2=nan, coverage=nan,
                  coverage_lower=nan, coverage_upper=nan, extrapolated=0, n_test=len(splits[ds].y_test),
                  unscored=splits[ds].unscored, note=r["note"])
             for ds in datasets for label, r in extrap[ds].items()]
    table = pd.concat([table, pd.DataFrame(extra)], ignore_index=True)
    order = {m: i for i, m in enumerate(list(METHODS) + list(EXTRAP))}
    table = table.sort_values(["dataset", "method"], key=lambda c: c.map(
        {d: i for i, d in enumerate(DATASETS)} if c.name == "dataset" else order), kind="stable")
    T["table6_1_heldout"] = table.reset_index(drop=True)
    V["table6_1_heldout"] = _heldout_view(T["table6_1_heldout"], datasets)
    q["mape"] = {ds: {r.method: r.MAPE for r in table[table["dataset"] == ds].itertuples()} for ds in datasets}
    q["r2"] = {ds: {r.method: r.R2 for r in table[table["dataset"] == ds].itertuples()} for ds in datasets}
    q["coverage"] = {ds: {m: c[0] / c[1] for m, c in inside[ds].items()} for ds in datasets}
    F["fig6_1_heldout_mape"] = _plot_heldout(T["table6_1_heldout"], datasets)

    # §2 the candidates and the formulas
    cand = []
    for ds in datasets:
        t = searches[ds].table.drop(columns=["fit_seconds"]).copy()
        t.insert(0, "dataset", ds)
        cand.append(t)
        V[f"cv_{ds}"] = _candidates_view(searches[ds].table)
    T["table6_2_candidates"] = pd.concat(cand, ignore_index=True)
    formulas = []
    for ds in datasets:
        formulas.append(dict(dataset=ds, method="auto", form=f"{auto_form[ds]}: {auto_terms[ds]}",
                             formula=_formula(searches[ds].estimator_)))
        for m in ("hybrid", "thesis"):
            if (ds, m) in models and not (m == "hybrid" and (ds, m) in reuse):
                est = models[(ds, m)][0]
                est = getattr(est, "estimator_", est)
                formulas.append(dict(dataset=ds, method=m, form=METHOD_LABELS[m], formula=_formula(est)))
    T["table6_3_formulas"] = pd.DataFrame(formulas)
    q["formulas"] = T["table6_3_formulas"]

    # §3 what-if curves on our data
    q["whatif"] = {}
    for k, ds in enumerate(WHATIF_DATASETS):
        if ds not in splits:
            continue
        s = splits[ds]
        base = _median_base(s)
        model_name, table_w = None, None
        for name, model in [(f"auto-selected ({auto_form[ds]})", searches[ds].model_)] + [
                (METHOD_LABELS[m], models[(ds, m)][0]) for m in WHATIF_FALLBACK if (ds, m) in models]:
            if not callable(getattr(model, "predict_interval", None)):
                continue
            try:
                table_w = whatif_table(model, base, p.whatif_workers)
            except ValueError as exc:
                res.notes.append(f"what-if {ds}: {name} cannot predict every worker count ({exc}); the next form "
                                 "is used")
                continue
            model_name = name
            break
        if table_w is None:
            res.notes.append(f"what-if {ds}: no interpretable form with intervals can predict these worker counts")
            continue
        stem = f"table6_{4 + k}_whatif_{ds}"
        T[stem] = table_w
        shown = ", ".join(f"{c}={v}" for c, v in base.items() if c != "workers")
        q["whatif"][ds] = dict(model=model_name, base=base, table=table_w, stem=stem)
        F[f"fig6_{2 + k}_whatif_{ds}"] = _plot_whatif(table_w, ds, model_name, f"base: {shown}")

    # §4 the hybrid's rates on our data, and their bootstrap (refitted in the batch above)
    rates, q["compute_rate"] = [], {}
    for ds in ("ch4", "ch5"):
        if (ds, "hybrid") not in models:
            continue
        model = models[(ds, "hybrid")][0]
        est = getattr(model, "estimator_", model)
        t = est.params_.drop(columns=["counts"])
        t.insert(0, "dataset", ds)
        rates.append(t)
        samples = np.concatenate([out for key, out in results.items() if key[:2] == (ds, "rate")])
        q["compute_rate"][ds] = (compute_rate(est), samples)
    if rates:
        T["table6_6_hybrid_rates"] = pd.concat(rates, ignore_index=True)
    if len(q["compute_rate"]) < 2:
        q["compute_rate"] = None
    q["rate_b"] = n_rate

    # timings (machine-dependent: shown in the executed notebook, never written to figures/) and the ledger
    q["timings"] = pd.DataFrame(timings)
    label = " + ".join(splits[ds].source for ds in datasets)
    T["claims_ch6"] = judge_all("6", label, CLAIMS, q)
    from .readings import ch6_readings

    res.readings = ch6_readings(res)
    return res


def _heldout_view(table, datasets):
    """Table 6.1 for reading: one row per method, per dataset MAPE [95 % interval], R² and the 90 % coverage."""
    import pandas as pd

    from ..report.tables import sig

    out = {}
    for ds in datasets:
        t = table[table["dataset"] == ds].set_index("method")
        mape_col, r2_col, cov_col = [], [], []
        for key in t.index:
            r = t.loc[key]
            if np.isfinite(r["MAPE"]):
                ci = (f" [{sig(r['MAPE_lower'])}, {sig(r['MAPE_upper'])}]" if np.isfinite(r["MAPE_lower"]) else "")
                mape_col.append(sig(r["MAPE"]) + ci)
            else:
                mape_col.append("not run" if key in EXTRAP else "")
            r2_col.append(sig(r["R2"]) if np.isfinite(r["R2"]) else "")
            cov_col.append(f"{100 * r['coverage']:.1f} %" if np.isfinite(r["coverage"]) else "")
        out[(ds, "MAPE % [95 %]")] = pd.Series(mape_col, index=t.index)
        out[(ds, "R²")] = pd.Series(r2_col, index=t.index)
        out[(ds, "in 90 % interval")] = pd.Series(cov_col, index=t.index)
    order = [m for m in list(METHODS) + list(EXTRAP) if any(m in s.index for s in out.values())]
    view = pd.DataFrame(out).reindex(order)
    view.index = [METHOD_LABELS.get(m, m) for m in view.index]
    return view


def _candidates_view(table):
    """A search's candidates, best CV MAPE first, with the one-standard-error choice marked."""
    from ..report.tables import rounded

    t = table.sort_values("cv_mape", kind="stable").copy()
    t["choice"] = np.where(t["chosen"], "chosen", np.where(t["within_1se"], "within 1 se", ""))
    t = t[["form", "terms", "n_params", "cv_mape", "cv_mape_se", "unscored", "choice"]]
    return rounded(t.rename(columns={"cv_mape": "CV MAPE (%)", "cv_mape_se": "± se", "n_params": "parameters"}))
