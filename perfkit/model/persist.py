"""Saved models: one JSON loader for every model perfkit writes (never pickle).

Every fitted model writes ``{"format": "perfkit.<Class>", "version": N, "settings": ...,
"fitted": ...}`` with its ``to_json``; :func:`load_model` reads the ``format`` and hands
the document to that class's ``from_json``, which checks it completely. The registry
:data:`MODEL_FORMATS` is the one place that knows which classes exist.
"""
from __future__ import annotations

import importlib
import json

__all__ = ["MODEL_FORMATS", "load_model", "model_from_doc"]

#: ``format`` of a model JSON → (module of :mod:`perfkit.model`, class)
MODEL_FORMATS = {
    "perfkit.GenericPerformanceModel": ("generic", "GenericPerformanceModel"),
    "perfkit.LogLinearModel": ("forms", "LogLinearModel"),
    "perfkit.HybridModel": ("hybrid", "HybridModel"),
    "perfkit.ConformalRegressor": ("intervals", "ConformalRegressor"),
}


def model_from_doc(doc, where: str = ""):
    """Build the model a parsed JSON document describes (any format of :data:`MODEL_FORMATS`)."""
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if fmt not in MODEL_FORMATS:
        shown = "no 'format'" if fmt is None else f"format {fmt!r}"
        raise ValueError(f"model JSON{where}: {shown} is not a perfkit model; expected one of "
                         f"{sorted(MODEL_FORMATS)}")
    module, name = MODEL_FORMATS[fmt]
    cls = getattr(importlib.import_module(f"perfkit.model.{module}"), name)
    try:
        return cls.from_json(json.dumps(doc))
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(msg.replace("model JSON:", f"model JSON{where}:", 1) if where else msg) from None


def load_model(source):
    """The fitted model saved in ``source`` (a path or JSON text), whatever its class.

    Raises one ``ValueError`` naming the file and the key at fault for anything that
    is not a complete perfkit model JSON, ``FileNotFoundError`` for a missing file.
    """
    from .generic import _load_json

    doc, where = _load_json(source)
    return model_from_doc(doc, where)
