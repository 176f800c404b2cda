"""Normalise a notebook for git: no outputs, no execution counts, one canonical metadata, sources as lines.

Used as a git clean filter (``make setup`` registers it; ``.gitattributes`` applies it
to ``notebooks/*.ipynb``), so opening a notebook in JupyterLab, running it and saving
it leaves ``git status`` clean. Each cell's source is stored as a list of lines (nbformat's multi-line form,
as nbstripout leaves it), so an edit shows as the lines it changed::

    python -m perfkit.report.nbclean < notebook.ipynb > clean.ipynb
"""
from __future__ import annotations

import json
import sys

__all__ = ["clean", "main"]

#: the notebook metadata every committed notebook carries
METADATA = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"}}


def clean(nb: dict) -> dict:
    """The notebook without outputs, execution counts, run-time cell metadata or machine-specific metadata."""
    out = dict(nb, metadata=dict(METADATA))
    cells = []
    for cell in nb.get("cells", []):
        cell = dict(cell)
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        cell["source"] = text.splitlines(keepends=True)  # one line per list item: line-level diffs
        cell.pop("attachments", None) if not cell.get("attachments") else None
        tags = cell.get("metadata", {}).get("tags")
        cell["metadata"] = {"tags": tags} if tags else {}
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cells.append(cell)
    out["cells"] = cells
    return out


def dumps(nb: dict) -> str:
    """The text git stores: sorted keys, one-space indent, as nbformat writes it."""
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    sys.stdout.write(dumps(clean(json.loads(sys.stdin.read()))))


if __name__ == "__main__":  # pragma: no cover
    main()
