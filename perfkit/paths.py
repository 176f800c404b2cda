"""Where perfkit finds its data and writes its outputs.

Defaults are the folders of the repository checkout (perfkit is installed in
editable mode by ``make``); the environment variables ``PERFKIT_DATA`` and
``PERFKIT_FIGURES`` override them.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["repo_root", "data_dir", "figures_dir"]


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
