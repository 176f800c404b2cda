"""Collection on a cluster: the same plan and sample log as ``perfkit collect``, the workers started by torchrun.

``perfkit collect`` starts its worker processes on the machine it runs on. On a
cluster the job scheduler (Slurm, or ``torchrun`` on every node) starts them, so
the collection is split in three steps around the adapter's line protocol
(:mod:`perfkit.measure.protocol`):

1. :func:`write_requests` writes the plan's samples for one worker count as a
   requests file (``{"op": "run", ...}`` lines), leaving out those already answered
   in a results file;
2. every node runs the adapter under torchrun with ``--requests``/``--results``;
   rank 0, wherever the rendezvous puts it, appends one JSON line per finished
   sample to the results file (line-buffered), so a job killed mid-way keeps what
   it measured;
3. :func:`import_results` turns the replies into the rows ``perfkit collect`` would
   write, appended to the same crash-safe sample log (:class:`~perfkit.measure.samplelog.SampleLog`)
   with a provenance JSON beside it; samples already in the log are skipped.

Resuming is step 1 again with the same results file, then steps 2 and 3.
"""
from __future__ import annotations

import json
from pathlib import Path

from .collect import read_provenance
from .plans import DESCRIPTIONS, make_plan
from .provenance import command_line, machine_info, provenance_path, utc_now, write_json_atomic
from .samplelog import SampleLog

__all__ = ["write_requests", "read_results", "import_results"]


def _plan(kind, framework, world_size, options):
    plan = make_plan(kind, framework, workers=[int(world_size)], **options)
    if plan.task == "phases":
        raise ValueError(f"kind: {kind!r} is timed per iteration on one node; use `perfkit collect {kind}`")
    return plan


def read_results(results) -> tuple[dict, dict]:
    """``(hello, replies by sample id)`` from a results file; a torn last line (a killed job) is ignored."""
    path = Path(results)
    hello, replies = {}, {}
    if not path.exists():
        return hello, replies
    lines = path.read_text().splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines):  # the job died while writing it
                continue
            raise ValueError(f"{path}: line {n} is not JSON ({line[:60]!r}); expected one reply per line") from None
        if msg.get("op") == "hello":
            hello = msg
        elif "id" in msg:
            replies[str(msg["id"])] = msg
    return hello, replies


def write_requests(kind: str, path, world_size: int, framework: str = "pytorch", results=None, **options) -> int:
    """Write the requests of ``kind``'s samples on ``world_size`` workers to ``path``; returns how many.

    ``options`` are ``perfkit collect``'s (:func:`~perfkit.measure.plans.make_plan`: ``samples``,
    ``seed``, ``batch_sizes``, …); the sampler is the same, so sample *i* is the same configuration
    as in ``perfkit collect``. Samples answered without error in ``results`` are left out.
    """
    plan = _plan(kind, framework, world_size, options)
    _, replies = read_results(results) if results else ({}, {})
    done = {sid for sid, r in replies.items() if r.get("ok")}
    todo = [it for it in plan.items if it[0] not in done]
    lines = [{"op": "hello"}] + [{"op": "run", "id": sid, "task": plan.task, "config": cfg} for sid, _, cfg in todo]
    Path(path).write_text("\n".join(json.dumps(m) for m in lines + [{"op": "exit"}]) + "\n")
    return len(todo)


def import_results(kind: str, results, out, world_size: int, framework: str = "pytorch", device: str = "cpu",
                   threads: int = 1, **options) -> int:
    """Append the replies in ``results`` to the sample log ``out`` as ``perfkit collect`` rows; returns how many
    samples were added (those already in ``out`` are skipped). A provenance JSON is written beside ``out``."""
    plan = _plan(kind, framework, world_size, options)
    items = {it[0]: it for it in plan.items}
    hello, replies = read_results(results)
    unknown = sorted(set(replies) - set(items))
    if unknown:
        raise ValueError(f"{results}: sample {unknown[0]!r} is not in this plan; give the options the requests "
                         "were written with")
    out = Path(out)
    added = 0
    with SampleLog(out, plan.columns) as log:
        for sid, reply in replies.items():
            if sid in log.done:
                continue
            _, _, cfg = items[sid]
            base = {"framework": framework, "device": device, "threads": int(threads), "mode": cfg.get("mode"),
                    "loadavg": "", "started_utc": "", "duration_s": ""}
            log.append(sid, plan.to_rows(items[sid], reply, base))
            added += 1
        n_done = len(log.done)
    ppath = provenance_path(out)
    prov = read_provenance(ppath) or {
        "dataset": out.name, "kind": kind, "description": DESCRIPTIONS[kind], "columns": plan.columns,
        "identity": {"kind": kind, "framework": framework, "device": device, "threads": int(threads),
                     "settings": plan.settings, "launcher": "torchrun (perfkit.measure.cluster)"},
        "machine": {"importing_host": machine_info(libraries=())},
        "adapters": {}, "sampler": plan.sampler.to_dict() if plan.sampler else None, "sessions": []}
    if hello:
        prov["adapters"][str(world_size)] = {k: v for k, v in hello.items() if k not in ("op", "ranks")}
    prov["sessions"].append({"imported_utc": utc_now(), "command": command_line(None), "results": str(results),
                             "samples_added": added, "samples_after": n_done})
    write_json_atomic(ppath, prov)
    return added
