"""Tables as the models read them (perfkit.model.validation): values that are not real numbers are named with their
dtype or row, column names are compared exactly as typed, a missing categorical level says how to keep it, and a
level that a saved model could not read back is refused."""
import datetime
import decimal

import numpy as np
import pandas as pd
import pytest

from perfkit.model.forms.loglinear import LogLinearModel
from perfkit.model.validation import column_list, numeric_column, validate_frame, validate_target


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


@pytest.mark.parametrize("level", [True, np.True_, False])
def test_true_is_not_the_level_1_in_predict(level):
    """A model fitted on levels 0/1 refuses True/False in predict instead of reading them as 1/0."""
    X = pd.DataFrame({"c": [0, 1] * 6, "b": [1.0, 2.0, 4.0] * 4})
    model = LogLinearModel(categorical="c", extrinsic="b").fit(X, X["b"] * (1 + X["c"]))
    Z = X.head(2).astype({"c": object})
    Z.loc[Z.index[0], "c"] = level
    with pytest.raises(ValueError, match=r"^categorical column 'c': level (True|False) \(bool_?\) is not one of the "
                                         r"fitted levels \['0', '1'\] \(True/False are not read as 1/0\)"):
        model.predict(Z)


def test_multiindex_columns_are_refused_with_the_way_to_flatten_them():
    X = pd.DataFrame({("x", "a"): [1.0, 2.0, 4.0], ("x", "b"): [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"^X: its columns have 2 levels \(a MultiIndex, e\.g\. \('x', 'a'\)\); "
                                         r"perfkit reads one name per column: flatten them first"):
        validate_frame(X, numeric=["a"])
