"""Chapter 3 analysis helpers on the published numbers and on a small measured-like table."""
import numpy as np
import pandas as pd
import pytest

import perfkit as pk
from perfkit.chapters import ch3
from perfkit.model.analytic import phases
from perfkit.report import plots, tables


@pytest.fixture(scope="module")
def t32():
    return pk.load_thesis_table("3.2")


def test_sum_check_reproduces_guide_item_1(t32):
    chk = ch3.sum_check_3_2(t32).set_index(["model", "framework"])
    without_md = chk[chk["verdict"] == "adds up only without t_md"]
    assert len(without_md) == 7
    assert set(chk[chk["verdict"] == "does not add up"].index) == {("MLP", "MXNet"), ("MLP", "TensorFlow")}
    # hand check: CNN/Chainer 0.0004+0.0383+0.0663+0.0594+0.2365 = 0.4009 = printed t_iter
    assert chk.loc[("CNN", "Chainer"), "sum_without_t_md"] == pytest.approx(0.4009)


def test_predicted_speedups_hand_value(t32):
    pred = phases.predicted_speedups(t32, pk.load_thesis_table("3.3"))
    row = pred[(pred.model == "CNN") & (pred.framework == "Chainer") & (pred.gpus == 2) & (pred.variant == "thesis")]
    # num = max(0.0004+0.0383, 0.0663+0.0594+0.2365 = 0.3622); den = max(0.0393, 0.0663+0.0594+0.3106 = 0.4363)
    assert row["speedup"].iloc[0] == pytest.approx(2 * 0.3622 / 0.4363)
    row = pred[(pred.model == "CNN") & (pred.framework == "Chainer") & (pred.gpus == 2) & (pred.variant == "paper")]
    assert row["speedup"].iloc[0] == pytest.approx(2 * (0.0663 + 0.0594) / 0.4363)
    assert (pred[pred.gpus == 1]["speedup"] == 1.0).all()
    assert set(pred["kind"]) == {"model prediction (eq. 3.7)"}


def test_published_consistency_flags_known_problems(t32):
    c = ch3.published_consistency(t32, pk.load_thesis_table("3.4"), pk.load_thesis_table("3.5"))
    beta1 = c[c["scope"].str.endswith("beta1")]
    assert len(beta1) == 9 and (beta1["verdict"] == "inconsistent").all()  # guide item 4: signs differ
    md = c[c["check"].str.startswith("text: Chainer")]
    assert (md["verdict"] == "inconsistent").all()  # guide item 5
    lif = c[c["check"].str.startswith("LIF")]
    assert (lif["verdict"] == "consistent").all()


def test_format_mean_std():
    assert tables.format_mean_std(0.4009, 0.024) == "0.4009 ± 0.024"
    assert tables.format_mean_std(0.0004, 0.00002) == "0.0004 ± 0.00002"
    assert tables.format_mean_std(1.5, float("nan")) == "1.5"


def _measured():
    rng = np.random.default_rng(0)
    rows = []
    for workers in (1, 2):
        for it in range(4):
            for rank in range(workers):
                ph = dict(t_io=0.001, t_h2d=0.0, t_md=0.0005, t_f=0.01 + 0.001 * rank, t_b=0.02, t_c=0.003 * (workers - 1),
                          t_u=0.002)
                ph["t_iter"] = sum(ph.values()) + rng.uniform(0, 1e-4)
                rows.append(dict(model="CNN", framework="PyTorch", workers=workers, rank=rank, iteration=it, **ph))
    return pd.DataFrame(rows)


def test_summarise_phases_uses_slowest_worker():
    s = phases.summarise_phases(_measured())
    tf2 = s[(s.workers == 2) & (s.phase == "t_f")].iloc[0]
    assert tf2["mean"] == pytest.approx(0.011)  # rank 1 is slower in every iteration
    assert tf2["n"] == 4 and tf2["std"] == pytest.approx(0.0)
    assert set(s["source"]) == {"measured"}
    with pytest.raises(ValueError, match="missing column"):
        phases.summarise_phases(_measured().drop(columns="iteration"))


def test_plots_return_axes_and_reject_unknown_model(t32):
    import matplotlib.pyplot as plt

    ax = plots.plot_phase_bars(t32, "MLP")
    assert len(ax.patches) == 3 * 7
    plt.close("all")
    with pytest.raises(ValueError, match="model"):
        plots.plot_phase_bars(t32, "ResNet")


def test_other_frameworks_alone_without_a_main_file():
    """measured_csv="" with framework_csvs: the frameworks' tables, figures and framework claims, no PyTorch claims."""
    from perfkit.chapters import ch3

    r = ch3.analyse(measured_csv="", framework_csvs=list(ch3.FRAMEWORK_CSVS))
    fws = set(r.tables["table3_2_measured"]["framework"])
    assert {f.split(" (")[0] for f in fws} == {"TensorFlow", "MXNet", "Chainer", "JAX"}
    assert "fig3_8_breakdown_cnn_2w" in r.figures and "fig3_5_speedup_cnn_measured" in r.figures
    led = r.tables["claims_ch3"].set_index("key")["verdict"]
    assert led["fw_mxnet_aggregation"] in ("holds", "does not hold", "inconclusive")
    assert led["t_c_grows"] == "cannot be tested here"
    assert len(r.tables["framework_setup"]) == 4


def test_overlapped_measurements_run_and_say_what_eq_3_7_cannot_use(tmp_path):
    """A native (overlapped) step fuses the all-reduce into the backward pass: eq. 3.7 cannot be fed, so its
    claims cannot be tested, and the chapter says why instead of failing."""
    from perfkit.chapters import ch3

    r = ch3.analyse(quick=True, measured_mode="overlapped", figures_dir=str(tmp_path), cache=False)
    assert any("eq. 3.7 is not evaluated" in n for n in r.notes)
    claims = r.tables["claims_ch3"].set_index("key")
    eq37 = [k for k in claims.index if k.startswith("eq37")]
    assert eq37 and (claims.loc[eq37, "verdict"] == "cannot be tested here").all()
