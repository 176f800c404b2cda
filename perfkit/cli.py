"""The ``perfkit`` command line.

Subcommands
-----------
``perfkit reproduce [--quick] [--chapter ch3 ...] [--build-dir build]``
    Execute the chapter notebooks with papermill.
``perfkit tables [NAME] [--source SOURCE]``
    List the transcribed thesis tables, or print one.
``perfkit version``
    Print the version.
"""
from __future__ import annotations

import argparse
import sys

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="perfkit",
        description="Performance modelling of distributed deep-learning training (Kavarakuntla 2023, reproduced).",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    rep = sub.add_parser("reproduce", help="execute the chapter notebooks with papermill")
    rep.add_argument("--quick", action="store_true", help="small budgets (for tests; < 2 minutes)")
    rep.add_argument("--chapter", action="append", dest="chapters", metavar="CH",
                     help="chapter to run (repeatable; default: all)")
    rep.add_argument("--build-dir", default="build", help="folder for executed notebooks (default: build)")
    rep.add_argument("--figures-dir", default=None, help="folder for figures/tables (default: figures)")
    rep.add_argument("--no-progress", action="store_true", help="hide progress bars")

    tab = sub.add_parser("tables", help="list the thesis's transcribed tables, or print one")
    tab.add_argument("name", nargs="?", help="table name, e.g. 3.2, 4.3, journal5, conference1")
    tab.add_argument("--source", default=None, help="keep one source (thesis, paper_iucc2021, ...)")

    sub.add_parser("version", help="print the version")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "version":
            from . import __version__

            print(__version__)
        elif args.command == "tables":
            import pandas as pd

            from .thesis import list_thesis_tables, load_thesis_table

            with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 20):
                if args.name:
                    print(load_thesis_table(args.name, source=args.source).to_string(index=False))
                else:
                    print(list_thesis_tables().to_string(index=False))
        elif args.command == "reproduce":
            from .reproduce import reproduce

            reproduce(args.chapters, quick=args.quick, build_dir=args.build_dir,
                      figures_dir=args.figures_dir, progress=not args.no_progress)
    except (ValueError, FileNotFoundError) as exc:
        print(f"perfkit: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
