"""A chapter's computed results as data: :class:`Results`, written to and read from a folder as JSON.

A chapter's ``compute(params)`` returns a :class:`Results` dataclass; everything a reader sees (tables,
figures, claims, readings) is a function of it. :meth:`Results.to_dir` writes it as one JSON document
(``results.json``) and :meth:`Results.from_dir` reads it back **equal in type and value, floats bit for
bit**, so presentation from loaded results gives exactly what it gives from fresh ones.

What a field may hold (:func:`encode`; anything else raises ``TypeError`` naming the field at
:meth:`Results.to_dir` time, never at load time):

* ``None``, ``bool``, ``int``, ``float`` (NaN and ±inf included), ``str``;
* ``list``, ``tuple``, ``dict`` of these (any hashable encodable keys: strings, numbers, tuples);
* numpy arrays of numbers or booleans, numpy scalars;
* pandas ``DataFrame``, ``Series`` and ``Index`` (also ``MultiIndex``) whose columns hold numbers, booleans,
  strings, ``None``/NaN or categories;
* a fitted perfkit model (anything :func:`perfkit.model.persist.model_from_doc` reads: its ``to_json``
  document);
* a dataclass of an allowed result type (:func:`storable_classes`): every :class:`Results` subclass, a class
  marked :func:`storable` (the chapters' nested parts), :class:`~perfkit.evidence.Evidence` and
  :class:`~perfkit.model.selection.fitting.RepeatedFit` and :class:`~perfkit.plan.planner.PlanResult`, rebuilt from
  its fields.

No pickle and no eval: a class is found by its path in that allow-list, never imported by a name read from a
file. The file carries a SHA-256 digest of its meta and results; :meth:`Results.from_dir` refuses a file
whose content does not match it (an edited number), one nested deeper than :data:`MAX_DEPTH`, and a class
outside the allow-list, each with a :class:`StoreError` that says which.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["Results", "StoreError", "encode", "decode", "storable", "storable_classes", "content_digest", "FORMAT",
           "VERSION", "RESULTS_FILE", "MAX_DEPTH"]

#: ``format`` and ``version`` of ``results.json`` (version 2: the file carries its content digest)
FORMAT = "perfkit.results"
VERSION = 2
#: the deepest nesting of containers a results file may have (chapters' results nest a few levels)
MAX_DEPTH = 64
#: the file :meth:`Results.to_dir` writes
RESULTS_FILE = "results.json"
_TAG = "__perfkit__"


def _class_path(obj_or_cls) -> str:
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    return f"{cls.__module__}:{cls.__qualname__}"


class StoreError(ValueError):
    """A results file that cannot be trusted or read: another format, a digest that does not match its content, a
    class outside the allow-list, nesting deeper than :data:`MAX_DEPTH`."""


#: the allowed result types by path: :class:`Results` subclasses and :func:`storable` classes register here
_STORABLE: dict = {}
#: dataclasses of lower layers that chapters' results hold (imported from these fixed modules on first use)
_LIBRARY_CLASSES = ("perfkit.evidence:Evidence", "perfkit.model.selection.fitting:RepeatedFit",
                    "perfkit.plan.planner:PlanResult")


def storable(cls):
    """Class decorator: allow instances of the dataclass ``cls`` in stored results (returns ``cls``)."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"storable: {cls.__qualname__} is not a dataclass")
    _STORABLE[_class_path(cls)] = cls
    return cls


def _allowed() -> dict:
    """The registry of allowed result types, the lower layers' classes added on first use (not copied: encode
    and decode look a class up once per stored dataclass)."""
    if not all(path in _STORABLE for path in _LIBRARY_CLASSES):
        for path in _LIBRARY_CLASSES:
            module, _, name = path.partition(":")
            _STORABLE[path] = getattr(importlib.import_module(module), name)
    return _STORABLE


def storable_classes() -> dict:
    """Path (``module:QualName``) → class of every result type a results file may hold (a copy)."""
    return dict(_allowed())


def _find_class(path) -> type:
    cls = _allowed().get(path) if isinstance(path, str) else None
    if cls is None:
        raise StoreError(f"results: class {path!r} is not an allowed result type")
    return cls


def _float(x: float):
    return x if math.isfinite(x) else {_TAG: "float", "v": repr(x)}


def _array(a: np.ndarray, where: str):
    if a.dtype.kind in "biuf":
        flat = [_float(float(v)) if a.dtype.kind == "f" else v for v in a.ravel().tolist()]
        return {_TAG: "array", "dtype": a.dtype.str, "shape": list(a.shape), "data": flat}
    if a.dtype.kind == "O":
        return {_TAG: "array", "dtype": "object", "shape": list(a.shape),
                "data": [encode(v, where) for v in a.ravel().tolist()]}
    if a.dtype.kind == "U":
        return {_TAG: "array", "dtype": a.dtype.str, "shape": list(a.shape), "data": a.ravel().tolist()}
    raise TypeError(f"{where}: numpy arrays of dtype {a.dtype} cannot be stored")


def _column(values, where: str):
    """One pandas column or index level: its dtype and values."""
    import pandas as pd

    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return {"dtype": "category", "ordered": bool(dtype.ordered),
                "categories": _column(pd.Index(dtype.categories), where),
                "codes": pd.Categorical(values).codes.tolist()}
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        return {"dtype": dtype.str, "data": _array(np.asarray(values), where)}
    if isinstance(dtype, np.dtype) and dtype.kind == "M":
        return {"dtype": dtype.str, "data": np.asarray(values).astype("int64").tolist()}
    kind = "str" if isinstance(dtype, pd.StringDtype) else "object"
    return {"dtype": kind, "na": str(getattr(dtype, "na_value", "")), "storage": getattr(dtype, "storage", None),
            "data": [encode(v, where) for v in list(values)]}


def _uncolumn(doc):
    import pandas as pd

    dtype = doc["dtype"]
    if dtype == "category":
        cats = _uncolumn(doc["categories"])
        return pd.Categorical.from_codes(doc["codes"], categories=pd.Index(cats), ordered=doc["ordered"])
    if dtype == "object":
        return np.array([decode(v) for v in doc["data"]] + [None], dtype=object)[:-1]
    if dtype == "str":
        storage = doc.get("storage")
        na = np.nan if doc.get("na") == "nan" else pd.NA
        return pd.array([decode(v) for v in doc["data"]], dtype=pd.StringDtype(storage=storage, na_value=na))
    if np.dtype(dtype).kind == "M":
        return np.asarray(doc["data"], dtype="int64").astype(dtype)
    return decode(doc["data"])


def _index(index, where: str):
    import pandas as pd

    if isinstance(index, pd.RangeIndex):
        return {"kind": "range", "start": index.start, "stop": index.stop, "step": index.step,
                "name": encode(index.name, where)}
    if isinstance(index, pd.MultiIndex):
        return {"kind": "multi", "names": [encode(n, where) for n in index.names],
                "levels": [_column(index.get_level_values(i), where) for i in range(index.nlevels)]}
    return {"kind": "index", "name": encode(index.name, where), "values": _column(index, where)}


def _unindex(doc):
    import pandas as pd

    if doc["kind"] == "range":
        return pd.RangeIndex(doc["start"], doc["stop"], doc["step"], name=decode(doc["name"]))
    if doc["kind"] == "multi":
        arrays = [_uncolumn(c) for c in doc["levels"]]
        return pd.MultiIndex.from_arrays(arrays, names=[decode(n) for n in doc["names"]])
    return pd.Index(_uncolumn(doc["values"]), name=decode(doc["name"]), tupleize_cols=False)


def _frame(df, where: str):
    return {_TAG: "frame", "index": _index(df.index, where), "columns": _index(df.columns, where),
            "data": [_column(df.iloc[:, i], f"{where}[{df.columns[i]!r}]") for i in range(df.shape[1])],
            "attrs": encode(dict(df.attrs), where)}


def _unframe(doc):
    import pandas as pd

    index, columns = _unindex(doc["index"]), _unindex(doc["columns"])
    data = {i: _uncolumn(c) for i, c in enumerate(doc["data"])}
    df = pd.DataFrame(data, index=index)
    df.columns = columns
    df.attrs.update(decode(doc["attrs"]))
    return df


def encode(value, where: str = "results"):
    """``value`` as a JSON-ready tree (see the module docstring for what may be stored); ``TypeError`` names
    ``where`` (the field path) for anything else."""
    import pandas as pd

    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value) if type(value) is int else {_TAG: "npscalar", "v": _array(np.asarray(value), where)}
    if isinstance(value, (float, np.floating)):
        return _float(float(value)) if type(value) is float else {_TAG: "npscalar", "v": _array(np.asarray(value),
                                                                                                 where)}
    if isinstance(value, np.bool_):
        return {_TAG: "npscalar", "v": _array(np.asarray(value), where)}
    if isinstance(value, np.ndarray):
        return _array(value, where)
    if isinstance(value, pd.DataFrame):
        return _frame(value, where)
    if isinstance(value, pd.Series):
        return {_TAG: "series", "name": encode(value.name, where), "index": _index(value.index, where),
                "values": _column(value, where)}
    if isinstance(value, pd.Index):
        return {_TAG: "index", "index": _index(value, where)}
    if isinstance(value, (list, tuple)):
        items = [encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return items if type(value) is list else {_TAG: "tuple", "items": items}
    if isinstance(value, dict):
        if all(type(k) is str and not k.startswith("__") for k in value):
            return {k: encode(v, f"{where}[{k!r}]") for k, v in value.items()}
        return {_TAG: "dict", "items": [[encode(k, where), encode(v, f"{where}[{k!r}]")] for k, v in value.items()]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if _allowed().get(_class_path(value)) is not type(value):
            raise TypeError(f"{where}: a {_class_path(value)} is not an allowed result type (mark its class with "
                            "perfkit.chapters.store.storable)")
        fields = {f.name: encode(getattr(value, f.name), f"{where}.{f.name}")
                  for f in dataclasses.fields(value) if f.init}
        return {_TAG: "dataclass", "class": _class_path(value), "fields": fields}
    if type(value).__module__.startswith("perfkit.model") and callable(getattr(value, "to_json", None)):
        return {_TAG: "model", "doc": json.loads(value.to_json())}
    raise TypeError(f"{where}: a {type(value).__module__}.{type(value).__qualname__} cannot be stored in chapter "
                    "results (store numbers, tables, predictions or a perfkit model's JSON instead)")


_DECODERS = {
    "float": lambda d: float(d["v"]),
    "npscalar": lambda d: decode(d["v"])[()],
    "tuple": lambda d: tuple(decode(v) for v in d["items"]),
    "dict": lambda d: {decode(k): decode(v) for k, v in d["items"]},
    "frame": _unframe,
    "index": lambda d: _unindex(d["index"]),
}


def _decode_series(d):
    import pandas as pd

    return pd.Series(_uncolumn(d["values"]), index=_unindex(d["index"]), name=decode(d["name"]))


def _decode_array(d):
    if d["dtype"] == "object":
        out = np.empty(len(d["data"]), dtype=object)
        out[:] = [decode(v) for v in d["data"]]
        return out.reshape(d["shape"])
    data = [decode(v) for v in d["data"]]
    return np.asarray(data, dtype=np.dtype(d["dtype"])).reshape(d["shape"])


def _decode_dataclass(d):
    cls = _find_class(d["class"])
    if not dataclasses.is_dataclass(cls):
        raise ValueError(f"results: {d['class']} is not a dataclass")
    return cls(**{k: decode(v) for k, v in d["fields"].items()})


def _decode_model(d):
    from ..model.persist import model_from_doc

    return model_from_doc(d["doc"])


_DECODERS.update(array=_decode_array, series=_decode_series, dataclass=_decode_dataclass, model=_decode_model)


def _check_depth(tree, limit: int = MAX_DEPTH) -> None:
    """``StoreError`` when containers in ``tree`` nest deeper than ``limit`` (checked without recursion)."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (list, dict)):
            if depth >= limit:
                raise StoreError(f"results: nested deeper than {limit} levels")
            stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node))


def decode(tree):
    """The value :func:`encode` turned into ``tree``."""
    if isinstance(tree, list):
        return [decode(v) for v in tree]
    if isinstance(tree, dict):
        tag = tree.get(_TAG)
        if tag is None:
            return {k: decode(v) for k, v in tree.items()}
        if tag not in _DECODERS:
            raise StoreError(f"results: unknown tag {tag!r}")
        return _DECODERS[tag](tree)
    return tree


def content_digest(meta, results) -> str:
    """SHA-256 of a results file's ``meta`` and ``results`` trees, as their canonical JSON text."""
    text = json.dumps([meta, results], allow_nan=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


class Results:
    """Base of a chapter's typed results (subclasses are dataclasses): written and read as one JSON file.

    Every subclass is an allowed result type (:func:`storable_classes`)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _STORABLE[_class_path(cls)] = cls

    def to_dir(self, path, meta: dict | None = None) -> Path:
        """Write ``results.json`` into the folder ``path`` (created; replaced atomically); returns the file.

        ``meta`` (e.g. the cache key and its inputs) is stored beside the results.
        """
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        tree, meta = encode(self, type(self).__name__), json.loads(json.dumps(meta or {}, allow_nan=False))
        doc = {"format": FORMAT, "version": VERSION, "class": _class_path(self), "meta": meta,
               "digest": content_digest(meta, tree), "results": tree}
        text = json.dumps(doc, allow_nan=False, separators=(",", ":"))
        fd, tmp = tempfile.mkstemp(dir=path, prefix=".results-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path / RESULTS_FILE)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path / RESULTS_FILE

    @classmethod
    def from_dir(cls, path):
        """The results :meth:`to_dir` wrote into ``path``, checked: :class:`StoreError` for a file of another
        format, version or class, a content digest that does not match, nesting deeper than :data:`MAX_DEPTH`
        or a class outside the allow-list; ``FileNotFoundError`` when there is none."""
        return cls.read_dir(path)[0]

    @classmethod
    def read_dir(cls, path) -> tuple:
        """``(results, meta)`` of ``path``, the file read and checked once (as by :meth:`from_dir`)."""
        file = Path(path) / RESULTS_FILE
        doc = _read_checked(file)
        if doc.get("class") != _class_path(cls) and cls is not Results:
            raise StoreError(f"{file}: holds {doc.get('class')}, not {_class_path(cls)}")
        out = decode(doc["results"])
        if not isinstance(out, cls):
            raise StoreError(f"{file}: holds a {type(out).__name__}, not a {cls.__name__}")
        return out, doc["meta"]


def _read_checked(file: Path) -> dict:
    """The parsed document of a results file whose format, version, depth and digest check out."""
    text = file.read_text()
    try:
        doc = json.loads(text)
    except RecursionError:
        raise StoreError(f"{file}: nested deeper than {MAX_DEPTH} levels") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise StoreError(f"{file}: not a {FORMAT} file of version {VERSION}")
    _check_depth(doc.get("results"))
    _check_depth(doc.get("meta"))
    if not isinstance(doc.get("meta"), dict) or doc.get("digest") != content_digest(doc["meta"], doc.get("results")):
        raise StoreError(f"{file}: its content does not match its digest (edited or damaged)")
    return doc
