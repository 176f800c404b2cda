"""The refinement of the varpro engine: a bounded primal–dual Newton method on the smoothed objective.

For a smoothing width δ the smoothed objective is

.. math::
    S_\\delta(x) = \\frac1N \\sum_i \\sqrt{r_i(x)^2 + \\delta^2} + \\sum_j \\lambda_j\\,\\varphi_\\delta(x_j),
    \\qquad \\varphi_\\delta(x) = x^2 \\ (L2) \\ \\text{or} \\ \\sqrt{x^2 + \\delta^2} \\ (L1),

with r = w·(y − t(x)) the (weighted) residuals of eq. 4.4 and x = (a, κ, C, p, q); as δ → 0 it is eq. 4.9
plus the penalty of eqs. 4.11–4.12, exactly. :func:`refine` minimises it for each δ of a shrinking sequence
(:data:`REFINE_STAGES`), each stage starting where the last stopped.

Each stage is a damped Newton method on the small (K + D) × (K + D) system, solved by Cholesky:

* the curvature is the primal–dual Hessian of Chan, Golub & Mulet (1999): besides the Gauss–Newton part
  Jᵀ diag(h) J / N, with row weights h_i = (1 − u_i r_i/s_i)/s_i (δ²/s³ when the dual u_i equals r_i/s_i), it
  keeps the model's second derivatives, weighted by the duals, −Σ u_i w_i ∇²m_i / N. For an absolute-error
  loss those weights are ±1, not small: Gauss–Newton, which drops them, crawls along the manifold where the
  interpolated rows stay at zero residual. The duals u (and, with an L1 penalty, v for |x|) take their own
  linearised Newton step after each accepted step, kept inside [−1, 1], and carry over from stage to stage;
* a variable at a bound whose gradient points outwards is held there (projected Newton), the others take
  the Levenberg–Marquardt-damped step (H + μ·diag H) d = −g, clipped into the bounds; a step is accepted only
  if it lowers S_δ itself (so the duals steer, the objective decides), and μ follows the ratio of the actual
  to the predicted decrease;
* a stage stops when the largest step, relative to max(|x|, 1), is below its tolerance, or when no step
  lowers S_δ at working precision (a minimum to that precision), or after :data:`MAX_ITER` iterations
  (then not converged).

The stage runs compiled (:func:`perfkit.model.engine._kernels.newton_stage`) where numba is available and in numpy
otherwise (:meth:`Smoothed.derivs_numpy` for the derivatives); both compute the same sums.
"""
from __future__ import annotations

import numpy as np

from . import _kernels

__all__ = ["Smoothed", "refine", "REFINE_STAGES", "STEP_TOL", "MAX_ITER", "STEP_PASSES"]

#: smoothing widths δ of the refinement's continuation, relative to the mean |w·y|. As √(r² + δ²) ≤ |r| + δ,
#: S_δ exceeds the exact objective by at most δ (without an L1 penalty) or δ·(1 + Σ_j λ_j) (with one)
REFINE_STAGES = (1e-2, 1e-4, 1e-6)

#: the full stages stop when the largest scaled step is below this (Newton converges quadratically: a step of
#: 1e-10 is within an iteration or two of machine precision); a looser ``tol`` (the screening stage's) is kept
STEP_TOL = 1e-10
#: iterations per stage at most (a stage that reaches it reports ``converged=False``)
MAX_ITER = 5000


class Smoothed:
    """S_δ of one :class:`~perfkit.model.engine.problem.Problem`: value, gradient, primal–dual Hessian."""

    def __init__(self, problem):
        pb = problem
        self.K, self.n_p, self.D, self.n = pb.n_linear, pb.n_p, len(pb.pow_bounds), len(pb.y)
        a = pb.arrays()
        self.L, self.E, self.y, self.w = a["L"], a["E"], a["y"], a["w"]
        self.O = np.asarray(pb.onehot, float)
        idx, lams = pb.penalised_entries(self.K + self.D)
        self.lam = np.zeros(self.K + self.D)
        self.lam[idx] = lams
        self.l1 = pb.penalty == "l1" and bool(self.lam.any())
        self.compiled = _kernels.enabled()
        if self.compiled:
            (self.hidx, self.hval), self.tables = a["hot"], a["tables"]
        self._ft_memo = []

    # ----------------------------------------------------------------- pieces
    def _ft(self, x):
        """F = Π E^q (N,) and T = I^p (N, n_p), read-only; the last two powers' are kept (a Newton iteration asks
        for the same point's up to three times: its value, its derivatives, the duals' step)."""
        K, n_p = self.K, self.n_p
        key = x[K:].tobytes()
        for k, ft in self._ft_memo:
            if k == key:
                return ft
        q = x[K + n_p:]
        F = np.exp(self.E @ q) if q.size else np.ones(self.n)
        ft = (F, np.exp(self.L * x[K:K + n_p]))
        for a in ft:
            a.flags.writeable = False
        self._ft_memo = [(key, ft)] + self._ft_memo[:1]
        return ft

    def residuals(self, x) -> np.ndarray:
        """r = w·(y − t(x)) per row."""
        K, n_p = self.K, self.n_p
        F, T = self._ft(x)
        inner = T @ x[:n_p] + self.O @ x[n_p:K - 1]
        return (self.y - F * inner - x[K - 1]) * self.w

    def penalty(self, x, delta) -> float:
        if self.l1:
            return float(np.sum(self.lam * np.sqrt(x * x + delta * delta)))
        return float(np.sum(self.lam * x * x))

    def value(self, x, delta) -> float:
        """S_δ(x)."""
        r = self.residuals(x)
        return float(np.mean(np.sqrt(r * r + delta * delta))) + self.penalty(x, delta)

    def jacobian(self, x) -> np.ndarray:
        """∂m/∂x times the row weights, (N, K + D), where m is the model without C (∂r/∂x = −this)."""
        K, n_p, D = self.K, self.n_p, self.D
        F, T = self._ft(x)
        FT = F[:, None] * T
        m = F * (T @ x[:n_p] + self.O @ x[n_p:K - 1])
        J = np.empty((self.n, K + D))
        J[:, :n_p] = FT
        J[:, n_p:K - 1] = F[:, None] * self.O
        J[:, K - 1] = 1.0
        J[:, K:K + n_p] = self.L * FT * x[:n_p]
        J[:, K + n_p:] = self.E * m[:, None]
        return J * self.w[:, None]

    def jvec(self, x, dx) -> np.ndarray:
        """∂r/∂x · dx per row."""
        if self.compiled:
            F, T = self._ft(x)
            out = np.empty(self.n)
            return -_kernels.jvec(x, np.ascontiguousarray(dx, float), self.L, self.E, F, T, self.hidx, self.hval,
                                  self.w, self.n_p, self.K, self.D, out)
        return -(self.jacobian(x) @ dx)

    # ------------------------------------------------------------ derivatives
    def derivs(self, x, delta, u):
        """``(value, gradient, H, r/s, s)``: S_δ, its gradient, the primal–dual Hessian with row duals ``u``
        (the exact Hessian when u = r/s) and r/s, s per row. The L1 penalty's curvature is λδ²/s³ here;
        the stage replaces it with its own primal–dual form (:func:`_pd_curvature`)."""
        x = np.ascontiguousarray(x, float)
        if self.compiled:
            nx = self.K + self.D
            F, T = self._ft(x)
            Jw, H2, g = np.empty((self.n, nx)), np.empty((nx, nx)), np.empty(nx)
            rs, ss = np.empty(self.n), np.empty(self.n)
            val = _kernels.pd_fill(x, self.L, self.E, F, T, self.hidx, self.hval, self.y, self.w, float(delta),
                                   self.n_p, self.K, self.D, np.ascontiguousarray(u, float), Jw, H2, g, rs, ss)
            H = Jw.T @ Jw + H2 + H2.T - np.diag(np.diag(H2))
            H /= self.n
            g /= self.n
            val /= self.n
        else:
            val, g, H, rs, ss = self.derivs_numpy(x, delta, u)
        lam = self.lam
        if self.l1:
            sp = np.sqrt(x * x + delta * delta)
            val += np.sum(lam * sp)
            g += lam * x / sp
            H[np.diag_indices_from(H)] += lam * delta * delta / sp ** 3
        else:
            val += np.sum(lam * x * x)
            g += 2.0 * lam * x
            H[np.diag_indices_from(H)] += 2.0 * lam
        return float(val), g, H, rs, ss

    def derivs_numpy(self, x, delta, u):
        """The residual part of :meth:`derivs` (no penalty) in numpy: the same sums as the compiled kernel."""
        K, n_p, D, n = self.K, self.n_p, self.D, self.n
        F, T = self._ft(x)
        a = x[:n_p]
        m = F * (T @ a + self.O @ x[n_p:K - 1])
        r = (self.y - m - x[K - 1]) * self.w
        s = np.sqrt(r * r + delta * delta)
        rs = r / s
        J = self.jacobian(x)
        hw = np.maximum((1.0 - u * rs) / s, 0.0)
        Jw = J * np.sqrt(hw)[:, None]
        g = -(J.T @ rs)
        H = Jw.T @ Jw
        c = -u * self.w  # the duals' weights of the model's second derivatives
        FLT = (F[:, None] * self.L) * T
        ia = np.arange(n_p)
        ip = K + ia
        ap = c @ FLT
        H[ia, ip] += ap
        H[ip, ia] += ap
        H[ip, ip] += (c @ (self.L * FLT)) * a
        if D > n_p:
            iq = slice(K + n_p, K + D)
            Ec = self.E * c[:, None]
            aq = (F[:, None] * T).T @ Ec
            H[:n_p, iq] += aq
            H[iq, :n_p] += aq.T
            kq = (F[:, None] * self.O).T @ Ec
            H[n_p:K - 1, iq] += kq
            H[iq, n_p:K - 1] += kq.T
            pq = (FLT * a).T @ Ec
            H[K:K + n_p, iq] += pq
            H[iq, K:K + n_p] += pq.T
            H[iq, iq] += (self.E * (c * m)[:, None]).T @ self.E
        return s.sum() / n, g / n, H / n, rs, s


def _dual_step(u, du):
    """u + α·du with the largest α ≤ 1 (times 0.99) that keeps every entry inside [−1, 1]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lim = np.where(du > 0, (1.0 - u) / du, np.where(du < 0, (-1.0 - u) / du, np.inf))
    alpha = min(1.0, 0.99 * float(np.min(lim))) if lim.size and np.isfinite(lim).any() else 1.0
    return np.clip(u + max(alpha, 0.0) * du, -1.0, 1.0)


#: passes of the active set inside one damped step (variables whose step leaves the bounds are put on them)
STEP_PASSES = 4


def _damped_step(H, g, z, lo, hi, held, mu):
    """The damped Newton step on the face of the box: (H_FF + μ·diag|H_FF|) d_F = −(g_F + H_FB d_B), where B
    is ``held`` (d = 0) plus, pass by pass, the free variables whose step would leave the bounds (each put on
    the bound it crosses). None where the damped matrix is not positive definite. (The compiled stage uses
    :func:`perfkit.model.engine._kernels.damped_step`, the same step.)"""
    fixed = held.copy()
    d = np.zeros_like(z)
    for _ in range(STEP_PASSES):
        fr = ~fixed
        if not fr.any():
            return d
        Hf = H[np.ix_(fr, fr)]
        M = Hf + mu * np.diag(np.maximum(np.abs(np.diag(Hf)), 1e-300)) if mu > 0 else Hf
        try:
            Lc = np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            return None
        rhs = -(g[fr] + H[np.ix_(fr, fixed)] @ d[fixed])
        d[fr] = np.linalg.solve(Lc.T, np.linalg.solve(Lc, rhs))
        out = fr & ((z + d < lo) | (z + d > hi))
        if not out.any():
            break
        d[out] = np.clip(z[out] + d[out], lo[out], hi[out]) - z[out]
        fixed |= out
    return np.clip(z + d, lo, hi) - z


def _initial_duals(obj: Smoothed, x, delta, u, v):
    """The duals a stage starts from: the last stage's, or at the first stage u = r/s and v = x/√(x² + δ²)."""
    if u is None:
        u = obj.derivs(x, delta, np.zeros(obj.n))[3].copy()
    if v is None:
        v = x / np.sqrt(x * x + delta * delta)
    return u, v


def _stage(obj: Smoothed, x, free, lower, upper, delta, tol, u, v):
    """One stage: bounded damped primal–dual Newton on S_δ over the ``free`` entries of ``x``, compiled
    (:func:`perfkit.model.engine._kernels.newton_stage`) or in numpy (:func:`_stage_numpy`), the same iteration.

    Returns ``(x, converged, iterations, u, v)``.
    """
    u, v = _initial_duals(obj, x, delta, u, v)
    if obj.compiled:
        u, v = np.array(u, float), np.array(v, float)
        xs, converged, it = _kernels.newton_stage(
            np.ascontiguousarray(x, float), free, np.ascontiguousarray(lower, float),
            np.ascontiguousarray(upper, float), float(delta), float(tol), u, v, obj.L, obj.E, obj.hidx, obj.hval,
            obj.y, obj.w, obj.lam, obj.l1, obj.n_p, obj.K, obj.D, MAX_ITER, STEP_PASSES, obj.tables)
        return xs, bool(converged), int(it), u, v
    return _stage_numpy(obj, x, free, lower[free], upper[free], delta, tol, u, v)


def _pd_curvature(obj: Smoothed, x, free, delta, u, v):
    """``(value, gradient, H, r/s, s)`` of :meth:`Smoothed.derivs` at ``x``, gradient and H of the ``free``
    entries, with the L1 penalty's primal–dual curvature λ(1 − v·x/s)/s in place of λδ²/s³."""
    f, g, H, rs, ss = obj.derivs(x, delta, u)
    if obj.l1:
        pen = obj.lam != 0
        sp = np.sqrt(x * x + delta * delta)
        exact = obj.lam * delta * delta / sp ** 3
        corr = obj.lam * (1.0 - v * x / sp) / sp - exact
        H[np.diag_indices_from(H)] += np.where(pen, np.maximum(corr, -exact), 0.0)
    return f, g[free], H[np.ix_(free, free)], rs, ss


def _try_steps(obj: Smoothed, H, g, z, lo, hi, mu, tol, f, at, delta):
    """Up to 60 damped steps from ``z``, μ raised after each refused one: ``(accepted, small, step, mu, actual,
    predicted)``. A step is accepted where it lowers S_δ by at least 1e-4 of the quadratic model's prediction."""
    held = ((z <= lo) & (g > 0)) | ((z >= hi) & (g < 0))
    small, step = False, None
    for _ in range(60):
        step = _damped_step(H, g, z, lo, hi, held, mu)
        if step is None:
            mu = max(mu * 10.0, 1e-10)
            continue
        predicted = -(g @ step + 0.5 * step @ H @ step)
        small = bool(np.max(np.abs(step) / np.maximum(np.abs(z), 1.0), initial=0.0) <= tol)
        if predicted <= 0:
            if small:
                break
            mu = max(mu * 10.0, 1e-10)
            continue
        actual = f - obj.value(at(z + step), delta)
        if actual > 0 and actual >= 1e-4 * predicted:
            return True, small, step, mu, actual, predicted
        if small:
            break
        mu = max(mu * 10.0, 1e-10)
    return False, small, step, mu, 0.0, 0.0


def _dual_steps(obj: Smoothed, x, dx, rs, ss, u, v, delta):
    """The duals' linearised Newton steps for the step ``dx`` taken from ``x``, kept inside [−1, 1]: ``(u, v)``."""
    r = rs * ss
    u = _dual_step(u, ((1.0 - u * rs) * obj.jvec(x, dx) - (ss * u - r)) / ss)
    if obj.l1:
        sp = np.sqrt(x * x + delta * delta)
        v = _dual_step(v, ((1.0 - v * x / sp) * dx - (sp * v - x)) / sp)
    return u, v


def _damping(mu, ratio):
    """The damping μ after an accepted step whose actual decrease is ``ratio`` times the predicted one."""
    if ratio > 0.75:
        return mu / 5.0 if mu > 1e-12 else 0.0
    if ratio < 0.25:
        return max(mu * 2.0, 1e-10)
    return mu


def _stage_numpy(obj: Smoothed, x, free, lo, hi, delta, tol, u, v):
    """:func:`_stage` in numpy, ``lo``/``hi`` the bounds of the ``free`` entries."""
    z = x[free].copy()
    full = x.copy()

    def at(zz):
        out = full.copy()
        out[free] = zz
        return out

    f, g, H, rs, ss = _pd_curvature(obj, at(z), free, delta, u, v)
    mu, it, converged = 0.0, 0, False
    while it < MAX_ITER:
        it += 1
        accepted, small, step, mu, actual, predicted = _try_steps(obj, H, g, z, lo, hi, mu, tol, f, at, delta)
        if accepted:
            dx = np.zeros(len(x))
            dx[free] = step
            u, v = _dual_steps(obj, at(z), dx, rs, ss, u, v, delta)
            z = z + step
            f, g, H, rs, ss = _pd_curvature(obj, at(z), free, delta, u, v)
            mu = _damping(mu, actual / predicted)
        if not accepted or small:
            converged = True
            break
    return at(z), converged, it, u, v


def refine(problem, lin, powers, stages=REFINE_STAGES, tol=None):
    """Refine every parameter together on S_δ, δ = rel × mean|w·y| for each rel in ``stages``.

    The global search only finds the right basin: its linear parameters come from a few reweighted
    least-squares steps, and the landscape it sees (on a subset of rows) is not the objective's. Refining
    powers and linear parameters jointly, then narrowing the smoothing, reaches the bottom of the basin.

    Returns ``(lin, powers, converged, message)``: ``converged`` is whether the last stage met its tolerance
    (``max(tol, STEP_TOL)`` on the scaled step; ``tol`` None: :data:`STEP_TOL`) rather than :data:`MAX_ITER`.
    """
    tol = STEP_TOL if tol is None else tol
    K = problem.n_linear
    lo, hi = problem.lin_bounds
    lower = np.concatenate([np.asarray(lo, float), [b[0] for b in problem.pow_bounds]])
    upper = np.concatenate([np.asarray(hi, float), [b[1] for b in problem.pow_bounds]])
    x = np.clip(np.concatenate([np.asarray(lin, float), np.asarray(powers, float)]), lower, upper)
    free = lower < upper
    scale = max(problem.residual_scale(), 1e-300)
    converged, its = True, 0
    if free.any() and stages:
        obj = Smoothed(problem)
        u = v = None
        for rel in stages:
            x, converged, its, u, v = _stage(obj, x, free, lower, upper, rel * scale, max(tol, STEP_TOL), u, v)
    return x[:K], x[K:], converged, f"newton ({its} iterations in the last stage)"
