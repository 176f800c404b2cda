"""The README's and the docs' fit examples, run as written, print the numbers they printed before the fit study
moved into the library (tests/golden/, written by the command-line code that preceded perfkit.study), and each
Python twin in docs/fitting.md prints the report its command prints.

The data files the examples name are made from our measured LeNet-5 runs (my_runs.csv: the first 240 usable
rows; new_configs.csv: the next 10, without the time) and Pollux's cifar10 job (the docs' own code). Timings are
masked; a golden line must appear, in order, in the new output (a line may be added, none lost or changed).
One deliberate change since: the mean ± std table of a thesis-form fit whose seeds all agree (std 0 everywhere)
is one line, not a second copy of the parameter table (readme_fit_predict.txt)."""
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "golden"

pytestmark = pytest.mark.slow


def _blocks(page: str, lang: str) -> list:
    return re.findall(rf"```{lang}\n(.*?)```", (ROOT / page).read_text(), re.S)


def _commands(block: str) -> list:
    lines = [ln for ln in block.replace("\\\n", " ").splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return [shlex.split(ln.split("  #")[0]) for ln in lines if ln.startswith(".venv/bin/perfkit ")]


def _cli(argv, cwd) -> str:
    res = subprocess.run([sys.executable, "-m", "perfkit", *argv[1:]], cwd=cwd, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    return res.stdout


def _runs(folder: Path, rename=None) -> None:
    runs = pd.read_csv(ROOT / "data/measured/pytorch-cpu/ch4_lenet5.csv").query("status == 'ok'")
    runs = runs.rename(columns=rename or {})
    time_col = "epoch_time"
    runs.iloc[:240].to_csv(folder / "my_runs.csv", index=False)
    runs.iloc[240:250].drop(columns=[time_col]).to_csv(folder / "new_configs.csv", index=False)


_TIMING = re.compile(r"took \d|^search time ")


def _normalised(text: str) -> list:
    """Lines without timings: lines that report a duration dropped, a fit's time masked, the search table's
    fit_seconds column removed; runs of blanks collapsed."""
    out, in_search = [], False
    for line in text.splitlines():
        if _TIMING.search(line) or line.startswith("$ ") or line.startswith("[rc "):
            continue
        line = re.sub(r", [\d.]+ s$", ", <t> s", line.rstrip())
        if line.startswith("form search:"):
            in_search = True
        elif in_search and not line.strip():
            in_search = False
        elif in_search and not line.lstrip().startswith("form "):
            mark = re.search(r"\s*(<- chosen|within 1 se)?\s*$", line)
            line = " ".join(line[:mark.start()].split()[:-1] + ([mark.group(1)] if mark.group(1) else []))
        elif in_search:
            line = " ".join(t for t in line.split() if t != "fit_seconds")
        out.append(" ".join(line.split()))
    return out


def _assert_golden(new: str, name: str) -> None:
    old = [ln for ln in _normalised((GOLDEN / name).read_text()) if ln]
    got = [ln for ln in _normalised(new) if ln]
    i = 0
    for line in got:
        if i < len(old) and line == old[i]:
            i += 1
    assert i == len(old), f"{name}: line {i + 1} of the golden output not found in order: {old[i]!r}"


def _assert_same_predictions(csv: Path, golden: str) -> None:
    new, old = pd.read_csv(csv), pd.read_csv(GOLDEN / golden)
    assert list(new.columns) == list(old.columns)
    num = old.select_dtypes("number").columns
    assert np.allclose(new[num].to_numpy(float), old[num].to_numpy(float), rtol=1e-6, equal_nan=True)


def test_readme_fit_and_predict_print_the_golden_numbers(tmp_path):
    commands = [c for b in _blocks("README.md", "bash") for c in _commands(b) if c[1] in ("fit", "predict")]
    assert [c[1] for c in commands] == ["fit", "predict", "fit", "fit"]  # then the scaling study, the GPU study
    commands = commands[:2]
    _runs(tmp_path)
    out = "".join(_cli(c, tmp_path) for c in commands)
    _assert_golden(out, "readme_fit_predict.txt")
    _assert_same_predictions(tmp_path / "predictions.csv", "readme_predictions.csv")


def test_readme_scaling_study_from_small_runs_runs(tmp_path):
    """The README's "measured only small runs" command, on one Pollux job's rows with at most 16 GPUs: a scaling
    study with the communication prior, saved, that predicts 64 GPUs with an interval."""
    from perfkit.data import load_pollux
    from perfkit.model.persist import load_model

    [command] = [c for b in _blocks("README.md", "bash") for c in _commands(b) if "--scale-of" in c or
                 ("--cluster" in c and c[1] == "fit")]
    job = load_pollux().query(f"job == '{command[command.index('--job') + 1]}' and n_gpus <= 16")
    job[["n_gpus", "n_nodes", "batch_per_gpu", "t_iter", "sync_time"]].to_csv(tmp_path / command[2], index=False)
    out = _cli(command, tmp_path)
    assert "scaling study on" in out and "communication prior: job bert" in out
    model = load_model(tmp_path / "model.json")
    iv = model.predict_interval(pd.DataFrame({"n_gpus": [64], "n_nodes": [16], "batch_per_gpu": [8]}), 0.9)
    assert iv.distance.iloc[0] == 3 and 0 < iv.lower.iloc[0] < iv.predicted.iloc[0] < iv.upper.iloc[0]


def test_readme_gpu_you_do_not_own_runs(tmp_path):
    """The README's "a GPU you do not own" commands on Lambda's rows: a study across hardware, one GPU type left out
    at a time, saved; then a plan that ranks configurations with intervals."""
    from perfkit.data.lambda_labs import load_lambda

    commands = [c for b in _blocks("README.md", "bash") for c in _commands(b) if "--hardware" in c or c[1] == "plan"]
    assert [c[1] for c in commands] == ["fit", "plan"]
    load_lambda(screen=True)[["model", "precision", "gpu", "n_gpus", "batch_per_gpu", "t_iter"]].to_csv(
        tmp_path / commands[0][2], index=False)
    out = _cli(commands[0], tmp_path)
    assert "leave one gpu out: 12 groups" in out and "margin: selected form −" in out
    out = _cli(commands[1], tmp_path)
    assert out.startswith("plan: 115,305,030 samples") and "flags:" in out and "interpolated" in out


def test_forms_auto_example_prints_the_golden_numbers_and_its_whatif_runs(tmp_path):
    commands = _commands(_blocks("docs/forms.md", "bash")[0])
    assert [c[1] for c in commands] == ["fit", "predict", "whatif"]
    _runs(tmp_path)
    out = "".join(_cli(c, tmp_path) for c in commands[:2])
    _assert_golden(out, "forms_auto.txt")
    _assert_same_predictions(tmp_path / "predictions.csv", "forms_predictions.csv")
    assert json.loads((tmp_path / "model.json").read_text())["format"] == "perfkit.ConformalRegressor"
    # the search chose a hybrid form with a rate per measured worker count (1-3) and says so ...
    assert "note: the chosen form predicts workers (1 to 3 measured) only at the values measured" in out
    # ... and the docs' what-if over 1-16 workers predicts the counts it can and names the rest
    res = subprocess.run([sys.executable, "-m", "perfkit", *commands[2][1:]], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert "workers = 4, 8, 16: not predicted (the model predicts workers only at the values measured)" in res.stderr
    lines = res.stdout.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.split()[:2] == ["workers", "predicted"])
    table = [ln.split() for ln in lines[head + 1:head + 6]]
    assert [row[0] for row in table] == ["1", "2", "4", "8", "16"]
    assert all(row[1] != "–" for row in table[:2]) and all(row[1] == "–" for row in table[2:])
    assert (tmp_path / "whatif.png").stat().st_size > 0


def _twin(page: str, marker: str) -> str:
    [code] = [b for b in _blocks(page, "python") if marker in b]
    return code


def _run_python(code: str, cwd: Path) -> dict:
    """``code`` executed in ``cwd`` (the docs' relative paths), its namespace returned; its prints discarded."""
    import contextlib
    import io
    import os

    here = os.getcwd()
    os.chdir(cwd)
    try:
        ns: dict = {}
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "<docs>", "exec"), ns)  # noqa: S102 - the docs' own example
        return ns
    finally:
        os.chdir(here)


def _report(stdout: str) -> str:
    """A command's report: its stdout without the lines that are not the study's (the command's `$` echo, the
    phases note and the line of what runs first are in the twin's header; the `saved` line is the command's)."""
    lines = stdout.splitlines()
    return "\n".join(ln for ln in lines if not ln.startswith("saved "))


def test_fitting_python_twin_prints_what_the_command_prints(tmp_path):
    """docs/fitting.md's first fit, as Python and as the command, on the same file: the same report."""
    [cli] = _commands(next(b for b in _blocks("docs/fitting.md", "bash") if "perfkit fit my_runs.csv" in b))
    _runs(tmp_path)
    stdout = _cli(cli, tmp_path)
    ns = _run_python(_twin("docs/fitting.md", "FitSpec(target=\"epoch_time\""), tmp_path)
    assert _normalised(ns["result"].summary()) == _normalised(_report(stdout))
    assert (tmp_path / "study.json").is_file()
    from perfkit.study import StudyResult

    again = StudyResult.from_json(tmp_path / "study.json")
    assert again.summary() == ns["result"].summary()


def test_extrapolation_example_golden_and_its_python_twin(tmp_path):
    """docs/fitting.md's Pollux example: the command prints the golden numbers, and the Python twin gives the
    command's factor table, inner comparison and intervals (the same report, line for line)."""
    block = next(b for b in _blocks("docs/fitting.md", "bash") if "cifar10" in b)
    code = re.search(r'-c "\n(.*?)"\n', block, re.S).group(1)
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True, timeout=120)
    [cli] = _commands(block)
    stdout = _cli(cli, tmp_path)
    _assert_golden(stdout, "fitting_extrapolation.txt")
    ns = _run_python(_twin("docs/fitting.md", "load_pollux"), tmp_path)
    result = ns["result"]
    assert _normalised(result.summary(header=False)) == _normalised(_report(stdout))[2:]
    golden = (GOLDEN / "fitting_extrapolation.txt").read_text()
    assert f"cover {100 * result.coverage:.1f} % of the 160 held-out rows" in golden
    assert "MAPE (%) " + ", ".join(f"{k} {v:.3g}" for k, v in result.inner.items()) in golden
    assert result.factors.iloc[-1]["rows"] == 160 and list(result.factors["factor"])[-1] == "all"
    assert (tmp_path / "cifar10.json").is_file()
