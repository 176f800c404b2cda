"""The PyTorch adapter: one data-parallel worker of the measurement harness.

Run one process per worker, with the environment ``torchrun`` sets::

    torchrun --nproc_per_node 2 -m perfkit.torch_worker --requests req.jsonl --results out.jsonl

``perfkit collect`` starts the workers itself with the same variables (it is a
minimal torchrun) and talks to rank 0 through :mod:`perfkit.protocol`.
Workers use ``torch.distributed`` with gloo on CPU and NCCL on CUDA; each CPU
worker is pinned to ``--threads`` intra-op threads (default 1: one worker ≈
one device).

What one *phased* iteration times on each worker (``time.perf_counter``; on
CUDA, ``torch.cuda.synchronize()`` before every timestamp):

``t_md``  take the next global batch of ``batch_size × workers`` sample indices
          from the epoch permutation and cut out this worker's share (the batch
          split; in a multi-process job the split is of indices, before any
          image is touched, so it costs microseconds — the thesis's
          single-process frameworks split a loaded batch instead).
``t_io``  gather those images and labels from the in-memory training set and
          convert them to float in [0, 1] (host memory → batch tensor).
``t_h2d`` ``.to(device)`` for images and labels. On CPU this returns the same
          tensor: what is recorded is that call's (near-zero) cost, not a copy.
``t_f``   forward pass and loss.
``t_b``   ``loss.backward()``.
``t_c``   gradient aggregation: flatten all gradients into one buffer,
          ``all_reduce`` (sum), divide by the number of workers, copy back. Zero
          work with one worker (only the two timestamps).
``t_u``   ``optimizer.step()`` and ``zero_grad()``.
``t_iter`` from this iteration's first timestamp to the next iteration's
          first timestamp, so it also contains the harness's bookkeeping:
          the sum of the phases falls short of it by exactly that overhead.

*Overlapped* mode wraps the model in ``DistributedDataParallel`` (bucketed
all-reduce overlapped with backward, PyTorch's default): ``t_b`` then holds
backward and the communication that did not overlap, and ``t_c`` is NaN.
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from .. import imagedata
from ...schema import parse_volume
from ..protocol import Adapter, serve, setup_failed
from .common import run_task
from .torch_models import build_ch3_model, lenet5, make_optimizer, n_parameters

__all__ = ["TorchAdapter", "main"]

_STAMPS = ("t_md", "t_io", "t_h2d", "t_f", "t_b", "t_c", "t_u")
#: what the timed intervals after the copy cover in each mode (perfkit.measure.adapters.common: "segments")
SEGMENTS = {"phased": ["t_f", "t_b", "t_c", "t_u"], "overlapped": ["t_f", "t_b+t_c", "t_u"]}
_now = time.perf_counter


def _no_sync():
    pass


def _no_time():
    return 0.0


class _Trainer:
    """One model replica with its optimizer and data on one worker."""

    def __init__(self, adapter: "TorchAdapter", model, loss_fn, target, optimizer_name, lr, dataset, batch, mode,
                 seed):
        if mode not in ("phased", "overlapped"):
            raise ValueError(f"mode: expected 'phased' or 'overlapped', got {mode!r}")
        if int(batch) < 1:
            raise ValueError(f"batch_size: expected >= 1, got {batch}")
        self.a = adapter
        self.rank, self.world, self.dev = adapter.rank, adapter.world_size, adapter.device
        self.batch, self.mode, self.target = int(batch), mode, target
        model = model.to(self.dev)
        if self.world > 1:
            for p in model.parameters():  # identical replicas (they are seeded alike; this makes it certain)
                dist.broadcast(p.data, src=0)
        self.model = model
        self.net = DistributedDataParallel(model) if mode == "overlapped" and self.world > 1 else model
        self.loss_fn = loss_fn
        self.opt = make_optimizer(optimizer_name, model.parameters(), float(lr))
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.x_all, self.y_all = adapter.images(dataset) if isinstance(dataset, str) else dataset
        self.n = len(self.x_all)
        self.seed = int(seed)
        self.gen = torch.Generator().manual_seed(int(seed))  # the same permutation on every rank
        self.perm, self.pos = torch.randperm(self.n, generator=self.gen), 0
        torch.manual_seed(int(seed) * 1009 + self.rank + 1)  # dropout masks differ between ranks

    def sync(self):
        if self.dev.type == "cuda":
            torch.cuda.synchronize(self.dev)

    def _global_shard(self):
        g = self.batch * self.world
        if self.pos + g > self.n:
            self.perm, self.pos = torch.randperm(self.n, generator=self.gen), 0
        idx = self.perm[self.pos:self.pos + g].view(self.world, self.batch)[self.rank].clone()
        self.pos += g
        return idx

    def step(self, stamps: list | None, take=None):
        """One iteration; appends its 8 timestamps to ``stamps`` when given.

        Without ``stamps`` the iteration takes no timestamps and does not
        synchronise between phases: that is the bare loop the overhead benchmark
        compares with, and the loop a whole epoch runs.
        """
        net = self.net
        if stamps is None:
            sync, _now = _no_sync, _no_time
        else:
            sync, _now = self.sync, time.perf_counter
        sync()
        t0 = _now()
        idx = self._global_shard() if take is None else take()
        t1 = _now()
        x = self.x_all.index_select(0, idx).float().div_(255.0)
        y = self.y_all.index_select(0, idx).long()
        t2 = _now()
        x, y = x.to(self.dev), y.to(self.dev)
        sync()
        t3 = _now()
        out = net(x)
        loss = self.loss_fn(out, x.flatten(1) if self.target == "input" else y)
        sync()
        t4 = _now()
        loss.backward()
        sync()
        t5 = _now()
        if self.mode == "phased" and self.world > 1:
            grads = [p.grad for p in self.params]
            flat = torch._utils._flatten_dense_tensors(grads)
            dist.all_reduce(flat)
            flat.div_(self.world)
            for g, v in zip(grads, torch._utils._unflatten_dense_tensors(flat, grads)):
                g.copy_(v)
            sync()
        t6 = _now()
        self.opt.step()
        self.opt.zero_grad(set_to_none=False)
        sync()
        t7 = _now()
        if stamps is not None:
            stamps.append((t0, t1, t2, t3, t4, t5, t6, t7))

    def timed(self, n: int) -> list[dict]:
        """``n`` iterations with per-phase times (seconds)."""
        stamps: list = []
        for _ in range(n):
            self.step(stamps)
        self.sync()
        end = _now()
        rows = []
        for i, s in enumerate(stamps):
            nxt = stamps[i + 1][0] if i + 1 < len(stamps) else end
            row = {k: s[j + 1] - s[j] for j, k in enumerate(_STAMPS)}
            if self.mode == "overlapped" and self.world > 1:
                row["t_c"] = math.nan
            row["t_iter"] = nxt - s[0]
            rows.append(row)
        return rows

    def bare(self, n: int) -> float:
        """Wall time of ``n`` iterations with no per-phase bookkeeping (for the overhead benchmark)."""
        self.sync()
        t = _now()
        for _ in range(n):
            self.step(None)
        self.sync()
        return _now() - t

    def epoch(self, barrier=None) -> tuple[int, float]:
        """One whole epoch as DistributedSampler splits it (padded to a multiple of workers, last batch partial)."""
        g = torch.Generator().manual_seed(self.seed + 7919)
        perm = torch.randperm(self.n, generator=g)
        total = math.ceil(self.n / self.world) * self.world
        perm = torch.cat([perm, perm[: total - self.n]])
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


class TorchAdapter(Adapter):
    framework = "pytorch"

    def __init__(self, threads: int = 1, device: str = "cpu", data_root: str | None = None, backend: str | None = None):
        self.rank = int(os.environ.get("RANK", 0))
        self.world_size = int(os.environ.get("WORLD_SIZE", 1))
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        self.threads = int(threads)
        torch.set_num_threads(self.threads)
        if device == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError("device: cuda requested but torch.cuda.is_available() is False")
            torch.cuda.set_device(self.local_rank)
            self.device = torch.device("cuda", self.local_rank)
        elif device == "cpu":
            self.device = torch.device("cpu")
        else:
            raise ValueError(f"device: expected 'cpu' or 'cuda', got {device!r}")
        self.backend = backend or ("nccl" if self.device.type == "cuda" else "gloo")
        if self.world_size > 1:
            dist.init_process_group(self.backend, timeout=timedelta(days=7))
        self.data_root = data_root
        self._images: dict = {}

    def volumes(self, n: int, volume: str):
        key = ("adni1", n, volume)
        if key not in self._images:
            x, y = imagedata.synthetic_volumes(n, parse_volume(volume), seed=0)
            self._images[key] = (torch.from_numpy(x), torch.from_numpy(y))
        return self._images[key]

    def images(self, dataset: str):
        if dataset not in self._images:
            root = None
            if self.data_root:
                root = os.path.join(self.data_root, dataset)
            x, y = imagedata.load_images(dataset, root=root, seed=0)
            self._images[dataset] = (torch.from_numpy(x), torch.from_numpy(y))
        return self._images[dataset]

    def hello(self) -> dict:
        import numpy

        gpu = torch.cuda.get_device_name(self.device) if self.device.type == "cuda" else None
        return {"framework": self.framework, "rank": self.rank, "host": platform.node(), "device": str(self.device),
                "gpu": gpu, "backend": self.backend if self.world_size > 1 else None, "threads": torch.get_num_threads(),
                "interop_threads": torch.get_num_interop_threads(), "python": sys.version.split()[0],
                "versions": {"torch": torch.__version__, "numpy": numpy.__version__,
                             "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version() if gpu else None},
                "data": "real files under " + self.data_root if self.data_root else "synthetic (real shapes and sizes)",
                "segments": SEGMENTS}

    def broadcast(self, obj):
        if self.world_size == 1:
            return obj
        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def gather(self, obj):
        if self.world_size == 1:
            return [obj]
        out = [None] * self.world_size if self.rank == 0 else None
        dist.gather_object(obj, out, dst=0)
        return out

    def _trainer(self, cfg: dict) -> _Trainer:
        workers = int(cfg.get("workers", self.world_size))
        if workers != self.world_size:
            raise ValueError(f"workers: the configuration asks for {workers}, this group has {self.world_size}")
        seed = int(cfg.get("seed", 0))
        torch.manual_seed(seed)
        if cfg.get("arch") == "resattnet3d":
            from .resattnet3d import resattnet3d

            vol = cfg["volume"]
            model = resattnet3d(cfg, volume=parse_volume(vol))
            data = self.volumes(int(cfg.get("n_train", 431)), vol)
            return _Trainer(self, model, torch.nn.CrossEntropyLoss(), "labels", cfg["optimizer"], cfg["learning_rate"],
                            data, cfg["batch_size"], cfg.get("mode", "phased"), seed)
        if "model" in cfg:
            model, loss_fn, target = build_ch3_model(cfg["model"])
            dataset, opt, lr = cfg.get("dataset", "mnist"), cfg.get("optimizer", "sgd"), cfg.get("learning_rate", 0.01)
        else:
            model, loss_fn, target = lenet5(cfg), torch.nn.CrossEntropyLoss(), "labels"
            dataset, opt, lr = cfg["dataset"], cfg["optimizer"], cfg["learning_rate"]
        return _Trainer(self, model, loss_fn, target, opt, lr, dataset, cfg["batch_size"], cfg.get("mode", "phased"),
                        seed)

    def barrier(self) -> None:
        if self.world_size > 1:
            dist.barrier()

    def run(self, task: str, cfg: dict) -> dict:
        tr = self._trainer(cfg)
        return run_task(self, tr, task, cfg, {"n_params": n_parameters(tr.model), "n_train": tr.n})

    def close(self) -> None:
        if self.world_size > 1 and dist.is_initialized():
            dist.barrier()  # no rank tears gloo down while another still talks to it (SIGABRT at exit otherwise)
            dist.destroy_process_group()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m perfkit.torch_worker", description=__doc__.split("\n")[0])
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
    try:
        adapter = TorchAdapter(threads=args.threads, device=args.device, data_root=args.data_root)
    except (RuntimeError, ValueError, OSError) as exc:
        setup_failed(exc)
    req = open(args.requests) if args.requests and adapter.rank == 0 else None
    res = open(args.results, "a", buffering=1) if args.results and adapter.rank == 0 else None
    serve(adapter, requests=req, results=res)
    for fh in (req, res, sys.stdout, sys.stderr):
        if fh is not None:
            fh.flush() if fh in (sys.stdout, sys.stderr) else fh.close()
    # Skip interpreter teardown: gloo's C++ threads can abort ("terminate called without an active
    # exception") while static destructors run, turning a clean run into SIGABRT under load.
    os._exit(0)


if __name__ == "__main__":
    main()
