"""Choosing from small runs (perfkit.model.selection.by_scale): the consensus of the step forms against boosted trees,
Chapter 7's best-k rule, and the boosted trees saved as JSON (perfkit.model.forms.boosted)."""
import json

import numpy as np
import pandas as pd
import pytest

from perfkit.model.forms.boosted import BoostedStepModel
from perfkit.model.forms.median import BlendOfModels, MedianOfModels
from perfkit.model.persist import load_model
from perfkit.model.selection.by_scale import NOT_IN_CONSENSUS, choose_by_scale, scale_splits, step_family

C = ["n_gpus", "n_nodes", "batch_per_gpu"]


@pytest.fixture(scope="module")
def job():
    from perfkit.data import load_pollux

    rows = load_pollux().query("job == 'deepspeech2'")
    return rows[rows.n_gpus <= 16][C + ["sync_time", "t_iter"]].reset_index(drop=True)


def test_boosted_trees_predict_as_sklearn_and_come_back_from_json(job):
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.model_selection import GridSearchCV, KFold

    from perfkit.model.forms.boosted import GRID

    m = BoostedStepModel().fit(job[C], job.t_iter.to_numpy())
    search = GridSearchCV(GradientBoostingRegressor(random_state=0), GRID, cv=KFold(5, shuffle=True, random_state=0),
                          scoring="neg_mean_absolute_error").fit(np.log(job[C].to_numpy(dtype=float)),
                                                                 np.log(job.t_iter.to_numpy()))
    big = pd.DataFrame({"n_gpus": [64, 128, 64], "n_nodes": [16, 16, 16], "batch_per_gpu": [4, 4, 40]})
    want = np.exp(search.best_estimator_.predict(np.log(big.to_numpy(dtype=float))))
    assert np.allclose(m.predict(big), want, rtol=1e-12)
    assert m.predict(big)[0] == pytest.approx(m.predict(big)[1])  # beyond every fitted value: the flat edge
    back = load_model(m.to_json())
    assert isinstance(back, BoostedStepModel) and np.array_equal(back.predict(big), m.predict(big))
    doc = json.loads(m.to_json())
    doc["fitted"]["trees"][0]["left"][1] = 0  # a child that points back up: a walk that never ends
    with pytest.raises(ValueError, match="fitted.trees: .*children within the tree"):
        load_model(json.dumps(doc))


def test_the_consensus_weighs_the_median_of_the_step_forms_against_the_trees(job):
    family = step_family(quick=True, boosted=True)
    splits = scale_splits(job.n_gpus)
    X, y = job.drop(columns="t_iter"), job.t_iter.to_numpy()
    choice = choose_by_scale(family, X, y, "n_gpus", splits, predict_drop=["sync_time"])
    members = [n for n in family if n not in NOT_IN_CONSENSUS]
    options = choice.options.option.tolist()
    assert options[:2] == [f"median of the {len(members)} step forms", "boosted trees"]
    assert set(choice.scores.candidate) == set(family) and choice.scores.score.is_monotonic_increasing
    winner = choice.options.option.iloc[int(choice.options.score.idxmin())]
    if winner == "boosted trees":
        assert choice.names == ["boosted"] and isinstance(choice.estimator, BoostedStepModel)
        assert isinstance(choice.alternative, MedianOfModels)
    elif winner.startswith("blend"):
        assert choice.names == members + ["boosted"] and isinstance(choice.estimator, BlendOfModels)
        w = choice.estimator.weights
        assert 0 < w[0] < 1 and w[0] + w[1] == pytest.approx(1) and f"{w[0]:g} × median" in winner
        assert choice.alternative is None  # the blend holds both options
    else:
        assert choice.names == members and isinstance(choice.estimator, MedianOfModels)
        assert isinstance(choice.alternative, BoostedStepModel)
    assert choice.score == pytest.approx(choice.options.score.min())
    if len(options) == 3:  # a blend is offered only when it scores below both options alone
        assert options[2].startswith("blend") and choice.options.score.iloc[2] < choice.options.score.iloc[:2].min()
    best_k = choose_by_scale(family, X, y, "n_gpus", splits, predict_drop=["sync_time"], rule="best-k")
    assert best_k.names == best_k.scores.candidate.head(len(best_k.names)).tolist()  # the best k, in order
    assert best_k.options.k.tolist() == list(range(1, len(family) + 1))
    with pytest.raises(ValueError, match="rule: expected one of"):
        choose_by_scale(family, X, y, "n_gpus", splits, rule="vote")


def test_the_consensus_blends_two_options_whose_errors_lie_on_opposite_sides():
    """Hand-checked: the step forms err by e^+0.2 and the trees by e^-0.2 on every inner row, so exp(0.5·log +
    0.5·log) is exact: the blend at w = 0.5 wins (inner MAPE 0) and holds both options; with the trees exact, they
    win alone and the median is kept as the alternative."""
    from perfkit.model.forms.stepmodels import PhaseAwareStepModel
    from perfkit.model.selection import by_scale

    y = np.array([1.0, 2.0, 4.0])
    frame = lambda f: pd.DataFrame({"t": y, "predicted": y * f})  # noqa: E731
    cands = {"phase[a]": PhaseAwareStepModel(), "phase[b]": PhaseAwareStepModel(), "pollux": PhaseAwareStepModel(),
             "boosted": BoostedStepModel()}
    preds = {"phase[a]": [frame(np.exp(0.2))] * 2, "phase[b]": [frame(np.exp(0.2))] * 2,
             "pollux": [frame(3.0)] * 2, "boosted": [frame(np.exp(-0.2))] * 2}
    keys = ["s1", "s2"]
    choice = by_scale._consensus(cands, preds, keys, "t", pd.DataFrame(), [(1, 2, 4), (2, 3, 4)])
    assert choice.options.option.tolist() == ["median of the 2 step forms", "boosted trees",
                                              "blend: 0.5 × median + 0.5 × boosted trees"]
    assert choice.options.score.iloc[:2].tolist() == pytest.approx([100 * (np.exp(0.2) - 1), 100 * (1 - np.exp(-0.2))])
    assert choice.options.score.iloc[2] == pytest.approx(0.0, abs=1e-9)
    assert isinstance(choice.estimator, BlendOfModels) and choice.estimator.weights == [0.5, 0.5]
    assert choice.names == ["phase[a]", "phase[b]", "boosted"] and choice.alternative is None
    assert np.allclose(choice.inner[0]["predicted"], y) and "blend of the median of the 2 step forms (0.5)" in choice.label
    preds["boosted"] = [frame(1.0)] * 2
    alone = by_scale._consensus(cands, preds, keys, "t", pd.DataFrame(), [(1, 2, 4), (2, 3, 4)])
    assert alone.names == ["boosted"] and alone.options.option.tolist() == ["median of the 2 step forms",
                                                                            "boosted trees"]
    assert isinstance(alone.alternative, MedianOfModels) and alone.estimator is cands["boosted"]
