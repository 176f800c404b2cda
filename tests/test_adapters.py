"""Every framework adapter other than PyTorch's, run for real in its own environment.

Each framework runs under the interpreter of its environment (``make frameworks``
builds them under ``.envs/``). Where an environment is missing the tests of
that framework are skipped, unless ``PERFKIT_REQUIRE_FRAMEWORKS=1`` (set by
``make test``, so CI fails instead of skipping).
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pandas as pd
import pytest

from perfkit.measure.adapters import FRAMEWORKS, framework_python
from perfkit.measure.collect import collect
from perfkit.measure.workers import WorkerGroup
from perfkit.model.forms.costs import network_costs

pytestmark = pytest.mark.slow
OTHERS = [name for name in FRAMEWORKS if name != "pytorch"]
PHASES = ["t_io", "t_h2d", "t_md", "t_f", "t_b", "t_c", "t_u"]
LENETS = [
    {"kernel_size": 3, "pool_size": 2, "activation": "relu", "optimizer": "sgd", "dataset": "mnist", "num_filters": 4,
     "learning_rate": 0.01, "padding": "same", "stride": 1, "dropout": 0.5},
    {"kernel_size": 5, "pool_size": 1, "activation": "tanh", "optimizer": "adam", "dataset": "cifar10",
     "num_filters": 16, "learning_rate": 0.001, "padding": "valid", "stride": 2, "dropout": 0.2},
    {"kernel_size": 4, "pool_size": 3, "activation": "sigmoid", "optimizer": "sgd", "dataset": "fashion_mnist",
     "num_filters": 8, "learning_rate": 0.1, "padding": "same", "stride": 1, "dropout": 0.0},
]


def _need(framework):
    try:
        framework_python(framework)
    except ValueError as exc:
        if os.environ.get("PERFKIT_REQUIRE_FRAMEWORKS") == "1":
            pytest.fail(str(exc))
        pytest.skip(str(exc))


def _run(grp, task, cfg):
    reply = grp.request({"op": "run", "id": "t", "task": task, "config": cfg}, timeout=600)
    assert reply["ok"], reply.get("error")
    return reply["ranks"]


@pytest.mark.parametrize("framework", OTHERS)
def test_parameter_counts_equal_the_pytorch_models(framework):
    """Same layers, same parameter counts: the three Chapter 3 models and Table 4.1 LeNet-5s."""
    _need(framework)
    with WorkerGroup(framework, 1) as grp:
        for model in ("cnn", "mlp", "ae"):
            ranks = _run(grp, "phases", {"model": model, "workers": 1, "batch_size": 4, "mode": "phased",
                                         "iterations": 1, "warmup": 0, "seed": 0})
            assert ranks[0]["n_params"] == network_costs("ch3_" + model, {})["n_params"], model
        for cfg in LENETS:
            ranks = _run(grp, "steps", dict(cfg, workers=1, batch_size=4, mode="phased", warmup=0, steps=1, repeats=1))
            assert ranks[0]["n_params"] == network_costs("lenet5", cfg)["n_params"], cfg


@pytest.mark.parametrize("framework", OTHERS)
@pytest.mark.parametrize("mode", ["phased", "overlapped"])
def test_phases_with_one_and_two_workers_are_positive_and_add_up(framework, mode, tmp_path):
    _need(framework)
    out = collect("ch3", out=tmp_path / "ch3.csv", framework=framework, progress=False, models=["mlp"], modes=[mode],
                  workers=[1, 2], iterations=8, warmup=2, batch_size=16)
    df = pd.read_csv(out)
    assert (df.status == "ok").all(), df.error.dropna().tolist()
    assert len(df) == 8 * (1 + 2) and (df.framework == framework).all()
    assert (df.groupby("workers")["rank"].nunique() == pd.Series({1: 1, 2: 2})).all()
    prov = json.loads(out.with_name("ch3.provenance.json").read_text())
    segments = prov["adapters"]["2"]["segments"][mode]
    timed = ["t_io", "t_h2d", "t_md"] + [s.split("+")[0] for s in segments]
    merged = [p for s in segments for p in s.split("+")[1:]]
    assert (df[timed + ["t_iter"]] > 0).all().all(), "every timed phase must take some time"
    assert df[merged].isna().all().all(), "phases a framework cannot separate are NaN, never a made-up split"
    if mode == "phased":
        assert segments == ["t_f", "t_b", "t_c", "t_u"]
        assert (df.loc[df.workers == 2, "t_c"] > 0).all(), "the all-reduce must take time with 2 workers"
    # the same tolerance as PyTorch's (tests/test_harness.py): t_iter minus the phases is the harness's bookkeeping
    gap = df["t_iter"] - df[timed].sum(axis=1)
    assert (gap >= 0).all()
    assert (gap > 0.10 * df["t_iter"] + 1e-3).sum() <= 2
    assert statistics.median(gap / df["t_iter"]) < 0.02


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_two_workers_really_average_their_gradients(framework):
    """One phased step on different data: the aggregated gradient is the mean of the two local ones on both
    ranks, and the replicas' weights stay identical."""
    _need(framework)
    with WorkerGroup(framework, 2) as grp:
        ranks = _run(grp, "check", {"model": "mlp", "workers": 2, "batch_size": 8, "mode": "phased", "seed": 3,
                                    "warmup": 0})
    local = [r["grad_local"] for r in ranks]
    assert abs(local[0] - local[1]) > 1e-3 * max(map(abs, local)), "the two ranks must see different data"
    for r in ranks:
        assert r["grad_mean"] == pytest.approx(sum(local) / 2, rel=1e-4, abs=1e-6 * max(map(abs, local)))
    assert ranks[0]["weights"] == pytest.approx(ranks[1]["weights"], rel=1e-6)


@pytest.mark.parametrize("framework", OTHERS)
def test_tiny_ch4_collection(framework, tmp_path):
    _need(framework)
    out = collect("ch4", out=tmp_path / "ch4.csv", framework=framework, progress=False, samples=3, seed=5,
                  workers=[1, 2], batch_sizes=[8], datasets=["mnist"], warmup=1, steps=2, repeats=3,
                  min_run_seconds=0.0)
    df = pd.read_csv(out)
    assert list(df.sample_id) == [0, 1, 2] and (df.status == "ok").all(), df.error.tolist()
    assert (df.step_time > 0).all()
    prov = json.loads(out.with_name("ch4.provenance.json").read_text())
    assert prov["identity"]["framework"] == framework
    assert all(a["framework"] == framework for a in prov["adapters"].values())


def _tagged(tag: str) -> list[int]:
    """PIDs whose environment carries ``tag``."""
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            if tag.encode() in (p / "environ").read_bytes():
                found.append(int(p.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("framework", OTHERS)
def test_sigkilled_collection_leaves_no_process_and_resumes(framework, tmp_path):
    _need(framework)
    tag = f"perfkit-test-{uuid.uuid4().hex}"
    out = tmp_path / "ch3.csv"
    cmd = [sys.executable, "-m", "perfkit.cli", "collect", "ch3", "--framework", framework, "--out", str(out),
           "--models", "mlp,ae", "--modes", "phased", "--workers", "2", "--iterations", "400", "--warmup", "1",
           "--batch-size", "8", "--no-progress"]
    env = dict(os.environ, PERFKIT_TEST_TAG=tag)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.time() + 300
    while time.time() < deadline and not (out.exists() and out.read_text().count("\n") >= 2):
        time.sleep(0.05)
    assert len(_tagged(tag)) >= 3, "the collector and its two workers (and any helpers) should be running"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 20
    while time.time() < deadline and _tagged(tag):
        time.sleep(0.1)
    assert _tagged(tag) == [], "a worker, scheduler, server or MPI process outlived the SIGKILLed collector"
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    df = pd.read_csv(out)
    assert set(df.sample_id) == {"mlp-G2-phased", "ae-G2-phased"} and (df.status == "ok").all()
    assert len(df) == 2 * 2 * 400


def test_a_framework_whose_environment_is_not_built_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_ENVS", str(tmp_path / "none"))
    with pytest.raises(ValueError, match=r"framework 'mxnet'.*not built; run `make frameworks`"):
        collect("ch3", out=tmp_path / "x.csv", framework="mxnet", progress=False)
    assert not (tmp_path / "x.csv").exists()
    done = subprocess.run([sys.executable, "-m", "perfkit.cli", "collect", "ch3", "--framework", "jax", "--out",
                           str(tmp_path / "y.csv")], capture_output=True, text=True, env=dict(os.environ))
    assert done.returncode != 0 and "make frameworks" in done.stderr and "Traceback" not in done.stderr
    with pytest.raises(ValueError, match="expected one of"):
        collect("ch3", out=tmp_path / "z.csv", framework="caffe", progress=False)
