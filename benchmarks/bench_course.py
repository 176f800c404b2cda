"""The course's time budget: every unit executed headless, as ``make course`` runs it (full), as the test suite runs
it (quick) and as the instructor's solution notebook (quick), each alone, one after another.

Run: ``.venv/bin/python benchmarks/bench_course.py`` (about 15 min on 2 cores) → ``benchmarks/results/course.json``
and ``.md``. The target: each unit ≤ 120 s headless in full; the README states the budget from these results. A
unit that measures (``out_dir``) writes its campaign into a temporary folder, so each run measures afresh.
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info, write_results  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "course"
TARGET = 120.0


def _parameters(u, folder: Path) -> dict:
    from perfkit.schema import notebooks_dir

    text = (notebooks_dir() / u.notebook).read_text()
    return {"out_dir": str(folder / "own-machine")} if re.search(r'"out_dir: str = ', text) else {}


def time_unit(u, mode: str) -> float:
    """Seconds to execute unit ``u`` in ``mode`` ("full", "quick" or "solutions": quick solution notebook)."""
    from perfkit.course.run import run_unit

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        run_unit(u.number, quick=mode != "full", solutions=mode == "solutions", build_dir=folder / "build",
                 parameters=_parameters(u, folder))
        return time.perf_counter() - start


def main(argv=None) -> int:
    from perfkit.course.syllabus import UNITS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    rows = {}
    for u in UNITS:
        rows[u.slug] = {"unit": u.number, "title": u.title}
        for mode in ("full", "quick", "solutions"):
            rows[u.slug][mode] = round(time_unit(u, mode), 1)
            print(f"unit {u.number} {mode}: {rows[u.slug][mode]} s", file=sys.stderr, flush=True)
    total = {m: round(sum(r[m] for r in rows.values()), 1) for m in ("full", "quick", "solutions")}
    res = {"machine": machine_info(), "target_seconds_per_unit": TARGET, "units": rows, "total": total,
           "within_target": all(r["full"] <= TARGET for r in rows.values())}
    lines = ["# The course, executed headless: seconds per unit", "",
             f"Machine: {res['machine'].get('cpu')}, {res['machine'].get('cores')} cores; "
             f"commit {res['machine'].get('git_commit')}; {res['machine'].get('date')}. Each unit alone, one after "
             f"another (`perfkit.course.run.run_unit`); target ≤ {TARGET:.0f} s per unit in full.", "",
             "| unit | title | full (make course) | quick (test suite) | solutions, quick |", "|---|---|---|---|---|"]
    lines += [f"| {r['unit']} | {r['title']} | {r['full']:.0f} | {r['quick']:.0f} | {r['solutions']:.0f} |"
              for r in rows.values()]
    lines += [f"| all | | {total['full']:.0f} | {total['quick']:.0f} | {total['solutions']:.0f} |"]
    write_results(args.out, res, "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
