"""`perfkit reproduce` and :func:`perfkit.chapters.notebooks.reproduce` with the notebook runs recorded: quick
reproductions never write the committed ``figures/``, and paths given as parameters are taken from the caller's
working folder (``~`` expanded)."""
import os
from types import SimpleNamespace

import pytest

from perfkit.chapters import notebooks as nbs
from perfkit.cli import main
from perfkit.schema import figures_dir as committed_figures
from perfkit.schema import repo_root
from tests.cli import one_error_line, run_cli


@pytest.fixture
def captured(monkeypatch, tmp_path):
    """``reproduce`` with the notebook runs replaced by a record of their parameters."""
    calls = []

    def fake_run(nb, build_dir="build", parameters=None, kernel_name=None, progress=True):
        calls.append(SimpleNamespace(notebook=nb, build_dir=build_dir, parameters=dict(parameters or {})))
        return tmp_path / "out.ipynb"

    monkeypatch.setattr(nbs, "run_notebook", fake_run)
    monkeypatch.setattr(nbs, "write_run_environment", lambda build_dir, **run: None)
    return calls


def test_quick_reproduce_defaults_its_figures_to_build_quick(captured, tmp_path):
    nbs.reproduce(["ch5"], quick=True, build_dir=tmp_path / "b", progress=False)
    assert captured[0].parameters["figures_dir"] == str(repo_root() / "build" / "quick" / "figures")
    assert captured[0].parameters["quick"] is True


def test_full_reproduce_keeps_the_notebooks_default(captured, tmp_path):
    nbs.reproduce(["ch5"], build_dir=tmp_path / "b", progress=False)
    assert "figures_dir" not in captured[0].parameters


def test_cli_quick_reproduce_without_figures_dir_never_writes_figures(captured, capsys, tmp_path):
    code = main(["reproduce", "--chapter", "ch5", "--quick", "--no-progress", "--build-dir", str(tmp_path / "b")])
    assert code == 0, capsys.readouterr().err
    shown = captured[0].parameters["figures_dir"]
    assert shown == str(repo_root() / "build" / "quick" / "figures")
    assert not shown.startswith(str(committed_figures()) + os.sep) and shown != str(committed_figures())


@pytest.mark.parametrize("how", ["flag", "parameter"])
def test_quick_reproduce_refuses_the_committed_figures(captured, capsys, tmp_path, how):
    extra = (["--figures-dir", str(committed_figures())] if how == "flag"
             else ["-p", "figures_dir", str(committed_figures())])
    r = run_cli(capsys, "reproduce", "--chapter", "ch5", "--quick", "--no-progress", "--build-dir", tmp_path / "b",
             *extra)
    one_error_line(r, "figures_dir:", "quick mode never writes")
    assert not captured


def test_figures_dir_parameter_expands_home(captured, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    nbs.reproduce(["ch5"], build_dir=tmp_path / "b", progress=False, parameters={"figures_dir": "~/x"})
    assert captured[0].parameters["figures_dir"] == str(tmp_path / "x")


@pytest.mark.parametrize("how", ["flag", "parameter"])
def test_relative_figures_dir_is_taken_from_the_working_folder(captured, tmp_path, monkeypatch, how):
    monkeypatch.chdir(tmp_path)
    kw = dict(figures_dir="rel") if how == "flag" else dict(parameters={"figures_dir": "rel"})
    nbs.reproduce(["ch5"], build_dir=tmp_path / "b", progress=False, **kw)
    assert captured[0].parameters["figures_dir"] == str(tmp_path / "rel")


def test_dataset_parameters_are_taken_from_the_working_folder(captured, tmp_path, monkeypatch):
    import shutil

    from perfkit.schema import repo_root

    measured = repo_root() / "data" / "measured" / "pytorch-cpu"  # real files: reproduce checks the values first
    shutil.copy(measured / "ch5_resattnet3d.csv", tmp_path / "mine.csv")
    shutil.copy(measured / "ch4_lenet5.csv", tmp_path / "ch4.csv")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    nbs.reproduce(["ch5"], quick=True, build_dir=tmp_path / "b", progress=False,
                  parameters={"dataset": "mine.csv", "ch4_dataset": "~/ch4.csv", "volume_study": "", "n_fit": 90})
    p = captured[0].parameters
    assert p["dataset"] == str(tmp_path / "mine.csv") and p["ch4_dataset"] == str(tmp_path / "ch4.csv")
    assert p["volume_study"] == "" and p["n_fit"] == 90


def test_figures_dir_that_is_not_a_folder_is_refused(captured, tmp_path):
    (tmp_path / "file").write_text("x")
    for bad in (tmp_path / "file", "/dev/null"):
        with pytest.raises(ValueError, match="^figures_dir: .* is a file"):
            nbs.reproduce(["ch5"], build_dir=tmp_path / "b", progress=False, parameters={"figures_dir": str(bad)})
    with pytest.raises(ValueError, match="^figures_dir: expected a folder"):
        nbs.reproduce(["ch5"], build_dir=tmp_path / "b", progress=False, parameters={"figures_dir": 5})
    assert not captured


def test_figures_dir_given_twice_and_differently_is_one_error(captured, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run_cli(capsys, "reproduce", "--chapter", "ch3", "--no-progress", "--figures-dir", "A", "-p", "figures_dir", "B")
    one_error_line(r, "figures_dir: given twice, as 'A' and as the parameter 'B'")
    assert not captured  # nothing ran
    nbs.reproduce(["ch3"], figures_dir="A", parameters={"figures_dir": "./A"}, build_dir=tmp_path / "b", progress=False)
    assert captured[-1].parameters["figures_dir"] == str(tmp_path / "A")  # the same folder twice is one folder
