"""Unit-free fitting of eq. 4.4 (``scale="data"``): the same data in any time unit, or with a column in other
units, gives the same fit, and the scales survive a JSON round trip."""
import json

import numpy as np
import pandas as pd
import pytest

from perfkit.data.measured import load_steps, thesis_split
from perfkit.model import GenericPerformanceModel
from perfkit.model.selection.fitting import parameters_on_bounds
from perfkit.model.persist import load_model
from perfkit.schema import ROLES, resolve

UNITS = {"s": 1.0, "ms": 1e3, "µs": 1e6, "×1e4": 1e4}


@pytest.fixture(scope="module")
def split():
    X, y, _ = load_steps(resolve("data/measured/pytorch-cpu/ch4_lenet5.csv"))
    return thesis_split(X.iloc[:240], y.iloc[:240], n_fit=160, n_test=80, seed=0)


def _mape(pred, y):
    return float(np.mean(np.abs(pred - y) / y) * 100)


@pytest.mark.parametrize("settings", [dict(), dict(penalty="l1", lam=1e-2), dict(penalty="l2", lam=1e-3),
                                      dict(loss="relative"), dict(method="thesis", maxiter=15)],
                         ids=["plain", "l1", "l2", "relative", "thesis-engine"])
def test_four_time_units_give_the_same_fit(split, settings):
    X_fit, X_test, y_fit, y_test = split
    kw = {**ROLES["ch4"], "random_state": 0, "maxiter": 40, **settings}
    fits = {u: GenericPerformanceModel(**kw).fit(X_fit, y_fit * k) for u, k in UNITS.items()}
    ref = fits["s"].predict(X_test)
    for unit, k in UNITS.items():
        pred = fits[unit].predict(X_test) / k
        np.testing.assert_allclose(pred, ref, rtol=1e-6, err_msg=unit)
        np.testing.assert_allclose(fits[unit].powers_, fits["s"].powers_, rtol=1e-6, atol=1e-9, err_msg=unit)
        assert _mape(pred, y_test) == pytest.approx(_mape(ref, y_test), rel=1e-6)
        assert parameters_on_bounds(fits[unit]) == parameters_on_bounds(fits["s"])


def test_a_column_in_other_units_gives_the_same_predictions(split):
    X_fit, X_test, y_fit, _ = split
    kw = dict(ROLES["ch4"], random_state=0, maxiter=40)
    ref = GenericPerformanceModel(**kw).fit(X_fit, y_fit)
    other = {"learning_rate": 1e3, "batch_size": 8.0}  # learning rate in 1e-3 units, batch in bytes of 8
    m = GenericPerformanceModel(**kw).fit(X_fit.assign(**{c: X_fit[c] * k for c, k in other.items()}), y_fit)
    pred = m.predict(X_test.assign(**{c: X_test[c] * k for c, k in other.items()}))
    np.testing.assert_allclose(pred, ref.predict(X_test), rtol=1e-6)
    np.testing.assert_allclose(m.powers_, ref.powers_, rtol=1e-6, atol=1e-9)


def test_the_thesis_units_depend_on_the_unit_and_say_so(split):
    """``scale=None`` (the chapters' thesis fit): in µs the bounds of a and C hold the fit, which is worse."""
    X_fit, X_test, y_fit, y_test = split
    kw = dict(ROLES["ch4"], random_state=0, maxiter=40, scale=None)
    s = GenericPerformanceModel(**kw).fit(X_fit, y_fit)
    us = GenericPerformanceModel(**kw).fit(X_fit, y_fit * 1e6)
    assert s.scales_ is None and any("upper bound" in b for b in parameters_on_bounds(us))
    assert _mape(us.predict(X_test) / 1e6, y_test) > _mape(s.predict(X_test), y_test) + 1


def test_scales_round_trip_and_report(split):
    X_fit, X_test, y_fit, _ = split
    m = GenericPerformanceModel(**ROLES["ch4"], random_state=0, maxiter=20).fit(X_fit, y_fit * 1e6)
    assert m.scales_["target"] == pytest.approx(float(np.median(y_fit * 1e6)))
    assert set(m.scales_["columns"]) == {*ROLES["ch4"]["numeric"], *ROLES["ch4"]["extrinsic"]}
    again = load_model(m.to_json())
    assert again.scales_ == m.scales_ and again.scale == "data"
    np.testing.assert_array_equal(again.predict(X_test), m.predict(X_test))
    assert "unit-free" in m.summary()


def _doc(split, **settings):
    X_fit, _, y_fit, _ = split
    m = GenericPerformanceModel(**ROLES["ch4"], random_state=0, maxiter=5, **settings).fit(X_fit, y_fit)
    return json.loads(m.to_json())


def test_a_file_without_scales_is_a_fit_in_the_data_units(split):
    """Files written before unit-free fitting have no ``scale`` setting and no ``scales``: read as scale=None."""
    doc = _doc(split, scale=None)
    del doc["settings"]["scale"], doc["fitted"]["scales"]
    m = load_model(json.dumps(doc))
    assert m.scale is None and m.scales_ is None


@pytest.mark.parametrize("scales, culprit", [
    ({"target": -1.0, "columns": "same"}, "fitted.scales.target"),
    ({"target": float("nan"), "columns": "same"}, "fitted.scales.target"),
    ({"target": 1.0, "columns": {}}, "fitted.scales.columns"),
    ({"target": 1.0}, "fitted.scales"),
    ("lots", "fitted.scales"),
    ({"target": True, "columns": "same"}, "fitted.scales.target"),
    ({"target": 1.0, "columns": "zero"}, "fitted.scales.columns["),
])
def test_tampered_scales_are_refused(split, scales, culprit):
    doc = _doc(split)
    if isinstance(scales, dict) and scales.get("columns") == "same":
        scales = dict(scales, columns=doc["fitted"]["scales"]["columns"])
    if isinstance(scales, dict) and scales.get("columns") == "zero":
        scales = dict(scales, columns={c: 0.0 for c in doc["fitted"]["scales"]["columns"]})
    doc["fitted"]["scales"] = scales
    with pytest.raises(ValueError) as err:
        load_model(json.dumps(doc))
    assert culprit in str(err.value)


def test_scales_with_a_fit_in_data_units_are_refused(split):
    doc = _doc(split)
    doc["settings"]["scale"] = None
    with pytest.raises(ValueError, match="settings.scale is null"):
        load_model(json.dumps(doc))


@pytest.mark.parametrize("bad", ["seconds", 1.0, "Data", True])
def test_a_bad_scale_setting_is_named(bad):
    with pytest.raises(ValueError, match="scale: expected"):
        GenericPerformanceModel(numeric=["x"], scale=bad).check_settings()


def test_cli_fits_microseconds_as_seconds(tmp_path, capsys):
    from perfkit.cli import main

    rng = np.random.default_rng(1)
    n = 90
    X = pd.DataFrame({"x": rng.choice([1.0, 2.0, 4.0, 8.0], n), "g": rng.choice([1.0, 2.0, 4.0], n)})
    seconds = 0.02 * X["x"] ** 0.7 * X["g"] ** -0.5 + 0.001 + rng.normal(0, 1e-4, n)
    outputs = {}
    for unit, k in (("s", 1.0), ("us", 1e6)):
        X.assign(time=seconds * k).to_csv(tmp_path / f"{unit}.csv", index=False)
        assert main(["fit", str(tmp_path / f"{unit}.csv"), "--target", "time", "--numeric", "x", "--extrinsic", "g",
                     "--seeds", "2", "--test-size", "30", "--out", str(tmp_path / f"{unit}.json")]) == 0
        out = capsys.readouterr()
        assert "upper bound" not in out.err
        outputs[unit] = load_model((tmp_path / f"{unit}.json").read_text()).predict(X) / k
    np.testing.assert_allclose(outputs["us"], outputs["s"], rtol=1e-6)


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


def test_a_power_stuck_on_its_lower_bound_is_named():
    """A power at -5 (the lower bound of p and q) is named like one at +5; a coefficient at 0 (a term switched
    off) is not."""
    from perfkit.model.forms.generic import GenericPerformanceModel
    from perfkit.model.selection.fitting import parameters_on_bounds

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.choice([1.0, 2.0, 4.0, 8.0], 60), "g": rng.choice([1.0, 2.0, 4.0], 60)})
    y = 0.01 * X["x"] ** 0.7 * X["g"] ** -0.5 + 0.001
    model = GenericPerformanceModel(numeric=["x"], extrinsic=["g"], random_state=0, maxiter=20).fit(X, y)
    assert parameters_on_bounds(model) == []
    q = model.power_names_.index("q[g]")
    model.powers_ = np.where(np.arange(len(model.powers_)) == q, -5.0, model.powers_)
    assert parameters_on_bounds(model) == ["q[g] = -5 (lower bound)"]
