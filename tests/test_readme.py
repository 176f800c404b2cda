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


def test_readme_fit_and_predict_run_as_written(root, tmp_path):
    """The README's `perfkit fit` and `perfkit predict` commands, word for word, on measured rows of ours saved as
    the files they name (my_runs.csv, new_configs.csv)."""
    import re
    import shlex
    import subprocess
    import sys

    import pandas as pd

    text = (root / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    commands = [shlex.split(b.replace("\\\n", " ")) for b in blocks if b.startswith(".venv/bin/perfkit ")]
    assert [c[1] for c in commands] == ["fit", "predict"]
    runs = pd.read_csv(root / "data/measured/pytorch-cpu/ch4_lenet5.csv")
    runs = runs[runs["status"] == "ok"]
    runs.iloc[:240].to_csv(tmp_path / "my_runs.csv", index=False)
    runs.iloc[240:250].drop(columns=["epoch_time"]).to_csv(tmp_path / "new_configs.csv", index=False)
    for cmd in commands:
        res = subprocess.run([sys.executable, "-m", "perfkit", *cmd[1:]], cwd=tmp_path, capture_output=True, text=True,
                             timeout=300)
        assert res.returncode == 0, res.stderr
    assert len(pd.read_csv(tmp_path / "predictions.csv")) == 10
