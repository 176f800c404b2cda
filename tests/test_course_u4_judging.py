"""Unit 4's computations: the two scores and the split-conformal half-width it takes from the library, against
scikit-learn and perfkit's ConformalRegressor; the error scaling of the disagreement widget and the paired margin."""
import math

import numpy as np
import pytest

from perfkit.course import u4_judging as u4
from perfkit.model.selection.metrics import mape, r2
from perfkit.model.uncertainty.extrapolation import conformal_quantile


def test_scores_match_sklearn():
    from sklearn.metrics import mean_absolute_percentage_error, r2_score

    rng = np.random.default_rng(0)
    y = np.exp(rng.normal(-4, 1, 50))
    p = y * np.exp(rng.normal(0, 0.3, 50))
    assert mape(y, p) == pytest.approx(100 * mean_absolute_percentage_error(y, p))
    assert r2(y, p) == pytest.approx(r2_score(y, p))


def test_halfwidth_rank_and_unbounded():
    s = np.arange(1.0, 20.0)  # 19 scores: rank ⌈20 · 0.9⌉ = 18
    assert conformal_quantile(s, 0.1) == 18.0
    assert conformal_quantile(np.arange(1.0, 6.0), 0.1) == math.inf


def test_intervals_match_conformal_regressor():
    split = u4.load_split(n_rows=300)
    setup = u4.conformal_setup(split)
    iv = setup["model"].predict_interval(split["X_test"], coverage=0.9)
    lo, hi = u4.intervals_at(setup, 0.9)
    assert np.allclose(lo, iv["lower"]) and np.allclose(hi, iv["upper"])


def test_scaling_slow_errors_moves_r2_more_than_mape():
    rng = np.random.default_rng(1)
    y = np.exp(rng.normal(-4, 1, 200))
    p = y * np.exp(rng.normal(0, 0.2, 200))
    q, slow = u4.scale_slow_errors(y, p, factor=4.0, share=0.05)
    assert slow.sum() == 10 and np.all(q > 0) and np.array_equal(q[~slow], p[~slow])
    assert r2(y, p) - r2(y, q) > 5 * (mape(y, q) - mape(y, p)) / 100


def test_paired_interval_narrower_for_correlated_models():
    rng = np.random.default_rng(2)
    y = np.exp(rng.normal(-4, 1, 300))
    a = y * np.exp(rng.normal(0, 0.3, 300))
    b = a * np.exp(rng.normal(0, 0.02, 300))  # errs on the same rows as a
    r = u4.paired_margin(y, a, b, b=500)
    width = lambda ci: ci[1] - ci[0]  # noqa: E731
    assert width(r["paired_ci"]) < width(r["unpaired_ci"]) / 3
