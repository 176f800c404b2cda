"""Worker groups: G adapter processes of one framework, driven by ``perfkit collect``.

:class:`WorkerGroup` starts G adapter processes the way ``torchrun`` would
(``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``), or
one ``mpirun -n G`` for an MPI framework, plus any helper processes the
framework needs (:data:`~perfkit.measure.adapters.FRAMEWORKS`), and exchanges
JSON lines with rank 0 (:mod:`perfkit.measure.protocol`). Every process gets
free loopback ports: ``MASTER_PORT`` (the framework's rendezvous),
``PERFKIT_CONTROL_PORT`` (the adapters' control channel) and
``PERFKIT_PORTS`` (G + 2 more, for frameworks that need one per worker or
service). The processes die with the collector, even when it is SIGKILLed:
``PR_SET_PDEATHSIG`` on Linux for the processes it starts, set again by every
rank for itself (so ranks under ``mpirun`` die with it), and end-of-input on
rank 0's stdin everywhere.
"""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .adapters import FRAMEWORKS, framework_python
from .protocol import SETUP_ERROR

__all__ = ["adapter_command", "WorkerGroup", "WorkerError"]


def adapter_command(framework: str, python: str | None = None) -> list[str]:
    """The command that starts one worker of ``framework`` (under ``python``, default its environment's)."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework: expected one of {sorted(FRAMEWORKS)}, got {framework!r}")
    return [python or framework_python(framework), "-m", FRAMEWORKS[framework].module]


#: launcher messages of a start-up that failed before any worker ran, retried once by :meth:`WorkerGroup.start`
#: (Open MPI 5's PMIx server sometimes cannot start its listener thread; a second launch starts)
TRANSIENT_LAUNCH = ("The PMIx server's listener thread failed to start",)


def _mpirun(python: str) -> str:
    """``mpirun`` beside ``python`` (the pip wheel of Open MPI puts it there), else the one on PATH."""
    import shutil

    here = Path(python).parent / "mpirun"
    found = str(here) if here.exists() else shutil.which("mpirun")
    if not found:
        raise WorkerError(f"no mpirun beside {python} nor on PATH; run `make frameworks`")
    return found


class WorkerError(RuntimeError):
    """A worker group crashed or timed out (the group has been stopped)."""


def _free_ports(n: int) -> list[int]:
    """``n`` distinct free loopback ports (held open together while chosen, so that none repeats)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _die_with_parent():  # runs in the child between fork and exec
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


class WorkerGroup:
    """``workers`` processes of one framework adapter, driven through rank 0.

    Parameters
    ----------
    framework : str
        Key of :data:`ADAPTERS`.
    workers : int
        World size G.
    threads : int
        Intra-op threads per worker (also sets ``OMP_NUM_THREADS``/``MKL_NUM_THREADS``).
    device : {"cpu", "cuda"}
    python : str, optional
        Interpreter for the workers (another virtualenv, say); default: this one.
    data_root : str, optional
        Folder with real dataset files (default: synthetic data).
    timeout : float
        Seconds to wait for one reply before the group is killed.
    """

    def __init__(self, framework="pytorch", workers=1, threads=1, device="cpu", python=None, data_root=None,
                 timeout=600.0):
        if int(workers) < 1:
            raise ValueError(f"workers: expected >= 1, got {workers}")
        self.framework, self.workers, self.threads, self.device = framework, int(workers), int(threads), device
        self.spec = FRAMEWORKS.get(framework)
        self.cmd = adapter_command(framework, python) + ["--threads", str(threads), "--device", device]
        if data_root:
            self.cmd += ["--data-root", str(data_root)]
        self.services: list[subprocess.Popen] = []
        self.timeout = float(timeout)
        self.procs: list[subprocess.Popen] = []
        self.hello: dict | None = None
        self._logs: list = []

    def _env(self, **extra) -> dict:
        pkg_parent = str(Path(__file__).resolve().parents[2])  # the folder holding perfkit/
        return dict(os.environ, WORLD_SIZE=str(self.workers), LOCAL_WORLD_SIZE=str(self.workers),
                    MASTER_ADDR="127.0.0.1", MASTER_PORT=str(self._ports[0]),
                    PERFKIT_CONTROL_PORT=str(self._ports[1]), PERFKIT_PORTS=",".join(map(str, self._ports[2:])),
                    OMP_NUM_THREADS=str(self.threads), MKL_NUM_THREADS=str(self.threads),
                    OPENBLAS_NUM_THREADS=str(self.threads), PYTHONPATH=os.pathsep.join(filter(None, [pkg_parent, os.environ.get("PYTHONPATH")])), **extra)

    def _spawn(self, cmd, env, talk: bool) -> None:
        log = tempfile.TemporaryFile(mode="w+b")
        self._logs.append(log)
        try:
            self.procs.append(subprocess.Popen(
                cmd, env=env, stdin=subprocess.PIPE if talk else subprocess.DEVNULL,
                stdout=subprocess.PIPE if talk else subprocess.DEVNULL, stderr=log,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None))
        except OSError as exc:
            self.stop(kill=True)
            raise WorkerError(f"cannot run {cmd[0]}: {exc}") from None

    def start(self) -> dict:
        """Start the group and return rank 0's hello. A launch that fails with one of :data:`TRANSIENT_LAUNCH`
        (mpirun's own start-up, before any rank ran a step) is retried once on fresh ports; any other failure, or a
        second one, is a :class:`WorkerError`."""
        try:
            return self._start()
        except WorkerError as exc:
            said = [text for text in TRANSIENT_LAUNCH if text in str(exc)]
            if not said:
                raise
            print(f"[perfkit] {self.framework}: the launcher failed to start ({said[0]}); retrying once",
                  file=sys.stderr, flush=True)
            time.sleep(1.0)
            return self._start()

    def _start(self) -> dict:
        self._ports = _free_ports(self.workers + 4)
        spec = self.spec
        if spec is not None and spec.services and self.workers > 1:
            for role in spec.services:  # helper processes first; they are the last entries of self.procs
                self._spawn(self.cmd[:3] + ["--role", role], self._env(PERFKIT_ROLE=role), talk=False)
            self.services = self.procs
            self.procs = []
            self._service_logs, self._logs = self._logs, []
        if spec is not None and spec.launcher == "mpirun":
            mpirun = [_mpirun(self.cmd[0]), "-n", str(self.workers), "--oversubscribe", "--bind-to", "none",
                      "--mca", "mpi_yield_when_idle", "1"]
            self._spawn(mpirun + self.cmd, self._env(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                                                     PRTE_ALLOW_RUN_AS_ROOT="1",
                                                     PRTE_ALLOW_RUN_AS_ROOT_CONFIRM="1"), talk=True)
        else:
            for rank in range(self.workers):
                self._spawn(self.cmd, self._env(RANK=str(rank), LOCAL_RANK=str(rank)), talk=rank == 0)
        self.hello = self.request({"op": "hello"}, timeout=max(self.timeout, 120.0))
        return self.hello

    def _stderr_tail(self, n=1500) -> str:
        parts = []
        for rank, log in enumerate(self._logs + getattr(self, "_service_logs", [])):
            try:
                log.seek(0)
                text = log.read().decode(errors="replace").strip()
            except (OSError, ValueError):
                continue
            if text:
                parts.append(f"[rank {rank}] {text[-n:]}")
        return "\n".join(parts)

    def request(self, obj: dict, timeout: float | None = None) -> dict:
        """Send one request to rank 0 and return its reply; raise :class:`WorkerError` on crash or timeout."""
        if not self.procs:
            self.start()
        p0 = self.procs[0]
        try:
            p0.stdin.write((json.dumps(obj) + "\n").encode())
            p0.stdin.flush()
        except (BrokenPipeError, OSError):
            self._fail("worker group exited before the request could be sent")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail(f"no reply within {timeout or self.timeout:.0f} s")
            ready, _, _ = select.select([p0.stdout], [], [], min(left, 1.0))
            if ready:
                line = p0.stdout.readline()
                if not line:
                    self._fail("rank 0 closed its output (crashed?)")
                return json.loads(line)
            dead = [r for r, p in enumerate(self.procs) if p.poll() is not None]
            if dead:
                what = "mpirun" if self.spec is not None and self.spec.launcher == "mpirun" else f"worker rank {dead[0]}"
                self._fail(f"{what} exited with code {self.procs[dead[0]].returncode}")
            gone = [p for p in self.services if p.poll() is not None]
            if gone:
                self._fail(f"helper process {' '.join(gone[0].args[-2:])} exited with code {gone[0].returncode}")

    def _setup_errors(self) -> list[str]:
        """The distinct one-line reasons the adapters gave for not starting (:func:`~.protocol.setup_failed`)."""
        found = []
        for log in self._logs + getattr(self, "_service_logs", []):
            try:
                log.seek(0)
                lines = log.read().decode(errors="replace").splitlines()
            except (OSError, ValueError):
                continue
            for line in lines:
                if line.startswith(SETUP_ERROR) and line[len(SETUP_ERROR):] not in found:
                    found.append(line[len(SETUP_ERROR):])
        return found

    def _fail(self, why: str):
        reasons = self._setup_errors()
        if reasons:  # the adapter said why in one line: that is the whole story
            self.stop(kill=True)
            raise WorkerError("; ".join(reasons))
        tail = self._stderr_tail()
        self.stop(kill=True)
        raise WorkerError(why + (f"\n{tail}" if tail else ""))

    def stop(self, kill: bool = False) -> None:
        if not self.procs and not self.services:
            return
        if not kill:
            try:
                self.procs[0].stdin.write(b'{"op": "exit"}\n')
                self.procs[0].stdin.flush()
                self.procs[0].stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass
        for p in self.procs:
            try:
                p.wait(timeout=0.1 if kill else 20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for p in self.services:  # the workers are gone: the scheduler and server have no one left to serve
            if p.poll() is None:
                p.kill()
            p.wait()
        for log in self._logs + getattr(self, "_service_logs", []):
            log.close()
        self.procs, self._logs, self.services, self._service_logs = [], [], [], []

    def __enter__(self):
        if not self.procs:
            self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
