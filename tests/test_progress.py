"""Progress shown during `perfkit reproduce`: the kernels' progress file, the watcher's status line, run times."""
import io
import json
import os
import re
import time

import pytest

from perfkit import progress as pg


@pytest.fixture
def pfile(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    monkeypatch.setenv(pg.ENV, str(path))
    monkeypatch.setitem(pg._state, "section", None)
    monkeypatch.setitem(pg._state, "batches", {})
    return path


class _Tty(io.StringIO):
    def isatty(self):
        return True


def _watch(path, stream, expected=None, until=lambda text: False, limit=2.0, **kw):
    """Run a fast watcher until ``until(output)`` holds (at most ``limit`` s); returns the output."""
    with pg.ProgressWatcher("ch4", path, expected=expected, stream=stream, interval=0.02, **kw):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and not until(stream.getvalue()):
            time.sleep(0.02)
    return stream.getvalue()


def test_report_writes_the_json_the_watcher_reads(pfile):
    before = time.time()
    pg.report("PyTorch: Table 4.2 DE fits", 0, 30)
    pg.report("PyTorch: Table 4.2 DE fits", 12, 30)
    data = pg.read_progress(pfile)
    assert data["section"] == "PyTorch: Table 4.2 DE fits" and (data["done"], data["total"]) == (12, 30)
    assert before <= data["started"] <= data["updated"] <= time.time()
    assert [p.name for p in pfile.parent.iterdir()] == ["progress.json"]  # no temporary file left behind
    out = _watch(pfile, io.StringIO(), until=lambda t: "12/30" in t)
    assert re.search(r"\[perfkit\] ch4 · PyTorch: Table 4.2 DE fits: 12/30 fits, (~\d+|<1) s left in section", out)


def test_a_new_section_restarts_its_clock(pfile):
    pg.report("a", 0, 2)
    first = pg.read_progress(pfile)["started"]
    time.sleep(0.01)
    pg.report("b", 1, 2)
    assert pg.read_progress(pfile)["started"] > first


def test_report_is_a_no_op_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(pg.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    pg.report("fits", 1, 2)
    assert list(tmp_path.iterdir()) == []
    items = [1, 2, 3]
    assert pg.track(items, "fits", 3) is items  # nothing wrapped


@pytest.mark.parametrize("where", ["missing/progress.json", "folder", "file/progress.json"])
def test_report_never_raises_on_an_unwritable_path(tmp_path, monkeypatch, where):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv(pg.ENV, str(tmp_path / where))
    pg.report("fits", 1, 2)  # must not raise
    assert (tmp_path / "file").read_text() == "x" and list((tmp_path / "folder").iterdir()) == []
    assert list(pg.track(iter([1, 2]), "fits", 2)) == [1, 2]


def test_watcher_prints_section_counts_and_estimates(tmp_path):
    path = tmp_path / "progress.json"
    now = time.time()
    path.write_text(json.dumps({"section": "Fig. 4.15 λ sweep", "done": 3, "total": 10, "started": now - 30,
                                "updated": now}))
    out = _watch(path, io.StringIO(), expected=300, until=lambda t: "fits" in t)
    line = out.splitlines()[0]
    assert line.startswith("[perfkit] ch4 · Fig. 4.15 λ sweep: 3/10 fits, ~1:1")  # 30 s / 3 fits × 7 left ≈ 70 s
    assert re.search(r"~1:1\d left in section · chapter \d+ s elapsed, ~(4:\d\d|5:00) left \(5:00 in the last run\)$", line)
    assert "\r" not in out  # not a terminal: whole lines
    # not a terminal: the same section is not printed again within quiet_interval
    assert len(_watch(path, io.StringIO(), limit=0.3, quiet_interval=60).splitlines()) == 1


def test_watcher_ignores_a_file_from_an_earlier_run_and_clears_its_line_on_a_terminal(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text(json.dumps({"section": "old", "done": 1, "total": 2, "started": 0, "updated": 1}))
    stream = _Tty()
    out = _watch(path, stream, until=lambda t: "elapsed" in t)
    assert "old" not in out and out.startswith("\r\x1b[K[perfkit] ch4 · chapter 0 s elapsed")
    assert out.endswith("\r\x1b[K") and "\n" not in out


def test_status_line_without_progress_and_past_the_expected_time():
    assert pg.status_line("ch3", None, 75, expected=60) == "[perfkit] ch3 · chapter 1:15 elapsed (1:00 in the last run)"
    done = {"section": "s", "done": 4, "total": 4, "started": 0}
    assert pg.status_line("ch3", done, 3700, now=10) == "[perfkit] ch3 · s: 4/4 fits done · chapter 1:01:40 elapsed"
    zero = {"section": "s", "done": 0, "total": 4, "started": 0}  # no fit done yet: the time in the section
    assert pg.status_line("ch3", zero, 5, now=10) == "[perfkit] ch3 · s: 0/4 fits, 10 s in section · chapter 5 s elapsed"
    cached = {"section": pg.CACHED_SECTION, "done": 0, "total": 0, "started": 0}  # no estimate from a full run
    assert pg.status_line("ch3", cached, 20, expected=132) == ("[perfkit] ch3 · results read from the cache · "
                                                              "chapter 20 s elapsed")


def test_a_second_batch_of_one_name_is_its_own_section(pfile):
    from joblib import delayed

    from perfkit.model.selection.fitting import run_parallel

    run_parallel(1, None, [delayed(abs)(k) for k in range(3)], 3, "form search", False)
    run_parallel(1, None, [delayed(abs)(k) for k in range(2)], 2, "form search", False)
    data = pg.read_progress(pfile)
    assert (data["section"], data["done"], data["total"]) == ("form search #2", 2, 2)


def test_parallel_reports_done_counts(pfile, monkeypatch):
    from joblib import delayed

    from perfkit.model.selection.fitting import run_parallel

    seen = []
    real = pg.report

    def record(section, done, total):
        seen.append((section, done, total))
        real(section, done, total)

    monkeypatch.setattr(pg, "report", record)
    out = run_parallel(1, None, (delayed(pow)(i, 2) for i in range(4)), 4, "Table 4.2 DE fits", False)
    assert out == [0, 1, 4, 9]
    assert seen == [("Table 4.2 DE fits", k, 4) for k in range(5)]
    data = pg.read_progress(pfile)
    assert (data["section"], data["done"], data["total"]) == ("Table 4.2 DE fits", 4, 4)


def _inner(k):
    from joblib import delayed

    from perfkit.model.selection.fitting import run_parallel

    return sum(run_parallel(1, None, [delayed(abs)(-k)], 1, "inner", False))


def test_a_batch_inside_a_batch_does_not_report(pfile, monkeypatch):
    from joblib import delayed

    from perfkit.model.selection.fitting import run_parallel

    seen = []
    monkeypatch.setattr(pg, "report", lambda section, done, total: seen.append(section))
    assert run_parallel(1, None, [delayed(_inner)(k) for k in range(3)], 3, "outer", False) == [0, 1, 2]
    assert seen == ["outer"] * 4 and pg._depth == 0


def test_run_times_round_trip(tmp_path):
    assert pg.read_run_time(tmp_path, "ch4", "full") is None
    pg.record_run_time(tmp_path, "ch4", "full", 312.04)
    pg.record_run_time(tmp_path, "ch4", "quick", 40)
    key = pg.run_key(False, {"n_fit": 900})
    assert key == 'full {"n_fit": 900}' and pg.run_key(True) == "quick"
    pg.record_run_time(tmp_path, "ch3", key, 5)
    assert pg.read_run_time(tmp_path, "ch4", "full") == 312.0 and pg.read_run_time(tmp_path, "ch4", "quick") == 40
    assert pg.read_run_time(tmp_path, "ch3", key) == 5 and pg.read_run_time(tmp_path, "ch3", "full") is None
    assert json.loads((tmp_path / pg.RUN_TIMES_FILE).read_text()) == {
        "ch3": {key: 5.0}, "ch4": {"full": 312.0, "quick": 40.0}}
    (tmp_path / pg.RUN_TIMES_FILE).write_text("not json")
    assert pg.read_run_time(tmp_path, "ch4", "full") is None
    pg.record_run_time(tmp_path, "ch4", "full", 1)  # an unreadable file is started afresh
    assert pg.read_run_time(tmp_path, "ch4", "full") == 1


def test_chapter_progress_sets_the_variable_watches_and_records(tmp_path, monkeypatch):
    monkeypatch.setenv(pg.ENV, "previous")
    (tmp_path / pg.PROGRESS_FILE).write_text("stale")
    pg.record_run_time(tmp_path, "ch5", "quick", 600)
    stream = io.StringIO()
    with pg.chapter_progress("ch5", tmp_path, "quick", stream=stream, interval=0.02) as watcher:
        assert os.environ[pg.ENV] == str(tmp_path / pg.PROGRESS_FILE)
        assert not (tmp_path / pg.PROGRESS_FILE).exists() and not watcher.tty
        monkeypatch.setitem(pg._state, "section", None)
        pg.report("Table 5.2: DE+L2 fits", 1, 3)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and "1/3" not in stream.getvalue():
            time.sleep(0.02)
    assert "[perfkit] ch5 · Table 5.2: DE+L2 fits: 1/3 fits" in stream.getvalue()
    assert "left (10:00 in the last run)" in stream.getvalue()
    assert os.environ[pg.ENV] == "previous" and not (tmp_path / pg.PROGRESS_FILE).exists()
    times = json.loads((tmp_path / pg.RUN_TIMES_FILE).read_text())
    assert times["ch5"]["quick"] < 5  # this run's duration replaced the old one
    with pytest.raises(RuntimeError), pg.chapter_progress("ch5", tmp_path, "full", stream=io.StringIO()):
        raise RuntimeError("a notebook failed")
    assert pg.read_run_time(tmp_path, "ch5", "full") is None  # a failed chapter's time is not kept
    with pg.chapter_progress("ch5", tmp_path, "quick", stream=io.StringIO(), interval=0.02):
        pg.report(pg.CACHED_SECTION, 0, 0)  # read from the results cache: its seconds are not a run's
    after = json.loads((tmp_path / pg.RUN_TIMES_FILE).read_text())["ch5"]
    assert after["quick"] == times["ch5"]["quick"] and after["quick cached"] < 5


def test_reproduce_runs_each_notebook_under_chapter_progress(tmp_path, monkeypatch, capsys):
    from perfkit.chapters import notebooks

    calls = []

    def fake_run_notebook(nb, build_dir, parameters, progress):
        calls.append((nb.name, os.environ.get(pg.ENV), progress))
        pg.report("fits", 1, 2)
        return build_dir / nb.name

    monkeypatch.setattr(notebooks, "run_notebook", fake_run_notebook)
    monkeypatch.setattr(notebooks, "write_run_environment", lambda *a, **k: None)
    monkeypatch.delenv(pg.ENV, raising=False)
    monkeypatch.setitem(pg._state, "section", None)
    notebooks.reproduce(["ch3", "ch5"], quick=True, build_dir=tmp_path)
    path = str(tmp_path / pg.PROGRESS_FILE)
    # captured stdout is not a terminal: papermill keeps its bar beside the status lines
    assert [c[1:] for c in calls] == [(path, True), (path, True)]
    assert pg.ENV not in os.environ and not (tmp_path / pg.PROGRESS_FILE).exists()
    assert set(json.loads((tmp_path / pg.RUN_TIMES_FILE).read_text())) == {"ch3", "ch5"}
    notebooks.reproduce(["ch3"], quick=True, build_dir=tmp_path, progress=False)
    assert calls[-1][1:] == (None, False)  # no progress: no file for the kernels, no bars
    assert "[perfkit] ch3: done in" in capsys.readouterr().out


def test_a_narrow_terminal_gets_one_line_that_fits(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    now = time.time()
    path.write_text(json.dumps({"section": "PyTorch: Table 4.2 DE fits", "done": 1, "total": 30, "started": now - 4,
                                "updated": now}))
    monkeypatch.setattr(pg.shutil, "get_terminal_size", lambda fallback=None: os.terminal_size((120, 24)))
    out = _watch(path, _Tty(), expected=600, until=lambda t: "fits" in t)
    lines = [part for part in out.split("\r\x1b[K") if part]
    assert lines and all(len(part) < 120 for part in lines)
    assert "in the last run" not in lines[0]  # dropped first, so the time left still shows
    assert lines[0].startswith("[perfkit] ch4 · PyTorch: Table 4.2 DE fits: 1/30 fits, ~")
    assert re.search(r", ~(10:00|9:5\d) left$", lines[0])
