"""MXNet Gluon versions of the models timed by the harness (the same layers as :mod:`.torch_models`).

Every layer is built with its input size given (``in_channels``/``in_units``),
so that the parameters exist at once (no deferred initialisation) and their
count is known before the first batch; it equals the PyTorch model's
(:func:`perfkit.model.forms.costs.network_costs`). Layout NCHW, as PyTorch's.

``cnn``, ``mlp``, ``ae``
    the Chapter 3 networks of :func:`.torch_models.build_ch3_model`.
:func:`lenet5`
    the Table 4.1 LeNet-5; ``"same"`` padding is explicit asymmetric zero
    padding (``pad``, TensorFlow's SAME split of :func:`perfkit.measure.spaces.same_padding`)
    followed by a VALID convolution; max-pooling with pool = stride, floored.

Losses (inside the hybridized graph, see :func:`with_loss`): softmax
cross-entropy for ``cnn``, ``mlp`` and LeNet-5, mean squared error on the
flattened input for ``ae`` (sigmoid output), each the MEAN over the batch, as
PyTorch's ``CrossEntropyLoss``/``MSELoss``.

MXNet is imported inside the functions: this module is imported only in the
worker processes of the legacy environment (and by pytest's doctest
collection in perfkit's own environment, where MXNet is absent).
"""
from __future__ import annotations

from perfkit.measure.spaces import DATASET_SHAPES, geometry, same_padding

__all__ = ["ACTIVATIONS", "CH3_MODELS", "build_ch3_model", "lenet5", "make_optimizer", "n_parameters", "with_loss"]

CH3_MODELS = ("cnn", "mlp", "ae")
ACTIVATIONS = ("relu", "tanh", "sigmoid")


def _nn():
    from mxnet.gluon import nn

    return nn


def build_ch3_model(name: str):
    """``(block, target)`` for a Chapter 3 model; ``target`` is ``"labels"`` or ``"input"``."""
    if name not in CH3_MODELS:
        raise ValueError(f"model: expected one of {CH3_MODELS}, got {name!r}")
    nn = _nn()
    net = nn.HybridSequential()
    if name == "cnn":
        net.add(nn.Conv2D(32, 3, in_channels=1), nn.Activation("relu"),
                nn.Conv2D(64, 3, in_channels=32), nn.Activation("relu"),
                nn.MaxPool2D(2, 2), nn.Dropout(0.25), nn.Flatten(),
                nn.Dense(128, in_units=9216), nn.Activation("relu"), nn.Dropout(0.5),
                nn.Dense(10, in_units=128))
        return net, "labels"
    if name == "mlp":
        net.add(nn.Flatten(), nn.Dense(512, in_units=784), nn.Activation("relu"), nn.Dropout(0.2),
                nn.Dense(512, in_units=512), nn.Activation("relu"), nn.Dropout(0.2),
                nn.Dense(10, in_units=512))
        return net, "labels"
    net.add(nn.Flatten(), nn.Dense(256, in_units=784), nn.Activation("relu"),
            nn.Dense(64, in_units=256), nn.Activation("relu"),
            nn.Dense(256, in_units=64), nn.Activation("relu"),
            nn.Dense(784, in_units=256), nn.Activation("sigmoid"))
    return net, "input"


def _conv(c_in: int, c_out: int, h: int, w: int, k: int, s: int, padding: str):
    nn = _nn()
    conv = nn.Conv2D(c_out, k, strides=s, in_channels=c_in)
    if padding == "valid":
        return [conv]
    top, bottom = same_padding(h, k, s)
    left, right = same_padding(w, k, s)
    widths = (0, 0, 0, 0, top, bottom, left, right)
    if not any(widths):
        return [conv]
    pad = nn.HybridLambda(lambda F, x: F.pad(x, mode="constant", constant_value=0, pad_width=widths))
    return [pad, conv]


def lenet5(config: dict):
    """The Table 4.1 LeNet-5 for ``config`` (see :func:`.torch_models.lenet5`); ValueError names a bad key."""
    shapes = geometry(config)
    act = config["activation"]
    if act not in ACTIVATIONS:
        raise ValueError(f"activation: expected one of {sorted(ACTIVATIONS)}, got {act!r}")
    k, p, s, pad = int(config["kernel_size"]), int(config["pool_size"]), int(config["stride"]), config["padding"]
    (c0, h0, w0), (c1, _, _), (_, h1p, w1p), (c2, _, _), (_, h2p, w2p) = shapes
    d = float(config["dropout"])
    classes = DATASET_SHAPES[config["dataset"]][4]
    nn = _nn()
    net = nn.HybridSequential()
    net.add(*_conv(c0, c1, h0, w0, k, s, pad), nn.Activation(act), nn.MaxPool2D(p, p))
    net.add(*_conv(c1, c2, h1p, w1p, k, s, pad), nn.Activation(act), nn.MaxPool2D(p, p))
    net.add(nn.Flatten(), nn.Dense(120, in_units=c2 * h2p * w2p), nn.Activation(act), nn.Dropout(d),
            nn.Dense(84, in_units=120), nn.Activation(act), nn.Dropout(d), nn.Dense(classes, in_units=84))
    return net


def with_loss(net, target: str):
    """A HybridBlock ``(x, y) -> mean loss`` (``target="labels"``) or ``x -> mean loss`` (``"input"``)."""
    from mxnet.gluon import HybridBlock

    if target not in ("labels", "input"):
        raise ValueError(f"target: expected 'labels' or 'input', got {target!r}")

    class _CrossEntropy(HybridBlock):
        def __init__(self, body):
            super().__init__()
            self.body = body

        def hybrid_forward(self, F, x, y):
            logp = F.log_softmax(self.body(x), axis=-1)
            return -F.mean(F.pick(logp, y, axis=-1))

    class _SquaredError(HybridBlock):
        def __init__(self, body):
            super().__init__()
            self.body = body

        def hybrid_forward(self, F, x):
            return F.mean(F.square(self.body(x) - F.flatten(x)))

    return _CrossEntropy(net) if target == "labels" else _SquaredError(net)


def make_optimizer(name: str, lr: float):
    """``adam`` or ``sgd`` (plain SGD: no momentum, no weight decay) with learning rate ``lr``."""
    import mxnet as mx

    if name == "adam":
        return mx.optimizer.Adam(learning_rate=float(lr))
    if name == "sgd":
        return mx.optimizer.SGD(learning_rate=float(lr), momentum=0.0, wd=0.0)
    raise ValueError(f"optimizer: expected 'adam' or 'sgd', got {name!r}")


def n_parameters(net) -> int:
    return int(sum(p.data().size for p in net.collect_params().values()))
