"""Chapter 4 on several machines: eq. 4.4 fitted to the same framework's file from each machine, like for like.

The main ``dataset`` (our 2-core machine) and each file of ``machine_datasets`` (the same harness, framework
and sampler on another machine, e.g. 16 cores) are cut to the same number of rows, ``n`` = the fewest usable
rows of any of them, taken in file order (the first ``n`` configurations each machine measured), and split
in the chapter's proportion n_fit : n_test with the chapter's ``split_seed``. On each, the generic model
(eq. 4.4) is fitted as Table 4.2 fits it (no regularisation; the chapter's engine, seeds and budget, the
best objective kept), and its q(workers) gets a 95 % interval from a case bootstrap of the fit rows: :data:`RESAMPLES` resamples (:data:`QUICK_RESAMPLES` in quick mode), drawn with the fixed seed
:data:`~perfkit.evidence.SEED`, each refitted once with seed 0 in the same order, so the interval is
the same on every run and for every ``n_jobs``.

The files share a sampler and its seed, not necessarily their configurations: the sampler draws the worker
count from the machine's own grid (1, 2, 3 on 2 cores; 1, 2, 4, 8 on 16), so from the first draw on the
configurations differ. The comparison is like for like in the number of rows, the split and the fit, and
each file is a random sample of Table 4.1 with that machine's worker counts.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...data.measured import load_provenance, load_steps, provenance_path, thesis_split
from ...model.engine.fitcache import cached_fit
from ...model.selection.fitting import fit_repeated, run_parallel
from ...evidence import METRICS, SEED, B, Evidence, bootstrap_indices, paired_bootstrap
from ...schema import resolve
from ..ch3.machines import machine_label
from .params import Params, make_model
from .results import MachineFit

__all__ = ["RESAMPLES", "QUICK_RESAMPLES", "MACHINE_SOURCE", "machine_paths", "machine_inputs",
           "common_rows", "fit_machine", "compare_machines", "workers_q"]

#: case resamples of the fit rows behind each machine's q(workers) interval (and in quick mode)
RESAMPLES = 200
QUICK_RESAMPLES = 20
#: where the resamples of a machine's q(workers) come from (the ledger's ``resampling`` column)
MACHINE_SOURCE = ("{b} case resamples of the {n} fit rows, each refitted (eq. 4.4, {engine} engine, seed 0); "
                  "95 % percentile interval")
#: where the resamples of a machine's held-out MAPE come from
MAPE_SOURCE = f"{B} bootstrap resamples of the {{n}} held-out rows"


def machine_paths(p: Params) -> list[Path]:
    """The files compared: ``dataset`` first, then each file of ``machine_datasets``; ``[]`` without any."""
    if not p.machine_datasets:
        return []
    return [resolve(p.dataset)] + [resolve(v) for v in p.machine_datasets]


def machine_inputs(p: Params) -> list[Path]:
    """Every file the comparison reads: the measured files and their provenance."""
    return [f for path in machine_paths(p) for f in (path, provenance_path(path))]


def common_rows(paths, target: str) -> int:
    """The fewest usable rows (status ok) of ``paths``: every machine is fitted on that many, its first ones."""
    return min(len(load_steps(path, target=target)[1]) for path in paths)


def workers_q(model) -> float:
    """The power q of workers of a fitted generic model."""
    return float(dict(zip(model.power_names_, model.powers_))["q[workers]"])


def _refit_q(estimator, X, y) -> float:
    """q(workers) of ``estimator`` fitted on one resample (read from the fit cache when it is on)."""
    from sklearn.base import clone

    return workers_q(cached_fit(clone(estimator), X, y))


def _bootstrap_q(p: Params, X_fit, y_fit, desc: str) -> np.ndarray:
    """q(workers) refitted on each case resample of the fit rows, in resample order."""
    from joblib import delayed

    b = QUICK_RESAMPLES if p.quick else RESAMPLES
    idx = bootstrap_indices(len(X_fit), b, SEED)
    template = make_model(random_state=0, **p.de_kw)
    tasks = (delayed(_refit_q)(template, X_fit.iloc[i], y_fit.iloc[i]) for i in idx)
    return np.asarray(run_parallel(p.n_jobs, None, tasks, b, desc, p.progress), dtype=float)


def fit_machine(p: Params, path: Path, n: int) -> MachineFit:
    """Eq. 4.4 on the first ``n`` usable rows of ``path``: the chapter's fit, its held-out MAPE and the bootstrap
    of its q(workers) (see the module docstring)."""
    X, y, frame = load_steps(path, target=p.target)
    n_rows = len(y)
    X, y, frame = X.iloc[:n], y.iloc[:n], frame.iloc[:n]
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=p.n_fit, n_test=p.n_test, seed=p.split_seed)
    prov = load_provenance(path)
    device = str(frame["device"].iloc[0]) if "device" in frame.columns else "cpu"
    machine = machine_label(prov, device)[0]
    fit = fit_repeated(make_model(**p.de_kw), X_fit, y_fit, seeds=p.n_seeds, n_jobs=p.n_jobs, progress=p.progress,
                       desc=f"{machine}: eq. 4.4 on {n} rows")
    samples = _bootstrap_q(p, X_fit, y_fit, f"{machine}: q(workers) bootstrap")
    q = Evidence.from_samples(workers_q(fit.best), samples,
                              MACHINE_SOURCE.format(b=len(samples), n=len(X_fit), engine=p.engine))
    yt = np.asarray(y_test, dtype=float)
    est, boot = paired_bootstrap(yt, {"DE": fit.best.predict(X_test)}, METRICS["MAPE"])["DE"]
    by = frame.groupby("workers")[p.target]
    m = prov.get("machine") or {}
    return MachineFit(label=path.parent.name, path=str(path), machine=machine, cores=m.get("cores_usable") or
                      m.get("cores"), n_rows=n_rows, n=n, n_fit=len(X_fit), n_test=len(X_test), q_workers=q,
                      mape=Evidence.from_samples(est, boot, MAPE_SOURCE.format(n=len(yt))),
                      median_time={int(w): float(v) for w, v in by.median().items()},
                      rows_by_workers={int(w): int(v) for w, v in by.size().items()})


def compare_machines(p: Params) -> list | None:
    """A :class:`MachineFit` per machine (``dataset`` first) on their common rows; None without ``machine_datasets``."""
    paths = machine_paths(p)
    if not paths:
        return None
    n = common_rows(paths, p.target)
    return [fit_machine(p, path, n) for path in paths]

