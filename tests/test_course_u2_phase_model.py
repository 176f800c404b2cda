"""Unit 2's computations (perfkit.course.u2_phase_model) on the shipped Chapter 3 measurements."""
import numpy as np
import pandas as pd
import pytest

from perfkit.course import u2_phase_model as u2
from perfkit.model.analytic.lif import fit_lif_regression


@pytest.mark.parametrize("machine", list(u2.MACHINES))
def test_eq_3_3_accounts_for_the_measured_iteration(machine):
    table = u2.eq_3_3_table(u2.MACHINES[machine], model="cnn")
    assert table["workers"].iloc[0] == 1 and len(table) >= 3
    # the phases are timed back to back: eq. 3.3 on them is the slowest worker's iteration, within 1 %
    assert (table["difference (%)"].abs() < 1.0).all(), table


def test_karp_flatt_table_recovers_the_serial_fraction_of_an_amdahl_speedup():
    rows = []
    for machine, e in (("a", 0.2), ("b", 0.05)):
        for g in (1, 2, 4, 8):
            rows.append(dict(machine=machine, model="cnn", workers=g, measured=1 / (e + (1 - e) / g)))
    kf = u2.karp_flatt_table(pd.DataFrame(rows))
    np.testing.assert_allclose(kf.loc[("a", "cnn")].to_numpy(), 0.2)
    np.testing.assert_allclose(kf.loc[("b", "cnn")].to_numpy(), 0.05)
    assert list(kf.columns) == [2, 4, 8]  # one worker has no serial fraction


def test_speedup_table_has_both_machines_and_speedup_one_on_one_worker():
    table = u2.speedup_table()
    assert set(table["machine"]) == set(u2.MACHINES)
    one = table[table["workers"] == 1]
    np.testing.assert_allclose(one["measured"], 1.0)
    assert table.groupby("machine")["workers"].max().to_dict() == {"2 cores": 3, "16 cores": 8}


def test_lif_is_one_on_one_worker_and_never_below_one():
    frame = u2.lif_frame()
    assert (frame.loc[frame["workers"] == 1, "lif"] == 1.0).all()
    assert (frame["lif"] >= 1 - 1e-9).all()
    assert set(frame["machine"]) == set(u2.MACHINES)


def test_lif_regression_table_is_eq_3_9_and_nests_the_workers_only_fit():
    frame = u2.lif_frame()
    table = u2.lif_regression_table(frame)
    assert len(table) == 6  # two machines × three models
    row = table[(table["machine"] == "16 cores") & (table["model"] == "cnn")].iloc[0]
    sub = frame[(frame["machine"] == "16 cores") & (frame["model"] == "cnn")]
    fit = fit_lif_regression(sub)
    assert row["beta2"] == pytest.approx(fit.params["beta2"])
    # adding a regressor never lowers R² of least squares
    assert (table["R² (eq. 3.9)"] >= table["R² (workers only)"] - 1e-12).all()


def test_widget_phases_default_to_the_16_core_machine():
    ph = u2.widget_phases()
    assert sorted(ph["t_c_measured"]) == [2, 4, 8]
    assert ph["t_f"] + ph["t_b"] > ph["t_io"] + ph["t_h2d"]  # compute-bound: eq. 3.7's compute path wins
