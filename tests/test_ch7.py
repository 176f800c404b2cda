"""Chapter 7 (measure small, predict large): the protocol keeps the scored rows out of every choice, the chapter
presents what it computed, and its parameters are checked before anything runs."""
import json
import re

import numpy as np
import pytest

from perfkit.chapters import ch7
from perfkit.chapters.ch7.compute import CONFIG, candidates, select_step_model
from perfkit.chapters.result import ParameterError
from perfkit.data.external import load_external
from perfkit.model.uncertainty.extrapolation import calibrate_transfer, scale_split
from tests.frames import CH4_CSV as CH4

VERDICTS = {"holds", "does not hold", "inconclusive", "cannot be tested here"}


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return ch7.analyse(quick=True, progress=False, figures_dir=str(tmp_path_factory.mktemp("figs")))


def test_the_chapter_shows_every_model_on_every_study(result):
    T = result.tables
    assert list(T["ext_scale_mape"].columns) == ["model", "bert", "cifar10", "deepspeech2", "imagenet", "ncf",
                                                 "yolov3", "median"]
    assert T["ext_scale_mape"]["model"].iloc[0] == "selected" and len(T["ext_scale_mape"]) == 7
    assert T["ext_scale_mape"]["model"].iloc[-1].startswith("Extra-P")  # read from benchmarks/results/scale.json
    assert list(T["ext_scale_by_factor"].columns) == ["model", "2×", "2.5×", "3×", "3.5×", "4×"]
    assert set(T["ext_ch4_batch"].columns) == {"model", "2×", "4×", "all"}
    assert set(T["ext_ch3_workers"].columns) == {"model", "ae", "cnn", "mlp", "median"}
    assert np.isfinite(T["ext_scale_mape"].drop(columns="model").to_numpy(dtype=float)).all()
    assert set(result.figures) == {"ext_scale_curves", "ext_scale_by_factor", "ext_own_data", "ext_whatif_ch4_batch"}
    w = T["ext_whatif_ch4_batch"]
    assert list(w["batch_size"]) == [8, 16, 32, 64, 128] and list(w["extrapolated"]) == [False] * 3 + [True] * 2
    rel = (w["upper"] / w["predicted"]).to_numpy()
    assert rel[2] < rel[3] < rel[4]  # wider the farther beyond batch 32
    claims = T["claims_ch7"]
    assert list(claims["key"]) == ["median_10", "beats_baselines", "coverage", "ch4_batch", "ch3_workers"]
    assert set(claims["verdict"]) <= VERDICTS and (claims["verdict"] != "cannot be tested here").all()
    assert result.readings["summary"].startswith("Fitted on <= 16 GPUs")
    cov = T["ext_scale_coverage"].set_index("where")
    jobs = cov.loc[[w for w in cov.index if w.startswith("job ")]]
    assert np.allclose(jobs["q"], jobs["q_inner"] * jobs["kappa"]) and (jobs["kappa"] > 0).all()
    assert "widened by the other jobs' inflation" in result.readings["intervals"]


def test_scored_rows_are_those_between_the_test_bounds(result):
    test = result.results.test
    assert test["n_gpus"].between(32, 64).all() and len(test) == result.numbers["n_test"]
    assert (test["lower"] < test["selected"]).all() and (test["selected"] < test["upper"]).all()
    # the interval widens with the distance beyond the fitted maximum (same job, same q)
    for _, g in test.groupby("job"):
        rel = (g["upper"] / g["selected"]).groupby(g["n_gpus"]).first()
        assert rel.is_monotonic_increasing


def test_the_choice_and_the_intervals_never_see_the_scored_rows():
    """Scrambling every time beyond the fitted GPUs does not change the selected form, and scrambling one job's
    (ncf) leaves its interval's q as it was: only the other jobs' q, which learn their inflation from ncf, move."""
    frame = load_external("pollux")[0][["job", "study", *CONFIG, "t_iter", "sync_time"]]
    rng = np.random.default_rng(0)
    beyond = frame["n_gpus"] > 16
    scrambled = frame.copy()
    scrambled.loc[beyond, "t_iter"] = rng.permutation(frame.loc[beyond, "t_iter"].to_numpy()) * 3.0
    picks = []
    for f in (frame, scrambled):
        fit = scale_split(f, "n_gpus", 16)[0]
        picks.append(select_step_model(fit, [(4, 8, 16)], candidates(quick=True)))
    assert picks[0][0] == picks[1][0] and picks[0][3].equals(picks[1][3])
    ncf = beyond & (frame["job"] == "ncf")
    one_job = frame.copy()
    one_job.loc[ncf, "t_iter"] = frame.loc[ncf, "t_iter"].to_numpy()[::-1] * 2.0
    cals = [calibrate_transfer(picks[0][1], f, "n_gpus", 16, "t_iter", [(4, 8, 16)], test_min=32,
                               test_max=64, predict_drop=["sync_time"]) for f in (frame, one_job)]
    assert cals[1].loc["ncf", "q"] == cals[0].loc["ncf", "q"]
    assert cals[1]["q_inner"].equals(cals[0]["q_inner"])  # the inner q reads the fit rows only
    assert (cals[1].drop(index="ncf")["q"] != cals[0].drop(index="ncf")["q"]).any()


@pytest.mark.parametrize("kw, culprit", [
    (dict(test_min_gpus=16), "test_min_gpus"),
    (dict(test_min_gpus=80), "test_min_gpus"),
    (dict(coverage=1.0), "coverage"),
    (dict(coverage=0), "coverage"),
    (dict(fit_max_gpus=1), "fit_max_gpus"),
    (dict(ch4_dataset="data/measured/none.csv"), "ch4_dataset"),
    (dict(ch3_fit_max_workers=0), "ch3_fit_max_workers"),
    (dict(gpus=8), "gpus: not a parameter"),
    (dict(coverage="0.9"), "coverage"),
])
def test_bad_parameters_are_one_error_naming_them(kw, culprit):
    with pytest.raises(ParameterError) as err:
        ch7.check_params(**kw)
    assert culprit in str(err.value)


def test_a_study_can_be_skipped():
    p = ch7.check_params(ch4_dataset="", ch3_dataset="", quick=True, progress=False)
    r = ch7.compute(p)
    assert r.ch4 is None and r.ch3 is None and r.selected


def test_extrap_results_of_another_split_are_not_shown(tmp_path):
    import json

    from perfkit.schema import repo_root

    doc = json.loads((repo_root() / "benchmarks/results/scale.json").read_text())
    doc["extrap"]["fit_max"] = 8
    (tmp_path / "scale.json").write_text(json.dumps(doc))
    p = ch7.check_params(quick=True, progress=False, extrap_results=str(tmp_path / "scale.json"))
    from perfkit.chapters.ch7.compute import read_extrap

    e = read_extrap(p)
    assert e["status"] == "not run" and "split" in e["note"]
    assert read_extrap(ch7.check_params(extrap_results=""))["status"] == "not run"
    assert read_extrap(ch7.check_params(extrap_results=str(tmp_path / "none.json")))["status"] == "not run"


def test_other_clusters_are_read_from_their_benchmark_and_a_bad_file_is_one_error(result, tmp_path):
    import json

    from perfkit.chapters.ch7.compute import clusters_split_note, read_clusters
    from perfkit.schema import repo_root

    t = result.tables["ext_scale_clusters"]  # benchmarks/results/scale_clusters.json, nothing refitted
    doc = json.loads((repo_root() / "benchmarks/results/scale_clusters.json").read_text())
    assert list(t["cluster"]) == [r["cluster"] for r in doc["clusters"]] and t["cluster"].iloc[0] == "Pollux"
    assert list(t["selected MAPE %"]) == [r["selected_mape"] for r in doc["clusters"]]
    assert t["place"].str.fullmatch(r"\d+ of \d+").all() and t["coverage %"].between(0, 100).all()
    # the margin over the best baseline, with its interval, as bench_scale.py's bootstrap gave it
    assert list(t["margin, points"]) == [r["margin"] for r in doc["clusters"]]
    assert (t["margin lower"] <= t["margin, points"]).all() and (t["margin, points"] <= t["margin upper"]).all()
    first = t["place"].str.startswith("1 of")
    assert (t.loc[first, "margin, points"] <= 0).all() and (t.loc[~first, "margin, points"] > 0).all()
    # what the fit rows alone said: the selected model's inner score is its k-scores' best in each cluster's results
    for r, name in zip(doc["clusters"], t["cluster"]):
        scale = json.loads((repo_root() / "benchmarks/results" /
                            ("scale.json" if name == "Pollux" else f"scale_{name}.json")).read_text())
        check = scale["inner_check"]
        assert r["inner_selected"] == check["selected_score"] == min(k["score"] for k in scale["inner_scores_by_k"])
        assert r["inner_best_baseline_score"] == min(b["score"] for b in check["baselines"])
    assert list(t["inner: best baseline"]) == [r["inner_best_baseline"] for r in doc["clusters"]]
    assert read_clusters(ch7.check_params(clusters_results="")) is None
    # on another Pollux split the clusters' rows (made on the default one) are not shown beside it, and it says why
    rows = read_clusters(ch7.check_params())
    assert clusters_split_note(ch7.check_params(), rows) == ""
    note = clusters_split_note(ch7.check_params(fit_max_gpus=8, test_min_gpus=16), rows)
    assert "computed on the Pollux split fit <= 16 → 32–64 GPUs, not this chapter's fit <= 8 → 16–64" in note
    assert read_clusters(ch7.check_params(clusters_results=str(tmp_path / "none.json"))) is None
    bad = tmp_path / "bad.json"
    for text, words in (("{not json", "bad.json. is not a readable JSON file"),
                        (json.dumps({"clusters": [{"cluster": "x"}]}), "no key 'jobs'"),
                        (json.dumps({"clusters": [{**doc["clusters"][0], "margin_interval": "wide"}]}),
                         "cluster 'Pollux': margin_interval 'wide' is not"),
                        (json.dumps({"clusters": [{**doc["clusters"][0], "inner_selected": "low"}]}),
                         "cluster 'Pollux': inner_selected 'low' is not a number"),
                        (json.dumps({"clusters": [{**doc["clusters"][0], "inner_best_baseline_score": None}]}),
                         "cluster 'Pollux': inner_selected, inner_best_baseline and inner_best_baseline_score go")):
        bad.write_text(text)
        with pytest.raises(ParameterError, match=words):
            ch7.compute(ch7.check_params(quick=True, progress=False, clusters_results=str(bad)))


def test_the_summary_says_how_the_other_clusters_rank(result):
    c = result.tables["ext_scale_clusters"]
    others = c[c["cluster"] != "Pollux"]
    n_first = int(others["place"].str.startswith("1 of").sum())
    assert f"first on {n_first} of them" in result.readings["clusters"]
    for r in others[~others["place"].str.startswith("1 of")].itertuples():  # each miss with its margin's interval
        assert re.search(rf"{re.escape(r.cluster)}: \+[\d.]+ points behind .*?\[[-+][\d.]+, [-+][\d.]+\], "
                         r"(worse|not distinguishable); the fit rows (foresaw|did not foresee) it",
                         result.readings["clusters"])
        said = re.search(rf"{re.escape(r.cluster)}: [^;]*; the fit rows (foresaw|did not foresee)",
                         result.readings["clusters"]).group(1)
        assert (said == "foresaw") == (c.loc[r.Index, "inner: best baseline %"] < c.loc[r.Index, "inner: selected %"])
    assert result.readings["clusters"] in result.readings["summary"]


def test_an_extrap_record_of_the_wrong_shape_names_the_key(tmp_path):
    from perfkit.chapters.ch7.compute import read_extrap

    doc = json.loads(open("benchmarks/results/scale.json").read())
    doc["extrap"]["by_job"] = ["not", "a", "table"]
    bad = tmp_path / "scale.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ParameterError, match=r"extrap_results: .*extrap.by_job is not what bench_scale.py writes"):
        read_extrap(ch7.check_params(extrap_results=str(bad)))


@pytest.mark.parametrize("change, words", [
    (lambda r: r.update(selected_mape="abc"), "selected_mape 'abc' is not what"),
    (lambda r: r.update(coverage=-3), "coverage -3 is not what"),
    (lambda r: r.update(test_rows=-1), "test_rows -1 is not what"),
    (lambda r: r.update(place=9, models=7), "place 9 is not what"),
    (lambda r: r.update(margin_interval=[5, -5]), r"margin_interval \[5, -5\] is not \[lo, hi\]"),
])
def test_a_cluster_row_outside_what_the_benchmark_writes_is_refused(tmp_path, change, words):
    from perfkit.chapters.ch7.compute import read_clusters

    doc = json.loads(open("benchmarks/results/scale_clusters.json").read())
    change(doc["clusters"][1])
    bad = tmp_path / "clusters.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ParameterError, match=rf"clusters_results: .*cluster '{doc['clusters'][1]['cluster']}': {words}"):
        read_clusters(ch7.check_params(clusters_results=str(bad)))
    doc = json.loads(open("benchmarks/results/scale_clusters.json").read())
    doc["clusters"].append(doc["clusters"][0])
    bad.write_text(json.dumps(doc))
    with pytest.raises(ParameterError, match="a cluster appears twice"):
        read_clusters(ch7.check_params(clusters_results=str(bad)))


def test_chapter_7_checks_its_own_datasets_before_the_first_fit(monkeypatch):
    import importlib

    compute = importlib.import_module("perfkit.chapters.ch7.compute")  # the package also exports a function compute

    def never(*a, **k):
        raise AssertionError("a study started before the datasets were checked")
    monkeypatch.setattr(compute, "_pollux", never)
    for kw, words in ((dict(ch3_dataset=CH4), r"ch3_dataset: .*column 'model' missing"),
                      (dict(ch4_dataset="data/measured/pytorch-cpu/ch3_phases.csv"), r"ch4_dataset: .*column"),
                      (dict(ch3_fit_max_workers=1000), r"ch3_fit_max_workers: got 1000; the file's workers runs"),
                      (dict(ch4_fit_max_batch=100000), r"ch4_fit_max_batch: got 100000")):
        with pytest.raises(ParameterError, match=words):
            compute.compute(ch7.check_params(quick=True, progress=False, **kw))


def test_the_claims_name_the_split_they_were_judged_on():
    from perfkit.chapters.ch7.claims import CLAIMS, Ch7Quantities

    rows = {c.key: c.judge(Ch7Quantities(fit_max=8, test_min=16, test_max=64, ch4_fit_max=16, ch4_scored="32-128"))
            for c in CLAIMS}
    assert rows["median_10"]["claim"].startswith("fitted on <= 8 GPUs, the selected model predicts 16-64 GPUs")
    assert "16-64-GPU rows" in rows["coverage"]["rule"] and "MAPE on 16-64 GPUs" in rows["median_10"]["rule"]
    assert rows["ch4_batch"]["thesis"] == "Chapter 4 data, batch <= 16 → 32-128"
    assert rows["ch3_workers"]["thesis"] == "Chapter 3 data, workers <= … → …"  # not run: no number is made up


def test_the_ledger_names_the_values_its_own_studies_scored(result):
    """Our own files' claims name the measured values beyond the fitted maximum that were scored."""
    import re

    claims = result.tables["claims_ch7"].set_index("key")
    m = re.fullmatch(r"Chapter 4 data, batch <= 32 → (\d+)-(\d+)", claims.loc["ch4_batch", "thesis"])
    assert m and 32 < int(m.group(1)) < int(m.group(2))
    scored = result.results.ch4.predictions["batch_size"]
    assert int(m.group(1)) == scored[scored > 32].min()


def test_the_small_runs_study_is_read_checked_and_shown(tmp_path, result):
    """Chapter 7 shows what bench_small_runs.py measured through the CLI, per cluster (it fits nothing for it)."""
    from perfkit.chapters.ch7.small_runs import read_small_runs

    doc = json.loads(open("benchmarks/results/small_runs_summary.json").read())
    t = result.tables["ext_small_runs"]
    assert list(t["cluster"]) == [r["cluster"] for r in doc["clusters"]]
    assert list(t["CLI MAPE %"]) == [r["mape"] for r in doc["clusters"]]
    assert list(t["regime rows"]) == [r["regime_rows"] for r in doc["clusters"]]
    assert read_small_runs(ch7.check_params(small_runs_results="")) is None
    bad = tmp_path / "small.json"
    for change, words in ((lambda r: r.update(coverage=2), "cluster 'Pollux': coverage 2 is not what"),
                          (lambda r: r.pop("kappa"), "no key 'kappa'"),
                          (lambda r: r.update(margin_interval="wide"), "margin_interval 'wide' is not what")):
        rows = json.loads(json.dumps(doc))
        change(rows["clusters"][0])
        bad.write_text(json.dumps(rows))
        with pytest.raises(ParameterError, match=rf"small_runs_results: .*{words}"):
            read_small_runs(ch7.check_params(small_runs_results=str(bad)))
