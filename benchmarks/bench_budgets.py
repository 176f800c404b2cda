"""Time-to-result budgets, measured as a user meets them: the README's commands, wall time, machine info.

Run: ``.venv/bin/python benchmarks/bench_budgets.py [--only quick full test]``. Writes
``benchmarks/results/budgets.json`` and ``.md`` (a partial run keeps the other sections).

Sections (each on an otherwise idle machine, one after the other):
- quick: ``perfkit reproduce --quick`` (what ``make reproduce QUICK=1`` runs), every chapter, into a fresh
  build folder with a fresh fit cache (no fit read back from an earlier run). Budget: ≤ 3 min.
- full: ``perfkit reproduce`` (``make reproduce``), every chapter, all five frameworks, the same way, its figures
  into a temporary folder (the committed ``figures/`` are not touched). Budget: ≤ 15 min.
- rerun: ``perfkit reproduce --chapter ch4`` twice into one fresh build folder; the second run, with parameters,
  data and code unchanged, presents the results the first stored (:mod:`perfkit.chapters.cache`). Budget for the
  second: ≤ 30 s.
- test: a fresh ``git clone`` of this checkout, ``make setup`` in it (the virtual environment, timed apart), then
  its test command without the framework environments (``pytest -n auto --maxprocesses 4``, as ``make test``
  runs it; the adapter tests that need them skip). Budget: setup + tests ≤ 12 min.
- ci: what CI runs, ``.ci/run`` (``make test``: setup, the framework environments, every test) in a fresh clone.
  Budget: ≤ 15 min.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info, write_results  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent / "results" / "budgets"
PERFKIT = str(Path(sys.executable).parent / "perfkit")
BUDGETS = {"quick": 180.0, "full": 900.0, "rerun": 30.0, "test": 720.0, "ci": 900.0}
#: the test workers ``make test`` starts (pytest-xdist), here and in the test section
XDIST = ["-n", "auto", "--maxprocesses", "4"]


def _run(cmd, cwd=ROOT, env=None) -> float:
    """Run ``cmd`` (its output to this terminal), return its wall time; a failure raises."""
    print(f"$ {' '.join(map(str, cmd))}", flush=True)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited with {done.returncode}")
    return time.perf_counter() - start


def _reproduce(quick: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PERFKIT_FIT_CACHE=str(Path(tmp) / "fits"))
        cmd = [PERFKIT, "reproduce", "--build-dir", str(Path(tmp) / "build"), "--figures-dir", str(Path(tmp) / "fig")]
        seconds = _run(cmd + (["--quick"] if quick else []), env=env)
        times_file = Path(tmp) / "build" / "run_times.json"
        chapters = json.loads(times_file.read_text()) if times_file.exists() else {}
    return dict(seconds=seconds, chapters=chapters, command="perfkit reproduce" + (" --quick" if quick else ""))


def bench_rerun() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PERFKIT_FIT_CACHE=str(Path(tmp) / "fits"),
                   PERFKIT_RESULTS_CACHE=str(Path(tmp) / "results"))
        cmd = [PERFKIT, "reproduce", "--chapter", "ch4", "--build-dir", str(Path(tmp) / "build"), "--figures-dir",
               str(Path(tmp) / "fig")]
        first = _run(cmd, env=env)
        second = _run(cmd, env=env)
    return dict(seconds=second, first_seconds=first,
                command="perfkit reproduce --chapter ch4, a second time with nothing changed")


def bench_test() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        setup = _run(["make", "setup"], cwd=clone)
        env = {k: v for k, v in os.environ.items() if k != "PERFKIT_REQUIRE_FRAMEWORKS"}
        tests = _run([str(clone / ".venv/bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", *XDIST],
                     cwd=clone, env=env)
    return dict(setup_seconds=setup, test_seconds=tests, seconds=setup + tests,
                command=f"git clone; make setup; .venv/bin/python -m pytest {' '.join(XDIST)} (framework "
                        "environments not built)")


def bench_ci() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PERFKIT_")}
        seconds = _run([str(clone / ".ci" / "run")], cwd=clone, env=env)
    return dict(seconds=seconds, command="git clone; .ci/run (make test: setup, framework environments, every test)")


SECTIONS = {"quick": lambda: _reproduce(True), "full": lambda: _reproduce(False), "rerun": bench_rerun,
            "test": bench_test, "ci": bench_ci}


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def markdown(res: dict) -> str:
    lines = ["# Time-to-result budgets", "",
             "Wall time of the README's commands on this machine, each alone on an otherwise idle machine; written by "
             "`benchmarks/bench_budgets.py` (raw numbers and per-chapter times in `budgets.json`).", "",
             "| budget | command | measured | target | met? | machine | when |", "|---|---|---|---|---|---|---|"]
    for name in SECTIONS:
        r = res.get(name)
        if not r:
            continue
        m = r["machine"]
        where = f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores, {m.get('memory_gib', '?')} GiB; commit {m.get('git_commit', '?')}"
        extra = {"test": lambda: f" (setup {r['setup_seconds'] / 60:.1f} + tests {r['test_seconds'] / 60:.1f} min)",
                 "rerun": lambda: f" (the first run {r['first_seconds'] / 60:.1f} min)"}.get(name, lambda: "")()
        lines.append(f"| {name} | `{r['command']}` | {_duration(r['seconds'])}{extra} | ≤ {_duration(BUDGETS[name])} | "
                     f"{'yes' if r['seconds'] <= BUDGETS[name] else 'no'} | {where} | {r['measured_at']} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", choices=list(SECTIONS), default=list(SECTIONS))
    args = ap.parse_args(argv)
    path = OUT.with_suffix(".json")
    res = json.loads(path.read_text()) if path.exists() else {}
    for name in args.only:
        at = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())
        res[name] = {**SECTIONS[name](), "machine": machine_info(), "measured_at": at}
        write_results(OUT, res, markdown(res))  # each section as soon as it is measured


if __name__ == "__main__":
    main()
