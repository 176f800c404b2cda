"""Compiled kernels of the varpro engine (numba), with the guarantee that each has a pure-numpy twin.

Two hot loops dominate a fit of the generic model:

* the global search's cost: for every candidate (p, q) of a population, a few reweighted least-squares
  steps for the linear part inside its bounds, then the exact objective
  (:func:`perfkit.model.engines.solve_linear` and :func:`perfkit.model.engines.objective`);
* the refinement's derivatives: value, gradient and primal–dual Hessian of the smoothed objective
  (:meth:`perfkit.model.newton.Smoothed.derivs`).

:data:`AVAILABLE` says whether numba imported; the environment variable ``PERFKIT_NUMBA=0`` turns the
kernels off (the engine then runs its numpy code, which computes the same quantities in another order of
summation: the same optimum to the refinement's tolerance, ``tests/test_newton.py``). The kernels run on one
thread (no ``parallel=True``): a result that depends on the thread count would be a machine dependence.

The one-hot block is passed as each row's nonzero columns (:func:`hot_index`), so a row of the design has
n_p + n_categorical + 1 nonzeros instead of K.
"""
from __future__ import annotations

import os

import numpy as np

__all__ = ["AVAILABLE", "enabled", "hot_index"]

try:  # numba is a declared dependency; the numpy code paths stay complete without it
    import numba

    AVAILABLE = True
except ImportError:  # pragma: no cover - exercised where numba is missing
    numba = None
    AVAILABLE = False


def enabled() -> bool:
    """Whether the compiled kernels are used: numba imported and ``PERFKIT_NUMBA`` is not ``0``."""
    return AVAILABLE and os.environ.get("PERFKIT_NUMBA", "1") != "0"


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


if AVAILABLE:
    _JIT = dict(cache=True, nogil=True, fastmath=False)

    @numba.njit(**_JIT)
    def _chol_solve(M, r, K):  # pragma: no cover - compiled
        """Solve M x = r for a symmetric positive definite K × K matrix; ``ok`` False where it is not."""
        Lm = np.zeros((K, K))
        for j in range(K):
            s = M[j, j]
            for k in range(j):
                s -= Lm[j, k] * Lm[j, k]
            if not s > 0.0:
                return r.copy(), False
            d = np.sqrt(s)
            Lm[j, j] = d
            for i in range(j + 1, K):
                s2 = M[i, j]
                for k in range(j):
                    s2 -= Lm[i, k] * Lm[j, k]
                Lm[i, j] = s2 / d
        z = np.empty(K)
        for i in range(K):
            s = r[i]
            for k in range(i):
                s -= Lm[i, k] * z[k]
            z[i] = s / Lm[i, i]
        x = np.empty(K)
        for i in range(K - 1, -1, -1):
            s = z[i]
            for k in range(i + 1, K):
                s -= Lm[k, i] * x[k]
            x[i] = s / Lm[i, i]
        return x, True

    @numba.njit(**_JIT)
    def search_cost(PW, FF, TT, hidx, hval, y, wrow, lo, hi, pen_code, lam, lam_p, n_iter, passes, n_p, K,
                    out):  # pragma: no cover - compiled
        """The search's cost of every candidate: :func:`engines.solve_linear` then :func:`engines.objective`.

        ``FF`` (S, N) = Π E^q and ``TT`` (S, N, n_p) = I^p per candidate; ``pen_code`` 0 none, 1 L1, 2 L2.
        The same reweighting, regulariser and active-set passes as the numpy code, row by row.
        """
        S, D = PW.shape
        N = y.shape[0]
        n_h = hidx.shape[1]
        nz = n_p + n_h + 1
        Vv = np.empty((N, nz))
        Cc = np.empty((N, nz), np.int64)
        yw = y * wrow
        my = 0.0
        for i in range(N):
            my += abs(yw[i])
        my /= N
        eps = 1e-6 * max(my, 1e-12)
        for s in range(S):
            for i in range(N):
                F = FF[s, i] * wrow[i]
                for j in range(n_p):
                    Vv[i, j] = F * TT[s, i, j]
                    Cc[i, j] = j
                for h in range(n_h):
                    c = hidx[i, h]
                    if c >= 0:
                        Vv[i, n_p + h] = F * hval[i, h]
                        Cc[i, n_p + h] = n_p + c
                    else:  # padding: a zero added to C's column
                        Vv[i, n_p + h] = 0.0
                        Cc[i, n_p + h] = K - 1
                Vv[i, nz - 1] = wrow[i]
                Cc[i, nz - 1] = K - 1
            w = np.ones(N)
            b = np.zeros(K)
            have_b = False
            at_lo = np.zeros(K, np.bool_)
            at_hi = np.zeros(K, np.bool_)
            for _it in range(n_iter):
                A = np.zeros((K, K))
                rhs = np.zeros(K)
                for i in range(N):
                    wi = w[i]
                    for a in range(nz):
                        ca = Cc[i, a]
                        va = Vv[i, a] * wi
                        rhs[ca] += va * yw[i]
                        for bb in range(a, nz):
                            A[ca, Cc[i, bb]] += va * Vv[i, bb]
                for k in range(K):  # entries landed in either triangle: fold into the upper one, mirror
                    for l in range(k):
                        A[l, k] += A[k, l]
                for k in range(K):
                    for l in range(k):
                        A[k, l] = A[l, k]
                tr = 0.0
                for k in range(K):
                    for l in range(K):
                        A[k, l] /= N
                    rhs[k] /= N
                for k in range(K):
                    tr += A[k, k]
                reg0 = 1e-9 * tr / K
                for k in range(K):
                    pk = 0.0 if k == K - 1 else 1.0
                    reg = reg0
                    if pen_code == 2 and lam > 0:
                        reg += 2.0 * lam * pk
                    elif pen_code == 1 and lam > 0 and have_b:
                        reg += lam * pk / max(abs(b[k]), 1e-8)
                    A[k, k] += reg
                for _p in range(passes):
                    fixed = np.zeros(K)
                    act = np.zeros(K, np.bool_)
                    for k in range(K):
                        act[k] = at_lo[k] or at_hi[k]
                        if at_lo[k]:
                            fixed[k] = lo[k]
                        elif at_hi[k]:
                            fixed[k] = hi[k]
                    M = np.empty((K, K))
                    r = np.empty(K)
                    for k in range(K):
                        if act[k]:
                            r[k] = fixed[k]
                        else:
                            t = rhs[k]
                            for l in range(K):
                                t -= A[k, l] * fixed[l]
                            r[k] = t
                        for l in range(K):
                            if act[k] or act[l]:
                                M[k, l] = 1.0 if k == l else 0.0
                            else:
                                M[k, l] = A[k, l]
                    bn, ok = _chol_solve(M, r, K)
                    if not ok:
                        bn = np.linalg.lstsq(M, r)[0]
                    b = bn
                    have_b = True
                    change = False
                    for k in range(K):
                        g = -rhs[k]
                        for l in range(K):
                            g += A[k, l] * b[l]
                        rel = (at_lo[k] and g < 0) or (at_hi[k] and g > 0)
                        nlo = (not act[k]) and b[k] < lo[k]
                        nhi = (not act[k]) and b[k] > hi[k]
                        if rel or nlo or nhi:
                            change = True
                        at_lo[k] = (at_lo[k] and not rel) or nlo
                        at_hi[k] = (at_hi[k] and not rel) or nhi
                    if not change:
                        break
                for k in range(K):
                    b[k] = min(max(b[k], lo[k]), hi[k])
                for i in range(N):
                    pr = 0.0
                    for a in range(nz):
                        pr += Vv[i, a] * b[Cc[i, a]]
                    w[i] = 1.0 / (2.0 * max(abs(yw[i] - pr), eps))
            tot = 0.0
            for i in range(N):
                pr = 0.0
                for a in range(nz):
                    pr += Vv[i, a] * b[Cc[i, a]]
                tot += abs(yw[i] - pr)
            val = tot / N
            if pen_code > 0:
                rl = 0.0
                for k in range(K - 1):
                    rl += abs(b[k]) if pen_code == 1 else b[k] * b[k]
                rp = 0.0
                for d in range(D):
                    rp += abs(PW[s, d]) if pen_code == 1 else PW[s, d] * PW[s, d]
                val += lam * rl + lam_p * rp
            out[s] = val
        return out

    @numba.njit(**_JIT)
    def pd_fill(x, Lg, Eg, FF, TT, hidx, hval, y, wrow, delta, n_p, K, D, u, Jw, H2, g, rs, ss):  # pragma: no cover
        """One pass over the rows of the smoothed objective: Σ s_i (returned), the gradient's sum ``g``, the
        weighted Jacobian ``Jw`` = √h_i · ∂m_i/∂x with the primal–dual row weights h_i = (1 − u_i r_i/s_i)/s_i,
        the second-order terms ``H2`` (upper triangle, −Σ u_i w_i ∇²m_i), and r/s and s per row."""
        N = y.shape[0]
        n_q = D - n_p
        n_h = hidx.shape[1]
        nx = K + D
        dd = delta * delta
        val = 0.0
        for k in range(nx):
            g[k] = 0.0
            for l in range(nx):
                H2[k, l] = 0.0
        for i in range(N):
            F = FF[i]
            inner = 0.0
            for j in range(n_p):
                inner += x[j] * TT[i, j]
            for h in range(n_h):
                c = hidx[i, h]
                if c >= 0:
                    inner += x[n_p + c] * hval[i, h]
            m = F * inner
            wi = wrow[i]
            r = (y[i] - m - x[K - 1]) * wi
            s = np.sqrt(r * r + dd)
            val += s
            rsi = r / s
            rs[i] = rsi
            ss[i] = s
            ui = u[i]
            hw = (1.0 - ui * rsi) / s
            if hw < 0.0:
                hw = 0.0
            sw = np.sqrt(hw)
            for k in range(nx):
                Jw[i, k] = 0.0
            for j in range(n_p):
                v = F * TT[i, j] * wi
                Jw[i, j] = v * sw
                g[j] -= rsi * v
                v2 = v * Lg[i, j] * x[j]
                Jw[i, K + j] = v2 * sw
                g[K + j] -= rsi * v2
            for h in range(n_h):
                c = hidx[i, h]
                if c >= 0:
                    v = F * hval[i, h] * wi
                    Jw[i, n_p + c] = v * sw
                    g[n_p + c] -= rsi * v
            Jw[i, K - 1] = wi * sw
            g[K - 1] -= rsi * wi
            for k in range(n_q):
                v = Eg[i, k] * m * wi
                Jw[i, K + n_p + k] = v * sw
                g[K + n_p + k] -= rsi * v
            c2 = -ui * wi
            for j in range(n_p):
                FLT = F * Lg[i, j] * TT[i, j]
                H2[j, K + j] += c2 * FLT
                H2[K + j, K + j] += c2 * FLT * Lg[i, j] * x[j]
                for k in range(n_q):
                    Ek = Eg[i, k]
                    H2[j, K + n_p + k] += c2 * Ek * F * TT[i, j]
                    H2[K + j, K + n_p + k] += c2 * Ek * FLT * x[j]
            for h in range(n_h):
                c = hidx[i, h]
                if c >= 0:
                    for k in range(n_q):
                        H2[n_p + c, K + n_p + k] += c2 * Eg[i, k] * F * hval[i, h]
            for k in range(n_q):
                for k2 in range(k, n_q):
                    H2[K + n_p + k, K + n_p + k2] += c2 * Eg[i, k] * Eg[i, k2] * m
        return val

    @numba.njit(**_JIT)
    def jvec(x, dx, Lg, Eg, FF, TT, hidx, hval, wrow, n_p, K, D, out):  # pragma: no cover - compiled
        """(∂m_i/∂x · dx) times the row weight, per row (∂r/∂x · dx is its negative)."""
        N = Lg.shape[0]
        n_q = D - n_p
        n_h = hidx.shape[1]
        for i in range(N):
            F = FF[i]
            inner = 0.0
            acc = 0.0
            for j in range(n_p):
                T = TT[i, j]
                inner += x[j] * T
                acc += F * T * (dx[j] + Lg[i, j] * x[j] * dx[K + j])
            for h in range(n_h):
                c = hidx[i, h]
                if c >= 0:
                    inner += x[n_p + c] * hval[i, h]
                    acc += F * hval[i, h] * dx[n_p + c]
            m = F * inner
            acc += dx[K - 1]
            for k in range(n_q):
                acc += Eg[i, k] * m * dx[K + n_p + k]
            out[i] = acc * wrow[i]
        return out

    @numba.njit(**_JIT)
    def damped_step(H, g, z, lo, hi, held, mu, passes):  # pragma: no cover - compiled
        """:func:`perfkit.model.newton._damped_step`: the damped Newton step on the face of the box, ``(d, ok)``
        (``ok`` False where the damped matrix of the free variables is not positive definite)."""
        n = z.shape[0]
        fixed = held.copy()
        d = np.zeros(n)
        for _pass in range(passes):
            idx = np.flatnonzero(~fixed)
            m = idx.shape[0]
            if m == 0:
                return d, True
            M = np.empty((m, m))
            r = np.empty(m)
            for a in range(m):
                ia = idx[a]
                for b in range(m):
                    M[a, b] = H[ia, idx[b]]
                if mu > 0:
                    M[a, a] += mu * max(abs(H[ia, ia]), 1e-300)
                t = -g[ia]
                for k in range(n):
                    if fixed[k]:
                        t -= H[ia, k] * d[k]
                r[a] = t
            x, ok = _chol_solve(M, r, m)
            if not ok:
                return d, False
            out = False
            for a in range(m):
                ia = idx[a]
                d[ia] = x[a]
            for a in range(m):
                ia = idx[a]
                v = z[ia] + d[ia]
                if v < lo[ia] or v > hi[ia]:
                    d[ia] = min(max(v, lo[ia]), hi[ia]) - z[ia]
                    fixed[ia] = True
                    out = True
            if not out:
                break
        for k in range(n):
            d[k] = min(max(z[k] + d[k], lo[k]), hi[k]) - z[k]
        return d, True
