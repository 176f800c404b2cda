"""3D-ResAttNet-18 for Chapter 5: a 3D ResNet-18 with residual self-attention, parameterised by Table 5.1.

After Zhang et al. (2021), *An explainable 3D residual self-attention deep
neural network for joint atrophy localization and Alzheimer's disease
diagnosis using structural MRI* (the thesis's ref. [37]). Their code is not
part of the thesis, so this is a documented re-implementation:

* **stem**: Conv3d(1 → F, kernel k, stride s, Table 5.1 padding) → BatchNorm →
  activation → MaxPool3d(pool) (Table 5.1 has pool size 1, i.e. none);
* **four stages** of two basic residual blocks each (3×3×3 convolutions, BN,
  activation; identity or 1×1×1 projection shortcuts), widths F, 2F, 4F, 8F,
  the last three starting with stride 2: the ResNet-18 layout;
* **residual self-attention** after stages 3 and 4: 1×1×1 query/key/value
  projections (C/8, C/8, C), softmax attention over all voxels, output scaled
  by a learned γ (initialised to 0) and added to the input;
* **head**: global average pooling → dense 8F → 3 classes (AD, MCI, NC).

Table 5.1's kernel size, padding and stride act on the stem (they set the
resolution everything after it works on); the residual blocks keep the
standard 3×3×3 'same' convolutions so that the shortcuts match.

The input is one single-channel T1 volume. Registered to the Colin27 template
at 1 mm it is 181×217×181 voxels (:data:`FULL_VOLUME`); the CPU datasets use a
stated smaller size (:data:`CPU_VOLUME`), recorded in every row.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from ..spaces import TABLE_5_1_SPACE, same_padding

__all__ = ["FULL_VOLUME", "CPU_VOLUME", "ADNI1_TRAIN_SCANS", "ResAttNet3D", "resattnet3d"]

FULL_VOLUME = (181, 217, 181)
CPU_VOLUME = (48, 56, 48)  # about 0.26x per axis of FULL_VOLUME, same aspect
ADNI1_TRAIN_SCANS = 431
_ACT = {"relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid}


class _Block(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int, act):
        super().__init__()
        self.conv1 = nn.Conv3d(c_in, c_out, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm3d(c_out)
        self.conv2 = nn.Conv3d(c_out, c_out, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm3d(c_out)
        self.act = act()
        self.short = (nn.Sequential(nn.Conv3d(c_in, c_out, 1, stride=stride, bias=False), nn.BatchNorm3d(c_out))
                      if stride != 1 or c_in != c_out else nn.Identity())

    def forward(self, x):
        y = self.act(self.bn1(self.conv1(x)))
        return self.act(self.bn2(self.conv2(y)) + self.short(x))


class _SelfAttention3d(nn.Module):
    """Residual self-attention over all voxels: x + γ · softmax(QᵀK) V."""

    def __init__(self, c: int):
        super().__init__()
        self.q = nn.Conv3d(c, max(c // 8, 1), 1)
        self.k = nn.Conv3d(c, max(c // 8, 1), 1)
        self.v = nn.Conv3d(c, c, 1)
        self.gamma = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        b, c = x.shape[:2]
        q = self.q(x).flatten(2)  # b, c', n
        k = self.k(x).flatten(2)
        v = self.v(x).flatten(2)  # b, c, n
        att = torch.softmax(torch.bmm(q.transpose(1, 2), k), dim=-1)  # b, n, n
        out = torch.bmm(v, att.transpose(1, 2)).view_as(x)
        return x + self.gamma * out


class ResAttNet3D(nn.Module):
    def __init__(self, kernel_size=3, stride=2, padding="same", pool_size=1, num_filters=64, activation="relu",
                 volume=CPU_VOLUME, classes=3):
        super().__init__()
        if activation not in _ACT:
            raise ValueError(f"activation: expected one of {sorted(_ACT)}, got {activation!r}")
        if padding not in ("valid", "same"):
            raise ValueError(f"padding: expected 'valid' or 'same', got {padding!r}")
        act, k, s, f = _ACT[activation], int(kernel_size), int(stride), int(num_filters)
        stem: list[nn.Module] = []
        if padding == "same":
            pads = [same_padding(n, k, s) for n in volume]  # (d, h, w) -> pad order w, h, d
            stem.append(nn.ConstantPad3d((*pads[2], *pads[1], *pads[0]), 0.0))
            out = [math.ceil(n / s) for n in volume]
        else:
            out = [(n - k) // s + 1 for n in volume]
        if min(out) < 1:
            raise ValueError(f"kernel_size/stride: a {k}-voxel kernel with stride {s} leaves nothing of {volume}")
        stem += [nn.Conv3d(1, f, k, stride=s, bias=False), nn.BatchNorm3d(f), act()]
        if int(pool_size) > 1:
            stem.append(nn.MaxPool3d(int(pool_size)))
        self.stem = nn.Sequential(*stem)
        widths = [f, 2 * f, 4 * f, 8 * f]
        self.stage1 = nn.Sequential(_Block(f, f, 1, act), _Block(f, f, 1, act))
        self.stage2 = nn.Sequential(_Block(f, widths[1], 2, act), _Block(widths[1], widths[1], 1, act))
        self.stage3 = nn.Sequential(_Block(widths[1], widths[2], 2, act), _Block(widths[2], widths[2], 1, act))
        self.att3 = _SelfAttention3d(widths[2])
        self.stage4 = nn.Sequential(_Block(widths[2], widths[3], 2, act), _Block(widths[3], widths[3], 1, act))
        self.att4 = _SelfAttention3d(widths[3])
        self.head = nn.Sequential(nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Linear(widths[3], classes))

    def forward(self, x):
        x = self.stage2(self.stage1(self.stem(x)))
        x = self.att3(self.stage3(x))
        x = self.att4(self.stage4(x))
        return self.head(x)


def resattnet3d(config: dict, volume=CPU_VOLUME) -> ResAttNet3D:
    """The network for a Table 5.1 configuration (keys of :data:`TABLE_5_1_SPACE`)."""
    return ResAttNet3D(kernel_size=config["kernel_size"], stride=config["stride"], padding=config["padding"],
                       pool_size=config.get("pool_size", 1), num_filters=config["num_filters"],
                       activation=config["activation"], volume=tuple(volume))
