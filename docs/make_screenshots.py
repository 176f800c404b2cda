"""The README's screenshot of the executed chapter notebooks in JupyterLab (docs/img/lab.png).

Serves copies of the executed notebooks in build/ (``make reproduce``) with ``make lab``, opens one in a headless
Chromium (the system's: Debian packages ``chromium`` and ``chromium-driver``), scrolls to a cell with a figure and
saves the page as a PNG. The checkout's build/ is only read.

    .venv/bin/python docs/make_screenshots.py [--notebook ch3_sgd_phase_model.ipynb] [--cell 8]
"""
from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import Lab, browser_missing, chromium, copy_notebooks  # noqa: E402

BUILD = ROOT / "build"
CHAPTERS = ("ch3_sgd_phase_model.ipynb", "ch4_generic_model.ipynb", "ch5_resattnet3d.ipynb",
            "ch6_beyond_the_thesis.ipynb", "ch7_extrapolation.ipynb")
#: whether the notebook's figures within the window have loaded (and there is at least one)
DRAWN_IN_VIEW = """
const imgs = [...document.querySelectorAll('.jp-NotebookPanel .jp-OutputArea img')].filter(i => {
  const r = i.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; });
return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0);
"""
#: the largest PNG written; above it the image is reduced to a 256-colour palette
MAX_BYTES = 300_000


def _wait(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.25)
    return value


def _png(raw: bytes) -> bytes:
    """``raw`` as is when small enough, else as a 256-colour PNG (a screenshot of text and plots loses nothing
    visible)."""
    if len(raw) <= MAX_BYTES:
        return raw
    from PIL import Image

    image = Image.open(io.BytesIO(raw)).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def screenshot(notebook: str, cell: int, out: Path, width: int = 1400, height: int = 900) -> Path:
    """Save JupyterLab showing ``build/<notebook>`` scrolled to the first figure of its cell ``cell`` (0-based)
    as ``out``."""
    from selenium.webdriver.common.by import By

    missing = [name for name in CHAPTERS if not (BUILD / name).is_file()]
    if missing or not (BUILD / notebook).is_file():
        raise SystemExit(f"executed notebooks missing in build/ ({', '.join(missing) or notebook}): "
                         "run make reproduce first")
    n_cells = len(json.loads((BUILD / notebook).read_text())["cells"])
    with tempfile.TemporaryDirectory(prefix="perfkit-screenshot-") as tmp:
        tmp = Path(tmp)
        copy_notebooks(sorted({*CHAPTERS, notebook}), BUILD, tmp / "serve" / "build")
        with Lab(tmp / "serve", tmp / "state") as lab:
            driver = chromium(tmp / "chromium", width, height)
            try:
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                       {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
                driver.get(lab.url(f"/lab/tree/build/{notebook}"))

                def cells():
                    return driver.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-Notebook .jp-Cell")

                def status():
                    return driver.execute_script(
                        "const s = document.querySelector('#jp-main-statusbar'); return s ? s.innerText : ''")

                _wait(lambda: len(cells()) == n_cells and "Idle" in status(), 120,
                      f"JupyterLab showing the {n_cells} cells of {notebook} with an idle kernel")
                figures = cells()[cell].find_elements(By.CSS_SELECTOR, ".jp-OutputArea img")
                if not figures:
                    raise SystemExit(f"cell {cell} of {notebook} shows no figure")
                # the cell's first figure at the bottom of the window, what comes before it above
                driver.execute_script("arguments[0].scrollIntoView({block: 'end'})", figures[0])
                _wait(lambda: driver.execute_script(DRAWN_IN_VIEW), 60, f"a figure of {notebook} drawn in view")
                time.sleep(2)  # let the last layout (typeset maths, scrollbars) settle
                raw = driver.get_screenshot_as_png()
            finally:
                driver.quit()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(_png(raw))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebook", default="ch3_sgd_phase_model.ipynb", help="executed notebook in build/")
    parser.add_argument("--cell", type=int, default=8, help="the cell (0-based) whose first figure is shown")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "lab.png")
    parser.add_argument("--size", default="1400x900", help="viewport, WIDTHxHEIGHT in pixels")
    args = parser.parse_args(argv)
    if (reason := browser_missing()):
        parser.error(reason)
    width, height = (int(v) for v in args.size.lower().split("x"))
    path = screenshot(args.notebook, args.cell, args.out, width, height)
    print(f"{path} ({path.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
