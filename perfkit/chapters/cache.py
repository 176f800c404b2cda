"""The results cache: a chapter's computed :class:`~perfkit.chapters.store.Results`, kept on disk by key.

:func:`cached_compute` returns the results of ``compute(params)``, computed once per key and read back
afterwards. The key (:func:`results_key`) is the SHA-256 of

* the chapter and every parameter that can change a result (:data:`NOT_IN_KEY` lists the ones that
  cannot: progress bars, the output folder, the number of parallel jobs, the cache switch itself);
* the content (SHA-256) of every input file the chapter names, and whether it exists;
* the code: the bytes of every ``.py`` file of the ``perfkit`` package (any code change recomputes);
* the numeric environment: ``OPENBLAS_CORETYPE``, ``PERFKIT_NUMBA``, the versions of Python, numpy,
  scipy, pandas, scikit-learn and statsmodels, and the machine type.

The folder is ``$PERFKIT_RESULTS_CACHE`` (empty or ``0``: the cache is off; a relative path is relative to
the working folder of the process that reads it, and ``perfkit reproduce`` hands its kernels the absolute
path), else ``<repository>/build/cache/results``; ``perfkit reproduce`` points it at
``<build dir>/cache/results``. An entry is used only when the key stored in it is its folder's key and its
content matches its SHA-256 digest, its classes are allowed result types and its nesting is shallow
(:mod:`perfkit.chapters.store`); any other entry is recomputed and replaced, with one line saying why. One
that cannot be written is skipped with a message. Reading never changes a result: the stored results are
equal, floats bit for bit, to the ones computed.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Callable, Mapping

from ..progress import CACHED_SECTION, report
from .store import RESULTS_FILE, Results, StoreError

__all__ = ["ENV_VAR", "NOT_IN_KEY", "cache_folder", "results_key", "code_fingerprint", "file_digest",
           "cached_compute", "CacheInfo"]

#: the environment variable naming the cache folder (empty or "0": off)
ENV_VAR = "PERFKIT_RESULTS_CACHE"
#: parameters that do not change a chapter's results, so are not part of its key
NOT_IN_KEY = frozenset({"progress", "figures_dir", "n_jobs", "cache"})
_LIBRARIES = ("numpy", "scipy", "pandas", "sklearn", "statsmodels")


def cache_folder() -> Path | None:
    """The cache folder: ``$PERFKIT_RESULTS_CACHE``, else ``<repository>/build/cache/results``; None when off."""
    value = os.environ.get(ENV_VAR)
    if value is None:
        from ..schema import repo_root

        return repo_root() / "build" / "cache" / "results"
    return None if value.strip() in ("", "0") else Path(value).expanduser().absolute()


@functools.lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """SHA-256 of the relative path and bytes of every ``.py`` file of the ``perfkit`` package."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def file_digest(path) -> str:
    """SHA-256 of a file's bytes, or ``"missing"``."""
    path = Path(path)
    if not path.is_file():
        return "missing"
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _environment() -> dict:
    import importlib

    versions = {}
    for name in _LIBRARIES:
        try:
            versions[name] = importlib.import_module(name).__version__
        except ImportError:
            versions[name] = None
    return {"python": sys.version.split()[0], "machine": platform.machine(), **versions,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", ""),
            "PERFKIT_NUMBA": os.environ.get("PERFKIT_NUMBA", "")}


def _param_values(params) -> dict:
    values = dict(params) if isinstance(params, Mapping) else params.as_dict()
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(values.items()) if k not in NOT_IN_KEY}


def results_key(chapter: str, params, inputs) -> tuple[str, dict]:
    """``(key, what)``: the cache key of ``chapter`` with ``params`` and input files ``inputs``, and the
    document it hashes (stored beside the results, so a reader can see what an entry was computed from)."""
    from ..schema import repo_root

    root = repo_root().resolve()

    def shown(p):
        p = Path(p).resolve()
        try:
            return str(p.relative_to(root))
        except ValueError:
            return str(p)

    what = {"chapter": chapter, "params": _param_values(params),
            "inputs": {shown(p): file_digest(p) for p in sorted(set(map(str, inputs)))},
            "code": code_fingerprint(), "environment": _environment()}
    text = json.dumps(what, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest(), what


class CacheInfo:
    """Where a chapter's results came from: ``hit`` (read from the cache), the entry's ``path`` (None when the
    cache is off) and when they were computed."""

    def __init__(self, hit: bool, path: Path | None, computed: str):
        self.hit, self.path, self.computed = hit, path, computed

    def __repr__(self) -> str:
        return f"<CacheInfo hit={self.hit} path={self.path} computed={self.computed}>"


def _say(message: str) -> None:
    print(f"[perfkit] {message}", flush=True)


def cached_compute(chapter: str, params, inputs, compute: Callable[[object], Results], cls: type[Results],
                   cache: bool = True) -> tuple[Results, CacheInfo]:
    """``compute(params)``, or the results stored under the same key; returns ``(results, CacheInfo)``.

    With ``cache=False`` (or the cache off) the results are computed; with ``cache=False`` and the cache on,
    the fresh results replace the stored ones.
    """
    folder = cache_folder()
    if folder is None:
        return compute(params), CacheInfo(False, None, time.strftime("%Y-%m-%d %H:%M:%S"))
    key, what = results_key(chapter, params, inputs)
    entry = folder / chapter / key
    if cache and (entry / RESULTS_FILE).is_file():
        try:
            results, computed = _read_entry(entry, key, cls)
            _say(f"{chapter}: results read from the cache ({_shown(entry)}; computed {computed}); unchanged "
                 "parameters, data and code. cache=False (perfkit reproduce --no-cache) recomputes them")
            report(CACHED_SECTION, 0, 0)  # the status line of perfkit reproduce says so, without a time left
            return results, CacheInfo(True, entry, computed)
        except Exception as exc:  # noqa: BLE001 - any entry that does not read back exactly is recomputed
            _say(f"{chapter}: the cached results in {_shown(entry)} were not used ({type(exc).__name__}: {exc}); "
                 "computing them again and replacing the entry")
    results = compute(params)
    computed = time.strftime("%Y-%m-%d %H:%M:%S")
    try:
        results.to_dir(entry, meta={"key": key, "computed": computed, **what})
    except OSError as exc:
        _say(f"{chapter}: results not cached ({exc})")
        entry = None
    return results, CacheInfo(False, entry, computed)


def _read_entry(entry: Path, key: str, cls: type[Results]) -> tuple[Results, str]:
    """``(results, when computed)`` of a cache entry whose stored key is its folder's ``key`` and whose content
    matches its digest (:meth:`Results.read_dir` checks the digest, the classes and the nesting)."""
    results, meta = cls.read_dir(entry)
    if meta.get("key") != key or entry.name != key:
        raise StoreError(f"the entry was stored under another key ({str(meta.get('key'))[:12]}…), not this one")
    return results, str(meta.get("computed", ""))


def _shown(path: Path) -> str:
    from .result import show_path

    return show_path(path)
