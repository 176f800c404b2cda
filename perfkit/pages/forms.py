"""The table of model forms in ``docs/forms.md`` (a block of :mod:`perfkit.report.docs`), generated from the one
registry of forms (:mod:`perfkit.model.forms.registry`): each form's name, class, kind, what it needs besides the
column roles and what it is, so the page lists exactly the forms ``perfkit fit --form`` offers."""
from __future__ import annotations

from pathlib import Path

__all__ = ["forms_table"]


def forms_table(root: Path | None = None) -> str:
    """The Markdown table of every registered form, in the registry's order (``root`` is unused: the table
    depends on the registry alone)."""
    from ..model.forms.registry import INPUTS, REGISTRY, TABLE

    lines = ["| `--form` | class | kind | needs | what |", "|---|---|---|---|---|"]
    for f in REGISTRY:
        module, name = f.location
        needs = [INPUTS[n] for n in f.needs]
        if f.kind == TABLE:
            needs.insert(0, "numeric, categorical, extrinsic columns")
        path = f"perfkit/model/{module.replace('.', '/')}.py"
        lines.append(f"| `{f.name}` | `{name}` (`{path}`) | {f.kind} | {'; '.join(needs)} | {f.words} |")
    return "\n".join(lines) + "\n"
