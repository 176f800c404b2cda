"""Hands-on exercises, checked in the notebook: :func:`check` returns a :class:`Feedback` the notebook shows.

An exercise asks the student to write something (most often a function) under a name the exercise fixes
(:attr:`Exercise.answer`); the exercise cell ends with ``check("N.k", name)``. :attr:`Exercise.check` calls the
answer on inputs of its own (shipped data or small synthetic cases, never the notebook's variables, so that a check
means the same wherever it runs) and returns ``None`` when the answer is right, else the key of the hint that fits
the mistake: each typical wrong answer has its own hint, and ``"wrong"`` is the hint for any other. An answer not
yet written (``...``, a function whose body is ``...``, one that raises ``NotImplementedError``) gets "not answered
yet", and an answer that raises gets the exception in one line, never a traceback.

Each unit's module (``perfkit.course.<slug>``) lists its exercises in ``EXERCISES``; :func:`exercise` finds one by
its id (``"<unit>.<k>"``). The instructor's reference solution of every exercise passes and each typical wrong
answer gets its hint: ``notebooks/course/instructor/solutions/`` holds both, and the test suite checks both ways.
"""
from __future__ import annotations

import html
import importlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["Exercise", "Feedback", "Unanswered", "check", "exercise", "exercises", "call", "close", "GENERIC_KEYS"]

#: the feedback keys every exercise has without declaring them
GENERIC_KEYS = ("correct", "unanswered", "raised")


class Unanswered(Exception):
    """Raised by :func:`call` when the answer returned None: its body is not written yet."""


@dataclass(frozen=True)
class Exercise:
    """One exercise.

    Parameters
    ----------
    id : str
        ``"<unit>.<k>"``, e.g. ``"2.1"``.
    answer : str
        The name the student defines (the second argument of ``check`` in the notebook).
    title : str
        What the exercise asks, in a few words (the syllabus and the feedback show it).
    check : callable
        ``check(answer) -> None | str``: None when right, else a key of ``hints``.
    hints : dict
        Hint key → text; ``"wrong"`` (any other mistake) is required.
    """

    id: str
    answer: str
    title: str
    check: Callable = field(repr=False)
    hints: dict = field(repr=False, default_factory=dict)

    def __post_init__(self):
        unit, _, k = str(self.id).partition(".")
        if not (unit.isdigit() and k.isdigit()):
            raise ValueError(f"exercise id {self.id!r}: expected '<unit>.<k>', e.g. '2.1'")
        if "wrong" not in self.hints or any(k in GENERIC_KEYS for k in self.hints):
            raise ValueError(f"exercise {self.id}: hints need a 'wrong' key and none of {GENERIC_KEYS}")


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer: ``passed``, the hint ``key`` (``"correct"`` when passed) and the ``message``."""

    exercise: str
    passed: bool
    key: str
    message: str

    def __str__(self) -> str:
        mark = "✓" if self.passed else "✗"
        verdict = "correct" if self.passed else "not yet"
        return f"{mark} Exercise {self.exercise}: {verdict}. {self.message}".rstrip()

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#b35900"
        return (f'<div style="border-left:4px solid {colour};padding:2px 8px">'
                f"{html.escape(str(self))}</div>")


def exercise(exercise_id: str) -> Exercise:
    """The exercise with id ``exercise_id`` (``"<unit>.<k>"``), from its unit's module."""
    from .syllabus import unit

    unit_number = str(exercise_id).partition(".")[0]
    try:
        module = importlib.import_module(unit(unit_number).module)
    except ValueError:
        raise ValueError(f"exercise {exercise_id!r}: no unit {unit_number!r} in the course") from None
    for ex in module.EXERCISES:
        if ex.id == str(exercise_id):
            return ex
    raise ValueError(f"exercise {exercise_id!r}: unit {unit_number} has {[e.id for e in module.EXERCISES]}")


def exercises(unit_key=None) -> list:
    """Every exercise of the course, or of one unit (number or slug), in order."""
    from .syllabus import UNITS, unit

    units = UNITS if unit_key is None else (unit(unit_key),)
    return [ex for u in units for ex in importlib.import_module(u.module).EXERCISES]


def _unwritten(answer) -> bool:
    return answer is None or answer is Ellipsis


def check(exercise_id: str, answer) -> Feedback:
    """Check ``answer`` against exercise ``exercise_id``; the returned :class:`Feedback` shows itself in a notebook.
    Never raises for a wrong, unwritten or failing answer: that is what the feedback says."""
    ex = exercise(exercise_id)
    if _unwritten(answer):
        return Feedback(ex.id, False, "unanswered", f"Not answered yet: write {ex.answer} ({ex.title}).")
    try:
        key = ex.check(answer)
    except (Unanswered, NotImplementedError):
        return Feedback(ex.id, False, "unanswered", f"Not answered yet: {ex.answer} returns nothing; write its body "
                                                    f"({ex.title}).")
    except Exception as exc:  # the student's code failed: say how, in one line
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return Feedback(ex.id, False, "raised", f"{ex.answer} raised {type(exc).__name__}"
                                                + (f": {text}" if text else "") + ".")
    if key is None:
        return Feedback(ex.id, True, "correct", "")
    if key not in ex.hints:
        raise RuntimeError(f"exercise {ex.id}: its check returned {key!r}, not one of its hints {sorted(ex.hints)}")
    return Feedback(ex.id, False, key, "Hint: " + ex.hints[key])


def call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` for a check: :class:`Unanswered` when ``fn`` is not callable-and-written (returns
    None); a non-callable answer where a function was asked raises ``TypeError`` with one line saying so."""
    if _unwritten(fn):
        raise Unanswered
    if not callable(fn):
        raise TypeError(f"expected a function, got {type(fn).__name__}")
    out = fn(*args, **kwargs)
    if out is None:
        raise Unanswered
    return out


def close(got, expected, rel: float = 1e-6, abs_: float = 1e-12) -> bool:
    """True when ``got`` equals ``expected`` within ``rel`` (relative) or ``abs_`` elementwise, same shape; False for
    anything that is not numbers of that shape (never raises)."""
    try:
        g = np.asarray(got, dtype=float)
        e = np.asarray(expected, dtype=float)
    except (TypeError, ValueError):
        return False
    if g.shape != e.shape:
        if g.size == 1 and e.size == 1:
            g, e = g.reshape(()), e.reshape(())
        else:
            return False
    return bool(np.allclose(g, e, rtol=rel, atol=abs_, equal_nan=True))
