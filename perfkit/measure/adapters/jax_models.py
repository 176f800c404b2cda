"""JAX versions of the harness's models, written with ``jax.numpy``/``jax.lax`` only (no Flax).

The layers, sizes and parameter counts are those of
:mod:`perfkit.measure.adapters.torch_models` (Chapter 3 ``cnn``, ``mlp``,
``ae`` and the Table 4.1 LeNet-5): a model is a list of layer specs, the
parameters a list of ``(weight, bias)`` pairs, one per conv or dense layer.
Images enter as NHWC (XLA's native CPU convolution layout); conv weights are
HWIO. Flattening NHWC orders the dense layer's inputs differently from
PyTorch's NCHW flatten: the same number of weights, permuted.

Initialisation follows PyTorch's default for ``Conv2d``/``Linear``: weight and
bias uniform in ``±1/sqrt(fan_in)`` (drawn with NumPy from the seed). "same" padding is Keras/TF's asymmetric
zero padding (:func:`perfkit.measure.spaces.same_padding`) passed to
``lax.conv_general_dilated`` as explicit (low, high) pairs, i.e. the padded
VALID convolution of the PyTorch model; max-pooling uses pool = stride = p and
floors (``lax.reduce_window`` with VALID).

Nothing here imports JAX at module level: the adapter sets its thread knobs
before the first ``import jax``, and this module must stay importable (for
doctest collection) where JAX is not installed.
"""
from __future__ import annotations

import math

import numpy as np

from ..spaces import DATASET_SHAPES, geometry, same_padding

__all__ = ["CH3_MODELS", "ACTIVATIONS", "Model", "build_ch3_model", "lenet5", "make_optimizer"]

CH3_MODELS = ("cnn", "mlp", "ae")
ACTIVATIONS = ("relu", "tanh", "sigmoid")


class Model:
    """A sequential model: ``layers`` is a list of tuples

    ``("conv", c_in, c_out, k, stride, padding)`` (padding ``"VALID"`` or ``((top, bottom), (left, right))``),
    ``("dense", n_in, n_out)``, ``("act", name)``, ``("pool", p)``, ``("dropout", rate)``, ``("flatten",)``.

    ``loss`` is ``"ce"`` (softmax cross-entropy with integer labels) or
    ``"mse_input"`` (mean squared error against the flattened input);
    ``input`` is ``"nhwc"`` or ``"flat"`` (``(batch, C*H*W)``).
    """

    def __init__(self, layers: list, loss: str, input: str, in_shape: tuple):
        self.layers, self.loss_kind, self.input, self.in_shape = layers, loss, input, tuple(in_shape)
        self.n_dropout = sum(1 for layer in layers if layer[0] == "dropout" and layer[1] > 0)

    @property
    def n_params(self) -> int:
        n = 0
        for layer in self.layers:
            if layer[0] == "conv":
                _, c_in, c_out, k, _, _ = layer
                n += k * k * c_in * c_out + c_out
            elif layer[0] == "dense":
                n += layer[1] * layer[2] + layer[2]
        return n

    def init(self, seed: int):
        """Parameters ``[(w, b), ...]`` as float32 NumPy arrays, drawn from ``seed``.

        The same seed gives the same weights on every rank. NumPy rather than
        ``jax.random``: eager ``jax.random.uniform`` compiles once per weight
        shape, seconds per new configuration for nothing that is timed.
        """
        rng = np.random.default_rng(int(seed))
        params = []
        for layer in self.layers:
            if layer[0] == "conv":
                _, c_in, c_out, k, _, _ = layer
                shape, fan_in, n_out = (k, k, c_in, c_out), c_in * k * k, c_out
            elif layer[0] == "dense":
                shape, fan_in, n_out = (layer[1], layer[2]), layer[1], layer[2]
            else:
                continue
            bound = 1.0 / math.sqrt(fan_in)
            params.append((rng.uniform(-bound, bound, shape).astype(np.float32),
                           rng.uniform(-bound, bound, (n_out,)).astype(np.float32)))
        return params

    def apply(self, params, x, key):
        """The network's output (logits, or the sigmoid reconstruction of ``ae``) in training mode."""
        import jax
        import jax.numpy as jnp
        from jax import lax

        keys = list(jax.random.split(key, self.n_dropout)) if self.n_dropout else []
        i = 0
        for layer in self.layers:
            kind = layer[0]
            if kind == "conv":
                w, b = params[i]
                i += 1
                x = lax.conv_general_dilated(x, w, window_strides=(layer[4], layer[4]), padding=layer[5],
                                             dimension_numbers=("NHWC", "HWIO", "NHWC")) + b
            elif kind == "dense":
                w, b = params[i]
                i += 1
                x = x @ w + b
            elif kind == "act":
                x = {"relu": jax.nn.relu, "tanh": jnp.tanh, "sigmoid": jax.nn.sigmoid}[layer[1]](x)
            elif kind == "pool":
                p = layer[1]
                if p > 1:
                    x = lax.reduce_window(x, -jnp.inf, lax.max, (1, p, p, 1), (1, p, p, 1), "VALID")
            elif kind == "flatten":
                x = x.reshape(x.shape[0], -1)
            elif kind == "dropout":
                rate = layer[1]
                if rate >= 1.0:
                    x = jnp.zeros_like(x)
                elif rate > 0:
                    keep = jax.random.bernoulli(keys.pop(), 1.0 - rate, x.shape)
                    x = jnp.where(keep, x / (1.0 - rate), 0.0)
        return x

    def loss(self, params, x, y, key):
        """Scalar training loss of one batch (mean over the batch, as PyTorch's default reduction)."""
        import jax.numpy as jnp
        import optax

        out = self.apply(params, x, key)
        if self.loss_kind == "ce":
            return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(out, y))
        return jnp.mean((out - x.reshape(x.shape[0], -1)) ** 2)


def build_ch3_model(name: str) -> Model:
    """The Chapter 3 model ``name`` (see :mod:`.torch_models`), MNIST-shaped input."""
    if name == "cnn":
        return Model([("conv", 1, 32, 3, 1, "VALID"), ("act", "relu"), ("conv", 32, 64, 3, 1, "VALID"), ("act", "relu"),
                      ("pool", 2), ("dropout", 0.25), ("flatten",), ("dense", 9216, 128), ("act", "relu"),
                      ("dropout", 0.5), ("dense", 128, 10)], "ce", "nhwc", (28, 28, 1))
    if name == "mlp":
        return Model([("dense", 784, 512), ("act", "relu"), ("dropout", 0.2), ("dense", 512, 512), ("act", "relu"),
                      ("dropout", 0.2), ("dense", 512, 10)], "ce", "flat", (784,))
    if name == "ae":
        return Model([("dense", 784, 256), ("act", "relu"), ("dense", 256, 64), ("act", "relu"), ("dense", 64, 256),
                      ("act", "relu"), ("dense", 256, 784), ("act", "sigmoid")], "mse_input", "flat", (784,))
    raise ValueError(f"model: expected one of {CH3_MODELS}, got {name!r}")


def _padding(h: int, w: int, k: int, s: int, padding: str):
    if padding == "valid":
        return "VALID"
    return (same_padding(h, k, s), same_padding(w, k, s))


def lenet5(config: dict) -> Model:
    """The Table 4.1 LeNet-5 for ``config`` (same layers as :func:`.torch_models.lenet5`).

    Raises ``ValueError`` naming the parameter for an unknown activation or dropout
    outside [0, 1], and when the feature maps collapse.
    """
    shapes = geometry(config)
    act = config["activation"]
    if act not in ACTIVATIONS:
        raise ValueError(f"activation: expected one of {sorted(ACTIVATIONS)}, got {act!r}")
    d = float(config["dropout"])
    if not 0.0 <= d <= 1.0:
        raise ValueError(f"dropout: expected a rate in [0, 1], got {d}")
    k, p, s, pad = int(config["kernel_size"]), int(config["pool_size"]), int(config["stride"]), config["padding"]
    (c0, h0, w0), (c1, _, _), (_, h1p, w1p), (c2, _, _), (_, h2p, w2p) = shapes
    classes = DATASET_SHAPES[config["dataset"]][4]
    return Model([
        ("conv", c0, c1, k, s, _padding(h0, w0, k, s, pad)), ("act", act), ("pool", p),
        ("conv", c1, c2, k, s, _padding(h1p, w1p, k, s, pad)), ("act", act), ("pool", p),
        ("flatten",), ("dense", c2 * h2p * w2p, 120), ("act", act), ("dropout", d),
        ("dense", 120, 84), ("act", act), ("dropout", d), ("dense", 84, classes),
    ], "ce", "nhwc", (h0, w0, c0))


def make_optimizer(name: str, lr: float):
    """``adam`` (PyTorch's defaults: betas 0.9/0.999, eps 1e-8) or ``sgd`` (plain, no momentum), as optax transforms."""
    import optax

    if name == "adam":
        return optax.adam(float(lr), b1=0.9, b2=0.999, eps=1e-8)
    if name == "sgd":
        return optax.sgd(float(lr))
    raise ValueError(f"optimizer: expected 'adam' or 'sgd', got {name!r}")
