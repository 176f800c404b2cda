"""GenericPerformanceModel: fit/predict, scikit-learn integration, JSON, engines, validation."""
import json

import numpy as np
import pytest

from perfkit.model.forms.generic import GenericPerformanceModel
from tests.frames import generic_data as _data


def _model(**kw):
    return GenericPerformanceModel(numeric=["kernel", "filters"], categorical=["act"], extrinsic=["gpus", "batch"],
                                   random_state=0, **kw)


@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    return _model().fit(X, y), X, y


def test_fit_recovers_known_powers(fitted):
    m, X, y = fitted
    q = dict(zip(m.power_names_, m.powers_))
    assert q["q[gpus]"] == pytest.approx(-0.9, abs=0.03)
    assert q["q[batch]"] == pytest.approx(-1.0, abs=0.03)
    assert q["p[kernel]"] == pytest.approx(1.5, abs=0.3)
    assert m.score(X, y) > 0.98
    # unit-free (the default): the objective of the problem solved, the times divided by their median
    assert m.objective_ == pytest.approx(np.mean(np.abs(y - m.predict(X))) / m.scales_["target"])
    assert m.n_iter_ > 0 and len(m.history_) == m.n_iter_ and m.history_[-1] <= m.history_[0]


def test_params_table_layout(fitted):
    m = fitted[0]
    p = m.params_
    assert list(p.columns) == ["term", "kind", "column", "level", "a", "p", "q", "C"]
    assert list(p["kind"]) == ["numeric"] * 2 + ["categorical"] * 3 + ["extrinsic"] * 2 + ["constant"]
    assert p.loc[p.term == "C", "C"].iloc[0] == pytest.approx(m.coef_[-1])
    assert ((p["a"].dropna() >= 0) & (p["a"].dropna() <= 1000)).all()


def test_same_seed_same_numbers():
    X, y = _data(n=150)
    a = _model(maxiter=30).fit(X, y)
    b = _model(maxiter=30).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.powers_, b.powers_)


def test_sklearn_integration():
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, cross_val_score
    from sklearn.pipeline import Pipeline

    X, y = _data(n=150)
    m = _model(maxiter=20, penalty="l2")
    assert clone(m).get_params()["penalty"] == "l2"
    scores = cross_val_score(m, X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.8)
    gs = GridSearchCV(m, {"lam": [1e-4, 1e-1]}, cv=2).fit(X, y)
    assert gs.best_params_["lam"] == 1e-4  # heavy shrinkage fits worse
    pipe = Pipeline([("model", _model(maxiter=20))]).fit(X, y)
    assert pipe.predict(X.head(3)).shape == (3,)


def test_l2_penalty_shrinks_parameters():
    X, y = _data(n=150)
    free = _model(maxiter=40).fit(X, y)
    shrunk = _model(maxiter=40, penalty="l2", lam=1.0).fit(X, y)
    norm = lambda m: np.sum(m.coef_[:-1] ** 2) + np.sum(m.powers_ ** 2)  # noqa: E731
    assert norm(shrunk) < norm(free)


def test_reference_coding_fixes_first_level():
    X, y = _data(n=150)
    m = GenericPerformanceModel(numeric=["kernel"], categorical=["act", "gpus"], extrinsic=["batch"],
                                coding="reference", random_state=0, maxiter=30).fit(X, y)
    p = m.params_
    gp = p[p.column == "gpus"]
    assert gp["a"].iloc[0] == 0.0 and len(gp) == 3
    assert len(m.linear_names_) == 1 + 3 + 2 + 1


def test_json_round_trip(fitted, tmp_path):
    m, X, _ = fitted
    path = tmp_path / "model.json"
    text = m.to_json(path)
    assert json.loads(text)["format"] == "perfkit.GenericPerformanceModel"
    m2 = GenericPerformanceModel.from_json(path)
    np.testing.assert_allclose(m2.predict(X), m.predict(X), rtol=0, atol=0)
    assert m2.get_params() == m.get_params()
    with pytest.raises(ValueError, match="format"):
        GenericPerformanceModel.from_json('{"a": 1}')


def test_thesis_engine_runs_and_is_reported():
    X, y = _data(n=120)
    m = _model(method="thesis", maxiter=15).fit(X, y)
    assert m.n_iter_ <= 15 and np.isfinite(m.objective_)
    # unit-free (the default): the objective of the problem solved, the times divided by their median
    assert m.objective_ == pytest.approx(np.mean(np.abs(y - m.predict(X))) / m.scales_["target"])


@pytest.mark.parametrize(
    "mutate, kw, match",
    [
        (lambda X: X.drop(columns="kernel"), {}, "numeric column 'kernel' not found"),
        (lambda X: X.rename(columns={"filters": "filter"}), {}, "did you mean 'filter'"),
        (lambda X: X.assign(kernel=X["kernel"].where(X.index != 5, np.nan)), {}, "'kernel': missing or non-finite value nan in row 5"),
        (lambda X: X.assign(batch=X["batch"].where(X.index != 7, np.inf)), {}, "'batch': missing or non-finite value inf in row 7"),
        (lambda X: X.assign(filters=X["filters"].astype(object).where(X.index != 3, "many")), {},
         "non-numeric value 'many' in row 3"),
        (lambda X: X.assign(gpus=X["gpus"].where(X.index != 2, 0.0)), {}, "'gpus': value 0 in row 2 must be > 0"),
        (lambda X: X.iloc[:0], {}, "empty"),
        (lambda X: X.iloc[:5], {}, "fewer than the 10 parameters"),
        (lambda X: X, {"penalty": "l3"}, "penalty"),
        (lambda X: X, {"lam": -1.0, "penalty": "l2"}, "lam"),
        (lambda X: X, {"lam": 0.1}, "needs penalty"),
        (lambda X: X, {"method": "fast"}, "method"),
        (lambda X: X, {"bounds": {"z": (0, 1)}}, "bounds: unknown key 'z'"),
    ],
)
def test_validation_errors(mutate, kw, match):
    X, y = _data(n=60)
    X2 = mutate(X)
    with pytest.raises(ValueError, match=match):
        _model(maxiter=2, **kw).fit(X2, y[: len(X2)])


def test_unseen_category_and_unfitted(fitted):
    m, X, _ = fitted
    bad = X.head(3).copy()
    bad.loc[bad.index[1], "act"] = "gelu"
    with pytest.raises(ValueError, match="unseen category 'gelu' in row 1"):
        m.predict(bad)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        _model().predict(X)


def test_target_validation():
    X, y = _data(n=60)
    y = y.astype(object)
    y[4] = "slow"
    with pytest.raises(ValueError, match="y: non-numeric or missing value 'slow' in row 4"):
        _model(maxiter=2).fit(X, y)
    with pytest.raises(ValueError, match="59 values for 60 rows"):
        _model(maxiter=2).fit(X, np.ones(59))


def _ch4_problem(monkeypatch, framework, lam, random_state):
    """The engine's :class:`~perfkit.model.engine.problem.Problem` of an L1 fit of ``framework``'s Chapter 4 file (the
    thesis split), caught on its way into the engine (which then runs one generation only)."""
    from perfkit.chapters.ch4 import make_model
    from perfkit.data.measured import load_steps, thesis_split
    from perfkit.model.engine import engines as E
    from perfkit.model.engine import hops, newton, screening, search_cost

    X, y, _ = load_steps(f"data/measured/{framework}-cpu/ch4_lenet5.csv", target="epoch_time")
    X_fit, _, y_fit, _ = thesis_split(X, y, n_fit=1000, n_test=500, seed=0)
    seen = []

    def capture(problem, rng, **kw):
        seen.append(problem)
        return E.fit_varpro(problem, rng, **{**kw, "maxiter": 1})

    monkeypatch.setitem(E.ENGINES, "varpro", capture)
    make_model(penalty="l1", lam=lam, random_state=random_state).fit(X_fit, y_fit)
    return seen[0]


def test_switched_off_term_is_tried_on(monkeypatch):
    """The refinement cannot turn on a term whose coefficient sits at 0; the engine's hops can.

    Chainer's Chapter 4 file, L1 λ = 3e-4: the basin with every small term off (objective 17.2637) is a local
    minimum of the refinement, 0.12 % above the basin with the learning-rate term on; which of the two the
    search's starts fell into used to depend on the BLAS kernels.
    """
    from perfkit.model.engine import engines as E
    from perfkit.model.engine import hops, newton, screening, search_cost

    problem = _ch4_problem(monkeypatch, "chainer", lam=3e-4, random_state=1)
    names = [f"p[{c}]" for c in ("num_filters", "kernel_size", "pool_size", "learning_rate", "stride", "dropout")]
    assert problem.n_p == len(names)
    off = np.array([1.606, 4.526, 0.0, 0.0, -5.0, 0.0, -0.139, -0.375])  # the all-off basin's powers
    lin = search_cost.linear_for(problem, off, 3)
    lin[[2, 3, 5]] = 0.0  # pool size, learning rate and dropout off
    stays = min(f[0] for f in screening.screen(problem, [(lin, off)], newton.REFINE_STAGES))
    assert stays == pytest.approx(17.2637, rel=1e-4)  # refining alone stays in the all-off basin
    hops = hops.switched_on(problem, lin, off)
    at_bounds = [(ln, pw) for ln, pw in hops if np.array_equal(ln[problem.n_p:], lin[problem.n_p:])]
    assert len(at_bounds) == 6  # three terms off, each tried at both power bounds (the linear part kept) ...
    for ln, pw in at_bounds:
        j = int(np.flatnonzero(ln[:problem.n_p] != lin[:problem.n_p])[0])
        assert pw[j] in problem.pow_bounds[j] and ln[j] > 0
    scanned = [(ln, pw) for ln, pw in hops if not np.array_equal(ln[problem.n_p:], lin[problem.n_p:])]
    assert 1 <= len(scanned) <= 3  # ... and from a scan of its power, where the term comes out on there
    for ln, pw in scanned:
        changed = np.flatnonzero(pw != off)
        assert len(changed) == 1 and ln[changed[0]] > 0 and lin[changed[0]] == 0.0
    found = E.refine_best(problem, [off], 3, newton.REFINE_STAGES, 0, [])
    assert problem.exact(found.lin, found.powers) < 17.2425  # the learning-rate term's basin
    assert found.lin[3] > 0 and "one term switched on or off" in found.message


def test_small_live_term_is_tried_off(monkeypatch):
    """The mirror case: a small term that is on in a basin above the one with it off.

    MXNet's Chapter 4 file, L1 λ = 1e-3: under Haswell BLAS kernels the search's starts ended with the
    learning-rate term on (p ≈ 0.16, 0.1 % of the mean time), 1.9e-5 above the basin with it off that the default
    and Prescott kernels reached. Refining alone stays on; the switched-off start reaches the lower basin.
    """
    from perfkit.model.engine import engines as E
    from perfkit.model.engine import hops, newton, screening, search_cost

    problem = _ch4_problem(monkeypatch, "mxnet", lam=1e-3, random_state=0)
    on = np.array([1.2845, 5.0, -1.1658, 0.1632, -3.0105, -1.4280, -0.571, 0.063])  # learning rate (index 3) on
    stays = screening.screen(problem, [(search_cost.linear_for(problem, on, 3), on)], newton.REFINE_STAGES)
    obj_on, lin_on, pw_on = min(stays, key=lambda f: f[0])[:3]
    assert lin_on[3] > 0 and obj_on > 6.99160  # refining alone keeps the term on, above the other basin
    offs = hops.switched_off(problem, lin_on, pw_on, newton.REFINE_STAGES)
    assert len(offs) == 1  # only the learning-rate term is below 1 % of the mean time
    assert offs[0][1][3] == 0.0 and offs[0][2][3] == 0.0 and offs[0][0] < obj_on
    found = E.refine_best(problem, [on], 3, newton.REFINE_STAGES, 0, [])
    assert found.lin[3] == 0.0 and "one term switched on or off" in found.message
    assert problem.exact(found.lin, found.powers) == pytest.approx(6.991537, rel=2e-6)
    assert problem.exact(found.lin, found.powers) < obj_on


def test_stuck_l1_term_is_tried_on(monkeypatch):
    """An L1 term that the smoothed penalty leaves at a few δ instead of 0 counts as off, so it is tried on again.

    TensorFlow's Chapter 4 file, L1 λ = 0.03, seed 1: under Haswell BLAS kernels the search's starts ended with the
    stride term at a = 1e-5, p = 0 (off in all but name), 1.2 % above the basin with it on at p ≈ −1.97 that the
    default kernels reached. Refining alone stays there; counting the stuck term as off reaches the lower basin.
    """
    from dataclasses import replace

    from perfkit.model.engine import engines as E
    from perfkit.model.engine import hops, newton, screening, search_cost

    problem = _ch4_problem(monkeypatch, "tensorflow", lam=0.03, random_state=1)
    stuck = np.array([0.90565, 1.19222, 0.0, -0.17501, 0.0, 0.0, -0.52372, 0.17326])  # the Haswell basin's powers
    stays = screening.screen(problem, [(search_cost.linear_for(problem, stuck, 3), stuck)], newton.REFINE_STAGES)
    obj, lin, pw = min(stays, key=lambda f: f[0])[:3]
    assert obj == pytest.approx(7.03963, rel=1e-5)  # refining alone stays in the basin with stride off
    assert 0.0 < lin[4] < 1e-4  # ... where the stride term is stuck near 0, not at 0
    F, T = problem.weighted_terms(lin, pw)
    terms = hops.stuck_terms(problem, lin, pw, F, T)
    assert 4 in terms and 0 not in terms  # stride is stuck; the filters term carries much of the time
    assert not hops.stuck_terms(replace(problem, penalty="l2"), lin, pw, F, T)  # only the L1 smoothing leaves stuck terms
    hops = hops.switched_on(problem, lin, pw)
    assert {int(np.flatnonzero(p_ != pw)[0]) for _, p_ in hops if (p_ != pw).any()} >= {4}  # stride is tried on
    found = E.refine_best(problem, [stuck], 3, newton.REFINE_STAGES, 0, [])
    assert problem.exact(found.lin, found.powers) == pytest.approx(6.956026, rel=1e-6)
    assert found.lin[4] > 1.0 and found.powers[4] == pytest.approx(-1.9697, abs=1e-3)


def _nested_problem(penalty=None, lam=0.0):
    """Two categorical columns, the second nested in the first (variant v0/v1 only with model m0, v2 only with m1),
    no numeric or extrinsic column: only m0 + v0, m0 + v1 and m1 + v2 are determined."""
    from perfkit.model.engine.problem import Problem

    combos = np.array([[1, 0, 1, 0, 0], [1, 0, 0, 1, 0], [0, 1, 0, 0, 1]], dtype=float)  # m0 m1 | v0 v1 v2
    onehot = np.repeat(combos, 4, axis=0)
    K = 5 + 1
    return Problem(np.zeros((12, 0)), np.zeros((12, 0)), onehot, onehot @ [1.0, 2.0, 0.5, 0.25, 1.0],
                   (np.zeros(K), np.full(K, 10.0)), [], penalty, lam)


def test_undetermined_constants_are_written_one_way():
    from perfkit.model.engine.canonical import canonical_levels

    pb = _nested_problem()
    one = canonical_levels(pb, [1.0, 2.0, 0.5, 0.25, 1.0, 0.0])
    other = canonical_levels(pb, [0.2, 0.5, 1.3, 1.05, 2.5, 0.0])  # the same row sums: m0 + v0 = 1.5 etc.
    np.testing.assert_allclose(one, other, atol=1e-12)
    np.testing.assert_allclose(pb.onehot @ one[:5], pb.onehot @ [1.0, 2.0, 0.5, 0.25, 1.0], rtol=1e-12)
    # the earliest column carries what it can: each model its variants' smallest share, that variant 0
    np.testing.assert_allclose(one, [1.25, 3.0, 0.25, 0.0, 0.0, 0.0], atol=1e-12)


def test_determined_or_l2_constants_are_left_alone():
    from perfkit.model.engine.canonical import canonical_levels
    from perfkit.model.engine.problem import Problem

    lin = np.array([0.2, 0.5, 1.3, 1.05, 2.5, 0.0])
    np.testing.assert_array_equal(canonical_levels(_nested_problem("l2", 0.1), lin), lin)
    crossed = np.array([[1, 0, 1, 0], [1, 0, 0, 1], [0, 1, 1, 0], [0, 1, 0, 1]], dtype=float)  # m0 m1 | v0 v1
    pb = Problem(np.zeros((4, 0)), np.zeros((4, 0)), crossed, np.ones(4), (np.zeros(5), np.full(5, 10.0)), [])
    at_bound = np.array([1.0, 2.0, 0.0, 0.5, 0.0])  # the earlier column already carries all it can (v0 = 0)
    np.testing.assert_allclose(canonical_levels(pb, at_bound), at_bound, atol=1e-14)
    # with an L1 penalty Σκ is kept too
    l1 = canonical_levels(_nested_problem("l1", 0.1), lin)
    assert l1[:5].sum() == pytest.approx(lin[:5].sum())
    np.testing.assert_allclose(_nested_problem().onehot @ l1[:5], _nested_problem().onehot @ lin[:5], rtol=1e-12)
