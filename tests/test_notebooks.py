"""Every chapter notebook runs under papermill in quick mode (what CI executes)."""
import json

import pytest

from perfkit.reproduce import CHAPTERS, notebook_path, reproduce, run_notebook


@pytest.mark.slow
@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_notebook_runs_in_quick_mode(chapter, tmp_path):
    figs = tmp_path / "figures"
    [out] = reproduce([chapter], quick=True, build_dir=tmp_path / "build", figures_dir=str(figs), progress=False)
    data = json.loads(out.read_text())
    errors = [o for c in data["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert any(figs.rglob("*.png")) and any(figs.rglob("*.csv"))


@pytest.mark.slow
def test_ch3_outputs_and_measured_plug_in(tmp_path, root):
    from tests.test_ch3 import _measured

    csv = tmp_path / "measured.csv"
    _measured().to_csv(csv, index=False)
    figs = tmp_path / "figures"
    run_notebook(notebook_path("ch3"), build_dir=tmp_path / "build",
                 parameters={"quick": True, "figures_dir": str(figs), "measured_csv": str(csv)}, progress=False)
    expected = {
        "table3_2.csv", "table3_3.csv", "table3_4.csv", "table3_5_published.csv", "speedup_predicted_eq3_7.csv",
        "table3_2_sum_check.csv", "consistency_published.csv", "table3_2_measured.csv",
        "fig3_2_phases_cnn.png", "fig3_3_phases_mlp.png", "fig3_4_phases_autoencoder.png",
        "fig3_5_speedup_cnn_eq3_7.png", "fig3_6_speedup_mlp_eq3_7.png", "fig3_7_speedup_autoencoder_eq3_7.png",
    }
    assert expected <= {p.name for p in (figs / "ch3").iterdir()}
    # the committed figures/ match what the notebook makes (run `make reproduce` after changing it)
    for name in expected - {"table3_2_measured.csv"}:
        committed = root / "figures" / "ch3" / name
        assert committed.is_file(), f"{committed} not committed"
        assert committed.read_bytes() == (figs / "ch3" / name).read_bytes(), f"{name} differs from committed copy"


def test_unknown_chapter():
    with pytest.raises(ValueError, match="unknown 'ch0'"):
        notebook_path("ch0")
