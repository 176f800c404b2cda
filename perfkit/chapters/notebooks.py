"""Execute the chapter notebooks with papermill (what ``make reproduce`` runs).

Executed copies go to the git-ignored ``build/`` folder: the default full run to
``build/``, quick runs to ``build/quick/`` and runs that write their figures
elsewhere to ``build/custom/``, so neither overwrites the full run's notebooks.
The notebooks write figures and tables through :mod:`perfkit.report.output`.
"""
from __future__ import annotations

import time
from pathlib import Path

from ..schema import repo_root
from . import CHAPTERS

__all__ = ["CHAPTERS", "notebook_path", "run_notebook", "reproduce", "default_build_dir"]


def notebook_path(chapter: str) -> Path:
    """Path of a chapter's notebook; ``ValueError`` for an unknown chapter."""
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter: unknown {chapter!r}; known chapters: {', '.join(CHAPTERS)}")
    return repo_root() / "notebooks" / CHAPTERS[chapter][1]


def default_build_dir(quick: bool = False, figures_dir=None) -> Path:
    """``build/`` for the full default run, ``build/quick/`` for quick runs, ``build/custom/`` for other figures folders."""
    base = repo_root() / "build"
    return base / "quick" if quick else base / "custom" if figures_dir else base


def run_notebook(
    notebook: str | Path,
    build_dir: str | Path = "build",
    parameters: dict | None = None,
    kernel_name: str | None = None,
    progress: bool = True,
) -> Path:
    """Execute one notebook with papermill.

    Parameters
    ----------
    notebook : path
        The notebook to run (its folder is the working directory).
    build_dir : path, default "build"
        Where the executed copy is written (relative paths are relative to the
        repository root).
    parameters : dict, optional
        Values for the notebook's ``parameters`` cell.
    kernel_name : str, optional
        Jupyter kernel; defaults to the notebook's own (python3).
    progress : bool, default True
        Show papermill's cell progress bar.

    Returns
    -------
    pathlib.Path
        The executed notebook.
    """
    import papermill as pm

    notebook = Path(notebook)
    if not notebook.is_file():
        raise FileNotFoundError(f"notebook not found: {notebook}")
    out_dir = Path(build_dir)
    if not out_dir.is_absolute():
        out_dir = repo_root() / out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    output = out_dir / notebook.name
    pm.execute_notebook(
        str(notebook),
        str(output),
        parameters=parameters or {},
        kernel_name=kernel_name,
        cwd=str(notebook.parent),
        progress_bar=progress,
    )
    return output


def reproduce(
    chapters: list[str] | None = None,
    quick: bool = False,
    build_dir: str | Path | None = None,
    figures_dir: str | None = None,
    progress: bool = True,
) -> list[Path]:
    """Run the chapter notebooks in order.

    Parameters
    ----------
    chapters : list of str, optional
        Subset of :data:`CHAPTERS` (default: all).
    quick : bool, default False
        Pass ``quick=True`` to each notebook (small budgets, for tests).
    build_dir : path, optional
        Folder of executed notebooks (default :func:`default_build_dir`).
    figures_dir : str, optional
        Where the notebooks write figures/tables (default ``figures/``).
    progress : bool, default True
        Show progress bars.
    """
    chapters = list(CHAPTERS) if not chapters else chapters
    build_dir = build_dir or default_build_dir(quick, figures_dir)
    paths = [notebook_path(c) for c in chapters]  # validate all names first
    outputs = []
    for chapter, nb in zip(chapters, paths):
        params: dict = {"quick": quick}
        if figures_dir:
            params["figures_dir"] = str(Path(figures_dir).resolve())
        start = time.perf_counter()
        print(f"[perfkit] {chapter}: executing {nb.name} (quick={quick})", flush=True)
        outputs.append(run_notebook(nb, build_dir=build_dir, parameters=params, progress=progress))
        print(f"[perfkit] {chapter}: done in {time.perf_counter() - start:.1f} s -> {outputs[-1]}", flush=True)
    return outputs
