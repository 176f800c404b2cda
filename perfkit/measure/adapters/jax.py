"""The JAX adapter: one data-parallel worker of the measurement harness (XLA:CPU, ``jax.distributed``).

With ``--device cuda`` (an interpreter whose jaxlib has the CUDA plugin, passed with ``--python``) one worker
runs on one GPU; G > 1 on GPUs is refused (it would need NCCL collectives this adapter does not set up).

Run one process per worker under the JAX environment, with the variables
``perfkit collect`` sets (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT``, ``PERFKIT_CONTROL_PORT``)::

    RANK=0 WORLD_SIZE=1 .envs/jax/bin/python -m perfkit.measure.adapters.jax --threads 1 < requests.jsonl

(always as ``-m``: run as a script from this folder, ``import jax`` would find
this file instead of the library). With ``WORLD_SIZE`` > 1 every process calls
``jax.distributed.initialize`` once, at start-up, with rank 0 as coordinator
(``MASTER_ADDR:MASTER_PORT``); cross-process collectives on CPU go through
gloo (``jax_cpu_collectives_implementation``). Each process owns one CPU
device; the G devices form a 1-D mesh with axis ``"d"``. Requests and results
travel over :class:`~perfkit.measure.adapters.common.ControlChannel`.

Threads: ``--threads N`` sets ``PJRT_NPROC=N`` before JAX is first imported:
that is the size of XLA:CPU's intra-op thread pool (the one Eigen matmuls and
convolutions run on; by default one thread per core). With N = 1 every kernel
runs on the thread that executes the program, and ``XLA_FLAGS`` also gets
``--xla_cpu_multi_thread_eigen=false`` (which the current thunk runtime
ignores: ``PJRT_NPROC`` is the knob that takes effect). XLA has no inter-op
pool to set; gloo keeps its own I/O threads. ``hello`` reports what was set.

Models (:mod:`.jax_models`) are written with ``jax.numpy``/``jax.lax`` (no
Flax) with exactly PyTorch's layers and parameter counts; images are NHWC.
Every rank draws the initial weights from the same seed, so the replicas
start identical; dropout draws from a ``jax.random`` key folded with the rank.
Everything below is compiled by ``jax.jit``; every function is compiled for
the batch shape while the trainer is built (on zeros, results discarded), so
no compilation falls inside a timed step. Only the ``epoch`` task meets a
second shape (its last, partial batch); it is compiled just before the epoch
starts, outside the timed region.

What one *phased* iteration times on each worker (``time.perf_counter``;
``jax.block_until_ready`` on the last outputs before every timestamp, since
JAX dispatches asynchronously):

``t_md``  this worker's share of the next global batch of indices (as PyTorch).
``t_io``  gather the images (uint8, NHWC, or flattened for ``mlp``/``ae``) and
          labels from the in-memory training set, convert to float32 in
          [0, 1] and int32 labels. (The NCHW → NHWC transposition of the whole
          training set is done once when a dataset is first used, untimed.)
``t_h2d`` ``jax.device_put`` of images and labels to this worker's device
          (XLA:CPU may alias or copy the host buffer; that call's cost; with
          ``--device cuda`` the copy to the GPU).
``t_f``   a jitted ``jax.vjp`` of the loss: the forward pass, the loss and the
          residuals the backward pass needs (returned as a ``VJP`` pytree).
``t_b``   the jitted backward: applying that VJP to the cotangent 1.0, which
          gives the gradients of every weight.
``t_c``   gradient aggregation, only with G > 1: flatten all gradients into one
          buffer (jitted ``ravel_pytree``), assemble the G local buffers into
          one global array sharded over the mesh
          (``jax.make_array_from_single_device_arrays``), a jitted
          ``shard_map`` that sums them with ``lax.psum`` (one gloo
          all-reduce) and divides by G, take this process's shard and unflatten it (jitted).
          With one worker this segment is a no-op: only its two timestamps.
``t_u``   the jitted optax update and ``optax.apply_updates`` (SGD without
          momentum, or Adam with PyTorch's defaults); weights and optimizer
          state are donated, i.e. updated in place.
``t_iter`` from this iteration's first timestamp to the next one's; the sum of
          the phases falls short of it by the harness's bookkeeping.

*Overlapped* mode is JAX's native data-parallel step: ONE jitted
``shard_map`` over the global mesh (weights and optimizer state replicated,
the batch sharded on ``"d"``) that runs forward, backward, ``lax.pmean`` of
the gradients (gloo all-reduce) and the optax update as a single XLA
program. XLA schedules the collectives inside that program; there is no
boundary between the phases to put a timestamp on, and splitting the program
would no longer be the native step. So its one segment is
``"t_f+t_b+t_c+t_u"``: the whole time is recorded as ``t_f`` and ``t_b``,
``t_c`` and ``t_u`` are NaN. ``t_h2d`` there also assembles the global batch
from the G local ones. The same compiled step runs with G = 1 (a mesh of one
device; the all-reduce is then trivial).
"""
from __future__ import annotations

import math
import os
import sys

if __name__ == "__main__" and not __package__:  # run as a file: `import jax` would find this file, not JAX
    sys.exit("run the JAX adapter as a module: python -m perfkit.measure.adapters.jax")

import numpy as np

from perfkit.measure.adapters.common import ControlAdapter, StepTrainer, adapter_main, run_task
from perfkit.measure.adapters.jax_models import build_ch3_model, lenet5, make_optimizer

__all__ = ["JaxAdapter", "JaxTrainer", "main"]

SEGMENTS = {"phased": ["t_f", "t_b", "t_c", "t_u"], "overlapped": ["t_f+t_b+t_c+t_u"]}

# filled by _import_jax() once the thread knobs are set (JAX must not be imported before)
jax = jnp = optax = None
P = NamedSharding = Mesh = None


def _import_jax(threads: int, device: str = "cpu") -> bool:
    """Set XLA:CPU's thread knobs, then import JAX; ``False`` when JAX was already imported (knobs too late).

    With ``device="cuda"`` JAX runs on its CUDA platform and allocates GPU memory as it needs it (no
    preallocation of most of the card); the CPU thread knobs are set all the same (they size the host pool).
    """
    global jax, jnp, optax, P, NamedSharding, Mesh
    fresh = "jax" not in sys.modules
    if fresh:
        os.environ["PJRT_NPROC"] = str(int(threads))
        flags = os.environ.get("XLA_FLAGS", "")
        if int(threads) == 1 and "xla_cpu_multi_thread_eigen" not in flags:
            os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false").strip()
        if device == "cuda":
            os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax as _jax
    import jax.numpy as _jnp
    import optax as _optax
    from jax.sharding import Mesh as _Mesh, NamedSharding as _NamedSharding, PartitionSpec as _P

    jax, jnp, optax, P, NamedSharding, Mesh = _jax, _jnp, _optax, _P, _NamedSharding, _Mesh
    jax.config.update("jax_platforms", "cuda" if device == "cuda" else "cpu")
    return fresh


class JaxTrainer(StepTrainer):
    """One replica: the model's jitted phases (``phased``) or the one jitted SPMD step (``overlapped``)."""

    def __init__(self, adapter: "JaxAdapter", model, tx, x_all, y_all, batch: int, mode: str, seed: int):
        super().__init__(adapter.rank, adapter.world_size, len(x_all), batch, mode, seed)
        self.model, self.tx = model, tx
        self.dev, self.mesh = adapter.dev, adapter.mesh
        self.x_all, self.y_all = x_all, y_all
        self._rows = NamedSharding(self.mesh, P("d"))
        self._repl = NamedSharding(self.mesh, P())
        # committed to this worker's device, like every later output: one compilation per function and shape
        params = jax.device_put(model.init(self.seed), self.dev)  # the same seed on every rank: identical replicas
        with jax.default_device(self.dev):
            opt_state = jax.jit(tx.init)(params)
            # dropout: a different stream on every rank (phased: this key; overlapped: folded with the mesh index)
            self._drop_base = np.asarray(jax.random.fold_in(jax.random.PRNGKey(self.seed), 0x5EED))
            rank_key = jax.random.fold_in(self._drop_base, self.rank)
        opt_state, self._key = jax.device_put((opt_state, rank_key), self.dev)
        self.n_params = int(sum(a.size for a in jax.tree.leaves(params)))
        self._last = None
        if mode == "phased":
            self._build_phased(params, opt_state)
        else:
            self._build_overlapped(params, opt_state)
        self._prime(self.batch)

    # ------------------------------------------------------------ building
    def _build_phased(self, params, opt_state):
        model, tx, world = self.model, self.tx, self.world

        def fwd(params, key, x, y):
            key, sub = jax.random.split(key)
            loss, vjp = jax.vjp(lambda p: model.loss(p, x, y, sub), params)
            return loss, vjp, key

        def bwd(vjp):
            return vjp(jnp.ones((), jnp.float32))[0]

        def upd(params, opt_state, grads):
            updates, opt_state = tx.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state

        self._fwd, self._bwd = jax.jit(fwd), jax.jit(bwd)
        self._upd = jax.jit(upd, donate_argnums=(0, 1))
        self.params, self.opt_state, self.grads, self.vjp = params, opt_state, None, None
        if world > 1:
            from jax.flatten_util import ravel_pytree

            flat, unravel = ravel_pytree(params)
            self._flat_len = int(flat.size)
            self._pack = jax.jit(lambda g: ravel_pytree(g)[0][None])
            self._unpack = jax.jit(lambda f: unravel(f[0]))
            self._psum = jax.jit(jax.shard_map(lambda v: jax.lax.psum(v, "d") / world, mesh=self.mesh,
                                               in_specs=P("d"), out_specs=P("d")))

    def _global(self, local, sharding=None, lead: int = 1):
        """The global array whose shard on this process is ``local`` (replicated, or rows on ``"d"``)."""
        if sharding is None:
            return jax.make_array_from_single_device_arrays(local.shape, self._repl, [local])
        shape = (local.shape[0] * lead,) + tuple(local.shape[1:])
        return jax.make_array_from_single_device_arrays(shape, sharding, [local])

    def _build_overlapped(self, params, opt_state):
        model, tx, base = self.model, self.tx, self._drop_base

        def local_step(params, opt_state, step, x, y):
            key = jax.random.fold_in(jax.random.fold_in(base, jax.lax.axis_index("d")), step)
            # differentiate a per-device copy: the gradient is this device's own (no implicit psum) ...
            mine = jax.lax.pcast(params, "d", to="varying")
            loss, grads = jax.value_and_grad(model.loss)(mine, x, y, key)
            grads = jax.lax.pmean(grads, "d")  # ... and this is the all-reduce (mean over the G workers)
            updates, opt_state = tx.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state, step + 1, jax.lax.pmean(loss, "d")

        step = jax.shard_map(local_step, mesh=self.mesh, in_specs=(P(), P(), P(), P("d"), P("d")),
                             out_specs=(P(), P(), P(), P()))
        self._step = jax.jit(step, donate_argnums=(0, 1, 2))
        counter = jax.device_put(jnp.zeros((), jnp.int32), self.dev)
        self.state = jax.tree.map(self._global, (params, opt_state, counter))
        self.loss = None

    def _prime(self, b: int) -> None:
        """Compile every jitted function for batches of ``b`` by running it once on zeros (results dropped)."""
        x = np.zeros((b,) + self.model.in_shape, np.float32)
        y = np.zeros((b,), np.int32)
        xd, yd = self.to_device((x, y))
        if self.mode == "phased":
            copy = jax.tree.map(jnp.copy, (self.params, self.opt_state))  # the update donates its inputs
            loss, vjp, _ = self._fwd(self.params, self._key, xd, yd)
            grads = self._bwd(vjp)
            if self.world > 1:
                grads = self._aggregate(grads)
            out = self._upd(copy[0], copy[1], grads)
        else:
            local = jax.tree.map(lambda a: jnp.copy(a.addressable_shards[0].data), self.state)
            out = self._step(*jax.tree.map(self._global, local), xd, yd)
        jax.block_until_ready(out)
        self._last = None

    # ------------------------------------------------------------ hooks
    def sync(self) -> None:
        if self._last is not None:
            jax.block_until_ready(self._last)

    def load(self, idx):
        x = self.x_all[idx].astype(np.float32)
        x *= np.float32(1.0 / 255.0)
        return x, self.y_all[idx].astype(np.int32)

    def to_device(self, host):
        x, y = jax.device_put(host, self.dev)
        if self.mode == "overlapped":
            x, y = self._global(x, self._rows, self.world), self._global(y, self._rows, self.world)
        self._last = (x, y)
        return x, y

    def segments(self, mode: str) -> list:
        if mode == "overlapped":
            return [("t_f+t_b+t_c+t_u", self._fused)]
        return [("t_f", self._forward), ("t_b", self._backward),
                ("t_c", self._allreduce if self.world > 1 else self._no_aggregation), ("t_u", self._update)]

    def _forward(self):
        x, y = self.batch_on_device
        self.loss, self.vjp, self._key = self._fwd(self.params, self._key, x, y)
        self._last = (self.loss, self.vjp)

    def _backward(self):
        self.grads = self._bwd(self.vjp)
        self._last = self.grads

    def _aggregate(self, grads):
        flat = self._pack(grads)
        summed = self._psum(jax.make_array_from_single_device_arrays((self.world, self._flat_len), self._rows,
                                                                     [flat]))
        return self._unpack(summed.addressable_shards[0].data)

    def _allreduce(self):
        self.grads = self._aggregate(self.grads)
        self._last = self.grads

    def _no_aggregation(self):
        pass

    def _update(self):
        self.vjp = None  # its residuals may share buffers with the donated weights
        self.params, self.opt_state = self._upd(self.params, self.opt_state, self.grads)
        self._last = (self.params, self.opt_state)

    def _fused(self):
        x, y = self.batch_on_device
        params, opt_state, counter, self.loss = self._step(*self.state, x, y)
        self.state = (params, opt_state, counter)
        self._last = self.state

    # ------------------------------------------------------------ check task and epoch
    @staticmethod
    def _local(a):
        return np.asarray(a.addressable_shards[0].data, dtype=np.float64)

    def grad_sum(self) -> float:
        return float(sum(self._local(g).sum() for g in jax.tree.leaves(self.grads)))

    def weight_sum(self) -> float:
        params = self.params if self.mode == "phased" else self.state[0]
        return float(sum(np.abs(self._local(w)).sum() for w in jax.tree.leaves(params)))

    def epoch(self, barrier=None):
        per_rank = math.ceil(self.n / self.world)
        last = per_rank - (math.ceil(per_rank / self.batch) - 1) * self.batch
        if last != self.batch:  # the partial last batch is a new shape: compile it before the clock starts
            self._prime(last)
        return super().epoch(barrier)


class JaxAdapter(ControlAdapter):
    framework = "jax"

    def __init__(self, threads: int = 1, device: str = "cpu", data_root: str | None = None):
        super().__init__(threads=threads, device=device, data_root=data_root)
        if device == "cuda" and self.world_size > 1:
            raise ValueError(f"device: cuda runs one JAX worker (G = 1) on one GPU; got WORLD_SIZE={self.world_size} "
                             "(several GPU processes would need NCCL collectives this adapter does not set up)")
        self.knobs_applied = _import_jax(self.threads, device)
        if device == "cuda":
            try:
                gpus = jax.devices("cuda")
            except Exception as exc:  # JAX raises RuntimeError, or AssertionError when no platform initialised
                raise RuntimeError(f"device: cuda requested but this JAX {jax.__version__} sees no CUDA device "
                                   f"(the .envs/jax environment has the CPU jaxlib only; pass --python with an "
                                   f"interpreter whose jaxlib has the CUDA plugin): {type(exc).__name__} {exc}") from None
            if not gpus:
                raise RuntimeError("device: cuda requested but JAX lists no CUDA device")
        if self.world_size > 1:
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
            addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
            if "MASTER_PORT" not in os.environ:
                raise RuntimeError("MASTER_PORT is not set: start the workers with `perfkit collect`")
            jax.distributed.initialize(coordinator_address=f"{addr}:{os.environ['MASTER_PORT']}",
                                       num_processes=self.world_size, process_id=self.rank)
        self.dev = jax.local_devices()[0]
        self.mesh = Mesh(np.array(jax.devices()), ("d",))
        self._data: dict = {}

    def hello(self) -> dict:
        import jaxlib

        out = self.base_hello()
        out.update({
            "versions": {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "optax": optax.__version__,
                         "numpy": np.__version__},
            "segments": SEGMENTS,
            "backend": "jax.distributed + gloo CPU collectives" if self.world_size > 1 else None,
            "gpu": getattr(self.dev, "device_kind", None) if self.dev.platform != "cpu" else None,
            "collective": ("phased: shard_map lax.psum of the flattened gradients / G; overlapped: lax.pmean "
                           "inside one jitted shard_map train step") if self.world_size > 1 else None,
            "threads": int(os.environ.get("PJRT_NPROC", 0)) or None,
            "thread_knobs": {"PJRT_NPROC": os.environ.get("PJRT_NPROC"), "XLA_FLAGS": os.environ.get("XLA_FLAGS"),
                             "set_before_import": self.knobs_applied},
            "interop_threads": None,
            "jax_device": str(self.dev), "process_index": jax.process_index(), "mesh_devices": len(jax.devices()),
        })
        return out

    def _dataset(self, dataset: str, layout: str):
        """Training images uint8 as NHWC or flattened (N, C*H*W), and uint8 labels (cached)."""
        if (dataset, layout) not in self._data:
            x, y = self.images(dataset)
            if layout == "nhwc":
                x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
            else:
                x = x.reshape(len(x), -1)
            self._data[(dataset, layout)] = (x, y)
        return self._data[(dataset, layout)]

    def run(self, task: str, cfg: dict) -> dict:
        workers = int(cfg.get("workers", self.world_size))
        if workers != self.world_size:
            raise ValueError(f"workers: the configuration asks for {workers}, this group has {self.world_size}")
        if cfg.get("arch") not in (None, "lenet5"):
            raise ValueError(f"arch: the jax adapter builds the Chapter 3 models and LeNet-5, got {cfg['arch']!r}")
        if "model" in cfg:
            model = build_ch3_model(cfg["model"])
            dataset, opt, lr = cfg.get("dataset", "mnist"), cfg.get("optimizer", "sgd"), cfg.get("learning_rate", 0.01)
        else:
            model = lenet5(cfg)
            dataset, opt, lr = cfg["dataset"], cfg["optimizer"], cfg["learning_rate"]
        tx = make_optimizer(opt, lr)
        x, y = self._dataset(dataset, model.input)
        if tuple(x.shape[1:]) != model.in_shape:
            raise ValueError(f"dataset: {dataset!r} images are {x.shape[1:]}, the model expects {model.in_shape}")
        tr = JaxTrainer(self, model, tx, x, y, cfg["batch_size"], cfg.get("mode", "phased"), int(cfg.get("seed", 0)))
        info = {"n_params": tr.n_params, "n_train": tr.n}
        return run_task(self, tr, task, cfg, info)

    def close(self) -> None:
        if self.world_size > 1 and jax is not None:
            try:
                self.channel.barrier()  # no rank leaves the coordination service while another still uses it
                jax.distributed.shutdown()
            except Exception as exc:  # exiting anyway
                print(f"jax.distributed.shutdown: {exc}", file=sys.stderr)
        super().close()


def main(argv=None) -> None:
    adapter_main(JaxAdapter, argv, doc=__doc__)


if __name__ == "__main__":
    main()
