"""The teaching notebook runs under papermill (quick mode, as CI runs it) and reads well without a kernel."""
import json

import numpy as np
import pytest

from perfkit.chapters.notebooks import run_notebook
from perfkit.report import teaching
from perfkit.schema import repo_root, resolve

NOTEBOOK = "notebooks/teaching_performance_modelling.ipynb"


@pytest.mark.slow
def test_teaching_notebook_runs_and_every_widget_has_a_static_figure(tmp_path):
    # headless (papermill): live=False, since executing ipywidgets.interact without a browser can hang the kernel
    # client (nbclient#312, papermill#723); the live sliders are tested in a browser (tests/test_browser.py)
    out = run_notebook(repo_root() / NOTEBOOK, build_dir=tmp_path, parameters={"quick": True, "live": False},
                       progress=False)
    nb = json.loads(out.read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    # sections 1 (two), 2, 3, 5 and 6 draw figures inline, outside any widget
    assert len(images) >= 6, f"{len(images)} figures inline"
    text = json.dumps(outputs)
    assert "IProgress not found" not in text
    bare = [o for o in outputs if "<Figure size" in str(o.get("data", {}).get("text/plain", ""))
            and "image/png" not in o.get("data", {})]
    assert not bare, "a figure is shown as text, not as an image"
    widgets = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert not widgets  # live=False: the static copies only
    live = [c for c in nb["cells"] if "widgets is not None and live:" in "".join(c["source"])]
    assert len(live) == 2  # the phase sliders (§1) and the generation picker (§3), shown when live
    streams = ["".join(o.get("text", "")) for o in outputs if o.get("output_type") == "stream"]
    warned = [t for t in streams if t.startswith("warning:")]
    assert warned and "workers" in warned[0], streams  # §7: asking about 8 workers is an extrapolation
    src = [("".join(c["source"]) if isinstance(c["source"], list) else c["source"]) for c in nb["cells"]]
    assert sum("<details><summary>Answer" in s for s in src) == 7  # one folded answer per section


def test_speedup_curve_follows_eq_3_7_and_no_communication_scales_ideally():
    ph = teaching.iteration_phases(resolve("data/measured/pytorch-cpu/ch3_phases.csv"), model="cnn")
    g = np.arange(1, 5)
    s0 = teaching.speedup_curve(ph, g, ph["batch"], 0.0)
    # eq. 3.7 as the thesis prints it: t_u in the numerator only, t_md in the denominator only, so S(1) is not 1
    io = ph["t_io"] + ph["t_h2d"]
    assert s0[0] == pytest.approx(max(io, ph["t_f"] + ph["t_b"] + ph["t_u"]) / max(io + ph["t_md"], ph["t_f"] + ph["t_b"]))
    # without communication nothing else depends on G: the speedup grows in proportion to the workers
    np.testing.assert_allclose(s0, g * s0[0])
    # S(2) = 1 exactly where the exercise of section 1 says
    tc = ph["t_f"] + ph["t_b"] + 2 * ph["t_u"]
    assert ph["t_f"] + ph["t_b"] + ph["t_u"] > ph["t_io"] + ph["t_h2d"]  # the compute term dominates here
    assert teaching.speedup_curve(ph, [2], ph["batch"], tc)[0] == pytest.approx(1.0, rel=1e-9)


def test_coding_demo_shows_the_rank_deficiency_on_data():
    import pandas as pd

    X = pd.DataFrame([dict(activation=a, optimizer=o) for a in ("relu", "tanh", "sigmoid") for o in ("adam", "sgd")])
    demo = teaching.coding_demo(X, "activation", "optimizer")
    assert demo["columns"] == 5 and demo["rank"] == 4
    assert demo["max_prediction_difference"] < 1e-12
    assert not np.allclose(demo["constants_a"], demo["constants_b"])


def test_de_snapshots_improve_and_the_long_run_matches_its_prefix():
    rng = np.random.default_rng(0)
    b = rng.choice([8.0, 32.0, 128.0], 60)
    g = rng.choice([1.0, 2.0, 3.0], 60)
    y = 50.0 * b ** -0.8 * g ** -0.5 + 0.2
    run = teaching.de_generations(b, g, y, generations=(0, 10, 30))
    best = [run["snapshots"][k][1].min() for k in (0, 10, 30)]
    assert best[0] >= best[1] >= best[2] and best[2] < 0.01
    assert len(run["best"]) == 30 and run["best"][9][1] == pytest.approx(best[1])
