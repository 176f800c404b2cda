"""The interactive part where it lives: ``make lab`` serves JupyterLab (as root too), and in a headless Chromium the
teaching notebook's "workers G" slider redraws the figure of section 1.

The server serves a temporary copy of the notebook, so the checkout is never written (no saved outputs, no
``.ipynb_checkpoints``). Without selenium, ``/usr/bin/chromium`` or ``/usr/bin/chromedriver`` the browser test
skips with the reason, unless ``PERFKIT_REQUIRE_BROWSER=1`` (set by ``make test``), where it fails.
Select these tests with ``-m browser`` or by file.
"""
import hashlib
import json
import os
import re
import time

import pytest

from tests.browser import ROOT, Lab, browser_missing, chromium, copy_notebooks

pytestmark = [pytest.mark.slow, pytest.mark.browser]

NOTEBOOK = "teaching_performance_modelling.ipynb"
SLIDER_CELL = "s1-slider"  # the id of section 1's slider cell
SLIDER = "workers G"  # the description of the slider the test moves


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
    copy_notebooks([NOTEBOOK], ROOT / "notebooks", serve / "notebooks")
    with Lab(serve, tmp_path_factory.mktemp("lab-state")) as server:
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
    assert [f["name"] for f in json.loads(listing)["content"]] == [NOTEBOOK]  # the served copy, not the checkout
    assert lab.get("/api/kernelspecs")[0] == 200


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_teaching_slider_redraws_the_figure_in_a_browser(lab, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    source = ROOT / "notebooks" / NOTEBOOK
    before = _digest(source)
    had_checkpoints = (ROOT / "notebooks" / ".ipynb_checkpoints").exists()
    cells = json.loads(source.read_text())["cells"]
    slider_index = next(i for i, c in enumerate(cells) if c.get("id") == SLIDER_CELL)
    d = browser

    def status_bar():
        return d.execute_script("const s = document.querySelector('#jp-main-statusbar'); return s ? s.innerText : ''")

    def dom_cells():
        return d.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-Notebook .jp-Cell")

    d.get(lab.url(f"/lab/tree/notebooks/{NOTEBOOK}"))
    _wait(lambda: len(dom_cells()) == len(cells) and "Idle" in status_bar(), 120,
          f"JupyterLab showing the notebook's {len(cells)} cells with an idle kernel",
          lambda: f"{len(dom_cells())} cells in the page; status bar: {status_bar()!r}")

    # run the cells up to and including the slider cell: select the first, then Shift+Enter on each
    dom_cells()[0].find_element(By.CSS_SELECTOR, ".jp-InputPrompt").click()
    ActionChains(d).send_keys(Keys.ESCAPE).perform()
    for _ in range(slider_index + 1):
        ActionChains(d).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()
        time.sleep(0.2)

    def interact_widget():
        found = dom_cells()[slider_index].find_elements(By.CSS_SELECTOR, ".widget-interact")
        return found[0] if found else None

    def figure():
        """The src of the figure the interact widget shows, or None while it shows none."""
        w = interact_widget()
        images = w.find_elements(By.CSS_SELECTOR, ".widget-output img") if w else []
        src = images[0].get_attribute("src") if images else None
        return src if src and src.startswith("data:image/png;base64,") else None

    def cells_text():
        """The end of each code cell up to the slider cell, outputs included (a traceback shows here)."""
        code = [c for c in dom_cells()[:slider_index + 1] if "jp-CodeCell" in c.get_attribute("class").split()]
        return "\n---\n".join(c.text[-500:] for c in code)

    def prompt():
        return dom_cells()[slider_index].find_element(By.CSS_SELECTOR, ".jp-InputPrompt").text.strip()

    _wait(lambda: re.fullmatch(r"\[\d+\]:", prompt()), 150, "the cells up to the slider cell executed",
          lambda: f"its prompt reads {prompt()!r}; status bar: {status_bar()!r}; the cells:\n{cells_text()}")
    first = _wait(figure, 30, "the slider cell's interact widget showing a figure",
                  lambda: ("no interact widget" if interact_widget() is None else "the widget shows no figure")
                  + f"; the cells:\n{cells_text()}")
    slider = next((s for s in interact_widget().find_elements(By.CSS_SELECTOR, ".widget-slider")
                   if s.find_element(By.CSS_SELECTOR, ".widget-label").text == SLIDER), None)
    assert slider is not None, f"no slider labelled {SLIDER!r} in the widget:\n{interact_widget().text}"
    readout = slider.find_element(By.CSS_SELECTOR, ".widget-readout")
    assert readout.text == "2"  # the notebook's starting worker count
    handle = slider.find_element(By.CSS_SELECTOR, ".noUi-handle")
    d.execute_script("arguments[0].focus()", handle)
    ActionChains(d).send_keys(Keys.ARROW_RIGHT).perform()
    _wait(lambda: readout.text == "3", 30, f"the {SLIDER!r} slider reading 3 after one right arrow",
          lambda: f"it reads {readout.text!r}")
    second = _wait(lambda: (src := figure()) and src != first and src, 60,
                   "the figure redrawn after the slider moved",
                   lambda: "the widget shows " + ("the same figure" if figure() == first else "no figure"))
    assert len(second) > 1000  # a drawn figure, not an empty image

    # the checkout was not touched: the server served a copy
    assert _digest(source) == before
    assert had_checkpoints or not (ROOT / "notebooks" / ".ipynb_checkpoints").exists()
