"""Every claim rule of every chapter, on quantities that make it hold and fail (and on missing quantities)."""
import pytest

from perfkit.chapters import ch3, ch4, ch5
from perfkit.report.claims import judge_all

E = {"MAPE": 10.0, "MSE": 2.0, "RMSE": 1.4}
WORSE = {"MAPE": 12.0, "MSE": 3.0, "RMSE": 1.7}
PUB3 = ["LIF >= 1 in every cell (eq. 3.8)", "Table 3.5 = paper eqs. 10-18", "t_iter = sum of phases (Table 3.2, eq. 3.4)",
        "text: Chainer's t_md is 0.3 s longer than MXNet's and TensorFlow's"]

#: claim key -> (quantities where it holds, quantities where it does not)
CASES = {
    ("ch3", "sum_of_phases"): ({"remainder_share": 0.002}, {"remainder_share": 0.03}),
    ("ch3", "t_c_grows"): ({"t_c": {"CNN": (0.01, 0.02), "MLP": (0.004, 0.009)}},
                           {"t_c": {"CNN": (0.01, 0.02), "MLP": (0.009, 0.004)}}),
    ("ch3", "lif_vs_speedup"): ({"lif_rho": (-0.5, 6)}, {"lif_rho": (0.3, 6)}),
    ("ch3", "speedup"): ({"best_speedup": {"CNN": 1.7, "MLP": 1.1}}, {"best_speedup": {"CNN": 1.7, "MLP": 0.8}}),
    ("ch3", "eq37_paper"): ({"eq37_paper": {"max": 0.1, "n": 6}}, {"eq37_paper": {"max": 0.25, "n": 6}}),
    ("ch3", "eq37_thesis"): ({"eq37_thesis": {"max": 0.2, "n": 6}}, {"eq37_thesis": {"max": 0.21, "n": 6}}),
    ("ch3", "overlap"): ({"overlap": {("CNN", 2): 0.9, ("MLP", 3): 0.95}}, {"overlap": {("CNN", 2): 0.9, ("MLP", 3): 1.1}}),
    ("ch3", "lif_regression"): ({"lif_r2": {"CNN": 0.95, "MLP": 0.91}}, {"lif_r2": {"CNN": 0.95, "MLP": 0.44}}),
    **{("ch3", f"published: {c}"): ({f"published: {c}": 1.0}, {f"published: {c}": 7 / 9}) for c in PUB3},
    ("ch4", "l2_beats_l1"): ({"errors": {"DE+L2": E, "DE+L1": WORSE}, "lam_l2": 1e-3, "lam_l1": 1e-3},
                             {"errors": {"DE+L2": dict(E, RMSE=1.8), "DE+L1": WORSE}, "lam_l2": 1e-3, "lam_l1": 1e-3}),
    ("ch4", "r2_falls"): ({"r2_drop": {"l1": 0.05, "l2": 0.02}}, {"r2_drop": {"l1": 0.05, "l2": 0.005}}),
    ("ch4", "stable_extrinsic"): ({"stability": dict(q_sd=0.01, p_sd=0.5, c_rel=0.1, a_rel=0.8)},
                                  {"stability": dict(q_sd=0.01, p_sd=0.5, c_rel=0.9, a_rel=0.8)}),
    ("ch4", "q_workers"): ({"q_workers": -0.9}, {"q_workers": -0.01}),
    ("ch4", "q_batch"): ({"q_batch": -1.1}, {"q_batch": -0.33}),
    ("ch4", "rf_beats_de"): ({"mape": {"DE": 48.0, "DE+L2": 59.0, "RF": 18.0, "SVR": 13.0}},
                             {"mape": {"DE": 15.0, "DE+L2": 59.0, "RF": 18.0, "SVR": 13.0}}),
    ("ch4", "svr_worst"): ({"mape": {"DE": 48.0, "DE+L2": 59.0, "RF": 18.0, "SVR": 60.0}},
                           {"mape": {"DE": 48.0, "DE+L2": 59.0, "RF": 18.0, "SVR": 13.0}}),
    ("ch4", "published_a_bounds"): ({"negative_a": []}, {"negative_a": ["MXNet Dropout: a = -0.5"]}),
    ("ch4", "published_44_vs_j5"): ({"mape_44_vs_j5": {}}, {"mape_44_vs_j5": {"PyTorch": (27, 14)}}),
    ("ch4", "published_45_vs_43"): ({"q_45_vs_43": {}}, {"q_45_vs_43": {"MXNet": (-1.01, -1.07)}}),
    ("ch4", "published_rf_beats_de"): ({"rf_worse": []}, {"rf_worse": ["PyTorch"]}),
    ("ch5", "q_batch"): ({"q_batch": -0.03, "q_batch_std": 0.01}, {"q_batch": -0.27, "q_batch_std": 0.03}),
    ("ch5", "q_workers"): ({"q_workers": -0.94, "q_workers_std": 0.02}, {"q_workers": -0.56, "q_workers_std": 0.05}),
    ("ch5", "mape_7"): ({"mape": {"DE": 7.0, "RF": 7.0}}, {"mape": {"DE": 18.9, "RF": 4.9}}),
    ("ch5", "rf_equal"): ({"mape": {"DE": 7.0, "RF": 8.5}}, {"mape": {"DE": 18.9, "RF": 4.9}}),
    ("ch5", "above_ch4"): ({"mape": {"DE": 7.0, "RF": 7.0}, "ch4_l2_mape": 5.0},
                           {"mape": {"DE": 18.9, "RF": 4.9}, "ch4_l2_mape": 58.9}),
}
MODULES = {"ch3": ch3, "ch4": ch4, "ch5": ch5}
ALL = [(ch, c) for ch, mod in MODULES.items() for c in mod.CLAIMS]


def test_every_claim_has_cases_and_unique_keys():
    keys = [(ch, c.key) for ch, c in ALL]
    assert len(keys) == len(set(keys))
    assert set(keys) == set(CASES), "every claim rule needs a holds and a does-not-hold case"


@pytest.mark.parametrize("chapter,claim", ALL, ids=[f"{ch}:{c.key}" for ch, c in ALL])
def test_claim_rule_holds_fails_and_cannot_be_tested(chapter, claim):
    good, bad = CASES[(chapter, claim.key)]
    assert claim.judge(good)["verdict"] == "holds"
    assert claim.judge(bad)["verdict"] == "does not hold"
    row = claim.judge({})
    assert row["verdict"] == "cannot be tested here" and row["evidence"]
    assert claim.judge(bad)["evidence"] and claim.claim and claim.thesis


def test_ledger_table_and_filled_rule():
    led = judge_all("4", "x.csv", ch4.CLAIMS[:1], CASES[("ch4", "l2_beats_l1")][1])
    assert list(led.columns) == ["chapter", "claim", "thesis", "verdict", "evidence", "rule", "data"]
    assert led["rule"].iloc[0] == "L2 lower on all three, both at lambda 0.001 / 0.001"
    assert led["evidence"].iloc[0] == "MAPE: L2 10 vs L1 12; MSE: L2 2 vs L1 3; RMSE: L2 1.8 vs L1 1.7"


def test_lif_correlation_that_cannot_be_computed_is_not_a_verdict():
    claim = next(c for c in ch3.CLAIMS if c.key == "lif_vs_speedup")
    assert claim.judge({"lif_rho": (float("nan"), 2)})["verdict"] == "cannot be tested here"
