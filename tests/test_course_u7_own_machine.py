"""Unit 7's computations: the campaign commands keep quick and full apart, a failing campaign comes back as one line
and an exit code, and the tables built from the shipped machines hold together."""
import numpy as np
import pandas as pd

from perfkit.course import u7_own_machine as u7
from perfkit.schema import resolve


def test_quick_and_full_campaigns_write_to_their_own_folders(tmp_path):
    quick, full = u7.campaign_commands(tmp_path, quick=True), u7.campaign_commands(tmp_path, quick=False)
    for kind in ("ch3", "ch4"):
        q, f = quick[kind], full[kind]
        assert q[q.index("--out") + 1] != f[f.index("--out") + 1]
        assert q[:2] == ["collect", kind] and "--no-progress" in q
    assert quick["ch3"][quick["ch3"].index("--workers") + 1] == "1,2"


def test_a_failing_campaign_returns_its_exit_code_and_one_line(tmp_path):
    lines = []
    r = u7.run_campaign(["collect", "ch3", "--workers", "0", "--out", str(tmp_path / "x.csv"), "--no-progress"],
                        log=lines.append)
    assert r["returncode"] != 0
    assert "workers" in r["error"] and "\n" not in r["error"]
    assert lines and not (tmp_path / "x.csv").exists()


def test_shipped_speedups_start_at_one_and_eq37_is_finite():
    phases = u7.load_phases({n: resolve(f"{d}/ch3_phases.csv") for n, d in u7.SHIPPED.items()})
    s = u7.speedup_table(phases)
    assert np.allclose(s.xs(1, level="workers")["measured"], 1.0)
    assert np.isfinite(s["eq. 3.7"]).all()
    table = u7.phase_table(phases)
    assert (table.xs(1, level="workers")["t_c"] < 0.1).all()  # no aggregation on one worker
    assert set(u7.worker_powers(s).index) == set(u7.SHIPPED)


def test_worker_powers_recover_a_power_law():
    idx = pd.MultiIndex.from_product([["m"], [1, 2, 4, 8]], names=["machine", "workers"])
    s = pd.DataFrame({"measured": np.array([1, 2, 4, 8]) ** 0.6}, index=idx)  # epoch ∝ G^-0.6
    assert np.isclose(u7.worker_powers(s)["m"], -0.6)


def test_too_few_rows_for_eq44_give_a_note_not_an_error():
    t = u7.exponent_table({"tiny": resolve("data/measured/pytorch-cpu/ch4_lenet5.csv")}, rows=3, maxiter=5)
    assert np.isnan(t.loc["tiny", "q workers"]) and "fewer" in t.loc["tiny", "note"]
