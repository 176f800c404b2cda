"""The measured times the README states, from the committed benchmark results: the chapters' budgets
(``benchmarks/results/budgets.json``, :func:`readme_times`) and the course's (``benchmarks/results/course.json``,
:func:`course_times`)."""
from __future__ import annotations

import json
from pathlib import Path

__all__ = ["readme_times", "course_times"]


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def readme_times(root: Path) -> str:
    """The README's measured times: each budget of ``benchmarks/results/budgets.json`` (quick, full, test, ci) with
    its command and the machine's cores."""
    budgets = json.loads((root / "benchmarks" / "results" / "budgets.json").read_text())
    runs = [budgets[name] for name in ("quick", "full", "test", "ci") if name in budgets]
    cores = {b.get("machine", {}).get("cores") for b in runs}
    parts = []
    for b in runs:
        command, _, note = b["command"].partition(" (")
        extra = f"setup {_minutes(b['setup_seconds'])}, then {_minutes(b['test_seconds'])}; " \
            if "setup_seconds" in b else ""
        note = f" ({extra}{note.rstrip(')')})" if note or extra else ""
        where = f" on {b['machine']['cores']} cores" if len(cores) > 1 and b.get("machine", {}).get("cores") else ""
        parts.append(f"`{command}` about {_minutes(b['seconds'])}{note}{where}")
    machine = f" on a {cores.pop()}-core machine" if len(cores) == 1 and None not in cores else ""
    return (f"Measured{machine}, each command alone ([benchmarks/results/budgets.md]"
            "(benchmarks/results/budgets.md)): " + "; ".join(parts) + ".\n")


def course_times(root: Path) -> str:
    """The course's budget: each unit's seconds headless in full (``make course``) and quick (the test suite), the
    slowest unit against the target, and the machine (``benchmarks/results/course.json``)."""
    res = json.loads((root / "benchmarks" / "results" / "course.json").read_text())
    units = list(res["units"].values())
    slowest = max(units, key=lambda r: r["full"])
    machine = res.get("machine", {})
    return (f"Measured on a {machine.get('cores')}-core machine ([benchmarks/results/course.md]"
            f"(benchmarks/results/course.md)): `make course` runs the {len(units)} units in about "
            f"{_minutes(res['total']['full'])}, the slowest (unit {slowest['unit']}) in {slowest['full']:.0f} s "
            f"(target ≤ {res['target_seconds_per_unit']:.0f} s a unit); `make course QUICK=1` in about "
            f"{_minutes(res['total']['quick'])}.\n")
