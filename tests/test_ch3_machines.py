"""Chapter 3 on several machines: the claims per dataset, their quantities on traces and throughput tables, the
reasons a dataset cannot decide a claim, and the parameter's checks."""
import numpy as np
import pandas as pd
import pytest

from perfkit.chapters import ch3
from perfkit.chapters.ch3.machines import MACHINE_SOURCES, SCALING_KEYS, machine_label, machine_inputs
from perfkit.chapters.ch3.quantities import log_slope
from perfkit.chapters.ch3.throughput import MIN_CONFIGS, throughput_quantities
from perfkit.chapters.ch3.traces import reference_batch, replicate_deviations, trace_quantities
from perfkit.chapters.result import ParameterError
from perfkit.evidence import B


# ----------------------------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("value, words", [
    (("nowhere",), "neither a file nor one of"),
    (("pollux", "pollux"), "an item repeats"),
    (("data/measured/pytorch-cpu/ch3_phases.csv",), "is measured_csv itself"),
    (("data/measured/pytorch-cpu16/ch4_lenet5.csv",), "machines: "),
    ((3,), "machines"),
])
def test_machines_parameter_refuses_by_name(value, words):
    with pytest.raises(ParameterError, match="machines") as err:
        ch3.check_params(machines=value)
    assert words in str(err.value)


def test_machines_parameter_accepts_none_and_every_source():
    assert ch3.check_params(machines=()).machines == ()
    assert ch3.check_params(machines=tuple(MACHINE_SOURCES)).machines == tuple(MACHINE_SOURCES)


def test_machine_inputs_name_the_files_read():
    files = machine_inputs("pollux")
    assert any(f.name == "placements.csv" for f in files) and files[-1].name == "pollux.provenance.json"
    assert all(f.exists() for f in machine_inputs("lambda") + machine_inputs("nvidia_dle"))
    assert [f.name for f in machine_inputs("data/measured/pytorch-cpu16/ch3_phases.csv")] == [
        "ch3_phases.csv", "ch3_phases.provenance.json"]


def test_machine_label_from_provenance():
    assert machine_label({"machine": {"cpu": "Intel(R) Xeon(R) Processor", "cores": 16}}, "cpu") == (
        "16-core CPU (Intel Xeon)", "CPU")
    assert machine_label({"machine": {"gpus": ["NVIDIA H200, 143771 MiB, 580"]}}, "cuda") == (
        "1 GPU (NVIDIA H200)", "one GPU")
    assert machine_label({}, "cpu")[0] == "CPU (CPU not recorded)"


# ----------------------------------------------------------------------------------------------- quantities
def test_log_slope_is_the_log_ratio_on_two_counts_and_the_power_on_many():
    e = log_slope([2, 3], [(1.0, np.full(5, 1.0)), (2.0, np.full(5, 2.0))])
    assert e.estimate == pytest.approx(np.log(2) / np.log(1.5))
    power = log_slope([2, 4, 8], [(g ** 0.5, np.full(3, g ** 0.5)) for g in (2, 4, 8)])
    assert power.estimate == pytest.approx(0.5) and power.samples == pytest.approx([0.5] * 3)
    falling = log_slope([2, 4], [(2.0, np.array([2.0, 3.0])), (1.0, np.array([1.0, 1.0]))])
    assert falling.estimate < 0 and falling.samples[1] < falling.samples[0] < 0


def _traces(sync_power=0.5, compute=0.1, noise=0.02, seed=0):
    """A job's trace rows: one node order per placement plus a replicate (another order) of the uneven ones."""
    rng = np.random.default_rng(seed)
    rows = []
    placements = ["1", "2", "11", "4", "22", "1111", "13", "31", "112", "121", "44", "1222", "2122", "2212"]
    for b in (32, 64):
        for pl in placements:
            g = sum(map(int, pl))
            sync = 0.0005 if g == 1 else 0.01 * g ** sync_power
            f = np.exp(noise * rng.standard_normal())
            rows.append({"job": "toy", "study": "placements", "placement": pl, "n_nodes": len(pl), "n_gpus": g,
                         "load_imbalance": len(pl) * max(map(int, pl)) / g, "batch_per_gpu": b,
                         "t_iter": (compute * b / 32 + sync) * f, "sync_time": sync * f})
    return pd.DataFrame(rows)


def test_reference_batch_and_replicates():
    t = _traces()
    assert reference_batch(t) == 32  # both batches reach every G: the lower middle one
    dev = replicate_deviations(t)
    # groups of one batch with the same GPUs per node: 13/31, 112/121, 1222/2122/2212 -> 2 + 2 + 2 + 2 + 3 + 3 rows
    assert dev.shape == (14, 2) and np.allclose(dev.sum(axis=0), 0, atol=1e-12)


def test_trace_quantities_decide_speedup_t_c_and_eq37():
    q, curve, why = trace_quantities(_traces(noise=0.0))  # no noise: every resample equals the estimate
    assert set(q) >= {"speedup", "speedup_cells", "t_c_trend", "eq37_thesis", "lif_r2", "lif_beta2"}
    (cell, e), = q["speedup"].items()
    assert cell == ("toy", 8) and e.estimate == pytest.approx(8 * 0.1005 / (0.1 + 0.01 * 8 ** 0.5))
    # compute does not change with G here, so eq. 3.7 (compute(1) + t_c(G)) misses each cell only by the one-GPU
    # synchronisation it leaves out of its numerator: 1 − c₁ / step(1)
    errors = [v.estimate for v in q["eq37_thesis"].values()]
    assert errors == pytest.approx([0.0005 / 0.1005] * len(errors))
    (_, trend), = q["t_c_trend"].items()
    assert trend.estimate == pytest.approx(0.5) and trend.lo == pytest.approx(0.5)
    assert {r["workers"] for r in curve} == {1, 2, 4, 7, 8}
    falling, _, _ = trace_quantities(_traces(sync_power=-0.5, noise=0.0))
    assert next(iter(falling["t_c_trend"].values())).estimate == pytest.approx(-0.5)


def test_trace_intervals_come_from_replicates():
    q, _, why = trace_quantities(_traces(noise=0.05))
    assert why == ""
    e = q["speedup"][("toy", 8)]
    assert len(e.samples) == B and e.lo < e.estimate < e.hi


def _table(speedups):
    """Throughput rows: ``{(model, gpu kind): speedup on 8 GPUs}`` over a 1-GPU throughput of 100."""
    rows = []
    for (model, kind), s in speedups.items():
        rows += [{"model": model, "gpu": kind, "n_gpus": 1, "throughput": 100.0},
                 {"model": model, "gpu": kind, "n_gpus": 8, "throughput": 100.0 * s}]
    return pd.DataFrame(rows)


def test_throughput_speedup_is_the_median_over_configurations():
    t = _table({("a", "k1"): 6.0, ("a", "k2"): 7.0, ("a", "k3"): 7.5, ("b", "k1"): 4.0})
    q, curve, left = throughput_quantities(t, ["gpu"])
    assert list(q["speedup"]) == [("a", 8)] and q["speedup"][("a", 8)].estimate == 7.0
    assert 6.0 <= q["speedup"][("a", 8)].lo <= q["speedup"][("a", 8)].hi <= 7.5
    assert left == [f"b (1 at G=8)"] and MIN_CONFIGS == 3
    assert {(r["group"], r["configs"]) for r in curve} == {("a", 3), ("b", 1)}


# ----------------------------------------------------------------------------------------------- the chapter
@pytest.fixture(scope="module")
def chapter():
    return ch3.analyse(cache=False)


def _row(ledger, machine_kind, key):
    rows = ledger[(ledger["kind"] == machine_kind) & (ledger["key"] == key)]
    assert len(rows) >= 1, (machine_kind, key)
    return rows.iloc[0]


def test_machine_ledger_has_every_machine_and_claim(chapter):
    ledger = chapter.tables["claims_ch3_machines"]
    kinds = ledger.drop_duplicates("machine")["kind"].tolist()
    assert kinds == ["CPU", "CPU", "one GPU", "GPU cluster", "GPU servers", "GPU servers"]
    for _, rows in ledger.groupby("machine"):
        assert list(rows["key"]) == list(SCALING_KEYS)
    view = chapter.views["claims_ch3_machines"]
    assert view.shape == (len(SCALING_KEYS), ledger["machine"].nunique())


def test_scaling_claims_are_decided_where_scaling_happens(chapter):
    ledger = chapter.tables["claims_ch3_machines"]
    cpu16 = ledger[ledger["machine"].str.startswith("16-core")]
    decided = ("holds", "does not hold")
    assert cpu16.set_index("key").loc["speedup", "verdict"] in decided
    assert cpu16.set_index("key").loc["t_c_grows", "verdict"] in decided
    for key in ("speedup", "t_c_grows", "eq37_thesis"):
        assert _row(ledger, "GPU cluster", key)["verdict"] in decided
    assert _row(ledger, "GPU servers", "speedup")["verdict"] in decided
    # what the data say (not a rule of the code): 16 cores speed training up, 2 cores do not
    assert cpu16.set_index("key").loc["speedup", "verdict"] == "holds"
    two = ledger[ledger["machine"].str.startswith("2-core")].set_index("key")
    assert two.loc["speedup", "verdict"] == "does not hold"


def test_undecidable_claims_say_why(chapter):
    ledger = chapter.tables["claims_ch3_machines"]
    gpu = ledger[ledger["kind"] == "one GPU"]
    assert (gpu["verdict"] == "cannot be tested here").all()
    assert gpu[gpu["key"] == "speedup"]["evidence"].iloc[0].startswith("G = 1 only")
    cpu16 = ledger[ledger["machine"].str.startswith("16-core")].set_index("key")
    assert cpu16.loc["framework_ranking", "evidence"] == "one framework (PyTorch)"
    lam = ledger[ledger["dataset"] == "lambda"] if "dataset" in ledger.columns else ledger[ledger["data"] == "lambda"]
    assert "no synchronisation" in lam.set_index("key").loc["t_c_grows", "evidence"]


def test_scaling_curves_and_figure(chapter):
    curves = chapter.tables["scaling_machines"]
    assert list(curves.columns) == ["machine", "kind", "dataset", "group", "workers", "speedup", "t_c"]
    pollux = curves[curves["dataset"] == "pollux"]
    assert pollux["workers"].max() == 64 and pollux["t_c"].notna().all()
    assert "fig_scaling_machines" in chapter.figures
    assert "machines" in chapter.readings and chapter.readings["summary"].startswith("**2-core CPU")


def test_traces_without_repeats_decide_nothing():
    """No run repeated: no noise estimate, so no claim may get a (zero-width) interval."""
    t = _traces(noise=0.05)
    single = t[~t["placement"].isin(["31", "121", "2122", "2212"])]
    q, curve, why = trace_quantities(single)
    assert q == {} and curve == [] and why.startswith("no repeated runs")
    from perfkit.chapters.ch3.machines import trace_machine

    m = trace_machine(single, "toy", "toy cluster", "made up")
    ledger = ch3.machines.machine_ledger(None, None, [m])
    assert (ledger["verdict"] == "cannot be tested here").all()
    assert ledger.set_index("key").loc["speedup", "evidence"] == why


def test_a_job_without_repeats_borrows_the_other_jobs_noise():
    t = _traces(noise=0.05)
    other = t[~t["placement"].isin(["31", "121", "2122", "2212"])].assign(job="alone")
    q, _, why = trace_quantities(pd.concat([t, other], ignore_index=True))
    e = q["speedup"][("alone", 8)]
    assert why == "" and e.lo < e.estimate < e.hi


def test_a_constant_placement_lif_decides_no_lif_claim():
    """On one node every placement's LIF is 1: eq. 3.9's LIF term would only repeat the intercept."""
    t = _traces(noise=0.05)
    one_node = t[t["n_nodes"] == 1]
    extra = one_node[one_node["placement"] == "4"].assign(placement="4")  # a repeat of "4" for the noise
    q, _, why = trace_quantities(pd.concat([one_node, extra], ignore_index=True))
    assert why == "" and "speedup" in q and not {"lif_r2", "lif_beta2", "lif_rho"} & set(q)


def test_a_zero_synchronisation_time_stays_finite():
    t = _traces(noise=0.05)
    t.loc[t["placement"].isin(["13", "31"]), "sync_time"] = 0.0
    dev = replicate_deviations(t)
    assert np.isfinite(dev).all()
