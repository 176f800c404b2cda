"""The communication-prior step form (perfkit.model.forms.commprior): synchronisation priced by gradient bytes over
each level's bandwidth, an efficiency fitted per measured level and taken from the prior for a level never measured;
and the hardware facts it reads (perfkit.model.selection.by_scale.hardware_prior)."""
import json

import numpy as np
import pandas as pd
import pytest

from perfkit.model.forms.commprior import (DEFAULT_EFFICIENCY, DEFAULT_MIN_PRIOR_EFFICIENCY, CommPriorStepModel,
                                           ring_costs)
from perfkit.model.persist import load_model
from perfkit.model.selection.by_scale import hardware_prior, step_family
from perfkit.study import FitSpec

B, INTRA, INTER = 4e8, 16.0, 6.0  # bytes a step, GB/s inside a node (per GPU) and across nodes (per node)


def _rows(layouts, u_intra=3.0, u_inter=5.0, noise=0.0, seed=0):
    """Step times of a known model: compute 0.05 + 0.004·m, sync 0.002 + u·ring cost per level, overlap γ = 1."""
    rng = np.random.default_rng(seed)
    K = np.array([k for k, _ in layouts] * 3, dtype=float)
    N = np.array([n for _, n in layouts] * 3, dtype=float)
    m = np.repeat([8.0, 16.0, 32.0], len(layouts))
    ci, cn = ring_costs(K, N, B, INTRA, INTER)
    sync = np.where(K > 1, 0.002 + u_intra * ci + u_inter * cn, 0.0)
    t = (0.05 + 0.004 * m + sync) * np.exp(noise * rng.standard_normal(len(K)))
    return pd.DataFrame({"n_gpus": K, "n_nodes": N, "batch_per_gpu": m, "sync_time": sync}), t


def test_ring_costs_are_the_all_reduce_of_each_level():
    ci, cn = ring_costs([8, 8, 1], [1, 2, 1], 1e9, 10.0, 5.0)
    assert ci.tolist() == pytest.approx([2 * 7 / 8 * 0.1, 2 * 3 / 4 * 0.1, 0.0])
    assert cn.tolist() == pytest.approx([0.0, 2 * 1 / 2 * 0.2, 0.0])
    assert ring_costs([4], [2], 1e9, 10.0, None)[1][0] == pytest.approx(2 * 1 / 2 * 0.1)  # unknown network: intra's


def test_both_levels_measured_are_both_fitted():
    X, y = _rows([(1, 1), (2, 1), (4, 1), (2, 2), (4, 2), (8, 2), (8, 4)])
    m = CommPriorStepModel(grad_bytes=B, intra_gbps=INTRA, inter_gbps=INTER, loss="linear").fit(X, y)
    assert m.prior_ == {"intra": "fitted", "inter": "fitted"}
    eff = m.efficiencies()
    # the ridge that pins free directions (stepmodels._RIDGE_ROOT) shrinks the u a little: within 2 %
    assert eff["intra"][0] == pytest.approx(1 / 3.0, rel=2e-2) and eff["inter"][0] == pytest.approx(1 / 5.0, rel=2e-2)
    assert np.allclose(m.predict(X), y, rtol=1e-2)
    shown = f"intra {eff['intra'][0]:.3g} (fitted); inter {eff['inter'][0]:.3g} (fitted)"
    assert "efficiency (achieved / datasheet bandwidth) per level: " + shown in m.summary()


def test_a_level_the_rows_never_measured_takes_the_prior():
    X, y = _rows([(1, 1), (2, 1), (3, 1), (4, 1)])  # one node only: the network is never measured
    m = CommPriorStepModel(grad_bytes=B, intra_gbps=INTRA, inter_gbps=INTER, loss="linear").fit(X, y)
    assert m.prior_ == {"intra": "fitted", "inter": "prior: the intra level's"}
    eff = m.efficiencies()
    assert eff["inter"][0] == pytest.approx(eff["intra"][0]) == pytest.approx(1 / 3.0, rel=2e-2)
    big = pd.DataFrame({"n_gpus": [16.0], "n_nodes": [4.0], "batch_per_gpu": [8.0]})
    ci, cn = ring_costs(16, 4, B, INTRA, INTER)
    assert m.predict(big)[0] == pytest.approx(0.05 + 0.004 * 8 + 0.002 + 3.0 * (ci + cn), rel=2e-2)
    assert f"inter {eff['inter'][0]:.3g} (prior: the intra level's)" in m.summary()
    single = CommPriorStepModel(grad_bytes=B, intra_gbps=INTRA, inter_gbps=INTER).fit(*_rows([(1, 1)] * 2))
    assert single.prior_ == {"intra": "prior: default efficiency", "inter": "prior: default efficiency"}
    assert single.efficiencies()["intra"][0] == pytest.approx(DEFAULT_EFFICIENCY)


def test_a_carried_efficiency_below_the_floor_is_raised_to_it():
    X, y = _rows([(1, 1), (2, 1), (3, 1), (4, 1)], u_intra=40.0)  # a node link at 2.5 % of its datasheet bandwidth
    m = CommPriorStepModel(grad_bytes=B, intra_gbps=INTRA, inter_gbps=INTER, loss="linear").fit(X, y)
    eff = m.efficiencies()
    assert eff["intra"][0] < DEFAULT_MIN_PRIOR_EFFICIENCY and eff["intra"][1] == "fitted"
    assert eff["inter"] == (pytest.approx(DEFAULT_MIN_PRIOR_EFFICIENCY), "prior: the intra level's, raised to the floor")
    assert "inter 0.1 (prior: the intra level's, raised to the floor)" in m.summary()
    carried = CommPriorStepModel(grad_bytes=B, intra_gbps=INTRA, inter_gbps=INTER, loss="linear",
                                 min_prior_efficiency=None).fit(X, y)
    assert carried.efficiencies()["inter"] == (pytest.approx(eff["intra"][0]), "prior: the intra level's")
    assert np.allclose(carried.predict(X), m.predict(X))  # the floor changes nothing the rows measured
    big = pd.DataFrame({"n_gpus": [16.0], "n_nodes": [4.0], "batch_per_gpu": [8.0]})
    assert m.predict(big)[0] < 0.8 * carried.predict(big)[0]  # the network priced at 10 %, not at the link's 4 %
    # a file saved before the floor existed carries the efficiency as it was fitted
    doc = json.loads(m.to_json())
    assert doc["settings"]["min_prior_efficiency"] == DEFAULT_MIN_PRIOR_EFFICIENCY
    del doc["settings"]["min_prior_efficiency"]
    assert load_model(json.dumps(doc)).predict(big)[0] == pytest.approx(carried.predict(big)[0], rel=1e-6)


def test_the_form_saves_its_prior_as_json():
    X, y = _rows([(1, 1), (2, 1), (4, 1)], noise=0.01)
    m = CommPriorStepModel(grad_bytes=B, intra_gbps=INTRA, inter_gbps=None).fit(X, y)
    back = load_model(m.to_json())
    assert isinstance(back, CommPriorStepModel) and back.prior_ == m.prior_
    assert np.array_equal(back.predict(X), m.predict(X)) and back.formula() == m.formula()
    assert "the network bandwidth is unknown: priced at the intra-node bandwidth (no multi-node row" in m.summary()
    doc = json.loads(m.to_json())
    doc["fitted"]["prior"]["inter"] = "guessed"
    with pytest.raises(ValueError, match="fitted.prior"):
        load_model(json.dumps(doc))


@pytest.mark.parametrize("settings, pattern", [
    (dict(grad_bytes=0.0), "grad_bytes"), (dict(intra_gbps=-1.0), "intra_gbps"), (dict(inter_gbps=0.0), "inter_gbps"),
    (dict(default_efficiency=2.0), r"default_efficiency: expected a number in \(0, 1\]"),
    (dict(min_prior_efficiency=1.5), r"min_prior_efficiency: expected None or a number in \(0, 1\]"),
    (dict(min_prior_efficiency=0.0), "min_prior_efficiency"),
])
def test_bad_settings_are_one_error_naming_them(settings, pattern):
    X, y = _rows([(1, 1), (2, 1), (4, 1)])
    base = dict(grad_bytes=B, intra_gbps=INTRA, inter_gbps=INTER)
    with pytest.raises(ValueError, match=pattern):
        CommPriorStepModel(**{**base, **settings}).fit(X, y)


def test_the_hardware_tables_give_the_prior(tmp_path):
    aws = hardware_prior("aws", "ncf")
    assert aws == {"grad_bytes": 1602657 * 4.0, "intra_gbps": 15.75, "inter_gbps": 6.25}
    assert hardware_prior("dgx", "bert")["inter_gbps"] is None  # Sia's on-prem network is not known
    with pytest.raises(ValueError, match="did you mean|closest|aws"):
        hardware_prior("awss", "ncf")
    from perfkit.data.hardware import load_clusters

    mine = load_clusters().query("cluster == 'aws'").assign(cluster="lab", inter_gbps=12.5)
    mine.to_csv(tmp_path / "mine.csv", index=False)
    assert hardware_prior(f"{tmp_path / 'mine.csv'}:lab", "ncf")["inter_gbps"] == 12.5
    family = step_family(comm=aws)
    assert [n for n in family if n.startswith("comm[")] == ["comm[soft_l1, w=0]", "comm[soft_l1, w=1]",
                                                            "comm[huber, w=0]", "comm[huber, w=1]"]


@pytest.mark.parametrize("changes, pattern", [
    (dict(cluster="aws"), r"cluster='aws' needs job too"),
    (dict(job="ncf"), r"job='ncf' needs cluster too"),
    (dict(cluster="aws", job="ncf", test_size=0.3), r"cluster/job give the communication prior of a scaling study"),
])
def test_cluster_and_job_belong_to_the_scaling_study(changes, pattern):
    with pytest.raises(ValueError, match=pattern):
        FitSpec(target="t", form="auto", gpus="g", nodes="n", batch="b", **changes)
