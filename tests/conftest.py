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
    """Every test session starts with an empty results cache and an empty fit cache of its own (shared by its
    pytest-xdist workers), so no test depends on (or fills) the repository's ``build/cache``. The fit cache is shared by the session's tests: a
    fit another test already made (same estimator, data, engine code and kernels: :mod:`perfkit.model.engine.fitcache`)
    is read back, as ``perfkit reproduce`` reads it back across chapters; tests of the cache set their own."""
    import os

    caches = {"PERFKIT_RESULTS_CACHE": "results-cache", "PERFKIT_FIT_CACHE": "fit-cache"}
    old = {var: os.environ.get(var) for var in caches}
    # under pytest-xdist every worker has its own base folder below one shared by the session: the caches go
    # there, so the workers share them (both write atomically; two writers of one key write the same bytes)
    shared = tmp_path_factory.getbasetemp().parent if os.environ.get("PYTEST_XDIST_WORKER") else None
    for var, name in caches.items():
        folder = shared / name if shared is not None else tmp_path_factory.mktemp(name)
        folder.mkdir(exist_ok=True)
        os.environ[var] = str(folder)
    yield
    for var, value in old.items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value


# ------------------------------------------------------------------------------ data and models shared by test files
@pytest.fixture(scope="module")
def lenet():
    """150 measured LeNet-5 rows (the ch4 file, role columns :data:`tests.frames.LENET_ROLES`), with their epoch
    times."""
    from tests.frames import LENET_ROLES, measured_rows

    return measured_rows("ch4_lenet5.csv", LENET_ROLES, 150)


@pytest.fixture(scope="module")
def lenet300():
    """300 measured LeNet-5 rows (the ch4 file, role columns :data:`tests.frames.LENET_ROLES`), with their epoch
    times."""
    from tests.frames import LENET_ROLES, measured_rows

    return measured_rows("ch4_lenet5.csv", LENET_ROLES, 300)


@pytest.fixture(scope="module")
def pollux_fit(tmp_path_factory):
    """120 of Pollux's cifar10 rows (with the measured sync_time), a pollux model fitted on them: ``dir``, ``base``
    (the CSV), ``frame`` and ``model`` (its JSON)."""
    from types import SimpleNamespace

    from perfkit.cli import main
    from perfkit.data import load_pollux
    from tests.cli import POLLUX_STEP as STEP

    d = tmp_path_factory.mktemp("pollux_fit")
    job = load_pollux().query("job == 'cifar10'")[["job", "n_gpus", "n_nodes", "batch_per_gpu", "t_iter",
                                                   "sync_time"]]
    base = job.sample(120, random_state=1).sort_values(["n_gpus", "batch_per_gpu"]).reset_index(drop=True)
    base.to_csv(d / "base.csv", index=False)
    assert main(["fit", str(d / "base.csv"), "--target", "t_iter", "--form", "pollux", *STEP,
                 "--out", str(d / "m.json")]) == 0
    return SimpleNamespace(dir=d, base=d / "base.csv", frame=base, model=d / "m.json")


@pytest.fixture(scope="module")
def interval_data():
    """120 rows of :func:`tests.frames.generic_data` with 5 % noise."""
    from tests.frames import generic_data

    return generic_data(n=120, noise=0.05)


@pytest.fixture(scope="module")
def interval_models(interval_data):
    """A log-linear form calibrated by every conformal method (3 folds) on :func:`interval_data`, by method."""
    from perfkit.model.selection.search import make_form
    from perfkit.model.uncertainty.conformal import INTERVAL_METHODS, ConformalRegressor
    from tests.frames import INTERVAL_ROLES as ROLES

    X, y = interval_data
    return {m: ConformalRegressor(make_form("loglinear", **ROLES), method=m, n_splits=3).fit(X, y) for m in INTERVAL_METHODS}


@pytest.fixture()
def interval_files(tmp_path, interval_models, interval_data):
    """A folder with the cv+ model (``m.json``), a thesis fit without fitted ranges (``bare.json``) and with them
    (``plain.json``), four configurations inside the data (``configs.csv``), three of which two lie outside it
    (``far.csv``), and a base configuration (``base.csv``)."""
    import json

    import pandas as pd

    from perfkit.model.forms.generic import GenericPerformanceModel
    from tests.frames import INTERVAL_BASE as BASE, INTERVAL_ROLES as ROLES

    X, y = interval_data
    interval_models["cv+"].save(tmp_path / "m.json")
    bare = json.loads(GenericPerformanceModel(**ROLES, random_state=0).fit(X, y).to_json())
    bare["fitted"].pop("ranges")  # as written before every thesis fit kept its fitted ranges
    (tmp_path / "bare.json").write_text(json.dumps(bare))
    GenericPerformanceModel(**ROLES, random_state=0).fit(X, y).save(tmp_path / "plain.json")
    X.head(4).to_csv(tmp_path / "configs.csv", index=False)
    X.head(3).assign(gpus=[1.0, 1000.0, 0.5]).to_csv(tmp_path / "far.csv", index=False)
    pd.DataFrame([BASE]).to_csv(tmp_path / "base.csv", index=False)
    return tmp_path


@pytest.fixture
def exact_csv(tmp_path):
    """A folder holding ``data.csv``: :func:`tests.frames.exact_data`'s table with its target ``time``."""
    from tests.frames import exact_data

    X, y = exact_data()
    X.assign(time=y).to_csv(tmp_path / "data.csv", index=False)
    return tmp_path
