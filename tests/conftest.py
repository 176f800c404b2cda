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
def _results_cache(tmp_path_factory):
    """Every test session starts with an empty results cache of its own, so no test depends on (or fills) the
    repository's ``build/cache/results``."""
    import os

    old = os.environ.get("PERFKIT_RESULTS_CACHE")
    os.environ["PERFKIT_RESULTS_CACHE"] = str(tmp_path_factory.mktemp("results-cache"))
    yield
    if old is None:
        os.environ.pop("PERFKIT_RESULTS_CACHE", None)
    else:
        os.environ["PERFKIT_RESULTS_CACHE"] = old
