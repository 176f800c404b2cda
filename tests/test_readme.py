"""The README: short, with the sections a newcomer needs, no dated notes or hand-typed results, and its cheap
commands run as written; the findings page it links to holds the chapters' generated findings."""
import re

from perfkit.chapters.notebooks import FINDINGS_BEGIN, FINDINGS_END, FINDINGS_PAGE, readme_findings
from perfkit.pages import blocks as docs


def test_findings_page_block_is_the_generated_one(root):
    text = (root / FINDINGS_PAGE).read_text()
    block = text.split(FINDINGS_BEGIN, 1)[1].split(FINDINGS_END, 1)[0].strip()
    assert block == readme_findings().strip(), f"{FINDINGS_PAGE} is stale: run `perfkit findings --write`"
    assert FINDINGS_PAGE in (root / "README.md").read_text()


def test_readme_is_short(root):
    assert len((root / "README.md").read_bytes()) <= 12_000


def test_readme_names_only_existing_perfkit_files(root):
    text = (root / "README.md").read_text()
    for path in set(re.findall(r"`(perfkit/[\w/]+\.py)`", text)) - {"perfkit/chapters/chN.py"}:
        assert (root / path).exists(), path


#: the README's sections, in order: what perfkit is, install, the two commands, the quick starts, the table of
#: chapters, the documentation, how to cite, the licence
SECTIONS = ["Install", "Two commands", "Quick starts", "Chapters", "Documentation", "Citing", "Licence"]


def test_readme_has_its_sections_in_order(root):
    headings = re.findall(r"^## (.+)$", (root / "README.md").read_text(), re.M)
    assert [h for h in headings if h in SECTIONS] == SECTIONS


def _hand_written(root) -> str:
    """The README without its generated blocks."""
    text = (root / "README.md").read_text()
    for block in docs.BLOCKS:
        if block.page == "README.md":
            head, rest = text.split(block.begin, 1)
            text = head + rest.split(block.end, 1)[1]
    return text


def test_readme_has_no_dated_notes_commit_hashes_or_typed_results(root):
    """Dates, commit hashes and measured numbers (percentages, ratios, times) appear only in generated blocks;
    "95 %" is the level of the ledgers' intervals, not a result."""
    text = _hand_written(root)
    assert re.findall(r"\b20\d\d-\d\d-\d\d\b", text) == []
    assert _hashes(text) == []
    assert _typed_results(text) == []


def _hashes(text: str) -> list:
    """Words that look like commit hashes: 7 to 40 hex digits, with a letter and a digit."""
    return [h for h in re.findall(r"\b[0-9a-f]{7,40}\b", text) if re.search(r"[a-f]", h) and re.search(r"\d", h)]


def _typed_results(text: str) -> list:
    """Percentages, ratios and times in ``text`` (but "95 % interval", the ledgers' interval level)."""
    return re.findall(r"\d+(?:\.\d+)?\s*(?:%|×|ms\b|min\b|s\b)", text.replace("95 % interval", ""))


def test_readme_checks_find_typed_results(root, tmp_path):
    """The checks above fail on a README with a hand-typed time or percentage, a date or a commit."""
    (tmp_path / "README.md").write_text((root / "README.md").read_text()
                                        + "\nOn 2026-11-26 (commit c85ed2b) the fit took 3 min and erred 9.6 %.\n")
    text = _hand_written(tmp_path)
    assert _typed_results(text) == ["3 min", "9.6 %"]
    assert re.findall(r"\b20\d\d-\d\d-\d\d\b", text) == ["2026-11-26"]
    assert _hashes(text) == ["c85ed2b"]


def test_readme_python_quick_start_runs_as_written(root):
    """The README's Python block, word for word, from the repository root (as in a fresh clone)."""
    import subprocess
    import sys

    blocks = re.findall(r"```python\n(.*?)```", (root / "README.md").read_text(), re.S)
    assert len(blocks) == 1 and len(blocks[0].strip().splitlines()) <= 6
    res = subprocess.run([sys.executable, "-c", blocks[0]], cwd=root, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "MAPE" in res.stdout and "num_filters" in res.stdout
    # the numbers it printed before the fit study moved into the library (tests/golden/), to 1e-6 relative
    number = r"-?\d+\.\d+(?:e[-+]\d+)?"
    golden = (root / "tests" / "golden" / "readme_python.txt").read_text()
    new, old = [float(x) for x in re.findall(number, res.stdout)], [float(x) for x in re.findall(number, golden)]
    assert len(new) == len(old) and all(abs(a - b) <= 1e-6 * max(abs(b), 1e-12) for a, b in zip(new, old))
