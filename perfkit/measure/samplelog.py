"""The crash-safe sample log every collection writes.

:class:`SampleLog` is an append-only CSV: one ``write`` of whole lines per
sample, then ``fsync``. Only one collector may write a log at a time: opening
one takes an exclusive lock (``<name>.lock`` beside it, holding the owner's
PID), and a second collector on the same file stops at once naming the holder.

When a run was killed part-way, reopening the log repairs it on **parsed CSV
records**, never on raw lines (an error row's message spans lines): every
complete sample is kept byte for byte; a torn last record, an incomplete
trailing sample, a record that does not parse and a second copy of a sample
already complete are removed. Nothing removed is lost: it is appended, with the
reason, to ``<name>.dropped`` beside the log, and :attr:`SampleLog.repairs`
says what was done.
"""
from __future__ import annotations

import csv
import errno
import io
import os
import signal
import socket
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .._io import append_bytes, atomic_write

__all__ = ["SampleLog", "LockedError", "parse_records", "dropped_path", "lock_path"]


class LockedError(ValueError):
    """Another collector holds the lock of this sample log."""


def lock_path(path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".lock")


def dropped_path(path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".dropped")


@dataclass
class Record:
    """One CSV record: its fields, where its bytes are in the file, and whether it ends with a newline."""

    fields: list
    start: int
    end: int
    whole: bool  # parsed cleanly and ended by a newline (a record written by append always is)
    problem: str = ""


def _pieces(raw: bytes) -> list[bytes]:
    """``raw`` split after every ``\\n`` (only ``\\n``: a ``\\r`` inside a quoted message is data)."""
    out, start = [], 0
    while start < len(raw):
        i = raw.find(b"\n", start)
        stop = len(raw) if i < 0 else i + 1
        out.append(raw[start:stop])
        start = stop
    return out


def parse_records(raw: bytes) -> list[Record]:
    """Every CSV record of ``raw`` with its byte span; a record that does not parse is marked, not skipped.

    A quoted field may span lines (an error message with the workers' stderr);
    the record ends where the CSV grammar says, so the byte spans are exact.
    """
    pieces = _pieces(raw)
    offsets = [0]
    for p in pieces:
        offsets.append(offsets[-1] + len(p))
    used = 0

    def feed():
        nonlocal used
        while used < len(pieces):
            used += 1
            yield pieces[used - 1].decode("utf-8", errors="surrogateescape")

    reader = csv.reader(feed(), strict=True)
    records, first = [], 0
    while first < len(pieces):
        try:
            fields = next(reader)
            problem = ""
        except StopIteration:
            break
        except csv.Error as exc:
            fields, problem = [], f"does not parse as CSV ({exc})"
        end = offsets[used]
        whole = not problem and raw[end - 1:end] == b"\n"
        if not problem and not whole:
            problem = "torn: the file ends inside it"
        elif problem and used >= len(pieces) and "end of data" in problem:
            problem = "torn: the file ends inside a quoted field"
        records.append(Record(fields, offsets[first], end, whole, problem))
        first = used
    return records


class SampleLog:
    """An append-only CSV of samples that survives being killed at any moment.

    Every row has ``sample_id`` and ``sample_rows`` (how many rows that sample
    wrote). Opening a log locks it (see the module docstring), repairs it and
    lists the complete samples in :attr:`done`; :attr:`rows` holds the first row
    of each (a dict of strings), so a resuming collector can check that the file
    was collected with its settings. Use it as a context manager, or call
    :meth:`close` to release the lock.
    """

    def __init__(self, path, columns: list[str]):
        self.path = Path(path)
        self.columns = list(columns)
        for need in ("sample_id", "sample_rows"):
            if need not in self.columns:
                raise ValueError(f"columns: a sample log needs a {need!r} column")
        self.done: set[str] = set()
        self.rows: dict[str, dict] = {}
        self.repairs: list[str] = []
        self._lock_fd: int | None = None
        if self.path.is_dir():
            raise ValueError(f"--out {str(self.path)!r} is a folder; give a CSV file name")
        if self.path.is_symlink():
            raise ValueError(f"--out {str(self.path)!r} is a symbolic link; perfkit does not write through links")
        self._check_header_before_locking()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock()
        try:
            if self.path.exists() and self.path.stat().st_size:
                self._repair()
            else:
                atomic_write(self.path, ",".join(self.columns) + "\n")
        except BaseException:
            self.close()
            raise

    def _check_header_before_locking(self) -> None:
        """Refuse a file that is not this kind of sample log without touching it (no lock file beside it)."""
        if not (self.path.exists() and self.path.stat().st_size):
            return
        with open(self.path, "rb") as fh:
            first = fh.readline(1 << 16)
        if not first.endswith(b"\n"):
            return  # a torn header: the repair decides
        try:
            header = next(csv.reader([first.decode()]))
        except (UnicodeDecodeError, csv.Error, StopIteration):
            header = []
        if "sample_id" not in header or "sample_rows" not in header:
            raise ValueError(f"{self.path} is not a perfkit sample log (its first line is "
                             f"{first[:60].decode(errors='replace').strip()!r}); choose another --out")
        if header != self.columns:
            extra = [c for c in header if c not in self.columns]
            missing = [c for c in self.columns if c not in header]
            what = (f"it has {extra} and lacks {missing}" if extra or missing else "its columns are in another order")
            raise ValueError(f"{self.path}: its columns differ from this collection's ({what}); it was collected "
                             "with other settings (kind, --repeats). Use the same settings or another --out")

    # ------------------------------------------------------------------ lock
    def _lock(self) -> None:
        import fcntl

        lp = lock_path(self.path)
        try:
            fd = os.open(lp, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ValueError(f"{lp}: is a symbolic link; remove it") from None
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise LockedError(f"{self.path}: another collector is writing it ({holder}); wait for it to finish "
                              "or choose another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"PID {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        self._lock_fd = fd

    def close(self) -> None:
        """Release the lock (the lock file stays: removing it could let two collectors in)."""
        if self._lock_fd is not None:
            try:
                os.ftruncate(self._lock_fd, 0)
            except OSError:
                pass
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    # ---------------------------------------------------------------- repair
    def _repair(self) -> None:
        raw = self.path.read_bytes()
        records = parse_records(raw)
        want = ",".join(self.columns) + "\n"
        head = records[0] if records else None
        if head is None or not head.whole:
            if want.encode().startswith(raw):  # killed while the header was being written
                atomic_write(self.path, want)
                return
            raise ValueError(f"{self.path}: its first line is not a CSV header; is it a perfkit collection?")
        if head.fields != self.columns:
            raise ValueError(f"{self.path}: its columns {head.fields} differ from this collection's {self.columns}; "
                             "use another --out or the same settings")
        ncol = len(self.columns)
        i_sid, i_rows = self.columns.index("sample_id"), self.columns.index("sample_rows")
        keep: list[Record] = [head]
        drop: list[tuple[Record, str]] = []
        block: list[Record] = []
        declared = 0

        def flush_incomplete(why):
            nonlocal block
            for r in block:
                drop.append((r, why))
            block = []

        for rec in records[1:]:
            if rec.problem or len(rec.fields) != ncol:
                flush_incomplete("incomplete sample (a later record is damaged)")
                drop.append((rec, rec.problem or f"{len(rec.fields)} fields, expected {ncol}"))
                continue
            sid, n = rec.fields[i_sid], rec.fields[i_rows]
            if not (n.isdigit() and int(n) >= 1):
                flush_incomplete("incomplete sample (followed by a bad record)")
                drop.append((rec, f"sample_rows {n!r} is not a positive integer"))
                continue
            if block and (block[0].fields[i_sid] != sid or declared != int(n)):
                flush_incomplete(f"incomplete sample: {len(block)} of {declared} rows")
            if not block:
                declared = int(n)
            block.append(rec)
            if len(block) == declared:
                if sid in self.done:
                    for r in block:
                        drop.append((r, f"second copy of sample {sid!r}"))
                else:
                    keep.extend(block)
                    self.done.add(sid)
                    self.rows[sid] = dict(zip(self.columns, block[0].fields))
                block = []
        flush_incomplete(f"incomplete trailing sample: {len(block)} of {declared} rows")
        if drop:
            self._set_aside(raw, drop)
            atomic_write(self.path, b"".join(raw[r.start:r.end] for r in keep))

    def _set_aside(self, raw: bytes, drop) -> None:
        from .provenance import utc_now

        reasons: dict[str, int] = {}
        for _, why in drop:
            reasons[why] = reasons.get(why, 0) + 1
        summary = "; ".join(f"{n} × {why}" if n > 1 else why for why, n in reasons.items())
        buf = io.BytesIO()
        buf.write(f"# {utc_now()} repair of {self.path.name}: {len(drop)} record(s) removed: {summary}\n".encode())
        for rec, _ in drop:
            chunk = raw[rec.start:rec.end]
            buf.write(chunk if chunk.endswith(b"\n") else chunk + b"\n")
        append_bytes(dropped_path(self.path), buf.getvalue())
        self.repairs.append(f"{self.path}: removed {len(drop)} record(s) ({summary}); they are kept in "
                            f"{dropped_path(self.path)}")

    # ---------------------------------------------------------------- append
    def append(self, sample_id, rows: list[dict]) -> None:
        """Write all rows of one sample in one ``write`` and ``fsync``; then it counts as done."""
        if self._lock_fd is None:
            raise ValueError(f"{self.path}: the sample log is closed")
        sid = str(sample_id)
        if sid in self.done:
            raise ValueError(f"sample {sid!r} is already in {self.path}")
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.columns, extrasaction="raise", lineterminator="\n")
        for r in rows:
            w.writerow(dict(r, sample_id=sid, sample_rows=len(rows)))
        data = buf.getvalue().encode("utf-8", errors="surrogateescape")
        with _interrupts_deferred():  # a SIGINT/SIGTERM between the write and the bookkeeping would lose the count
            try:
                append_bytes(self.path, data)
                self._count(sid, rows)
            except BaseException:
                # a signal that arrived just before the block still raises inside it (its Python handler runs at
                # the next instruction; blocking holds back only later ones): a sample already written counts
                if sid not in self.done and self._ends_with(data):
                    self._count(sid, rows)
                raise

    def _count(self, sid: str, rows: list[dict]) -> None:
        self.done.add(sid)
        self.rows[sid] = {k: ("" if v is None else str(v)) for k, v in dict(rows[0], sample_id=sid,
                                                                            sample_rows=len(rows)).items()}

    def _ends_with(self, data: bytes) -> bool:
        """Whether the log's last bytes are ``data`` (the sample just written reached the file whole)."""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                if size < len(data):
                    return False
                fh.seek(size - len(data))
                return fh.read(len(data)) == data
        except OSError:
            return False


@contextmanager
def _interrupts_deferred():
    """SIGINT and SIGTERM held back while the block runs (in the main thread, where Python handles them) and
    delivered when it ends, so that a sample written to the log is also counted as done before an interrupt
    stops the run."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
