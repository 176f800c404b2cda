"""The collector's sample log: repair on parsed records, the lock, and safe writes (fast: no workers)."""
import csv
import io
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from perfkit._io import append_bytes, atomic_write
from perfkit.measure.provenance import write_json_atomic
from perfkit.measure.samplelog import LockedError, SampleLog, dropped_path, lock_path, parse_records

COLS = ["sample_id", "sample_rows", "status", "error", "x"]
#: an error message as a worker group reports it: several lines of stderr, quotes, commas, a carriage return
MESSAGE = ('WorkerError: worker rank 1 exited with code 1\n[rank 1] Traceback (most recent call last):\n'
           '  File "x.py", line 3, in <module>\n    raise RuntimeError("boom, \'bad\'")\r\nRuntimeError: boom\n')


def rows_ok(*xs):
    return [{"status": "ok", "error": "", "x": x} for x in xs]


def error_row():
    return [{"status": "error", "error": MESSAGE, "x": ""}]


def build(path, samples):
    """Write ``samples`` [(id, rows), ...] through a SampleLog; return the file's bytes."""
    with SampleLog(path, COLS) as log:
        for sid, rows in samples:
            log.append(sid, rows)
    return path.read_bytes()


def parsed(path):
    """The file as CSV records (raises if it does not parse)."""
    with open(path, newline="") as fh:
        return list(csv.reader(fh, strict=True))


SAMPLES = [("0", rows_ok(1.5, 2.5)), ("1", error_row()), ("2", rows_ok(3.25)), ("3", error_row()),
           ("4", rows_ok(4.0, 5.0, 6.0))]


@pytest.mark.parametrize("last", ["error row spanning lines", "three-row sample"])
def test_a_record_torn_at_every_byte_offset_is_dropped_and_nothing_else(tmp_path, last):
    samples = SAMPLES[:-1] if last.startswith("error") else SAMPLES
    full = build(tmp_path / "full.csv", samples)
    prefix = build(tmp_path / "prefix.csv", samples[:-1])
    tail = full[len(prefix):]
    assert tail.count(b"\n") >= 3, "the last sample must span several lines"
    ids = {sid for sid, _ in samples[:-1]}
    for k in range(len(tail) + 1):
        path = tmp_path / f"cut{k}.csv"
        path.write_bytes(prefix + tail[:k])
        with SampleLog(path, COLS) as log:
            if k == len(tail):
                assert log.done == ids | {samples[-1][0]} and not log.repairs
                continue
            assert log.done == ids, k
            assert path.read_bytes() == prefix, f"cut at byte {k}: every complete sample kept byte for byte"
            assert bool(log.repairs) == (k > 0)
            log.append("new", rows_ok(9.0))  # the next run's rows land after a clean record boundary
        table = pd.read_csv(path)
        assert table.sample_id.astype(str).tolist().count("new") == 1
        assert table[table.status == "error"].error.tolist() == [MESSAGE] * (table.status == "error").sum()
        if k:
            assert dropped_path(path).read_bytes().endswith(tail[:k] + (b"" if tail[:k].endswith(b"\n") else b"\n"))


def test_a_second_copy_of_a_sample_is_removed_and_kept_aside(tmp_path):
    path = tmp_path / "dup.csv"
    one = build(path, SAMPLES[:3])
    body = one.split(b"\n", 1)[1]
    path.write_bytes(one + body)  # as if two collectors had both written every sample
    with SampleLog(path, COLS) as log:
        assert log.done == {"0", "1", "2"}
        assert "second copy" in log.repairs[0]
    assert path.read_bytes() == one
    aside = dropped_path(path).read_bytes()
    assert aside.startswith(b"# ") and aside.endswith(body)


def test_an_incomplete_sample_in_the_middle_does_not_cost_the_samples_after_it(tmp_path):
    path = tmp_path / "mid.csv"
    good = build(path, SAMPLES)
    header, rest = good.split(b"\n", 1)
    broken = header + b"\n" + b"7,3,ok,,1.0\n7,3,ok,,2.0\n" + rest  # a three-row sample cut after two rows
    path.write_bytes(broken)
    with SampleLog(path, COLS) as log:
        assert log.done == {sid for sid, _ in SAMPLES}
        assert "incomplete sample" in log.repairs[0]
    assert path.read_bytes() == good


@pytest.mark.parametrize("garbage, why", [
    (b"5,1,ok\n", "fields"),                     # too few fields
    (b"5,x,ok,,1\n", "sample_rows"),              # sample_rows not a number
    (b'5,1,ok,"a"b,1\n', "does not parse"),       # quote in the middle of a field
    (b"\n", "fields"),                           # an empty line
])
def test_damaged_records_are_removed_with_their_reason(tmp_path, garbage, why):
    path = tmp_path / "bad.csv"
    good = build(path, SAMPLES[:2])
    path.write_bytes(good + garbage)
    with SampleLog(path, COLS) as log:
        assert log.done == {"0", "1"}
        assert why in log.repairs[0]
    assert path.read_bytes() == good
    assert garbage.strip() in dropped_path(path).read_bytes()


def test_a_torn_header_is_rewritten_and_a_foreign_file_refused(tmp_path):
    path = tmp_path / "h.csv"
    path.write_bytes(b"sample_id,sam")
    with SampleLog(path, COLS) as log:
        assert not log.done
    assert path.read_text() == ",".join(COLS) + "\n"
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="not a perfkit sample log"):
        SampleLog(other, COLS)
    assert other.read_text() == "a,b\n1,2\n", "a foreign file is never touched"
    assert not lock_path(other).exists()
    with pytest.raises(ValueError, match=r"columns differ .*has \['x'\] and lacks \['y'\]"):
        SampleLog(path, COLS[:-1] + ["y"])


def test_parse_records_spans_are_exact():
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerows([COLS, ["0", "1", "error", MESSAGE, ""], ["1", "1", "ok", "", "2"]])
    raw = buf.getvalue().encode()
    recs = parse_records(raw)
    assert [r.fields[0] for r in recs] == ["sample_id", "0", "1"]
    assert recs[1].fields[3] == MESSAGE
    assert b"".join(raw[r.start:r.end] for r in recs) == raw and all(r.whole for r in recs)


def test_a_second_log_on_the_same_file_is_refused_naming_the_holder(tmp_path):
    path = tmp_path / "l.csv"
    first = SampleLog(path, COLS)
    with pytest.raises(LockedError, match=f"PID {os.getpid()}"):
        SampleLog(path, COLS)
    first.close()
    with SampleLog(path, COLS) as again:
        again.append("0", rows_ok(1.0))
    # across processes: a holder in another process is named by its PID
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from perfkit.measure.samplelog import SampleLog; "
        f"log = SampleLog({str(path)!r}, {COLS!r}); print('locked', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(LockedError, match=f"PID {holder.pid}"):
            SampleLog(path, COLS)
    finally:
        holder.kill()
        holder.wait()
    with SampleLog(path, COLS) as log:  # a killed holder releases the lock
        assert log.done == {"0"}
    assert lock_path(path).exists()


def test_appends_do_not_follow_links_and_replacements_cannot_be_redirected(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    link = tmp_path / "steps.jsonl"
    link.symlink_to(victim)
    with pytest.raises(ValueError, match="symbolic link"):
        append_bytes(link, b"{}\n")
    out = tmp_path / "linked.csv"
    out.symlink_to(victim)
    with pytest.raises(ValueError, match="symbolic link"):
        SampleLog(out, COLS)
    # the old writer used a fixed <name>.tmp: a link planted there redirected the write
    (tmp_path / "p.provenance.json.tmp").symlink_to(victim)
    write_json_atomic(tmp_path / "p.provenance.json", {"a": 1})
    assert json.loads((tmp_path / "p.provenance.json").read_text()) == {"a": 1}
    assert victim.read_text() == "precious\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".p.provenance")], "no temporary file left"
    with pytest.raises(ValueError, match="folder"):
        atomic_write(tmp_path, "x")


def test_append_refuses_a_sample_twice_and_a_closed_log(tmp_path):
    with SampleLog(tmp_path / "a.csv", COLS) as log:
        log.append("0", rows_ok(1.0))
        with pytest.raises(ValueError, match="already"):
            log.append("0", rows_ok(1.0))
    with pytest.raises(ValueError, match="closed"):
        log.append("1", rows_ok(1.0))
    assert len(parsed(tmp_path / "a.csv")) == 2


def test_a_log_whose_ids_are_not_the_first_columns_reopens(tmp_path):
    cols = ["config_id", "round", "sample_id", "sample_rows", "x"]  # the layout of a noise-floor file
    with SampleLog(tmp_path / "n.csv", cols) as log:
        log.append("r0-c1", [{"config_id": 1, "round": 0, "x": 2.0}])
    with SampleLog(tmp_path / "n.csv", cols) as log:
        assert log.done == {"r0-c1"} and log.rows["r0-c1"]["config_id"] == "1"


@pytest.mark.parametrize("where", ["after the write", "before the write"])
def test_an_interrupt_inside_the_append_counts_exactly_what_reached_the_file(tmp_path, monkeypatch, where):
    """A signal that arrived just before the append raises inside it: a sample already written still counts (the
    provenance's samples_after must equal the file's samples), and one not written does not."""
    import perfkit.measure.samplelog as samplelog

    path = tmp_path / "log.csv"
    with SampleLog(path, COLS) as log:
        log.append("a", rows_ok(1.0))
        real_count, real_append = SampleLog._count, samplelog.append_bytes
        calls = []

        def count_then_interrupt(self, sid, rows):
            calls.append(sid)
            if len(calls) == 1:
                raise KeyboardInterrupt  # between the write and the bookkeeping
            real_count(self, sid, rows)

        def interrupt_before_writing(p, data):
            raise KeyboardInterrupt

        if where == "after the write":
            monkeypatch.setattr(SampleLog, "_count", count_then_interrupt)
        else:
            monkeypatch.setattr(samplelog, "append_bytes", interrupt_before_writing)
        with pytest.raises(KeyboardInterrupt):
            log.append("b", rows_ok(2.0))
        monkeypatch.setattr(samplelog, "append_bytes", real_append)
        in_file = sorted({rec[0] for rec in parsed(path)[1:]})  # the sample ids of the file's records
        assert sorted(log.done) == in_file == (["a", "b"] if where == "after the write" else ["a"])
