"""The lessons of perfkit.report.teaching that the course's units 2 and 3 draw on: eq. 3.7's speedup curve, the
rank-deficient categorical coding, differential evolution watched generation by generation."""
import numpy as np
import pytest

from perfkit.report import teaching
from perfkit.schema import resolve


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
