"""A disk cache of generic-model fits: the same fit is made once and read back afterwards, across processes.

The cache is off unless the environment variable ``PERFKIT_FIT_CACHE`` names a folder (unset, empty or
``0``: off; a relative path is relative to the working folder). ``perfkit reproduce`` sets it to
``<build dir>/cache/fits`` for the notebooks it runs. :func:`cached_fit` (used by
:func:`perfkit.model.selection.fitting._fit_one`, so by every ``fit_repeated`` and ``regularisation_sweep``) then
stores each fit of a :class:`~perfkit.model.forms.generic.GenericPerformanceModel` as one JSON file named by its
:func:`key`, and a later fit with the same key is read from that file instead of being run again.

**What the key covers** (:func:`key`): the estimator's class and every ``get_params()`` value (type and
value; floats by their exact bits); the training data exactly — every column the model uses, in order, by
name, dtype and values (numeric columns by their bytes, other columns by their values' types and strings;
a categorical dtype also by its categories), the index, and ``y`` as float64 bytes; a fingerprint of the
engine code (sha256 of the files named by :data:`ENGINE_FILES` in :mod:`perfkit.model`: the engine's modules
and the model modules that shape a fit or its JSON); whether the compiled kernels are on
(:func:`perfkit.model.engine._kernels.enabled`) and numba's version; the value of ``OPENBLAS_CORETYPE`` (a run
under another BLAS kernel set never reuses another set's fits); the numpy, scipy and Python versions, the
machine type; and this cache's format version.

**What is cached**: only fits of exactly :class:`~perfkit.model.forms.generic.GenericPerformanceModel` (not a
subclass, nor any other estimator) with an integer ``random_state``. A ``None`` random state draws fresh
entropy on every fit and a Generator/RandomState carries state between fits, so those fits always run.

**What a cached fit gives**: the estimator passed in, with every fitted attribute (``coef_``, ``powers_``,
``objective_``, ``n_iter_``, ``history_``, ``converged_``, ``fit_time_`` — the time of the original fit —,
``linear_names_``, ``power_names_``, ``categories_``, ``kept_levels_``, ``constant_columns_``,
``numeric_``/``categorical_``/``extrinsic_``, ``n_features_in_``) equal in type and value, floats bit for
bit, to the fit that was stored: :func:`store` writes a fit only after checking that
:meth:`~perfkit.model.forms.generic.GenericPerformanceModel.from_json` rebuilds exactly these from the file's
contents. So ``predict`` and ``params_`` give the same numbers. The
:class:`~perfkit.model.roles.ConstantColumnWarning` of the fit is issued again from ``constant_columns_``;
no other warning raised during the original fit is replayed.

**File format**: JSON only, ``{"format": "perfkit.fitcache", "version": 2, "key": <key>, "digest": <sha256 of
the key and the model document>, "model": <the model's to_json document>}`` in ``<folder>/<key>.json``. A
file that cannot be read, is truncated, is not this format and version, holds another key, does not match
its digest (an edited coefficient) or does not rebuild a model is not used: :func:`cached_fit` says so in
one line, the fit runs and the file is replaced; reading the cache never raises. Files are written atomically (a temporary file in the
same folder, then a rename), so concurrent writers of one key, e.g. joblib workers, leave a whole file. A
file that cannot be written is skipped: the fit is returned either way.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import sys
from pathlib import Path

import numpy as np

__all__ = ["ENV_VAR", "FORMAT", "VERSION", "ENGINE_FILES", "cache_dir", "cacheable", "key", "path_for", "load",
           "store", "cached_fit", "engine_fingerprint"]

#: the environment variable naming the cache folder (unset, empty or "0": the cache is off)
ENV_VAR = "PERFKIT_FIT_CACHE"
#: ``format`` and ``version`` of a cache file; a file with any other is ignored
FORMAT = "perfkit.fitcache"
VERSION = 2
#: the source files, relative to the package :mod:`perfkit.model`, whose bytes make the engine fingerprint in every key
ENGINE_FILES = ("engine/engines.py", "engine/problem.py", "engine/search_cost.py", "engine/screening.py",
                "engine/hops.py", "engine/canonical.py", "engine/newton.py", "engine/_kernels.py",
                "engine/kernel_rows.py", "forms/generic.py", "forms/generic_checks.py", "validation.py", "roles.py",
                "persist.py", "base.py", "unitscale.py", "uncertainty/ranges.py")


class _NotCacheable(Exception):
    """A setting or input that the key cannot describe exactly: the fit runs uncached."""


def cache_dir() -> Path | None:
    """The cache folder named by ``PERFKIT_FIT_CACHE``, or None when the cache is off (unset, "" or "0")."""
    value = os.environ.get(ENV_VAR, "")
    if value.strip() in ("", "0"):
        return None
    return Path(value).expanduser().absolute()


def cacheable(estimator) -> bool:
    """Whether fits of ``estimator`` are cached: exactly a GenericPerformanceModel with an integer random_state."""
    from ..forms.generic import GenericPerformanceModel

    if type(estimator) is not GenericPerformanceModel:
        return False
    seed = estimator.random_state
    return isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_))


@functools.lru_cache(maxsize=None)
def engine_fingerprint() -> str:
    """sha256 over the names and bytes of :data:`ENGINE_FILES` (read once per process)."""
    h = hashlib.sha256()
    here = Path(__file__).resolve().parents[1]
    for name in ENGINE_FILES:
        data = (here / name).read_bytes()
        h.update(f"{name}:{len(data)}:".encode())
        h.update(data)
    return h.hexdigest()


def _environment() -> dict:
    """What a fit depends on besides its code, settings and data."""
    import scipy

    from . import _kernels

    kernels = _kernels.enabled()
    return {
        "engine": engine_fingerprint(),
        "kernels": kernels,
        "numba": getattr(_kernels.numba, "__version__", None) if kernels else None,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "machine": platform.machine(),
        "cache": [FORMAT, VERSION],
    }


def _canon(v):
    """``v`` as a JSON value that tells apart its type and exact value (floats by their hex bits)."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return {"bool": bool(v)}
    if isinstance(v, (int, np.integer)):
        return {"int": str(int(v))}
    if isinstance(v, (float, np.floating)):
        return {"float": float(v).hex()}
    if isinstance(v, (list, tuple)):
        return {type(v).__name__: [_canon(x) for x in v]}
    if isinstance(v, dict):
        return {"dict": [[_canon(k), _canon(x)] for k, x in v.items()]}
    if isinstance(v, np.ndarray) and v.dtype.kind in "biuf":
        return {"array": [v.dtype.str, list(v.shape), _digest_values(v)]}
    raise _NotCacheable(f"cannot describe {type(v).__name__} in a cache key")


def _digest_values(values) -> str:
    """sha256 of a 1-d array's values: numbers by their bytes, anything else by each value's type and string."""
    arr = np.asarray(values)
    h = hashlib.sha256()
    if arr.dtype.kind in "biufcmM":
        h.update(f"{arr.dtype.str}{arr.shape}:".encode())
        h.update(np.ascontiguousarray(arr).tobytes())
    else:
        items = [[f"{type(x).__module__}.{type(x).__qualname__}", str(x)] for x in arr.ravel().tolist()]
        h.update(f"objects{arr.shape}:".encode())
        h.update(json.dumps(items, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _describe_column(series) -> dict:
    import pandas as pd

    dtype = series.dtype
    out = {"dtype": str(dtype), "values": _digest_values(series.to_numpy())}
    if isinstance(dtype, pd.CategoricalDtype):
        out["categories"] = _digest_values(dtype.categories.to_numpy())
        out["ordered"] = bool(dtype.ordered)
    return out


def _describe_data(estimator, X, y) -> dict:
    """The columns the model uses (in order), the index and y, as digests; _NotCacheable when X is unusable."""
    import pandas as pd

    from ..validation import column_list

    if not isinstance(X, pd.DataFrame) or X.columns.duplicated().any():
        raise _NotCacheable("X is not a DataFrame with unique column names")
    used = []
    for role in ("numeric", "categorical", "extrinsic"):
        for col in column_list(role, getattr(estimator, role)):
            if col not in X.columns:
                raise _NotCacheable(f"X has no column {col!r}")
            used.append([role, _canon(col), _describe_column(X[col])])
    target = np.asarray(y, dtype=np.float64).ravel()
    return {"rows": len(X), "columns": used,
            "index": {"dtype": str(X.index.dtype), "values": _digest_values(X.index.to_numpy())},
            "y": _digest_values(target)}


def key(estimator, X, y) -> str | None:
    """The sha256 key of fitting ``estimator`` (settings as set) to ``X``, ``y``; None when not cacheable.

    None for anything :func:`cacheable` refuses and for inputs the key cannot describe exactly (X not a
    DataFrame with the model's columns, y not convertible to float64, a setting of an unknown type, an
    invalid column list): those fits run uncached, and ``fit`` reports any error itself.
    """
    if not cacheable(estimator):
        return None
    try:
        header = {
            "class": f"{type(estimator).__module__}.{type(estimator).__qualname__}",
            "params": [[name, _canon(v)] for name, v in sorted(estimator.get_params(deep=False).items())],
            "data": _describe_data(estimator, X, y),
            "environment": _environment(),
        }
    except (_NotCacheable, ValueError, TypeError, KeyError, OverflowError, OSError):
        return None
    text = json.dumps(header, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def path_for(key_: str, folder=None) -> Path | None:
    """The file of ``key_`` in ``folder`` (default :func:`cache_dir`); None when the cache is off."""
    folder = cache_dir() if folder is None else Path(folder)
    return None if folder is None else folder / f"{key_}.json"


def _fitted(model) -> dict:
    """A model's public fitted attributes (names ending in ``_``)."""
    return {k: v for k, v in vars(model).items() if k.endswith("_") and not k.startswith("_")}


def _same_fit(a, b) -> bool:
    """Two models have the same fitted attributes (any order of setting them), by :func:`_same`."""
    fa, fb = _fitted(a), _fitted(b)
    return sorted(fa) == sorted(fb) and all(_same(fa[k], fb[k]) for k in fa)


def _same(a, b) -> bool:
    """Equal in type and value, recursively; floats and arrays bit for bit."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, z) for x, z in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


def _digest(key_: str, model_doc) -> str:
    """sha256 of a cache entry's key and model document (canonical JSON)."""
    text = json.dumps([key_, model_doc], sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _model_from_doc(doc, key_: str):
    """The fitted model of a parsed cache file; ``ValueError`` saying why when it is not a valid entry for ``key_``."""
    from ..forms.generic import GenericPerformanceModel

    if not (isinstance(doc, dict) and doc.get("format") == FORMAT and doc.get("version") == VERSION):
        raise ValueError(f"not a {FORMAT} file of version {VERSION}")
    if doc.get("key") != key_:
        raise ValueError("it was stored under another key")
    if not isinstance(doc.get("model"), dict) or doc.get("digest") != _digest(key_, doc["model"]):
        raise ValueError("its content does not match its digest (edited or damaged)")
    return GenericPerformanceModel.from_json(json.dumps(doc["model"]))


def _read(key_: str, folder=None):
    """``(model, None)`` for a valid entry of ``key_``; ``(None, None)`` with the cache off or no file; ``(None,
    why)`` for a file that is there but not a valid entry. Never raises."""
    path = path_for(key_, folder)
    if path is None or not path.is_file():
        return None, None
    try:
        return _model_from_doc(json.loads(path.read_text(encoding="utf-8")), key_), None
    except Exception as exc:  # noqa: BLE001 - any failure to read an entry back means there is no usable entry
        return None, f"{type(exc).__name__}: {exc}"


def load(key_: str, folder=None):
    """The fitted model stored under ``key_``, or None: cache off, no file, or a file that is not a valid entry.

    Never raises: an unreadable, truncated, edited or foreign file reads as no entry.
    """
    return _read(key_, folder)[0]


def store(key_: str, model, folder=None) -> Path | None:
    """Write a fitted model under ``key_`` (atomically); returns the file, or None when nothing was written.

    Nothing is written when the cache is off, when the model's JSON would not rebuild every fitted attribute
    exactly (then reading it back could change a result), or when the folder cannot be written.
    """
    from ..._io import atomic_write

    path = path_for(key_, folder)
    if path is None:
        return None
    try:
        model_doc = json.loads(model.to_json())
        doc = {"format": FORMAT, "version": VERSION, "key": key_, "digest": _digest(key_, model_doc),
               "model": model_doc}
        text = json.dumps(doc)
        back = _model_from_doc(json.loads(text), key_)
        if not _same_fit(model, back):
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
    except (OSError, ValueError, TypeError, OverflowError, RecursionError):
        return None
    return path


def cached_fit(estimator, X, y):
    """``estimator.fit(X, y)``, read from the cache when this fit was stored before (see the module docstring).

    With the cache off, or for an estimator or input that is not cached, this is exactly
    ``estimator.fit(X, y)``. Otherwise a stored fit sets the fitted attributes on ``estimator`` (its own
    settings are kept as they are) and re-issues its ConstantColumnWarning; a fit not stored yet runs and is
    stored. Returns ``estimator``.
    """
    if cache_dir() is None:
        return estimator.fit(X, y)
    k = key(estimator, X, y)
    if k is None:
        return estimator.fit(X, y)
    found, why = _read(k)
    if why is not None:
        print(f"[perfkit] fit cache: the entry {path_for(k).name} was not used ({why}); fitting again and "
              "replacing it", flush=True)
    if found is None:
        estimator.fit(X, y)
        store(k, estimator)
        return estimator
    for name, value in _fitted(found).items():
        setattr(estimator, name, value)
    if estimator.constant_columns_:
        from ..roles import warn_constant_columns

        warn_constant_columns(estimator.constant_columns_, estimator.numeric_, estimator.extrinsic_)
    return estimator
