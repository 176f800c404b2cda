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

__all__ = ["machine_info", "numeric_environment", "numeric_summary", "utc_now", "command_line",
           "write_json_atomic", "SIMD_FLAGS", "NUMERIC_ENV_VARS"]

#: the /proc/cpuinfo flags that decide which kernels numpy, OpenBLAS, MKL and PyTorch run (x86, then Arm)
_X86_FLAGS = ("sse2", "ssse3", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw",
              "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8")
_ARM_FLAGS = ("asimd", "asimddp", "asimdhp", "sve", "sve2", "bf16", "i8mm")
SIMD_FLAGS = _X86_FLAGS + _ARM_FLAGS
#: environment variables that change the BLAS kernels or the thread counts behind the numbers
NUMERIC_ENV_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "MKL_ENABLE_INSTRUCTIONS", "MKL_DEBUG_CPU_TYPE", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                    "NUMEXPR_NUM_THREADS", "NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES", "OMP_PROC_BIND",
                    "OMP_PLACES", "KMP_AFFINITY", "ATEN_CPU_CAPABILITY")


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
    """The checkout's short commit (``+dirty`` with uncommitted changes to tracked files), or an empty string.

    Where ``PERFKIT_SOURCE_COMMIT`` is set (by whoever copied the tree to another machine, whose ``.git`` may be
    absent or stale), that commit is recorded, marked as such, with what git reports there beside it.
    """
    given = os.environ.get("PERFKIT_SOURCE_COMMIT", "").strip()
    here = ""
    try:
        root = repo_root()
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root,
                             timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=root, timeout=10).stdout.strip()
        if out.returncode == 0:
            here = out.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        pass
    if not given:
        return here
    return f"{given} (PERFKIT_SOURCE_COMMIT; git here: {here or 'none'})"


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


def _cpuinfo() -> dict:
    """``vendor``, ``model`` and the set of ``flags`` of the first CPU in /proc/cpuinfo (empty where there is none)."""
    out: dict = {"vendor": "", "model": "", "flags": set()}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "vendor_id" and not out["vendor"]:
                    out["vendor"] = value.strip()
                elif key in ("model name", "Model") and not out["model"]:
                    out["model"] = value.strip()
                elif key in ("flags", "Features") and not out["flags"]:
                    out["flags"] = set(value.split())
    except OSError:
        pass
    return out


def _numpy_simd() -> dict:
    """numpy's SIMD dispatch, as ``numpy.show_runtime()`` reports it: the build's baseline, the dispatched
    extensions this CPU has (``found``) and those it lacks (``not_found``)."""
    import importlib

    for name in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):  # numpy 2, numpy 1
        try:
            mod = importlib.import_module(name)
            features, baseline, dispatch = mod.__cpu_features__, mod.__cpu_baseline__, mod.__cpu_dispatch__
        except (ImportError, AttributeError):
            continue
        return {"baseline": list(baseline), "found": [f for f in dispatch if features.get(f)],
                "not_found": [f for f in dispatch if not features.get(f)]}
    return {}


def _blas() -> tuple[list, str | None]:
    """Every BLAS/OpenMP pool loaded (``threadpoolctl.threadpool_info()``): implementation, version, core type
    (``architecture``), threading layer and threads; and threadpoolctl's version (None when not installed).

    numpy and scipy.linalg are imported first, so their BLAS libraries are loaded and listed."""
    import importlib

    for mod in ("numpy", "scipy.linalg"):
        try:
            importlib.import_module(mod)
        except ImportError:
            pass
    try:
        import threadpoolctl
    except ImportError:
        return [], None
    keys = ("user_api", "internal_api", "version", "architecture", "threading_layer", "num_threads", "prefix")
    # the library's file name identifies the build; its folder (a home directory, a venv) is left out
    return ([{**{k: lib.get(k) for k in keys}, "library": os.path.basename(lib.get("filepath") or "")}
             for lib in threadpoolctl.threadpool_info()], threadpoolctl.__version__)


def numeric_environment() -> dict:
    """What a run's numbers depend on beyond the code: a JSON-able dict.

    ``cpu``: model, vendor, the :data:`SIMD_FLAGS` this CPU has and lacks (/proc/cpuinfo); ``blas``: every
    BLAS/OpenMP library loaded, with its version, core type (``architecture``) and threads
    (``threadpoolctl.threadpool_info()``; empty, with ``threadpoolctl`` None, when it is not installed);
    ``numpy_simd``: numpy's SIMD baseline and the dispatched extensions found / not found on this CPU;
    ``env``: each of :data:`NUMERIC_ENV_VARS` (None when unset); ``threads``: logical CPUs, usable CPUs,
    BLAS and OpenMP threads, and PyTorch's intra-op threads and CPU capability when torch is already loaded;
    ``versions``: python, numpy, scipy, threadpoolctl (and torch when loaded).
    """
    import platform

    info = _cpuinfo()
    arm = platform.machine().lower() in ("aarch64", "arm64") or "asimd" in info["flags"]
    family = _ARM_FLAGS if arm else _X86_FLAGS  # the flags this kind of CPU could have
    blas, tpc_version = _blas()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    threads = {"logical_cpus": os.cpu_count(), "usable_cpus": usable,
               "blas": max((lib["num_threads"] or 0 for lib in blas if lib["user_api"] == "blas"), default=None),
               "openmp": max((lib["num_threads"] or 0 for lib in blas if lib["user_api"] == "openmp"), default=None)}
    versions = {"python": sys.version.split()[0], "threadpoolctl": tpc_version}
    for mod in ("numpy", "scipy"):
        if mod in sys.modules:
            versions[mod] = getattr(sys.modules[mod], "__version__", None)
    if "torch" in sys.modules:  # never imported here: it is slow
        torch = sys.modules["torch"]
        versions["torch"] = getattr(torch, "__version__", None)
        try:
            threads["torch_intra_op"] = torch.get_num_threads()
            threads["torch_inter_op"] = torch.get_num_interop_threads()
            threads["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        except Exception:  # an old or partial torch
            pass
    return {
        "cpu": {"model": info["model"] or platform.processor() or platform.machine(), "vendor": info["vendor"],
                "machine": platform.machine(),
                "simd_flags": [f for f in SIMD_FLAGS if f in info["flags"]],
                "simd_flags_missing": [f for f in family if info["flags"] and f not in info["flags"]]},
        "blas": blas,
        "numpy_simd": _numpy_simd(),
        "env": {var: os.environ.get(var) for var in NUMERIC_ENV_VARS},
        "threads": threads,
        "versions": versions,
    }


def numeric_summary(env: dict | None = None) -> str:
    """One line of :func:`numeric_environment`: CPU and its widest SIMD, BLAS and core type, threads, set variables."""
    env = numeric_environment() if env is None else env
    cpu, th = env["cpu"], env["threads"]
    flags = cpu["simd_flags"]
    widest = next((f for f in ("avx512f", "avx2", "avx", "sse4_2", "sve", "asimd") if f in flags), "")
    blas = [lib for lib in env["blas"] if lib["user_api"] == "blas"]
    blas_text = " + ".join(f"{lib['internal_api']} {lib['version']} (core {lib['architecture'] or '?'}, "
                           f"{lib['num_threads']} threads)" for lib in blas) or "not listed (no threadpoolctl)"
    simd = env["numpy_simd"].get("found") or env["numpy_simd"].get("baseline") or []
    set_vars = [f"{k}={v}" for k, v in env["env"].items() if v is not None]
    return (f"CPU {cpu['model']} ({', '.join(filter(None, [widest, 'fma' if 'fma' in flags else ''])) or 'no AVX'}); "
            f"BLAS {blas_text}; numpy SIMD {' '.join(simd) or '?'}; {th['usable_cpus']}/{th['logical_cpus']} CPUs; "
            + (" ".join(set_vars) if set_vars else "no BLAS/thread variables set"))


def write_json_atomic(path, obj) -> None:
    """Replace ``path`` with ``obj`` as JSON (a private temporary file and an atomic rename: see :mod:`perfkit._io`)."""
    from .._io import atomic_write

    atomic_write(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")
