"""The disk cache of generic-model fits (perfkit.model.engine.fitcache): off by default, a repeated fit is read back
identical, the key separates everything a fit depends on, bad files are ignored, uncacheable fits pass through."""
import json
import os
import warnings

import numpy as np
import pandas as pd
import pytest

from perfkit.chapters import notebooks
from perfkit.model.engine import fitcache
from perfkit.model.forms import generic
from perfkit.model.selection.fitting import _fit_one, fit_repeated
from perfkit.model.forms.generic import GenericPerformanceModel
from perfkit.model.roles import ConstantColumnWarning

COLS = dict(numeric=["kernel", "filters"], categorical=["act"], extrinsic=["gpus"])


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "kernel": rng.choice([2.0, 3.0, 4.0, 5.0], n),
        "filters": rng.choice([4.0, 8.0, 16.0, 32.0], n),
        "act": rng.choice(["relu", "tanh", "sigmoid"], n),
        "gpus": rng.choice([1.0, 2.0, 4.0, 8.0], n),
    })
    k = X["act"].map({"relu": 1.0, "tanh": 2.0, "sigmoid": 3.0})
    t = (2.0 * X["kernel"] ** 1.5 + 0.5 * X["filters"] ** 0.8 + k) * X["gpus"] ** -0.9 + 0.01
    return X, t.to_numpy() * np.exp(0.02 * rng.standard_normal(n))


def _model(**kw):
    kw.setdefault("random_state", 0)
    return GenericPerformanceModel(**COLS, maxiter=5, **kw)


@pytest.fixture
def data():
    return _data()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "fits"
    monkeypatch.setenv(fitcache.ENV_VAR, str(folder))
    return folder


@pytest.fixture
def engine_calls(monkeypatch):
    """Counts the runs of the varpro engine (what a cached fit skips)."""
    calls = []
    real = generic.ENGINES["varpro"]

    def counted(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setitem(generic.ENGINES, "varpro", counted)
    return calls


def _assert_same_fit(a, b):
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.powers_, b.powers_)
    assert a.objective_ == b.objective_ and type(a.objective_) is type(b.objective_)
    assert (a.n_iter_, a.converged_, a.fit_time_) == (b.n_iter_, b.converged_, b.fit_time_)
    assert a.history_ == b.history_
    assert (a.linear_names_, a.power_names_) == (b.linear_names_, b.power_names_)
    assert (a.categories_, a.kept_levels_, a.constant_columns_) == (b.categories_, b.kept_levels_, b.constant_columns_)
    assert a.n_features_in_ == b.n_features_in_
    pd.testing.assert_frame_equal(a.params_, b.params_)


@pytest.mark.parametrize("value", [None, "", "0"])
def test_off_unless_the_variable_names_a_folder(data, tmp_path, monkeypatch, engine_calls, value):
    monkeypatch.chdir(tmp_path)
    if value is None:
        monkeypatch.delenv(fitcache.ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(fitcache.ENV_VAR, value)
    assert fitcache.cache_dir() is None
    X, y = data
    _fit_one(_model(), X, y)
    _fit_one(_model(), X, y)
    assert len(engine_calls) == 2
    assert list(tmp_path.rglob("*")) == []


def test_a_repeated_fit_is_read_back_identical(data, cache, engine_calls):
    X, y = data
    first = _fit_one(_model(), X, y, penalty="l2", lam=1e-3)
    assert len(engine_calls) == 1
    k = fitcache.key(_model(penalty="l2", lam=1e-3), X, y)
    path = cache / f"{k}.json"
    assert sorted(cache.iterdir()) == [path]
    doc = json.loads(path.read_text())
    assert (doc["format"], doc["version"], doc["key"]) == (fitcache.FORMAT, fitcache.VERSION, k)
    second = _fit_one(_model(), X, y, penalty="l2", lam=1e-3)
    assert len(engine_calls) == 1  # not fitted again
    assert second is not first
    _assert_same_fit(first, second)
    np.testing.assert_array_equal(first.predict(X), second.predict(X))
    assert second.get_params() == _model(penalty="l2", lam=1e-3).get_params()  # its own settings, as set


def test_fit_repeated_reads_every_seed_back(data, cache, engine_calls):
    X, y = data
    a = fit_repeated(_model(), X, y, seeds=2, progress=False)
    b = fit_repeated(_model(), X, y, seeds=2, progress=False)
    assert len(engine_calls) == 2 and len(list(cache.iterdir())) == 2
    for m, n in zip(a.models, b.models):
        _assert_same_fit(m, n)
    pd.testing.assert_frame_equal(a.params, b.params)


def test_the_key_separates_seed_data_settings_and_blas_core_type(data, monkeypatch):
    X, y = data
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    base = fitcache.key(_model(), X, y)
    assert base is not None and len(base) == 64
    assert fitcache.key(_model(), X.copy(), y.copy()) == base  # same data, same settings: same key
    y2 = y.copy()
    y2[7] = np.nextafter(y2[7], np.inf)
    X2 = X.copy()
    X2.loc[3, "act"] = "relu" if X2.loc[3, "act"] != "relu" else "tanh"
    others = {
        "seed": fitcache.key(_model(random_state=1), X, y),
        "y": fitcache.key(_model(), X, y2),
        "category": fitcache.key(_model(), X2, y),
        "lam": fitcache.key(_model(penalty="l2", lam=1e-3), X, y),
        "lam2": fitcache.key(_model(penalty="l2", lam=1e-2), X, y),
        "index": fitcache.key(_model(), X.set_axis(X.index + 1), y),
        "dtype": fitcache.key(_model(), X.astype({"act": "category"}), y),
    }
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    others["haswell"] = fitcache.key(_model(), X, y)
    monkeypatch.setenv("OPENBLAS_CORETYPE", "SkylakeX")
    others["skylakex"] = fitcache.key(_model(), X, y)
    monkeypatch.setenv("PERFKIT_NUMBA", "0")
    others["no kernels"] = fitcache.key(_model(), X, y)
    keys = [base, *others.values()]
    assert None not in keys
    assert len(set(keys)) == len(keys), others


def test_unused_columns_do_not_change_the_key(data):
    X, y = data
    assert fitcache.key(_model(), X.assign(note="x"), y) == fitcache.key(_model(), X, y)


def test_a_corrupt_or_foreign_cache_file_is_ignored_and_replaced(data, cache, engine_calls):
    X, y = data
    k = fitcache.key(_model(), X, y)
    path = cache / f"{k}.json"
    cache.mkdir(parents=True)
    good = None
    for text in ("", "{\"format\": \"perfkit.fitcache\", \"vers", "\xff not json", "[1, 2]",
                 json.dumps({"format": fitcache.FORMAT, "version": 99, "key": k, "model": {}}),
                 json.dumps({"format": fitcache.FORMAT, "version": fitcache.VERSION, "key": k, "model": {"a": 1}})):
        path.write_text(text, encoding="utf-8")
        assert fitcache.load(k) is None
        model = _fit_one(_model(), X, y)
        back = fitcache.load(k)  # rewritten whole
        assert back is not None and back.objective_ == model.objective_
        good = model if good is None else good
        np.testing.assert_array_equal(model.coef_, good.coef_)
    assert len(engine_calls) == 6
    assert [p.name for p in cache.iterdir()] == [path.name]  # no temporary files left behind
    # a valid file stored under another key is not this fit
    other = cache / ("0" * 64 + ".json")
    other.write_text(path.read_text())
    assert fitcache.load("0" * 64) is None


def test_an_edited_coefficient_is_not_used_and_the_entry_is_replaced(data, cache, engine_calls, capsys):
    X, y = data
    first = _fit_one(_model(), X, y)
    k = fitcache.key(_model(), X, y)
    path = cache / f"{k}.json"
    doc = json.loads(path.read_text())
    doc["model"]["fitted"]["coef"] = [3 * c for c in doc["model"]["fitted"]["coef"]]
    path.write_text(json.dumps(doc))
    again = _fit_one(_model(), X, y)  # refitted, not the tampered coefficients
    assert len(engine_calls) == 2
    np.testing.assert_array_equal(again.coef_, first.coef_)
    out = capsys.readouterr().out
    assert out.count("fit cache:") == 1 and "does not match its digest" in out
    assert fitcache.load(k) is not None  # replaced by a valid entry
    np.testing.assert_array_equal(fitcache.load(k).coef_, first.coef_)


def test_a_relative_cache_folder_is_taken_from_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(fitcache.ENV_VAR, "relfits")
    assert fitcache.cache_dir() == tmp_path / "relfits"
    with notebooks._caches(tmp_path / "build"):  # the kernels run elsewhere: they get the absolute path
        assert os.environ[fitcache.ENV_VAR] == str(tmp_path / "relfits")
    assert os.environ[fitcache.ENV_VAR] == "relfits"


def test_a_truncated_file_is_not_read(data, cache):
    X, y = data
    model = _fit_one(_model(), X, y)
    k = fitcache.key(model, X, y)
    path = cache / f"{k}.json"
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    assert fitcache.load(k) is None


def test_generator_and_none_random_states_are_not_cached(data, cache, engine_calls):
    X, y = data
    for seed in (np.random.default_rng(0), np.random.RandomState(0), None):
        assert fitcache.key(_model(random_state=seed), X, y) is None
        _fit_one(_model(random_state=seed), X, y)
    assert len(engine_calls) == 3
    assert not cache.exists() or list(cache.iterdir()) == []


def test_other_estimators_pass_through(data, cache):
    from sklearn.ensemble import RandomForestRegressor

    X, y = data
    Xn = X[["kernel", "filters", "gpus"]]
    assert fitcache.key(RandomForestRegressor(n_estimators=3, random_state=0), Xn, y) is None
    rf = _fit_one(RandomForestRegressor(n_estimators=3, random_state=0), Xn, y)
    assert rf.predict(Xn).shape == (len(Xn),)

    class Sub(GenericPerformanceModel):
        pass

    assert fitcache.key(Sub(**COLS, random_state=0, maxiter=5), X, y) is None
    assert not cache.exists() or list(cache.iterdir()) == []


def test_bad_input_still_raises_the_fit_error(cache):
    X, y = _data()
    with pytest.raises(ValueError, match="missing_col|not found|no column"):
        _fit_one(GenericPerformanceModel(numeric=["missing_col"], random_state=0, maxiter=5), X, y)
    with pytest.raises(ValueError, match="must be > 0"):
        _fit_one(_model(), X, -y)
    assert not cache.exists() or list(cache.iterdir()) == []


def test_a_cached_fit_warns_about_constant_columns_again(cache):
    X, y = _data()
    X["gpus"] = 2.0
    with pytest.warns(ConstantColumnWarning, match="gpus"):
        first = _fit_one(_model(), X, y)
    with pytest.warns(ConstantColumnWarning, match="gpus"):
        second = _fit_one(_model(), X, y)
    _assert_same_fit(first, second)
    assert len(list(cache.iterdir())) == 1


def test_an_unwritable_cache_folder_loses_nothing(data, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(fitcache.ENV_VAR, str(blocker / "fits"))
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = _fit_one(_model(), X, y)
    assert np.isfinite(model.objective_)


def test_reproduce_sets_the_cache_folder_unless_the_user_did(tmp_path, monkeypatch):
    monkeypatch.delenv(fitcache.ENV_VAR, raising=False)
    with notebooks._caches(tmp_path):
        assert os.environ[fitcache.ENV_VAR] == str(tmp_path / "cache" / "fits")
    assert fitcache.ENV_VAR not in os.environ
    with pytest.raises(RuntimeError):
        with notebooks._caches(tmp_path):
            raise RuntimeError("a notebook failed")
    assert fitcache.ENV_VAR not in os.environ
    monkeypatch.setenv(fitcache.ENV_VAR, "0")
    with notebooks._caches(tmp_path):
        assert os.environ[fitcache.ENV_VAR] == "0"
        assert fitcache.cache_dir() is None
    assert os.environ[fitcache.ENV_VAR] == "0"


def test_reproduce_keeps_chapter_results_in_the_build_folder(tmp_path, monkeypatch):
    from perfkit.chapters import cache as results_cache

    monkeypatch.delenv(results_cache.ENV_VAR, raising=False)
    with notebooks._caches(tmp_path):
        assert results_cache.cache_folder() == tmp_path / "cache" / "results"
    assert results_cache.ENV_VAR not in os.environ


def test_concurrent_writers_of_one_key_leave_a_whole_file(data, cache):
    from concurrent.futures import ThreadPoolExecutor

    X, y = data
    model = _model().fit(X, y)
    k = fitcache.key(model, X, y)

    def write_and_read(_):
        assert fitcache.store(k, model) is not None
        back = fitcache.load(k)
        return back is not None and back.objective_ == model.objective_

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(write_and_read, range(40)))
    assert [p.name for p in cache.iterdir()] == [f"{k}.json"]
