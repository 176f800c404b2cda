"""The measured-file loaders (perfkit.data.measured) and the loaders' arguments: a cell that is no measurement is
named by file, column and line; failed rows are skipped; a damaged provenance file is named; an argument of the
wrong type is named."""
import numpy as np
import pytest

from perfkit.chapters import ch3
from perfkit.chapters.result import ParameterError
from perfkit.data.lambda_labs import load_lambda
from perfkit.data.measured import load_phases, load_provenance, load_steps, thesis_split
from perfkit.data.nvidia_dle import load_nvidia_dle
from perfkit.data.pollux import load_pollux, load_traces
from perfkit.schema import CH3_COLUMNS
from tests.frames import CH4_CSV as CH4


def _ch3_file(tmp_path, rows):
    header = ",".join(CH3_COLUMNS + ("device", "status", "mode"))
    path = tmp_path / "ch3.csv"
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


ROW = "cnn,pytorch,1,0,0," + ",".join(["0.1"] * 8)


@pytest.mark.parametrize("rows, words", [
    ([f"{ROW},cpu,ok,phased", f"{ROW},cpu,ok,"], r"column 'mode', line 3: .* is empty in a successful row"),
    (["cnn,pytorch,1,0,0,-5,0.1,0.1,0.1,0.1,0.1,0.1,0.1,cpu,ok,phased"], r"column 't_io', line 2: -5 is not a finite"),
    (["cnn,pytorch,1,0,0," + ",".join(["abc"] * 8) + ",cpu,ok,phased"], r"column 't_io', line 2: 'abc' is not"),
    (["cnn,pytorch,1,0,0,0.1,0.1,0.1,0.1,0.1,0.1,0.1,-9,cpu,ok,phased"], r"column 't_iter', line 2: -9 is not a finite "
                                                                         r"time > 0"),
    (["cnn,pytorch,0,0,0," + ",".join(["0.1"] * 8) + ",cpu,ok,phased"], r"column 'workers', line 2: 0 is not a whole"),
])
def test_a_chapter_3_cell_that_is_no_measurement_names_file_column_and_line(tmp_path, rows, words):
    path = _ch3_file(tmp_path, rows)
    with pytest.raises(ValueError, match=words):
        load_phases(path, mode=None)
    with pytest.raises(ParameterError, match="measured_csv: .*" + words):
        ch3.check_params(measured_csv=str(path), framework_csvs=())


def test_a_phase_that_was_not_timed_may_be_empty_and_a_blank_device_is_no_device(tmp_path):
    path = _ch3_file(tmp_path, ["cnn,pytorch,1,0,0,0.1,0.1,0.1,0.1,0.1,,0.1,0.3,,ok,phased"])
    df = load_phases(path)
    assert np.isnan(df["t_c"].iloc[0]) and df["device"].iloc[0] == ""
    assert len(load_phases("data/measured/pytorch-cpu/ch3_phases.csv")) > 0  # the shipped files, empty t_c included


@pytest.mark.parametrize("content, words", [("{not json", "is not a readable JSON file"),
                                            ("[1, 2]", "holds a JSON list, not an object"),
                                            (b"\xff\xfe{}", "is not a readable JSON file")])
def test_a_damaged_provenance_file_is_named(tmp_path, content, words):
    prov = tmp_path / "x.provenance.json"
    prov.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ValueError, match=rf"provenance file .*x.provenance.json {words}"):
        load_provenance(tmp_path / "x.csv")


@pytest.mark.parametrize("call, words", [
    (lambda: load_steps(CH4, roles=5), "roles: expected one of"),
    (lambda: load_steps(CH4, roles={"numeric": "workers"}), "roles: expected one of"),
    (lambda: thesis_split(np.zeros(10), np.zeros(10), n_fit=2.5), "n_fit: expected a whole number >= 1, got 2.5"),
    (lambda: thesis_split(np.zeros(10), np.zeros(10), n_fit="5"), "n_fit: expected a whole number >= 1, got '5'"),
    (lambda: load_pollux(root=123), "root: expected a path, got 123"),
    (lambda: load_lambda(root=5), "root: expected a path, got 5"),
    (lambda: load_nvidia_dle(5), "path: expected a path, got 5"),
    (lambda: load_traces(None, "c"), "root: expected the path of a folder, got None"),
])
def test_loader_arguments_of_the_wrong_type_name_the_argument(call, words):
    with pytest.raises(ValueError, match=words):
        call()


ROLES = {"numeric": ["x"], "categorical": ["c"], "extrinsic": ["w"]}


@pytest.mark.parametrize("cells, match", [
    ({"epoch_time": ""}, r"s\.csv: column 'epoch_time', line 3: nan is not a finite number"),
    ({"epoch_time": "fast"}, r"s\.csv: column 'epoch_time', line 3: 'fast' is not a finite number"),
    ({"epoch_time": "inf"}, r"column 'epoch_time', line 3: inf is not a finite number"),
    ({"x": ""}, r"s\.csv: column 'x', line 3: nan is not a finite number"),
    ({"c": ""}, r"s\.csv: column 'c', line 3: empty cell in a successful row"),
])
def test_load_steps_names_a_bad_cell(tmp_path, cells, match):
    row = {"x": "2", "c": "a", "w": "1", "epoch_time": "1.5", "status": "ok"}
    bad = {**row, **cells}
    text = ",".join(row) + "\n" + ",".join(row.values()) + "\n" + ",".join(bad.values()) + "\n"
    text += ",".join({**bad, "status": "error"}.values()) + "\n"
    (tmp_path / "s.csv").write_text(text)
    with pytest.raises(ValueError, match=match):
        load_steps(tmp_path / "s.csv", roles=ROLES)


def test_load_steps_ignores_bad_cells_of_failed_rows(tmp_path):
    text = "x,c,w,epoch_time,status\n2,a,1,1.5,ok\n,,1,,error\n4,b,2,3.0,ok\n"
    (tmp_path / "s.csv").write_text(text)
    X, y, _ = load_steps(tmp_path / "s.csv", roles=ROLES)
    assert y.tolist() == [1.5, 3.0] and X["c"].tolist() == ["a", "b"]


def test_load_phases_without_successful_rows(tmp_path):
    values = {c: "1" for c in CH3_COLUMNS}
    (tmp_path / "p.csv").write_text(",".join([*CH3_COLUMNS, "status"]) + "\n"
                                    + ",".join([*values.values(), "error"]) + "\n")
    for mode in (None, "phased"):
        with pytest.raises(ValueError, match=r"p\.csv: no rows with status 'ok'"):
            load_phases(tmp_path / "p.csv", mode=mode)
