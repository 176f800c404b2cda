"""Each chapter's parameter defaults live in one place (its ``Params``): the notebook's ``parameters`` cell holds
the same names and values, and its check cell passes every one of them to ``check_params``."""
import ast
import dataclasses
import json

import pytest

from perfkit.chapters import CHAPTERS, chapter_module
from perfkit.schema import repo_root

#: parameters a notebook does not expose (progress bars follow the notebook runner)
NOT_IN_NOTEBOOK = {"progress"}


def _cells(chapter):
    nb = json.loads((repo_root() / "notebooks" / CHAPTERS[chapter][1]).read_text())
    return [c["source"] if isinstance(c["source"], str) else "".join(c["source"]) for c in nb["cells"]
            if c["cell_type"] == "code"], nb


def _parameters_cell(chapter) -> dict:
    _, nb = _cells(chapter)
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    values = {}
    for node in ast.parse(src).body:
        assert isinstance(node, ast.AnnAssign), f"{chapter}: the parameters cell holds only `name: type = literal`"
        values[node.target.id] = ast.literal_eval(node.value)
    return values


def _normal(v):
    return list(v) if isinstance(v, (list, tuple)) else v


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_parameters_cell_matches_params(chapter):
    module = chapter_module(chapter)
    defaults = {f.name: _normal(f.default) for f in dataclasses.fields(module.Params)
                if f.name not in NOT_IN_NOTEBOOK}
    cell = {k: _normal(v) for k, v in _parameters_cell(chapter).items()}
    assert cell == defaults


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_check_cell_passes_every_parameter(chapter):
    sources, _ = _cells(chapter)
    call = next(node for src in sources for node in ast.walk(ast.parse(src.replace("%matplotlib inline", "")))
                if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "check_params")
    passed = {kw.arg: kw.value.id for kw in call.keywords}
    assert passed == {name: name for name in _parameters_cell(chapter)}
