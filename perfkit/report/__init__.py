"""Report: the single writer of figures and tables, the figure types, reader tables and the claims ledger (its
verdicts are decided with :mod:`perfkit.evidence`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the real imports, for readers and linters; at run time each loads on first use
    from . import output, plots, tables, claims, teaching
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
_SUBMODULES = ('output', 'plots', 'tables', 'claims', 'teaching')

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
    "teaching",
]


__getattr__, __dir__ = attach(__name__, globals(), _EXPORTS, _SUBMODULES)
