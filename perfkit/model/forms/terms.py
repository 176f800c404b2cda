"""The terms of the log-linear form (:class:`~perfkit.model.forms.loglinear.LogLinearModel`) as small frozen dataclasses.

A term is one column of the design in log space: ``log x`` (:class:`Power`, its coefficient is a power),
``log x · log z`` (:class:`Interaction`, a square when x = z), a category level ``[c = ℓ]`` (:class:`Level`),
a level times ``log x`` (:class:`LevelSlope`), a pair of levels of two categorical columns
(:class:`LevelPair`), a pair times ``log x`` (:class:`PairSlope`) and a hinge ``max(0, log x − log b)``
(:class:`Hinge`: above the break b the power of x changes, a segmented power law), and a cell of levels of three or
more categorical columns (:class:`LevelCell`, for ridge fits only). Each knows its name, its values for the
rows of a table, the terms it is made of (:meth:`Term.parents`: a kept product keeps them), its factor in
the fitted formula, and its saved form, a JSON list ``[kind, *fields]`` (:meth:`Term.to_list`,
:func:`term_from_list`; the layout of every saved LogLinearModel).
"""
from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from typing import Any, ClassVar

import numpy as np

__all__ = ["Term", "Power", "Interaction", "Level", "LevelSlope", "LevelPair", "PairSlope", "Hinge", "LevelCell",
           "TERMS", "KIND_SETTING", "term_from_list", "terms_from_doc"]


@dataclass(frozen=True)
class Term:
    """One term of the log-linear form (a subclass per kind; see the module docstring)."""

    #: the kind's name in saved models and in ``params_``
    kind: ClassVar[str] = ""
    #: position of the kind in :meth:`LogLinearModel.formula <perfkit.model.forms.loglinear.LogLinearModel.formula>`
    order: ClassVar[int] = 0
    #: whether its levels may be the reference level of their column (a saved model's check)
    reference_ok: ClassVar[bool] = False

    def to_list(self) -> list:
        """The saved form: ``[kind, *fields]`` (NumPy scalars as Python ones)."""
        return [self.kind] + [v.item() if isinstance(v, np.generic) else v for v in astuple(self)]

    def name(self) -> str:
        """The term as text, e.g. ``"log(batch)"``, ``"act=relu·log(gpus)"``."""
        raise NotImplementedError

    def values(self, X, logs: dict) -> np.ndarray:
        """The term for the rows of ``X``; ``logs`` holds log x of every column that enters the model."""
        raise NotImplementedError

    def factor(self, coef: str) -> str:
        """The term's factor of t in the fitted formula, with its coefficient written ``coef``."""
        return f"exp({coef}·{self.name()})"

    def parents(self) -> tuple:
        """The terms this product is made of (kept with it, so the model does not depend on units)."""
        return ()

    def log_columns(self) -> tuple:
        """The columns that enter as log x."""
        return ()

    def levels(self) -> tuple:
        """The (categorical column, level) pairs of its indicators."""
        return ()

    def add_powers(self, b: float, X, logs: dict, out: dict) -> None:
        """Add the term's share of d log t / d log x (coefficient ``b``) to ``out[x]`` for the rows of ``X``."""


@dataclass(frozen=True)
class Power(Term):
    """log x: its coefficient is the power of x."""

    column: str
    kind: ClassVar[str] = "power"
    order: ClassVar[int] = 0

    def name(self) -> str:
        return f"log({self.column})"

    def values(self, X, logs):
        return logs[self.column]

    def factor(self, coef):
        return f"{self.column}^{coef}"

    def log_columns(self):
        return (self.column,)

    def add_powers(self, b, X, logs, out):
        out[self.column] += b


@dataclass(frozen=True)
class Interaction(Term):
    """log x · log z; with x = z the square (log x)², which bends the power law."""

    column: str
    other: str
    kind: ClassVar[str] = "interaction"
    order: ClassVar[int] = 3

    def name(self) -> str:
        a, b = self.column, self.other
        return f"log({a})^2" if a == b else f"log({a})·log({b})"

    def values(self, X, logs):
        return logs[self.column] * logs[self.other]

    def parents(self):
        return (Power(self.column), Power(self.other))

    def log_columns(self):
        return (self.column, self.other)

    def add_powers(self, b, X, logs, out):
        a, c = self.column, self.other
        if a == c:
            out[a] += 2 * b * logs[a]
        else:
            out[a] += b * logs[c]
            out[c] += b * logs[a]


def _is(X, column, level) -> np.ndarray:
    return X[column].to_numpy() == level


@dataclass(frozen=True)
class Level(Term):
    """[c = ℓ]: a factor e^κ on t for the rows at that level."""

    column: str
    level: Any
    kind: ClassVar[str] = "level"
    order: ClassVar[int] = 1

    def name(self) -> str:
        return f"{self.column}={self.level}"

    def values(self, X, logs):
        return _is(X, self.column, self.level).astype(float)

    def factor(self, coef):
        return f"exp({coef}·[{self.column}={self.level}])"

    def levels(self):
        return ((self.column, self.level),)


@dataclass(frozen=True)
class LevelSlope(Term):
    """[c = ℓ] · log x: the level changes the power of x."""

    column: str
    level: Any
    slope: str
    kind: ClassVar[str] = "level_slope"
    order: ClassVar[int] = 4

    def name(self) -> str:
        return f"{self.column}={self.level}·log({self.slope})"

    def values(self, X, logs):
        return _is(X, self.column, self.level).astype(float) * logs[self.slope]

    def factor(self, coef):
        return f"exp({coef}·[{self.column}={self.level}]·log({self.slope}))"

    def parents(self):
        return (Level(self.column, self.level), Power(self.slope))

    def log_columns(self):
        return (self.slope,)

    def levels(self):
        return ((self.column, self.level),)

    def add_powers(self, b, X, logs, out):
        out[self.slope] += b * _is(X, self.column, self.level)


@dataclass(frozen=True)
class LevelPair(Term):
    """[c₁ = ℓ₁]·[c₂ = ℓ₂]: a factor for one combination of levels of two categorical columns."""

    column: str
    level: Any
    other: str
    other_level: Any
    kind: ClassVar[str] = "level_pair"
    order: ClassVar[int] = 2

    def name(self) -> str:
        return f"{self.column}={self.level}&{self.other}={self.other_level}"

    def both(self, X) -> np.ndarray:
        """1.0 on the rows at both levels, else 0.0."""
        return (_is(X, self.column, self.level) & _is(X, self.other, self.other_level)).astype(float)

    def values(self, X, logs):
        return self.both(X)

    def factor(self, coef):
        return f"exp({coef}·[{self.column}={self.level}]·[{self.other}={self.other_level}])"

    def parents(self):
        return (Level(self.column, self.level), Level(self.other, self.other_level))

    def levels(self):
        return ((self.column, self.level), (self.other, self.other_level))


@dataclass(frozen=True)
class PairSlope(LevelPair):
    """[c₁ = ℓ₁]·[c₂ = ℓ₂]·log x: the combination changes the power of x."""

    slope: str
    kind: ClassVar[str] = "pair_slope"
    order: ClassVar[int] = 5

    def name(self) -> str:
        return f"{super().name()}·log({self.slope})"

    def values(self, X, logs):
        return self.both(X) * logs[self.slope]

    def factor(self, coef):
        return f"exp({coef}·[{self.column}={self.level}]·[{self.other}={self.other_level}]·log({self.slope}))"

    def parents(self):
        return (LevelPair(self.column, self.level, self.other, self.other_level),
                LevelSlope(self.column, self.level, self.slope), LevelSlope(self.other, self.other_level, self.slope))

    def log_columns(self):
        return (self.slope,)

    def add_powers(self, b, X, logs, out):
        out[self.slope] += b * self.both(X)


@dataclass(frozen=True)
class Hinge(Term):
    """max(0, log x − log b): above the break ``knot`` (b, in the units of x) the power of x changes by the
    coefficient; below it the term is 0. With :class:`Power` of x it makes a segmented (piecewise) power law,
    continuous at the break."""

    column: str
    knot: float
    kind: ClassVar[str] = "hinge"
    order: ClassVar[int] = 6

    def name(self) -> str:
        return f"max(0, log({self.column}/{self.knot:g}))"

    def values(self, X, logs):
        return np.maximum(0.0, logs[self.column] - np.log(self.knot))

    def factor(self, coef):
        return f"max(1, {self.column}/{self.knot:g})^{coef}"

    def parents(self):
        return (Power(self.column),)

    def log_columns(self):
        return (self.column,)

    def add_powers(self, b, X, logs, out):
        out[self.column] += b * (logs[self.column] > np.log(self.knot))


@dataclass(frozen=True)
class LevelCell(Term):
    """[c₁ = ℓ₁]·…·[c_k = ℓ_k], k >= 3: a factor for one cell, a combination of a level of every categorical column.

    Only a ridge fit (``LogLinearModel(select="ridge")``) uses cells: it shrinks each towards the levels and pairs,
    so a cell may hold a reference level (a least-squares or lasso fit would need reference coding). Saved as
    ``["level_cell", [columns], [levels]]``.
    """

    columns: tuple
    cell: tuple
    kind: ClassVar[str] = "level_cell"
    order: ClassVar[int] = 3
    #: a cell's levels may be the reference level of their column
    reference_ok: ClassVar[bool] = True

    def __post_init__(self):  # lists from a saved model: tuples, so the term stays hashable
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "cell", tuple(self.cell))

    def to_list(self) -> list:
        return [self.kind, list(self.columns), [v.item() if isinstance(v, np.generic) else v for v in self.cell]]

    def name(self) -> str:
        return "&".join(f"{c}={lv}" for c, lv in zip(self.columns, self.cell))

    def values(self, X, logs):
        on = np.ones(len(X), dtype=bool)
        for c, lv in zip(self.columns, self.cell):
            on &= _is(X, c, lv)
        return on.astype(float)

    def factor(self, coef):
        return f"exp({coef}·" + "·".join(f"[{c}={lv}]" for c, lv in zip(self.columns, self.cell)) + ")"

    def levels(self):
        return tuple(zip(self.columns, self.cell))


#: kind → term class (the saved form's first element)
TERMS = {cls.kind: cls for cls in (Power, Interaction, Level, LevelSlope, LevelPair, PairSlope, Hinge, LevelCell)}


def term_from_list(value) -> Term | None:
    """The term of a saved ``[kind, *fields]`` list, or None when it is not one (unknown kind, wrong length,
    a column name that is not a string)."""
    if not (isinstance(value, list) and value and isinstance(value[0], str) and value[0] in TERMS):
        return None
    cls = TERMS[value[0]]
    if cls is LevelCell:
        ok = (len(value) == 3 and all(isinstance(v, list) for v in value[1:]) and len(value[1]) >= 3
              and len(value[1]) == len(value[2]) and all(isinstance(c, str) for c in value[1])
              and len(set(value[1])) == len(value[1]))
        return LevelCell(value[1], value[2]) if ok else None
    values, names = value[1:], [f.name for f in fields(cls)]
    if len(values) != len(names):
        return None
    knots = [v for k, v in zip(names, values) if k == "knot"]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) and v > 0 for v in knots):
        return None
    term = cls(*values)
    names = [v for k, v in zip(names, values) if k in ("column", "other", "slope")]
    return term if all(isinstance(n, str) for n in names) else None


#: the setting of :class:`~perfkit.model.forms.loglinear.LogLinearModel` without which a fit has no term of a kind
KIND_SETTING = {"interaction": "interactions", "level_slope": "category_terms", "level_pair": "category_pairs",
                "pair_slope": "pair_slopes", "hinge": "segments", "level_cell": "cells"}


def terms_from_doc(reader, categories, log_columns, settings) -> list:
    """A saved model's terms (``reader["terms"]``, :class:`~perfkit.model.persist.DocReader`) as terms: each of
    known columns and (non-reference, but for a cell) levels, its categorical columns distinct, no term twice, and
    each of a kind the model's ``settings`` (:data:`KIND_SETTING` → value) let a fit produce; else one error
    naming ``fitted.terms[i]``."""
    terms = reader["terms"]
    if not isinstance(terms, list):
        raise reader.fail(f"fitted.terms: expected a list of terms, got {reader.short(terms)}")
    specs, names = [], set()
    for i, t in enumerate(terms):
        term = term_from_list(t)
        first = 0 if term is not None and term.reference_ok else 1  # a cell may hold a reference level
        ok = term is not None and all(x in log_columns for x in term.log_columns()) and all(
            c in categories and lv in categories[c][first:] for c, lv in term.levels())
        if ok:
            cols = [c for c, _ in term.levels()]
            ok = len(set(cols)) == len(cols) and term.name() not in names
        if not ok:
            raise reader.fail(f"fitted.terms[{i}]: {reader.short(t)} is not a term of known columns and levels "
                              "(distinct columns, not twice)")
        setting = KIND_SETTING.get(term.kind)
        if setting is not None and not settings[setting]:
            raise reader.fail(f"fitted.terms[{i}]: a {term.kind} term, which a fit with {setting}=False never has "
                              f"(settings.{setting})")
        specs.append(term)
        names.add(term.name())
    return specs
