"""Keras 3 (TensorFlow backend) models timed by the TensorFlow adapter.

The same networks as :mod:`.torch_models`, layer for layer, with the same
parameter counts; only the memory layout differs: Keras on CPU works in
channels-last (N, H, W, C), so the adapter hands these models NHWC batches.
The dense layer after ``Flatten`` has the same number of weights whichever
order the features are flattened in.

``cnn``
    conv 3×3, 32 → ReLU → conv 3×3, 64 → ReLU → maxpool 2 → dropout 0.25 →
    dense 9216→128 → ReLU → dropout 0.5 → dense 10 (cross-entropy on logits).
``mlp``
    dense 784→512 → ReLU → dropout 0.2 → dense 512→512 → ReLU → dropout 0.2 →
    dense 10 (cross-entropy on logits).
``ae``
    784→256→64→256→784, ReLU inside, sigmoid output, MSE loss on the input.
:func:`lenet5`
    the Table 4.1 LeNet-5 of :func:`.torch_models.lenet5`: "same" padding is an
    explicit (asymmetric) ``ZeroPadding2D`` of :func:`perfkit.measure.spaces.same_padding`
    followed by a VALID convolution, as in the PyTorch model; max-pooling with
    pool = stride = p (floor).

Nothing here imports Keras at module level (the module is collected by the
doctests of the main environment, which has no TensorFlow): every builder
imports it when called, in the worker.
"""
from __future__ import annotations

from ..spaces import DATASET_SHAPES, geometry, same_padding

__all__ = ["ACTIVATIONS", "CH3_MODELS", "build_ch3_model", "lenet5", "loss_function", "make_optimizer",
           "n_parameters"]

CH3_MODELS = ("cnn", "mlp", "ae")
ACTIVATIONS = ("relu", "tanh", "sigmoid")


def _keras():
    import keras

    return keras


def build_ch3_model(name: str):
    """``(model, loss, target)`` for a Chapter 3 model; ``loss`` is ``"xent"`` or ``"mse"``, ``target`` ``"labels"``
    or ``"input"``. The model is built for a (N, 28, 28, 1) input."""
    if name not in CH3_MODELS:
        raise ValueError(f"model: expected one of {CH3_MODELS}, got {name!r}")
    L = _keras().layers
    if name == "cnn":
        layers = [L.Conv2D(32, 3, activation="relu"), L.Conv2D(64, 3, activation="relu"),
                  L.MaxPooling2D(2), L.Dropout(0.25), L.Flatten(), L.Dense(128, activation="relu"),
                  L.Dropout(0.5), L.Dense(10)]
        loss, target = "xent", "labels"
    elif name == "mlp":
        layers = [L.Flatten(), L.Dense(512, activation="relu"), L.Dropout(0.2), L.Dense(512, activation="relu"),
                  L.Dropout(0.2), L.Dense(10)]
        loss, target = "xent", "labels"
    else:
        layers = [L.Flatten(), L.Dense(256, activation="relu"), L.Dense(64, activation="relu"),
                  L.Dense(256, activation="relu"), L.Dense(784, activation="sigmoid")]
        loss, target = "mse", "input"
    return _sequential([L.Input((28, 28, 1))] + layers, "ch3_" + name), loss, target


def _sequential(layers, name):
    return _keras().Sequential(layers, name=name)


def _conv(filters: int, h: int, w: int, k: int, s: int, padding: str) -> list:
    L = _keras().layers
    conv = L.Conv2D(filters, k, strides=s, padding="valid")
    if padding == "valid":
        return [conv]
    top, bottom = same_padding(h, k, s)
    left, right = same_padding(w, k, s)
    return [L.ZeroPadding2D(((top, bottom), (left, right))), conv]


def lenet5(config: dict):
    """The Table 4.1 LeNet-5 for ``config`` (keys of :data:`perfkit.measure.spaces.TABLE_4_1_SPACE`), NHWC input.

    Raises ``ValueError`` naming the parameter when the activation is unknown or the feature maps collapse.
    """
    shapes = geometry(config)
    act = config["activation"]
    if act not in ACTIVATIONS:
        raise ValueError(f"activation: expected one of {sorted(ACTIVATIONS)}, got {act!r}")
    k, p, s, pad = int(config["kernel_size"]), int(config["pool_size"]), int(config["stride"]), config["padding"]
    (c0, h0, w0), (c1, _, _), (_, h1p, w1p), (c2, _, _), _ = shapes
    d = float(config["dropout"])
    if not 0.0 <= d < 1.0:
        raise ValueError(f"dropout: expected a rate in [0, 1), got {d!r}")
    classes = DATASET_SHAPES[config["dataset"]][4]
    L = _keras().layers
    layers = [L.Input((h0, w0, c0))]
    layers += _conv(c1, h0, w0, k, s, pad) + [L.Activation(act), L.MaxPooling2D(p, strides=p, padding="valid")]
    layers += _conv(c2, h1p, w1p, k, s, pad) + [L.Activation(act), L.MaxPooling2D(p, strides=p, padding="valid")]
    layers += [L.Flatten(), L.Dense(120), L.Activation(act), L.Dropout(d),
               L.Dense(84), L.Activation(act), L.Dropout(d), L.Dense(classes)]
    return _sequential(layers, "lenet5")


def make_optimizer(name: str, lr: float):
    """``adam`` or ``sgd`` (plain SGD, no momentum) with learning rate ``lr``.

    Adam takes PyTorch's defaults (betas 0.9/0.999, epsilon 1e-8; Keras' own epsilon is 1e-7).
    """
    opt = _keras().optimizers
    if name == "adam":
        return opt.Adam(learning_rate=float(lr), beta_1=0.9, beta_2=0.999, epsilon=1e-8)
    if name == "sgd":
        return opt.SGD(learning_rate=float(lr), momentum=0.0)
    raise ValueError(f"optimizer: expected 'adam' or 'sgd', got {name!r}")


def loss_function(kind: str):
    """``f(outputs, target) -> scalar`` (TensorFlow ops): mean cross-entropy on logits, or mean squared error."""
    import tensorflow as tf

    if kind == "xent":
        def xent(out, y):
            return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=out))
        return xent
    if kind == "mse":
        def mse(out, x):
            return tf.reduce_mean(tf.square(out - tf.reshape(x, tf.shape(out))))
        return mse
    raise ValueError(f"loss: expected 'xent' or 'mse', got {kind!r}")


def n_parameters(model) -> int:
    """Trainable parameters (as PyTorch's ``model.parameters()``; Dropout's seed state is not one)."""
    import math

    return int(sum(math.prod(w.shape) for w in model.trainable_weights))
