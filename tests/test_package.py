"""Packaging: fast side-effect-free import, CLI, environment.yml in step with pyproject.toml."""
import json
import re
import subprocess
import sys
import tomllib

import pytest


def test_import_is_fast_and_lazy(python, tmp_path):
    code = (
        "import sys, time, os; t=time.perf_counter(); import perfkit; dt=time.perf_counter()-t; "
        "heavy=[m for m in ('pandas','matplotlib','sklearn','scipy','numpy','papermill') if m in sys.modules]; "
        "print(dt, ','.join(heavy), len(os.listdir('.')))"
    )
    out = subprocess.run([python, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    dt, heavy, nfiles = out.stdout.split(" ")
    assert float(dt) < 0.5, f"import perfkit took {dt} s"
    assert heavy == "", f"import perfkit pulled in {heavy}"
    assert int(nfiles) == 0, "import perfkit created files in the working directory"


def test_lazy_exports_resolve():
    import perfkit

    for name in perfkit.__all__:
        assert getattr(perfkit, name) is not None
    with pytest.raises(AttributeError):
        perfkit.no_such_thing


def _names(specs):
    return {re.split(r"[<>=!~ \[]", s.strip(), maxsplit=1)[0].lower(): s.replace(" ", "") for s in specs}


def test_environment_yml_matches_pyproject(root):
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    wanted = _names(pyproject["dependencies"] + pyproject["optional-dependencies"]["test"])
    wanted_pip = _names(pyproject["optional-dependencies"]["measure"])
    env_lines = (root / "environment.yml").read_text().splitlines()
    conda, pip = [], []
    section = None
    for line in env_lines:
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped.strip():
            continue
        if stripped.strip() == "- pip:":
            section = "pip"
            continue
        if stripped.strip() == "dependencies:":
            section = "conda"
            continue
        m = re.match(r"^\s+- (.+)$", stripped)
        if m and section == "conda" and not line.startswith("      "):
            conda.append(m[1])
        elif m and section == "pip":
            pip.append(m[1])
    conda_names = _names(conda)
    conda_names.pop("python", None)
    conda_names.pop("pip", None)
    assert conda_names == wanted, "environment.yml conda packages drifted from pyproject.toml"
    pip_names = {k: v for k, v in _names(pip).items() if not k.startswith("-e")}
    assert pip_names == wanted_pip, "environment.yml pip packages drifted from pyproject.toml"


def test_cli_tables_and_errors(python):
    out = subprocess.run([python, "-m", "perfkit.cli", "tables"], capture_output=True, text=True, check=True)
    assert "journal5" in out.stdout and "3.2" in out.stdout
    out = subprocess.run([python, "-m", "perfkit.cli", "tables", "4.5"], capture_output=True, text=True, check=True)
    assert "-0.73" in out.stdout
    bad = subprocess.run([python, "-m", "perfkit.cli", "tables", "7.7"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown thesis table '7.7'" in bad.stderr
    bad = subprocess.run([python, "-m", "perfkit.cli", "reproduce", "--chapter", "ch9"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown 'ch9'" in bad.stderr


def test_notebooks_are_committed_without_outputs(root):
    for nb in (root / "notebooks").glob("*.ipynb"):
        data = json.loads(nb.read_text())
        for cell in data["cells"]:
            if cell["cell_type"] == "code":
                assert not cell.get("outputs") and cell.get("execution_count") is None, nb.name
        tagged = [c for c in data["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{nb.name}: needs exactly one cell tagged 'parameters'"
