"""The crash-safe sample log every collection writes.

:class:`SampleLog` is an append-only CSV: one ``os.write`` of whole lines per
sample, then ``fsync``. When a run was killed part-way, reopening it drops a
torn last line and any sample whose rows are incomplete, so a re-run resumes
with every finished sample exactly once.
"""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path

__all__ = ["SampleLog"]


class SampleLog:
    """An append-only CSV of samples that survives being killed at any moment.

    Every row has ``sample_id`` and ``sample_rows`` (how many rows that sample
    wrote). On opening, a torn last line and the rows of any incomplete sample
    are removed, and the ids of complete samples are in :attr:`done`.
    """

    def __init__(self, path, columns: list[str]):
        self.path = Path(path)
        self.columns = list(columns)
        for need in ("sample_id", "sample_rows"):
            if need not in self.columns:
                raise ValueError(f"columns: a sample log needs a {need!r} column")
        self.done: set[str] = set()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() and self.path.stat().st_size:
            self._repair()
        else:
            self.path.write_text(",".join(self.columns) + "\n")

    def _repair(self) -> None:
        raw = self.path.read_bytes()
        cut = raw.rfind(b"\n") + 1
        text = raw[:cut].decode()
        lines = text.splitlines(keepends=True)
        header = next(csv.reader([lines[0]])) if lines else []
        if header != self.columns:
            raise ValueError(f"{self.path}: its columns {header} differ from this collection's {self.columns}; "
                             "use another --out or the same settings")
        rows = list(csv.DictReader(io.StringIO(text)))
        counts: dict[str, int] = {}
        declared: dict[str, set] = {}
        for r in rows:
            counts[r["sample_id"]] = counts.get(r["sample_id"], 0) + 1
            declared.setdefault(r["sample_id"], set()).add(r["sample_rows"])
        complete = {sid for sid, n in counts.items() if declared[sid] == {str(n)}}
        if cut != len(raw) or len(complete) != len(counts):
            keep = [lines[0]] + [line for line, r in zip(lines[1:], rows) if r["sample_id"] in complete]
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text("".join(keep))
            os.replace(tmp, self.path)
        self.done = complete

    def append(self, sample_id, rows: list[dict]) -> None:
        """Write all rows of one sample in one ``write`` and ``fsync``; then it counts as done."""
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.columns, extrasaction="raise", lineterminator="\n")
        for r in rows:
            w.writerow(dict(r, sample_id=sample_id, sample_rows=len(rows)))
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            data = memoryview(buf.getvalue().encode())
            while data:
                data = data[os.write(fd, data):]
            os.fsync(fd)
        finally:
            os.close(fd)
        self.done.add(str(sample_id))
