"""Outputs, inputs, checks before work and quick mode (issue 36, items 3, 5 and 6).

Outputs: only regular files or new paths are written; a device, a FIFO, a link or an
input of the same command is refused before any work, in one error naming the path.
Inputs: only readable regular files of bounded size. ``perfkit fit`` checks the split,
the target and the categorical levels before its first fit, and saves the model even
when its report fails. Quick reproductions never write the committed ``figures/``, and
paths given as parameters are taken from the caller's working folder.
"""
import json
import os
import stat
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from perfkit import _io
from perfkit.chapters import notebooks as nbs
from perfkit.cli import main
from perfkit.schema import figures_dir as committed_figures
from perfkit.schema import repo_root

from tests.test_bad_inputs_model import FIT, _data
from tests.cli import run_cli as _run


@pytest.fixture
def files(tmp_path):
    X, y = _data()
    X.assign(time=y).to_csv(tmp_path / "data.csv", index=False)
    return tmp_path


def _one_error(r, *fragments):
    """Exit 2, exactly one ``perfkit: error:`` line on stderr containing every fragment, no traceback."""
    lines = [ln for ln in r.err.splitlines() if ln.startswith("perfkit: error:")]
    assert r.code == 2, (r.code, r.err)
    assert len(lines) == 1 and "Traceback" not in r.err, r.err
    for text in fragments:
        assert text in lines[0], (text, lines[0])
    return lines[0]


# --------------------------------------------------------------------------- outputs
def _fifo(d):
    os.mkfifo(d / "pipe")
    return d / "pipe"


def _link_to_file(d):
    (d / "victim.json").write_text("precious")
    (d / "link.json").symlink_to(d / "victim.json")
    return d / "link.json"


def _dangling_link(d):
    (d / "dangling.json").symlink_to(d / "nowhere.json")
    return d / "dangling.json"


def _link_to_input(d):
    (d / "in.csv").symlink_to(d / "data.csv")
    return d / "in.csv"


def _hard_link_to_input(d):
    os.link(d / "data.csv", d / "hard.csv")
    return d / "hard.csv"


def _input_other_spelling(d):
    return d / "." / "data.csv"


BAD_OUTPUTS = [
    ("dev-null", lambda d: "/dev/null", "is a character device"),
    ("dev-zero", lambda d: "/dev/zero", "is a character device"),
    ("dev-stdout", lambda d: "/dev/stdout", "is a symbolic link"),
    ("fifo", _fifo, "is a FIFO"),
    ("link-to-file", _link_to_file, "is a symbolic link"),
    ("dangling-link", _dangling_link, "is a symbolic link"),
    ("link-to-input", _link_to_input, "is a symbolic link"),
    ("hard-link-to-input", _hard_link_to_input, "is the input"),
    ("input-other-spelling", _input_other_spelling, "is the input"),
    ("folder", lambda d: d, "is a folder"),
    ("empty", lambda d: "", "empty path"),
]


@pytest.mark.parametrize("name, make, text", BAD_OUTPUTS, ids=[c[0] for c in BAD_OUTPUTS])
def test_fit_refuses_an_output_that_is_not_a_regular_file_before_any_work(capsys, files, name, make, text):
    out = make(files)
    before = os.lstat(out) if str(out) and os.path.lexists(out) else None
    r = _run(capsys, "fit", files / "data.csv", *FIT, "--out", out)
    _one_error(r, "--out", text)
    assert "fitting" not in r.out, "the fit started before the output was refused"
    if before is not None:  # the device, FIFO or link is still what it was
        after = os.lstat(out)
        assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
    if name == "link-to-file":
        assert (files / "victim.json").read_text() == "precious"


@pytest.mark.parametrize("name, make, text", BAD_OUTPUTS[:6], ids=[c[0] for c in BAD_OUTPUTS[:6]])
def test_check_output_names_the_path(tmp_path, name, make, text):
    out = make(tmp_path)
    with pytest.raises(ValueError, match="--plot") as info:
        _io.check_output(out, "--plot")
    assert text in str(info.value) and str(out) in str(info.value)


def test_check_output_accepts_new_paths_and_regular_files(tmp_path):
    (tmp_path / "old.json").write_text("{}")
    assert _io.check_output(tmp_path / "new.json") == tmp_path / "new.json"
    assert _io.check_output(tmp_path / "old.json", inputs=[tmp_path / "other.csv", None]) == tmp_path / "old.json"


# --------------------------------------------------------------------------- inputs
def _stdin_is_regular():
    try:
        return stat.S_ISREG(os.stat("/dev/stdin").st_mode)
    except OSError:
        return True


BAD_INPUTS = [
    ("dev-zero", lambda d: "/dev/zero", "is a character device, not a regular file"),
    ("dev-null", lambda d: "/dev/null", "is a character device, not a regular file"),
    ("fifo", _fifo, "is a FIFO (named pipe), not a regular file"),
    ("folder", lambda d: d, "is a folder, not a file"),
]


@pytest.mark.parametrize("name, make, text", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_fit_refuses_an_input_that_is_not_a_regular_file(capsys, tmp_path, name, make, text):
    path = make(tmp_path)  # a FIFO with no writer: reading it would block forever
    r = _run(capsys, "fit", path, *FIT, "--out", tmp_path / "m.json")
    _one_error(r, f"data CSV {str(path)!r}", text)
    assert not (tmp_path / "m.json").exists()


@pytest.mark.skipif(_stdin_is_regular(), reason="stdin is a regular file here")
def test_stdin_as_input_is_refused(capsys, tmp_path):
    r = _run(capsys, "fit", "/dev/stdin", *FIT, "--out", tmp_path / "m.json")
    _one_error(r, "'/dev/stdin'", "not a regular file")


@pytest.mark.parametrize("what", ["model JSON", "data CSV"])
def test_devices_as_model_or_table_are_refused(tmp_path, what):
    with pytest.raises(ValueError, match=f"^{what} '/dev/zero' is a character device"):
        _io.check_input_file("/dev/zero", what)


def test_inputs_have_a_bounded_size(tmp_path, monkeypatch):
    big = tmp_path / "big.csv"
    big.write_text("x,time\n" + "1,2\n" * 1000)
    monkeypatch.setattr(_io, "MAX_INPUT_BYTES", 1000)
    with pytest.raises(ValueError, match=r"^data CSV '.*big.csv' is 0 MiB; perfkit reads files of at most 0 MiB"):
        _io.read_csv(big, "data CSV")
    assert _io.check_input_file(big, "data CSV", max_bytes=10**6) == big


# --------------------------------------------------------------------------- checks before the first fit
def _bool_levels(d):
    X, y = _data()
    X.assign(c=X["c"] == "a", time=y).to_csv(d / "bool.csv", index=False)
    return d / "bool.csv"


def _constant_target(d):
    X, _ = _data()
    X.assign(time=0.25).to_csv(d / "const.csv", index=False)
    return d / "const.csv"


BEFORE_FIT = [
    ("test-size-1-row", lambda d: [d / "data.csv", *FIT, "--test-size", "1"],
     ["--test-size 1: holds out 1 of the 40 rows", "at least 2 held-out rows", "from 2 to 38"]),
    ("test-size-tiny-share", lambda d: [d / "data.csv", *FIT, "--test-size", "0.001"],
     ["--test-size 0.001: holds out 1 of the 40 rows", "at least 2 held-out rows"]),
    ("test-size-leaves-too-few-for-cv", lambda d: [d / "data.csv", *FIT, "--form", "loglinear", "--test-size", "37"],
     ["--test-size 37: holding out 37 of the 40 rows leaves 3 to fit; the fit needs at least 5"]),
    ("test-size-too-few-for-calibrate", lambda d: [d / "data.csv", *FIT, "--calibrate", "--cv", "4",
                                                   "--test-size", "0.95"],
     ["holding out 38 of the 40 rows leaves 2 to fit; the fit needs at least 4"]),
    ("constant-target", lambda d: [_constant_target(d), *FIT],
     ["target column 'time' is constant (every row is 0.25)"]),
    ("bool-levels", lambda d: [_bool_levels(d), *FIT],
     ["categorical column 'c': level", "cannot be saved in the model's JSON"]),
]


@pytest.mark.parametrize("name, args, texts", BEFORE_FIT, ids=[c[0] for c in BEFORE_FIT])
def test_fit_checks_the_inputs_before_the_first_fit(capsys, files, name, args, texts):
    r = _run(capsys, "fit", *args(files), "--out", files / "m.json")
    _one_error(r, *texts)
    assert "fitting" not in r.out and "seed 1/" not in r.err, "a fit ran before the check"
    assert not (files / "m.json").exists()


def test_constant_held_out_target_is_refused_before_fitting():
    from perfkit.study.data import check_target_spread

    with pytest.raises(ValueError, match=r"on the 2 held-out rows is constant \(every row is 3\).*another --test-size"):
        check_target_spread(pd.Series([3.0, 3.0]), "target column 't' on the 2 held-out rows",
                            hint="; give another --test-size")
    check_target_spread(pd.Series([3.0, 4.0]), "t")


@pytest.mark.parametrize("levels", [["a", "b"], [1, 2], [0.5, 1.5], np.array([3, 4], dtype=np.int64)])
def test_levels_that_read_back_pass(levels):
    from perfkit.model.validation import check_levels

    check_levels(pd.DataFrame({"c": list(levels)}), ["c"])


@pytest.mark.parametrize("levels", [[True, False], [pd.Timestamp("2020-01-01"), pd.Timestamp("2021-01-01")],
                                    [1 + 2j, 3j]])
def test_levels_that_do_not_read_back_are_refused(levels):
    from perfkit.model.validation import check_levels

    with pytest.raises(ValueError, match="^categorical column 'c': level .* cannot be saved"):
        check_levels(pd.DataFrame({"c": levels}), ["c"])


def test_a_fit_whose_report_fails_still_saves_the_model(capsys, files, monkeypatch):
    from perfkit.model.forms.generic import GenericPerformanceModel
    from perfkit.study import compare

    def broken(*a, **k):
        raise ValueError("R2: undefined on these rows")

    monkeypatch.setattr(compare, "compare_models", broken)
    r = _run(capsys, "fit", files / "data.csv", *FIT, "--out", files / "m.json")
    _one_error(r, "R2: undefined on these rows", f"the fitted model is saved in {files / 'm.json'}")
    model = GenericPerformanceModel.from_json(files / "m.json")
    X, _ = _data()
    assert np.isfinite(model.predict(X.head(3))).all()


# --------------------------------------------------------------------------- quick mode and parameter paths
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
    r = _run(capsys, "reproduce", "--chapter", "ch5", "--quick", "--no-progress", "--build-dir", tmp_path / "b",
             *extra)
    _one_error(r, "figures_dir:", "quick mode never writes")
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


def test_path_rules_say_they_hold_paths():
    from perfkit.chapters.result import at_least, existing_file, existing_files, output_folder, path_kind

    assert [path_kind(c) for c in (existing_file("x"), existing_files("x"), output_folder("x"), at_least(1))] == \
        ["file", "files", "folder", ""]
    verdict = existing_file("a table").test("/dev/zero")
    assert isinstance(verdict, str) and "not a regular file" in verdict
    assert json.dumps(output_folder("x").test("/dev/null")) == json.dumps("'/dev/null' is a file")
