"""The course (``perfkit.course``, ``notebooks/course/``): every unit's shape, its exercises checked both ways (the
instructor's reference solution passes, each typical wrong answer gets its own hint), its figures legible, and every
unit executed headless, as the student gets it (nothing answered) and as the instructor's solution notebook."""
import json
import re

import pytest

from perfkit.course import exercises as ex_mod
from perfkit.course.exercises import check, exercise, exercises
from perfkit.course.run import run_unit
from perfkit.course.solutions import exercise_cells, sections, solution_notebook
from perfkit.course.syllabus import UNITS, objectives, unit
from perfkit.report.legibility import crowded_labels
from perfkit.schema import notebooks_dir, repo_root

IDS = [u.slug for u in UNITS]


def _notebook(u) -> dict:
    return json.loads((notebooks_dir() / u.notebook).read_text())


def _src(cell) -> str:
    return "".join(cell["source"])


def _module(u):
    import importlib

    return importlib.import_module(u.module)


def _all_sections():
    return [(u, s) for u in UNITS for s in sections(notebooks_dir() / u.solutions)]


# ------------------------------------------------------------------ the syllabus and each unit's files
def test_every_unit_has_a_notebook_module_solutions_and_notes():
    root = notebooks_dir()
    for u in UNITS:
        assert (root / u.notebook).is_file(), u.notebook
        assert (root / u.solutions).is_file(), u.solutions
        assert (root / "course" / "instructor" / "notes" / f"{u.slug}.md").is_file(), u.slug
        assert _module(u).EXERCISES, u.module
    assert [u.number for u in UNITS] == list(range(1, len(UNITS) + 1))


def test_the_syllabus_page_lists_every_unit_with_its_time():
    page = (notebooks_dir() / "course" / "instructor" / "syllabus.md").read_text()
    for u in UNITS:
        assert re.search(rf"\b{u.number}\b.*{re.escape(u.title)}.*\b{u.minutes} min", page), (u.number, u.title)
        for ex in exercises(u.number):
            assert ex.id in page, ex.id
    assert f"{sum(u.minutes for u in UNITS)} min" in page


def test_unit_lookup_by_number_or_slug_and_one_error_otherwise():
    assert unit(2) is unit("2") is unit(UNITS[1].slug)
    with pytest.raises(ValueError, match="expected a number 1-"):
        unit(99)
    with pytest.raises(ValueError, match="no unit"):
        exercise("99.1")


@pytest.mark.parametrize("u", UNITS, ids=IDS)
def test_unit_notebook_reads_as_a_unit(u):
    nb = _notebook(u)
    cells = nb["cells"]
    title = _src(cells[0])
    for heading in ("Learning objectives", "Prerequisites", "Time", "Reading", "References"):
        assert heading in title, f"{u.notebook}: the first cell has no {heading!r}"
    assert title.lstrip().startswith(f"# Unit {u.number}")
    assert 3 <= len(objectives((notebooks_dir() / u.notebook).read_text())) <= 6
    params = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1 and re.search(r"^quick: bool = False", _src(params[0]), re.M) \
        and re.search(r"^live: bool = True", _src(params[0]), re.M)
    ids = [c.get("id") for c in cells]
    assert len(ids) == len(set(ids)) and all(ids)
    widgets = [c for c in cells if str(c.get("id", "")).startswith("widget-")]
    assert widgets, f"{u.notebook}: no live widget cell"
    for c in widgets:  # one figure either way: the live widget, or (live=False) its static copy
        s = _src(c)
        assert s.startswith("if live and widgets is not None:") and "interact(" in s and "\nelse:" in s, c["id"]


@pytest.mark.parametrize("u", UNITS, ids=IDS)
def test_exercise_cells_match_the_units_exercises(u):
    nb = _notebook(u)
    cells = exercise_cells(nb)
    listed = {ex.id: ex for ex in _module(u).EXERCISES}
    assert sorted(cells) == sorted(listed) and 2 <= len(listed) <= 4, (sorted(cells), sorted(listed))
    ids = [c.get("id") for c in nb["cells"]]
    for ex_id, (i, student, check_line) in cells.items():
        ex = listed[ex_id]
        assert check_line == f'check("{ex_id}", {ex.answer})'
        assert ids[i - 1] == f"ex-{ex_id.replace('.', '-')}-task", f"{ex_id}: no task cell just before it"
        assert "..." in student, f"{ex_id}: the scaffold is not left for the student"
        # nothing after the exercise uses the student's answer: the notebook runs top to bottom unanswered
        later = [c for c in nb["cells"][i + 1:] if c["cell_type"] == "code"]
        users = [c["id"] for c in later if re.search(rf"(?<![\w.]){re.escape(ex.answer)}\b", _src(c))]
        assert users == [], f"{ex_id}: cells {users} use {ex.answer}"


# ------------------------------------------------------------------ the exercises, both ways
@pytest.mark.parametrize("u,section", _all_sections(),
                         ids=[f"{s.kind}-{s.exercise}-{s.key or 'ref'}" for _, s in _all_sections()])
def test_solutions_pass_and_typical_wrong_answers_get_their_hint(u, section):
    ns = {}
    exec(compile(section.code, f"{u.solutions}:{section.exercise}", "exec"), ns)
    feedback = check(section.exercise, ns[exercise(section.exercise).answer])
    if section.kind == "solution":
        assert feedback.passed and feedback.key == "correct", str(feedback)
    else:
        assert not feedback.passed and feedback.key == section.key, str(feedback)
        assert feedback.message.startswith("Hint: ") and len(feedback.message) > 20


@pytest.mark.parametrize("u", UNITS, ids=IDS)
def test_every_hint_is_reached_by_a_wrong_answer_and_every_exercise_has_a_solution(u):
    secs = sections(notebooks_dir() / u.solutions)
    for ex in _module(u).EXERCISES:
        assert [s for s in secs if s.kind == "solution" and s.exercise == ex.id], ex.id
        wrong = {s.key for s in secs if s.kind == "wrong" and s.exercise == ex.id}
        assert wrong == set(ex.hints), f"{ex.id}: hints {sorted(ex.hints)}, wrong answers for {sorted(wrong)}"


@pytest.mark.parametrize("ex", exercises(), ids=[e.id for e in exercises()])
def test_unwritten_and_failing_answers_get_one_line_not_a_traceback(ex):
    assert check(ex.id, ...).key == "unanswered"

    def unwritten(*args, **kwargs):
        ...

    assert check(ex.id, unwritten).key == "unanswered"

    def fails(*args, **kwargs):
        raise ValueError("boom\nsecond line")

    fb = check(ex.id, fails)
    assert fb.key in ("raised", "wrong") and "\n" not in str(fb)
    if fb.key == "raised":
        assert "ValueError: boom" in fb.message


def test_feedback_and_helpers():
    assert ex_mod.close([1.0, 2.0], [1.0, 2.0 + 1e-9]) and not ex_mod.close([1.0], [1.0, 2.0])
    assert not ex_mod.close("x", 1.0) and ex_mod.close(3, 3.0)
    with pytest.raises(ex_mod.Unanswered):
        ex_mod.call(lambda: None)
    with pytest.raises(TypeError, match="expected a function"):
        ex_mod.call(3)
    fb = ex_mod.Feedback("1.1", False, "wrong", "Hint: look again.")
    assert str(fb) == "✗ Exercise 1.1: not yet. Hint: look again." and "b35900" in fb._repr_html_()
    with pytest.raises(ValueError, match="'wrong' key"):
        ex_mod.Exercise("1.9", "f", "t", lambda a: None, {"x": "y"})


def test_solution_files_are_read_strictly(tmp_path):
    bad = tmp_path / "s.py"
    bad.write_text('"""doc"""\n# %% solution 1.1\nx = 1\n# %% wrong 1.1\nx = 2\n')
    with pytest.raises(ValueError, match="line 4"):
        sections(bad)
    good = tmp_path / "g.py"
    good.write_text('# %% solution 1.1\nx = 1\n# %% wrong 1.1 off-by-one\nx = 2\n')
    assert [(s.kind, s.exercise, s.key, s.code) for s in sections(good)] == [
        ("solution", "1.1", None, "x = 1\n"), ("wrong", "1.1", "off-by-one", "x = 2\n")]


# ------------------------------------------------------------------ figures
@pytest.mark.parametrize("u,name", [(u, n) for u in UNITS for n in _module(u).FIGURES],
                         ids=[f"{u.slug}-{n}" for u in UNITS for n in _module(u).FIGURES])
def test_course_figures_are_legible(u, name):
    fig = _module(u).FIGURES[name]()
    assert crowded_labels(fig) == []


def test_the_legibility_check_finds_crowded_labels():
    from perfkit.report.plots import new_figure

    fig, ax = new_figure(figsize=(2, 2))
    ax.set_xticks(range(20), [f"label {i}" for i in range(20)])
    assert any("overlap" in p for p in crowded_labels(fig))
    fig, ax = new_figure()
    ax.set_yscale("log")
    ax.plot([1, 2], [0.2575, 0.2590])
    assert any("scientific notation" in p for p in crowded_labels(fig))
    fig, ax = new_figure()
    ax.plot([1, 2], [3, 4])
    assert crowded_labels(fig) == []


# ------------------------------------------------------------------ headless runs
def _outputs(path) -> list:
    nb = json.loads(path.read_text())
    return [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]


def _texts(outputs) -> str:
    return "\n".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                     for o in outputs)


def _params(u, tmp_path) -> dict:
    """Parameters that keep a unit's writes in the test's folder (a unit that measures writes under out_dir)."""
    src = "".join(c for cell in _notebook(u)["cells"] if "parameters" in cell.get("metadata", {}).get("tags", [])
                  for c in cell["source"])
    return {"out_dir": str(tmp_path / "own-machine")} if re.search(r"^out_dir:", src, re.M) else {}


@pytest.mark.slow
@pytest.mark.parametrize("u", UNITS, ids=IDS)
def test_student_notebook_runs_headless_with_nothing_answered(u, tmp_path):
    out = run_unit(u.number, quick=True, build_dir=tmp_path / "build", parameters=_params(u, tmp_path))
    outputs = _outputs(out)
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o["data"]["image/png"] for o in outputs if "image/png" in o.get("data", {})]
    assert images, "no figure"
    assert len(set(images)) == len(images), "a figure is shown twice"
    assert not [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    text = _texts(outputs)
    assert text.count("Not answered yet") == len(_module(u).EXERCISES), text[-2000:]
    bare = [o for o in outputs if "<Figure size" in "".join(o.get("data", {}).get("text/plain", ""))
            and "image/png" not in o.get("data", {})]
    assert not bare, "a figure shown as text, not as an image"
    assert "Traceback" not in text


@pytest.mark.slow
@pytest.mark.parametrize("u", UNITS, ids=IDS)
def test_solution_notebook_passes_every_check_in_the_notebook(u, tmp_path):
    out = run_unit(u.number, quick=True, solutions=True, build_dir=tmp_path / "build",
                   parameters=_params(u, tmp_path))
    text = _texts(_outputs(out))
    for ex in _module(u).EXERCISES:
        assert f"✓ Exercise {ex.id}: correct." in text, (ex.id, text[-2000:])
    assert "✗ Exercise" not in text


def test_the_solution_notebook_replaces_only_the_students_part(tmp_path):
    u = UNITS[0]
    built = json.loads(solution_notebook(notebooks_dir() / u.notebook, notebooks_dir() / u.solutions,
                                         tmp_path / "s.ipynb").read_text())
    student = _notebook(u)
    assert [c.get("id") for c in built["cells"]] == [c.get("id") for c in student["cells"]]
    changed = [c["id"] for a, c in zip(student["cells"], built["cells"]) if a["source"] != c["source"]]
    assert sorted(changed) == sorted(f"ex-{e.id.replace('.', '-')}" for e in _module(u).EXERCISES)
    assert (repo_root() / "notebooks").is_dir()
