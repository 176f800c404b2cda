"""Measure: the collector, worker groups, the line protocol, provenance, the measured spaces and adapters.

Data flows ``perfkit collect`` → :mod:`.plans` (which samples, which columns) →
:mod:`.workers` (G adapter processes, :mod:`.adapters`) → :mod:`.samplelog`
(the crash-safe CSV) with :mod:`.provenance` beside it, under ``data/measured/``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the real imports, for readers and linters; at run time each loads on first use
    from . import adapters, cluster, imagedata, plans, protocol, provenance, samplelog, spaces, workers
    from .collect import collect
    from .plans import DEFAULTS, KINDS, Plan, make_plan
    from .workers import WorkerError, WorkerGroup, adapter_command
    from .samplelog import SampleLog
    from .spaces import DATASET_SHAPES, TABLE_4_1_SPACE, TABLE_5_1_SPACE, check_geometry, geometry, sample_configs, sample_space
    from .provenance import machine_info, numeric_environment, numeric_summary, write_json_atomic
    from .protocol import Adapter, serve

#: public name → the module that defines it
_EXPORTS = {
    "collect": "collect",
    "make_plan": "plans",
    "Plan": "plans",
    "KINDS": "plans",
    "DEFAULTS": "plans",
    "WorkerGroup": "workers",
    "WorkerError": "workers",
    "adapter_command": "workers",
    "SampleLog": "samplelog",
    "TABLE_4_1_SPACE": "spaces",
    "TABLE_5_1_SPACE": "spaces",
    "DATASET_SHAPES": "spaces",
    "sample_configs": "spaces",
    "sample_space": "spaces",
    "check_geometry": "spaces",
    "geometry": "spaces",
    "machine_info": "provenance",
    "numeric_environment": "provenance",
    "numeric_summary": "provenance",
    "write_json_atomic": "provenance",
    "Adapter": "protocol",
    "serve": "protocol",
}
_SUBMODULES = ('adapters', 'cluster', 'imagedata', 'protocol', 'provenance', 'spaces', 'plans', 'workers', 'samplelog')

__all__ = [
    "Adapter",
    "DATASET_SHAPES",
    "DEFAULTS",
    "KINDS",
    "Plan",
    "SampleLog",
    "TABLE_4_1_SPACE",
    "TABLE_5_1_SPACE",
    "WorkerError",
    "WorkerGroup",
    "adapter_command",
    "check_geometry",
    "collect",
    "geometry",
    "machine_info",
    "make_plan",
    "numeric_environment",
    "numeric_summary",
    "sample_configs",
    "sample_space",
    "serve",
    "write_json_atomic",
    "adapters",
    "cluster",
    "imagedata",
    "protocol",
    "provenance",
    "spaces",
    "plans",
    "workers",
    "samplelog",
]


__getattr__, __dir__ = attach(__name__, globals(), _EXPORTS, _SUBMODULES)
