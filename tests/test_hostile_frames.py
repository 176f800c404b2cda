"""Hostile tables, column names, model envelopes and external files (issue 36, items 8 and 9).

Each case ends in one ``ValueError`` naming the culprit (column and dtype, row, file and line, the JSON key)
or in the correct result. Tiny inputs keep the file fast.
"""
import datetime
import decimal
import json

import numpy as np
import pandas as pd
import pytest

from perfkit.data.external import load_lambda, load_nvidia_dle
from perfkit.data.measured import load_phases, load_steps
from perfkit.model.forms.loglinear import LogLinearModel
from perfkit.model.persist import load_model
from perfkit.model.validation import column_list, numeric_column, validate_frame, validate_target
from perfkit.schema import CH3_COLUMNS


# --------------------------------------------------------------------- dtypes that are not real numbers
NOT_REAL = [
    ("complex", pd.Series([1 + 0j, 2 + 1j]), r"dtype complex128 holds complex numbers"),
    ("datetime", pd.Series(pd.to_datetime(["2020-01-01", "2020-01-02"])), r"dtype datetime64\[.*\] holds dates"),
    ("datetime-tz", pd.Series(pd.to_datetime(["2020-01-01", "2020-01-02"])).dt.tz_localize("UTC"),
     r"dtype datetime64\[.*UTC\] holds dates"),
    ("timedelta", pd.Series(pd.to_timedelta([1, 2], unit="s")), r"dtype timedelta64\[.*\] holds durations.*total_seconds"),
    ("period", pd.Series(pd.period_range("2020", periods=2, freq="D")), r"dtype period\[D\] holds periods"),
    ("interval", pd.Series(pd.interval_range(0, 2)), r"dtype interval\[.*\] holds intervals"),
    ("bool", pd.Series([True, True]), r"dtype bool holds True/False values"),
    ("boolean", pd.Series([True, True], dtype="boolean"), r"dtype boolean holds True/False values"),
    ("category-of-dates", pd.Series(pd.to_datetime(["2020-01-01", "2020-01-02"]), dtype="category"),
     r"dtype category holds dates"),
    ("object-timedelta", pd.Series([1.0, pd.Timedelta(2, "s")], dtype=object),
     r"value Timedelta\(.*\) in row 1 is a duration"),
    ("object-timestamp", pd.Series([1.0, pd.Timestamp("2020")], dtype=object), r"value .* in row 1 is a date or time"),
    ("object-date", pd.Series([1.0, datetime.date(2020, 1, 1)], dtype=object), r"value .* in row 1 is a date or time"),
    ("object-complex", pd.Series([1, 2 + 1j], dtype=object), r"value \(2\+1j\) in row 1 is a complex number"),
    ("object-bool", pd.Series([1.0, True], dtype=object), r"value True in row 1 is True/False"),
    ("huge-int", pd.Series([1, 10**400], dtype=object), r"value in row 1 is an integer too large for a float \(401 digits\)"),
]


@pytest.mark.parametrize("label, values, match", NOT_REAL, ids=[c[0] for c in NOT_REAL])
def test_numeric_role_refuses_values_that_are_not_real(label, values, match):
    X = pd.DataFrame({"speed": values, "c": ["x", "y"]})
    with pytest.raises(ValueError, match=r"^numeric column 'speed': " + match):
        validate_frame(X, numeric=["speed"], categorical=["c"])


@pytest.mark.parametrize("label, values, match", NOT_REAL, ids=[c[0] for c in NOT_REAL])
def test_target_refuses_values_that_are_not_real(label, values, match):
    X = pd.DataFrame({"c": ["x", "y"]})
    what = r"(complex|date|duration|period|interval|True/False|integer too large)"
    with pytest.raises(ValueError, match=r"^target column 'time': .*" + what):
        validate_target(values, X, name="target column 'time'", positive=True)


@pytest.mark.parametrize("values, expected", [
    (pd.Series(np.array([1, 2], dtype=np.float16)), [1.0, 2.0]),
    (pd.Series([1, 2], dtype="Int64"), [1.0, 2.0]),
    (pd.Series([1.5, 2.0], dtype="category"), [1.5, 2.0]),
    (pd.Series([decimal.Decimal("1.5"), 2], dtype=object), [1.5, 2.0]),
    (pd.Series(["3", "4.5"], dtype=object), [3.0, 4.5]),
    (pd.Series(np.array([2**63, 1], dtype=np.uint64)), [2.0**63, 1.0]),
], ids=["float16", "Int64", "category-of-floats", "Decimal", "numeric-text", "uint64"])
def test_real_numbers_of_any_dtype_are_read(values, expected):
    X = pd.DataFrame({"speed": values})
    assert numeric_column(X, "speed", "numeric").tolist() == expected


def test_a_model_refuses_a_duration_column_by_name():
    X = pd.DataFrame({"w": pd.to_timedelta([1, 2, 3, 4], unit="s"), "b": [1.0, 2.0, 4.0, 8.0]})
    with pytest.raises(ValueError, match=r"numeric column 'w': dtype timedelta64\[.*\] holds durations"):
        LogLinearModel(numeric="w", extrinsic="b").fit(X, [1.0, 2.0, 3.0, 4.0])


# --------------------------------------------------------------------- column names as the user typed them
@pytest.mark.parametrize("columns, asked, match", [
    ([0, "b"], "0", r"numeric column '0' not found: the table's column is the int 0, not the string '0'; "
                    r"name the table's columns with strings \(X\.columns = X\.columns\.astype\(str\)\)"),
    ([np.int64(7), "b"], "7", r"the table's column is the int 7, not the string '7'"),
    ([1.5, "b"], "1.5", r"the table's column is the float 1\.5, not the string '1\.5'"),
    (["a", " b"], "b", r"numeric column 'b' not found: the table's column is ' b', with spaces around the name "
                       r"\(a header with a space after a comma .*\); .*give the name exactly as ' b'"),
    (["a", "b  "], "b", r"the table's column is 'b  ', with spaces"),
    (["cafe\u0301", "b"], "caf\u00e9", r"the table's column 'cafe\\u0301' is the same text in another Unicode form "
                                       r"than 'caf\\xe9'; give it exactly as 'cafe\\u0301'"),
    (["\uff58", "b"], "x", r"the table's column '\\uff58' is the same text in another Unicode form"),
    (["speed", "b"], "sped", r"numeric column 'sped' not found; did you mean 'speed'\?"),
    ([10, 20], "x", r"numeric column 'x' not found; columns are \[10, 20\]"),
], ids=["int-0", "numpy-int", "float", "leading-space", "trailing-spaces", "nfd", "fullwidth", "typo", "no-match"])
def test_column_names_are_compared_as_typed(columns, asked, match):
    X = pd.DataFrame([[1.0] * len(columns)], columns=columns)
    with pytest.raises(ValueError, match=match):
        validate_frame(X, numeric=[asked])


@pytest.mark.parametrize("names, match", [
    ([0], r"^numeric: column name 0 is int, not a string; .*give '0'"),
    (["a", np.int64(3)], r"^numeric: column name 3 is int, not a string"),
    ([None], r"^numeric: column name None is None, not a string"),
    ([1.0], r"^numeric: column name 1\.0 is float, not a string"),
])
def test_column_lists_hold_strings(names, match):
    with pytest.raises(ValueError, match=match):
        column_list("numeric", names)


def test_a_model_with_an_int_column_name_says_which():
    X = pd.DataFrame({0: [1.0, 2.0, 4.0], "b": [1.0, 2.0, 4.0]})
    with pytest.raises(ValueError, match=r"numeric: column name 0 is int"):
        LogLinearModel(numeric=[0], extrinsic="b").fit(X, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"the table's column is the int 0, not the string '0'"):
        LogLinearModel(numeric="0", extrinsic="b").fit(X, [1.0, 2.0, 3.0])


# --------------------------------------------------------------------- None / NA as a level
@pytest.mark.parametrize("missing", [None, np.nan, pd.NA], ids=["None", "nan", "pd.NA"])
def test_a_missing_level_says_how_to_keep_it(missing):
    X = pd.DataFrame({"net": pd.Series(["ib", missing, "eth"], dtype=object), "b": [1.0, 2.0, 4.0]})
    with pytest.raises(ValueError, match=r"^categorical column 'net': missing value .* in row 1; if it is a level "
                                         r".*X\['net'\]\.fillna\('none'\).*keep_default_na=False"):
        validate_frame(X, categorical=["net"], extrinsic=["b"])


def test_na_is_a_level_when_read_as_one(tmp_path):
    path = tmp_path / "runs.csv"
    rows = [f"{net},{b},{t}" for net, b, t in [("NA", 1, 1.0), ("ib", 1, 2.0), ("NA", 2, 0.5), ("ib", 2, 1.0),
                                               ("NA", 4, 0.25), ("ib", 4, 0.5)]]
    path.write_text("net,b,t\n" + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"categorical column 'net': missing value nan in row 0.*keep_default_na"):
        LogLinearModel(categorical="net", extrinsic="b").fit(pd.read_csv(path), pd.read_csv(path)["t"])
    df = pd.read_csv(path, keep_default_na=False)
    model = LogLinearModel(categorical="net", extrinsic="b").fit(df, df["t"])
    np.testing.assert_allclose(model.predict(df[["net", "b"]]), df["t"], rtol=1e-9)


# --------------------------------------------------------------------- the model JSON envelope
@pytest.mark.parametrize("fmt, shown", [
    (["perfkit.LogLinearModel"], r"\['perfkit\.LogLinearModel'\] \(a list\)"),
    ({"perfkit.LogLinearModel": 1}, r"\{'perfkit\.LogLinearModel': 1\} \(an object\)"),
    (1, r"1 \(a number\)"), (None, r"None \(null\)"), (True, r"True \(true/false\)"),
    ("x" * 100, r"'x{56}\.\.\."),
], ids=["list", "object", "int", "null", "bool", "long-string"])
def test_format_of_any_type_is_one_error_naming_it(fmt, shown):
    doc = json.dumps({"format": fmt, "version": 1, "settings": {}, "fitted": {}})
    with pytest.raises(ValueError, match=r"^model JSON: format " + shown + r" is not a perfkit model; expected one of"):
        load_model(doc)
    with pytest.raises(ValueError, match=r"^model JSON: format " + shown + r" is not 'perfkit\.LogLinearModel'"):
        LogLinearModel.from_json(doc)


def test_a_document_without_format_or_not_an_object():
    with pytest.raises(ValueError, match=r"^model JSON: 'format' is missing: not a perfkit model"):
        load_model("{}")
    with pytest.raises(ValueError, match=r"^model JSON: expected an object at the top level, got a list"):
        load_model("[1]")


# --------------------------------------------------------------------- shipped external files, unchanged
def _digest(frame) -> str:
    """The frame's values, index, column names and dtypes as a short hash."""
    import hashlib

    meta = repr((list(frame.columns), [str(t) for t in frame.dtypes])).encode()
    return hashlib.sha256(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes() + meta).hexdigest()[:20]


@pytest.mark.parametrize("load, digest", [
    (lambda: load_lambda(), "5a7b8580cef549e1162b"),
    (lambda: load_lambda(screen=True), "560224102d00b9d3cf2a"),
    (lambda: load_lambda("fp16"), "6e0a3817628f6df20cd0"),
    (lambda: load_nvidia_dle(), "5d75c94ee87847e898e9"),
], ids=["lambda", "lambda-screened", "lambda-fp16", "nvidia"])
def test_shipped_external_frames_are_unchanged(load, digest):
    """The loaders' checks leave the frames of the shipped files exactly as they were before them."""
    assert _digest(load()) == digest


# --------------------------------------------------------------------- Lambda files
def _write_lambda(folder, tp_rows, bs_rows, header="name_gpu,num_gpu,watt,price,m1,m2"):
    (folder / "pytorch-train-throughput-fp16.csv").write_text("\n".join([header, *tp_rows]) + "\n")
    (folder / "pytorch-train-bs-fp16.csv").write_text("\n".join([header, *bs_rows]) + "\n")


TP = ["GPU A,1,300,1000,100,50", "2x GPU A,2,600,2000,180,90"]
BS = ["GPU A,1,300,1000,64,8", "2x GPU A,2,600,2000,128,16"]


@pytest.mark.parametrize("tp, bs, match", [
    (["GPU A,1,300,1000,100,50", "99999999999x GPU A,99999999999,600,2000,180,90"],
     ["GPU A,1,300,1000,64,8", "99999999999x GPU A,99999999999,600,2000,128,16"],
     r"throughput-fp16\.csv: column 'num_gpu', row 2 \('99999999999x GPU A'\), line 3: expected a whole number >= 1 "
     r"and at most 10,000,000"),
    (TP, ["GPU A,1,300,1000,1e300,8", BS[1]],
     r"bs-fp16\.csv: column 'm1', row 1 \('GPU A'\), line 2: expected a whole batch size >= 1 and at most 1e\+12"),
    (TP, ["GPU A,1,300,1000,64,8", "2x GPU A,2,600,2000,128,99999999999999999999"],
     r"bs-fp16\.csv: column 'm2', row 2 \('2x GPU A'\), line 3: expected a whole batch size"),
    (["GPU A,1,300,1000,1e-320,50", TP[1]], BS,
     r"throughput-fp16\.csv: column 'm1', row 1 \('GPU A'\), line 2: throughput 1e-320 with a global batch of 64 "
     r"gives inf s per step; that is not a measurement"),
    (["GPU A,1,300,1000,1e-99,50", TP[1]], BS, r"column 'm1', row 1 .*gives 6\.4e\+100 s per step"),
    (["GPU A,1,300,1000,100,50", TP[1]], ["GPU A,1,300,1000,,8", BS[1]],
     r"bs-fp16\.csv: column 'm1', row 1 \('GPU A'\), line 2: expected a whole batch size .* got nan"),
    (["GPU A,1,-300,1000,100,50", TP[1]], BS,
     r"throughput-fp16\.csv: column 'watt', row 1 \('GPU A'\), line 2: -300 is not a watt"),
    (TP, ["GPU A,1,300,0,64,8", BS[1]], r"bs-fp16\.csv: column 'price', row 1 \('GPU A'\), line 2: 0 is not a price"),
    ([], [], r"no GPU rows"),
    (["GPU A,1,300,1000,0,0", "2x GPU A,2,600,2000,,0"], BS,
     r"no row is a usable measurement \(rows left out: .*'throughput 0 \(not measured\)': 3"),
], ids=["huge-gpu-count", "huge-batch-float", "huge-batch-int", "tiny-throughput", "step-over-1e100",
        "blank-batch", "negative-watt", "zero-price", "header-only", "nothing-measured"])
def test_lambda_refuses_what_is_no_measurement(tmp_path, tp, bs, match):
    _write_lambda(tmp_path, tp, bs)
    with pytest.raises(ValueError, match=match):
        load_lambda("fp16", root=tmp_path)


def test_lambda_good_file_is_read_exactly(tmp_path):
    _write_lambda(tmp_path, TP, BS)
    frame = load_lambda("fp16", root=tmp_path)
    assert frame["batch_global"].tolist() == [64, 8, 128, 16] and frame["n_gpus"].tolist() == [1, 1, 2, 2]
    assert frame["t_iter"].tolist() == [64 / 100, 8 / 50, 128 / 180, 16 / 90]
    assert frame["n_gpus"].dtype == np.int64 and frame.attrs["dropped"] == {}


# --------------------------------------------------------------------- NVIDIA DLE files
NV_HEADER = "readme,section,nodes,gpus,batch_col,batch,other_cols,precision,throughput_col,throughput_raw,throughput"
NV_README = "PyTorch/Classification/RN50/README.md,RN50 / Training performance: NVIDIA DGX A100 (8x A100 80GB)"


def _nv(nodes="", gpus="8", batch="32", throughput="1600", unit="img/s"):
    return f"{NV_README},{nodes},{gpus},Batch size / GPU,{batch},,AMP,Throughput - mixed precision ({unit}),,{throughput}"


def _write_nvidia(path, rows):
    path.write_text("\n".join([NV_HEADER, *rows]) + "\n")
    return path


@pytest.mark.parametrize("rows, match", [
    ([_nv(), _nv(gpus="1e300")], r"column 'gpus', row 2 \('PyTorch/.*'\), line 3: expected a whole number >= 1 "
                                 r"and at most 10,000,000, got 1e\+300"),
    ([_nv(), _nv(nodes="99999999999")], r"column 'nodes', row 2 .*line 3: expected a whole number >= 1"),
    ([_nv(nodes="10000", gpus="10000")], r"column 'gpus', row 1 .*line 2: 10000 node\(s\) x 10000 GPUs is more than "
                                         r"10,000,000 GPUs; not a measurement"),
    ([_nv(), _nv(batch="99999999999999999999999")],
     r"column 'batch', row 2 .*line 3: a batch of 99999999999999999999999 per GPU on 8 GPUs is more than 1e\+12"),
    ([_nv(batch="2000000000", gpus="1000")], r"column 'batch', row 1 .*more than 1e\+12 samples per step"),
    ([_nv(), _nv(throughput="1e-320")], r"column 'throughput', row 2 .*line 3: throughput 1e-320 with a global batch "
                                        r"of 256 gives inf s per step; that is not a measurement"),
    ([_nv(throughput="1e308", unit="mol/ms")], r"column 'throughput', row 1 .*throughput inf .*not a measurement"),
    ([], r"no data rows \(only a header\); the table is empty"),
    ([_nv(throughput=""), _nv(throughput="0")],
     r"no row is a usable measurement \(rows left out: .*'throughput <= 0': 1"),
], ids=["huge-gpus", "huge-nodes", "gpus-times-nodes", "huge-batch", "huge-global-batch", "tiny-throughput",
        "overflowing-unit", "header-only", "nothing-kept"])
def test_nvidia_refuses_what_is_no_measurement(tmp_path, rows, match):
    path = _write_nvidia(tmp_path / "t.csv", rows)
    with pytest.raises(ValueError, match=r"t\.csv: " + match):
        load_nvidia_dle(path)


def test_nvidia_blank_in_a_numeric_batch_column_drops_only_its_row(tmp_path):
    path = _write_nvidia(tmp_path / "t.csv", [_nv(batch="32"), _nv(batch=""), _nv(batch="64", throughput="3200")])
    assert pd.read_csv(path)["batch"].dtype == float  # the blank makes pandas read the column as floats
    frame = load_nvidia_dle(path)
    assert frame["batch_per_gpu"].tolist() == [32, 64] and frame["batch_per_gpu"].dtype == np.int64
    assert frame["t_iter"].tolist() == [32 * 8 / 1600, 64 * 8 / 3200]
    assert frame.attrs["dropped"] == {"no batch size in the table": 1}


def test_nvidia_fractional_numeric_batch_is_dropped_by_reason(tmp_path):
    frame = load_nvidia_dle(_write_nvidia(tmp_path / "t.csv", [_nv(batch="32"), _nv(batch="2.5")]))
    assert frame["batch_per_gpu"].tolist() == [32] and frame.attrs["dropped"] == {"batch is not a whole number": 1}


# --------------------------------------------------------------------- measured files
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


def test_cli_names_a_header_with_spaces_exactly(capsys, tmp_path):
    from perfkit.cli import main

    (tmp_path / "d.csv").write_text("kernel, gpus, time\n1,1,1.0\n2,1,2.0\n4,2,2.0\n8,2,4.0\n")
    code = main(["fit", str(tmp_path / "d.csv"), "--target", "time", "--numeric", "kernel", "--seeds", "1",
                 "--out", str(tmp_path / "m.json")])
    err = capsys.readouterr().err
    assert code == 2 and not (tmp_path / "m.json").exists()
    assert err.strip() == ("perfkit: error: target column 'time' not found: the table's column is ' time', with spaces "
                           "around the name (a header with a space after a comma gives such names); remove the spaces "
                           "from the header, or give the name exactly as ' time' (a comma-separated list of names "
                           "drops them)")


def test_na_is_a_level_from_the_command_line(tmp_path, capsys):
    """A categorical level spelt ``NA`` is missing by default (one error that names the flag) and a level with
    ``--na-is-level``, at fit and at predict."""
    from perfkit.cli import main

    rng = np.random.default_rng(0)
    n = 60
    x = rng.choice([1.0, 2.0, 4.0, 8.0], n)
    c = rng.choice(["NA", "b"], n)
    pd.DataFrame({"x": x, "c": c, "time": 0.01 * x ** 0.7 + 0.002 * (c == "b") + 0.001}).to_csv(
        tmp_path / "data.csv", index=False)
    pd.DataFrame({"x": [2.0, 4.0], "c": ["NA", "b"]}).to_csv(tmp_path / "configs.csv", index=False)
    fit = ["fit", str(tmp_path / "data.csv"), "--target", "time", "--numeric", "x", "--categorical", "c",
           "--seeds", "1", "--test-size", "10", "--out", str(tmp_path / "m.json")]
    assert main(fit) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'c'" in err and "--na-is-level" in err
    assert main(fit + ["--na-is-level"]) == 0
    capsys.readouterr()
    out = tmp_path / "p.csv"
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "configs.csv"), "--na-is-level",
                 "--out", str(out)]) == 0
    pred = pd.read_csv(out, keep_default_na=False)
    assert list(pred["c"]) == ["NA", "b"] and np.all(pd.to_numeric(pred["predicted"]) > 0)
