"""``perfkit fit data.csv --target COL ...``: a thin door to the fit study (:mod:`perfkit.study`).

It parses the flags into one :class:`~perfkit.study.spec.FitSpec` (checked when built, each flag named in its
messages), reads the CSV, hands both to :func:`perfkit.study.run` once, prints the result's
:meth:`~perfkit.study.result.StudyResult.summary` and saves the model as JSON. The choices of ``--form``,
``--method``, ``--coding``, ``--penalty`` and ``--intervals`` come from the model's registries.
"""
from __future__ import annotations

import sys

from .._io import NA_IS_LEVEL_HELP

#: the subcommand's line in ``perfkit --help``
HELP = "fit the generic performance model to your own measurements (CSV)"


def add_arguments(parser) -> None:
    """The options of ``perfkit fit`` (built only when ``perfkit fit`` runs or every command's help is asked for)."""
    # the registries live beside the model (scikit-learn, scipy): imported here, not when the package is
    from ..model.forms.generic import CODINGS, PENALTIES
    from ..model.forms.generic import ENGINE_METHODS
    from ..model.forms.registry import form_names
    from ..model.uncertainty.conformal import INTERVAL_METHODS
    from ..study.spec import AUTO, DEFAULT_FORM, DEFAULT_TEST_SIZE

    defaults = {f.name: f.default for f in _spec_fields()}

    parser.add_argument("csv", help="measurements, one row per configuration")
    parser.add_argument("--target", required=True, help="column with the measured time")
    parser.add_argument("--numeric", default="", help="numeric intrinsic columns, comma-separated")
    parser.add_argument("--categorical", default="", help="categorical intrinsic columns, comma-separated")
    parser.add_argument("--extrinsic", default="",
                        help="extrinsic scaling columns (workers, batch size), comma-separated")
    parser.add_argument("--penalty", choices=["none", *(p for p in PENALTIES if p)], default="none",
                        help="regularisation (default none)")
    parser.add_argument("--lam", type=float, default=0.0, help="regularisation strength λ")
    parser.add_argument("--seeds", type=int, default=10, help="fits with seeds 0..N-1; the best objective is kept")
    parser.add_argument("--test-size", type=float, default=None,
                        help=f"held-out share (0-1) or row count (>= 1) for MAPE/R², drawn at random (default "
                             f"{DEFAULT_TEST_SIZE:g}; not with --extrapolate)")
    parser.add_argument("--method", choices=list(ENGINE_METHODS), default=defaults["method"], help="fitting engine")
    parser.add_argument("--coding", choices=list(CODINGS), default=defaults["coding"],
                        help="categorical coding")
    parser.add_argument("--scale", choices=["data", "none"], default="data",
                        help="data (default): fit unit-free, the times and columns divided by their medians, so any "
                             "time unit gives the same fit; none: the thesis's convention, the bounds of a, κ, C "
                             "[0, 1000] and --lam in the target's units (seconds)")
    parser.add_argument("--jobs", type=int, default=-1,
                        help="parallel fits and forest trees (joblib n_jobs; default -1: every core; every fit is "
                             "seeded, so the results do not depend on it)")
    parser.add_argument("--out", default="model.json", help="where to save the fitted model (JSON)")
    parser.add_argument("--na-is-level", action="store_true", help=NA_IS_LEVEL_HELP)
    parser.add_argument("--form", choices=[*form_names(), AUTO], default=DEFAULT_FORM,
                        help="model form: the thesis's eq. 4.4 (default), a log-space power law with interactions, "
                             "analytic costs times rates (needs --network), the step time of data-parallel training "
                             "from GPUs, nodes and per-GPU batch (pollux: Pollux's model; phases: fitted with the "
                             "measured synchronisation time of --phases; both need --gpus, --nodes, --batch), or "
                             "auto: all of them scored by CV (the step forms when --gpus, --nodes, --batch are given), "
                             "the simplest within one standard error of the best is kept (--select best: the best; "
                             "with --extrapolate: the best on inner extrapolation splits)")
    _add_search_arguments(parser)
    _add_scale_arguments(parser)
    parser.add_argument("--network", default=None,
                        help="network of the measurements for the hybrid form's cost model (lenet5, resattnet3d, "
                             "ch3_cnn, ch3_mlp, ch3_ae)")
    parser.add_argument("--fixed", default="",
                        help="configuration constants the cost model needs that are not columns, e.g. "
                             "stride=2,volume=48x56x48")
    parser.add_argument("--cv", type=int, default=5,
                        help="folds of the form search and of the intervals (default 5)")
    parser.add_argument("--intervals", default=defaults["intervals"],
                        choices=[defaults["intervals"], *(m for m in INTERVAL_METHODS if m != defaults["intervals"])],
                        help="how the conformal intervals are calibrated (default studentized: cross-validated "
                             "errors scaled by the leverage; cv+: Barber et al.'s CV+, conservative for models with "
                             "many terms per row; split: a held-out quarter, not with --form auto)")
    parser.add_argument("--calibrate", action="store_true",
                        help="thesis form: also calibrate conformal intervals (5 more fits), so that "
                             "`perfkit predict --interval` works; the other forms always calibrate")


def _add_search_arguments(parser) -> None:
    """The options of the form search (``--form auto``): its selection rule and its black-box reference."""
    parser.add_argument("--select", default=None, choices=["1se", "best"],
                        help="--form auto: keep the simplest candidate within one standard error of the best CV "
                             "MAPE (1se, the default) or the lowest CV MAPE (best); the report names both winners "
                             "and how far apart they are")
    parser.add_argument("--no-reference", action="store_true",
                        help="--form auto: skip the black-box reference (a random forest, gradient boosting and an "
                             "RBF SVR, each tuned by CV on the same folds), which the report otherwise sets beside "
                             "the chosen form")


def _add_scale_arguments(parser) -> None:
    """The options of measuring small and predicting large: the step forms' columns, ``--phases``,
    ``--extrapolate``."""
    parser.add_argument("--gpus", default=None, metavar="COL",
                        help="step forms: column of the number of GPUs (data-parallel replicas), whole numbers >= 1")
    parser.add_argument("--nodes", default=None, metavar="COL",
                        help="step forms: column of the number of nodes the GPUs sit on (1 <= nodes <= GPUs)")
    parser.add_argument("--batch", default=None, metavar="COL",
                        help="step forms: column of the batch per GPU (> 0)")
    parser.add_argument("--phases", default="", metavar="COL[,COL...]",
                        help="measured phase columns (times >= 0 per step, e.g. sync_time), read in fit only and "
                             "never as features: prediction needs the configuration alone. --form phases uses one, "
                             "the synchronisation time; the other forms ignore them (a line says so)")
    parser.add_argument("--extrapolate", default=None, metavar="COL[:MAX]",
                        help="instead of a random --test-size split, fit on the rows with COL <= MAX and report "
                             "the errors of the rows beyond, by extrapolation factor COL/MAX, beside a random forest "
                             "and gradient boosting; the saved model's intervals widen with the distance beyond MAX. "
                             "Default MAX: the largest value of COL at most half its largest (the held-out rows "
                             "reach at least 2x)")
    parser.add_argument("--scale-of", default=None, metavar="COL",
                        help="a scaling study from small runs along COL: every row fitted, the model chosen on inner "
                             "extrapolation splits, intervals widening beyond the largest value (the default of "
                             "--form auto with --gpus/--nodes/--batch and neither --extrapolate nor --test-size)")
    parser.add_argument("--cluster", default=None, metavar="NAME|FILE.csv:NAME",
                        help="with --job, in a scaling study: the cluster (GPUs per node, bandwidths) in "
                             "data/external/hardware/clusters.csv or your own CSV; the communication-prior form joins")
    parser.add_argument("--job", default=None, metavar="NAME|FILE.csv:NAME",
                        help="with --cluster: the job (parameters, gradient precision) in "
                             "data/external/hardware/jobs.csv or your own CSV")
    parser.add_argument("--inflation", type=float, default=None, metavar="K",
                        help="multiply the width of the saved intervals beyond the fitted scale by K (default 1 "
                             "with --extrapolate; in a scaling study the κ transferred from Pollux's traces)")


def _spec_fields():
    from dataclasses import fields

    from ..study.spec import FitSpec

    return fields(FitSpec)


def spec_from_args(args):
    """The :class:`~perfkit.study.spec.FitSpec` of the parsed flags (checked, column lists parsed, when built;
    inside :func:`~perfkit.study.constraints.flag_names` its messages name the flags)."""
    from ..study.spec import FitSpec
    from .common import pairs

    return FitSpec(target=args.target, numeric=args.numeric, categorical=args.categorical, extrinsic=args.extrinsic,
                   form=args.form,
                   penalty=None if args.penalty == "none" else args.penalty, lam=args.lam, method=args.method,
                   coding=args.coding, scale=args.scale, seeds=args.seeds, test_size=args.test_size,
                   extrapolate=args.extrapolate, cv=args.cv, intervals=args.intervals, calibrate=args.calibrate,
                   select=args.select, reference=not args.no_reference, network=args.network,
                   fixed=pairs(args.fixed, "--fixed"), gpus=args.gpus, nodes=args.nodes, batch=args.batch,
                   phases=args.phases, inflation=args.inflation, scale_of=args.scale_of, cluster=args.cluster,
                   job=args.job, n_jobs=args.jobs)


def run(args, argv=None) -> None:
    """``perfkit fit``: the flags (one spec), the output path and the data are checked before the first fit;
    the study's warnings are printed once each on stderr, its summary on stdout, then the model is saved — also
    when the comparison fails after the fit, so a finished fit is never lost."""
    import warnings

    from .._io import check_output, is_perfkit_model, read_csv
    from ..study import StudyError, run as run_study
    from ..study.constraints import flag_names
    from ..study.spec import CLI_FLAGS
    from .common import print_warnings

    with flag_names(CLI_FLAGS), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = spec_from_args(args)
        check_output(args.out, "--out", inputs=[args.csv], ours=is_perfkit_model)
        data = read_csv(args.csv, "data CSV", na_is_level=args.na_is_level, require_rows=True)
        try:
            result = run_study(spec, data, progress=True, echo=lambda line: print(line, flush=True))
        except StudyError as exc:
            print_warnings(caught)
            exc.model.to_json(args.out)
            raise ValueError(f"{exc} (the fitted model is saved in {args.out})") from None
    print_warnings(caught)
    print(result.summary(header=False))
    result.model.to_json(args.out)  # atomic: a crash never leaves half a model
    saved = ""
    if callable(getattr(result.model, "predict_interval", None)) and spec.form != "thesis":
        widen = f" that widen beyond {result.scale[0]} = {result.scale[1]:g}" if result.scale else ""
        saved = f" (with its intervals{widen}: perfkit predict {args.out} CONFIGS.csv --interval 0.9)"
    print(f"\nsaved {args.out}{saved}", file=sys.stdout)
