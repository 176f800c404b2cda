"""The README's findings are the chapters' generated findings, not a hand-made copy."""
from perfkit.chapters.notebooks import FINDINGS_BEGIN, FINDINGS_END, readme_findings


def test_readme_findings_block_is_the_generated_one(root):
    text = (root / "README.md").read_text()
    block = text.split(FINDINGS_BEGIN, 1)[1].split(FINDINGS_END, 1)[0].strip()
    assert block == readme_findings().strip(), "README findings are stale: run `perfkit findings --write`"


def test_readme_names_only_existing_perfkit_files(root):
    import re

    text = (root / "README.md").read_text()
    for path in set(re.findall(r"`(perfkit/[\w/]+\.py)`", text)) - {"perfkit/chapters/chN.py"}:
        assert (root / path).exists(), path
