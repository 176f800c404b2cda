"""Compiled kernels of the varpro engine (numba), each with a pure-numpy twin.

They compute the global search's cost of a population (a few bounded reweighted least-squares steps per
candidate, then the exact objective: :func:`perfkit.model.engine.problem.solve_linear`,
:func:`~perfkit.model.engine.problem.objective`) and the refinement's derivatives and damped Newton stage
(:mod:`perfkit.model.engine.newton`). :data:`AVAILABLE` says whether numba imported; ``PERFKIT_NUMBA=0`` turns the
kernels off (the numpy code then computes the same quantities in another order of summation: the same optimum
to the refinement's tolerance, ``tests/test_newton.py``). The kernels run on one thread: a result that depends
on the thread count would be a machine dependence. The one-hot block is passed as each row's nonzero columns
(:mod:`perfkit.model.engine.kernel_rows`). Every compiled function lives in this one module, because numba's on-disk
cache does not see a change to a compiled function that a cached function of another file calls.
"""
from __future__ import annotations

import os

import numpy as np

from .kernel_rows import distinct, hot_index

__all__ = ["AVAILABLE", "enabled"]

try:  # numba is a declared dependency; the numpy code paths stay complete without it
    import numba

    AVAILABLE = True
except ImportError:  # pragma: no cover - exercised where numba is missing
    numba = None
    AVAILABLE = False


def enabled() -> bool:
    """Whether the compiled kernels are used: numba imported and ``PERFKIT_NUMBA`` is not ``0``."""
    return AVAILABLE and os.environ.get("PERFKIT_NUMBA", "1") != "0"


if AVAILABLE:  # pragma: no cover - compiled: coverage does not see inside the kernels
    _JIT = dict(cache=True, nogil=True, fastmath=False)

    @numba.njit(**_JIT)
    def _chol_solve(M, r, K):
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
    def _normal_equations(Vv, Cc, w, yw, K):
        """``(A, rhs)``: the reweighted normal equations Σ w·v vᵀ / N and Σ w·v·y / N of the sparse rows."""
        N, nz = Vv.shape
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
        for k in range(K):
            for l in range(K):
                A[k, l] /= N
            rhs[k] /= N
        return A, rhs

    @numba.njit(**_JIT)
    def _active_pass(A, rhs, lo, hi, at_lo, at_hi):
        """One pass of the active set: ``(b, changed)``, the solution with the active parameters at their bounds,
        and whether the active set (``at_lo``/``at_hi``, updated in place) changed."""
        K = A.shape[0]
        fixed, act = np.zeros(K), np.zeros(K, np.bool_)
        for k in range(K):
            act[k] = at_lo[k] or at_hi[k]
            if at_lo[k]:
                fixed[k] = lo[k]
            elif at_hi[k]:
                fixed[k] = hi[k]
        M, r = np.empty((K, K)), np.empty(K)
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
        b, ok = _chol_solve(M, r, K)
        if not ok:
            b = np.linalg.lstsq(M, r)[0]
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
        return b, change

    @numba.njit(inline="always", **_JIT)
    def _sparse_residual(Vv, Cc, b, yw, i):
        """Row ``i``'s weighted residual w·y − Σ v·b."""
        pr = 0.0
        for a in range(Vv.shape[1]):
            pr += Vv[i, a] * b[Cc[i, a]]
        return yw[i] - pr

    @numba.njit(**_JIT)
    def _irls(Vv, Cc, yw, lo, hi, pen_code, lam, n_iter, passes, eps):
        """One candidate's linear part: ``n_iter`` reweighted least-squares steps, each solved inside the bounds by
        up to ``passes`` passes of the active set, clipped and reweighted by 1 / (2·max(|r|, ε))."""
        N = Vv.shape[0]
        K = lo.shape[0]
        w, b, have_b = np.ones(N), np.zeros(K), False
        at_lo, at_hi = np.zeros(K, np.bool_), np.zeros(K, np.bool_)
        for _it in range(n_iter):
            A, rhs = _normal_equations(Vv, Cc, w, yw, K)
            tr = 0.0
            for k in range(K):
                tr += A[k, k]
            reg0 = 1e-9 * tr / K
            for k in range(K):  # the ridge 1e-9·tr(A)/K and the penalty's curvature (C unpenalised)
                pk = 0.0 if k == K - 1 else 1.0
                reg = reg0
                if pen_code == 2 and lam > 0:
                    reg += 2.0 * lam * pk
                elif pen_code == 1 and lam > 0 and have_b:
                    reg += lam * pk / max(abs(b[k]), 1e-8)
                A[k, k] += reg
            for _p in range(passes):
                b, change = _active_pass(A, rhs, lo, hi, at_lo, at_hi)
                have_b = True
                if not change:
                    break
            for k in range(K):
                b[k] = min(max(b[k], lo[k]), hi[k])
            for i in range(N):
                w[i] = 1.0 / (2.0 * max(abs(_sparse_residual(Vv, Cc, b, yw, i)), eps))
        return b

    @numba.njit(**_JIT)
    def search_cost(PW, FF, TT, hidx, hval, y, wrow, lo, hi, pen_code, lam, lam_p, n_iter, passes, n_p, K, out, lin):
        """The search's cost of every candidate, the numpy code's :func:`~perfkit.model.engine.problem.solve_linear` then
        :func:`~perfkit.model.engine.problem.objective` row by row: ``FF`` (S, N) = Π E^q and ``TT`` (S, N, n_p) = I^p per
        candidate, ``pen_code`` 0 none, 1 L1, 2 L2; the costs into ``out`` (S,) and, where ``lin`` has S rows, each
        candidate's linear parameters into ``lin`` (S, K)."""
        S = PW.shape[0]
        N = y.shape[0]
        n_h = hidx.shape[1]
        nz = n_p + n_h + 1
        Vv, Cc = np.empty((N, nz)), np.empty((N, nz), np.int64)
        yw = y * wrow
        my = 0.0
        for i in range(N):
            my += abs(yw[i])
        my /= N
        eps = 1e-6 * max(my, 1e-12)
        for s in range(S):
            for i in range(N):  # candidate s's weighted design rows as nonzeros: values Vv, their columns Cc
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
            b = _irls(Vv, Cc, yw, lo, hi, pen_code, lam, n_iter, passes, eps)
            tot = 0.0
            for i in range(N):
                tot += abs(_sparse_residual(Vv, Cc, b, yw, i))
            val = tot / N
            if pen_code > 0:  # λ·R(a, κ) + λ_p·R(p, q)
                rl = 0.0
                for k in range(K - 1):
                    rl += abs(b[k]) if pen_code == 1 else b[k] * b[k]
                rp = 0.0
                for d in range(PW.shape[1]):
                    rp += abs(PW[s, d]) if pen_code == 1 else PW[s, d] * PW[s, d]
                val += lam * rl + lam_p * rp
            out[s] = val
            if lin.shape[0] == S:
                for k in range(K):
                    lin[s, k] = b[k]
        return out

    @numba.njit(**_JIT)
    def _row(i, x, FF, TT, hidx, hval, y, wrow, n_p, K):
        """Row ``i``'s model without C, m = F·(Σ a·T + Σ κ), and its weighted residual w·(y − m − C)."""
        inner = 0.0
        for j in range(n_p):
            inner += x[j] * TT[i, j]
        for h in range(hidx.shape[1]):
            c = hidx[i, h]
            if c >= 0:
                inner += x[n_p + c] * hval[i, h]
        m = FF[i] * inner
        return m, (y[i] - m - x[K - 1]) * wrow[i]

    @numba.njit(inline="always", **_JIT)
    def _row_derivatives(i, x, Lg, Eg, F, m, TT, hidx, hval, wi, rsi, sw, c2, n_p, K, Jw, g, H2):
        """Row ``i``'s share of :func:`pd_fill`: its Jacobian row √h·w·∂m/∂x into ``Jw``, −(r/s)·w·∂m/∂x into
        the gradient ``g`` and its model second derivatives weighted by ``c2`` = −u·w into the upper triangle of
        ``H2``."""
        n_q = Eg.shape[1]
        for k in range(Jw.shape[1]):
            Jw[i, k] = 0.0
        for j in range(n_p):
            v = F * TT[i, j] * wi
            Jw[i, j] = v * sw
            g[j] -= rsi * v
            v2 = v * Lg[i, j] * x[j]
            Jw[i, K + j] = v2 * sw
            g[K + j] -= rsi * v2
        for h in range(hidx.shape[1]):
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
        for j in range(n_p):
            FLT = F * Lg[i, j] * TT[i, j]
            H2[j, K + j] += c2 * FLT
            H2[K + j, K + j] += c2 * FLT * Lg[i, j] * x[j]
            for k in range(n_q):
                Ek = Eg[i, k]
                H2[j, K + n_p + k] += c2 * Ek * F * TT[i, j]
                H2[K + j, K + n_p + k] += c2 * Ek * FLT * x[j]
        for h in range(hidx.shape[1]):
            c = hidx[i, h]
            if c >= 0:
                for k in range(n_q):
                    H2[n_p + c, K + n_p + k] += c2 * Eg[i, k] * F * hval[i, h]
        for k in range(n_q):
            for k2 in range(k, n_q):
                H2[K + n_p + k, K + n_p + k2] += c2 * Eg[i, k] * Eg[i, k2] * m

    @numba.njit(**_JIT)
    def pd_fill(x, Lg, Eg, FF, TT, hidx, hval, y, wrow, delta, n_p, K, D, u, Jw, H2, g, rs, ss):
        """One pass over the rows of the smoothed objective: Σ s_i (returned), the gradient's sum ``g``, the
        weighted Jacobian ``Jw`` = √h_i · ∂m_i/∂x with the primal–dual row weights h_i = (1 − u_i r_i/s_i)/s_i,
        the second-order terms ``H2`` (upper triangle, −Σ u_i w_i ∇²m_i), and r/s and s per row."""
        N = y.shape[0]
        nx = K + D
        dd = delta * delta
        val = 0.0
        for k in range(nx):
            g[k] = 0.0
            for l in range(nx):
                H2[k, l] = 0.0
        for i in range(N):
            F = FF[i]
            m, r = _row(i, x, FF, TT, hidx, hval, y, wrow, n_p, K)
            wi = wrow[i]
            s = np.sqrt(r * r + dd)
            val += s
            rsi = r / s
            rs[i] = rsi
            ss[i] = s
            ui = u[i]
            hw = (1.0 - ui * rsi) / s
            if hw < 0.0:
                hw = 0.0
            _row_derivatives(i, x, Lg, Eg, F, m, TT, hidx, hval, wi, rsi, np.sqrt(hw), -ui * wi, n_p, K, Jw, g, H2)
        return val

    @numba.njit(**_JIT)
    def jvec(x, dx, Lg, Eg, FF, TT, hidx, hval, wrow, n_p, K, D, out):
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
    def damped_step(H, g, z, lo, hi, held, mu, passes):
        """:func:`perfkit.model.engine.newton._damped_step`: the damped Newton step on the face of the box, ``(d, ok)``
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

    @numba.njit(**_JIT)
    def _ft_rows(x, tabs, n_p, K, D, FF, TT):
        """F = Π E^q and T = I^p of every row, into ``FF`` (N,) and ``TT`` (N, n_p), each exponential computed once
        per distinct value (``tabs`` = :func:`distinct` of the logs): the same numbers as row by row."""
        lv, li, ev, ei = tabs
        fu = np.empty(ev.shape[0])
        for r in range(ev.shape[0]):
            e = 0.0
            for k in range(D - n_p):
                e += ev[r, k] * x[K + n_p + k]
            fu[r] = np.exp(e)
        tu = np.empty((lv.shape[0], n_p))
        for r in range(lv.shape[0]):
            for j in range(n_p):
                tu[r, j] = np.exp(lv[r, j] * x[K + j])
        for i in range(FF.shape[0]):
            FF[i] = fu[ei[i]]
            for j in range(n_p):
                TT[i, j] = tu[li[i, j], j]

    @numba.njit(**_JIT)
    def _value(x, tabs, hidx, hval, y, wrow, lamv, l1, delta, n_p, K, D, FF, TT):
        """S_δ(x) (:meth:`perfkit.model.engine.newton.Smoothed.value`); ``FF``/``TT`` are filled for ``x``."""
        _ft_rows(x, tabs, n_p, K, D, FF, TT)
        N = y.shape[0]
        dd = delta * delta
        tot = 0.0
        for i in range(N):
            r = _row(i, x, FF, TT, hidx, hval, y, wrow, n_p, K)[1]
            tot += np.sqrt(r * r + dd)
        val = tot / N
        for k in range(K + D):
            if lamv[k] != 0.0:
                val += lamv[k] * (np.sqrt(x[k] * x[k] + dd) if l1 else x[k] * x[k])
        return val

    @numba.njit(**_JIT)
    def _curvature(x, Lg, Eg, hidx, hval, y, wrow, lamv, l1, delta, n_p, K, D, u, v, FF, TT, Jw, H2, g, rs, ss):
        """Value, gradient and primal–dual Hessian at ``x`` (``FF``/``TT`` already for ``x``), the L1 penalty's
        curvature in its primal–dual form: :meth:`~perfkit.model.engine.newton.Smoothed.derivs` and ``_pd_curvature``."""
        N = y.shape[0]
        nx = K + D
        val = pd_fill(x, Lg, Eg, FF, TT, hidx, hval, y, wrow, delta, n_p, K, D, u, Jw, H2, g, rs, ss)
        H = Jw.T @ Jw
        for k in range(nx):
            for l in range(nx):
                if k == l:
                    H[k, l] += H2[k, l]
                else:
                    H[k, l] += H2[k, l] + H2[l, k]
        H /= N
        for k in range(nx):
            g[k] /= N
        val /= N
        dd = delta * delta
        for k in range(nx):
            lk = lamv[k]
            if lk == 0.0:
                continue
            if l1:
                sp = np.sqrt(x[k] * x[k] + dd)
                val += lk * sp
                g[k] += lk * x[k] / sp
                exact = lk * dd / (sp * sp * sp)
                corr = lk * (1.0 - v[k] * x[k] / sp) / sp - exact
                H[k, k] += exact + max(corr, -exact)
            else:
                val += lk * x[k] * x[k]
                g[k] += 2.0 * lk * x[k]
                H[k, k] += 2.0 * lk
        return val, H

    @numba.njit(**_JIT)
    def _dual(u, du):
        """:func:`perfkit.model.engine.newton._dual_step` in place."""
        lim = np.inf
        for i in range(u.shape[0]):
            if du[i] > 0:
                lim = min(lim, (1.0 - u[i]) / du[i])
            elif du[i] < 0:
                lim = min(lim, (-1.0 - u[i]) / du[i])
        alpha = min(1.0, 0.99 * lim) if lim < np.inf else 1.0
        alpha = max(alpha, 0.0)
        for i in range(u.shape[0]):
            u[i] = min(max(u[i] + alpha * du[i], -1.0), 1.0)

    @numba.njit(**_JIT)
    def _restrict(H_full, g_full, idx, H, g):
        """The free variables' gradient ``g`` and Hessian ``H`` (in place) from the full ones."""
        m = idx.shape[0]
        for a in range(m):
            g[a] = g_full[idx[a]]
            for b in range(m):
                H[a, b] = H_full[idx[a], idx[b]]

    @numba.njit(**_JIT)
    def _dual_steps(x, step, idx, delta, Lg, Eg, FF, TT, hidx, hval, wrow, l1, n_p, K, D, rs, ss, u, v, dx, jd):
        """The duals' linearised Newton steps for ``step`` taken from ``x`` (``FF``/``TT`` at ``x``), ``u`` and,
        with an L1 penalty, ``v`` updated in place inside [−1, 1]."""
        N = rs.shape[0]
        nx = K + D
        for k in range(nx):
            dx[k] = 0.0
        for a in range(idx.shape[0]):
            dx[idx[a]] = step[a]
        jvec(x, dx, Lg, Eg, FF, TT, hidx, hval, wrow, n_p, K, D, jd)
        du = np.empty(N)
        for i in range(N):
            r = rs[i] * ss[i]
            du[i] = ((1.0 - u[i] * rs[i]) * (-jd[i]) - (ss[i] * u[i] - r)) / ss[i]
        _dual(u, du)
        if l1:
            dv = np.empty(nx)
            for k in range(nx):
                sp = np.sqrt(x[k] * x[k] + delta * delta)
                dv[k] = ((1.0 - v[k] * x[k] / sp) * dx[k] - (sp * v[k] - x[k])) / sp
            _dual(v, dv)

    @numba.njit(**_JIT)
    def _try_steps(H, g, z, lo, hi, mu, passes, tol, f, x_new, idx, tabs, hidx, hval, y, wrow, lamv, l1,
                   delta, n_p, K, D, FFn, TTn):
        """Up to 60 damped steps from ``z``, μ raised after each refused one: ``(accepted, small, step, mu,
        actual, predicted)``; ``FFn``/``TTn`` hold F and T at the accepted point."""
        m = z.shape[0]
        held = np.empty(m, np.bool_)  # at a bound with the gradient pointing outwards
        for a in range(m):
            held[a] = (z[a] <= lo[a] and g[a] > 0) or (z[a] >= hi[a] and g[a] < 0)
        small = False
        step = np.zeros(m)
        for _try in range(60):
            step, ok = damped_step(H, g, z, lo, hi, held, mu, passes)
            if not ok:
                mu = max(mu * 10.0, 1e-10)
                continue
            predicted = 0.0  # the quadratic model's decrease −(g·d + ½ dᵀH d)
            big = 0.0  # the largest scaled step |d| / max(|z|, 1)
            for a in range(m):
                t = 0.0
                for b in range(m):
                    t += H[a, b] * step[b]
                predicted -= g[a] * step[a] + 0.5 * step[a] * t
                big = max(big, abs(step[a]) / max(abs(z[a]), 1.0))
            small = big <= tol
            if predicted <= 0:
                if small:
                    break
                mu = max(mu * 10.0, 1e-10)
                continue
            for a in range(m):
                x_new[idx[a]] = z[a] + step[a]
            actual = f - _value(x_new, tabs, hidx, hval, y, wrow, lamv, l1, delta, n_p, K, D, FFn, TTn)
            if actual > 0 and actual >= 1e-4 * predicted:
                return True, small, step, mu, actual, predicted
            if small:
                break
            mu = max(mu * 10.0, 1e-10)
        return False, small, step, mu, 0.0, 0.0

    @numba.njit(**_JIT)
    def newton_stage(x, free, lower, upper, delta, tol, u, v, Lg, Eg, hidx, hval, y, wrow, lamv, l1, n_p, K, D,
                     max_iter, passes, tabs):
        """:func:`perfkit.model.engine.newton._stage`, compiled: ``(x, converged, iterations)``, ``u`` and ``v`` updated
        in place."""
        N = y.shape[0]
        nx = K + D
        idx = np.flatnonzero(free)
        m = idx.shape[0]
        FF, TT = np.empty(N), np.empty((N, n_p))  # F and T at the current point
        FFn, TTn = np.empty(N), np.empty((N, n_p))  # and at the trial point
        Jw, H2, g_full = np.empty((N, nx)), np.empty((nx, nx)), np.empty(nx)
        rs, ss, jd, dx = np.empty(N), np.empty(N), np.empty(N), np.zeros(nx)
        lo, hi = lower[idx], upper[idx]
        x = x.copy()
        z = x[idx].copy()
        _ft_rows(x, tabs, n_p, K, D, FF, TT)
        f, H_full = _curvature(x, Lg, Eg, hidx, hval, y, wrow, lamv, l1, delta, n_p, K, D, u, v, FF, TT, Jw, H2,
                               g_full, rs, ss)
        g, H = np.empty(m), np.empty((m, m))
        _restrict(H_full, g_full, idx, H, g)
        mu, it, converged = 0.0, 0, False
        x_new = x.copy()
        while it < max_iter:
            it += 1
            accepted, small, step, mu, actual, predicted = _try_steps(
                H, g, z, lo, hi, mu, passes, tol, f, x_new, idx, tabs, hidx, hval, y, wrow,
                lamv, l1, delta, n_p, K, D, FFn, TTn)
            if accepted:
                _dual_steps(x, step, idx, delta, Lg, Eg, FF, TT, hidx, hval, wrow, l1, n_p, K, D, rs, ss, u, v, dx,
                            jd)
                for a in range(m):
                    z[a] = z[a] + step[a]
                    x[idx[a]] = z[a]
                FF, FFn = FFn, FF  # the trial point's F and T are the new point's
                TT, TTn = TTn, TT
                f, H_full = _curvature(x, Lg, Eg, hidx, hval, y, wrow, lamv, l1, delta, n_p, K, D, u, v, FF, TT,
                                       Jw, H2, g_full, rs, ss)
                _restrict(H_full, g_full, idx, H, g)
                ratio = actual / predicted
                if ratio > 0.75:
                    mu = mu / 5.0 if mu > 1e-12 else 0.0
                elif ratio < 0.25:
                    mu = max(mu * 2.0, 1e-10)
            if not accepted or small:
                converged = True
                break
        return x, converged, it
