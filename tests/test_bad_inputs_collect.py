"""`perfkit collect` and `perfkit.measure.collect` refuse bad input with one clear message, before any work.

Each case runs the real CLI (``perfkit.cli.main``) in an empty folder and checks: exit status 2, one line on
stderr starting ``perfkit: error:``, naming the culprit, no traceback, and (for option errors) no file written.
"""
import os

import pytest

from perfkit.cli import main
from perfkit.measure.collect import collect
from perfkit.measure.plans import make_plan
from perfkit.measure.samplelog import SampleLog

TINY = ["--samples", "2", "--workers", "1", "--batch-sizes", "8", "--datasets", "mnist", "--warmup", "1",
        "--steps", "2", "--min-run-seconds", "0", "--no-progress"]

# (id, kind, extra arguments, text the message must contain)
OPTION_CASES = [
    ("threads-0", "ch4", ["--threads", "0"], "--threads"),
    ("threads-negative", "ch4", ["--threads", "-1"], "--threads"),
    ("timeout-0", "ch4", ["--timeout", "0"], "--timeout"),
    ("timeout-negative", "ch4", ["--timeout", "-5"], "--timeout"),
    ("timeout-nan", "ch4", ["--timeout", "nan"], "--timeout"),
    ("timeout-inf", "ch4", ["--timeout", "inf"], "--timeout"),
    ("batch-sizes-negative", "ch4", ["--batch-sizes", "-8"], "batch_sizes"),
    ("batch-sizes-zero", "ch4", ["--batch-sizes", "8,0"], "batch_sizes"),
    ("batch-sizes-text", "ch4", ["--batch-sizes", "8,x"], "batch-sizes"),
    ("workers-zero", "ch4", ["--workers", "0"], "workers"),
    ("workers-empty", "ch4", ["--workers", ","], "workers"),
    ("samples-zero", "ch4", ["--samples", "0"], "samples"),
    ("samples-negative", "ch4", ["--samples", "-3"], "samples"),
    ("seed-negative", "ch4", ["--seed", "-1"], "seed"),
    ("repeats-zero", "ch4", ["--repeats", "0"], "repeats"),
    ("steps-zero", "ch4", ["--steps", "0"], "steps"),
    ("warmup-negative", "ch4", ["--warmup", "-1"], "warmup"),
    ("min-run-seconds-negative", "ch4", ["--min-run-seconds", "-1"], "min_run_seconds"),
    ("min-run-seconds-nan", "ch4", ["--min-run-seconds", "nan"], "min_run_seconds"),
    ("datasets-unknown", "ch4", ["--datasets", "imagenet"], "datasets"),
    ("option-of-another-kind", "ch4", ["--rounds", "3"], "--rounds"),
    ("max-epoch-seconds-zero", "epoch", ["--max-epoch-seconds", "0"], "max_epoch_seconds"),
    ("rounds-zero", "noise", ["--rounds", "0"], "rounds"),
    ("framework-unknown", "ch4", ["--framework", "caffe"], "framework"),
    ("python-missing", "ch4", ["--python", "/nonexistent/python"], "--python"),
    ("data-root-missing", "ch4", ["--data-root", "/nonexistent/data"], "--data-root"),
]
CH3_CASES = [
    ("ch3-models-unknown", "ch3", ["--models", "resnet"], "models"),
    ("ch3-modes-unknown", "ch3", ["--modes", "async"], "modes"),
    ("ch3-iterations-zero", "ch3", ["--iterations", "0"], "iterations"),
    ("ch3-batch-size-zero", "ch3", ["--batch-size", "0"], "batch_size"),
]
CH5_CASES = [
    ("ch5-volume-small", "ch5", ["--volume", "4x4x4"], "volume"),
    ("ch5-volume-text", "ch5", ["--volume", "abc"], "volume"),
    ("ch5vol-volumes-2d", "ch5vol", ["--volumes", "32x32"], "volumes"),
    ("ch5vol-filters-zero", "ch5vol", ["--filters", "0"], "filters"),
]


def run_cli(args, capsys):
    code = main(args)
    err = capsys.readouterr().err
    return code, err


def assert_one_clean_error(code, err, culprit):
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("perfkit: error:"), err
    assert culprit in lines[0], err


@pytest.mark.parametrize("kind, extra, culprit", [c[1:] for c in OPTION_CASES + CH3_CASES + CH5_CASES],
                         ids=[c[0] for c in OPTION_CASES + CH3_CASES + CH5_CASES])
def test_bad_collect_options_stop_before_any_work(tmp_path, capsys, kind, extra, culprit):
    out = tmp_path / "out.csv"
    base = TINY if kind in ("ch4", "noise", "epoch") else ["--no-progress"]
    if kind == "ch4" and extra[0] in ("--samples", "--workers", "--batch-sizes"):
        base = [a for i, a in enumerate(TINY) if a != extra[0] and (i == 0 or TINY[i - 1] != extra[0])]
    code, err = run_cli(["collect", kind, "--out", str(out)] + base + extra, capsys)
    assert_one_clean_error(code, err, culprit)
    assert os.listdir(tmp_path) == [], "nothing is written for a bad option"


def test_out_that_is_a_folder(tmp_path, capsys):
    code, err = run_cli(["collect", "ch4", "--out", str(tmp_path)] + TINY, capsys)
    assert_one_clean_error(code, err, "is a folder")


def test_out_that_is_not_a_sample_log_is_never_touched(tmp_path, capsys):
    other = tmp_path / "runs.csv"
    other.write_text("x,y\n1,2\n")
    code, err = run_cli(["collect", "ch4", "--out", str(other)] + TINY, capsys)
    assert_one_clean_error(code, err, "not a perfkit sample log")
    assert other.read_text() == "x,y\n1,2\n" and sorted(os.listdir(tmp_path)) == ["runs.csv"]


def test_out_of_another_kind_is_refused_naming_the_columns(tmp_path, capsys):
    out = tmp_path / "noise.csv"
    SampleLog(out, ["sample_id", "sample_rows", "config_id"]).close()
    code, err = run_cli(["collect", "ch4", "--out", str(out)] + TINY, capsys)
    assert_one_clean_error(code, err, "columns differ")


def test_out_that_is_a_symbolic_link(tmp_path, capsys):
    target = tmp_path / "elsewhere.csv"
    target.write_text("")
    (tmp_path / "link.csv").symlink_to(target)
    code, err = run_cli(["collect", "ch4", "--out", str(tmp_path / "link.csv")] + TINY, capsys)
    assert_one_clean_error(code, err, "symbolic link")


def test_out_held_by_another_collector(tmp_path, capsys):
    from perfkit.measure.plans import make_plan

    out = tmp_path / "ch4.csv"
    with SampleLog(out, make_plan("ch4", samples=2).columns):
        code, err = run_cli(["collect", "ch4", "--out", str(out)] + TINY, capsys)
    assert_one_clean_error(code, err, f"PID {os.getpid()}")


def test_damaged_provenance_is_one_clear_error(tmp_path, capsys):
    from perfkit.measure.plans import make_plan

    out = tmp_path / "ch4.csv"
    plan = make_plan("ch4", samples=2, workers=[1], batch_sizes=[8], datasets=["mnist"], warmup=1, steps=2,
                     min_run_seconds=0.0)
    with SampleLog(out, plan.columns) as log:  # one finished sample, as the collector writes it
        sid, g, cfg = plan.items[0]
        log.append(sid, plan.to_rows(plan.items[0], {"ok": False, "error": "x"},
                                     {"framework": "pytorch", "device": "cpu", "threads": 1, "mode": cfg["mode"]}))
    out.with_name("ch4.provenance.json").write_text("{not json")
    code, err = run_cli(["collect", "ch4", "--out", str(out)] + TINY, capsys)
    assert_one_clean_error(code, err, "provenance.json")


def test_resume_with_another_seed_is_refused_from_the_rows_even_without_provenance(tmp_path, capsys):
    from perfkit.measure.plans import make_plan

    out = tmp_path / "ch4.csv"
    small = dict(samples=2, workers=[1], batch_sizes=[8, 16, 32, 64], datasets=["mnist"], warmup=1, steps=2,
                 min_run_seconds=0.0)
    plan = make_plan("ch4", seed=5, **small)
    with SampleLog(out, plan.columns) as log:
        for item in plan.items:
            log.append(item[0], plan.to_rows(item, {"ok": False, "error": "x"},
                                             {"framework": "pytorch", "device": "cpu", "threads": 1,
                                              "mode": item[2]["mode"]}))
    other = make_plan("ch4", seed=6, **small)
    assert any(a[2] != b[2] for a, b in zip(plan.items, other.items))
    with pytest.raises(ValueError, match="collected with other settings"):
        collect("ch4", out=out, progress=False, seed=6, **small)
    # threads are a column too: a resume with another --threads would mix two protocols
    with pytest.raises(ValueError, match="threads"):
        collect("ch4", out=out, progress=False, seed=5, threads=2, **small)
    assert len(out.read_text().splitlines()) == 3, "the file is untouched"


@pytest.mark.parametrize("kwargs, culprit", [
    (dict(kind="ch9"), "kind"),
    (dict(threads="2"), "--threads"),
    (dict(threads=True), "--threads"),
    (dict(timeout=None), "--timeout"),
    (dict(device="tpu"), "--device"),
    (dict(samples=2.5), "samples"),
    (dict(workers=[1.5]), "workers"),
    (dict(workers="12"), "workers"),
    (dict(nonsense=1), "nonsense"),
], ids=["kind", "threads-str", "threads-bool", "timeout-none", "device", "samples-float", "workers-float",
        "workers-str", "unknown-option"])
def test_python_api_refuses_bad_arguments(tmp_path, kwargs, culprit):
    kw = dict(kind="ch4", out=tmp_path / "x.csv", progress=False)
    kw.update(kwargs)
    with pytest.raises(ValueError, match=culprit):
        collect(**kw)
    assert not (tmp_path / "x.csv").exists()


def test_cuda_without_a_gpu_is_one_line(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    code, err = run_cli(["collect", "ch4", "--out", str(tmp_path / "c.csv"), "--device", "cuda"] + TINY, capsys)
    assert_one_clean_error(code, err, "cuda")
    assert err.count("cuda") <= 3 and "rank" not in err


def test_a_run_whose_first_samples_all_fail_stops(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "t.csv"
    args = ["collect", "ch4", "--out", str(out), "--timeout", "0.001"] + TINY
    args[args.index("--samples") + 1] = "8"
    code, err = run_cli(args, capsys)
    assert_one_clean_error(code, err, "first 5 samples")
    assert len(out.read_text().splitlines()) == 1 + 5, "the error rows are kept"


def test_cluster_results_torn_last_line_is_ignored_and_bad_lines_are_named(tmp_path):
    import json as _json

    from perfkit.measure.cluster import import_results, read_results, write_requests

    res = tmp_path / "results.jsonl"
    res.write_text(_json.dumps({"op": "hello", "world_size": 2}) + "\n" + _json.dumps({"id": "0", "ok": False,
                                                                                         "error": "boom"}) + "\n{\"id\": \"1\", \"ok")
    hello, replies = read_results(res)
    assert hello["world_size"] == 2 and list(replies) == ["0"]  # the torn line of a killed job is dropped
    # a failed sample is requested again; the torn one too
    assert write_requests("ch4", tmp_path / "req.jsonl", world_size=2, results=res, samples=3) == 3
    res.write_text("not json\n" + _json.dumps({"id": "0", "ok": True}) + "\n")
    with pytest.raises(ValueError, match=r"line 1 is not JSON"):
        read_results(res)
    res.write_text(_json.dumps({"id": "99", "ok": False, "error": "x"}) + "\n")
    with pytest.raises(ValueError, match=r"sample '99' is not in this plan"):
        import_results("ch4", res, tmp_path / "out.csv", world_size=2, samples=3)
    with pytest.raises(ValueError, match=r"kind: 'ch3'"):
        write_requests("ch3", tmp_path / "req.jsonl", world_size=2)


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
