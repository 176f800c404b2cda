"""``perfkit tables [NAME] [--source SOURCE] [--long]``: the thesis's transcribed tables."""
from __future__ import annotations

#: the subcommand's line in ``perfkit --help``
HELP = "list the thesis's transcribed tables, or print one"


def add_arguments(parser) -> None:
    """The options of ``perfkit tables``."""
    parser.add_argument("name", nargs="?", help="table name, e.g. 3.2, 4.3, journal5, conference1")
    parser.add_argument("--source", default=None, help="keep one source (thesis, paper_iucc2021, ...)")
    parser.add_argument("--long", action="store_true",
                        help="the tidy table with notes and citations, one row per value")


def run(args, argv=None) -> None:
    """List the tables, or print one (frameworks side by side unless ``--long``)."""
    import pandas as pd

    from ..data.thesis import list_thesis_tables, load_thesis_table, wide_table

    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 20):
        if args.name:
            table = load_thesis_table(args.name, source=args.source)
            print((table if args.long else wide_table(table)).to_string(index=False))
        else:
            print(list_thesis_tables().to_string(index=False))
