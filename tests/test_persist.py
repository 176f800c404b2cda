"""Saved models (perfkit.model.persist): a tampered model JSON of any form is one ValueError naming the key, a
``format`` of any type is named, and an untouched document loads and predicts exactly as the fitted model."""
import json
import math

import numpy as np
import pytest

from perfkit.model.forms.hybrid import HybridModel
from perfkit.model.forms.loglinear import LogLinearModel
from perfkit.model.persist import load_model
from perfkit.model.selection.search import make_form
from tests.frames import LENET_ROLES as LENET, measured_rows as _rows


@pytest.fixture(scope="module")
def docs():
    """Saved documents of the three forms on 120 LeNet-5 rows; the hybrid with modifiers and a regime."""
    X, y = _rows("ch4_lenet5.csv", LENET, 120)
    fast = {"thesis": dict(maxiter=3, popsize=5, search_rows=60)}
    out = {name: make_form(name, **LENET, network="lenet5", random_state=0, **fast.get(name, {})).fit(X, y).to_doc()
           for name in ("thesis", "loglinear")}
    out["hybrid"] = HybridModel("lenet5", **LENET, modifiers={"compute": ["workers", "batch_size=min"]},
                                regimes=["batch_size=min"]).fit(X, y).to_doc()
    return out, X


def _set(doc, path, value):
    d = json.loads(json.dumps(doc))
    t = d
    for k in path[:-1]:
        t = t[k]
    t[path[-1]] = value(t[path[-1]]) if callable(value) else value
    return d


@pytest.mark.parametrize("form, path, value, match", [
    ("hybrid", ("format",), ["perfkit.HybridModel"], r"format \['perfkit.HybridModel'\]"),
    ("thesis", ("format",), ["perfkit.GenericPerformanceModel"], r"format \["),
    ("loglinear", ("format",), {"a": 1}, r"format \{'a': 1\}"),
    ("hybrid", ("fitted", "rates"), lambda r: [0.0] * len(r), r"fitted.rates: every rate is 0"),
    ("hybrid", ("fitted", "rates", 0), float("nan"), r"fitted.rates: expected \d+ finite numbers >= 0"),
    ("hybrid", ("fitted", "rates", 0), -1e-9, r"fitted.rates: expected \d+ finite numbers >= 0"),
    ("hybrid", ("settings", "fixed"), {"stride": float("nan")}, r"settings: fixed: 'stride' is also a numeric"),
    ("hybrid", ("settings", "fixed"), {"strde": 1}, r"settings: fixed: 'strde' is not an input .* did you mean"),
    ("hybrid", ("settings", "fixed"), {"n_train": float("nan")}, r"settings: fixed\['n_train'\]: expected a whole "
                                                                 r"number >= 1, got nan"),
    ("hybrid", ("settings", "fixed"), {"n_train": 1e400}, r"settings: fixed\['n_train'\]"),
    ("hybrid", ("settings", "fixed"), "stride=2", r"settings: fixed: expected a dict"),
    ("hybrid", ("settings", "batch"), "x", r"settings: batch: 'x' is not a numeric or extrinsic column"),
    ("hybrid", ("settings", "workers"), ["workers"], r"settings: workers: expected a column name"),
    ("hybrid", ("settings", "n_train"), "lots", r"settings: n_train: expected 'auto', None or an integer"),
    ("hybrid", ("fitted", "terms", 0, 0), [1], r"fitted.terms: expected a list of \[cost, level\] pairs"),
    ("hybrid", ("fitted", "terms", 0, 0), {"a": 1}, r"fitted.terms: expected a list of \[cost, level\] pairs"),
    ("hybrid", ("fitted", "terms", -1, 1), "workers=1", r"fitted.terms: the step rate expects one term, level \"\""),
    ("hybrid", ("fitted", "terms", 1, 1), "", r"fitted.terms: the compute rate expects one level per combination"),
    ("hybrid", ("fitted", "regime_values", "batch_size=min"), None,
     r"fitted.regime_values\['batch_size=min'\]: expected a finite number, got None"),
    ("hybrid", ("fitted", "regime_values", "batch_size=min"), [8], r"fitted.regime_values\['batch_size=min'\]"),
    ("hybrid", ("fitted", "regime_values", "batch_size=min"), float("nan"), r"fitted.regime_values\['batch_size"),
    ("hybrid", ("fitted", "share", "step"), -0.5, r"fitted.share: expected cost -> number >= 0"),
    ("thesis", ("fitted", "coef", 0), -1.0, r"fitted.coef\[0\]: -1 is negative, but its bound a is \[0, 1000\]"),
    ("thesis", ("fitted", "coef", -1), -3.0, r"fitted.coef\[\d+\]: -3 is negative, but its bound C is"),
    ("thesis", ("fitted", "powers", 0), 7.5, r"fitted.powers\[0\]: 7.5 is outside its bound \[-5, 5\]"),
    ("thesis", ("fitted", "powers", -1), -6.0, r"fitted.powers\[5\]: -6 is outside its bound \[-5, 5\]"),
    ("loglinear", ("fitted", "log_columns"), lambda c: c[::-1], r"fitted.log_columns: expected the numeric/extrinsic "
                                                                r"columns that are not constant"),
    ("loglinear", ("fitted", "log_columns"), lambda c: c[:-1], r"fitted.log_columns"),
])
def test_a_tampered_model_json_is_one_error_naming_the_key(docs, form, path, value, match):
    doc = _set(docs[0][form], path, value)
    with pytest.raises(ValueError, match=match):
        load_model(json.dumps(doc))


@pytest.mark.parametrize("form", ["thesis", "loglinear", "hybrid"])
def test_an_untouched_model_json_loads_and_predicts_the_same(docs, form):
    doc, X = docs[0][form], docs[1]
    m = load_model(json.dumps(doc))
    again = load_model(json.dumps(m.to_doc()))
    p = m.predict(X)
    assert np.array_equal(again.predict(X), p) and np.all(np.isfinite(p)) and math.isfinite(float(p.sum()))


@pytest.mark.parametrize("fmt, shown", [
    (["perfkit.LogLinearModel"], r"\['perfkit\.LogLinearModel'\] \(a list\)"),
    ({"perfkit.LogLinearModel": 1}, r"\{'perfkit\.LogLinearModel': 1\} \(an object\)"),
    (1, r"1 \(a number\)"), (None, r"None \(null\)"), (True, r"True \(true/false\)"),
    ("x" * 100, r"'x{56}\.\.\."),
], ids=["list", "object", "int", "null", "bool", "long-string"])
def test_format_of_any_type_is_one_error_naming_it(fmt, shown):
    doc = json.dumps({"format": fmt, "version": 1, "settings": {}, "fitted": {}})
    with pytest.raises(ValueError, match=r"^model JSON: format " + shown + r" is not a perfkit model; expected one of"):
        load_model(doc)
    with pytest.raises(ValueError, match=r"^model JSON: format " + shown + r" is not 'perfkit\.LogLinearModel'"):
        LogLinearModel.from_json(doc)


def test_a_document_without_format_or_not_an_object():
    with pytest.raises(ValueError, match=r"^model JSON: 'format' is missing: not a perfkit model"):
        load_model("{}")
    with pytest.raises(ValueError, match=r"^model JSON: expected an object at the top level, got a list"):
        load_model("[1]")
