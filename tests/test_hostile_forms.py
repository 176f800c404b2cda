"""Hostile inputs to the model forms (issue 36, items 1 and 8): a form reads exactly the columns of its roles and
the constants of ``fixed``, checks every value it uses, and refuses a tampered model JSON with one ``ValueError``
naming the key; valid inputs give the same predictions as before."""
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfkit.model.forms.hybrid import HybridModel
from perfkit.model.uncertainty.conformal import ConformalRegressor
from perfkit.model.persist import load_model
from perfkit.model.roles import IgnoredColumnWarning
from perfkit.model.selection.search import make_form
from perfkit.schema import ROLES

DATA = Path(__file__).resolve().parents[1] / "data/measured/pytorch-cpu"
CH5 = ROLES["ch5"]
FIXED = {"stride": 2, "volume": "48x56x48", "pool_size": 1}
LENET = dict(numeric=["num_filters", "kernel_size", "pool_size", "stride"],
             categorical=["padding", "activation", "dataset", "optimizer"], extrinsic=["batch_size", "workers"])


def _rows(name, roles, n):
    df = pd.read_csv(DATA / name)
    df = df[df["status"] == "ok"].head(n).reset_index(drop=True)
    return df[[c for cols in roles.values() for c in cols]].copy(), df["epoch_time"].to_numpy()


@pytest.fixture(scope="module")
def ch5():
    """120 Chapter 5 rows (role columns only) and a hybrid fitted on them with the file's constants in fixed."""
    X, y = _rows("ch5_resattnet3d.csv", CH5, 120)
    return X, y, HybridModel("resattnet3d", **CH5, fixed=FIXED).fit(X, y)


@pytest.fixture(scope="module")
def docs():
    """Saved documents of the three forms on 120 LeNet-5 rows; the hybrid with modifiers and a regime."""
    X, y = _rows("ch4_lenet5.csv", LENET, 120)
    fast = {"thesis": dict(maxiter=3, popsize=5, search_rows=60)}
    out = {name: make_form(name, **LENET, network="lenet5", random_state=0, **fast.get(name, {})).fit(X, y).to_doc()
           for name in ("thesis", "loglinear")}
    out["hybrid"] = HybridModel("lenet5", **LENET, modifiers={"compute": ["workers", "batch_size=min"]},
                                regimes=["batch_size=min"]).fit(X, y).to_doc()
    return out, X


# --------------------------------------------------------------------- predict: the columns and values it reads
@pytest.mark.parametrize("change, match", [
    (dict(n_train=-60000), r"column 'n_train' is -60000 in row 0, but the model uses n_train = 431"),
    (dict(n_train=0), r"column 'n_train' is 0 in row 0, but the model uses n_train = 431"),
    (dict(n_train=float("nan")), r"column 'n_train' is nan in row 0"),
    (dict(n_train=60000), r"column 'n_train' is 60000 in row 0, but the model uses n_train = 431 \(dataset size\)"),
    (dict(stride=1), r"column 'stride' is 1 in row 0, but the model uses stride = 2 \(fixed=\)"),
    (dict(stride="two"), r"column 'stride' is 'two' in row 0"),
    (dict(volume="32x32x32"), r"column 'volume' is '32x32x32' in row 0, but the model uses volume = 48x56x48"),
    (dict(pool_size=2), r"column 'pool_size' is 2 in row 0, but the model uses pool_size = 1"),
    (dict(workers=0.5), r"column 'workers': value 0.5 in row 0 is not a whole number >= 1"),
    (dict(workers=0), r"extrinsic column 'workers': value 0 in row 0 must be > 0"),
    (dict(workers=float("nan")), r"extrinsic column 'workers': missing or non-finite value nan in row 0"),
    (dict(workers="many"), r"extrinsic column 'workers': non-numeric value 'many' in row 0"),
    (dict(batch_size=-3), r"extrinsic column 'batch_size': value -3 in row 0 must be > 0"),
    (dict(batch_size=2.5), r"column 'batch_size': value 2.5 in row 0 is not a whole number >= 1"),
    (dict(kernel_size=0), r"numeric column 'kernel_size': value 0 in row 0 must be > 0"),
    (dict(kernel_size=2.5), r"resattnet3d: row 0: kernel_size: expected an integer >= 1, got 2.5"),
    (dict(num_filters=float("inf")), r"numeric column 'num_filters': missing or non-finite value inf in row 0"),
    (dict(padding="full"), r"resattnet3d: row 0: padding: expected one of \['valid', 'same'\], got 'full'"),
    (dict(padding=None), r"categorical column 'padding': missing value"),
])
def test_predict_checks_every_value_it_uses(ch5, change, match):
    X, _, m = ch5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IgnoredColumnWarning)
        with pytest.raises(ValueError, match=match):
            m.predict(X.head(3).assign(**change))


@pytest.mark.parametrize("drop", ["workers", "batch_size", "kernel_size", "padding", "num_filters"])
def test_predict_refuses_a_frame_without_one_of_its_columns(ch5, drop):
    X, _, m = ch5
    with pytest.raises(ValueError, match=rf"column '{drop}' not found"):
        m.predict(X.head(3).drop(columns=[drop]))


@pytest.mark.parametrize("extra", [dict(n_train=431), dict(stride=2), dict(volume="48x56x48"), dict(pool_size=1),
                                   dict(foo=7), dict(steps_per_epoch=-1, dataset="mnist")])
def test_columns_the_model_does_not_read_change_nothing_and_are_named(ch5, extra):
    """A column that is no column of the model gives the same prediction (it agrees with the model's constant, or
    is no input of the cost model) and an IgnoredColumnWarning naming it."""
    X, _, m = ch5
    base = m.predict(X.head(5))
    with pytest.warns(IgnoredColumnWarning, match=rf"ignores column\(s\) \[{list(extra)[0]!r}"):
        assert np.array_equal(m.predict(X.head(5).assign(**extra)), base)


def test_a_frame_of_the_model_columns_warns_about_nothing(ch5):
    X, _, m = ch5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pred = m.predict(X)
    assert np.all(np.isfinite(pred) & (pred > 0))


def test_workers_beyond_the_fitted_range_are_flagged(ch5):
    """workers is a column of the model, so the intervals' extrapolation guard sees it."""
    X, y, _ = ch5
    c = ConformalRegressor(HybridModel("resattnet3d", **CH5, fixed=FIXED), n_splits=3).fit(X, y)
    with pytest.warns(UserWarning, match=r"'workers': 1 above the fitted max 3"):
        iv = c.predict_interval(X.head(1).assign(workers=64), 0.9)
    assert bool(iv["extrapolated"].iloc[0])


# ------------------------------------------------------------------------ settings: roles, fixed, regimes
@pytest.mark.parametrize("kw, match", [
    (dict(fixed={**FIXED, "strid": 1}), r"fixed: 'strid' is not an input of the resattnet3d cost model .* did you "
                                        r"mean 'stride'\?"),
    (dict(fixed={**FIXED, "colour": "red"}), r"fixed: 'colour' is not an input of the resattnet3d cost model"),
    (dict(fixed={**FIXED, "kernel_size": 3}), r"fixed: 'kernel_size' is also a numeric column of the model"),
    (dict(fixed={**FIXED, "padding": "same"}), r"fixed: 'padding' is also a categorical column of the model"),
    (dict(fixed={**FIXED, "stride": float("nan")}), r"fixed\['stride'\]: expected a whole number >= 1, got nan"),
    (dict(fixed={**FIXED, "stride": 0}), r"fixed\['stride'\]: expected a whole number >= 1, got 0"),
    (dict(fixed={**FIXED, "stride": 1.5}), r"fixed\['stride'\]: expected a whole number >= 1, got 1.5"),
    (dict(fixed={**FIXED, "stride": True}), r"fixed\['stride'\]: expected a whole number >= 1, got True"),
    (dict(fixed={**FIXED, "stride": "2"}), r"fixed\['stride'\]: expected a whole number >= 1, got '2'"),
    (dict(fixed={**FIXED, "volume": ""}), r"fixed\['volume'\]: expected a non-empty string or three sizes"),
    (dict(fixed={**FIXED, "volume": [48, 56]}), r"fixed\['volume'\]: expected a non-empty string or three sizes"),
    (dict(fixed={**FIXED, "n_train": -5}), r"fixed\['n_train'\]: expected a whole number >= 1, got -5"),
    (dict(fixed={**FIXED, "n_train": 431}, n_train=None), r"fixed: 'n_train' is read only with n_train='auto'"),
    (dict(fixed=None), r"resattnet3d: the cost model needs column\(s\) \['stride', 'volume'\], which are neither"),
    (dict(fixed=FIXED, regimes=["stride=min"]), r"regimes: 'stride=min' names column 'stride', which is not a "
                                                r"column of the model"),
])
def test_bad_settings_are_one_error_naming_them(ch5, kw, match):
    X, y, _ = ch5
    with pytest.raises(ValueError, match=match):
        HybridModel("resattnet3d", **CH5, **kw).fit(X, y)


@pytest.mark.parametrize("change, fixed, match", [
    (dict(stride=2), {**FIXED, "stride": 1}, r"column 'stride' is 2 in row 0, but the model uses stride = 1"),
    (dict(volume="64x64x64"), FIXED, r"column 'volume' is '64x64x64' in row 0"),
    (dict(pool_size=1), {"stride": 2, "volume": "48x56x48"}, r"column 'pool_size' is an input of the resattnet3d "
                                                             r"cost model but neither a column of the model"),
    (dict(n_train=200), FIXED, r"column 'n_train' is 200 in row 0, but the model uses n_train = 431"),
])
def test_fit_refuses_data_that_contradict_the_constants(ch5, change, fixed, match):
    X, y, _ = ch5
    with pytest.raises(ValueError, match=match):
        HybridModel("resattnet3d", **CH5, fixed=fixed).fit(X.assign(**change), y)


def test_fit_accepts_data_columns_that_agree_with_the_constants(ch5):
    X, y, m = ch5
    again = HybridModel("resattnet3d", **CH5, fixed=FIXED).fit(X.assign(stride=2, volume="48x56x48", n_train=431), y)
    assert np.array_equal(again.rates_, m.rates_)


def test_a_network_without_a_dataset_size_needs_n_train(ch5):
    X, y, _ = ch5
    with pytest.raises(ValueError, match=r"n_train: the ch3_mlp network has no dataset size of its own"):
        HybridModel("ch3_mlp", **CH5).fit(X, y)
    m = HybridModel("ch3_mlp", **CH5, fixed={"n_train": 431}).fit(X, y)
    assert np.all(m.predict(X) > 0)


def test_n_train_as_a_column_of_the_model_is_read_and_checked(ch5):
    X, y, m = ch5
    roles = dict(CH5, numeric=CH5["numeric"] + ["n_train"])
    own = HybridModel("resattnet3d", **roles, fixed=FIXED).fit(X.assign(n_train=431), y)
    assert np.allclose(own.predict(X.assign(n_train=431)), m.predict(X), rtol=1e-9)
    assert own.predict(X.head(1).assign(n_train=862))[0] > own.predict(X.head(1).assign(n_train=431))[0]
    with pytest.raises(ValueError, match=r"column 'n_train': value 0.5 in row 0 is not a whole number >= 1"):
        own.predict(X.head(1).assign(n_train=0.5))


# ------------------------------------------------------------------------------ tampered model JSON
def _set(doc, path, value):
    d = json.loads(json.dumps(doc))
    t = d
    for k in path[:-1]:
        t = t[k]
    t[path[-1]] = value(t[path[-1]]) if callable(value) else value
    return d


@pytest.mark.parametrize("form, path, value, match", [
    ("hybrid", ("format",), ["perfkit.HybridModel"], r"format \['perfkit.HybridModel'\]"),
    ("thesis", ("format",), ["perfkit.GenericPerformanceModel"], r"format \["),
    ("loglinear", ("format",), {"a": 1}, r"format \{'a': 1\}"),
    ("hybrid", ("fitted", "rates"), lambda r: [0.0] * len(r), r"fitted.rates: every rate is 0"),
    ("hybrid", ("fitted", "rates", 0), float("nan"), r"fitted.rates: expected \d+ finite numbers >= 0"),
    ("hybrid", ("fitted", "rates", 0), -1e-9, r"fitted.rates: expected \d+ finite numbers >= 0"),
    ("hybrid", ("settings", "fixed"), {"stride": float("nan")}, r"settings: fixed: 'stride' is also a numeric"),
    ("hybrid", ("settings", "fixed"), {"strde": 1}, r"settings: fixed: 'strde' is not an input .* did you mean"),
    ("hybrid", ("settings", "fixed"), {"n_train": float("nan")}, r"settings: fixed\['n_train'\]: expected a whole "
                                                                 r"number >= 1, got nan"),
    ("hybrid", ("settings", "fixed"), {"n_train": 1e400}, r"settings: fixed\['n_train'\]"),
    ("hybrid", ("settings", "fixed"), "stride=2", r"settings: fixed: expected a dict"),
    ("hybrid", ("settings", "batch"), "x", r"settings: batch: 'x' is not a numeric or extrinsic column"),
    ("hybrid", ("settings", "workers"), ["workers"], r"settings: workers: expected a column name"),
    ("hybrid", ("settings", "n_train"), "lots", r"settings: n_train: expected 'auto', None or an integer"),
    ("hybrid", ("fitted", "terms", 0, 0), [1], r"fitted.terms: expected a list of \[cost, level\] pairs"),
    ("hybrid", ("fitted", "terms", 0, 0), {"a": 1}, r"fitted.terms: expected a list of \[cost, level\] pairs"),
    ("hybrid", ("fitted", "terms", -1, 1), "workers=1", r"fitted.terms: the step rate expects one term, level \"\""),
    ("hybrid", ("fitted", "terms", 1, 1), "", r"fitted.terms: the compute rate expects one level per combination"),
    ("hybrid", ("fitted", "regime_values", "batch_size=min"), None,
     r"fitted.regime_values\['batch_size=min'\]: expected a finite number, got None"),
    ("hybrid", ("fitted", "regime_values", "batch_size=min"), [8], r"fitted.regime_values\['batch_size=min'\]"),
    ("hybrid", ("fitted", "regime_values", "batch_size=min"), float("nan"), r"fitted.regime_values\['batch_size"),
    ("hybrid", ("fitted", "share", "step"), -0.5, r"fitted.share: expected cost -> number >= 0"),
    ("thesis", ("fitted", "coef", 0), -1.0, r"fitted.coef\[0\]: -1 is negative, but its bound a is \[0, 1000\]"),
    ("thesis", ("fitted", "coef", -1), -3.0, r"fitted.coef\[\d+\]: -3 is negative, but its bound C is"),
    ("thesis", ("fitted", "powers", 0), 7.5, r"fitted.powers\[0\]: 7.5 is outside its bound \[-5, 5\]"),
    ("thesis", ("fitted", "powers", -1), -6.0, r"fitted.powers\[5\]: -6 is outside its bound \[-5, 5\]"),
    ("loglinear", ("fitted", "log_columns"), lambda c: c[::-1], r"fitted.log_columns: expected the numeric/extrinsic "
                                                                r"columns that are not constant"),
    ("loglinear", ("fitted", "log_columns"), lambda c: c[:-1], r"fitted.log_columns"),
])
def test_a_tampered_model_json_is_one_error_naming_the_key(docs, form, path, value, match):
    doc = _set(docs[0][form], path, value)
    with pytest.raises(ValueError, match=match):
        load_model(json.dumps(doc))


@pytest.mark.parametrize("form", ["thesis", "loglinear", "hybrid"])
def test_an_untouched_model_json_loads_and_predicts_the_same(docs, form):
    doc, X = docs[0][form], docs[1]
    m = load_model(json.dumps(doc))
    again = load_model(json.dumps(m.to_doc()))
    p = m.predict(X)
    assert np.array_equal(again.predict(X), p) and np.all(np.isfinite(p)) and math.isfinite(float(p.sum()))


def test_parameters_on_their_bounds_are_named(tmp_path, capsys):
    """The same data in seconds and in microseconds, fitted in the data's units (``scale=None``, the thesis): in µs
    the default bounds [0, 1000] hold a and C down, and ``perfkit fit --scale none`` says which parameters sit on
    a bound; in seconds it says nothing. A unit-free fit (the default) is held by nothing in either unit."""
    from perfkit.cli import main
    from perfkit.model.selection.fitting import parameters_on_bounds
    from perfkit.model.forms.generic import GenericPerformanceModel

    rng = np.random.default_rng(0)
    n = 60
    X = pd.DataFrame({"x": rng.choice([1.0, 2.0, 4.0, 8.0], n), "g": rng.choice([1.0, 2.0, 4.0], n)})
    seconds = 0.01 * X["x"] ** 0.7 * X["g"] ** -0.5 + 0.001
    fit = dict(numeric=["x"], extrinsic=["g"], random_state=0, maxiter=20, scale=None)
    assert parameters_on_bounds(GenericPerformanceModel(**fit).fit(X, seconds)) == []
    free = dict(fit, scale="data")
    assert parameters_on_bounds(GenericPerformanceModel(**free).fit(X, seconds * 1e6)) == []
    assert parameters_on_bounds(GenericPerformanceModel(**fit).fit(X, seconds * 1e6)) == [
        "a[x] = 1000 (upper bound)", "C = 1000 (upper bound)"]
    X.assign(time=seconds * 1e6).to_csv(tmp_path / "us.csv", index=False)
    args = ["fit", str(tmp_path / "us.csv"), "--target", "time", "--numeric", "x", "--extrinsic", "g", "--seeds", "1",
            "--test-size", "10", "--out", str(tmp_path / "m.json")]
    assert main(args) == 0
    assert "upper bound" not in capsys.readouterr().err
    assert main(args + ["--scale", "none"]) == 0
    err = capsys.readouterr().err
    assert "a[x] = 1000 (upper bound); C = 1000 (upper bound)" in err and "in seconds" in err
