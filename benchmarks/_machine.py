"""Machine facts recorded beside every benchmark result (see perfkit.measure.provenance).

``machine_info()`` here is perfkit's, plus ``numeric``: the numeric environment the timings
depend on (CPU SIMD flags, BLAS library and core type, numpy's SIMD dispatch, thread counts,
the BLAS/OpenMP environment variables; :func:`perfkit.measure.provenance.numeric_environment`).
"""
from perfkit.measure.provenance import machine_info as _machine_info
from perfkit.measure.provenance import numeric_environment, numeric_summary  # noqa: F401


def machine_info(**kwargs) -> dict:
    """:func:`perfkit.measure.provenance.machine_info` with the ``numeric`` environment added."""
    return {**_machine_info(**kwargs), "numeric": numeric_environment()}


def write_results(path, res: dict, markdown: str, indent: int = 1) -> None:
    """Write a benchmark's results: ``path`` with suffix ``.json`` (``res``) and ``.md`` (``markdown``)."""
    import json
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".json").write_text(json.dumps(res, indent=indent, default=float) + "\n")
    path.with_suffix(".md").write_text(markdown + "\n")
    print(f"wrote {path.with_suffix('.json')} and {path.with_suffix('.md')}")
