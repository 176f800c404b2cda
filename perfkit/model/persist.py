"""Saved models: the one JSON codec of every model perfkit writes (never pickle, never eval).

Every fitted model writes the envelope ``{"format": "perfkit.<Class>", "version": N, "settings": {...},
"fitted": {...}}``. :class:`SavedModel` gives a class ``to_doc``/``from_doc`` (document dicts) and
``to_json``/``from_json``/``save``/``load`` (text or files) from two hooks of its own: the ``fitted``
object it writes (``_fitted_doc``) and how it rebuilds itself from a checked one (``_restore``).
:func:`read_envelope` makes every check the envelope needs, and a :class:`FittedReader` the checks of
the values inside ``fitted``; each failure is one ``ValueError`` that names the key at fault (and the
file). :func:`load_model` reads the ``format`` and hands the document to that class:
the forms' formats come from :mod:`perfkit.model.forms.registry` (read on first load, so this module imports no
form), the wrappers' from :data:`WRAPPER_FORMATS` (models around forms).
"""
from __future__ import annotations

import importlib
import json
import os
from typing import Any, ClassVar

import numpy as np

from .._io import atomic_write, check_input_file

__all__ = ["WRAPPER_FORMATS", "model_formats", "ENVELOPE_KEYS", "SavedModel", "FittedReader", "load_model",
           "model_from_doc", "read_envelope", "dump_json", "load_json", "jsonable", "json_tree", "json_kind",
           "is_number", "is_finite", "leverage_from_doc"]

#: ``format`` of a saved model the registry does not list → (module of :mod:`perfkit.model`, class): the wrappers (a
#: model around a form, not a form) and the forms a scaling study builds itself (the median of forms; the
#: communication-prior form, which needs the hardware's facts); the registry's forms are in
#: :mod:`perfkit.model.forms.registry`
WRAPPER_FORMATS = {
    "perfkit.ConformalRegressor": ("uncertainty.conformal", "ConformalRegressor"),
    "perfkit.ScaleIntervalModel": ("uncertainty.scale_intervals", "ScaleIntervalModel"),
    "perfkit.MedianOfModels": ("forms.median", "MedianOfModels"),
    "perfkit.BlendOfModels": ("forms.median", "BlendOfModels"),
    "perfkit.CommPriorStepModel": ("forms.commprior", "CommPriorStepModel"),
    "perfkit.BoostedStepModel": ("forms.boosted", "BoostedStepModel"),
    "perfkit.GroupIntervalModel": ("uncertainty.group_intervals", "GroupIntervalModel"),
}
#: the keys of every model document, in the order they are written
ENVELOPE_KEYS = ("format", "version", "settings", "fitted")


# ------------------------------------------------------------------------------------ JSON values
def jsonable(v):
    """``v`` with a NumPy scalar turned into the Python scalar JSON writes (anything else unchanged)."""
    return v.item() if isinstance(v, np.generic) else v


def json_tree(v):
    """Settings as plain JSON values (tuples and arrays as lists, NumPy scalars as Python ones)."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple, np.ndarray)):
        return [json_tree(x) for x in v]
    if isinstance(v, dict):
        return {str(k): json_tree(x) for k, x in v.items()}
    return v


def json_kind(v) -> str:
    """What a parsed JSON value is, in words, for error messages ("an object", "a list", ...)."""
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null",
            int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def is_number(v) -> bool:
    """``v`` is an int or float (Python or NumPy), not a bool."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def is_finite(v) -> bool:
    """``v`` is a number that float64 holds finitely (an int too large for float64 is not)."""
    try:
        return is_number(v) and bool(np.isfinite(float(v)))
    except OverflowError:
        return False


def dump_json(doc, path=None) -> str:
    """A model document as JSON text, also written atomically to ``path`` when given (a crash never leaves
    half a file). Floats are written with Python's shortest round-trip repr, so they read back bit for bit."""
    text = json.dumps(doc, indent=1)
    if path is not None:
        atomic_write(path, text)
    return text


def load_json(source):
    """Parse a model JSON (text or file) → (document, ``" 'path'"`` or ``""`` for error messages).

    ``source`` is JSON text (a string starting with ``{`` or ``[``) or a path. A missing file raises
    ``FileNotFoundError``; a folder, a binary file, invalid or too deeply nested JSON one ``ValueError``
    naming the file.
    """
    if isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
        text, where = source, ""
    elif isinstance(source, (str, os.PathLike)):
        path = check_input_file(source, "model JSON")
        where = f" {str(path)!r}"
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"model JSON{where}: not a text file (cannot decode it as UTF-8)") from None
    else:
        raise ValueError(f"model JSON: expected JSON text or a file path, got {type(source).__name__}")
    try:
        return json.loads(text), where
    except json.JSONDecodeError as exc:
        raise ValueError(f"model JSON{where}: invalid JSON at line {exc.lineno}, column {exc.colno}: "
                         f"{exc.msg}") from None
    except RecursionError:
        raise ValueError(f"model JSON{where}: nested too deeply (not a model file)") from None


# ------------------------------------------------------------------------------------ checks
class FittedReader:
    """The checks of the values of one document's ``fitted`` object.

    Each method returns the checked value or raises the ``ValueError`` of :meth:`fail`, which starts with
    ``model JSON 'file':`` and names the key (``fitted.coef: expected 4 values, got 3``).
    """

    def __init__(self, fitted: dict, where: str = ""):
        self.fitted = fitted
        self.where = where

    def __getitem__(self, key):
        return self.fitted[key]

    def get(self, key, default=None):
        return self.fitted.get(key, default)

    def fail(self, msg: str) -> ValueError:
        """The error to raise: ``msg`` after the document's name."""
        return ValueError(f"model JSON{self.where}: {msg}")

    @staticmethod
    def short(v) -> str:
        """``repr(v)``, cut to 60 characters."""
        r = repr(v)
        return r if len(r) <= 60 else r[:57] + "..."

    def names(self, key) -> list:
        """A list of strings."""
        v = self.fitted[key]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self.fail(f"fitted.{key}: expected a list of strings, got {self.short(v)}")
        return v

    def numbers(self, key, n=None, finite=True) -> list:
        """A list of numbers (finite unless ``finite=False``, which also admits NaN and ±inf), ``n`` long if given."""
        v = self.fitted[key]
        ok = isinstance(v, list) and all(is_finite(x) or (not finite and isinstance(x, float)) for x in v)
        if not ok:
            what = "finite numbers" if finite else "numbers"
            raise self.fail(f"fitted.{key}: expected a list of {what}, got {self.short(v)}")
        if n is not None and len(v) != n:
            raise self.fail(f"fitted.{key}: expected {n} values, got {len(v)}")
        return v

    def number(self, key, minimum=None, allow_none=False, maximum=None):
        """A finite number (>= ``minimum``, <= ``maximum`` if given) as a float; None passes when ``allow_none``."""
        v = self.fitted[key]
        if v is None and allow_none:
            return None
        if not is_finite(v) or (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
            bounds = (f" >= {minimum}" if minimum is not None else "") + (
                f"{' and' if minimum is not None else ''} <= {maximum}" if maximum is not None else "")
            raise self.fail(f"fitted.{key}: expected a finite number{bounds}, got {self.short(v)}")
        return float(v)

    def count(self, key, minimum=0) -> int:
        """An integer >= ``minimum``."""
        v = self.fitted[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise self.fail(f"fitted.{key}: expected an integer >= {minimum}, got {self.short(v)}")
        return v

    def roles(self, num, cat, ext) -> None:
        """``numeric``, ``categorical`` and ``extrinsic`` are lists of strings equal to the settings' roles."""
        fitted = (self.names("numeric"), self.names("categorical"), self.names("extrinsic"))
        if fitted != (num, cat, ext):
            raise self.fail(f"fitted columns {list(fitted)} do not match the settings' numeric/categorical/extrinsic "
                            f"{[num, cat, ext]}")

    def levels(self, key, cols, nonempty=False, as_seen=False) -> dict:
        """An object with one list of levels (strings or finite numbers) per column of ``cols``; with ``as_seen``
        each list as a fit records the levels it saw (:func:`perfkit.model.roles.levels_seen`): distinct and sorted
        as strings."""
        v = self.fitted[key]
        if not isinstance(v, dict) or sorted(v) != sorted(cols):
            raise self.fail(f"fitted.{key}: expected an object with one list of levels per categorical column "
                            f"{cols}, got {self.short(v)}")
        for c, lv in v.items():
            if not isinstance(lv, list) or not all(_is_level(x) for x in lv) or (nonempty and not lv):
                what = "a non-empty list" if nonempty else "a list"
                raise self.fail(f"fitted.{key}[{c!r}]: expected {what} of levels (strings or numbers), "
                                f"got {self.short(lv)}")
            if as_seen and (len(set(lv)) < len(lv) or lv != sorted(lv, key=str)):
                raise self.fail(f"fitted.{key}[{c!r}]: the levels seen in fit are distinct and sorted as strings, "
                                f"got {self.short(lv)}")
        return v

    def constant_columns(self, columns, key="constant_columns") -> dict:
        """An object of model column → its one value (absent: none)."""
        v = self.fitted.get(key, {})
        if not isinstance(v, dict) or not all(c in columns and _is_level(x) for c, x in v.items()):
            raise self.fail(f"fitted.{key}: expected an object of model column -> value, got {self.short(v)}")
        return dict(v)

    def leverage(self, p: int, keys) -> dict:
        """The arrays of ``fitted.leverage`` for a model of ``p`` terms (:func:`leverage_from_doc`)."""
        return leverage_from_doc(self.fitted["leverage"], p, keys, self.fail, self.short)


def _is_level(x) -> bool:
    return isinstance(x, str) or is_finite(x)


def leverage_from_doc(v, p: int, keys, fail, short) -> dict:
    """The arrays of a model's saved ``fitted.leverage`` object, checked: ``keys`` exactly, of ``n`` (an integer
    >= 1), ``center`` and ``scale`` (p finite numbers, scale > 0) and ``basis`` (p rows of equal length, finite),
    for a model of p terms; ``fail(message)`` makes the error (naming the object), ``short`` shows the bad value."""

    def vector(a, positive=False):
        return isinstance(a, list) and len(a) == p and all(is_finite(x) and (x > 0 or not positive) for x in a)

    checks = {"n": lambda n: isinstance(n, int) and not isinstance(n, bool) and n >= 1,
              "center": vector, "scale": lambda a: vector(a, positive=True),
              "basis": lambda b: isinstance(b, list) and len(b) == p and all(
                  isinstance(r, list) and len(r) == len(b[0]) and all(is_finite(x) for x in r) for r in b)}
    if not (isinstance(v, dict) and sorted(v) == sorted(keys) and all(checks[k](v[k]) for k in keys)):
        what = {"n": "n an integer >= 1", "center": f"center {p} finite numbers",
                "scale": f"scale {p} finite numbers > 0", "basis": f"basis {p} rows of equal length"}
        raise fail(f"fitted.leverage: expected {{{', '.join(keys)}}} for {p} terms "
                   f"({', '.join(what[k] for k in keys)}), got {short(v)}")
    out = {k: (v[k] if k == "n" else np.asarray(v[k], dtype=float)) for k in keys}
    basis = v["basis"]
    out["basis"] = out["basis"].reshape(p, len(basis[0]) if basis else 0)
    return out


def _check_head(doc, where: str, json_format: str, json_version: int) -> None:
    """An object with ``format`` = ``json_format``, a supported ``version``, and only the envelope's keys."""
    reader = FittedReader({}, where)
    fail, short = reader.fail, reader.short
    if not isinstance(doc, dict):
        raise fail(f"expected an object at the top level, got {json_kind(doc)}")
    if "format" not in doc:
        raise fail(f"not a {json_format} document ('format' is missing)")
    if doc["format"] != json_format:
        kind = "" if isinstance(doc["format"], str) else f" ({json_kind(doc['format'])})"
        raise fail(f"format {short(doc['format'])}{kind} is not {json_format!r}: not a {json_format} document")
    if "version" not in doc:
        raise fail("'version' is missing")
    version = doc["version"]
    if isinstance(version, bool) or not isinstance(version, int):
        raise fail(f"version: expected an integer, got {short(version)}")
    if version > json_version:
        raise fail(f"version {version} is newer than this perfkit supports ({json_version}); upgrade perfkit")
    if version < 1:
        raise fail(f"version {version} is not a valid version (1 to {json_version})")
    for key in doc:
        if key not in ENVELOPE_KEYS:
            raise fail(f"unexpected key {key!r} at the top level")
    for key in ("settings", "fitted"):
        if key not in doc:
            raise fail(f"{key!r} is missing")
        if not isinstance(doc[key], dict):
            raise fail(f"{key}: expected an object, got {json_kind(doc[key])}")


def read_envelope(cls, doc, where: str = ""):
    """Check the envelope of a parsed document of ``cls`` (a :class:`SavedModel`) and build its unfitted model.

    Checks: an object with ``format`` = ``cls.json_format``, a supported ``version``, ``settings`` holding
    exactly ``cls._setting_names()`` (any of ``cls.optional_settings`` may be missing: the constructor's
    default is used), valid for ``cls._from_settings``, and ``fitted`` holding ``cls.fitted_keys`` (plus any
    of ``cls.optional_fitted_keys``). Returns ``(model, checked, reader)``: the unfitted model, what
    ``_from_settings`` checked, and a :class:`FittedReader` of ``fitted``.
    """
    _check_head(doc, where, cls.json_format, cls.json_version)
    settings, fitted = doc["settings"], doc["fitted"]
    reader = FittedReader(fitted, where)
    params = cls._setting_names()
    for key in settings:
        if key not in params:
            raise reader.fail(f"settings: unexpected key {key!r} (not a {cls.__name__} parameter)")
    for key in params:
        if key not in settings and key not in cls.optional_settings:
            raise reader.fail(f"settings: {key!r} is missing")
    try:
        model, checked = cls._from_settings(settings)
    except ValueError as exc:
        raise reader.fail(f"settings: {exc}") from None
    for key in cls.fitted_keys:
        if key not in fitted:
            raise reader.fail(f"fitted: {key!r} is missing")
    for key in fitted:
        if key not in tuple(cls.fitted_keys) + tuple(cls.optional_fitted_keys):
            raise reader.fail(f"fitted: unexpected key {key!r}")
    return model, checked, reader


# ------------------------------------------------------------------------------------ the codec
class SavedModel:
    """A model that saves itself as a JSON document of :mod:`perfkit.model.persist` (never pickle).

    A subclass states its ``json_format``, ``json_version``, ``fitted_keys`` (and any
    ``optional_fitted_keys`` and ``optional_settings`` that documents of earlier perfkit versions lack) and
    implements ``_fitted_doc`` (the ``fitted`` object) and ``_restore`` (the fitted model from a checked
    one); ``fitted_attribute`` names the attribute that exists once the model is fitted.
    """

    json_format: ClassVar[str]
    json_version: ClassVar[int] = 1
    fitted_keys: ClassVar[tuple] = ()
    optional_fitted_keys: ClassVar[tuple] = ()
    optional_settings: ClassVar[tuple] = ()
    fitted_attribute: ClassVar[str]

    def _check_fitted(self) -> None:
        """``NotFittedError`` (:func:`sklearn.utils.validation.check_is_fitted`) before ``fit``."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, self.fitted_attribute, msg=f"{type(self).__name__} is not fitted yet; call fit first")

    # ---------------------------------------------------------------- hooks
    def _settings_doc(self) -> dict:
        """The ``settings`` object: every constructor parameter as plain JSON."""
        return {k: json_tree(v) for k, v in self.get_params().items()}

    def _fitted_doc(self) -> dict:
        """The ``fitted`` object."""
        raise NotImplementedError

    @classmethod
    def _setting_names(cls) -> list:
        """The keys of ``settings``: the constructor's parameters."""
        return cls._get_param_names()

    @classmethod
    def _from_settings(cls, settings: dict):
        """(unfitted model, its checked settings) from a document's settings; ``ValueError`` for a bad one."""
        model = cls(**settings)
        return model, model._settings()

    @classmethod
    def _restore(cls, model, checked, reader: FittedReader):
        """Check the values of ``reader`` (a document's ``fitted``) and set them on ``model``; returns it."""
        raise NotImplementedError

    # ---------------------------------------------------------------- the interface
    def to_doc(self) -> dict[str, Any]:
        """The fitted model as a JSON document: ``{"format", "version", "settings", "fitted"}``."""
        self._check_fitted()
        return {"format": self.json_format, "version": self.json_version, "settings": self._settings_doc(),
                "fitted": self._fitted_doc()}

    @classmethod
    def from_doc(cls, doc, where: str = ""):
        """Rebuild a fitted model from a parsed document (:meth:`to_doc`), checked completely first: anything
        else raises one ``ValueError`` naming the key (and ``where``, the file)."""
        model, checked, reader = read_envelope(cls, doc, where)
        return cls._restore(model, checked, reader)

    def to_json(self, path=None) -> str:
        """:meth:`to_doc` as JSON text, also written atomically to ``path`` when given."""
        return dump_json(self.to_doc(), path)

    @classmethod
    def from_json(cls, source):
        """Rebuild a fitted model from :meth:`to_json` output: JSON text or a file path (:meth:`from_doc`);
        a missing file raises ``FileNotFoundError``."""
        doc, where = load_json(source)
        return cls.from_doc(doc, where)

    def save(self, path) -> None:
        """Write the model to ``path`` as JSON (:meth:`to_json`)."""
        self.to_json(path)

    @classmethod
    def load(cls, path):
        """Read a model that :meth:`save` wrote (same checks as :meth:`from_json`)."""
        return cls.from_json(path)


def model_formats() -> dict[str, tuple[str, str]]:
    """Every ``format`` a saved model may have → (module of :mod:`perfkit.model`, class): the forms of the
    registry, then the wrappers of :data:`WRAPPER_FORMATS`."""
    from .forms.registry import REGISTRY

    forms = {f.json_format: f.location for f in REGISTRY}
    return {**forms, **WRAPPER_FORMATS}


def model_from_doc(doc, where: str = ""):
    """Build the model a parsed JSON document describes (any format of :func:`model_formats`)."""
    if not isinstance(doc, dict):
        raise ValueError(f"model JSON{where}: expected an object at the top level, got {json_kind(doc)}")
    fmt, formats = doc.get("format"), model_formats()
    if not isinstance(fmt, str) or fmt not in formats:
        if "format" not in doc:
            shown = "'format' is missing:"
        else:
            shown = f"format {FittedReader.short(fmt)}" + ("" if isinstance(fmt, str) else f" ({json_kind(fmt)})")
            shown += " is"
        raise ValueError(f"model JSON{where}: {shown} not a perfkit model; expected one of {sorted(formats)}")
    module, name = formats[fmt]
    cls = getattr(importlib.import_module(f"perfkit.model.{module}"), name)
    return cls.from_doc(doc, where)


def load_model(source):
    """The fitted model saved in ``source`` (a path or JSON text), whatever its class.

    Raises one ``ValueError`` naming the file and the key at fault for anything that
    is not a complete perfkit model JSON, ``FileNotFoundError`` for a missing file.
    """
    doc, where = load_json(source)
    return model_from_doc(doc, where)
