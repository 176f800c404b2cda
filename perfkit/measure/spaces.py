"""The measured spaces (Tables 4.1 and 5.1) and the configuration sampler with geometry rejection.

The thesis varies ten intrinsic hyperparameters of LeNet-5 and two extrinsic
scaling factors (its Table 4.1). :func:`sample_configs` draws configurations
from that space with a seed and rejects, *before anything runs*, those whose
feature maps collapse to nothing; the reasons are counted so a report can say
how much of the space is infeasible and why.

Architecture (the thesis does not list the layers; this is the classic
LeNet-5 layout with Table 4.1's knobs, documented in docs/measuring.md)::

    conv(k, F filters, stride s, padding) -> act -> maxpool(p)
    conv(k, 2F filters, stride s, padding) -> act -> maxpool(p)
    flatten -> dense 120 -> act -> dropout(d) -> dense 84 -> act -> dropout(d) -> dense 10

Padding follows Keras: ``"valid"`` adds none, ``"same"`` pads so that the
output is ``ceil(H / s)``. Pooling uses stride = pool size and floors.

Examples
--------
>>> geometry({"dataset": "mnist", "kernel_size": 5, "pool_size": 2, "stride": 1, "padding": "valid"})
[(1, 28, 28), (4, 24, 24), (4, 12, 12), (8, 8, 8), (8, 4, 4)]
>>> check_geometry({"dataset": "mnist", "kernel_size": 5, "pool_size": 5, "stride": 3, "padding": "valid"})
'pool1 output 1x1 -> conv2 kernel 5 does not fit'
"""
from __future__ import annotations

import math
import random
from collections import Counter

from ..schema import EXTRINSIC, INTRINSIC

__all__ = ["TABLE_4_1_SPACE", "TABLE_5_1_SPACE", "DATASET_SHAPES", "geometry", "check_geometry",
           "sample_configs", "sample_space", "SampleReport"]

#: Table 4.1's values. Extrinsic factors: ``workers`` (the thesis's GPUs) and the per-worker ``batch_size``.
TABLE_4_1_SPACE: dict[str, list] = {
    "kernel_size": [2, 3, 4, 5],
    "pool_size": [2, 3, 4, 5],
    "activation": ["relu", "tanh", "sigmoid"],
    "optimizer": ["adam", "sgd"],
    "dataset": ["mnist", "fashion_mnist", "cifar10"],
    "num_filters": [4, 8, 16, 32, 64],
    "learning_rate": [0.1, 0.01, 0.001, 1e-4, 1e-5, 1e-6],
    "padding": ["valid", "same"],
    "stride": [1, 2, 3],
    "dropout": [0.2, 0.5, 0.8],
    "workers": [1, 2, 3],
    "batch_size": [8, 16, 32, 64, 128],
}
#: Table 5.1 (thesis): the Chapter 5 space of 3D-ResAttNet-18 configurations
TABLE_5_1_SPACE: dict[str, list] = {
    "kernel_size": [2, 3, 4, 5],
    "pool_size": [1],
    "activation": ["relu", "tanh", "sigmoid"],
    "optimizer": ["adam", "sgd"],
    "num_filters": [16, 32, 64],
    "learning_rate": [0.1, 0.01, 0.001, 1e-4, 1e-5, 1e-6],
    "padding": ["valid", "same"],
    "stride": [2],
    "workers": [1, 2, 3],
    "batch_size": [1, 2, 3, 4],
}

#: (channels, height, width, training images, classes)
DATASET_SHAPES = {
    "mnist": (1, 28, 28, 60000, 10),
    "fashion_mnist": (1, 28, 28, 60000, 10),
    "cifar10": (3, 32, 32, 50000, 10),
}


def _conv_out(h: int, k: int, s: int, padding: str) -> int:
    if padding == "same":
        return math.ceil(h / s)
    return (h - k) // s + 1 if h >= k else 0


def same_padding(h: int, k: int, s: int) -> tuple[int, int]:
    """Keras ``"same"`` padding (before, after) for size ``h``, kernel ``k``, stride ``s``."""
    out = math.ceil(h / s)
    total = max((out - 1) * s + k - h, 0)
    return total // 2, total - total // 2


def _walk(config: dict):
    """Yield (stage, shape) or raise ValueError with the collapse reason."""
    if config.get("dataset") not in DATASET_SHAPES:
        raise KeyError(f"dataset: expected one of {sorted(DATASET_SHAPES)}, got {config.get('dataset')!r}")
    c, h, w, _, _ = DATASET_SHAPES[config["dataset"]]
    k, p, s = int(config["kernel_size"]), int(config["pool_size"]), int(config["stride"])
    pad = config["padding"]
    if pad not in ("valid", "same"):
        raise KeyError(f"padding: expected 'valid' or 'same', got {pad!r}")
    f = int(config.get("num_filters", 4))
    shapes = [(c, h, w)]
    where = "input"
    for i, filters in ((1, f), (2, 2 * f)):
        if pad == "valid" and min(h, w) < k:
            raise ValueError(f"{where} output {h}x{w} -> conv{i} kernel {k} does not fit")
        h, w = _conv_out(h, k, s, pad), _conv_out(w, k, s, pad)
        shapes.append((filters, h, w))
        if min(h, w) < p:
            raise ValueError(f"conv{i} output {h}x{w} -> pool{i} size {p} leaves nothing")
        h, w = h // p, w // p
        shapes.append((filters, h, w))
        where = f"pool{i}"
    return shapes


def geometry(config: dict) -> list[tuple[int, int, int]]:
    """Feature-map shapes (C, H, W): input, conv1, pool1, conv2, pool2.

    ``num_filters`` defaults to 4 when absent. Raises ``ValueError`` naming the
    stage that collapses.
    """
    return _walk(config)


def check_geometry(config: dict) -> str | None:
    """``None`` when the configuration is feasible, else the reason it collapses."""
    try:
        _walk(config)
    except ValueError as exc:
        return str(exc)
    return None


def _reason_key(reason: str) -> str:
    # "conv1 output 2x2 -> pool1 size 3 leaves nothing" -> "pool1 leaves nothing"
    words = reason.split(" -> ")[-1].split()
    return f"{words[0]} {' '.join(words[3:]) if words[0].startswith('pool') else 'kernel does not fit'}"


class SampleReport:
    """The accepted configurations and the rejection counts of one sampling run."""

    def __init__(self, configs: list[dict], rejected: Counter, seed: int):
        self.configs = configs
        self.rejected = rejected
        self.seed = seed

    @property
    def n_drawn(self) -> int:
        return len(self.configs) + sum(self.rejected.values())

    def summary(self) -> str:
        lines = [f"{len(self.configs)} accepted of {self.n_drawn} drawn (seed {self.seed}); "
                 f"{sum(self.rejected.values())} rejected before running:"]
        lines += [f"  {n:5d}  {why}" for why, n in self.rejected.most_common()]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"seed": self.seed, "accepted": len(self.configs), "drawn": self.n_drawn,
                "rejected": dict(self.rejected.most_common())}


def sample_space(n: int, seed: int = 0, space: dict | None = None, check=None) -> SampleReport:
    """Draw ``n`` configurations uniformly from ``space``; ``check(config)`` returns a rejection reason or None."""
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n: expected a non-negative integer, got {n!r}")
    if not space:
        raise ValueError("space: empty")
    for key, values in space.items():
        if not values:
            raise ValueError(f"space[{key!r}]: no values to draw from")
    rng = random.Random(seed)
    configs: list[dict] = []
    rejected: Counter = Counter()
    while len(configs) < n:
        cfg = {key: rng.choice(list(values)) for key, values in space.items()}
        why = check(cfg) if check else None
        if why is None:
            configs.append(cfg)
        else:
            rejected[_reason_key(why)] += 1
        if sum(rejected.values()) > 1000 * (n + 1):
            raise ValueError("space: almost every configuration collapses; check kernel, pool and stride values")
    return SampleReport(configs, rejected, seed)


def sample_configs(n: int, seed: int = 0, space: dict | None = None) -> SampleReport:
    """Draw ``n`` feasible configurations uniformly from Table 4.1, with ``seed``.

    Each configuration is a dict with every key of ``space`` (default
    :data:`TABLE_4_1_SPACE`). The sequence depends only on ``seed`` and
    ``space``, so configuration ``i`` is the same in every run: collections
    resume by index.

    Examples
    --------
    >>> rep = sample_configs(3, seed=1)
    >>> len(rep.configs), sorted(rep.configs[0]) == sorted(TABLE_4_1_SPACE)
    (3, True)
    >>> sample_configs(3, seed=1).configs == rep.configs
    True
    """
    return sample_space(n, seed=seed, space=dict(TABLE_4_1_SPACE if space is None else space), check=check_geometry)
