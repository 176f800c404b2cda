"""Safe file handling shared by the CLI, the collector and the reports.

Every write that replaces a file goes through :func:`atomic_write` (a private
temporary file in the target folder, ``fsync``, atomic rename: a planted file
or link cannot redirect it, and a crash leaves the old file whole). Every
append goes through :func:`append_bytes`, which refuses to follow a symbolic
link. :func:`check_output` refuses an output that is a folder or one of the
command's inputs, before any work starts. :func:`read_csv` reads a user's table
with one clear error for a missing file, a folder, an unreadable file or
duplicate column names.
"""
from __future__ import annotations

import csv
import errno
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "append_bytes", "check_output", "check_input_file", "read_csv"]


def check_input_file(path, what: str = "file") -> Path:
    """``path`` as a Path if it is a readable regular file; otherwise one clear error naming it."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{what} {str(p)!r}: no such file")
    if p.is_dir():
        raise ValueError(f"{what} {str(p)!r} is a folder, not a file")
    if not os.access(p, os.R_OK):
        raise ValueError(f"{what} {str(p)!r}: not readable (permission denied)")
    return p


def check_output(path, flag: str = "--out", inputs=()) -> Path:
    """Refuse an output that is an existing folder, one of ``inputs``, or in a folder that does not exist.

    Called before any work starts, so a long fit is never lost to a bad ``--out``.
    """
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{flag} {str(p)!r} is a folder; give a file name")
    for src in inputs:
        if src is None:
            continue
        s = Path(src)
        same = p.exists() and s.exists() and os.path.samefile(p, s)
        if same or p.resolve() == s.resolve():
            raise ValueError(f"{flag} {str(p)!r} is the input {str(s)!r}; writing there would destroy it — "
                             "choose another file")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{flag} {str(p)!r}: the folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise ValueError(f"{flag} {str(p)!r}: the folder {str(parent)!r} is not writable")
    return p


def atomic_write(path, data: str | bytes) -> Path:
    """Replace ``path`` with ``data`` atomically (temporary file beside it, ``fsync``, rename).

    The temporary file is created by :func:`tempfile.mkstemp` (exclusive, unpredictable
    name), so a planted ``<name>.tmp`` or link cannot redirect the write; the rename
    replaces a link at ``path`` rather than writing through it.
    """
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{str(p)!r} is a folder; cannot write a file there")
    raw = data.encode() if isinstance(data, str) else bytes(data)
    fd, tmp = tempfile.mkstemp(dir=p.parent if str(p.parent) else ".", prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return p


def append_bytes(path, data: bytes, fsync: bool = True) -> None:
    """Append ``data`` to ``path`` in whole ``write`` calls (created if missing), never through a symbolic link."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{str(path)!r} is a symbolic link; perfkit does not append through links "
                             "(remove the link or choose another --out)") from None
        raise
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def read_csv(path, what: str = "CSV"):
    """Read a user's CSV as a DataFrame; one clear error for every way it can be unusable.

    Refuses a missing file, a folder, an unreadable or empty file, a file that is
    not CSV, and duplicate column names (pandas would silently rename the second
    ``x`` to ``x.1`` and the model would ignore it).
    """
    import pandas as pd

    p = check_input_file(path, what)
    try:
        with open(p, newline="", encoding="utf-8-sig") as fh:
            header = next(csv.reader(fh), None)
    except UnicodeDecodeError:
        raise ValueError(f"{what} {str(p)!r}: not a text file (cannot decode it as UTF-8)") from None
    except csv.Error as exc:
        raise ValueError(f"{what} {str(p)!r}: not a readable CSV ({exc})") from None
    if not header:
        raise ValueError(f"{what} {str(p)!r} is empty (no header line)")
    seen = set()
    for name in header:
        if name in seen:
            raise ValueError(f"{what} {str(p)!r}: column {name!r} appears twice in the header; "
                             "rename one of them")
        seen.add(name)
    try:
        return pd.read_csv(p)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{what} {str(p)!r} is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(f"{what} {str(p)!r}: not a readable CSV ({str(exc).strip()})") from None
