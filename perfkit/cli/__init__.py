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
``perfkit plan model.json --workload model=resnet50,precision=fp16 --epochs 90 --dataset-size 1281167 [--deadline 24]``
    Rank the GPU configurations of a menu by time and cost for one job (a model fitted across hardware).
``perfkit collect ch3|ch4|noise|epoch|ch5|ch5vol [--framework pytorch] [--out PATH] [--seed S] [...]``
    Measure training steps with the harness (resumable; see ``perfkit collect -h``).
``perfkit findings [--write]``
    Print the chapters' generated findings, or write them into docs/findings.md.
``perfkit docs [--write | --check]``
    Say which generated blocks of docs/ and the README are stale, or rewrite them.
``perfkit version`` (or ``perfkit --version``)
    Print the version.

``python -m perfkit ...`` is the same command.

Each subcommand is one module of this package with ``HELP`` (its line in
``perfkit --help``), ``add_arguments(parser)`` and ``run(args, argv)``;
:data:`COMMANDS` lists them in the order of the help.
"""

from __future__ import annotations

import argparse
import sys

from .._version import __version__
from . import collect, docs, findings, fit, plan, predict, reproduce, tables, version, whatif
from .common import literal

__all__ = ["COMMANDS", "build_parser", "main"]

#: subcommand name → its module (``HELP``, ``add_arguments(parser)``, ``run(args, argv)``), in the order of the help
COMMANDS = {"reproduce": reproduce, "tables": tables, "fit": fit, "predict": predict, "whatif": whatif,
            "plan": plan, "collect": collect, "findings": findings, "docs": docs, "version": version}

#: the former private name of :func:`perfkit.cli.common.literal`, for callers that still use it
_literal = literal


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``perfkit`` parser: one subparser per entry of :data:`COMMANDS`.

    With ``command``, only that subcommand gets its options (the others keep
    their line in the help), so running one command does not import what the
    others' options need.
    """
    parser = argparse.ArgumentParser(
        prog="perfkit",
        description="Performance modelling of distributed deep-learning training (Kavarakuntla 2023, reproduced).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        subparser = sub.add_parser(name, help=module.HELP, description=getattr(module, "DESCRIPTION", None))
        if command is None or command == name:
            module.add_arguments(subparser)
    return parser


def _command_of(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names (its first word not starting with ``-``), or None if it names none."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand: 0 on success, 2 (one line on stderr) for bad input or an I/O error, 130 for a stopped
    collection."""
    args = build_parser(_command_of(sys.argv[1:] if argv is None else argv)).parse_args(argv)
    try:
        COMMANDS[args.command].run(args, argv)
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
