"""Table 4.1 sampler, geometry rejection and the real-file loaders (on tiny files written here)."""
import gzip
import pickle
import struct

import numpy as np
import pytest

from perfkit.measure import imagedata
from perfkit.measure.spaces import TABLE_4_1_SPACE, check_geometry, geometry, same_padding, sample_configs

BASE = {"dataset": "mnist", "kernel_size": 3, "pool_size": 2, "stride": 1, "padding": "valid", "num_filters": 8}


def test_geometry_valid_and_same():
    assert geometry(BASE) == [(1, 28, 28), (8, 26, 26), (8, 13, 13), (16, 11, 11), (16, 5, 5)]
    same = dict(BASE, padding="same", stride=2, dataset="cifar10")
    # Keras "same": ceil(32/2) = 16 -> pool 8 -> ceil(8/2) = 4 -> pool 2
    assert geometry(same) == [(3, 32, 32), (8, 16, 16), (8, 8, 8), (16, 4, 4), (16, 2, 2)]
    assert same_padding(32, 3, 2) == (0, 1) and same_padding(28, 4, 1) == (1, 2)


@pytest.mark.parametrize("cfg, stage", [
    (dict(BASE, kernel_size=5, pool_size=5, stride=3), "conv2 kernel 5 does not fit"),
    (dict(BASE, pool_size=3, stride=2), "pool2 size 3 leaves nothing"),
    (dict(BASE, padding="same", stride=3, pool_size=5), "pool2 size 5 leaves nothing"),
])
def test_impossible_geometry_is_rejected_with_its_reason(cfg, stage):
    why = check_geometry(cfg)
    assert why is not None and why.endswith(stage)
    with pytest.raises(ValueError, match=stage):
        geometry(cfg)


def test_sampler_is_seeded_counts_rejections_and_never_returns_a_collapsing_config():
    rep = sample_configs(200, seed=3)
    assert len(rep.configs) == 200
    assert all(check_geometry(c) is None for c in rep.configs)
    assert all(c[k] in v for c in rep.configs for k, v in TABLE_4_1_SPACE.items())
    assert sum(rep.rejected.values()) > 0 and rep.n_drawn == 200 + sum(rep.rejected.values())
    assert set(rep.rejected) <= {"pool1 leaves nothing", "pool2 leaves nothing", "conv1 kernel does not fit",
                                 "conv2 kernel does not fit"}
    assert "rejected before running" in rep.summary()
    again = sample_configs(250, seed=3)
    assert again.configs[:200] == rep.configs  # a longer run extends the same sequence (resume by index)
    assert sample_configs(200, seed=4).configs != rep.configs


def test_sampler_rejects_bad_arguments():
    with pytest.raises(ValueError, match="n: expected"):
        sample_configs(-1)
    with pytest.raises(ValueError, match=r"space\['workers'\]"):
        sample_configs(1, space=dict(TABLE_4_1_SPACE, workers=[]))


def _idx_bytes(arr: np.ndarray) -> bytes:
    return struct.pack(">BBBB", 0, 0, 0x08, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape) + arr.tobytes()


@pytest.mark.parametrize("compressed", [False, True])
def test_mnist_idx_loader_on_tiny_files(tmp_path, compressed):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8)
    labels = np.array([3, 1, 4, 1, 5], dtype=np.uint8)
    for stem, arr in (("train-images-idx3-ubyte", images), ("train-labels-idx1-ubyte", labels)):
        data = _idx_bytes(arr)
        if compressed:
            (tmp_path / f"{stem}.gz").write_bytes(gzip.compress(data))
        else:
            (tmp_path / stem).write_bytes(data)
    x, y = imagedata.load_mnist(tmp_path)
    assert x.shape == (5, 1, 28, 28) and x.dtype == np.uint8
    np.testing.assert_array_equal(x[:, 0], images)
    np.testing.assert_array_equal(y, labels)
    x2, _ = imagedata.load_images("fashion_mnist", root=tmp_path)
    np.testing.assert_array_equal(x2, x)


def test_idx_loader_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad"
    bad.write_bytes(b"\x01\x02\x08\x01" + b"\x00" * 8)
    with pytest.raises(ValueError, match="not an IDX file"):
        imagedata.read_idx(bad)
    short = tmp_path / "short"
    short.write_bytes(struct.pack(">BBBB", 0, 0, 8, 1) + struct.pack(">I", 10) + b"\x00" * 3)
    with pytest.raises(ValueError, match=r"declares \(10,\)"):
        imagedata.read_idx(short)
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        imagedata.load_mnist(tmp_path)


def _cifar_records(n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(n, 3072), dtype=np.uint8), rng.integers(0, 10, size=n).astype(np.uint8)


def test_cifar10_binary_and_python_batches_on_tiny_files(tmp_path):
    binary, python = tmp_path / "bin", tmp_path / "py"
    binary.mkdir()
    python.mkdir()
    want_x, want_y = [], []
    for i in range(1, 6):
        data, labels = _cifar_records(2, i)
        want_x.append(data)
        want_y.append(labels)
        (binary / f"data_batch_{i}.bin").write_bytes(np.concatenate([labels[:, None], data], axis=1).tobytes())
        with open(python / f"data_batch_{i}", "wb") as fh:
            pickle.dump({b"data": data, b"labels": labels.tolist(), b"batch_label": b"x"}, fh)
    for root in (binary, python):
        x, y = imagedata.load_cifar10(root)
        assert x.shape == (10, 3, 32, 32)
        np.testing.assert_array_equal(x.reshape(10, -1), np.concatenate(want_x))
        np.testing.assert_array_equal(y, np.concatenate(want_y))


def test_cifar10_python_loader_refuses_code(tmp_path):
    class Evil:
        def __reduce__(self):
            import os

            return (os.system, ("echo pwned",))

    for i in range(1, 6):
        with open(tmp_path / f"data_batch_{i}", "wb") as fh:
            pickle.dump({b"data": Evil(), b"labels": []}, fh)
    with pytest.raises(pickle.UnpicklingError, match="system"):
        imagedata.load_cifar10(tmp_path)


def test_cifar10_binary_size_is_checked(tmp_path):
    for i in range(1, 6):
        (tmp_path / f"data_batch_{i}.bin").write_bytes(b"\x00" * 3000)
    with pytest.raises(ValueError, match="multiple of a CIFAR-10 record"):
        imagedata.load_cifar10(tmp_path)


def test_synthetic_images_have_the_real_sizes():
    x, y = imagedata.synthetic_images("mnist")
    assert x.shape == (60000, 1, 28, 28) and y.max() < 10
    with pytest.raises(ValueError, match="dataset"):
        imagedata.synthetic_images("imagenet")
