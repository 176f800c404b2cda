import numpy as np
import pytest

import perfkit as pk


def test_mape_hand_value_measured_and_predicted_denominators():
    # |1-1.1|/1 = 0.1, |2-1.8|/2 = 0.1 -> 10 %
    assert pk.mape([1.0, 2.0], [1.1, 1.8]) == pytest.approx(10.0)
    # eq. 4.13 as printed divides by the prediction: 0.1/1.1 and 0.2/1.8
    expected = 50 * (0.1 / 1.1 + 0.2 / 1.8)
    assert pk.mape([1.0, 2.0], [1.1, 1.8], relative_to="predicted") == pytest.approx(expected)


def test_mae_mse_rmse_r2_hand_values():
    y, p = [1.0, 2.0, 3.0], [1.0, 2.0, 4.0]
    assert pk.mae(y, p) == pytest.approx(1 / 3)
    assert pk.mse(y, p) == pytest.approx(1 / 3)
    assert pk.rmse(y, p) == pytest.approx(np.sqrt(1 / 3))
    # SS_res = 1, SS_tot = 2 -> R2 = 0.5 (eqs. 3.10-3.12)
    assert pk.r2(y, p) == pytest.approx(0.5)


def test_regression_report_keys():
    rep = pk.regression_report([1.0, 2.0, 4.0], [1.0, 2.5, 3.5])
    assert list(rep) == ["MAPE", "MAE", "MSE", "RMSE", "R2"]
    assert rep["MAE"] == pytest.approx(1 / 3)
    assert rep["RMSE"] == pytest.approx(np.sqrt(rep["MSE"]))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: pk.mape([1.0, 2.0], [1.0]), "mismatched lengths"),
        (lambda: pk.mape([0.0, 2.0], [1.0, 2.0]), "y_true: zero value at position 0"),
        (lambda: pk.mape([1.0], [1.0], relative_to="other"), "relative_to"),
        (lambda: pk.mae([1.0, np.inf], [1.0, 2.0]), "y_true: non-finite"),
        (lambda: pk.r2([1.0, 1.0], [1.0, 2.0]), "all values are equal"),
        (lambda: pk.mse([], []), "empty"),
    ],
)
def test_metric_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
