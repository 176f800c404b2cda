"""`perfkit predict` on a saved model: intervals at any level in (0, 1), every row outside the fitted data flagged,
an earlier prediction's columns replaced (never mixed with another model's), and an overflowing interval named by
its row."""
import numpy as np
import pandas as pd
import pytest

from tests.cli import POLLUX_STEP as STEP, one_error, run_cli, write_frame as _write


def test_an_earlier_predictions_columns_are_replaced_not_mixed(pollux_fit, capsys):
    r = run_cli(capsys, "predict", pollux_fit.model, pollux_fit.base, "--interval", "0.9", "--out", pollux_fit.dir / "p1.csv")
    assert r.code == 0, r.err
    r = run_cli(capsys, "predict", pollux_fit.model, pollux_fit.dir / "p1.csv", "--out", pollux_fit.dir / "p2.csv")
    assert r.code == 0 and "has the output columns predicted, lower, upper, extrapolated" in r.err, r.err
    out = pd.read_csv(pollux_fit.dir / "p2.csv")
    assert "lower" not in out.columns and "upper" not in out.columns  # no interval beside another prediction
    assert np.allclose(out["predicted"], pd.read_csv(pollux_fit.dir / "p1.csv")["predicted"])


def test_an_interval_that_overflows_names_the_row(pollux_fit, capsys):
    assert run_cli(capsys, "fit", pollux_fit.base, "--target", "t_iter", "--form", "pollux", *STEP, "--extrapolate",
                   "n_gpus:12", "--out", pollux_fit.dir / "scale.json").code == 0
    far = _write(pollux_fit, "far.csv", pd.DataFrame({"n_gpus": [1e300], "n_nodes": [2], "batch_per_gpu": [64]}))
    one_error(run_cli(capsys, "predict", pollux_fit.dir / "scale.json", far, "--interval", "0.9"),
              r"X: the (prediction|interval) for row 0 is not a finite time > 0")


@pytest.mark.parametrize("level", ["1e-12", "0.001", "0.5", "0.999"])
def test_cli_predict_any_level_in_0_1(capsys, interval_files, level):
    r = run_cli(capsys, "predict", interval_files / "m.json", interval_files / "configs.csv", "--interval", level, "--out", interval_files / "p.csv")
    assert r.code == 0, r.err
    p = pd.read_csv(interval_files / "p.csv")
    assert (p["lower"] <= p["upper"]).all() and not p[["lower", "upper"]].isna().any().any()


@pytest.mark.parametrize("level", ["0", "1", "-1e-12", "1.0000001", "nan", "inf"])
def test_cli_predict_level_outside_0_1(capsys, interval_files, level):
    one_error(run_cli(capsys, "predict", interval_files / "m.json", interval_files / "configs.csv", f"--interval={level}"),
               r"--interval: expected a coverage strictly between 0 and 1")


def test_cli_predict_flags_extrapolation_without_interval(capsys, interval_files, interval_models):
    r = run_cli(capsys, "predict", interval_files / "m.json", interval_files / "far.csv", "--out", interval_files / "p.csv")
    assert r.code == 0, r.err
    p = pd.read_csv(interval_files / "p.csv")
    assert p["extrapolated"].tolist() == [False, True, True]
    np.testing.assert_allclose(p["predicted"], interval_models["cv+"].predict(pd.read_csv(interval_files / "far.csv")))
    lines = [ln for ln in r.err.splitlines() if ln.startswith("perfkit: warning:")]
    assert len(lines) == 1 and "2 of 3 rows lie outside the fitted data" in lines[0], r.err
    assert "'gpus': 1 below the fitted min 1, 1 above the fitted max 3" in lines[0]


def test_cli_predict_flags_extrapolation_with_interval(capsys, interval_files):
    r = run_cli(capsys, "predict", interval_files / "m.json", interval_files / "far.csv", "--interval", "0.9")
    assert r.code == 0, r.err
    p = pd.read_csv(pd.io.common.StringIO(r.out))
    assert p["extrapolated"].tolist() == [False, True, True]
    assert "2 of 3 rows lie outside the fitted data" in r.err and "coverage guarantee" in r.err


def test_cli_predict_inside_the_data_is_quiet(capsys, interval_files):
    r = run_cli(capsys, "predict", interval_files / "m.json", interval_files / "configs.csv")
    assert r.code == 0 and r.err == "", r.err
    p = pd.read_csv(pd.io.common.StringIO(r.out))
    assert not p["extrapolated"].any() and list(p.columns)[-2:] == ["predicted", "extrapolated"]


def test_cli_predict_says_when_a_model_cannot_flag(capsys, interval_files):
    r = run_cli(capsys, "predict", interval_files / "bare.json", interval_files / "configs.csv")
    assert r.code == 0 and "kept no fitted ranges" in r.err and "refit it" in r.err, r.err
    assert "extrapolated" not in r.out.splitlines()[0]


def test_cli_predict_flags_an_uncalibrated_thesis_fit(capsys, interval_files):
    r = run_cli(capsys, "predict", interval_files / "plain.json", interval_files / "far.csv")
    assert r.code == 0 and "lie outside the fitted data" in r.err, r.err
    assert "extrapolated" in r.out.splitlines()[0]
