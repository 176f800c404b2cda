"""The interactive part where it lives: ``make lab`` serves JupyterLab (as root too), and in a headless Chromium
every live widget of every course unit redraws its figure when its first slider moves one step.

The server serves temporary copies of the units (quick budgets; a unit that measures writes in the test's folder), so the checkout is never written (no saved outputs, no
``.ipynb_checkpoints``). Without selenium, ``/usr/bin/chromium`` or ``/usr/bin/chromedriver`` the browser test
skips with the reason, unless ``PERFKIT_REQUIRE_BROWSER=1`` (set by ``make test``), where it fails.
Select these tests with ``-m browser`` or by file.
"""
import hashlib
import json
import os
import re
import time
from pathlib import Path

import pytest

from perfkit.course.syllabus import UNITS
from tests.browser import ROOT, Lab, browser_missing, chromium

pytestmark = [pytest.mark.slow, pytest.mark.browser]

#: the course's units: every live widget of each is moved in the browser
UNITS_SERVED = [u.notebook for u in UNITS]


def _served_copy(notebook: Path, dest: Path, state: Path) -> None:
    """Write the unit ``notebook`` to ``dest`` with its parameters set for a test: quick budgets, and a unit that
    measures writing under ``state`` rather than the checkout's build/."""
    nb = json.loads(notebook.read_text())
    for cell in nb["cells"]:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            src = "".join(cell["source"]).replace("quick: bool = False", "quick: bool = True")
            src = re.sub(r'^out_dir: str = "[^"]*"', f"out_dir: str = {str(state / 'own-machine')!r}", src,
                         flags=re.M)
            cell["source"] = src.splitlines(keepends=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def _wait(condition, timeout: float, what: str, detail=lambda: ""):
    """Poll ``condition()`` until it returns something true (returned) or ``timeout`` seconds pass (a failure
    naming ``what``, with ``detail()`` appended). A page element replaced while it is read counts as not yet."""
    from selenium.common.exceptions import StaleElementReferenceException

    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition()
        except StaleElementReferenceException:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:.0f} s. {detail()}")
        time.sleep(0.25)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    serve = tmp_path_factory.mktemp("lab-serve")
    state = tmp_path_factory.mktemp("lab-state")
    for name in UNITS_SERVED:
        _served_copy(ROOT / "notebooks" / name, serve / "notebooks" / name, state)
    with Lab(serve, state) as server:
        yield server


@pytest.fixture
def browser(tmp_path):
    missing = browser_missing()
    if missing:
        if os.environ.get("PERFKIT_REQUIRE_BROWSER") == "1":
            pytest.fail(f"PERFKIT_REQUIRE_BROWSER=1 and {missing}")
        pytest.skip(missing)
    driver = chromium(tmp_path / "chromium")
    try:
        yield driver
    finally:
        driver.quit()


def test_make_lab_serves_jupyterlab(lab):
    command = next(line for line in lab.log.read_text().splitlines() if line.startswith(".venv/bin/jupyter lab "))
    # the Makefile adds --allow-root exactly when run as root, without which JupyterLab refuses to start
    assert ("--allow-root" in command.split()) == (os.geteuid() == 0), command
    status, page = lab.get("/lab")
    assert status == 200 and "JupyterLab" in page, (status, page[:300])
    status, listing = lab.get("/api/contents/notebooks")
    assert status == 200, listing
    assert [f["name"] for f in json.loads(listing)["content"]] == ["course"]  # the served copy, not the checkout
    status, listing = lab.get("/api/contents/notebooks/course")
    assert sorted(f["name"] for f in json.loads(listing)["content"]) == sorted(Path(n).name for n in UNITS_SERVED)
    assert lab.get("/api/kernelspecs")[0] == 200


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _open(d, lab, notebook: str, n_cells: int):
    """Open ``notebook`` in JupyterLab and wait for all its cells and an idle kernel; returns the status-bar and
    cell getters."""
    from selenium.webdriver.common.by import By

    def status_bar():
        return d.execute_script("const s = document.querySelector('#jp-main-statusbar'); return s ? s.innerText : ''")

    def dom_cells():
        return d.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")

    # a workspace of its own, reset: only this notebook is open (the server remembers the tabs of earlier tests)
    workspace = Path(notebook).stem
    d.get(lab.url(f"/lab/workspaces/{workspace}/tree/notebooks/{notebook}?reset"))
    _wait(lambda: len(dom_cells()) == n_cells and "Idle" in status_bar(), 120,
          f"JupyterLab showing the notebook's {n_cells} cells with an idle kernel",
          lambda: f"{len(dom_cells())} cells in the page; status bar: {status_bar()!r}")
    return status_bar, dom_cells


def _run_cells(d, dom_cells, count: int) -> None:
    """Select the first cell, then Shift+Enter ``count`` times: the first ``count`` cells run in order."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    dom_cells()[0].find_element(By.CSS_SELECTOR, ".jp-InputPrompt").click()
    ActionChains(d).send_keys(Keys.ESCAPE).perform()
    for _ in range(count):
        ActionChains(d).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()
        time.sleep(0.2)


def _move_and_see_a_redraw(d, dom_cells, index: int, cells_text) -> None:
    """In the widget cell at ``index``: wait for its figure, press the right arrow once on its first slider and
    wait for a different figure."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    def interact_widget():
        found = dom_cells()[index].find_elements(By.CSS_SELECTOR, ".widget-interact")
        return found[0] if found else None

    def figure():
        """The src of the figure the interact widget shows, or None while it shows none."""
        w = interact_widget()
        images = w.find_elements(By.CSS_SELECTOR, ".widget-output img") if w else []
        src = images[0].get_attribute("src") if images else None
        return src if src and src.startswith("data:image/png;base64,") else None

    def prompt():
        return dom_cells()[index].find_element(By.CSS_SELECTOR, ".jp-InputPrompt").text.strip()

    _wait(lambda: re.fullmatch(r"\[\d+\]:", prompt()), 240, f"cell {index} (a widget cell) executed",
          lambda: f"its prompt reads {prompt()!r}; the cells:\n{cells_text()}")
    first = _wait(figure, 60, f"the interact widget of cell {index} showing a figure",
                  lambda: ("no interact widget" if interact_widget() is None else "the widget shows no figure")
                  + f"; the cells:\n{cells_text()}")
    sliders = interact_widget().find_elements(By.CSS_SELECTOR, ".widget-slider")
    assert sliders, f"cell {index}: no slider in the widget:\n{interact_widget().text}"
    readout = sliders[0].find_element(By.CSS_SELECTOR, ".widget-readout")
    before = readout.text
    handle = sliders[0].find_element(By.CSS_SELECTOR, ".noUi-handle")
    d.execute_script("arguments[0].focus()", handle)
    ActionChains(d).send_keys(Keys.ARROW_RIGHT).perform()
    _wait(lambda: readout.text != before, 30, f"cell {index}: the first slider moving after one right arrow",
          lambda: f"it reads {readout.text!r}")
    second = _wait(lambda: (src := figure()) and src != first and src, 90,
                   f"cell {index}: the figure redrawn after the slider moved",
                   lambda: "the widget shows " + ("the same figure" if figure() == first else "no figure"))
    assert len(second) > 1000  # a drawn figure, not an empty image


@pytest.mark.parametrize("notebook", UNITS_SERVED, ids=[Path(n).stem for n in UNITS_SERVED])
def test_every_widget_of_a_unit_redraws_in_a_browser(lab, browser, notebook):
    source = ROOT / "notebooks" / notebook
    before = _digest(source)
    had_checkpoints = (ROOT / "notebooks" / "course" / ".ipynb_checkpoints").exists()
    cells = json.loads(source.read_text())["cells"]
    widgets = [i for i, c in enumerate(cells) if str(c.get("id", "")).startswith("widget-")]
    assert widgets, f"{notebook}: no widget cell"
    d = browser
    status_bar, dom_cells = _open(d, lab, notebook, len(cells))

    def cells_text():
        """The end of each code cell up to the last widget cell, outputs included (a traceback shows here)."""
        code = [c for c in dom_cells()[:widgets[-1] + 1] if "jp-CodeCell" in c.get_attribute("class").split()]
        return "\n---\n".join(c.text[-500:] for c in code) + f"\nstatus bar: {status_bar()!r}"

    _run_cells(d, dom_cells, widgets[-1] + 1)
    for index in widgets:
        _move_and_see_a_redraw(d, dom_cells, index, cells_text)
    # the checkout was not touched: the server served a copy
    assert _digest(source) == before
    assert had_checkpoints or not (ROOT / "notebooks" / "course" / ".ipynb_checkpoints").exists()
