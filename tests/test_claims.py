"""Every claim rule of every chapter, on quantities that make it hold, fail and be inconclusive (and on missing ones)."""
import numpy as np
import pandas as pd
import pytest

from perfkit.chapters import ch3, ch4, ch5
from perfkit.report.claims import COLUMNS, judge_all

from perfkit.evidence import Evidence

# ---------------------------------------------------------------------------------------- builders
def ev(est, lo, hi):
    """An estimate whose resamples span about [lo, hi]."""
    return Evidence.from_samples(est, np.linspace(lo, hi, 1001))


X = Evidence.exact
_Y = np.random.default_rng(0).uniform(1.0, 3.0, 300)


def pred(mape, noise=0.0, seed=1):
    """Predictions of _Y with a MAPE of about ``mape`` %; ``noise`` spreads the relative errors (seed-dependent)."""
    z = np.random.default_rng(seed).standard_normal(_Y.size)
    return _Y * (1 + np.clip(mape / 100 * (1 + noise * z), 0, None))


def heldout(**models):
    """``{"y", "pred"}`` with ``models`` = name -> mape or (mape, noise, seed)."""
    return {"y": _Y, "pred": {k.replace("_", "+"): pred(*(v if isinstance(v, tuple) else (v,))) for k, v in models.items()}}


def seeds(n=10, seed=0, **cols):
    """Per-seed parameters: column -> (mean, std), drawn normally (names: q_workers -> q[workers], C)."""
    rng = np.random.default_rng(seed)
    names = {k: (k if k == "C" else f"{k[0]}[{k[2:]}]") for k in cols}
    return pd.DataFrame({names[k]: m + s * rng.standard_normal(n) for k, (m, s) in cols.items()})


def effects(se=0.01, **betas):
    """``level_effects``-like (params, cov, levels); betas: 'optimizer__sgd' -> β of level sgd (first level: reference)."""
    names = ["const"] + [k.replace("__", "=") for k in betas]
    params = pd.Series([1.0, *betas.values()], index=names)
    cov = pd.DataFrame(np.diag([se ** 2] * len(names)), index=names, columns=names)
    levels = {"optimizer": ["adam", "sgd"], "padding": ["same", "valid"], "activation": ["relu", "sigmoid", "tanh"]}
    return params, cov, levels


def sweep(drop_l1, drop_l2, noise=0.002, n=3):
    rng = np.random.default_rng(3)
    out = {}
    for pen, drop in (("l1", drop_l1), ("l2", drop_l2)):
        base = {1e-4: 0.45, 1e-3: 0.45, 3e-3: 0.45 - drop, 1e-2: 0.45 - drop, 1e-1: 0.3}
        out[pen] = {lam: v + noise * rng.standard_normal(n) for lam, v in base.items()}
    return out


G, B_ = {"CNN": ev(2.8, 2.5, 3.1)}, {"CNN": ev(1.7, 1.6, 1.8)}
SP = {"t_c_trend": "CNN"}
TF, MX = "TensorFlow (gpu, measured)", "MXNet (gpu, measured)"
DE_L2 = seeds(a_x=(5.0, 0.5), k_l=(2.0, 0.2), p_x=(0.5, 0.05), q_workers=(-1.0, 0.01), C=(3.0, 0.03), seed=1)
DE_WIDE = seeds(a_x=(5.0, 3.0), k_l=(2.0, 1.5), p_x=(0.5, 1.0), q_workers=(-1.0, 0.01), C=(3.0, 0.03), seed=2)

#: claim key -> (quantities where it holds, where it does not, where it is inconclusive); {} is the missing case
CASES = {
    # ---------------------------------------------------------------------------- Chapter 3
    ("ch3", "t_c_grows"): ({"t_c_trend": {("CNN", 8): ev(0.8, 0.5, 1.1), ("MLP", 8): ev(0.4, 0.2, 0.6)}},
                           {"t_c_trend": {("CNN", 8): ev(0.8, 0.5, 1.1), ("MLP", 8): ev(-0.2, -0.3, -0.1)}},
                           {"t_c_trend": {("CNN", 8): ev(0.8, 0.5, 1.1), ("MLP", 8): ev(0.0, -0.1, 0.1)}}),
    ("ch3", "lif_vs_speedup"): ({"lif_rho": ev(-0.8, -0.95, -0.6), "lif_cells": 6},
                                {"lif_rho": ev(0.3, 0.1, 0.5), "lif_cells": 6},
                                {"lif_rho": ev(-0.49, -1.0, 0.6), "lif_cells": 6}),
    ("ch3", "speedup"): ({"speedup": {"CNN": ev(1.7, 1.6, 1.8), "MLP": ev(1.1, 1.05, 1.15)}},
                         {"speedup": {"CNN": ev(1.7, 1.6, 1.8), "MLP": ev(0.8, 0.75, 0.85)}},
                         {"speedup": {"CNN": ev(1.7, 1.6, 1.8), "MLP": ev(1.0, 0.95, 1.05)}}),
    **{("ch3", f"eq37_{v}"): ({f"eq37_{v}": {("CNN", 2): ev(0.05, 0.03, 0.07), ("CNN", 3): ev(0.1, 0.08, 0.12)}},
                              {f"eq37_{v}": {("CNN", 2): ev(0.05, 0.03, 0.07), ("CNN", 3): ev(0.25, 0.22, 0.28)}},
                              {f"eq37_{v}": {("CNN", 2): ev(0.05, 0.03, 0.07), ("CNN", 3): ev(0.2, 0.18, 0.22)}})
       for v in ("thesis", "paper")},
    ("ch3", "overlap"): ({"overlap": {("CNN", 2): ev(0.9, 0.88, 0.92), ("MLP", 3): ev(0.95, 0.93, 0.97)}},
                         {"overlap": {("CNN", 2): ev(0.9, 0.88, 0.92), ("MLP", 3): ev(1.1, 1.08, 1.12)}},
                         {"overlap": {("CNN", 2): ev(0.9, 0.88, 0.92), ("MLP", 3): ev(1.0, 0.97, 1.03)}}),
    ("ch3", "lif_regression"): ({"lif_r2": {"CNN": ev(0.95, 0.94, 0.96), "MLP": ev(0.93, 0.91, 0.95)}},
                                {"lif_r2": {"CNN": ev(0.95, 0.94, 0.96), "MLP": ev(0.44, 0.39, 0.49)}},
                                {"lif_r2": {"CNN": ev(0.95, 0.94, 0.96), "MLP": ev(0.9, 0.88, 0.92)}}),
    ("ch3", "lif_coefficient"): ({"lif_beta2": {"CNN": ev(175, 157, 193), "MLP": ev(0.6, 0.02, 1.2)}},
                                 {"lif_beta2": {"CNN": ev(175, 157, 193), "MLP": ev(-5, -8, -2)}},
                                 {"lif_beta2": {"CNN": ev(175, 157, 193), "MLP": ev(0.05, -0.4, 0.5)}}),
    ("ch3", "framework_ranking"): ({"framework_speedup": {MX: {"CNN": ev(2.9, 2.8, 3.0)}, TF: {"CNN": ev(2.0, 1.9, 2.1)}}},
                                   {"framework_speedup": {MX: {"CNN": ev(1.5, 1.4, 1.6)}, TF: {"CNN": ev(2.0, 1.9, 2.1)}}},
                                   {"framework_speedup": {MX: {"CNN": ev(2.0, 1.9, 2.1)}, TF: {"CNN": ev(2.0, 1.9, 2.1)}}}),
    ("ch3", "fw_mxnet_linear"): ({"fw_mxnet_efficiency": {("CNN", 3): ev(0.95, 0.93, 0.97)}},
                                 {"fw_mxnet_efficiency": {("CNN", 3): ev(0.5, 0.45, 0.55)}},
                                 {"fw_mxnet_efficiency": {("CNN", 3): ev(0.9, 0.85, 0.95)}}),
    ("ch3", "fw_mxnet_aggregation"): ({"fw_mxnet_tc": {("CNN", 2, "TensorFlow"): ev(1.5, 1.4, 1.6)}},
                                      {"fw_mxnet_tc": {("CNN", 2, "TensorFlow"): ev(0.5, 0.4, 0.6),
                                                       ("MLP", 3, "Chainer"): ev(1.5, 1.4, 1.6)}},
                                      {"fw_mxnet_tc": {("CNN", 2, "TensorFlow"): ev(1.0, 0.9, 1.1)}}),
    ("ch3", "fw_tf_lif"): ({"fw_tf_lif": {("CNN", 2, "MXNet"): ev(0.05, 0.03, 0.07)}},
                           {"fw_tf_lif": {("CNN", 2, "MXNet"): ev(-0.05, -0.07, -0.03)}},
                           {"fw_tf_lif": {("CNN", 2, "MXNet"): ev(0.0, -0.02, 0.02)}}),
    ("ch3", "fw_tf_cnn_forward"): ({"fw_tf_cnn_forward": {("CNN", 1, "MXNet"): ev(1.3, 1.2, 1.4)}},
                                   {"fw_tf_cnn_forward": {("CNN", 1, "MXNet"): ev(0.7, 0.6, 0.8)}},
                                   {"fw_tf_cnn_forward": {("CNN", 1, "MXNet"): ev(1.0, 0.95, 1.05)}}),
    ("ch3", "fw_mxnet_backward"): ({"fw_mxnet_backward": {("MLP", 1, "Chainer"): ev(1.3, 1.2, 1.4)}},
                                   {"fw_mxnet_backward": {("MLP", 1, "Chainer"): ev(0.7, 0.6, 0.8)}},
                                   {"fw_mxnet_backward": {("MLP", 1, "Chainer"): ev(1.0, 0.95, 1.05)}}),
    ("ch3", "published_lif"): ({"published_lif": {"a": ev(1.013, 1.0125, 1.0135), "b": ev(1.2, 1.19, 1.21)}},
                               {"published_lif": {"a": ev(0.98, 0.975, 0.985), "b": ev(1.2, 1.19, 1.21)}},
                               {"published_lif": {"a": ev(1.0, 0.9995, 1.0005), "b": ev(1.2, 1.19, 1.21)}}),
    ("ch3", "published_t35_vs_paper"): ({"published_t35_vs_paper": {("CNN", "MXNet", "beta0"): X(-1e-5)}},
                                        {"published_t35_vs_paper": {("CNN", "MXNet", "beta1"): X(81.1)}},
                                        {"published_t35_vs_paper": {("CNN", "MXNet", "beta1"): X(0.0)}}),
    ("ch3", "published_sum_of_phases"): ({"published_sum_of_phases": {("CNN", "MXNet"): X(-1e-4)}},
                                         {"published_sum_of_phases": {("CNN", "MXNet"): X(0.59)}},
                                         {"published_sum_of_phases": {("CNN", "MXNet"): X(0.0)}}),
    ("ch3", "published_chainer_md"): ({"published_chainer_md": {("CNN", "MXNet"): ev(0.01, 0.0, 0.02)}},
                                      {"published_chainer_md": {("CNN", "MXNet"): ev(0.2997, 0.2996, 0.2998)}},
                                      {"published_chainer_md": {("CNN", "MXNet"): ev(0.05, 0.04, 0.06)}}),
    ("ch3", "published_t33_growth"): ({"published_t33_growth": {("CNN", "MXNet"): ev(0.017, 0.0169, 0.0171)}},
                                      {"published_t33_growth": {("MLP", "MXNet"): ev(-0.0587, -0.0588, -0.0586)}},
                                      {"published_t33_growth": {("MLP", "MXNet"): ev(0.0, -1e-4, 1e-4)}}),
    ("ch3", "published_eq37_rank"): ({"published_eq37_rank": {("CNN", 2, "thesis", "MXNet"): ev(0.3, 0.29, 0.31)}},
                                     {"published_eq37_rank": {("CNN", 2, "thesis", "MXNet"): ev(-0.38, -0.39, -0.37)}},
                                     {"published_eq37_rank": {("CNN", 2, "thesis", "MXNet"): ev(0.0, -0.01, 0.01)}}),
    # ---------------------------------------------------------------------------- Chapter 4
    ("ch4", "l2_beats_l1"): ({"heldout": heldout(DE_L2=(10, 0.3), DE_L1=(12, 0.3)), "lam_l2": 1e-3, "lam_l1": 1e-3},
                             {"heldout": heldout(DE_L2=(12, 0.3), DE_L1=(10, 0.3))},
                             {"heldout": heldout(DE_L2=(10, 1.0, 1), DE_L1=(10, 1.0, 2))}),
    ("ch4", "r2_falls"): ({"sweep_r2": sweep(0.03, 0.02)}, {"sweep_r2": sweep(0.03, -0.02)},
                          {"sweep_r2": sweep(0.03, 0.0, noise=0.02)}),
    ("ch4", "stable_q"): ({"seed_params": {"DE": seeds(q_workers=(-1.0, 0.01), q_batch_size=(-1.0, 0.003))}},
                          {"seed_params": {"DE": seeds(q_workers=(-1.0, 0.5), q_batch_size=(-1.0, 0.003))}},
                          {"seed_params": {"DE": seeds(q_workers=(-1.0, 0.1), q_batch_size=(-1.0, 0.003))}}),
    ("ch4", "stable_C"): ({"seed_params": {"DE": seeds(C=(3.7, 0.02))}}, {"seed_params": {"DE": seeds(C=(0.5, 0.45))}},
                          {"seed_params": {"DE": seeds(C=(1.0, 0.14))}}),
    ("ch4", "intrinsic_vary"): ({"seed_params": {"DE": seeds(p_x=(1.0, 1.0), p_y=(1.0, 0.8), q_workers=(-1.0, 0.01))}},
                                {"seed_params": {"DE": seeds(p_x=(1.0, 0.01), p_y=(1.0, 0.01), q_workers=(-1.0, 1.0))}},
                                {"seed_params": {"DE": seeds(p_x=(1.0, 0.1), p_y=(1.0, 0.1), q_workers=(-1.0, 0.1))}}),
    ("ch4", "l2_reduces_variance"): ({"seed_params": {"DE": DE_WIDE, "DE+L2": DE_L2}},
                                     {"seed_params": {"DE": DE_L2, "DE+L2": DE_WIDE}},
                                     {"seed_params": {"DE": DE_L2, "DE+L2": seeds(a_x=(5.0, 0.5), k_l=(2.0, 0.2),
                                                                                  p_x=(0.5, 0.05), seed=10)}}),
    ("ch4", "q_workers"): ({"seed_params": {"DE": seeds(q_workers=(-1.0, 0.01))}},
                           {"seed_params": {"DE": seeds(q_workers=(0.0, 0.06))}},
                           {"seed_params": {"DE": seeds(q_workers=(-0.85, 0.05))}}),
    ("ch4", "q_batch"): ({"seed_params": {"DE": seeds(q_batch_size=(-0.3, 0.08))}},
                         {"seed_params": {"DE": seeds(q_batch_size=(0.3, 0.08))}},
                         {"seed_params": {"DE": seeds(q_batch_size=(0.0, 0.1))}}),
    ("ch4", "rf_slightly_better"): ({"heldout": heldout(DE=(12, 0.3), RF=(10, 0.3))},
                                    {"heldout": heldout(DE=(50, 0.3), RF=(18, 0.3))},
                                    {"heldout": heldout(DE=(15, 1.0, 1), RF=(10, 1.0, 2))}),
    ("ch4", "svr_worst"): ({"heldout": heldout(DE=48, DE_L2=(59, 0.3), RF=18, SVR=(60, 0.3))},
                           {"heldout": heldout(DE=48, DE_L2=59, RF=18, SVR=13)},
                           {"heldout": heldout(DE=48, DE_L2=(59, 1.0, 1), RF=18, SVR=(59, 1.0, 2))}),
    ("ch4", "adam_over_sgd"): ({"effects": effects(optimizer__sgd=-0.07)}, {"effects": effects(optimizer__sgd=0.07)},
                               {"effects": effects(0.02, optimizer__sgd=-0.01)}),
    ("ch4", "same_over_valid"): ({"effects": effects(padding__valid=-0.27)}, {"effects": effects(padding__valid=0.27)},
                                 {"effects": effects(0.02, padding__valid=-0.01)}),
    ("ch4", "framework_ranking"): ({"framework_q": {"tensorflow": ev(-0.74, -0.75, -0.73), "pytorch": ev(-1.0, -1.01, -0.99)}},
                                   {"framework_q": {"tensorflow": ev(-1.0, -1.01, -0.99), "mxnet": ev(-0.7, -0.71, -0.69)}},
                                   {"framework_q": {"tensorflow": ev(-1.0, -1.1, -0.9), "mxnet": ev(-1.0, -1.1, -0.9)}}),
    ("ch4", "fw_mxnet_most_accurate"): ({"framework_mape": {"MXNet": ev(7, 6.5, 7.5), "TensorFlow": ev(10, 9.5, 10.5),
                                                            "PyTorch": ev(14, 13, 15)}},
                                        {"framework_mape": {"MXNet": ev(20, 19, 21), "TensorFlow": ev(10, 9.5, 10.5)}},
                                        {"framework_mape": {"MXNet": ev(10, 8, 12), "PyTorch": ev(10.2, 9.9, 10.5)}}),
    ("ch4", "fw_adam_direction"): ({"framework_effects": {"PyTorch": effects(optimizer__sgd=-0.07),
                                                          "MXNet": effects(optimizer__sgd=0.05)}},
                                   {"framework_effects": {"PyTorch": effects(optimizer__sgd=0.07),
                                                          "MXNet": effects(optimizer__sgd=0.05)}},
                                   {"framework_effects": {"TensorFlow": effects(0.02, optimizer__sgd=-0.01),
                                                          "MXNet": effects(optimizer__sgd=0.05)}}),
    ("ch4", "published_a_bounds"): ({"published_a": {"x": ev(6.07, 6.065, 6.075)}}, {"published_a": {"x": ev(-0.57, -0.575, -0.565)}},
                                    {"published_a": {"x": ev(0.0, -0.005, 0.005)}}),
    ("ch4", "published_44_vs_j5"): ({"published_44_vs_j5": {"MXNet": X(-1.0)}, "published_44_vs_j5_values": {"MXNet": (7, 7)}},
                                    {"published_44_vs_j5": {"PyTorch": X(12.0)}, "published_44_vs_j5_values": {"PyTorch": (27, 14)}},
                                    {"published_44_vs_j5": {"PyTorch": X(0.0)}, "published_44_vs_j5_values": {"PyTorch": (27, 28)}}),
    ("ch4", "published_45_vs_43"): ({"published_45_vs_43": {"PyTorch": X(-0.01)}, "published_45_vs_43_values": {"PyTorch": (-1.02, -1.02)}},
                                    {"published_45_vs_43": {"MXNet": X(0.05)}, "published_45_vs_43_values": {"MXNet": (-1.01, -1.07)}},
                                    {"published_45_vs_43": {"TensorFlow": X(0.0)}, "published_45_vs_43_values": {"TensorFlow": (-0.73, -0.74)}}),
    ("ch4", "q_workers_negative"): ({"machine_q": ev(-0.79, -0.95, -0.65), "machine": "16-core CPU (Intel Xeon)"},
                                    {"machine_q": ev(0.15, 0.05, 0.25), "machine": "2-core CPU (AMD EPYC)"},
                                    {"machine_q": ev(0.05, -0.26, 0.19), "machine": "2-core CPU (AMD EPYC)"}),
    ("ch4", "published_rf_beats_de"): ({"published_rf_vs_de": {"TensorFlow": ev(-4.3, -4.9, -3.7)}},
                                       {"published_rf_vs_de": {"PyTorch": ev(11.0, 10.2, 11.8)}},
                                       {"published_rf_vs_de": {"MXNet": ev(0.0, -0.9, 0.9)}}),
    # ---------------------------------------------------------------------------- Chapter 5
    ("ch5", "q_batch"): ({"seed_params": {"DE+L2": seeds(q_batch_size=(-0.03, 0.002))}},
                         {"seed_params": {"DE+L2": seeds(q_batch_size=(-0.26, 0.03))}},
                         {"seed_params": {"DE+L2": seeds(q_batch_size=(-0.1, 0.01))}}),
    ("ch5", "q_workers"): ({"seed_params": {"DE+L2": seeds(q_workers=(-0.94, 0.02))}},
                           {"seed_params": {"DE+L2": seeds(q_workers=(-0.53, 0.05))}},
                           {"seed_params": {"DE+L2": seeds(q_workers=(-0.84, 0.02))}}),
    ("ch5", "lr_power"): ({"seed_params": {"DE+L2": seeds(p_learning_rate=(-0.04, 0.002))}},
                          {"seed_params": {"DE+L2": seeds(p_learning_rate=(-0.3, 0.02))}},
                          {"seed_params": {"DE+L2": seeds(p_learning_rate=(-0.1, 0.01))}}),
    ("ch5", "sigmoid_slowest"): ({"effects": effects(activation__sigmoid=0.1, activation__tanh=0.05)},
                                 {"effects": effects(activation__sigmoid=-0.014, activation__tanh=0.025)},
                                 {"effects": effects(0.02, activation__sigmoid=0.01, activation__tanh=0.0)}),
    ("ch5", "adam_over_sgd"): ({"effects": effects(optimizer__sgd=-0.06)}, {"effects": effects(optimizer__sgd=0.06)},
                               {"effects": effects(0.02, optimizer__sgd=0.0)}),
    ("ch5", "mape_7"): ({"heldout": heldout(DE=(7, 0.3))}, {"heldout": heldout(DE=(19, 0.3))},
                        {"heldout": heldout(DE=(10, 1.0))}),
    ("ch5", "rf_equal"): ({"heldout": heldout(DE=(7, 0.3), RF=(7.5, 0.3))}, {"heldout": heldout(DE=(19, 0.3), RF=(5, 0.3))},
                          {"heldout": heldout(DE=(9, 1.0, 1), RF=(7, 1.0, 2))}),
    ("ch5", "above_ch4"): ({"heldout": heldout(DE=(20, 0.3)), "ch4_heldout": {"y": _Y, "pred": pred(10, 0.3)}},
                           {"heldout": heldout(DE=(7, 0.3)), "ch4_heldout": {"y": _Y, "pred": pred(20, 0.3)}},
                           {"heldout": heldout(DE=(10, 1.0, 1)), "ch4_heldout": {"y": _Y, "pred": pred(10, 1.0, 2)}}),
}
MODULES = {"ch3": ch3, "ch4": ch4, "ch5": ch5}
ALL = [(ch, c) for ch, mod in MODULES.items() for c in mod.CLAIMS]


def Q(chapter: str, values: dict):
    """The chapter's typed claim quantities (``ChNQuantities``) holding ``values``; a plain dict for a chapter
    whose claims read a mapping."""
    cls = getattr(MODULES[chapter], f"{chapter.capitalize()}Quantities", None)
    return cls(**values) if cls is not None else values


def test_every_claim_has_cases_and_unique_keys():
    keys = [(ch, c.key) for ch, c in ALL]
    assert len(keys) == len(set(keys))
    assert set(keys) == set(CASES), "every claim rule needs a holds, a does-not-hold and an inconclusive case"


@pytest.mark.parametrize("chapter,claim", ALL, ids=[f"{ch}:{c.key}" for ch, c in ALL])
def test_claim_rule_holds_fails_is_inconclusive_and_cannot_be_tested(chapter, claim):
    good, bad, unsure = CASES[(chapter, claim.key)]
    rows = [claim.judge(Q(chapter, q)) for q in (good, bad, unsure)]
    assert [r["verdict"] for r in rows] == ["holds", "does not hold", "inconclusive"], [r["interval"] for r in rows]
    for r in rows:
        assert r["evidence"] and r["interval"] and np.isfinite(r["estimate"])
    assert rows[0]["agree"] > 0.9 or np.isnan(rows[0]["agree"])  # exact quantities have no resamples
    assert rows[1]["agree"] < 0.1 or np.isnan(rows[1]["agree"])
    row = claim.judge(Q(chapter, {}))
    assert row["verdict"] == "cannot be tested here" and row["evidence"] and row["interval"] == ""
    assert claim.claim and claim.thesis and claim.side in ("<", ">", "in")


def test_published_claims_name_the_thesis_tables_as_their_data():
    for ch, c in ALL:
        if c.key.startswith("published"):
            assert c.data.startswith(("thesis", "journal")), (ch, c.key)
        else:
            assert c.data == "", (ch, c.key)


def test_ledger_table_columns_and_filled_rule():
    led = judge_all("4", "x.csv", ch4.CLAIMS[:1], Q("ch4", CASES[("ch4", "l2_beats_l1")][0]))
    assert list(led.columns) == COLUMNS == ["chapter", "key", "claim", "thesis", "verdict", "estimate", "interval",
                                            "agree", "evidence", "rule", "resampling", "data"]
    assert led["rule"].iloc[0].endswith("both at lambda 0.001 / 0.001")
    assert led["verdict"].iloc[0] == "holds" and led["interval"].iloc[0].startswith("[")
    assert led["data"].iloc[0] == "x.csv" and "held-out rows" in led["resampling"].iloc[0]
    pub = judge_all("4", "x.csv", [c for c in ch4.CLAIMS if c.key == "published_a_bounds"],
                    Q("ch4", CASES[("ch4", "published_a_bounds")][1]))
    assert pub["data"].iloc[0].startswith("thesis Tables 4.2, 4.3")


def test_lif_correlation_that_cannot_be_computed_is_not_a_verdict():
    claim = next(c for c in ch3.CLAIMS if c.key == "lif_vs_speedup")
    q = {"lif_rho": Evidence.from_samples(float("nan"), [np.nan] * 10), "lif_cells": 2}
    assert claim.judge(q)["verdict"] == "cannot be tested here"


def test_ranking_of_frameworks_the_thesis_does_not_name_cannot_be_tested():
    claim = next(c for c in ch3.CLAIMS if c.key == "framework_ranking")
    q = {"framework_speedup": {"PyTorch (cpu, measured)": {"CNN": ev(1.7, 1.6, 1.8)},
                               "JAX (cpu, measured)": {"CNN": ev(1.5, 1.4, 1.6)}}}
    row = claim.judge(q)
    assert row["verdict"] == "cannot be tested here" and "PyTorch" in row["evidence"]
    claim4 = next(c for c in ch4.CLAIMS if c.key == "framework_ranking")
    assert claim4.judge(Q("ch4", {"framework_q": {"pytorch": ev(-1, -1.1, -0.9)}}))["verdict"] == \
        "cannot be tested here"


def test_two_seeds_give_no_seed_interval():
    claim = next(c for c in ch4.CLAIMS if c.key == "q_workers")
    q = Q("ch4", {"seed_params": {"DE": seeds(n=2, q_workers=(-1.0, 0.01))}})
    assert claim.judge(q)["verdict"] == "cannot be tested here"


def test_verdicts_are_deterministic():
    claim = next(c for c in ch4.CLAIMS if c.key == "l2_beats_l1")
    q = CASES[("ch4", "l2_beats_l1")][2]
    assert claim.judge(Q("ch4", q)) == claim.judge(Q("ch4", q))


def test_a_quantity_on_its_threshold_is_inconclusive_whatever_its_last_bits():
    from perfkit.evidence import verdict

    assert verdict(0.1 + 0.2, 0.1 + 0.2, "<", 0.3) == "inconclusive"  # 0.30000000000000004
    assert verdict(0.74 - 0.73 - 0.01, 0.74 - 0.73 - 0.01, "<", 0.0) == "inconclusive"
    assert verdict(-1e-6, -1e-6, "<", 0.0) == "holds"


def test_compound_rules_combine_per_resample():
    from perfkit.report.claims import worst

    a = Evidence.from_samples(1.0, [0.0, 2.0, 1.0])
    b = Evidence.from_samples(1.0, [2.0, 0.0, 1.0])
    assert worst({"a": a, "b": b}, ">").samples.tolist() == [0.0, 0.0, 1.0]


def test_seed_spreads_below_the_resolution_are_the_resolution_whatever_the_noise():
    """Seeds at one optimum differ by the refinement's tolerance (~1e-6, differently on another CPU): the
    ledger's spread statistics must not see those digits, and a real spread must pass unchanged."""
    import numpy as np

    from perfkit.chapters import ch4

    rng = np.random.default_rng(0)
    base = np.tile([2.9, 0.16, -0.39, 0.0], (10, 1))
    one, two = (base + 1e-7 * g.standard_normal(base.shape) * (base != 0)
                for g in (rng, np.random.default_rng(1)))
    floor = 1e-4 * np.maximum(np.abs(base[0]), 1.0)
    np.testing.assert_allclose(ch4.claims._sd(one, 0), floor, rtol=1e-6)  # the mean's last digits move the floor's
    np.testing.assert_allclose(ch4.claims._sd(one, 0), ch4.claims._sd(two, 0), rtol=1e-6)
    np.testing.assert_allclose(ch4.claims._cv(one, 0), ch4.claims._cv(two, 0), rtol=1e-6)
    assert ch4.claims._cv(one, 0)[-1] == 0.0  # a term switched off in every seed has no spread at all
    spread = base + np.linspace(-0.05, 0.05, 10)[:, None]
    np.testing.assert_allclose(ch4.claims._sd(spread, 0)[:3], spread[:, :3].std(axis=0, ddof=1))


def _runs(frameworks: dict, iterations=40, seed=0):
    """A phased ch3 frame: ``{framework label: {(model, G): (t_f, t_b, t_c)}}``, one row per worker and iteration."""
    rng = np.random.default_rng(seed)
    rows = []
    for fw, cells in frameworks.items():
        for (model, g), (tf, tb, tc) in cells.items():
            for it in range(iterations):
                for rank in range(g):
                    jit = 1 + 0.02 * rng.standard_normal(4)
                    f, b = tf * jit[0] * (1 + 0.1 * rank), tb * jit[1]
                    c = tc * jit[2] if g > 1 else 1e-6
                    rows.append(dict(mode="phased", framework=fw, model=model, workers=g, rank=rank, iteration=it,
                                     batch_size=64, t_io=1e-4, t_h2d=1e-5, t_md=1e-5, t_f=f, t_b=b, t_c=c, t_u=1e-3,
                                     t_iter=1e-4 + 2e-5 + f + b + c + 1e-3))
    return pd.DataFrame(rows)


def test_framework_quantities_on_constructed_runs():
    """MXNet's aggregation is made twice as fast as the others' and TensorFlow's CNN forward 1.5x slower:
    the quantities say so with intervals that exclude 1, and the ranking finds the scaling order."""
    fw = {"TensorFlow (cpu, measured)": {("CNN", 1): (0.03, 0.04, 0), ("CNN", 2): (0.03, 0.04, 0.02)},
          "MXNet (cpu, measured)": {("CNN", 1): (0.02, 0.05, 0), ("CNN", 2): (0.02, 0.05, 0.01)},
          "Chainer (cpu, measured)": {("CNN", 1): (0.02, 0.03, 0), ("CNN", 2): (0.02, 0.03, 0.02)}}
    q = ch3.framework_quantities(_runs(fw))
    tc = q["fw_mxnet_tc"]
    assert set(tc) == {("CNN", 2, "TensorFlow"), ("CNN", 2, "Chainer")}
    assert all(1.8 < e.lo and e.hi < 2.2 for e in tc.values())
    fwd = q["fw_tf_cnn_forward"]
    assert all(1.4 < e.lo and e.hi < 1.6 for e in fwd.values())
    bwd = q["fw_mxnet_backward"][("CNN", 1, "Chainer")]
    assert 1.6 < bwd.lo and bwd.hi < 1.75
    assert set(q["framework_speedup"]) == set(fw) and ("CNN", 2) in q["fw_mxnet_efficiency"]
    ledger = {c.key: c.judge(q)["verdict"] for c in ch3.CLAIMS if c.key.startswith("fw_")}
    assert ledger["fw_mxnet_aggregation"] == "holds" and ledger["fw_tf_cnn_forward"] == "holds"
    assert ledger["fw_mxnet_backward"] == "holds"
    # without MXNet nothing about MXNet can be said
    q2 = ch3.framework_quantities(_runs({k: v for k, v in fw.items() if not k.startswith("MXNet")}))
    assert "fw_mxnet_tc" not in q2 and "fw_mxnet_efficiency" not in q2 and "fw_tf_cnn_forward" in q2


def test_framework_claims_need_the_frameworks_they_name():
    """A framework claim on frameworks the thesis does not name (or on one framework) is not a verdict."""
    most = next(c for c in ch4.CLAIMS if c.key == "fw_mxnet_most_accurate")
    assert most.judge(Q("ch4", {"framework_mape": {"PyTorch": ev(10, 9, 11), "JAX": ev(5, 4, 6)}}))["verdict"] == \
        "cannot be tested here"
    adam = next(c for c in ch4.CLAIMS if c.key == "fw_adam_direction")
    assert adam.judge(Q("ch4", {"framework_effects": {"PyTorch": effects(optimizer__sgd=-0.07),
                                                      "JAX": effects(optimizer__sgd=0.05)}}))["verdict"] == \
        "cannot be tested here"
    # JAX and Chainer are measured but not part of the thesis's claims: they do not change the verdict
    with_jax = {"PyTorch": effects(optimizer__sgd=-0.07), "MXNet": effects(optimizer__sgd=0.05),
                "JAX": effects(optimizer__sgd=-0.5)}
    assert adam.judge(Q("ch4", {"framework_effects": with_jax}))["verdict"] == "holds"


def test_claims_by_framework_lays_each_frameworks_verdicts_side_by_side():
    measured = [c for c in ch4.CLAIMS if c.key in ("l2_beats_l1", "svr_worst")]
    good, bad = CASES[("ch4", "l2_beats_l1")][0], CASES[("ch4", "l2_beats_l1")][1]
    led = pd.concat([judge_all("4", "a.csv", measured[:1], Q("ch4", good)),
                     judge_all("4", "b.csv", measured[:1], Q("ch4", bad)).assign(key="l2_beats_l1.mxnet")])
    view = ch4.claims_by_framework(led, ["pytorch-cpu", "mxnet-cpu"])
    row = view.loc["L2 beats L1 on MAPE, MSE and RMSE"]
    assert row["pytorch-cpu"].startswith("holds") and row["mxnet-cpu"].startswith("does not hold")


def test_spreads_below_the_fits_resolution_are_not_compared():
    """Converged fits: every seed reaches the same powers to 1e-11, p near 3 and q near 0.4. A floor per power
    (1e-4 × max(|mean|, 1)) would make p "3 times as variable" as q; one floor for all powers makes it a tie."""
    same = seeds(p_x=(3.0, 1e-11), p_y=(2.5, 1e-11), q_workers=(0.4, 1e-11), q_batch_size=(-0.39, 1e-11))
    ev = ch4.claims._intrinsic_vary(ch4.Ch4Quantities(seed_params={"DE": same}))
    assert ev.estimate == pytest.approx(1.0)
    row = judge_all("4", "x.csv", [c for c in ch4.CLAIMS if c.key == "intrinsic_vary"],
                    ch4.Ch4Quantities(seed_params={"DE": same})).iloc[0]
    assert row["verdict"] == "inconclusive" and "the fits' resolution" in row["evidence"]
