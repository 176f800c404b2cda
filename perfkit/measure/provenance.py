"""Machine and software facts recorded beside every measured dataset and benchmark result."""
from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
from datetime import datetime, timezone

from ..schema import provenance_path, repo_root

__all__ = ["machine_info", "utc_now", "command_line", "provenance_path", "write_json_atomic"]


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def command_line(argv: list[str] | None = None) -> str:
    """The command as a user would type it again (``perfkit ...`` for the console script)."""
    argv = list(sys.argv if argv is None else argv)
    if argv and os.path.basename(argv[0]) == "perfkit":
        argv[0] = "perfkit"
    elif argv and argv[0].endswith(".py"):
        argv = ["python", os.path.relpath(argv[0])] + argv[1:]
    return shlex.join(argv)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _gpus() -> list[str]:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip()] if out.returncode == 0 else []


def _git_commit() -> str:
    try:
        root = repo_root()
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root,
                             timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=root, timeout=10).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "") if out.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def machine_info(libraries=("numpy", "scipy", "pandas", "sklearn", "joblib", "torch")) -> dict:
    """CPU model, cores, memory, GPUs, OS, Python, library versions, git commit, command and date.

    Only libraries already imported or importable are listed; importing one here
    is avoided for ``torch`` unless it is already loaded (it is slow).
    """
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        mem = float("nan")
    versions = {}
    for mod in libraries:
        if mod == "torch" and mod not in sys.modules:
            try:
                from importlib.metadata import version

                versions[mod] = version("torch")
            except Exception:
                pass
            continue
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            pass
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": affinity,
        "memory_gib": round(mem, 1),
        "gpus": _gpus(),
        "os": platform.platform(),
        "hostname": platform.node(),
        "python": sys.version.split()[0],
        "versions": versions,
        "git_commit": _git_commit(),
        "date": utc_now(),
        "command": command_line(),
    }


def write_json_atomic(path, obj) -> None:
    """Replace ``path`` with ``obj`` as JSON (a private temporary file and an atomic rename: see :mod:`perfkit._io`)."""
    from .._io import atomic_write

    atomic_write(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")
