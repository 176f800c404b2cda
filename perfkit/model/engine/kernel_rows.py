"""The rows of a fit laid out for the compiled kernels of :mod:`perfkit.model.engine._kernels`.

A row of the design has n_p + n_categorical + 1 nonzeros instead of K when its one-hot block is passed as the
row's nonzero columns (:func:`hot_index`); and I^p and Π E^q need computing only once per distinct value of a
column (:func:`distinct`). Both are plain numpy and are made once per problem
(:meth:`perfkit.model.engine.problem.Problem.arrays`).
"""
from __future__ import annotations

import numpy as np

__all__ = ["distinct", "hot_index"]


def distinct(log_i: np.ndarray, log_e: np.ndarray):
    """``(lv, li, ev, ei)``: the distinct values of each column of ``log_i`` (lv[r, j], padded by repetition) with
    each row's position among them (li, (N, n_p)), and the distinct rows of ``log_e`` (ev) with each row's (ei):
    the tables from which the compiled refinement computes I^p and Π E^q once per distinct value."""
    n, n_p = log_i.shape
    cols = [np.unique(log_i[:, j], return_inverse=True) for j in range(n_p)]
    m = max([len(c[0]) for c in cols], default=1)
    lv = np.zeros((m, n_p))
    li = np.zeros((n, n_p), np.int64)
    for j, (vals, inv) in enumerate(cols):
        lv[:, j] = np.resize(vals, m)
        li[:, j] = inv.ravel()
    if log_e.shape[1]:
        ev, ei = np.unique(log_e, axis=0, return_inverse=True)
    else:
        ev, ei = np.zeros((1, 0)), np.zeros(n, np.int64)
    return (np.ascontiguousarray(lv), np.ascontiguousarray(li), np.ascontiguousarray(ev, float),
            np.ascontiguousarray(ei.ravel(), np.int64))


def hot_index(onehot: np.ndarray):
    """``(index, value)`` of each row's nonzero one-hot columns, (N, m) each, ascending, padded with -1 / 0."""
    n, L = onehot.shape
    if not (n and L):
        return -np.ones((n, 1), np.int64), np.zeros((n, 1))
    nz = onehot != 0
    m = max(int(nz.sum(axis=1).max()), 1)
    order = np.argsort(~nz, axis=1, kind="stable")[:, :m]
    idx = np.where(np.take_along_axis(nz, order, axis=1), order, -1).astype(np.int64)
    val = np.where(idx >= 0, np.take_along_axis(onehot, np.maximum(idx, 0), axis=1), 0.0)
    return np.ascontiguousarray(idx), np.ascontiguousarray(val, dtype=float)
