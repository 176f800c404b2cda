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
    "checkout_root", "repo_root", "data_dir", "notebooks_dir", "figures_dir", "build_dir", "resolve",
    "provenance_path", "steps_log_path", "measured_path",
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
#: the copies of ``data/`` and ``notebooks/`` inside an installed package (``pip install .``: see pyproject.toml)
_PACKAGED_DATA = Path(__file__).resolve().parent / "_data"
_PACKAGED_NOTEBOOKS = Path(__file__).resolve().parent / "_notebooks"


def checkout_root() -> Path | None:
    """The perfkit checkout this package runs from (``pyproject.toml`` and ``data/`` beside ``perfkit/``: a clone,
    or an editable install of one); None for an installed copy (``pip install .``, a wheel)."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() and (root / "data").is_dir() else None


def repo_root() -> Path:
    """Root of the perfkit checkout (the folder holding ``perfkit/``); outside a checkout (an installed
    perfkit), the working directory, where outputs (``figures/``, ``build/``) go and relative paths start."""
    return checkout_root() or Path.cwd()


def data_dir() -> Path:
    """Folder of shipped data: ``$PERFKIT_DATA`` when set, else the checkout's ``data/``, else the copy installed
    with the package (the thesis tables, the third-party data and the measured CSVs).

    Raises
    ------
    FileNotFoundError
        If the folder does not exist; set ``PERFKIT_DATA`` to a checkout's ``data/``.
    """
    env = os.environ.get("PERFKIT_DATA")
    root = checkout_root()
    path = Path(env) if env else root / "data" if root else _PACKAGED_DATA
    if not path.is_dir():
        raise FileNotFoundError(
            f"perfkit data folder {path} not found; reinstall perfkit (pip install perfkit, or pip install -e . "
            "in a checkout) or set PERFKIT_DATA to a checkout's data/ folder"
        )
    return path


def notebooks_dir() -> Path:
    """Folder of the chapter notebooks: the checkout's ``notebooks/``, else the copy installed with the package.

    Raises
    ------
    FileNotFoundError
        One line saying how to get them (clone the repository) when neither exists.
    """
    root = checkout_root()
    path = root / "notebooks" if root else _PACKAGED_NOTEBOOKS
    if not path.is_dir():
        raise FileNotFoundError(
            f"the chapter notebooks are not installed with this perfkit ({path} is missing); clone the repository "
            "and run `make reproduce` (or `perfkit reproduce`) in the clone"
        )
    return path


def figures_dir() -> Path:
    """Folder where figures and tables are written: ``$PERFKIT_FIGURES``, else ``figures/`` of the checkout, or
    of the working directory outside one."""
    return Path(os.environ.get("PERFKIT_FIGURES") or repo_root() / "figures")


def build_dir() -> Path:
    """Folder of executed notebooks and other generated files: ``build/`` of the checkout (git-ignored), or of
    the working directory outside one."""
    return repo_root() / "build"


def resolve(path) -> Path:
    """A path as given by a user or a notebook parameter: absolute as is, relative to the repository root.

    Outside a checkout relative paths start in the working directory, and a ``data/...`` path that is not there
    is taken from the installed data (:func:`data_dir`), so the chapters' default datasets are found.
    """
    p = Path(path).expanduser()
    if p.is_absolute():
        return p
    full = repo_root() / p
    if checkout_root() is None and not full.exists() and p.parts[:1] == ("data",) and len(p.parts) > 1:
        try:
            packaged = data_dir().joinpath(*p.parts[1:])
        except FileNotFoundError:
            return full
        return packaged if packaged.exists() else full
    return full


def measured_path(kind: str, framework: str = "pytorch", device: str = "cpu", root=None) -> Path:
    """Default file of a ``perfkit collect`` kind: ``data/measured/<framework>-<device>/<file>`` (outside a
    checkout, without ``$PERFKIT_DATA``, under the working directory: the installed data is never written)."""
    if kind not in KIND_FILES:
        raise ValueError(f"kind: expected one of {tuple(KIND_FILES)}, got {kind!r}")
    writable = checkout_root() is not None or os.environ.get("PERFKIT_DATA")
    base = Path(root) if root else (data_dir() if writable else Path.cwd() / "data") / "measured"
    return base / f"{framework}-{device}" / KIND_FILES[kind]


def provenance_path(data_path) -> Path:
    """``x/ch4_lenet5.csv`` → ``x/ch4_lenet5.provenance.json``."""
    p = Path(data_path)
    return p.with_name(p.stem + ".provenance.json")


def steps_log_path(data_path) -> Path:
    """``x/ch4_lenet5.csv`` → ``x/ch4_lenet5.steps.jsonl`` (every worker's raw per-step times)."""
    p = Path(data_path)
    return p.with_name(p.stem + ".steps.jsonl")
