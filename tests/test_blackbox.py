"""The calibrated black-box reference, the form search's two selection rules and its report, and the segmented
power law of the log-linear form."""
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import KFold

from perfkit.model.selection.blackbox import GRIDS, black_box_reference
from perfkit.model.forms.loglinear import LogLinearModel
from perfkit.model.selection.metrics import mape
from perfkit.model.persist import load_model
from perfkit.model.selection.search import form_candidates, search_forms
from perfkit.model.forms.terms import Hinge, term_from_list
from tests.cli import one_error, run_cli
from tests.frames import LENET_ROLES as LENET

ROLES = dict(numeric=["flops"], categorical=["act"], extrinsic=["batch"])


def _smooth(n=240, seed=0):
    """A smooth, non-power-law surface with a level effect: an RBF SVR on log features fits it best."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"flops": rng.uniform(1, 50, n), "act": rng.choice(["relu", "tanh"], n),
                      "batch": rng.choice([8, 16, 32, 64, 128], n)})
    lf, lb = np.log(X["flops"]), np.log(X["batch"])
    y = np.exp(0.3 * np.sin(2 * lf) + 0.5 * lb + 0.2 * (X["act"] == "tanh") + 0.02 * rng.standard_normal(n))
    return X, y.to_numpy()


# ------------------------------------------------------------------------------ reference
def test_reference_keeps_each_kinds_best_setting_and_the_best_kind():
    X, y = _smooth()
    ref = black_box_reference(X, y, **ROLES, cv=4, random_state=0)
    t = ref.table.set_index("kind")
    assert list(t.index) == ["rf", "gb", "svr"] and t["best"].sum() == 1
    assert ref.kind == t["cv_mape"].idxmin() and ref.cv_mape == pytest.approx(t["cv_mape"].min())
    assert all(t.loc[k, "settings_tried"] == len(GRIDS[k]) for k in t.index)
    assert len(ref.fold_mape) == 4 and ref.cv_mape == pytest.approx(np.mean(ref.fold_mape))
    # the fitted reference predicts in seconds and beats a constant by far on rows it never saw
    Xt, yt = _smooth(120, seed=1)
    assert mape(yt, ref.predict(Xt)) < 0.3 * mape(yt, np.full_like(yt, np.median(y)))
    assert "<- reference" in ref.summary() and ref.label.startswith(
        {"rf": "random forest", "gb": "gradient boosting", "svr": "SVR"}[ref.kind])


def test_reference_is_deterministic_and_uses_the_folds_it_is_given():
    X, y = _smooth(160)
    folds = list(KFold(3, shuffle=True, random_state=7).split(X))
    a = black_box_reference(X, y, **ROLES, folds=folds, kinds=["svr", "rf"])
    b = black_box_reference(X, y, **ROLES, folds=folds, kinds=["svr", "rf"], n_jobs=2)
    assert a.folds == folds and len(a.fold_mape) == 3
    assert a.table["cv_mape"].tolist() == b.table["cv_mape"].tolist() and a.settings == b.settings
    assert np.array_equal(a.predict(X), b.predict(X))


def test_reference_scores_only_rows_with_levels_seen_in_the_fold():
    X, y = _smooth(60)
    X.loc[:2, "act"] = "gelu"  # three rows of a level: a fold that holds them out has not seen it... or has
    ref = black_box_reference(X, y, **ROLES, cv=3, kinds=["svr"])
    assert np.isfinite(ref.cv_mape)


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(kinds=["xgboost"]), "kinds: unknown black box 'xgboost'"),
    (dict(kinds=[]), "kinds: give at least one"),
    (dict(cv=1), "cv"),
    (dict(random_state=-1), "random_state"),
])
def test_reference_bad_settings_name_the_parameter(kwargs, fragment):
    X, y = _smooth(40)
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(")):
        black_box_reference(X, y, **ROLES, **kwargs)


def test_reference_bad_data_is_one_clear_error():
    X, y = _smooth(40)
    with pytest.raises(ValueError, match="flops"):
        black_box_reference(X.drop(columns="flops"), y, **ROLES)
    with pytest.raises(ValueError, match="X: expected a pandas DataFrame"):
        black_box_reference(X.to_numpy(), y, **ROLES)


# ------------------------------------------------------------------------------ the search's report
def test_search_best_and_one_se_rules_and_their_gap(lenet300):
    X, y = lenet300
    kw = dict(**LENET, forms=["loglinear"], cv=3)
    one = search_forms(X, y, **kw)
    best = search_forms(X, y, **kw, select="best")
    assert one.chosen == one.one_se and best.chosen == best.best_cv == int(best.table["cv_mape"].idxmin())
    assert search_forms(X, y, **kw, select="1se").chosen == one.chosen
    d, se = one.gap(one.one_se, one.best_cv)
    assert d == pytest.approx(one.table.loc[one.one_se, "cv_mape"] - one.table.loc[one.best_cv, "cv_mape"])
    assert (d >= 0) and (se >= 0 or one.one_se == one.best_cv)
    text = one.summary()
    assert ("by CV and by 1-SE" in text) if one.one_se == one.best_cv else ("by 1-SE:" in text and "by CV:" in text)
    assert "lowest CV MAPE" in best.summary()


def test_search_reference_is_scored_on_the_same_folds(lenet300):
    X, y = lenet300
    s = search_forms(X, y, **LENET, forms=["loglinear"], cv=3, reference=True)
    assert s.reference is not None and s.reference.folds == s.folds
    d, se = s.reference_gap()
    expect = np.asarray(s.fold_mape[s.chosen]) - np.asarray(s.reference.fold_mape)
    assert d == pytest.approx(expect.mean()) and se > 0
    assert "black-box reference" in s.summary() and "chosen form − black-box reference" in s.summary()
    with pytest.raises(ValueError, match="reference=True"):
        search_forms(X, y, **LENET, forms=["loglinear"], cv=3).reference_gap()


@pytest.mark.parametrize("kwargs, fragment", [(dict(select="fastest"), "select: expected one of"),
                                              (dict(reference="yes"), "reference: expected True or False")])
def test_search_bad_rule_names_the_parameter(lenet300, kwargs, fragment):
    X, y = lenet300
    with pytest.raises(ValueError, match=fragment):
        search_forms(X, y, **LENET, forms=["loglinear"], cv=3, **kwargs)


def test_cli_select_and_reference(tmp_path, lenet300, capsys):
    X, y = lenet300
    csv = tmp_path / "runs.csv"
    X.assign(epoch_time=y).to_csv(csv, index=False)
    roles = ["--numeric", ",".join(LENET["numeric"]), "--categorical", ",".join(LENET["categorical"]),
             "--extrinsic", ",".join(LENET["extrinsic"])]
    r = run_cli(capsys, "fit", csv, "--target", "epoch_time", *roles, "--form", "auto", "--cv", "3", "--select", "best",
                "--out", tmp_path / "m.json")
    assert r.code == 0, r.err
    assert "rule: the lowest CV MAPE" in r.out and "chosen form − black-box reference" in r.out
    r = run_cli(capsys, "fit", csv, "--target", "epoch_time", *roles, "--form", "loglinear", "--select", "best",
                "--out", tmp_path / "m2.json")
    one_error(r, "--select belongs to --form auto")
    r = run_cli(capsys, "fit", csv, "--target", "epoch_time", *roles, "--form", "loglinear", "--no-reference",
                "--out", tmp_path / "m3.json")
    one_error(r, "--no-reference belongs to --form auto")


# ------------------------------------------------------------------------------ segmented power law
def _segmented(n=300, seed=0):
    """t = batch^-1 below 32, flat above it (a launch-bound regime), times a level factor."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"flops": rng.uniform(1, 10, n), "act": rng.choice(["relu", "tanh"], n),
                      "batch": rng.choice([4, 8, 16, 32, 64, 128, 256], n)})
    lb = np.log(X["batch"].to_numpy(dtype=float))
    z = 0.5 * np.log(X["flops"]) - lb + np.maximum(0, lb - np.log(32)) + 0.3 * (X["act"] == "tanh")
    return X, np.exp(z + 0.01 * rng.standard_normal(n)).to_numpy()


def test_segments_find_the_break_and_round_trip(tmp_path):
    X, y = _segmented()
    plain = LogLinearModel(**ROLES, interactions=False, category_terms=False).fit(X, y)
    seg = LogLinearModel(**ROLES, interactions=False, category_terms=False, segments=True).fit(X, y)
    hinges = {t.knot: b for t, b in zip(seg.term_specs_, seg.coef_) if isinstance(t, Hinge)}
    assert 32.0 in hinges and hinges[32.0] == pytest.approx(1.0, abs=0.05)
    assert mape(y, seg.predict(X)) < 2.0 < mape(y, plain.predict(X))
    # the local power of batch is -1 below the break and 0 above it
    pw = seg.powers_at(pd.DataFrame({"flops": [5.0, 5.0], "act": ["relu"] * 2, "batch": [8, 128]}))["batch"]
    assert pw.iloc[0] == pytest.approx(-1, abs=0.05) and pw.iloc[1] == pytest.approx(0, abs=0.05)
    assert "max(1, batch/32)^" in seg.formula()
    path = tmp_path / "seg.json"
    seg.to_json(path)
    back = load_model(path)
    assert np.array_equal(back.predict(X), seg.predict(X)) and back.segments is True


@pytest.mark.parametrize("knot", [0, -2.0, float("nan"), "32", True])
def test_a_saved_hinge_needs_a_positive_finite_break(knot):
    assert term_from_list(["hinge", "batch", knot]) is None
    assert term_from_list(["hinge", "batch", 32.0]) == Hinge("batch", 32.0)


def test_tampered_hinge_is_refused_by_name(tmp_path):
    X, y = _segmented(120)
    path = tmp_path / "seg.json"
    LogLinearModel(**ROLES, interactions=False, category_terms=False, segments=True).fit(X, y).to_json(path)
    doc = json.loads(path.read_text())
    i = next(i for i, t in enumerate(doc["fitted"]["terms"]) if t[0] == "hinge")
    doc["fitted"]["terms"][i][2] = -1
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=rf"fitted.terms\[{i}\]"):
        load_model(path)


def test_search_tries_segments_only_with_an_extrinsic_column():
    with_ext = [c.terms for c in form_candidates(["loglinear"], numeric=["a"], extrinsic=["b"])]
    without = [c.terms for c in form_candidates(["loglinear"], numeric=["a", "b"])]
    assert any("segments" in t for t in with_ext) and not any("segments" in t for t in without)
