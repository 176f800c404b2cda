"""Framework adapters: one program per framework that times training steps for the collector.

An adapter implements :class:`perfkit.measure.protocol.Adapter` and is started
as ``python -m <module>`` once per worker, under the interpreter of its
framework's environment. :data:`FRAMEWORKS` maps the ``--framework`` name of
``perfkit collect`` to that module, the environment it runs in, how its ranks
are launched and which helper processes it needs. The modules here import
their framework, so nothing imports them but the worker processes (and the
doctests where the framework is installed); :mod:`.common` is the part they
share (standard library and NumPy only).

Environments (built by ``make frameworks`` from ``requirements/<env>.txt``):

========== ============ =========================================================
framework  environment  launch
========== ============ =========================================================
pytorch    the main one G processes (torchrun's variables), gloo all-reduce
tensorflow .envs/tensorflow  G processes, ``MultiWorkerMirroredStrategy`` collectives
jax        .envs/jax    G processes, ``jax.distributed`` (gloo) ``psum``
mxnet      .envs/legacy G processes + a scheduler and a server (``dist_sync`` kvstore)
chainer    .envs/legacy ``mpirun -n G``, ChainerMN over Open MPI
========== ============ =========================================================
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ADAPTERS", "FRAMEWORKS", "Framework", "framework_python", "envs_dir", "requirements_file"]


@dataclass(frozen=True)
class Framework:
    """How ``perfkit collect --framework NAME`` starts one worker group.

    module : the adapter, run as ``python -m module``
    env : name of its virtualenv under :func:`envs_dir` (``None``: the interpreter running perfkit)
    launcher : ``"direct"`` (the collector starts G processes) or ``"mpirun"`` (one ``mpirun -n G``)
    services : roles of helper processes started before the workers when G > 1, each as
        ``python -m module --role ROLE`` (MXNet's kvstore scheduler and server)
    """

    module: str
    env: str | None = None
    launcher: str = "direct"
    services: tuple = field(default_factory=tuple)


#: ``--framework`` name → how to start it
FRAMEWORKS = {
    "pytorch": Framework("perfkit.measure.adapters.pytorch"),
    "tensorflow": Framework("perfkit.measure.adapters.tensorflow", env="tensorflow"),
    "jax": Framework("perfkit.measure.adapters.jax", env="jax"),
    "mxnet": Framework("perfkit.measure.adapters.mxnet", env="legacy", services=("scheduler", "server")),
    "chainer": Framework("perfkit.measure.adapters.chainer", env="legacy", launcher="mpirun"),
}

#: ``--framework`` name → Python module implementing :class:`perfkit.measure.protocol.Adapter`
ADAPTERS = {name: fw.module for name, fw in FRAMEWORKS.items()}


def envs_dir() -> Path:
    """Where ``make frameworks`` puts the framework environments: ``$PERFKIT_ENVS`` or ``<checkout>/.envs``."""
    if os.environ.get("PERFKIT_ENVS"):
        return Path(os.environ["PERFKIT_ENVS"])
    return Path(__file__).resolve().parents[3] / ".envs"


def requirements_file(env: str) -> Path:
    """The pinned requirements of environment ``env``."""
    return Path(__file__).resolve().parent / "requirements" / f"{env}.txt"


def framework_python(framework: str) -> str:
    """The interpreter that runs ``framework``'s workers; a clear error if its environment is not built."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework: expected one of {sorted(FRAMEWORKS)}, got {framework!r}")
    env = FRAMEWORKS[framework].env
    if env is None:
        return sys.executable
    python = envs_dir() / env / "bin" / "python"
    if not python.exists():
        raise ValueError(f"framework {framework!r}: its environment {python.parent.parent} is not built; run "
                         f"`make frameworks` (or pass --python with an interpreter that has "
                         f"{requirements_file(env).name}'s packages)")
    return str(python)
