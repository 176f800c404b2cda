"""The device campaign: resumable measurements for a lent machine with 16 CPU cores and one GPU.

Run it from the repository root through ``benchmarks/device/campaign.sh OUTDIR`` (or
``python3 benchmarks/device/campaign.py OUTDIR``). Four steps, in order, each a ``perfkit collect`` cut at a
time limit (a SIGTERM stops a collection cleanly, keeping every finished sample; the same command resumes it):

========== ==================================================================== ============== =========
step       what                                                                 dataset        slice (s)
========== ==================================================================== ============== =========
pt16-ch4   PyTorch Chapter 4, G = 1, 2, 4, 8, towards 1500 configurations        pytorch-cpu16  180
jax16-ch3  JAX Chapter 3 (the settings of pytorch-cpu16/ch3_phases.csv)          jax-cpu16      150
jax16-ch4  JAX Chapter 4, G = 1, 2, 4, 8, the first JAX16_CH4_SAMPLES (500)      jax-cpu16      90
cuda-ch5   PyTorch Chapter 5 on the GPU, G = 1, CH5_VOLUME (181x217x181),        pytorch-cuda   120
           the first CH5_SAMPLES (300) configurations
========== ==================================================================== ============== =========

The datasets are continued in place under ``DATA`` (default ``data/measured``): a session that unpacks the
tarball this script writes (``OUTDIR/device-campaign.tar.gz``, members ``<folder>/<file>``) into
``data/measured/`` has the longer files, and the next session continues from them. A step whose dataset holds
all its samples is skipped; a step that fails is logged and the next one runs.

Time: ``BUDGET_S`` (default: the slices of the steps to run plus 30 s of start-up, 570 s) bounds the whole
campaign from its start to the last step's end. Each step gets its slice plus whatever of the budget the later
steps do not need (spare start-up seconds, time the steps before it left unused, the slices of complete steps),
never more than the budget left; a slice of 0 skips its step. Its collection gets SIGTERM ``KILL_AFTER_S`` (20 s) before the end of that time and
SIGKILL at the end, so a step never outlasts its time. The tarball is rewritten after every step.

Environment (all optional): PY (this and the PyTorch workers' interpreter, default the one running this),
WORKER_PY (the PyTorch workers' interpreter where it is not PY), JAX_PY (JAX's: ``.envs/jax/bin/python`` where
``make frameworks`` built it, else PY), DATA, DEVICE (step cuda-ch5's device: cuda; cpu for a dry run),
BUDGET_S, PT16_CH4_S, JAX16_CH3_S, JAX16_CH4_S, CUDA_CH5_S, KILL_AFTER_S, STEPS (the steps to run, by name,
space- or comma-separated), WORKERS (the CPU steps' worker counts, 1,2,4,8: only for a dry run into another
DATA, since a resume needs the same list), JAX16_CH4_SAMPLES, CH5_SAMPLES, CH5_VOLUME.
PERFKIT_SOURCE_COMMIT names the commit of the copied tree (the provenance records it).

Standard library only, except :func:`target` (perfkit's own plan, NumPy).
"""
from __future__ import annotations

import csv
import json
import os
import shlex
import signal
import subprocess
import sys
import tarfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: the worker counts of the 16-core campaigns (the shipped pytorch-cpu16 files)
CPU16_WORKERS = "1,2,4,8"
#: step name → (environment variable of its time slice, default seconds)
SLICES = {"pt16-ch4": ("PT16_CH4_S", 180), "jax16-ch3": ("JAX16_CH3_S", 150), "jax16-ch4": ("JAX16_CH4_S", 90),
          "cuda-ch5": ("CUDA_CH5_S", 120)}
#: seconds of start-up (versions, nvidia-smi) the default budget allows beside the slices
STARTUP_S = 30
#: the default budget of the whole campaign (BUDGET_S; by default the slices of the steps to run + STARTUP_S)
DEFAULT_BUDGET_S = sum(s for _, s in SLICES.values()) + STARTUP_S
#: default seconds between SIGTERM and SIGKILL of a step's collection (within its time)
DEFAULT_KILL_AFTER_S = 20
#: a step with less time than this left is not started
MIN_STEP_S = 15
#: the tarball under OUTDIR
TARBALL = "device-campaign.tar.gz"
#: what a dataset is besides its CSV (suffixes after the stem)
COMPANIONS = (".csv", ".provenance.json", ".steps.jsonl", ".csv.dropped")


@dataclass
class Step:
    """One ``perfkit collect`` of the campaign."""

    name: str
    what: str
    kind: str
    framework: str
    device: str
    folder: str          # under DATA: <framework>-<device or cpu16>
    file: str
    options: dict        # make_plan options, in the order of the command line
    slice_s: int
    python: str | None = None   # --python (None: the collector's default)
    env: dict = field(default_factory=dict)

    def out(self, data) -> Path:
        return Path(data) / self.folder / self.file

    def cli_options(self) -> list[str]:
        """The plan options as ``perfkit collect`` flags (lists comma-separated, volumes DxHxW)."""
        words = []
        for key, value in self.options.items():
            if isinstance(value, (list, tuple)):
                value = ("x" if key == "volume" else ",").join(str(v) for v in value)
            words += ["--" + key.replace("_", "-"), str(value)]
        return words

    def argv(self, py: str, data) -> list[str]:
        """The collection's command line (as the shipped files' sessions: options, --out, --no-progress)."""
        cmd = [py, "-m", "perfkit.cli", "collect", self.kind, "--framework", self.framework, "--device", self.device,
               *self.cli_options(), "--out", str(self.out(data)), "--no-progress"]
        return cmd + (["--python", self.python] if self.python else [])


def _ints(text: str, name: str) -> list[int]:
    try:
        values = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise ValueError(f"{name}: expected comma-separated integers, got {text!r}") from None
    if not values:
        raise ValueError(f"{name}: expected comma-separated integers, got {text!r}")
    return values


def _seconds(env, name: str, default: float) -> float:
    text = env.get(name, "")
    if not text.strip():
        return float(default)
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{name}: expected seconds, got {text!r}") from None
    if value < 0:
        raise ValueError(f"{name}: expected seconds >= 0, got {text!r}")
    return value


def jax_python(env) -> str:
    """JAX's interpreter: JAX_PY, else ``.envs/jax/bin/python`` where it exists, else PY."""
    if env.get("JAX_PY"):
        return env["JAX_PY"]
    built = ROOT / ".envs" / "jax" / "bin" / "python"
    return str(built) if built.exists() else env.get("PY") or sys.executable


def plan(env=None) -> list[Step]:
    """The campaign's steps under the environment ``env`` (default ``os.environ``), in order, filtered by STEPS."""
    env = os.environ if env is None else env
    workers = _ints(env.get("WORKERS") or CPU16_WORKERS, "WORKERS")
    device = env.get("DEVICE") or "cuda"
    worker_py = env.get("WORKER_PY") or None
    jax_env = {"JAX_PLATFORMS": "cpu"}   # the CPU steps must not initialise the CUDA plugin in 8 processes
    slices = {name: int(_seconds(env, var, default)) for name, (var, default) in SLICES.items()}
    volume = [int(v) for v in (env.get("CH5_VOLUME") or "181x217x181").lower().split("x")]
    steps = [
        Step("pt16-ch4", "PyTorch Chapter 4 on 16 cores, towards the 1500 paired configurations", "ch4", "pytorch",
             "cpu", "pytorch-cpu16", "ch4_lenet5.csv", {"workers": workers}, slices["pt16-ch4"], worker_py),
        Step("jax16-ch3", "JAX Chapter 3 on 16 cores (pytorch-cpu16/ch3_phases.csv's settings)", "ch3", "jax", "cpu",
             "jax-cpu16", "ch3_phases.csv", {"workers": workers, "iterations": 80, "warmup": 10},
             slices["jax16-ch3"], jax_python(env), jax_env),
        Step("jax16-ch4", "JAX Chapter 4 on 16 cores (the same configurations as PyTorch's)", "ch4", "jax", "cpu",
             "jax-cpu16", "ch4_lenet5.csv",
             {"workers": workers, "samples": int(env.get("JAX16_CH4_SAMPLES") or 500)}, slices["jax16-ch4"],
             jax_python(env), jax_env),
        Step("cuda-ch5", f"PyTorch Chapter 5 on one GPU ({device}), G = 1, volume {'x'.join(map(str, volume))}",
             "ch5", "pytorch", device, f"pytorch-{device}", "ch5_resattnet3d.csv",
             {"workers": [1], "samples": int(env.get("CH5_SAMPLES") or 300), "volume": volume},
             slices["cuda-ch5"], worker_py),
    ]
    wanted = (env.get("STEPS") or "").replace(",", " ").split()
    unknown = sorted(set(wanted) - {s.name for s in steps})
    if unknown:
        raise ValueError(f"STEPS: unknown step {unknown[0]!r} (steps: {', '.join(s.name for s in steps)})")
    return [s for s in steps if not wanted or s.name in wanted]


def target(step: Step) -> int:
    """How many samples the step's collection measures in all (perfkit's own plan of its options)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from perfkit.measure.plans import make_plan

    return len(make_plan(step.kind, step.framework, **step.options).items)


def progress(path: Path) -> tuple[int, int]:
    """``(rows, samples)`` of a sample log: its CSV records and the distinct sample ids among them (0, 0 without
    the file). A record is read as CSV (an error row's message may span lines); an unreadable file counts 0."""
    if not path.exists():
        return 0, 0
    try:
        with open(path, newline="") as fh:
            rows = [r.get("sample_id") for r in csv.DictReader(fh)]
    except (OSError, csv.Error, UnicodeDecodeError):
        return 0, 0
    return len(rows), len({r for r in rows if r not in (None, "")})


def limits(slices: list[float], budget_left: float) -> float:
    """The time of the first of ``slices`` (the steps still to run, in order): its slice plus whatever the budget
    holds beyond the later steps' slices, never more than the budget left."""
    first, later = slices[0], sum(slices[1:])
    return max(0.0, min(budget_left, max(first, budget_left - later)))


class Log:
    """Lines to stdout and to the campaign log at once."""

    def __init__(self, path: Path):
        self.fh = open(path, "a", buffering=1)
        self.lock = threading.Lock()

    def __call__(self, text: str = "") -> None:
        with self.lock:
            for line in str(text).splitlines() or [""]:
                print(line, flush=True)
                self.fh.write(line + "\n")

    def close(self):
        self.fh.close()


class Stop:
    """SIGTERM/SIGINT of the campaign itself: stop the running step, run no other, still pack the tarball."""

    def __init__(self):
        self.signum = None
        self.child = None

    def __call__(self, signum, frame):
        self.signum = signum
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)


def run_limited(argv, seconds: float, kill_after: float, log: Log, env=None, stop: Stop | None = None):
    """Run ``argv`` with its output in the log; SIGTERM at ``seconds - kill_after``, SIGKILL at ``seconds``.
    Returns ``(exit status, seconds it ran, how it ended)``; a command that cannot start: ``(None, 0, reason)``."""
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                                start_new_session=True, text=True, errors="replace", bufsize=1)
    except OSError as exc:
        return None, 0.0, f"could not start: {exc}"
    if stop is not None:
        stop.child = proc
    reader = threading.Thread(target=lambda: [log("   " + line.rstrip("\n")) for line in proc.stdout], daemon=True)
    reader.start()
    how = "finished"
    soft = max(1.0, seconds - kill_after)
    try:
        proc.wait(timeout=soft)
    except subprocess.TimeoutExpired:
        how = f"stopped at the time limit (SIGTERM after {soft:.0f} s)"
        proc.send_signal(signal.SIGTERM)  # the collector alone: it stops its workers and closes the session
        try:
            proc.wait(timeout=max(1.0, seconds - (time.monotonic() - t0)))
        except subprocess.TimeoutExpired:
            how = f"killed at the time limit (SIGKILL after {seconds:.0f} s; finished samples are kept)"
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    if stop is not None:
        stop.child = None
        if stop.signum is not None and how == "finished":
            how = f"stopped by signal {stop.signum} to the campaign"
    reader.join(timeout=5)
    return proc.returncode, time.monotonic() - t0, how


def _check_output(argv, timeout=90, env=None) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unavailable: {exc}"
    return (out.stdout + out.stderr).strip() or f"(no output, exit {out.returncode})"


VERSIONS = r"""
import importlib, os
for name in ("numpy", "pandas", "scipy", "torch", "jax", "jaxlib", "optax"):
    try:
        print(name, importlib.import_module(name).__version__)
    except Exception as exc:
        print(name, "unavailable:", type(exc).__name__, exc)
try:
    import torch
    print("torch.cuda", torch.cuda.is_available(), torch.version.cuda,
          torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
except Exception as exc:
    print("torch.cuda check:", exc)
print("cpus", os.cpu_count(), "usable", len(os.sched_getaffinity(0)))
"""

#: what the JAX steps need from their interpreter (checked before the slice is spent)
JAX_CHECK = "import jax, optax; print('jax', jax.__version__, 'optax', optax.__version__)"


def header(log: Log, py: str, steps: list[Step]) -> None:
    log(f"== {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} device campaign; source commit "
        f"{os.environ.get('PERFKIT_SOURCE_COMMIT') or '(PERFKIT_SOURCE_COMMIT unset)'}")
    log("== machine")
    log(_check_output(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv"], 30))
    log(_check_output([py, "-c", VERSIONS], 120, env=dict(os.environ, JAX_PLATFORMS="cpu")))
    try:
        with open("/proc/meminfo") as fh:
            log(fh.readline().strip())
    except OSError:
        pass


def _pack(out: Path, data: Path, steps: list[Step]) -> Path | None:
    """The steps' datasets (CSV, provenance, step log, dropped records) in ``out/TARBALL`` as ``<folder>/<file>``,
    written to a temporary name and renamed."""
    members = []
    for step in steps:
        stem = step.out(data).name[:-len(".csv")]
        for suffix in COMPANIONS:
            path = step.out(data).parent / (stem + suffix)
            if path.is_file() and path not in members:
                members.append(path)
    if not members:
        return None
    tmp = out / (TARBALL + ".tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        for path in members:
            tar.add(path, arcname=f"{path.parent.name}/{path.name}")
    os.replace(tmp, out / TARBALL)
    return out / TARBALL


def main(argv=None, env=None, runner=run_limited) -> int:
    """Run the campaign; 0 when it ran (whatever each step did), 2 for a bad setting."""
    argv = sys.argv[1:] if argv is None else argv
    env = dict(os.environ if env is None else env)
    if len(argv) != 1:
        print("usage: campaign.py OUTDIR   (settings from the environment: see the module docstring)",
              file=sys.stderr)
        return 2
    t_start = time.monotonic()
    out = Path(argv[0]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    try:
        steps = plan(env)
        budget = _seconds(env, "BUDGET_S", sum(s.slice_s for s in steps) + STARTUP_S)
        kill_after = _seconds(env, "KILL_AFTER_S", DEFAULT_KILL_AFTER_S)
    except ValueError as exc:
        print(f"campaign: {exc}", file=sys.stderr)
        return 2
    py = env.get("PY") or sys.executable
    data = Path(env.get("DATA") or "data/measured")
    data = data if data.is_absolute() else ROOT / data
    run_env = dict(env, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
                   PYTHONUNBUFFERED="1")
    log = Log(out / "campaign.log")
    stop = Stop()
    old = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    records = []
    try:
        header(log, py, steps)
        log(f"== budget {budget:.0f} s from the start, slices "
            + ", ".join(f"{s.name} {s.slice_s} s" for s in steps) + f"; SIGTERM {kill_after:.0f} s before a "
            f"step's end; data {data}")
        state = {}
        for step in steps:
            try:
                want = target(step)
            except Exception as exc:  # a bad CH5_VOLUME, say: this step cannot run, the others can
                want, note = None, f"no plan: {type(exc).__name__}: {exc}"
            else:
                note = None
            rows, done = progress(step.out(data))
            state[step.name] = dict(target=want, rows_before=rows, samples_before=done, note=note)
        for i, step in enumerate(steps):
            st = state[step.name]
            rec = dict(step=step.name, dataset=f"{step.folder}/{step.file}", target=st["target"],
                       rows_before=st["rows_before"], samples_before=st["samples_before"], status=None)
            records.append(rec)
            log(f"== {time.strftime('%H:%M:%SZ', time.gmtime())} step {step.name}: {step.what}")
            log(f"   {step.folder}/{step.file}: {st['rows_before']} rows, {st['samples_before']} of "
                f"{st['target']} samples")
            later = [s.slice_s for s in steps[i + 1:]
                     if s.slice_s > 0 and state[s.name]["target"] is not None
                     and state[s.name]["samples_before"] < state[s.name]["target"]]
            seconds = limits([step.slice_s] + later, budget - (time.monotonic() - t_start))
            if stop.signum is not None:
                rec["status"] = f"not run: the campaign got signal {stop.signum}"
            elif st["target"] is None:
                rec["status"] = f"not run: {st['note']}"
            elif st["samples_before"] >= st["target"]:
                rec["status"] = "complete: skipped"
            elif step.slice_s <= 0:
                rec["status"] = "not run: its slice is 0 s"
            elif seconds < MIN_STEP_S:
                rec["status"] = f"not run: {seconds:.0f} s of the budget left"
            else:
                t_step = time.monotonic()
                ready = True
                if step.framework == "jax":
                    check = _check_output([step.python, "-c", JAX_CHECK], min(90, seconds / 2),
                                          env=dict(run_env, **step.env))
                    log(f"   {step.python}: {check.splitlines()[-1] if check else ''}")
                    if not any(line.startswith("jax ") for line in check.splitlines()):
                        ready = False
                        rec["status"] = f"not run: no JAX under {step.python} ({check.splitlines()[-1][:200]})"
                if ready:
                    seconds -= time.monotonic() - t_step
                    cmd = step.argv(py, data)
                    step.out(data).parent.mkdir(parents=True, exist_ok=True)
                    log(f"   at most {seconds:.0f} s: {shlex.join(cmd)}")
                    rc, ran, how = runner(cmd, seconds, kill_after, log, env=dict(run_env, **step.env), stop=stop)
                    rec.update(rc=rc, seconds=round(ran, 1))
                    rec["status"] = (f"{how}, exit {rc}" if rc is not None else how)
            rows, done = progress(step.out(data))
            rec.update(rows=rows, samples=done, added=done - st["samples_before"],
                       left=None if st["target"] is None else max(0, st["target"] - done))
            log(f"   {rec['status']}; now {rows} rows, {done} of {st['target']} samples (+{rec['added']})")
            packed = _pack(out, data, steps)
            if packed is not None:
                log(f"   packed {packed.name} ({packed.stat().st_size / 2**20:.1f} MiB)")
        summary(log, records, time.monotonic() - t_start, out)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        (out / "campaign-summary.json").write_text(json.dumps(
            {"finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "source_commit": env.get("PERFKIT_SOURCE_COMMIT"), "data": str(data), "steps": records}, indent=1))
        log.close()
    return 0


def summary(log: Log, records: list[dict], elapsed: float, out: Path) -> None:
    """What each dataset holds and what is left, and what to bring back."""
    log(f"== {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} done in {elapsed:.0f} s")
    log(f"   {'dataset':32} {'rows':>7} {'samples':>13} {'this run':>8} {'left':>6}  step")
    for r in records:
        left = "?" if r.get("left") is None else r["left"]
        rate = ""
        if r.get("added") and r.get("seconds"):
            per_min = r["added"] / r["seconds"] * 60
            rate = f"; {per_min:.1f}/min here" + (f", ~{left / per_min:.0f} min to go" if left else "")
        log(f"   {r['dataset']:32} {r.get('rows', 0):>7} {r.get('samples', 0):>6}/{str(r['target']):>6} "
            f"{'+' + str(r.get('added', 0)):>8} {str(left):>6}  {r['step']}: {r['status']}{rate}")
    if (out / TARBALL).exists():
        log(f"   bring back {out / TARBALL}; unpack with: tar xzf {TARBALL} -C data/measured")


if __name__ == "__main__":
    sys.exit(main())
