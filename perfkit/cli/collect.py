"""``perfkit collect KIND [...]``: run or resume a measurement campaign with the harness."""
from __future__ import annotations

import sys

from ..measure.plans import DEFAULTS, KINDS
from ..schema import parse_volume

#: the subcommand's line in ``perfkit --help``
HELP = f"measure training steps (kinds: {', '.join(KINDS)})"
#: the text above the options in ``perfkit collect --help``
DESCRIPTION = ("Run or resume a measurement campaign. Every sample is appended to the CSV as it completes; "
               "re-running the same command after an interruption resumes it. A provenance JSON is written "
               "beside the CSV.")


def add_arguments(parser) -> None:
    """The options of ``perfkit collect``."""
    parser.add_argument("kind", choices=KINDS,
                        help="ch3: phase timing of CNN/MLP/AE; ch4: Table 4.1 LeNet-5 samples; noise: repeated "
                             "configurations across rounds; epoch: whole-epoch extrapolation check; ch5: Table 5.1 "
                             "3D-ResAttNet-18 samples; ch5vol: 3D-ResAttNet-18 volume-size study (grid)")
    parser.add_argument("--framework", default="pytorch",
                        help="framework adapter: pytorch (default), tensorflow, jax, mxnet or chainer; the last four "
                             "run in the environments `make frameworks` builds under .envs/ (--python overrides)")
    parser.add_argument("--out", default=None,
                        help="CSV to write/resume (default data/measured/<framework>-<device>/<kind file>)")
    parser.add_argument("--seed", type=int, default=None,
                        help="sampler / model seed (defaults: ch3 0, ch4 0, noise 1, epoch 2)")
    parser.add_argument("--samples", type=int, default=None,
                        help="ch4: configurations (1500); noise: configurations (50); epoch: checks wanted (20)")
    parser.add_argument("--rounds", type=int, default=None, help="noise: measurements per configuration (5)")
    parser.add_argument("--workers", default=None, help="worker counts, comma-separated (default 1,2,3)")
    parser.add_argument("--batch-sizes", default=None,
                        help="per-worker batch sizes (default: Table 4.1 for ch4/noise/epoch, Table 5.1 for ch5/ch5vol)")
    parser.add_argument("--datasets", default=None, help="ch4/noise/epoch: datasets to sample (default all three)")
    parser.add_argument("--volume", default=None,
                        help="ch5: synthetic volume DxHxW (default 48x56x48 on CPU; full Colin27 size 181x217x181)")
    parser.add_argument("--volumes", default=None,
                        help="ch5vol: volumes, comma-separated DxHxW (default 32x38x32,48x56x48,64x76x64,80x96x80)")
    parser.add_argument("--filters", default=None, help="ch5vol: num_filters values, comma-separated (default 16,32)")
    parser.add_argument("--batch-size", type=int, default=None, help="ch3: per-worker batch size (64)")
    parser.add_argument("--models", default=None, help="ch3: models, comma-separated (cnn,mlp,ae)")
    parser.add_argument("--modes", default=None, help="ch3: phased,overlapped (both)")
    parser.add_argument("--mode", default=None, choices=["phased", "overlapped"],
                        help="ch4/noise/epoch: gradient aggregation (default overlapped = DDP)")
    parser.add_argument("--iterations", type=int, default=None, help="ch3: timed iterations per run (200)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed warm-up iterations (ch3 20, others 5)")
    parser.add_argument("--repeats", type=int, default=None, help="ch4/noise/epoch: timed runs per sample (3)")
    parser.add_argument("--steps", type=int, default=None, help="ch4/noise/epoch: steps per timed run (5)")
    parser.add_argument("--min-run-seconds", type=float, default=None,
                        help="ch4/noise/epoch: more steps per run until a run lasts this long (0.25; at most 200 "
                             "steps)")
    parser.add_argument("--max-epoch-seconds", type=float, default=None,
                        help="epoch: skip configurations whose predicted epoch is longer (120)")
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads per worker (default 1)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="default cpu")
    parser.add_argument("--python", default=None, help="interpreter for the workers (another virtualenv)")
    parser.add_argument("--data-root", default=None,
                        help="folder with mnist/, fashion_mnist/, cifar10/ real files (default synthetic tensors)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per sample before a worker is killed")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _stop_on_signal(signum, frame):
    """Signal handler: stop the campaign through its KeyboardInterrupt path."""
    raise KeyboardInterrupt(f"signal {signum}")


def run(args, argv=None) -> None:
    """Run or resume one campaign; SIGINT and SIGTERM stop it cleanly (samples saved, workers stopped)."""
    import signal

    from ..measure.collect import collect

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

    options = {"seed": args.seed, "samples": args.samples, "rounds": args.rounds,
               "workers": ints(args.workers, "workers"), "batch_sizes": ints(args.batch_sizes, "batch-sizes"),
               "datasets": split(args.datasets, "datasets"), "batch_size": args.batch_size,
               "models": split(args.models, "models"), "modes": split(args.modes, "modes"),
               "mode": args.mode, "iterations": args.iterations, "warmup": args.warmup, "repeats": args.repeats,
               "steps": args.steps, "min_run_seconds": args.min_run_seconds,
               "max_epoch_seconds": args.max_epoch_seconds,
               "volume": None if args.volume is None else parse_volume(args.volume, "--volume"),
               "volumes": (None if args.volumes is None
                           else [parse_volume(v, "--volumes") for v in split(args.volumes, "volumes")]),
               "filters": ints(args.filters, "filters")}
    if args.out is not None and not args.out.strip():
        raise ValueError("--out: expected a file name, got an empty path (leave --out out for the default file)")
    given = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(set(given) - set(DEFAULTS[args.kind]))
    if unknown:
        flag = "--" + unknown[0].replace("_", "-")
        raise ValueError(f"{flag}: not used by `perfkit collect {args.kind}`")
    out = collect(args.kind, out=args.out, framework=args.framework, threads=args.threads, device=args.device,
                  python=args.python, data_root=args.data_root, timeout=args.timeout, progress=not args.no_progress,
                  argv=["perfkit"] + list(sys.argv[1:] if argv is None else argv), **given)
    print(f"wrote {out} (provenance beside it)")
