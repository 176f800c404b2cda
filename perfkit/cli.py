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
``perfkit fit data.csv --target COL ... --form auto|thesis|loglinear|hybrid [--network NET]``
    Any model form; ``auto`` picks one by cross-validation and prints the candidates.
``perfkit predict model.json configs.csv [--interval 0.9] [--out preds.csv]``
    Predict with a saved model (with conformal intervals and an extrapolation flag).
``perfkit whatif model.json --base CONFIG --vary workers=1,2,4,8 [--interval 0.9] [--plot fig.png]``
    Predicted time, speedup and efficiency as one column varies.
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
    fit.add_argument("--jobs", type=int, default=-1,
                     help="parallel fits and forest trees (joblib n_jobs; default -1: every core; every fit is "
                          "seeded, so the results do not depend on it)")
    fit.add_argument("--out", default="model.json", help="where to save the fitted model (JSON)")
    fit.add_argument("--form", default="thesis", choices=["thesis", "loglinear", "hybrid", "auto"],
                     help="model form: the thesis's eq. 4.4 (default), a log-space power law with interactions, "
                          "analytic costs times rates (needs --network), or auto: all of them scored by CV, the "
                          "simplest within one standard error of the best is kept")
    fit.add_argument("--network", default=None,
                     help="network of the measurements for the hybrid form's cost model (lenet5, resattnet3d, "
                          "ch3_cnn, ch3_mlp, ch3_ae)")
    fit.add_argument("--fixed", default="",
                     help="configuration constants the cost model needs that are not columns, e.g. "
                          "stride=2,volume=48x56x48")
    fit.add_argument("--cv", type=int, default=5, help="folds of the form search and of the intervals (default 5)")
    fit.add_argument("--intervals", choices=["studentized", "cv+", "split"], default="studentized",
                     help="how the conformal intervals are calibrated (default studentized: cross-validated errors "
                          "scaled by the leverage; cv+: Barber et al.'s CV+, conservative for models with many "
                          "terms per row; split: a held-out quarter, not with --form auto)")
    fit.add_argument("--calibrate", action="store_true",
                     help="thesis form: also calibrate conformal intervals (5 more fits), so that "
                          "`perfkit predict --interval` works; the other forms always calibrate")

    pred = sub.add_parser("predict", help="predict times for configurations with a saved model")
    pred.add_argument("model", help="model JSON written by `perfkit fit`")
    pred.add_argument("csv", help="configurations, with the model's columns")
    pred.add_argument("--out", default=None, help="write the table with a `predicted` column here (default: stdout)")
    pred.add_argument("--interval", type=float, default=None, metavar="COVERAGE",
                      help="add conformal interval columns lower, upper (e.g. 0.9) and extrapolated")

    wif = sub.add_parser("whatif", help="predicted time, speedup and efficiency as one column varies")
    wif.add_argument("model", help="model JSON written by `perfkit fit`")
    wif.add_argument("--base", required=True,
                     help="the configuration to start from: a CSV file (its first row, or --row) or "
                          "key=value pairs, e.g. num_filters=8,kernel_size=5,...")
    wif.add_argument("--row", type=int, default=0, help="row of the --base CSV (default 0)")
    wif.add_argument("--vary", required=True, help="column=values, e.g. workers=1,2,4,8,16")
    wif.add_argument("--interval", type=float, default=0.9, metavar="COVERAGE",
                     help="interval coverage (default 0.9; needs a calibrated model)")
    wif.add_argument("--out", default=None, help="also write the table as CSV")
    wif.add_argument("--plot", default=None, help="also draw it (png/svg/pdf)")

    col = sub.add_parser(
        "collect", help="measure training steps (kinds: ch3, ch4, noise, epoch, ch5, ch5vol)",
        description="Run or resume a measurement campaign. Every sample is appended to the CSV as it completes; "
                    "re-running the same command after an interruption resumes it. A provenance JSON is written "
                    "beside the CSV.")
    col.add_argument("kind", choices=["ch3", "ch4", "noise", "epoch", "ch5", "ch5vol"],
                     help="ch3: phase timing of CNN/MLP/AE; ch4: Table 4.1 LeNet-5 samples; noise: repeated "
                          "configurations across rounds; epoch: whole-epoch extrapolation check; ch5: Table 5.1 "
                          "3D-ResAttNet-18 samples; ch5vol: 3D-ResAttNet-18 volume-size study (grid)")
    col.add_argument("--framework", default="pytorch",
                     help="framework adapter: pytorch (default), tensorflow, jax, mxnet or chainer; the last four run "
                          "in the environments `make frameworks` builds under .envs/ (--python overrides)")
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
        elif args.command == "whatif":
            _cmd_whatif(args)
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
    from .model.intervals import coverage_of
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
    fixed = _pairs(args.fixed, "--fixed")
    _check_form_flags(args)
    X = df.drop(columns=[args.target])
    validate_frame(X, **roles)
    y = pd.Series(validate_target(df[args.target], X, name=f"target column {args.target!r}", positive=True),
                  index=df.index, name=args.target)
    n_test = _test_size(args.test_size, len(df))
    X_tr, X_te, y_tr, y_te = train_test_split_frame(X, y, test_size=n_test, random_state=0)
    if args.form != "thesis":
        return _fit_form(args, roles, fixed, X_tr, X_te, y_tr, y_te)
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
        forest = make_baseline("rf", **roles, random_state=0, n_jobs=args.jobs)
        table = compare_models({"generic model": best, "random forest": forest}, X_tr, y_tr, X_te, y_te,
                               prefitted={"generic model"})
        print("\nheld-out errors:")
        print(table[["MAPE", "R2", "MAE", "RMSE"]].to_string())
    if args.calibrate:
        from sklearn.base import clone

        from .model.intervals import ConformalRegressor

        print(f"calibrating 90 %-style intervals: {args.cv} more fits of the best seed's settings", file=sys.stderr)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstantColumnWarning)
            best = ConformalRegressor(clone(best), method=args.intervals, n_splits=args.cv,
                                      random_state=0).fit(X_tr, y_tr)
        iv = best.predict_interval(X_te, 0.9)
        print(f"90 % intervals cover {100 * coverage_of(iv, y_te):.1f} % of the {len(y_te)} held-out rows")
    best.to_json(args.out)  # atomic: a crash never leaves half a model
    print(f"\nsaved {args.out}")


def _check_form_flags(args) -> None:
    """``--form``/``--network``/``--cv`` agree with each other, before any data is read."""
    from .model.costs import NETWORKS

    if args.cv < 2:
        raise ValueError(f"--cv: expected an integer >= 2, got {args.cv}")
    if args.network is not None and args.network not in NETWORKS:
        raise ValueError(f"--network: expected one of {sorted(NETWORKS)}, got {args.network!r}")
    if args.form == "hybrid" and args.network is None:
        raise ValueError("--form hybrid needs --network (the network whose costs the form uses), e.g. --network lenet5")
    if args.form != "thesis" and (args.penalty != "none" or args.method != "varpro" or args.coding != "thesis"):
        raise ValueError(f"--penalty/--lam/--method/--coding belong to --form thesis, not --form {args.form}")
    if args.form == "auto" and args.intervals == "split":
        raise ValueError("--intervals split: the form search calibrates from its own folds; use studentized or cv+")


def _pairs(text: str, flag: str) -> dict:
    """``a=1,b=x`` → {"a": 1, "b": "x"} (numbers parsed; a value may not be empty)."""
    out = {}
    for item in [t.strip() for t in text.split(",") if t.strip()]:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{flag}: expected key=value pairs separated by commas, got {item!r}")
        out[key.strip()] = _number_or_text(value.strip())
    return out


def _number_or_text(value: str):
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def _fit_form(args, roles, fixed, X_tr, X_te, y_tr, y_te) -> None:
    """``perfkit fit --form loglinear|hybrid|auto``: fit (or search), calibrate intervals, compare, save."""
    import time
    import warnings

    import pandas as pd

    from .model.baselines import compare_models, make_baseline
    from .model.intervals import ConformalRegressor, coverage_of, predictable_rows
    from .model.search import make_form, search_forms

    options = {"hybrid": {"fixed": fixed}} if fixed else None
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if args.form == "auto":
            print(f"form search on {len(X_tr)} rows ({args.cv}-fold CV); {len(X_te)} rows held out", flush=True)
            search = search_forms(X_tr, y_tr, **roles, network=args.network, cv=args.cv, n_jobs=args.jobs,
                                  progress=True, options=options, intervals=args.intervals)
            model = search.model_
            print("\n" + search.summary())
        else:
            est = make_form(args.form, **roles, network=args.network, **({"fixed": fixed} if fixed else {}))
            print(f"fitting the {args.form} form on {len(X_tr)} rows; {len(X_te)} rows held out", flush=True)
            model = ConformalRegressor(est, method=args.intervals, n_splits=args.cv, random_state=0).fit(X_tr, y_tr)
            print("\n" + model.estimator_.summary())
    _print_warnings(caught)
    print(f"\nfit and calibration took {_duration(time.perf_counter() - start)}")
    ok = predictable_rows(model, X_tr, X_te, roles["categorical"])
    if not ok.all():  # e.g. a hybrid with rates by shape, and a held-out combination of levels the fit never had
        print(f"{int((~ok).sum())} of {len(X_te)} held-out rows have a combination of levels the chosen model has "
              f"no rate for; every model is scored on the other {int(ok.sum())}")
        X_te, y_te = X_te[ok], y_te[ok]
    iv = model.predict_interval(X_te, 0.9)
    print(f"90 % intervals cover {100 * coverage_of(iv, y_te):.1f} % of the {len(y_te)} held-out rows")
    models = {f"{args.form} model": model,
              "random forest": make_baseline("rf", **roles, random_state=0, n_jobs=args.jobs),
              "gradient boosting": make_baseline("gb", **roles, random_state=0)}
    with pd.option_context("display.width", 160, "display.float_format", "{:.4g}".format):
        table = compare_models(models, X_tr, y_tr, X_te, y_te, prefitted={f"{args.form} model"})
        print("\nheld-out errors:")
        print(table[["MAPE", "R2", "MAE", "RMSE"]].to_string())
    model.to_json(args.out)
    print(f"\nsaved {args.out} (with its intervals: perfkit predict {args.out} CONFIGS.csv --interval 0.9)")


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
    """``perfkit predict``: ``--out`` may not be a folder, the model or the configurations; written atomically.

    ``--interval C`` (strictly between 0 and 1) adds ``lower``, ``upper`` and ``extrapolated``
    and needs a model saved with its calibration (``perfkit fit --form ...`` or ``--calibrate``).
    """
    import warnings

    from ._io import atomic_write, check_output, read_csv
    from .model.persist import load_model

    if args.interval is not None:
        _check_interval(args.interval)
    if args.out:
        check_output(args.out, "--out", inputs=[args.model, args.csv])
    model = load_model(args.model)
    df = read_csv(args.csv, "configurations CSV")
    if args.interval is None:
        out = df.assign(predicted=model.predict(df))
    else:
        _need_intervals(model, args.model)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            iv = model.predict_interval(df, args.interval)
        _print_warnings(caught)
        out = df.assign(**{c: iv[c].to_numpy() for c in iv.columns})
    if args.out:
        atomic_write(args.out, out.to_csv(index=False))
        print(f"wrote {len(out)} predictions to {args.out}")
    else:
        print(out.to_csv(index=False), end="")


def _check_interval(value: float) -> float:
    import math

    if not math.isfinite(value) or not 0 < value < 1:
        raise ValueError(f"--interval: expected a coverage strictly between 0 and 1 (e.g. 0.9), got {value:g}")
    return value


def _need_intervals(model, path) -> None:
    if not callable(getattr(model, "predict_interval", None)):
        raise ValueError(f"{path}: this model was saved without interval calibration; refit it with "
                         "`perfkit fit ... --calibrate` (thesis form) or any other --form")


def _cmd_whatif(args) -> None:
    """``perfkit whatif``: one configuration, one column varied; a table (and a figure) of time, speedup, efficiency."""
    import warnings

    import pandas as pd

    from ._io import atomic_write, check_input_file, check_output, read_csv
    from .model.persist import load_model
    from .model.whatif import whatif

    _check_interval(args.interval)
    col, sep, values = args.vary.partition("=")
    col = col.strip()
    grid = [_number_or_text(v.strip()) for v in values.split(",") if v.strip()]
    if not sep or not col or not grid:
        raise ValueError(f"--vary: expected column=v1,v2,..., e.g. workers=1,2,4,8; got {args.vary!r}")
    for flag, path in (("--out", args.out), ("--plot", args.plot)):
        if path:
            check_output(path, flag, inputs=[args.model])
    model = load_model(args.model)
    _need_intervals(model, args.model)
    if "=" in args.base and not args.base.lower().endswith(".csv"):
        base = _pairs(args.base, "--base")
    else:
        frame = read_csv(check_input_file(args.base, "--base CSV"), "--base CSV")
        if not 0 <= args.row < len(frame):
            raise ValueError(f"--row: {args.base} has rows 0 to {len(frame) - 1}, not {args.row}")
        base = frame.iloc[args.row].to_dict()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = whatif(model, base, col, grid, args.interval)
    _print_warnings(caught)
    numeric = "efficiency" in table.columns
    with pd.option_context("display.width", 160, "display.float_format", "{:.4g}".format):
        print(f"what if {col} = {', '.join(map(str, grid))}  ({int(100 * args.interval)} % intervals; speedup "
              f"relative to {col} = {grid[0]}{'; efficiency = speedup / (' + col + ' ratio)' if numeric else ''})")
        print(table.to_string(index=False))
    if table["extrapolated"].any():
        print("perfkit: warning: rows marked extrapolated lie outside the fitted data; their intervals carry no "
              "coverage guarantee", file=sys.stderr)
    if args.out:
        atomic_write(args.out, table.to_csv(index=False))
        print(f"wrote {args.out}")
    if args.plot:
        from .report.plots import whatif_figure

        fig = whatif_figure(table, col)
        fig.savefig(args.plot, bbox_inches="tight")
        print(f"wrote {args.plot}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
