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


def test_a_file_of_another_class_is_refused(tmp_path):
    _toy().to_dir(tmp_path)
    doc = json.loads((tmp_path / store.RESULTS_FILE).read_text())
    doc["results"]["class"] = "os:system"
    (tmp_path / store.RESULTS_FILE).write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="not a perfkit class"):
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
    assert "cannot be read" in capsys.readouterr().out


def test_the_cache_can_be_switched_off(monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, "0")
    assert cache.cache_folder() is None
    _, info = cache.cached_compute("toy", {"a": 1}, [], lambda p: _toy(), Toy)
    assert not info.hit and info.path is None


def test_the_code_fingerprint_covers_every_module():
    assert len(cache.code_fingerprint()) == 64
    key1, what = cache.results_key("toy", {"a": 1}, [])
    assert what["code"] == cache.code_fingerprint() and "OPENBLAS_CORETYPE" in what["environment"]


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
    assert not ch5.analyse(**{**kw, "split_seed": 1}).from_cache
    with data.open("a") as fh:
        fh.write("\n")
    assert not ch5.analyse(**kw).from_cache
