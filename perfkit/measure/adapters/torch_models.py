"""PyTorch models timed by the harness.

Chapter 3 (the thesis names the models but not their layers; these are the
standard Keras/PyTorch example networks for MNIST-shaped input):

``cnn``
    conv 3×3, 32 → ReLU → conv 3×3, 64 → ReLU → maxpool 2 → dropout 0.25 →
    dense 9216→128 → ReLU → dropout 0.5 → dense 10 (cross-entropy). 1.2 M parameters.
``mlp``
    dense 784→512 → ReLU → dropout 0.2 → dense 512→512 → ReLU → dropout 0.2 →
    dense 10 (cross-entropy). 0.67 M parameters.
``ae``
    autoencoder 784→256→64→256→784, ReLU inside, sigmoid output, MSE loss on
    the input. 0.44 M parameters.

Chapter 4: :func:`lenet5` builds the Table 4.1 LeNet-5 described in
:mod:`perfkit.sampler`.
"""
from __future__ import annotations

import torch
from torch import nn

from ..spaces import DATASET_SHAPES, geometry, same_padding

__all__ = ["CH3_MODELS", "build_ch3_model", "lenet5", "make_optimizer", "n_parameters"]

CH3_MODELS = ("cnn", "mlp", "ae")

_ACT = {"relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid}


class _AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 64), nn.ReLU(),
            nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 784), nn.Sigmoid(),
        )

    def forward(self, x):
        return self.net(x)


def build_ch3_model(name: str):
    """``(model, loss_fn, target)`` for a Chapter 3 model; ``target`` is ``"labels"`` or ``"input"``."""
    if name == "cnn":
        model = nn.Sequential(
            nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25),
            nn.Flatten(), nn.Linear(9216, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 10),
        )
        return model, nn.CrossEntropyLoss(), "labels"
    if name == "mlp":
        model = nn.Sequential(
            nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Dropout(0.2), nn.Linear(512, 512), nn.ReLU(),
            nn.Dropout(0.2), nn.Linear(512, 10),
        )
        return model, nn.CrossEntropyLoss(), "labels"
    if name == "ae":
        return _AutoEncoder(), nn.MSELoss(), "input"
    raise ValueError(f"model: expected one of {CH3_MODELS}, got {name!r}")


def _conv(c_in: int, c_out: int, h: int, w: int, k: int, s: int, padding: str) -> nn.Module:
    conv = nn.Conv2d(c_in, c_out, k, stride=s)
    if padding == "valid":
        return conv
    top, bottom = same_padding(h, k, s)
    left, right = same_padding(w, k, s)
    return nn.Sequential(nn.ZeroPad2d((left, right, top, bottom)), conv)


def lenet5(config: dict) -> nn.Module:
    """The Table 4.1 LeNet-5 for ``config`` (keys of :data:`perfkit.sampler.TABLE_4_1_SPACE`).

    Raises ``ValueError`` when the feature maps collapse (see :func:`perfkit.sampler.check_geometry`).
    """
    shapes = geometry(config)
    act = config["activation"]
    if act not in _ACT:
        raise ValueError(f"activation: expected one of {sorted(_ACT)}, got {act!r}")
    k, p, s, pad = int(config["kernel_size"]), int(config["pool_size"]), int(config["stride"]), config["padding"]
    (c0, h0, w0), (c1, _, _), (_, h1p, w1p), (c2, _, _), (_, h2p, w2p) = shapes
    d = float(config["dropout"])
    classes = DATASET_SHAPES[config["dataset"]][4]
    return nn.Sequential(
        _conv(c0, c1, h0, w0, k, s, pad), _ACT[act](), nn.MaxPool2d(p),
        _conv(c1, c2, h1p, w1p, k, s, pad), _ACT[act](), nn.MaxPool2d(p),
        nn.Flatten(), nn.Linear(c2 * h2p * w2p, 120), _ACT[act](), nn.Dropout(d),
        nn.Linear(120, 84), _ACT[act](), nn.Dropout(d), nn.Linear(84, classes),
    )


def make_optimizer(name: str, params, lr: float):
    """``adam`` or ``sgd`` (plain SGD, no momentum) with learning rate ``lr``."""
    if name == "adam":
        return torch.optim.Adam(params, lr=lr)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr)
    raise ValueError(f"optimizer: expected 'adam' or 'sgd', got {name!r}")


def n_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
