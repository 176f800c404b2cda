"""Chapter 6's parameters (the notebook's ``parameters`` cell), their rules, and the constants of its design:
the datasets and their splits, the methods compared, the budgets of quick mode."""
from __future__ import annotations

from dataclasses import dataclass

from ...schema import resolve
from ..ch4 import TARGET, check_steps_file
from ..result import (ParameterError, ParamsBase, at_least, existing_file, grid, make_params, one_of,
                      optional_file, output_folder, seed, show_path)

__all__ = ["Params", "check_params", "roles_key", "FRAMEWORKS", "DATASETS", "DATASET_NAMES", "MEASURED",
           "EXTERNAL_TEST", "QUICK_ROWS", "QUICK_CV", "QUICK_FORMS", "QUICK_RATE_B", "QUICK_DATASETS", "FORMS",
           "TUNED", "NON_FORMS",
           "COVERAGE", "COVERAGE_BAND", "RATE_B", "RATE_FACTOR", "INTERPRETABLE", "BLACK_BOXES", "METHODS",
           "METHOD_LABELS", "EXTRAP", "WHATIF_DATASETS", "WHATIF_FALLBACK"]

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
#: :data:`perfkit.model.selection.search.THESIS_SEARCH`)
QUICK_CV, QUICK_FORMS, QUICK_RATE_B = 3, ("loglinear", "hybrid"), 50
#: quick mode: the datasets kept (NVIDIA DLE's five categoricals make its fits too slow for a smoke test); the thesis
#: form is fitted once, without intervals
QUICK_DATASETS = ("ch4", "ch5", "lambda")
#: forms Chapter 6's search can try (of :func:`perfkit.model.forms.registry.table_forms`); the symbolic form is
#: fitted on every dataset as a method of its own (Tables 6.1 and 6.3) but not searched: `perfkit fit --form auto`
#: tries it too
FORMS = ("thesis", "loglinear", "hybrid")
#: nominal coverage of the prediction intervals
COVERAGE = 0.9
#: the band the coverage claim allows around :data:`COVERAGE`
COVERAGE_BAND = (0.85, 0.95)
#: bootstrap refits of the hybrid form per measured dataset (the compute-rate claim)
RATE_B = 200
#: the compute-rate claim: the ratio of Chapter 5's to Chapter 4's rate lies within this factor of 1
RATE_FACTOR = 1.2
#: the interpretable forms fitted with conformal intervals, then the black boxes (default settings), then the
#: calibrated black-box reference (the best of RF, GB and SVR, each tuned by CV on the rows to fit:
#: :func:`perfkit.model.selection.blackbox.black_box_reference`), in table order
INTERPRETABLE = ("thesis", "thesis_rel", "loglinear", "hybrid", "symbolic")
BLACK_BOXES = ("RF", "SVR", "GB")
TUNED = "tuned"
NON_FORMS = (*BLACK_BOXES, TUNED)
METHODS = ("auto", *INTERPRETABLE, *NON_FORMS)
#: method → label in tables and figures
METHOD_LABELS = {"auto": "auto-selected form", "thesis": "thesis form (eq. 4.4, MAE)",
                 "thesis_rel": "thesis form, relative loss", "loglinear": "log-linear (richest)",
                 "hybrid": "hybrid (costs × rates)", "symbolic": "symbolic regression (gplearn)",
                 "RF": "random forest", "SVR": "SVR", "GB": "gradient boosting",
                 TUNED: "best black box, tuned by CV"}
#: Extra-P rows of Table 6.1: label → key of ``benchmarks/results/extrap.json`` under ``<dataset>/`` (variants fixed
#: in advance, never picked on the held-out rows: a, one model of every numeric parameter; b, one model per level
#: of the categorical that explains most of the fit rows' variance; both Extra-P's default modeler)
EXTRAP = {"Extra-P (a)": "a/default", "Extra-P (b)": "b/default"}
#: the what-if curves: datasets (ours: the worker count is a column) and the interpretable fallback when the
#: auto-selected form cannot predict a worker count it has not seen (a hybrid with one rate per worker level)
WHATIF_DATASETS = ("ch4", "ch5")
WHATIF_FALLBACK = ("loglinear", "thesis_rel", "thesis")


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
    cache: bool = True  # read the results cache when parameters, data and code are unchanged (False: recompute)

    #: the rule of each parameter (``quick``, ``progress`` and ``cache`` need only be bools)
    CHECKS = {
        "datasets": grid(one_of(*DATASETS), "dataset names (" + ", ".join(DATASETS) + ")", distinct=True),
        "ch4_dataset": existing_file("a `perfkit collect ch4` output"),
        "ch5_dataset": existing_file("a `perfkit collect ch5` output"),
        **{f"{ds}_dataset": existing_file(f"a `perfkit collect ch4` output of {fw}") for ds, fw in FRAMEWORKS.items()},
        "target": TARGET,
        "split_seed": seed(),
        "forms": grid(one_of(*FORMS), "form names (" + ", ".join(FORMS) + ")", distinct=True),
        "cv": at_least(2),
        "whatif_workers": grid(at_least(1), "worker counts (integers >= 1)", distinct=True),
        "extrap_results": optional_file('a path to a JSON file (read when it exists) or "" to leave Extra-P out'),
        "n_jobs": at_least(1, also=(-1,), why="-1: every core"),
        "figures_dir": output_folder("figures/"),
    }

    @property
    def folds(self) -> int:
        """Folds of the search and of the intervals: ``cv``, at most :data:`QUICK_CV` in quick mode."""
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

    @property
    def rate_b(self) -> int:
        """Bootstrap refits of the hybrid form per measured dataset: :data:`RATE_B`, :data:`QUICK_RATE_B` in quick mode."""
        return QUICK_RATE_B if self.quick else RATE_B


def roles_key(ds: str) -> str:
    """The :data:`perfkit.schema.ROLES` entry of a measured dataset: ch5's, or ch4's for every LeNet-5 file."""
    return "ch5" if ds == "ch5" else "ch4"


def check_params(**params) -> Params:
    """The checked :class:`Params` of Chapter 6, or one :class:`~perfkit.chapters.result.ParameterError`.

    Applies :data:`Params.CHECKS` (names, types, values; :func:`~perfkit.chapters.result.make_params`), then
    reads the measured files that ``datasets`` names: each must have ``target`` and enough usable rows for the
    thesis's split (quick mode scales it down instead). A third-party dataset needs a form other than the
    hybrid (which needs the network's cost model). Nothing is fitted.
    """
    p = make_params(Params, params)
    for ds in MEASURED:
        if ds in p.analysed:
            name, (n_fit, n_test) = f"{ds}_dataset", MEASURED[ds][1]
            rows = check_steps_file(name, getattr(p, name), p.target, roles_key(ds), n_fit, n_test, quick=True)
            if rows < n_fit + n_test and not p.quick:
                raise ParameterError(f"{name}: {show_path(resolve(getattr(p, name)))} has {rows} usable rows (status ok), "
                                     f"fewer than the thesis's split of {n_fit} + {n_test}; expected a complete "
                                     f"`perfkit collect {roles_key(ds)}` output, or leave {ds} out of datasets")
    external = [ds for ds in p.analysed if ds not in MEASURED]
    if external and not [f for f in p.searched_forms if f != "hybrid"]:
        raise ParameterError(f"forms: got {list(p.forms)!r}, which leaves no form for {external[0]} (the hybrid form "
                             "needs the cost model of a network we measured); expected 'thesis' and/or 'loglinear' too")
    return p
