"""A third hostile trial, on the newest surfaces: the ridge log-linear form and its saved terms, the step models'
phases and saved γ, the extrapolation helpers and the form search's extrapolation arguments. Each bad input is one
ValueError naming the culprit (never a traceback from numpy/scipy/pandas, never a silent zero or NaN), and every
saved model that loads predicts what the fitted one did."""
import importlib
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from perfkit.model.forms.loglinear import LogLinearModel
from perfkit.model.persist import load_model
from perfkit.model.selection.search import search_forms
from perfkit.model.forms.stepmodels import PhaseAwareStepModel, PolluxStepModel

ex = importlib.import_module("perfkit.model.uncertainty.extrapolation")  # perfkit.model.uncertainty.extrapolation is also a function

RIDGE = dict(numeric=["b"], categorical=["c0", "c1", "c2"], extrinsic=["w"], select="ridge", cells=True)


def _frame(n=40, seed=0):
    r = np.random.default_rng(seed)
    X = pd.DataFrame({"b": r.choice([16., 32., 64., 128.], n), "w": r.choice([1., 2., 4., 8.], n),
                      "c0": r.choice(list("xy"), n), "c1": r.choice(list("xyz"), n), "c2": r.choice(list("xy"), n)})
    y = np.exp(0.3 * np.log(X.b) - 0.5 * np.log(X.w) + r.normal(0, .1, n)).to_numpy() + 0.01
    return X, y


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


@pytest.fixture(scope="module")
def ridge_doc():
    X, y = _frame(60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = LogLinearModel(**RIDGE).fit(X, y)
    return X, m, m.to_doc()


# ------------------------------------------------------------------------------ the ridge form's settings and levels
@pytest.mark.parametrize("penalty, words", [((1e307,) * 3, "penalty: expected three numbers from 0 to 1e"),
                                            ((10 ** 400, 0, 0), "penalty: expected three numbers from 0 to 1e")])
def test_a_ridge_penalty_out_of_range_is_refused_by_name(penalty, words):
    X, y = _frame()
    with pytest.raises(ValueError, match=words):
        LogLinearModel(**{**RIDGE, "penalty": penalty}).fit(X, y)


def test_a_zero_penalty_that_leaves_terms_undetermined_names_the_penalty():
    X = pd.DataFrame({"b": [16., 32., 64.], "c0": ["y", "x", "x"], "c1": ["x", "y", "x"], "c2": ["x", "x", "y"]})
    m = LogLinearModel(numeric=["b"], categorical=["c0", "c1", "c2"], select="ridge", cells=True, penalty=(0, 0, 0))
    with pytest.raises(ValueError, match="penalty: a penalty of 0 leaves the level pairs, pair slopes or cells "
                                         "undetermined"):
        m.fit(X, np.array([1., 2., 3.]))


@pytest.mark.parametrize("levels, shown", [([False, True], "level False (bool)"), ([1.0, np.inf], "level inf (float)"),
                                           ([pd.Timestamp("2020-01-01"), pd.Timestamp("2021-01-01")], "(Timestamp)"),
                                           ([(1, 2), (3, 4)], "level (1, 2) (tuple)")])
@pytest.mark.parametrize("select", ["ridge", "lasso"])
def test_a_level_a_saved_model_could_not_keep_is_refused_in_fit(levels, shown, select):
    X, y = _frame()
    X["c1"] = pd.Series([levels[i % 2] for i in range(len(X))], dtype=object)
    kw = RIDGE if select == "ridge" else {**RIDGE, "select": "lasso", "cells": False}
    with pytest.raises(ValueError, match=r"categorical column 'c1': level .*cannot be saved in the model's JSON") as e:
        LogLinearModel(**kw).fit(X, y)
    assert shown in str(e.value)


def test_a_prediction_that_underflows_to_zero_seconds_is_refused_naming_the_row():
    X, y = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = LogLinearModel(**RIDGE).fit(X, y)
        plain = LogLinearModel(numeric=["b"], extrinsic=["w"], select="none").fit(X, y)
    with pytest.raises(ValueError, match=r"X: the prediction for row 0 is not a finite time > 0"):
        m.predict(X.assign(w=1e200).iloc[:3])
    with pytest.raises(ValueError, match=r"X: the prediction for row 0 is not a finite time > 0"):
        plain.predict(X.assign(b=1e300).iloc[:3])
    assert np.all(m.predict(X) > 0)


# ------------------------------------------------------------------------------ the ridge form's JSON
def _tampered(doc, change):
    d = json.loads(json.dumps(doc))
    change(d)
    return json.dumps(d)


def test_an_untampered_ridge_model_round_trips_exactly(ridge_doc):
    X, m, doc = ridge_doc
    assert np.array_equal(load_model(json.dumps(doc)).predict(X), m.predict(X))


def _set(path, value):
    def change(d):
        *keys, last = path
        target = d
        for k in keys:
            target = target[k]
        target[last] = value
    return change


def _pop(path):
    def change(d):
        *keys, last = path
        target = d
        for k in keys:
            target = target[k]
        target.pop(last)
    return change


def _first_cell_index(doc):
    return next(i for i, t in enumerate(doc["fitted"]["terms"]) if t[0] == "level_cell")


@pytest.mark.parametrize("change, words", [
    (_set(("settings", "cells"), False), r"fitted.terms\[\d+\]: a level_cell term, which a fit with cells=False"),
    (_pop(("settings", "cells")), r"fitted.terms\[\d+\]: a level_cell term, which a fit with cells=False"),
    (_set(("fitted", "effective_df"), 1e6), r"fitted.effective_df: expected a finite number >= 0 and <= \d+"),
    (lambda d: d["fitted"]["categories"]["c0"].append("new"),
     r"fitted.categories\['c0'\]: the levels seen in fit are distinct and sorted"),
    (lambda d: d["fitted"]["categories"]["c0"].reverse(),
     r"fitted.categories\['c0'\]: the levels seen in fit are distinct and sorted"),
    (lambda d: d["fitted"]["terms"].__setitem__(0, ["level_pair", "c0", "y", "c0", "y"]),
     r"fitted.terms\[0\]: .* is not a term of known columns and levels \(distinct columns, not twice\)"),
    (lambda d: d["fitted"]["terms"].__setitem__(1, d["fitted"]["terms"][0]),
     r"fitted.terms\[1\]: .* is not a term of known columns and levels \(distinct columns, not twice\)"),
])
def test_a_tampered_ridge_model_is_one_error_naming_the_key(ridge_doc, change, words):
    _, _, doc = ridge_doc
    with pytest.raises(ValueError, match=words):
        load_model(_tampered(doc, change))


def test_a_lasso_file_with_ridge_terms_is_refused(ridge_doc):
    _, _, doc = ridge_doc

    def to_lasso(d):
        d["settings"].update(select="lasso", cells=False, penalty=None)
        d["fitted"].pop("effective_df")
    with pytest.raises(ValueError, match=r"fitted.terms\[\d+\]: a level_cell term, which a fit with cells=False"):
        load_model(_tampered(doc, to_lasso))


def test_an_intercept_that_underflows_is_refused_at_predict(ridge_doc):
    X, _, doc = ridge_doc
    with pytest.raises(ValueError, match="not a finite time > 0"):
        load_model(_tampered(doc, _set(("fitted", "intercept"), -1e300))).predict(X.iloc[:3])


# ------------------------------------------------------------------------------ step models
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


# ------------------------------------------------------------------------------ extrapolation helpers
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


# ------------------------------------------------------------------------------ the form search
KW = dict(numeric=["b"], categorical=["c0", "c1", "c2"], extrinsic=["w"], forms=["loglinear"], n_jobs=1)


def test_folds_too_small_for_a_candidate_name_the_folds():
    X, y = _frame()
    with pytest.raises(ValueError, match=r"cv: a candidate cannot be fitted on the 2 rows to fit of a fold"):
        search_forms(X.iloc[:4], y[:4], **KW, cv=2)
    with pytest.raises(ValueError, match=r"cv: no held-out row of fold 1 of 5 can be predicted by every candidate"):
        search_forms(X.iloc[:10].assign(c0=[f"l{i}" for i in range(10)]), y[:10], **KW)


@pytest.mark.parametrize("kw, words", [
    (dict(extrapolate=(["w"], 8)), r"extrapolate: expected \(column, fit_max\)"),
    (dict(extrapolate=("w", "x")), "extrapolate's fit_max: expected a finite number > 0, got 'x'"),
    (dict(extrapolate=("c0", 8)), "extrapolate column 'c0': non-numeric value"),
    (dict(extrapolate=("w", 8), predict_drop=["zz"]), "predict_drop column 'zz' not found"),
])
def test_extrapolation_arguments_are_refused_before_the_search_runs(kw, words, monkeypatch):
    import perfkit.model.selection.search as search

    def never(*a, **k):
        raise AssertionError("the CV ran before the arguments were checked")
    monkeypatch.setattr(search, "_score_fold", never)
    X, y = _frame()
    with pytest.raises(ValueError, match=words):
        search_forms(X, y, **KW, select="extrapolation", **kw)
