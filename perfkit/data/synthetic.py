"""Synthetic data shaped like the thesis's Table 4.1, for tests and benchmarks.

These are *not* measurements: they are configurations drawn from Table 4.1's
parameter space with times computed from a known generic model, so that a fit's
recovery of the truth can be checked.
"""
from __future__ import annotations

import numpy as np

from ..measure.spaces import TABLE_4_1_SPACE

__all__ = ["TABLE_4_1", "NUMERIC", "CATEGORICAL", "EXTRINSIC", "sample_table41", "truth_from_table", "simulate"]

#: parameter space of Table 4.1 (values as listed there), with the thesis's column name ``gpus`` for workers
TABLE_4_1 = {("gpus" if k == "workers" else k): v for k, v in TABLE_4_1_SPACE.items()}
NUMERIC = ["num_filters", "kernel_size", "pool_size", "learning_rate", "stride", "dropout"]
CATEGORICAL = ["padding", "activation", "dataset", "optimizer"]
EXTRINSIC = ["batch_size", "gpus"]


def sample_table41(n: int, random_state=0):
    """Draw ``n`` configurations uniformly from Table 4.1 (a DataFrame)."""
    import pandas as pd

    rng = np.random.default_rng(random_state)
    return pd.DataFrame({k: rng.choice(np.array(v, dtype=object), size=n) for k, v in TABLE_4_1.items()}).astype(
        {k: float for k in NUMERIC + EXTRINSIC}
    )


def truth_from_table(framework: str = "MXNet", table: str = "4.3") -> dict:
    """Generic-model parameters transcribed in a thesis table, as a dict usable by :func:`simulate`.

    Returns ``{"a": {col: a}, "p": {col: p}, "k": {col: {level: κ}}, "q": {col: q}, "C": C}``.
    """
    from .thesis import load_thesis_table

    t = load_thesis_table(table, source="thesis")
    t = t[t["framework"] == framework]
    if t.empty:
        raise ValueError(f"framework: no rows for {framework!r} in table {table}")
    out: dict = {"a": {}, "p": {}, "k": {}, "q": {}, "C": 0.0}
    for _, r in t.iterrows():
        if r["kind"] == "numeric":
            out[r["symbol"]][r["parameter"]] = float(r["mean"])
        elif r["kind"] == "categorical":
            out["k"].setdefault(r["parameter"], {})[r["level"]] = float(r["mean"])
        elif r["kind"] == "extrinsic":
            out["q"][r["parameter"]] = float(r["mean"])
        else:
            out["C"] = float(r["mean"])
    return out


def simulate(X, truth: dict, noise: float = 0.05, random_state=0):
    """Times from the generic model ``truth`` with multiplicative Gaussian noise of relative size ``noise``."""
    rng = np.random.default_rng(random_state)
    t_i = np.zeros(len(X))
    for col, a in truth["a"].items():
        t_i += a * X[col].to_numpy(dtype=float) ** truth["p"][col]
    for col, levels in truth["k"].items():
        t_i += X[col].map(levels).to_numpy(dtype=float)
    f = np.ones(len(X))
    for col, q in truth["q"].items():
        f *= X[col].to_numpy(dtype=float) ** q
    t = t_i * f + truth["C"]
    return t * (1.0 + noise * rng.standard_normal(len(X)))
