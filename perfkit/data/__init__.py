"""Data: the thesis's published tables, loaders of measured files, and synthetic data for tests.

Measured files are written by :mod:`perfkit.measure` under ``data/measured/`` in the
format :mod:`perfkit.schema` declares; the thesis's tables live in ``data/thesis/``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the real imports, for readers and linters; at run time each loads on first use
    from . import thesis, measured, synthetic, external
    from .thesis import THESIS_TABLES, list_thesis_tables, load_thesis_table
    from .measured import load_phases, load_provenance, load_steps, thesis_split
    from .external import EXTERNAL_DATASETS, load_external
    from .lambda_labs import load_lambda
    from .nvidia_dle import load_nvidia_dle
    from .pollux import load_pollux

#: public name → the module that defines it
_EXPORTS = {
    "load_thesis_table": "thesis",
    "list_thesis_tables": "thesis",
    "THESIS_TABLES": "thesis",
    "load_phases": "measured",
    "load_steps": "measured",
    "load_provenance": "measured",
    "thesis_split": "measured",
    "EXTERNAL_DATASETS": "external",
    "load_external": "external",
    "load_lambda": "lambda_labs",
    "load_pollux": "pollux",
    "load_nvidia_dle": "nvidia_dle",
}
_SUBMODULES = ('thesis', 'measured', 'synthetic', 'external')

__all__ = [
    "EXTERNAL_DATASETS",
    "THESIS_TABLES",
    "list_thesis_tables",
    "load_external",
    "load_lambda",
    "load_pollux",
    "load_nvidia_dle",
    "load_phases",
    "load_provenance",
    "load_steps",
    "load_thesis_table",
    "thesis_split",
    "thesis",
    "measured",
    "synthetic",
    "external",
]


__getattr__, __dir__ = attach(__name__, globals(), _EXPORTS, _SUBMODULES)
