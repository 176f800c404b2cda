"""Chapter 6 machinery: the hybrid form, the form search, saved models of every kind, and the CLI around them."""
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from perfkit.cli import main
from perfkit.model.forms.costs import add_costs
from perfkit.model.forms.hybrid import HybridModel
from perfkit.model.uncertainty.conformal import ConformalRegressor, coverage_of
from perfkit.model.persist import load_model
from perfkit.model.selection.search import form_candidates, one_standard_error_choice, search_forms
from perfkit.model.uncertainty.conformal import seen_rows
from tests.frames import LENET_ROLES as LENET, generic_data as _data, ridge_frame as _frame

ROLES = dict(numeric=["kernel", "filters"], categorical=["act"], extrinsic=["gpus", "batch"])
def _run(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)


# ------------------------------------------------------------------------------ hybrid
def test_hybrid_recovers_known_rates_from_exact_costs(lenet300):
    """Times made from the cost model with known rates are fitted back to those rates."""
    X, _ = lenet300
    c = add_costs(X, "lenet5")
    steps = np.ceil(np.where(X["dataset"] == "cifar10", 50000, 60000) / (X["batch_size"] * X["workers"]))
    y = steps * (3e-11 * X["batch_size"] * c["flops_fwd"] + 2e-9 * X["batch_size"] * c["activations"]
                 + 1e-3).to_numpy()
    m = HybridModel("lenet5", **LENET).fit(X, y)
    rates = dict(zip([t[0] for t in m.terms_], m.rates_))
    assert rates["compute"] == pytest.approx(3e-11, rel=1e-6)
    assert rates["activations"] == pytest.approx(2e-9, rel=1e-6)
    assert rates["step"] == pytest.approx(1e-3, rel=1e-6)
    assert rates["update"] < 1e-15 and rates["allreduce"] < 1e-15  # s per parameter: 1e-9 would matter
    assert np.allclose(m.predict(X), y, rtol=1e-9)
    assert "s per forward FLOP" in m.summary() and m.formula().startswith("t = S·(")


def test_hybrid_modifiers_regimes_and_json_round_trip(lenet300, tmp_path):
    X, y = lenet300
    m = HybridModel("lenet5", **LENET, modifiers={"compute": ["workers", "batch_size=min"], "update": ["optimizer"]},
                    regimes=["batch_size=min"]).fit(X, y)
    levels = [lv for cost, lv in m.terms_ if cost == "compute"]
    assert any("batch_size=8" in lv for lv in levels) and any("batch_size≠8" in lv for lv in levels)
    m.save(tmp_path / "h.json")
    back = load_model(tmp_path / "h.json")
    assert isinstance(back, HybridModel) and np.array_equal(back.predict(X), m.predict(X))
    doc = json.loads((tmp_path / "h.json").read_text())
    doc["fitted"]["rates"][0] = -1.0
    with pytest.raises(ValueError, match=r"fitted.rates: expected \d+ finite numbers >= 0"):
        load_model(json.dumps(doc))


def test_hybrid_leverage_is_that_of_its_relative_error_fit(lenet300):
    """The hybrid's leverage is wᵀ(WᵀW)⁻¹w over the rates > 0, W the scaled costs over the times of the rows of
    fit, w a row's costs over its prediction; it survives a JSON round trip."""
    X, y = lenet300
    m = HybridModel("lenet5", **LENET).fit(X, y)
    active = m.rates_ > 0
    assert 2 <= active.sum() < len(m.rates_)  # some rates at 0: they must not count
    Phi = m._design(X)
    W = (Phi[:, active] / m.leverage_scale_[active]) / y[:, None]
    new = X.iloc[:7]
    w = (m._design(new)[:, active] / m.leverage_scale_[active]) / m.predict(new)[:, None]
    expected = np.einsum("ij,ij->i", w, np.linalg.solve(W.T @ W, w.T).T)
    assert np.allclose(m.leverage(new), expected, rtol=1e-6)
    assert np.array_equal(HybridModel.from_json(m.to_json()).leverage(new), m.leverage(new))
    doc = json.loads(m.to_json())
    doc["fitted"]["leverage"]["basis"] = doc["fitted"]["leverage"]["basis"][:-1]
    with pytest.raises(ValueError, match=r"fitted.leverage: expected \{scale, basis\}"):
        HybridModel.from_json(json.dumps(doc))


@pytest.mark.parametrize("kw, match", [
    (dict(network="vgg"), r"network: expected one of \[.*'lenet5'"),
    (dict(modifiers={"disk": ["workers"]}), r"modifiers: unknown cost 'disk'"),
    (dict(modifiers={"compute": ["colour"]}), r"modifiers\['compute'\]: 'colour' is not a column of the model"),
    (dict(regimes=["batch_size"]), r"regimes: 'batch_size' is not 'column=value'"),
    (dict(n_train=0), r"n_train: expected 'auto', None or an integer >= 1"),
])
def test_hybrid_bad_settings_name_the_parameter(lenet300, kw, match):
    X, y = lenet300
    with pytest.raises(ValueError, match=match):
        HybridModel(**{"network": "lenet5", **LENET, **kw}).fit(X, y)


def test_hybrid_needs_the_cost_models_columns(lenet300):
    X, y = lenet300
    with pytest.raises(ValueError, match=r"lenet5: the cost model needs column\(s\) \[.*'stride'.*\], which are neither"):
        HybridModel("lenet5", numeric=["num_filters"], extrinsic=["batch_size", "workers"]).fit(
            X.drop(columns=["stride"]), y)


# ------------------------------------------------------------------------------ search
def test_one_standard_error_rule_prefers_the_simplest_close_candidate():
    t = pd.DataFrame({"cv_mape": [10.0, 10.2, 12.0], "cv_mape_se": [0.5, 0.1, 0.1], "n_params": [50, 10, 3]})
    assert one_standard_error_choice(t) == 1  # 10.2 <= 10 + 0.5, fewer parameters than the best
    t["cv_mape_se"] = [0.1, 0.1, 0.1]
    assert one_standard_error_choice(t) == 0  # 10.2 > 10.1: only the best is within one se
    t["cv_mape_se"] = [3.0, 0.1, 0.1]
    assert one_standard_error_choice(t) == 2


def test_search_forms_table_choice_and_intervals():
    X, y = _data(n=200, noise=0.05)
    s = search_forms(X.iloc[:150], y[:150], **ROLES, forms=["loglinear", "thesis"], cv=3)
    t = s.table
    assert list(t.columns[:6]) == ["form", "terms", "n_params", "cv_mape", "cv_mape_se", "fit_seconds"]
    assert set(t["form"]) == {"loglinear", "thesis"} and t["chosen"].sum() == 1
    chosen = t[t["chosen"]].iloc[0]
    best = t.loc[t["cv_mape"].idxmin()]
    assert chosen["cv_mape"] <= best["cv_mape"] + best["cv_mape_se"]
    assert chosen["n_params"] == t[t["within_1se"]]["n_params"].min()
    iv = s.predict_interval(X.iloc[150:], 0.9)
    assert list(iv.columns) == ["predicted", "lower", "upper", "extrapolated"]
    assert (iv["lower"] <= iv["upper"]).all() and 0.7 <= coverage_of(iv, y[150:]) <= 1.0
    assert "<- chosen" in s.summary() and "one standard error" in s.summary()


def test_search_reuses_its_folds_for_the_intervals_exactly():
    """The search's fold models give the same intervals as calibrating the chosen form from scratch, for both ways
    of calibrating from folds."""
    X, y = _data(n=120, noise=0.05)
    for method in ("studentized", "cv+"):
        s = search_forms(X, y, **ROLES, forms=["loglinear"], cv=4, random_state=3, intervals=method)
        fresh = ConformalRegressor(s.candidates[s.chosen].estimator, method=method, n_splits=4,
                                   random_state=3).fit(X, y)
        assert s.model_.method == method
        assert np.array_equal(s.model_.scores_, fresh.scores_) and np.array_equal(s.model_.fold_, fresh.fold_)
        assert s.predict_interval(X.head(10), 0.9).equals(fresh.predict_interval(X.head(10), 0.9))
    with pytest.raises(ValueError, match=r"^intervals: expected 'studentized' or 'cv\+', got 'split'"):
        search_forms(X, y, **ROLES, forms=["loglinear"], cv=4, intervals="split")


def test_search_forms_bad_input_names_the_parameter():
    X, y = _data(n=40)
    with pytest.raises(ValueError, match=r"form: unknown form 'cubic'; expected 'auto' or one of"):
        search_forms(X, y, **ROLES, forms=["cubic"])
    with pytest.raises(ValueError, match=r"no candidate applies \(the hybrid form needs network="):
        form_candidates("hybrid", **ROLES)
    with pytest.raises(ValueError, match=r"cv: expected an integer >= 2"):
        search_forms(X, y, **ROLES, cv=1)
    with pytest.raises(ValueError, match=r"too few for cv=5"):
        search_forms(X.head(8), y[:8], **ROLES, forms=["loglinear"])


@pytest.mark.parametrize("options, match", [
    ({"loglinear": {"bogus": 1}}, r"options\['loglinear'\]: 'bogus' is not a setting of the loglinear form"),
    ({"thesis": {"maxiterr": 5}}, r"options\['thesis'\]: 'maxiterr' is not a setting of the thesis form"),
    ({"cubic": {}}, r"options: 'cubic' is not a table form"),
    ({"loglinear": 3}, r"options\['loglinear'\]: expected a dict of settings"),
    ([("thesis", {})], r"options: expected a dict"),
])
def test_unknown_options_are_refused_naming_the_form_and_setting(options, match):
    with pytest.raises(ValueError, match=match):
        form_candidates("auto", **ROLES, options=options)


def test_options_reach_every_candidate_of_their_form():
    cands = form_candidates(["loglinear", "thesis"], **ROLES,
                            options={"loglinear": {"select": "ridge"}, "thesis": {"maxiter": 7}})
    assert {c.form for c in cands} == {"loglinear", "thesis"}
    for c in cands:
        key, value = ("select", "ridge") if c.form == "loglinear" else ("maxiter", 7)
        assert c.estimator.get_params()[key] == value


def test_rows_with_unseen_levels_are_not_scored_and_intervals_still_fit():
    X, y = _data(n=120)
    X.loc[0, "act"] = "gelu"  # one row with a level no other row has
    assert seen_rows(X.iloc[1:], X.iloc[:3], ["act"]).tolist() == [False, True, True]
    m = ConformalRegressor(search_forms.__globals__["make_form"]("loglinear", **ROLES), n_splits=3).fit(X, y)
    assert m.n_calibration_ == len(X) - 1


def test_conformal_json_round_trip_for_every_form(lenet300, tmp_path):
    from perfkit.model.forms.generic import GenericPerformanceModel
    from perfkit.model.forms.loglinear import LogLinearModel

    X, y = _data(n=90)
    for est in (LogLinearModel(**ROLES), GenericPerformanceModel(**ROLES, maxiter=20, random_state=0)):
        m = ConformalRegressor(est, n_splits=3).fit(X, y)
        m.save(tmp_path / "c.json")
        back = load_model(tmp_path / "c.json")
        assert back.predict_interval(X, 0.8).equals(m.predict_interval(X, 0.8))
    with pytest.raises(ValueError, match=r"format 'perfkit.Nope' is not a perfkit model"):
        load_model('{"format": "perfkit.Nope"}')
    doc = json.loads(m.to_json())
    doc["fitted"]["fold"][0] = 7
    with pytest.raises(ValueError, match=r"fitted.fold: expected \d+ fold indices from 0 to 2"):
        load_model(json.dumps(doc))


# ------------------------------------------------------------------------------ CLI
@pytest.fixture()
def csvs(tmp_path):
    X, y = _data(n=150, noise=0.05)
    X.assign(time=y).to_csv(tmp_path / "data.csv", index=False)
    X.head(4).to_csv(tmp_path / "configs.csv", index=False)
    return tmp_path


def _fit(capsys, d, *extra):
    return _run(capsys, "fit", d / "data.csv", "--target", "time", "--numeric", "kernel,filters", "--categorical",
                "act", "--extrinsic", "gpus,batch", "--out", d / "m.json", *extra)


def test_cli_fit_loglinear_predict_with_intervals_and_whatif(capsys, csvs):
    out = _fit(capsys, csvs, "--form", "loglinear", "--cv", "3")
    assert out.returncode == 0, out.stderr
    assert "LogLinearModel" in out.stdout and "intervals cover" in out.stdout and "gradient boosting" in out.stdout
    pred = _run(capsys, "predict", csvs / "m.json", csvs / "configs.csv", "--interval", "0.9", "--out", csvs / "p.csv")
    assert pred.returncode == 0, pred.stderr
    p = pd.read_csv(csvs / "p.csv")
    assert {"predicted", "lower", "upper", "extrapolated"} <= set(p.columns) and len(p) == 4
    assert (p["lower"] <= p["predicted"] * 1.5).all() and (p["upper"] >= p["lower"]).all()
    w = _run(capsys, "whatif", csvs / "m.json", "--base", csvs / "configs.csv", "--vary", "gpus=1,2,3,6",
             "--out", csvs / "w.csv", "--plot", csvs / "w.png")
    assert w.returncode == 0, w.stderr
    table = pd.read_csv(csvs / "w.csv")
    assert table["speedup"].iloc[0] == 1 and table["extrapolated"].tolist() == [False, False, False, True]
    assert "outside the fitted data" in w.stderr and (csvs / "w.png").stat().st_size > 1000
    w = _run(capsys, "whatif", csvs / "m.json", "--base", "kernel=3,filters=8,act=relu,batch=32", "--vary",
             "gpus=1,2")
    assert w.returncode == 0 and "efficiency" in w.stdout, w.stderr


def test_whatif_in_python_speedup_efficiency_and_extrapolation():
    import warnings

    from perfkit.model.uncertainty.conformal import ExtrapolationWarning
    from perfkit.model.uncertainty.whatif import whatif

    X, y = _data(n=120, noise=0.05)
    m = ConformalRegressor(search_forms.__globals__["make_form"]("loglinear", **ROLES), n_splits=3).fit(X, y)
    base = dict(kernel=3.0, filters=8.0, act="relu", batch=32.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = whatif(m, base, "gpus", [1, 2, 3, 6])
    assert any(issubclass(w.category, ExtrapolationWarning) for w in caught)
    assert t["extrapolated"].tolist() == [False, False, False, True]
    assert t["speedup"].iloc[1] == pytest.approx(t["predicted"].iloc[0] / t["predicted"].iloc[1])
    assert t["efficiency"].iloc[3] == pytest.approx(t["speedup"].iloc[3] / 6)
    assert (t["lower"] <= t["upper"]).all()
    with pytest.raises(ValueError, match=r"model: it has no predict_interval"):
        whatif(m.estimator_, base, "gpus", [1, 2])


@pytest.mark.parametrize("args, match", [
    (["--form", "hybrid"], r"--form hybrid needs --network"),
    (["--form", "auto", "--network", "vgg"], r"--network: expected one of"),
    (["--form", "loglinear", "--penalty", "l2"], r"--penalty/--lam/--method/--coding/--scale belong to --form thesis"),
    (["--form", "auto", "--cv", "1"], r"--cv: expected an integer >= 2"),
    (["--form", "hybrid", "--network", "lenet5", "--fixed", "stride"], r"--fixed: expected key=value pairs"),
    (["--form", "auto", "--intervals", "split"], r"--intervals split: the form search calibrates from its own folds"),
])
def test_cli_fit_form_flags_bad_input(capsys, csvs, args, match):
    import re

    out = _fit(capsys, csvs, *args)
    assert out.returncode == 2 and out.stderr.startswith("perfkit: error: ") and re.search(match, out.stderr), \
        out.stderr
    assert not (csvs / "m.json").exists()


def test_cli_unknown_form_is_refused(capsys, csvs):
    with pytest.raises(SystemExit) as exc:
        _fit(capsys, csvs, "--form", "cubic")
    assert exc.value.code == 2 and "invalid choice: 'cubic'" in capsys.readouterr().err


def test_cli_interval_outside_0_1_and_uncalibrated_model(capsys, csvs):
    assert _fit(capsys, csvs, "--seeds", "1").returncode == 0  # thesis form, no calibration
    for bad in ("0", "1", "1.5", "-0.2", "nan"):
        r = _run(capsys, "predict", csvs / "m.json", csvs / "configs.csv", "--interval", bad)
        assert r.returncode == 2 and "--interval: expected a coverage strictly between 0 and 1" in r.stderr
    r = _run(capsys, "predict", csvs / "m.json", csvs / "configs.csv", "--interval", "0.9")
    assert r.returncode == 2 and "saved without interval calibration" in r.stderr and "--calibrate" in r.stderr
    r = _run(capsys, "whatif", csvs / "m.json", "--base", csvs / "configs.csv", "--vary", "gpus")
    assert r.returncode == 2 and "--vary: expected column=v1,v2" in r.stderr


def test_cli_fit_hybrid_on_measured_lenet_rows(capsys, lenet300, tmp_path):
    X, y = lenet300
    X.assign(epoch_time=y).to_csv(tmp_path / "l.csv", index=False)
    out = _run(capsys, "fit", tmp_path / "l.csv", "--target", "epoch_time", "--numeric", ",".join(LENET["numeric"]),
               "--categorical", ",".join(LENET["categorical"]), "--extrinsic", "batch_size,workers",
               "--form", "hybrid", "--network", "lenet5", "--cv", "3", "--out", tmp_path / "h.json")
    assert out.returncode == 0, out.stderr
    assert "HybridModel on the analytic costs of 'lenet5'" in out.stdout
    assert isinstance(load_model(tmp_path / "h.json").estimator_, HybridModel)


# ------------------------------------------------------------------------------ rates by the layer shape
def test_shape_variants_are_searched_but_not_the_form_asked_for_by_name(lenet300):
    from perfkit.model.forms.hybrid_sets import hybrid_variants
    from perfkit.model.selection.search import make_form

    words = [w for _, w in hybrid_variants("lenet5", LENET)]
    assert words[-2:] == ["+ compute and step rates by width", "+ compute and step rates by width and padding"]
    assert [w for _, w in hybrid_variants("lenet5", LENET, shape=False)] == words[:-2]
    named = make_form("hybrid", **LENET, network="lenet5")
    assert not {"num_filters", "padding"} & {c for cols in named.modifiers.values() for c in cols}
    no_width = dict(LENET, numeric=["kernel_size", "pool_size", "stride"])
    assert [w for _, w in hybrid_variants("lenet5", no_width)][-1] == "+ compute and step rates by padding"


def test_hybrid_says_which_rows_its_rates_cover_and_the_search_scores_only_rows_every_candidate_covers(lenet300):
    """Rates by workers × width × padding: a held-out combination the fit never had is not predicted (refused by
    name), ``predictable`` marks it, and the search scores every candidate on the same covered rows."""
    X, y = lenet300
    mods = {"compute": ["workers", "num_filters", "padding"]}
    combo = X["workers"].astype(str) + X["num_filters"].astype(str) + X["padding"]
    rare = combo.value_counts().index[-1]
    fit = (combo != rare).to_numpy()
    m = HybridModel("lenet5", **LENET, modifiers=mods).fit(X[fit], y[fit])
    ok = m.predictable(X)
    assert np.array_equal(ok, fit)
    with pytest.raises(ValueError, match=r"^row \d+ \(workers=\d+; num_filters=\d+; padding=\w+\): the hybrid form's "
                                         r"compute rate was fitted per measured level of workers, num_filters, padding"):
        m.predict(X[~fit])
    assert m.level_bound_columns() == ["num_filters", "workers"]
    assert np.all(np.isfinite(m.predict(X[ok])))
    # a search where a fold lacks a combination: no crash, the same rows left out of every candidate's score
    s = search_forms(X, y, **LENET, forms=["hybrid", "loglinear"], network="lenet5", cv=5)
    t = s.table
    assert t["unscored"].nunique() == 1 and t["unscored"].iloc[0] > 0
    assert np.isfinite(t["cv_mape"]).all()
    iv_ok = s.model_.predictable(X)
    assert iv_ok.dtype == bool and len(iv_ok) == len(X)


def test_the_ridge_candidate_comes_with_two_or_more_categorical_columns(lenet300, tmp_path):
    """The log-linear family's last candidate: every term, combinations of levels shrunk by ridge (cells with three
    or more categorical columns), counted by its effective parameters; a conformal model of it saves and loads."""
    words = [c.terms for c in form_candidates("loglinear", **LENET)]
    assert words[-1].endswith("+ pair slopes + cells, ridge") and sum("ridge" in w for w in words) == 1
    two = dict(LENET, categorical=["padding", "activation"])
    assert form_candidates("loglinear", **two)[-1].terms.endswith("+ pair slopes, ridge")
    assert not any("ridge" in c.terms for c in form_candidates("loglinear", **ROLES))  # one categorical column
    X, y = lenet300
    est = form_candidates("loglinear", **LENET)[-1].estimator
    m = ConformalRegressor(est, n_splits=3).fit(X, y)
    fitted = m.estimator_
    assert fitted.select == "ridge" and any(t.kind == "level_cell" for t in fitted.term_specs_)
    assert fitted.n_parameters_ < len(fitted.term_specs_) + 1  # shrunk: fewer effective parameters than terms
    m.save(tmp_path / "ridge.json")
    back = load_model(tmp_path / "ridge.json")
    assert back.predict_interval(X, 0.8).equals(m.predict_interval(X, 0.8))


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
