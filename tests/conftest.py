import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def python() -> str:
    return sys.executable


@pytest.fixture(autouse=True)
def _no_display(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    yield


@pytest.fixture(autouse=True, scope="session")
def _session_caches(tmp_path_factory):
    """Every test session starts with an empty results cache and an empty fit cache of its own, so no test
    depends on (or fills) the repository's ``build/cache``. The fit cache is shared by the session's tests: a
    fit another test already made (same estimator, data, engine code and kernels: :mod:`perfkit.model.engine.fitcache`)
    is read back, as ``perfkit reproduce`` reads it back across chapters; tests of the cache set their own."""
    import os

    caches = {"PERFKIT_RESULTS_CACHE": "results-cache", "PERFKIT_FIT_CACHE": "fit-cache"}
    old = {var: os.environ.get(var) for var in caches}
    for var, name in caches.items():
        os.environ[var] = str(tmp_path_factory.mktemp(name))
    yield
    for var, value in old.items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value
