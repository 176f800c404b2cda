"""``perfkit collect``: resumable measurement campaigns.

Six kinds, each a list of samples run through :class:`perfkit.harness.WorkerGroup`:

``ch3``
    Chapter 3 phase timing: every (model, workers, mode) runs ``iterations``
    timed iterations after ``warmup``; one row per worker and iteration.
``ch4``
    Chapter 4: ``samples`` LeNet-5 configurations from Table 4.1
    (:func:`perfkit.sampler.sample_configs`); each is warmed up, then timed in
    ``repeats`` runs of ``steps`` steps. A run's value is its mean step time
    (wall time / steps, slowest worker); the sample's ``step_time`` is the
    median of the runs (the thesis took the median of 3 runs).
    ``epoch_time = ceil(n_train / (batch_size × workers)) × step_time``. The
    raw per-step times of every worker go to ``<name>.steps.jsonl``.
``noise``
    The noise floor: ``samples`` configurations, each measured once per round
    for ``rounds`` rounds, in a fresh random order every round, so the repeats
    of one configuration happen at different moments.
``ch5``
    Chapter 5: Table 5.1 configurations of 3D-ResAttNet-18 on synthetic volumes
    (``volume``, default 48×56×48 on CPU), timed as ``ch4``; the epoch is the 431
    ADNI-1 training scans.
``ch5vol``
    How the extrinsic scaling depends on the volume size: a full grid of
    ``volumes`` × ``filters`` × workers × batch sizes at one fixed Table 5.1
    configuration (:data:`CH5VOL_BASE`), timed as ``ch4``, in a seeded random
    order so that drift does not line up with any factor.
``epoch``
    The extrapolation check: configurations timed as in ``ch4`` *and* over a
    whole epoch, until ``samples`` checks are done. A configuration whose
    predicted epoch exceeds ``max_epoch_seconds`` is recorded as skipped.

Every sample is appended and fsynced when it completes; a killed run resumes
with the next missing sample. A failing configuration is recorded with its
error and the run goes on. ``<name>.provenance.json`` beside the CSV records
machine, versions, command, seed and every session that added to it.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from ..schema import steps_log_path
from .._checks import check_int, check_number
from .._io import append_bytes
from .plans import DESCRIPTIONS, make_plan, default_out
from ..schema import provenance_path
from .provenance import command_line, machine_info, numeric_environment, utc_now, write_json_atomic
from .samplelog import SampleLog, parse_records
from .workers import WorkerError, WorkerGroup

__all__ = ["collect", "check_run_options", "FAIL_FAST", "read_provenance"]

#: a run whose first this-many samples all fail stops with the first error (a wrong setting, not a bad sample)
FAIL_FAST = 5


def _identity(plan, framework, device, threads, data_root):
    settings = {k: v for k, v in plan.settings.items() if k not in ("samples",)}
    return json.loads(json.dumps({"kind": plan.kind, "framework": framework, "device": device, "threads": threads,
                                  "data_root": str(data_root) if data_root else None, "settings": settings}))


def _first_difference(have: dict, want: dict, prefix: str = ""):
    """``(dotted key, value there, value here)`` of the first setting that differs, or ``(None, None, None)``."""
    for key in list(want) + [k for k in have if k not in want]:
        a, b = have.get(key), want.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            return _first_difference(a, b, f"{prefix}{key}.")
        return f"{prefix}{key}", a, b
    return None, None, None


def _append_raw(path: Path, sid, reply: dict) -> None:
    """Per-step times of every worker and run, one JSON line per sample (written before its CSV row;
    a sample redone after a kill may appear twice: the last line is the one in the CSV)."""
    line = json.dumps({"sample_id": str(sid), "repeats": [r["repeats"] for r in reply["ranks"]]},
                      separators=(",", ":")) + "\n"
    append_bytes(path, line.encode())


def _same(have: str, want) -> bool:
    if have == ("" if want is None else str(want)):
        return True
    try:
        return float(have) == float(want)
    except (TypeError, ValueError):
        return False


def _check_rows(plan, log: SampleLog, fixed: dict) -> None:
    """The samples already in the CSV must be the ones this plan would measure, under the same framework,
    device and threads: a resume with another seed, space or setting is refused even without a provenance file."""
    by_id = {it[0]: it for it in plan.items}
    for sid, row in log.rows.items():
        item = by_id.get(sid)
        if item is None:
            raise ValueError(f"{log.path}: sample {sid!r} is not in this collection's plan; the file was collected "
                             "with other settings (seed, samples, workers, ...). Re-run with the same settings to "
                             "resume, or choose another --out")
        _, g, cfg = item
        want = dict({k: v for k, v in cfg.items() if k in row}, workers=g, **fixed)
        for key, value in want.items():
            if key in row and not _same(row[key], value):
                raise ValueError(f"{log.path}: sample {sid!r} was measured with {key}={row[key]!r}, this run would "
                                 f"measure it with {key}={value!r}; the file was collected with other settings. "
                                 "Re-run with the same settings to resume, or choose another --out")


def check_run_options(framework: str, threads, device: str, timeout, python=None, data_root=None) -> None:
    """One clear error for a bad collector option, before any file is touched or worker started."""
    from .workers import adapter_command

    adapter_command(framework, python)  # unknown framework
    check_int("--threads", threads)
    if device not in ("cpu", "cuda"):
        raise ValueError(f"--device: expected 'cpu' or 'cuda', got {device!r}")
    check_number("--timeout", timeout, positive=True)
    if python is not None and not (os.path.isfile(python) and os.access(python, os.X_OK)):
        import shutil

        if shutil.which(python) is None:
            raise ValueError(f"--python {python!r}: no such interpreter")
    if data_root is not None and not Path(data_root).is_dir():
        raise ValueError(f"--data-root {str(data_root)!r}: no such folder")


def collect(kind: str, out=None, framework: str = "pytorch", threads: int = 1, device: str = "cpu", python=None,
            data_root=None, timeout: float = 600.0, progress: bool = True, argv=None, **options) -> Path:
    """Run (or resume) one collection; returns the CSV path. See the module docstring."""
    check_run_options(framework, threads, device, timeout, python, data_root)
    plan = make_plan(kind, framework, **options)
    out = Path(out) if out else default_out(kind, framework, device)
    with SampleLog(out, plan.columns) as log:
        for msg in log.repairs:
            print(f"perfkit: repaired {msg}", file=sys.stderr)
        _check_rows(plan, log, {"framework": framework, "device": device, "threads": int(threads)})
        _run(plan, log, out, kind, framework, threads, device, python, data_root, timeout, progress, argv)
        records = parse_records(out.read_bytes())
        bad = [r for r in records if r.problem]
        if bad:  # cannot happen with the lock and the repair; never report success on a damaged file
            raise ValueError(f"{out}: the file no longer parses as CSV after this run ({bad[0].problem}); "
                             "the next `perfkit collect` on it repairs it")
    return out


def _start_session(plan, log, out, kind, framework, threads, device, python, data_root, argv):
    """``(provenance, this session's record)``: the provenance beside ``out`` (checked against this run's
    settings when resuming, else started) with a new session appended."""
    ident = _identity(plan, framework, device, int(threads), data_root)
    prov = read_provenance(provenance_path(out)) if log.done else None
    if prov is not None:
        key, have, want = _first_difference(prov.get("identity", {}), ident)
        if key is not None:
            raise ValueError(f"{key}: {out} was collected with {have!r}; this run asks for {want!r}. "
                             "Re-run with the same settings to resume, or choose another --out")
    else:
        prov = {"dataset": out.name, "kind": kind, "description": DESCRIPTIONS[kind], "identity": ident,
                "columns": plan.columns, "machine": {**machine_info(), "numeric": numeric_environment()},
                "adapters": {}, "sampler": plan.sampler.to_dict() if plan.sampler else None, "sessions": []}
        if log.done:
            prov["note"] = (f"provenance started on resuming: {len(log.done)} samples were already in the file "
                            "without one (their rows match this plan)")
    session = {"started_utc": utc_now(), "command": command_line(argv), "cwd": os.getcwd(),
               "worker_python": python or sys.executable,
               "git_commit": machine_info(libraries=())["git_commit"], "samples_before": len(log.done),
               "requested": len(plan.items) if plan.target is None else plan.target}
    if log.repairs:
        session["repairs"] = list(log.repairs)
    prov["sessions"].append(session)
    return prov, session


def _progress_bar(plan, log: SampleLog, kind, n_todo: int, progress: bool):
    """A tqdm bar over the samples (for ``epoch``: over the successful checks), started at those already done."""
    from tqdm.auto import tqdm

    if plan.target is None:
        total, initial = len(plan.items), len(plan.items) - n_todo
    else:  # epoch checks (one row each): progress counts the successful ones
        n_ok = sum(row.get("status") == "ok" for row in log.rows.values())
        total, initial = plan.target, min(plan.target, n_ok)
    return tqdm(total=total, initial=initial, desc=f"collect {kind}", unit="sample", disable=not progress,
                dynamic_ncols=True, smoothing=0.05)


def _measure(plan, item, groups: dict, prov: dict, framework, threads, device, python, data_root, timeout):
    """``(CSV rows, worker reply)`` of one sample; starts its worker group on first use and drops a group that fails."""
    sid, g, cfg = item
    if g not in groups:
        grp = WorkerGroup(framework, g, threads, device, python, data_root, timeout)
        try:
            hello = grp.start()
        except WorkerError as exc:
            raise ValueError(f"{g} {framework} worker(s) did not start "
                             f"({' '.join(grp.cmd)}): {exc}") from None
        groups[g] = grp
        prov["adapters"][str(g)] = {k: v for k, v in hello.items() if k not in ("op", "ranks")}
    base = {"framework": framework, "device": device, "threads": int(threads), "mode": cfg.get("mode"),
            "loadavg": round(os.getloadavg()[0], 2), "started_utc": utc_now()}
    t0 = time.monotonic()
    try:
        reply = groups[g].request({"op": "run", "id": sid, "task": plan.task, "config": cfg})
    except WorkerError as exc:
        reply = {"ok": False, "error": f"WorkerError: {exc}"}
        groups.pop(g, None)
    base["duration_s"] = round(time.monotonic() - t0, 3)
    return plan.to_rows(item, reply, base), reply


def _run(plan, log, out, kind, framework, threads, device, python, data_root, timeout, progress, argv) -> None:
    """Measure every sample of ``plan`` not yet in ``log``; the provenance session is closed however the run ends."""
    ppath = provenance_path(out)
    prov, session = _start_session(plan, log, out, kind, framework, threads, device, python, data_root, argv)
    write_json_atomic(ppath, prov)
    raw_path = steps_log_path(out)
    todo = [it for it in plan.items if it[0] not in log.done]
    groups: dict[int, WorkerGroup] = {}
    failures, first_error = 0, None
    bar = _progress_bar(plan, log, kind, len(todo), progress)
    try:
        for n, item in enumerate(todo):
            if plan.target is not None and plan.enough(out):
                break
            rows, reply = _measure(plan, item, groups, prov, framework, threads, device, python, data_root, timeout)
            failed = rows[0]["status"] == "error"
            failures += failed
            first_error = first_error or (rows[0]["error"] if failed else None)
            if plan.task != "phases" and reply.get("ok"):
                _append_raw(raw_path, item[0], reply)
            log.append(item[0], rows)
            if plan.target is None or rows[0]["status"] == "ok":
                bar.update(1)
            bar.set_postfix(failed=failures, refresh=False)
            if failures == n + 1 == FAIL_FAST:
                raise ValueError(f"the first {FAIL_FAST} samples of this run all failed (the first with: "
                                 f"{' '.join(str(first_error).split())[:400]}); check the settings (--timeout, "
                                 f"--device, --python). The error rows are saved in {out}")
            if n % 25 == 24:
                session.update(samples_after=len(log.done), updated_utc=utc_now())
                write_json_atomic(ppath, prov)
    except KeyboardInterrupt:
        session["interrupted"] = True
        raise
    finally:
        bar.close()
        for grp in groups.values():
            grp.stop()
        session.update(finished_utc=utc_now(), samples_after=len(log.done), failures_this_session=failures)
        write_json_atomic(ppath, prov)


def read_provenance(path: Path):
    """The provenance JSON beside a CSV, or None if there is none; a damaged one is one clear error."""
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not readable JSON ({exc}); restore it from git or move it away") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("sessions"), list):
        raise ValueError(f"{path}: not a perfkit provenance file (no 'sessions' list)")
    return doc
