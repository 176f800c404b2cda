"""Intervals for extrapolation: the conformal quantile, the split rule by factor, transfer calibration (a group's
interval never uses its own rows beyond the fitted range) and ScaleIntervalModel's inflation."""
import json
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin

from perfkit.model.uncertainty.extrapolation import (calibrate_extrapolation, calibrate_transfer, conformal_quantile,
                                         extrapolation_interval, factor_splits, inflation_ratios, transfer_inflation)
from perfkit.model.uncertainty.conformal import ExtrapolationWarning
from perfkit.model.persist import load_model
from perfkit.model.uncertainty.scale_intervals import ScaleIntervalModel
from perfkit.model.forms.stepmodels import PhaseAwareStepModel

E = math.e


class MeanModel(RegressorMixin, BaseEstimator):
    """Predicts the mean target of its fit rows: every score below is computable by hand."""

    def fit(self, X, y):
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


# each group: y at x = 1, 2 (fit rows at fit_max 2) and x = 4, 8 (scored); the inner split fits x <= 1, scores x = 2
Y = {"a": [1.0, E, 2.0, 6.0], "b": [1.0, E ** 0.5, 3.0, 1.0], "c": [2.0, 2.0 * E ** 0.25, 1.0, 9.0]}
SPLITS = [(1, 2, 2)]


def _frame(ys=Y):
    rows = [dict(g=g, x=x, y=v) for g, vals in ys.items() for x, v in zip([1, 2, 4, 8], vals)]
    return pd.DataFrame(rows)


def _by_hand(ys, alpha):
    """q_inner, ratios and κ per group from the definitions, written out."""
    q_inner = {g: abs(math.log(v[1] / v[0])) / 2.0 for g, v in ys.items()}  # inner: fit x=1, score x=2 (d = 2)
    ratios = {}
    for g, v in ys.items():
        m = (v[0] + v[1]) / 2  # fitted on x <= 2
        ratios[g] = [abs(math.log(v[2] / m)) / 2.0 / q_inner[g], abs(math.log(v[3] / m)) / 3.0 / q_inner[g]]
    kappa = {}
    for g in ys:
        other = sorted(r for h, rs in ratios.items() if h != g for r in rs)
        rank = math.ceil((len(other) + 1) * (1 - alpha))
        kappa[g] = other[min(rank, len(other)) - 1]
    return q_inner, ratios, kappa


# ------------------------------------------------------------------------------ conformal quantile
def test_conformal_quantile_hand_checked():
    s = [0.5, 0.1, 0.4, 0.2, 0.3]
    assert conformal_quantile(s, 0.5) == 0.3  # rank ceil(6 * 0.5) = 3
    assert conformal_quantile(s, 0.2) == 0.5  # rank ceil(6 * 0.8) = 5
    assert conformal_quantile(s, 0.1) == math.inf  # rank 6 > 5
    assert conformal_quantile(s, 0.1, cap=True) == 0.5
    assert conformal_quantile(list(range(1, 10)), 0.1) == 9  # rank ceil(10 * 0.9) = 9, not 10 by rounding
    for bad in ([], [np.nan], [[1.0]]):
        with pytest.raises(ValueError, match="scores"):
            conformal_quantile(bad, 0.1)
    with pytest.raises(ValueError, match="alpha"):
        conformal_quantile(s, 1.0)


# ------------------------------------------------------------------------------ the split rule
def test_factor_splits_reproduce_pollux_and_scale_down():
    pollux = [*range(1, 17), 20, 24, 28, 32, 40, 48, 56, 64]
    assert factor_splits(pollux) == {"fit_max": 16.0, "test_min": 32.0, "test_max": 64.0,
                                     "inner": [(4.0, 8.0, 16.0), (6.0, 10.0, 16.0), (8.0, 12.0, 16.0)]}
    small = [*range(1, 17), 18, 20, 22, 24]  # 8 GPUs per node, 3 nodes at most
    # fit <= 6 (largest <= 24 / 4), test 12-24; the inner split at 6 / 4 = 1.5 fits on one value only: dropped
    assert factor_splits(small) == {"fit_max": 6.0, "test_min": 12.0, "test_max": 24.0,
                                    "inner": [(2.0, 4.0, 6.0), (3.0, 5.0, 6.0)]}
    assert factor_splits(np.repeat([1, 2, 4, 8, 16, 32, 64], 3))["inner"] == [(4.0, 8.0, 16.0), (8.0, 16.0, 16.0)]
    with pytest.raises(ValueError, match="quarter"):
        factor_splits([5, 6, 8])
    with pytest.raises(ValueError, match="finite"):
        factor_splits([1, 0, 8])


# ------------------------------------------------------------------------------ transfer calibration
@pytest.mark.parametrize("alpha", [0.1, 0.5])
def test_transfer_calibration_hand_checked(alpha):
    q_inner, ratios, kappa = _by_hand(Y, alpha)
    table, q = inflation_ratios(MeanModel(), _frame(), "x", 2, "y", SPLITS, "g", test_min=4, alpha=alpha)
    assert q == pytest.approx(q_inner)
    for g in Y:
        assert table[table.g == g].sort_values("x")["ratio"].tolist() == pytest.approx(ratios[g])
    cal = calibrate_transfer(MeanModel(), _frame(), "x", 2, "y", SPLITS, "g", test_min=4, alpha=alpha)
    assert list(cal.columns) == ["q_inner", "kappa", "q", "n_reference"] and list(cal.index) == ["a", "b", "c"]
    for g in Y:
        assert cal.loc[g, "kappa"] == pytest.approx(kappa[g])
        assert cal.loc[g, "q"] == pytest.approx(kappa[g] * q_inner[g])
        assert cal.loc[g, "n_reference"] == 4
        assert transfer_inflation(table, alpha, groups="g", exclude=g) == pytest.approx(kappa[g])
    # with no group left out, κ pools every group's rows
    assert transfer_inflation(table, 0.5, groups="g") == pytest.approx(sorted(r for rs in ratios.values()
                                                                              for r in rs)[3])


def test_a_groups_interval_never_uses_its_own_scored_rows():
    """Changing group a's rows beyond the fitted range leaves a's q as it was; the other groups' q move."""
    before = calibrate_transfer(MeanModel(), _frame(), "x", 2, "y", SPLITS, "g", test_min=4, alpha=0.5)
    changed = dict(Y, a=[1.0, E, 50.0, 0.01])
    after = calibrate_transfer(MeanModel(), _frame(changed), "x", 2, "y", SPLITS, "g", test_min=4, alpha=0.5)
    assert after.loc["a", "q"] == before.loc["a", "q"]
    assert after.loc["b", "q"] != before.loc["b", "q"] and after.loc["c", "q"] != before.loc["c", "q"]
    # the inner q of a group depends on its fit rows only: the same as calibrate_extrapolation's
    inner = calibrate_extrapolation(MeanModel(), _frame()[lambda d: d.x <= 2], "x", "y", SPLITS, "g", alpha=0.5)
    assert before["q_inner"].to_dict() == pytest.approx(inner)


def test_transfer_calibration_refusals():
    with pytest.raises(ValueError, match="needs groups"):
        calibrate_transfer(MeanModel(), _frame(), "x", 2, "y", SPLITS, None, test_min=4)
    one = _frame()[lambda d: d.g == "a"]
    with pytest.raises(ValueError, match="at least two"):
        calibrate_transfer(MeanModel(), one, "x", 2, "y", SPLITS, "g", test_min=4)
    flat = dict(Y, b=[1.0, 1.0, 3.0, 1.0])  # b's inner split is exact: q_inner 0, no ratio
    with pytest.raises(ValueError, match=r"inner q is 0 for \['b'\]"):
        inflation_ratios(MeanModel(), _frame(flat), "x", 2, "y", SPLITS, "g", test_min=4)
    table, _ = inflation_ratios(MeanModel(), _frame(), "x", 2, "y", SPLITS, "g", test_min=4)
    with pytest.raises(ValueError, match="no reference rows"):
        transfer_inflation(table[table.g == "a"], groups="g", exclude="a")


def test_interval_widens_with_the_distance_and_q():
    lo, hi = extrapolation_interval([1.0, 1.0], [2.0, 8.0], 2.0, [0.1, 0.2])
    assert hi == pytest.approx([math.exp(0.1), math.exp(0.6)]) and lo == pytest.approx([math.exp(-0.1), math.exp(-0.6)])


# ------------------------------------------------------------------------------ ScaleIntervalModel's inflation
def _step_data():
    rows = [(k, n, b) for k, n in [(1, 1), (2, 1), (4, 1), (2, 2), (4, 2), (8, 2), (8, 4), (16, 4)] for b in (8, 16, 32)]
    X = pd.DataFrame(rows, columns=["n_gpus", "n_nodes", "batch_per_gpu"])
    rng = np.random.default_rng(0)
    tg = 0.02 + 0.004 * X.batch_per_gpu
    ts = np.where(X.n_gpus > 1, 0.01 + 0.03 * np.log(X.n_gpus) * (X.n_nodes > 1), 0.0)
    y = (tg + ts) * np.exp(0.03 * rng.standard_normal(len(X)))
    return X.assign(sync_time=np.maximum(y - tg, 0.0)), y.to_numpy()


def test_inflation_multiplies_the_half_width_and_is_saved():
    X, y = _step_data()
    keep = X.n_gpus <= 8
    kw = dict(column="n_gpus", fit_max=8, splits=[(2, 4, 8)], phases=["sync_time"])
    plain = ScaleIntervalModel(PhaseAwareStepModel(), **kw).fit(X[keep], y[keep])
    wide = ScaleIntervalModel(PhaseAwareStepModel(), **kw, inflation=2.5).fit(X[keep], y[keep])
    assert wide.half_width(0.5) == pytest.approx(2.5 * plain.half_width(0.5))
    new = X.drop(columns="sync_time")
    with pytest.warns(ExtrapolationWarning, match="3 of 24 rows"):  # the 16-GPU rows lie beyond fit_max
        a, b = plain.predict_interval(new, 0.5), wide.predict_interval(new, 0.5)
    assert np.allclose(np.log(b.upper / b.predicted), 2.5 * np.log(a.upper / a.predicted))
    assert "κ = 2.5" in wide.summary() and "κ" not in plain.summary()
    back = load_model(wide.to_json())
    assert back.inflation == 2.5 and back.half_width(0.5) == wide.half_width(0.5)
    doc = json.loads(plain.to_json())
    assert doc["settings"]["inflation"] == 1.0
    del doc["settings"]["inflation"]  # a file written before the setting existed
    assert load_model(json.dumps(doc)).half_width(0.5) == plain.half_width(0.5)
    for bad in (0, -1.0, float("nan"), "2", True):
        with pytest.raises(ValueError, match="inflation"):
            ScaleIntervalModel(PhaseAwareStepModel(), **kw, inflation=bad).fit(X[keep], y[keep])
    doc["settings"]["inflation"] = 0
    with pytest.raises(ValueError, match="settings: inflation"):
        load_model(json.dumps(doc))


def test_every_extrapolated_column_widens_the_interval():
    """A batch per GPU 4x beyond its fitted range adds log2(4) = 2 to the distance, as 4x the GPUs would."""
    X, y = _step_data()
    keep = X.n_gpus <= 8
    model = ScaleIntervalModel(PhaseAwareStepModel(), column="n_gpus", fit_max=8, splits=[(2, 4, 8)],
                               phases=["sync_time"]).fit(X[keep], y[keep])
    base = pd.DataFrame({"n_gpus": [4, 4, 4, 32], "n_nodes": [2, 2, 2, 4], "batch_per_gpu": [16, 128, 2, 16]})
    with pytest.warns(ExtrapolationWarning, match=r"'batch_per_gpu': 1 below the fitted min 8, 1 above the fitted max 32"):
        iv = model.predict_interval(base, 0.9)
    assert iv["distance"].tolist() == pytest.approx([1.0, 3.0, 3.0, 3.0])
    q = model.half_width(0.9)
    np.testing.assert_allclose(np.log(iv.upper / iv.predicted), q * iv["distance"])
    assert iv["extrapolated"].tolist() == [False, True, True, True]


def test_the_disagreement_with_a_second_form_widens_each_row_and_is_saved():
    """Half-width κ·q·d + λ·δ, δ = |log(ŷ/ŷ_alt)| per row (hand-checked from the two forms' predictions); the
    alternative and λ are saved; λ = 0 reports δ without using it; a bad λ or alternative is one clear error."""
    from perfkit.model.forms.stepmodels import PolluxStepModel

    X, y = _step_data()
    keep = X.n_gpus <= 8
    kw = dict(column="n_gpus", fit_max=8, splits=[(2, 4, 8)], phases=["sync_time"], inflation=0.7)
    model = ScaleIntervalModel(PhaseAwareStepModel(), **kw, alternative=PolluxStepModel(), disagreement=2.0).fit(
        X[keep], y[keep])
    big = X[~keep].drop(columns=["sync_time"])
    iv = model.predict_interval(big, 0.9)
    alt = PolluxStepModel().fit(X[keep].drop(columns=["sync_time"]), y[keep]).predict(big)
    delta = np.abs(np.log(iv.predicted.to_numpy() / alt))
    assert np.allclose(iv.disagreement, delta) and delta.max() > 0
    w = model.half_width(0.9) * iv.distance + 2.0 * delta
    assert np.allclose(np.log(iv.upper / iv.predicted), w) and np.allclose(np.log(iv.predicted / iv.lower), w)
    text = model.summary()
    assert "intervals: ŷ·exp(±(q·d + λ·δ))" in text and "λ = 2, δ the disagreement of two plausible forms: |log(ŷ/ŷ_alt)|" in text
    assert "PolluxStepModel fitted on the same rows" in text
    back = load_model(model.to_json())
    assert back.disagreement == 2.0 and back.predict_interval(big, 0.9).equals(iv)
    plain = ScaleIntervalModel(PhaseAwareStepModel(), **kw, alternative=PolluxStepModel()).fit(X[keep], y[keep])
    piv = plain.predict_interval(big, 0.9)
    assert np.allclose(piv.disagreement, delta)
    assert np.allclose(np.log(piv.upper / piv.predicted), plain.half_width(0.9) * piv.distance)
    old = json.loads(model.to_json())  # a file written before the setting existed: no disagreement, no column
    del old["settings"]["disagreement"], old["fitted"]["alternative"]
    assert "disagreement" not in load_model(json.dumps(old)).predict_interval(big, 0.9).columns
    for bad in (-1.0, float("nan"), "2", True, 1e3):
        with pytest.raises(ValueError, match="disagreement"):
            ScaleIntervalModel(PhaseAwareStepModel(), **kw, disagreement=bad).fit(X[keep], y[keep])
    with pytest.raises(ValueError, match="alternative: expected a perfkit model form"):
        ScaleIntervalModel(PhaseAwareStepModel(), **kw, alternative="pollux").fit(X[keep], y[keep])



def test_a_blend_gives_its_members_spread_as_the_disagreement():
    from perfkit.model.forms.median import BlendOfModels
    from perfkit.model.forms.stepmodels import PolluxStepModel

    X, y = _step_data()
    keep = X.n_gpus <= 8
    blend = BlendOfModels([("phases", PhaseAwareStepModel()), ("pollux", PolluxStepModel())], [0.3, 0.7])
    model = ScaleIntervalModel(blend, column="n_gpus", fit_max=8, splits=[(2, 4, 8)], phases=["sync_time"],
                               disagreement=3.0).fit(X[keep], y[keep])
    big = X[~keep].drop(columns=["sync_time"])
    iv = model.predict_interval(big, 0.9)
    a, b = (est.predict(big) for _, est in model.estimator_.estimators_)
    assert np.allclose(iv.predicted, a ** 0.3 * b ** 0.7)
    assert np.allclose(iv.disagreement, np.abs(np.log(a / b)))
    assert np.allclose(np.log(iv.upper / iv.predicted), model.half_width(0.9) * iv.distance + 3.0 * iv.disagreement)
    assert "the spread of the blended forms' log predictions" in model.summary()
    assert load_model(model.to_json()).predict_interval(big, 0.9).equals(iv)
    with pytest.raises(ValueError, match="weights: expected one weight in \\[0, 1\\] per member"):
        BlendOfModels([("phases", PhaseAwareStepModel()), ("pollux", PolluxStepModel())], [0.5, 0.6]).fit(X, y)
