"""The chapters: one module per thesis chapter, each with ``analyse(**params) -> ChapterResult``.

:data:`CHAPTERS` maps a chapter key to its module and notebook. A notebook keeps
the typed ``parameters`` cell, calls the module's ``analyse`` once, and then only
displays and explains the result's tables, figures, claims and readings.
:func:`findings` gathers the ``summary`` reading of each chapter (the README's
"What our measurements show").
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .._lazy import attach
from .result import ChapterResult, ParameterError, findings, make_params

if TYPE_CHECKING:  # real imports for readers and linters; at run time the chapter modules load on first use
    from . import ch3, ch4, ch5, ch6, ch7, ch8

__all__ = ["CHAPTERS", "ChapterResult", "ParameterError", "make_params", "chapter_module", "findings", "ch3", "ch4", "ch5",
           "ch6", "ch7", "ch8"]

#: chapter key → (module under perfkit.chapters, notebook under notebooks/)
CHAPTERS: dict[str, tuple[str, str]] = {
    "ch3": ("ch3", "ch3_sgd_phase_model.ipynb"),
    "ch4": ("ch4", "ch4_generic_model.ipynb"),
    "ch5": ("ch5", "ch5_resattnet3d.ipynb"),
    "ch6": ("ch6", "ch6_beyond_the_thesis.ipynb"),
    "ch7": ("ch7", "ch7_extrapolation.ipynb"),
    "ch8": ("ch8", "ch8_cross_hardware.ipynb"),
}


def chapter_module(chapter: str):
    """The module of ``chapter`` (``"ch3"`` …); ``ValueError`` for an unknown chapter."""
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter: unknown {chapter!r}; known chapters: {', '.join(CHAPTERS)}")
    return importlib.import_module(f".{CHAPTERS[chapter][0]}", __name__)


__getattr__, __dir__ = attach(__name__, globals(), {}, tuple(CHAPTERS))
