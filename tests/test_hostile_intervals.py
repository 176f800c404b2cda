"""Hostile inputs to the intervals, `perfkit predict` and `whatif`: any level in (0, 1) gives a valid interval that
widens with the level; every prediction outside the fitted data is flagged; a tampered model JSON, a varied column
the model does not read and an output that is an input are each one clean error naming the culprit."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from perfkit.model.forms.generic import GenericPerformanceModel
from perfkit.model.uncertainty.conformal import INTERVAL_METHODS, ConformalRegressor, ExtrapolationWarning, extrapolation
from perfkit.model.persist import load_model
from perfkit.model.selection.search import make_form
from perfkit.model.uncertainty.whatif import model_columns, whatif
from tests.test_generic import _data
from tests.cli import one_error as _one_error, run_cli as _run

ROLES = dict(numeric=["kernel", "filters"], categorical=["act"], extrinsic=["gpus", "batch"])
LEVELS = [1e-12, 1e-9, 1e-6, 1e-3, 0.01, 0.05, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.95, 0.99, 0.999]
BASE = dict(kernel=3.0, filters=8.0, act="relu", gpus=1.0, batch=32.0)


@pytest.fixture(scope="module")
def data():
    return _data(n=120, noise=0.05)


@pytest.fixture(scope="module")
def models(data):
    X, y = data
    return {m: ConformalRegressor(make_form("loglinear", **ROLES), method=m, n_splits=3).fit(X, y) for m in INTERVAL_METHODS}


@pytest.fixture()
def files(tmp_path, models, data):
    X, y = data
    models["cv+"].save(tmp_path / "m.json")
    bare = json.loads(GenericPerformanceModel(**ROLES, random_state=0).fit(X, y).to_json())
    bare["fitted"].pop("ranges")  # as written before every thesis fit kept its fitted ranges
    (tmp_path / "bare.json").write_text(json.dumps(bare))
    GenericPerformanceModel(**ROLES, random_state=0).fit(X, y).save(tmp_path / "plain.json")
    X.head(4).to_csv(tmp_path / "configs.csv", index=False)
    X.head(3).assign(gpus=[1.0, 1000.0, 0.5]).to_csv(tmp_path / "far.csv", index=False)
    pd.DataFrame([BASE]).to_csv(tmp_path / "base.csv", index=False)
    return tmp_path


# ------------------------------------------------------------------------------ levels
@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_every_level_gives_a_valid_interval_that_widens_with_the_level(models, data, method):
    X, _ = data
    rows = X.head(25)
    widths = []
    for level in LEVELS:
        iv = models[method].predict_interval(rows, level)
        lo, hi, pred = (iv[c].to_numpy() for c in ("lower", "upper", "predicted"))
        assert np.all(lo >= 0) and np.all(lo <= hi) and not np.isnan(lo).any() and not np.isnan(hi).any(), level
        assert np.all(np.isfinite(lo)) and np.all(pred > 0)
        widths.append(hi - lo)
    for level, narrow, wide in zip(LEVELS[1:], widths, widths[1:]):
        assert np.all(wide >= narrow), f"{method}: narrower at {level} than at the level before"
    assert np.all(widths[0] <= widths[LEVELS.index(0.9)])  # the tiniest level is the narrowest, not the widest
    assert np.all(np.isfinite(widths[LEVELS.index(0.9)]))


@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_a_tiny_level_is_a_narrow_interval_around_the_prediction(models, data, method):
    X, _ = data
    iv = models[method].predict_interval(X.head(10), 1e-12)
    ratio = (iv["upper"] / iv["lower"]).to_numpy()
    assert np.all(ratio < 1.05), ratio


@pytest.mark.parametrize("level", [0, 1, -0.1, 1.5, float("nan"), float("inf"), -float("inf"), "0.9", True, None,
                                   np.bool_(True), [0.9]])
def test_a_level_outside_0_1_is_one_error_naming_the_parameter(models, data, level):
    X, _ = data
    with pytest.raises(ValueError, match=r"^coverage: expected a number strictly between 0 and 1"):
        models["studentized"].predict_interval(X.head(3), level)


@pytest.mark.parametrize("level", ["1e-12", "0.001", "0.5", "0.999"])
def test_cli_predict_any_level_in_0_1(capsys, files, level):
    r = _run(capsys, "predict", files / "m.json", files / "configs.csv", "--interval", level, "--out", files / "p.csv")
    assert r.code == 0, r.err
    p = pd.read_csv(files / "p.csv")
    assert (p["lower"] <= p["upper"]).all() and not p[["lower", "upper"]].isna().any().any()


@pytest.mark.parametrize("level", ["0", "1", "-1e-12", "1.0000001", "nan", "inf"])
def test_cli_predict_level_outside_0_1(capsys, files, level):
    _one_error(_run(capsys, "predict", files / "m.json", files / "configs.csv", f"--interval={level}"),
               r"--interval: expected a coverage strictly between 0 and 1")


# ------------------------------------------------------------------------------ extrapolation
def test_extrapolation_names_rows_and_columns(models, data):
    X, _ = data
    far = X.head(4).assign(gpus=[1.0, 1000.0, 2.0, 0.5], act=["relu", "relu", "elu", "tanh"])
    for model in models.values():
        flags, message = extrapolation(model, far)
        assert flags.tolist() == [False, True, True, True]
        assert message.startswith("3 of 4 rows lie outside the fitted data")
        assert "'gpus': 1 below the fitted min 1, 1 above the fitted max 3" in message and "'act'" in message
        assert "'elu'" in message
    flags, message = extrapolation(models["cv+"], X.head(5))
    assert not flags.any() and message == ""


def test_extrapolation_of_a_model_without_fitted_ranges(data):
    """An uncalibrated thesis fit flags by its own fitted ranges; a file written before models kept them cannot."""
    X, y = data
    bare = GenericPerformanceModel(**ROLES, random_state=0).fit(X, y)
    flags, message = extrapolation(bare, X.head(3))
    assert not flags.any() and message == ""
    doc = json.loads(bare.to_json())
    del doc["fitted"]["ranges"]
    assert extrapolation(GenericPerformanceModel.from_json(json.dumps(doc)), X.head(3)) == (None, "")


def test_extrapolation_of_a_missing_column_names_it(models, data):
    X, _ = data
    with pytest.raises(ValueError, match=r"'gpus' not found"):
        extrapolation(models["split"], X.head(3).drop(columns="gpus"))


def test_cli_predict_flags_extrapolation_without_interval(capsys, files, models):
    r = _run(capsys, "predict", files / "m.json", files / "far.csv", "--out", files / "p.csv")
    assert r.code == 0, r.err
    p = pd.read_csv(files / "p.csv")
    assert p["extrapolated"].tolist() == [False, True, True]
    np.testing.assert_allclose(p["predicted"], models["cv+"].predict(pd.read_csv(files / "far.csv")))
    lines = [ln for ln in r.err.splitlines() if ln.startswith("perfkit: warning:")]
    assert len(lines) == 1 and "2 of 3 rows lie outside the fitted data" in lines[0], r.err
    assert "'gpus': 1 below the fitted min 1, 1 above the fitted max 3" in lines[0]


def test_cli_predict_flags_extrapolation_with_interval(capsys, files):
    r = _run(capsys, "predict", files / "m.json", files / "far.csv", "--interval", "0.9")
    assert r.code == 0, r.err
    p = pd.read_csv(pd.io.common.StringIO(r.out))
    assert p["extrapolated"].tolist() == [False, True, True]
    assert "2 of 3 rows lie outside the fitted data" in r.err and "coverage guarantee" in r.err


def test_cli_predict_inside_the_data_is_quiet(capsys, files):
    r = _run(capsys, "predict", files / "m.json", files / "configs.csv")
    assert r.code == 0 and r.err == "", r.err
    p = pd.read_csv(pd.io.common.StringIO(r.out))
    assert not p["extrapolated"].any() and list(p.columns)[-2:] == ["predicted", "extrapolated"]


def test_cli_predict_says_when_a_model_cannot_flag(capsys, files):
    r = _run(capsys, "predict", files / "bare.json", files / "configs.csv")
    assert r.code == 0 and "kept no fitted ranges" in r.err and "refit it" in r.err, r.err
    assert "extrapolated" not in r.out.splitlines()[0]


def test_cli_predict_flags_an_uncalibrated_thesis_fit(capsys, files):
    r = _run(capsys, "predict", files / "plain.json", files / "far.csv")
    assert r.code == 0 and "lie outside the fitted data" in r.err, r.err
    assert "extrapolated" in r.out.splitlines()[0]


# ------------------------------------------------------------------------------ whatif
@pytest.mark.parametrize("column", ["time", "epoch_time", "workers", "Gpus", "kernal"])
def test_whatif_of_a_column_the_model_does_not_read(models, column):
    with pytest.raises(ValueError, match=rf"column {column!r}: the model does not read it.*"
                                         r"'kernel', 'filters', 'act', 'gpus', 'batch'"):
        whatif(models["studentized"], BASE, column, [1, 2, 4])


def test_whatif_columns_of_each_model(models, data):
    X, y = data
    assert model_columns(models["cv+"]) == ["kernel", "filters", "act", "gpus", "batch"]
    assert model_columns(GenericPerformanceModel(**ROLES, random_state=0).fit(X, y)) == \
        ["kernel", "filters", "act", "gpus", "batch"]
    assert model_columns(object()) is None


@pytest.mark.parametrize("values, match", [([1.0, float("nan")], r"every value must be a finite number"),
                                           ([float("inf"), 2.0], r"every value must be a finite number"),
                                           ([], r"give at least one value of 'gpus'")])
def test_whatif_bad_values(models, values, match):
    with pytest.raises(ValueError, match=match):
        whatif(models["split"], BASE, "gpus", values)


def test_whatif_tiny_level_and_no_efficiency_of_levels(models):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        t = whatif(models["cv+"], BASE, "gpus", [1, 2, 3], coverage=1e-12)
        assert (t["lower"] <= t["upper"]).all() and t["speedup"].iloc[0] == 1
        t = whatif(models["studentized"], BASE, "act", ["relu", "tanh"])
    assert "efficiency" not in t.columns and np.isfinite(t["speedup"]).all()


@pytest.mark.parametrize("column", ["time", "nope"])
def test_cli_whatif_of_a_column_the_model_does_not_read(capsys, files, column):
    _one_error(_run(capsys, "whatif", files / "m.json", "--base", files / "base.csv", "--vary", f"{column}=1,2"),
               rf"column '{column}': the model does not read it.*it reads 'kernel', 'filters', 'act', 'gpus'")


def test_cli_whatif_out_is_base_is_refused(capsys, files):
    before = (files / "base.csv").read_bytes()
    _one_error(_run(capsys, "whatif", files / "m.json", "--base", files / "base.csv", "--vary", "gpus=1,2",
                    "--out", files / "base.csv"), r"--out '.*base.csv' is the input '.*base.csv'")
    assert (files / "base.csv").read_bytes() == before


@pytest.mark.parametrize("flag", ["--out", "--plot"])
def test_cli_whatif_output_is_model_is_refused(capsys, files, flag):
    before = (files / "m.json").read_bytes()
    _one_error(_run(capsys, "whatif", files / "m.json", "--base", "kernel=3,filters=8,act=relu,batch=32",
                    "--vary", "gpus=1,2", flag, files / "m.json"), rf"{flag} '.*m.json' is the input")
    assert (files / "m.json").read_bytes() == before


def test_cli_whatif_out_equal_to_plot_is_refused(capsys, files):
    _one_error(_run(capsys, "whatif", files / "m.json", "--base", files / "base.csv", "--vary", "gpus=1,2",
                    "--out", files / "w.png", "--plot", files / "w.png"), r"--plot '.*w.png' is also --out")
    assert not (files / "w.png").exists()


@pytest.mark.parametrize("name", ["w.xyz", "w"])
def test_cli_whatif_plot_format_checked_first(capsys, files, name):
    _one_error(_run(capsys, "whatif", files / "m.json", "--base", files / "base.csv", "--vary", "gpus=1,2",
                    "--out", files / "w.csv", "--plot", files / name), r"--plot '.*': end the name with the suffix")
    assert not (files / "w.csv").exists()


def test_cli_whatif_plot_never_writes_through_a_link(capsys, files):
    victim = files / "victim.txt"
    victim.write_text("keep me")
    (files / "w.png").symlink_to(victim)
    r = _run(capsys, "whatif", files / "m.json", "--base", files / "base.csv", "--vary", "gpus=1,2",
             "--plot", files / "w.png")
    assert victim.read_text() == "keep me" and "Traceback" not in r.err
    if r.code == 0:  # the link is replaced by the figure, never written through
        assert not (files / "w.png").is_symlink() and (files / "w.png").read_bytes()[:4] == b"\x89PNG"
    else:
        _one_error(r, r"--plot")


def test_cli_whatif_writes_table_and_figure(capsys, files):
    r = _run(capsys, "whatif", files / "m.json", "--base", files / "base.csv", "--vary", "gpus=1,2,3",
             "--interval", "0.999", "--out", files / "w.csv", "--plot", files / "w.svg")
    assert r.code == 0, r.err
    assert "99.9 % intervals" in r.out and pd.read_csv(files / "w.csv")["speedup"].iloc[0] == 1
    assert (files / "w.svg").read_text().lstrip().startswith("<?xml")


# ------------------------------------------------------------------------------ tampered model JSON
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
def test_tampered_conformal_json_is_one_error_naming_the_key(models, data, tamper, match):
    doc = _doc(models)
    tamper(doc, data)
    with pytest.raises(ValueError, match=match):
        load_model(json.dumps(doc))


@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_saved_models_still_load_and_predict_the_same(models, data, method):
    X, _ = data
    back = load_model(models[method].to_json())
    rows = X.head(6)
    pd.testing.assert_frame_equal(back.predict_interval(rows, 0.9), models[method].predict_interval(rows, 0.9))


def test_cli_predict_tampered_model_is_one_error(capsys, files, models, data):
    doc = _doc(models)
    doc["settings"]["calibration"] = "lots"
    (files / "t.json").write_text(json.dumps(doc))
    _one_error(_run(capsys, "predict", files / "t.json", files / "configs.csv"), r"calibration: expected a share")
