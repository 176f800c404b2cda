"""The output files of the commands that write a table and a figure (``perfkit whatif``, ``perfkit plan``)."""
from __future__ import annotations

import os

__all__ = ["check_table_and_figure"]


def check_table_and_figure(args, inputs, column: str) -> str | None:
    """``--out`` and ``--plot`` checked before any work: neither an input of the command (``inputs``) nor the other
    output, an existing ``--out`` only a table of ours (a CSV with ``column``); the figure's format (from the suffix
    of ``--plot``) one matplotlib writes. Returns that format (None without ``--plot``)."""
    from .._io import check_output, csv_with_column

    if args.out and args.plot and os.path.realpath(args.out) == os.path.realpath(args.plot):
        raise ValueError(f"--plot {args.plot!r} is also --out: the figure would replace the table; "
                         "give two file names")
    for flag, path, ours in (("--out", args.out, csv_with_column(column)), ("--plot", args.plot, None)):
        if path:
            check_output(path, flag, inputs=inputs, ours=ours)
    if not args.plot:
        return None
    from matplotlib.figure import Figure

    kinds = Figure().canvas.get_supported_filetypes()
    kind = os.path.splitext(args.plot)[1].lstrip(".").lower()
    if kind not in kinds:
        raise ValueError(f"--plot {args.plot!r}: end the name with the suffix of a figure format, one of "
                         + ", ".join(f".{k}" for k in sorted(kinds)))
    return kind
