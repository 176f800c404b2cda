"""``perfkit whatif model.json --base CONFIG --vary workers=1,2,4,8``: time, speedup, efficiency against one column."""
from __future__ import annotations

import io
import os
import sys

from .._io import NA_IS_LEVEL_HELP
from .common import check_interval, need_intervals, number_or_text, pairs, print_warnings

#: the subcommand's line in ``perfkit --help``
HELP = "predicted time, speedup and efficiency as one column varies"


def add_arguments(parser) -> None:
    """The options of ``perfkit whatif``."""
    parser.add_argument("model", help="model JSON written by `perfkit fit`")
    parser.add_argument("--base", required=True,
                        help="the configuration to start from: a CSV file (its first row, or --row) or, when no "
                             "such file exists, key=value pairs, e.g. num_filters=8,kernel_size=5,...")
    parser.add_argument("--row", type=int, default=0, help="row of the --base CSV (default 0)")
    parser.add_argument("--vary", required=True, help="column=values, e.g. workers=1,2,4,8,16")
    parser.add_argument("--interval", type=float, default=0.9, metavar="COVERAGE",
                        help="interval coverage (default 0.9; needs a calibrated model)")
    parser.add_argument("--out", default=None, help="also write the table as CSV")
    parser.add_argument("--na-is-level", action="store_true", help=NA_IS_LEVEL_HELP)
    parser.add_argument("--plot", default=None, help="also draw it (png/svg/pdf)")


def _check_outputs(args, base_file) -> str | None:
    """``--out`` and ``--plot`` checked before any work (:func:`perfkit.cli.outputs.check_table_and_figure`)."""
    from .outputs import check_table_and_figure

    return check_table_and_figure(args, [args.model, base_file], "predicted")


def run(args, argv=None) -> None:
    """``perfkit whatif``: one configuration, one column varied; a table (and a figure) of time, speedup, efficiency.

    ``--vary`` must name a column the model reads. ``--out`` and ``--plot`` may not be an input of the command
    (the model, the ``--base`` CSV) or each other (checked before any work), and are written atomically
    (:func:`perfkit._io.atomic_write`), never through a link.
    """
    import warnings

    import pandas as pd

    from .._io import atomic_write, check_input_file, read_csv
    from ..model.persist import load_model
    from ..model.uncertainty.whatif import model_columns, whatif

    check_interval(args.interval)
    col, sep, values = args.vary.partition("=")
    col = col.strip()
    grid = [number_or_text(v.strip()) for v in values.split(",") if v.strip()]
    if not sep or not col or not grid:
        raise ValueError(f"--vary: expected column=v1,v2,..., e.g. workers=1,2,4,8; got {args.vary!r}")
    pairs_given = "=" in args.base and not os.path.exists(args.base) and not args.base.lower().endswith(".csv")
    plot_format = _check_outputs(args, None if pairs_given else args.base)
    model = load_model(args.model)
    need_intervals(model, args.model)
    if pairs_given:
        base = pairs(args.base, "--base")
    else:
        frame = read_csv(check_input_file(args.base, "--base CSV"), "--base CSV", na_is_level=args.na_is_level,
                         require_rows=True)
        if not 0 <= args.row < len(frame):
            raise ValueError(f"--row: {args.base} has rows 0 to {len(frame) - 1}, not {args.row}")
        base = frame.iloc[args.row].to_dict()
        empty = [c for c in (model_columns(model) or []) if c in base and pd.isna(base[c])]
        if empty:
            raise ValueError(f"--base CSV {args.base!r}, row {args.row} (--row): column {empty[0]!r} is empty; give "
                             "a row with every column the model reads")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = whatif(model, base, col, grid, args.interval)
    print_warnings(caught)
    numeric = "efficiency" in table.columns
    with pd.option_context("display.width", 160, "display.float_format", "{:.4g}".format):
        print(f"what if {col} = {', '.join(map(str, grid))}  ({100 * args.interval:g} % intervals; speedup "
              f"relative to {col} = {grid[0]}{'; efficiency = speedup / (' + col + ' ratio)' if numeric else ''})")
        print(table.to_string(index=False, na_rep="–"))
    if table["extrapolated"].any():
        print("perfkit: warning: rows marked extrapolated lie outside the fitted data; their intervals carry no "
              "coverage guarantee" + ("; rows shown – were not predicted" if table["predicted"].isna().any() else ""),
              file=sys.stderr)
    if args.out:
        atomic_write(args.out, table.to_csv(index=False))
        print(f"wrote {args.out}")
    if args.plot:
        from ..report.plots import whatif_figure

        fig = whatif_figure(table, col)
        buffer = io.BytesIO()
        fig.savefig(buffer, format=plot_format, bbox_inches="tight")
        atomic_write(args.plot, buffer.getvalue())
        print(f"wrote {args.plot}")
