"""What a chapter's analysis returns: :class:`ChapterResult`, and the checking of chapter parameters.

Each chapter's ``Params`` dataclass declares a rule per parameter in its ``CHECKS`` mapping
(built from :func:`at_least`, :func:`one_of`, :func:`number_at_least`, :func:`grid`,
:func:`existing_file`, :func:`output_folder`); :func:`make_params` applies the names, the
types and these rules, and raises one :class:`ParameterError` for the first parameter
that is not allowed.
"""
from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path
from typing import Any, Callable

__all__ = ["ChapterResult", "findings", "ParameterError", "ParamsBase", "Check", "make_params", "at_least", "seed", "one_of",
           "number_at_least", "grid", "existing_file", "existing_files", "output_folder", "show_path", "path_kind",
           "checked_params"]


class ParameterError(ValueError):
    """A chapter parameter that is not allowed, in one line: the parameter, its value and what is allowed.

    IPython (Jupyter, papermill) shows an exception through its ``_render_traceback_``
    when it has one, so a bad parameter in a notebook shows this one line instead of a traceback.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"ParameterError: {self}"]


class ParamsBase:
    """Methods shared by the chapters' ``Params`` dataclasses."""

    #: parameter name -> :class:`Check`; :func:`make_params` applies them in field order
    CHECKS: dict = {}
    #: whether ``quick=True`` computes on smaller budgets (then its figures carry the quick mark); False for a
    #: chapter whose quick mode changes nothing
    QUICK_CHANGES_RESULTS: bool = True

    def as_dict(self) -> dict:
        """The parameters as keyword arguments of the chapter's ``analyse``."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class Check:
    """A rule for one parameter's value.

    ``test(value)`` returns True when the value is allowed, False when it is not, or a
    string that says what is wrong with it; ``allowed`` says in words what is allowed.
    """

    allowed: str
    test: Callable[[Any], Any]

    def __call__(self, name: str, value) -> None:
        verdict = self.test(value)
        if verdict is True or (type(verdict).__name__ == "bool_" and bool(verdict)):  # NumPy's True too
            return
        problem = verdict if isinstance(verdict, str) else f"got {value!r}"
        raise ParameterError(f"{name}: {problem}; expected {self.allowed}")


def _is_int(v) -> bool:
    return isinstance(v, Integral) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool)


def at_least(low: int, also: tuple = (), why: str = "") -> Check:
    """An integer ``>= low`` (or one of ``also``, e.g. ``-1`` for every core)."""
    extra = "".join(f" or {a}" for a in also)
    return Check(f"an integer >= {low}{extra}{f' ({why})' if why else ''}",
                 lambda v: _is_int(v) and (v >= low or v in also))


def seed() -> Check:
    """A random seed: an integer >= 0 and below 2**32 (what numpy's and scikit-learn's generators accept)."""
    return Check("an integer >= 0 and below 2**32 (a random seed)", lambda v: _is_int(v) and 0 <= v < 2 ** 32)


def number_at_least(low: float, strict: bool = False) -> Check:
    """A finite number ``>= low`` (``> low`` with ``strict``)."""
    op = ">" if strict else ">="

    def test(v):
        try:
            return _is_number(v) and math.isfinite(v) and (v > low if strict else v >= low)
        except OverflowError:  # an int too large for a float
            return False

    return Check(f"a finite number {op} {low:g}", test)


def one_of(*values) -> Check:
    """One of ``values``."""
    return Check(f"one of {', '.join(map(repr, values))}", lambda v: v in values)


def grid(item: Check, what: str = "values", distinct: bool = False, empty: bool = False) -> Check:
    """A list or tuple whose every item passes ``item``; non-empty unless ``empty``."""
    def test(v):
        if not isinstance(v, (list, tuple)) or not (v or empty):
            return False
        for x in v:
            try:
                item("", x)
            except ParameterError:
                return f"got {list(v)!r}: item {x!r} is not allowed"
        if distinct and len(set(v)) < len(v):
            return f"got {list(v)!r}: an item repeats"
        return True

    return Check(f"a {'' if empty else 'non-empty '}list of {'distinct ' if distinct else ''}{what}", test)


def show_path(path) -> str:
    """A path for messages: relative to the repository when it lies inside it."""
    from ..schema import repo_root

    path = Path(path)
    try:
        return str(path.resolve().relative_to(repo_root().resolve()))
    except ValueError:
        return str(path)


def path_kind(check) -> str:
    """``"file"``, ``"files"`` or ``"folder"`` for a rule made by :func:`existing_file`, :func:`existing_files`
    or :func:`output_folder` (a parameter that holds a path, or a list of paths); ``""`` for any other rule."""
    return getattr(getattr(check, "test", None), "path_kind", "")


def existing_file(what: str, empty: str = "") -> Check:
    """A path (absolute, or relative to the repository) of an existing file; ``""`` allowed when ``empty`` says
    what it means."""
    def test(v):
        from ..schema import resolve

        if v == "" and empty:
            return True
        if not isinstance(v, str) or not v.strip():
            return False
        path = resolve(v)
        if path.is_dir():
            return f"{v!r} is a folder ({path})"
        if path.exists() and not path.is_file():
            return f"{v!r} is not a regular file ({path}: a device, a FIFO or a socket)"
        if not path.is_file():
            return f"{v!r} not found ({path})"
        return True

    test.path_kind = "file"
    return Check(f"an existing file ({what}){f' or {empty}' if empty else ''}", test)


def optional_file(allowed: str) -> Check:
    """A path to a JSON file that is read when it exists (a missing one is allowed: what reads it says "not run"),
    or ``""``; a folder, or an existing file that is not one JSON object, is refused (before any work, so that a
    damaged results file never ends a chapter after its fits). ``allowed`` says so in words."""
    def test(v):
        from .._io import read_json
        from ..schema import resolve

        if v == "":
            return True
        if not isinstance(v, str) or not v.strip():
            return False
        path = resolve(v)
        if path.is_dir():
            return f"{v!r} is a folder ({path})"
        if not path.exists():
            return True
        if not path.is_file():
            return f"{v!r} is not a regular file ({path})"
        try:
            read_json(path, repr(v))
        except ValueError as exc:
            return str(exc)
        return True

    return Check(allowed, test)


def output_folder(what: str) -> Check:
    """A folder to write into (created when missing; not an existing file), or ``""`` for the default."""
    def test(v):
        if v == "":
            return True
        if not isinstance(v, str) or not v.strip():
            return False
        if "\x00" in v:
            return f"{v!r} holds a NUL character"
        path = Path(v).expanduser()
        if path.exists() and not path.is_dir():
            return f"{v!r} is a file"
        ancestor = path.absolute()
        while not ancestor.exists():  # the nearest existing folder above it is where it would be created
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            return f"{v!r} cannot be created: {str(ancestor)!r} is a file"
        if not os.access(ancestor, os.W_OK):
            return f"{v!r} cannot be created: {str(ancestor)!r} is not writable"
        return True

    test.path_kind = "folder"
    return Check(f'a folder (created when missing) or "" for {what}', test)


_TYPE_WORDS = {bool: "True or False", int: "an integer", float: "a number", str: "a string", tuple: "a list",
               list: "a list"}


def existing_files(what: str) -> Check:
    """A list (possibly empty) of paths of existing files, each ``what``: the first that is not names its item."""
    one = existing_file(what)

    def test(v):
        if not isinstance(v, (list, tuple)):
            return False
        for item in v:
            verdict = one.test(item)
            if verdict is not True:
                return f"item {item!r}: " + (verdict if isinstance(verdict, str) else "not a path")
        return True

    test.path_kind = "files"
    return Check(f"a list (possibly empty) of existing {what} files", test)


def make_params(cls, given: dict):
    """``cls(**given)`` for a chapter's ``Params`` dataclass, checked: names, types, then the rules of
    ``cls.CHECKS`` on every value (given or default); the first that is not allowed raises one
    :class:`ParameterError` naming the parameter, its value and what is allowed."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    given = {k: _plain(v) for k, v in given.items()}
    unknown = sorted(set(given) - set(fields))
    if unknown:
        raise ParameterError(f"{unknown[0]}: not a parameter of this chapter (parameters: {', '.join(fields)})")
    for name, value in given.items():
        default = fields[name].default
        want = type(default)
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            continue
        if want in (list, tuple) and isinstance(value, (list, tuple)):
            continue
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise ParameterError(f"{name}: got {value!r} ({type(value).__name__}); expected "
                                 f"{_TYPE_WORDS.get(want, want.__name__)}")
    checks = getattr(cls, "CHECKS", {})
    for name in fields:
        if name in checks:
            checks[name](name, given.get(name, fields[name].default))
    return cls(**given)


def _plain(v):
    """A NumPy scalar as the Python one (``np.float64(0.1)`` → 0.1), in lists and tuples too; anything else
    unchanged."""
    if type(v).__module__ == "numpy" and hasattr(v, "item") and getattr(v, "ndim", None) == 0:
        return v.item()
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(x) for x in v)
    return v


def checked_params(params, kwargs: dict, cls, check):
    """What a chapter's ``analyse(params=None, /, **kwargs)`` runs on: ``check(**kwargs)``, or the ``Params``
    instance ``params`` (from ``check_params``) checked again with ``kwargs`` overriding its values."""
    if params is None:
        return check(**kwargs)
    if not isinstance(params, cls):
        where = cls.__module__.removesuffix(".params")  # the chapter package that exports it
        raise ParameterError(f"params: expected a {where}.Params (from check_params) or keyword "
                             f"parameters, got {type(params).__name__}")
    return check(**{**params.as_dict(), **kwargs})


@dataclass
class ChapterResult:
    """Tables, figures, fits, claims and readings of one chapter, computed once by ``analyse``.

    Attributes
    ----------
    chapter : str
        ``"ch3"``, ``"ch4"``, ``"ch5"``.
    params : object
        The chapter's ``Params``.
    tables : dict of str -> DataFrame
        Every table the chapter writes, by file stem (``"table4_2"``), in the tidy
        layout saved as CSV.
    views : dict of str -> DataFrame or Styler
        The same tables laid out for reading (rounded, units in headers, thesis and
        ours side by side); :meth:`view` falls back to the table.
    figures : dict of str -> matplotlib Figure
        Every figure, by file stem (``"fig4_5_de_pred_vs_measured"``: the thesis's number of the measured
        framework, :data:`perfkit.data.thesis.THESIS_FIGURES`); :meth:`figures_of` finds them by kind.
    fits : dict
        The repeated fits of the generic model, by name (``"DE+L2"``), as stored with the results. Baselines
        such as the random forest are not kept (they cannot be saved as JSON); their held-out predictions are.
    numbers : dict
        The key quantities (evidence of the claims, numbers the readings quote).
    readings : dict of str -> str
        A short Markdown paragraph per section that reads its result.
    notes : list of str
        Messages about the data (a split scaled down in quick mode, a section skipped).
    results : Results or None
        The chapter's computed results (:mod:`perfkit.chapters.store`) everything above is drawn from: a
        restyled figure is one call of the chapter's figure function on them.
    cache_info : CacheInfo or None
        Whether the results were read from the results cache (:mod:`perfkit.chapters.cache`), and where.
    """

    chapter: str
    params: Any
    tables: dict = field(default_factory=dict)
    views: dict = field(default_factory=dict)
    figures: dict = field(default_factory=dict)
    fits: dict = field(default_factory=dict)
    numbers: dict = field(default_factory=dict)
    readings: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    results: Any = None
    cache_info: Any = None

    @property
    def from_cache(self) -> bool:
        """Whether the results were read from the results cache instead of computed."""
        return bool(self.cache_info is not None and self.cache_info.hit)

    @property
    def claims(self):
        """The claims ledger (the table ``claims_<chapter>``)."""
        return self.tables[f"claims_{self.chapter}"]

    def view(self, name: str):
        """The reader's layout of table ``name`` (the tidy table where there is none)."""
        if name in self.views:
            return self.views[name]
        if name in self.tables:
            from ..report.tables import rounded

            return rounded(self.tables[name])
        raise KeyError(f"{name}: no such table in {self.chapter}; tables: {', '.join(self.tables)}")

    def figures_of(self, slug: str) -> list:
        """The figures of one figure kind, whatever the framework's number: ``figures_of("de_pred_vs_measured")``
        gives ``fig4_5_de_pred_vs_measured`` on PyTorch data, ``fig4_3_…`` on TensorFlow data
        (:func:`perfkit.data.thesis.figure_stem`); for ``display(*result.figures_of(...))``."""
        from ..data.thesis import figure_matches

        figs = [fig for name, fig in self.figures.items() if figure_matches(name, slug)]
        if not figs:
            raise KeyError(f"{slug}: no such figure in {self.chapter}; figures: {', '.join(self.figures)}")
        return figs

    def reading(self, section: str):
        """The reading of ``section`` as a Markdown object for ``display``."""
        from IPython.display import Markdown

        text = self.readings.get(section, f"*Nothing to read in this section on this data ({section!r} needs "
                                               "measurements the dataset does not have).*")
        return Markdown(text)

    def save(self, figures_dir=None) -> str:
        """Write every table (CSV), figure (PNG + SVG) and the chapter's findings (Markdown, the ``summary``
        reading the README quotes) under ``figures_dir/<chapter>/`` (default: the ``figures_dir`` parameter,
        else ``figures/``); returns a one-line summary."""
        from ..report.output import savefig, savetable, savetext
        from ..schema import figures_dir as default_dir

        out = figures_dir or getattr(self.params, "figures_dir", "") or None
        for name, table in self.tables.items():
            savetable(table, f"{self.chapter}/{name}", out)
        if "summary" in self.readings:
            savetext(findings([self]), f"{self.chapter}/findings_{self.chapter}", out)
        for name, fig in self.figures.items():
            savefig(fig, f"{self.chapter}/{name}", out)
        where = Path(out) if out else default_dir()
        return (f"{self.chapter}: {len(self.tables)} tables and {len(self.figures)} figures in "
                f"{where / self.chapter}")

    def summary(self) -> str:
        """Tables, figures and verdicts in a few lines."""
        verdicts = self.claims["verdict"].value_counts().to_dict() if f"claims_{self.chapter}" in self.tables else {}
        lines = [f"{self.chapter}: {len(self.tables)} tables, {len(self.figures)} figures",
                 "claims: " + ", ".join(f"{n} {v}" for v, n in verdicts.items())]
        return "\n".join(lines + self.notes)

    def __repr__(self) -> str:
        return f"<ChapterResult {self.chapter}: {len(self.tables)} tables, {len(self.figures)} figures>"


#: the heading of each chapter's findings paragraph
FINDINGS_TITLES = {"ch3": "Chapter 3", "ch4": "Chapter 4", "ch5": "Chapter 5", "ch6": "Chapter 6 (beyond the thesis)",
                   "ch7": "Chapter 7 (beyond the thesis: measure small, predict large)",
                   "ch8": "Chapter 8 (beyond the thesis: measure here, predict there)"}


def findings(results) -> str:
    """Markdown of the ``summary`` reading of each :class:`ChapterResult` in ``results``."""
    return "\n\n".join(f"**{FINDINGS_TITLES.get(r.chapter, r.chapter)}.** {r.readings['summary']}"
                       for r in results) + "\n"
