"""Third-party training-throughput measurements (``data/external/``) as tidy tables.

No one here measured these numbers: they are shipped, byte for byte as published, so that the
models can be checked on other people's machines. ``data/external/README.md`` lists the files,
and each dataset has a ``<name>.provenance.json`` beside its folder (source repository, commit,
paths, units, licence, and how the file was derived).

``lambda``
    Lambda Labs' GPU benchmarks (`lambdal/deeplearning-benchmark`, ``pytorch/*.csv``): GPU
    configurations (1, 2, 4 or 8 GPUs) × models × {fp16, fp32}. :func:`load_lambda`
    (:mod:`perfkit.data.lambda_labs`).
``lambda_screened``
    The same without the rows that fail a physical screen (``load_lambda(screen=True)``).
``nvidia_dle``
    The "Training performance" tables of NVIDIA DeepLearningExamples' READMEs, one row per table
    cell. :func:`load_nvidia_dle` (:mod:`perfkit.data.nvidia_dle`).
``pollux``
    Pollux's cluster traces (`petuum/adaptdl`, ``sched/traces/<job>/{placements,scalability}.csv``):
    measured step times of six jobs on 1 to 64 T4 GPUs, with the GPUs on each node for the runs
    on at most 4 nodes. :func:`load_pollux` (:mod:`perfkit.data.pollux`); not an entry of
    :data:`EXTERNAL_DATASETS`, so ``load_external`` does not know it.

Every loader returns one row per measurement with the target ``t_iter``: seconds per global
step (``global batch / throughput`` for the throughput tables, the measured step time for
Pollux's). The rows a loader leaves out are counted, by reason, in ``frame.attrs["dropped"]``.
:data:`EXTERNAL_DATASETS` maps each name to an :class:`ExternalDataset`: the loader, the target,
and the columns' modelling roles in the vocabulary of :class:`perfkit.model.LogLinearModel`
(``numeric``, ``categorical``, ``extrinsic``)::

    frame, ds = load_external("lambda")
    model = LogLinearModel(**ds.roles).fit(frame, frame[ds.target])

A malformed file raises one ``ValueError`` naming the file and the column or row at fault.

>>> resolve_batch("128 and 256", "Batch size / GPU (TF32 and FP16)", "amp")
256
>>> resolve_batch("64 , 32", "Batch size / GPU: mixed precision, FP32", "fp32")
32
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .external_files import external_dir
from .lambda_labs import PLAUSIBLE_PER_GPU, load_lambda
from .nvidia_dle import load_nvidia_dle, normalise_precision, resolve_batch
from .pollux import load_pollux

__all__ = [
    "EXTERNAL_DATASETS",
    "ExternalDataset",
    "load_external",
]


@dataclass(frozen=True)
class ExternalDataset:
    """One shipped third-party dataset: how to load it and what its columns are for.

    ``numeric``, ``categorical`` and ``extrinsic`` are the roles of
    :class:`perfkit.model.LogLinearModel` (``LogLinearModel(**dataset.roles)``); ``target`` is
    the time column to fit (seconds).
    """

    name: str
    loader: Callable
    target: str
    numeric: tuple
    categorical: tuple
    extrinsic: tuple
    description: str
    citation: str
    files: str = ""  # the shipped dataset whose folder and provenance it reads (default: ``name``)

    @property
    def roles(self) -> dict:
        """``{"numeric": [...], "categorical": [...], "extrinsic": [...]}``."""
        return {"numeric": list(self.numeric), "categorical": list(self.categorical),
                "extrinsic": list(self.extrinsic)}

    @property
    def features(self) -> list:
        """Every role column, numeric then categorical then extrinsic."""
        return [*self.numeric, *self.categorical, *self.extrinsic]

    def provenance_path(self, root=None) -> Path:
        """``data/external/<files or name>.provenance.json`` (or under ``root``)."""
        return (Path(root) if root is not None else external_dir()) / f"{self.files or self.name}.provenance.json"

    def load(self, **kwargs):
        """The tidy frame (``kwargs`` go to the loader), checked by :meth:`check`."""
        return self.check(self.loader(**kwargs))

    def check(self, frame):
        """``frame`` unchanged if every role column and the target are present, without NaN, and the numbers > 0."""
        for col in [*self.features, self.target]:
            if col not in frame.columns:
                raise ValueError(f"{self.name}: column {col!r} missing")
            if frame[col].isna().any():
                raise ValueError(f"{self.name}: column {col!r} has missing values")
        for col in [*self.numeric, *self.extrinsic, self.target]:
            values = frame[col].to_numpy(dtype=float)
            if not np.all(np.isfinite(values) & (values > 0)):
                raise ValueError(f"{self.name}: column {col!r} has values <= 0 or not finite")
        return frame


#: Dataset name → :class:`ExternalDataset`. ``numeric`` is empty in both: neither source describes
#: its models by numbers, and a GPU descriptor (Lambda's ``watt_per_gpu``, ``price_per_gpu``) is a
#: function of ``gpu``, so beside it it would only repeat the level (use it instead of ``gpu`` to
#: predict a GPU left out of the fit). The GPU and batch counts scale the run: extrinsic.
EXTERNAL_DATASETS = {
    "lambda": ExternalDataset(
        name="lambda",
        loader=load_lambda,
        target="t_iter",
        numeric=(),
        categorical=("model", "gpu", "precision"),
        extrinsic=("n_gpus", "batch_per_gpu"),
        description=("Lambda Labs GPU benchmarks: PyTorch training throughput of 10 models (NVIDIA "
                     "DeepLearningExamples scripts) on 53 GPU configurations (1/2/4/8 GPUs), fp16 and fp32."),
        citation=("Lambda, Inc. (Lambda Labs), deeplearning-benchmark, https://github.com/lambdal/deeplearning-benchmark, "
                  "commit aa5addb6a53675a649a80036dad548f1c27cbcc4 (2025-12-17), pytorch/pytorch-train-"
                  "{throughput,bs}-{fp16,fp32}.csv. No licence file in the repository; shipped with attribution."),
    ),
    "nvidia_dle": ExternalDataset(
        name="nvidia_dle",
        loader=load_nvidia_dle,
        target="t_iter",
        numeric=(),
        categorical=("model", "variant", "framework", "gpu", "precision"),
        extrinsic=("n_gpus", "batch_per_gpu"),
        description=("NVIDIA DeepLearningExamples README 'Training performance' tables: total training "
                     "throughput on DGX-1/DGX-2 (V100) and DGX A100 systems, 1 to 256 GPUs, AMP/TF32/FP32/BF16."),
        citation=("NVIDIA Corporation, DeepLearningExamples, https://github.com/NVIDIA/DeepLearningExamples, "
                  "commit 729963dd47e7c8bd462ad10bfac7a7b0b604e6dd (2024-04-04), */README.md 'Training "
                  "performance' tables. Apache-2.0 (per-model LICENSE files, as far as checked)."),
    ),
    "pollux": ExternalDataset(
        name="pollux",
        loader=load_pollux,
        target="t_iter",
        numeric=(),
        categorical=("job",),
        extrinsic=("n_gpus", "batch_per_gpu", "n_nodes"),
        description=("Pollux's cluster traces: data-parallel step and synchronisation times of six jobs (BERT, "
                     "CIFAR-10, DeepSpeech2, ImageNet, NCF, YOLOv3) on 16 AWS nodes × 4 NVIDIA T4, 1-64 GPUs."),
        citation=("Qiao et al., Pollux: Co-adaptive Cluster Scheduling for Goodput-Optimized Deep Learning, OSDI 2021; "
                  "petuum/adaptdl, https://github.com/petuum/adaptdl, branch osdi21-artifact, commit "
                  "c793c7089bd307462686339d29707925c461f9a9 (2021-08-23), sched/traces/<job>/{placements,"
                  "scalability}.csv. Apache-2.0."),
    ),
}


#: Lambda's benchmarks without the rows that fail the physical screen of :func:`load_lambda` (``screen=True``)
EXTERNAL_DATASETS["lambda_screened"] = replace(
    EXTERNAL_DATASETS["lambda"], name="lambda_screened", loader=functools.partial(load_lambda, screen=True),
    files="lambda", description=("Lambda Labs GPU benchmarks without the 22 ncf rows whose throughput per GPU is "
                                 "more than twice the fastest single GPU's (load_lambda(screen=True)): 958 of 980 "
                                 "measured cells."))


def load_external(name: str, **kwargs):
    """``(frame, dataset)`` for a name of :data:`EXTERNAL_DATASETS`; ``kwargs`` go to its loader.

    Raises
    ------
    ValueError
        An unknown name (the message lists the known ones), or a frame that fails
        :meth:`ExternalDataset.check`.
    """
    if not isinstance(name, str) or name not in EXTERNAL_DATASETS:
        raise ValueError(f"external dataset {name!r} unknown; known: {sorted(EXTERNAL_DATASETS)}")
    dataset = EXTERNAL_DATASETS[name]
    import inspect

    accepted = inspect.signature(dataset.loader).parameters
    unknown = [k for k in kwargs if k not in accepted]
    if unknown:
        raise ValueError(f"{unknown[0]}: not an option of the {name!r} loader (options: {', '.join(accepted) or 'none'})")
    return dataset.load(**kwargs), dataset
