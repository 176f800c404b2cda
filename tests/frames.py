"""Tables shared by the tests: synthetic data with known laws, and rows of the shipped measured files."""
from pathlib import Path

import numpy as np
import pandas as pd

MEASURED = Path(__file__).resolve().parents[1] / "data/measured/pytorch-cpu"
#: the shipped Chapter 4 files (relative to the repository root, as the chapters' parameters take them)
CH4_CSV = "data/measured/pytorch-cpu/ch4_lenet5.csv"
TF4_CSV = "data/measured/tensorflow-cpu/ch4_lenet5.csv"
#: the roles of the LeNet-5 rows of the Chapter 4 file
LENET_ROLES = dict(numeric=["num_filters", "kernel_size", "pool_size", "stride"],
                   categorical=["padding", "activation", "dataset", "optimizer"], extrinsic=["batch_size", "workers"])
#: the roles and a base configuration of :func:`generic_data`'s table
INTERVAL_ROLES = dict(numeric=["kernel", "filters"], categorical=["act"], extrinsic=["gpus", "batch"])
INTERVAL_BASE = dict(kernel=3.0, filters=8.0, act="relu", gpus=1.0, batch=32.0)


def measured_rows(name, roles, n):
    """The first ``n`` successful rows of the shipped measured file ``name`` (role columns only) and their epoch
    times."""
    df = pd.read_csv(MEASURED / name)
    df = df[df["status"] == "ok"].head(n).reset_index(drop=True)
    return df[[c for cols in roles.values() for c in cols]].copy(), df["epoch_time"].to_numpy()


def generic_data(n=240, seed=0, noise=0.02):
    """Eq. 4.4's law on kernel, filters, act (3 levels), gpus (1-3) and batch, with relative Gaussian noise."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "kernel": rng.choice([2.0, 3.0, 4.0, 5.0], n),
        "filters": rng.choice([4.0, 8.0, 16.0, 32.0, 64.0], n),
        "act": rng.choice(["relu", "tanh", "sigmoid"], n),
        "gpus": rng.choice([1.0, 2.0, 3.0], n),
        "batch": rng.choice([8.0, 16.0, 32.0, 64.0, 128.0], n),
    })
    k = X["act"].map({"relu": 1.0, "tanh": 2.0, "sigmoid": 3.0})
    t = (2.0 * X["kernel"] ** 1.5 + 0.5 * X["filters"] ** 0.8 + k) * X["gpus"] ** -0.9 * X["batch"] ** -1.0 + 0.3
    y = t.to_numpy() * (1 + noise * rng.standard_normal(n))
    return X, y


def exact_data(n=40, seed=0):
    """t = 0.01 x^0.7 g^-0.5 (+ a level constant) + 0.001, exact."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.choice([1.0, 2.0, 4.0, 8.0, 16.0], n), "g": rng.choice([1.0, 2.0, 4.0], n),
                      "c": rng.choice(["a", "b"], n)})
    y = 0.01 * X["x"] ** 0.7 * X["g"] ** -0.5 + 0.001 + 0.002 * (X["c"] == "b")
    return X, y.to_numpy()


def ridge_frame(n=40, seed=0):
    """A batch size, workers and three categorical columns; log-normal times of a power law in b and w."""
    r = np.random.default_rng(seed)
    X = pd.DataFrame({"b": r.choice([16., 32., 64., 128.], n), "w": r.choice([1., 2., 4., 8.], n),
                      "c0": r.choice(list("xy"), n), "c1": r.choice(list("xyz"), n), "c2": r.choice(list("xy"), n)})
    y = np.exp(0.3 * np.log(X.b) - 0.5 * np.log(X.w) + r.normal(0, .1, n)).to_numpy() + 0.01
    return X, y
