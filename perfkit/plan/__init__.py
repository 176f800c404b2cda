"""Which hardware to rent: a model fitted across hardware prices every configuration of a menu of GPU offers for one
training job, and ranks them.

:func:`~.planner.plan` takes a :class:`~perfkit.model.uncertainty.group_intervals.GroupIntervalModel` (``perfkit fit
... --hardware COL --split group:COL``), a workload (``{"model": "resnet50", "precision": "fp16"}``), a target
(samples, or epochs × dataset size), a menu (:mod:`.menu`: Lambda's servers with amortised prices, or your own CSV)
and optionally a deadline or a budget; it returns a :class:`~.planner.PlanResult`: the table (hours and cost of
every configuration with intervals, a flag for unmeasured GPUs and extrapolation in scale, the Pareto front), a
``summary()`` and a ``plot()``. ``perfkit plan`` prints the summary.

>>> from perfkit.model.persist import load_model                                    # doctest: +SKIP
>>> from perfkit.plan import plan                                                   # doctest: +SKIP
>>> result = plan(load_model("model.json"), {"model": "resnet50", "precision": "fp16"},   # doctest: +SKIP
...               epochs=90, dataset_size=1_281_167, deadline_hours=24)
>>> print(result.summary()); result.table; result.plot()                            # doctest: +SKIP
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the real imports, for readers and linters; at run time each loads on first use
    from . import menu, planner, plots
    from .menu import lambda_menu, load_menu
    from .planner import PlanResult, plan
    from .plots import plot_plan

#: public name → the module that defines it
_EXPORTS = {"plan": "planner", "PlanResult": "planner", "lambda_menu": "menu", "load_menu": "menu",
            "plot_plan": "plots"}
_SUBMODULES = ("menu", "planner", "plots")

__all__ = ["plan", "PlanResult", "lambda_menu", "load_menu", "plot_plan"]

__getattr__, __dir__ = attach(__name__, globals(), _EXPORTS, _SUBMODULES)
