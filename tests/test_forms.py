"""LogLinearModel (perfkit.model.forms.loglinear) and conformal intervals (perfkit.model.uncertainty.conformal)."""
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from perfkit.model.forms.loglinear import LogLinearModel
from perfkit.model.forms.logfit import lasso_mask
from perfkit.model.persist import load_model
from perfkit.model.uncertainty.conformal import ConformalRegressor, ExtrapolationWarning, coverage_of
from tests.frames import ridge_frame as _frame

CH4 = "data/measured/pytorch-cpu/ch4_lenet5.csv"

# the synthetic law: t = 3 · filters^0.8 · batch^-1 · gpus^-0.6 · exp(0.15·log gpus·log batch) · e^κ(act)
TRUE_POWERS = {"log(filters)": 0.8, "log(batch)": -1.0, "log(gpus)": -0.6, "log(gpus)·log(batch)": 0.15}
TRUE_LEVELS = {"act=sigmoid": 0.4, "act=tanh": 0.2}  # relu, the first level, is the reference
ROLES = dict(numeric=["kernel", "filters"], categorical="act", extrinsic=["gpus", "batch"])


def _synthetic(n=600, seed=0, noise=0.05):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"kernel": rng.choice([2, 3, 4, 5], n), "filters": rng.choice([4, 8, 16, 32, 64], n),
                      "act": rng.choice(["relu", "sigmoid", "tanh"], n), "gpus": rng.choice([1, 2, 3, 4], n),
                      "batch": rng.choice([8, 16, 32, 64, 128], n)})
    X.index = [f"cfg{i}" for i in range(n)]
    lf, lb, lg = (np.log(X[c].to_numpy(float)) for c in ("filters", "batch", "gpus"))
    eta = np.log(3.0) + 0.8 * lf - 1.0 * lb - 0.6 * lg + 0.15 * lg * lb + X["act"].map(
        {"relu": 0.0, **{k.split("=")[1]: v for k, v in TRUE_LEVELS.items()}}).to_numpy()
    return X, np.exp(eta + noise * rng.standard_normal(n))  # 5 % log-normal noise


@pytest.fixture(scope="module")
def synthetic():
    X, y = _synthetic()
    return LogLinearModel(**ROLES).fit(X, y), X, y


@pytest.fixture(scope="module")
def ch4():
    from perfkit.data.measured import load_steps, thesis_split
    from perfkit.schema import ROLES as SCHEMA_ROLES, resolve

    X, y, _ = load_steps(resolve(CH4), target="epoch_time", roles="ch4")
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=1000, n_test=500, seed=0)
    model = LogLinearModel(**SCHEMA_ROLES["ch4"]).fit(X_fit, y_fit)
    return model, X_fit, X_test, y_fit, y_test


# ------------------------------------------------------------------------------- (a) synthetic law
def test_recovers_known_powers_and_terms(synthetic):
    m, X, y = synthetic
    coef = dict(zip(m.terms_, m.coef_))
    assert set(TRUE_POWERS) | set(TRUE_LEVELS) <= set(m.terms_)
    for term, power in TRUE_POWERS.items():
        assert coef[term] == pytest.approx(power, abs=0.05), term
    assert coef.get("log(kernel)", 0.0) == pytest.approx(0.0, abs=0.05)  # kernel has no effect
    # a level's constant is its effect where every log term is 0 (x = 1); its effect where the data are is what
    # the model must get right: the ratio of predictions at the data's centre
    centre = pd.DataFrame({"kernel": [3], "filters": [16], "gpus": [2], "batch": [32]})
    base = m.predict(centre.assign(act="relu"))[0]
    for term, kappa in TRUE_LEVELS.items():
        ratio = m.predict(centre.assign(act=term.split("=")[1]))[0] / base
        assert np.log(ratio) == pytest.approx(kappa, abs=0.03), term
    # local powers at the centre: d log t / d log x = the power + the interaction's share
    local = m.powers_at(centre.assign(act="tanh")).iloc[0]
    assert local["batch"] == pytest.approx(-1.0 + 0.15 * np.log(2), abs=0.05)
    assert local["gpus"] == pytest.approx(-0.6 + 0.15 * np.log(32), abs=0.05)
    assert local["filters"] == pytest.approx(0.8, abs=0.05) and local["kernel"] == pytest.approx(0.0, abs=0.05)
    assert m.n_terms_ == len(m.terms_) == len(m.coef_) < m.n_candidates_
    assert m.residual_std_ == pytest.approx(0.05, abs=0.01)


def test_fewer_terms_without_interactions(synthetic):
    m, X, y = synthetic
    plain = LogLinearModel(**ROLES, interactions=False).fit(X, y)
    assert plain.n_candidates_ < m.n_candidates_ and plain.n_terms_ < m.n_terms_
    assert not any("·log(" in t or "^2" in t for t in plain.terms_ if t.startswith("log("))
    neither = LogLinearModel(**ROLES, interactions=False, category_terms=False, select="none").fit(X, y)
    assert neither.terms_ == ["log(kernel)", "log(filters)", "log(gpus)", "log(batch)", "act=sigmoid", "act=tanh"]


def test_reports(synthetic):
    m, X, y = synthetic
    p = m.params_
    assert list(p.columns) == ["term", "kind", "coefficient", "power", "factor"]
    assert p["term"].iloc[0] == "(intercept)" and len(p) == m.n_terms_ + 1
    row = p.set_index("term").loc["log(filters)"]
    assert row["kind"] == "power" and row["power"] == row["coefficient"]
    tanh = p.set_index("term").loc["act=tanh"]
    assert tanh["kind"] == "level" and tanh["factor"] == pytest.approx(np.exp(tanh["coefficient"]))
    assert np.isnan(tanh["power"]) and np.isnan(row["factor"])
    f = m.formula()
    assert re.match(r"t = 3\.0\d · kernel\^\S+ · filters\^0\.[78]\d* · gpus\^-0\.[56]\d* · batch\^-[01]\.?\d* · "
                    r"exp\(0\.[34]\d*·\[act=sigmoid\]\) · exp\(0\.[12]\d*·\[act=tanh\]\) · exp\(", f), f
    assert "·log(gpus)·log(batch))" in f
    s = m.summary()
    assert "log(gpus)·log(batch)" in s and "median" in s and f"{m.n_terms_} kept of {m.n_candidates_}" in s


def test_deterministic(synthetic):
    m, X, y = synthetic
    again = LogLinearModel(**ROLES).fit(X, y)
    assert again.terms_ == m.terms_ and np.array_equal(again.coef_, m.coef_)


# -------------------------------------------------------------------------------- (b) measured ch4
def test_ch4_beats_random_forest(ch4):
    from perfkit.model.selection.baselines import make_baseline
    from perfkit.model.selection.metrics import mape
    from perfkit.schema import ROLES as SCHEMA_ROLES

    model, X_fit, X_test, y_fit, y_test = ch4
    ours = mape(y_test, model.predict(X_test))
    rf = make_baseline("rf", **SCHEMA_ROLES["ch4"], random_state=0).fit(X_fit, y_fit)
    theirs = mape(y_test, rf.predict(X_test))
    print(f"ch4 held-out MAPE: LogLinearModel {ours:.2f} %, random forest {theirs:.2f} %")
    assert ours < 15.0
    assert ours < theirs


# ------------------------------------------------------------------------------------ (c) JSON
def test_json_round_trip(synthetic, ch4, tmp_path):
    for m, X in ((synthetic[0], synthetic[1]), (ch4[0], ch4[2])):
        back = LogLinearModel.from_json(m.to_json())
        assert np.array_equal(back.predict(X), m.predict(X))
        assert back.terms_ == m.terms_ and back.formula() == m.formula() and back.get_params() == m.get_params()
        path = tmp_path / "model.json"
        m.save(path)
        assert json.loads(path.read_text())["format"] == "perfkit.LogLinearModel"
        assert np.array_equal(LogLinearModel.load(path).predict(X), m.predict(X))


def test_json_rejects_bad_documents(synthetic):
    doc = json.loads(synthetic[0].to_json())
    with pytest.raises(ValueError, match="not a perfkit.LogLinearModel"):
        LogLinearModel.from_json(json.dumps({**doc, "format": "perfkit.GenericPerformanceModel"}))
    bad = json.loads(json.dumps(doc))
    bad["fitted"]["terms"][0] = ["power", "nonexistent"]
    with pytest.raises(ValueError, match=r"fitted\.terms\[0\]"):
        LogLinearModel.from_json(json.dumps(bad))
    bad = json.loads(json.dumps(doc))
    bad["fitted"]["coef"] = bad["fitted"]["coef"][:-1]
    with pytest.raises(ValueError, match=r"fitted\.coef"):
        LogLinearModel.from_json(json.dumps(bad))


# ------------------------------------------------------------------------------- (d) bad input
def test_bad_input(synthetic):
    m, X, y = synthetic
    Xbad = X.copy()
    Xbad.loc["cfg7", "batch"] = 0
    with pytest.raises(ValueError, match=r"extrinsic column 'batch'.*row 'cfg7'.*must be > 0"):
        LogLinearModel(**ROLES).fit(Xbad, y)
    with pytest.raises(ValueError, match=r"'batch'.*row 'cfg7'"):
        m.predict(Xbad)
    with pytest.raises(ValueError, match="must be > 0"):
        LogLinearModel(**ROLES).fit(X, -y)
    with pytest.raises(ValueError, match=r"categorical column 'act': unseen category 'gelu'"):
        m.predict(X.iloc[:3].assign(act="gelu"))
    with pytest.raises(ValueError, match=r"extrinsic column 'gpus' not found"):
        m.predict(X.drop(columns="gpus"))


@pytest.mark.parametrize("coverage", [0, 1, 1.5, -0.1, True, "0.9", float("nan")])
def test_bad_coverage(synthetic, coverage):
    m, X, y = synthetic
    conf = ConformalRegressor(LogLinearModel(**ROLES, select="none"), method="split").fit(X, y)
    with pytest.raises(ValueError, match="^coverage: expected a number strictly between 0 and 1"):
        conf.predict_interval(X.iloc[:5], coverage=coverage)


def test_bad_conformal_settings(synthetic):
    m, X, y = synthetic
    for kw, name in ((dict(method="jackknife"), "method"), (dict(n_splits=1), "n_splits"),
                     (dict(calibration=1.0), "calibration"), (dict(random_state=None), "random_state")):
        with pytest.raises(ValueError, match=f"^{name}: "):
            ConformalRegressor(m, **kw).fit(X, y)
    with pytest.raises(ValueError, match="^estimator: "):
        ConformalRegressor(object()).fit(X, y)


# ------------------------------------------------------------------------------- (e) conformal
@pytest.fixture(scope="module")
def ch4_conformal(ch4):
    model, X_fit, X_test, y_fit, y_test = ch4
    return {method: ConformalRegressor(LogLinearModel(**model.get_params()), method=method).fit(X_fit, y_fit)
            for method in ("cv+", "studentized", "split")}


@pytest.mark.parametrize("method", ["cv+", "studentized", "split"])
def test_ch4_interval_coverage(ch4, ch4_conformal, method):
    model, X_fit, X_test, y_fit, y_test = ch4
    conf = ch4_conformal[method]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExtrapolationWarning)  # the held-out rows lie inside the fitted ranges
        iv = conf.predict_interval(X_test, coverage=0.9)
    assert list(iv.columns) == ["predicted", "lower", "upper", "extrapolated"]
    assert iv.index.equals(X_test.index) and not iv["extrapolated"].any()
    assert (iv["lower"] < iv["upper"]).all() and (iv["lower"] > 0).all()
    covered = coverage_of(iv, y_test)
    print(f"ch4 {method} 90 % intervals cover {covered:.1%} of {len(y_test)} held-out rows; "
          f"median width factor {np.median(iv['upper'] / iv['lower']):.2f}")
    assert 0.85 <= covered <= 0.95
    if method == "split":
        # symmetric in log space around the model fitted on the rows not held out
        assert np.allclose(np.log(iv["upper"] / iv["predicted"]), np.log(iv["predicted"] / iv["lower"]))
        assert conf.n_calibration_ == 250 and len(conf.estimators_) == 1
    elif method == "studentized":
        # around the model on all rows, wider by √(1 + h) where the model has less data
        half = np.log(iv["upper"] / iv["predicted"])
        assert np.allclose(half, np.log(iv["predicted"] / iv["lower"]))
        assert np.allclose(half / np.sqrt(1 + conf.estimator_.leverage(X_test)), half.iloc[0]
                           / np.sqrt(1 + conf.estimator_.leverage(X_test.iloc[:1]))[0])
        assert conf.n_calibration_ == len(X_fit) and len(conf.estimators_) == 1
        assert np.array_equal(conf.predict(X_test), model.predict(X_test))
    else:
        assert conf.n_calibration_ == len(X_fit) and len(conf.estimators_) == 5
        assert np.array_equal(conf.predict(X_test), model.predict(X_test))  # the full model is the one we fitted
    narrow = conf.predict_interval(X_test, coverage=0.5)
    assert (narrow["upper"] <= iv["upper"]).all() and (narrow["lower"] >= iv["lower"]).all()


def test_coverage_beyond_the_data_gives_infinite_intervals(ch4, ch4_conformal):
    X_test = ch4[2]
    iv = ch4_conformal["split"].predict_interval(X_test.iloc[:3], coverage=0.999)  # ⌈251·0.999⌉ = 251 > 250
    assert np.isinf(iv["upper"]).all() and (iv["lower"] == 0).all()


def test_extrapolation_flag_and_warning(ch4, ch4_conformal):
    X_test = ch4[2]
    conf = ch4_conformal["cv+"]
    assert conf.ranges_["workers"] == (1.0, 3.0)
    rows = X_test.iloc[:4].copy()
    rows.iloc[1, rows.columns.get_loc("workers")] = 8
    flags = conf.extrapolated(rows)
    assert flags.dtype == bool and flags.index.equals(rows.index) and flags.tolist() == [False, True, False, False]
    with pytest.warns(ExtrapolationWarning, match=r"1 of 4 rows.*'workers': 1 above the fitted max 3") as record:
        iv = conf.predict_interval(rows)
    assert len(record) == 1
    assert iv["extrapolated"].tolist() == [False, True, False, False]

    unseen = X_test.iloc[:2].assign(activation=["relu", "gelu"])
    assert conf.extrapolated(unseen).tolist() == [False, True]
    # the warning comes first; then the model refuses the level it has never seen
    with warnings.catch_warnings(record=True) as record, pytest.raises(ValueError, match="unseen category 'gelu'"):
        warnings.simplefilter("always")
        conf.predict_interval(unseen)
    assert [w.category for w in record] == [ExtrapolationWarning]
    assert "'activation': unseen level 'gelu'" in str(record[0].message)


def test_extrapolation_without_roles():
    """An estimator without column roles: every numeric column is checked for range, the others for levels."""
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.uniform(1, 2, 60), "b": rng.uniform(1, 2, 60)})
    y = np.exp(0.5 * np.log(X["a"]) + 0.05 * rng.standard_normal(60)).to_numpy()
    log_model = make_pipeline(FunctionTransformer(np.log), LinearRegression())
    from sklearn.compose import TransformedTargetRegressor

    est = TransformedTargetRegressor(log_model, func=np.log, inverse_func=np.exp)
    conf = ConformalRegressor(est).fit(X, y)
    assert set(conf.ranges_) == {"a", "b"} and conf.levels_ == {}
    assert conf.extrapolated(pd.DataFrame({"a": [1.5, 0.5], "b": [1.5, 1.5]})).tolist() == [False, True]
    with pytest.raises(ValueError, match=r"y: 2 values for 3 intervals"):
        coverage_of(conf.predict_interval(X.iloc[:3]), y[:2])


def test_pair_slopes_find_a_pair_whose_power_differs_and_round_trip(tmp_path):
    """One (act, site) pair scales differently with gpus: the pair-slope term finds it, its parents are kept, a pair
    with one value of x gets no slope, and the model saves and loads as JSON."""
    rng = np.random.default_rng(1)
    n = 800
    X = pd.DataFrame({"act": rng.choice(["relu", "sigmoid", "tanh"], n), "site": rng.choice(["a", "b", "c"], n),
                      "gpus": rng.choice([1, 2, 4, 8], n), "batch": rng.choice([8, 16, 32, 64], n)})
    X.loc[(X["act"] == "tanh") & (X["site"] == "b"), "batch"] = 16  # this pair: one batch size only
    lg, lb = np.log(X["gpus"].to_numpy(float)), np.log(X["batch"].to_numpy(float))
    odd = ((X["act"] == "sigmoid") & (X["site"] == "c")).to_numpy()
    y = np.exp(0.5 - 0.7 * lg + 0.9 * lb + 0.8 * odd * lg + 0.02 * rng.standard_normal(n))
    roles = dict(categorical=["act", "site"], extrinsic=["gpus", "batch"])
    plain = LogLinearModel(**roles, category_pairs=True).fit(X, y)
    m = LogLinearModel(**roles, category_pairs=True, pair_slopes=True).fit(X, y)
    assert "act=sigmoid&site=c·log(gpus)" in m.terms_
    coef = dict(zip(m.terms_, m.coef_))
    assert coef["act=sigmoid&site=c·log(gpus)"] == pytest.approx(0.8, abs=0.02)
    assert {"act=sigmoid&site=c", "act=sigmoid·log(gpus)", "site=c·log(gpus)"} <= set(m.terms_)  # hierarchy
    assert not any(t.startswith("act=tanh&site=b·log(batch)") for t in m.terms_)  # batch does not vary there
    err = lambda model: np.median(np.abs(model.predict(X) / y - 1))  # noqa: E731
    assert err(m) < 0.5 * err(plain)
    path = tmp_path / "m.json"
    m.save(path)
    back = LogLinearModel.load(path)
    assert back.terms_ == m.terms_ and np.allclose(back.predict(X), m.predict(X), rtol=1e-12)
    assert "[act=sigmoid]·[site=c]·log(gpus)" in m.formula()
    with pytest.raises(ValueError, match="pair_slopes: needs category_terms=True and category_pairs=True"):
        LogLinearModel(**roles, pair_slopes=True).fit(X, y)


# ------------------------------------------------------------------------------- (f) leverage, studentised intervals
def _many_levels(n, seed, levels=30):
    """t = size^0.5 · e^κ(cfg) · size^σ(cfg) with 30 configurations: 59 terms, few rows per term."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"size": rng.choice([1, 2, 4, 8, 16], n), "cfg": rng.choice([f"c{i:02d}" for i in range(levels)], n)})
    kappa, sigma = np.random.default_rng(99).normal(0, 0.5, levels), np.random.default_rng(98).normal(0, 0.2, levels)
    k = X["cfg"].str[1:].astype(int).to_numpy()
    eta = (0.5 + sigma[k]) * np.log(X["size"].to_numpy(float)) + kappa[k]
    return X, np.exp(eta + 0.1 * rng.standard_normal(n))


def test_leverage_is_the_hat_matrix_of_the_least_squares_fit(synthetic):
    """On the rows of fit the leverages are the diagonal of the hat matrix (they sum to terms + 1); on a new row
    the same quadratic form, computed here from the design directly."""
    m, X, y = synthetic
    m = LogLinearModel(**ROLES, select="none").fit(X, y)
    G = np.column_stack([np.ones(len(X)), m._design(X, m.term_specs_)])
    H = G @ np.linalg.solve(G.T @ G, G.T)
    h = m.leverage(X)
    assert np.allclose(h, np.diag(H), rtol=1e-7, atol=1e-12)
    assert h.sum() == pytest.approx(m.n_terms_ + 1, rel=1e-8)
    new = X.iloc[:5].assign(filters=[3, 100, 16, 16, 500], batch=[8, 8, 300, 32, 32])  # beyond the data: larger h
    g = np.column_stack([np.ones(5), m._design(new, m.term_specs_)])
    assert np.allclose(m.leverage(new), np.einsum("ij,ij->i", g, np.linalg.solve(G.T @ G, g.T).T), rtol=1e-7)
    assert m.leverage(new)[4] > 10 * np.median(h)
    back = LogLinearModel.from_json(m.to_json())
    assert np.array_equal(back.leverage(new), m.leverage(new))


def test_studentized_scores_are_fold_errors_over_root_one_plus_leverage():
    from sklearn.model_selection import KFold

    X, y = _many_levels(150, 1)
    est = LogLinearModel(numeric=["size"], categorical=["cfg"], select="none", interactions=False)
    conf = ConformalRegressor(est, method="studentized", n_splits=5).fit(X, y)
    tr, te = next(iter(KFold(5, shuffle=True, random_state=0).split(X)))
    fold0 = LogLinearModel(**est.get_params()).fit(X.iloc[tr], y[tr])
    ok = X["cfg"].iloc[te].isin(set(X["cfg"].iloc[tr])).to_numpy()
    rows = X.iloc[te[ok]]
    by_hand = np.abs(np.log(y[te[ok]] / fold0.predict(rows))) / np.sqrt(1 + fold0.leverage(rows))
    assert np.allclose(conf.scores_[conf.fold_ == 0], by_hand, rtol=1e-10)
    assert len(conf.estimators_) == 1 and len(json.loads(conf.to_json())["fitted"]["estimators"]) == 0
    back = ConformalRegressor.from_json(conf.to_json())
    assert back.predict_interval(X.head(20), 0.9).equals(conf.predict_interval(X.head(20), 0.9))


def test_studentized_intervals_hold_their_coverage_where_cv_plus_is_too_wide():
    """59 terms on 150 rows: a fold model (120 rows) errs more than the model on all rows, so CV+ intervals are
    too wide (about 96 % inside over four data sets); scaled by the leverage they hold about 90 %."""
    est = LogLinearModel(numeric=["size"], categorical=["cfg"], select="none", interactions=False)
    inside = {"cv+": [], "studentized": []}
    for seed in (1, 3, 5, 7):
        X, y = _many_levels(150, seed)
        Xt, yt = _many_levels(4000, 100 + seed)
        for method in inside:
            conf = ConformalRegressor(est, method=method).fit(X, y)
            ok = Xt["cfg"].isin(set(X["cfg"])).to_numpy().copy()  # a level no row to fit has: no prediction
            if method == "cv+":
                from sklearn.model_selection import KFold

                for tr, _ in KFold(5, shuffle=True, random_state=0).split(X):
                    ok &= Xt["cfg"].isin(set(X["cfg"].iloc[tr])).to_numpy()
            inside[method].append(coverage_of(conf.predict_interval(Xt[ok], 0.9), yt[ok]))
    mean = {k: float(np.mean(v)) for k, v in inside.items()}
    print("mean coverage of 90 % intervals over 4 data sets:", {k: round(v, 3) for k, v in mean.items()})
    assert mean["cv+"] > 0.95
    assert 0.87 <= mean["studentized"] <= 0.93


def test_leverage_json_is_checked():
    X, y = _many_levels(60, 2, levels=4)
    m = LogLinearModel(numeric=["size"], categorical=["cfg"], select="none").fit(X, y)
    doc = json.loads(m.to_json())
    doc["fitted"]["leverage"]["scale"][0] = 0.0
    with pytest.raises(ValueError, match=r"fitted.leverage: expected \{n, center, scale, basis\}"):
        LogLinearModel.from_json(json.dumps(doc))
    doc = json.loads(m.to_json())
    del doc["fitted"]["leverage"]
    with pytest.raises(ValueError, match=r"fitted: 'leverage' is missing"):
        LogLinearModel.from_json(json.dumps(doc))


# ------------------------------------------------------------------------------- (g) ridge fits with cells
def _cells(n=900, seed=3, noise=0.03):
    """Three categorical columns; one cell (sigmoid, b, x) runs 1.8× slower than its levels and pairs say."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"act": rng.choice(["relu", "sigmoid", "tanh"], n), "site": rng.choice(["a", "b", "c"], n),
                      "prec": rng.choice(["x", "y"], n), "gpus": rng.choice([1, 2, 4, 8], n),
                      "batch": rng.choice([8, 16, 32, 64], n)})
    lg, lb = np.log(X["gpus"].to_numpy(float)), np.log(X["batch"].to_numpy(float))
    odd = ((X["act"] == "sigmoid") & (X["site"] == "b") & (X["prec"] == "x")).to_numpy()
    eta = 0.5 - 0.7 * lg + 0.9 * lb + 0.3 * (X["act"] == "tanh").to_numpy() + np.log(1.8) * odd
    return X, np.exp(eta + noise * rng.standard_normal(n)), odd


CELL_ROLES = dict(categorical=["act", "site", "prec"], extrinsic=["gpus", "batch"])


def test_ridge_cells_find_a_cell_the_levels_and_pairs_cannot_express():
    X, y, odd = _cells()
    pairs = LogLinearModel(**CELL_ROLES, category_pairs=True).fit(X, y)
    m = LogLinearModel(**CELL_ROLES, category_pairs=True, pair_slopes=True, cells=True, select="ridge").fit(X, y)
    assert m.select == "ridge" and m.alpha_ is None and not m.has_leverage
    cells = [t for t in m.term_specs_ if t.kind == "level_cell"]
    assert len(cells) == 3 * 3 * 2  # every cell seen in fit, reference levels included
    coef = dict(zip(m.terms_, m.coef_))
    assert coef["act=sigmoid&site=b&prec=x"] > 0.1  # the odd cell's own factor, shrunk but clearly there
    err = lambda model: np.abs(model.predict(X[odd]) / y[odd] - 1).mean()  # noqa: E731
    assert err(m) < 0.5 * err(pairs)
    # the effective number of parameters: more than the unpenalised terms, fewer than all the terms
    main = sum(t.kind not in ("level_pair", "pair_slope", "level_cell") for t in m.term_specs_)
    assert main < m.effective_df_ < len(m.term_specs_)
    assert m.n_parameters_ == round(m.effective_df_) + 1
    assert "ridge on every candidate" in m.summary() and "[act=sigmoid]·[site=b]·[prec=x]" in m.formula()
    with pytest.raises(NotImplementedError, match="no leverage"):
        m.leverage(X)


def test_ridge_penalties_bridge_least_squares_and_the_model_without_combinations():
    """Penalties near 0 give the least-squares fit of every term; very large ones give the fit without the
    combinations of levels (their coefficients shrink to 0)."""
    X, y, _ = _cells()
    kw = dict(category_pairs=True, pair_slopes=True)
    tiny = LogLinearModel(**CELL_ROLES, **kw, select="ridge", penalty=(1e-9, 1e-9, 1e-9)).fit(X, y)
    ols = LogLinearModel(**CELL_ROLES, **kw, select="none").fit(X, y)
    assert tiny.terms_ == ols.terms_
    assert np.allclose(tiny.predict(X), ols.predict(X), rtol=1e-3)
    huge = LogLinearModel(**CELL_ROLES, **kw, cells=True, select="ridge", penalty=(1e6, 1e6, 1e6)).fit(X, y)
    plain = LogLinearModel(**CELL_ROLES, select="none").fit(X, y)
    assert np.allclose(huge.predict(X), plain.predict(X), rtol=1e-3)
    combos = [b for t, b in zip(huge.term_specs_, huge.coef_) if t.kind in ("level_pair", "pair_slope", "level_cell")]
    assert np.max(np.abs(combos)) < 1e-4


def test_ridge_json_round_trip_and_checks(tmp_path):
    X, y, _ = _cells()
    m = LogLinearModel(**CELL_ROLES, category_pairs=True, pair_slopes=True, cells=True, select="ridge",
                       penalty=[0.02, 0.4, 0.3]).fit(X, y)
    as_array = LogLinearModel(**CELL_ROLES, category_pairs=True, pair_slopes=True, cells=True, select="ridge",
                              penalty=np.array([0.02, 0.4, 0.3])).fit(X, y)
    assert np.array_equal(as_array.coef_, m.coef_)
    path = tmp_path / "ridge.json"
    m.save(path)
    back = LogLinearModel.load(path)
    assert back.terms_ == m.terms_ and back.effective_df_ == m.effective_df_ and back.n_parameters_ == m.n_parameters_
    assert np.allclose(back.predict(X), m.predict(X), rtol=1e-12) and not back.has_leverage
    doc = json.loads(path.read_text())
    assert doc["settings"]["penalty"] == [0.02, 0.4, 0.3]
    cell = next(t for t in doc["fitted"]["terms"] if t[0] == "level_cell")
    assert cell[1] == ["act", "site", "prec"]
    bad = json.loads(path.read_text())
    del bad["fitted"]["effective_df"]
    with pytest.raises(ValueError, match="effective_df: expected exactly when select='ridge'"):
        LogLinearModel.from_doc(bad)
    bad = json.loads(path.read_text())
    i = next(i for i, t in enumerate(bad["fitted"]["terms"]) if t[0] == "level_cell")
    bad["fitted"]["terms"][i] = ["level_cell", ["act", "site", "prec"], ["gelu", "a", "x"]]
    with pytest.raises(ValueError, match=rf"fitted.terms\[{i}\]: .* not a term of known columns and levels"):
        LogLinearModel.from_doc(bad)
    bad["fitted"]["terms"][i] = ["level_cell", ["act", "site"], ["relu", "a"]]  # a cell spans 3 or more columns
    with pytest.raises(ValueError, match=rf"fitted.terms\[{i}\]"):
        LogLinearModel.from_doc(bad)


@pytest.mark.parametrize("settings, match", [
    (dict(cells=True), "cells: needs select='ridge'"),
    (dict(select="ridge", penalty=(0.1, 0.1)), "penalty: expected three numbers from 0 to 1e\\+06"),
    (dict(select="ridge", penalty=(0.1, -1, 0.1)), "penalty: expected three numbers from 0 to 1e\\+06"),
    (dict(select="ridge", penalty=(0.1, float("nan"), 0.1)), "penalty: expected three numbers from 0 to 1e\\+06"),
    (dict(select="ridge", penalty=np.ones((3, 1))), "penalty: expected three numbers from 0 to 1e\\+06"),
    (dict(penalty=(0.1, 0.1, 0.1)), "penalty: only select='ridge' uses it"),
])
def test_ridge_bad_settings_name_the_setting(settings, match):
    X, y, _ = _cells(n=60)
    with pytest.raises(ValueError, match=match):
        LogLinearModel(**CELL_ROLES, **settings).fit(X, y)


def test_ridge_with_fewer_than_three_categorical_columns_has_no_cells():
    X, y, _ = _cells(n=200)
    m = LogLinearModel(categorical=["act", "site"], extrinsic=["gpus", "batch"], category_pairs=True, cells=True,
                       select="ridge").fit(X, y)
    assert not any(t.kind == "level_cell" for t in m.term_specs_)


def test_a_lasso_coefficient_that_is_zero_to_the_solvers_precision_drops_its_term(monkeypatch):
    """Coordinate descent leaves a numerically zero coefficient at 0 or at ~1e-11 depending on the BLAS kernels'
    rounding: at most 1e-8 times the largest counts as 0, so the kept terms do not depend on the kernels."""
    import sklearn.linear_model

    class Stub:
        def __init__(self, **kw):
            pass

        def fit(self, X, z):
            self.coef_, self.alpha_ = np.array([0.5, -2.4e-11, 0.0, 1.7e-4, -3e-9]), 0.01
            return self

    monkeypatch.setattr(sklearn.linear_model, "LassoCV", Stub)
    rng = np.random.default_rng(0)
    keep, alpha = lasso_mask(rng.normal(size=(20, 5)), rng.normal(size=20))
    assert keep.tolist() == [True, False, False, True, False] and alpha == 0.01


RIDGE = dict(numeric=["b"], categorical=["c0", "c1", "c2"], extrinsic=["w"], select="ridge", cells=True)


@pytest.fixture(scope="module")
def ridge_doc():
    X, y = _frame(60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = LogLinearModel(**RIDGE).fit(X, y)
    return X, m, m.to_doc()


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
