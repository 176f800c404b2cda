"""Unit 5's computations: the forms compared, the flat extrapolation of tree ensembles and its table."""
import numpy as np
import pytest

from perfkit.course import u5_beyond as u5


@pytest.fixture(scope="module")
def data():
    return u5.load_split(n_rows=600)


def test_loglinear_beats_the_additive_form(data):
    preds = u5.compare_forms(data, de_maxiter=10)
    y = data["y_test"].to_numpy()
    mape = {n: np.mean(np.abs(p - y) / y) for n, p in preds.items()}
    assert mape["log-linear with interactions"] < mape["thesis form (additive sum)"]


def test_forests_flat_line_beyond_the_cutoff(data):
    fits = u5.extrapolation_fits(data["X"], data["y"], 16, n_trees=30)
    beyond = fits[fits["beyond"]]
    assert beyond["random forest"].max() <= fits.attrs["train_max"] + 1e-12
    table = u5.beyond_table(fits, 16)
    growth = table.iloc[:, 0]
    assert growth["random forest"] < 1.5 < growth["measured"]
    assert growth["log-linear"] > growth["random forest"]


def test_checks_accept_the_exact_power_law():
    X, t = u5._features()
    A = np.column_stack([np.ones(len(X)), np.log(X)])
    beta = np.linalg.lstsq(A, np.log(t), rcond=None)[0]
    assert beta[1:] == pytest.approx([0.5, 1.0, -0.3], abs=0.05)
