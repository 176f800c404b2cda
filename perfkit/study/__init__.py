"""The fit study: one object for the notebook, the command line and the chapters.

A :class:`~.spec.FitSpec` says what to fit and how to judge it (column roles, the form or ``"auto"``, the split:
a random share or by extrapolation along a column, seeds, intervals, calibration, baselines, inflation) and is
checked when it is built; :func:`~.runner.run` runs it on a table and returns a :class:`~.result.StudyResult` with
the fitted model, the held-out errors with intervals, the errors by extrapolation factor, the inner comparison,
the baselines and the search table as data, a ``summary()``, a ``plot()`` and ``to_json``/``from_json``.
``perfkit fit`` parses its flags into a spec and prints ``summary()``.

>>> from perfkit.study import FitSpec, run                                            # doctest: +SKIP
>>> spec = FitSpec(target="t_iter", form="phases", gpus="n_gpus", nodes="n_nodes",   # doctest: +SKIP
...                batch="batch_per_gpu", phases=["sync_time"], extrapolate="n_gpus:16")
>>> result = run(spec, job)                                                          # doctest: +SKIP
>>> print(result.summary()); result.factors; result.inner; result.coverage           # doctest: +SKIP
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the real imports, for readers and linters; at run time each loads on first use
    from . import compare, constraints, data, plots, result, runner, spec, split, summary
    from .result import StudyError, StudyResult, StudyWarning
    from .runner import run
    from .spec import FitSpec

#: public name → the module that defines it
_EXPORTS = {"FitSpec": "spec", "run": "runner", "StudyResult": "result", "StudyError": "result",
            "StudyWarning": "result"}
_SUBMODULES = ("compare", "constraints", "data", "plots", "result", "runner", "spec", "split", "summary")

__all__ = ["FitSpec", "run", "StudyResult", "StudyError", "StudyWarning"]

__getattr__, __dir__ = attach(__name__, globals(), _EXPORTS, _SUBMODULES)
