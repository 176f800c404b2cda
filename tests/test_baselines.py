"""Chapter 4 baselines (RF, SVR): accuracy on a known function, determinism, bad input."""
import numpy as np
import pandas as pd
import pytest
from sklearn.dummy import DummyRegressor

from perfkit.model.selection import baselines as bl

ROLES = dict(numeric=["k", "b"], categorical="fw", extrinsic="g")
FACTOR = {"A": 1.0, "B": 1.3, "C": 0.8}


def synthetic(n=300, seed=0):
    """t = 5 k^1.5 / (g b^0.9) times a framework factor, with 2 % multiplicative noise."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "k": rng.choice([1, 2, 4, 8], n),
            "b": rng.choice([16, 32, 64, 128, 256], n),
            "g": rng.choice([1, 2, 4], n),
            "fw": rng.choice(list(FACTOR), n),
        }
    )
    y = 5 * X["k"] ** 1.5 / (X["g"] * X["b"] ** 0.9) * X["fw"].map(FACTOR) * np.exp(rng.normal(0, 0.02, n))
    return X, y.rename("t")


@pytest.fixture(scope="module")
def split():
    X, y = synthetic()
    return bl.train_test_split_frame(X, y, test_size=100, random_state=0)


def test_compare_models_table_layout_and_rf_accuracy(split):
    X_tr, X_te, y_tr, y_te = split
    models = {
        "RF": bl.make_baseline("rf", **ROLES, random_state=0, n_estimators=100),
        "SVR": bl.make_baseline("svr", **ROLES),
        "mean": DummyRegressor(),
    }
    table = bl.compare_models(models, X_tr, y_tr, X_te, y_te)
    assert list(table.columns) == ["MAPE", "MAE", "MSE", "RMSE", "R2", "fit_seconds"]
    assert list(table.index) == ["RF", "SVR", "mean"] and table.index.name == "model"
    assert np.isfinite(table.to_numpy()).all()
    assert table.loc["RF", "R2"] > 0.8
    assert table.loc["SVR", "R2"] > 0.8
    assert table.loc["mean", "R2"] < 0.05  # a constant predictor explains nothing
    assert table.loc["RF", "MAPE"] < table.loc["mean", "MAPE"]
    np.testing.assert_allclose(table["RMSE"] ** 2, table["MSE"])
    assert (table["fit_seconds"] >= 0).all()
    # the caller's estimators are cloned, not fitted
    assert not hasattr(models["RF"].named_steps["model"], "estimators_")


def test_same_random_state_same_predictions(split):
    X_tr, X_te, y_tr, _ = split
    preds = [
        bl.make_baseline("rf", **ROLES, random_state=7, n_estimators=30).fit(X_tr, y_tr).predict(X_te)
        for _ in range(2)
    ]
    np.testing.assert_array_equal(preds[0], preds[1])
    other = bl.make_baseline("rf", **ROLES, random_state=8, n_estimators=30).fit(X_tr, y_tr).predict(X_te)
    assert not np.array_equal(preds[0], other)


def test_pipeline_structure_and_params():
    rf = bl.make_baseline("rf", **ROLES, random_state=3)
    assert list(rf.named_steps) == ["check", "features", "model"]
    assert rf.named_steps["model"].n_estimators == 300 and rf.named_steps["model"].random_state == 3
    check = rf.named_steps["check"]
    assert check.numeric == ("k", "b") and check.categorical == ("fw",) and check.extrinsic == ("g",)
    svr = bl.make_baseline("svr", **ROLES, C=10.0, epsilon=0.05)
    inner = svr.named_steps["model"].regressor
    assert inner.kernel == "rbf" and inner.C == 10.0 and inner.epsilon == 0.05
    # log target is the SVR default and optional for RF
    assert bl.make_baseline("svr", **ROLES, log_target=False).named_steps["model"].regressor.C == 1.0
    rf_log = bl.make_baseline("rf", **ROLES, log_target=True, n_estimators=10)
    assert rf_log.named_steps["check"].positive_target


def test_svr_predicts_finite_values_and_handles_no_categoricals(split):
    X_tr, X_te, y_tr, _ = split
    pred = bl.make_baseline("svr", **ROLES).fit(X_tr, y_tr).predict(X_te)
    assert pred.shape == (len(X_te),) and np.isfinite(pred).all() and (pred > 0).all()
    num_only = bl.make_baseline("svr", numeric="k,b", extrinsic="g", log_target=False).fit(X_tr, y_tr)
    assert np.isfinite(num_only.predict(X_te)).all()


def test_unseen_category_at_predict_names_column(split):
    X_tr, X_te, y_tr, _ = split
    pipe = bl.make_baseline("rf", **ROLES, random_state=0, n_estimators=10).fit(X_tr, y_tr)
    bad = X_te.copy()
    bad.loc[bad.index[2], "fw"] = "JAX"
    with pytest.raises(ValueError, match=r"categorical column 'fw': unseen category 'JAX' in row"):
        pipe.predict(bad)
    with pytest.raises(ValueError, match=r"model 'RF': categorical column 'fw': unseen category 'JAX'"):
        bl.compare_models({"RF": pipe}, X_tr, y_tr, bad, np.ones(len(bad)))


def test_misspelt_or_bad_columns_name_the_column(split):
    X_tr, _, y_tr, _ = split
    pipe = bl.make_baseline("svr", **ROLES)
    with pytest.raises(ValueError, match=r"extrinsic column 'g' not found"):
        pipe.fit(X_tr.rename(columns={"g": "gpus"}), y_tr)
    with pytest.raises(ValueError, match=r"numeric column 'bb' not found; did you mean 'b'"):
        bl.make_baseline("rf", numeric=["k", "bb"], extrinsic="g").fit(X_tr, y_tr)
    bad = X_tr.astype({"b": object})
    bad.loc[bad.index[4], "b"] = "big"
    with pytest.raises(ValueError, match=r"numeric column 'b': non-numeric value 'big' in row"):
        pipe.fit(bad, y_tr)
    with pytest.raises(ValueError, match=r"y: value 0 in row \d+ must be > 0"):
        pipe.fit(X_tr, y_tr.where(y_tr.index != y_tr.index[0], 0.0))


def test_gradient_boosting_fits_log_times_deterministically(split):
    X_tr, X_te, y_tr, _ = split
    a = bl.make_baseline("gb", **ROLES, random_state=0).fit(X_tr, y_tr).predict(X_te)
    b = bl.make_baseline("gb", **ROLES, random_state=0).fit(X_tr, y_tr).predict(X_te)
    assert np.array_equal(a, b) and (a > 0).all()
    pipe = bl.make_baseline("gb", **ROLES)
    assert type(pipe.named_steps["model"]).__name__ == "TransformedTargetRegressor"


def test_make_baseline_argument_errors():
    with pytest.raises(ValueError, match=r"kind: expected one of \('rf', 'svr', 'gb'\), got 'gbm'"):
        bl.make_baseline("gbm", **ROLES)
    with pytest.raises(ValueError, match=r"RandomForestRegressor has no parameter\(s\) \['n_trees'\]"):
        bl.make_baseline("rf", **ROLES, n_trees=5)
    with pytest.raises(ValueError, match=r"no columns given"):
        bl.make_baseline("rf")
    with pytest.raises(ValueError, match=r"column 'g' is given twice"):
        bl.make_baseline("rf", numeric="g", extrinsic="g")
    with pytest.raises(ValueError, match=r"log_target"):
        bl.make_baseline("svr", **ROLES, log_target="yes")


def test_compare_models_errors(split):
    X_tr, X_te, y_tr, y_te = split
    with pytest.raises(ValueError, match=r"models: expected a non-empty dict"):
        bl.compare_models({}, X_tr, y_tr, X_te, y_te)
    with pytest.raises(ValueError, match=r"models\['x'\]: .* no fit\(\) method"):
        bl.compare_models({"x": object()}, X_tr, y_tr, X_te, y_te)
    with pytest.raises(ValueError, match=r"y_test: 99 values for 100 rows of X"):
        bl.compare_models({"m": DummyRegressor()}, X_tr, y_tr, X_te, y_te[:-1])
    with pytest.raises(ValueError, match=r"X_test: expected a pandas DataFrame"):
        bl.compare_models({"m": DummyRegressor()}, X_tr, y_tr, X_te.to_numpy(), y_te)


def test_train_test_split_frame_sizes_and_determinism():
    X, y = synthetic(n=1500)
    X_tr, X_te, y_tr, y_te = bl.train_test_split_frame(X, y, test_size=500)
    assert (len(X_tr), len(X_te), len(y_tr), len(y_te)) == (1000, 500, 1000, 500)
    assert isinstance(y_te, pd.Series) and (y_te.index == X_te.index).all()
    assert set(X_tr.index).isdisjoint(X_te.index) and len(set(X_tr.index) | set(X_te.index)) == 1500
    again = bl.train_test_split_frame(X, y, test_size=500)
    assert (again[1].index == X_te.index).all()
    X_tr, X_te, _, _ = bl.train_test_split_frame(X, y.to_numpy(), test_size=0.4)
    assert (len(X_tr), len(X_te)) == (900, 600)


@pytest.mark.parametrize(
    "test_size, message",
    [
        (0, r"test_size: 0 rows leaves an empty part"),
        (10, r"test_size: 10 rows leaves an empty part of 10 rows"),
        (1.0, r"test_size: fraction 1.0 must be strictly between 0 and 1"),
        (-0.2, r"test_size: fraction -0.2"),
        ("half", r"test_size: expected a fraction"),
        (True, r"test_size: expected a fraction"),
    ],
)
def test_train_test_split_frame_validates_test_size(test_size, message):
    X, y = synthetic(n=10)
    with pytest.raises(ValueError, match=message):
        bl.train_test_split_frame(X, y, test_size=test_size)


def test_train_test_split_frame_validates_inputs():
    X, y = synthetic(n=10)
    with pytest.raises(ValueError, match=r"y: 9 values for 10 rows"):
        bl.train_test_split_frame(X, y[:-1])
    with pytest.raises(ValueError, match=r"X: expected a pandas DataFrame"):
        bl.train_test_split_frame(X.to_numpy(), y)


def test_compare_models_scores_prefitted_models_without_refitting():
    from sklearn.dummy import DummyRegressor

    from perfkit.model.selection.baselines import compare_models

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(1, 2, 40)})
    y = 2 * X["a"].to_numpy()
    fitted = DummyRegressor(strategy="constant", constant=3.0).fit(X, y)
    fitted.fit_time_ = 1.25
    out = compare_models({"pre": fitted, "fresh": DummyRegressor()}, X[:30], y[:30], X[30:], y[30:],
                         prefitted={"pre"})
    assert out.loc["pre", "fit_seconds"] == 1.25
    assert out.loc["pre", "MAE"] == pytest.approx(np.mean(np.abs(y[30:] - 3.0)))
    assert out.loc["fresh", "MAE"] == pytest.approx(np.mean(np.abs(y[30:] - y[:30].mean())))
