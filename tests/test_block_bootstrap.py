"""The stationary block bootstrap of iteration-level intervals: it covers the mean of correlated (AR(1))
iterations, picks its block length from the dependence, is deterministic for a seed and names a bad argument."""
import numpy as np
import pandas as pd
import pytest

from perfkit.chapters.ch3.quantities import SOURCES, _run_blocks
from perfkit.model.analytic.phases import bootstrap_cells
from perfkit.evidence import (block_mean_bootstrap, group_mean_bootstrap, optimal_block_length,
                                        percentile_interval, stationary_bootstrap_indices)


def _ar1(n, phi, rng, burn=50):
    e = rng.normal(size=n + burn)
    x = np.zeros(n + burn)
    for t in range(1, n + burn):
        x[t] = phi * x[t - 1] + e[t]
    return x[burn:]


def _coverage(method, phi=0.5, n=400, reps=300, b=300):
    """Share of ``reps`` AR(1) series (true mean 0) whose 95 % interval of the mean covers 0."""
    rng = np.random.default_rng([36, 10])
    hits = 0
    for r in range(reps):
        lo, hi = percentile_interval(method(_ar1(n, phi, rng), b=b, seed=[1, r])[1])
        hits += lo <= 0.0 <= hi
    return hits / reps


def test_block_bootstrap_covers_the_mean_of_an_ar1_series_where_the_iid_bootstrap_does_not():
    block, iid = _coverage(block_mean_bootstrap), _coverage(group_mean_bootstrap)
    assert block >= 0.87, block
    assert iid <= 0.80, iid
    assert block - iid >= 0.1


def test_block_length_is_about_one_for_white_noise():
    rng = np.random.default_rng(5)
    lengths = np.array([optimal_block_length(rng.normal(size=200)) for _ in range(40)])
    assert lengths.min() >= 1.0
    # the estimator is noisy: a spuriously significant lag now and then gives a longer block
    assert np.median(lengths) < 1.6 and np.mean(lengths < 2.5) >= 0.85


def test_block_length_grows_with_autocorrelation():
    rng = np.random.default_rng(6)
    lengths = [np.median([optimal_block_length(_ar1(400, phi, rng)) for _ in range(10)]) for phi in (0.3, 0.6, 0.9)]
    assert 1.5 < lengths[0] < lengths[1] < lengths[2]
    assert lengths[2] <= np.ceil(min(3 * np.sqrt(400), 400 / 3))


@pytest.mark.parametrize("x", [np.ones(50), np.array([1.0, 2.0, 3.0]), np.array([np.nan] * 10), np.array([])],
                         ids=["constant", "three values", "all NaN", "empty"])
def test_block_length_is_one_without_a_dependence_to_estimate(x):
    assert optimal_block_length(x) == 1.0


def test_block_length_ignores_non_finite_values():
    x = _ar1(300, 0.7, np.random.default_rng(3))
    y = x.copy()
    y[[10, 50]] = np.nan
    assert optimal_block_length(y) == optimal_block_length(np.delete(x, [10, 50]))


def test_draws_are_deterministic_for_a_seed():
    x = _ar1(200, 0.5, np.random.default_rng(1))
    a, b = block_mean_bootstrap(x, seed=[2023, 4]), block_mean_bootstrap(x, seed=[2023, 4])
    assert np.array_equal(a[1], b[1]) and a[2] == b[2]
    assert not np.array_equal(a[1], block_mean_bootstrap(x, seed=[2023, 5])[1])
    assert np.array_equal(stationary_bootstrap_indices(50, 4.0, b=20, seed=9),
                          stationary_bootstrap_indices(50, 4.0, b=20, seed=9))


@pytest.mark.parametrize("block", [1.0, 4.0, 20.0])
def test_resamples_are_blocks_of_consecutive_iterations(block):
    n = 500
    idx = stationary_bootstrap_indices(n, block, b=200, seed=3)
    assert idx.shape == (200, n) and idx.min() >= 0 and idx.max() < n
    follows = np.mean(idx[:, 1:] == (idx[:, :-1] + 1) % n)  # the next index continues the block
    assert follows == pytest.approx(1 - 1 / block + (1 / block) / n, abs=0.01)


def test_one_long_block_keeps_the_whole_order_circularly():
    idx = stationary_bootstrap_indices(7, 1e12, b=5, seed=2)
    for row in idx:
        assert np.array_equal(row, (row[0] + np.arange(7)) % 7)


@pytest.mark.parametrize("n, block, culprit", [(0, 2.0, "n:"), (5, 0.5, "block:"), (5, float("nan"), "block:"),
                                               (5, float("inf"), "block:")])
def test_bad_arguments_are_one_error_naming_the_parameter(n, block, culprit):
    with pytest.raises(ValueError, match=culprit):
        stationary_bootstrap_indices(n, block)


def test_columns_are_resampled_together_and_means_are_exact():
    x = _ar1(100, 0.5, np.random.default_rng(2))
    v = np.column_stack([x, 2 * x + 1])
    est, samples, block = block_mean_bootstrap(v, b=50)
    assert np.allclose(est, v.mean(axis=0))
    assert np.allclose(samples[:, 1], 2 * samples[:, 0] + 1)
    assert block == max(optimal_block_length(x), optimal_block_length(2 * x + 1))
    assert block_mean_bootstrap(v, b=50, block=1.0)[2] == 1.0


def _cells_frame(x, shuffle=False):
    n = len(x)
    df = pd.DataFrame({"framework": "F", "model": "MLP", "workers": 1, "iteration": np.arange(n), "rank": 0,
                       "t_iter": x, "t_f": x / 2, "batch_size": 64})
    return df.sample(frac=1.0, random_state=0) if shuffle else df


def test_bootstrap_cells_uses_blocks_of_iterations_in_their_order():
    x = 1.0 + 0.1 * _ar1(200, 0.7, np.random.default_rng(8))
    cells = bootstrap_cells(_cells_frame(x))
    (mean, samples), = [cells[k]["t_iter"] for k in cells]
    assert mean == pytest.approx(x.mean())
    lo, hi = percentile_interval(samples)
    ilo, ihi = percentile_interval(group_mean_bootstrap(x)[1])
    assert (hi - lo) > 1.5 * (ihi - ilo)  # wider than the bootstrap that treats iterations as independent
    shuffled = bootstrap_cells(_cells_frame(x, shuffle=True))
    assert np.array_equal(shuffled[next(iter(shuffled))]["t_iter"][1], samples)  # rows in any order: same draws


def test_regression_rows_are_resampled_in_blocks_within_each_run():
    rng = np.random.default_rng(4)
    rows = pd.concat([pd.DataFrame({"framework": "F", "workers": g, "iteration": np.arange(60),
                                    "epoch_time": _ar1(60, 0.8, rng), "lif": 1.0}) for g in (1, 2, 3)],
                     ignore_index=True).sample(frac=1.0, random_state=1).reset_index(drop=True)
    idx = _run_blocks(rows, seed=[1, 2])
    assert idx.shape[1] == len(rows)
    runs = rows["workers"].to_numpy()
    per_run = [np.bincount(runs[r], minlength=4)[1:] for r in idx[:20]]
    assert all((c == 60).all() for c in per_run)  # each run keeps its number of rows
    assert np.array_equal(idx, _run_blocks(rows, seed=[1, 2]))


def test_the_ledger_names_the_block_bootstrap():
    for key in ("iterations", "cells", "rows"):
        assert "block-bootstrap" in SOURCES[key] and "automatic block length" in SOURCES[key]
