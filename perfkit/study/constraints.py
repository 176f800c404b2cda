"""Declarative parameter constraints (scikit-learn's ``_parameter_constraints`` style) and the names they use.

A constraint is a small object that says whether a value is allowed (:meth:`Constraint.allows`) and what is
expected, in words (:meth:`Constraint.describe`); a parameter's list of constraints allows a value when any one
of them does (``None`` in the list allows ``None``). :func:`check_constraints` checks every parameter of an
object against its class's ``_parameter_constraints`` and raises one ``ValueError`` naming the first parameter
at fault: ``"<name>: expected <what>, got <value>"``.

Parameters are named as the caller knows them: the Python name (``test_size``) by default, the command-line
flag (``--test-size``) inside :func:`flag_names` (``perfkit fit`` runs the study there). :func:`name` gives the
name and :func:`given` a name with its value (``test_size=0.5`` or ``--test-size 0.5``).
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from numbers import Integral, Real as _Real

__all__ = ["Constraint", "Integer", "Number", "OneOf", "Text", "Flag", "Table", "check_constraints",
           "flag_names", "name", "given"]

#: parameter → command-line flag, while :func:`flag_names` is active (None: Python names)
_FLAGS: ContextVar[dict | None] = ContextVar("perfkit_study_flags", default=None)


@contextmanager
def flag_names(flags: dict):
    """Name parameters by the command-line flags of ``flags`` (parameter → flag) in every message of the block."""
    token = _FLAGS.set(dict(flags))
    try:
        yield
    finally:
        _FLAGS.reset(token)


def name(param: str) -> str:
    """``param`` as the caller knows it: its flag inside :func:`flag_names`, else the Python name."""
    flags = _FLAGS.get()
    return flags.get(param, "--" + param.replace("_", "-")) if flags is not None else param


def given(param: str, value) -> str:
    """``param`` with its value: ``--form hybrid`` inside :func:`flag_names`, else ``form='hybrid'``."""
    if _FLAGS.get() is not None:
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        return f"{name(param)} {shown}"
    return f"{param}={value!r}"


class Constraint:
    """One allowed kind of value; subclasses define :meth:`allows` and :meth:`describe`."""

    def allows(self, value) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class Integer(Constraint):
    """An integer (not a bool) >= ``low`` (when given), and not 0 when ``nonzero``."""

    low: int | None = None
    nonzero: bool = False
    words: str = ""

    def allows(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, Integral):
            return False
        return (self.low is None or value >= self.low) and not (self.nonzero and value == 0)

    def describe(self) -> str:
        if self.words:
            return self.words
        return "a non-zero integer" if self.nonzero else f"an integer >= {self.low}"


@dataclass(frozen=True)
class Number(Constraint):
    """A finite real number (not a bool) in the range given: ``low`` (inclusive unless ``open_low``) to ``high``
    (inclusive; a number, or a callable returning one: a limit defined beside the model loads on first use)."""

    low: float | None = None
    high: object = None
    open_low: bool = False
    words: str = ""

    def _high(self):
        return self.high() if callable(self.high) else self.high

    def allows(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, _Real) or not math.isfinite(float(value)):
            return False
        v = float(value)
        if self.low is not None and (v <= self.low if self.open_low else v < self.low):
            return False
        return self.high is None or v <= self._high()

    def describe(self) -> str:
        lo = "" if self.low is None else f" {'>' if self.open_low else '>='} {self.low:g}"
        hi = "" if self.high is None else f" and at most {self._high():g}"
        return self.words.format(range=f"{lo}{hi}") if self.words else f"a finite number{lo}{hi}"


@dataclass(frozen=True)
class OneOf(Constraint):
    """One of ``options`` (a tuple, or a callable returning one: registries load on first use)."""

    options: object

    def choices(self) -> tuple:
        return tuple(self.options() if callable(self.options) else self.options)

    def allows(self, value) -> bool:
        try:
            return value in self.choices()
        except TypeError:  # an unhashable value
            return False

    def describe(self) -> str:
        return "one of " + ", ".join(repr(c) for c in self.choices())


@dataclass(frozen=True)
class Text(Constraint):
    """A string that is not blank."""

    words: str = "a column name"

    def allows(self, value) -> bool:
        return isinstance(value, str) and bool(value.strip())

    def describe(self) -> str:
        return self.words


@dataclass(frozen=True)
class Flag(Constraint):
    """True or False (a bool, not 0/1)."""

    def allows(self, value) -> bool:
        return isinstance(value, bool)

    def describe(self) -> str:
        return "True or False"


@dataclass(frozen=True)
class Table(Constraint):
    """A mapping of names (strings) to values."""

    def allows(self, value) -> bool:
        return isinstance(value, dict) and all(isinstance(k, str) and k.strip() for k in value)

    def describe(self) -> str:
        return "a mapping of names to values, e.g. {'stride': 2}"


def _shown(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value)


def check_constraints(obj, constraints: dict) -> None:
    """Every parameter of ``obj`` named in ``constraints`` (name → list of constraints, ``None`` meaning the value
    None is allowed) checked in order; the first one at fault raises ``ValueError("<name>: expected …, got …")``."""
    for param, allowed in constraints.items():
        value = getattr(obj, param)
        if value is None and None in allowed:
            continue
        kinds = [c for c in allowed if c is not None]
        if any(c.allows(value) for c in kinds):
            continue
        what = " or ".join(c.describe() for c in kinds) + (" or None" if None in allowed else "")
        raise ValueError(f"{name(param)}: expected {what}, got {_shown(value)}")
