"""Chainer models timed by the harness: the same layers and parameter counts as :mod:`.torch_models`.

Chapter 3 ``cnn``, ``mlp`` and ``ae`` and the Table 4.1 LeNet-5, layer for
layer as :func:`~perfkit.measure.adapters.torch_models.build_ch3_model` and
:func:`~perfkit.measure.adapters.torch_models.lenet5` build them in PyTorch
(NCHW, like PyTorch): ``L.Convolution2D``/``L.Linear`` hold the same weight
and bias shapes as ``nn.Conv2d``/``nn.Linear``. "same" padding is explicit
asymmetric zero padding (``F.pad`` with :func:`perfkit.measure.spaces.same_padding`,
as ``nn.ZeroPad2d``) before a VALID convolution; max pooling uses
pool = stride = p and floors (``cover_all=False``, like ``nn.MaxPool2d``);
dropout is ``F.dropout`` (active in training mode, Chainer's default
configuration). Weights and biases are drawn like PyTorch's defaults,
uniform in ±1/√fan_in, from NumPy's global generator (so ``numpy.random.seed``
makes every rank build the same replica).

Chainer is imported inside the functions, so this module imports without it
(pytest's doctest collection in perfkit's own environment). It must be
imported absolutely (``perfkit.measure.adapters.chainer_models``): its sibling
``chainer.py`` is the adapter, not the framework.
"""
from __future__ import annotations

import functools
import math

from ..spaces import DATASET_SHAPES, geometry, same_padding

__all__ = ["CH3_MODELS", "build_ch3_model", "lenet5", "make_optimizer", "n_parameters"]

CH3_MODELS = ("cnn", "mlp", "ae")
_ACTIVATIONS = ("relu", "tanh", "sigmoid")


@functools.lru_cache(maxsize=None)
def _net_class():
    import chainer

    class Net(chainer.ChainList):
        """A sequence of links and functions, applied in order (like ``nn.Sequential``)."""

        def __init__(self, ops):
            super().__init__()
            self.ops = []
            for op in ops:
                if isinstance(op, chainer.Link):
                    self.add_link(op)
                self.ops.append(op)

        def forward(self, x):
            for op in self.ops:
                x = op(x)
            return x

    return Net


def _uniform(fan_in: int):
    import chainer

    return chainer.initializers.Uniform(scale=1.0 / math.sqrt(fan_in))


def _linear(n_in: int, n_out: int):
    import chainer.links as L

    return L.Linear(n_in, n_out, initialW=_uniform(n_in), initial_bias=_uniform(n_in))


def _conv(c_in: int, c_out: int, k: int, s: int = 1):
    import chainer.links as L

    fan_in = c_in * k * k
    return L.Convolution2D(c_in, c_out, k, stride=s, pad=0, initialW=_uniform(fan_in), initial_bias=_uniform(fan_in))


def _flatten(x):
    import chainer.functions as F

    return F.reshape(x, (x.shape[0], -1))


def _dropout(ratio: float):
    import chainer.functions as F

    return functools.partial(F.dropout, ratio=float(ratio))


def _max_pool(p: int):
    import chainer.functions as F

    return functools.partial(F.max_pooling_2d, ksize=p, stride=p, pad=0, cover_all=False)


def _activation(name: str):
    import chainer.functions as F

    if name not in _ACTIVATIONS:
        raise ValueError(f"activation: expected one of {sorted(_ACTIVATIONS)}, got {name!r}")
    return {"relu": F.relu, "tanh": F.tanh, "sigmoid": F.sigmoid}[name]


def build_ch3_model(name: str):
    """``(model, target)`` for a Chapter 3 model; ``target`` is ``"labels"`` (cross-entropy) or ``"input"`` (MSE)."""
    import chainer.functions as F

    net = _net_class()
    if name == "cnn":
        return net([
            _conv(1, 32, 3), F.relu, _conv(32, 64, 3), F.relu, _max_pool(2), _dropout(0.25),
            _flatten, _linear(9216, 128), F.relu, _dropout(0.5), _linear(128, 10),
        ]), "labels"
    if name == "mlp":
        return net([
            _flatten, _linear(784, 512), F.relu, _dropout(0.2), _linear(512, 512), F.relu, _dropout(0.2),
            _linear(512, 10),
        ]), "labels"
    if name == "ae":
        return net([
            _flatten, _linear(784, 256), F.relu, _linear(256, 64), F.relu, _linear(64, 256), F.relu,
            _linear(256, 784), F.sigmoid,
        ]), "input"
    raise ValueError(f"model: expected one of {CH3_MODELS}, got {name!r}")


def _pad(h: int, w: int, k: int, s: int):
    import chainer.functions as F

    top, bottom = same_padding(h, k, s)
    left, right = same_padding(w, k, s)
    width = ((0, 0), (0, 0), (top, bottom), (left, right))
    return functools.partial(F.pad, pad_width=width, mode="constant", constant_values=0)


def lenet5(config: dict):
    """The Table 4.1 LeNet-5 for ``config``, as :func:`.torch_models.lenet5` builds it.

    Raises ``ValueError`` naming the key at fault (an unknown activation, collapsing feature maps).
    """
    shapes = geometry(config)
    act = _activation(config["activation"])
    k, p, s, pad = int(config["kernel_size"]), int(config["pool_size"]), int(config["stride"]), config["padding"]
    (c0, h0, w0), (c1, _, _), (_, h1p, w1p), (c2, _, _), (_, h2p, w2p) = shapes
    d = float(config["dropout"])
    classes = DATASET_SHAPES[config["dataset"]][4]
    ops = []
    for c_in, c_out, h, w in ((c0, c1, h0, w0), (c1, c2, h1p, w1p)):
        if pad == "same":
            ops.append(_pad(h, w, k, s))
        ops += [_conv(c_in, c_out, k, s), act, _max_pool(p)]
    ops += [_flatten, _linear(c2 * h2p * w2p, 120), act, _dropout(d), _linear(120, 84), act, _dropout(d),
            _linear(84, classes)]
    return _net_class()(ops)


def make_optimizer(name: str, lr: float):
    """``adam`` (``alpha`` = lr, β = 0.9/0.999, ε = 1e-8, as PyTorch's) or ``sgd`` (plain, no momentum)."""
    import chainer

    if name == "adam":
        return chainer.optimizers.Adam(alpha=float(lr))
    if name == "sgd":
        return chainer.optimizers.SGD(lr=float(lr))
    raise ValueError(f"optimizer: expected 'adam' or 'sgd', got {name!r}")


def n_parameters(model) -> int:
    return int(sum(p.size for p in model.params()))
