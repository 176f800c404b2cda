"""The fit study (perfkit.study): the spec checked when built, run() on a table, the result as data, text, figure
and JSON, and a fit kept when its comparison fails."""
import numpy as np
import pandas as pd
import pytest

from perfkit.study import FitSpec, StudyError, StudyResult, run
from perfkit.study.constraints import Integer, Number, OneOf, flag_names, given, name


def _table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"kernel": rng.choice([2.0, 3.0, 4.0, 5.0], n), "act": rng.choice(["relu", "tanh"], n),
                      "gpus": rng.choice([1.0, 2.0, 4.0, 8.0, 16.0], n), "batch": rng.choice([8.0, 32.0, 128.0], n)})
    t = (2.0 * X["kernel"] ** 1.5 + X["act"].map({"relu": 1.0, "tanh": 2.0})) * X["gpus"] ** -0.7 * X["batch"] ** -0.5
    return X.assign(time=t.to_numpy() * (1 + 0.02 * rng.standard_normal(n)))


ROLES = dict(target="time", numeric=["kernel"], categorical=["act"], extrinsic=["gpus", "batch"])


@pytest.mark.parametrize("changes, message", [
    (dict(seeds=0), r"^seeds: expected an integer >= 1, got 0$"),
    (dict(seeds=True), r"^seeds: expected an integer >= 1, got True$"),
    (dict(n_jobs=0), r"^n_jobs: expected a non-zero integer"),
    (dict(lam=float("nan")), r"^lam: expected a finite number >= 0, got nan$"),
    (dict(lam=1e-3), r"^lam=0.001 needs penalty l1 or l2$"),
    (dict(form="nope"), r"^form: expected one of 'thesis', .*'auto', got 'nope'$"),
    (dict(test_size=1.5), r"^test_size: expected a share strictly between 0 and 1"),
    (dict(test_size=0.3, extrapolate="gpus:4"), r"^extrapolate='gpus:4' and test_size=0.3: give one"),
    (dict(extrapolate="gpus:x"), r"^extrapolate gpus:x: MAX 'x' is not a number"),
    (dict(inflation=200.0, extrapolate="gpus:4", calibrate=True), r"^inflation: expected a number > 0 and at most 100"),
    (dict(form="hybrid"), r"^form='hybrid' needs network"),
    (dict(form="loglinear", penalty="l2"), r"^penalty/lam/method/coding/scale belong to form='thesis'"),
    (dict(select="best"), r"^select belongs to form='auto'"),
    (dict(reference=False), r"^reference belongs to form='auto'"),
    (dict(gpus="gpus"), r"^gpus: gpus/nodes/batch belong to the step forms"),
    (dict(numeric=[0]), r"^numeric: column name 0 is int, not a string"),
    (dict(fixed={"": 1}), r"^fixed: expected a mapping of names to values"),
    (dict(level=1.0), r"^level: expected a coverage strictly between 0 and 1"),
    (dict(network="lenet5"), r"^network: form='thesis' does not use it \(read by hybrid, symbolic and form='auto'\)"),
    (dict(form="loglinear", fixed={"stride": 2}), r"^fixed: form='loglinear' does not use it"),
    (dict(level=0.0), r"^level: expected a coverage strictly between 0 and 1"),
    (dict(baselines=["rf", "xgb"]), r"^baselines: expected distinct kinds of 'rf', 'svr', 'gb', got \['rf', 'xgb'\]"),
    (dict(baselines=["rf", "rf"]), r"^baselines: expected distinct kinds"),
])
def test_a_bad_spec_is_one_error_naming_the_parameter(changes, message):
    with pytest.raises(ValueError, match=message):
        FitSpec(**{**ROLES, **changes})


def test_inside_the_command_the_messages_name_its_flags():
    with flag_names({"n_jobs": "--jobs"}):
        with pytest.raises(ValueError, match=r"^--jobs: expected a non-zero integer"):
            FitSpec(**ROLES, n_jobs=0)
        with pytest.raises(ValueError, match=r"^--lam 0.001 needs --penalty l1 or l2$"):
            FitSpec(**ROLES, lam=1e-3)
        assert name("test_size") == "--test-size" and given("form", "auto") == "--form auto"
    assert name("test_size") == "test_size" and given("form", "auto") == "form='auto'"


def test_the_constraints_say_what_they_allow():
    assert Integer(low=1).allows(3) and not Integer(low=1).allows(0) and not Integer(low=1).allows(2.0)
    assert Number(low=0, open_low=True, high=lambda: 5.0).allows(5.0)
    assert not Number(low=0, open_low=True).allows(0.0) and not Number().allows(float("inf"))
    assert OneOf(("a", "b")).allows("a") and not OneOf(("a", "b")).allows(["a"])
    assert Number(low=0, open_low=True, high=lambda: 5.0).describe() == "a finite number > 0 and at most 5"


def test_the_spec_is_normalised_and_round_trips():
    spec = FitSpec(target="time", numeric="kernel", categorical=" act ", extrinsic="gpus,batch")
    assert spec.numeric == ("kernel",) and spec.categorical == ("act",) and spec.extrinsic == ("gpus", "batch")
    assert FitSpec(**spec.to_dict()) == spec
    assert spec.replace(seeds=3).seeds == 3 and spec.seeds == 10


def test_the_data_is_checked_before_any_fit():
    spec = FitSpec(**ROLES, seeds=2)
    with pytest.raises(ValueError, match="target"):
        run(spec, _table().drop(columns=["time"]), progress=False)
    with pytest.raises(ValueError, match="target column 'time' is constant"):
        run(spec, _table().assign(time=1.0), progress=False)
    with pytest.raises(ValueError, match=r"^test_size 1: holds out 1 of the 120 rows; scoring the fit"):
        run(spec.replace(test_size=1), _table(), progress=False)
    with pytest.raises(ValueError, match="^data: expected a pandas DataFrame"):
        run(spec, _table().to_numpy(), progress=False)


def test_a_thesis_study_gives_every_table_as_data_text_figure_and_json(tmp_path):
    lines = []
    result = run(FitSpec(**ROLES, seeds=2, n_jobs=1), _table(), progress=False, echo=lines.append)
    assert lines == ["fitting the generic model on 80 rows (2 seeds, varpro engine); 40 rows held out"]
    held = result.held_out
    assert list(held.index) == ["generic model", "random forest"]
    assert (held["MAPE_lo"] <= held["MAPE"]).all() and (held["MAPE"] <= held["MAPE_hi"]).all()
    assert result.objective["n_seeds"] == 2 and result.coverage is None and result.factors is None
    text = result.summary()
    assert text.startswith(lines[0]) and "held-out errors:" in text and "best objective" in text
    assert np.allclose(result.predict(_table().drop(columns=["time"]).head(3)),
                       result.model.predict(_table().drop(columns=["time"]).head(3)))
    result.to_json(tmp_path / "s.json")
    again = StudyResult.from_json(tmp_path / "s.json")
    assert again.summary() == text and again.spec == result.spec
    pd.testing.assert_frame_equal(again.held_out, held, check_dtype=False)
    with pytest.raises(ValueError, match="no intervals"):
        result.predict_interval(_table().head(2))
    assert result.plot().axes


def test_an_extrapolation_study_scores_by_factor_and_plots_the_scale(tmp_path):
    result = run(FitSpec(**ROLES, form="loglinear", extrapolate="gpus:4", n_jobs=1), _table(240), progress=False)
    assert result.scale == ("gpus", 4.0) and set(result.factors["factor"]) == {"2×", "4×", "all"}
    assert set(result.inner) == {"loglinear model", "random forest", "gradient boosting"}
    assert 0 <= result.coverage <= 1 and {"lower", "upper", "gpus"} <= set(result.predictions.columns)
    assert "extrapolation errors" in result.summary() and len(result.plot().axes) >= 2
    again = StudyResult.from_doc(result.to_doc())
    assert again.inner == result.inner and again.summary() == result.summary()


def test_the_level_and_the_baselines_are_the_specs():
    spec = FitSpec(**ROLES, form="loglinear", level=0.5, baselines=["svr"], n_jobs=1)
    result = run(spec, _table(), progress=False)
    assert list(result.held_out.index) == ["loglinear model", "SVR"]
    assert "50 % intervals cover" in result.summary()
    wider = run(spec.replace(level=0.95), _table(), progress=False)
    assert wider.coverage >= result.coverage


def test_a_fit_whose_comparison_fails_keeps_the_model(monkeypatch):
    from perfkit.study import compare

    def broken(*a, **k):
        raise ValueError("R2: undefined")

    monkeypatch.setattr(compare, "compare_models", broken)
    with pytest.raises(StudyError, match="R2: undefined") as err:
        run(FitSpec(**ROLES, seeds=1, n_jobs=1), _table(), progress=False)
    assert np.isfinite(err.value.model.predict(_table().drop(columns=["time"]).head(2))).all()


def test_a_saved_study_of_another_format_is_refused():
    with pytest.raises(ValueError, match="not a saved fit study"):
        StudyResult.from_doc({"format": "perfkit.GenericPerformanceModel", "version": 1})


def test_a_max_between_measured_values_is_snapped_to_the_last_fitted_one_and_said():
    from perfkit.study import StudyWarning

    with pytest.warns(StudyWarning, match=r"extrapolate gpus:5: no row has gpus = 5; the fit rows end at gpus = 4, "
                                          r"so MAX is 4"):
        result = run(FitSpec(**ROLES, form="loglinear", extrapolate="gpus:5", n_jobs=1), _table(240), progress=False)
    assert result.scale == ("gpus", 4.0) and "fitted on gpus <= 4" in result.summary()


def test_a_sentence_says_when_mape_and_r2_rank_the_models_differently():
    from perfkit.study.summary import _disagreement

    table = pd.DataFrame({"MAPE": [36.0, 40.0], "R2": [0.26, 0.70]}, index=["generic model", "random forest"])
    [line] = _disagreement(table)
    assert line.startswith("MAPE and R² disagree: generic model has the lowest MAPE (36 %), random forest the "
                           "highest R² (0.7)")
    assert _disagreement(table.assign(R2=[0.8, 0.7])) == []


def test_one_table_when_every_seed_agrees():
    """The mean ± std table is printed only when the seeds differ; identical seeds are one line."""
    import pandas as pd

    from perfkit.study.summary import _seeds_agree

    same = pd.DataFrame({"term": ["a", "b"], "a_mean": [2.0, 0.0], "a_std": [1e-16, 0.0],
                         "q_mean": [float("nan"), -0.4], "q_std": [float("nan"), 0.0]})
    assert _seeds_agree(same, 1e-4)
    assert not _seeds_agree(same.assign(q_std=[float("nan"), 0.01]), 1e-4)
