"""benchmarks/device/campaign.py: the device campaign plans the commands that continue the shipped datasets, fits
a device command's time, skips what is complete and goes on past a step that cannot run.

Nothing here measures, except the one slow end-to-end run (one tiny Chapter 5 sample on the CPU, twice).
"""
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from perfkit.cli import build_parser
from perfkit.measure.collect import _identity
from perfkit.measure.plans import make_plan

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "device" / "campaign.py"
CPU16 = ROOT / "data" / "measured" / "pytorch-cpu16"


def _load():
    spec = importlib.util.spec_from_file_location("device_campaign", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


campaign = _load()


def _steps(env=None):
    return {s.name: s for s in campaign.plan({} if env is None else env)}


def _collect_call(step, monkeypatch):
    """What ``perfkit collect`` makes of the step's command line: ``(kind, framework, device, threads, data_root,
    plan options)``, read through the CLI's own parser and option handling (nothing is measured)."""
    import perfkit.measure.collect as measure_collect
    from perfkit.cli import collect as cli_collect

    argv = step.argv("python3", "/nowhere")
    assert argv[1:3] == ["-m", "perfkit.cli"]
    seen = {}

    def fake(kind, **kw):
        seen.update(kw, kind=kind)
        return Path(kw["out"])

    monkeypatch.setattr(measure_collect, "collect", fake)
    args = build_parser("collect").parse_args(argv[3:])
    cli_collect.run(args, argv[3:])
    fixed = {k: seen.pop(k) for k in ("kind", "out", "framework", "threads", "device", "python", "data_root",
                                      "timeout", "progress", "argv")}
    return fixed, seen


def _planned_identity(step, monkeypatch):
    fixed, options = _collect_call(step, monkeypatch)
    plan = make_plan(fixed["kind"], fixed["framework"], **options)
    return _identity(plan, fixed["framework"], fixed["device"], int(fixed["threads"]), fixed["data_root"])


def _provenance(name):
    return json.loads((CPU16 / name).read_text())


def test_the_ch4_resume_has_the_identity_of_the_shipped_16_core_file(monkeypatch):
    """The first step's command is one the collector accepts as a resume of pytorch-cpu16/ch4_lenet5.csv."""
    step = _steps()["pt16-ch4"]
    assert step.out("data/measured") == Path("data/measured/pytorch-cpu16/ch4_lenet5.csv")
    assert _planned_identity(step, monkeypatch) == _provenance("ch4_lenet5.provenance.json")["identity"]
    assert campaign.target(step) == 1500


def test_the_ch4_resume_repeats_the_recorded_sessions_options():
    """Word for word the options of every session recorded in the provenance, but for --out's folder."""
    step = _steps()["pt16-ch4"]
    ours = step.argv("python3", "data/measured")[3:]
    sessions = _provenance("ch4_lenet5.provenance.json")["sessions"]
    assert len(sessions) >= 2
    for session in sessions:
        words = shlex.split(session["command"])
        assert words[0] == "perfkit"
        theirs = words[1:]
        i, j = theirs.index("--out"), ours.index("--out")
        assert Path(theirs[i + 1]).name == Path(ours[j + 1]).name
        assert theirs[:i] + theirs[i + 2:] == ours[:j] + ours[j + 2:]


def test_jax_ch3_measures_with_the_settings_of_the_pytorch_16_core_file(monkeypatch):
    step = _steps()["jax16-ch3"]
    want = dict(_provenance("ch3_phases.provenance.json")["identity"], framework="jax")
    assert _planned_identity(step, monkeypatch) == want
    assert step.out("d") == Path("d/jax-cpu16/ch3_phases.csv")
    assert campaign.target(step) == 24  # 3 models x 2 modes x 4 worker counts


def test_jax_ch4_draws_the_first_configurations_of_pytorchs_16_core_file(monkeypatch):
    """Paired with PyTorch's: the same settings and sampler, sample i the same configuration."""
    step = _steps()["jax16-ch4"]
    want = dict(_provenance("ch4_lenet5.provenance.json")["identity"], framework="jax")
    assert _planned_identity(step, monkeypatch) == want
    jax_items = make_plan("ch4", "jax", **step.options).items
    pt_items = make_plan("ch4", "pytorch", **_steps()["pt16-ch4"].options).items
    assert len(jax_items) == 500 and jax_items == pt_items[:500]
    assert campaign.target(_steps({"JAX16_CH4_SAMPLES": "1500"})["jax16-ch4"]) == 1500


def test_the_ch5_step_is_one_gpu_at_full_volume(monkeypatch):
    step = _steps()["cuda-ch5"]
    fixed, options = _collect_call(step, monkeypatch)
    assert (fixed["kind"], fixed["framework"], fixed["device"]) == ("ch5", "pytorch", "cuda")
    assert options["workers"] == [1] and options["volume"] == [181, 217, 181] and options["samples"] == 300
    assert step.out("data/measured") == Path("data/measured/pytorch-cuda/ch5_resattnet3d.csv")
    # a larger CH5_SAMPLES continues the same file: its first samples are the same configurations
    small = make_plan("ch5", "pytorch", **step.options).items
    large = make_plan("ch5", "pytorch", **_steps({"CH5_SAMPLES": "600"})["cuda-ch5"].options).items
    assert large[:300] == small
    dry = _steps({"DEVICE": "cpu", "CH5_VOLUME": "24x28x24"})["cuda-ch5"]
    assert dry.device == "cpu" and dry.folder == "pytorch-cpu" and dry.options["volume"] == [24, 28, 24]


def test_the_default_slices_fit_one_device_command():
    """Nine minutes of collection by default; with start-up the whole campaign ends well inside the 10 minutes
    a device command may run (and the 12 the brief allows)."""
    steps = campaign.plan({})
    assert [s.name for s in steps] == ["pt16-ch4", "jax16-ch3", "jax16-ch4", "cuda-ch5"]
    assert sum(s.slice_s for s in steps) <= 9 * 60
    assert campaign.DEFAULT_BUDGET_S == sum(s.slice_s for s in steps) + campaign.STARTUP_S <= 600 - 20
    assert campaign.DEFAULT_KILL_AFTER_S < min(s.slice_s for s in steps)
    env = {"PT16_CH4_S": "30", "JAX16_CH3_S": "0", "STEPS": "pt16-ch4,jax16-ch3"}
    assert [(s.name, s.slice_s) for s in campaign.plan(env)] == [("pt16-ch4", 30), ("jax16-ch3", 0)]
    with pytest.raises(ValueError, match="STEPS"):
        campaign.plan({"STEPS": "nosuchstep"})
    with pytest.raises(ValueError, match="PT16_CH4_S"):
        campaign.plan({"PT16_CH4_S": "soon"})


@pytest.mark.parametrize("slices,left,want", [
    ([180, 150, 90, 120], 570, 210),   # its slice and the spare start-up seconds
    ([180, 150, 90, 120], 540, 180),
    ([150, 90, 120], 300, 150),        # an earlier step overran nothing but the budget is short: its slice first
    ([120], 500, 120 + 380),           # the last step takes what is left
    ([180, 150], 100, 100),            # never more than the budget left
    ([180], -5, 0),
])
def test_a_step_gets_its_slice_and_what_the_later_steps_do_not_need(slices, left, want):
    assert campaign.limits(slices, left) == want


def _fake_runner(calls, rows_added=0):
    def runner(argv, seconds, kill_after, log, env=None, stop=None):
        calls.append((argv, seconds, env))
        return 0, 0.1, "finished"
    return runner


def _write_log(path: Path, ids):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("sample_id,sample_rows,status\n" + "".join(f"{i},1,ok\n" for i in ids))


def _main(tmp_path, monkeypatch, env, runner):
    monkeypatch.setattr(campaign, "header", lambda *a, **k: None)  # no nvidia-smi, no imports of torch
    env = dict({"DATA": str(tmp_path / "data"), "PY": sys.executable}, **env)
    rc = campaign.main([str(tmp_path / "out")], env=env, runner=runner)
    summary = json.loads((tmp_path / "out" / "campaign-summary.json").read_text())
    return rc, {r["step"]: r for r in summary["steps"]}


def test_a_complete_dataset_is_skipped(tmp_path, monkeypatch):
    _write_log(tmp_path / "data" / "pytorch-cuda" / "ch5_resattnet3d.csv", range(3))
    calls = []
    rc, steps = _main(tmp_path, monkeypatch, {"STEPS": "cuda-ch5", "CH5_SAMPLES": "3"}, _fake_runner(calls))
    assert rc == 0 and calls == []
    assert steps["cuda-ch5"]["status"] == "complete: skipped" and steps["cuda-ch5"]["left"] == 0
    # one sample short: it runs, with the same command
    calls = []
    rc, steps = _main(tmp_path, monkeypatch, {"STEPS": "cuda-ch5", "CH5_SAMPLES": "4"}, _fake_runner(calls))
    assert len(calls) == 1 and steps["cuda-ch5"]["left"] == 1
    assert calls[0][0][3:6] == ["collect", "ch5", "--framework"]


def test_a_missing_jax_interpreter_is_reported_and_the_next_step_runs(tmp_path, monkeypatch):
    calls = []
    env = {"STEPS": "jax16-ch3 cuda-ch5", "JAX_PY": str(tmp_path / "no" / "python"), "DEVICE": "cpu",
           "CH5_VOLUME": "24x28x24"}
    rc, steps = _main(tmp_path, monkeypatch, env, _fake_runner(calls))
    assert rc == 0
    assert steps["jax16-ch3"]["status"].startswith("not run: no JAX under")
    assert [c[0][4] for c in calls] == ["ch5"]
    # the JAX step's unused slice went to the next step
    assert calls[0][1] > campaign.SLICES["cuda-ch5"][1]
    log = (tmp_path / "out" / "campaign.log").read_text()
    assert "not run: no JAX under" in log and "pytorch-cpu/ch5_resattnet3d.csv" in log


def test_the_budget_bounds_the_steps(tmp_path, monkeypatch):
    calls = []
    env = {"STEPS": "pt16-ch4 cuda-ch5", "BUDGET_S": "100", "DEVICE": "cpu", "CH5_VOLUME": "24x28x24"}
    _main(tmp_path, monkeypatch, env, _fake_runner(calls))
    assert [c[0][4] for c in calls] == ["ch4", "ch5"]
    assert all(c[1] <= 100 for c in calls)
    calls = []
    _, steps = _main(tmp_path, monkeypatch, dict(env, BUDGET_S="10"), _fake_runner(calls))
    assert calls == [] and all("of the budget left" in r["status"] for r in steps.values())


def test_the_tarball_holds_every_dataset_file(tmp_path):
    data, out = tmp_path / "data", tmp_path / "out"
    out.mkdir()
    steps = campaign.plan({})
    for name in ("ch4_lenet5.csv", "ch4_lenet5.provenance.json", "ch4_lenet5.steps.jsonl", "ch4_lenet5.csv.lock",
                 "ch3_phases.csv"):
        (data / "pytorch-cpu16").mkdir(parents=True, exist_ok=True)
        (data / "pytorch-cpu16" / name).write_text(name)
    (data / "jax-cpu16").mkdir()
    (data / "jax-cpu16" / "ch3_phases.csv").write_text("x")
    packed = campaign._pack(out, data, steps)
    with tarfile.open(packed) as tar:
        assert sorted(tar.getnames()) == ["jax-cpu16/ch3_phases.csv", "pytorch-cpu16/ch4_lenet5.csv",
                                          "pytorch-cpu16/ch4_lenet5.provenance.json",
                                          "pytorch-cpu16/ch4_lenet5.steps.jsonl"]
    assert not (out / (campaign.TARBALL + ".tmp")).exists()


@pytest.mark.parametrize("handler,how", [("stop", "stopped at the time limit"), ("ignore", "killed at the time limit")])
def test_a_step_ends_within_its_time(tmp_path, handler, how):
    """SIGTERM KILL_AFTER_S before the end (the collector stops cleanly), SIGKILL at the end if it did not."""
    code = ("import signal, sys, time\n"
            + ("signal.signal(signal.SIGTERM, lambda *a: sys.exit(130))\n" if handler == "stop"
               else "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n")
            + "print('started', flush=True)\ntime.sleep(30)\n")
    log = campaign.Log(tmp_path / "log")
    t0 = time.monotonic()
    rc, ran, ended = campaign.run_limited([sys.executable, "-c", code], 3, 1.5, log)
    log.close()
    assert time.monotonic() - t0 < 6 and ended.startswith(how)
    assert rc == (130 if handler == "stop" else -9)
    assert "started" in (tmp_path / "log").read_text()


@pytest.mark.slow
def test_a_dry_run_collects_resumes_and_packs(tmp_path):
    """campaign.sh end to end on the CPU: one tiny Chapter 5 sample, then a second run finds it complete."""
    env = dict(os.environ, DATA=str(tmp_path / "data"), DEVICE="cpu", PY=sys.executable, STEPS="cuda-ch5",
               CH5_VOLUME="16x20x16", CH5_SAMPLES="1", CUDA_CH5_S="90", KILL_AFTER_S="10")
    for run, status in ((1, "finished, exit 0"), (2, "complete: skipped")):
        out = tmp_path / f"out{run}"
        subprocess.run([str(ROOT / "benchmarks" / "device" / "campaign.sh"), str(out)], env=env, check=True,
                       capture_output=True, timeout=150)
        steps = json.loads((out / "campaign-summary.json").read_text())["steps"]
        assert [(s["step"], s["status"], s["samples"], s["left"]) for s in steps] == [("cuda-ch5", status, 1, 0)]
    with tarfile.open(tmp_path / "out1" / campaign.TARBALL) as tar:
        names = set(tar.getnames())
    assert {"pytorch-cpu/ch5_resattnet3d.csv", "pytorch-cpu/ch5_resattnet3d.provenance.json"} <= names
