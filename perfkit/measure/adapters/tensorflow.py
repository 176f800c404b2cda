"""The TensorFlow adapter: one data-parallel worker of the measurement harness (TensorFlow 2, Keras 3, CPU).

``perfkit collect --framework tensorflow`` starts G of these, each under
``.envs/tensorflow/bin/python`` with ``RANK``, ``WORLD_SIZE`` and
``PERFKIT_PORTS`` set (see :mod:`perfkit.measure.workers`). By hand, one
worker reading requests on stdin::

    PYTHONPATH=. .envs/tensorflow/bin/python -m perfkit.measure.adapters.tensorflow --threads 1
    {"op": "hello"}
    {"op": "run", "id": "x", "task": "phases", "config": {"model": "mlp", "batch_size": 32, "iterations": 5}}

(for two workers by hand, start two such processes with ``RANK=0``/``1``,
``WORLD_SIZE=2``, ``MASTER_ADDR=127.0.0.1``, ``PERFKIT_CONTROL_PORT`` and
``PERFKIT_PORTS`` set alike; only rank 0 reads requests.)

Distributed runtime. With G > 1 workers every process creates, once, a
``tf.distribute.MultiWorkerMirroredStrategy`` from a ``TF_CONFIG`` naming G
workers on 127.0.0.1 (worker i listens on the i-th port of ``PERFKIT_PORTS``;
task index = ``RANK``), with ring collectives over gRPC
(``CommunicationImplementation.RING``, what ``AUTO`` picks on CPU). TensorFlow
cannot create its collectives twice in one process, so one strategy serves
every request of the worker group. With one worker no strategy is created.
Requests and results travel over :class:`.common.ControlChannel`, never over
TensorFlow.

Threads: ``tf.config.threading`` pins every worker to ``--threads`` intra-op
threads and 1 inter-op thread before any op runs (one worker ≈ one device,
like PyTorch's ``torch.set_num_threads``); gRPC's own threads for the
collectives are TensorFlow's and not counted. ``hello`` reports what is in
effect. ``TF_CPP_MIN_LOG_LEVEL=2`` keeps TensorFlow's C++ logging quiet.

Replicas start from identical weights: every rank seeds Keras alike
(``keras.utils.set_random_seed(seed)``) before building; in phased mode with
G > 1 rank 0's weights are then broadcast with a SUM all-reduce (every other
rank contributing zeros); in overlapped mode the strategy's variable creation
broadcasts them itself. The Dropout masks are drawn from the same seed on
every rank (they see different data, so their gradients still differ).

Data: images are NCHW uint8 in host memory (:meth:`.common.ControlAdapter.images`);
Keras on CPU wants channels-last, so ``t_io`` gathers the batch, converts it
to float32 in [0, 1] *and transposes it to NHWC* (NumPy). The models are the
PyTorch ones layer for layer (:mod:`.tf_models`), same parameter counts.

What one *phased* iteration times on each worker (``time.perf_counter``;
eager TensorFlow on CPU runs synchronously: every op and every ``tf.function``
call returns when its kernels have run, so the results are materialised at
each timestamp):

``t_md``  this worker's share of the next global batch of indices (:class:`.common.StepTrainer`).
``t_io``  gather the images and labels, to float32 in [0, 1], NCHW → NHWC (NumPy).
``t_h2d`` ``tf.convert_to_tensor`` of images and labels: host NumPy → TensorFlow
          CPU tensors (a copy into TensorFlow's allocator; no device transfer on CPU).
``t_f``   forward pass and loss, one ``tf.function`` called under an eager
          ``tf.GradientTape`` (Dropout in training mode).
``t_b``   ``tape.gradient(loss, trainable_variables)``: the backward function
          TensorFlow derived for that ``tf.function``.
``t_c``   gradient aggregation: a ``tf.function`` that, inside ``strategy.run``,
          flattens the gradients into one buffer (concat), all-reduces it with
          ``ReplicaContext.all_reduce(ReduceOp.MEAN)`` (a ring collective: sum,
          then divide by G) and splits it back into the gradient shapes. With
          one worker no work is done (only the two timestamps).
``t_u``   ``optimizer.apply_gradients`` of the (averaged) gradients, in a ``tf.function``.
``t_iter`` from this iteration's first timestamp to the next one's, so it
          also holds the harness's bookkeeping (the phases fall short of it by that).

*Overlapped* mode is TensorFlow's native distributed step, as the custom
training-loop guide writes it: model and optimizer created under
``strategy.scope()`` (variables mirrored, initial values broadcast), and one
``tf.function`` that runs ``strategy.run`` of: forward and loss (scaled by
1/G), ``GradientTape.gradient``, ``optimizer.apply_gradients``, which
all-reduces (SUM) the gradients across the workers itself before updating
(Keras' ``TFOptimizer._all_reduce_sum_gradients``). Forward, backward,
all-reduce and update are one graph that TensorFlow schedules as it likes, so
it is ONE segment, ``t_f+t_b+t_c+t_u``: its time is recorded as ``t_f`` and
``t_b``, ``t_c``, ``t_u`` are NaN (never a made-up split). With one worker the
same single ``tf.function`` step runs without a strategy (no communication).
"""
from __future__ import annotations

import json
import os

import numpy as np

from .common import ControlAdapter, StepTrainer, adapter_main, run_task

__all__ = ["SEGMENTS", "TFTrainer", "TensorFlowAdapter", "main"]

#: segment names per mode (what ``hello`` reports)
SEGMENTS = {"phased": ["t_f", "t_b", "t_c", "t_u"], "overlapped": ["t_f+t_b+t_c+t_u"]}

tf = None  # TensorFlow, imported by the adapter in the worker (never at module import: see the doctests)


def _import_tensorflow():
    global tf
    if tf is None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        os.environ.setdefault("KERAS_BACKEND", "tensorflow")
        import tensorflow

        tf = tensorflow
        tf.get_logger().setLevel("ERROR")  # Python-side logging (the strategy's set-up chatter)
    return tf


def _ports(world: int) -> list[int]:
    raw = os.environ.get("PERFKIT_PORTS", "")
    ports = [int(p) for p in raw.split(",") if p.strip()]
    if len(ports) < world:
        raise RuntimeError(f"PERFKIT_PORTS: need {world} free ports (one per worker), got {raw!r}; start the "
                           f"workers with `perfkit collect`")
    return ports[:world]


class TFTrainer(StepTrainer):
    """One Keras model replica, its optimizer and its data, cut into the harness's segments."""

    def __init__(self, adapter: TensorFlowAdapter, build, loss_kind: str, target: str, optimizer: str, lr: float,
                 dataset: str, batch: int, mode: str, seed: int):
        from . import tf_models

        self.x_all, self.y_all = adapter.images(dataset)
        super().__init__(adapter.rank, adapter.world_size, len(self.x_all), batch, mode, seed)
        import keras

        self.strategy = adapter.strategy
        keras.utils.set_random_seed(int(seed))  # the same initial weights on every rank
        native = mode == "overlapped" and self.strategy is not None
        if native:
            with self.strategy.scope():  # mirrored variables: initial values broadcast from worker 0
                self.model = build()
                self.opt = tf_models.make_optimizer(optimizer, lr)
                self.opt.build(self.model.trainable_variables)
        else:
            self.model = build()
            self.opt = tf_models.make_optimizer(optimizer, lr)
            self.opt.build(self.model.trainable_variables)
        self.vars = list(self.model.trainable_variables)
        self.loss_fn = tf_models.loss_function(loss_kind)
        self.target = target
        self.n_params = tf_models.n_parameters(self.model)
        self.grads = None
        self._tape = self._loss = None
        if self.strategy is not None and mode == "phased":
            self._broadcast_weights()

    # ---------------------------------------------------------------- collectives (phased mode, G > 1)
    def _flat_all_reduce(self, tensors, op):
        """``tensors`` flattened into one buffer, all-reduced across the workers with ``op``, split back."""
        strategy = self.strategy
        shapes = [t.shape for t in tensors]
        sizes = [int(np.prod(s)) for s in shapes]

        def replica_fn(*ts):
            flat = tf.concat([tf.reshape(tf.identity(t), [-1]) for t in ts], 0)
            flat = tf.distribute.get_replica_context().all_reduce(op, flat)
            return [tf.reshape(p, s) for p, s in zip(tf.split(flat, sizes), shapes)]

        out = strategy.run(replica_fn, args=tuple(tensors))
        return [strategy.experimental_local_results(o)[0] for o in out]

    def _broadcast_weights(self):
        """Rank 0's weights on every rank (SUM all-reduce, the others contributing zeros)."""
        keep = 1.0 if self.rank == 0 else 0.0

        @tf.function
        def bcast(ws):
            return self._flat_all_reduce([w * keep for w in ws], tf.distribute.ReduceOp.SUM)

        for v, w in zip(self.vars, bcast([tf.convert_to_tensor(v) for v in self.vars])):
            v.assign(w)

    # ---------------------------------------------------------------- hooks
    def load(self, idx):
        x = self.x_all[idx].astype(np.float32)
        x *= np.float32(1.0 / 255.0)
        return np.ascontiguousarray(x.transpose(0, 2, 3, 1)), self.y_all[idx].astype(np.int32)

    def to_device(self, host):
        x, y = host
        return tf.convert_to_tensor(x), tf.convert_to_tensor(y)

    def segments(self, mode: str) -> list:
        model, loss_fn, target_is_input, variables = self.model, self.loss_fn, self.target == "input", self.vars
        strategy = self.strategy

        if mode == "overlapped":
            opt = self.opt
            scale = 1.0 / self.world

            def one_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(model(x, training=True), x if target_is_input else y) * scale
                grads = tape.gradient(loss, variables)
                opt.apply_gradients(zip(grads, variables))  # all-reduces (SUM) across workers under a strategy
                return loss

            if strategy is None:
                train_step = tf.function(one_step, reduce_retracing=True)
            else:
                @tf.function(reduce_retracing=True)
                def train_step(x, y):
                    return strategy.run(one_step, args=(x, y))

            def fused():
                self._loss = train_step(*self.batch_on_device)

            return [(SEGMENTS["overlapped"][0], fused)]

        @tf.function(reduce_retracing=True)
        def forward(x, y):
            return loss_fn(model(x, training=True), x if target_is_input else y)

        @tf.function(reduce_retracing=True)
        def update(grads):
            self.opt.apply_gradients(zip(grads, variables))

        def f():
            with tf.GradientTape() as tape:
                self._loss = forward(*self.batch_on_device)
            self._tape = tape

        def b():
            self.grads = self._tape.gradient(self._loss, variables)
            self._tape = None

        if strategy is None:
            def c():
                pass
        else:
            all_reduce = tf.function(lambda grads: self._flat_all_reduce(grads, tf.distribute.ReduceOp.MEAN))

            def c():
                self.grads = all_reduce(self.grads)

        def u():
            update(self.grads)

        return [("t_f", f), ("t_b", b), ("t_c", c), ("t_u", u)]

    def sync(self) -> None:
        # Eager TensorFlow on CPU is synchronous: each op / tf.function call has run when it returns.
        # Materialise the last loss anyway, so that an asynchronous executor would be waited for as well.
        loss = self._loss
        if loss is not None and hasattr(loss, "_numpy"):
            loss._numpy()

    def grad_sum(self) -> float:
        return float(sum(np.asarray(g, dtype=np.float64).sum() for g in self.grads))

    def weight_sum(self) -> float:
        return float(sum(np.abs(np.asarray(v, dtype=np.float64)).sum() for v in self.vars))


class TensorFlowAdapter(ControlAdapter):
    framework = "tensorflow"

    def __init__(self, threads: int = 1, device: str = "cpu", data_root: str | None = None):
        super().__init__(threads=threads, device=device, data_root=data_root)
        if device != "cpu":
            raise ValueError("device: this TensorFlow adapter runs on 'cpu' only (the environment is tensorflow-cpu)")
        _import_tensorflow()
        tf.config.threading.set_intra_op_parallelism_threads(self.threads)  # before any op runs
        tf.config.threading.set_inter_op_parallelism_threads(1)
        self.strategy = None
        if self.world_size > 1:
            ports = _ports(self.world_size)
            os.environ["TF_CONFIG"] = json.dumps({
                "cluster": {"worker": [f"127.0.0.1:{p}" for p in ports]},
                "task": {"type": "worker", "index": self.rank}})
            impl = tf.distribute.experimental.CommunicationImplementation.RING
            self.strategy = tf.distribute.MultiWorkerMirroredStrategy(
                communication_options=tf.distribute.experimental.CommunicationOptions(implementation=impl))

    def hello(self) -> dict:
        import keras

        out = self.base_hello()
        out.update({
            "threads": tf.config.threading.get_intra_op_parallelism_threads(),
            "interop_threads": tf.config.threading.get_inter_op_parallelism_threads(),
            "versions": {"tensorflow": tf.__version__, "keras": keras.__version__, "numpy": np.__version__},
            "segments": SEGMENTS,
            "backend": ("MultiWorkerMirroredStrategy (CollectiveAllReduce, ring over gRPC on 127.0.0.1)"
                        if self.strategy is not None else None),
            "collective": ("phased: ReplicaContext.all_reduce(MEAN) of one flat gradient buffer; overlapped: "
                           "optimizer.apply_gradients' all_reduce(SUM) of the 1/G-scaled gradients"
                           if self.strategy is not None else None),
            "layout": "NHWC (transposed in t_io)",
        })
        return out

    def run(self, task: str, cfg: dict) -> dict:
        import keras

        from . import tf_models

        # the previous request's model, optimizer and traced functions: Keras' global state, TensorFlow's eager
        # kernel cache and a garbage collection (reference cycles), so that one worker serves many requests
        keras.backend.clear_session(free_memory=True)
        workers = int(cfg.get("workers", self.world_size))
        if workers != self.world_size:
            raise ValueError(f"workers: the configuration asks for {workers}, this group has {self.world_size}")
        if "model" in cfg:
            name = cfg["model"]
            if name not in tf_models.CH3_MODELS:
                raise ValueError(f"model: expected one of {tf_models.CH3_MODELS}, got {name!r}")
            loss_kind, target = ("mse", "input") if name == "ae" else ("xent", "labels")

            def build():
                return tf_models.build_ch3_model(name)[0]

            dataset, opt, lr = cfg.get("dataset", "mnist"), cfg.get("optimizer", "sgd"), cfg.get("learning_rate", 0.01)
        else:
            def build():
                return tf_models.lenet5(cfg)

            loss_kind, target = "xent", "labels"
            dataset, opt, lr = cfg["dataset"], cfg["optimizer"], cfg["learning_rate"]
        tr = TFTrainer(self, build, loss_kind, target, opt, lr, dataset, cfg["batch_size"], cfg.get("mode", "phased"),
                       int(cfg.get("seed", 0)))
        info = {"n_params": tr.n_params, "n_train": tr.n}
        return run_task(self, tr, task, cfg, info)

    def close(self) -> None:
        if self.world_size > 1:
            self.barrier()  # no rank leaves while another may still be in a collective
        super().close()


def main(argv=None) -> None:
    adapter_main(TensorFlowAdapter, argv, doc=__doc__)


if __name__ == "__main__":
    main()
