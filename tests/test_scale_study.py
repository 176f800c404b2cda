"""A scaling study from small runs alone (`perfkit fit --form auto` with the step columns, or `--scale-of COL`): every
row fitted, the model chosen on inner extrapolation splits, intervals widened by the transferred κ, and the
`regime` flag on rows beyond the fit rows' node count or GPUs per node."""
import json

import numpy as np
import pandas as pd
import pytest

from perfkit.model.persist import load_model
from perfkit.model.selection.by_scale import scale_splits, step_family
from perfkit.model.uncertainty.scale_intervals import (DEFAULT_DISAGREEMENT, DEFAULT_KAPPA, DEFAULT_REGIME_KAPPA,
                                                        DISAGREEMENT_KAPPA, DISAGREEMENT_REGIME_KAPPA,
                                                        ScaleIntervalModel)
from perfkit.study import FitSpec, run
from tests.cli import one_error as _one_error, run_cli as _run

COLS = ["n_gpus", "n_nodes", "batch_per_gpu", "t_iter", "sync_time"]
STEP = dict(gpus="n_gpus", nodes="n_nodes", batch="batch_per_gpu", phases="sync_time")
FLAGS = ["--target", "t_iter", "--form", "auto", "--gpus", "n_gpus", "--nodes", "n_nodes", "--batch",
         "batch_per_gpu", "--phases", "sync_time"]


@pytest.fixture(scope="module")
def yolov3():
    from perfkit.data import load_pollux

    return load_pollux().query("job == 'yolov3'")[COLS].reset_index(drop=True)


@pytest.fixture(scope="module")
def small(yolov3):
    """The study of yolov3's rows with at most 16 GPUs (the small end of Pollux's traces)."""
    return run(FitSpec(target="t_iter", form="auto", **STEP), yolov3[yolov3.n_gpus <= 16], progress=False)


@pytest.fixture(scope="module")
def one_node(yolov3):
    """The study of yolov3's single-node rows only (1-4 GPUs on one node)."""
    return run(FitSpec(target="t_iter", form="auto", **STEP), yolov3[yolov3.n_nodes == 1], progress=False)


def test_the_study_fits_every_row_and_chooses_on_inner_splits(small, yolov3):
    fit = yolov3[yolov3.n_gpus <= 16]
    assert small.spec.scale_study == "n_gpus" and small.n_fit == len(fit) and small.n_test == 0
    assert small.scale == ("n_gpus", 16.0) and small.held_out is None and small.coverage is None
    m = small.model
    # the consensus's two options are kept: their disagreement widens the intervals, with the κ calibrated with it
    assert isinstance(m, ScaleIntervalModel) and m.inflation == DISAGREEMENT_KAPPA
    assert m.disagreement == DEFAULT_DISAGREEMENT and small.spec.kappa == DEFAULT_KAPPA
    assert m.splits == scale_splits(fit.n_gpus) == [(4.0, 8.0, 16.0), (6.0, 10.0, 16.0), (8.0, 12.0, 16.0)]
    # every candidate scored on the inner splits; the rule weighs the consensus against the boosted trees
    assert set(small.search_table.candidate) == set(step_family(boosted=True))
    assert small.search_table.score.is_monotonic_increasing
    choice = small.search
    assert choice.rule == "consensus" and choice.options.option.tolist()[:2] == ["median of the 20 step forms",
                                                                                 "boosted trees"]
    chosen = choice.options.option.iloc[int(choice.options.score.idxmin())]
    members = [n for n in step_family() if n != "pollux"]
    assert choice.names == (["boosted"] if chosen == "boosted trees" else
                            members + ["boosted"] if chosen.startswith("blend") else members)
    if chosen.startswith("blend"):  # a blend holds both options
        assert m.alternative_ is None and type(m.estimator_).__name__ == "BlendOfModels"
    else:  # one option alone: the other is kept
        assert type(m.alternative_).__name__ == ("MedianOfModels" if chosen == "boosted trees" else "BoostedStepModel")
    assert small.inner["auto model"] == pytest.approx(choice.score)  # what the fit rows alone say
    assert {"random forest", "gradient boosting"} <= set(small.inner)
    text = small.summary()
    assert "scaling study on 588 rows (n_gpus up to 16)" in text and "no row held out" in text
    assert (f"widened by κ = {DISAGREEMENT_KAPPA:g}, plus λ = {DEFAULT_DISAGREEMENT:g} times the disagreement "
            "between the consensus's two options") in text
    assert "κ and λ calibrated together on the shipped Pollux traces and Sia's four clusters" in text
    assert "regimes: the fit rows reach 16 nodes; rows on more nodes are marked regime" in text


def test_predictions_beyond_the_fit_rows_widen_and_stay_out_of_regime(small, yolov3):
    big = yolov3[yolov3.n_gpus >= 32].drop(columns=["t_iter", "sync_time"])
    iv = small.predict_interval(big, 0.9)
    q = small.model.half_width(0.9)
    assert np.allclose(iv.distance, 1 + np.log2(big.n_gpus / 16))
    m = small.model
    if m.alternative_ is not None:
        spread = np.abs(np.log(iv.predicted / m.alternative_.predict(big)))
    else:  # a blend: its two options' spread
        a, b = (est.predict(big) for _, est in m.estimator_.estimators_)
        spread = np.abs(np.log(a / b))
    assert np.allclose(iv.disagreement, spread) and (iv.disagreement > 0).all()
    assert np.allclose(np.log(iv.upper / iv.predicted), q * iv.distance + DEFAULT_DISAGREEMENT * iv.disagreement)
    assert np.allclose(np.log(iv.predicted / iv.lower), np.log(iv.upper / iv.predicted))
    assert not iv.regime.any()  # Pollux's fit rows already hold 16 nodes and 4 GPUs per node


def test_single_node_fit_rows_mark_the_multi_node_rows_regime(one_node, yolov3):
    text = one_node.summary()
    assert "regimes: the fit rows hold no multi-node run; rows on more nodes are marked regime" in text
    assert f"their κ·q·d is scaled by ρ = {DISAGREEMENT_REGIME_KAPPA:.3g}" in text
    rows = pd.DataFrame({"n_gpus": [4, 4, 8, 16], "n_nodes": [1, 2, 2, 4], "batch_per_gpu": [8] * 4})
    iv = one_node.predict_interval(rows, 0.9)
    assert iv.regime.tolist() == [False, True, True, True]
    assert not one_node.predict_interval(rows.assign(n_gpus=8, n_nodes=1), 0.9).regime.any()  # more GPUs, one node
    q, lam = one_node.model.half_width(0.9), DEFAULT_DISAGREEMENT
    w = np.log(iv.upper / iv.predicted)
    assert w.iloc[0] == pytest.approx(q * iv.distance.iloc[0] + lam * iv.disagreement.iloc[0])
    assert np.allclose(w.iloc[1:], q * DISAGREEMENT_REGIME_KAPPA * iv.distance.iloc[1:] + lam * iv.disagreement.iloc[1:])
    back = load_model(one_node.model.to_json())  # the regime and ρ are saved with the model
    assert back.regime_ == {"nodes_max": 1.0}
    assert back.predict_interval(rows, 0.9).equals(iv)
    doc = json.loads(one_node.model.to_json())
    doc["fitted"]["regime"] = {"nodes_max": 0}
    with pytest.raises(ValueError, match="fitted.regime"):
        load_model(json.dumps(doc))


def test_the_cli_saves_a_model_that_predicts_with_regime(capsys, tmp_path, yolov3):
    yolov3[(yolov3.n_nodes == 1) & (yolov3.batch_per_gpu <= 16)].to_csv(tmp_path / "small.csv", index=False)
    pd.DataFrame({"n_gpus": [2, 8], "n_nodes": [1, 2], "batch_per_gpu": [8, 8]}).to_csv(tmp_path / "big.csv",
                                                                                     index=False)
    r = _run(capsys, "fit", tmp_path / "small.csv", *FLAGS, "--inflation", "1.5", "--out", tmp_path / "m.json")
    assert r.code == 0, r.err
    assert "intervals beyond the fitted scale widened by κ = 1.5 (--inflation)" in r.out
    assert "the fit rows hold no multi-node run" in r.out
    r = _run(capsys, "predict", tmp_path / "m.json", tmp_path / "big.csv", "--interval", "0.9", "--out",
             tmp_path / "p.csv")
    assert r.code == 0, r.err
    assert pd.read_csv(tmp_path / "p.csv").regime.tolist() == [False, True]


def test_with_the_hardware_the_regime_rows_are_priced_by_the_prior(capsys, tmp_path, yolov3):
    from perfkit.model.forms.commprior import CommPriorStepModel

    yolov3[yolov3.n_nodes == 1].to_csv(tmp_path / "small.csv", index=False)
    big = pd.DataFrame({"n_gpus": [2, 8, 16], "n_nodes": [1, 2, 4], "batch_per_gpu": [8, 8, 8]})
    big.to_csv(tmp_path / "big.csv", index=False)
    r = _run(capsys, "fit", tmp_path / "small.csv", *FLAGS, "--cluster", "aws", "--job", "yolov3", "--out",
             tmp_path / "m.json")
    assert r.code == 0, r.err
    assert "communication prior: job yolov3 synchronises 2.465e+08 bytes a step; cluster aws: 15.75 GB/s per GPU " \
           "inside a node, network 6.25 GB/s" in r.out
    assert "predicted by the CommPriorStepModel (priced by the hardware)" in r.out
    model = load_model(tmp_path / "m.json")
    prior = model.regime_estimator_
    assert isinstance(prior, CommPriorStepModel) and prior.prior_ == {"intra": "fitted",
                                                                      "inter": "prior: the intra level's"}
    pred = model.predict(big)
    assert pred[0] == pytest.approx(model.estimator_.predict(big.iloc[:1])[0])  # inside the regime: the chosen model
    assert np.allclose(pred[1:], prior.predict(big.iloc[1:]))  # beyond it: the hardware's prior
    # a regime row's disagreement is the prior's prediction against the fitted curve's
    iv = model.predict_interval(big, 0.9)
    assert np.allclose(iv.disagreement.iloc[1:], np.abs(np.log(pred[1:] / model.estimator_.predict(big.iloc[1:]))))


@pytest.mark.parametrize("args, pattern", [
    (["--scale-of", "n_gpus", "--extrapolate", "n_gpus:4"],
     r"--scale-of n_gpus and --extrapolate n_gpus:4: give one"),
    (["--scale-of", "n_gpus", "--test-size", "0.3"], r"--scale-of n_gpus and --test-size 0.3: give one"),
    (["--select", "best"], r"--select: not in a scaling study \(--scale-of n_gpus\).*give --test-size"),
    (["--intervals", "cv+"], r"--intervals cv\+: with a scaling study \(--scale-of\) the intervals are calibrated"),
    (["--scale-of", "gpus"], r"--scale-of column 'gpus' not found"),
    (["--scale-of", "sync_time"], r"--scale-of sync_time: column 'sync_time' is the --phases column"),
])
def test_bad_scaling_study_flags_are_one_clean_error(capsys, tmp_path, yolov3, args, pattern):
    yolov3[yolov3.n_gpus <= 16].to_csv(tmp_path / "small.csv", index=False)
    _one_error(_run(capsys, "fit", tmp_path / "small.csv", *FLAGS, "--out", tmp_path / "bad.json", *args), pattern)


def test_rows_without_an_inner_split_are_refused_by_name(capsys, tmp_path, yolov3):
    yolov3[yolov3.n_gpus <= 2].to_csv(tmp_path / "tiny.csv", index=False)
    _one_error(_run(capsys, "fit", tmp_path / "tiny.csv", *FLAGS, "--out", tmp_path / "bad.json"),
               r"--scale-of n_gpus: the rows' values of 'n_gpus' \(1, 2\) leave no inner extrapolation split")


def test_inflation_needs_a_scale(capsys, tmp_path, yolov3):
    yolov3.to_csv(tmp_path / "all.csv", index=False)
    _one_error(_run(capsys, "fit", tmp_path / "all.csv", "--target", "t_iter", "--form", "pollux", "--gpus", "n_gpus",
                    "--nodes", "n_nodes", "--batch", "batch_per_gpu", "--inflation", "2", "--out",
                    tmp_path / "bad.json"),
               r"--inflation widens the intervals beyond the fitted scale: it needs --extrapolate COL\[:MAX\] or "
               r"--scale-of COL")


def _bench():
    """``benchmarks/bench_small_runs.py`` as a module (its calibration functions)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_small_runs.py"
    spec = importlib.util.spec_from_file_location("bench_small_runs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_shipped_kappa_and_rho_are_what_the_benchmark_recomputes():
    """κ, ρ (with the disagreement's λ) are constants of the code; ``benchmarks/bench_small_runs.py`` recomputes
    them from every cluster's rows through the CLI (results committed): a change of the model or the rule that moves
    them fails here."""
    from pathlib import Path

    bench = _bench()
    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
    docs = [json.loads((results / f"small_runs_{n}.json").read_text()) for n in ("pollux", "sia")]
    main, regime = bench.ratios_of(docs)
    assert sorted(main) == sorted(regime) == ["Pollux", "azure", "dgx", "dgx-ext", "rtx"]
    cal = bench.calibration(main, regime)
    assert round(cal["kappa"], 2) == DISAGREEMENT_KAPPA and round(cal["rho"], 2) == DISAGREEMENT_REGIME_KAPPA
    assert all(r["kappa"] == DISAGREEMENT_KAPPA for d in docs for r in d["clusters"].values())
    assert docs[0]["regime"]["rho_saved"] == DISAGREEMENT_REGIME_KAPPA and docs[0]["regime"]["n_rows"] > 1000
    summary = json.loads((results / "small_runs_summary.json").read_text())
    assert summary["calibration"] == json.loads(json.dumps(cal))  # the summary Chapter 7 reads is this one


def test_the_one_form_kappa_and_rho_are_what_the_benchmark_recomputes():
    """A scaling study of one form (no disagreement) uses DEFAULT_KAPPA and DEFAULT_REGIME_KAPPA; the ``--form
    phases`` runs of ``benchmarks/bench_small_runs.py`` recompute them (results committed), each cluster weighing the
    same, and the runs themselves saved intervals with them."""
    from pathlib import Path

    bench = _bench()
    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
    docs = [json.loads((results / f"small_runs_{n}_phases.json").read_text()) for n in ("pollux", "sia")]
    assert {d["form"] for d in docs} == {"phases"}
    main, regime = bench.ratios_of(docs, "ratios_qd")
    assert sorted(main) == sorted(regime) == ["Pollux", "azure", "dgx", "dgx-ext", "rtx"]
    cal = bench.one_form_calibration(main, regime)
    assert round(cal["kappa"], 2) == DEFAULT_KAPPA and round(cal["rho"], 2) == DEFAULT_REGIME_KAPPA
    assert all(r["kappa"] == DEFAULT_KAPPA for d in docs for r in d["clusters"].values())
    assert docs[0]["regime"]["rho_saved"] == DEFAULT_REGIME_KAPPA
    summary = json.loads((results / "small_runs_summary.json").read_text())
    assert summary["one_form"]["calibration"] == json.loads(json.dumps(cal))


def test_one_form_calibration_judges_regime_rows_by_rho_times_kappa():
    bench = _bench()
    cal = bench.one_form_calibration({"a": [1.0] * 10, "b": [2.0] * 10}, {"a": [4.0] * 5, "b": [8.0] * 5})
    assert cal["kappa"] == 2.0 and cal["rho"] == 4.0  # ρ·κ = 8, the 90 % quantile of the regime rows over q·d
    a = cal["clusters"]["a"]
    assert a["kappa_others"] == 2.0 and a["coverage_others"] == 1.0 and a["coverage"] == 1.0
    assert a["rho_needed"] == 2.0 and a["rho_others"] == 4.0 and a["regime_coverage_others"] == 1.0
    b = cal["clusters"]["b"]  # judged on a's factors alone: κ = 1, ρ·κ = 4
    assert b["coverage_others"] == 0.0 and b["rho_others"] == 4.0 and b["regime_coverage_others"] == 0.0


def test_the_calibration_weighs_each_cluster_the_same_and_judges_each_on_the_others():
    bench = _bench()
    groups = {"big": list(np.linspace(0.0, 1.0, 1000)), "small": [5.0, 6.0]}
    # each cluster weighs half: the 90 % quantile lies among the small cluster's two rows, whatever its row count
    assert bench.balanced_quantile(groups) == 6.0 and bench.balanced_quantile(groups, 0.5) == 1.0
    assert bench.balanced_quantile(groups, exclude="small") == pytest.approx(0.9, abs=1e-3)
    cal = bench.calibration({"a": [1.0] * 10, "b": [2.0] * 10, "c": [3.0] * 10}, {"a": [0.5, 1.5]})
    assert cal["kappa"] == 3.0 and cal["rho"] == 1.5
    assert cal["clusters"]["c"] == {"kappa_needed": 3.0, "kappa_others": 2.0, "coverage_others": 0.0}
    assert cal["clusters"]["a"]["coverage_others"] == 1.0 and cal["clusters"]["a"]["rho_needed"] == 1.5
    assert "rho_others" not in cal["clusters"]["a"]  # one cluster's regime rows: nothing to judge them on


def test_hundreds_of_gpus_and_parallel_degrees_as_columns():
    """Beyond 64: a table with data-, tensor- and pipeline-parallel degrees as columns, fitted on up to 128 GPUs,
    predicts 256 to 1024 GPUs with finite intervals that widen with the distance."""
    rng = np.random.default_rng(0)
    dp, tp, pp = (rng.choice(v, 300) for v in ([1, 2, 4, 8, 16], [1, 2, 4], [1, 2]))
    gpus = dp * tp * pp
    t = 2.0 / (dp * tp) ** 0.9 * (1 + 0.05 * np.log2(tp)) + 0.01 * np.log2(gpus + 1) + 0.02 * pp
    frame = pd.DataFrame({"dp": dp, "tp": tp, "pp": pp, "gpus": gpus, "t": t * np.exp(0.02 * rng.standard_normal(300))})
    result = run(FitSpec(target="t", form="loglinear", numeric="tp,pp", extrinsic="dp,gpus", scale_of="gpus"), frame,
                 progress=False)
    assert result.n_test == 0 and result.scale == ("gpus", 128.0)
    big = pd.DataFrame({"dp": [32, 64, 128], "tp": [4, 4, 4], "pp": [2, 4, 2]}).assign(gpus=lambda d: d.dp * d.tp * d.pp)
    with pytest.warns(UserWarning):
        iv = result.predict_interval(big, 0.9)
    assert np.all(np.isfinite(iv[["predicted", "lower", "upper"]].to_numpy())) and (iv.lower > 0).all()
    assert iv.distance.is_monotonic_increasing and iv.distance.iloc[0] >= 1 + np.log2(256 / 128)
    assert "regime" not in iv.columns  # no node column: no regimes


def test_a_scaling_study_of_one_form_prices_its_regime_rows_by_the_prior(capsys, tmp_path, yolov3):
    """--cluster/--job with one form (--scale-of, --form phases): the prior is not ignored, it predicts the rows on
    more nodes than measured, as in the consensus; along another column than the GPUs it is refused."""
    from perfkit.model.forms.commprior import CommPriorStepModel

    yolov3[yolov3.n_nodes == 1].to_csv(tmp_path / "small.csv", index=False)
    one = ["--target", "t_iter", "--form", "phases", "--scale-of", "n_gpus", "--gpus", "n_gpus", "--nodes", "n_nodes",
           "--batch", "batch_per_gpu", "--phases", "sync_time", "--cluster", "aws", "--job", "yolov3"]
    r = _run(capsys, "fit", tmp_path / "small.csv", *one, "--out", tmp_path / "m.json")
    assert r.code == 0, r.err
    assert "communication prior: job yolov3 synchronises" in r.out
    assert r.out.count("predicted by the CommPriorStepModel (priced by the hardware)") == 1
    model = load_model(tmp_path / "m.json")
    assert isinstance(model.regime_estimator_, CommPriorStepModel) and model.disagreement == 0.0
    assert model.inflation == DEFAULT_KAPPA and model.regime_inflation == DEFAULT_REGIME_KAPPA
    big = pd.DataFrame({"n_gpus": [2, 8], "n_nodes": [1, 2], "batch_per_gpu": [8, 8]})
    pred = model.predict(big)
    assert pred[1] == pytest.approx(model.regime_estimator_.predict(big.iloc[1:])[0])
    assert pred[0] == pytest.approx(model.estimator_.predict(big.iloc[:1])[0])
    other = [a if a != "n_gpus" or i != one.index("--scale-of") + 1 else "batch_per_gpu" for i, a in enumerate(one)]
    r = _run(capsys, "fit", tmp_path / "small.csv", *other, "--out", tmp_path / "b.json")
    assert r.code != 0 and "--cluster/--job: the communication prior prices the rows on more nodes than measured" \
        in r.err and "got --scale-of batch_per_gpu" in r.err
