"""``python -m perfkit``: the same as the ``perfkit`` command (e.g. ``python -m perfkit --version``)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
