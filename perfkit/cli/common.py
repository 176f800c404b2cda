"""Helpers shared by the ``perfkit`` subcommands: option values and messages."""
from __future__ import annotations

import sys

__all__ = ["check_interval", "literal", "need_intervals", "number_or_text", "pairs",
           "print_warnings"]


def literal(text: str):
    """``-p NAME VALUE``: a Python literal (number, bool, list, tuple, quoted string) or else the text itself."""
    import ast

    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return value


def print_warnings(caught) -> None:
    """Each distinct message of the recorded warnings ``caught`` once on stderr, prefixed ``perfkit: warning:``."""
    seen = set()
    for w in caught:
        msg = str(w.message)
        if msg not in seen:
            seen.add(msg)
            print(f"perfkit: warning: {msg}", file=sys.stderr, flush=True)


def number_or_text(value: str):
    """``"4"`` → 4, ``"0.5"`` → 0.5, anything else unchanged."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def pairs(text: str, flag: str) -> dict:
    """``a=1,b=x`` → {"a": 1, "b": "x"} (numbers parsed; a value may not be empty)."""
    out = {}
    for item in [t.strip() for t in text.split(",") if t.strip()]:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{flag}: expected key=value pairs separated by commas, got {item!r}")
        out[key.strip()] = number_or_text(value.strip())
    return out


def check_interval(value: float) -> float:
    """``--interval``: a coverage strictly between 0 and 1, returned unchanged."""
    import math

    if not math.isfinite(value) or not 0 < value < 1:
        raise ValueError(f"--interval: expected a coverage strictly between 0 and 1 (e.g. 0.9), got {value:g}")
    return value


def need_intervals(model, path) -> None:
    """A model loaded from ``path`` that cannot give intervals (saved without calibration) is an error."""
    if not callable(getattr(model, "predict_interval", None)):
        raise ValueError(f"{path}: this model was saved without interval calibration; refit it with "
                         "`perfkit fit ... --calibrate` (thesis form) or any other --form")
