"""The instructor's side of the exercises: reference solutions and typical wrong answers, kept apart from the
student notebooks in ``notebooks/course/instructor/solutions/<slug>.py``, one file per unit.

A solution file is plain Python cut into sections by marker lines::

    # %% solution 2.1
    def speedup(...): ...          # the reference solution of exercise 2.1
    # %% wrong 2.1 no-overlap
    def speedup(...): ...          # a typical wrong answer; its check must answer with the hint "no-overlap"

Every section is self-contained (it imports what it uses), so it runs in a notebook cell and in a test alike.
:func:`sections` reads a file; :func:`solution_notebook` writes a unit's notebook with each exercise cell's student
part replaced by the reference solution (the cell's ``check(...)`` line kept), which is what the instructor runs
(``make course SOLUTIONS=1``) and what the test suite executes to see every check pass inside the notebook.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Section", "sections", "exercise_cells", "solution_notebook", "CELL_ID"]

_MARKER = re.compile(r"^# %% (solution|wrong) (\d+\.\d+)(?: ([a-z0-9-]+))?\s*$")
#: an exercise cell's id in the student notebook: ``ex-<unit>-<k>``
CELL_ID = "ex-{unit}-{k}"
_CHECK = re.compile(r'^check\("(\d+\.\d+)", (\w+)\)\s*$')


@dataclass(frozen=True)
class Section:
    """One section of a solution file: ``kind`` "solution" or "wrong", the exercise id, the hint key a wrong answer
    must get (None for a solution) and the code."""

    kind: str
    exercise: str
    key: str | None
    code: str


def sections(path) -> list:
    """The sections of the solution file ``path`` in order; one ``ValueError`` naming the line of a malformed marker
    (a ``# %%`` line that is not ``# %% solution N.k`` or ``# %% wrong N.k KEY``) or of code before the first."""
    path = Path(path)
    out, current, lines = [], None, []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("# %%"):
            m = _MARKER.match(line)
            if not m or (m.group(1) == "wrong") != (m.group(3) is not None):
                raise ValueError(f"{path}, line {i}: expected '# %% solution N.k' or '# %% wrong N.k KEY', got {line!r}")
            if current:
                out.append(Section(*current, "\n".join(lines).strip() + "\n"))
            current, lines = (m.group(1), m.group(2), m.group(3)), []
        elif current:
            lines.append(line)
    if current:
        out.append(Section(*current, "\n".join(lines).strip() + "\n"))
    return out


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def exercise_cells(notebook: dict) -> dict:
    """Exercise id → (cell index, student part, check line) of each exercise cell (id ``ex-<unit>-<k>``) of a
    notebook; one ``ValueError`` when such a cell does not end with its ``check("N.k", name)`` line."""
    out = {}
    for i, cell in enumerate(notebook["cells"]):
        m = re.fullmatch(r"ex-(\d+)-(\d+)", str(cell.get("id", "")))
        if not m or cell.get("cell_type") != "code":
            continue
        ex_id = f"{m.group(1)}.{m.group(2)}"
        lines = _source(cell).rstrip().splitlines()
        c = _CHECK.match(lines[-1]) if lines else None
        if not c or c.group(1) != ex_id:
            raise ValueError(f"cell {cell.get('id')}: its last line must be check(\"{ex_id}\", <answer>), got "
                             f"{lines[-1] if lines else ''!r}")
        out[ex_id] = (i, "\n".join(lines[:-1]), lines[-1])
    return out


def solution_notebook(student: Path, solution_file: Path, out: Path) -> Path:
    """Write ``out``: the student notebook with each exercise cell's student part replaced by its reference
    solution from ``solution_file``; one ``ValueError`` when an exercise cell has no solution or a solution no
    cell."""
    nb = json.loads(Path(student).read_text())
    cells = exercise_cells(nb)
    solutions = {s.exercise: s.code for s in sections(solution_file) if s.kind == "solution"}
    if sorted(cells) != sorted(solutions):
        raise ValueError(f"{student.name}: exercise cells {sorted(cells)} but solutions {sorted(solutions)} in "
                         f"{solution_file}")
    for ex_id, (i, _, check_line) in cells.items():
        nb["cells"][i]["source"] = (solutions[ex_id] + check_line + "\n").splitlines(keepends=True)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return out
