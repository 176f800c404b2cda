"""Unit 1's computations: the moving-block bootstrap widens the interval of a correlated series and not of an
independent one, is deterministic for a seed and names a bad block; the autocorrelation, the shipped steps log's
layout and the runs-needed table."""
import numpy as np
import pandas as pd
import pytest

from perfkit.course import u1_measuring as u1


def _ar1(n, phi, seed):
    rng = np.random.default_rng(seed)
    x = np.zeros(n + 50)
    e = rng.normal(size=n + 50)
    for t in range(1, n + 50):
        x[t] = phi * x[t - 1] + e[t]
    return 10.0 + x[50:]


def _width(x, block):
    return np.diff(np.percentile(u1.moving_block_means(x, block, 2000, 0), [2.5, 97.5]))[0]


def test_blocks_widen_the_interval_of_a_correlated_series_only():
    corr, white = _ar1(400, 0.7, 1), _ar1(400, 0.0, 2)
    assert _width(corr, 20) > 1.6 * _width(corr, 1)
    assert 0.75 < _width(white, 20) / _width(white, 1) < 1.3
    naive = np.diff(u1.naive_ci(white))[0]
    assert abs(_width(white, 1) / naive - 1) < 0.15


def test_moving_block_means_is_deterministic_and_checks_the_block():
    x = _ar1(50, 0.5, 3)
    assert np.array_equal(u1.moving_block_means(x, 5, 10, 7), u1.moving_block_means(x, 5, 10, 7))
    for bad in (0, 51):
        with pytest.raises(ValueError, match="block"):
            u1.moving_block_means(x, bad)


def test_autocorrelation_finds_the_ar1_coefficient():
    assert abs(u1.autocorrelation(_ar1(4000, 0.6, 4), 1)[1] - 0.6) < 0.05
    assert abs(u1.autocorrelation(_ar1(4000, 0.0, 5), 1)[1]) < 0.05


def test_noise_runs_are_rank_zero_runs_of_the_logged_length():
    runs = u1.load_noise_runs()
    table = pd.read_csv("data/measured/pytorch-cpu/noise_floor.csv").set_index("sample_id")
    for sid in list(runs)[:20]:
        assert len(runs[sid]) == 3
        assert all(len(r) == table.loc[sid, "steps_per_run"] for r in runs[sid])
        assert np.isclose(np.mean([r.mean() for r in runs[sid]]), table.loc[sid, ["step_run1", "step_run2",
                                                                                   "step_run3"]].mean(), rtol=0.3)


def test_runs_needed_grow_as_the_target_shrinks():
    t = u1.repeats_table([1.0, 1.05, 0.97, 1.02], targets=(0.05, 0.01, 0.005))
    assert list(t["runs needed"]) == sorted(t["runs needed"])
    assert t["runs needed"].iloc[-1] > 4 * t["runs needed"].iloc[1] - 4
