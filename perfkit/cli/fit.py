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
                        help="data (default): unit-free, times and columns divided by their medians; none: the "
                             "thesis's convention, bounds of a, κ, C [0, 1000] and --lam in the target's units")
    parser.add_argument("--jobs", type=int, default=-1,
                        help="parallel fits and forest trees (joblib n_jobs; default -1: every core; results do not "
                             "depend on it)")
    parser.add_argument("--out", default="model.json", help="where to save the fitted model (JSON)")
    parser.add_argument("--na-is-level", action="store_true", help=NA_IS_LEVEL_HELP)
    parser.add_argument("--form", choices=[*form_names(), AUTO], default=DEFAULT_FORM,
                        help="model form: the thesis's eq. 4.4 (default), a log-space power law, analytic costs "
                             "times rates (--network), the step time from GPUs, nodes and per-GPU batch (pollux; "
                             "phases: with the measured sync time of --phases), a roofline over GPU spec columns "
                             "(--hardware), or auto: all scored by CV (or inner extrapolation splits, or held-out "
                             "groups), the simplest within one standard error kept (--select best: the best)")
    _add_search_arguments(parser)
    _add_scale_arguments(parser)
    _add_hardware_arguments(parser)
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
                        help="conformal intervals: studentized (default; CV errors scaled by the leverage), cv+ "
                             "(Barber et al.; conservative) or split (a held-out quarter; not with --form auto)")
    parser.add_argument("--calibrate", action="store_true",
                        help="thesis form: also calibrate conformal intervals (5 more fits) for `perfkit predict "
                             "--interval`; the other forms always calibrate")


def _add_search_arguments(parser) -> None:
    """The options of the form search (``--form auto``): its selection rule and its black-box reference."""
    parser.add_argument("--select", default=None, choices=["1se", "best"],
                        help="--form auto: keep the simplest candidate within one standard error of the best CV "
                             "MAPE (1se, default) or the lowest (best); the report names both")
    parser.add_argument("--no-reference", action="store_true",
                        help="--form auto: skip the black-box reference (a random forest, gradient boosting and an "
                             "RBF SVR, tuned by CV on the same folds) set beside the chosen form")


def _add_scale_arguments(parser) -> None:
    """The options of measuring small and predicting large: the step forms' columns, ``--phases``,
    ``--extrapolate``."""
    parser.add_argument("--gpus", default=None, metavar="COL",
                        help="step forms, roofline: column of the number of GPUs (data-parallel replicas), >= 1")
    parser.add_argument("--nodes", default=None, metavar="COL",
                        help="step forms: column of the number of nodes the GPUs sit on (1 <= nodes <= GPUs)")
    parser.add_argument("--batch", default=None, metavar="COL",
                        help="step forms, roofline: column of the batch per GPU (> 0)")
    parser.add_argument("--phases", default="", metavar="COL[,COL...]",
                        help="measured phase columns (times >= 0 per step, e.g. sync_time), read in fit only, never "
                             "as features; --form phases uses one, the sync time; other forms ignore them")
    parser.add_argument("--extrapolate", default=None, metavar="COL[:MAX]",
                        help="instead of a random --test-size split, fit on the rows with COL <= MAX and report the "
                             "rows beyond by extrapolation factor COL/MAX, beside the baselines; the saved intervals "
                             "widen beyond MAX (default MAX: the largest COL at most half its largest)")
    parser.add_argument("--scale-of", default=None, metavar="COL",
                        help="a scaling study from small runs along COL: every row fitted, chosen on inner splits, "
                             "intervals widening beyond the largest (default of --form auto with the step columns)")
    parser.add_argument("--cluster", default=None, metavar="NAME|FILE.csv:NAME",
                        help="with --job, in a scaling study: the cluster (GPUs per node, bandwidths) in "
                             "data/external/hardware/clusters.csv or your own CSV; the communication-prior form joins")
    parser.add_argument("--job", default=None, metavar="NAME|FILE.csv:NAME",
                        help="with --cluster: the job (parameters, gradient precision) in "
                             "data/external/hardware/jobs.csv or your own CSV")
    parser.add_argument("--inflation", type=float, default=None, metavar="K",
                        help="multiply the width of the saved intervals beyond the fitted scale by K (default 1 "
                             "with --extrapolate; in a scaling study the κ calibrated on the shipped traces)")


#: the options of predicting GPUs you do not own: (flag, metavar, help)
_HARDWARE_FLAGS = (
    ("--hardware", "COL", "column of GPU names: join the GPU spec table (data/external/hardware/gpu_specs.csv), so "
                          "a model predicts a GPU from its spec sheet; needs --split"),
    ("--precision", "COL", "with --hardware: column of precisions (fp16/amp/bf16: FP16 tensor peak; fp32/tf32: TF32)"),
    ("--gpu-specs", "FILE.csv", "with --hardware: your own GPU spec table (the shipped table's columns)"),
    ("--split", "group:COL", "leave one level of COL out at a time (e.g. one GPU type), the form chosen and the "
                             "intervals calibrated on the other groups (forms roofline, loglinear, auto)"))


def _add_hardware_arguments(parser) -> None:
    for flag, metavar, text in _HARDWARE_FLAGS:
        parser.add_argument(flag, default=None, metavar=metavar, help=text)


def _spec_fields():
    from dataclasses import fields

    from ..study.spec import FitSpec

    return fields(FitSpec)


def spec_from_args(args):
    """The :class:`~perfkit.study.spec.FitSpec` of the parsed flags (checked, column lists parsed, when built;
    inside :func:`~perfkit.study.constraints.flag_names` its messages name the flags)."""
    from ..study.spec import FitSpec
    from .common import pairs

    same = ("target", "numeric", "categorical", "extrinsic", "form", "lam", "method", "coding", "scale", "seeds",
            "test_size", "extrapolate", "cv", "intervals", "calibrate", "select", "network", "gpus", "nodes", "batch",
            "phases", "inflation", "scale_of", "cluster", "job", "hardware", "precision", "gpu_specs", "split")
    return FitSpec(**{k: getattr(args, k) for k in same}, penalty=None if args.penalty == "none" else args.penalty,
                   reference=not args.no_reference, fixed=pairs(args.fixed, "--fixed"), n_jobs=args.jobs)


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
