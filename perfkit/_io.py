"""Safe file handling shared by the CLI, the collector and the reports.

Every write that replaces a file goes through :func:`atomic_write` (a private
temporary file in the target folder, ``fsync``, atomic rename: a planted file
or link cannot redirect it, and a crash leaves the old file whole). Every
append goes through :func:`append_bytes`, which refuses to follow a symbolic
link. :func:`check_output` refuses an output that is not a regular file or a new
path (a folder, a link, a device, a FIFO) or that is one of the command's inputs,
before any work starts. :func:`check_input_file` accepts only readable regular
files of bounded size. :func:`read_csv` reads a user's table with one clear error
for a missing file, a folder, a device, an unreadable file or duplicate column names.
"""
from __future__ import annotations

import csv
import errno
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["MAX_INPUT_BYTES", "atomic_write", "append_bytes", "check_output", "check_input_file", "csv_with_column",
           "is_perfkit_model", "path_argument", "read_csv", "read_json"]


#: the largest input file perfkit reads (bytes): a device or a runaway file is refused instead of filling memory
MAX_INPUT_BYTES = 1 << 30


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, word in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return word
    return "not a regular file"


def path_argument(value, name: str, what: str = "a path") -> Path:
    """``value`` as a Path when it is a path (a string or ``os.PathLike`` without NUL characters); else one
    ValueError naming the argument ``name`` and saying it expected ``what``."""
    if not isinstance(value, (str, os.PathLike)) or "\x00" in os.fspath(value) or not str(os.fspath(value)).strip():
        raise ValueError(f"{name}: expected {what}, got {value!r}")
    return Path(value)


def read_json(path, what: str) -> dict:
    """The JSON object in ``path``; else one ValueError beginning with ``what`` (the file and its role, e.g.
    ``"extrap_results: x.json"``): ``… is not a readable JSON file (reason)`` for a file that cannot be read or
    parsed (a folder, not UTF-8, not JSON, nested too deep), ``… holds a JSON list, not an object`` for another
    document."""
    import json

    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise ValueError(f"{what} is not a readable JSON file ({reason})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{what} holds a JSON {type(doc).__name__}, not an object")
    return doc


def check_input_file(path, what: str = "file", max_bytes: int | None = None) -> Path:
    """``path`` as a Path if it is a readable regular file of at most ``max_bytes`` (default
    :data:`MAX_INPUT_BYTES`); otherwise one clear error naming it.

    A device (``/dev/zero``), a FIFO or a pipe (``/dev/stdin`` fed by a pipe) is refused: it could be read
    forever, or only once while perfkit may read an input twice.
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} {str(p)!r}: no such file") from None
    except OSError as exc:
        raise ValueError(f"{what} {str(p)!r}: cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{what} {str(p)!r} is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{what} {str(p)!r} is {_kind(st.st_mode)}, not a regular file; save the data to a file "
                         "and give its path")
    max_bytes = MAX_INPUT_BYTES if max_bytes is None else max_bytes
    if st.st_size > max_bytes:
        raise ValueError(f"{what} {str(p)!r} is {st.st_size / 2**20:.0f} MiB; perfkit reads files of at most "
                         f"{max_bytes / 2**20:.0f} MiB")
    if not os.access(p, os.R_OK):
        raise ValueError(f"{what} {str(p)!r}: not readable (permission denied)")
    return p


def _same_file(a: Path, b: Path) -> bool:
    """``a`` and ``b`` name the same file (the same inode, or the same resolved path)."""
    try:
        if a.exists() and b.exists() and os.path.samefile(a, b):
            return True
    except OSError:
        pass
    return a.resolve() == b.resolve()


def check_output(path, flag: str = "--out", inputs=(), ours=None) -> Path:
    """Refuse an output that is not a regular file or a new path, one of ``inputs``, in a folder that does
    not exist or is not writable, or (with ``ours``, a test of a file's contents) an existing file that is not
    one this command writes.

    A folder, a path ending in ``/``, a symbolic link, a device (``/dev/null``), a FIFO or a socket is refused:
    perfkit replaces its outputs (:func:`atomic_write`), which would put a regular file in their place. An
    existing file is replaced only when ``ours`` is None or ``ours(path)`` (e.g. :func:`is_perfkit_model`): a
    file of measurements given by mistake is never overwritten. Called before any work starts, so a long fit is
    never lost to a bad ``--out``.
    """
    p = Path(path)
    if not str(path).strip():
        raise ValueError(f"{flag}: expected a file name, got an empty path")
    if str(path).endswith(("/", os.sep)):
        raise ValueError(f"{flag} {str(path)!r}: a path ending in / names a folder; give a file name")
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise ValueError(f"{flag} {str(p)!r}: cannot be checked ({exc.strerror or exc})") from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise ValueError(f"{flag} {str(p)!r} is a symbolic link; perfkit does not write through links "
                         "(remove the link or choose another file)")
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{flag} {str(p)!r} is a folder; give a file name")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{flag} {str(p)!r} is {_kind(st.st_mode)}; perfkit writes only regular files "
                         "(it would replace it) — choose a file name")
    for src in inputs:
        if src is None:
            continue
        s = Path(src)
        if _same_file(p, s):
            raise ValueError(f"{flag} {str(p)!r} is the input {str(s)!r}; writing there would destroy it — "
                             "choose another file")
    if st is not None and ours is not None and not ours(p):
        raise ValueError(f"{flag} {str(p)!r} exists and is not {ours.__doc__.strip().rstrip('.')}; perfkit would "
                         "replace it: choose another file name (or remove that file first)")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{flag} {str(p)!r}: the folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise ValueError(f"{flag} {str(p)!r}: the folder {str(parent)!r} is not writable")
    return p


def is_perfkit_model(path) -> bool:
    """a model JSON that perfkit wrote."""
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("format"), str) and doc["format"].startswith("perfkit.")


def csv_with_column(column: str):
    """A test for :func:`check_output`: the file is a CSV whose header names ``column`` (a table of this kind that
    perfkit wrote)."""
    def ours(path) -> bool:
        try:
            with open(path, newline="", encoding="utf-8-sig") as fh:
                header = next(csv.reader(fh), None)
        except (OSError, ValueError, csv.Error):
            return False
        return bool(header) and column in header
    ours.__doc__ = f"a table perfkit wrote (a CSV with a {column!r} column)"
    return ours


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


#: the help of the CLI flag that reads NA-like cells as text (``read_csv(..., na_is_level=True)``)
NA_IS_LEVEL_HELP = ("read cells such as NA, None or null as text (a categorical level), not as missing; only empty "
                    "cells are missing")


def read_csv(path, what: str = "CSV", na_is_level: bool = False, require_rows: bool = False):
    """Read a user's CSV as a DataFrame; one clear error for every way it can be unusable.

    Refuses a missing file, a folder, an unreadable or empty file, a file that is not CSV, duplicate column
    names, and with ``require_rows`` a header without data rows (pandas would silently rename the second
    ``x`` to ``x.1`` and the model would ignore it). With ``na_is_level`` only empty cells are
    missing: ``NA``, ``None``, ``null`` … stay text (a level of a categorical column).
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
        df = pd.read_csv(p, keep_default_na=False, na_values=[""]) if na_is_level else pd.read_csv(p)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{what} {str(p)!r} is empty") from None
    except (pd.errors.ParserError, ValueError) as exc:  # UnicodeDecodeError; a number of thousands of digits
        raise ValueError(f"{what} {str(p)!r}: not a readable CSV ({str(exc).strip().splitlines()[0]})") from None
    if require_rows and not len(df):
        raise ValueError(f"{what} {str(p)!r} has a header but no data rows")
    return df
