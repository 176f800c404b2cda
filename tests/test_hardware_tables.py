"""Job and cluster facts (data/external/hardware): shipped tables, provenance, a user's own file, bad tables."""
import csv
import hashlib
import json
import math

import numpy as np
import pytest

from perfkit.data.external_files import external_dir
from perfkit.data.gpu_specs import GPU_SPEC_COLUMNS
from perfkit.data.hardware import (CLUSTER_COLUMNS, JOB_COLUMNS, cluster_facts, gradient_bytes, load_clusters,
                                   load_jobs)

FOLDER = external_dir() / "hardware"
PROVENANCE = external_dir() / "hardware.provenance.json"
TRACE_JOBS = {"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}
CLUSTERS = {"aws", "azure", "dgx", "dgx-ext", "rtx", "quad"}


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def _write(path, rows):
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return path


def _edit(tmp_path, table, row, column, value):
    """A copy of a shipped table with one cell changed."""
    rows = _rows(FOLDER / table)
    rows[row][rows[0].index(column)] = value
    return _write(tmp_path / table, rows)


# ------------------------------------------------------------------------------ shipped tables
def test_shipped_jobs():
    jobs = load_jobs()
    assert tuple(jobs.columns) == JOB_COLUMNS and set(jobs["job"]) == TRACE_JOBS and len(jobs) == 6
    assert jobs["parameters"].dtype == np.int64 and jobs["grad_bytes_per_param"].dtype == np.int64
    by = jobs.set_index("job")
    assert by.loc["imagenet", "parameters"] == 25_557_032 and by.loc["cifar10", "parameters"] == 11_173_962
    assert by.loc["bert", "family"] == "transformer" and by.loc["ncf", "family"] == "recommender"
    assert (jobs["grad_bytes_per_param"] == jobs["grad_precision"].map({"fp32": 4, "fp16": 2})).all()
    assert jobs["parameters_source"].str.len().min() > 20 and jobs["model_source"].str.contains("@").all()
    assert gradient_bytes("imagenet") == 25_557_032 * 4
    assert gradient_bytes("bert") == by.loc["bert", "parameters"] * by.loc["bert", "grad_bytes_per_param"]


def test_shipped_clusters():
    clusters = load_clusters()
    assert tuple(clusters.columns) == CLUSTER_COLUMNS and set(clusters["cluster"]) == CLUSTERS
    assert clusters["gpus_per_node"].dtype == np.int64 and clusters["inter_gbps"].dtype == np.float64
    per_node = dict(zip(clusters["cluster"], clusters["gpus_per_node"]))
    nodes = dict(zip(clusters["cluster"], clusters["nodes"]))
    assert per_node == {"aws": 4, "rtx": 8, "dgx-ext": 8, "quad": 4, "dgx": 8, "azure": 8}  # Sia's simulator config
    assert nodes == {"aws": 16, "rtx": 3, "dgx-ext": 2, "quad": 1, "dgx": 2, "azure": 5}
    unknown = clusters["inter_gbps"].isna() | clusters["intra_gbps"].isna()
    assert (clusters.loc[unknown, "confidence"] == "unknown").all()
    assert set(clusters["confidence"]) <= {"stated", "datasheet", "unknown"}
    aws = cluster_facts("aws")
    assert aws["gpu"].startswith("NVIDIA T4") and aws["inter_gbps"] == 6.25 and aws["intra_gbps"] == 15.75
    assert type(aws["gpus_per_node"]) is int and type(aws["intra_gbps"]) is float
    assert math.isnan(cluster_facts("quad")["inter_gbps"]) and cluster_facts("dgx")["intra_gbps"] == 300.0


def test_provenance_matches_the_files():
    prov = json.loads(PROVENANCE.read_text())
    assert prov["dataset"] == "hardware" and prov["kind"] == "external"
    assert prov["description"] and prov["sources"] and prov["licence"] and prov["derivation"]
    listed = {f["path"] for f in prov["files"]}
    shipped = {str(p.relative_to(external_dir())) for p in FOLDER.rglob("*") if p.is_file()}
    assert listed == shipped == {"hardware/jobs.csv", "hardware/clusters.csv", "hardware/gpu_specs.csv"}
    for f in prov["files"]:
        data = (external_dir() / f["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f["sha256"], f["path"]
        assert len(data) == f["bytes"] and f["rows"] == len(_rows(external_dir() / f["path"])) - 1
        assert tuple(f["columns"]) in (JOB_COLUMNS, CLUSTER_COLUMNS, GPU_SPEC_COLUMNS)


# ------------------------------------------------------------------------------ a user's own tables
def test_user_cluster_file(tmp_path):
    header = list(CLUSTER_COLUMNS)
    row = ["mine", "NVIDIA H100", "8", "4", "NVLink 4", "450", "400 Gb/s InfiniBand", "50", "my notes",
           "stated", ""]
    path = _write(tmp_path / "mine.csv", [header, row])
    frame = load_clusters(path)
    assert list(frame["cluster"]) == ["mine"] and frame.attrs["source"] == str(path)
    facts = cluster_facts("mine", path)
    assert facts["gpus_per_node"] == 8 and facts["inter_gbps"] == 50.0 and facts["note"] == ""
    assert cluster_facts("mine", frame) == facts


def test_user_job_file_in_another_column_order(tmp_path):
    header = list(reversed(JOB_COLUMNS))
    values = {"job": "tiny", "model": "MLP", "dataset": "MNIST", "family": "cnn", "parameters": "1000",
              "grad_precision": "fp16", "grad_bytes_per_param": "2", "parameters_source": "counted",
              "model_source": "mine", "note": "a note"}
    path = _write(tmp_path / "jobs.csv", [header, [values[c] for c in header]])
    jobs = load_jobs(path)
    assert tuple(jobs.columns) == JOB_COLUMNS and jobs["parameters"].tolist() == [1000]
    assert gradient_bytes("tiny", path) == 2000 and gradient_bytes("tiny", jobs) == 2000


# ------------------------------------------------------------------------------ bad input: one clear error
def test_missing_column(tmp_path):
    rows = [r[:-1] for r in _rows(FOLDER / "jobs.csv")]  # drops 'note'
    path = _write(tmp_path / "jobs.csv", rows)
    with pytest.raises(ValueError, match=r"jobs\.csv: column 'note' missing") as err:
        load_jobs(path)
    assert str(path) in str(err.value)


def test_non_numeric_parameters(tmp_path):
    path = _edit(tmp_path, "jobs.csv", 2, "parameters", "11M")
    with pytest.raises(ValueError, match=r"column 'parameters', row 2 \('cifar10'\), line 3: '11M' is not a finite"):
        load_jobs(path)


@pytest.mark.parametrize("value", ["0", "2.5"])
def test_gpus_per_node_must_be_whole_and_positive(tmp_path, value):
    path = _edit(tmp_path, "clusters.csv", 3, "gpus_per_node", value)
    with pytest.raises(ValueError, match=rf"column 'gpus_per_node', row 3 \('dgx'\), line 4: expected a whole "
                                         rf"number >= 1 .* got '{value}'"):
        load_clusters(path)


def test_unknown_cluster_names_the_closest(tmp_path):
    with pytest.raises(ValueError, match=r"unknown cluster 'dgx_ext'; did you mean 'dgx-ext'") as err:
        cluster_facts("dgx_ext")
    assert "known: ['aws', 'azure', 'dgx', 'dgx-ext', 'quad', 'rtx']" in str(err.value)
    with pytest.raises(ValueError, match=r"unknown job 'resnet'; known: \['bert'"):
        gradient_bytes("resnet")


@pytest.mark.parametrize("table, row, column, value, message", [
    ("jobs.csv", 1, "grad_bytes_per_param", "3", r"'grad_bytes_per_param', row 1 \('bert'\).*expected 2 or 4"),
    ("jobs.csv", 1, "grad_bytes_per_param", "2", r"2 bytes, but grad_precision 'fp32' has 4"),
    ("jobs.csv", 1, "family", "gnn", r"'family', row 1 \('bert'\), line 2: 'gnn' is not one of"),
    ("jobs.csv", 2, "job", "bert", r"'job', row 2, line 3: 'bert' is named twice"),
    ("jobs.csv", 1, "model", " ", r"'model', row 1 \('bert'\), line 2: empty"),
    ("clusters.csv", 1, "inter_gbps", "", r"'inter_gbps', row 1 \('aws'\).*empty, but confidence is 'datasheet'"),
    ("clusters.csv", 1, "intra_gbps", "-1", r"'intra_gbps', row 1 \('aws'\).*expected GB/s > 0"),
    ("clusters.csv", 1, "confidence", "guess", r"'confidence', row 1 \('aws'\).*'guess' is not one of"),
])
def test_bad_cells(tmp_path, table, row, column, value, message):
    path = _edit(tmp_path, table, row, column, value)
    loader = load_jobs if table == "jobs.csv" else load_clusters
    with pytest.raises(ValueError, match=message) as err:
        loader(path)
    assert str(path) in str(err.value)


def test_bad_shapes(tmp_path):
    rows = _rows(FOLDER / "clusters.csv")
    with pytest.raises(ValueError, match=r"column 'extra' is not a column of a cluster table"):
        load_clusters(_write(tmp_path / "a.csv", [rows[0] + ["extra"]] + [r + [""] for r in rows[1:]]))
    with pytest.raises(ValueError, match=r"row 2, line 3: 10 cells where the header has 11"):
        load_clusters(_write(tmp_path / "b.csv", [rows[0], rows[1], rows[2][:-1]]))
    with pytest.raises(ValueError, match=r"no data rows"):
        load_clusters(_write(tmp_path / "c.csv", [rows[0]]))
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_clusters(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match=r"^path: expected the path of a CSV job table"):
        load_jobs(3)
    with pytest.raises(ValueError, match=r"^jobs: expected None, the path of a CSV job table or the frame"):
        gradient_bytes("bert", jobs=[1, 2])
