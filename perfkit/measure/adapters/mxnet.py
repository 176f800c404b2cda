"""The MXNet adapter: one data-parallel Gluon worker of the measurement harness (MXNet 1.9, CPU).

Runs in the legacy environment (``.envs/legacy``: MXNet 1.9.1, NumPy 1.23).
With G = 1 the worker trains alone; with G > 1 the workers share MXNet's
``dist_sync`` kvstore (ps-lite parameter server over loopback TCP): a
scheduler and a server process, started by the collector before the workers
as ``python -m perfkit.measure.adapters.mxnet --role scheduler|server``
(``PERFKIT_ROLE`` says the same). Every process sets the ps-lite variables
from the collector's: ``DMLC_PS_ROOT_URI`` = ``MASTER_ADDR``,
``DMLC_PS_ROOT_PORT`` = ``MASTER_PORT``, ``DMLC_NUM_WORKER`` = ``WORLD_SIZE``,
``DMLC_NUM_SERVER`` = 1, ``DMLC_NODE_HOST`` = 127.0.0.1.
Each worker joins the kvstore once, when it starts; one worker group then
trains many models (one per request). ps-lite assigns the kvstore's ranks
itself (by the nodes' port numbers), not by ``RANK``: data sharding and
results use ``RANK``; only sums and initial weights travel through the kvstore.

Model: Gluon blocks (:mod:`.mxnet_models`), the model and its mean loss
hybridized together into one graph; parameters in float32, NCHW.

What one *phased* iteration times on each worker (``time.perf_counter``, with
``mx.nd.waitall()`` before every timestamp: MXNet's engine is asynchronous,
so without it a phase would only time the queueing of its operators):

``t_md``  this worker's share of the next global batch of indices (as PyTorch's).
``t_io``  gather the uint8 images and labels from the in-memory training set
          and convert them to float32 in [0, 1] (NumPy).
``t_h2d`` ``mx.nd.array(batch, ctx)``: copy images and labels into MXNet
          NDArrays (on CPU a real, synchronous memcpy into MXNet's memory).
``t_f``   forward pass and mean loss under ``autograd.record()``.
``t_b``   ``loss.backward()``.
``t_c``   ``trainer.allreduce_grads()``: for every parameter, push its
          gradient to the kvstore server, which sums the G pushes (natively,
          in C++: no updater on the server, see *The server*), pull the sum into
          the gradient; then divide each gradient by G on the worker. With one
          worker there is no kvstore: ``t_c`` is only its two timestamps.
``t_u``   ``trainer.update(1)``: MXNet's optimizer on the worker (plain SGD or
          Adam on the averaged gradient; the loss is already a batch mean).
``t_iter`` from this iteration's first timestamp to the next iteration's first.

*Overlapped* mode is MXNet's own distributed step, ``loss.backward()``
immediately followed by ``trainer.step(1)`` with ``update_on_kvstore=True``
(MXNet's default for a distributed kvstore): the engine pushes each gradient
as soon as backward has produced it (communication overlaps the rest of
backward), the server sums the G gradients and runs the optimizer itself
(``rescale_grad`` = 1/G, so the step uses the mean gradient; the optimizer
is shipped to the server pickled and run there by MXNet's Python ``Updater``,
as the stock server does) and every worker pulls the new weights. Segments:
``t_f``, then ``t_b+t_c+t_u`` as one segment (its time is recorded as
``t_b``; ``t_c`` and ``t_u`` are NaN): backward cannot be separated from the
push without a ``waitall`` that removes the overlap (measured here: that
version took ~8 % longer per iteration for LeNet-5 with G = 2), and
aggregation and update happen together on the server. With one worker the
same segment is backward + a local ``trainer.step(1)``.

The server: MXNet 1.9's server copies the sum of the pushes into its store
while it has no updater, and runs a Python updater on *every* key once an
optimizer was sent to it (it cannot be removed). The optimizer of an
overlapped run is registered with that run's keys, and the updater the server
installs then runs it on those keys and copies the sum on any other; but a
phased run after it would pay a Python callback per parameter in ``t_c``
(measured: ~+60 % for LeNet-5 on this 2-core machine). So, in a worker group
with G > 1, a phased run after an overlapped one is refused (ValueError naming
``mode``): collect phased samples first (``perfkit collect``'s order) or in
their own collection. Every run takes fresh kvstore keys (ps-lite keeps a
key's size for ever), so one group can serve about 2·10⁹ parameter arrays;
the server and the workers keep a buffer per key for the group's lifetime
(measured: ~2× and ~1.5× the model's parameter bytes per run, e.g. ~1 GB on
the server for 1500 Table 4.1 LeNet-5s).

Replicas start identical: every rank seeds ``mx.random.seed(seed)`` before
the Xavier initialisation, and with G > 1 the trainer's kvstore
initialisation (done when the trainer is built) pushes kv-rank 0's weights to
the server and every worker pulls them. Dropout masks differ between ranks
(seeded with the rank afterwards).

Threads: ``OMP_NUM_THREADS`` = ``--threads`` (intra-op: OpenMP and oneDNN),
``MXNET_CPU_WORKER_NTHREADS`` = 1 (how many operators the engine runs at the
same time: the inter-op knob), ``MXNET_CPU_PRIORITY_NTHREADS`` = 1,
``MXNET_ENGINE_TYPE`` = ``ThreadedEnginePerDevice`` (MXNet's default; an
inherited value is kept and reported by ``hello``). The scheduler and the
server use the same settings.

By hand (two workers; one shell; every process dies with that shell)::

    export PYTHONPATH=$PWD WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 PERFKIT_CONTROL_PORT=29501
    PY=.envs/legacy/bin/python
    $PY -m perfkit.measure.adapters.mxnet --role scheduler &
    $PY -m perfkit.measure.adapters.mxnet --role server &
    RANK=1 $PY -m perfkit.measure.adapters.mxnet &
    RANK=0 $PY -m perfkit.measure.adapters.mxnet --requests req.jsonl --results out.jsonl

(with ``WORLD_SIZE=1`` only the last line, no scheduler or server).
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys

import numpy as np

from perfkit.measure.adapters.common import (
    ControlAdapter,
    StepTrainer,
    adapter_main,
    die_with_parent,
    env_rank,
    run_task,
)
from perfkit.measure.protocol import setup_failed

__all__ = ["MXNetAdapter", "main"]

#: roles of ``python -m perfkit.measure.adapters.mxnet --role ROLE``
ROLES = ("worker", "server", "scheduler")
#: kvstore keys are C ints
MAX_KEY = 2**31 - 1
#: tag of the server command that registers one run's optimizer for its keys
_REGISTER = "perfkit-mxnet-optimizer"

PHASED = ["t_f", "t_b", "t_c", "t_u"]
OVERLAPPED = ["t_f", "t_b+t_c+t_u"]


def _configure(threads: int, role: str | None, world: int) -> None:
    """Environment read by MXNet when it is imported (engine, OpenMP) and by ps-lite (``DMLC_*``)."""
    threads = str(max(1, int(threads)))
    os.environ["OMP_NUM_THREADS"] = threads  # intra-op threads (OpenMP, oneDNN)
    os.environ["MKL_NUM_THREADS"] = threads
    os.environ["MXNET_CPU_WORKER_NTHREADS"] = "1"  # operators the engine runs at the same time (inter-op)
    os.environ["MXNET_CPU_PRIORITY_NTHREADS"] = "1"
    os.environ.setdefault("MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice")  # MXNet's default, reported in hello
    for k in [k for k in os.environ if k.startswith("DMLC_")]:  # nothing inherited: an old DMLC_ROLE=server
        del os.environ[k]                                       # would turn `import mxnet` into a server
    if role is None:
        return
    addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
    if "MASTER_PORT" not in os.environ:
        raise RuntimeError("MASTER_PORT is not set: start the workers with `perfkit collect` (it is the port of "
                           "the kvstore scheduler)")
    os.environ.update(DMLC_ROLE=role, DMLC_PS_ROOT_URI=addr, DMLC_PS_ROOT_PORT=os.environ["MASTER_PORT"],
                      DMLC_NUM_SERVER="1", DMLC_NUM_WORKER=str(int(world)))
    if addr.startswith("127.") or addr == "localhost":
        os.environ["DMLC_NODE_HOST"] = "127.0.0.1"  # every node on loopback


def _keyed_kvstore(mx, base, keys: list[int]):
    """A view of kvstore ``base`` that maps the trainer's parameter index i to the kvstore key ``keys[i]``.

    ``set_optimizer`` ships the optimizer to the server together with its
    keys (see :func:`_run_server`); everything else is MXNet's own KVStore.
    """
    from mxnet.base import py_str

    class KeyedKVStore(mx.kv.KVStore):
        def __init__(self):  # shares base's handle; base keeps it alive and frees it
            self.handle, self._base, self._keys = base.handle, base, list(keys)
            self._updater = self._updater_func = self._str_updater_func = None
            self._is_p3 = False

        def __del__(self):
            pass

        def _k(self, key):
            if isinstance(key, (list, tuple)):
                return [self._k(k) for k in key]
            return self._keys[key]

        def init(self, key, value):
            return super().init(self._k(key), value)

        def broadcast(self, key, value, out, priority=0):
            return super().broadcast(self._k(key), value, out, priority)

        def push(self, key, value, priority=0):
            return super().push(self._k(key), value, priority)

        def pull(self, key, out=None, priority=0, ignore_sparse=True):
            return super().pull(self._k(key), out, priority, ignore_sparse)

        def pushpull(self, key, value, out=None, priority=0):
            return super().pushpull(self._k(key), value, out, priority)

        def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
            return super().row_sparse_pull(self._k(key), out, priority, row_ids)

        def set_optimizer(self, optimizer):
            body = py_str(pickle.dumps((_REGISTER, self._keys, optimizer), 0))
            self._send_command_to_servers(0, body)  # kController: runs the server's controller

    return KeyedKVStore()


class _Trainer(StepTrainer):
    """One Gluon replica (model and mean loss hybridized together) with its ``gluon.Trainer``."""

    def __init__(self, adapter: MXNetAdapter, cfg: dict):
        mx = adapter.mx
        from mxnet import autograd, gluon

        from perfkit.measure.adapters import mxnet_models as mm

        self.mx, self.autograd = mx, autograd
        workers = int(cfg.get("workers", adapter.world_size))
        if workers != adapter.world_size:
            raise ValueError(f"workers: the configuration asks for {workers}, this group has {adapter.world_size}")
        if cfg.get("arch") not in (None, "lenet5"):
            raise ValueError(f"arch: the MXNet adapter builds the Chapter 3 models and LeNet-5, not {cfg['arch']!r}")
        if "model" in cfg:
            net, target = mm.build_ch3_model(cfg["model"])
            dataset, opt, lr = cfg.get("dataset", "mnist"), cfg.get("optimizer", "sgd"), cfg.get("learning_rate", 0.01)
        else:
            net, target = mm.lenet5(cfg), "labels"
            dataset, opt, lr = cfg["dataset"], cfg["optimizer"], cfg["learning_rate"]
        optimizer = mm.make_optimizer(opt, lr)
        self.x_all, self.y_all = adapter.images(dataset)
        seed = int(cfg.get("seed", 0))
        super().__init__(adapter.rank, adapter.world_size, len(self.x_all), cfg["batch_size"],
                         cfg.get("mode", "phased"), seed)
        self.ctx, self.target = adapter.ctx, target
        mx.random.seed(seed)  # the same initial weights on every rank (with G > 1 the kvstore also broadcasts them)
        net.initialize(mx.init.Xavier(), ctx=self.ctx)
        self.n_params = mm.n_parameters(net)
        self.net = mm.with_loss(net, target)
        self.net.hybridize()
        params = net.collect_params()
        self.grads = [p.list_grad()[0] for p in params.values() if p.grad_req != "null"]
        kv = None
        if self.world > 1:
            kv = _keyed_kvstore(mx, adapter.kv, adapter.new_keys(len(params.keys()), self.mode))
        # the loss is a batch mean; overlapped: the server's optimizer scales the SUM of the G pushed gradients by
        # rescale_grad = 1/G; phased: the workers divide the pulled sum by G themselves
        optimizer.rescale_grad = 1.0 / self.world if self.mode == "overlapped" else 1.0
        self.trainer = gluon.Trainer(params, optimizer, kvstore=kv,
                                     update_on_kvstore=None if kv is None else self.mode == "overlapped")
        if kv is not None:
            # what the first step would do, done now: ship the optimizer to the server (overlapped), then kv-rank
            # 0 pushes its initial weights and every worker pulls them: identical replicas before the first step
            self.trainer._init_kvstore()
            self.trainer._init_params()
            mx.nd.waitall()
        mx.random.seed(seed * 1009 + self.rank + 1)  # dropout masks differ between ranks
        self.loss = None

    # ------------------------------------------------------------ hooks
    def sync(self) -> None:
        self.mx.nd.waitall()

    def load(self, idx):
        x = self.x_all[idx].astype(np.float32)
        x *= np.float32(1.0 / 255.0)
        return x, self.y_all[idx].astype(np.float32)

    def to_device(self, host):
        x, y = host
        return self.mx.nd.array(x, ctx=self.ctx, dtype=np.float32), self.mx.nd.array(y, ctx=self.ctx, dtype=np.float32)

    def _forward(self):
        x, y = self.batch_on_device
        with self.autograd.record():
            self.loss = self.net(x, y) if self.target == "labels" else self.net(x)

    def _backward(self):
        self.loss.backward()

    def _allreduce(self):
        self.trainer.allreduce_grads()  # push every gradient, the server sums them, pull the sum
        for g in self.grads:
            g /= self.world

    def _update(self):
        self.trainer.update(1)  # the gradients are already means

    def _backward_step(self):
        self.loss.backward()
        self.trainer.step(1)  # G > 1: push, the server sums, scales by 1/G and updates; pull the weights

    def segments(self, mode: str) -> list:
        if mode == "phased":
            allreduce = self._allreduce if self.world > 1 else _noop
            return [("t_f", self._forward), ("t_b", self._backward), ("t_c", allreduce), ("t_u", self._update)]
        return [("t_f", self._forward), ("t_b+t_c+t_u", self._backward_step)]

    def grad_sum(self) -> float:
        return float(sum(g.asnumpy().astype(np.float64).sum() for g in self.grads))

    def weight_sum(self) -> float:
        params = self.net.collect_params().values()
        return float(sum(np.abs(p.data().asnumpy().astype(np.float64)).sum() for p in params))


def _noop():
    pass


class MXNetAdapter(ControlAdapter):
    """One Gluon worker; with G > 1 it joins the ``dist_sync`` kvstore (once per process)."""

    framework = "mxnet"

    def __init__(self, threads: int = 1, device: str = "cpu", data_root: str | None = None):
        super().__init__(threads=threads, device=device, data_root=data_root)
        _configure(self.threads, "worker" if self.world_size > 1 else None, self.world_size)
        import mxnet as mx

        self.mx = mx
        if device == "cuda":
            if mx.context.num_gpus() < 1:
                raise RuntimeError(f"device: cuda requested but this MXNet {mx.__version__} build sees no GPU "
                                   f"(CUDA feature: {mx.runtime.Features().is_enabled('CUDA')})")
            self.ctx = mx.gpu(self.local_rank)
        else:
            self.ctx = mx.cpu()
        self.kv = None
        self._next_key = 0  # kvstore keys handed out so far (the same count on every rank)
        self._server_updater = False  # whether an overlapped run has given the server an optimizer
        if self.world_size > 1:
            self.kv = mx.kv.create("dist_sync")  # blocks until the scheduler has seen every worker and server
            if self.kv.num_workers != self.world_size:
                raise RuntimeError(f"kvstore: {self.kv.num_workers} workers joined, WORLD_SIZE is {self.world_size}")

    def new_keys(self, n: int, mode: str) -> list[int]:
        """``n`` fresh kvstore keys for one run (every rank builds the same models in the same order)."""
        if mode == "phased" and self._server_updater:
            raise ValueError("mode: a phased run after an overlapped one in the same MXNet worker group would time "
                             "its gradient sums through the kvstore server's Python updater, which MXNet 1.9 cannot "
                             "remove; collect the phased samples first (perfkit collect's default order) or in "
                             "their own collection")
        first = self._next_key
        if first + n > MAX_KEY:
            raise RuntimeError("kvstore: this MXNet worker group has used all its keys (ps-lite cannot reuse a key "
                               "for another model); start a new collection to go on")
        self._next_key += n
        self._server_updater = self._server_updater or mode == "overlapped"
        return list(range(first, first + n))

    def hello(self) -> dict:
        mx = self.mx
        features = mx.runtime.Features()
        dist = self.kv is not None
        out = self.base_hello()
        out.update(
            device=str(self.ctx),
            versions={"mxnet": mx.__version__, "numpy": np.__version__},
            segments={"phased": list(PHASED), "overlapped": list(OVERLAPPED)},
            backend="kvstore dist_sync (ps-lite over loopback TCP: 1 scheduler, 1 server)" if dist else None,
            collective=("phased: push + pull of every gradient, summed by the server (no updater), then /G on the "
                        "worker; overlapped: gluon Trainer.step with update_on_kvstore (the server sums, "
                        "scales by 1/G and runs the optimizer; workers pull the weights)") if dist else None,
            kv_rank=self.kv.rank if dist else None,
            engine=os.environ.get("MXNET_ENGINE_TYPE"),
            omp_threads=int(os.environ["OMP_NUM_THREADS"]),
            engine_cpu_worker_threads=int(os.environ["MXNET_CPU_WORKER_NTHREADS"]),
            features=sorted(f.name for f in features.values() if f.enabled),
        )
        return out

    def run(self, task: str, cfg: dict) -> dict:
        tr = _Trainer(self, cfg)
        info = {"n_params": tr.n_params, "n_train": tr.n}
        return run_task(self, tr, task, cfg, info)

    def close(self) -> None:
        # the kvstore is not finalized: ps-lite's finalize is a barrier with the scheduler and the server, which
        # the collector ends itself once the workers are gone (adapter_main leaves with os._exit)
        super().close()


# ---------------------------------------------------------------- scheduler and server
def _run_server(mx) -> None:
    """MXNet's kvstore server loop (``KVStoreServer.run``) with a controller that knows each run's keys.

    Until an optimizer arrives the server has no updater: MXNet's native path
    copies the sum of the pushes into the store (phased runs). The first
    optimizer (an overlapped run's, sent with its keys) installs an updater
    that runs that optimizer (MXNet's ``Updater``, as the stock server does)
    on the keys of the latest registered run and copies the sum on any other.
    """
    from mxnet.kvstore.kvstore_server import KVStoreServer

    kv = mx.kv.create("dist")
    current: dict = {}

    def update(key, merged, stored):
        if key in current["keys"]:
            current["updater"](key, merged, stored)
        else:
            merged.copyto(stored)

    def controller(cmd_id, cmd_body, _):
        obj = pickle.loads(cmd_body)
        if not (isinstance(obj, tuple) and len(obj) == 3 and obj[0] == _REGISTER):
            raise ValueError(f"kvstore server: unexpected command {cmd_id}")
        _, keys, optimizer = obj
        if not current:
            kv._set_updater(update)  # (MXNet 1.9 segfaults if this is done before the server loop runs)
        # one run at a time: the previous run's optimizer and its state are dropped
        current.update(keys=frozenset(keys), updater=mx.optimizer.get_updater(optimizer))

    class Server(KVStoreServer):
        def _controller(self):
            return controller

    Server(kv).run()


def _service(role: str) -> None:
    """The kvstore scheduler or server of a G-worker group (started by the collector before the workers)."""
    die_with_parent()
    _, world, _ = env_rank()
    threads = int(os.environ.get("OMP_NUM_THREADS", "1") or 1)
    try:
        if role == "scheduler":
            _configure(threads, "scheduler", world)
            import mxnet  # noqa: F401  (with DMLC_ROLE=scheduler the import runs ps-lite's scheduler to the end)
        else:
            _configure(threads, "worker", world)  # import MXNet without starting its stock server loop ...
            import mxnet as mx

            os.environ["DMLC_ROLE"] = "server"  # ... ps-lite reads the role again when the kvstore starts
            _run_server(mx)
    except SystemExit:
        pass
    except (RuntimeError, ValueError, OSError, ImportError) as exc:
        setup_failed(exc)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    role = os.environ.get("PERFKIT_ROLE") or None
    if any(a == "--role" or a.startswith("--role=") for a in argv):
        ap = argparse.ArgumentParser(add_help=False)
        ap.add_argument("--role", choices=ROLES)
        ns, argv = ap.parse_known_args(argv)
        role = ns.role
    if role in ("scheduler", "server"):
        _service(role)
    elif role not in (None, "worker"):
        setup_failed(ValueError(f"--role: expected one of {ROLES}, got {role!r}"))
    adapter_main(MXNetAdapter, argv, doc=__doc__)


if __name__ == "__main__":
    main()
