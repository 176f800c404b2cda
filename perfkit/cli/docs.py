"""``perfkit docs [--write | --check]``: the generated blocks of the documentation (:mod:`perfkit.pages.blocks`)."""
from __future__ import annotations

#: the subcommand's line in ``perfkit --help``
HELP = ("say which generated blocks of docs/ and the README are stale (thesis index, results, findings, the "
        "README's chapter table and times), or rewrite them (--write)")


def add_arguments(parser) -> None:
    """The options of ``perfkit docs``."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true",
                      help="rewrite every generated block from the chapter registries, the notebooks, figures/ and "
                           "benchmarks/results/budgets.json (the text around the blocks is kept)")
    mode.add_argument("--check", action="store_true",
                      help="exit with status 2 (one line naming the stale blocks) when any block differs from what "
                           "--write would write")


def run(args, argv=None) -> None:
    """Print each block and whether it is current; rewrite them (``--write``); or fail on a stale one
    (``--check``: ``ValueError``, which ``perfkit`` prints as one line with exit status 2)."""
    from ..pages import blocks as docs

    if args.write:
        changed = docs.write()
        print("rewrote " + ", ".join(changed) if changed else "every generated block is current; nothing written")
        return
    old = docs.stale()
    if args.check and old:
        raise ValueError("stale generated blocks: " + ", ".join(f"{b.page} ({b.name})" for b in old)
                         + "; run `perfkit docs --write`")
    for block in docs.BLOCKS:
        print(f"{block.page} ({block.name}): {'stale' if block in old else 'current'}")
