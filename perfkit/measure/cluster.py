"""Collection on a cluster: the same plan and sample log as ``perfkit collect``, the workers started by torchrun.

``perfkit collect`` starts its worker processes on the machine it runs on. On a
cluster the job scheduler (Slurm, or ``torchrun`` on every node) starts them, so
the collection is split in three steps around the adapter's line protocol
(:mod:`perfkit.measure.protocol`):

1. :func:`write_requests` writes the plan's samples for one worker count as a
   requests file (``{"op": "run", ...}`` lines), leaving out those already answered
   in a results file; it never writes over a results file or anything but an
   earlier requests file;
2. every node runs the adapter under torchrun with ``--requests``/``--results``;
   rank 0, wherever the rendezvous puts it, appends one JSON line per finished
   sample to the results file (line-buffered), so a job killed mid-way keeps what
   it measured;
3. :func:`import_results` turns the replies into the rows ``perfkit collect`` would
   write, appended to the same crash-safe sample log (:class:`~perfkit.measure.samplelog.SampleLog`)
   with a provenance JSON beside it.

Resuming is step 1 again with the same results file, then steps 2 and 3; a
failed sample is requested again, and its re-measurement replaces the error row.

What a results file may hold, and what the import guarantees:

- every line is a JSON object: a hello (``"op": "hello"``) or a reply (``"id"``,
  ``"ok"``, and ``"ranks"`` or ``"error"``); anything else is one error naming the
  file and line. A torn last line (the job was killed while writing it) is
  ignored, and so is a torn line that a resumed job continued on the same line;
- every hello and every successful reply must come from a job of the requested
  world size (one error naming the line otherwise), and a successful reply must
  hold, for every rank, the timed runs the plan asked for;
- a successful reply whose measurements are not measurements (a step time that is
  negative, zero, NaN or infinite; a count below 1) is refused: it is imported as an
  error row naming the file, line and value, reported by a warning, and requested
  again by :func:`write_requests`;
- per sample the first usable successful reply wins; a later failed or refused
  reply never replaces it, and a failed sample keeps its latest error;
- the sample log holds every sample exactly once: a sample already there is
  skipped, except an error row for which a successful reply now exists, which is
  replaced (the error row is kept in ``<log>.dropped``).
"""
from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path

from .._checks import check_int
from .._io import append_bytes, atomic_write, check_output
from .collect import read_provenance
from .plans import DESCRIPTIONS, make_plan
from ..schema import provenance_path
from .provenance import command_line, machine_info, utc_now, write_json_atomic
from .samplelog import SampleLog, dropped_path, parse_records

__all__ = ["write_requests", "read_results", "import_results"]

#: the keys a line of a requests file may have (anything else is not a requests file)
_REQUEST_KEYS = {"op", "id", "task", "config"}


def _plan(kind, framework, world_size, options):
    check_int("world_size", world_size)
    plan = make_plan(kind, framework, workers=[int(world_size)], **options)
    if plan.task == "phases":
        raise ValueError(f"kind: {kind!r} is timed per iteration on one node; use `perfkit collect {kind}`")
    return plan


def _kind_of(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_input(path, what: str) -> Path:
    p = Path(path)
    if p.exists() and not p.is_file():
        kind = "a folder" if p.is_dir() else "not a regular file (a device, FIFO or socket)"
        raise ValueError(f"{what} {str(p)!r} is {kind}; give the results file the job wrote")
    return p


def _check_hello(msg: dict, where: str, world_size) -> None:
    """One error if a hello is malformed or comes from a job of another world size than ``world_size``."""
    ws, ranks = msg.get("world_size"), msg.get("ranks")
    if ws is not None and not (_is_count(ws) and ws >= 1):
        raise ValueError(f"{where}: the hello's world_size {ws!r} is not a positive integer")
    if ranks is not None and not isinstance(ranks, list):
        raise ValueError(f"{where}: the hello's 'ranks' is {_kind_of(ranks)}, expected a list (one entry per rank)")
    if ws is not None and ranks is not None and len(ranks) != ws:
        raise ValueError(f"{where}: the hello says world_size {ws} but lists {len(ranks)} ranks")
    n = ws if ws is not None else (len(ranks) if ranks is not None else None)
    if world_size is not None and n is not None and n != world_size:
        raise ValueError(f"{where}: the job ran on {n} ranks, but world_size={world_size} was given; these results "
                         f"belong to world_size={n} (requests and results are per worker count)")


def _check_structure(msg: dict, where: str, world_size) -> str:
    """The reply's sample id; one error naming ``where`` for a reply that is not shaped as the protocol says."""
    sid = msg.get("id")
    if not (isinstance(sid, str) and sid) and not _is_count(sid):
        raise ValueError(f"{where}: a reply needs a sample 'id' (a string), got {sid!r}")
    ok = msg.get("ok")
    if not isinstance(ok, bool):
        hint = " (this is a request: give the results file, not the requests file)" if msg.get("op") == "run" else ""
        raise ValueError(f"{where}: a reply needs 'ok' true or false, got {ok!r}{hint}")
    if not ok:
        if not isinstance(msg.get("error", ""), str):
            raise ValueError(f"{where}: a failed reply's 'error' is {_kind_of(msg['error'])}, expected a string")
        return str(sid)
    ranks = msg.get("ranks")
    if not isinstance(ranks, list) or not ranks or not all(isinstance(r, dict) for r in ranks):
        got = "missing" if ranks is None else f"{_kind_of(ranks)}" if not isinstance(ranks, list) else repr(ranks)[:60]
        raise ValueError(f"{where}: a successful reply needs 'ranks', a list of one object per rank (got {got})")
    if world_size is not None and len(ranks) != world_size:
        raise ValueError(f"{where}: sample {str(sid)!r} was measured on {len(ranks)} ranks, but world_size="
                         f"{world_size} was given; these results belong to world_size={len(ranks)}")
    for r, res in enumerate(ranks):
        runs = res.get("repeats")
        if not (isinstance(runs, list) and runs and all(isinstance(run, list) and run for run in runs)):
            raise ValueError(f"{where}: rank {r}'s 'repeats' is not a list of timed runs (lists of step times)")
        if len(runs) != len(ranks[0]["repeats"]):
            raise ValueError(f"{where}: rank {r} has {len(runs)} timed runs, rank 0 has {len(ranks[0]['repeats'])}")
        bad = [t for run in runs for t in run if not _is_number(t)]
        if bad:
            raise ValueError(f"{where}: rank {r}: step time {bad[0]!r} is {_kind_of(bad[0])}, expected a number")
        for key in ("epoch_time", "epoch_steps"):
            if res.get(key) is not None and not _is_number(res[key]):
                raise ValueError(f"{where}: rank {r}: {key} {res[key]!r} is {_kind_of(res[key])}, expected a number")
    for key in ("n_train", "n_params", "steps"):
        if not _is_count(ranks[0].get(key)):
            raise ValueError(f"{where}: rank 0: {key} is {ranks[0].get(key)!r}, expected an integer")
    return str(sid)


def _problem(msg: dict) -> str:
    """Why a well-shaped successful reply's values are not measurements ('' when they are)."""
    ranks = msg["ranks"]
    for r, res in enumerate(ranks):
        for i, run in enumerate(res["repeats"]):
            for j, t in enumerate(run):
                if not (math.isfinite(t) and t > 0):
                    return f"rank {r}, run {i + 1}, step {j + 1}: step time {t!r} is not a positive finite number"
        et = res.get("epoch_time")
        if et is not None and not (math.isfinite(et) and et > 0):
            return f"rank {r}: epoch_time {et!r} is not a positive finite number"
    for key in ("n_train", "n_params", "steps"):
        if ranks[0][key] < 1:
            return f"rank 0: {key} {ranks[0][key]!r} is below 1"
    steps = ranks[0].get("epoch_steps")
    if any(res.get("epoch_time") is not None for res in ranks) and not (_is_count(steps) and steps >= 1):
        return f"rank 0: epoch_steps {steps!r} is not a positive integer for a measured epoch"
    return ""


def _parse_line(raw: bytes, where: str):
    """The JSON object of one line; a line a killed job tore and a resumed job continued yields its hello."""
    try:
        return json.loads(raw)
    except ValueError:
        pass
    text = raw.decode("utf-8", errors="replace")
    start = text.find("{", 1)
    while start > 0:
        try:
            msg = json.loads(text[start:])
        except ValueError:
            msg = None
        if isinstance(msg, dict) and msg.get("op") == "hello":
            return msg
        start = text.find("{", start + 1)
    raise ValueError(f"{where} is not JSON ({text[:60]!r}); expected one reply per line")


def _read(results, world_size=None):
    """``(hello, replies by sample id, line of each reply, why each refused reply still in use was refused)``."""
    path = _check_input(results, "results")
    hello, replies, where, refused = {}, {}, {}, {}
    if not path.exists():
        return hello, replies, where, []
    lines = path.read_bytes().split(b"\n")
    for n, raw in enumerate(lines, 1):
        if not raw.strip() or (n == len(lines) and _torn(raw)):
            continue
        at = f"{path}: line {n}"
        msg = _parse_line(raw, at)
        if not isinstance(msg, dict):
            raise ValueError(f"{at}: expected a JSON object (a reply or a hello), got {_kind_of(msg)}")
        if msg.get("op") == "hello":
            _check_hello(msg, at, world_size)
            hello = msg
            continue
        sid = _check_structure(msg, at, world_size)
        why = _problem(msg) if msg["ok"] else ""
        if why:
            msg = {"id": sid, "ok": False, "error": f"reply refused on import ({at}): {why}"}
        if not replies.get(sid, {}).get("ok"):  # the first good reply stays
            replies[sid], where[sid] = msg, at
            refused[sid] = f"{at}: sample {sid!r}: {why}" if why else None
    return hello, replies, where, [text for text in refused.values() if text]


def _torn(raw: bytes) -> bool:
    """Whether the text after the last newline is a torn line (it never is a complete JSON value)."""
    try:
        json.loads(raw)
    except ValueError:
        return True
    return False


def read_results(results, world_size: int | None = None) -> tuple[dict, dict]:
    """``(hello, replies by sample id)`` from a results file, checked as the module docstring says.

    With ``world_size`` every hello and successful reply must come from a job of that size. A reply whose
    measurements are refused is returned as a failed one whose error says why; the first usable successful
    reply of a sample is the one returned.
    """
    hello, replies, _, _ = _read(results, world_size)
    return hello, replies


def _not_requests(path: Path) -> str:
    """Why the existing file at ``path`` is not a requests file written by :func:`write_requests` ('' if it is)."""
    with open(path, "rb") as fh:
        for n in range(1, 65):
            raw = fh.readline(1 << 20)
            if not raw:
                return ""
            if not raw.strip():
                continue
            try:
                msg = json.loads(raw)
            except ValueError:
                return f"line {n} is not JSON"
            if not isinstance(msg, dict) or msg.get("op") not in ("hello", "run", "exit") \
                    or not set(msg) <= _REQUEST_KEYS or (msg["op"] == "hello" and set(msg) != {"op"}):
                return f"line {n} is not a request ({raw[:60].decode(errors='replace').strip()!r})"
    return ""


def _check_requests_path(path, results) -> Path:
    """Refuse a requests path that is the results file, a link, not a regular file, or another kind of file."""
    p = Path(path)
    if p.is_symlink():
        raise ValueError(f"path {str(p)!r} is a symbolic link; perfkit does not write through links")
    check_output(p, "path", inputs=(results,))
    if p.exists():
        if not p.is_file():
            raise ValueError(f"path {str(p)!r} is not a regular file (a device, FIFO or socket); give a file name")
        why = _not_requests(p)
        if why:
            raise ValueError(f"path {str(p)!r} exists and is not a requests file ({why}); writing the requests "
                             "there would destroy it — choose another file")
    return p


def write_requests(kind: str, path, world_size: int, framework: str = "pytorch", results=None, **options) -> int:
    """Write the requests of ``kind``'s samples on ``world_size`` workers to ``path``; returns how many.

    ``options`` are ``perfkit collect``'s (:func:`~perfkit.measure.plans.make_plan`: ``samples``,
    ``seed``, ``batch_sizes``, …); the sampler is the same, so sample *i* is the same configuration
    as in ``perfkit collect``. Samples with a usable successful reply in ``results`` are left out.
    ``path`` is replaced atomically, and only if it is new, empty or an earlier requests file.
    """
    plan = _plan(kind, framework, world_size, options)
    _, replies = read_results(results, int(world_size)) if results else ({}, {})
    target = _check_requests_path(path, results)
    done = {sid for sid, r in replies.items() if r.get("ok")}
    todo = [it for it in plan.items if it[0] not in done]
    lines = [{"op": "hello"}] + [{"op": "run", "id": sid, "task": plan.task, "config": cfg} for sid, _, cfg in todo]
    atomic_write(target, "\n".join(json.dumps(m) for m in lines + [{"op": "exit"}]) + "\n")
    return len(todo)


def _replace_errors(log: SampleLog, sids: set, results) -> None:
    """Remove the error rows of ``sids`` from ``log`` (kept in ``<log>.dropped``) so that they can be re-appended.

    The rows are set aside before the log is rewritten (atomically), so a crash at any moment loses nothing:
    the re-measured replies stay in the results file and the next import appends them.
    """
    raw = log.path.read_bytes()
    records = parse_records(raw)
    i_sid = log.columns.index("sample_id")
    gone = [r for r in records[1:] if len(r.fields) > i_sid and r.fields[i_sid] in sids]
    head = (f"# {utc_now()} import of {results}: {len(gone)} error record(s) of {len(sids)} sample(s) "
            "replaced by a re-measurement\n").encode()
    append_bytes(dropped_path(log.path), head + b"".join(raw[r.start:r.end] for r in gone))
    drop = {r.start for r in gone}
    atomic_write(log.path, b"".join(raw[r.start:r.end] for r in records if r.start not in drop))
    for sid in sids:
        log.done.discard(sid)
        log.rows.pop(sid, None)


def _check_against_plan(replies: dict, where: dict, items: dict, results) -> None:
    unknown = sorted(set(replies) - set(items))
    if unknown:
        raise ValueError(f"{where[unknown[0]]}: sample {unknown[0]!r} is not in this plan ({results}); give the "
                         "options the requests were written with")
    for sid, reply in replies.items():
        want = items[sid][2].get("repeats")
        got = len(reply["ranks"][0]["repeats"]) if reply["ok"] else want
        if want is not None and got != want:
            raise ValueError(f"{where[sid]}: sample {sid!r} has {got} timed runs, the plan asks for {want}; give "
                             "the options the requests were written with (repeats)")


def import_results(kind: str, results, out, world_size: int, framework: str = "pytorch", device: str = "cpu",
                   threads: int = 1, **options) -> int:
    """Append the replies in ``results`` to the sample log ``out`` as ``perfkit collect`` rows; returns how many
    samples were written (new ones, and error rows replaced by a successful re-measurement; samples already in
    ``out`` otherwise are skipped). A provenance JSON is written beside ``out``; refused replies are reported
    by a warning and recorded in it."""
    plan = _plan(kind, framework, world_size, options)
    items = {it[0]: it for it in plan.items}
    if not Path(results).exists():
        raise FileNotFoundError(f"results {str(results)!r}: no such file")
    out = Path(out)
    if out.exists() and Path(results).exists() and os.path.samefile(out, results):
        raise ValueError(f"out {str(out)!r} is the results file; give the sample log's CSV")
    hello, replies, where, refused = _read(results, int(world_size))
    _check_against_plan(replies, where, items, results)
    with SampleLog(out, plan.columns) as log:
        redo = {sid for sid, r in replies.items() if r["ok"] and log.rows.get(sid, {}).get("status") == "error"}
        if redo:
            _replace_errors(log, redo, results)
        added = 0
        for sid, reply in replies.items():
            if sid in log.done:
                continue
            _, _, cfg = items[sid]
            base = {"framework": framework, "device": device, "threads": int(threads), "mode": cfg.get("mode"),
                    "loadavg": "", "started_utc": "", "duration_s": ""}
            log.append(sid, plan.to_rows(items[sid], reply, base))
            added += 1
        n_done = len(log.done)
    if refused:
        warnings.warn(f"{len(refused)} reply(ies) refused and imported as error rows (they will be requested "
                      f"again): {refused[0]}" + (" …" if len(refused) > 1 else ""), stacklevel=2)
    _record_session(kind, framework, device, threads, plan, world_size, out, results, hello,
                    dict(samples_added=added, samples_replaced=len(redo), samples_after=n_done,
                         replies_refused=refused))
    return added


def _record_session(kind, framework, device, threads, plan, world_size, out, results, hello, counts) -> None:
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
                             **counts})
    write_json_atomic(ppath, prov)
