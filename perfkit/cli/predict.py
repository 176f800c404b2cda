"""``perfkit predict model.json configs.csv [--interval 0.9] [--out preds.csv]``: predict with a saved model."""
from __future__ import annotations

import sys

from .._io import NA_IS_LEVEL_HELP
from .common import check_interval, need_intervals, print_warnings

#: the columns ``perfkit predict`` writes beside the configurations
OUTPUT_COLUMNS = ("predicted", "lower", "upper", "extrapolated", "distance")
#: the subcommand's line in ``perfkit --help``
HELP = "predict times for configurations with a saved model"


def add_arguments(parser) -> None:
    """The options of ``perfkit predict``."""
    parser.add_argument("model", help="model JSON written by `perfkit fit`")
    parser.add_argument("csv", help="configurations, with the model's columns")
    parser.add_argument("--na-is-level", action="store_true", help=NA_IS_LEVEL_HELP)
    parser.add_argument("--out", default=None, help="write the table with the columns `predicted` and `extrapolated` "
                                                    "here (default: stdout)")
    parser.add_argument("--interval", type=float, default=None, metavar="COVERAGE",
                        help="add conformal interval columns lower, upper (e.g. 0.9) and extrapolated (and distance "
                             "for a model fitted with --extrapolate: its intervals widen with it)")


def run(args, argv=None) -> None:
    """``perfkit predict``: ``--out`` may not be a folder, the model, the configurations or an existing file other
    than a table of predictions (with a ``predicted`` column); written atomically. Columns of an earlier
    prediction in the configurations (:data:`OUTPUT_COLUMNS` the model does not read) are dropped, with a note,
    so that no output mixes two models' numbers.

    ``extrapolated`` marks the rows outside the data the model was fitted on (a value beyond the fitted range of
    a column, or a level not seen), and one warning line says how many and which columns; a model saved
    without calibration kept no fitted ranges, which a warning line says instead. ``--interval C`` (strictly
    between 0 and 1) adds ``lower`` and ``upper`` and needs a model saved with its calibration
    (``perfkit fit --form ...`` or ``--calibrate``). A model fitted with ``perfkit fit --extrapolate COL[:MAX]``
    (a :class:`~perfkit.model.uncertainty.scale_intervals.ScaleIntervalModel`) also writes ``distance``, d = 1 + log2(COL /
    MAX) beyond MAX (1 within) plus log2 of how far any other column lies beyond its fitted range, and its
    interval is ŷ·exp(±q·d): wider the farther beyond the fitted rows, in every column.
    """
    import warnings

    from .._io import atomic_write, check_output, csv_with_column, read_csv
    from ..model.uncertainty.conformal import extrapolation
    from ..model.persist import load_model
    from ..model.uncertainty.whatif import model_columns

    if args.interval is not None:
        check_interval(args.interval)
    if args.out:
        check_output(args.out, "--out", inputs=[args.model, args.csv], ours=csv_with_column("predicted"))
    model = load_model(args.model)
    if args.interval is not None:
        need_intervals(model, args.model)
    df = read_csv(args.csv, "configurations CSV", na_is_level=args.na_is_level, require_rows=True)
    read = model_columns(model) or []
    stale = [c for c in OUTPUT_COLUMNS if c in df.columns and c not in read]
    if stale:  # an earlier prediction's columns: replaced as a whole, never mixed with this model's
        df = df.drop(columns=stale)
        print(f"perfkit: note: {args.csv} has the output columns {', '.join(stale)} (an earlier prediction?); "
              "they are replaced by this model's", file=sys.stderr, flush=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if args.interval is None:
            out = df.assign(predicted=model.predict(df))
            flags, outside = extrapolation(model, df)
            if flags is not None:
                out = out.assign(extrapolated=flags.to_numpy())
        else:
            iv = model.predict_interval(df, args.interval)  # warns of the rows outside the fitted data itself
            out, flags, outside = df.assign(**{c: iv[c].to_numpy() for c in iv.columns}), iv["extrapolated"], ""
    print_warnings(caught)
    if flags is None:
        print(f"perfkit: warning: {args.model} kept no fitted ranges (written by an earlier perfkit): rows outside "
              "the data it was fitted on cannot be flagged; refit it to have them flagged",
              file=sys.stderr, flush=True)
    if outside:
        print(f"perfkit: warning: {outside}: their predictions are extrapolations", file=sys.stderr, flush=True)
    if args.out:
        atomic_write(args.out, out.to_csv(index=False))
        print(f"wrote {len(out)} predictions to {args.out}")
    else:
        print(out.to_csv(index=False), end="")
