"""Pollux's cluster traces (data/external/pollux): shipped bytes, the tidy loader, derived layouts, bad tables."""
import hashlib
import json
import re
import shutil

import numpy as np
import pytest

from perfkit.data.external import EXTERNAL_DATASETS
from perfkit.data.external_files import external_dir
from perfkit.data.pollux import load_pollux
from perfkit.data.pollux import POLLUX_COLUMNS, POLLUX_JOBS, load_traces, placement_layout
from perfkit.model.analytic.equations import load_imbalance_factor

PROVENANCE = external_dir() / "pollux.provenance.json"
SOURCE = external_dir() / "pollux"
PLACEMENTS_HEADER = "placement,local_bsz,step_time,sync_time"
SCALABILITY_HEADER = "num_nodes,num_replicas,local_bsz,step_time,sync_time"


@pytest.fixture(scope="module")
def frame():
    return load_pollux()


def _data_lines(path):
    return len(path.read_text().splitlines()) - 1


# ------------------------------------------------------------------------------ shipped files
def test_shipped_loads(frame):
    assert list(frame.columns) == POLLUX_COLUMNS
    assert len(frame) == 7103 and frame.attrs["dropped"] == {} and frame.attrs["dataset"] == "pollux"
    assert set(frame["job"]) == set(POLLUX_JOBS) and set(frame["study"]) == {"placements", "scalability"}
    for c in ("n_nodes", "n_gpus", "batch_per_gpu", "batch_global"):
        assert frame[c].dtype == np.int64, c
    assert (frame["batch_global"] == frame["batch_per_gpu"] * frame["n_gpus"]).all()
    assert ((frame["t_iter"] > 0) & (frame["sync_time"] > 0) & (frame["sync_time"] <= frame["t_iter"])).all()
    place, scal = frame[frame["study"] == "placements"], frame[frame["study"] == "scalability"]
    assert place["n_gpus"].between(1, 16).all() and place["n_nodes"].between(1, 4).all()
    assert scal["n_gpus"].between(6, 64).all() and set(scal["n_nodes"]) == {6, 8, 12, 16}
    per_node = ["gpus_per_node_max", "gpus_per_node_min", "load_imbalance"]
    assert (place["load_imbalance"] >= 1).all() and not place[per_node].isna().any().any()
    assert (scal["placement"] == "").all() and scal[per_node].isna().all().all()
    assert place["placement"].nunique() == 108


def test_row_counts_match_files(frame):
    counts = frame.groupby(["job", "study"]).size()
    for job in POLLUX_JOBS:
        for study in ("placements", "scalability"):
            path = SOURCE / job / f"{study}.csv"
            assert counts[(job, study)] == _data_lines(path), (job, study)
            assert (frame.loc[(frame["job"] == job) & (frame["study"] == study), "source"]
                    == f"pollux/{job}/{study}.csv").all()
    assert len(load_pollux("placements")) == 5542 and len(load_pollux("scalability")) == 1561


def test_values_are_the_published_ones(frame):
    import pandas as pd

    raw = pd.read_csv(SOURCE / "ncf" / "scalability.csv")
    got = frame[(frame["job"] == "ncf") & (frame["study"] == "scalability")]
    np.testing.assert_array_equal(got["t_iter"].to_numpy(), raw["step_time"].to_numpy())
    np.testing.assert_array_equal(got["sync_time"].to_numpy(), raw["sync_time"].to_numpy())
    np.testing.assert_array_equal(got["n_gpus"].to_numpy(), raw["num_replicas"].to_numpy())
    np.testing.assert_array_equal(got["n_nodes"].to_numpy(), raw["num_nodes"].to_numpy())
    raw = pd.read_csv(SOURCE / "bert" / "placements.csv", dtype={"placement": str})
    got = frame[(frame["job"] == "bert") & (frame["study"] == "placements")]
    assert list(got["placement"]) == list(raw["placement"])
    np.testing.assert_array_equal(got["batch_per_gpu"].to_numpy(), raw["local_bsz"].to_numpy())


def test_provenance_sha256():
    prov = json.loads(PROVENANCE.read_text())
    assert prov["dataset"] == "pollux" and prov["source"]["commit"] == "c793c7089bd307462686339d29707925c461f9a9"
    assert prov["source"]["repository"] == "https://github.com/petuum/adaptdl" and prov["source"]["commit_date"]
    assert prov["licence"] and prov["derivation"] and prov["units"]
    shipped = sorted(str(p.relative_to(external_dir())) for p in SOURCE.rglob("*") if p.is_file())
    assert sorted(f["path"] for f in prov["files"]) == shipped and len(shipped) == 13
    for f in prov["files"]:
        data = (external_dir() / f["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f["sha256"] and len(data) == f["bytes"], f["path"]
        if f["path"].endswith(".csv"):
            assert f["rows"] == _data_lines(external_dir() / f["path"]), f["path"]
    assert "`pollux`" in (external_dir() / "README.md").read_text()


# ------------------------------------------------------------------------------ derived layouts
@pytest.mark.parametrize("placement, layout", [
    ("1222", (4, 7, 2, 1)), ("4", (1, 4, 4, 4)), ("44", (2, 8, 4, 4)), ("1114", (4, 7, 4, 1)), ("2", (1, 2, 2, 2)),
    ("234", (3, 9, 4, 2)), ("4444", (4, 16, 4, 4)),
])
def test_placement_layout(placement, layout, frame):
    n_nodes, n_gpus, hi, lo, lif = placement_layout(placement)
    assert (n_nodes, n_gpus, hi, lo) == layout
    assert lif == pytest.approx(float(load_imbalance_factor([int(c) for c in placement])))
    rows = frame[frame["placement"] == placement]
    assert len(rows) > 0
    assert (rows["n_nodes"] == n_nodes).all() and (rows["n_gpus"] == n_gpus).all()
    assert (rows["gpus_per_node_max"] == hi).all() and (rows["gpus_per_node_min"] == lo).all()
    np.testing.assert_allclose(rows["load_imbalance"], lif)


def test_placement_imbalance_values():
    assert placement_layout("1222")[4] == pytest.approx(4 * 2 / 7)
    assert placement_layout("1114")[4] == pytest.approx(4 * 4 / 7)
    assert placement_layout("33")[4] == 1.0
    for bad in ("", "120", "1a", "-1", 12):
        with pytest.raises(ValueError, match="placement: expected the digits 1-9"):
            placement_layout(bad)


# ------------------------------------------------------------------------------ bad tables
@pytest.fixture(scope="module")
def bad_root(tmp_path_factory):
    """A copy of the shipped tables, writable; each case overwrites one table with its bad text."""
    root = tmp_path_factory.mktemp("pollux_copy") / "pollux"
    shutil.copytree(SOURCE, root)
    for p in root.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return root


P_OK = ["1,4,0.45,0.01", "22,4,0.9,0.3", "1222,6,1.2,0.5"]
S_OK = ["6,6,4,1.49,1.09", "6,7,4,1.5,1.0", "8,32,6,1.6,1.1"]
# (job, table, header, data rows, regex the message must match after the file's name)
BAD = [
    ("bert", "placements", "placement,local_bsz,step_time", P_OK, r"column 'sync_time' missing"),
    ("bert", "placements", PLACEMENTS_HEADER + ",gpu", [r + ",T4" for r in P_OK],
     r"column 'gpu' is not a column"),
    ("bert", "placements", PLACEMENTS_HEADER, [], r"no data rows \(only a header\)"),
    ("bert", "placements", PLACEMENTS_HEADER, [P_OK[0], "22,four,0.9,0.3"],
     r"column 'local_bsz', row 2, line 3: 'four' is not a finite number"),
    ("bert", "placements", PLACEMENTS_HEADER, [P_OK[0], P_OK[1], "1222,6,nan,0.5"],
     r"column 'step_time', row 3, line 4: expected seconds > 0.*'nan'"),
    ("bert", "placements", PLACEMENTS_HEADER, [P_OK[0], "22,4,inf,0.3"],
     r"column 'step_time', row 2, line 3: 'inf' is not a finite number"),
    ("bert", "placements", PLACEMENTS_HEADER, ["1,4,0,0"], r"column 'step_time', row 1, line 2: expected seconds > 0"),
    ("bert", "placements", PLACEMENTS_HEADER, [P_OK[0], "22,4,0.9,-0.1"],
     r"column 'sync_time', row 2, line 3: expected seconds >= 0"),
    ("bert", "placements", PLACEMENTS_HEADER, [P_OK[0], P_OK[1], "1222,6,1.2,1.5"],
     r"column 'sync_time', row 3, line 4: 1\.5 s is longer than the step"),
    ("bert", "placements", PLACEMENTS_HEADER, [P_OK[0], "102,4,0.9,0.3"],
     r"column 'placement', row 2, line 3: expected the digits 1-9.*'102'"),
    ("bert", "placements", PLACEMENTS_HEADER, [P_OK[0], "2x2,4,0.9,0.3"],
     r"column 'placement', row 2, line 3: .*'2x2'"),
    ("bert", "placements", PLACEMENTS_HEADER, [",4,0.9,0.3"], r"column 'placement', row 1, line 2: .*''"),
    ("bert", "placements", PLACEMENTS_HEADER, [P_OK[0], "22,4.5,0.9,0.3"],
     r"column 'local_bsz', row 2, line 3: expected a whole number >= 1.*'4\.5'"),
    ("bert", "placements", PLACEMENTS_HEADER, ["22,0,0.9,0.3"], r"column 'local_bsz', row 1, line 2: .*'0'"),
    ("bert", "placements", PLACEMENTS_HEADER, ["22,1e30,0.9,0.3"], r"column 'local_bsz', row 1, line 2: .*'1e30'"),
    ("bert", "placements", PLACEMENTS_HEADER, ["22,4,1e300,0.3"], r"column 'step_time', row 1, line 2: .*at most"),
    ("bert", "placements", PLACEMENTS_HEADER, ["9999,999999999999,0.9,0.3"],
     r"column 'local_bsz', row 1, line 2: .*global batch above"),
    ("yolov3", "scalability", SCALABILITY_HEADER, [S_OK[0], "6,-7,4,1.5,1.0"],
     r"column 'num_replicas', row 2, line 3: expected a whole number >= 1"),
    ("yolov3", "scalability", SCALABILITY_HEADER, [S_OK[0], S_OK[1], "8.5,32,6,1.6,1.1"],
     r"column 'num_nodes', row 3, line 4: .*8\.5"),
    ("yolov3", "scalability", SCALABILITY_HEADER, [S_OK[0], "6,99999999999,4,1.5,1.0"],
     r"column 'num_replicas', row 2, line 3: .*at most"),
    ("yolov3", "scalability", SCALABILITY_HEADER, [S_OK[0], "6,7,4,1.5,"],
     r"column 'sync_time', row 2, line 3: expected seconds >= 0"),
    ("yolov3", "scalability", "num_nodes,local_bsz,step_time,sync_time", ["6,4,1.4,1.0"],
     r"column 'num_replicas' missing"),
    ("yolov3", "scalability", SCALABILITY_HEADER, [], r"no data rows"),
]


@pytest.mark.parametrize("job, table, header, rows, pattern", BAD, ids=[f"{i}-{b[1]}-{b[4][:30]}" for i, b in
                                                                       enumerate(BAD)])
def test_bad_table(bad_root, job, table, header, rows, pattern):
    path = bad_root / job / f"{table}.csv"
    original = path.read_bytes()
    path.write_text("\n".join([header, *rows]) + "\n")
    try:
        with pytest.raises(ValueError, match=re.escape(str(path)) + r": " + pattern):
            load_pollux(table, root=bad_root)
        with pytest.raises(ValueError, match=re.escape(str(path))):
            load_pollux(root=bad_root)
    finally:
        path.write_bytes(original)


def test_bad_files_and_arguments(tmp_path):
    with pytest.raises(ValueError, match=r"study: expected 'all' or one of"):
        load_pollux("speed")
    with pytest.raises(FileNotFoundError, match=r"bert/placements\.csv"):
        load_pollux(root=tmp_path)
    (tmp_path / "bert").mkdir()
    path = tmp_path / "bert" / "placements.csv"
    path.write_text("")
    with pytest.raises(ValueError, match=re.escape(str(path)) + r".* is empty"):
        load_pollux("placements", root=tmp_path)
    path.write_text(PLACEMENTS_HEADER + "\n1,4,0.4,0.01,7\n")  # pandas would take the first cell as an index
    with pytest.raises(ValueError, match=re.escape(str(path)) + r": row 1, line 2: 5 cells where the header has 4"):
        load_pollux("placements", root=tmp_path)
    path.write_text(PLACEMENTS_HEADER + "\n1,4,0.4,0.01\n22,4,0.9\n")
    with pytest.raises(ValueError, match=re.escape(str(path)) + r": row 2, line 3: 3 cells"):
        load_pollux("placements", root=tmp_path)
    path.write_text("placement,local_bsz,step_time,step_time\n1,4,0.4,0.01\n")
    with pytest.raises(ValueError, match=re.escape(str(path)) + r".*'step_time' appears twice"):
        load_pollux("placements", root=tmp_path)


def test_good_copy_loads_with_root(bad_root):
    frame = load_pollux(root=bad_root)
    assert len(frame) == 7103 and frame["source"].iloc[0] == "pollux/bert/placements.csv"


# ------------------------------------------------------------------------------ registry
def test_external_dataset_check_accepts_frame(frame):
    """The roles a registry entry would give (target t_iter, categorical job, extrinsic n_gpus, batch_per_gpu,
    n_nodes) pass ExternalDataset.check: present, no NaN, finite and > 0."""
    from perfkit.data.external import ExternalDataset

    ds = ExternalDataset(name="pollux", loader=load_pollux, target="t_iter", numeric=(), categorical=("job",),
                         extrinsic=("n_gpus", "batch_per_gpu", "n_nodes"), description="", citation="")
    assert ds.check(frame) is frame
    assert ds.provenance_path() == PROVENANCE


def test_registry_and_exports():
    import perfkit.data as data
    import perfkit.data.external as ext
    import perfkit.data.pollux as pollux

    assert "load_pollux" in pollux.__all__ and data.load_pollux is pollux.load_pollux
    if "pollux" in EXTERNAL_DATASETS:
        frame, ds = ext.load_external("pollux")
        assert ds.target == "t_iter" and ds.extrinsic == ("n_gpus", "batch_per_gpu", "n_nodes")
        assert len(frame) == 7103
    else:  # not registered: load_external refuses it by name
        with pytest.raises(ValueError, match="'pollux' unknown"):
            ext.load_external("pollux")


# ------------------------------------------------------------------------------ other clusters' traces
def _cluster_copy(tmp_path, jobs=("bert", "ncf"), cluster="big"):
    """Pollux's tables of ``jobs`` renamed to ``<study>-<cluster>.csv``, with one placement of 8 GPUs per node."""
    for job in jobs:
        (tmp_path / job).mkdir()
        for study in ("placements", "scalability"):
            text = (SOURCE / job / f"{study}.csv").read_text()
            if study == "placements":
                header, first, *rest = text.splitlines()
                cells = first.split(",")
                cells[header.split(",").index("placement")] = "88"
                text = "\n".join([header, ",".join(cells), *rest]) + "\n"
            (tmp_path / job / f"{study}-{cluster}.csv").write_text(text)
    return tmp_path


def test_load_traces_reads_other_clusters(tmp_path, frame):
    root = _cluster_copy(tmp_path)
    (root / "gpt").mkdir()
    (root / "gpt" / "placements-big.csv").write_text(PLACEMENTS_HEADER + "\n1,4,0.4,0.01\n")  # no scalability
    (root / "notes").mkdir()
    got = load_traces(root, "big")
    assert got.attrs["jobs"] == ["bert", "ncf"] and got.attrs["skipped"] == ["gpt"] and got.attrs["cluster"] == "big"
    assert list(got.columns) == POLLUX_COLUMNS and got.attrs["dataset"] == "traces"
    ours = frame[frame["job"].isin(["bert", "ncf"])].reset_index(drop=True)
    assert len(got) == len(ours)
    first = got.iloc[0]
    assert first["placement"] == "88" and first["n_gpus"] == 16 and first["n_nodes"] == 2
    assert got["source"].iloc[0] == f"{root.name}/bert/placements-big.csv"
    edited = (got["placement"] == "88").to_numpy()  # each job's first row; Pollux's nodes hold at most 4 GPUs
    assert edited.sum() == 2
    cols = ["job", "study", "n_gpus", "n_nodes", "batch_per_gpu", "t_iter", "sync_time"]
    assert got.loc[~edited, cols].reset_index(drop=True).equals(ours.loc[~edited, cols].reset_index(drop=True))
    assert len(load_traces(root, "big", jobs=["ncf"], study="scalability")) == (
        (frame["job"] == "ncf") & (frame["study"] == "scalability")).sum()
    # without a cluster: the shipped names
    assert len(load_traces(SOURCE, jobs=["yolov3"])) == (frame["job"] == "yolov3").sum()


def test_load_traces_refusals(tmp_path):
    root = _cluster_copy(tmp_path, jobs=("bert",))
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        load_traces(tmp_path / "none", "big")
    with pytest.raises(FileNotFoundError, match=r"no job folder holds placements-small\.csv and scalability-small\.csv"):
        load_traces(root, "small")
    with pytest.raises(FileNotFoundError, match=r"ncf/placements-big\.csv"):
        load_traces(root, "big", jobs=["ncf"])
    for bad in ("../x", "", "a/b", 3):
        with pytest.raises(ValueError, match="cluster: expected a name"):
            load_traces(root, bad)
    for bad in ("bert", [], ["../bert"], [""]):
        with pytest.raises(ValueError, match="jobs: expected"):
            load_traces(root, "big", jobs=bad)
    with pytest.raises(ValueError, match="study: expected"):
        load_traces(root, "big", study="speed")
    path = root / "bert" / "placements-big.csv"
    path.write_text(PLACEMENTS_HEADER + "\n90,4,0.4,0.01\n")  # a node with 0 GPUs
    with pytest.raises(ValueError, match=re.escape(str(path)) + r": column 'placement', row 1, line 2: expected the "
                                                                r"digits 1-9"):
        load_traces(root, "big")


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
