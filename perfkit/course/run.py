"""Execute the course's units headless (``make course``): each unit's notebook with papermill, ``live=False``
(executing widgets without a browser can hang the kernel client: every widget has a static figure instead), into
``build/course/`` (quick: ``build/quick/course/``); with ``solutions=True`` the instructor's solution notebooks
(:func:`perfkit.course.solutions.solution_notebook`) into ``build/course/solutions/``. Prints each unit's time.

    python -m perfkit.course.run [--quick] [--solutions] [--unit N ...]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..chapters.notebooks import run_notebook
from ..schema import notebooks_dir, repo_root
from .solutions import solution_notebook
from .syllabus import UNITS, unit

__all__ = ["run_unit", "run_course", "build_folder", "main"]


def build_folder(quick: bool = False, solutions: bool = False) -> Path:
    """Where executed units go: ``build/course`` (quick: ``build/quick/course``), ``/solutions`` for the
    instructor's."""
    base = repo_root() / "build" / ("quick" if quick else "") / "course"
    return base / "solutions" if solutions else base


def run_unit(key, quick: bool = False, solutions: bool = False, build_dir=None, progress: bool = False,
             parameters: dict | None = None) -> Path:
    """Execute one unit (number or slug); returns the executed copy. ``parameters`` add to ``quick`` and
    ``live=False``."""
    u = unit(key)
    out_dir = Path(build_dir) if build_dir is not None else build_folder(quick, solutions)
    notebook = notebooks_dir() / u.notebook
    if solutions:
        notebook = solution_notebook(notebook, notebooks_dir() / u.solutions, out_dir / "src" / Path(u.notebook).name)
    params = {"quick": bool(quick), "live": False, **(parameters or {})}
    return run_notebook(notebook, out_dir, parameters=params, progress=progress)


def run_course(units=None, quick: bool = False, solutions: bool = False, log=sys.stdout) -> list:
    """Execute the units (all by default) in order; returns ``[(unit, executed copy, seconds), ...]``."""
    done = []
    for u in ([unit(k) for k in units] if units else UNITS):
        start = time.perf_counter()
        print(f"[course] unit {u.number}: {u.title} ...", file=log, flush=True)
        path = run_unit(u.number, quick=quick, solutions=solutions)
        seconds = time.perf_counter() - start
        print(f"[course] unit {u.number} done in {seconds:.0f} s: {path}", file=log, flush=True)
        done.append((u, path, seconds))
    return done


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perfkit.course.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small budgets (what the test suite runs)")
    parser.add_argument("--solutions", action="store_true", help="the instructor's solution notebooks")
    parser.add_argument("--unit", action="append", help="a unit number or slug (repeatable; default: all)")
    args = parser.parse_args(argv)
    try:
        done = run_course(args.unit, quick=args.quick, solutions=args.solutions)
    except (ValueError, FileNotFoundError) as exc:
        print(f"perfkit course: error: {exc}", file=sys.stderr)
        return 2
    print(f"[course] {len(done)} units in {sum(s for *_, s in done):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
