"""SymbolicModel (perfkit.model.forms.symbolic): a known law recovered, the node budget, determinism, the JSON round trip
with no eval (and tampered documents refused by key), bad inputs named, clone, and the form contract of
tests/test_form_contract.py written out for this form (it is not in the search's registry)."""
import copy
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import KFold, cross_validate
from sklearn.utils.validation import check_is_fitted

from perfkit.model.base import PerformanceForm
from perfkit.model.selection.search import n_parameters
from perfkit.model.forms.symbolic import MAX_DEPTH, SymbolicModel, check_expression, evaluate
from tests.frames import LENET_ROLES as ROLES

#: a small, fast search for the tests
SMALL = dict(population_size=80, generations=5, tournament_size=8)


def _fit(X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SymbolicModel(**{**ROLES, "network": "lenet5", **SMALL, **kw}).fit(X, y)


@pytest.fixture(scope="module")
def fitted(lenet):
    return _fit(*lenet)


def _law(n=200, seed=0):
    """t = 2·x^0.5·g^-1 with 1 % noise, and a categorical column with no effect."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.uniform(1, 100, n), "g": rng.integers(1, 9, n).astype(float),
                      "kind": rng.choice(["a", "b"], n)})
    y = 2 * X["x"] ** 0.5 / X["g"] * np.exp(rng.normal(0, 0.01, n))
    return X, y.to_numpy()


# ------------------------------------------------------------------------------------ the search
def test_recovers_a_known_law():
    X, y = _law()
    m = SymbolicModel(numeric=["x"], categorical=["kind"], extrinsic=["g"], population_size=200, generations=10,
                      random_state=0).fit(X, y)
    Xt, yt = _law(100, seed=1)
    err = np.abs(m.predict(Xt) / yt - 1)
    assert np.mean(err) < 0.03, m.formula()
    assert m.n_parameters_ <= 20
    used = json.dumps(m.expression_)
    assert "log(x)" in used and "log(g)" in used


@pytest.mark.parametrize("max_nodes", [5, 7, 12, 20])
def test_the_node_budget_holds(lenet, max_nodes):
    m = _fit(*lenet, max_nodes=max_nodes, parsimony_coefficient=0.0)
    assert m.n_parameters_ <= max_nodes
    assert check_expression(m.expression_, m.inputs_, max_nodes) == m.n_parameters_


def test_deterministic_for_a_seed(lenet, fitted):
    X, y = lenet
    again = _fit(X, y)
    assert again.expression_ == fitted.expression_
    assert np.array_equal(again.predict(X), fitted.predict(X))


def test_network_costs_are_inputs(fitted):
    assert {"log(F)", "log(A)", "log(P)", "log(S)"} <= set(fitted.inputs_)
    assert "m(activation)" in fitted.inputs_ and "log(batch_size)" in fitted.inputs_


def test_without_a_network_there_are_no_cost_inputs(lenet):
    m = _fit(*lenet, network=None)
    assert not any(n.startswith("log(") and n[4:-1] in "FAPS" for n in m.inputs_)


def test_fitted_ranges(lenet, fitted):
    X, _ = lenet
    r = fitted.fitted_ranges()
    assert sorted(r) == sorted(ROLES["numeric"] + ROLES["extrinsic"])
    assert r["batch_size"] == (float(X["batch_size"].min()), float(X["batch_size"].max()))


def test_interpreter_evaluates_a_tree():
    tree = {"op": "max", "args": [{"var": "a"}, {"op": "mul", "args": [{"const": 2.0}, {"var": "b"}]}]}
    out = evaluate(tree, {"a": np.array([1.0, 5.0]), "b": np.array([1.0, 2.0])}, 2)
    assert out.tolist() == [2.0, 5.0]


# ------------------------------------------------------------------------------------ JSON
def test_json_round_trip_gives_identical_predictions(lenet, fitted):
    X, _ = lenet
    doc = fitted.to_doc()
    assert list(doc) == ["format", "version", "settings", "fitted"] and doc["format"] == "perfkit.SymbolicModel"
    text = json.dumps(doc)
    assert text == json.dumps(json.loads(fitted.to_json()))
    for back in (SymbolicModel.from_doc(json.loads(text)), SymbolicModel.from_json(fitted.to_json())):
        assert back.get_params() == fitted.get_params()
        assert np.array_equal(back.predict(X), fitted.predict(X))
        assert back.formula() == fitted.formula() and back.n_parameters_ == fitted.n_parameters_
        assert back.fitted_ranges() == fitted.fitted_ranges()


def _deep(n):
    tree = {"var": "log(batch_size)"}
    for _ in range(n):
        tree = {"op": "add", "args": [tree, {"const": 1.0}]}
    return tree


def _set_expr(node):
    def change(doc):
        doc["fitted"]["expression"] = node
    return change


def _set_arg(node):
    def change(doc):
        doc["fitted"]["expression"]["args"][1] = node
    return change


def _too_deep(doc):
    doc["settings"]["max_nodes"] = 1000
    doc["fitted"]["expression"] = _deep(MAX_DEPTH + 5)


TAMPERED = {
    "unknown op": (_set_arg({"op": "exp", "args": [{"const": 1.0}]}), r"expression\.args\[1\]: unknown op 'exp'"),
    "op outside the function set": (_set_arg({"op": "neg", "args": [{"const": 1.0}]}),
                                    r"expression\.args\[1\]: unknown op 'neg'"),
    "wrong arity": (_set_arg({"op": "mul", "args": [{"const": 1.0}]}), r"expression\.args\[1\]\.args: op 'mul' takes 2"),
    "args not a list": (_set_arg({"op": "add", "args": "x"}), r"expression\.args\[1\]\.args: op 'add' takes 2"),
    "variable not an input": (_set_arg({"var": "__import__('os')"}), r"expression\.args\[1\]: variable"),
    "variable not a string": (_set_arg({"var": 3}), r"expression\.args\[1\]: variable 3"),
    "non-finite constant": (_set_arg({"const": float("nan")}), r"expression\.args\[1\]: const nan"),
    "infinite constant": (_set_arg({"const": float("inf")}), r"expression\.args\[1\]: const inf"),
    "text constant": (_set_arg({"const": "1e3"}), r"expression\.args\[1\]: const '1e3'"),
    "boolean constant": (_set_arg({"const": True}), r"expression\.args\[1\]: const True"),
    "extra key": (_set_arg({"const": 1.0, "code": "x"}), r"expression\.args\[1\]: expected \{op, args\}"),
    "not an object": (_set_expr([1, 2]), r"fitted\.expression: expected \{op, args\}"),
    "over the node budget": (_set_expr(_deep(12)), r"fitted\.expression: more than 20 nodes"),
    "over-deep tree": (_too_deep, r"fitted\.expression(\.args\[0\])+: the tree is deeper than"),
    "input the model cannot compute": (lambda d: d["fitted"]["inputs"].append("log(secret)"), r"fitted\.inputs"),
    "encoding of the wrong length": (lambda d: d["fitted"]["encoding"]["padding"].pop(), r"fitted\.encoding\['padding'\]"),
    "bad range": (lambda d: d["fitted"]["ranges"].update(stride=[3, 1]), r"fitted\.ranges\['stride'\]"),
    "missing key": (lambda d: d["fitted"].pop("expression"), r"fitted: 'expression' is missing"),
}


@pytest.mark.parametrize("case", list(TAMPERED))
def test_a_tampered_document_is_one_error_naming_the_key(fitted, case):
    change, pattern = TAMPERED[case]
    doc = copy.deepcopy(fitted.to_doc())
    doc["fitted"]["expression"]["args"][1] = {"var": "log(batch_size)"}  # a known shape to tamper with
    SymbolicModel.from_doc(copy.deepcopy(doc))  # the untampered document loads
    change(doc)
    with pytest.raises(ValueError, match=pattern):
        SymbolicModel.from_doc(doc)


def test_a_tampered_json_text_is_refused(fitted):
    text = fitted.to_json().replace('"op": "add"', '"op": "eval"', 1)
    with pytest.raises(ValueError, match="unknown op 'eval'"):
        SymbolicModel.from_json(text)


# ------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("change, pattern", [
    (lambda X: X.drop(columns="stride"), "numeric column 'stride' not found"),
    (lambda X: X.assign(batch_size=0), "extrinsic column 'batch_size'.*must be > 0"),
    (lambda X: X.assign(kernel_size=np.nan), "numeric column 'kernel_size'.*non-finite"),
    (lambda X: X.assign(pool_size=np.inf), "numeric column 'pool_size'.*non-finite"),
    (lambda X: X.assign(activation="gelu"), "categorical column 'activation': unseen category 'gelu'"),
])
def test_bad_inputs_name_the_column(lenet, fitted, change, pattern):
    X, _ = lenet
    with pytest.raises(ValueError, match=pattern):
        fitted.predict(change(X.copy()))


def test_bad_fit_inputs_name_the_column(lenet):
    X, y = lenet
    with pytest.raises(ValueError, match="extrinsic column 'workers'.*must be > 0"):
        _fit(X.assign(workers=-1), y)
    with pytest.raises(ValueError, match="y: value 0 in row 0 must be > 0"):
        _fit(X, np.r_[0.0, y[1:]])


@pytest.mark.parametrize("setting, pattern", [
    (dict(fixed={"colour": 1}), "fixed: 'colour' is not an input"),
    (dict(fixed={"n_train": 0.5}), r"fixed\['n_train'\]: expected a whole number >= 1"),  # the hybrid form's rule
    (dict(fixed={"stride": 2}), "fixed: 'stride' is also a numeric column"),
])
def test_bad_settings_are_named(lenet, setting, pattern):
    with pytest.raises(ValueError, match=pattern):
        _fit(*lenet, **setting)


# ------------------------------------------------------------------------------------ the form contract
def test_unfitted_form_refuses_to_report(lenet):
    est = SymbolicModel(**ROLES, **SMALL)
    assert isinstance(est, PerformanceForm)
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        check_is_fitted(est)
    for call in (est.formula, est.summary, est.to_doc, est.fitted_ranges, lambda: est.predict(lenet[0])):
        with pytest.raises(NotFittedError):
            call()
    assert not hasattr(est, "n_parameters_") and not hasattr(est, "feature_names_in_")
    twin = clone(est)
    assert twin is not est and twin.get_params() == est.get_params()


def test_fitted_form_reports_itself(lenet, fitted):
    X, _ = lenet
    check_is_fitted(fitted)
    formula, summary = fitted.formula(), fitted.summary()
    assert formula.startswith("t = exp(") and isinstance(summary, str) and formula in summary
    assert isinstance(fitted.formula(digits=5), str)
    assert isinstance(fitted.n_parameters_, int) and 0 < fitted.n_parameters_ <= 20
    assert n_parameters(fitted) == fitted.n_parameters_
    roles = ROLES["numeric"] + ROLES["categorical"] + ROLES["extrinsic"]
    assert list(fitted.feature_names_in_) == roles and fitted.n_features_in_ == len(roles)
    pred = fitted.predict(X)
    assert pred.shape == (len(X),) and np.all(np.isfinite(pred) & (pred > 0))


def test_clone_of_a_fitted_form_is_unfitted_with_the_same_settings(fitted):
    twin = clone(fitted)
    assert twin.get_params() == fitted.get_params()
    with pytest.raises(NotFittedError):
        check_is_fitted(twin)


def test_cross_validation_runs(lenet):
    X, y = lenet
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = cross_validate(SymbolicModel(**ROLES, network="lenet5", **SMALL), X, y,
                             cv=KFold(3, shuffle=True, random_state=0),
                             scoring="neg_mean_absolute_percentage_error", error_score="raise")
    assert len(out["test_score"]) == 3 and np.all(np.isfinite(out["test_score"]))


def test_optional_capabilities_are_stated_by_the_class(lenet, fitted):
    X, _ = lenet
    ok = fitted.predictable(X)
    assert ok.dtype == bool and ok.shape == (len(X),) and ok.all()
    assert not SymbolicModel.has_leverage
    with pytest.raises(NotImplementedError):
        fitted.leverage(X.iloc[:10])
