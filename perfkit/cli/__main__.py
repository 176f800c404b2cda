"""``python -m perfkit.cli``: the same as the ``perfkit`` command."""
import sys

from . import main

sys.exit(main())
