"""``perfkit version``: print the version."""
from __future__ import annotations

from .._version import __version__

#: the subcommand's line in ``perfkit --help``
HELP = "print the version"


def add_arguments(parser) -> None:
    """``perfkit version`` has no options."""


def run(args, argv=None) -> None:
    """Print :data:`perfkit.__version__`."""
    print(__version__)
