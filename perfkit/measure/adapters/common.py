"""What every framework adapter shares: the control channel, the phased step loop and the tasks.

Only the standard library and NumPy, so that an adapter running in another
virtualenv (TensorFlow, JAX, or the legacy MXNet/Chainer one with NumPy 1.23)
can import it.

:class:`ControlChannel`
    Requests and results between ranks travel over a loopback TCP star rooted
    at rank 0 (``MASTER_ADDR``:``PERFKIT_CONTROL_PORT``), so that no request
    depends on a framework's object passing. Gradients never travel here: they
    are aggregated with each framework's own collectives.
:class:`StepTrainer`
    One model replica cut into the harness's phases. A framework subclass
    provides the hooks (:meth:`~StepTrainer.load`, :meth:`~StepTrainer.to_device`,
    :meth:`~StepTrainer.segments`, :meth:`~StepTrainer.sync`); the loop that takes
    the timestamps, the batch split, the epoch and the tasks are written once
    here, so every framework is timed by the same code.
:func:`run_task`
    The ``phases``, ``steps``, ``epoch`` and ``overhead`` tasks of the protocol
    on one trainer.

Segments
--------
After the batch is on the device, one iteration is a list of *segments*, each
a callable and the phases it spans, e.g. ``[("t_f", fwd), ("t_b", bwd),
("t_c", allreduce), ("t_u", update)]``. A segment that spans several phases
because the framework cannot separate them (``"t_b+t_c"`` for PyTorch's DDP,
``"t_f+t_b+t_c+t_u"`` for one compiled step) puts its time in its first phase
and NaN in the others: never a made-up split. Each adapter's ``hello`` lists
its segments per mode, and the collector stores that in the provenance.
"""
from __future__ import annotations

import json
import math
import os
import signal
import socket
import struct
import sys
import time

import numpy as np

from .. import imagedata
from ..protocol import Adapter, serve, setup_failed

__all__ = ["STAMPS", "ControlChannel", "ControlAdapter", "StepTrainer", "run_task", "die_with_parent",
           "segment_names", "env_rank", "adapter_main"]

#: the phases before the segments, in the order they are timed
STAMPS = ("t_md", "t_io", "t_h2d")
#: every phase a segment may name
_SEGMENT_PHASES = ("t_f", "t_b", "t_c", "t_u")
_now = time.perf_counter


def env_rank() -> tuple[int, int, int]:
    """``(RANK, WORLD_SIZE, LOCAL_RANK)`` from the environment (as torchrun and ``perfkit collect`` set them)."""
    rank = int(os.environ.get("RANK", os.environ.get("OMPI_COMM_WORLD_RANK", 0)))
    world = int(os.environ.get("WORLD_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", 1)))
    local = int(os.environ.get("LOCAL_RANK", os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", rank)))
    return rank, world, local


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (``PR_SET_PDEATHSIG``).

    Every rank calls this itself, so that ranks started by a launcher
    (``mpirun``) die with the launcher, and the launcher dies with the
    collector. Exits at once if the parent is already gone.
    """
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    except Exception:
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _send(sock: socket.socket, obj) -> None:
    data = json.dumps(obj).encode()
    sock.sendall(struct.pack("!Q", len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("control channel closed by the other end")
        buf += chunk
    return bytes(buf)


def _recv(sock: socket.socket):
    (n,) = struct.unpack("!Q", _recv_exact(sock, 8))
    return json.loads(_recv_exact(sock, n))


class ControlChannel:
    """A loopback TCP star: rank 0 accepts one connection from every other rank.

    ``broadcast`` sends rank 0's object to all; ``gather`` collects one object
    per rank on rank 0 (in rank order). With one rank both are local.
    """

    def __init__(self, rank: int, world: int, addr: str | None = None, port: int | None = None,
                 timeout: float = 300.0):
        self.rank, self.world = int(rank), int(world)
        self.peers: dict[int, socket.socket] = {}
        self.sock = None
        if self.world == 1:
            return
        addr = addr or os.environ.get("MASTER_ADDR", "127.0.0.1")
        if port is None:
            if "PERFKIT_CONTROL_PORT" not in os.environ:
                raise RuntimeError("PERFKIT_CONTROL_PORT is not set: start the workers with `perfkit collect` "
                                   "(or set it to a free port on rank 0's host)")
            port = int(os.environ["PERFKIT_CONTROL_PORT"])
        deadline = time.monotonic() + timeout
        if self.rank == 0:
            srv = socket.socket()
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind((addr, port))
            srv.listen(self.world)
            srv.settimeout(timeout)
            while len(self.peers) < self.world - 1:
                conn, _ = srv.accept()
                conn.settimeout(None)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.peers[int(_recv(conn))] = conn
            srv.close()
        else:
            while True:
                try:
                    s = socket.create_connection((addr, port), timeout=5)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"rank {self.rank}: cannot reach rank 0's control channel at "
                                           f"{addr}:{port} within {timeout:.0f} s") from None
                    time.sleep(0.05)
            s.settimeout(None)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            _send(s, self.rank)
            self.sock = s

    def broadcast(self, obj):
        if self.world == 1:
            return obj
        if self.rank == 0:
            for r in sorted(self.peers):
                _send(self.peers[r], obj)
            return obj
        return _recv(self.sock)

    def gather(self, obj):
        if self.world == 1:
            return [obj]
        if self.rank == 0:
            return [obj] + [_recv(self.peers[r]) for r in range(1, self.world)]
        _send(self.sock, obj)
        return None

    def barrier(self) -> None:
        self.broadcast(self.gather(0) and 0)

    def close(self) -> None:
        for s in list(self.peers.values()) + ([self.sock] if self.sock else []):
            try:
                s.close()
            except OSError:
                pass
        self.peers, self.sock = {}, None


def segment_names(segments) -> list[str]:
    """The phase names of a segment list, e.g. ``["t_f", "t_b+t_c", "t_u"]``."""
    return [name for name, _ in segments]


def _noop():
    pass


def _zero():
    return 0.0


class StepTrainer:
    """One data-parallel replica; a framework subclass implements the hooks.

    Parameters
    ----------
    rank, world : int
        This worker and the number of workers G.
    n : int
        Training-set size (samples).
    batch : int
        Per-worker batch size.
    mode : {"phased", "overlapped"}
        ``phased``: every phase separately, gradients aggregated explicitly;
        ``overlapped``: the framework's native distributed step.
    seed : int
        Seeds the epoch permutation, the same on every rank.

    Hooks
    -----
    ``load(idx)`` → host batch (``t_io``); ``to_device(host)`` → device batch
    (``t_h2d``); ``segments(mode)`` → ``[(phases, callable), ...]`` run on the
    device batch kept in ``self.batch_on_device``; ``sync()`` blocks until the
    framework has finished all queued work.
    """

    def __init__(self, rank: int, world: int, n: int, batch: int, mode: str, seed: int):
        if mode not in ("phased", "overlapped"):
            raise ValueError(f"mode: expected 'phased' or 'overlapped', got {mode!r}")
        if int(batch) < 1:
            raise ValueError(f"batch_size: expected >= 1, got {batch}")
        self.rank, self.world, self.n, self.batch, self.mode = int(rank), int(world), int(n), int(batch), mode
        self.seed = int(seed)
        self._rng = np.random.RandomState(self.seed % 2**32)  # the same permutation on every rank
        self.perm, self.pos = self._rng.permutation(self.n), 0
        self.batch_on_device = None
        self._segments = None

    # ---------------------------------------------------------------- hooks
    def sync(self) -> None:
        """Wait until the framework's queued work is done (asynchronous engines must override)."""

    def load(self, idx):
        raise NotImplementedError

    def to_device(self, host):
        return host

    def segments(self, mode: str) -> list:
        raise NotImplementedError

    def grad_sum(self) -> float:
        """Sum of every element of the current gradients (float64), for the ``check`` task."""
        raise NotImplementedError

    def weight_sum(self) -> float:
        """Sum of the absolute values of every weight (float64), for the ``check`` task."""
        raise NotImplementedError

    # ---------------------------------------------------------------- the loop
    def _global_shard(self):
        """``t_md``: this worker's share of the next global batch of ``batch × world`` indices."""
        g = self.batch * self.world
        if self.pos + g > self.n:
            self.perm, self.pos = self._rng.permutation(self.n), 0
        idx = self.perm[self.pos:self.pos + g].reshape(self.world, self.batch)[self.rank].copy()
        self.pos += g
        return idx

    def step(self, stamps: list | None, take=None) -> None:
        """One iteration; appends its timestamps to ``stamps`` when given.

        Without ``stamps`` no timestamps are taken and nothing is synchronised
        between phases: the bare loop of the overhead benchmark and the epoch.
        """
        if self._segments is None:
            self._segments = self.segments(self.mode)
        if stamps is None:
            sync, now = _noop, _zero
        else:
            sync, now = self.sync, _now
        sync()
        t = [now()]
        idx = self._global_shard() if take is None else take()
        t.append(now())
        host = self.load(idx)
        t.append(now())
        self.batch_on_device = self.to_device(host)
        sync()
        t.append(now())
        for _, fn in self._segments:
            fn()
            sync()
            t.append(now())
        if stamps is not None:
            stamps.append(t)

    def timed(self, n: int) -> list[dict]:
        """``n`` iterations with per-phase times (seconds); ``t_iter`` runs start to start."""
        stamps: list = []
        for _ in range(n):
            self.step(stamps)
        self.sync()
        end = _now()
        names = list(STAMPS) + [name for name, _ in self._segments]
        rows = []
        for i, s in enumerate(stamps):
            row = {k: math.nan for k in _SEGMENT_PHASES}
            for j, name in enumerate(names):
                first = name.split("+")[0]
                row[first] = s[j + 1] - s[j]
            row["t_iter"] = (stamps[i + 1][0] if i + 1 < len(stamps) else end) - s[0]
            rows.append(row)
        return rows

    def bare(self, n: int) -> float:
        """Wall time of ``n`` iterations without per-phase bookkeeping."""
        self.sync()
        t = _now()
        for _ in range(n):
            self.step(None)
        self.sync()
        return _now() - t

    def epoch(self, barrier=None) -> tuple[int, float]:
        """One whole epoch as DistributedSampler splits it (padded to a multiple of G, last batch partial)."""
        perm = np.random.RandomState((self.seed + 7919) % 2**32).permutation(self.n)
        total = math.ceil(self.n / self.world) * self.world
        perm = np.concatenate([perm, perm[: total - self.n]])
        shard = perm[self.rank::self.world]
        n_steps = math.ceil(len(shard) / self.batch)
        pos = [0]

        def take():
            idx = shard[pos[0]:pos[0] + self.batch]
            pos[0] += self.batch
            return idx

        if barrier is not None:
            barrier()
        self.sync()
        t = _now()
        for _ in range(n_steps):
            self.step(None, take)
        self.sync()
        return n_steps, _now() - t


def run_task(adapter, tr, task: str, cfg: dict, info: dict) -> dict:
    """Run one protocol task on trainer ``tr`` (after ``cfg['warmup']`` bare steps).

    ``adapter`` provides ``broadcast`` (rank 0 decides, all ranks follow) and
    ``barrier``; ``info`` (parameter count, training-set size) is copied into
    the result. ``tr`` needs ``step``, ``timed``, ``bare``, ``epoch``, ``sync``,
    ``n``, ``batch`` and ``world`` (:class:`StepTrainer` has them).

    The ``check`` task (a :class:`StepTrainer` in ``phased`` mode) runs one
    step and returns the sum of this rank's gradients after backward
    (``grad_local``) and after aggregation (``grad_mean``), and the sum of
    absolute weights after the update (``weights``): the tests use it to show
    that the aggregation really averages across processes.
    """
    for _ in range(int(cfg.get("warmup", 5))):
        tr.step(None)
    if task == "check":
        if not isinstance(tr, StepTrainer):
            raise ValueError("task check: this adapter's trainer has no segments to check")
        if tr.mode != "phased":
            raise ValueError("task check: needs mode 'phased'")
        tr.step(None)  # builds the segments
        tr.batch_on_device = tr.to_device(tr.load(tr._global_shard()))
        out = dict(info)
        for name, fn in tr._segments:
            fn()
            tr.sync()
            if name == "t_b":
                out["grad_local"] = tr.grad_sum()
            elif name == "t_c":
                out["grad_mean"] = tr.grad_sum()
        return dict(out, weights=tr.weight_sum())
    if task == "phases":
        return dict(info, iterations=tr.timed(int(cfg.get("iterations", 100))))
    if task in ("steps", "epoch"):
        tr.sync()
        t = _now()
        tr.step(None)
        tr.sync()
        one = _now() - t
        # at least `steps` steps and `min_run_seconds` per run (rank 0 decides, so that all ranks agree)
        steps = int(cfg.get("steps", 5))
        steps = adapter.broadcast(max(steps, min(int(cfg.get("max_steps", 200)),
                                                 math.ceil(float(cfg.get("min_run_seconds", 0.0)) / max(one, 1e-6)))))
        reps = [[r["t_iter"] for r in tr.timed(steps)] for _ in range(int(cfg.get("repeats", 3)))]
        out = dict(info, repeats=reps, steps=steps)
        if task == "epoch":
            n_steps = math.ceil(tr.n / (tr.batch * tr.world))
            predicted = sorted(sum(r) / len(r) for r in reps)[len(reps) // 2] * n_steps
            limit = float(cfg.get("max_epoch_seconds", math.inf))
            if adapter.broadcast(predicted <= limit):
                out["epoch_steps"], out["epoch_time"] = tr.epoch(adapter.barrier)
            else:
                out["epoch_steps"], out["epoch_time"] = None, None
        return out
    if task == "overhead":
        n, blocks = int(cfg.get("steps", 20)), int(cfg.get("blocks", 5))
        bare, timed = [], []
        for _ in range(blocks):  # interleaved so that drift hits both alike
            bare.append(tr.bare(n) / n)
            t = _now()
            tr.timed(n)
            timed.append((_now() - t) / n)
        return dict(info, bare=bare, timed=timed)
    raise ValueError(f"task: expected 'phases', 'steps', 'epoch' or 'overhead', got {task!r}")


class ControlAdapter(Adapter):
    """An adapter whose requests travel over the :class:`ControlChannel` (every framework but PyTorch).

    Sets this rank's parent-death signal, reads ``RANK``/``WORLD_SIZE`` (or
    Open MPI's variables under ``mpirun``), connects the control channel and
    caches the training images as NumPy arrays. A framework subclass sets
    ``framework``, implements ``hello``, ``run`` and, where it holds a process
    group, ``close`` (calling this one).
    """

    framework = "none"

    def __init__(self, threads: int = 1, device: str = "cpu", data_root: str | None = None):
        die_with_parent()
        self.rank, self.world_size, self.local_rank = env_rank()
        if device not in ("cpu", "cuda"):
            raise ValueError(f"device: expected 'cpu' or 'cuda', got {device!r}")
        self.threads, self.device, self.data_root = int(threads), device, data_root
        self.channel = ControlChannel(self.rank, self.world_size)
        self._images: dict = {}

    def broadcast(self, obj):
        return self.channel.broadcast(obj)

    def gather(self, obj):
        return self.channel.gather(obj)

    def barrier(self) -> None:
        self.channel.barrier()

    def images(self, dataset: str):
        """``(x uint8 (N, C, H, W), y int64 (N,))`` of ``dataset``: synthetic, or the real files under ``--data-root``."""
        if dataset not in self._images:
            root = os.path.join(self.data_root, dataset) if self.data_root else None
            self._images[dataset] = imagedata.load_images(dataset, root=root, seed=0)
        return self._images[dataset]

    def base_hello(self) -> dict:
        """The fields every adapter's ``hello`` shares."""
        import platform

        return {"framework": self.framework, "rank": self.rank, "host": platform.node(), "device": self.device,
                "threads": self.threads, "python": sys.version.split()[0], "numpy": np.__version__,
                "data": "real files under " + self.data_root if self.data_root else "synthetic (real shapes and sizes)"}

    def close(self) -> None:
        self.channel.close()


def adapter_main(factory, argv=None, doc: str = "") -> None:
    """The command line of every adapter: build ``factory(threads=, device=, data_root=)`` and serve requests."""
    import argparse

    module = getattr(factory, "__module__", "")
    ap = argparse.ArgumentParser(prog=f"python -m {module}" if module.startswith("perfkit.") else None,
                                 description=doc.split("\n")[0] if doc else None)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("PERFKIT_THREADS", 1)),
                    help="intra-op threads per worker (default 1)")
    ap.add_argument("--device", default=os.environ.get("PERFKIT_DEVICE", "cpu"), choices=["cpu", "cuda"])
    ap.add_argument("--data-root", default=os.environ.get("PERFKIT_DATA_ROOT") or None,
                    help="folder with mnist/, fashion_mnist/, cifar10/ real files (default: synthetic)")
    ap.add_argument("--requests", default=None, help="JSON-lines requests (rank 0; default stdin)")
    ap.add_argument("--results", default=None, help="JSON-lines results (rank 0; default stdout)")
    args = ap.parse_args(argv)
    if args.threads < 1:
        setup_failed(ValueError(f"--threads: expected an integer >= 1, got {args.threads}"))
    rank = env_rank()[0]
    if rank != 0:  # only rank 0 speaks the protocol; under mpirun every rank's stdout reaches the collector
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    try:
        adapter = factory(threads=args.threads, device=args.device, data_root=args.data_root)
    except (RuntimeError, ValueError, OSError, ImportError) as exc:
        setup_failed(exc)
    req = open(args.requests) if args.requests and adapter.rank == 0 else None
    res = open(args.results, "a", buffering=1) if args.results and adapter.rank == 0 else None
    serve(adapter, requests=req, results=res)
    for fh in (req, res):
        if fh is not None:
            fh.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no interpreter teardown: collective libraries' threads can abort in static destructors
