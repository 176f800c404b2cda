"""``perfkit plan model.json --workload model=resnet50,precision=fp16 --samples N``: which GPUs to rent for a job."""
from __future__ import annotations

import io
import math
import sys

from .common import check_interval, pairs, print_warnings

#: the subcommand's line in ``perfkit --help``
HELP = "rank hardware configurations by time and cost for one training job"
DESCRIPTION = ("Price every configuration of a menu of GPU offers (default: Lambda's servers, purchase prices "
               "amortised over --amortize-years of 24/7 use) for one training job with a model fitted across hardware "
               "(perfkit fit ... --hardware COL --split group:COL), and rank them: cheapest first within "
               "--deadline, fastest first within --budget, else fastest first.")
#: the Python parameter → the flag that sets it (errors of perfkit.plan.plan are reported under the flag)
_FLAGS = {"samples": "--samples", "epochs": "--epochs", "dataset_size": "--dataset-size",
          "deadline_hours": "--deadline", "budget": "--budget", "batch": "--batch", "gpus": "--gpus",
          "coverage": "--interval", "workload": "--workload", "amortize_years": "--amortize-years", "menu": "--menu"}


def add_arguments(parser) -> None:
    """The options of ``perfkit plan`` (numbers are read as text and checked here, so that a bad one is one line
    naming its flag)."""
    parser.add_argument("model", help="model JSON written by `perfkit fit ... --hardware COL --split group:COL`")
    parser.add_argument("--workload", required=True,
                        help="the workload: the model's workload columns and its precision column as key=value "
                             "pairs, e.g. model=resnet50,precision=fp16")
    parser.add_argument("--samples", default=None, help="samples to train on (or --epochs with --dataset-size)")
    parser.add_argument("--epochs", default=None, help="epochs (with --dataset-size)")
    parser.add_argument("--dataset-size", default=None, help="samples in one epoch (with --epochs)")
    parser.add_argument("--deadline", default=None, metavar="HOURS",
                        help="rank the configurations predicted to finish within HOURS, cheapest first")
    parser.add_argument("--budget", default=None, metavar="USD",
                        help="rank the configurations predicted to cost at most USD, fastest first")
    parser.add_argument("--menu", default="lambda",
                        help="the offers: lambda (Lambda's servers; default) or a CSV with the columns "
                             "gpu,price_per_gpu_hour,gpus[,batch_per_gpu] (gpus like 1;2;4;8)")
    parser.add_argument("--gpus", default=None, help="only these GPU counts of the menu's, e.g. 1,2,4,8")
    parser.add_argument("--batch", default=None,
                        help="per-GPU batch on every GPU (default: the menu's batch_per_gpu, else the batch "
                             "Lambda ran the workload with on that GPU)")
    parser.add_argument("--interval", default="0.9", metavar="COVERAGE", help="interval coverage (default 0.9)")
    parser.add_argument("--amortize-years", default=None, metavar="YEARS",
                        help="--menu lambda: spread a GPU's purchase price over YEARS of 24/7 use (default 3)")
    parser.add_argument("--out", default=None, help="also write the whole table as CSV")
    parser.add_argument("--plot", default=None, help="also draw hours against cost (png/svg/pdf)")
    parser.add_argument("--top", default="10", help="rows of the table to print (default 10)")


def _number(text, flag: str, whole: bool = False):
    """``text`` as a number > 0 (``whole``: a whole number), None for None; else one error naming ``flag``."""
    if text is None:
        return None
    try:
        value = float(str(text).strip())
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0 or (whole and value != int(value)):
        raise ValueError(f"{flag}: expected {'a whole number' if whole else 'a number'} > 0, got {text!r}")
    return int(value) if whole else value


def _counts(text):
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts:
        raise ValueError(f"--gpus: expected GPU counts separated by commas, e.g. 1,2,4,8; got {text!r}")
    return [_number(p, "--gpus", whole=True) for p in parts]


def _arguments(args) -> dict:
    """Every flag's value checked before any work: the keyword arguments of :func:`perfkit.plan.plan`."""
    kw = {"samples": _number(args.samples, "--samples"), "epochs": _number(args.epochs, "--epochs"),
          "dataset_size": _number(args.dataset_size, "--dataset-size"),
          "deadline_hours": _number(args.deadline, "--deadline"), "budget": _number(args.budget, "--budget"),
          "batch": _number(args.batch, "--batch", whole=True), "gpus": _counts(args.gpus)}
    if kw["samples"] is not None and (kw["epochs"] is not None or kw["dataset_size"] is not None):
        raise ValueError("--samples: give --samples, or --epochs with --dataset-size, not both")
    if kw["samples"] is None and (kw["epochs"] is None or kw["dataset_size"] is None):
        lacking = "--dataset-size" if kw["epochs"] is not None else "--epochs" if kw["dataset_size"] is not None \
            else "--samples"
        raise ValueError(f"{lacking}: give the job's size: --samples N, or --epochs E with --dataset-size S")
    if kw["deadline_hours"] is not None and kw["budget"] is not None:
        raise ValueError("--deadline: give --deadline or --budget, not both (a deadline ranks by cost, a budget by "
                         "time)")
    try:
        coverage = float(args.interval)
    except ValueError:
        raise ValueError(f"--interval: expected a coverage strictly between 0 and 1 (e.g. 0.9), got "
                         f"{args.interval!r}") from None
    kw["coverage"] = check_interval(coverage)
    return kw


def _check_outputs(args, menu_file) -> str | None:
    """``--out`` and ``--plot`` checked before any work (:func:`perfkit.cli.outputs.check_table_and_figure`)."""
    from .outputs import check_table_and_figure

    return check_table_and_figure(args, [args.model, menu_file], "cost")


def _as_flag(exc: ValueError) -> ValueError:
    """An error of :func:`perfkit.plan.plan` that opens with a parameter's name, reopened with its flag's."""
    text = str(exc)
    name, sep, rest = text.partition(":")
    return ValueError(f"{_FLAGS[name]}:{rest}") if sep and name in _FLAGS else exc


def run(args, argv=None) -> None:
    """``perfkit plan``: every flag checked, then ``--out`` and ``--plot`` (neither the model, the menu, nor each
    other; written atomically), then the model and the menu read, the plan made and its summary printed."""
    import warnings

    from .._io import atomic_write
    from ..model.persist import load_model
    from ..plan.menu import lambda_menu, load_menu
    from ..plan.planner import plan

    workload = pairs(args.workload, "--workload")
    if not workload:
        raise ValueError("--workload: expected key=value pairs, e.g. model=resnet50,precision=fp16")
    kw, top = _arguments(args), _number(args.top, "--top", whole=True)
    lam = args.menu.strip().lower() == "lambda"
    years = _number(args.amortize_years, "--amortize-years")
    if years is not None and not lam:
        raise ValueError("--amortize-years: it spreads Lambda's purchase prices (--menu lambda); a menu file gives "
                         "its own price_per_gpu_hour")
    plot_format = _check_outputs(args, None if lam else args.menu)
    model = load_model(args.model)
    offers = lambda_menu(3.0 if years is None else years) if lam else load_menu(args.menu)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = plan(model, workload, menu=offers, **kw)
        except ValueError as exc:
            raise _as_flag(exc) from None
    print_warnings(caught)
    print(result.summary(top))
    if args.out:
        atomic_write(args.out, result.table.to_csv(index=False))
        print(f"wrote {args.out}")
    if args.plot:
        fig = result.plot()
        buffer = io.BytesIO()
        fig.savefig(buffer, format=plot_format, bbox_inches="tight")
        atomic_write(args.plot, buffer.getvalue())
        print(f"wrote {args.plot}")
    sys.stdout.flush()
