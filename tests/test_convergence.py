"""The varpro engine converges to the same fit from every seed and under every BLAS kernel set.

OpenBLAS picks its kernels by CPU; ``OPENBLAS_CORETYPE`` forces another set, as another machine would. Without
the joint refinement (``perfkit.model.engine.newton.refine``) and the switched-on/off rounds, a fit can stop in a
different local optimum under each kernel set.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from perfkit.model.engine.problem import Problem, design, objective, solve_linear
from perfkit.model.selection.fitting import RepeatedFit
from perfkit.schema import repo_root

#: quick-mode fits (60 DE generations, as the notebooks' quick mode) of Chapter 4 (no regularisation, L2 and L1)
#: and Chapter 5 data (L2), seed 0, λ = 1e-3
SCRIPT = r"""
import json, sys
import numpy as np
from perfkit.data.measured import load_steps, thesis_split
from perfkit.model.forms.generic import GenericPerformanceModel
from perfkit.model.selection.metrics import mape
from perfkit.schema import ROLES
out = {}
for key, path, n_fit, n_test in (("ch4", "data/measured/pytorch-cpu/ch4_lenet5.csv", 1000, 500),
                                  ("ch5", "data/measured/pytorch-cpu/ch5_resattnet3d.csv", 900, 600)):
    X, y, _ = load_steps(path, target="epoch_time", roles=key)
    Xf, Xt, yf, yt = thesis_split(X, y, n_fit=n_fit, n_test=n_test, seed=0)
    for penalty in (None, "l2", "l1") if key == "ch4" else ("l2",):  # Tables 4.2, 4.3, 4.4 and 5.2's fits
        m = GenericPerformanceModel(**ROLES[key], penalty=penalty, lam=1e-3 if penalty else 0.0, maxiter=60,
                                    random_state=0).fit(Xf, yf)
        out[f"{key} {penalty}"] = dict(objective=m.objective_, powers=m.powers_.tolist(),
                                       mape=mape(yt, m.predict(Xt)), converged=m.converged_)
print(json.dumps(out))
"""


def _random_data(rng, n, n_i, n_e, levels):
    """Small random fit data: logs of n_i intrinsic and n_e extrinsic columns, one-hot levels, times."""
    li, le = np.log(rng.uniform(1, 5, (n, n_i))), np.log(rng.uniform(1, 4, (n, n_e)))
    oh = np.eye(levels)[rng.integers(0, levels, n)]
    return li, le, oh, rng.uniform(1, 3, n)


def test_the_search_solves_its_least_squares_inside_the_bounds():
    """One reweighting step is a least-squares problem with bounds: the active set must reach scipy's bounded
    solution where clipping the unbounded one does not (several constants want to go below their bound 0)."""
    from scipy.optimize import lsq_linear

    rng = np.random.default_rng(3)
    li, le, oh, _ = _random_data(rng, 80, 3, 1, 4)
    Phi = design(np.array([[0.5, -1.0, 1.5]]), np.array([[-0.7]]), li, le, oh)  # (1, 80, 8)
    truth = np.array([1.0, 0.5, 2.0, 0.0, 0.0, 0.8, 0.0, 0.3])
    y = Phi[0] @ truth - Phi[0] @ np.array([0, 0, 0, 0.4, 0.6, 0, 0.5, 0]) + rng.normal(0, 0.05, 80)
    lo, hi = np.zeros(8), np.full(8, 10.0)
    expected = lsq_linear(Phi[0], y, bounds=(lo, hi), tol=1e-12).x
    got = solve_linear(Phi, y, (lo, hi), None, 0.0, n_iter=1)[0]
    np.testing.assert_allclose(got, expected, atol=1e-6)
    clipped = np.clip(np.linalg.lstsq(Phi[0], y, rcond=None)[0], lo, hi)
    assert np.max(np.abs(clipped - expected)) > 0.05  # the case is one where clipping is wrong
    assert ((got == 0) & (expected < 1e-9)).any()  # a constant held at its bound


def test_repeated_fit_reports_agreement_across_seeds():
    class Fit:
        def __init__(self, objective, converged=True):
            self.objective_, self.converged_ = objective, converged

    agree = RepeatedFit([Fit(7.0), Fit(7.0000001), Fit(7.3)], [0, 1, 2])
    assert agree.n_agree == 2 and agree.converged and abs(agree.objective_spread - 0.3 / 7) < 1e-12
    alone = RepeatedFit([Fit(7.0), Fit(7.2), Fit(7.3)], [0, 1, 2])
    assert alone.n_agree == 1 and not alone.converged
    capped = RepeatedFit([Fit(7.0, converged=False), Fit(7.0, converged=False)], [0, 1])
    assert not capped.converged


def _fit_under(coretype):
    env = dict(os.environ, OPENBLAS_CORETYPE=coretype, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env,
                          cwd=repo_root(), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_chapter_4_and_5_fits_agree_under_two_blas_kernel_sets():
    a, b = _fit_under("Haswell"), _fit_under("Prescott")
    assert sorted(a) == ["ch4 None", "ch4 l1", "ch4 l2", "ch5 l2"]
    for key in a:
        fa, fb = a[key], b[key]
        assert abs(fa["objective"] - fb["objective"]) <= 1e-4 * fa["objective"], (key, fa, fb)
        assert np.max(np.abs(np.subtract(fa["powers"], fb["powers"]))) <= 0.01, (key, fa["powers"], fb["powers"])
        assert abs(fa["mape"] - fb["mape"]) <= 0.2, (key, fa["mape"], fb["mape"])
        assert fa["converged"] and fb["converged"]


#: the Chapter 4 and 5 analyses in quick mode (2 seeds, a short λ grid, 60 DE generations): every claim's key,
#: verdict and estimate
LEDGER_SCRIPT = r"""
import json
from perfkit.chapters import ch4, ch5
# PyTorch and every other framework's file: TensorFlow, MXNet (1500 samples), Chainer and JAX (500)
CH4_KW = dict(framework_datasets=ch4.FRAMEWORK_DATASETS)
out = {}
for mod, kw in ((ch4, CH4_KW), (ch5, {})):
    result = mod.analyse(quick=True, progress=False, **kw)
    out[result.chapter] = result.claims[["key", "verdict", "estimate"]].to_dict("records")
print(json.dumps(out))
"""


def _ledgers_under(coretypes):
    """Run :data:`LEDGER_SCRIPT` under each core type at once (one process per core); None: the machine's own
    kernel set (OPENBLAS_CORETYPE unset, so its results and fits are the ones the session's other quick runs of
    Chapters 4 and 5, e.g. the notebooks', read back from the session's caches)."""
    procs = []
    for coretype in coretypes:
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")
        env.pop("OPENBLAS_CORETYPE", None)
        if coretype is not None:
            env["OPENBLAS_CORETYPE"] = coretype
        procs.append(subprocess.Popen([sys.executable, "-c", LEDGER_SCRIPT], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=env, cwd=repo_root()))
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=1800)
        assert proc.returncode == 0, stderr[-2000:]
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


#: relative agreement of every claim's estimate under two kernel sets (the engine tries switched-off terms on
#: again and small live ones off, so every seed reaches the same basin under either)
ESTIMATE_RTOL = 1e-3


@pytest.mark.slow
def test_quick_ledgers_have_the_same_verdicts_under_two_blas_kernel_sets():
    """The machine's own kernel set (Haswell's or a later one on any x86-64 CPU of the last decade) against the
    oldest SSE-only one: every verdict the same, every estimate to ESTIMATE_RTOL."""
    a, b = _ledgers_under((None, "Prescott"))
    for chapter in ("ch4", "ch5"):
        ra, rb = a[chapter], b[chapter]
        assert [r["key"] for r in ra] == [r["key"] for r in rb]
        flipped = [(x["key"], x["verdict"], y["verdict"]) for x, y in zip(ra, rb) if x["verdict"] != y["verdict"]]
        assert not flipped, (chapter, flipped)
        for x, y in zip(ra, rb):
            ex, ey = x["estimate"], y["estimate"]
            if ex is None or ey is None or ex != ex or ey != ey:  # no estimate (None or NaN): claim not testable
                assert (ex is None or ex != ex) and (ey is None or ey != ey), (chapter, x, y)
            else:  # the estimate a verdict is decided from, to ESTIMATE_RTOL
                assert abs(ex - ey) <= max(ESTIMATE_RTOL * max(abs(ex), abs(ey)), 1e-6), (chapter, x["key"], ex, ey)


def test_switched_off_terms_are_written_with_coefficient_and_power_zero():
    from perfkit.model.engine.canonical import canonical

    li, le, oh, y = _random_data(np.random.default_rng(1), 50, 2, 1, 2)
    pb = Problem(li, le, oh, y, (np.zeros(5), np.full(5, 10.0)), [(-5, 5)] * 3, None, 0.0)
    lin, powers = np.array([1.0, 1e-40, 0.5, 0.0, 0.2]), np.array([0.7, -5.0, -0.3])  # term 2 is off, at −5
    lin2, powers2 = canonical(pb, lin, powers)
    assert lin2[1] == 0.0 and powers2[1] == 0.0  # switched off: written one way
    assert lin2[0] == 1.0 and powers2[0] == 0.7 and lin2[2] == 0.5 and powers2[2] == -0.3  # the rest untouched
    before = objective(lin[None], powers[None], pb.design(powers), y, None, 0.0)[0]
    after = objective(lin2[None], powers2[None], pb.design(powers2), y, None, 0.0)[0]
    assert abs(before - after) <= 1e-12 * before
    live = np.array([1.0, 1e-3, 0.5, 0.0, 0.2])  # a small coefficient that still contributes stays
    assert canonical(pb, live, powers)[1][1] == -5.0


def test_refinement_starts_are_distinct_members_of_the_final_population():
    from perfkit.model.engine.engines import distinct_starts

    pop = np.array([[0.0, 0.0], [0.05, 0.0], [1.0, 0.0], [1.02, 0.05], [0.0, 2.0], [3.0, 3.0]])
    starts = distinct_starts(pop, pop[0], 3)
    assert [s.tolist() for s in starts] == [[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]
    assert len(distinct_starts(pop, pop[0], 1)) == 1
