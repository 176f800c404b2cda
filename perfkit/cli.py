"""The ``perfkit`` command line.

Subcommands
-----------
``perfkit reproduce [--quick] [--chapter ch3 ...] [--build-dir build] [-p NAME VALUE ...]``
    Execute the chapter notebooks with papermill.
``perfkit tables [NAME] [--source SOURCE] [--long]``
    List the transcribed thesis tables, or print one (frameworks side by side).
``perfkit fit data.csv --target COL --numeric A,B --categorical C --extrinsic G,BS [...]``
    Fit the generic model to a user's CSV; print parameters and held-out
    MAPE/R² next to a random forest's; save the model as JSON.
``perfkit predict model.json configs.csv [--out preds.csv]``
    Predict with a saved model.
``perfkit collect ch3|ch4|noise|epoch|ch5|ch5vol [--framework pytorch] [--out PATH] [--seed S] [...]``
    Measure training steps with the harness (resumable; see ``perfkit collect -h``).
``perfkit findings [--write]``
    Print the chapters' generated findings, or write them into the README.
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
    rep.add_argument("--build-dir", default=None,
                     help="folder for executed notebooks (default: build/, build/quick/ with --quick, "
                          "build/custom/ with --figures-dir)")
    rep.add_argument("--figures-dir", default=None, help="folder for figures/tables (default: figures)")
    rep.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                     help="a value for the notebooks' parameters cell, e.g. -p n_fit 900 -p lams '[1e-3, 1e-2]' "
                          "(a Python literal; anything else is a string); repeatable")
    rep.add_argument("--no-progress", action="store_true", help="hide progress bars")

    tab = sub.add_parser("tables", help="list the thesis's transcribed tables, or print one")
    tab.add_argument("name", nargs="?", help="table name, e.g. 3.2, 4.3, journal5, conference1")
    tab.add_argument("--source", default=None, help="keep one source (thesis, paper_iucc2021, ...)")
    tab.add_argument("--long", action="store_true", help="the tidy table with notes and citations, one row per value")

    fit = sub.add_parser("fit", help="fit the generic performance model to your own measurements (CSV)")
    fit.add_argument("csv", help="measurements, one row per configuration")
    fit.add_argument("--target", required=True, help="column with the measured time")
    fit.add_argument("--numeric", default="", help="numeric intrinsic columns, comma-separated")
    fit.add_argument("--categorical", default="", help="categorical intrinsic columns, comma-separated")
    fit.add_argument("--extrinsic", default="", help="extrinsic scaling columns (workers, batch size), comma-separated")
    fit.add_argument("--penalty", choices=["none", "l1", "l2"], default="none", help="regularisation (default none)")
    fit.add_argument("--lam", type=float, default=0.0, help="regularisation strength λ")
    fit.add_argument("--seeds", type=int, default=10, help="fits with seeds 0..N-1; the best objective is kept")
    fit.add_argument("--test-size", type=float, default=0.33,
                     help="held-out share (0-1) or row count (>= 1) for MAPE/R² (default 0.33)")
    fit.add_argument("--method", choices=["varpro", "thesis"], default="varpro", help="fitting engine")
    fit.add_argument("--coding", choices=["thesis", "reference"], default="thesis", help="categorical coding")
    fit.add_argument("--jobs", type=int, default=1, help="parallel fits (joblib n_jobs)")
    fit.add_argument("--out", default="model.json", help="where to save the fitted model (JSON)")

    pred = sub.add_parser("predict", help="predict times for configurations with a saved model")
    pred.add_argument("model", help="model JSON written by `perfkit fit`")
    pred.add_argument("csv", help="configurations, with the model's columns")
    pred.add_argument("--out", default=None, help="write the table with a `predicted` column here (default: stdout)")

    col = sub.add_parser(
        "collect", help="measure training steps (kinds: ch3, ch4, noise, epoch, ch5, ch5vol)",
        description="Run or resume a measurement campaign. Every sample is appended to the CSV as it completes; "
                    "re-running the same command after an interruption resumes it. A provenance JSON is written "
                    "beside the CSV.")
    col.add_argument("kind", choices=["ch3", "ch4", "noise", "epoch", "ch5", "ch5vol"],
                     help="ch3: phase timing of CNN/MLP/AE; ch4: Table 4.1 LeNet-5 samples; noise: repeated "
                          "configurations across rounds; epoch: whole-epoch extrapolation check; ch5: Table 5.1 "
                          "3D-ResAttNet-18 samples; ch5vol: 3D-ResAttNet-18 volume-size study (grid)")
    col.add_argument("--framework", default="pytorch", help="framework adapter (default pytorch)")
    col.add_argument("--out", default=None,
                     help="CSV to write/resume (default data/measured/<framework>-<device>/<kind file>)")
    col.add_argument("--seed", type=int, default=None, help="sampler / model seed (defaults: ch3 0, ch4 0, noise 1, "
                                                           "epoch 2)")
    col.add_argument("--samples", type=int, default=None,
                     help="ch4: configurations (1500); noise: configurations (50); epoch: checks wanted (20)")
    col.add_argument("--rounds", type=int, default=None, help="noise: measurements per configuration (5)")
    col.add_argument("--workers", default=None, help="worker counts, comma-separated (default 1,2,3)")
    col.add_argument("--batch-sizes", default=None, help="per-worker batch sizes (default: Table 4.1 for ch4/noise/epoch, Table 5.1 for ch5/ch5vol)")
    col.add_argument("--datasets", default=None, help="ch4/noise/epoch: datasets to sample (default all three)")
    col.add_argument("--volume", default=None,
                     help="ch5: synthetic volume DxHxW (default 48x56x48 on CPU; full Colin27 size 181x217x181)")
    col.add_argument("--volumes", default=None,
                     help="ch5vol: volumes, comma-separated DxHxW (default 32x38x32,48x56x48,64x76x64,80x96x80)")
    col.add_argument("--filters", default=None, help="ch5vol: num_filters values, comma-separated (default 16,32)")
    col.add_argument("--batch-size", type=int, default=None, help="ch3: per-worker batch size (64)")
    col.add_argument("--models", default=None, help="ch3: models, comma-separated (cnn,mlp,ae)")
    col.add_argument("--modes", default=None, help="ch3: phased,overlapped (both)")
    col.add_argument("--mode", default=None, choices=["phased", "overlapped"],
                     help="ch4/noise/epoch: gradient aggregation (default overlapped = DDP)")
    col.add_argument("--iterations", type=int, default=None, help="ch3: timed iterations per run (200)")
    col.add_argument("--warmup", type=int, default=None, help="untimed warm-up iterations (ch3 20, others 5)")
    col.add_argument("--repeats", type=int, default=None, help="ch4/noise/epoch: timed runs per sample (3)")
    col.add_argument("--steps", type=int, default=None, help="ch4/noise/epoch: steps per timed run (5)")
    col.add_argument("--min-run-seconds", type=float, default=None,
                     help="ch4/noise/epoch: more steps per run until a run lasts this long (0.25; at most 200 steps)")
    col.add_argument("--max-epoch-seconds", type=float, default=None,
                     help="epoch: skip configurations whose predicted epoch is longer (120)")
    col.add_argument("--threads", type=int, default=1, help="intra-op threads per worker (default 1)")
    col.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="default cpu")
    col.add_argument("--python", default=None, help="interpreter for the workers (another virtualenv)")
    col.add_argument("--data-root", default=None,
                     help="folder with mnist/, fashion_mnist/, cifar10/ real files (default synthetic tensors)")
    col.add_argument("--timeout", type=float, default=600.0, help="seconds per sample before a worker is killed")
    col.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    fnd = sub.add_parser("findings", help="print the chapters' findings (figures/chN/findings_chN.md), or write them "
                                          "into the README")
    fnd.add_argument("--write", action="store_true", help="replace the README's generated findings block")

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

            from .data.thesis import list_thesis_tables, load_thesis_table, wide_table

            with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 20):
                if args.name:
                    table = load_thesis_table(args.name, source=args.source)
                    print((table if args.long else wide_table(table)).to_string(index=False))
                else:
                    print(list_thesis_tables().to_string(index=False))
        elif args.command == "reproduce":
            from .chapters.notebooks import reproduce

            reproduce(args.chapters, quick=args.quick, build_dir=args.build_dir,
                      figures_dir=args.figures_dir, progress=not args.no_progress,
                      parameters={name: _literal(value) for name, value in args.parameter})
        elif args.command == "findings":
            from .chapters.notebooks import readme_findings

            print(readme_findings(write=args.write), end="")
        elif args.command == "fit":
            _cmd_fit(args)
        elif args.command == "predict":
            _cmd_predict(args)
        elif args.command == "collect":
            _cmd_collect(args, argv)
    except ValueError as exc:
        print(f"perfkit: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # includes FileNotFoundError; permission and other I/O errors: one line, no traceback
        msg = f"{exc.filename}: {exc.strerror}" if exc.filename is not None and exc.strerror else str(exc)
        print(f"perfkit: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.command != "collect":
            raise
        print("perfkit: collection interrupted; every finished sample is saved and the same command resumes it",
              file=sys.stderr)
        return 130
    return 0


def _literal(text: str):
    """``-p NAME VALUE``: a Python literal (number, bool, list, tuple, quoted string) or else the text itself."""
    import ast

    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return value


def _test_size(value: float, n_rows: int | None = None) -> int | None:
    """``--test-size`` as a number of held-out rows (None when ``n_rows`` is not given: only the form is checked).

    A value strictly between 0 and 1 is a share of the rows (rounded up, as
    scikit-learn does); a whole number >= 1 is a row count. Anything else
    (0, negatives, 1.5, NaN) is an error, and so is a split that leaves no
    row to fit or none to test.
    """
    import math

    if not math.isfinite(value) or value <= 0 or (value >= 1 and value != int(value)):
        raise ValueError(f"--test-size: expected a share strictly between 0 and 1 or a whole number of rows >= 1, "
                         f"got {value:g}")
    if n_rows is None:
        return None
    if n_rows < 2:
        raise ValueError(f"--test-size {value:g}: the data has {n_rows} row; fitting and testing need at least 2")
    n_test = math.ceil(value * n_rows) if value < 1 else int(value)
    if not 1 <= n_test <= n_rows - 1:
        raise ValueError(f"--test-size {value:g}: holding out {n_test} of the {n_rows} rows leaves nothing to fit; "
                         f"give a share in (0, 1) or 1 to {n_rows - 1} rows")
    return n_test


def _duration(seconds: float) -> str:
    if seconds < 10:
        return f"{max(seconds, 0.0):.1f} s"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def _print_warnings(caught) -> None:
    seen = set()
    for w in caught:
        msg = str(w.message)
        if msg not in seen:
            seen.add(msg)
            print(f"perfkit: warning: {msg}", file=sys.stderr, flush=True)


def _cmd_fit(args) -> None:
    """``perfkit fit``: every flag, the output path and the data are checked before the first fit starts.

    ``--seeds`` >= 1; ``--jobs`` a non-zero integer (-1: all cores); ``--lam``
    a finite number >= 0 (> 0 needs ``--penalty``); ``--test-size`` a share in
    (0, 1) or a whole number of rows (see :func:`_test_size`); ``--out`` not a
    folder nor the input CSV; the target a numeric column of times > 0. The first
    seed is timed and the time left is printed on stderr, then a progress bar
    (stderr) follows the other seeds.
    """
    import math
    import time
    import warnings

    import pandas as pd

    from ._io import check_output, read_csv
    from .model.baselines import compare_models, make_baseline, train_test_split_frame
    from .model.fitting import RepeatedFit, fit_repeated
    from .model.generic import ConstantColumnWarning, GenericPerformanceModel
    from .model.validation import column_list, missing_column_error, validate_frame, validate_target

    if args.seeds < 1:
        raise ValueError(f"--seeds: expected an integer >= 1, got {args.seeds}")
    if args.jobs == 0:
        raise ValueError("--jobs: expected a non-zero integer (1 = one at a time, -1 = all cores), got 0")
    if not math.isfinite(args.lam) or args.lam < 0:
        raise ValueError(f"--lam: expected a finite number >= 0, got {args.lam:g}")
    penalty = None if args.penalty == "none" else args.penalty
    if penalty is None and args.lam > 0:
        raise ValueError(f"--lam {args.lam:g} needs --penalty l1 or l2")
    _test_size(args.test_size)  # its form; its size is checked against the rows below
    check_output(args.out, "--out", inputs=[args.csv])
    df = read_csv(args.csv, "data CSV")
    if args.target not in df.columns:
        raise missing_column_error(df, args.target, "target")
    roles = dict(numeric=column_list("numeric", args.numeric), categorical=column_list("categorical", args.categorical),
                 extrinsic=column_list("extrinsic", args.extrinsic))
    for role, cols in roles.items():
        if args.target in cols:
            raise ValueError(f"column {args.target!r} is the --target and cannot also be --{role}")
    model = GenericPerformanceModel(**roles, penalty=penalty, lam=args.lam, method=args.method, coding=args.coding)
    model._settings()  # the column roles, before any work
    X = df.drop(columns=[args.target])
    validate_frame(X, **roles)
    y = pd.Series(validate_target(df[args.target], X, name=f"target column {args.target!r}", positive=True),
                  index=df.index, name=args.target)
    n_test = _test_size(args.test_size, len(df))
    X_tr, X_te, y_tr, y_te = train_test_split_frame(X, y, test_size=n_test, random_state=0)
    print(f"fitting the generic model on {len(X_tr)} rows ({args.seeds} seeds, {args.method} engine); "
          f"{len(X_te)} rows held out", flush=True)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = fit_repeated(model, X_tr, y_tr, seeds=[0], n_jobs=1, progress=False)
    _print_warnings(caught)
    took = time.perf_counter() - start
    models, seeds = list(first.models), [0]
    if args.seeds > 1:
        from joblib import effective_n_jobs

        rest = args.seeds - 1
        workers = max(1, min(rest, effective_n_jobs(args.jobs)))
        print(f"seed 1/{args.seeds} took {_duration(took)}; about {_duration(took * math.ceil(rest / workers))} "
              f"left ({rest} more, {workers} at a time)", file=sys.stderr, flush=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstantColumnWarning)  # already reported for seed 1
            more = fit_repeated(model, X_tr, y_tr, seeds=range(1, args.seeds), n_jobs=args.jobs, desc="seeds")
        models += more.models
        seeds += more.seeds
    rep = RepeatedFit(models=models, seeds=seeds)
    best = rep.best
    print(f"\nbest objective {best.objective_:.6g}; {rep.n_agree} of {len(rep.models)} seeds reached it "
          f"(to {rep.AGREE_RTOL:g} relative); spread over seeds {rep.objective_spread:.2g} (relative)")
    if not rep.converged:
        print("perfkit: warning: the fit may not have converged: "
              + ("only one seed reached the best objective; run more --seeds" if rep.n_agree < 2 else
                 "the final refinement stopped at its iteration limit") , file=sys.stderr)
    with pd.option_context("display.width", 160, "display.max_rows", 200, "display.float_format", "{:.4g}".format):
        print("\nparameters (best seed):")
        print(best.params_.drop(columns=["column", "level"]).to_string(index=False))
        if args.seeds > 1:
            s = rep.summary()
            cols = [c for c in s.columns if c.endswith(("_mean", "_std")) and s[c].notna().any()]
            print(f"\nmean ± std over {args.seeds} seeds:")
            print(s[["term"] + cols].to_string(index=False))
        table = compare_models({"generic model": best, "random forest": make_baseline("rf", **roles, random_state=0)},
                               X_tr, y_tr, X_te, y_te, prefitted={"generic model"})
        print("\nheld-out errors:")
        print(table[["MAPE", "R2", "MAE", "RMSE"]].to_string())
    best.to_json(args.out)  # atomic: a crash never leaves half a model
    print(f"\nsaved {args.out}")


def _stop_on_signal(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _cmd_collect(args, argv) -> None:
    import signal

    from .measure.collect import collect
    from .schema import parse_volume

    # A collection started in the background inherits SIGINT ignored; make SIGINT and SIGTERM both stop it
    # through the normal path, so the provenance session is closed and the workers are stopped.
    signal.signal(signal.SIGINT, _stop_on_signal)
    signal.signal(signal.SIGTERM, _stop_on_signal)

    def split(value, name):
        if value is None:
            return None
        items = [v.strip() for v in value.split(",") if v.strip()]
        if not items:
            raise ValueError(f"--{name}: give at least one value")
        return items

    def ints(value, name):
        items = split(value, name)
        try:
            return None if items is None else [int(v) for v in items]
        except ValueError:
            raise ValueError(f"--{name}: expected comma-separated integers, got {value!r}") from None

    options = {"seed": args.seed, "samples": args.samples, "rounds": args.rounds, "workers": ints(args.workers, "workers"),
               "batch_sizes": ints(args.batch_sizes, "batch-sizes"), "datasets": split(args.datasets, "datasets"),
               "batch_size": args.batch_size, "models": split(args.models, "models"), "modes": split(args.modes, "modes"),
               "mode": args.mode, "iterations": args.iterations, "warmup": args.warmup, "repeats": args.repeats,
               "steps": args.steps, "min_run_seconds": args.min_run_seconds,
               "max_epoch_seconds": args.max_epoch_seconds,
               "volume": None if args.volume is None else parse_volume(args.volume, "--volume"),
               "volumes": None if args.volumes is None else [parse_volume(v, "--volumes") for v in split(args.volumes, "volumes")],
               "filters": ints(args.filters, "filters")}
    from .measure.plans import DEFAULTS

    given = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(set(given) - set(DEFAULTS[args.kind]))
    if unknown:
        flag = "--" + unknown[0].replace("_", "-")
        raise ValueError(f"{flag}: not used by `perfkit collect {args.kind}`")
    out = collect(args.kind, out=args.out, framework=args.framework, threads=args.threads, device=args.device,
                  python=args.python, data_root=args.data_root, timeout=args.timeout, progress=not args.no_progress,
                  argv=["perfkit"] + list(sys.argv[1:] if argv is None else argv), **given)
    print(f"wrote {out} (provenance beside it)")


def _cmd_predict(args) -> None:
    """``perfkit predict``: ``--out`` may not be a folder, the model or the configurations; written atomically."""
    from ._io import atomic_write, check_output, read_csv
    from .model.generic import GenericPerformanceModel

    if args.out:
        check_output(args.out, "--out", inputs=[args.model, args.csv])
    model = GenericPerformanceModel.from_json(args.model)
    df = read_csv(args.csv, "configurations CSV")
    out = df.assign(predicted=model.predict(df))
    if args.out:
        atomic_write(args.out, out.to_csv(index=False))
        print(f"wrote {len(out)} predictions to {args.out}")
    else:
        print(out.to_csv(index=False), end="")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
