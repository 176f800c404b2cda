"""The measurement harness: real PyTorch workers over gloo, the line protocol, resumable collection."""
import csv
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

import pandas as pd
import pytest

pytest.importorskip("torch")

from perfkit.measure.collect import collect  # noqa: E402
from perfkit.measure.plans import _aggregate_steps, make_plan  # noqa: E402
from perfkit.measure.samplelog import SampleLog  # noqa: E402
from perfkit.measure.workers import WorkerGroup  # noqa: E402

pytestmark = pytest.mark.slow
PHASES = ["t_io", "t_h2d", "t_md", "t_f", "t_b", "t_c", "t_u"]
TINY4 = dict(workers=[1], batch_sizes=[8], datasets=["mnist"], warmup=1, steps=2, repeats=3, min_run_seconds=0.0)
LENET = {"kernel_size": 3, "pool_size": 2, "activation": "relu", "optimizer": "sgd", "dataset": "mnist",
         "num_filters": 4, "learning_rate": 0.01, "padding": "same", "stride": 1, "dropout": 0.5}


def test_ch3_phases_g1_and_g2_are_positive_and_add_up_to_t_iter(tmp_path):
    out = collect("ch3", out=tmp_path / "ch3.csv", progress=False, models=["mlp"], modes=["phased", "overlapped"],
                  workers=[1, 2], iterations=8, warmup=2, batch_size=16)
    df = pd.read_csv(out)
    assert (df.status == "ok").all()
    assert set(df.sample_id) == {"mlp-G1-phased", "mlp-G2-phased", "mlp-G1-overlapped", "mlp-G2-overlapped"}
    assert len(df) == 8 * (1 + 2) * 2
    phased = df[df["mode"] == "phased"]
    assert (phased.groupby("workers")["rank"].nunique() == pd.Series({1: 1, 2: 2})).all()
    measured = ["t_io", "t_h2d", "t_md", "t_f", "t_b", "t_u", "t_iter"]
    assert (phased[measured] > 0).all().all(), "every measured phase must take some time"
    assert (phased.loc[phased.workers == 2, "t_c"] > 0).all(), "the all-reduce must take time with 2 workers"
    # Stated tolerance: t_iter (start to start) minus the sum of the phases is the harness's own bookkeeping.
    # It is never negative, below 2 % in the median iteration, and below 10 % + 1 ms in all but at most two of
    # the 24 iterations: the operating system can preempt a worker between two timestamps (on two cores with
    # three worker processes it did so in about one CI run of ten), which lands in the gap of that iteration
    # only; a bookkeeping error of the harness would show in every iteration and in the median.
    gap = phased["t_iter"] - phased[PHASES].sum(axis=1)
    assert (gap >= 0).all()
    over_bound = gap > 0.10 * phased["t_iter"] + 1e-3
    assert over_bound.sum() <= 2, phased.loc[over_bound, ["workers", "rank", "t_iter"]].assign(gap=gap[over_bound])
    assert statistics.median(gap / phased["t_iter"]) < 0.02
    over = df[(df["mode"] == "overlapped") & (df.workers == 2)]
    assert over["t_c"].isna().all() and (over["t_iter"] > 0).all()


def test_tiny_ch4_collection_and_its_provenance(tmp_path):
    out = collect("ch4", out=tmp_path / "ch4.csv", progress=False, samples=3, seed=5, **TINY4)
    df = pd.read_csv(out)
    assert list(df.sample_id) == [0, 1, 2] and (df.status == "ok").all()
    runs = df[["step_run1", "step_run2", "step_run3"]]
    assert (df.step_time == runs.median(axis=1)).all()
    raw = [json.loads(line) for line in (tmp_path / "ch4.steps.jsonl").read_text().splitlines()]
    assert [r["sample_id"] for r in raw] == ["0", "1", "2"]
    first = raw[0]["repeats"][0]  # rank 0's three runs of per-step times
    assert len(first) == 3 and abs(statistics.median(sum(r) / len(r) for r in first) - df.step_time[0]) < 1e-12
    assert (df.steps_per_epoch == 60000 // 8).all()
    assert (abs(df.epoch_time - df.steps_per_epoch * df.step_time) < 1e-12).all()
    assert (df.step_min <= df.step_time).all() and (df.step_time <= df.step_max).all()
    prov = json.loads((tmp_path / "ch4.provenance.json").read_text())
    m = prov["machine"]
    assert m["cpu"] and m["cores"] >= 1 and m["python"] and m["date"].endswith("Z")
    assert prov["identity"]["settings"]["seed"] == 5 and prov["identity"]["threads"] == 1
    assert prov["adapters"]["1"]["versions"]["torch"].startswith("2.")
    assert prov["adapters"]["1"]["threads"] == 1
    assert prov["sampler"]["accepted"] == 3 and prov["sampler"]["drawn"] >= 3
    assert prov["sessions"][0]["samples_before"] == 0 and prov["sessions"][0]["samples_after"] == 3
    # a resume with another seed is refused, naming the setting
    with pytest.raises(ValueError, match="settings"):
        collect("ch4", out=out, progress=False, samples=3, seed=6, **TINY4)


def test_sigkilled_collection_resumes_with_every_sample_exactly_once(tmp_path):
    out = tmp_path / "ch4.csv"
    cmd = [sys.executable, "-m", "perfkit.cli", "collect", "ch4", "--out", str(out), "--samples", "8",
           "--workers", "1", "--batch-sizes", "8", "--datasets", "mnist", "--warmup", "1", "--steps", "2",
           "--min-run-seconds", "0", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        if out.exists() and out.read_text().count("\n") >= 3:  # header + at least 2 samples
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = pd.read_csv(out)
    assert 2 <= len(before) < 8, "the kill must land part-way"
    with open(out, "a") as fh:  # as if the kill had torn the last line
        fh.write("999,1,ok,,pytorch,cp")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    after = pd.read_csv(out)
    assert sorted(after.sample_id) == list(range(8))
    assert (after.status == "ok").all()
    pd.testing.assert_frame_equal(after.iloc[:len(before)], before)  # nothing measured was lost or redone
    prov = json.loads(out.with_name("ch4.provenance.json").read_text())
    assert [s["samples_before"] for s in prov["sessions"]] == [0, len(before)]


@pytest.mark.parametrize("sig, group", [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGTERM, True)])
def test_signalled_collection_stops_cleanly_even_with_sigint_ignored(tmp_path, sig, group):
    """`nohup perfkit collect ... &` starts with SIGINT ignored; both signals must still close the session, and
    `timeout` (SIGTERM to the whole process group, the workers too) must leave a provenance that counts every
    sample the file holds."""
    out = tmp_path / "ch4.csv"
    cmd = [sys.executable, "-m", "perfkit.cli", "collect", "ch4", "--out", str(out), "--samples", "40",
           "--workers", "1", "--batch-sizes", "8", "--datasets", "mnist", "--warmup", "1", "--steps", "2",
           "--min-run-seconds", "0", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN), start_new_session=group)
    deadline = time.time() + 120
    while time.time() < deadline and not (out.exists() and out.read_text().count("\n") >= 3):
        time.sleep(0.05)
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "resumes" in err
    rows = len(pd.read_csv(out))
    assert 2 <= rows < 40
    session = json.loads(out.with_name("ch4.provenance.json").read_text())["sessions"][-1]
    assert session["interrupted"] is True and session["samples_after"] == rows and "finished_utc" in session


def test_sample_log_drops_incomplete_multirow_samples(tmp_path):
    cols = ["sample_id", "sample_rows", "x"]
    with SampleLog(tmp_path / "s.csv", cols) as log:
        log.append("a", [{"x": 1}, {"x": 2}])
    with open(tmp_path / "s.csv", "a") as fh:
        fh.write("b,3,1\nb,3,2\n")  # a 3-row sample cut after 2 rows
    with SampleLog(tmp_path / "s.csv", cols) as log:
        assert log.done == {"a"}
    assert (tmp_path / "s.csv").read_text() == "sample_id,sample_rows,x\na,2,1\na,2,2\n"
    with pytest.raises(ValueError, match="columns"):
        SampleLog(tmp_path / "s.csv", ["sample_id", "sample_rows", "y"])


def test_failing_configuration_is_reported_and_the_group_goes_on():
    with WorkerGroup(workers=2) as grp:
        assert grp.hello["world_size"] == 2 and grp.hello["backend"] == "gloo"
        bad = dict(LENET, kernel_size=5, pool_size=5, stride=3, padding="valid", workers=2, batch_size=8)
        reply = grp.request({"op": "run", "id": "x", "task": "steps", "config": bad})
        assert not reply["ok"] and "conv2 kernel 5 does not fit" in reply["error"]
        good = dict(LENET, workers=2, batch_size=8, warmup=1, steps=2, repeats=1)
        reply = grp.request({"op": "run", "id": "y", "task": "steps", "config": good})
        assert reply["ok"] and len(reply["ranks"]) == 2 and len(reply["ranks"][1]["repeats"][0]) == 2
        assert grp.request({"op": "nonsense"})["ok"] is False


def test_timeouts_are_recorded_as_errors_and_collection_continues(tmp_path):
    out = collect("ch4", out=tmp_path / "t.csv", progress=False, samples=2, timeout=0.01, **TINY4)
    df = pd.read_csv(out)
    assert list(df.sample_id) == [0, 1]
    assert (df.status == "error").all() and df.error.str.contains("no reply within").all()


def test_workers_that_cannot_start_give_one_clear_error(tmp_path):
    with pytest.raises(ValueError, match="--python .*no such interpreter"):
        collect("ch4", out=tmp_path / "x.csv", progress=False, samples=1, python=str(tmp_path / "no-python"), **TINY4)
    assert not (tmp_path / "x.csv").exists(), "a bad option is refused before any file is written"
    not_python = tmp_path / "not-python"
    not_python.write_text("#!/bin/sh\necho 'not python' >&2; exit 1\n")
    not_python.chmod(0o755)
    with pytest.raises(ValueError, match="did not start"):
        collect("ch4", out=tmp_path / "y.csv", progress=False, samples=1, python=str(not_python), **TINY4)


def test_plans_and_step_aggregation():
    rep = _aggregate_steps([{"repeats": [[1.0, 3.0, 2.0], [2.0, 2.0, 2.0], [1.0, 1.0, 1.0]]},
                            {"repeats": [[1.5, 1.5, 4.5], [1.0, 1.0, 1.0], [0.5, 0.5, 0.5]]}])
    # run means: rank 0 (2, 2, 1), rank 1 (2.5, 1, 0.5) -> slowest (2.5, 2, 1) -> median 2
    assert rep["runs"] == [2.5, 2.0, 1.0] and rep["step_time"] == 2.0
    assert rep["step_min"] == 0.5 and rep["step_max"] == 4.5
    plan = make_plan("epoch", samples=2)
    assert plan.target == 2 and len(plan.items) == 20
    noise = make_plan("noise", samples=4, rounds=3)
    ids = [it[0] for it in noise.items]
    assert len(ids) == len(set(ids)) == 12
    assert [sorted(it[2]["config_id"] for it in noise.items[r * 4:(r + 1) * 4]) for r in range(3)] == [[0, 1, 2, 3]] * 3
    with pytest.raises(ValueError, match="rounds: not an option of `collect ch4`"):
        make_plan("ch4", rounds=3)


def test_epoch_task_over_a_small_real_file_set(tmp_path):
    """A whole epoch on a tiny real-format dataset: the step count follows DistributedSampler."""
    from tests.test_sampler_data import _idx_bytes
    import numpy as np

    root = tmp_path / "mnist"
    root.mkdir()
    (root / "train-images-idx3-ubyte").write_bytes(_idx_bytes(np.zeros((50, 28, 28), np.uint8)))
    (root / "train-labels-idx1-ubyte").write_bytes(_idx_bytes(np.arange(50, dtype=np.uint8) % 10))
    with WorkerGroup(workers=2, data_root=tmp_path) as grp:
        assert "real files" in grp.hello["data"]
        cfg = dict(LENET, workers=2, batch_size=8, warmup=1, steps=2, repeats=1)
        reply = grp.request({"op": "run", "id": "e", "task": "epoch", "config": cfg})
    assert reply["ok"], reply.get("error")
    r0, r1 = reply["ranks"]
    assert r0["n_train"] == 50 and r0["epoch_steps"] == r1["epoch_steps"] == 4  # ceil(ceil(50/2)/8)
    assert r0["epoch_time"] > 0


@pytest.mark.skipif(shutil.which("torchrun", path=os.path.dirname(sys.executable)) is None, reason="no torchrun")
def test_worker_runs_under_torchrun(tmp_path):
    req = tmp_path / "req.jsonl"
    res = tmp_path / "res.jsonl"
    req.write_text(json.dumps({"op": "hello"}) + "\n" + json.dumps(
        {"op": "run", "id": "1", "task": "phases",
         "config": {"model": "ae", "workers": 2, "batch_size": 8, "iterations": 3, "warmup": 1}}) + "\n")
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    proc = subprocess.run([torchrun, "--standalone", "--nproc_per_node", "2", "-m", "perfkit.measure.adapters.pytorch",
                           "--requests", str(req), "--results", str(res)], capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    hello, run = [json.loads(line) for line in res.read_text().splitlines()]
    assert hello["world_size"] == 2 and hello["backend"] == "gloo"
    assert run["ok"] and [len(r["iterations"]) for r in run["ranks"]] == [3, 3]
    assert all(it["t_c"] > 0 for r in run["ranks"] for it in r["iterations"])


def test_two_collectors_then_random_kills_leave_every_sample_exactly_once(tmp_path):
    """A second collector on the same file stops at once naming the first; SIGKILLs at random moments and
    resumes end with every sample exactly once in a file that parses."""
    import random

    out = tmp_path / "ch4.csv"
    cmd = [sys.executable, "-m", "perfkit.cli", "collect", "ch4", "--out", str(out), "--samples", "12",
           "--workers", "1", "--batch-sizes", "8", "--datasets", "mnist", "--warmup", "1", "--steps", "2",
           "--min-run-seconds", "0", "--no-progress"]
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not (out.exists() and out.read_text().count("\n") >= 2):
        time.sleep(0.05)
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert second.returncode == 2, second.stderr
    assert f"PID {first.pid}" in second.stderr and "another collector" in second.stderr
    assert "Traceback" not in second.stderr and len(second.stderr.strip().splitlines()) == 1
    rng = random.Random(2026)
    proc = first
    for _ in range(3):
        time.sleep(rng.uniform(0.2, 4.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    with open(out, newline="") as fh:
        records = list(csv.reader(fh, strict=True))
    ids = [r[0] for r in records[1:]]
    assert sorted(ids, key=int) == [str(i) for i in range(12)], "every sample exactly once"
    df = pd.read_csv(out)
    assert (df.status == "ok").all()


def test_a_launcher_that_fails_to_start_transiently_is_retried_once(monkeypatch, capsys):
    """Open MPI's PMIx listener sometimes fails to start: one more launch, said on stderr; any other failure, or a
    second transient one, is the error itself."""
    from perfkit.measure.workers import TRANSIENT_LAUNCH, WorkerError

    grp = WorkerGroup(framework="pytorch", workers=2)
    monkeypatch.setattr("perfkit.measure.workers.time.sleep", lambda s: None)
    calls = []

    def flaky(outcomes):
        def start():
            calls.append(1)
            out = outcomes[len(calls) - 1]
            if isinstance(out, Exception):
                raise out
            return out
        return start

    transient = WorkerError(f"rank 0 closed its output (crashed?)\n[rank 0] {TRANSIENT_LAUNCH[0]}. We cannot")
    monkeypatch.setattr(grp, "_start", flaky([transient, {"op": "hello"}]))
    assert grp.start() == {"op": "hello"} and len(calls) == 2
    assert "retrying once" in capsys.readouterr().err
    calls.clear()
    monkeypatch.setattr(grp, "_start", flaky([transient, transient]))
    with pytest.raises(WorkerError, match="listener thread"):
        grp.start()
    assert len(calls) == 2
    calls.clear()
    monkeypatch.setattr(grp, "_start", flaky([WorkerError("worker rank 1 exited with code 1"), {"op": "hello"}]))
    with pytest.raises(WorkerError, match="exited with code 1"):
        grp.start()
    assert len(calls) == 1
