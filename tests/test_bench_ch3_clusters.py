"""benchmarks/bench_ch3_clusters.py on a tiny made-up cluster written in Pollux's trace format."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from perfkit.chapters.ch3.machines import SCALING_KEYS
from perfkit.report.claims import VERDICTS

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_ch3_clusters.py"
CLUSTER = "toy"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_ch3_clusters", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _write(path: Path, header: str, rows: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "\n" + "".join(",".join(str(c) for c in r) + "\n" for r in rows))


def _traces(root: Path) -> Path:
    """Two jobs of the made-up cluster ``toy``: ``alpha`` with both tables, ``beta`` with placements only."""
    for job, base in (("alpha", 0.20), ("beta", 0.35)):
        rows = []
        for k, p in enumerate(("1", "1", "2", "11", "11", "12", "21", "22", "112", "121", "1111")):
            g = sum(int(c) for c in p)
            sync = 0.0005 if g == 1 else 0.01 * len(p) + 0.004 * g + 0.001 * k
            rows.append((p, 32, round(base + sync + 0.002 * k, 6), round(sync, 6)))
        _write(root / job / f"placements-{CLUSTER}.csv", "placement,local_bsz,step_time,sync_time", rows)
    _write(root / "alpha" / f"scalability-{CLUSTER}.csv", "num_nodes,num_replicas,local_bsz,step_time,sync_time",
           [(2, 6, 32, 0.29, 0.07), (3, 8, 32, 0.31, 0.09)])
    return root


def test_writes_every_claim_per_cluster(bench, tmp_path):
    root = _traces(tmp_path / "sia")
    out = tmp_path / "out" / "ch3_clusters"
    res = bench.run(root, out, clusters=[CLUSTER, "absent"], pollux=False)
    doc = json.loads(out.with_suffix(".json").read_text())
    md = out.with_suffix(".md").read_text()
    assert [e["cluster"] for e in doc["clusters"]] == [CLUSTER, "absent"]
    toy, absent = doc["clusters"]
    assert toy["jobs"] == {"alpha": ["placements", "scalability"], "beta": ["placements"]}
    assert toy["gpu_range"] == [1, 8] and toy["status"] == "judged" and toy["rows"] == 24
    # LIF 1 ("1", "2", "11", "22", "1111"), 4/3 ("12", "21"), 3/2 ("112", "121"); replicates per job: "1" twice,
    # "11" twice, "12"/"21", "112"/"121"
    assert toy["lif_values"] == 3 and toy["replicate_rows"] == 16
    assert "toy cluster: 1–8 GPUs on up to 4 nodes, at most 2 GPUs on one node" in toy["machine"]
    for e in doc["clusters"]:
        assert list(e["claims"]) == list(SCALING_KEYS)
        assert all(c["verdict"] in VERDICTS for c in e["claims"].values())
    # the toy cluster is judged (speedup is measured there), the absent one says why it cannot be
    assert toy["claims"]["speedup"]["verdict"] != "cannot be tested here"
    assert toy["claims"]["speedup"]["estimate"] is not None
    assert {c["verdict"] for c in absent["claims"].values()} == {"cannot be tested here"}
    assert absent["claims"]["speedup"]["evidence"] == "no table of this cluster in the folder"
    assert res["clusters"][0]["claims"] == toy["claims"]
    # the markdown: one row per claim, one column per cluster
    for key in SCALING_KEYS:
        row = next(line for line in md.splitlines() if line.startswith(f"| `{key}`"))
        cells = [c.strip() for c in row.strip("|").split("|")[1:]]
        assert len(cells) == 2 and all(any(c.startswith(v) for v in VERDICTS) for c in cells)
    assert "**absent**: no table of this cluster in the folder" in md


def test_a_table_failing_the_checks_is_reported(bench, tmp_path):
    root = _traces(tmp_path / "sia")
    _write(root / "gamma" / f"placements-{CLUSTER}.csv", "placement,local_bsz,step_time", [("1", 32, 0.2)])
    doc = bench.run(root, tmp_path / "r", clusters=[CLUSTER], pollux=False)
    toy = doc["clusters"][0]
    assert set(toy["jobs"]) == {"alpha", "beta"}
    assert "sync_time" in toy["errors"]["gamma"]


def test_missing_folder_is_one_clear_line(bench, tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError, match=r"--traces .*nowhere: no such folder"):
        bench.run(missing, tmp_path / "r", clusters=[CLUSTER], pollux=False)
    proc = subprocess.run([sys.executable, str(BENCH), "--traces", str(missing), "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [f"bench_ch3_clusters: --traces {missing}: no such folder (copy the "
                                                "Sia artifact's traces there first: see benchmarks/README.md, "
                                                "'Chapter 3's claims on Sia's clusters')"]
    assert not (tmp_path / "r.json").exists()
