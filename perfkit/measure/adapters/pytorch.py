"""The PyTorch adapter: one data-parallel worker of the measurement harness.

Run one process per worker, with the environment ``torchrun`` sets::

    torchrun --nproc_per_node 2 -m perfkit.measure.adapters.pytorch --requests req.jsonl --results out.jsonl

``perfkit collect`` starts the workers itself with the same variables (it is a
minimal torchrun) and talks to rank 0 through :mod:`perfkit.measure.protocol`.
Workers use ``torch.distributed`` with gloo on CPU and NCCL on CUDA; each CPU
worker is pinned to ``--threads`` intra-op threads (default 1: one worker ≈
one device).

The loop that takes the timestamps is :class:`~perfkit.measure.adapters.common.StepTrainer`'s,
shared by every framework; this module provides its hooks. What one *phased* iteration times on each worker (``time.perf_counter``; on
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

import os
import platform
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from .. import imagedata
from ...schema import parse_volume
from ..protocol import Adapter
from .common import StepTrainer, adapter_main, run_task
from .torch_models import build_ch3_model, lenet5, make_optimizer, n_parameters

__all__ = ["TorchAdapter", "main"]

#: what the timed intervals after the copy cover in each mode (perfkit.measure.adapters.common: "segments");
#: with one worker there is no DDP, and both modes run the phased step
SEGMENTS = {"phased": ["t_f", "t_b", "t_c", "t_u"], "overlapped": ["t_f", "t_b+t_c", "t_u"]}


class _Trainer(StepTrainer):
    """One model replica with its optimizer and data on one worker (the hooks of :class:`StepTrainer`)."""

    def __init__(self, adapter: "TorchAdapter", model, loss_fn, target, optimizer_name, lr, dataset, batch, mode,
                 seed):
        self.x_all, self.y_all = adapter.images(dataset) if isinstance(dataset, str) else dataset
        super().__init__(adapter.rank, adapter.world_size, len(self.x_all), batch, mode, seed)
        self.dev, self.target = adapter.device, target
        model = model.to(self.dev)
        if self.world > 1:
            for p in model.parameters():  # identical replicas (they are seeded alike; this makes it certain)
                dist.broadcast(p.data, src=0)
        self.model = model
        self.ddp = mode == "overlapped" and self.world > 1
        self.net = DistributedDataParallel(model) if self.ddp else model
        self.loss_fn = loss_fn
        self.opt = make_optimizer(optimizer_name, model.parameters(), float(lr))
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.loss = None
        torch.manual_seed(int(seed) * 1009 + self.rank + 1)  # dropout masks differ between ranks

    def sync(self):
        if self.dev.type == "cuda":
            torch.cuda.synchronize(self.dev)

    def load(self, idx):
        idx = torch.from_numpy(idx)
        return self.x_all.index_select(0, idx).float().div_(255.0), self.y_all.index_select(0, idx).long()

    def to_device(self, host):
        return host[0].to(self.dev), host[1].to(self.dev)

    def _forward(self):
        x, y = self.batch_on_device
        out = self.net(x)
        self.loss = self.loss_fn(out, x.flatten(1) if self.target == "input" else y)

    def _backward(self):
        self.loss.backward()
        self.loss = None

    def _allreduce(self):
        if self.world == 1:
            return
        grads = [p.grad for p in self.params]
        flat = torch._utils._flatten_dense_tensors(grads)
        dist.all_reduce(flat)
        flat.div_(self.world)
        for g, v in zip(grads, torch._utils._unflatten_dense_tensors(flat, grads)):
            g.copy_(v)

    def _update(self):
        self.opt.step()
        self.opt.zero_grad(set_to_none=False)

    def segments(self, mode):
        if self.ddp:  # DDP's bucketed all-reduce runs inside backward
            return [("t_f", self._forward), ("t_b+t_c", self._backward), ("t_u", self._update)]
        return [("t_f", self._forward), ("t_b", self._backward), ("t_c", self._allreduce), ("t_u", self._update)]

    def grad_sum(self) -> float:
        return float(sum(p.grad.double().sum() for p in self.params))

    def weight_sum(self) -> float:
        return float(sum(p.detach().double().abs().sum() for p in self.model.parameters()))


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
                "segments": SEGMENTS if self.world_size > 1 else {m: SEGMENTS["phased"] for m in SEGMENTS}}

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
    adapter_main(TorchAdapter, argv, doc=__doc__)


if __name__ == "__main__":
    main()
