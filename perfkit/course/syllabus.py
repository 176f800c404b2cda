"""The units of the course, in teaching order: :data:`UNITS`.

Each :class:`Unit` names its student notebook (``notebooks/course/<slug>.ipynb``), the module that computes and draws
for it and checks its exercises (``perfkit.course.<slug>``, whose ``EXERCISES`` lists them), its instructor's solution
file (``notebooks/course/instructor/solutions/<slug>.py``) and the minutes a class spends on it. The syllabus page
(``notebooks/course/instructor/syllabus.md``) and the headless runs read this table.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Unit", "UNITS", "unit", "COURSE_FOLDER", "objectives", "syllabus_table"]

#: the course's folder inside the notebooks folder
COURSE_FOLDER = "course"


@dataclass(frozen=True)
class Unit:
    """One unit: its number, slug (file stem of its notebook, module and solution file), title and class time."""

    number: int
    slug: str
    title: str
    minutes: int

    @property
    def notebook(self) -> str:
        """The student notebook, relative to the notebooks folder."""
        return f"{COURSE_FOLDER}/{self.slug}.ipynb"

    @property
    def module(self) -> str:
        """The module that computes, draws and checks for this unit."""
        return f"perfkit.course.{self.slug}"

    @property
    def solutions(self) -> str:
        """The instructor's solution file, relative to the notebooks folder."""
        return f"{COURSE_FOLDER}/instructor/solutions/{self.slug}.py"


UNITS = (
    Unit(1, "u1_measuring", "Measuring a training step", 60),
    Unit(2, "u2_phase_model", "The S-SGD phase model and speedup", 75),
    Unit(3, "u3_generic_model", "Fitting the generic performance model", 75),
    Unit(4, "u4_judging", "Judging a model", 60),
    Unit(5, "u5_beyond", "Beyond the thesis: log-space forms, the search, black boxes", 60),
    Unit(6, "u6_small_to_large", "Measure small, predict large", 60),
    Unit(7, "u7_own_machine", "Measure your own machine", 75),
)


def unit(key) -> Unit:
    """The unit with number ``key`` (int) or slug ``key`` (str); one ``ValueError`` naming the known ones otherwise."""
    for u in UNITS:
        if key == u.number or key == u.slug or (isinstance(key, str) and key.isdigit() and int(key) == u.number):
            return u
    raise ValueError(f"unit {key!r}: expected a number 1-{len(UNITS)} or one of {[u.slug for u in UNITS]}")


def objectives(notebook_text: str) -> list:
    """The learning objectives of a unit: the bullet lines that follow the "Learning objectives" line of its
    notebook's first cell (``notebook_text``: the notebook file's JSON text)."""
    import json

    cells = json.loads(notebook_text)["cells"]
    lines = "".join(cells[0]["source"]).splitlines() if cells else []
    start = next((i for i, line in enumerate(lines) if "Learning objectives" in line), None)
    out = []
    for line in lines[start + 1:] if start is not None else []:
        stripped = line.strip()
        if stripped.startswith(("- ", "* ")):
            out.append(stripped[2:].strip())
        elif out and stripped and line[:1].isspace():  # a bullet continued on the next line
            out[-1] += " " + stripped
        elif out or stripped:
            break
    return out


def syllabus_table(root) -> str:
    """The syllabus's schedule (the generated block of ``notebooks/course/instructor/syllabus.md``): per unit its
    title, class time, learning objectives (from its notebook) and exercises (from its module), and the total."""
    import importlib
    from pathlib import Path

    parts = []
    for u in UNITS:
        text = (Path(root) / "notebooks" / u.notebook).read_text()
        exercises = importlib.import_module(u.module).EXERCISES
        parts.append(f"### Unit {u.number} · {u.title} · {u.minutes} min\n\n"
                     f"Notebook [`{u.slug}.ipynb`](../{u.slug}.ipynb); instructor notes [`notes/{u.slug}.md`]"
                     f"(notes/{u.slug}.md).\n\nObjectives:\n"
                     + "".join(f"- {o}\n" for o in objectives(text))
                     + "\nExercises (checked in the notebook):\n"
                     + "".join(f"- {e.id}: {e.title} (`{e.answer}`)\n" for e in exercises))
    total = sum(u.minutes for u in UNITS)
    return "\n".join(parts) + f"\nIn all: {len(UNITS)} units, {total} min of class time.\n"
