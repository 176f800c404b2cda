"""The package's shape: no import cycle, no module over 600 lines, no function over 60 lines of code, and no
module reaching into another's private (underscore) names; test files named after what they test."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "perfkit"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60


def _modules() -> dict:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path):
    """``(module imported, names imported)`` for every ``import`` and ``from … import`` of perfkit modules."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield (sub, None) if sub in MODULES else (base, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None


def _graph() -> dict:
    return {name: {target for target, _ in _imports(name, path) if target in MODULES and target != name}
            for name, path in MODULES.items()}


def _cycles(graph: dict) -> list:
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("name", list(MODULES))
def test_module_size(name):
    assert len(MODULES[name].read_text().splitlines()) <= MAX_MODULE_LINES


def _code_lines(lines, node) -> int:
    docstrings = set()
    for n in ast.walk(node):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body:
            first = n.body[0]
            if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) \
                    and isinstance(first.value.value, str):
                docstrings |= set(range(first.lineno, first.end_lineno + 1))
    return sum(1 for i in range(node.lineno, node.end_lineno + 1)
               if i not in docstrings and lines[i - 1].strip() and not lines[i - 1].strip().startswith("#"))


def test_function_size():
    long = []
    for name, path in MODULES.items():
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = _code_lines(lines, node)
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{name}.{node.name}: {n} lines of code")
    assert long == []


def test_no_private_names_imported_across_modules():
    reach = [f"{name} imports {target}.{item}" for name, path in MODULES.items()
             for target, item in _imports(name, path)
             if item and item.startswith("_") and not item.startswith("__") and target.startswith("perfkit")
             and target != name]
    assert reach == []


# ------------------------------------------------------------------------------------------------- layers
#: the layers, lowest first: a module may import its own layer and those below it, never one above
LAYERS = (
    ("_io", "_checks", "_lazy", "_version", "schema", "evidence", "progress"),
    ("measure",),
    ("data",),
    ("model",),
    ("report",),
    ("study",),
    ("plan",),
    ("chapters",),
    ("course",),
    ("pages",),
    ("cli",),
)
#: the package itself (its lazy public names) and ``python -m perfkit`` sit above every layer
TOP = {"perfkit", "perfkit.__main__"}
#: the core of perfkit.model: the only modules directly in it; everything else lives in a subpackage by concept
MODEL_CORE = {"base", "roles", "validation", "persist", "unitscale"}


def _layer(module: str) -> int:
    part = module.split(".")[1]
    return next(i for i, names in enumerate(LAYERS) if part in names)


def _upward_imports(graph) -> list:
    return sorted(f"{a} imports {b}" for a, targets in graph.items() if a not in TOP
                  for b in targets if b not in TOP and _layer(b) > _layer(a))


def test_every_module_lies_in_a_layer():
    for name in set(MODULES) - TOP:
        assert _layer(name) >= 0, name


def test_layers_run_one_way():
    """measure -> data -> model -> report -> study -> chapters -> course -> pages -> cli: nothing imports a layer above it
    (so nothing in model/ imports report/, study/, chapters/ or cli/, and nothing below cli/ imports cli/)."""
    assert _upward_imports(_graph()) == []


def test_the_layer_check_finds_an_upward_import():
    assert _upward_imports({"perfkit.model.base": {"perfkit.report.plots"}, "perfkit.cli.fit": {"perfkit.model.base"}}) \
        == ["perfkit.model.base imports perfkit.report.plots"]


def test_model_has_no_flat_module_beyond_its_core():
    flat = {p.stem for p in (ROOT / "model").glob("*.py")} - {"__init__"}
    assert flat == MODEL_CORE
    for sub in (p for p in (ROOT / "model").iterdir() if p.is_dir() and p.name != "__pycache__"):
        assert (sub / "__init__.py").is_file(), f"{sub} is not a package"
def _reexports(name: str, path: Path) -> list:
    """Names a module lists in ``__all__`` that it imports from another perfkit module (a package's ``__init__``,
    whose lazy public names are its interface, excepted)."""
    if path.name == "__init__.py":
        return []
    tree = ast.parse(path.read_text())
    exported = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            exported = {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
    imported = {item for target, item in _imports(name, path) if item and target.startswith("perfkit")}
    return sorted(f"{name}.{n}" for n in exported & imported)


def test_no_module_reexports_another_modules_names():
    found = [r for name, path in MODULES.items() for r in _reexports(name, path)]
    assert found == []


def test_the_fit_command_is_a_thin_door():
    """``perfkit fit`` is at most 250 lines over its modules (fit.py and the helpers it shares) and hands one spec
    to the library once: the fit study lives in perfkit.study."""
    fit, common = ROOT / "cli" / "fit.py", ROOT / "cli" / "common.py"
    assert sum(len(p.read_text().splitlines()) for p in (fit, common)) <= 250
    calls = [n for n in ast.walk(ast.parse(fit.read_text())) if isinstance(n, ast.Call)
             and getattr(n.func, "id", None) in ("run_study", "FitSpec")]
    assert [c.func.id for c in calls] == ["FitSpec", "run_study"]
TESTS = Path(__file__).resolve().parent


def _history_names(paths) -> list:
    """Test files named after how their cases were found (a review, an issue), not after what they test."""
    return [p.name for p in paths if p.name.startswith(("test_hostile", "test_issue"))]


def _issue_citations(name: str, text: str) -> list:
    """``FILE:LINE`` of every docstring or comment of a test file that cites an issue number."""
    import io
    import re
    import tokenize

    found = []
    strings = {n.value.lineno: n.value.value for n in ast.walk(ast.parse(text))
               if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
    comments = {t.start[0]: t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type == tokenize.COMMENT}
    for line, words in sorted({**strings, **comments}.items()):
        if re.search(r"\bissues?\s*#?\d+", words, re.IGNORECASE):
            found.append(f"{name}:{line}")
    return found


def test_tests_are_named_by_what_they_test():
    """No test file is named after history (``test_hostile_*``, ``test_issue*``) and no docstring or comment of a
    test cites an issue number: a test file is named after the module or concept it checks."""
    files = sorted(TESTS.glob("*.py"))
    assert _history_names(files) == []
    assert [c for p in files for c in _issue_citations(p.name, p.read_text())] == []


def test_the_history_guard_finds_history():
    assert _history_names([Path("test_hostile_cli.py"), Path("test_issue12.py"), Path("test_cli_fit.py")]) == \
        ["test_hostile_cli.py", "test_issue12.py"]
    text = '"""Bad inputs (issue 36, item 4)."""\n\n\ndef test_x():\n    """Issue 7."""\n    # see issue #9\n'
    assert _issue_citations("t.py", text) == ["t.py:1", "t.py:5", "t.py:6"]
    assert _issue_citations("t.py", '"""A known issue with rows."""\n') == []
