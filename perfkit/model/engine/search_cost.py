"""The varpro search's cost of a population of powers, and the best linear part for fixed powers.

For each candidate's powers (p, q) the linear parameters come from :func:`~perfkit.model.engine.problem.solve_linear`
(a few reweighted least-squares steps, each solved inside the bounds) and the cost is the exact objective
(:func:`~perfkit.model.engine.problem.objective`), on the problem's rows. The compiled kernel
(:func:`perfkit.model.engine._kernels.search_cost`) and the numpy code compute the same quantities.
"""
from __future__ import annotations

import numpy as np

from . import _kernels
from .problem import ACTIVE_SET_PASSES, Problem, design

__all__ = ["SearchCost", "linear_for", "CHUNK_BYTES"]

CHUNK_BYTES = 500_000  # design-matrix bytes per chunk of candidates (keeps the batch in cache)


class SearchCost:
    """The search's cost of a population, (D, S) → (S,): for each candidate's powers, the linear part by
    :func:`~perfkit.model.engine.problem.solve_linear` (``irls_iter`` reweighting steps) and the exact objective, on the
    problem's rows.

    With the compiled kernel (:func:`perfkit.model.engine._kernels.enabled`) the rows are visited one by one with the
    one-hot block as indices; otherwise the numpy code runs in cache-sized chunks of candidates.
    """

    def __init__(self, problem: Problem, irls_iter: int):
        self.pb, self.irls_iter = problem, int(irls_iter)
        self.compiled = _kernels.enabled()
        if self.compiled:
            pb = problem
            a = pb.arrays()
            (self.hidx, self.hval), self.L, self.E, self.y, self.w = a["hot"], a["L"], a["E"], a["y"], a["w"]
            self.lo, self.hi = (np.ascontiguousarray(b, float) for b in pb.lin_bounds)
            self.lam = float(pb.lam)
            self.lam_p = float(pb.lam if pb.lam_powers is None else pb.lam_powers)
            self.pen = {None: 0, "l1": 1, "l2": 2}[pb.penalty]
        else:
            self.chunk = max(1, int(CHUNK_BYTES // (8 * len(problem.y) * problem.n_linear)))

    def __call__(self, pw_t):
        return self.solve(np.atleast_2d(pw_t.T))[1]

    def solve(self, powers, n_iter=None):
        """``(lin, cost)`` of each row of ``powers`` (S, D): its linear parameters (S, K) by
        :func:`~perfkit.model.engine.problem.solve_linear` with ``n_iter`` reweighting steps (None: ``irls_iter``) and the
        exact objective (S,)."""
        pb, n_p = self.pb, self.pb.n_p
        n_iter = self.irls_iter if n_iter is None else int(n_iter)
        pw_all = np.ascontiguousarray(powers, float)
        S = pw_all.shape[0]
        out, lin = np.empty(S), np.empty((S, pb.n_linear))
        if self.compiled:
            n = len(self.y)
            FF = np.exp(pw_all[:, n_p:] @ self.E.T) if pw_all.shape[1] > n_p else np.ones((S, n))
            TT = np.exp(self.L[None, :, :] * pw_all[:, None, :n_p])
            _kernels.search_cost(pw_all, np.ascontiguousarray(FF), TT, self.hidx, self.hval, self.y, self.w,
                                 self.lo, self.hi, self.pen, self.lam, self.lam_p, n_iter, ACTIVE_SET_PASSES, n_p,
                                 pb.n_linear, out, lin)
            return lin, out
        for s0 in range(0, S, self.chunk):
            pw = pw_all[s0:s0 + self.chunk]
            Phi = design(pw[:, :n_p], pw[:, n_p:], pb.log_i, pb.log_e, pb.onehot)
            lin[s0:s0 + self.chunk] = pb.solve(Phi, n_iter)
            out[s0:s0 + self.chunk] = pb.cost(lin[s0:s0 + self.chunk], pw, Phi)
        return lin, out


def linear_for(problem: Problem, powers, irls_iter):
    """Best linear parameters for fixed powers on all rows (the lower-objective of two IRLS lengths)."""
    cost = SearchCost(problem, irls_iter)
    cands = [cost.solve(np.atleast_2d(powers), k * irls_iter) for k in (3, 5)]
    return min(cands, key=lambda c: c[1][0])[0][0]
