"""Bad inputs to the generic model, its JSON, its fitting helpers and `perfkit fit` / `perfkit predict`.

Every bad input must end in one clear error naming the argument, column, row or
file at fault: a ``ValueError`` (``FileNotFoundError`` for a missing file) in
Python, ``perfkit: error: ...`` with exit code 2 and no traceback on the command
line. Tiny data and few generations keep the file fast.
"""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from perfkit.model.forms.generic import GenericPerformanceModel
from perfkit.model.roles import ConstantColumnWarning
from tests.cli import EXACT_FIT as FIT, run_cli as _run
from tests.frames import exact_data as _data

N = 40


def _model(**kw):
    base = dict(numeric="x", categorical="c", extrinsic="g", random_state=0, maxiter=5, popsize=3)
    return GenericPerformanceModel(**{**base, **kw})


@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    return _model().fit(X, y)


def _doc(model):
    return json.loads(model.to_json())


# --------------------------------------------------------------------------- Python API: settings
@pytest.mark.parametrize(
    "kw, match",
    [
        ({"bounds": {"p": 3}}, r"bounds\['p'\]: expected a \(lower, upper\) pair of numbers, got 3"),
        ({"bounds": {"p": (1,)}}, r"bounds\['p'\]: expected a \(lower, upper\) pair"),
        ({"bounds": {"p": ("a", "b")}}, r"bounds\['p'\]: expected a \(lower, upper\) pair"),
        ({"bounds": {"q": (True, 2)}}, r"bounds\['q'\]: expected a \(lower, upper\) pair"),
        ({"bounds": "x"}, r"bounds: expected a dict"),
        ({"bounds": {"p": (np.nan, 1.0)}}, r"bounds\['p'\]: expected finite numbers"),
        ({"bounds": {"a": (0.0, np.inf)}}, r"bounds\['a'\]: expected finite numbers"),
        ({"bounds": {"C": (2.0, 1.0)}}, r"bounds\['C'\]: lower 2.0 must be below upper 1.0"),
        ({"irls_iter": 0}, r"irls_iter: expected an integer >= 1, got 0"),
        ({"irls_iter": -2}, r"irls_iter: expected an integer >= 1, got -2"),
        ({"irls_iter": 1.5}, r"irls_iter: expected an integer >= 1, got 1.5"),
        ({"search_rows": 0}, r"search_rows: expected an integer >= 1 or None, got 0"),
        ({"search_rows": -5}, r"search_rows: expected an integer >= 1 or None"),
        ({"search_rows": 2.5}, r"search_rows: expected an integer >= 1 or None"),
        ({"random_state": "x"}, r"random_state: expected None, an integer >= 0"),
        ({"random_state": -1}, r"random_state: expected None, an integer >= 0"),
        ({"random_state": 1.5}, r"random_state: expected None, an integer >= 0"),
        ({"tol": 0}, r"tol: expected a finite number > 0, got 0"),
        ({"tol": -0.1}, r"tol: expected a finite number > 0"),
        ({"tol": np.nan}, r"tol: expected a finite number > 0, got nan"),
        ({"tol": np.inf}, r"tol: expected a finite number > 0, got inf"),
        ({"maxiter": 0}, r"maxiter: expected an integer >= 1 or None, got 0"),
        ({"maxiter": -1}, r"maxiter: expected an integer >= 1 or None, got -1"),
        ({"maxiter": 2.5}, r"maxiter: expected an integer >= 1 or None, got 2.5"),
        ({"popsize": 0}, r"popsize: expected an integer >= 1 or None, got 0"),
        ({"popsize": -3}, r"popsize: expected an integer >= 1 or None"),
        ({"popsize": True}, r"popsize: expected an integer >= 1 or None, got True"),
        ({"maxiter": 0, "method": "thesis"}, r"maxiter: expected an integer >= 1"),
        ({"lam": "much", "penalty": "l2"}, r"lam: expected a number >= 0"),
        ({"lam": np.nan, "penalty": "l2"}, r"lam: expected a number >= 0"),
        ({"numeric": 5}, r"numeric: expected a list of column names"),
    ],
    ids=lambda v: ",".join(f"{k}={w!r}" for k, w in v.items()) if isinstance(v, dict) else "",
)
def test_bad_settings_name_the_argument(kw, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        _model(**kw).fit(X, y)


def test_explicit_maxiter_is_honoured():
    X, y = _data()
    for method in ("varpro", "thesis"):
        m = _model(maxiter=1, method=method).fit(X, y)
        assert m.n_iter_ <= 1, method  # maxiter=0 used to fall back to the default (300 / 1000 generations)


def test_numpy_generators_are_accepted_as_random_state():
    X, y = _data()
    for rs in (np.random.default_rng(1), np.random.RandomState(1)):
        m = _model(random_state=rs).fit(X, y)
        assert np.isfinite(m.predict(X)).all()
        assert json.loads(m.to_json())["settings"]["random_state"] is None  # not JSON; saved as null


# --------------------------------------------------------------------------- Python API: data
def _set(y, row, value):
    y = y.copy()
    y[row] = value
    return y


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda X, y: (X, _set(y, 7, -0.5)), r"y: value -0.5 in row 7 must be > 0 \(measured times are positive\)"),
        (lambda X, y: (X, _set(y, 3, 0.0)), r"y: value 0 in row 3 must be > 0"),
        (lambda X, y: (X, -y), r"y: value -[\d.e-]+ in row 0 must be > 0"),
        (lambda X, y: (X, _set(y, 5, 1e300)), r"y: value 1e\+300 in row 5 is too large for a time.*in seconds"),
        (lambda X, y: (X, _set(y, 2, np.nan)), r"y: non-numeric or missing value nan in row 2"),
        (lambda X, y: (X, _set(y, 4, np.inf)), r"y: non-finite value inf in row 4"),
        (lambda X, y: (pd.concat([X, X[["x"]]], axis=1), y), r"X: column 'x' appears more than once"),
        (lambda X, y: (X.set_axis(["x", "g", "x"], axis=1), y), r"X: column 'x' appears more than once"),
        (lambda X, y: (X.assign(g=X["g"].where(X.index != 9, -2.0)), y), r"extrinsic column 'g': value -2 in row 9"),
    ],
    ids=["y-negative", "y-zero", "y-all-negative", "y-huge", "y-nan", "y-inf", "X-duplicate-column",
         "X-duplicate-role-column", "X-negative-extrinsic"],
)
def test_bad_data_names_the_row_or_column(make, match):
    X, y = _data()
    X2, y2 = make(X, y)
    with pytest.raises(ValueError, match=match):
        _model().fit(X2, y2)


def test_predict_refuses_duplicate_columns_and_overflow():
    X, y = _data()
    m = _model(bounds={"p": (2.0, 3.0)}).fit(X, y)
    with pytest.raises(ValueError, match=r"X: column 'c' appears more than once"):
        m.predict(pd.concat([X, X[["c"]]], axis=1))
    with pytest.raises(ValueError, match=r"X: the prediction for row 6 is not finite"):
        m.predict(X.assign(x=X["x"].where(X.index != 6, 1e300)))


def test_constant_columns_warn_once_and_fit_well():
    X, y = _data()
    X2 = X.assign(k=4.0, h=3, one="z")
    m = GenericPerformanceModel(numeric="x,k", categorical="c,one", extrinsic="g,h", random_state=0, maxiter=30)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.fit(X2, y)
    mine = [w for w in caught if issubclass(w.category, ConstantColumnWarning)]
    assert len(mine) == 1 and issubclass(mine[0].category, UserWarning)
    msg = str(mine[0].message)
    assert "numeric column 'k' is constant (every row is 4.0)" in msg and "p = 0" in msg
    assert "extrinsic column 'h' is constant" in msg and "q = 0" in msg and "categorical column 'one'" in msg
    assert m.constant_columns_ == {"k": 4.0, "h": 3.0, "one": "z"}
    p = m.params_.set_index("term")
    assert p.loc["k", "p"] == 0.0 and p.loc["h", "q"] == 0.0
    pred = m.predict(X2)
    assert np.isfinite(pred).all() and m.score(X2, y) > 0.9
    # the column is still accepted at predict time, and its value no longer matters
    np.testing.assert_allclose(m.predict(X2.assign(k=8.0, h=1)), pred)
    m2 = GenericPerformanceModel.from_json(m.to_json())
    assert m2.constant_columns_ == m.constant_columns_
    np.testing.assert_array_equal(m2.predict(X2), pred)


# --------------------------------------------------------------------------- JSON
def _drop(d, *path):
    node = d
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return d


def _put(d, value, *path):
    node = d
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return d


JSON_CASES = [
    ("top-level-list", lambda d: [d], r"model JSON: expected an object at the top level, got a list"),
    ("no-format", lambda d: _drop(d, "format"), r"'format' is missing"),
    ("wrong-format", lambda d: _put(d, "perfkit.Other", "format"), r"format 'perfkit.Other' is not"),
    ("version-99", lambda d: _put(d, 99, "version"),
     r"model JSON: version 99 is newer than this perfkit supports \(1\)"),
    ("version-string", lambda d: _put(d, "1", "version"), r"version: expected an integer, got '1'"),
    ("version-0", lambda d: _put(d, 0, "version"), r"version 0 is not a valid version"),
    ("no-version", lambda d: _drop(d, "version"), r"'version' is missing"),
    ("extra-top-key", lambda d: _put(d, 1, "notes"), r"unexpected key 'notes' at the top level"),
    ("settings-list", lambda d: _put(d, [], "settings"), r"settings: expected an object, got a list"),
    ("settings-extra", lambda d: _put(d, 3, "settings", "speed"), r"settings: unexpected key 'speed'"),
    ("settings-missing", lambda d: _drop(d, "settings", "tol"), r"settings: 'tol' is missing"),
    ("settings-bad-value", lambda d: _put(d, 0, "settings", "maxiter"), r"settings: maxiter: expected an integer"),
    ("settings-bad-bounds", lambda d: _put(d, {"p": 3}, "settings", "bounds"), r"settings: bounds\['p'\]"),
    ("no-fitted", lambda d: _drop(d, "fitted"), r"'fitted' is missing"),
    ("fitted-missing-coef", lambda d: _drop(d, "fitted", "coef"), r"fitted: 'coef' is missing"),
    ("fitted-extra", lambda d: _put(d, 1, "fitted", "magic"), r"fitted: unexpected key 'magic'"),
    ("coef-short", lambda d: _put(d, d["fitted"]["coef"][:-1], "fitted", "coef"), r"fitted.coef: expected 4 values, got 3"),
    ("coef-string", lambda d: _put(d, ["a", 1, 2, 3], "fitted", "coef"), r"fitted.coef: expected a list of finite numbers"),
    ("powers-nan", lambda d: _put(d, [float("nan"), 0.5], "fitted", "powers"),
     r"fitted.powers: expected a list of finite numbers"),
    ("powers-long", lambda d: _put(d, [0.5, 0.5, 0.5], "fitted", "powers"), r"fitted.powers: expected 2 values, got 3"),
    ("numeric-not-strings", lambda d: _put(d, [1], "fitted", "numeric"), r"fitted.numeric: expected a list of strings"),
    ("roles-mismatch", lambda d: _put(d, ["y"], "fitted", "numeric"), r"fitted columns .* do not match the settings"),
    ("categories-not-dict", lambda d: _put(d, ["a", "b"], "fitted", "categories"), r"fitted.categories: expected an object"),
    ("kept-level-unknown", lambda d: _put(d, ["a", "zz"], "fitted", "kept_levels", "c"),
     r"fitted.kept_levels\['c'\]: level 'zz' is not in fitted.categories"),
    ("objective-nan", lambda d: _put(d, float("nan"), "fitted", "objective"), r"fitted.objective: expected a finite number"),
    ("n_iter-negative", lambda d: _put(d, -1, "fitted", "n_iter"), r"fitted.n_iter: expected an integer >= 0"),
]


@pytest.mark.parametrize("mutate, match", [c[1:] for c in JSON_CASES], ids=[c[0] for c in JSON_CASES])
def test_bad_model_json_names_the_key(fitted, mutate, match):
    text = json.dumps(mutate(_doc(fitted)))
    with pytest.raises(ValueError, match=match):
        GenericPerformanceModel.from_json(text)


@pytest.mark.parametrize(
    "content, match",
    [
        ('{"format": ', r"model JSON '.*m.json': invalid JSON at line 1, column 12"),
        ("[" * 100000 + "]" * 100000, r"model JSON '.*m.json': nested too deeply"),
        (b"\xff\xfe\x00binary", r"model JSON '.*m.json': not a text file"),
        ("", r"model JSON '.*m.json': invalid JSON at line 1, column 1"),
    ],
    ids=["truncated", "deeply-nested", "binary", "empty"],
)
def test_bad_model_json_file_names_the_file(tmp_path, content, match):
    path = tmp_path / "m.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ValueError, match=match):
        GenericPerformanceModel.from_json(path)


def test_model_json_missing_file_or_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"model JSON '.*nope.json': no such file"):
        GenericPerformanceModel.from_json(tmp_path / "nope.json")
    with pytest.raises(ValueError, match=r"model JSON '.*' is a folder, not a file"):
        GenericPerformanceModel.from_json(tmp_path)
    with pytest.raises(ValueError, match=r"model JSON: expected JSON text or a file path, got int"):
        GenericPerformanceModel.from_json(3)


def test_json_round_trip_atomic_and_version_1_compatible(fitted, tmp_path):
    X, _ = _data()
    path = tmp_path / "model.json"
    fitted.to_json(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.json"]  # no temporary file left behind
    m2 = GenericPerformanceModel.from_json(path)
    np.testing.assert_array_equal(m2.predict(X), fitted.predict(X))
    assert m2.get_params() == fitted.get_params()
    # a version-1 file written before constant_columns existed still loads
    old = _drop(_doc(fitted), "fitted", "constant_columns")
    assert old["version"] == 1
    m3 = GenericPerformanceModel.from_json(json.dumps(old))
    assert m3.constant_columns_ == {}
    np.testing.assert_array_equal(m3.predict(X), fitted.predict(X))
    with pytest.raises(ValueError, match="is a folder"):
        fitted.to_json(tmp_path)


# --------------------------------------------------------------------------- fitting helpers and baselines
def _fitting_cases():
    from perfkit.model.selection import fitting as f

    X, y = _data()
    m = _model()
    return [
        ("fit_repeated-seeds-0", lambda: f.fit_repeated(m, X, y, seeds=0, progress=False), r"seeds: expected a number"),
        ("fit_repeated-seeds-empty", lambda: f.fit_repeated(m, X, y, seeds=[], progress=False), r"seeds: need at least one"),
        ("fit_repeated-seed-negative", lambda: f.fit_repeated(m, X, y, seeds=[-1], progress=False),
         r"seeds: every seed must be an integer >= 0, got -1"),
        ("fit_repeated-n_jobs-0", lambda: f.fit_repeated(m, X, y, seeds=1, n_jobs=0, progress=False), r"n_jobs: expected a non-zero"),
        ("sweep-lams-empty", lambda: f.regularisation_sweep(m, X, y, X, y, lams=[], progress=False), r"lams: the λ grid is empty"),
        ("sweep-lam-negative", lambda: f.regularisation_sweep(m, X, y, X, y, lams=[1e-3, -1], progress=False),
         r"lams\[1\]: expected a finite number >= 0, got -1"),
        ("sweep-penalties-empty", lambda: f.regularisation_sweep(m, X, y, X, y, penalties=[], progress=False),
         r"penalties: give at least one"),
        ("sweep-seeds-empty", lambda: f.regularisation_sweep(m, X, y, X, y, seeds=[], progress=False), r"seeds: need at least one"),
        ("cv-lam-nan", lambda: f.choose_lambda_cv(m, X, y, lams=[np.nan]), r"lams\[0\]: expected a finite number"),
        ("cv-folds-1", lambda: f.choose_lambda_cv(m, X, y, cv=1), r"cv: expected a number of folds >= 2"),
        ("cv-n_jobs-0", lambda: f.choose_lambda_cv(m, X, y, n_jobs=0), r"n_jobs: expected a non-zero"),
    ]


@pytest.mark.parametrize("case", range(len(_fitting_cases())), ids=[c[0] for c in _fitting_cases()])
def test_fitting_helpers_refuse_bad_arguments(case):
    _, call, match = _fitting_cases()[case]
    with pytest.raises(ValueError, match=match):
        call()


def test_rf_baseline_refuses_non_positive_times():
    from perfkit.model.selection.baselines import make_baseline

    X, y = _data()
    with pytest.raises(ValueError, match=r"y: value -1 in row 4 must be > 0"):
        make_baseline("rf", numeric="x", categorical="c", extrinsic="g", n_estimators=5).fit(X, _set(y, 4, -1.0))


# --------------------------------------------------------------------------- CLI
@pytest.fixture()
def csv_files(tmp_path):
    """A folder holding ``data.csv`` (:func:`tests.frames.exact_data`'s table with its target ``time``) and
    ``configs.csv`` (its first 5 configurations)."""
    X, y = _data()
    X.assign(time=y).to_csv(tmp_path / "data.csv", index=False)
    X.head(5).to_csv(tmp_path / "configs.csv", index=False)
    return tmp_path


def _write(path, content):
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def _csv_with(tmp_path, column, row, value):
    X, y = _data()
    df = X.assign(time=y).astype({column: object})
    df.loc[row, column] = value
    df.to_csv(tmp_path / "bad.csv", index=False)
    return tmp_path / "bad.csv"


CLI_FIT_CASES = [
    ("csv-folder", lambda d: [d, *FIT, "--out", d / "m.json"], r"is a folder, not a file"),
    ("csv-missing", lambda d: [d / "nope.csv", *FIT, "--out", d / "m.json"], r"'.*nope.csv': no such file"),
    ("csv-empty", lambda d: [_write(d / "e.csv", ""), *FIT, "--out", d / "m.json"], r"'.*e.csv' is empty"),
    ("csv-binary", lambda d: [_write(d / "b.csv", b"\x89PNG\xff\xfe\x00\x01"), *FIT, "--out", d / "m.json"],
     r"'.*b.csv': not a text file"),
    ("csv-duplicate-header", lambda d: [_write(d / "h.csv", "x,x,time\n1,2,3\n"), *FIT, "--out", d / "m.json"],
     r"column 'x' appears twice in the header"),
    ("csv-header-only", lambda d: [_write(d / "h.csv", "x,c,g,time\n"), *FIT, "--out", d / "m.json"],
     r"data CSV .*h.csv. has a header but no data rows"),
    ("out-is-input", lambda d: [d / "data.csv", *FIT, "--out", d / "data.csv"], r"--out '.*data.csv' is the input"),
    ("out-is-folder", lambda d: [d / "data.csv", *FIT, "--out", d], r"--out '.*' is a folder"),
    ("out-folder-missing", lambda d: [d / "data.csv", *FIT, "--out", d / "no" / "m.json"], r"the folder '.*no' does not exist"),
    ("seeds-0", lambda d: [d / "data.csv", *FIT, "--seeds", "0"], r"--seeds: expected an integer >= 1, got 0"),
    ("jobs-0", lambda d: [d / "data.csv", *FIT, "--jobs", "0"], r"--jobs: expected a non-zero integer"),
    ("lam-negative", lambda d: [d / "data.csv", *FIT, "--penalty", "l2", "--lam", "-1"], r"--lam: expected a finite number >= 0, got -1"),
    ("lam-nan", lambda d: [d / "data.csv", *FIT, "--penalty", "l2", "--lam", "nan"], r"--lam: expected a finite number >= 0, got nan"),
    ("lam-without-penalty", lambda d: [d / "data.csv", *FIT, "--lam", "0.1"], r"--lam 0.1 needs --penalty l1 or l2"),
    ("test-size-0", lambda d: [d / "data.csv", *FIT, "--test-size", "0"], r"--test-size: expected a share .* got 0"),
    ("test-size-negative", lambda d: [d / "data.csv", *FIT, "--test-size", "-0.2"], r"--test-size: expected a share .* got -0.2"),
    ("test-size-1.5", lambda d: [d / "data.csv", *FIT, "--test-size", "1.5"], r"--test-size: expected a share .* got 1.5"),
    ("test-size-all-rows", lambda d: [d / "data.csv", *FIT, "--test-size", str(N)],
     rf"--test-size {N}: holding out {N} of the {N} rows leaves nothing to fit; give a share in \(0, 1\) or 1 to {N - 1}"),
    ("test-size-share-all-rows", lambda d: [d / "data.csv", *FIT, "--test-size", "0.99"],
     rf"--test-size 0.99: holding out {N} of the {N} rows"),
    ("target-non-numeric", lambda d: [_csv_with(d, "time", 6, "slow"), *FIT],
     r"target column 'time': non-numeric or missing value 'slow' in row 6"),
    ("target-negative", lambda d: [_csv_with(d, "time", 7, -0.5), *FIT],
     r"target column 'time': value -0.5 in row 7 must be > 0 \(measured times are positive\)"),
    ("target-zero", lambda d: [_csv_with(d, "time", 2, 0), *FIT], r"target column 'time': value 0 in row 2 must be > 0"),
    ("target-huge", lambda d: [_csv_with(d, "time", 3, 1e300), *FIT], r"target column 'time': value 1e\+300 in row 3 is too large"),
    ("target-also-numeric", lambda d: [d / "data.csv", *FIT[:2], "--numeric", "x,time"],
     r"column 'time' is the --target and cannot also be --numeric"),
    ("numeric-column-non-numeric", lambda d: [_csv_with(d, "x", 5, "big"), *FIT],
     r"numeric column 'x': non-numeric value 'big' in row 5"),
]


@pytest.mark.parametrize("make, match", [c[1:] for c in CLI_FIT_CASES], ids=[c[0] for c in CLI_FIT_CASES])
def test_cli_fit_bad_input_one_line_error(capsys, csv_files, make, match):
    before = (csv_files / "data.csv").read_bytes()
    r = _run(capsys, "fit", *make(csv_files))
    assert r.code == 2, r.err
    assert r.err.startswith("perfkit: error: ") and "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1, r.err  # one line; no fit started, so no progress output
    import re

    assert re.search(match, r.err), r.err
    assert "fitting the generic model" not in r.out  # refused before any work
    assert (csv_files / "data.csv").read_bytes() == before
    assert not (csv_files / "model.json").exists() and not (csv_files / "m.json").exists()


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("model")
    X, y = _data()
    _model().fit(X, y).to_json(d / "m.json")
    return d / "m.json"


CLI_PREDICT_CASES = [
    ("out-is-model", lambda d, m: [m, d / "configs.csv", "--out", m], r"--out '.*m.json' is the input '.*m.json'"),
    ("out-is-configs", lambda d, m: [m, d / "configs.csv", "--out", d / "configs.csv"], r"--out '.*configs.csv' is the input"),
    ("out-is-folder", lambda d, m: [m, d / "configs.csv", "--out", d], r"--out '.*' is a folder"),
    ("model-missing", lambda d, m: [d / "nope.json", d / "configs.csv"], r"model JSON '.*nope.json': no such file"),
    ("model-folder", lambda d, m: [d, d / "configs.csv"], r"model JSON '.*' is a folder"),
    ("model-invalid-json", lambda d, m: [_write(d / "bad.json", "{oops"), d / "configs.csv"],
     r"model JSON '.*bad.json': invalid JSON at line 1, column 2"),
    ("model-version-99", lambda d, m: [_write(d / "v.json", m.read_text().replace('"version": 1', '"version": 99')),
                                       d / "configs.csv"], r"model JSON '.*v.json': version 99 is newer"),
    ("model-is-csv", lambda d, m: [d / "configs.csv", d / "configs.csv"], r"model JSON '.*configs.csv': invalid JSON"),
    ("configs-missing", lambda d, m: [m, d / "nope.csv"], r"configurations CSV '.*nope.csv': no such file"),
    ("configs-missing-column", lambda d, m: [m, _write(d / "c2.csv", "x,c\n1,a\n")], r"extrinsic column 'g' not found"),
    ("configs-unseen-level", lambda d, m: [m, _write(d / "c3.csv", "x,c,g\n1,zz,2\n")],
     r"categorical column 'c': unseen category 'zz' in row 0"),
    ("configs-duplicate-header", lambda d, m: [m, _write(d / "c4.csv", "x,c,g,g\n1,a,2,2\n")],
     r"column 'g' appears twice in the header"),
]


@pytest.mark.parametrize("make, match", [c[1:] for c in CLI_PREDICT_CASES], ids=[c[0] for c in CLI_PREDICT_CASES])
def test_cli_predict_bad_input_one_line_error(capsys, csv_files, model_file, make, match):
    import re

    model_before = model_file.read_bytes()
    configs_before = (csv_files / "configs.csv").read_bytes()
    r = _run(capsys, "predict", *make(csv_files, model_file))
    assert r.code == 2 and r.err.startswith("perfkit: error: ") and "Traceback" not in r.err, r.err
    assert re.search(match, r.err), r.err
    assert model_file.read_bytes() == model_before and (csv_files / "configs.csv").read_bytes() == configs_before


def test_cli_os_error_is_one_line(capsys, monkeypatch, csv_files, model_file):
    from perfkit.cli import predict

    def denied(args, argv=None):
        raise PermissionError(13, "Permission denied", "/somewhere/preds.csv")

    monkeypatch.setattr(predict, "run", denied)
    r = _run(capsys, "predict", model_file, csv_files / "configs.csv")
    assert r.code == 2 and r.err == "perfkit: error: /somewhere/preds.csv: Permission denied\n"


def test_cli_fit_writes_a_model_that_predicts(capsys, csv_files):
    r = _run(capsys, "fit", csv_files / "data.csv", *FIT[:-1], "2", "--test-size", "10", "--out", csv_files / "m.json")
    assert r.code == 0, r.err
    assert "Traceback" not in r.err and "seed 1/2 took" in r.err and "left" in r.err
    model = GenericPerformanceModel.from_json(csv_files / "m.json")
    assert json.loads((csv_files / "m.json").read_text())["version"] == 1
    r = _run(capsys, "predict", csv_files / "m.json", csv_files / "configs.csv", "--out", csv_files / "p.csv")
    assert r.code == 0, r.err
    p = pd.read_csv(csv_files / "p.csv")
    X, y = _data()
    np.testing.assert_allclose(p["predicted"], model.predict(X.head(5)))
    assert np.all(np.abs(p["predicted"] / y[:5] - 1) < 0.2)


def test_cli_fit_constant_column_warns_and_fits(capsys, tmp_path):
    X, y = _data()
    X.assign(k=4.0, time=y).to_csv(tmp_path / "data.csv", index=False)
    r = _run(capsys, "fit", tmp_path / "data.csv", "--target", "time", "--numeric", "x,k", "--categorical", "c",
             "--extrinsic", "g", "--seeds", "1", "--out", tmp_path / "m.json")
    assert r.code == 0, r.err
    assert "perfkit: warning: numeric column 'k' is constant" in r.err and "Traceback" not in r.err
    m = GenericPerformanceModel.from_json(tmp_path / "m.json")
    assert m.constant_columns_ == {"k": 4.0}
    assert np.isfinite(m.predict(X.assign(k=4.0))).all()
