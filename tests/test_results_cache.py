"""The chapters' typed results and the results cache: exact round trips, hits, misses and invalidation."""
import json
import shutil
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from perfkit.chapters import cache, store
from perfkit.chapters.store import Results, decode, encode
from perfkit.evidence import Evidence


@dataclass
class Toy(Results):
    frame: object
    values: np.ndarray
    cells: dict
    evidence: Evidence
    note: str = ""


def _toy():
    frame = pd.DataFrame({"x": [1.0, np.nan, 1e-300], "n": [1, 2, 3], "s": ["a", None, "c"],
                          "b": [True, False, True], "c": pd.Categorical(["u", "v", "u"])},
                         index=pd.Index([10, 20, 30], name="row"))
    cells = {(1, "a"): np.arange(3.0), 0.001: [np.inf, -np.inf], "t": (1, 2.5, None), "i": np.int64(7)}
    return Toy(frame=frame, values=np.array([[0.1, 1 / 3], [np.pi, -0.0]]), cells=cells,
               evidence=Evidence.from_samples(0.5, np.linspace(0, 1, 11), "test"), note="ok")


def test_round_trip_is_exact(tmp_path):
    toy = _toy()
    toy.to_dir(tmp_path)
    back = Toy.from_dir(tmp_path)
    pd.testing.assert_frame_equal(back.frame, toy.frame, check_exact=True)
    assert back.values.tobytes() == toy.values.tobytes()
    assert list(back.cells) == list(toy.cells)
    assert back.cells[(1, "a")].tobytes() == toy.cells[(1, "a")].tobytes()
    assert back.cells[0.001] == [np.inf, -np.inf] and back.cells["t"] == (1, 2.5, None)
    assert type(back.cells["i"]) is np.int64
    assert back.evidence == toy.evidence and back.evidence.samples.tobytes() == toy.evidence.samples.tobytes()


def test_multiindex_frames_round_trip():
    df = pd.DataFrame({"v": [1.5, 2.5, 3.5, 4.5]},
                      index=pd.MultiIndex.from_product([["a", "b"], [1, 2]], names=["fw", "workers"]))
    back = decode(json.loads(json.dumps(encode(df))))
    pd.testing.assert_frame_equal(back, df, check_exact=True)


def test_unstorable_values_name_the_field(tmp_path):
    from sklearn.ensemble import RandomForestRegressor

    toy = _toy()
    toy.cells["forest"] = RandomForestRegressor()
    with pytest.raises(TypeError, match=r"Toy\.cells\['forest'\]"):
        toy.to_dir(tmp_path)


def _rewrite(folder, change, digest=True):
    """Edit the results file in ``folder`` with ``change(doc)``; with ``digest``, as a forger would: the
    digest recomputed to match."""
    file = folder / store.RESULTS_FILE
    doc = json.loads(file.read_text())
    change(doc)
    if digest:
        doc["digest"] = store.content_digest(doc["meta"], doc["results"])
    file.write_text(json.dumps(doc))


@pytest.mark.parametrize("path", ["os:system", "perfkit.cli.__main__:X", "perfkit.nope:X",
                                  "perfkit.chapters.ch3.compute:pd.NamedAgg", "perfkit.chapters.store:Results"])
def test_a_class_outside_the_allow_list_is_refused_without_importing_it(tmp_path, monkeypatch, path):
    import importlib

    _toy().to_dir(tmp_path)
    _rewrite(tmp_path, lambda doc: doc["results"]["fields"]["evidence"].update({"class": path}))
    imported = []
    real = importlib.import_module
    monkeypatch.setattr(importlib, "import_module", lambda name, *a: imported.append(name) or real(name, *a))
    with pytest.raises(store.StoreError, match="not an allowed result type"):
        Toy.from_dir(tmp_path)
    assert not [name for name in imported if name != "perfkit.evidence" and "selection" not in name]


def test_writing_a_dataclass_that_is_not_an_allowed_result_type_names_the_field(tmp_path):
    @dataclass
    class Loose:
        x: int = 1

    toy = _toy()
    toy.cells["part"] = Loose()
    with pytest.raises(TypeError, match=r"Toy\.cells\['part'\].*not an allowed result type"):
        toy.to_dir(tmp_path)


def test_an_edited_number_does_not_match_the_digest(tmp_path):
    _toy().to_dir(tmp_path)
    _rewrite(tmp_path, lambda doc: doc["results"]["fields"].update(note="edited"), digest=False)
    with pytest.raises(store.StoreError, match="does not match its digest"):
        Toy.from_dir(tmp_path)


def test_deep_nesting_is_refused(tmp_path):
    _toy().to_dir(tmp_path)
    deep = []
    for _ in range(store.MAX_DEPTH + 5):
        deep = [deep]
    _rewrite(tmp_path, lambda doc: doc["results"]["fields"].update(note=deep))
    with pytest.raises(store.StoreError, match="nested deeper"):
        Toy.from_dir(tmp_path)
    (tmp_path / store.RESULTS_FILE).write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(store.StoreError, match="nested deeper"):
        Toy.from_dir(tmp_path)


@pytest.fixture
def chapter_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_hit_miss_and_invalidation(tmp_path, chapter_cache, capsys):
    data = tmp_path / "data.csv"
    data.write_text("x\n1\n")
    calls = []

    def compute(p):
        calls.append(dict(p))
        return _toy()

    def run(p, **kw):
        return cache.cached_compute("toy", p, [data], compute, Toy, **kw)

    r1, info1 = run({"a": 1, "progress": True})
    assert not info1.hit and len(calls) == 1 and (info1.path / store.RESULTS_FILE).is_file()
    r2, info2 = run({"a": 1, "progress": False})  # progress is not part of the key
    assert info2.hit and len(calls) == 1
    assert "results read from the cache" in capsys.readouterr().out
    pd.testing.assert_frame_equal(r2.frame, r1.frame, check_exact=True)
    run({"a": 2})  # a parameter changed
    assert len(calls) == 2
    data.write_text("x\n2\n")  # a data byte changed
    run({"a": 1})
    assert len(calls) == 3
    run({"a": 1}, cache=False)  # forced
    assert len(calls) == 4
    _, info = run({"a": 1})
    assert info.hit and len(calls) == 4


def test_a_damaged_entry_is_recomputed(tmp_path, chapter_cache, capsys):
    calls = []

    def compute(p):
        calls.append(1)
        return _toy()

    _, info = cache.cached_compute("toy", {"a": 1}, [], compute, Toy)
    (info.path / store.RESULTS_FILE).write_text("{not json")
    _, again = cache.cached_compute("toy", {"a": 1}, [], compute, Toy)
    assert not again.hit and len(calls) == 2
    assert "were not used" in capsys.readouterr().out


def _tampered(capsys, tamper):
    """Compute, tamper with the entry, read again: ``(results, info, what was printed)``; the tampered entry is
    never returned and is replaced by a valid one."""
    calls = []

    def compute(p):
        calls.append(1)
        return _toy()

    _, info = cache.cached_compute("toy", {"a": 1}, [], compute, Toy)
    tamper(info.path)
    capsys.readouterr()
    results, again = cache.cached_compute("toy", {"a": 1}, [], compute, Toy)
    out = capsys.readouterr().out
    assert not again.hit and len(calls) == 2 and out.count("were not used") == 1
    _, third = cache.cached_compute("toy", {"a": 1}, [], compute, Toy)
    assert third.hit and len(calls) == 2  # replaced by a valid entry
    return results, out


def test_a_tampered_number_never_reaches_a_table(tmp_path, chapter_cache, capsys):
    def tamper(entry):
        _rewrite(entry, lambda doc: doc["results"]["fields"]["values"]["data"].__setitem__(0, 99.0), digest=False)

    results, out = _tampered(capsys, tamper)
    assert results.values[0, 0] == 0.1 and "does not match its digest" in out


def test_an_entry_copied_under_another_key_is_not_a_hit(tmp_path, chapter_cache, capsys):
    def tamper(entry):
        other = cache.cached_compute("toy", {"a": 2}, [], lambda p: _toy(), Toy)[1].path
        shutil.copy(other / store.RESULTS_FILE, entry / store.RESULTS_FILE)

    _, out = _tampered(capsys, tamper)
    assert "another key" in out


@pytest.mark.parametrize("damage", ["class", "nesting"])
def test_a_hostile_entry_is_recomputed_with_one_line(tmp_path, chapter_cache, capsys, damage):
    def tamper(entry):
        if damage == "class":
            _rewrite(entry, lambda doc: doc["results"]["fields"]["evidence"].update({"class": "perfkit.cli.__main__:X"}))
        else:
            (entry / store.RESULTS_FILE).write_text("[" * 200_000 + "]" * 200_000)

    _, out = _tampered(capsys, tamper)
    assert "Traceback" not in out


def test_a_relative_cache_folder_is_taken_from_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(cache.ENV_VAR, "relcache")
    assert cache.cache_folder() == tmp_path / "relcache"


def test_the_cache_can_be_switched_off(monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, "0")
    assert cache.cache_folder() is None
    _, info = cache.cached_compute("toy", {"a": 1}, [], lambda p: _toy(), Toy)
    assert not info.hit and info.path is None


def test_the_code_fingerprint_covers_every_module():
    assert len(cache.code_fingerprint()) == 64
    key1, what = cache.results_key("toy", {"a": 1}, [])
    assert what["code"] == cache.code_fingerprint() and "OPENBLAS_CORETYPE" in what["environment"]


def _triple_first_float(doc):
    """Multiply the first float in the stored results by 3 (what an edit of a table's number does)."""
    stack = [doc["results"]]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            if type(v) is float:
                node[k] = 3 * v
                return
            stack.append(v)
    raise AssertionError("no float in the results")


def test_a_chapter_reads_its_cached_results(tmp_path, chapter_cache):
    """Chapter 5 (quick, one file): the second run reads the cache and shows the same tables; touching the data
    file or changing a parameter recomputes."""
    from perfkit.chapters import ch5
    from perfkit.schema import resolve

    data = tmp_path / "pytorch-cpu" / "ch5_resattnet3d.csv"
    data.parent.mkdir()
    shutil.copy(resolve(ch5.Params().dataset), data)
    kw = dict(quick=True, dataset=str(data), ch4_dataset="", volume_study="", progress=False, seeds=1)
    first = ch5.analyse(**kw)
    second = ch5.analyse(**kw)
    assert not first.from_cache and second.from_cache
    for name, table in first.tables.items():
        pd.testing.assert_frame_equal(second.tables[name], table, check_exact=True)
    assert not ch5.analyse(**kw, cache=False).from_cache
    _rewrite(next(chapter_cache.rglob(store.RESULTS_FILE)).parent, _triple_first_float, digest=False)
    third = ch5.analyse(**kw)
    assert not third.from_cache
    for name, table in first.tables.items():
        pd.testing.assert_frame_equal(third.tables[name], table, check_exact=True)
    assert not ch5.analyse(**{**kw, "split_seed": 1}).from_cache
    with data.open("a") as fh:
        fh.write("\n")
    assert not ch5.analyse(**kw).from_cache
