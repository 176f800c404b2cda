"""The numeric environment recorded with results: CPU SIMD flags, BLAS and core type, numpy SIMD, threads, variables."""
import json
import os
import subprocess
import sys

import pytest

from perfkit.measure.provenance import NUMERIC_ENV_VARS, numeric_environment, numeric_summary

KEYS = {"cpu", "blas", "numpy_simd", "env", "threads", "versions"}


def test_numeric_environment_has_every_key_and_is_json():
    env = numeric_environment()
    assert KEYS <= set(env)
    assert json.loads(json.dumps(env)) == env
    assert set(env["env"]) == set(NUMERIC_ENV_VARS)
    assert {"model", "vendor", "machine", "simd_flags", "simd_flags_missing"} <= set(env["cpu"])
    assert {"logical_cpus", "usable_cpus", "blas", "openmp"} <= set(env["threads"])
    assert env["versions"]["numpy"] and env["versions"]["python"]
    if os.path.exists("/proc/cpuinfo") and env["cpu"]["machine"] in ("x86_64", "AMD64"):
        assert "sse2" in env["cpu"]["simd_flags"]  # every x86-64 CPU has it
        assert {"baseline", "found", "not_found"} <= set(env["numpy_simd"])
    for lib in env["blas"]:
        assert {"user_api", "internal_api", "version", "architecture", "num_threads", "library"} <= set(lib)
        assert "/" not in lib["library"]  # the file name only, not the folder it lies in
    line = numeric_summary(env)
    assert "\n" not in line and line.startswith("CPU ") and "BLAS" in line


def _in_subprocess(**variables) -> dict:
    code = ("import json; from perfkit.measure.provenance import numeric_environment; "
            "print(json.dumps(numeric_environment()))")
    environ = {k: v for k, v in os.environ.items() if k not in NUMERIC_ENV_VARS}
    out = subprocess.run([sys.executable, "-c", code], env={**environ, **variables}, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def test_openblas_coretype_and_thread_variables_are_captured():
    try:
        import threadpoolctl  # noqa: F401
    except ImportError:
        pytest.skip("threadpoolctl not installed")
    plain = _in_subprocess()
    assert all(v is None for v in plain["env"].values())
    openblas = [lib for lib in plain["blas"] if lib["internal_api"] == "openblas"]
    x86 = plain["cpu"]["machine"] in ("x86_64", "AMD64")
    core = "Sandybridge" if x86 else (openblas[0]["architecture"] if openblas else "ARMV8")
    forced = _in_subprocess(OPENBLAS_CORETYPE=core, OMP_NUM_THREADS="1")
    assert forced["env"]["OPENBLAS_CORETYPE"] == core and forced["env"]["OMP_NUM_THREADS"] == "1"
    assert f"OPENBLAS_CORETYPE={core}" in numeric_summary(forced)
    if openblas and x86:  # OpenBLAS obeys the variable: the core type it reports is the forced one
        forced_libs = [lib for lib in forced["blas"] if lib["internal_api"] == "openblas"]
        assert {lib["architecture"].lower() for lib in forced_libs} == {core.lower()}
        assert {lib["num_threads"] for lib in forced_libs} == {1}
        assert forced["threads"]["blas"] == 1


def test_reproduce_writes_the_run_environment_to_the_build_folder(tmp_path, capsys):
    from perfkit.chapters.notebooks import write_run_environment

    path = write_run_environment(tmp_path / "build", chapters=["ch3"], quick=True)
    assert path == tmp_path / "build" / "run_environment.json"
    data = json.loads(path.read_text())
    assert {"machine", "numeric", "run"} <= set(data) and KEYS <= set(data["numeric"])
    assert data["run"] == {"chapters": ["ch3"], "quick": True} and data["machine"]["cpu"]
    out = capsys.readouterr().out
    assert out.startswith("[perfkit] environment: CPU ") and out.count("\n") == 1


def test_benchmarks_record_the_numeric_environment(root, monkeypatch):
    monkeypatch.syspath_prepend(str(root / "benchmarks"))
    from _machine import machine_info

    m = machine_info(libraries=())
    assert KEYS <= set(m["numeric"]) and m["cpu"]


def test_git_commit_of_a_copy_without_git_is_the_named_one(monkeypatch, tmp_path):
    """A tree copied to another machine (no .git) records the commit its copier named, marked as such."""
    from perfkit.measure import provenance

    monkeypatch.setattr(provenance, "repo_root", lambda: tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.delenv("PERFKIT_SOURCE_COMMIT", raising=False)
    assert provenance._git_commit() == ""
    monkeypatch.setenv("PERFKIT_SOURCE_COMMIT", "abc1234")
    assert provenance._git_commit() == "abc1234 (PERFKIT_SOURCE_COMMIT; git here: none)"


def test_git_commit_named_beside_what_git_says(monkeypatch):
    """A copy whose .git is stale records the named commit first and git's view beside it."""
    from perfkit.measure import provenance

    monkeypatch.delenv("PERFKIT_SOURCE_COMMIT", raising=False)
    here = provenance._git_commit()
    assert here and "PERFKIT_SOURCE_COMMIT" not in here
    monkeypatch.setenv("PERFKIT_SOURCE_COMMIT", "abc1234")
    assert provenance._git_commit() == f"abc1234 (PERFKIT_SOURCE_COMMIT; git here: {here})"
