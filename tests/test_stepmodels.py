"""Step-time models (perfkit.model.forms.stepmodels) and extrapolation splits (perfkit.model.uncertainty.extrapolation)."""
import importlib
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression

from perfkit.model.uncertainty.extrapolation import (calibrate_extrapolation, distance, extrapolation_errors,
                                         extrapolation_interval, interval_coverage, scale_split,
                                         select_by_extrapolation, select_median_of_top)
from perfkit.model.persist import load_model
from perfkit.model.forms.median import MedianOfModels
from perfkit.model.forms.stepmodels import PhaseAwareStepModel, PolluxStepModel, SYNC_FORMS

PLACEMENTS = [(k, n) for k in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32) for n in (1, 2, 4, 8) if n <= k and k <= 4 * n]


def _configs():
    rows = [(k, n, b) for k, n in PLACEMENTS for b in (8, 16, 32, 64)]
    return pd.DataFrame(rows, columns=["n_gpus", "n_nodes", "batch_per_gpu"])


def _synthetic(model, params, noise=0.0, seed=0):
    """Configurations, step times from ``model``'s own equations at ``params`` (and sync = T_iter - T_grad)."""
    X = _configs()
    model.params_, model.scale_ = np.asarray(params, dtype=float), 1.0
    parts = model.predict_parts(X)
    y = parts.t_iter.to_numpy() * np.exp(noise * np.random.default_rng(seed).standard_normal(len(X)))
    del model.params_
    return X.assign(sync_time=np.maximum(y - parts.t_grad.to_numpy(), 0.0)), y


POLLUX = [0.02, 0.004, 0.01, 0.002, 0.08, 0.003, 1.5]
PHASE = [0.02, 0.004, 0.01, 0.002, 0.06, 0.03, 0.01, 1.5]  # log form: alpha_node + beta·ln K + beta_N·(N-2)
PHASE_K_ONLY = PHASE[:6] + PHASE[7:]  # the same without the node slope (node_slope=False)


def test_pollux_recovers_its_parameters():
    X, y = _synthetic(PolluxStepModel(), POLLUX)
    m = PolluxStepModel().fit(X.drop(columns="sync_time"), y)
    assert np.allclose(m.predict(X), y, rtol=1e-4)  # exact but for the small ridge (stepmodels._RIDGE_ROOT)
    assert np.allclose(list(m.coef_.values()), POLLUX, rtol=1e-3)
    assert m.n_parameters_ == 7 and list(m.feature_names_in_) == ["n_gpus", "n_nodes", "batch_per_gpu"]


@pytest.mark.parametrize("weight", [0.0, 1.0])
def test_phase_aware_recovers_its_parameters(weight):
    X, y = _synthetic(PhaseAwareStepModel(), PHASE)
    m = PhaseAwareStepModel(sync_weight=weight, loss="linear").fit(X, y)
    assert np.allclose(list(m.coef_.values()), PHASE, rtol=1e-3)
    assert m.n_parameters_ == 8 and list(m.coef_)[-2:] == ["beta_N", "gamma"]
    assert "0.01·(N-2) across nodes" in m.formula() and m.formula().endswith("N = n_nodes)")


def test_without_the_node_slope_the_sync_depends_on_k_alone():
    X, y = _synthetic(PhaseAwareStepModel(node_slope=False), PHASE_K_ONLY)
    m = PhaseAwareStepModel(node_slope=False, loss="linear").fit(X, y)
    assert np.allclose(list(m.coef_.values()), PHASE_K_ONLY, rtol=1e-3)
    assert m.n_parameters_ == 7 and "N-2" not in m.formula()
    both = PhaseAwareStepModel(loss="linear").fit(X, y)  # rows with no growth in N: the slope stays at 0
    assert both.coef_["beta_N"] < 1e-6 and np.allclose(both.predict(X), y, rtol=1e-4)


def test_a_file_saved_before_the_node_slope_loads_without_it():
    import json

    X, y = _synthetic(PhaseAwareStepModel(node_slope=False), PHASE_K_ONLY, noise=0.02)
    m = PhaseAwareStepModel(node_slope=False).fit(X, y)
    doc = json.loads(m.to_json())
    del doc["settings"]["node_slope"]  # as perfkit wrote it before the setting existed
    back = PhaseAwareStepModel.from_json(json.dumps(doc))
    assert back.node_slope is False and np.array_equal(back.predict(X), m.predict(X))
    doc["settings"]["node_slope"] = True  # 7 numbers cannot be a model with a node slope
    with pytest.raises(ValueError, match="params"):
        PhaseAwareStepModel.from_json(json.dumps(doc))


def test_phase_aware_with_noise_predicts_within_the_noise():
    X, y = _synthetic(PhaseAwareStepModel(), PHASE, noise=0.03)
    m = PhaseAwareStepModel().fit(X, y)
    truth = _synthetic(PhaseAwareStepModel(), PHASE)[1]
    assert np.mean(np.abs(m.predict(X) / truth - 1)) < 0.02


def test_phases_are_used_in_fit_only():
    X, y = _synthetic(PhaseAwareStepModel(), PHASE)
    m = PhaseAwareStepModel().fit(X, y)
    config = X.drop(columns="sync_time")
    assert np.array_equal(m.predict(config), m.predict(X.assign(sync_time=123.0)))
    with pytest.raises(ValueError, match="'sync_time'"):
        PhaseAwareStepModel().fit(config, y)
    no_phase = PhaseAwareStepModel(sync_column=None).fit(config, y)
    assert np.allclose(no_phase.predict(config), y, rtol=1e-3)


@pytest.mark.parametrize("form", list(SYNC_FORMS))
def test_json_round_trip_and_clone(form):
    X, y = _synthetic(PhaseAwareStepModel(), PHASE, noise=0.02)
    for model in (PolluxStepModel(), PhaseAwareStepModel(sync_form=form, sync_weight=0.5)):
        m = model.fit(X, y)
        back = type(m).from_json(m.to_json())
        assert np.array_equal(back.predict(X), m.predict(X))
        assert back.formula() == m.formula() and back.get_params() == m.get_params()
        c = clone(m)
        assert c.get_params() == m.get_params() and not hasattr(c, "params_")
        assert "T_grad" in m.formula() and m.summary().startswith(type(m).__name__)


def test_not_fitted_and_bad_settings():
    X = _configs()
    for m in (PolluxStepModel(), PhaseAwareStepModel()):
        with pytest.raises(NotFittedError):
            m.predict(X)
    with pytest.raises(ValueError, match="gpus, nodes, batch"):
        PolluxStepModel(nodes="n_gpus").fit(X, np.ones(len(X)))


@pytest.mark.parametrize("column, value, words", [
    ("n_gpus", 0, "'n_gpus'"), ("n_gpus", 2.5, "'n_gpus'"), ("n_nodes", np.nan, "'n_nodes'"),
    ("batch_per_gpu", -1.0, "'batch_per_gpu'"), ("batch_per_gpu", np.inf, "'batch_per_gpu'"),
    ("sync_time", -0.1, "'sync_time'"), ("sync_time", np.nan, "'sync_time'")])
def test_bad_input_names_the_column(column, value, words):
    X, y = _synthetic(PhaseAwareStepModel(), PHASE)
    X = X.astype({column: float})
    X.loc[3, column] = value
    with pytest.raises(ValueError, match=words):
        PhaseAwareStepModel().fit(X, y)


def test_missing_column_and_more_nodes_than_gpus():
    X, y = _synthetic(PolluxStepModel(), POLLUX)
    with pytest.raises(ValueError, match="'n_nodes'"):
        PolluxStepModel().fit(X.drop(columns="n_nodes"), y)
    bad = X.copy()
    bad.loc[0, "n_nodes"] = bad.loc[0, "n_gpus"] + 1
    with pytest.raises(ValueError, match="'n_nodes'.*exceed"):
        PolluxStepModel().fit(bad, y)
    m = PolluxStepModel().fit(X, y)
    with pytest.raises(ValueError, match="'batch_per_gpu'"):
        m.predict(X.drop(columns="batch_per_gpu"))


# ------------------------------------------------------------------------------ extrapolation
def _tiny():
    """Two groups; y = 2x in group a, y = x + 10 in group b (a line fitted on x <= 2 is exact only for ... both)."""
    x = np.array([1, 2, 4, 8, 1, 2, 4, 8], dtype=float)
    g = ["a"] * 4 + ["b"] * 4
    y = np.where(np.array(g) == "a", 2 * x, x + 10)
    y[3] = 20.0  # group a at x = 8: the line predicts 16, error 20 %
    y[7] = 22.5  # group b at x = 8: the line predicts 18, error 20 %
    y[6] = 16.0  # group b at x = 4: the line predicts 14, error 12.5 %
    return pd.DataFrame({"g": g, "x": x, "y": y})


def test_scale_split():
    d = _tiny()
    fit, test = scale_split(d, "x", 2)
    assert fit.x.tolist() == [1, 2, 1, 2] and test.x.tolist() == [4, 8, 4, 8]
    fit, test = scale_split(d, "x", 2, test_min=8)
    assert test.x.tolist() == [8, 8] and len(fit) == 4
    _, test = scale_split(d, "x", 1, test_min=2, test_max=4)
    assert test.x.tolist() == [2, 4, 2, 4]
    with pytest.raises(ValueError, match="'z'"):
        scale_split(d, "z", 2)
    with pytest.raises(ValueError, match="test_min"):
        scale_split(d, "x", 4, test_min=2)


def test_extrapolation_errors_hand_checked():
    t = extrapolation_errors({"line": LinearRegression()}, _tiny(), "x", 2, "y", groups="g")
    get = {(r.group, str(r.factor)): r.mape for r in t.itertuples()}
    assert get[("a", "2.0")] == pytest.approx(0.0) and get[("a", "4.0")] == pytest.approx(20.0)
    assert get[("a", "all")] == pytest.approx(10.0)
    assert get[("b", "2.0")] == pytest.approx(12.5) and get[("b", "4.0")] == pytest.approx(20.0)
    assert get[("b", "all")] == pytest.approx(16.25)
    assert get[("median", "all")] == pytest.approx(13.125)
    assert get[("median", "4.0")] == pytest.approx(20.0) and get[("median", "2.0")] == pytest.approx(6.25)
    assert set(t.columns) == {"model", "group", "factor", "n", "mape"}


def test_select_by_extrapolation_and_intervals():
    d = _tiny()

    class Const(LinearRegression):
        def predict(self, X):
            return np.full(len(X), 5.0)

    best, scores = select_by_extrapolation({"const": Const(), "line": LinearRegression()}, d, "x", "y",
                                           splits=[(2, 4)], groups="g")
    assert best == "line" and scores.candidate.tolist() == ["line", "const"]
    assert scores.score.iloc[0] == pytest.approx(13.125)
    q = calibrate_extrapolation(LinearRegression(), d, "x", "y", splits=[(2, 4)], groups="g", alpha=0.5)
    # group b's scores |log(y/ŷ)| / d: x=4 (d=2): log(16/14)/2; x=8 (d=3): log(22.5/18)/3; rank ceil(3·0.5) = 2
    assert q["b"] == pytest.approx(max(np.log(16 / 14) / 2, np.log(22.5 / 18) / 3))
    lo, hi = extrapolation_interval([10.0], [8.0], 2, 0.1)
    assert distance([8.0], 2)[0] == pytest.approx(3.0)
    assert lo[0] == pytest.approx(10 * np.exp(-0.3)) and hi[0] == pytest.approx(10 * np.exp(0.3))
    assert interval_coverage([1, 2, 3], [0, 0, 0], [1.5, 2.5, 2.5]) == pytest.approx(2 / 3)


class _Const(LinearRegression):
    def __init__(self, value=5.0):
        self.value = value

    def fit(self, X, y):
        self.fitted_ = True
        return self

    def predict(self, X):
        return np.full(len(X), float(self.value))


def test_median_of_top_k_hand_checked():
    d = _tiny()
    cands = {"c12": _Const(12.0), "line": LinearRegression(), "c30": _Const(30.0)}
    names, scores, k_scores = select_median_of_top(cands, d, "x", "y", splits=[(2, 4)], groups="g")
    _, plain = select_by_extrapolation(cands, d, "x", "y", splits=[(2, 4)], groups="g")
    assert scores.equals(plain) and scores.candidate.tolist() == ["line", "c12", "c30"]
    test = d[d.x > 2]

    def median_mape(pred):  # the median over groups of each group's MAPE
        ape = 100 * np.abs(pred - test.y.to_numpy()) / test.y.to_numpy()
        return float(np.median([ape[(test.g == g).to_numpy()].mean() for g in ("a", "b")]))

    line = np.array([8.0, 16.0, 14.0, 18.0])  # the lines fitted on x <= 2, at x = 4 and 8 (group a, then b)
    assert k_scores.k.tolist() == [1, 2, 3]
    assert k_scores.score.tolist() == pytest.approx([median_mape(line), median_mape((line + 12) / 2),
                                                     median_mape(np.median([line, np.full(4, 12.0),
                                                                            np.full(4, 30.0)], axis=0))])
    assert names == ["line", "c12"][:int(k_scores.k[k_scores.score.idxmin()])]
    with pytest.raises(ValueError, match="perfkit model form"):  # a median form is made of perfkit forms
        MedianOfModels([(n, cands[n]) for n in ("line", "c12", "c30")]).fit(d[["x"]], d.y.to_numpy())
    with pytest.raises(ValueError, match="estimators"):
        MedianOfModels([]).fit(d[["x"]], d.y.to_numpy())


def test_median_of_phase_forms_writes_its_members():
    X, y = _synthetic(PhaseAwareStepModel(), PHASE, noise=0.01)
    m = MedianOfModels([("log", PhaseAwareStepModel()), ("sqrt", PhaseAwareStepModel(sync_form="sqrt"))]).fit(X, y)
    parts = [PhaseAwareStepModel().fit(X, y), PhaseAwareStepModel(sync_form="sqrt").fit(X, y)]
    assert np.allclose(m.predict(X), np.median([p.predict(X) for p in parts], axis=0))
    assert m.formula() == "median of: log: " + parts[0].formula() + " | sqrt: " + parts[1].formula()
    c = clone(m)
    assert not hasattr(c, "estimators_") and c.estimators[1][1] is not m.estimators[1][1]
    with pytest.raises(NotFittedError):
        c.predict(X)
    back = load_model(m.to_json())  # saved as JSON with every member's own document, read back by format
    assert isinstance(back, MedianOfModels) and np.array_equal(back.predict(X), m.predict(X))
    assert back.extrinsic_ == ["n_gpus", "n_nodes", "batch_per_gpu"] and back.n_parameters_ == m.n_parameters_
    doc = m.to_doc()
    doc["fitted"]["members"][1]["name"] = "other"
    with pytest.raises(ValueError, match="fitted.members"):
        load_model(json.dumps(doc))


def test_extrapolation_errors_hides_phases_from_predict():
    X, y = _synthetic(PhaseAwareStepModel(), PHASE, noise=0.01)
    d = X.assign(t_iter=y, job="j")
    t = extrapolation_errors({"phase": PhaseAwareStepModel()}, d, "n_gpus", 16, "t_iter",
                             predict_drop=["sync_time"])
    assert t[t.group == "median"].mape.max() < 5


def test_a_free_direction_gets_one_answer_on_every_blas(tmp_path):
    """Fitted on <= 4 GPUs, the multi-node synchronisation of a Pollux job is barely identified; the ridge picks
    one solution, so the fit under another BLAS kernel set (a fresh process) agrees to 1e-4."""
    import json
    import os
    import subprocess
    import sys

    code = ("import json, numpy as np\n"
            "from perfkit.data.pollux import load_pollux\n"
            "from perfkit.model.forms.stepmodels import PhaseAwareStepModel\n"
            "d = load_pollux(); d = d[(d.job == 'bert') & (d.n_gpus <= 4)]\n"
            "X = d[['n_gpus', 'n_nodes', 'batch_per_gpu', 'sync_time']]\n"
            "m = PhaseAwareStepModel(sync_form='sqrt', loss='huber', sync_weight=1.0).fit(X, d.t_iter.to_numpy())\n"
            "print(json.dumps([float(v) for v in m.params_]))\n")
    out = {}
    for core in ("Haswell", "Prescott"):
        env = dict(os.environ, OPENBLAS_CORETYPE=core)
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert res.returncode == 0, res.stderr
        out[core] = np.array(json.loads(res.stdout))
    np.testing.assert_allclose(out["Haswell"], out["Prescott"], rtol=1e-4, atol=1e-6)


ex = importlib.import_module("perfkit.model.uncertainty.extrapolation")  # perfkit.model.uncertainty.extrapolation is also a function


def _steps(seed=0):
    r = np.random.default_rng(seed)
    rows = []
    for K in [1, 2, 4, 8, 16, 32]:
        for m in [16, 32, 64]:
            tg, ts = 0.01 + 0.001 * m, 0 if K == 1 else 0.02 * np.log(K)
            rows.append(dict(n_gpus=K, n_nodes=max(1, K // 8), batch_per_gpu=m, sync_time=ts,
                             t=(tg + ts) * np.exp(r.normal(0, .03))))
    D = pd.DataFrame(rows)
    return D.drop(columns="t"), D.t.to_numpy()


def _jobs(seed=0):
    r = np.random.default_rng(seed)
    rows = [dict(job=j, n_gpus=K, n_nodes=max(1, K // 8), batch_per_gpu=m,
                 t=(0.01 + 0.001 * m + (0 if K == 1 else 0.02 * np.log(K))) * np.exp(r.normal(0, .03)))
            for j in "abc" for K in [1, 2, 4, 8, 16, 32, 64] for m in [16, 32]]
    return pd.DataFrame(rows)


def test_a_measured_phase_longer_than_the_step_is_refused_naming_column_and_row():
    X, y = _steps()
    with pytest.raises(ValueError, match=r"column 'sync_time': value [\d.e-]+ in row 0 is more than the row's step "
                                         r"time"):
        PhaseAwareStepModel().fit(X.assign(sync_time=np.maximum(X.sync_time, 2 * y)), y)


@pytest.mark.parametrize("kw, words", [(dict(sync_weight=1e200), "sync_weight: expected at most 1000"),
                                       (dict(f_scale=1e200), "f_scale: expected a number from 1e-06 to 100"),
                                       (dict(f_scale=1e-300), "f_scale: expected a number from 1e-06 to 100")])
def test_phase_settings_out_of_range_are_refused_by_name(kw, words):
    X, y = _steps()
    with pytest.raises(ValueError, match=words):
        PhaseAwareStepModel(**kw).fit(X, y)


@pytest.mark.parametrize("cls", [PolluxStepModel, PhaseAwareStepModel])
@pytest.mark.parametrize("gamma", [0.0, 1e-3, 1e6])
def test_a_saved_gamma_outside_its_fitted_bounds_is_refused(cls, gamma):
    X, y = _steps()
    doc = cls().fit(X, y).to_doc()
    assert np.allclose(load_model(json.dumps(doc)).predict(X), cls().fit(X, y).predict(X))
    doc["fitted"]["params"][-1] = gamma
    with pytest.raises(ValueError, match=r"fitted.params: expected numbers >= 0 and the last \(γ\) from 1 to 10"):
        load_model(json.dumps(doc))


@pytest.mark.parametrize("value", [0.0, np.nan, -1.0])
def test_a_bad_target_beyond_the_fit_rows_is_named_never_scored(value):
    F = _jobs()
    bad = F.assign(t=np.where(F.n_gpus == 64, value, F.t))
    with pytest.raises(ValueError, match=r"target column 't': (value \S+|missing or non-finite value nan) in row \d+"):
        ex.extrapolation_errors({"p": PolluxStepModel()}, bad, "n_gpus", 16, "t")
    with pytest.raises(ValueError, match=r"target column 't': (value \S+|missing or non-finite value nan) in row \d+"):
        ex.calibrate_transfer(PolluxStepModel(), bad, "n_gpus", 16, "t", [(4, 8, 16)])


def test_rows_without_a_group_are_refused_not_dropped():
    F = _jobs()
    F["job"] = F.job.map({"a": np.nan, "b": 2.0, "c": 3.0})
    with pytest.raises(ValueError, match=r"groups column 'job': missing value in row 0"):
        ex.extrapolation_errors({"p": PolluxStepModel()}, F, "n_gpus", 16, "t")


@pytest.mark.parametrize("kw, words", [
    (dict(candidates={"x": 5}), r"candidates\['x'\]: expected an estimator with fit and predict, got int"),
    (dict(predict_drop=("zz",)), "predict_drop column 'zz' not found"),
    (dict(predict_drop="n_nodes"), "predict_drop: expected a list of column names, got 'n_nodes'"),
])
def test_selection_arguments_are_checked_by_name(kw, words):
    cands = kw.pop("candidates", {"p": PolluxStepModel()})
    with pytest.raises(ValueError, match=words):
        ex.select_median_of_top(cands, _jobs(), "n_gpus", "t", [(4, 8, 16)], **kw)


@pytest.mark.parametrize("call, words", [
    (lambda: ex.extrapolation_interval([1.0, 2.0], [16, 32], 8, -1), "q: expected finite half-widths >= 0"),
    (lambda: ex.extrapolation_interval([1.0, 2.0], [16, 32], 8, np.nan), "q: expected finite half-widths >= 0"),
    (lambda: ex.extrapolation_interval([1.0, 2.0], [16, 32], 0, 0.1), "fit_max: expected a finite number > 0"),
    (lambda: ex.extrapolation_interval([-1.0, 2.0], [16, 32], 8, 0.1), "predicted: expected finite numbers > 0"),
    (lambda: ex.extrapolation_interval([1.0, 2.0], [-16, 32], 8, 0.1), "values: expected finite numbers > 0"),
    (lambda: ex.interval_coverage([], [], []), "y, lower, upper: expected one value each per row"),
    (lambda: ex.interval_coverage([1, 2, 3], [0], [5]), "y, lower, upper: expected one value each per row"),
    (lambda: ex.factor_splits(["a", "b"]), "values: expected a list of finite numbers > 0"),
    (lambda: ex.factor_splits({1: 2}), "values: expected a list of finite numbers > 0"),
    (lambda: ex.factor_splits([1, 10 ** 400]), "values: expected a list of finite numbers > 0"),
    (lambda: ex.scale_split(_jobs(), ["n_gpus"], 8), r"column: expected the name of the scale column, got \['n_gpus'\]"),
])
def test_interval_and_split_helpers_name_the_bad_argument(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_interval_helpers_still_answer_good_input():
    lo, hi = ex.extrapolation_interval([1.0, 2.0], [16, 32], 8, 0.1)
    assert np.allclose(lo, [np.exp(-0.2), 2 * np.exp(-0.3)]) and np.allclose(hi, [np.exp(0.2), 2 * np.exp(0.3)])
    assert ex.interval_coverage([1, 2, 3], [0, 0, 4], [5, 5, 5]) == pytest.approx(2 / 3)
