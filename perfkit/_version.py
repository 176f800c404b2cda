"""The package version: the one place ``perfkit.__version__`` and ``perfkit version`` read it from."""

__version__ = "0.1.0"
