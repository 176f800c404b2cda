"""The contract every model form keeps (perfkit.model.base.PerformanceForm), checked for each table form of
the registry (perfkit.model.forms.registry.table_forms): formula, summary, parameter count, JSON round trip, clone,
cross-validation, NotFittedError before fit, the scikit-learn fitted attributes and the optional capabilities."""
import json

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import KFold, cross_validate
from sklearn.utils.validation import check_is_fitted

from perfkit.model.base import PerformanceForm
from perfkit.model.persist import load_model
from perfkit.model.forms.registry import table_forms
from perfkit.model.selection.search import make_form, n_parameters
from tests.frames import LENET_ROLES as ROLES

FORMS = table_forms()
#: settings that keep each form's fit short (the thesis form's differential evolution: a few generations)
FAST = {"thesis": dict(maxiter=5, popsize=5, search_rows=100)}


def _form(name):
    return make_form(name, **ROLES, network="lenet5", random_state=0, **FAST.get(name, {}))


@pytest.fixture(scope="module")
def fitted(lenet):
    X, y = lenet
    return {name: _form(name).fit(X, y) for name in FORMS}


@pytest.mark.parametrize("name", list(FORMS))
def test_unfitted_form_refuses_to_report(name, lenet):
    est = _form(name)
    assert isinstance(est, PerformanceForm)
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        check_is_fitted(est)
    for call in (est.formula, est.summary, est.to_doc, lambda: est.predict(lenet[0])):
        with pytest.raises(NotFittedError):
            call()
    assert not hasattr(est, "n_parameters_") and not hasattr(est, "feature_names_in_")
    twin = clone(est)
    assert twin is not est and twin.get_params() == est.get_params()


@pytest.mark.parametrize("name", list(FORMS))
def test_fitted_form_reports_itself(name, fitted, lenet):
    m, (X, _) = fitted[name], lenet
    check_is_fitted(m)
    formula, summary = m.formula(), m.summary()
    assert isinstance(formula, str) and formula.startswith("t = ") and isinstance(summary, str) and summary
    assert isinstance(m.formula(digits=5), str)
    assert isinstance(m.n_parameters_, int) and m.n_parameters_ > 0 and n_parameters(m) == m.n_parameters_
    roles = ROLES["numeric"] + ROLES["categorical"] + ROLES["extrinsic"]
    assert list(m.feature_names_in_) == roles and m.n_features_in_ == len(roles)
    pred = m.predict(X)
    assert pred.shape == (len(X),) and np.all(np.isfinite(pred) & (pred > 0))


@pytest.mark.parametrize("name", list(FORMS))
def test_json_round_trip_gives_identical_predictions(name, fitted, lenet):
    m, (X, _) = fitted[name], lenet
    doc = m.to_doc()
    assert list(doc) == ["format", "version", "settings", "fitted"] and doc["format"] == m.json_format
    text = json.dumps(doc)
    assert text == json.dumps(json.loads(m.to_json()))
    for back in (load_model(text), type(m).from_doc(json.loads(text)), type(m).from_json(m.to_json())):
        assert type(back) is type(m) and back.get_params() == m.get_params()
        assert np.array_equal(back.predict(X), m.predict(X))
        assert back.formula() == m.formula() and back.n_parameters_ == m.n_parameters_


@pytest.mark.parametrize("name", list(FORMS))
def test_clone_of_a_fitted_form_is_unfitted_with_the_same_settings(name, fitted):
    m = fitted[name]
    twin = clone(m)
    assert twin.get_params() == m.get_params()
    with pytest.raises(NotFittedError):
        check_is_fitted(twin)


@pytest.mark.parametrize("name", list(FORMS))
def test_cross_validation_runs(name, lenet):
    X, y = lenet
    out = cross_validate(_form(name), X, y, cv=KFold(3, shuffle=True, random_state=0),
                         scoring="neg_mean_absolute_percentage_error", error_score="raise")
    assert len(out["test_score"]) == 3 and np.all(np.isfinite(out["test_score"]))


@pytest.mark.parametrize("name", list(FORMS))
def test_optional_capabilities_are_stated_by_the_model(name, fitted, lenet):
    m, (X, _) = fitted[name], lenet
    ok = m.predictable(X)
    assert ok.dtype == bool and ok.shape == (len(X),) and ok.all()  # the rows of fit are covered
    if m.has_leverage:
        h = m.leverage(X.iloc[:10])
        assert h.shape == (10,) and np.all(np.isfinite(h) & (h >= 0))
    else:
        with pytest.raises(NotImplementedError):
            m.leverage(X.iloc[:10])
