"""Progress a person can see while ``perfkit reproduce`` runs the chapter notebooks.

The notebooks run in Jupyter kernels (separate processes), so their fits cannot print to the
terminal that started ``perfkit reproduce``. They talk through one small file instead:

- in the kernel, :func:`report` (called by :func:`track`, which wraps every batch of fits that
  :func:`perfkit.model.selection.fitting._parallel` runs) replaces the file named by the environment variable
  :data:`ENV` (``PERFKIT_PROGRESS``) with one JSON object: ``section`` (the batch's label, e.g.
  ``"PyTorch: Table 4.2 DE fits"``), ``done``, ``total``, ``started`` (when the section started,
  ``time.time()``) and ``updated``. Without the variable it does nothing;
- in ``perfkit reproduce``, :class:`ProgressWatcher` reads that file every couple of seconds and
  prints one status line (wrapped here), e.g.::

      [perfkit] ch4 · PyTorch: Table 4.2 DE fits: 12/30 fits, ~40 s left in section · chapter 3:12 elapsed,
      ~1:48 left (5:00 in the last run)

  On a terminal it rewrites one line (``\\r``) and clears it at the end; otherwise (CI logs, pipes)
  it prints a new line when the section changes, and otherwise at most every 30 s.

:func:`chapter_progress` puts the two together for one chapter and keeps, in
``<build dir>/run_times.json``, how long each chapter took (per chapter and run kind:
:func:`run_key`), so the next run can say how much of the chapter is left.

Guarantees: :func:`report` and :func:`track` never raise (a progress file that cannot be written is
skipped: progress never breaks a fit) and cost one dictionary lookup when :data:`ENV` is unset; only
the outermost batch of fits reports (a batch run inside another's task, in the same process or in a
joblib worker process, does not overwrite the outer one's progress).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ENV", "CACHED_SECTION", "report", "track", "read_progress", "ProgressWatcher", "status_line", "format_duration", "duration",
           "run_key", "read_run_time", "record_run_time", "chapter_progress", "PROGRESS_FILE", "RUN_TIMES_FILE"]

#: the environment variable that names the progress file (set by ``perfkit reproduce`` for its kernels)
ENV = "PERFKIT_PROGRESS"
#: the progress file's name in the build folder
PROGRESS_FILE = "progress.json"
#: the chapters' durations from earlier runs, in the build folder
RUN_TIMES_FILE = "run_times.json"

_state = {"section": None, "started": 0.0, "batches": {}}  # the section this process reports, when it started,
# and how many batches of each name this process has started (a second "form search" is "form search #2")
#: the section :func:`perfkit.chapters.cache.cached_compute` reports when it reads a chapter's results
CACHED_SECTION = "results read from the cache"
_depth = 0  # batches of fits running in this process (only the outermost reports)


def report(section: str, done: int, total: int) -> None:
    """Replace the file named by ``$PERFKIT_PROGRESS`` with ``{"section", "done", "total", "started", "updated"}``.

    ``started`` is when this process first reported ``section`` (again after a report with ``done == 0``).
    The file is written to a temporary file in the same folder and renamed over the old one, so a reader
    never sees half of it. Does nothing when the variable is unset or empty, or in a worker process of
    ``multiprocessing``/joblib's loky (the kernel that started them reports). Never raises.
    """
    path = os.environ.get(ENV)
    if not path:
        return
    try:
        import multiprocessing

        if multiprocessing.parent_process() is not None:
            return
        now = time.time()
        section = str(section)
        if section != _state["section"] or done == 0:
            _state.update(section=section, started=now)
        text = json.dumps({"section": section, "done": int(done), "total": int(total),
                           "started": _state["started"], "updated": now})
        from ._io import atomic_write

        atomic_write(path, text)
    except Exception:  # progress must never break a fit (unwritable folder, a folder at the path, ...)
        return


def track(items, section: str, total: int):
    """Yield ``items`` unchanged, reporting ``(section, 0, total)`` when iteration starts and ``(section, n, total)``
    as the n-th item arrives (:func:`report`).

    Returns ``items`` itself when :data:`ENV` is unset, and reports nothing for a batch that starts while
    another batch of this process is being tracked (a fit that runs its own batch inside a task).
    """
    if not os.environ.get(ENV):
        return items
    return _tracked(items, section, total)


def _tracked(items, section, total):
    global _depth
    outer = _depth == 0
    _depth += 1
    try:
        if outer:  # each batch its own section, so a section's total never changes under the reader
            n = _state["batches"][section] = _state["batches"].get(section, 0) + 1
            section = section if n == 1 else f"{section} #{n}"
            report(section, 0, total)
        for done, item in enumerate(items, 1):
            if outer:
                report(section, done, total)
            yield item
    finally:
        _depth -= 1


def read_progress(path) -> dict | None:
    """The progress file's object, or None when it is missing, unreadable or not a progress object."""
    try:
        with open(path) as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) and "section" in data else None
    except (OSError, ValueError):
        return None


def duration(seconds: float) -> str:
    """``3.2 s``, ``42 s``, ``4 min 5 s``, ``2 h 3 min``: a wall time for a message (a fit's time, the time left)."""
    if seconds < 10:
        return f"{max(seconds, 0.0):.1f} s"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def format_duration(seconds: float) -> str:
    """``"40 s"`` under a minute, else ``"m:ss"`` (``"h:mm:ss"`` from an hour)."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _cached(progress: dict | None) -> bool:
    """Whether a progress object says the chapter's results were read from the cache."""
    return bool(progress) and progress.get("section") == CACHED_SECTION


def status_line(chapter: str, progress: dict | None, chapter_elapsed: float, expected: float | None = None,
                now: float | None = None) -> str:
    """The status line for ``chapter``: its current section with fits done / to do and the time left in it
    (elapsed in the section / done × fits left, once one fit is done; before that, the time in the section; a
    section with no fits, total 0, by its name alone), then the chapter's elapsed time and, when ``expected`` (its
    duration in an earlier run) is known and the results are not read from the cache (:data:`CACHED_SECTION`),
    the time left in it."""
    now = time.time() if now is None else now
    parts = [f"[perfkit] {chapter}"]
    cached = _cached(progress)
    if progress:
        done, total = int(progress.get("done", 0)), int(progress.get("total", 0))
        text = f"{progress['section']}: {done}/{total} fits" if total else str(progress["section"])
        if 1 <= done < total:
            left = (now - float(progress.get("started", now))) / done * (total - done)
            text += f", {'~' + format_duration(left) if left >= 0.5 else '<1 s'} left in section"
        elif total and done == 0:  # no fit finished yet: how long the first has been running, not a guess
            text += f", {format_duration(now - float(progress.get('started', now)))} in section"
        elif total and done >= total:
            text += " done"
        parts.append(text)
    text = f"chapter {format_duration(chapter_elapsed)} elapsed"
    if expected and not cached:  # a cached chapter is not the run the expectation was measured on
        last = f"({format_duration(expected)} in the last run)"
        left = expected - chapter_elapsed
        text += f", ~{format_duration(left)} left {last}" if left > 0 else f" {last}"
    parts.append(text)
    return " · ".join(parts)


class ProgressWatcher:
    """Print a chapter's progress (:func:`status_line`) from the progress file while the ``with`` block runs.

    A daemon thread reads ``path`` every ``interval`` seconds. On a terminal (``tty``, default
    ``stream.isatty()``) it rewrites one line, cut to the terminal's width, and clears it on exit; otherwise
    it prints a new line when the section changes and at most every ``quiet_interval`` seconds besides.
    A progress file older than the watcher (left by an earlier run) is ignored. ``expected`` is the chapter's
    duration in an earlier run, in seconds (None: unknown).
    """

    def __init__(self, chapter: str, path, expected: float | None = None, stream=None, interval: float = 2.0,
                 quiet_interval: float = 30.0, tty: bool | None = None):
        self.chapter, self.path, self.expected = chapter, Path(path), expected
        self.stream = sys.stdout if stream is None else stream
        self.interval, self.quiet_interval = interval, quiet_interval
        if tty is None:
            try:
                tty = bool(self.stream.isatty())
            except (AttributeError, ValueError):
                tty = False
        self.tty = tty
        self._stop = threading.Event()
        self._thread = None
        self._lock = threading.Lock()
        self._shown = False
        self._last_section, self._last_print = None, 0.0
        self.start = self.start_wall = 0.0
        self.cached = False  # the chapter's results were read from the cache (its duration is not a full run's)

    def __enter__(self) -> "ProgressWatcher":
        self.start, self.start_wall = time.perf_counter(), time.time()
        self._last_print = self.start
        self._thread = threading.Thread(target=self._run, name=f"perfkit-progress-{self.chapter}", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=max(5.0, 2 * self.interval))
        with self._lock:
            if self.tty and self._shown:
                self._write("\r\x1b[K")
                self._shown = False

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.tick()
            except Exception:  # a status line is never worth a crash
                pass

    def _progress(self) -> dict | None:
        progress = read_progress(self.path)
        if progress and float(progress.get("updated", 0.0)) < self.start_wall - 1.0:
            return None  # left by an earlier run
        return progress

    def line(self) -> str:
        """The status line now."""
        return status_line(self.chapter, self._progress(), time.perf_counter() - self.start, self.expected)

    def tick(self) -> None:
        """Read the file and print the line if it is due (what the thread does every ``interval``)."""
        progress = self._progress()
        section = progress.get("section") if progress else None
        self.cached = self.cached or _cached(progress)
        line = status_line(self.chapter, progress, time.perf_counter() - self.start, self.expected)
        with self._lock:
            if self._stop.is_set():
                return
            if self.tty:  # one line that fits the terminal: the last run's duration goes first, then the end
                width = shutil.get_terminal_size((120, 24)).columns
                if len(line) >= width:
                    line = line.replace(f" ({format_duration(self.expected or 0)} in the last run)", "")
                self._write("\r\x1b[K" + (line if len(line) < width else line[:max(1, width - 2)] + "…"))
                self._shown = True
                return
            now = time.perf_counter()
            if section != self._last_section or now - self._last_print >= self.quiet_interval:
                self._last_section, self._last_print = section, now
                self._write(line + "\n")

    def tick_cached(self) -> None:
        """Note from the progress file whether the results were read from the cache (a chapter that ended
        between two ticks)."""
        self.cached = self.cached or _cached(self._progress())

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass


def run_key(quick: bool, parameters: dict | None = None) -> str:
    """Which durations compare: ``"quick"`` or ``"full"``, plus the parameters given (as sorted JSON), if any."""
    key = "quick" if quick else "full"
    return f"{key} {json.dumps(parameters, sort_keys=True, default=str)}" if parameters else key


def read_run_time(build_dir, chapter: str, key: str) -> float | None:
    """Seconds ``chapter`` took in the last run of kind ``key`` (``<build_dir>/run_times.json``); None if unknown."""
    try:
        with open(Path(build_dir) / RUN_TIMES_FILE) as fh:
            value = json.load(fh)[chapter][key]
        return float(value) if value > 0 else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record_run_time(build_dir, chapter: str, key: str, seconds: float) -> None:
    """Store ``seconds`` as ``chapter``'s duration for runs of kind ``key`` in ``<build_dir>/run_times.json``
    (the other entries kept; an unreadable file is started afresh). Written atomically; never raises."""
    path = Path(build_dir) / RUN_TIMES_FILE
    try:
        with open(path) as fh:
            times = json.load(fh)
        if not isinstance(times, dict):
            times = {}
    except (OSError, ValueError):
        times = {}
    entry = times.get(chapter)
    times[chapter] = {**(entry if isinstance(entry, dict) else {}), key: round(float(seconds), 1)}
    try:
        from ._io import atomic_write

        atomic_write(path, json.dumps(times, indent=2, sort_keys=True) + "\n")
    except (OSError, ValueError):
        pass


@contextmanager
def chapter_progress(chapter: str, build_dir, key: str, enabled: bool = True, stream=None, interval: float = 2.0):
    """Show ``chapter``'s progress while the block runs its notebook; yields the :class:`ProgressWatcher`
    (its ``tty`` tells whether it owns the terminal line), or None when not ``enabled``.

    Sets :data:`ENV` to ``<build_dir>/progress.json`` for the block (the kernels papermill starts inherit it;
    the previous value is restored after), removes that file before and after, and, when the block ends
    without an exception, records the chapter's duration under ``key`` (:func:`record_run_time`), or under
    ``key + " cached"`` when its results were read from the results cache (a cached run's few seconds never
    become the next full run's expectation).
    """
    build_dir = Path(build_dir)
    start = time.perf_counter()
    if not enabled:
        yield None
        record_run_time(build_dir, chapter, key, time.perf_counter() - start)
        return
    path = build_dir / PROGRESS_FILE
    previous = os.environ.get(ENV)
    _remove(path)
    os.environ[ENV] = str(path)
    try:
        with ProgressWatcher(chapter, path, read_run_time(build_dir, chapter, key), stream=stream,
                             interval=interval) as watcher:
            yield watcher
        watcher.tick_cached()
    finally:
        if previous is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = previous
        _remove(path)
    record_run_time(build_dir, chapter, f"{key} cached" if watcher.cached else key, time.perf_counter() - start)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
