"""What every stage of perfkit agrees on: file kinds, columns, phases, the epoch formula, paths.

This is the one place that declares the measured-file format. The collector
(:mod:`perfkit.measure`) writes it, the loaders (:mod:`perfkit.data`) read it and
the chapters (:mod:`perfkit.chapters`) analyse it, all from the names below.
It uses only the standard library, so a framework adapter running under another
interpreter (an old NumPy, say) can import it.

Examples
--------
>>> steps_per_epoch(60000, batch_size=64, workers=3)
313
>>> parse_volume("48x56x48"), format_volume([48, 56, 48]), voxels("48x56x48")
([48, 56, 48], '48x56x48', 129024)
"""
from __future__ import annotations

import math
import os
from pathlib import Path

__all__ = [
    "PHASES", "PHASE_LABELS", "COMPUTE_PHASES", "CH3_COLUMNS", "CH3_MODELS", "MODEL_NAMES",
    "INTRINSIC", "CH5_INTRINSIC", "EXTRINSIC", "ROLES", "KIND_FILES", "THESIS_EXTRINSIC",
    "steps_per_epoch", "epoch_time", "parse_volume", "format_volume", "voxels",
    "repo_root", "data_dir", "figures_dir", "build_dir", "resolve", "provenance_path", "steps_log_path",
    "measured_path",
]

# ------------------------------------------------------------------ Chapter 3: phases of one iteration
#: Phases of one S-SGD iteration in the order of Table 3.2 (t_c added for multi-worker data).
PHASES = ("t_io", "t_h2d", "t_md", "t_f", "t_b", "t_c", "t_u", "t_iter")
#: Short labels of :data:`PHASES` for tables and figures.
PHASE_LABELS = {
    "t_io": "I/O",
    "t_h2d": "H→D copy",
    "t_md": "split",
    "t_f": "forward",
    "t_b": "backward",
    "t_c": "aggregation",
    "t_u": "update",
    "t_iter": "iteration",
}
#: Per-worker work whose imbalance the LIF (eq. 3.8) measures: everything before the all-reduce.
COMPUTE_PHASES = ("t_md", "t_io", "t_h2d", "t_f", "t_b")
#: Columns every Chapter 3 file has (one row per worker and timed iteration).
CH3_COLUMNS = ("model", "framework", "workers", "rank", "iteration") + PHASES
#: Chapter 3 models: the collector's key → the thesis's name.
MODEL_NAMES = {"cnn": "CNN", "mlp": "MLP", "ae": "Autoencoder"}
#: The thesis's Chapter 3 models in its order.
CH3_MODELS = ("CNN", "MLP", "Autoencoder")

# -------------------------------------------------------- Chapters 4-5: one row per sampled configuration
#: Table 4.1's intrinsic hyperparameters, as columns of a ``ch4`` (and ``noise``/``epoch``) file.
INTRINSIC = ("kernel_size", "pool_size", "activation", "optimizer", "dataset", "num_filters", "learning_rate",
             "padding", "stride", "dropout")
#: Table 5.1's intrinsic hyperparameters plus the synthetic volume size, columns of a ``ch5``/``ch5vol`` file.
CH5_INTRINSIC = ("kernel_size", "pool_size", "activation", "optimizer", "num_filters", "learning_rate", "padding",
                 "stride", "volume")
#: Extrinsic scaling factors: ``workers`` (the thesis's GPUs) and the per-worker ``batch_size``.
EXTRINSIC = ("workers", "batch_size")
#: Column roles of the generic model per file kind (numeric intrinsic, categorical intrinsic, extrinsic).
ROLES = {
    "ch4": {"numeric": ["num_filters", "kernel_size", "pool_size", "learning_rate", "stride", "dropout"],
            "categorical": ["padding", "activation", "dataset", "optimizer"],
            "extrinsic": ["batch_size", "workers"]},
    "ch5": {"numeric": ["num_filters", "kernel_size", "learning_rate"],
            "categorical": ["padding", "activation", "optimizer"],
            "extrinsic": ["batch_size", "workers"]},
}
#: Our extrinsic column → the thesis tables' parameter name.
THESIS_EXTRINSIC = {"workers": "gpus", "batch_size": "batch_size"}
#: ``perfkit collect`` kind → file name under ``data/measured/<framework>-<device>/``.
KIND_FILES = {"ch3": "ch3_phases.csv", "ch4": "ch4_lenet5.csv", "noise": "noise_floor.csv",
              "epoch": "epoch_check.csv", "ch5": "ch5_resattnet3d.csv", "ch5vol": "ch5_volume_scaling.csv"}


# ------------------------------------------------------------------------------- the epoch formula
def steps_per_epoch(n_train: int, batch_size: int, workers: int) -> int:
    """⌈N / (B·G)⌉: iterations of one epoch of ``n_train`` samples on G workers with per-worker batch B."""
    return math.ceil(n_train / (batch_size * workers))


def epoch_time(step_time: float, n_train: int, batch_size: int, workers: int) -> float:
    """The fitted target of Chapters 4-5: ⌈N / (B·G)⌉ · t_step."""
    return steps_per_epoch(n_train, batch_size, workers) * step_time


# ------------------------------------------------------------------------------------ volume codec
def parse_volume(volume, name: str = "volume") -> list[int]:
    """``"48x56x48"`` (or a sequence of three sizes) → ``[48, 56, 48]``; anything else raises a ValueError naming ``name``."""
    try:
        if isinstance(volume, str):
            vol = [int(v) for v in volume.lower().split("x")]
        else:
            vol = [int(v) for v in volume]
    except (TypeError, ValueError):
        vol = []
    if len(vol) != 3:
        raise ValueError(f"{name}: expected DxHxW, e.g. 48x56x48, got {volume!r}")
    return vol


def format_volume(volume) -> str:
    """``[48, 56, 48]`` → ``"48x56x48"`` (the form stored in the ``volume`` column)."""
    return "x".join(str(v) for v in parse_volume(volume))


def voxels(volume) -> int:
    """Voxel count of a ``DxHxW`` volume, e.g. ``voxels("48x56x48") == 129024``."""
    d, h, w = parse_volume(volume)
    return d * h * w


# ---------------------------------------------------------------------------------------- paths
def repo_root() -> Path:
    """Root of the perfkit checkout (the folder holding ``perfkit/``)."""
    return Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """Folder of shipped data (``data/``), or ``$PERFKIT_DATA``.

    Raises
    ------
    FileNotFoundError
        If the folder does not exist (e.g. perfkit was installed from a wheel
        without the repository); set ``PERFKIT_DATA`` to a checkout's ``data/``.
    """
    path = Path(os.environ.get("PERFKIT_DATA") or repo_root() / "data")
    if not path.is_dir():
        raise FileNotFoundError(
            f"perfkit data folder {path} not found; install perfkit from a checkout "
            "(pip install -e .) or set PERFKIT_DATA to the checkout's data/ folder"
        )
    return path


def figures_dir() -> Path:
    """Folder where figures and tables are written (``figures/``), or ``$PERFKIT_FIGURES``."""
    return Path(os.environ.get("PERFKIT_FIGURES") or repo_root() / "figures")


def build_dir() -> Path:
    """Folder of executed notebooks and other generated files (``build/``, git-ignored)."""
    return repo_root() / "build"


def resolve(path) -> Path:
    """A path as given by a user or a notebook parameter: absolute as is, relative to the repository root."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else repo_root() / p


def measured_path(kind: str, framework: str = "pytorch", device: str = "cpu", root=None) -> Path:
    """Default file of a ``perfkit collect`` kind: ``data/measured/<framework>-<device>/<file>``."""
    if kind not in KIND_FILES:
        raise ValueError(f"kind: expected one of {tuple(KIND_FILES)}, got {kind!r}")
    base = Path(root) if root else data_dir() / "measured"
    return base / f"{framework}-{device}" / KIND_FILES[kind]


def provenance_path(data_path) -> Path:
    """``x/ch4_lenet5.csv`` → ``x/ch4_lenet5.provenance.json``."""
    p = Path(data_path)
    return p.with_name(p.stem + ".provenance.json")


def steps_log_path(data_path) -> Path:
    """``x/ch4_lenet5.csv`` → ``x/ch4_lenet5.steps.jsonl`` (every worker's raw per-step times)."""
    p = Path(data_path)
    return p.with_name(p.stem + ".steps.jsonl")
