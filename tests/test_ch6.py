"""Chapter 6: every claim rule holds, fails and is inconclusive on hand-made quantities; the helpers its analysis uses."""
import json

import numpy as np
import pandas as pd
import pytest

from perfkit.chapters import ch6
from perfkit.chapters.result import ParameterError
from perfkit.report.claims import COLUMNS, judge_all

_Y = np.random.default_rng(0).uniform(1.0, 3.0, 300)


def pred(mape, noise=0.0, seed=1):
    """Predictions of _Y with a MAPE of about ``mape`` %; ``noise`` spreads the relative errors (seed-dependent)."""
    z = np.random.default_rng(seed).standard_normal(_Y.size)
    return _Y * (1 + np.clip(mape / 100 * (1 + noise * z), 0, None))


def heldout(ds="ch4", **models):
    """``{"heldout": {ds: {"y", "pred"}}, "auto_form": ...}`` with ``models`` = name -> mape or (mape, noise, seed)."""
    preds = {k: pred(*(v if isinstance(v, tuple) else (v,))) for k, v in models.items()}
    return {"heldout": {ds: {"y": _Y, "pred": preds}}, "auto_form": {ds: "loglinear"}}


def rates(r5, noise5=0.005, r4=1.0, noise4=0.005, n=ch6.RATE_B):
    rng = np.random.default_rng(5)
    return {"compute_rate": {"ch4": (r4, r4 * (1 + noise4 * rng.standard_normal(n))),
                             "ch5": (r5, r5 * (1 + noise5 * rng.standard_normal(n)))}}


def _cases(ds):
    boxes = dict(RF=(20, 0.3, 3), SVR=(25, 0.3, 4), GB=(10, 0.3, 5))
    return {
        f"auto_vs_rf[{ds}]": (heldout(ds, auto=(10, 0.3), RF=(20, 0.3, 2)),
                              heldout(ds, auto=(20, 0.3), RF=(10, 0.3, 2)),
                              heldout(ds, auto=(10, 1.0, 1), RF=(10, 1.0, 2))),
        f"auto_vs_boxes[{ds}]": (heldout(ds, auto=(10, 0.3, 1), **boxes),
                                 heldout(ds, auto=(20, 0.3, 1), **boxes),
                                 heldout(ds, auto=(12, 1.0, 1), **{**boxes, "GB": (10, 1.0, 5)})),
        f"auto_vs_tuned[{ds}]": (heldout(ds, auto=(10, 0.3), tuned=(20, 0.3, 2)),
                                 heldout(ds, auto=(20, 0.3), tuned=(10, 0.3, 2)),
                                 heldout(ds, auto=(10, 1.0, 1), tuned=(10, 1.0, 2))),
        f"auto_vs_thesis[{ds}]": (heldout(ds, auto=(10, 0.3), thesis=(40, 0.3, 2)),
                                  heldout(ds, auto=(40, 0.3), thesis=(10, 0.3, 2)),
                                  heldout(ds, auto=(10, 1.0, 1), thesis=(10, 1.0, 2))),
        f"coverage[{ds}]": ({"inside": {ds: {"auto": (900, 1000)}}, "auto_form": {ds: "hybrid"}},
                            {"inside": {ds: {"auto": (500, 1000)}}, "auto_form": {ds: "hybrid"}},
                            {"inside": {ds: {"auto": (88, 100)}}, "auto_form": {ds: "hybrid"}}),
    }


#: claim key -> (quantities where it holds, where it does not, where it is inconclusive)
CASES = {k: v for ds in ch6.DATASETS for k, v in _cases(ds).items()}
CASES["compute_rate"] = (rates(1.05), rates(2.0), rates(1.2, noise5=0.1))


def test_every_claim_has_cases_and_unique_keys():
    keys = [c.key for c in ch6.CLAIMS]
    assert len(keys) == len(set(keys))
    assert set(keys) == set(CASES), "every claim rule needs a holds, a does-not-hold and an inconclusive case"


@pytest.mark.parametrize("claim", ch6.CLAIMS, ids=[c.key for c in ch6.CLAIMS])
def test_claim_rule_holds_fails_is_inconclusive_and_cannot_be_tested(claim):
    good, bad, unsure = CASES[claim.key]
    rows = [claim.judge(q) for q in (good, bad, unsure)]
    assert [r["verdict"] for r in rows] == ["holds", "does not hold", "inconclusive"], [r["interval"] for r in rows]
    for r in rows:
        assert r["evidence"] and r["interval"] and np.isfinite(r["estimate"])
    assert rows[0]["agree"] > 0.9 or np.isnan(rows[0]["agree"])  # the coverage's interval has no resamples
    assert rows[1]["agree"] < 0.1 or np.isnan(rows[1]["agree"])
    row = claim.judge({})
    assert row["verdict"] == "cannot be tested here" and row["evidence"] and row["interval"] == ""
    assert claim.claim and claim.thesis.startswith("§6.1") and claim.side in ("<", ">", "in") and claim.data == ""


def test_a_dataset_left_out_cannot_be_tested():
    """Quantities of ch4 only: the claims of the other datasets say so, they do not fail."""
    q = {**CASES["auto_vs_rf[ch4]"][0], "inside": {"ch4": {"auto": (90, 100)}}}
    led = judge_all("6", "x", ch6.CLAIMS, q).set_index("key")
    assert led.loc["auto_vs_rf[ch4]", "verdict"] == "holds"
    for ds in ("ch5", "lambda", "nvidia_dle"):
        row = led.loc[f"auto_vs_rf[{ds}]"]
        assert row["verdict"] == "cannot be tested here" and row["evidence"] == f"{ds} is not among the datasets analysed"
    assert list(judge_all("6", "x", ch6.CLAIMS, q).columns) == COLUMNS


def test_best_black_box_is_taken_per_resample():
    q = heldout("ch5", auto=10, RF=10, SVR=30, GB=50)
    e = ch6.best_black_box_ratio(q, "ch5")
    assert e.estimate == pytest.approx(1.0) and e.lo == pytest.approx(1.0) and e.hi == pytest.approx(1.0)
    assert ch6.best_black_box_ratio(heldout("ch5", auto=10), "ch5") is None  # no black box: no quantity


def test_coverage_interval_is_clopper_pearson():
    from scipy.stats import binomtest

    e = ch6.coverage_evidence(88, 100)
    ci = binomtest(88, 100).proportion_ci(0.95, method="exact")
    assert (e.estimate, e.lo, e.hi) == pytest.approx((0.88, ci.low, ci.high))
    assert ch6.coverage_evidence(0, 10).lo == 0.0 and ch6.coverage_evidence(10, 10).hi == 1.0
    assert ch6.coverage_evidence(0, 0) is None


class _Hybrid:
    def __init__(self, terms, rates):
        self.terms_, self.rates_ = terms, rates


def test_compute_rate_is_one_worker_outside_the_regime():
    regime = _Hybrid([("compute", "workers=1; batch_size=1"), ("compute", "workers=1; batch_size≠1"),
                      ("compute", "workers=2; batch_size≠1"), ("step", "workers=1; batch_size≠1")], [1.0, 2.0, 3.0, 4.0])
    assert ch6.compute_rate(regime) == 2.0
    assert ch6.compute_rate(_Hybrid([("compute", ""), ("step", "")], [5.0, 6.0])) == 5.0
    assert ch6.compute_rate(_Hybrid([("compute", "workers=1"), ("compute", "workers=2")], [7.0, 8.0])) == 7.0
    assert np.isnan(ch6.compute_rate(_Hybrid([("step", "")], [1.0])))


def test_compute_rate_of_a_fitted_hybrid_on_chapter_5():
    from perfkit.data.measured import load_steps
    from perfkit.model.selection.search import make_form
    from perfkit.schema import ROLES, resolve

    X, y, _ = load_steps(resolve("data/measured/pytorch-cpu/ch5_resattnet3d.csv"), roles="ch5")
    model = make_form("hybrid", **ROLES["ch5"], network="resattnet3d",
                      fixed={"stride": 2, "volume": "48x56x48", "pool_size": 1}).fit(X.head(300), y.head(300))
    rate = ch6.compute_rate(model)
    level = [lv for (c, lv), r in zip(model.terms_, model.rates_) if c == "compute" and r == rate]
    assert level and level[0].startswith("workers=1; batch_size≠")
    assert 1e-12 < rate < 1e-9  # seconds per forward FLOP of a CPU


class _Linear:
    """A model with intervals: time = 10 / workers, interval ×/÷ 1.1, workers beyond 3 extrapolated."""

    def predict_interval(self, X, coverage):
        t = 10.0 / X["workers"].to_numpy(dtype=float)
        return pd.DataFrame({"predicted": t, "lower": t / 1.1, "upper": t * 1.1,
                             "extrapolated": X["workers"].to_numpy() > 3}, index=X.index)


def test_whatif_speedup_efficiency_and_their_intervals():
    t = ch6.whatif_table(_Linear(), {"batch_size": 8, "workers": 1}, [1, 2, 4, 8])
    assert list(t["workers"]) == [1, 2, 4, 8]
    assert t["speedup"].tolist() == pytest.approx([1, 2, 4, 8]) and t["efficiency"].tolist() == pytest.approx([1] * 4)
    assert t["speedup_lower"].iloc[0] == t["speedup_upper"].iloc[0] == 1.0
    assert t["speedup_lower"].iloc[1] == pytest.approx(2 / 1.21) and t["speedup_upper"].iloc[1] == pytest.approx(2 * 1.21)
    assert t["efficiency_upper"].iloc[3] == pytest.approx(1.21)
    assert t["extrapolated"].tolist() == [False, False, True, True]


def _split(n_fit=1000, n_test=500, unscored=0):
    return ch6.Split("ch4", None, None, np.ones(n_fit), np.ones(n_test - unscored), {}, None, None, None, None, None,
                     "", unscored)


def test_extrap_rows_only_for_the_same_split(tmp_path):
    doc = {"results": {"ch4/a/default": {"fit_rows": 1000, "test_rows": 500, "mape": 68.5, "rows_predicted": 500,
                                         "extrap_version": "4.2.5"},
                       "ch4/b/default": {"fit_rows": 1000, "test_rows": 500, "mape": None, "rows_predicted": 0}}}
    path = tmp_path / "extrap.json"
    path.write_text(json.dumps(doc))
    rows = ch6.read_extrap(str(path), {"ch4": _split()})["ch4"]
    assert rows["Extra-P (a)"]["MAPE"] == 68.5 and "500 of 500" in rows["Extra-P (a)"]["note"]
    assert np.isnan(rows["Extra-P (b)"]["MAPE"]) and "no model" in rows["Extra-P (b)"]["note"]
    other = ch6.read_extrap(str(path), {"ch4": _split(300, 150)})["ch4"]["Extra-P (a)"]
    assert np.isnan(other["MAPE"]) and "another split" in other["note"]
    missing = ch6.read_extrap(str(tmp_path / "none.json"), {"ch4": _split()})["ch4"]["Extra-P (a)"]
    assert np.isnan(missing["MAPE"]) and missing["note"].startswith("not run")
    (tmp_path / "bad.json").write_text("{not json")  # a damaged file is an error, never shown as "not run"
    with pytest.raises(ParameterError, match=r"extrap_results: .*bad.json is not a readable JSON file"):
        ch6.read_extrap(str(tmp_path / "bad.json"), {"ch4": _split()})


def test_thesis_formula_writes_out_eq_4_4():
    from perfkit.model.forms.generic import GenericPerformanceModel

    class M(GenericPerformanceModel):  # a fitted parameter table without a fit
        params_ = pd.DataFrame([
            dict(term="x", kind="numeric", column="x", level="", a=2.0, p=0.5, q=np.nan, C=np.nan),
            dict(term="c=a", kind="categorical", column="c", level="a", a=0.0, p=np.nan, q=np.nan, C=np.nan),
            dict(term="c=b", kind="categorical", column="c", level="b", a=1.5, p=np.nan, q=np.nan, C=np.nan),
            dict(term="workers", kind="extrinsic", column="workers", level="", a=np.nan, p=np.nan, q=-0.9, C=np.nan),
            dict(term="C", kind="constant", column="", level="", a=np.nan, p=np.nan, q=np.nan, C=0.25)])

    assert ch6.thesis_formula(M()) == "t = (2·x^0.5 + 1.5·[c=b]) · workers^-0.9 + 0.25"
    M.params_.loc[4, "C"] = 1e-40  # a constant at its bound: run-to-run noise, written as nothing
    M.params_.loc[2, "a"] = 3e-45
    assert ch6.thesis_formula(M()) == "t = (2·x^0.5) · workers^-0.9"


def test_parameters_quick_mode_and_the_hybrid_only_case():
    p = ch6.check_params(quick=True)
    assert p.analysed == ["ch4", "ch5", "lambda"] and p.folds == 3 and p.searched_forms == ["loglinear", "hybrid"]
    assert ch6.check_params(quick=True, datasets=["nvidia_dle"]).analysed == ["nvidia_dle"]
    assert ch6.check_params(datasets=["ch5", "ch4"]).analysed == ["ch4", "ch5"]
    assert ch6.check_params(datasets=["ch4"], forms=["hybrid"]).searched_forms == ["hybrid"]
    with pytest.raises(ParameterError, match="^forms: .* leaves no form for lambda"):
        ch6.check_params(forms=["hybrid"])
    assert ch6.check_params(extrap_results="no/such/file.json").extrap_results == "no/such/file.json"


def test_notebook_registered_and_outputs_named_after_chapter_6():
    from perfkit.chapters import CHAPTERS, chapter_module
    from perfkit.chapters.notebooks import notebook_path

    assert CHAPTERS["ch6"] == ("ch6", "ch6_beyond_the_thesis.ipynb")
    assert chapter_module("ch6") is ch6 and notebook_path("ch6").is_file()
    nb = json.loads(notebook_path("ch6").read_text())
    assert all(c.get("outputs", []) == [] and c.get("execution_count") is None for c in nb["cells"])
