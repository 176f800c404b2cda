"""GenericPerformanceModel options: separate regularisation of the powers (``lam_powers``) and the
relative-error loss (``loss="relative"``); defaults unchanged, hand-computed objectives, JSON, validation."""
import json

import numpy as np
import pandas as pd
import pytest

from perfkit.model.forms.generic import GenericPerformanceModel

COLS = dict(numeric=["kernel", "filters"], categorical=["act"], extrinsic=["gpus", "batch"])


def _data(n=200, seed=0, noise=0.02):
    """Times spanning about 2.5 orders of magnitude (batch 8-512, 1-8 GPUs), multiplicative log-normal noise."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "kernel": rng.choice([2.0, 3.0, 4.0, 5.0], n),
        "filters": rng.choice([4.0, 8.0, 16.0, 32.0, 64.0], n),
        "act": rng.choice(["relu", "tanh", "sigmoid"], n),
        "gpus": rng.choice([1.0, 2.0, 4.0, 8.0], n),
        "batch": rng.choice([8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0], n),
    })
    k = X["act"].map({"relu": 1.0, "tanh": 2.0, "sigmoid": 3.0})
    t = (2.0 * X["kernel"] ** 1.5 + 0.5 * X["filters"] ** 0.8 + k) * X["gpus"] ** -0.9 * X["batch"] ** -1.0 + 0.01
    return X, t.to_numpy() * np.exp(noise * rng.standard_normal(n))


def _model(**kw):
    """The thesis's fit in the data's units (``scale=None``): λ and the objective below are in those units
    (tests/test_unit_free.py covers the unit-free default)."""
    kw.setdefault("maxiter", 30)
    kw.setdefault("scale", None)
    return GenericPerformanceModel(**COLS, random_state=0, **kw)


def _r(x, penalty):
    x = np.asarray(x, float)
    return np.abs(x).sum() if penalty == "l1" else (x**2).sum()


@pytest.fixture(scope="module")
def data():
    return _data()


@pytest.mark.parametrize("penalty", ["l1", "l2"])
def test_lam_powers_none_is_lam(data, penalty):
    X, y = data
    a = _model(penalty=penalty, lam=1e-2).fit(X, y)
    b = _model(penalty=penalty, lam=1e-2, lam_powers=1e-2).fit(X, y)
    assert a.objective_ == b.objective_
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.powers_, b.powers_)


def test_lam_powers_shrinks_the_powers_and_lam_alone_does_not(data):
    X, y = data
    powers_only = _model(penalty="l2", lam=0.0, lam_powers=1.0).fit(X, y)
    coef_only = _model(penalty="l2", lam=1.0, lam_powers=0.0).fit(X, y)
    free = _model().fit(X, y)
    assert np.max(np.abs(powers_only.powers_)) < 0.1  # pulled to 0
    q = dict(zip(coef_only.power_names_, coef_only.powers_))
    assert q["q[gpus]"] == pytest.approx(-0.9, abs=0.1) and q["q[batch]"] == pytest.approx(-1.0, abs=0.1)
    assert np.linalg.norm(coef_only.powers_) > 0.5 * np.linalg.norm(free.powers_)
    assert np.sum(coef_only.coef_[:-1] ** 2) < np.sum(free.coef_[:-1] ** 2)  # but the coefficients shrink


@pytest.mark.parametrize("penalty, lam, lam_powers", [("l1", 1e-3, 1e-2), ("l2", 1e-2, 1e-3)])
@pytest.mark.parametrize("loss", ["absolute", "relative"])
def test_objective_is_the_loss_plus_the_separate_penalties_by_hand(data, penalty, lam, lam_powers, loss):
    X, y = data
    m = _model(penalty=penalty, lam=lam, lam_powers=lam_powers, loss=loss).fit(X, y)
    err = np.abs(y - m.predict(X))
    fit_loss = np.mean(err / y) if loss == "relative" else np.mean(err)
    by_hand = fit_loss + lam * _r(m.coef_[:-1], penalty) + lam_powers * _r(m.powers_, penalty)
    assert m.objective_ == pytest.approx(by_hand, rel=1e-12)
    # the search saw the same cost (same rows; its linear part from a few reweighting steps, so a little above)
    assert 0.999 * m.objective_ <= m.history_[-1] <= 1.3 * m.objective_


def test_relative_objective_by_hand_without_penalty(data):
    X, y = data
    m = _model(loss="relative").fit(X, y)
    assert m.objective_ == pytest.approx(np.mean(np.abs(y - m.predict(X)) / y), rel=1e-12)
    absolute = _model().fit(X, y)
    rel_err = [np.mean(np.abs(y - f.predict(X)) / y) for f in (m, absolute)]
    assert rel_err[0] <= rel_err[1]  # each fit is best at its own loss
    assert np.mean(np.abs(y - absolute.predict(X))) <= np.mean(np.abs(y - m.predict(X)))


def test_thesis_engine_honours_both_options(data):
    X, y = data
    m = _model(method="thesis", maxiter=5, penalty="l1", lam=1e-3, lam_powers=1e-1, loss="relative").fit(X, y)
    by_hand = np.mean(np.abs(y - m.predict(X)) / y) + 1e-3 * _r(m.coef_[:-1], "l1") + 1e-1 * _r(m.powers_, "l1")
    assert m.objective_ == pytest.approx(by_hand, rel=1e-12)
    assert m.objective_ <= min(m.history_)  # scipy's polish after the last generation only lowers it


def test_thesis_engine_cost_is_the_options_objective(data, monkeypatch):
    """The scalar cost the thesis engine hands to differential evolution is the relative loss plus both penalties."""
    import scipy.optimize
    from scipy.optimize import OptimizeResult

    seen = {}

    def fake_de(func, bounds, **kw):
        seen["cost"], seen["bounds"] = func, bounds
        x = np.array([(lo + hi) / 2 for lo, hi in bounds])
        return OptimizeResult(x=x, nit=0, fun=func(x))

    monkeypatch.setattr(scipy.optimize, "differential_evolution", fake_de)
    X, y = data
    m = _model(method="thesis", penalty="l2", lam=1e-3, lam_powers=1e-1, loss="relative").fit(X, y)
    K = len(m.linear_names_)
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = np.array([rng.uniform(lo, hi) for lo, hi in seen["bounds"]])
        m.coef_, m.powers_ = x[:K], x[K:]
        by_hand = np.mean(np.abs(y - m.predict(X)) / y) + 1e-3 * _r(x[:K - 1], "l2") + 1e-1 * _r(x[K:], "l2")
        assert seen["cost"](x) == pytest.approx(by_hand, rel=1e-12)


def test_relative_loss_gives_lower_heldout_mape_on_multiplicative_noise():
    X, y = _data(n=600, seed=0, noise=0.3)
    fit, test = slice(0, 300), slice(300, 600)
    mape = {}
    for loss in ("absolute", "relative"):
        m = _model(loss=loss).fit(X.iloc[fit], y[fit])
        mape[loss] = np.mean(np.abs(y[test] - m.predict(X.iloc[test])) / y[test])
    assert mape["relative"] < mape["absolute"] - 0.01, mape


@pytest.fixture(scope="module")
def fitted_options(data):
    X, y = data
    return _model(penalty="l2", lam=1e-3, lam_powers=1e-2, loss="relative").fit(X, y), X


def test_json_round_trip_keeps_both_settings_and_predictions(fitted_options, tmp_path):
    m, X = fitted_options
    doc = json.loads(m.to_json())
    assert doc["version"] == 1 and doc["settings"]["lam_powers"] == 1e-2 and doc["settings"]["loss"] == "relative"
    back = GenericPerformanceModel.from_json(m.to_json(tmp_path / "m.json"))
    again = GenericPerformanceModel.from_json(tmp_path / "m.json")
    for b in (back, again):
        assert b.lam_powers == 1e-2 and b.loss == "relative" and b.get_params() == m.get_params()
        np.testing.assert_array_equal(b.predict(X), m.predict(X))
        assert b.objective_ == m.objective_


def test_json_without_the_new_keys_loads_with_the_defaults(data):
    X, y = data
    m = _model(maxiter=10).fit(X, y)
    doc = json.loads(m.to_json())
    del doc["settings"]["lam_powers"], doc["settings"]["loss"]  # as written before the options existed
    back = GenericPerformanceModel.from_json(json.dumps(doc))
    assert back.lam_powers is None and back.loss == "absolute" and back.get_params() == m.get_params()
    np.testing.assert_array_equal(back.predict(X), m.predict(X))


@pytest.mark.parametrize("key, value, match", [
    ("lam_powers", -1, r"settings: lam_powers: expected a finite number >= 0"),
    ("lam_powers", "x", r"settings: lam_powers"),
    ("loss", "log2", r"settings: loss: expected one of"),
])
def test_json_with_a_bad_value_names_it(fitted_options, key, value, match):
    doc = json.loads(fitted_options[0].to_json())
    doc["settings"][key] = value
    with pytest.raises(ValueError, match=match):
        GenericPerformanceModel.from_json(json.dumps(doc))


@pytest.mark.parametrize("kw, match", [
    (dict(penalty="l2", lam_powers=float("nan")), r"^lam_powers: expected a finite number >= 0"),
    (dict(penalty="l2", lam_powers=float("inf")), r"^lam_powers: expected a finite number >= 0"),
    (dict(penalty="l2", lam_powers=True), r"^lam_powers: expected a finite number >= 0"),
    (dict(penalty="l2", lam_powers="0.1"), r"^lam_powers: expected a finite number >= 0"),
    (dict(lam_powers=0.1), r"^lam_powers > 0 needs penalty='l1' or 'l2'$"),
    (dict(loss=None), r"^loss: expected one of"),
])
def test_bad_values_raise_naming_the_parameter(data, kw, match):
    X, y = data
    with pytest.raises(ValueError, match=match):
        _model(**kw).fit(X, y)


def test_zero_lam_powers_without_penalty_is_the_default(data):
    X, y = data
    a = _model(maxiter=10).fit(X, y)
    b = _model(maxiter=10, lam_powers=0.0).fit(X, y)
    assert a.objective_ == b.objective_
    np.testing.assert_array_equal(a.powers_, b.powers_)
