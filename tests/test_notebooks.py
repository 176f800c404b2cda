"""Every chapter notebook runs under papermill in quick mode (what CI executes) and reads well executed."""
import json
import re

import pytest

from perfkit.chapters import CHAPTERS
from perfkit.chapters.notebooks import default_build_dir, notebook_path, reproduce, run_notebook


def _outputs(nb):
    return [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]


@pytest.mark.slow
@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_notebook_runs_in_quick_mode_and_shows_every_figure_inline(chapter, tmp_path):
    figs = tmp_path / "figures"
    [out] = reproduce([chapter], quick=True, build_dir=tmp_path / "build", figures_dir=str(figs), progress=False)
    data = json.loads(out.read_text())
    outputs = _outputs(data)
    assert not [o for o in outputs if o.get("output_type") == "error"]
    pngs = sorted(figs.rglob("*.png"))
    assert pngs and any(figs.rglob("*.csv"))
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= len(pngs), f"{len(pngs)} figures written but {len(images)} shown inline"
    text = json.dumps(outputs)
    assert "PosixPath(" not in text and "IProgress not found" not in text and "np.int64(" not in text
    bare = [o for o in outputs if "<Figure size" in str(o.get("data", {}).get("text/plain", ""))
            and "image/png" not in o.get("data", {})]
    assert not bare, "a figure is shown as text, not as an image"
    if chapter == "ch3":
        _assert_ch3_outputs_match_the_committed_figures(figs)


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_notebook_cells_only_call_display_and_explain(chapter):
    nb = json.loads(notebook_path(chapter).read_text())
    code = [("".join(c["source"]) if isinstance(c["source"], list) else c["source"])
            for c in nb["cells"] if c["cell_type"] == "code"]
    for src in code:
        src = re.sub(r"#.*", "", src)  # comments may say "lambda"
        src = re.sub(r'"[^"\n]*"', '""', src)  # so may strings (Chapter 6's dataset "lambda")
        assert not re.search(r"^\s*(def|class|lambda)\b|\blambda\b", src, re.M), src
        assert "Ledger" not in src and "judge" not in src and ".add(" not in src, src
        assert "matplotlib.use" not in src and "plt.show" not in src, src
    assert any("analyse(" in src for src in code)


def test_quick_and_custom_runs_do_not_overwrite_the_full_runs_notebooks(root):
    assert default_build_dir() == root / "build"
    assert default_build_dir(quick=True) == root / "build" / "quick"
    assert default_build_dir(figures_dir="/tmp/x") == root / "build" / "custom"


CH3_OUTPUTS = {
    "table3_2.csv", "table3_3.csv", "table3_4.csv", "table3_5_published.csv", "speedup_predicted_eq3_7.csv",
    "table3_2_sum_check.csv", "consistency_published.csv",
    "fig3_2_phases_cnn.png", "fig3_3_phases_mlp.png", "fig3_4_phases_autoencoder.png",
    "fig3_5_speedup_cnn_eq3_7.png", "fig3_6_speedup_mlp_eq3_7.png", "fig3_7_speedup_autoencoder_eq3_7.png",
    # from the committed measured dataset
    "table3_2_measured.csv", "table3_3_measured.csv", "table3_4_measured.csv", "speedup_measured.csv",
    "fig3_5_speedup_cnn_measured.png", "fig3_6_speedup_mlp_measured.png", "fig3_7_speedup_autoencoder_measured.png",
    "fig3_8_breakdown_cnn_2w.png", "fig3_9_breakdown_mlp_2w.png", "fig3_10_breakdown_autoencoder_2w.png",
    "fig3_11_breakdown_cnn_3w.png", "fig3_12_breakdown_mlp_3w.png", "fig3_13_breakdown_autoencoder_3w.png",
    "overlap_vs_phased.csv", "table3_5_measured.csv", "sum_check_measured.csv", "claims_ch3.csv",
    "claims_ch3_machines.csv", "scaling_machines.csv", "fig_scaling_machines.png",
}


def _assert_ch3_outputs_match_the_committed_figures(figs):
    """Quick mode changes no Chapter 3 number, so its outputs must equal the committed ones byte for byte (checked
    on the quick run of :func:`test_notebook_runs_in_quick_mode_and_shows_every_figure_inline`)."""
    from perfkit.schema import repo_root

    root = repo_root()
    made = {p.name for p in (figs / "ch3").iterdir()}
    assert CH3_OUTPUTS <= made
    for name in sorted(CH3_OUTPUTS):
        committed = root / "figures" / "ch3" / name
        assert committed.is_file(), f"{committed} not committed"
        assert committed.read_bytes() == (figs / "ch3" / name).read_bytes(), f"{name} differs from committed copy"


@pytest.mark.slow
def test_ch3_takes_a_users_minimal_measurements(tmp_path, capfd):
    """A user's file with only the documented columns (plus batch_size) goes through every measured section; the
    kernel talks over IPC, so its output carries no plain-text-TCP warning, and leaves no socket behind."""
    import pandas as pd

    from tests.test_ch3 import _measured

    csv = tmp_path / "measured.csv"
    _measured().assign(batch_size=32).to_csv(csv, index=False)
    figs = tmp_path / "figures"
    out = run_notebook(notebook_path("ch3"), build_dir=tmp_path / "build",
                       parameters={"quick": True, "figures_dir": str(figs), "measured_csv": str(csv),
                                   "framework_csvs": []}, progress=False)
    assert out.exists()
    t32m = pd.read_csv(figs / "ch3" / "table3_2_measured.csv")
    assert set(t32m["framework"]) == {"PyTorch (measured)"}
    claims = pd.read_csv(figs / "ch3" / "claims_ch3.csv")
    assert set(claims["verdict"]) <= {"holds", "does not hold", "inconclusive", "cannot be tested here"}
    assert claims["claim"].str.contains("LIF").any()
    assert "without encryption" not in "".join(capfd.readouterr())
    assert not list(notebook_path("ch3").parent.glob("kernel*ipc*"))


@pytest.mark.slow
def test_ch4_claims_ledger_is_computed(tmp_path):
    import pandas as pd

    figs = tmp_path / "figures"
    run_notebook(notebook_path("ch4"), build_dir=tmp_path / "build",
                 parameters={"quick": True, "figures_dir": str(figs),
                             "framework_datasets": ["data/measured/mxnet-cpu/ch4_lenet5.csv"]}, progress=False)
    made = {p.name for p in (figs / "ch4").iterdir()}
    for stem in ("table4_2", "table4_3", "table4_4", "table4_5", "journal_table5", "journal_table6",
                 "conference_table1", "conference_table2", "lambda_sweep", "claims_ch4", "ext_paired_ratios",
                 "ext_pooled_vs_per_framework", "ext_q_workers_by_machine"):
        assert f"{stem}.csv" in made
    # PyTorch and MXNet: the thesis's PyTorch numbers (4.5, 4.8, 4.11, 4.14), MXNet's (4.4, 4.7, 4.10, 4.13), then
    # 4.15-4.17 with both
    for stem in ("fig4_5_de_pred_vs_measured", "fig4_8_de_l2_pred_vs_measured", "fig4_11_rf_pred_vs_measured",
                 "fig4_14_svr_pred_vs_measured", "fig4_4_de_pred_vs_measured", "fig4_7_de_l2_pred_vs_measured",
                 "fig4_10_rf_pred_vs_measured", "fig4_13_svr_pred_vs_measured", "fig4_15_r2_vs_lambda",
                 "fig4_16_intrinsic_coef_paths", "fig4_17_categorical_extrinsic_coef_paths",
                 "ext_paired_framework_ratios", "ext_machines_q_workers"):
        assert f"{stem}.png" in made
    assert not {"fig4_3_de_pred_vs_measured.png", "fig4_9_rf_pred_vs_measured.png"} & made  # TensorFlow's numbers
    # the saved sweep: every fit's metrics and powers, for both frameworks; not the coefficients (not determined)
    sweep = pd.read_csv(figs / "ch4" / "lambda_sweep.csv")
    assert set(sweep["kind"]) == {"metric", "p", "q"} and set(sweep["framework"]) == {"pytorch-cpu", "mxnet-cpu"}
    assert {"r2_test", "mape_test", "objective", "q[workers]"} <= set(sweep["quantity"])
    t44 = pd.read_csv(figs / "ch4" / "table4_4.csv")
    assert {"pytorch-cpu", "mxnet-cpu", "thesis_MXNet"} <= set(t44.columns) and t44["mxnet-cpu"].notna().all()
    paired = pd.read_csv(figs / "ch4" / "ext_paired_ratios.csv")
    overall = paired[paired["factor"] == "all"].iloc[0]
    assert overall["framework"] == "mxnet-cpu" and overall["lo"] <= overall["ratio"] <= overall["hi"]
    pooled = pd.read_csv(figs / "ch4" / "ext_pooled_vs_per_framework.csv")
    assert set(pooled["framework"]) == {"pytorch-cpu", "mxnet-cpu"} and set(pooled["method"]) == {
        "DE+L2", "log-linear", "RF"}
    conf1 = pd.read_csv(figs / "ch4" / "conference_table1.csv").set_index("method")
    assert conf1.loc["DE", "thesis_PyTorch"] == 3.55 and conf1.filter(like="_MAE").notna().all().all()
    j6 = pd.read_csv(figs / "ch4" / "journal_table6.csv")
    assert set(j6["fit"]) == {"DE", "DE+L2", "journal Table 6"} and j6["q_workers"].notna().all()
    claims = pd.read_csv(figs / "ch4" / "claims_ch4.csv")
    assert len(claims) >= 10 and set(claims["verdict"]) <= {"holds", "does not hold", "inconclusive",
                                                              "cannot be tested here"}
    # the published-number checks are fixed facts of the transcribed tables
    pub = claims[claims["claim"].str.startswith("published:")].set_index("claim")["verdict"]
    assert pub["published: every fitted a lies in the bounds [0, 1000]"] == "does not hold"
    # every measured claim once per framework (MXNet's keys carry ".mxnet"), the framework claims once
    keys = set(claims["key"])
    assert {"l2_beats_l1", "l2_beats_l1.mxnet", "q_batch.mxnet", "framework_ranking", "fw_mxnet_most_accurate",
            "fw_adam_direction"} <= keys
    assert claims.set_index("key").loc["q_batch.mxnet", "data"] == "mxnet-cpu/ch4_lenet5.csv"
    assert claims.set_index("key").loc["framework_ranking", "verdict"] == "cannot be tested here"  # no TensorFlow
    # the machine claim once per machine: the dataset (2 cores) and the default 16-core file
    assert claims.set_index("key").loc["q_workers_negative.pytorch-cpu16", "verdict"] == "holds"
    machines = pd.read_csv(figs / "ch4" / "ext_q_workers_by_machine.csv")
    assert list(machines["file"]) == ["pytorch-cpu/ch4_lenet5.csv", "pytorch-cpu16/ch4_lenet5.csv"]


def test_unknown_chapter():
    with pytest.raises(ValueError, match="unknown 'ch0'"):
        notebook_path("ch0")


@pytest.mark.slow
def test_ch4_on_one_framework_has_no_framework_sections():
    """A user's single file (framework_datasets=[], machine_datasets=[]): the thesis's tables with one measured
    column, no paired, pooled or machine section, and the framework and machine claims say they cannot be tested."""
    from perfkit.chapters import ch4

    result = ch4.analyse(quick=True, progress=False, framework_datasets=[], machine_datasets=[])
    assert not {"ext_paired_ratios", "ext_pooled_vs_per_framework", "ext_q_workers_by_machine"} & set(result.tables)
    assert "ext_machines_q_workers" not in result.figures and "machines" not in result.readings
    assert "claims_by_framework" not in result.views
    assert [c for c in result.tables["table4_4"].columns if not c.startswith("thesis_")] == [
        "penalty", "metric", "pytorch-cpu"]
    assert set(result.tables["table4_5"]["framework"]) >= {"pytorch-cpu"}
    claims = result.claims.set_index("key")
    assert not [k for k in claims.index if "." in k]
    for key in ("framework_ranking", "fw_mxnet_most_accurate", "fw_adam_direction"):
        assert claims.loc[key, "verdict"] == "cannot be tested here"
        assert "one framework measured" in claims.loc[key, "evidence"]
    assert claims.loc["q_workers_negative", "verdict"] == "cannot be tested here"
    assert "frameworks" not in result.readings and "paired" not in result.readings
