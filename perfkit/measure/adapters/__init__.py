"""Framework adapters: one program per framework that times training steps for the collector.

An adapter implements :class:`perfkit.measure.protocol.Adapter` and is started
as ``python -m <module>`` once per worker. :data:`ADAPTERS` maps the
``--framework`` name of ``perfkit collect`` to that module. The modules here
import their framework (PyTorch for :mod:`.pytorch`, :mod:`.torch_models` and
:mod:`.resattnet3d`), so nothing imports them but the worker processes and the
tests that need the framework.
"""
from __future__ import annotations

__all__ = ["ADAPTERS"]

#: ``--framework`` name → Python module implementing :class:`perfkit.measure.protocol.Adapter`
ADAPTERS = {"pytorch": "perfkit.measure.adapters.pytorch"}
