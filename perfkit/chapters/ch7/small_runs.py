"""Chapter 7's reading of the small-runs benchmark: what a user who measured only small runs gets from the CLI.

``benchmarks/bench_small_runs.py`` runs ``perfkit fit --form auto`` (a scaling study with the communication prior)
per job on each cluster's rows with at most a quarter of its largest GPU count and predicts the rows from half of
it; ``--summary`` gathers one row per cluster into ``benchmarks/results/small_runs_summary.json``, the parameter
``small_runs_results``. :func:`read_small_runs` checks that file; the chapter fits nothing for it.
"""
from __future__ import annotations

import numpy as np

from ..._io import read_json
from ...model.persist import is_finite
from ...schema import resolve

__all__ = ["SMALL_RUNS_KEYS", "read_small_runs", "finite_number"]

#: the keys of one cluster's row (``bench_small_runs.SUMMARY_KEYS``)
SMALL_RUNS_KEYS = ("cluster", "jobs", "fit_max", "test_min", "test_max", "mape", "best_baseline",
                   "best_baseline_mape", "margin", "margin_interval", "coverage", "test_rows", "regime_rows",
                   "regime_coverage", "regime_mape_with_prior", "regime_mape_without_prior", "kappa",
                   "coverage_others", "regime_coverage_others")


def finite_number(v, low=-np.inf, high=np.inf) -> bool:
    """``v`` is a finite number (not a bool) from ``low`` to ``high``: a value a results file may hold."""
    return is_finite(v) and low <= v <= high


def _check_row(r: dict) -> None:
    """One row: the types and ranges the benchmark writes; else one ValueError naming the cluster and the key."""
    where = f"cluster {r['cluster']!r}"
    checks = (("cluster", isinstance(r["cluster"], str) and r["cluster"]),
              ("jobs", isinstance(r["jobs"], list) and r["jobs"] and all(isinstance(j, str) for j in r["jobs"])),
              *((k, finite_number(r[k], 0) and r[k] > 0) for k in ("fit_max", "test_min", "test_max", "kappa")),
              *((k, finite_number(r[k], 0)) for k in ("mape", "best_baseline_mape")),
              ("best_baseline", isinstance(r["best_baseline"], str)), ("margin", finite_number(r["margin"])),
              ("margin_interval", isinstance(r["margin_interval"], list) and len(r["margin_interval"]) == 2
               and all(finite_number(v) for v in r["margin_interval"])),
              ("coverage", finite_number(r["coverage"], 0, 1)),
              *((k, isinstance(r[k], int) and not isinstance(r[k], bool) and r[k] >= 0)
                for k in ("test_rows", "regime_rows")),
              *((k, r[k] is None or finite_number(r[k], 0)) for k in ("regime_mape_with_prior", "regime_mape_without_prior")),
              *((k, r[k] is None or finite_number(r[k], 0, 1))
                for k in ("regime_coverage", "coverage_others", "regime_coverage_others")))
    bad = [k for k, ok in checks if not ok]
    if bad:
        raise ValueError(f"{where}: {bad[0]} {r[bad[0]]!r} is not what bench_small_runs.py writes")


def read_small_runs(p) -> list | None:
    """The rows of ``small_runs_results``, or None when it is "" or missing; a file that is not such a summary is
    one :class:`~perfkit.chapters.result.ParameterError` naming it."""
    from ..result import ParameterError

    if not p.small_runs_results or not resolve(p.small_runs_results).exists():
        return None
    try:
        rows = read_json(resolve(p.small_runs_results), str(p.small_runs_results))["clusters"]
        if not isinstance(rows, list) or not rows:
            raise ValueError("'clusters' is not a non-empty list")
        out = [{k: r[k] for k in SMALL_RUNS_KEYS} for r in rows]
        for r in out:
            _check_row(r)
        return out
    except (ValueError, KeyError, TypeError) as exc:
        missing = f"no key {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0]
        raise ParameterError(f"small_runs_results: {p.small_runs_results} is not a bench_small_runs.py summary (a "
                             f"'clusters' list of rows with {', '.join(SMALL_RUNS_KEYS)}): {missing}") from None
