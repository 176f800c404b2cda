"""The findings page the README links to holds the chapters' generated findings, not a hand-made copy."""
from perfkit.chapters.notebooks import FINDINGS_BEGIN, FINDINGS_END, FINDINGS_PAGE, readme_findings


def test_findings_page_block_is_the_generated_one(root):
    text = (root / FINDINGS_PAGE).read_text()
    block = text.split(FINDINGS_BEGIN, 1)[1].split(FINDINGS_END, 1)[0].strip()
    assert block == readme_findings().strip(), f"{FINDINGS_PAGE} is stale: run `perfkit findings --write`"
    assert FINDINGS_PAGE in (root / "README.md").read_text()


def test_readme_is_short(root):
    assert len((root / "README.md").read_bytes()) <= 12_000


def test_readme_names_only_existing_perfkit_files(root):
    import re

    text = (root / "README.md").read_text()
    for path in set(re.findall(r"`(perfkit/[\w/]+\.py)`", text)) - {"perfkit/chapters/chN.py"}:
        assert (root / path).exists(), path
