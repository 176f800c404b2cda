"""Report: the single writer of figures and tables, the figure types, reader tables and the claims ledger."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the real imports, for readers and linters; at run time each loads on first use
    from . import output, plots, tables, claims
    from .output import STYLE, savefig, savetable, use_style
    from .claims import Claim, judge_all
    from .plots import new_figure
    from .tables import claims_view, pm, rounded

#: public name → the module that defines it
_EXPORTS = {
    "savefig": "output",
    "savetable": "output",
    "use_style": "output",
    "STYLE": "output",
    "Claim": "claims",
    "judge_all": "claims",
    "new_figure": "plots",
    "claims_view": "tables",
    "pm": "tables",
    "rounded": "tables",
}
_SUBMODULES = ('output', 'plots', 'tables', 'claims')

__all__ = [
    "Claim",
    "STYLE",
    "claims_view",
    "judge_all",
    "new_figure",
    "pm",
    "rounded",
    "savefig",
    "savetable",
    "use_style",
    "output",
    "plots",
    "tables",
    "claims",
]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
