"""perfkit.model.forms.costs: the analytic per-sample costs equal what counters on the real PyTorch models report.

Every count is taken on the real model at batch 1 in ``eval()`` mode under ``torch.no_grad()``:
FLOPs from :class:`torch.utils.flop_counter.FlopCounterMode`, activations from forward hooks on
the leaf modules (Σ ``output.numel()`` over every call), parameters from ``n_parameters``.
"""
import re
import subprocess
import sys
import time

import pandas as pd
import pytest

from perfkit.measure.spaces import TABLE_4_1_SPACE, TABLE_5_1_SPACE, check_geometry, sample_configs
from perfkit.model.forms.costs import ACTIVATIONS, CONFIG_KEYS, COST_COLUMNS, NETWORKS, add_costs, network_costs
from perfkit.schema import data_dir, parse_volume


def _measured(name):
    path = data_dir() / "measured" / "pytorch-cpu" / name
    if not path.exists():
        pytest.skip(f"{path} not shipped")
    return pd.read_csv(path)


@pytest.fixture(scope="module")
def ch4():
    return _measured("ch4_lenet5.csv")


@pytest.fixture(scope="module")
def ch5():
    return _measured("ch5_resattnet3d.csv")


# ----------------------------------------------------------------------------------- torch counters
@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    return torch


def _leaves(model):
    return [m for m in model.modules() if next(m.children(), None) is None]


def measure(torch, model, x, mode="eval"):
    """The three counts of ``model`` on input ``x``, from PyTorch's own counters."""
    from torch.utils.flop_counter import FlopCounterMode

    from perfkit.measure.adapters.torch_models import n_parameters

    getattr(model, mode)()
    sizes = []
    hooks = [m.register_forward_hook(lambda mod, inp, out: sizes.append(out.numel())) for m in _leaves(model)]
    try:
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            model(x)
    finally:
        for h in hooks:
            h.remove()
    return {"flops_fwd": counter.get_total_flops(), "activations": sum(sizes), "n_params": n_parameters(model)}


def _ch3(torch, name):
    from perfkit.measure.adapters.torch_models import build_ch3_model

    return build_ch3_model(name)[0], torch.zeros(1, 1, 28, 28)


def _lenet(torch, cfg, batch=1):
    from perfkit.measure.adapters.torch_models import lenet5
    from perfkit.measure.spaces import DATASET_SHAPES

    c, h, w = DATASET_SHAPES[cfg["dataset"]][:3]
    return lenet5(cfg), torch.zeros(batch, c, h, w)


def _resatt(torch, cfg, batch=1):
    from perfkit.measure.adapters.resattnet3d import resattnet3d

    vol = parse_volume(cfg["volume"])
    torch.manual_seed(0)
    return resattnet3d(cfg, volume=vol), torch.zeros(batch, 1, *vol)


# ------------------------------------------------------------------------------------- Chapter 3
@pytest.mark.parametrize("name", ["cnn", "mlp", "ae"])
def test_ch3_models_match_torch(torch, name):
    model, x = _ch3(torch, name)
    assert network_costs(f"ch3_{name}", {}) == measure(torch, model, x)


def test_ch3_phase_table():
    df = _measured("ch3_phases.csv")
    out = add_costs(df, "ch3")
    assert (out.n_params_model == out.n_params).all()
    for name in ("cnn", "mlp", "ae"):
        rows = out[out.model == name]
        assert (rows.flops_fwd == network_costs(f"ch3_{name}", {})["flops_fwd"]).all()


# ------------------------------------------------------------------------------------- Chapter 4
_COVER = ("dataset", "padding", "stride", "kernel_size", "pool_size", "num_filters", "activation")


def _lenet_configs(n=30, seeds=(0, 1, 2)):
    """``n`` sampled configurations covering every level of :data:`_COVER` that the sampler can produce."""
    pool = [c for s in seeds for c in sample_configs(60, seed=s).configs]
    chosen, seen = [], set()
    for cfg in pool:  # first those that add a level not seen yet
        new = {(k, cfg[k]) for k in _COVER} - seen
        if new:
            chosen.append(cfg)
            seen |= new
    chosen += [c for c in pool if c not in chosen][: max(n - len(chosen), 0)]
    return chosen


LENET_CONFIGS = _lenet_configs()


def test_lenet_configs_cover_the_space():
    assert len(LENET_CONFIGS) >= 30
    for key in _COVER:
        assert {c[key] for c in LENET_CONFIGS} == set(TABLE_4_1_SPACE[key]), key


@pytest.mark.parametrize("i", range(len(LENET_CONFIGS)))
def test_lenet5_matches_torch(torch, i):
    cfg = LENET_CONFIGS[i]
    assert network_costs("lenet5", cfg) == measure(torch, *_lenet(torch, cfg)), cfg


def test_ch4_file_parameters(ch4):
    out = add_costs(ch4, "lenet5")
    assert list(out.columns) == list(ch4.columns) + list(COST_COLUMNS)
    assert not set(COST_COLUMNS) & set(ch4.columns)  # a copy: the input is not modified
    assert (out.n_params_model == out.n_params).all()
    assert (out.flops_fwd > 0).all() and (out.activations > 0).all()
    assert all(out[c].dtype == "int64" for c in COST_COLUMNS)


def test_ch4_rows_match_torch(torch, ch4):
    out = add_costs(ch4.iloc[::300], "lenet5")  # 5 rows, through the frame path (numpy ints from the CSV)
    for _, row in out.iterrows():
        got = measure(torch, *_lenet(torch, row.to_dict()))
        assert (row.flops_fwd, row.activations, row.n_params_model) == tuple(got.values())


# ------------------------------------------------------------------------------------- Chapter 5
def _resatt_configs():
    """Every kernel size × padding, num_filters and activation cycling, on small (and odd) volumes."""
    vols = ["16x16x16", "24x28x24", "9x10x11"]
    filters, acts = TABLE_5_1_SPACE["num_filters"], TABLE_5_1_SPACE["activation"]
    out = []
    for i, (k, pad) in enumerate((k, p) for k in TABLE_5_1_SPACE["kernel_size"] for p in TABLE_5_1_SPACE["padding"]):
        out.append({"kernel_size": k, "padding": pad, "stride": 2, "pool_size": 1, "num_filters": filters[i % 3],
                    "activation": acts[i % 3], "volume": vols[i % 3]})
    # beyond Table 5.1: a stem stride of 1 and 3, and a stem max pool
    base = {"kernel_size": 3, "padding": "same", "num_filters": 16, "activation": "relu", "volume": "16x16x16"}
    out += [dict(base, stride=1, pool_size=1), dict(base, stride=3, padding="valid", pool_size=1),
            dict(base, stride=2, pool_size=2, volume="24x28x24")]
    return out


RESATT_CONFIGS = _resatt_configs()


@pytest.mark.parametrize("i", range(len(RESATT_CONFIGS)))
def test_resattnet3d_matches_torch(torch, i):
    cfg = RESATT_CONFIGS[i]
    assert network_costs("resattnet3d", cfg) == measure(torch, *_resatt(torch, cfg)), cfg


def test_ch5_files_parameters(ch5):
    vol = _measured("ch5_volume_scaling.csv")
    for df in (ch5, vol):
        out = add_costs(df, "resattnet3d")
        assert (out.n_params_model == out.n_params).all()
    # the volume changes FLOPs and activations, not the parameters
    out = add_costs(vol, "resattnet3d").groupby(["num_filters", "volume"])[["flops_fwd", "activations"]].first()
    for f in vol.num_filters.unique():
        assert out.loc[f].flops_fwd.is_unique and out.loc[f].activations.is_unique


def test_ch5_row_matches_torch(torch, ch5):
    row = ch5[ch5.num_filters == 16].iloc[0]  # the CPU volume 48x56x48, the smallest width
    got = add_costs(row.to_frame().T.infer_objects(), "resattnet3d").iloc[0]
    assert (got.flops_fwd, got.activations, got.n_params_model) == tuple(measure(torch, *_resatt(torch, row)).values())


# ------------------------------------------------------------------------------- modes and batches
def test_train_mode_counts_the_same(torch):
    # RESATT_CONFIGS[1] (24x28x24): in train mode at batch 1 BatchNorm refuses a 1x1x1 map, as stage 4 of 16x16x16 is
    cfg = RESATT_CONFIGS[1]
    for model, x, costs in [(*_ch3(torch, "cnn"), network_costs("ch3_cnn", {})),
                            (*_resatt(torch, cfg), network_costs("resattnet3d", cfg))]:
        assert measure(torch, model, x, mode="train") == costs


def test_flops_scale_with_batch(torch):
    from perfkit.measure.adapters.torch_models import build_ch3_model

    cases = [(build_ch3_model("cnn")[0], torch.zeros(4, 1, 28, 28), network_costs("ch3_cnn", {})),
             (*_lenet(torch, LENET_CONFIGS[0], batch=4), network_costs("lenet5", LENET_CONFIGS[0])),
             (*_resatt(torch, RESATT_CONFIGS[1], batch=4), network_costs("resattnet3d", RESATT_CONFIGS[1]))]
    for model, x, costs in cases:
        got = measure(torch, model, x)
        assert got["flops_fwd"] == 4 * costs["flops_fwd"]
        assert got["activations"] == 4 * costs["activations"]


# ----------------------------------------------------------------------------------- bad input
def test_unknown_network():
    with pytest.raises(ValueError, match=r"network: expected one of \['lenet5', 'resattnet3d'.*got 'vgg'"):
        network_costs("vgg", {})
    with pytest.raises(ValueError, match="network: .*'ch3'.*got 'vgg'"):
        add_costs(pd.DataFrame({"model": ["cnn"]}), "vgg")


def test_missing_column(ch4):
    with pytest.raises(ValueError, match=r"lenet5: missing column\(s\) \['kernel_size'\]"):
        add_costs(ch4.drop(columns="kernel_size"), "lenet5")
    with pytest.raises(ValueError, match=r"ch3: missing column\(s\) \['model'\]"):
        add_costs(pd.DataFrame({"x": [1]}), "ch3")
    with pytest.raises(ValueError, match="lenet5: num_filters: missing from the configuration"):
        network_costs("lenet5", {k: v for k, v in LENET_CONFIGS[0].items() if k != "num_filters"})


def test_bad_volume_names_the_row(ch5):
    df = ch5.head(5).copy()
    df.loc[3, "volume"] = "48x56"
    with pytest.raises(ValueError, match=r"resattnet3d: row 3: volume: expected DxHxW.*'48x56'"):
        add_costs(df, "resattnet3d")
    df.loc[3, "volume"] = "0x56x48"
    with pytest.raises(ValueError, match="row 3: volume: expected three sizes >= 1"):
        add_costs(df, "resattnet3d")


def test_volume_as_a_list():
    df = pd.DataFrame({"kernel_size": [3, 3], "stride": [2, 2], "padding": ["same", "same"], "num_filters": [16, 16],
                       "volume": [[16, 16, 16], "16x16x16"]})
    out = add_costs(df, "resattnet3d")
    assert out.flops_fwd.nunique() == 1 and out.flops_fwd.iloc[0] > 0


@pytest.mark.parametrize("network, change, match", [
    ("lenet5", {"kernel_size": 0}, "lenet5: kernel_size: expected an integer >= 1, got 0"),
    ("lenet5", {"kernel_size": 2.5}, "kernel_size: expected an integer >= 1, got 2.5"),
    ("lenet5", {"stride": "2"}, "stride: expected an integer >= 1, got '2'"),
    ("lenet5", {"num_filters": True}, "num_filters: expected an integer >= 1, got True"),
    ("lenet5", {"dataset": "imagenet"}, r"lenet5: dataset: expected one of \['cifar10'.*got 'imagenet'"),
    ("lenet5", {"padding": "full"}, "padding: expected one of"),
    ("lenet5", {"activation": "gelu"}, "activation: expected one of"),
    ("lenet5", {"dataset": "mnist", "kernel_size": 5, "pool_size": 5, "stride": 3, "padding": "valid"},
     "lenet5: kernel_size/pool_size/stride/padding: pool1 output 1x1 -> conv2 kernel 5 does not fit"),
    ("resattnet3d", {"volume": "4x4x4", "kernel_size": 5, "padding": "valid"}, "leaves nothing of"),
    ("resattnet3d", {"volume": "3x3x3", "pool_size": 3}, "resattnet3d: pool_size: a 3-voxel pool leaves nothing"),
    ("resattnet3d", {"activation": "elu"}, "resattnet3d: activation"),
    ("resattnet3d", {"volume": "axbxc"}, "volume: expected DxHxW"),
])
def test_bad_configs(network, change, match):
    base = LENET_CONFIGS[0] if network == "lenet5" else RESATT_CONFIGS[0]
    with pytest.raises(ValueError, match=match):
        network_costs(network, dict(base, **change))


def test_refusals_agree_with_the_real_models(torch):
    """Where the real builder refuses (or its forward pass fails), so does the cost model, and vice versa."""
    from perfkit.measure.adapters.resattnet3d import resattnet3d

    for cfg in [dict(RESATT_CONFIGS[0], volume="4x4x4", kernel_size=5, padding="valid"),
                dict(RESATT_CONFIGS[0], volume="3x3x3", pool_size=3)]:
        with pytest.raises((ValueError, RuntimeError)):
            vol = parse_volume(cfg["volume"])
            resattnet3d(cfg, volume=vol)(torch.zeros(1, 1, *vol))
        with pytest.raises(ValueError):
            network_costs("resattnet3d", cfg)
    bad = dict(LENET_CONFIGS[0], dataset="mnist", kernel_size=5, pool_size=5, stride=3, padding="valid")
    assert check_geometry(bad)
    with pytest.raises(ValueError):
        _lenet(torch, bad)
    with pytest.raises(ValueError):
        network_costs("lenet5", bad)


def test_ch3_bad_model_and_frame():
    with pytest.raises(ValueError, match=r"ch3: row 'b': model: expected one of \['cnn', 'mlp', 'ae'\], got 'rnn'"):
        add_costs(pd.DataFrame({"model": ["cnn", "rnn"]}, index=["a", "b"]), "ch3")
    with pytest.raises(ValueError, match="lenet5: frame: expected a pandas DataFrame"):
        add_costs(LENET_CONFIGS[0], "lenet5")
    with pytest.raises(ValueError, match="lenet5: config: expected a dict"):
        network_costs("lenet5", [1, 2])


# --------------------------------------------------------------------------------------- the API
def test_registry_and_keys():
    assert set(NETWORKS) == {"lenet5", "resattnet3d", "ch3_cnn", "ch3_mlp", "ch3_ae"}
    assert set(CONFIG_KEYS) == set(NETWORKS) | {"ch3"}
    for name, fn in NETWORKS.items():
        cfg = {"lenet5": LENET_CONFIGS[0], "resattnet3d": RESATT_CONFIGS[0]}.get(name, {})
        got = fn(cfg)
        assert got == network_costs(name, cfg) and set(got) == {"flops_fwd", "activations", "n_params"}
        assert all(type(v) is int for v in got.values())
    assert set(ACTIVATIONS) == set(TABLE_4_1_SPACE["activation"])


def test_add_costs_is_fast(ch4, ch5):
    for df, network in ((ch4, "lenet5"), (ch5, "resattnet3d")):
        start = time.perf_counter()
        add_costs(df, network)
        assert time.perf_counter() - start < 1.0


def test_no_torch_import():
    code = "import sys, perfkit.model.forms.costs; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("value", [1e12, 1e300])
def test_a_configuration_whose_costs_overflow_names_the_row(ch4, value):
    df = ch4.head(4).astype({"num_filters": float})
    df.loc[df.index[2], "num_filters"] = value
    with pytest.raises(ValueError, match=rf"lenet5: row {df.index[2]!r}: the configuration \(.*num_filters={re.escape(repr(value))}.*\) "
                                         r"gives a cost beyond 2\*\*63"):
        add_costs(df, "lenet5")
