"""``perfkit reproduce``: execute the chapter notebooks with papermill."""
from __future__ import annotations

from .common import literal

#: the subcommand's line in ``perfkit --help``
HELP = "execute the chapter notebooks with papermill"


def add_arguments(parser) -> None:
    """The options of ``perfkit reproduce``."""
    parser.add_argument("--quick", action="store_true", help="small budgets (for tests; < 2 minutes)")
    parser.add_argument("--chapter", action="append", dest="chapters", metavar="CH",
                        help="chapter to run (repeatable; default: all)")
    parser.add_argument("--build-dir", default=None,
                        help="folder for executed notebooks (default: build/, build/quick/ with --quick, "
                             "build/custom/ with --figures-dir); ~ and relative paths are taken from here")
    parser.add_argument("--figures-dir", default=None,
                        help="folder for figures/tables (default: figures/; build/quick/figures/ with --quick, which "
                             "never writes the committed figures/); ~ and relative paths are taken from here")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                        help="a value for the notebooks' parameters cell, e.g. -p n_fit 900 -p lams '[1e-3, 1e-2]' "
                             "(a Python literal; anything else is a string; a path's ~ and relative paths are taken "
                             "from here); repeatable")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.add_argument("--no-cache", action="store_true",
                        help="recompute every chapter's results instead of reading them from the results cache "
                             "(<build dir>/cache/results; used when parameters, data and code are unchanged)")


def run(args, argv=None) -> None:
    """Run the chosen chapters' notebooks (every chapter by default)."""
    from ..chapters.notebooks import reproduce

    reproduce(args.chapters, quick=args.quick, build_dir=args.build_dir,
              figures_dir=args.figures_dir, progress=not args.no_progress,
              parameters={name: literal(value) for name, value in args.parameter}, cache=not args.no_cache)
