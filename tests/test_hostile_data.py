"""A third hostile trial of the data loaders, the chapters' parameters and the collection plans: each bad input is
one clear error naming the file, line, column or parameter (never a traceback from json/pandas/numpy, never a
silent wrong value), found before any fit or measurement."""
import json

import numpy as np
import pytest

from perfkit.chapters import ch3, ch4, ch6, ch7
from perfkit.chapters.result import ParameterError
from perfkit.data.lambda_labs import load_lambda
from perfkit.data.measured import load_phases, load_provenance, load_steps, thesis_split
from perfkit.data.nvidia_dle import load_nvidia_dle
from perfkit.data.pollux import load_pollux, load_traces
from perfkit.measure.plans import make_plan
from perfkit.schema import CH3_COLUMNS

CH4 = "data/measured/pytorch-cpu/ch4_lenet5.csv"
TF4 = "data/measured/tensorflow-cpu/ch4_lenet5.csv"


# ------------------------------------------------------------------------------ results files of Chapters 6 and 7
@pytest.mark.parametrize("text, words", [("{not json", "is not a readable JSON file"),
                                         ("[1, 2]", "holds a JSON list, not an object"),
                                         ("[" * 100000 + "]" * 100000, "is not a readable JSON file")])
@pytest.mark.parametrize("chapter, name", [(ch6, "extrap_results"), (ch7, "extrap_results"),
                                           (ch7, "clusters_results")])
def test_a_damaged_results_file_is_refused_before_any_fit(tmp_path, text, words, chapter, name):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    with pytest.raises(ParameterError, match=rf"^{name}: .*{words}"):
        chapter.check_params(**{name: str(bad)}, **({"datasets": ["lambda"]} if chapter is ch6 else {}))


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


# ------------------------------------------------------------------------------ chapter parameters
@pytest.mark.parametrize("chapter, kw", [(ch4, dict(lam_l2=np.float64(0.001), framework_datasets=())),
                                         (ch4, dict(lams=list(np.logspace(-6, 0, 4)), framework_datasets=())),
                                         (ch7, dict(coverage=np.float64(0.9))),
                                         (ch7, dict(fit_max_gpus=np.int64(16)))])
def test_numpy_numbers_are_numbers(chapter, kw):
    p = chapter.check_params(**kw)
    for name, value in kw.items():
        got = getattr(p, name)
        assert type(got) in (int, float, list, tuple) and np.allclose(np.asarray(got, float), np.asarray(value, float))


def test_a_figures_folder_that_cannot_be_created_is_refused(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ParameterError, match=r"figures_dir: .* cannot be created: .*afile' is a file"):
        ch7.check_params(figures_dir=str(tmp_path / "afile" / "figs"))
    with pytest.raises(ParameterError, match="figures_dir: .* holds a NUL character"):
        ch3.check_params(figures_dir="figs\x00x")


@pytest.mark.parametrize("kw, words", [
    (dict(target="workers", framework_datasets=()), "target: 'workers' is an input of the model"),
    (dict(framework_datasets=(CH4,)), "framework_datasets: .* names a file twice or the dataset itself"),
    (dict(framework_datasets=(TF4, TF4)), "framework_datasets: .* names a file twice or the dataset itself"),
    (dict(lam_l2=10 ** 400, framework_datasets=()), "lam_l2: got 1000"),
])
def test_chapter_4_refuses_a_target_that_is_an_input_and_a_file_twice(kw, words):
    with pytest.raises(ParameterError, match=words):
        ch4.check_params(**kw)


# ------------------------------------------------------------------------------ measured files and provenance
def _ch3_file(tmp_path, rows):
    header = ",".join(CH3_COLUMNS + ("device", "status", "mode"))
    path = tmp_path / "ch3.csv"
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


ROW = "cnn,pytorch,1,0,0," + ",".join(["0.1"] * 8)


@pytest.mark.parametrize("rows, words", [
    ([f"{ROW},cpu,ok,phased", f"{ROW},cpu,ok,"], r"column 'mode', line 3: .* is empty in a successful row"),
    (["cnn,pytorch,1,0,0,-5,0.1,0.1,0.1,0.1,0.1,0.1,0.1,cpu,ok,phased"], r"column 't_io', line 2: -5 is not a finite"),
    (["cnn,pytorch,1,0,0," + ",".join(["abc"] * 8) + ",cpu,ok,phased"], r"column 't_io', line 2: 'abc' is not"),
    (["cnn,pytorch,1,0,0,0.1,0.1,0.1,0.1,0.1,0.1,0.1,-9,cpu,ok,phased"], r"column 't_iter', line 2: -9 is not a finite "
                                                                         r"time > 0"),
    (["cnn,pytorch,0,0,0," + ",".join(["0.1"] * 8) + ",cpu,ok,phased"], r"column 'workers', line 2: 0 is not a whole"),
])
def test_a_chapter_3_cell_that_is_no_measurement_names_file_column_and_line(tmp_path, rows, words):
    path = _ch3_file(tmp_path, rows)
    with pytest.raises(ValueError, match=words):
        load_phases(path, mode=None)
    with pytest.raises(ParameterError, match="measured_csv: .*" + words):
        ch3.check_params(measured_csv=str(path), framework_csvs=())


def test_a_phase_that_was_not_timed_may_be_empty_and_a_blank_device_is_no_device(tmp_path):
    path = _ch3_file(tmp_path, ["cnn,pytorch,1,0,0,0.1,0.1,0.1,0.1,0.1,,0.1,0.3,,ok,phased"])
    df = load_phases(path)
    assert np.isnan(df["t_c"].iloc[0]) and df["device"].iloc[0] == ""
    assert len(load_phases("data/measured/pytorch-cpu/ch3_phases.csv")) > 0  # the shipped files, empty t_c included


@pytest.mark.parametrize("content, words", [("{not json", "is not a readable JSON file"),
                                            ("[1, 2]", "holds a JSON list, not an object"),
                                            (b"\xff\xfe{}", "is not a readable JSON file")])
def test_a_damaged_provenance_file_is_named(tmp_path, content, words):
    prov = tmp_path / "x.provenance.json"
    prov.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ValueError, match=rf"provenance file .*x.provenance.json {words}"):
        load_provenance(tmp_path / "x.csv")


@pytest.mark.parametrize("call, words", [
    (lambda: load_steps(CH4, roles=5), "roles: expected one of"),
    (lambda: load_steps(CH4, roles={"numeric": "workers"}), "roles: expected one of"),
    (lambda: thesis_split(np.zeros(10), np.zeros(10), n_fit=2.5), "n_fit: expected a whole number >= 1, got 2.5"),
    (lambda: thesis_split(np.zeros(10), np.zeros(10), n_fit="5"), "n_fit: expected a whole number >= 1, got '5'"),
    (lambda: load_pollux(root=123), "root: expected a path, got 123"),
    (lambda: load_lambda(root=5), "root: expected a path, got 5"),
    (lambda: load_nvidia_dle(5), "path: expected a path, got 5"),
    (lambda: load_traces(None, "c"), "root: expected the path of a folder, got None"),
])
def test_loader_arguments_of_the_wrong_type_name_the_argument(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_load_external_names_an_unknown_option():
    from perfkit.data.external import load_external

    with pytest.raises(ValueError, match=r"bogus: not an option of the 'lambda' loader \(options: precision, root"):
        load_external("lambda", bogus=1)
    with pytest.raises(ValueError, match=r"external dataset \['lambda'\] unknown"):
        load_external(["lambda"])


# ------------------------------------------------------------------------------ third-party tables
def _traces(tmp_path, placements="22,4,0.9,0.3", scalability="6,6,4,1.49,1.09"):
    (tmp_path / "bert").mkdir(exist_ok=True)
    (tmp_path / "bert" / "placements-c.csv").write_text(f"placement,local_bsz,step_time,sync_time\n1,4,0.4,0.01\n"
                                                        f"{placements}\n")
    (tmp_path / "bert" / "scalability-c.csv").write_text(f"num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
                                                         f"{scalability}\n")
    return tmp_path


def test_load_traces_jobs_are_read_once_each(tmp_path):
    root = _traces(tmp_path)
    assert len(load_traces(root, "c", jobs=iter(["bert"]))) == 3  # an iterator is read once, then used
    with pytest.raises(ValueError, match=r"jobs: a job is named twice"):
        load_traces(root, "c", jobs=["bert", "bert"])
    with pytest.raises(ValueError, match=r"jobs: expected a non-empty list of job folder names"):
        load_traces(root, "c", jobs=["be\x00rt"])


@pytest.mark.parametrize("kw, words", [
    (dict(scalability="16,6,4,1.49,1.09"), r"scalability-c.csv: column 'num_nodes', row 1, line 2: 16 nodes for 6 GPUs"),
    (dict(placements="22,4,1e-320,0"), r"placements-c.csv: column 'step_time', row 2, line 3: expected seconds > 0 "
                                        r"\(at least 1e-09\)"),
])
def test_load_traces_refuses_rows_that_are_no_measurement(tmp_path, kw, words):
    with pytest.raises(ValueError, match=words):
        load_traces(_traces(tmp_path, **kw), "c")


def test_load_traces_source_names_the_folder_even_for_dot(tmp_path, monkeypatch):
    monkeypatch.chdir(_traces(tmp_path))
    assert set(load_traces(".", "c")["source"]) == {f"{tmp_path.name}/bert/placements-c.csv",
                                                    f"{tmp_path.name}/bert/scalability-c.csv"}


def test_nvidia_and_lambda_cells_that_are_no_measurement(tmp_path):
    from perfkit.data.nvidia_dle import _batch_values

    assert _batch_values("9" * 5000) is None and _batch_values("131,072") == [131072]  # no traceback from int()
    header = "name_gpu,num_gpu,watt,price,resnet50\n"
    for a, b, words in (("123,1,400,10,100\n", "123,1,400,10,64\n", r"column 'name_gpu', row 1, line 2: expected a GPU "
                                                                    r"configuration's name \(text\), got 123"),
                        ("A100,1,400,10,100\n", "A100,1,500,99,64\n", r"column 'watt', row 1 \('A100'\), line 2: .* has "
                                                                      r"400, .* has 500")):
        (tmp_path / "pytorch-train-throughput-fp16.csv").write_text(header + a)
        (tmp_path / "pytorch-train-bs-fp16.csv").write_text(header + b)
        with pytest.raises(ValueError, match=words):
            load_lambda("fp16", root=tmp_path)


# ------------------------------------------------------------------------------ collection plans
@pytest.mark.parametrize("kind, kw, words", [
    ("ch3", dict(workers=[1, 1]), r"workers: \[1, 1\] holds a value twice"),
    ("ch5vol", dict(filters=[16, 16]), r"filters: \[16, 16\] holds a value twice"),
    ("ch4", dict(seed=200_000_000_000_000), "seed: expected an integer from 0 to 4294967295"),
    ("ch5", dict(volume=[100000] * 3), "volume: 100000x100000x100000 has a side outside 1 to 512"),
])
def test_a_plan_that_would_measure_twice_or_never_is_refused(kind, kw, words):
    with pytest.raises(ValueError, match=words):
        make_plan(kind, **kw)


def test_collect_refuses_an_empty_out(capsys, tmp_path, monkeypatch):
    from tests.cli import one_error, run_cli

    monkeypatch.setenv("PERFKIT_DATA", str(tmp_path))
    one_error(run_cli(capsys, "collect", "ch4", "--out", "", "--samples", "2", "--no-progress"),
              r"--out: expected a file name, got an empty path")
