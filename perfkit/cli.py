"""The ``perfkit`` command line.

Subcommands
-----------
``perfkit reproduce [--quick] [--chapter ch3 ...] [--build-dir build]``
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
                      figures_dir=args.figures_dir, progress=not args.no_progress)
        elif args.command == "findings":
            from .chapters.notebooks import readme_findings

            print(readme_findings(write=args.write), end="")
        elif args.command == "fit":
            _cmd_fit(args)
        elif args.command == "predict":
            _cmd_predict(args)
        elif args.command == "collect":
            _cmd_collect(args, argv)
    except (ValueError, FileNotFoundError) as exc:
        print(f"perfkit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.command != "collect":
            raise
        print("perfkit: collection interrupted; every finished sample is saved and the same command resumes it",
              file=sys.stderr)
        return 130
    return 0


def _read_csv(path):
    import pandas as pd

    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {path}") from None
    except pd.errors.ParserError as exc:
        raise ValueError(f"{path}: not a readable CSV ({exc})") from None


def _cmd_fit(args) -> None:
    import pandas as pd

    from .model.baselines import compare_models, make_baseline, train_test_split_frame
    from .model.validation import column_list, missing_column_error
    from .model.fitting import fit_repeated
    from .model.generic import GenericPerformanceModel

    df = _read_csv(args.csv)
    if args.target not in df.columns:
        raise missing_column_error(df, args.target, "target")
    roles = dict(numeric=column_list("numeric", args.numeric), categorical=column_list("categorical", args.categorical),
                 extrinsic=column_list("extrinsic", args.extrinsic))
    if args.seeds < 1:
        raise ValueError(f"--seeds: expected >= 1, got {args.seeds}")
    test_size = int(args.test_size) if args.test_size >= 1 else args.test_size
    X, y = df.drop(columns=[args.target]), df[args.target]
    X_tr, X_te, y_tr, y_te = train_test_split_frame(X, y, test_size=test_size, random_state=0)
    penalty = None if args.penalty == "none" else args.penalty
    model = GenericPerformanceModel(**roles, penalty=penalty, lam=args.lam, method=args.method, coding=args.coding)
    print(f"fitting the generic model on {len(X_tr)} rows ({args.seeds} seeds, {args.method} engine); "
          f"{len(X_te)} rows held out", flush=True)
    rep = fit_repeated(model, X_tr, y_tr, seeds=args.seeds, n_jobs=args.jobs)
    best = rep.best
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
    best.to_json(args.out)
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
    from .model.generic import GenericPerformanceModel

    model = GenericPerformanceModel.from_json(args.model)
    df = _read_csv(args.csv)
    out = df.assign(predicted=model.predict(df))
    if args.out:
        out.to_csv(args.out, index=False)
        print(f"wrote {len(out)} predictions to {args.out}")
    else:
        print(out.to_csv(index=False), end="")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
