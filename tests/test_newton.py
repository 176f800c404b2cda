"""The refinement (perfkit.model.engine.newton) and the compiled kernels (perfkit.model.engine._kernels).

The smoothed objective tends to the exact one, its gradient and Hessian are its derivatives, the compiled
kernels compute the numpy code's numbers, and a fit reaches the same optimum with and without them.
"""
import numpy as np
import pytest
from scipy.optimize import approx_fprime, check_grad

from perfkit.model.engine import _kernels, engines
from perfkit.model.engine.problem import Problem, design, objective
from perfkit.model.engine.search_cost import SearchCost
from perfkit.model.engine.newton import REFINE_STAGES, Smoothed, _damped_step, refine

needs_numba = pytest.mark.skipif(not _kernels.AVAILABLE, reason="numba is not installed")

#: (penalty, λ, λ of the powers, row weights?) combinations the objective supports
CASES = [(None, 0.0, None, False), ("l1", 0.1, None, False), ("l2", 0.05, None, False),
         ("l1", 0.1, 0.0, True), ("l1", 0.0, 0.2, True), ("l2", 0.05, 0.3, True), (None, 0.0, None, True)]


def _problem(rng, pen, lam, lam_p, weighted, n=60):
    li, le = np.log(rng.uniform(1, 5, (n, 3))), np.log(rng.uniform(1, 4, (n, 2)))
    oh = np.eye(3)[rng.integers(0, 3, n)]
    y = rng.uniform(0.5, 30, n)
    return Problem(li, le, oh, y, (np.zeros(7), np.full(7, 10.0)), [(-2, 2)] * 5, pen, lam, lam_p,
                   1.0 / y if weighted else None)


def _x(rng):
    return np.concatenate([rng.uniform(0.1, 1, 7), rng.uniform(-1, 1, 5)])


def _smoothed(pb, compiled):
    obj = Smoothed(pb)
    if not compiled:
        obj.compiled = False
    return obj


@pytest.mark.parametrize("pen, lam, lam_p, weighted", CASES)
def test_smoothed_objective_tends_to_the_exact_objective(pen, lam, lam_p, weighted):
    rng = np.random.default_rng(0)
    pb = _problem(rng, pen, lam, lam_p, weighted)
    x = _x(rng)
    exact = objective(x[None, :7], x[None, 7:], design(x[None, 7:10], x[None, 10:], pb.log_i, pb.log_e, pb.onehot),
                      pb.y, pen, lam, lam_p, pb.weights)[0]
    smoothed = Smoothed(pb).value(x, 1e-9)
    assert abs(smoothed - exact) < 1e-7 * exact, (smoothed, exact)
    assert Smoothed(pb).value(x, 1e-2) > exact  # smoothing only adds


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_numba)])
@pytest.mark.parametrize("pen, lam, lam_p, weighted", CASES)
def test_gradient_and_hessian_are_the_derivatives(pen, lam, lam_p, weighted, compiled):
    rng = np.random.default_rng(1)
    pb = _problem(rng, pen, lam, lam_p, weighted)
    obj = _smoothed(pb, compiled)
    delta = 0.5  # wide enough for finite differences to resolve the curvature
    x = _x(rng)
    exact_duals = lambda z: obj.residuals(z) / np.sqrt(obj.residuals(z) ** 2 + delta**2)  # noqa: E731
    grad = lambda z: obj.derivs(z, delta, exact_duals(z))[1]  # noqa: E731
    assert check_grad(lambda z: obj.value(z, delta), grad, x) < 1e-5 * max(1.0, np.abs(grad(x)).max())
    H = obj.derivs(x, delta, exact_duals(x))[2]
    H_fd = np.array([approx_fprime(x, lambda z: grad(z)[i], 1e-6) for i in range(len(x))])
    np.testing.assert_allclose(H, H_fd, atol=2e-4 * max(1.0, np.abs(H).max()))
    np.testing.assert_allclose(H, H.T, atol=1e-12 * np.abs(H).max())


@needs_numba
@pytest.mark.parametrize("pen, lam, lam_p, weighted", CASES)
def test_compiled_derivatives_are_the_numpy_ones(pen, lam, lam_p, weighted):
    rng = np.random.default_rng(2)
    pb = _problem(rng, pen, lam, lam_p, weighted)
    x, u = _x(rng), rng.uniform(-1, 1, 60)
    for a, b in zip(_smoothed(pb, True).derivs(x, 0.01, u), _smoothed(pb, False).derivs(x, 0.01, u)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    dx = rng.normal(size=len(x))
    np.testing.assert_allclose(_smoothed(pb, True).jvec(x, dx), _smoothed(pb, False).jvec(x, dx), rtol=1e-12)


@needs_numba
@pytest.mark.parametrize("pen, lam, lam_p, weighted", CASES)
def test_compiled_search_cost_is_the_numpy_one(pen, lam, lam_p, weighted, monkeypatch):
    rng = np.random.default_rng(3)
    pb = _problem(rng, pen, lam, lam_p, weighted, n=120)
    population = rng.uniform(-2, 2, (5, 30))  # (D, S), scipy's vectorised layout
    compiled = SearchCost(pb, 3)(population)
    monkeypatch.setenv("PERFKIT_NUMBA", "0")
    plain = SearchCost(pb, 3)
    assert not plain.compiled
    np.testing.assert_allclose(compiled, plain(population), rtol=1e-8)


def test_a_damped_step_stays_inside_the_bounds_and_puts_crossers_on_them():
    H = np.array([[2.0, 0.1], [0.1, 1.0]])
    g = np.array([-10.0, -0.2])  # the first variable wants to go far up
    z, lo, hi = np.array([0.5, 0.5]), np.zeros(2), np.ones(2)
    d = _damped_step(H, g, z, lo, hi, np.zeros(2, bool), 0.0)
    assert z[0] + d[0] == 1.0  # on its upper bound
    # the second is the minimiser of the quadratic with the first fixed there: 0.1·d0 + 1.0·d1 + g1 = 0
    assert abs(0.1 * d[0] + 1.0 * d[1] - 0.2) < 1e-12 and 0.0 <= z[1] + d[1] <= 1.0
    assert _damped_step(-np.eye(2), g, z, lo, hi, np.zeros(2, bool), 0.0) is None  # not positive definite


@needs_numba
def test_the_compiled_damped_step_is_the_numpy_one():
    from perfkit.model.engine.newton import STEP_PASSES

    rng = np.random.default_rng(4)
    for _ in range(20):
        A = rng.normal(size=(6, 6))
        H, g = A @ A.T + 0.1 * np.eye(6), rng.normal(scale=5.0, size=6)
        z, lo, hi = rng.uniform(0, 1, 6), np.zeros(6), np.ones(6)
        held, mu = rng.uniform(size=6) < 0.2, float(rng.choice([0.0, 1e-3, 1.0]))
        d, ok = _kernels.damped_step(H, g, z, lo, hi, held, mu, STEP_PASSES)
        assert ok
        np.testing.assert_allclose(d, _damped_step(H, g, z, lo, hi, held, mu), atol=1e-12)
    assert not _kernels.damped_step(-np.eye(2), g[:2], z[:2], lo[:2], hi[:2], np.zeros(2, bool), 0.0, 4)[1]


def _fit_problem(seed=0, n=300):
    """A problem with a known optimum region: t = (2·I₁^0.8 + 0.5·I₂^-1 + κ) · E^0.6 + 1, 2 % noise."""
    rng = np.random.default_rng(seed)
    li, le = np.log(rng.uniform(1, 20, (n, 2))), np.log(rng.choice([1.0, 2, 4, 8], (n, 1)))
    level = rng.integers(0, 3, n)
    oh = np.eye(3)[level]
    y = (2 * np.exp(0.8 * li[:, 0]) + 0.5 * np.exp(-li[:, 1]) + np.array([0.0, 1.0, 3.0])[level]) \
        * np.exp(0.6 * le[:, 0]) + 1.0
    y = y * np.exp(rng.normal(0, 0.02, n))
    return Problem(li, le, oh, y, (np.zeros(6), np.full(6, 100.0)), [(-5, 5)] * 3, "l1", 1e-3)


def test_refinement_reaches_the_same_point_with_and_without_the_compiled_kernels(monkeypatch):
    pb = _fit_problem()
    lin0, pw0 = np.array([1.0, 1.0, 0.5, 0.5, 0.5, 0.5]), np.array([0.5, 0.0, 0.3])
    got = refine(pb, lin0, pw0, REFINE_STAGES)
    monkeypatch.setenv("PERFKIT_NUMBA", "0")
    plain = refine(pb, lin0, pw0, REFINE_STAGES)
    assert got[2] and plain[2]  # both converged
    np.testing.assert_allclose(got[1], plain[1], atol=1e-6)
    np.testing.assert_allclose(got[0], plain[0], rtol=1e-6, atol=1e-6)
    assert abs(pb.exact(got[0], got[1]) - pb.exact(plain[0], plain[1])) <= 1e-10 * pb.exact(got[0], got[1])
    assert abs(got[1][0] - 0.8) < 0.05 and abs(got[1][2] - 0.6) < 0.05  # the generating powers


def test_a_fit_reaches_one_optimum_from_every_seed_with_either_kernel_set(monkeypatch):
    pb = _fit_problem(1)
    objs = []
    for numba_on in ("1", "0"):
        monkeypatch.setenv("PERFKIT_NUMBA", numba_on)
        for seed in range(3):
            with np.errstate(over="ignore", invalid="ignore"):
                res = engines.fit_varpro(pb, np.random.default_rng(seed))
            objs.append(pb.exact(res.lin, res.powers))
            assert res.converged
    assert max(objs) - min(objs) <= 1e-9 * min(objs), objs
