"""Repeated fits, λ sweeps and cross-validated λ."""
import numpy as np
import pytest

from perfkit.model.selection.fitting import choose_lambda_cv, fit_repeated, regularisation_sweep
from tests.frames import generic_data as _data
from tests.test_generic import _model


def test_fit_repeated_summary_layout_and_determinism():
    X, y = _data(n=120)
    rep = fit_repeated(_model(maxiter=15), X, y, seeds=3, progress=False)
    assert rep.seeds == [0, 1, 2] and len(rep.models) == 3
    s = rep.summary()
    assert {"a_mean", "a_std", "p_mean", "p_std", "q_mean", "q_std", "C_mean", "C_std"} <= set(s.columns)
    assert list(s["term"])[-1] == "C"
    # q is found consistently across seeds on clean data
    assert s.loc[s.term == "gpus", "q_std"].iloc[0] < 0.05
    again = fit_repeated(_model(maxiter=15), X, y, seeds=[0, 1, 2], n_jobs=2, backend="threading", progress=False)
    np.testing.assert_array_equal(rep.params.drop(columns="fit_time"), again.params.drop(columns="fit_time"))
    # worker processes (joblib's default backend, as the chapter notebooks' n_jobs=-1) give the same fits
    procs = fit_repeated(_model(maxiter=15), X, y, seeds=[0, 1, 2], n_jobs=2, progress=False)
    np.testing.assert_array_equal(rep.params.drop(columns="fit_time"), procs.params.drop(columns="fit_time"))
    assert rep.best.objective_ == rep.params["objective"].min()
    with pytest.raises(ValueError, match="seeds"):
        fit_repeated(_model(), X, y, seeds=[])


def test_regularisation_sweep_tidy_and_r2_falls_with_large_lambda():
    X, y = _data(n=160)
    sw = regularisation_sweep(_model(maxiter=20), X[:120], y[:120], X[120:], y[120:], lams=[1e-5, 10.0],
                              progress=False)
    assert list(sw.columns) == ["penalty", "lam", "seed", "quantity", "kind", "value"]
    assert set(sw["kind"]) == {"metric", "a", "k", "p", "q", "C"}
    r2 = sw[sw.quantity == "r2_test"].set_index(["penalty", "lam"])["value"]
    for pen in ("l1", "l2"):
        assert r2[(pen, 1e-5)] > r2[(pen, 10.0)]
    with pytest.raises(ValueError, match="penalties"):
        regularisation_sweep(_model(), X, y, X, y, penalties=("l3",))
    with pytest.raises(ValueError, match="lams"):
        regularisation_sweep(_model(), X, y, X, y, lams=[-1.0])


def test_choose_lambda_cv_prefers_small_lambda():
    X, y = _data(n=120)
    best, res = choose_lambda_cv(_model(maxiter=15), X, y, lams=[1e-5, 10.0], cv=3)
    assert best == 1e-5
    assert list(res.columns) == ["lam", "mean_score", "std_score"] and len(res) == 2


def test_summary_writes_spreads_below_the_refinements_resolution_as_zero():
    import pandas as pd

    from perfkit.model.selection.fitting import RepeatedFit

    class Fit:
        def __init__(self, a, p):
            self.params_ = pd.DataFrame([dict(term="x", kind="numeric", column="x", level="", a=a, p=p,
                                              q=np.nan, C=np.nan)])

    same = RepeatedFit([Fit(100.0, 1.4), Fit(100.0 + 2e-5, 1.4 + 1e-6)], [0, 1]).summary()
    assert same.loc[0, "a_std"] == 0.0 and same.loc[0, "p_std"] == 0.0
    assert same.loc[0, "a_mean"] == pytest.approx(100.00001)
    apart = RepeatedFit([Fit(100.0, 1.4), Fit(101.0, 1.5)], [0, 1]).summary()
    assert apart.loc[0, "a_std"] == pytest.approx(np.sqrt(0.5)) and apart.loc[0, "p_std"] == pytest.approx(
        0.1 / np.sqrt(2))
    assert np.isnan(same.loc[0, "q_std"])  # a term without q has no spread, not a zero one


def test_ledger_and_summary_share_one_resolution_rule():
    from perfkit.chapters.ch4 import seed_std as _seed_std
    from perfkit.model.selection.fitting import resolved_std, spread_resolution

    assert spread_resolution(0.2) == spread_resolution(-1.0) == pytest.approx(1e-4)
    assert spread_resolution(-300.0) == pytest.approx(3e-2)
    assert resolved_std([5e-5, 2e-4, np.nan], [0.5, 0.5, 0.5]).tolist()[:2] == [0.0, 2e-4]
    v = np.array([1.0, 1.0 + 1e-5, 1.0 - 1e-5])
    assert _seed_std(v) == 0.0  # seeds in one optimum: the spread is the refinement's tolerance
    assert _seed_std(v * [1, 1.1, 0.9]) == pytest.approx(np.std(v * [1, 1.1, 0.9], ddof=1))
