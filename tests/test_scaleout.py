"""Scale-out on real engines: fits on a Dask cluster, and the PyTorch worker across two torchrun "nodes".

Both are what the multi-machine recipes of docs/forms.md and docs/measuring.md run, on one machine: a
``dask.distributed.LocalCluster`` with two worker processes stands in for a
scheduler with workers on other hosts, and two ``torchrun`` launches meeting at a
c10d rendezvous on loopback stand in for two nodes of a cluster.
"""
import json
import logging
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from perfkit.chapters.ch4 import make_model
from perfkit.data.measured import load_steps, thesis_split
from perfkit.measure.workers import _free_ports
from perfkit.model.selection.fitting import fit_repeated, regularisation_sweep
from perfkit.schema import resolve

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ch4_split():
    """200 measured PyTorch LeNet-5 rows, split 150 / 50 (the chapter's data, small enough for a test)."""
    X, y, _ = load_steps(resolve("data/measured/pytorch-cpu/ch4_lenet5.csv"))
    return thesis_split(X.iloc[:200], y.iloc[:200], n_fit=150, n_test=50, seed=0)


def _sweep_and_fits(split, **kw):
    X_fit, X_test, y_fit, y_test = split
    model = make_model(maxiter=15)
    sweep = regularisation_sweep(model, X_fit, y_fit, X_test, y_test, lams=[1e-4, 1e-2, 1.0], seeds=(0, 1),
                                 progress=False, **kw)
    rep = fit_repeated(make_model(penalty="l2", lam=1e-3, maxiter=15), X_fit, y_fit, seeds=3, progress=False, **kw)
    return sweep, rep


def test_lambda_sweep_and_repeated_fits_on_a_dask_cluster_match_the_default_backend(ch4_split):
    distributed = pytest.importorskip("distributed")
    local = _sweep_and_fits(ch4_split, n_jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        remote = _sweep_and_fits(ch4_split, n_jobs=2, backend="dask")
        # the tasks really ran on the cluster's worker processes, not in this one
        logs = client.run(lambda: os.getpid())
        assert os.getpid() not in logs.values()
    sweep_l, rep_l = local
    sweep_d, rep_d = remote
    assert len(sweep_l) > 0 and set(sweep_l["quantity"]) >= {"r2_test"}
    pd.testing.assert_frame_equal(sweep_l.reset_index(drop=True), sweep_d.reset_index(drop=True))
    drop = ["fit_time"]
    pd.testing.assert_frame_equal(rep_l.params.drop(columns=drop), rep_d.params.drop(columns=drop))
    pd.testing.assert_frame_equal(rep_l.summary(), rep_d.summary())


TORCHRUN = shutil.which("torchrun", path=os.path.dirname(sys.executable))


def _torchrun_nodes(tmp_path, req, results, port):
    """Two torchrun launches of one worker each ("nodes" 0 and 1) meeting at a c10d rendezvous on loopback."""
    nodes = []
    for node in (0, 1):
        cmd = [TORCHRUN, "--nnodes", "2", "--nproc-per-node", "1", "--rdzv-backend", "c10d",
               "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", f"perfkit-test-{port}", "--max-restarts", "0",
               "-m", "perfkit.measure.adapters.pytorch", "--requests", str(req), "--results", str(results)]
        nodes.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      cwd=tmp_path, env=dict(os.environ, PYTHONUNBUFFERED="1")))
    outs = []
    for proc in nodes:
        try:
            _, err = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            for p in nodes:
                p.kill()
            pytest.fail("torchrun did not finish in 300 s")
        outs.append((proc.returncode, err))
    assert [rc for rc, _ in outs] == [0, 0], "\n".join(err[-1500:] for _, err in outs)


@pytest.mark.skipif(TORCHRUN is None, reason="no torchrun beside this Python")
def test_pytorch_worker_runs_across_two_torchrun_nodes_and_its_results_resume_into_the_sample_log(tmp_path):
    pytest.importorskip("torch")
    from perfkit.measure.cluster import import_results, read_results, write_requests

    # the collector's own plan: the first two configurations of `perfkit collect ch4`, on two workers, batch 8
    opts = dict(samples=2, batch_sizes=[8], datasets=["mnist"], warmup=1, steps=2, repeats=3, min_run_seconds=0.0)
    req, results, csv = tmp_path / "requests.jsonl", tmp_path / "results.jsonl", tmp_path / "ch4_lenet5.csv"
    assert write_requests("ch4", req, world_size=2, results=results, **opts) == 2
    _torchrun_nodes(tmp_path, req, results, _free_ports(1)[0])
    hello, replies = read_results(results)
    assert hello["world_size"] == 2 and hello["backend"] == "gloo"
    assert sorted(replies) == ["0", "1"] and all(r["ok"] for r in replies.values())
    assert all(len(r["ranks"]) == 2 for r in replies.values())

    # the replies become the rows `perfkit collect ch4` writes, in its crash-safe sample log
    assert import_results("ch4", results, csv, world_size=2, **opts) == 2
    df = pd.read_csv(csv)
    assert list(df["sample_id"]) == [0, 1] and set(df["status"]) == {"ok"} and set(df["workers"]) == {2}
    assert (df["step_time"] > 0).all()
    np.testing.assert_allclose(df["epoch_time"], df["step_time"] * df["steps_per_epoch"])
    prov = json.loads((tmp_path / "ch4_lenet5.provenance.json").read_text())
    assert prov["adapters"]["2"]["world_size"] == 2 and prov["sessions"][-1]["samples_added"] == 2

    # resuming: nothing is left to request, and importing again adds nothing twice
    assert write_requests("ch4", req, world_size=2, results=results, **opts) == 0
    assert import_results("ch4", results, csv, world_size=2, **opts) == 0
    assert len(pd.read_csv(csv)) == 2
    # a larger plan asks only for the samples not yet measured
    assert write_requests("ch4", req, world_size=2, results=results, **dict(opts, samples=3)) == 1
