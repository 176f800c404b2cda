"""Training images for the harness: synthetic tensors of the real shapes, or the real files.

Timing does not depend on pixel values, so by default the harness trains on
uniformly random ``uint8`` images and labels with the real datasets' shapes and
training-set sizes (MNIST and Fashion-MNIST: 60 000 × 1×28×28; CIFAR-10:
50 000 × 3×32×32). When a user points ``root`` at the real files, they are read
instead:

* MNIST / Fashion-MNIST: ``train-images-idx3-ubyte`` and
  ``train-labels-idx1-ubyte`` (optionally ``.gz``), the IDX format of
  LeCun et al.;
* CIFAR-10: the binary version's ``data_batch_1.bin`` … ``data_batch_5.bin``
  (one label byte then 3072 pixel bytes per record), or the Python version's
  ``data_batch_1`` … ``data_batch_5``, read with a restricted unpickler that
  only admits NumPy arrays, dicts, lists, strings and bytes.

Every loader returns ``(images, labels)``: ``uint8`` arrays of shape
(N, C, H, W) and (N,).
"""
from __future__ import annotations

import gzip
import io
import pickle
import struct
from pathlib import Path

import numpy as np

from .spaces import DATASET_SHAPES

__all__ = ["synthetic_images", "synthetic_volumes", "read_idx", "load_mnist", "load_cifar10", "load_images"]

_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def synthetic_images(dataset: str, seed: int = 0, n: int | None = None):
    """Random ``uint8`` images and labels with ``dataset``'s shape and (by default) training-set size.

    Examples
    --------
    >>> x, y = synthetic_images("cifar10", n=4)
    >>> x.shape, x.dtype, y.shape
    ((4, 3, 32, 32), dtype('uint8'), (4,))
    """
    if dataset not in DATASET_SHAPES:
        raise ValueError(f"dataset: expected one of {sorted(DATASET_SHAPES)}, got {dataset!r}")
    c, h, w, n_train, classes = DATASET_SHAPES[dataset]
    n = n_train if n is None else int(n)
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(n, c, h, w), dtype=np.uint8), rng.integers(0, classes, size=n, dtype=np.uint8)


def synthetic_volumes(n: int, volume, seed: int = 0, classes: int = 3):
    """Random single-channel ``uint8`` volumes (n, 1, D, H, W) and labels: the shape of registered T1 scans.

    Examples
    --------
    >>> x, y = synthetic_volumes(2, (8, 9, 10))
    >>> x.shape, int(y.max()) < 3
    ((2, 1, 8, 9, 10), True)
    """
    d, h, w = (int(v) for v in volume)
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 256, size=(int(n), 1, d, h, w), dtype=np.uint8),
            rng.integers(0, classes, size=int(n), dtype=np.uint8))


def _open(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def read_idx(path) -> np.ndarray:
    """Read one IDX file (optionally gzip-compressed) into an array of its declared shape."""
    path = Path(path)
    with _open(path) as fh:
        head = fh.read(4)
        if len(head) != 4 or head[0] != 0 or head[1] != 0:
            raise ValueError(f"{path}: not an IDX file (bad magic number {head.hex()})")
        dtype, ndim = head[2], head[3]
        if dtype not in _IDX_TYPES:
            raise ValueError(f"{path}: unknown IDX data type 0x{dtype:02x}")
        dims = struct.unpack(f">{ndim}I", fh.read(4 * ndim))
        data = np.frombuffer(fh.read(), dtype=_IDX_TYPES[dtype])
    expected = int(np.prod(dims)) if dims else 0
    if data.size != expected:
        raise ValueError(f"{path}: header declares {dims} = {expected} values, file holds {data.size}")
    return data.reshape(dims)


def _find(root: Path, stem: str) -> Path:
    for cand in (root / stem, root / f"{stem}.gz"):
        if cand.exists():
            return cand
    raise FileNotFoundError(f"{root}: no {stem} or {stem}.gz")


def load_mnist(root, kind: str = "train"):
    """MNIST or Fashion-MNIST (same file names) from the IDX files in ``root``."""
    root = Path(root)
    prefix = {"train": "train", "test": "t10k"}.get(kind)
    if prefix is None:
        raise ValueError(f"kind: expected 'train' or 'test', got {kind!r}")
    images = read_idx(_find(root, f"{prefix}-images-idx3-ubyte"))
    labels = read_idx(_find(root, f"{prefix}-labels-idx1-ubyte"))
    if images.ndim != 3 or labels.ndim != 1:
        raise ValueError(f"{root}: expected images (N, H, W) and labels (N,), got {images.shape} and {labels.shape}")
    if len(images) != len(labels):
        raise ValueError(f"{root}: {len(images)} images but {len(labels)} labels")
    return images[:, None, :, :].astype(np.uint8, copy=False), labels.astype(np.uint8, copy=False)


class _SafeUnpickler(pickle.Unpickler):
    _ALLOWED = {("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
                ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
                ("numpy._core.multiarray", "scalar"), ("builtins", "dict"), ("builtins", "list")}

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"CIFAR-10 batch refers to {module}.{name}, which a data file has no need of")


def _cifar_binary(path: Path):
    raw = np.fromfile(path, dtype=np.uint8)
    if raw.size % 3073:
        raise ValueError(f"{path}: size {raw.size} is not a multiple of a CIFAR-10 record (3073 bytes)")
    rec = raw.reshape(-1, 3073)
    return rec[:, 1:].reshape(-1, 3, 32, 32), rec[:, 0].copy()


def _cifar_python(path: Path):
    with open(path, "rb") as fh:
        batch = _SafeUnpickler(io.BytesIO(fh.read()), encoding="bytes").load()
    try:
        data, labels = batch[b"data"], batch[b"labels"]
    except (KeyError, TypeError):
        raise ValueError(f"{path}: not a CIFAR-10 Python batch (no b'data' / b'labels')") from None
    data = np.asarray(data, dtype=np.uint8)
    if data.ndim != 2 or data.shape[1] != 3072:
        raise ValueError(f"{path}: data has shape {data.shape}, expected (N, 3072)")
    return data.reshape(-1, 3, 32, 32), np.asarray(labels, dtype=np.uint8)


def load_cifar10(root, kind: str = "train"):
    """CIFAR-10 from the binary (``*.bin``) or Python batch files in ``root``."""
    if kind not in ("train", "test"):
        raise ValueError(f"kind: expected 'train' or 'test', got {kind!r}")
    root = Path(root)
    stems = [f"data_batch_{i}" for i in range(1, 6)] if kind == "train" else ["test_batch"]
    parts = []
    for stem in stems:
        if (root / f"{stem}.bin").exists():
            parts.append(_cifar_binary(root / f"{stem}.bin"))
        elif (root / stem).exists():
            parts.append(_cifar_python(root / stem))
        else:
            raise FileNotFoundError(f"{root}: no {stem}.bin or {stem}")
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def load_images(dataset: str, root=None, seed: int = 0):
    """The training set of ``dataset``: synthetic when ``root`` is None, else read from ``root``."""
    if root is None:
        return synthetic_images(dataset, seed=seed)
    if dataset in ("mnist", "fashion_mnist"):
        return load_mnist(root)
    if dataset == "cifar10":
        return load_cifar10(root)
    raise ValueError(f"dataset: expected one of {sorted(DATASET_SHAPES)}, got {dataset!r}")
