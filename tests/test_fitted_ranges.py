"""Every saved thesis-form model keeps its fitted ranges, so `perfkit predict` flags extrapolations with or
without calibration; a tampered ``ranges`` object is refused by name."""
import json

import numpy as np
import pandas as pd
import pytest

from perfkit.cli import main
from perfkit.model import GenericPerformanceModel
from perfkit.model.uncertainty.conformal import extrapolation
from perfkit.model.persist import load_model


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.choice([1.0, 2.0, 4.0, 8.0], n), "g": rng.choice([1.0, 2.0, 4.0], n)})
    return X, 0.02 * X["x"] ** 0.7 * X["g"] ** -0.5 + 0.001


@pytest.fixture(scope="module")
def model():
    X, y = _data()
    return GenericPerformanceModel(numeric=["x"], extrinsic=["g"], random_state=0, maxiter=20).fit(X, y)


def test_ranges_are_the_fitted_min_max(model):
    assert model.fitted_ranges() == {"x": (1.0, 8.0), "g": (1.0, 4.0)}
    again = load_model(model.to_json())
    assert again.fitted_ranges() == model.fitted_ranges()


def test_rows_outside_are_flagged_without_calibration(model):
    X = pd.DataFrame({"x": [2.0, 16.0, 0.5, 4.0], "g": [2.0, 2.0, 2.0, 1000.0]})
    flags, message = extrapolation(model, X)
    assert flags.tolist() == [False, True, True, True]
    assert message.startswith("3 of 4 rows lie outside the fitted data")
    assert "'g': 1 above the fitted max 4" in message and "'x': 1 below the fitted min 1, 1 above" in message


def test_predict_cli_flags_a_plain_thesis_fit(tmp_path, capsys):
    X, y = _data()
    X.assign(time=y).to_csv(tmp_path / "runs.csv", index=False)
    assert main(["fit", str(tmp_path / "runs.csv"), "--target", "time", "--numeric", "x", "--extrinsic", "g",
                 "--seeds", "1", "--test-size", "10", "--out", str(tmp_path / "m.json")]) == 0
    pd.DataFrame({"x": [2.0, 4.0], "g": [2.0, 1000.0]}).to_csv(tmp_path / "new.csv", index=False)
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "new.csv"), "--out",
                 str(tmp_path / "p.csv")]) == 0
    err = capsys.readouterr().err
    out = pd.read_csv(tmp_path / "p.csv")
    assert out["extrapolated"].tolist() == [False, True]
    assert "1 of 2 rows lie outside the fitted data ('g': 1 above the fitted max 4)" in err


def test_a_file_without_ranges_loads_and_says_it_cannot_flag(model, tmp_path, capsys):
    doc = json.loads(model.to_json())
    del doc["fitted"]["ranges"]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    assert extrapolation(load_model(json.dumps(doc)), _data()[0]) == (None, "")
    _data()[0].to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(tmp_path / "old.json"), str(tmp_path / "new.csv"), "--out",
                 str(tmp_path / "p.csv")]) == 0
    assert "kept no fitted ranges" in capsys.readouterr().err


@pytest.mark.parametrize("ranges, culprit", [
    ({"x": [8.0, 1.0], "g": [1.0, 4.0]}, "fitted.ranges['x']: min 8.0 is above max 1.0"),
    ({"x": [1.0, float("nan")], "g": [1.0, 4.0]}, "fitted.ranges['x']: expected [min, max]"),
    ({"x": [1.0, 8.0]}, "fitted.ranges: expected one [min, max] for each of ['x', 'g']"),
    ({"x": [1.0, 8.0], "g": [1.0, 4.0], "z": [0, 1]}, "fitted.ranges: expected one"),
    ({"x": "1..8", "g": [1.0, 4.0]}, "fitted.ranges['x']"),
    ([1, 8], "fitted.ranges: expected one"),
    ({"x": [1.0, True], "g": [1.0, 4.0]}, "fitted.ranges['x']"),
])
def test_tampered_ranges_are_refused(model, ranges, culprit):
    doc = json.loads(model.to_json())
    doc["fitted"]["ranges"] = ranges
    with pytest.raises(ValueError) as err:
        load_model(json.dumps(doc))
    assert culprit in str(err.value)
