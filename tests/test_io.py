"""Files perfkit reads and writes (perfkit._io): only regular files or new paths are written, and a device, a FIFO,
a link or an input of the same command is refused before any work, in one error naming the path; only readable
regular files of bounded size are read."""
import os
import stat

import pytest

from perfkit import _io
from tests.cli import EXACT_FIT as FIT, one_error_line, run_cli


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
def test_fit_refuses_an_output_that_is_not_a_regular_file_before_any_work(capsys, exact_csv, name, make, text):
    out = make(exact_csv)
    before = os.lstat(out) if str(out) and os.path.lexists(out) else None
    r = run_cli(capsys, "fit", exact_csv / "data.csv", *FIT, "--out", out)
    one_error_line(r, "--out", text)
    assert "fitting" not in r.out, "the fit started before the output was refused"
    if before is not None:  # the device, FIFO or link is still what it was
        after = os.lstat(out)
        assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
    if name == "link-to-file":
        assert (exact_csv / "victim.json").read_text() == "precious"


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
    r = run_cli(capsys, "fit", path, *FIT, "--out", tmp_path / "m.json")
    one_error_line(r, f"data CSV {str(path)!r}", text)
    assert not (tmp_path / "m.json").exists()


@pytest.mark.skipif(_stdin_is_regular(), reason="stdin is a regular file here")
def test_stdin_as_input_is_refused(capsys, tmp_path):
    r = run_cli(capsys, "fit", "/dev/stdin", *FIT, "--out", tmp_path / "m.json")
    one_error_line(r, "'/dev/stdin'", "not a regular file")


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
