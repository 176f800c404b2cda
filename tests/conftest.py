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
