"""Lazy attributes of a package: one ``__getattr__``/``__dir__`` pair that every perfkit ``__init__`` uses."""
from __future__ import annotations

import importlib

__all__ = ["attach"]


def attach(package: str, namespace: dict, exports: dict, submodules=()):
    """``(__getattr__, __dir__)`` for ``package`` whose public names load on first use.

    ``exports`` maps a name to the module (relative to ``package``, dotted) that defines it;
    ``submodules`` are returned as modules. A loaded name is cached in ``namespace``.
    """

    def __getattr__(name: str):
        if name in exports:
            value = getattr(importlib.import_module(f".{exports[name]}", package), name)
            namespace[name] = value
            return value
        if name in submodules:
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
