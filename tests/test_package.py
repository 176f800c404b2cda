"""Packaging: fast side-effect-free import, CLI, environment.yml in step with pyproject.toml."""
import json
import re
import subprocess
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


def test_cli_tables_and_errors(capsys):
    from perfkit.cli import main

    assert main(["tables"]) == 0
    out = capsys.readouterr().out
    assert "journal5" in out and "3.2" in out
    assert main(["tables", "4.5"]) == 0
    assert "-0.73" in capsys.readouterr().out
    assert main(["tables", "4.3"]) == 0  # frameworks side by side, one row per parameter
    wide = capsys.readouterr().out.splitlines()
    assert {"MXNet", "PyTorch", "TensorFlow"} <= set(wide[0].split()) and max(map(len, wide)) < 200
    assert "6.27 ± 0.59" in "\n".join(wide)
    assert main(["tables", "7.7"]) == 2 and "unknown thesis table '7.7'" in capsys.readouterr().err
    assert main(["reproduce", "--chapter", "ch9"]) == 2 and "unknown 'ch9'" in capsys.readouterr().err


def test_cli_help_lists_every_collection_kind(capsys):
    from perfkit.cli import build_parser

    text = build_parser().format_help()
    assert all(k in text for k in ("ch3", "ch4", "noise", "epoch", "ch5", "ch5vol"))


def test_cli_does_not_import_chapter_modules(python):
    code = "import sys, perfkit.cli; print(any(m.startswith('perfkit.chapters') for m in sys.modules))"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_config_files_name_only_existing_files(root):
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    for path in pyproject["tool"]["pytest"]["ini_options"]["testpaths"]:
        assert (root / path).exists(), path
    for name in ("pyproject.toml", "environment.yml", "Makefile"):
        for path in re.findall(r"\b(?:tests|perfkit|notebooks)/[\w/.-]+\.(?:py|ipynb)", (root / name).read_text()):
            assert (root / path).exists(), f"{name} names {path}, which does not exist"


def test_notebooks_are_committed_without_outputs(root):
    for nb in (root / "notebooks").glob("*.ipynb"):
        data = json.loads(nb.read_text())
        for cell in data["cells"]:
            if cell["cell_type"] == "code":
                assert not cell.get("outputs") and cell.get("execution_count") is None, nb.name
        tagged = [c for c in data["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{nb.name}: needs exactly one cell tagged 'parameters'"


def test_nbclean_undoes_what_a_jupyterlab_save_adds(root):
    """Run and saved in JupyterLab (outputs, counts, lines, machine metadata), a notebook cleans to its committed bytes."""
    from perfkit.report.nbclean import clean, dumps

    for nb_path in (root / "notebooks").glob("*.ipynb"):
        committed = nb_path.read_text()
        nb = json.loads(committed)
        nb["metadata"]["language_info"] = {"name": "python", "version": "3.11.7", "codemirror_mode": {"name": "ipython"},
                                           "pygments_lexer": "ipython3", "file_extension": ".py"}
        for i, cell in enumerate(nb["cells"]):
            cell["source"] = cell["source"].splitlines(keepends=True)
            if cell["cell_type"] == "code":
                cell["execution_count"] = i
                cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["x\n"]}]
                cell["metadata"]["execution"] = {"iopub.status.busy": "2026-11-22T00:00:00Z"}
        assert dumps(clean(nb)) == committed, nb_path.name
