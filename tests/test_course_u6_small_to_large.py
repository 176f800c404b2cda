"""Unit 6 of the course (perfkit.course.u6_small_to_large): the split, the widening intervals, the transferred κ,
the regime flags and the widget's positions, on Pollux's shipped traces."""
import numpy as np
import pytest

from perfkit.course import u6_small_to_large as u6
from perfkit.model.uncertainty.conformal import ExtrapolationWarning
from perfkit.model.uncertainty.extrapolation import conformal_quantile, distance


@pytest.fixture(scope="module")
def rows():
    return u6.load_jobs()


def test_the_split_fits_a_quarter_and_scores_from_twice_that(rows):
    splits, table = u6.split_table(rows)
    assert (splits["fit_max"], splits["test_min"], splits["test_max"]) == (16.0, 32.0, 64.0)
    assert table["rows"].sum() == len(rows)
    assert table.loc["test (K ≥ 2·fit_max)", "GPUs"] == "32–64"


def test_packed_configurations_fill_nodes_of_four():
    p = u6.packed([1, 4, 5, 8, 9, 64], 32)
    assert p["n_nodes"].tolist() == [1, 1, 2, 2, 3, 16]
    assert set(p["batch_per_gpu"]) == {32}


def test_the_interval_widens_as_exp_of_kappa_q_d(rows):
    fit = rows[rows["n_gpus"] <= 16]
    model = u6.interval_model(fit, 16, kappa=2.0)
    configs = u6.packed([8, 16, 32, 64], u6.shown_batch(rows))  # node counts within the fitted range
    with pytest.warns(ExtrapolationWarning):  # 32 and 64 GPUs lie beyond the fitted 16
        iv = model.predict_interval(configs, coverage=0.9)
    w = model.half_width(0.9) * distance(configs["n_gpus"], 16)
    assert np.allclose(iv["lower"], iv["predicted"] * np.exp(-w))
    assert np.allclose(iv["upper"], iv["predicted"] * np.exp(w))
    assert model.half_width(0.9) == pytest.approx(2.0 * u6.interval_model(fit, 16).half_width(0.9))


def test_kappa_of_a_job_comes_from_the_other_jobs_only():
    frame = u6.load_jobs(jobs=("cifar10", "imagenet", "deepspeech2"))
    splits = u6.split_table(frame[frame["job"] == "cifar10"])[0]
    table, ratios = u6.transfer_table(frame, splits)
    others = ratios[ratios["job"] != "cifar10"]["ratio"]
    assert table.loc["cifar10", "kappa"] == pytest.approx(conformal_quantile(others, 0.1, cap=True))
    own = ratios[ratios["job"] == "cifar10"]["ratio"]
    assert table.loc["cifar10", "coverage κ"] == pytest.approx((own <= table.loc["cifar10", "kappa"]).mean())
    assert table.loc["all", "test rows"] == len(ratios)


def test_a_single_node_fit_flags_every_multi_node_row(rows):
    table, note = u6.regime_table(rows)
    assert table["flagged regime"].tolist() == [0, table["rows"].iloc[1]]
    assert "no multi-node run" in note


@pytest.mark.parametrize("quick", [True, False])
def test_every_slider_position_has_a_fit_and_redraws(rows, quick):
    values = u6.slider_values(quick)
    assert len(set(np.diff(values))) == 1 and 16 in values and values.index(16) < len(values) - 1
    if quick:
        fits = u6.slider_fits(rows, values, 1.5, n_trees=10)
        assert sorted(fits) == list(values)
        titles = [u6.draw_widening(fits, rows, 182, v).axes[0].get_title() for v in values[:2]]
        assert titles[0] != titles[1]
