"""The cluster import (perfkit.measure.cluster): requests written, results read and imported into the sample log.
A malformed, torn, refused or foreign line, a result of another world size or an output that is an input each end in
one clean error naming the file and line, or in the correct sample log; no sample is lost or written twice."""
import csv
import json
import math
import os
import warnings

import pytest

from perfkit.measure.cluster import import_results, read_results, write_requests
from perfkit.measure.samplelog import dropped_path

OPTS = dict(samples=3, repeats=3)
WS = 2


def hello(world_size=WS, **extra):
    return dict({"op": "hello", "framework": "pytorch", "world_size": world_size,
                 "ranks": [{"rank": r} for r in range(world_size)]}, **extra)


def rank(times=(0.01, 0.012), runs=3, **over):
    return dict({"n_params": 61706, "n_train": 60000, "steps": len(times), "repeats": [list(times)] * runs}, **over)


def good(sid, world_size=WS, **over):
    return {"id": str(sid), "ok": True, "ranks": [rank(**over) for _ in range(world_size)]}


def failed(sid, error="RuntimeError: out of memory (rank 1)"):
    return {"id": str(sid), "ok": False, "error": error}


def write(path, msgs, tail=""):
    path.write_text("".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in msgs) + tail)
    return path


def append(path, msgs):
    with open(path, "a") as fh:
        fh.write("".join(json.dumps(m) + "\n" for m in msgs))


def rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def status(path):
    return {r["sample_id"]: r["status"] for r in rows(path)}


def do_import(res, out, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a good import warns about nothing
        return import_results("ch4", res, out, world_size=WS, **dict(OPTS, **kw))


def test_a_sample_fails_is_re_measured_and_the_import_resumes_with_nothing_lost_and_nothing_twice(tmp_path):
    res, out, req = tmp_path / "results.jsonl", tmp_path / "ch4.csv", tmp_path / "requests.jsonl"
    assert write_requests("ch4", req, world_size=WS, results=res, **OPTS) == 3
    # the first job: sample 0 measured, sample 1 failed, killed while writing sample 2
    write(res, [hello(), good(0), failed(1)], tail='{"id": "2", "ok": true, "ranks": [{"n_par')
    assert do_import(res, out) == 2
    assert status(out) == {"0": "ok", "1": "error"}
    first_0 = [r for r in rows(out) if r["sample_id"] == "0"]
    # resuming: the failed and the torn sample are requested again, the measured one is not
    assert write_requests("ch4", req, world_size=WS, results=res, **OPTS) == 2
    assert [json.loads(x).get("id") for x in req.read_text().splitlines()] == [None, "1", "2", None]
    # the resumed job appends on the torn line; it re-measures 1 and 2; a stray later failure of 0 follows
    append(res, [hello(), good(1, times=(0.02, 0.021)), good(2), failed(0)])
    assert do_import(res, out) == 2  # 1 replaces its error row, 2 is new
    log = rows(out)
    assert sorted(r["sample_id"] for r in log) == ["0", "1", "2"], "every sample exactly once"
    assert status(out) == {"0": "ok", "1": "ok", "2": "ok"}
    assert [r for r in log if r["sample_id"] == "0"] == first_0, "a good row is never replaced by a failure"
    assert math.isclose(float(next(r for r in log if r["sample_id"] == "1")["step_time"]), (0.02 + 0.021) / 2)
    kept = dropped_path(out).read_text()
    assert "out of memory" in kept and "replaced by a re-measurement" in kept, "the error row is kept, not lost"
    # importing again changes nothing; nothing is left to request
    before = out.read_bytes()
    assert do_import(res, out) == 0 and out.read_bytes() == before
    assert write_requests("ch4", req, world_size=WS, results=res, **OPTS) == 0
    prov = json.loads((tmp_path / "ch4.provenance.json").read_text())
    assert [s["samples_replaced"] for s in prov["sessions"]] == [0, 1, 0]


def test_a_later_failed_reply_never_replaces_a_good_one_even_before_the_first_import(tmp_path):
    res = write(tmp_path / "r.jsonl", [hello(), good(0), failed(0), failed(1), failed(1, "second"), good(2),
                                       failed(2)])
    _, replies = read_results(res, WS)
    assert replies["0"]["ok"] and replies["2"]["ok"] and replies["1"]["error"] == "second"
    assert do_import(res, tmp_path / "o.csv") == 3
    assert status(tmp_path / "o.csv") == {"0": "ok", "1": "error", "2": "ok"}


@pytest.mark.parametrize("msgs, match", [
    ([hello(4), good(0, 4)], r"line 1: the job ran on 4 ranks, but world_size=2"),
    ([good(0, 4)], r"line 1: sample '0' was measured on 4 ranks, but world_size=2"),
    ([hello(), good(0), good(1, 4)], r"line 3: sample '1' was measured on 4 ranks"),
    ([{"op": "hello", "world_size": 2, "ranks": [{}, {}, {}, {}]}], r"line 1: the hello says world_size 2 but "
                                                                     r"lists 4 ranks"),
    ([{"op": "hello", "ranks": [{}] * 4}], r"line 1: the job ran on 4 ranks"),
    ([hello(), good(0), hello(4)], r"line 3: the job ran on 4 ranks"),
], ids=["hello-4-ranks", "reply-4-ranks-no-hello", "one-reply-4-ranks", "hello-contradicts", "hello-ranks-only",
        "second-job-of-4"])
def test_results_of_another_world_size_are_one_error_naming_the_line(tmp_path, msgs, match):
    res = write(tmp_path / "r.jsonl", msgs)
    with pytest.raises(ValueError, match=match):
        import_results("ch4", res, tmp_path / "o.csv", world_size=WS, **OPTS)
    assert not (tmp_path / "o.csv").exists(), "nothing imported"
    with pytest.raises(ValueError, match=match):
        write_requests("ch4", tmp_path / "q.jsonl", world_size=WS, results=res, **OPTS)


@pytest.mark.parametrize("line, match", [
    ("[1, 2]", r"expected a JSON object \(a reply or a hello\), got a list"),
    ("null", r"got null"),
    ('"text"', r"got a string"),
    ("42", r"got a number"),
    ('{"ok": true}', r"a reply needs a sample 'id'"),
    ('{"id": null, "ok": false, "error": "x"}', r"a reply needs a sample 'id'"),
    ('{"id": ["0"], "ok": true}', r"a reply needs a sample 'id'"),
    ('{"id": "0"}', r"a reply needs 'ok' true or false, got None"),
    ('{"id": "0", "ok": "yes"}', r"a reply needs 'ok' true or false, got 'yes'"),
    ('{"op": "run", "id": "0", "task": "steps", "config": {}}', r"give the results file, not the requests file"),
    ('{"id": "0", "ok": false, "error": 3}', r"a failed reply's 'error' is a number"),
    ('{"id": "0", "ok": true}', r"needs 'ranks', a list of one object per rank \(got missing\)"),
    ('{"id": "0", "ok": true, "ranks": null}', r"needs 'ranks'.*got missing"),
    ('{"id": "0", "ok": true, "ranks": "ab"}', r"needs 'ranks'.*got a string"),
    ('{"id": "0", "ok": true, "ranks": []}', r"needs 'ranks'"),
    ('{"id": "0", "ok": true, "ranks": [1, 2]}', r"needs 'ranks'"),
    (json.dumps(good(0, times=("0.01", "0.02"))), r"rank 0: step time '0.01' is a string, expected a number"),
    (json.dumps(good(0, times=(None, 0.02))), r"step time None is null"),
    (json.dumps(good(0, times=(True, 0.02))), r"step time True is a boolean"),
    (json.dumps(good(0, runs=0)), r"rank 0's 'repeats' is not a list of timed runs"),
    (json.dumps(good(0, times=())), r"'repeats' is not a list of timed runs"),
    (json.dumps(good(0, repeats="0.1")), r"'repeats' is not a list"),
    (json.dumps({"id": "0", "ok": True, "ranks": [rank(), rank(runs=2)]}), r"rank 1 has 2 timed runs, rank 0 has 3"),
    (json.dumps(good(0, n_train="60000")), r"rank 0: n_train is '60000', expected an integer"),
    (json.dumps(good(0, n_params=1.5)), r"rank 0: n_params is 1.5, expected an integer"),
    (json.dumps(good(0, steps=None)), r"rank 0: steps is None"),
    (json.dumps(good(0, epoch_time="long")), r"epoch_time 'long' is a string"),
    ('{"op": "hello", "world_size": "2"}', r"the hello's world_size '2' is not a positive integer"),
    ('{"op": "hello", "world_size": 2, "ranks": 2}', r"the hello's 'ranks' is a number"),
    ("not json", r"is not JSON"),
    ('{"id": "0", "ok": tr', r"is not JSON"),
], ids=lambda v: v if len(v) < 30 else v[:30])
def test_a_malformed_line_is_one_error_naming_the_file_and_line(tmp_path, line, match):
    res = write(tmp_path / "r.jsonl", [hello(), good(1), line, good(2)])
    with pytest.raises(ValueError, match=rf"r\.jsonl: line 3\b.*{match}"):
        read_results(res, WS)
    with pytest.raises(ValueError, match=r"line 3"):
        import_results("ch4", res, tmp_path / "o.csv", world_size=WS, **OPTS)
    assert not (tmp_path / "o.csv").exists(), "nothing imported from a file with a malformed line"


@pytest.mark.parametrize("over, what", [
    (dict(times=(-0.01, 0.02)), r"rank 0, run 1, step 1: step time -0.01 is not a positive finite number"),
    (dict(times=(0.01, float("nan"))), r"step 2: step time nan"),
    (dict(times=(0.01, float("inf"))), r"step time inf"),
    (dict(times=(0.0, 0.01)), r"step time 0.0"),
    (dict(n_train=0), r"rank 0: n_train 0 is below 1"),
    (dict(n_params=-5), r"n_params -5 is below 1"),
    (dict(steps=0), r"steps 0 is below 1"),
    (dict(epoch_time=-3.0, epoch_steps=10), r"epoch_time -3.0"),
    (dict(epoch_time=float("nan"), epoch_steps=10), r"epoch_time nan"),
], ids=["negative", "nan", "inf", "zero", "n_train-0", "n_params-negative", "steps-0", "epoch-negative",
        "epoch-nan"])
def test_a_reply_whose_values_are_not_measurements_is_refused_reported_and_requested_again(tmp_path, over, what):
    res, out = write(tmp_path / "r.jsonl", [hello(), good(0), good(1, **over)]), tmp_path / "o.csv"
    with pytest.warns(UserWarning, match=rf"1 reply\(ies\) refused.*r\.jsonl: line 3: sample '1': .*{what}"):
        assert import_results("ch4", res, out, world_size=WS, **OPTS) == 2
    log = {r["sample_id"]: r for r in rows(out)}
    assert log["0"]["status"] == "ok" and log["1"]["status"] == "error", "never imported as ok"
    assert "reply refused on import" in log["1"]["error"] and "line 3" in log["1"]["error"]
    assert write_requests("ch4", tmp_path / "q.jsonl", world_size=WS, results=res, **OPTS) == 2  # 1 and 2
    prov = json.loads((tmp_path / "o.provenance.json").read_text())
    assert len(prov["sessions"][-1]["replies_refused"]) == 1
    # the re-measurement replaces the error row
    append(res, [hello(), good(1)])
    assert do_import(res, out) == 1 and status(out) == {"0": "ok", "1": "ok"}


def test_a_refused_reply_never_replaces_a_good_one(tmp_path):
    res = write(tmp_path / "r.jsonl", [hello(), good(0), good(0, times=(-1.0, 0.01))])
    _, replies = read_results(res, WS)
    assert replies["0"]["ok"] and replies["0"]["ranks"][0]["repeats"][0][0] == 0.01


def test_replies_checked_against_the_plan(tmp_path):
    res = write(tmp_path / "r.jsonl", [hello(), good(0, runs=5)])
    with pytest.raises(ValueError, match=r"r\.jsonl: line 2: sample '0' has 5 timed runs, the plan asks for 3"):
        import_results("ch4", res, tmp_path / "o.csv", world_size=WS, **OPTS)
    res = write(tmp_path / "r.jsonl", [hello(), good(7)])
    with pytest.raises(ValueError, match=r"r\.jsonl: line 2: sample '7' is not in this plan"):
        import_results("ch4", res, tmp_path / "o.csv", world_size=WS, **OPTS)
    for bad in (0, -2, 2.0, True, "2"):
        with pytest.raises(ValueError, match=r"world_size: expected an integer >= 1"):
            import_results("ch4", res, tmp_path / "o.csv", world_size=bad, **OPTS)
    with pytest.raises(FileNotFoundError, match=r"results '.*nothing\.jsonl': no such file"):
        import_results("ch4", tmp_path / "nothing.jsonl", tmp_path / "o.csv", world_size=WS, **OPTS)
    assert not (tmp_path / "o.csv").exists()


def test_writing_requests_never_overwrites_a_results_file_or_any_input(tmp_path):
    res = write(tmp_path / "results.jsonl", [hello(), good(0)])
    before = res.read_bytes()
    with pytest.raises(ValueError, match=r"is the input .*results\.jsonl"):
        write_requests("ch4", res, world_size=WS, results=res, **OPTS)
    other = write(tmp_path / "old-results.jsonl", [hello(), good(0)])
    with pytest.raises(ValueError, match=r"old-results\.jsonl' exists and is not a requests file \(line 1"):
        write_requests("ch4", other, world_size=WS, results=res, **OPTS)
    log = tmp_path / "ch4.csv"
    assert do_import(res, log) == 1
    for target in (log, tmp_path / "ch4.provenance.json"):
        kept = target.read_bytes()
        with pytest.raises(ValueError, match=r"exists and is not a requests file"):
            write_requests("ch4", target, world_size=WS, results=res, **OPTS)
        assert target.read_bytes() == kept
    with pytest.raises(ValueError, match=r"is a folder"):
        write_requests("ch4", tmp_path, world_size=WS, results=res, **OPTS)
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "elsewhere.jsonl")
    with pytest.raises(ValueError, match=r"symbolic link"):
        write_requests("ch4", link, world_size=WS, results=res, **OPTS)
    assert not (tmp_path / "elsewhere.jsonl").exists()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"fifo' is (a FIFO|not a regular file)"):
        write_requests("ch4", fifo, world_size=WS, results=res, **OPTS)
    assert res.read_bytes() == before
    # an earlier requests file (and an empty file) is replaced as before
    req = tmp_path / "req.jsonl"
    assert write_requests("ch4", req, world_size=WS, results=res, **OPTS) == 2
    assert write_requests("ch4", req, world_size=WS, results=res, **dict(OPTS, samples=4)) == 3
    (tmp_path / "empty.jsonl").write_text("")
    assert write_requests("ch4", tmp_path / "empty.jsonl", world_size=WS, **OPTS) == 3


def test_inputs_that_are_not_regular_files_are_refused(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # reading it would block for ever
    for bad, match in ((fifo, r"results .*fifo' is not a regular file"), (tmp_path, r"is a folder")):
        with pytest.raises(ValueError, match=match):
            read_results(bad)
        with pytest.raises(ValueError, match=match):
            import_results("ch4", bad, tmp_path / "o.csv", world_size=WS, **OPTS)
    res = write(tmp_path / "r.jsonl", [hello(), good(0)])
    with pytest.raises(ValueError, match=r"is the results file"):
        import_results("ch4", res, res, world_size=WS, **OPTS)
    assert json.loads(res.read_text().splitlines()[1])["id"] == "0"


def test_a_resumed_job_that_continues_a_torn_line_loses_nothing(tmp_path):
    torn = json.dumps(good(1))[:40]
    res = write(tmp_path / "r.jsonl", [hello(), good(0), torn + json.dumps(hello()), good(1), good(2)])
    h, replies = read_results(res, WS)
    assert sorted(replies) == ["0", "1", "2"] and h["world_size"] == WS
    assert do_import(res, tmp_path / "o.csv") == 3


def test_a_line_that_is_not_utf8_is_one_error_naming_it(tmp_path):
    res = tmp_path / "r.jsonl"
    res.write_bytes(json.dumps(hello()).encode() + b"\n\xff\xfe{\n" + json.dumps(good(0)).encode() + b"\n")
    with pytest.raises(ValueError, match=r"r\.jsonl: line 2 is not JSON"):
        read_results(res, WS)
