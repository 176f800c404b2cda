"""The line protocol between the collector and a framework adapter.

A framework is plugged into the harness as one *adapter*: a program started
once per worker (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and
``MASTER_PORT`` in the environment, as ``torchrun`` sets them), possibly under
another Python interpreter or virtualenv. Rank 0 talks to the collector with
one JSON object per line; the other ranks receive each request from rank 0
through the framework's own collectives.

Collector → rank 0 (stdin, or ``--requests FILE``)::

    {"op": "hello"}
    {"op": "run", "id": "<sample id>", "task": "phases" | "steps" | "epoch", "config": {...}}
    {"op": "exit"}

Rank 0 → collector (stdout, or ``--results FILE``)::

    {"op": "hello", "framework": "pytorch", "world_size": 2, "versions": {...}, ...}
    {"id": "<sample id>", "ok": true, "ranks": [<rank 0 result>, <rank 1 result>, ...]}
    {"id": "<sample id>", "ok": false, "error": "<type>: <message> (rank r)"}

Adapters report raw per-rank timings; every aggregation (medians, maxima over
ranks, epoch extrapolation) happens in the collector, the same for every
framework. An adapter implements :class:`Adapter` and calls :func:`serve`.
This module uses only the standard library, so an adapter running in a
virtualenv with an old NumPy can import it (the collector puts perfkit's
parent folder on ``PYTHONPATH``).
"""
from __future__ import annotations

import json
import os
import sys
import traceback

__all__ = ["Adapter", "serve", "PROTOCOL_VERSION", "SETUP_ERROR", "setup_failed"]

PROTOCOL_VERSION = 1
#: prefix of the one stderr line an adapter writes when it cannot start (the collector shows that line only)
SETUP_ERROR = "perfkit-adapter-error: "


def setup_failed(exc: BaseException) -> None:
    """Report why this worker cannot start (one line on stderr) and exit with status 3, without a traceback."""
    print(SETUP_ERROR + " ".join(str(exc).split()), file=sys.stderr, flush=True)
    os._exit(3)


class Adapter:
    """What a framework adapter provides. Subclass and override every method."""

    framework = "none"
    rank = 0
    world_size = 1

    def hello(self) -> dict:
        """Versions, device, threads and anything else the provenance should record."""
        raise NotImplementedError

    def broadcast(self, obj):
        """Send ``obj`` from rank 0 to every rank and return it on each."""
        raise NotImplementedError

    def gather(self, obj):
        """Collect one object per rank on rank 0 (a list); other ranks get ``None``."""
        raise NotImplementedError

    def run(self, task: str, config: dict) -> dict:
        """Run one measurement task on this rank and return its raw timings (JSON-serialisable)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the process group."""


def _protocol_stdout():
    """A private handle on the real stdout; ``sys.stdout`` is pointed at stderr so stray prints cannot corrupt it."""
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", buffering=1)


def serve(adapter: Adapter, requests=None, results=None) -> None:
    """Answer requests until ``exit`` or end of input. ``requests``/``results``: open files (rank 0 only)."""
    inp = out = None
    if adapter.rank == 0:
        inp = requests if requests is not None else sys.stdin
        out = results if results is not None else _protocol_stdout()
    while True:
        req = None
        if adapter.rank == 0:
            line = inp.readline()
            while line and not line.strip():
                line = inp.readline()
            try:
                req = json.loads(line) if line else {"op": "exit"}
            except json.JSONDecodeError as exc:
                req = {"op": "bad", "error": f"request is not JSON: {exc}"}
        req = adapter.broadcast(req)
        op = req.get("op")
        if op == "exit":
            break
        if op == "hello":
            info = adapter.gather(adapter.hello())
            if adapter.rank == 0:
                reply = dict(info[0], op="hello", protocol=PROTOCOL_VERSION, world_size=adapter.world_size,
                             ranks=info)
                out.write(json.dumps(reply) + "\n")
            continue
        if op != "run":
            if adapter.rank == 0:
                out.write(json.dumps({"id": req.get("id"), "ok": False,
                                      "error": req.get("error", f"unknown op {op!r}")}) + "\n")
            continue
        try:
            res, err = adapter.run(req.get("task"), req.get("config") or {}), None
        except Exception as exc:  # reported to the collector, which records it and goes on
            res, err = None, f"{type(exc).__name__}: {exc}"
            traceback.print_exc(file=sys.stderr)
        gathered = adapter.gather({"result": res, "error": err})
        if adapter.rank == 0:
            errors = [f"{g['error']} (rank {r})" for r, g in enumerate(gathered) if g["error"]]
            if errors:
                reply = {"id": req.get("id"), "ok": False, "error": errors[0]}
            else:
                reply = {"id": req.get("id"), "ok": True, "ranks": [g["result"] for g in gathered]}
            out.write(json.dumps(reply) + "\n")
            out.flush()
    adapter.close()
