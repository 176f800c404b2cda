"""Analytic costs of every network the harness trains: forward FLOPs, activations and parameters per sample.

The measured step times of Chapters 3-5 depend on the configuration only through
the network it builds. This module counts, without building it (pure Python: no
PyTorch), three sizes of that network for **one sample** (batch 1), each equal
to what a counter on the real model (:mod:`perfkit.measure.adapters`) gives:

``flops_fwd``
    Forward floating-point operations exactly as
    :class:`torch.utils.flop_counter.FlopCounterMode` counts them: 2 × the
    multiply-accumulates of every convolution (``2·C_out·(C_in/groups)·Πk·Πout``),
    linear layer (``2·n_in·n_out``) and matrix product (``torch.bmm`` in the
    ResAttNet self-attention: ``2·b·n·m·p``) and *nothing else*: biases,
    normalisation, activations, pooling, softmax, padding, dropout and the
    residual additions count 0. The count is the same in ``train()`` and
    ``eval()`` mode and scales linearly with the batch.
``activations``
    Σ, over every *call* of every *leaf module* (a module without submodules)
    in one forward pass at batch 1, of the number of elements of its output
    tensor: what ``register_forward_hook`` on the leaf modules sees.
    Convolutions, linear layers, normalisation, activations, pooling, padding
    (``ZeroPad2d``/``ConstantPad3d``, even when it pads nothing), dropout,
    ``Flatten`` and ``Identity`` each count their output, also when it is the
    input itself or a view of it; a module called twice (the activation that a
    ResAttNet residual block applies twice) counts twice. The input tensor and
    operations that are not modules (residual additions, the attention's
    ``bmm``/``softmax``/γ-scaling) do not count. It is the same in both modes.
``n_params``
    Trainable parameters (weights, biases, BatchNorm's γ and β, the attention's
    γ), equal to :func:`perfkit.measure.adapters.torch_models.n_parameters`.

:data:`NETWORKS` maps each network name to its cost function ``f(config) -> dict``;
:data:`CONFIG_KEYS` says which configuration keys (frame columns) it reads;
:func:`network_costs` computes one configuration and :func:`add_costs` a whole
measured table, once per distinct configuration. Only the keys that shape the
network are read (``optimizer``, ``learning_rate``, ``dropout`` are not), and
``activation``, which changes no count, is only checked when given. Bad input
gets one ``ValueError`` naming the network, the key or column and, in a table,
the row.

Networks (the layer lists are those of the harness, see the adapters):

``lenet5``
    the Table 4.1 LeNet-5 of :func:`~perfkit.measure.adapters.torch_models.lenet5`;
    its feature-map sizes come from :func:`perfkit.measure.spaces.geometry`, which
    also rejects the configurations whose maps collapse.
``resattnet3d``
    the Chapter 5 3D-ResAttNet-18 of
    :func:`~perfkit.measure.adapters.resattnet3d.resattnet3d` on a single-channel
    ``volume`` (``"DxHxW"`` or three sizes; the harness's CPU data use 48x56x48).
``ch3_cnn``, ``ch3_mlp``, ``ch3_ae``
    the fixed Chapter 3 models of
    :func:`~perfkit.measure.adapters.torch_models.build_ch3_model` on a 1×28×28
    MNIST image; they read no key. :func:`add_costs` also takes ``"ch3"`` for a
    Chapter 3 phase table, whose ``model`` column (``cnn``, ``mlp``, ``ae``)
    names the network of each row.

Examples
--------
>>> network_costs("ch3_mlp", {})
{'flops_fwd': 1337344, 'activations': 3866, 'n_params': 669706}
>>> cfg = {"dataset": "mnist", "kernel_size": 5, "pool_size": 2, "stride": 1, "padding": "valid", "num_filters": 4}
>>> network_costs("lenet5", cfg)["n_params"]
27406
>>> network_costs("lenet5", dict(cfg, pool_size=5, stride=3))
Traceback (most recent call last):
...
ValueError: lenet5: kernel_size/pool_size/stride/padding: pool1 output 1x1 -> conv2 kernel 5 does not fit
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np

from ...measure.spaces import DATASET_SHAPES, geometry, same_padding
from ...schema import parse_volume
from ..validation import plain_value

__all__ = ["NETWORKS", "CONFIG_KEYS", "COST_COLUMNS", "CH3_INPUT", "ACTIVATIONS", "network_costs", "add_costs"]

#: Columns :func:`add_costs` adds: ``n_params_model`` so as not to clash with a measured ``n_params`` column.
COST_COLUMNS = ("flops_fwd", "activations", "n_params_model")
#: Input (C, H, W) of the Chapter 3 models: one MNIST image.
CH3_INPUT = (1, 28, 28)
#: Activations the harness's models accept.
ACTIVATIONS = ("relu", "tanh", "sigmoid")
_PADDINGS = ("valid", "same")
_MISSING = object()


# ------------------------------------------------------------------------------- reading a config
def _get(config: Mapping, key: str, default=_MISSING):
    if key in config:
        return config[key]
    if default is _MISSING:
        raise ValueError(f"{key}: missing from the configuration (it has {sorted(map(str, config))})")
    return default


def _int(config: Mapping, key: str, default=_MISSING) -> int:
    """An integer >= 1; whole floats (a CSV column with gaps) are accepted, bools and strings are not."""
    value = _get(config, key, default)
    ok = not isinstance(value, bool) and isinstance(value, numbers.Real)
    if not (ok and math.isfinite(value) and float(value).is_integer() and value >= 1):
        raise ValueError(f"{key}: expected an integer >= 1, got {value!r}")
    return int(value)


def _choice(config: Mapping, key: str, choices, default=_MISSING):
    value = _get(config, key, default)
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{key}: expected one of {list(choices)}, got {value!r}")
    return value


def _volume(config: Mapping) -> tuple[int, int, int]:
    sizes = parse_volume(_get(config, "volume"), name="volume")
    if min(sizes) < 1:
        raise ValueError(f"volume: expected three sizes >= 1 (DxHxW), got {_get(config, 'volume')!r}")
    return tuple(sizes)


# ------------------------------------------------------------------------------------- the tally
class _Tally:
    """Running totals of one forward pass at batch 1, fed leaf module by leaf module."""

    def __init__(self):
        self.flops = self.activations = self.params = 0

    def conv(self, c_in: int, c_out: int, kernel, out, bias: bool = True):
        """A convolution with kernel sizes ``kernel`` giving spatial sizes ``out``."""
        k, n = math.prod(kernel), math.prod(out)
        self.flops += 2 * c_out * c_in * k * n
        self.params += c_out * c_in * k + (c_out if bias else 0)
        self.activations += c_out * n

    def linear(self, n_in: int, n_out: int):
        self.flops += 2 * n_in * n_out
        self.params += n_in * n_out + n_out
        self.activations += n_out

    def batchnorm(self, channels: int, out):
        self.params += 2 * channels
        self.activations += channels * math.prod(out)

    def leaf(self, numel: int):
        """A leaf module without parameters or counted FLOPs (activation, pooling, padding, dropout, ...)."""
        self.activations += numel

    def bmm(self, b: int, n: int, m: int, p: int):
        """``torch.bmm`` of (b, n, m) by (b, m, p): FLOPs only, it is no module."""
        self.flops += 2 * b * n * m * p

    def costs(self) -> dict:
        return {"flops_fwd": int(self.flops), "activations": int(self.activations), "n_params": int(self.params)}


def _dense_chain(t: _Tally, sizes, after) -> None:
    """Linear layers ``sizes[0] → sizes[1] → ...``; ``after[i]`` leaf modules follow layer i (activation, dropout)."""
    for n_in, n_out, extra in zip(sizes[:-1], sizes[1:], after):
        t.linear(n_in, n_out)
        for _ in range(extra):
            t.leaf(n_out)


# --------------------------------------------------------------------------------------- networks
def _lenet5(config: Mapping) -> dict:
    dataset = _choice(config, "dataset", sorted(DATASET_SHAPES))
    k, p, s = _int(config, "kernel_size"), _int(config, "pool_size"), _int(config, "stride")
    f = _int(config, "num_filters")
    pad = _choice(config, "padding", _PADDINGS)
    if "activation" in config:
        _choice(config, "activation", ACTIVATIONS)
    try:
        shapes = geometry({"dataset": dataset, "kernel_size": k, "pool_size": p, "stride": s, "padding": pad,
                           "num_filters": f})
    except ValueError as exc:
        raise ValueError(f"kernel_size/pool_size/stride/padding: {exc}") from None
    t = _Tally()
    # input -> conv1 -> pool1 -> conv2 -> pool2, each conv (after its ZeroPad2d for "same") -> act -> maxpool
    for (c_in, h, w), (c_out, ho, wo), (_, hp, wp) in (shapes[0:3], shapes[2:5]):
        if pad == "same":
            t.leaf(c_in * (h + sum(same_padding(h, k, s))) * (w + sum(same_padding(w, k, s))))
        t.conv(c_in, c_out, (k, k), (ho, wo))
        t.leaf(c_out * ho * wo)  # activation
        t.leaf(c_out * hp * wp)  # max pool
    c2, h2p, w2p = shapes[4]
    t.leaf(c2 * h2p * w2p)  # flatten
    _dense_chain(t, (c2 * h2p * w2p, 120, 84, DATASET_SHAPES[dataset][4]), after=(2, 2, 0))
    return t.costs()


def _res_block(t: _Tally, c_in: int, c_out: int, stride: int, size):
    """A basic residual block; returns its output spatial sizes."""
    out = [(n - 1) // stride + 1 for n in size]  # 3×3×3 with padding 1 and 1×1×1 without: the same size
    n = math.prod(out)
    t.conv(c_in, c_out, (3, 3, 3), out, bias=False)
    t.batchnorm(c_out, out)
    t.leaf(c_out * n)  # act
    t.conv(c_out, c_out, (3, 3, 3), out, bias=False)
    t.batchnorm(c_out, out)
    if stride != 1 or c_in != c_out:
        t.conv(c_in, c_out, (1, 1, 1), out, bias=False)
        t.batchnorm(c_out, out)
    else:
        t.leaf(c_out * n)  # nn.Identity shortcut
    t.leaf(c_out * n)  # the same act module, called again after the addition
    return out


def _self_attention(t: _Tally, c: int, size) -> None:
    n, cq = math.prod(size), max(c // 8, 1)
    t.conv(c, cq, (1, 1, 1), size)  # query
    t.conv(c, cq, (1, 1, 1), size)  # key
    t.conv(c, c, (1, 1, 1), size)  # value
    t.bmm(1, n, cq, n)  # QᵀK: (n, c') @ (c', n)
    t.bmm(1, c, n, n)  # V · attᵀ: (c, n) @ (n, n)
    t.params += 1  # γ


def _resattnet3d(config: Mapping) -> dict:
    k, s, f = _int(config, "kernel_size"), _int(config, "stride"), _int(config, "num_filters")
    pool = _int(config, "pool_size", 1)
    pad = _choice(config, "padding", _PADDINGS)
    if "activation" in config:
        _choice(config, "activation", ACTIVATIONS)
    volume = _volume(config)
    t = _Tally()
    if pad == "same":
        t.leaf(math.prod(n + sum(same_padding(n, k, s)) for n in volume))  # ConstantPad3d
        size = [math.ceil(n / s) for n in volume]
    else:
        size = [(n - k) // s + 1 for n in volume]
    if min(size) < 1:
        raise ValueError(f"kernel_size/stride: a {k}-voxel kernel with stride {s} leaves nothing of {volume}")
    t.conv(1, f, (k, k, k), size, bias=False)
    t.batchnorm(f, size)
    t.leaf(f * math.prod(size))  # act
    if pool > 1:
        size = [n // pool for n in size]
        if min(size) < 1:
            raise ValueError(f"pool_size: a {pool}-voxel pool leaves nothing of the stem's output of {volume}")
        t.leaf(f * math.prod(size))
    c = f
    for stage, width in enumerate((f, 2 * f, 4 * f, 8 * f)):
        for block in range(2):
            size = _res_block(t, c, width, 2 if stage and not block else 1, size)
            c = width
        if stage >= 2:  # attention after stages 3 and 4
            _self_attention(t, c, size)
    t.leaf(c)  # global average pool
    t.leaf(c)  # flatten
    t.linear(c, 3)
    return t.costs()


def _ch3_cnn(config: Mapping) -> dict:
    c, h, w = CH3_INPUT
    t = _Tally()
    for c_in, c_out in ((c, 32), (32, 64)):
        h, w = h - 2, w - 2
        t.conv(c_in, c_out, (3, 3), (h, w))
        t.leaf(c_out * h * w)  # relu
    flat = 64 * (h // 2) * (w // 2)
    t.leaf(flat)  # max pool
    t.leaf(flat)  # dropout
    t.leaf(flat)  # flatten
    _dense_chain(t, (flat, 128, 10), after=(2, 0))
    return t.costs()


def _ch3_mlp(config: Mapping) -> dict:
    t = _Tally()
    t.leaf(math.prod(CH3_INPUT))  # flatten
    _dense_chain(t, (math.prod(CH3_INPUT), 512, 512, 10), after=(2, 2, 0))
    return t.costs()


def _ch3_ae(config: Mapping) -> dict:
    t = _Tally()
    t.leaf(math.prod(CH3_INPUT))  # flatten
    _dense_chain(t, (math.prod(CH3_INPUT), 256, 64, 256, 784), after=(1, 1, 1, 1))
    return t.costs()


_CH3 = {"cnn": "ch3_cnn", "mlp": "ch3_mlp", "ae": "ch3_ae"}


def _ch3_by_model(config: Mapping) -> dict:
    """A Chapter 3 phase-table row: its ``model`` column names the network."""
    return _RAW[_CH3[_choice(config, "model", list(_CH3))]](config)


# --------------------------------------------------------------------------------------- registry
def _named(name: str, fn):
    """``fn`` behind the checks every network shares, its errors prefixed with the network's name."""

    def costs(config: Mapping) -> dict:
        if not isinstance(config, Mapping):
            raise ValueError(f"{name}: config: expected a dict, got {type(config).__name__}")
        try:
            return fn(config)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None

    costs.__name__ = costs.__qualname__ = f"{name}_costs"
    costs.__doc__ = f"Per-sample ``flops_fwd``, ``activations`` and ``n_params`` of ``{name}`` for ``config``."
    return costs


_RAW = {"lenet5": _lenet5, "resattnet3d": _resattnet3d, "ch3_cnn": _ch3_cnn, "ch3_mlp": _ch3_mlp, "ch3_ae": _ch3_ae,
        "ch3": _ch3_by_model}
#: network name → ``f(config) -> {"flops_fwd", "activations", "n_params"}`` (ints, batch 1)
NETWORKS = {name: _named(name, fn) for name, fn in _RAW.items() if name != "ch3"}
#: network name (and ``"ch3"``, a phase table) → (required keys, optional keys) its cost function reads
CONFIG_KEYS = {
    "lenet5": (("dataset", "kernel_size", "pool_size", "stride", "padding", "num_filters"), ("activation",)),
    "resattnet3d": (("kernel_size", "stride", "padding", "num_filters", "volume"), ("pool_size", "activation")),
    "ch3_cnn": ((), ()),
    "ch3_mlp": ((), ()),
    "ch3_ae": ((), ()),
    "ch3": (("model",), ()),
}


def _check_network(network, known) -> None:
    if not isinstance(network, str) or network not in known:
        raise ValueError(f"network: expected one of {list(known)}, got {network!r}")


def network_costs(network: str, config: Mapping) -> dict:
    """``{"flops_fwd", "activations", "n_params"}`` of one sample of ``network`` built from ``config``.

    ``network`` is a key of :data:`NETWORKS`; ``config`` a dict with (at least)
    the keys :data:`CONFIG_KEYS` lists for it. Raises one ``ValueError`` naming the
    network and the key at fault.
    """
    _check_network(network, NETWORKS)
    return NETWORKS[network](config)


def add_costs(frame, network: str):
    """A copy of ``frame`` with the per-sample costs (batch 1) of each row's network in :data:`COST_COLUMNS`.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per configuration, with the columns :data:`CONFIG_KEYS` lists
        for ``network`` (a ``ch4``/``ch5`` file, say); other columns are kept.
    network : str
        A key of :data:`NETWORKS`, or ``"ch3"`` for a Chapter 3 phase table
        whose ``model`` column names the network of each row.

    Returns
    -------
    pandas.DataFrame
        ``frame`` copied, plus int64 columns ``flops_fwd``, ``activations`` and
        ``n_params_model`` (named so as not to clash with a measured
        ``n_params``). Each distinct configuration is computed once.

    Raises
    ------
    ValueError
        For an unknown network, a missing column, a row whose configuration the
        real model would refuse (the message names the network, column and row), or
        one whose costs overflow int64.
    """
    import pandas as pd

    _check_network(network, _RAW)
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{network}: frame: expected a pandas DataFrame, got {type(frame).__name__}")
    required, optional = CONFIG_KEYS[network]
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ValueError(f"{network}: missing column(s) {missing}; the frame has {list(frame.columns)}")
    keys = list(required) + [c for c in optional if c in frame.columns]
    fn = _RAW[network]
    rows = zip(*(frame[c].tolist() for c in keys)) if keys else [()] * len(frame)
    out = np.empty((len(frame), 3), dtype=np.int64)
    cache: dict = {}
    for i, values in enumerate(rows):
        try:
            hit, hashable = cache.get(values), True
        except TypeError:  # a list in a cell (a volume, say): computed, not cached
            hit, hashable = None, False
        if hit is None:
            try:
                costs = fn(dict(zip(keys, values)))
            except ValueError as exc:
                raise ValueError(f"{network}: row {plain_value(frame.index[i])!r}: {exc}") from None
            hit = (costs["flops_fwd"], costs["activations"], costs["n_params"])
            if hashable:
                cache[values] = hit
        try:
            out[i] = hit
        except OverflowError:  # a cost beyond 2**63: no network of this configuration can be built or timed
            shown = ", ".join(f"{k}={v!r}" for k, v in zip(keys, values))
            raise ValueError(f"{network}: row {plain_value(frame.index[i])!r}: the configuration ({shown}) gives a "
                             "cost beyond 2**63 (flops, activations or parameters of one sample): too large to be a "
                             "network that was measured") from None
    result = frame.copy()
    for j, col in enumerate(COST_COLUMNS):
        result[col] = out[:, j]
    return result
