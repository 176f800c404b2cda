"""``perfkit findings [--write]``: the chapters' generated findings."""
from __future__ import annotations

#: the subcommand's line in ``perfkit --help``
HELP = "print the chapters' findings (figures/chN/findings_chN.md), or write them into docs/findings.md"


def add_arguments(parser) -> None:
    """The options of ``perfkit findings``."""
    parser.add_argument("--write", action="store_true",
                        help="replace the generated findings block of docs/findings.md (the page the README links to)")


def run(args, argv=None) -> None:
    """Print the findings, or replace the generated block of docs/findings.md with them (``--write``)."""
    from ..chapters.notebooks import readme_findings

    print(readme_findings(write=args.write), end="")
