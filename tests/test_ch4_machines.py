"""Chapter 4 on several machines: the ``machine_datasets`` parameter, the comparison's table, figure, claim and
reading, its storage in the results cache, and the fit on the shipped 2-core and 16-core files."""
import types

import numpy as np
import pandas as pd
import pytest

from perfkit.chapters import ch4
from perfkit.chapters.ch4 import _machine_ledger
from perfkit.chapters.ch4.figures import machines_figure
from perfkit.chapters.ch4.machines import compare_machines
from perfkit.chapters.ch4.readings import _machines
from perfkit.chapters.ch4.results import Ch4Results, MachineFit
from perfkit.chapters.ch4.tables import q_workers_by_machine, q_workers_by_machine_view
from perfkit.chapters.result import ParameterError
from perfkit.evidence import Evidence

CH4 = "data/measured/pytorch-cpu/ch4_lenet5.csv"
CPU16 = "data/measured/pytorch-cpu16/ch4_lenet5.csv"
TF4 = "data/measured/tensorflow-cpu/ch4_lenet5.csv"
CH3 = "data/measured/pytorch-cpu/ch3_phases.csv"


def _short(tmp_path, rows: int) -> str:
    """The first ``rows`` rows of the 16-core file, as a file of its own."""
    path = tmp_path / "short" / "ch4_lenet5.csv"
    path.parent.mkdir()
    pd.read_csv(CPU16).head(rows).to_csv(path, index=False)
    return str(path)


# ------------------------------------------------------------------------------ the parameter
def test_machine_datasets_default_is_the_16_core_file():
    p = ch4.check_params()
    assert p.machine_datasets == ch4.MACHINE_DATASETS == (CPU16,)
    assert any(str(f).endswith("pytorch-cpu16/ch4_lenet5.csv") for f in ch4.inputs(p))
    assert any(str(f).endswith("pytorch-cpu16/ch4_lenet5.provenance.json") for f in ch4.inputs(p))
    assert not any("cpu16" in str(f) for f in ch4.inputs(ch4.check_params(machine_datasets=())))


@pytest.mark.parametrize("value, words", [
    ((CPU16, CPU16), r"machine_datasets: .* names a file twice or the dataset itself"),
    ((CH4,), r"machine_datasets: .* names a file twice or the dataset itself"),
    (("missing.csv",), r"machine_datasets: item 'missing.csv'"),
    (CPU16, r"machine_datasets: got .* expected a list"),
    ((CH3,), r"machine_datasets: .* has no column"),
    ((TF4,), r"machine_datasets: .* holds framework 'tensorflow', the dataset 'pytorch'"),
])
def test_a_bad_machine_file_is_one_error_naming_the_parameter(value, words):
    with pytest.raises(ParameterError, match=words):
        ch4.check_params(machine_datasets=value)


def test_a_machine_file_needs_enough_rows_but_may_be_partial(tmp_path):
    with pytest.raises(ParameterError, match=f"machine_datasets: .* has 20 usable rows .* at least "
                                             f"{ch4.MIN_FRAMEWORK_ROWS}"):
        ch4.check_params(machine_datasets=(_short(tmp_path, 20),))
    assert ch4.check_params(machine_datasets=(CPU16,)).n_fit == 1000  # 450 of 1500 rows: a partial collection


def test_another_frameworks_dataset_needs_its_own_machine_files():
    with pytest.raises(ParameterError, match="machine_datasets: .* framework 'pytorch', the dataset 'tensorflow'"):
        ch4.check_params(dataset=TF4, framework_datasets=())
    assert ch4.check_params(dataset=TF4, framework_datasets=(), machine_datasets=()).machine_datasets == ()


# ------------------------------------------------------------------------------ table, figure, reading, storage
def _fit(label, machine, cores, q, lo_hi, times, mape=35.0):
    samples = np.linspace(*lo_hi, 201)  # the interval given exactly, the samples spanning it
    return MachineFit(label=label, path=f"data/measured/{label}/ch4_lenet5.csv", machine=machine, cores=cores,
                      n_rows=450, n=450, n_fit=300, n_test=150, q_workers=Evidence(q, *lo_hi, samples, "boot"),
                      mape=Evidence.from_samples(mape, np.linspace(mape - 4, mape + 4, 101), "rows"),
                      median_time=times, rows_by_workers={w: 100 for w in times})


TWO = _fit("pytorch-cpu", "2-core CPU (AMD EPYC)", 2, 0.15, (0.05, 0.25), {1: 8.7, 2: 8.4, 3: 10.5})
SIXTEEN = _fit("pytorch-cpu16", "16-core CPU (Intel Xeon)", 16, -0.79, (-0.95, -0.65),
               {1: 15.6, 2: 11.0, 4: 4.7, 8: 4.0})


def test_the_machine_table_has_a_row_per_machine_and_a_time_column_per_worker_count():
    t = q_workers_by_machine([TWO, SIXTEEN])
    assert list(t.columns) == ["machine", "file", "rows", "n_fit", "n_test", "q_workers", "q_workers_lo",
                               "q_workers_hi", "mape", "mape_lo", "mape_hi", "median_time_G1", "median_time_G2",
                               "median_time_G3", "median_time_G4", "median_time_G8"]
    assert list(t["machine"]) == ["2-core CPU (AMD EPYC)", "16-core CPU (Intel Xeon)"]
    assert list(t["file"]) == ["pytorch-cpu/ch4_lenet5.csv", "pytorch-cpu16/ch4_lenet5.csv"]
    assert t.loc[1, "q_workers"] == -0.79 and t.loc[1, "q_workers_lo"] < -0.79 < t.loc[1, "q_workers_hi"] < 0
    assert np.isnan(t.loc[0, "median_time_G8"]) and np.isnan(t.loc[1, "median_time_G3"])
    assert t.loc[1, "median_time_G8"] == 4.0
    view = q_workers_by_machine_view(t)
    assert view.loc["16-core CPU (Intel Xeon)", "q(workers) [95 %]"] == "-0.79 [-0.95, -0.65]"
    assert view.loc["2-core CPU (AMD EPYC)", "median epoch G=3 (s)"] == 10.5


def test_the_machine_figure_draws_each_machine():
    fig = machines_figure([TWO, SIXTEEN])
    left, right = fig.axes
    assert [line.get_label() for line in left.get_lines()] == [TWO.machine, SIXTEEN.machine]
    assert list(left.get_lines()[1].get_ydata()) == [15.6, 11.0, 4.7, 4.0]
    assert [t.get_text() for t in right.get_xticklabels()] == ["2-core CPU\n(AMD EPYC)", "16-core CPU\n(Intel Xeon)"]


def test_machines_are_stored_and_read_back_bit_for_bit(tmp_path):
    r = Ch4Results(parts=[], machines=[TWO, SIXTEEN])
    r.to_dir(tmp_path)
    back = Ch4Results.from_dir(tmp_path).machines
    for a, b in zip(r.machines, back):
        assert type(b) is MachineFit and b.median_time == a.median_time and b.rows_by_workers == a.rows_by_workers
        assert list(b.median_time) == list(a.median_time) and all(type(k) is int for k in b.median_time)
        for ea, eb in ((a.q_workers, b.q_workers), (a.mape, b.mape)):
            assert (eb.estimate, eb.lo, eb.hi, eb.source) == (ea.estimate, ea.lo, ea.hi, ea.source)
            assert eb.samples.tobytes() == ea.samples.tobytes()
        assert (b.machine, b.cores, b.n, b.n_fit, b.n_test, b.file) == (a.machine, a.cores, a.n, a.n_fit, a.n_test,
                                                                         a.file)


def _ledger(machines):
    r = types.SimpleNamespace(machines=machines)
    return pd.concat(_machine_ledger(r, ch4.Ch4Quantities()), ignore_index=True)


def test_the_machine_claim_is_judged_per_machine_and_read():
    led = _ledger([TWO, SIXTEEN]).set_index("key")
    assert list(led.index) == ["q_workers_negative.pytorch-cpu", "q_workers_negative.pytorch-cpu16"]
    assert list(led["verdict"]) == ["does not hold", "holds"]
    assert led.loc["q_workers_negative.pytorch-cpu16", "data"] == "pytorch-cpu16/ch4_lenet5.csv (its first 450 rows)"
    assert "16-core CPU (Intel Xeon)" in led.loc["q_workers_negative.pytorch-cpu16", "evidence"]
    text = _machines({"machines": [TWO, SIXTEEN]}, {"claims_ch4": led.reset_index()})
    assert "where up to 3 workers share 2 cores, q(workers) = +0.15 [+0.05, +0.25]" in text
    assert "16-core CPU (Intel Xeon), q(workers) = -0.79" in text
    assert "\"more workers shorten the epoch\" does not hold), held-out MAPE 35.0 %" in text
    assert "median epoch 15.6, 11.0, 4.7, 4.0 s at G = 1/2/4/8" in text
    assert "but not on the 2-core CPU (AMD EPYC) (there the claim does not hold)" in text
    # where the 16-core fit does not hold either, the reading draws no contrast between the machines
    flat = _fit("pytorch-cpu16", "16-core CPU (Intel Xeon)", 16, -0.05, (-0.2, 0.1), {1: 15.6, 8: 14.0})
    led = _ledger([TWO, flat])
    assert list(led["verdict"]) == ["does not hold", "inconclusive"]
    assert "tells about its machine" not in _machines({"machines": [TWO, flat]}, {"claims_ch4": led})


def test_without_machines_the_claim_cannot_be_tested():
    led = _ledger(None)
    assert list(led["key"]) == ["q_workers_negative"] and list(led["verdict"]) == ["cannot be tested here"]
    assert "machine_datasets" in led["evidence"].iloc[0]
    assert _machines({}, {}) == ""


# ------------------------------------------------------------------------------ the shipped data
@pytest.mark.slow
def test_on_the_shipped_files_workers_shorten_the_epoch_on_16_cores_and_not_on_2():
    """Eq. 4.4 in quick mode (2 seeds, 60 generations, 20 resamples) on the first 450 rows of each file."""
    two, sixteen = compare_machines(ch4.check_params(quick=True, progress=False, framework_datasets=()))
    assert (two.machine, sixteen.machine) == ("2-core CPU (AMD EPYC)", "16-core CPU (Intel Xeon)")
    assert (two.cores, sixteen.cores) == (2, 16)
    assert two.n == sixteen.n == 450 == sixteen.n_rows and two.n_rows == 1500
    assert (two.n_fit, two.n_test) == (sixteen.n_fit, sixteen.n_test) == (300, 150)
    assert sixteen.q_workers.estimate < 0 and sixteen.q_workers.hi < 0
    assert two.q_workers.estimate > 0 and two.q_workers.hi > 0
    assert len(two.q_workers.samples) == len(sixteen.q_workers.samples) == 20
    assert set(two.median_time) == {1, 2, 3} and set(sixteen.median_time) == {1, 2, 4, 8}
    assert sixteen.median_time[8] < sixteen.median_time[4] < sixteen.median_time[2] < sixteen.median_time[1]
    assert sum(two.rows_by_workers.values()) == sum(sixteen.rows_by_workers.values()) == 450
    led = _ledger([two, sixteen]).set_index("key")["verdict"]
    assert led["q_workers_negative.pytorch-cpu16"] == "holds" and led["q_workers_negative.pytorch-cpu"] != "holds"
