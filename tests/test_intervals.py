"""Conformal intervals (perfkit.model.uncertainty.conformal): any level in (0, 1) gives a valid interval that widens
with the level, a level outside (0, 1) is named, rows outside the fitted data are flagged by row and column, and a
tampered saved model is one error naming its key."""
import json

import numpy as np
import pandas as pd
import pytest

from perfkit.model.forms.generic import GenericPerformanceModel
from perfkit.model.uncertainty.conformal import INTERVAL_METHODS, extrapolation
from perfkit.model.persist import load_model
from perfkit.model.selection.search import make_form
from tests.cli import one_error, run_cli
from tests.frames import INTERVAL_ROLES as ROLES


LEVELS = [1e-12, 1e-9, 1e-6, 1e-3, 0.01, 0.05, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.95, 0.99, 0.999]


@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_every_level_gives_a_valid_interval_that_widens_with_the_level(interval_models, interval_data, method):
    X, _ = interval_data
    rows = X.head(25)
    widths = []
    for level in LEVELS:
        iv = interval_models[method].predict_interval(rows, level)
        lo, hi, pred = (iv[c].to_numpy() for c in ("lower", "upper", "predicted"))
        assert np.all(lo >= 0) and np.all(lo <= hi) and not np.isnan(lo).any() and not np.isnan(hi).any(), level
        assert np.all(np.isfinite(lo)) and np.all(pred > 0)
        widths.append(hi - lo)
    for level, narrow, wide in zip(LEVELS[1:], widths, widths[1:]):
        assert np.all(wide >= narrow), f"{method}: narrower at {level} than at the level before"
    assert np.all(widths[0] <= widths[LEVELS.index(0.9)])  # the tiniest level is the narrowest, not the widest
    assert np.all(np.isfinite(widths[LEVELS.index(0.9)]))


@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_a_tiny_level_is_a_narrow_interval_around_the_prediction(interval_models, interval_data, method):
    X, _ = interval_data
    iv = interval_models[method].predict_interval(X.head(10), 1e-12)
    ratio = (iv["upper"] / iv["lower"]).to_numpy()
    assert np.all(ratio < 1.05), ratio


@pytest.mark.parametrize("level", [0, 1, -0.1, 1.5, float("nan"), float("inf"), -float("inf"), "0.9", True, None,
                                   np.bool_(True), [0.9]])
def test_a_level_outside_0_1_is_one_error_naming_the_parameter(interval_models, interval_data, level):
    X, _ = interval_data
    with pytest.raises(ValueError, match=r"^coverage: expected a number strictly between 0 and 1"):
        interval_models["studentized"].predict_interval(X.head(3), level)


def test_extrapolation_names_rows_and_columns(interval_models, interval_data):
    X, _ = interval_data
    far = X.head(4).assign(gpus=[1.0, 1000.0, 2.0, 0.5], act=["relu", "relu", "elu", "tanh"])
    for model in interval_models.values():
        flags, message = extrapolation(model, far)
        assert flags.tolist() == [False, True, True, True]
        assert message.startswith("3 of 4 rows lie outside the fitted data")
        assert "'gpus': 1 below the fitted min 1, 1 above the fitted max 3" in message and "'act'" in message
        assert "'elu'" in message
    flags, message = extrapolation(interval_models["cv+"], X.head(5))
    assert not flags.any() and message == ""


@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_an_interval_widens_with_the_distance_beyond_a_fitted_range(interval_models, interval_data, method,
                                                                     monkeypatch):
    """gpus fitted on 1-3: at 12 (4x the largest) and at 0.25 (4x below the smallest) the log half-width is 3x
    (d = 1 + log2 4) what the same rows would get without the widening; a row inside every range keeps its own."""
    import warnings

    from perfkit.model.uncertainty import conformal

    X, _ = interval_data
    row = X.head(1)
    rows = pd.concat([row, row.assign(gpus=12.0), row.assign(gpus=0.25)], ignore_index=True)
    model = interval_models[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        iv = model.predict_interval(rows, 0.9)
        monkeypatch.setattr(conformal, "range_distance", lambda X, ranges: np.zeros(len(X)))
        flat = model.predict_interval(rows, 0.9)

    def half(t):
        return (np.log(t["upper"]) - np.log(t["lower"])).to_numpy() / 2

    np.testing.assert_allclose(half(iv), half(flat) * [1.0, 3.0, 3.0], rtol=1e-12)
    centre = (np.log(iv["upper"]) + np.log(iv["lower"])).to_numpy()
    np.testing.assert_allclose(centre, (np.log(flat["upper"]) + np.log(flat["lower"])).to_numpy(), rtol=1e-12)
    assert iv["extrapolated"].tolist() == [False, True, True]


def test_extrapolation_of_a_model_without_fitted_ranges(interval_data):
    """An uncalibrated thesis fit flags by its own fitted ranges; a file written before models kept them cannot."""
    X, y = interval_data
    bare = GenericPerformanceModel(**ROLES, random_state=0).fit(X, y)
    flags, message = extrapolation(bare, X.head(3))
    assert not flags.any() and message == ""
    doc = json.loads(bare.to_json())
    del doc["fitted"]["ranges"]
    assert extrapolation(GenericPerformanceModel.from_json(json.dumps(doc)), X.head(3)) == (None, "")


def test_extrapolation_of_a_missing_column_names_it(interval_models, interval_data):
    X, _ = interval_data
    with pytest.raises(ValueError, match=r"'gpus' not found"):
        extrapolation(interval_models["split"], X.head(3).drop(columns="gpus"))


def _doc(models, method="cv+"):
    return json.loads(models[method].to_json())


def _other_form_doc(data):
    X, y = data
    return GenericPerformanceModel(**ROLES, random_state=0).fit(X, y).to_doc()


def _other_roles_doc(data):
    X, y = data
    form = make_form("loglinear", numeric=["kernel"], categorical=["act"], extrinsic=["gpus", "batch"])
    return form.fit(X, y).to_doc()


TAMPERED = [
    ("calibration-text", lambda d, x: d["settings"].update(calibration="lots"), r"calibration: expected a share"),
    ("calibration-1", lambda d, x: d["settings"].update(calibration=1), r"calibration: expected a share"),
    ("calibration-0", lambda d, x: d["settings"].update(calibration=0.0), r"calibration: expected a share"),
    ("calibration-bool", lambda d, x: d["settings"].update(calibration=True), r"calibration: expected a share"),
    ("calibration-null", lambda d, x: d["settings"].update(calibration=None), r"calibration: expected a share"),
    ("method-list", lambda d, x: d["settings"].update(method=["cv+"]), r"method: expected one of"),
    ("fold-model-other-form", lambda d, x: d["fitted"]["estimators"].__setitem__(1, _other_form_doc(x)),
     r"fitted.estimators\[1\]: a fold model of another form"),
    ("fold-model-other-roles", lambda d, x: d["fitted"]["estimators"].__setitem__(0, _other_roles_doc(x)),
     r"fitted.estimators\[0\]: a fold model of another form or other columns"),
    ("fold-models-too-few", lambda d, x: d["fitted"]["estimators"].pop(), r"fitted.estimators: expected n_splits = 3"),
    ("estimator-is-conformal", lambda d, x: d["fitted"].update(estimator=json.loads(json.dumps(d))),
     r"fitted.estimator: expected a model form"),
    ("range-min-above-max", lambda d, x: d["fitted"]["ranges"].update(gpus=[3.0, 1.0]),
     r"fitted.ranges: column 'gpus' has min 3.0 above max 1.0"),
    ("range-missing", lambda d, x: d["fitted"]["ranges"].pop("gpus"), r"fitted.ranges, fitted.levels: expected"),
    ("range-extra", lambda d, x: d["fitted"]["ranges"].update(other=[0, 1]), r"fitted.ranges, fitted.levels"),
    ("levels-empty", lambda d, x: d["fitted"]["levels"].update(act=[]), r"fitted.levels: expected column -> non-empty"),
    ("levels-missing", lambda d, x: d["fitted"]["levels"].pop("act"), r"fitted.ranges, fitted.levels: expected"),
]


@pytest.mark.parametrize("tamper, match", [c[1:] for c in TAMPERED], ids=[c[0] for c in TAMPERED])
def test_tampered_conformal_json_is_one_error_naming_the_key(interval_models, interval_data, tamper, match):
    doc = _doc(interval_models)
    tamper(doc, interval_data)
    with pytest.raises(ValueError, match=match):
        load_model(json.dumps(doc))


@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_saved_models_still_load_and_predict_the_same(interval_models, interval_data, method):
    X, _ = interval_data
    back = load_model(interval_models[method].to_json())
    rows = X.head(6)
    pd.testing.assert_frame_equal(back.predict_interval(rows, 0.9), interval_models[method].predict_interval(rows, 0.9))


def test_cli_predict_tampered_model_is_one_error(capsys, interval_files, interval_models, interval_data):
    doc = _doc(interval_models)
    doc["settings"]["calibration"] = "lots"
    (interval_files / "t.json").write_text(json.dumps(doc))
    one_error(run_cli(capsys, "predict", interval_files / "t.json", interval_files / "configs.csv"), r"calibration: expected a share")
