"""Chapter 8's parameters (the notebook's ``parameters`` cell), their rules and the constants of its design."""
from __future__ import annotations

from dataclasses import dataclass

from ..ch4 import FIT_CHECKS
from ..result import ParameterError, ParamsBase, at_least, grid, make_params, number_at_least, one_of

__all__ = ["Params", "check_params", "DATASETS", "DATASET_NAMES", "QUICK_DATASETS", "PLAN_MODELS"]

#: the studies Chapter 8 can run: Lambda's rows (both precisions, and each alone) and NVIDIA's DGX tables
DATASETS = ("lambda", "lambda_fp16", "lambda_fp32", "nvidia_dle")
#: what each study is, for tables and figures
DATASET_NAMES = {"lambda": "Lambda, fp16 and fp32", "lambda_fp16": "Lambda, fp16", "lambda_fp32": "Lambda, fp32",
                 "nvidia_dle": "NVIDIA DeepLearningExamples (DGX-1, DGX-2, DGX A100)"}
#: quick mode keeps the first study asked for (the roofline form alone, the log-linear form its only baseline)
QUICK_DATASETS = 1
#: the workloads a planning example may name: Lambda's models
PLAN_MODELS = ("bert_base_squad", "bert_large_squad", "gnmt", "ncf", "resnet50", "ssd", "tacotron2",
               "transformerxlbase", "transformerxllarge", "waveglow")


@dataclass(frozen=True)
class Params(ParamsBase):
    """Parameters of Chapter 8 (the notebook's ``parameters`` cell); :data:`Params.CHECKS` are their rules."""

    quick: bool = False  # small budgets for tests: the first study only, the roofline form alone, the log-linear baseline alone
    datasets: list = ("lambda", "lambda_fp16", "lambda_fp32", "nvidia_dle")  # the studies, each one GPU type left out at a time
    lambda_screen: bool = True  # leave out Lambda's rows no training run can produce (ncf on 4-8 H100s; see data/external/README.md)
    coverage: float = 0.9  # level of the intervals calibrated on held-out GPUs
    plan_model: str = "resnet50"  # planning example: a Lambda model ...
    plan_precision: str = "fp16"  # ... in this precision
    plan_epochs: float = 90.0  # ... trained this many epochs ...
    plan_dataset_size: int = 1281167  # ... of this many samples (ImageNet-1k's training set)
    plan_deadline_hours: float = 24.0  # ... within this many hours (the cheapest configuration that makes it ranks first)
    amortize_years: float = 3.0  # Lambda's purchase prices as an hourly cost: price / (years x 8760 h)
    n_jobs: int = -1  # parallel held-out groups (joblib); the results do not depend on it
    progress: bool = True  # progress lines for the long parts
    figures_dir: str = ""  # folder for figures and tables (ChapterResult.save); "" means figures/
    cache: bool = True  # read the results cache when parameters, data and code are unchanged (False: recompute)

    CHECKS = {
        "datasets": grid(one_of(*DATASETS), "studies of " + ", ".join(DATASETS), distinct=True),
        "coverage": number_at_least(0, strict=True),
        "plan_model": one_of(*PLAN_MODELS),
        "plan_precision": one_of("fp16", "fp32"),
        "plan_epochs": number_at_least(0, strict=True),
        "plan_dataset_size": at_least(1),
        "plan_deadline_hours": number_at_least(0, strict=True),
        "amortize_years": number_at_least(0, strict=True),
        "n_jobs": FIT_CHECKS["n_jobs"],
        "figures_dir": FIT_CHECKS["figures_dir"],
    }


def check_params(**params) -> Params:
    """The checked :class:`Params` of Chapter 8, or one :class:`~perfkit.chapters.result.ParameterError`.

    Besides :data:`Params.CHECKS`: ``coverage`` below 1; the planning example needs a Lambda study (its model is
    fitted on Lambda's rows of ``plan_precision``).
    """
    p = make_params(Params, params)
    if not p.coverage < 1:
        raise ParameterError(f"coverage: got {p.coverage!r}; expected a number in (0, 1)")
    if not any(d in ("lambda", f"lambda_{p.plan_precision}") for d in p.datasets):
        raise ParameterError(f"datasets: got {list(p.datasets)!r}; the planning example ({p.plan_model}, "
                             f"{p.plan_precision}) needs the study 'lambda' or 'lambda_{p.plan_precision}'")
    return p
