"""The generated parts of the documentation: blocks between marker comments in ``docs/`` pages and the README.

Each block (:data:`BLOCKS`) is a function of what the repository holds, never typed by hand:

- the thesis index (``docs/chapters.md``): every thesis table and figure a chapter reproduces → the notebook
  cell that shows it → its files in ``figures/chN/``, from the registries of thesis tables and figures
  (:data:`perfkit.data.thesis.THESIS_TABLES`, :data:`~perfkit.data.thesis.THESIS_FIGURES`,
  ``perfkit.chapters.ch3.FIGURE_NUMBERS`` and ``BREAKDOWN_FIGURES``), the chapter notebooks
  (:data:`perfkit.chapters.CHAPTERS`) and the committed ``figures/``; outputs beyond the thesis are listed
  by notebook section;
- the results page (``docs/results.md``): what ``figures/`` holds, file by file, with each claims ledger's
  verdicts counted;
- the findings (``docs/findings.md``): :func:`perfkit.chapters.notebooks.readme_findings`;
- the README's chapter table and its measured times (``benchmarks/results/budgets.json``; the course's,
  ``benchmarks/results/course.json``: :mod:`perfkit.pages.times`);
- the course's schedule (``notebooks/course/instructor/syllabus.md``): :func:`perfkit.course.syllabus.syllabus_table`;
- the table of model forms (``docs/forms.md``), from :mod:`perfkit.model.forms.registry`.

Which notebook cell shows an output is read from the notebook's code: a string literal naming the file
stem, ``result.claims`` for the ledger, ``result.figures_of(slug)``, an f-string whose pattern the stem
fits, or a test on the name (``name.endswith(...)``, ``"..." in name``); failing those, the section whose
heading names the output's thesis number. :func:`write` replaces every block (the text around the markers
is kept); :func:`stale` lists the blocks that differ from what would be written; ``perfkit docs`` is the
command.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..chapters.notebooks import FINDINGS_BEGIN, FINDINGS_END, FINDINGS_PAGE
from ..course.syllabus import syllabus_table
from .times import course_times, readme_times

__all__ = ["Block", "BLOCKS", "VERDICTS", "Output", "NotebookMap", "notebook_map", "outputs", "thesis_tables",
           "thesis_figures", "thesis_index", "results_page", "readme_chapters", "replace_block",
           "current_block", "stale", "write", "docs_root"]

#: the extensions of a figure's files (one output: the links go to the PNG)
_FIGURE_EXTS = (".png", ".svg")


def docs_root() -> Path:
    """The checkout whose ``docs/`` are generated; ``FileNotFoundError`` outside one (an installed perfkit has no
    docs to write)."""
    from ..schema import checkout_root

    root = checkout_root()
    if root is None or not (root / "docs").is_dir():
        raise FileNotFoundError("perfkit docs works in a clone of the repository (no docs/ beside this perfkit)")
    return root


# ------------------------------------------------------------------------------------------ outputs

@dataclass(frozen=True)
class Output:
    """One output of a chapter in ``figures/chN/``: its file stem and the extensions present."""

    chapter: str
    stem: str
    exts: tuple

    @property
    def kind(self) -> str:
        """``"claims"``, ``"findings"``, ``"figure"`` (PNG/SVG) or ``"table"`` (CSV, or any other file)."""
        if self.stem == f"claims_{self.chapter}":
            return "claims"
        if self.stem == f"findings_{self.chapter}":
            return "findings"
        return "figure" if set(self.exts) & set(_FIGURE_EXTS) else "table"

    @property
    def file(self) -> str:
        """The file a link points to: the PNG of a figure, else the first extension's file."""
        ext = ".png" if ".png" in self.exts else self.exts[0]
        return f"{self.stem}{ext}"

    def link(self, base: str) -> str:
        """Markdown link to the file, ``base`` being the path from the page to the repository root."""
        shown = self.stem if self.kind == "figure" else self.file
        return f"[`{shown}`]({base}figures/{self.chapter}/{self.file})"


def outputs(root: Path, chapter: str) -> list[Output]:
    """The outputs in ``figures/<chapter>/``, sorted by name: a figure's PNG and SVG are one output, every other
    file one of its own (a table's CSV beside a figure of the same stem is two outputs)."""
    folder = root / "figures" / chapter
    found: dict = {}
    for path in sorted(folder.iterdir()) if folder.is_dir() else ():
        if path.is_file() and not path.name.startswith("."):
            family = "" if path.suffix in _FIGURE_EXTS else path.suffix
            found.setdefault((path.stem, family), []).append(path.suffix)
    return [Output(chapter, stem, tuple(sorted(exts))) for (stem, _), exts in sorted(found.items())]


def _number_key(number: str) -> tuple:
    return tuple(int(p) for p in number.split("."))


def _numbered(stem: str) -> tuple[str, str] | None:
    """``("Table", "3.2")`` for ``table3_2…``, ``("Fig.", "4.5")`` for ``fig4_5_…``; None for other stems."""
    m = re.match(r"(table|fig)(\d+)_(\d+)(?:_|$)", stem)
    return ("Table" if m[1] == "table" else "Fig.", f"{m[2]}.{m[3]}") if m else None


# ------------------------------------------------------------------------------------------ registries

_ROMAN = ("", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X")


def _table_label(key: str) -> str:
    """The printed name of a thesis table key: ``"Table 4.2"``, ``"journal Table 5"``, ``"conference Table II"``."""
    m = re.fullmatch(r"(journal|conference)(\d+)", key)
    if not m:
        return f"Table {key}"
    number = int(m[2])
    return f"{m[1]} Table {_ROMAN[number] if m[1] == 'conference' and number < len(_ROMAN) else number}"


def thesis_tables() -> list[tuple[str, str, str]]:
    """Every transcribed thesis or paper table: ``(label, file stem, description)``, in the registry's order."""
    from ..data.thesis import THESIS_TABLES

    return [(_table_label(key), stem, what) for key, (stem, what) in THESIS_TABLES.items()]


def thesis_figures() -> dict[str, list[tuple[str, str]]]:
    """The thesis's figures each chapter draws, by chapter: ``[(number, what), …]`` in number order."""
    from ..chapters.ch3.figures import BREAKDOWN_FIGURES, FIGURE_NUMBERS
    from ..data.thesis import THESIS_FIGURES

    out: dict = {"ch3": []}
    for model, (phases, speedup) in FIGURE_NUMBERS.items():
        out["ch3"] += [(f"3.{phases}", f"phase times, {model}"), (f"3.{speedup}", f"speedup, {model}")]
    for (model, workers), number in BREAKDOWN_FIGURES.items():
        out["ch3"].append((f"3.{number}", f"iteration breakdown, {model}, {workers} workers"))
    for chapter, figures in THESIS_FIGURES.items():
        for slug, entry in figures.items():
            numbers = entry.items() if isinstance(entry, dict) else [(None, entry)]
            out.setdefault(chapter, []).extend(
                (number, f"`{slug}`" + (f", {framework}" if framework else "")) for framework, number in numbers)
    return {ch: sorted(items, key=lambda item: _number_key(item[0])) for ch, items in out.items()}


# ------------------------------------------------------------------------------------------ notebooks

@dataclass
class _Cell:
    """What one code cell of a chapter notebook shows, as read from its code."""

    cell_id: str
    section: str
    literals: set = field(default_factory=set)
    claims: bool = False
    slugs: set = field(default_factory=set)
    patterns: list = field(default_factory=list)
    conditions: list = field(default_factory=list)

    def shows(self, stem: str, chapter: str) -> int:
        """0 when the cell names ``stem`` exactly (or uses ``result.claims`` for the ledger), 1 when it selects
        it by a pattern, a figure slug or a test on the name, 2 when it does not show it."""
        from ..data.thesis import figure_matches

        if stem in self.literals or (self.claims and stem == f"claims_{chapter}"):
            return 0
        if any(figure_matches(stem, slug) for slug in self.slugs) or any(p.fullmatch(stem) for p in self.patterns):
            return 1
        if any(all(_holds(test, stem) for test in tests) for tests in self.conditions):
            return 1
        return 2


def _holds(test: tuple[str, str], stem: str) -> bool:
    how, fragment = test
    return {"endswith": stem.endswith, "startswith": stem.startswith, "in": stem.__contains__}[how](fragment)


def _name_test(node) -> tuple[str, str] | None:
    """``("endswith", "_x")`` for ``name.endswith("_x")``, ``("in", "_x_")`` for ``"_x_" in name``; else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("endswith", "startswith") and isinstance(node.func.value, ast.Name) \
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.func.attr, node.args[0].value
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In) \
            and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) \
            and isinstance(node.comparators[0], ast.Name):
        return "in", node.left.value
    return None


def _fstring_pattern(node: ast.JoinedStr):
    """The regular expression an f-string's values fit (each ``{…}`` one or more word characters)."""
    parts = [re.escape(v.value) if isinstance(v, ast.Constant) else r"\w+" for v in node.values]
    return re.compile("".join(parts))


def _read_cell(cell: _Cell, source: str) -> _Cell:
    """Fill ``cell`` from its code (IPython's ``%`` and ``!`` lines left out)."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            cell.literals.add(node.value)
        elif isinstance(node, ast.JoinedStr):
            cell.patterns.append(_fstring_pattern(node))
        elif isinstance(node, ast.Attribute) and node.attr == "claims":
            cell.claims = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "figures_of":
            cell.slugs |= {a.value for a in node.args if isinstance(a, ast.Constant)}
        elif isinstance(node, (ast.If, ast.IfExp)):
            tests = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) \
                else [node.test]
            found = [_name_test(t) for t in tests]
            if found and all(found):
                cell.conditions.append(found)
    return cell


@dataclass
class NotebookMap:
    """A chapter notebook as the index reads it: its file, its title and sections, and what each code cell shows."""

    chapter: str
    file: str
    title: str
    sections: dict = field(default_factory=dict)
    cells: list = field(default_factory=list)

    def locate(self, stem: str) -> tuple[str, str | None] | None:
        """``(section, cell id)`` of the first cell that shows ``stem`` (an exact name before a pattern); failing
        that ``(section, None)`` for the section whose heading names the stem's number; None if none does."""
        for level in (0, 1):
            for cell in self.cells:
                if cell.section and cell.shows(stem, self.chapter) == level:
                    return cell.section, cell.cell_id
        numbered = _numbered(stem)
        for section, heading in self.sections.items():
            if numbered and numbered[1] in _heading_numbers(heading):
                return section, None
        return None


def _heading_numbers(heading: str) -> set:
    """The thesis numbers a heading names: ``"Table 3.2 and Figures 3.2–3.4"`` → {"3.2", "3.3", "3.4"}."""
    found = set()
    for m in re.finditer(r"\b(?:Tables?|Figures?|Figs?\.)\s+(\d+)\.(\d+)(?:\s*[–-]\s*(\d+)\.(\d+))?", heading):
        first, last = int(m[2]), int(m[4]) if m[3] == m[1] else int(m[2])
        found |= {f"{m[1]}.{n}" for n in range(first, last + 1)}
    return found


def notebook_map(chapter: str, root: Path) -> NotebookMap:
    """Read the notebook of ``chapter`` (under ``root/notebooks/``): title, ``## `` sections, code cells."""
    from ..chapters import CHAPTERS

    name = CHAPTERS[chapter][1]
    nb = json.loads((root / "notebooks" / name).read_text())
    out = NotebookMap(chapter, f"notebooks/{name}", "")
    section = ""
    for index, cell in enumerate(nb["cells"]):
        source = "".join(cell.get("source", ""))
        cell_id = cell.get("id") or f"#{index}"
        if cell["cell_type"] == "markdown":
            heading = source.splitlines()[0] if source else ""
            if heading.startswith("# ") and not out.title:
                out.title = heading[2:].strip()
            elif heading.startswith("## "):
                m = re.match(r"(\d+)\.\s*(.*)", heading[3:].strip())
                section = f"§{m[1]}" if m else cell_id
                out.sections[section] = m[2] if m else heading[3:].strip()
        elif cell["cell_type"] == "code":
            out.cells.append(_read_cell(_Cell(cell_id, section), source))
    return out


def _where(section: str, cell: str | None) -> str:
    return f"{section} `{cell}`" if cell else section


# ------------------------------------------------------------------------------------------ the catalogue

@dataclass
class _Entry:
    """One row of the index: a thesis item (or ``""`` beyond the thesis), what it is, where the notebook shows it,
    and its outputs."""

    label: str
    what: str
    where: str
    outputs: list


def _located(nb: NotebookMap, outs: list) -> dict:
    """Outputs grouped by where the notebook shows them, in the notebook's order (unshown ones last)."""
    order = {cell.cell_id: i for i, cell in enumerate(nb.cells)}
    sections = list(nb.sections)
    groups: dict = {}
    for out in outs:
        found = nb.locate(out.stem)
        groups.setdefault(found, []).append(out)

    def key(found):
        if found is None:
            return (len(sections), 0)
        return (sections.index(found[0]), order.get(found[1], -1))

    return {found: groups[found] for found in sorted(groups, key=key)}


def _where_text(found) -> str:
    return _where(*found) if found else "not shown: written by `result.save`"


def _thesis_entries(chapter: str, nb: NotebookMap, outs: list, taken: set) -> list[_Entry]:
    """The rows of the thesis's tables and figures in ``chapter``: located outputs, or none (not reproduced)."""
    items = []
    for label, stem, what in thesis_tables():
        mine = [o for o in outs if o.kind == "table" and (o.stem == stem or o.stem.startswith(stem + "_"))]
        numbered = re.fullmatch(r"Table (\d+)\.\d+", label)
        if mine or (numbered and f"ch{numbered[1]}" == chapter):
            items.append((label, what, mine))
    for number, what in thesis_figures().get(chapter, []):
        prefix = f"fig{number.replace('.', '_')}_"
        items.append((f"Fig. {number}", what, [o for o in outs if o.kind == "figure" and o.stem.startswith(prefix)]))
    entries = []
    for label, what, mine in items:
        taken |= set(mine)
        if not mine:
            entries.append(_Entry(label, what, "—", []))
        for found, group in _located(nb, mine).items():
            entries.append(_Entry(label, what, _where_text(found), group))
    return entries


def _catalogue(chapter: str, root: Path) -> tuple[NotebookMap, list[_Entry], list[Output]]:
    """The notebook, the index rows (thesis items, then the outputs beyond the thesis by section) and the
    chapter's outputs."""
    nb = notebook_map(chapter, root)
    outs = outputs(root, chapter)
    shown = [o for o in outs if o.kind != "findings"]
    taken: set = set()
    entries = _thesis_entries(chapter, nb, shown, taken)
    rest = [o for o in shown if o not in taken]
    for found, group in _located(nb, rest).items():
        numbers = sorted({" ".join(n) for n in map(_numbered, (o.stem for o in group)) if n}, reverse=True)
        title = nb.sections.get(found[0], "") if found else ""
        entries.append(_Entry(_compressed(numbers) + " (ours)" if numbers else "", title, _where_text(found),
                              group))
    return nb, entries, outs


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def thesis_index(root: Path) -> str:
    """The thesis index: for each chapter, every thesis table and figure → the notebook cell that shows it → its
    files in ``figures/chN/``; then what the chapter shows beyond the thesis, by notebook section."""
    from ..chapters import CHAPTERS

    lines = []
    for chapter in CHAPTERS:
        nb, entries, _ = _catalogue(chapter, root)
        lines += [f"### {nb.title}", "",
                  f"Notebook [`{nb.file}`](../{nb.file}); outputs in [`figures/{chapter}/`](../figures/{chapter}/).",
                  "", f"| thesis item | what | notebook cell | output in `figures/{chapter}/` |", "|---|---|---|---|"]
        for e in entries:
            outs = ", ".join(o.link("../") for o in e.outputs) or "not in `figures/`: not reproduced"
            label = e.label or "beyond the thesis"
            lines.append(f"| {_cell(label)} | {_cell(e.what)} | {_cell(e.where)} | {outs} |")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


# ------------------------------------------------------------------------------------------ results

#: the verdicts of a claims ledger, in the order they are counted
VERDICTS = ("holds", "does not hold", "inconclusive", "cannot be tested here")


def _verdicts(path: Path) -> dict:
    """Verdict → number of claims in a ledger CSV (the :data:`VERDICTS` first, in their order, then any other)."""
    import csv

    with path.open(newline="") as f:
        counts: dict = {}
        for row in csv.DictReader(f):
            counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    return {v: counts.get(v, 0) for v in VERDICTS} | {v: n for v, n in counts.items() if v not in VERDICTS}


def _verdict_table(root: Path) -> list[str]:
    from ..chapters import CHAPTERS

    rows = {ch: _verdicts(root / "figures" / ch / f"claims_{ch}.csv") for ch in CHAPTERS
            if (root / "figures" / ch / f"claims_{ch}.csv").is_file()}
    names = list(dict.fromkeys(v for counts in rows.values() for v in counts))
    lines = ["| chapter | ledger | claims | " + " | ".join(names) + " |", "|---" * (len(names) + 3) + "|"]
    for ch, counts in rows.items():
        lines.append(f"| {ch} | [`claims_{ch}.csv`](../figures/{ch}/claims_{ch}.csv) | {sum(counts.values())} | "
                     + " | ".join(str(counts.get(v, 0)) for v in names) + " |")
    return lines


def _natural(output: Output) -> tuple:
    """Sort key: kind (tables, figures, claims, findings), then the stem with its numbers as numbers."""
    order = ("table", "figure", "claims", "findings").index(output.kind)
    return order, [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", output.stem)], output.exts


def results_page(root: Path) -> str:
    """What ``figures/`` holds: the verdicts of every claims ledger, then every chapter's files with what each is
    (its thesis item, or the notebook section that shows it) and the notebook cell that shows it."""
    from ..chapters import CHAPTERS

    lines = ["Verdicts of the claims ledgers:", "", *_verdict_table(root), ""]
    for chapter in CHAPTERS:
        nb, entries, outs = _catalogue(chapter, root)
        what = {}
        for e in entries:
            text = f"{e.label}: {e.what}" if e.label and not e.label.endswith("(ours)") else e.what
            for o in e.outputs:
                what[o.stem, o.exts] = (text, e.where)
        lines += [f"#### [`figures/{chapter}/`](../figures/{chapter}/): {nb.title}", "",
                  "| file | what | notebook cell |", "|---|---|---|"]
        for o in sorted(outs, key=_natural):
            text, where = what.get((o.stem, o.exts), ("the chapter's findings, copied into [findings.md](findings.md)"
                                                      if o.kind == "findings" else "", "—"))
            lines.append(f"| {o.link('../')} | {_cell(text)} | {_cell(where)} |")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


# ------------------------------------------------------------------------------------------ the README

def _runs(numbers: list) -> list[str]:
    """Consecutive numbers as ranges: [2, 3, 4, 7] → ["2–4", "7"]."""
    out, start = [], None
    for i, n in enumerate(numbers):
        start = n if start is None else start
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            out.append(f"{start}–{n}" if n != start else f"{n}")
            start = None
    return out


def _compressed(labels: list[str]) -> str:
    """``["Table 3.2", "Table 3.3", "Fig. 3.2"]`` → ``"Tables 3.2–3.3; Fig. 3.2"`` (ranges per kind and chapter)."""
    groups: dict = {}
    for label in labels:
        kind, number = label.rsplit(" ", 1)
        major, _, minor = number.rpartition(".")
        roman = number in _ROMAN
        groups.setdefault((kind, major, roman), []).append(_ROMAN.index(number) if roman else int(minor))
    parts = []
    for (kind, major, roman), numbers in groups.items():
        runs = _runs(sorted(set(numbers)))
        plural = len(numbers) > 1
        name = kind if not plural else "Figs." if kind == "Fig." else kind + "s"
        show = [re.sub(r"\d+", lambda m: _ROMAN[int(m[0])], r) if roman else
                re.sub(r"(\d+)", lambda m: f"{major}.{m[0]}" if major else m[0], r) for r in runs]
        parts.append(f"{name} {', '.join(show)}")
    return "; ".join(parts)


def readme_chapters(root: Path) -> str:
    """The README's table: chapter → notebook → the thesis tables and figures it reproduces (those with outputs)."""
    from ..chapters import CHAPTERS

    lines = ["| chapter | notebook | thesis tables and figures ([index](docs/chapters.md#thesis-index)) |",
             "|---|---|---|"]
    for chapter in CHAPTERS:
        nb, entries, outs = _catalogue(chapter, root)
        labels = list(dict.fromkeys(e.label for e in entries if e.outputs and e.label and "(ours)" not in e.label))
        kinds = [o.kind for o in outs]
        text = _compressed(labels) if labels else (
            f"none: beyond the thesis ({kinds.count('table')} tables, {kinds.count('figure')} figures)")
        lines.append(f"| {_cell(nb.title)} | [`{Path(nb.file).name}`]({nb.file}) | {text} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ blocks

def _markers(name: str, source: str) -> tuple[str, str]:
    return f"<!-- {name}: generated by `perfkit docs --write` from {source} -->", f"<!-- end of {name} -->"


@dataclass(frozen=True)
class Block:
    """A generated block: the page (relative to the repository), its marker lines, the function of the
    repository root that makes its text, and the command that rewrites it."""

    page: str
    name: str
    begin: str
    end: str
    make: Callable[[Path], str]
    command: str = "perfkit docs --write"


def _machines_page():
    from . import machines

    return machines


def _forms_table(root: Path) -> str:
    from .forms import forms_table

    return forms_table(root)


def _findings(root: Path) -> str:
    from ..chapters.notebooks import readme_findings

    return readme_findings(figures_dir=root / "figures")


#: every generated block of the documentation, page by page
BLOCKS: tuple[Block, ...] = (
    Block(FINDINGS_PAGE, "findings", FINDINGS_BEGIN, FINDINGS_END, _findings,
          "perfkit findings --write (or perfkit docs --write)"),
    Block("docs/chapters.md", "thesis index",
          *_markers("thesis index", "the chapter registries, the notebooks and figures/"), thesis_index),
    Block("docs/results.md", "results", *_markers("results", "figures/"), results_page),
    Block("README.md", "chapter table", *_markers("chapter table", "the chapter registries and figures/"),
          readme_chapters),
    Block("README.md", "times", *_markers("times", "benchmarks/results/budgets.json"), readme_times),
    Block("README.md", "course times", *_markers("course times", "benchmarks/results/course.json"), course_times),
    Block("README.md", "machines", *_markers("machines", "figures/ch3/claims_ch3_machines.csv"),
          lambda root: _machines_page().readme_machines(root)),
    Block("docs/machines.md", "machines table",
          *_markers("machines table", "figures/ch3/claims_ch3_machines.csv and figures/ch4/"),
          lambda root: _machines_page().machines_table(root)),
    Block("notebooks/course/instructor/syllabus.md", "schedule",
          *_markers("schedule", "perfkit/course/syllabus.py, the units' notebooks and exercises"), syllabus_table),
    Block("docs/forms.md", "forms", *_markers("forms", "perfkit/model/forms/registry.py"), _forms_table),
)


def replace_block(text: str, begin: str, end: str, block: str, page: str = "page") -> str:
    """``text`` with what lies between the lines ``begin`` and ``end`` replaced by ``block`` (which ends with a
    newline); ``ValueError`` naming ``page`` when the markers are missing or out of order."""
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"{page}: expected the marker lines {begin!r} and {end!r} once each, in that order")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{block}{end}{tail}"


def current_block(text: str, begin: str, end: str, page: str = "page") -> str:
    """What lies between the marker lines in ``text`` (as :func:`replace_block` writes it)."""
    replace_block(text, begin, end, "", page)  # checks the markers
    return text.split(begin, 1)[1].split(end, 1)[0].removeprefix("\n")


def stale(root: Path | None = None) -> list[Block]:
    """The blocks whose text on their page differs from what :func:`write` would put there."""
    root = root or docs_root()
    return [b for b in BLOCKS
            if current_block((root / b.page).read_text(), b.begin, b.end, b.page) != b.make(root)]


def write(root: Path | None = None) -> list[str]:
    """Rewrite every generated block; returns the pages that changed (the text around the blocks is kept)."""
    from .._io import atomic_write

    root = root or docs_root()
    changed = []
    for page in dict.fromkeys(b.page for b in BLOCKS):
        text = old = (root / page).read_text()
        for b in (b for b in BLOCKS if b.page == page):
            text = replace_block(text, b.begin, b.end, b.make(root), page)
        if text != old:
            atomic_write(root / page, text)
            changed.append(page)
    return changed
