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
    for nb in sorted((root / "notebooks").rglob("*.ipynb")):
        data = json.loads(nb.read_text())
        for cell in data["cells"]:
            if cell["cell_type"] == "code":
                assert not cell.get("outputs") and cell.get("execution_count") is None, nb.name
        tagged = [c for c in data["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{nb.name}: needs exactly one cell tagged 'parameters'"


def test_nbclean_undoes_what_a_jupyterlab_save_adds(root):
    """Run and saved in JupyterLab (outputs, counts, lines, machine metadata), a notebook cleans to its committed bytes."""
    from perfkit.report.nbclean import clean, dumps

    for nb_path in sorted((root / "notebooks").rglob("*.ipynb")):
        committed = nb_path.read_text()
        nb = json.loads(committed)
        nb["metadata"]["language_info"] = {"name": "python", "version": "3.11.7", "codemirror_mode": {"name": "ipython"},
                                           "pygments_lexer": "ipython3", "file_extension": ".py"}
        for i, cell in enumerate(nb["cells"]):
            if i % 2:  # JupyterLab saves lines, other tools one string: both clean to the committed lines
                cell["source"] = "".join(cell["source"])
            if cell["cell_type"] == "code":
                cell["execution_count"] = i
                cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["x\n"]}]
                cell["metadata"]["execution"] = {"iopub.status.busy": "2026-11-22T00:00:00Z"}
        assert dumps(clean(nb)) == committed, nb_path.name
        assert all(isinstance(c["source"], list) for c in json.loads(committed)["cells"]), nb_path.name


# ------------------------------------------------------------------ an installed perfkit (pip install ., a wheel)
def _version_file(root) -> str:
    import ast

    tree = ast.parse((root / "perfkit" / "_version.py").read_text())
    return next(n.value.value for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "__version__")


@pytest.fixture
def installed(monkeypatch, tmp_path, root):
    """perfkit as if installed from a wheel: no checkout around it, its data at ``perfkit/_data`` (here: the
    checkout's data/), run from an empty working folder."""
    from perfkit import schema

    monkeypatch.setattr(schema, "checkout_root", lambda: None)
    monkeypatch.setattr(schema, "_PACKAGED_DATA", root / "data")
    monkeypatch.setattr(schema, "_PACKAGED_NOTEBOOKS", root / "notebooks")
    for var in ("PERFKIT_DATA", "PERFKIT_FIGURES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    return schema


def test_in_the_checkout_paths_are_the_checkouts(root, monkeypatch):
    from perfkit import schema

    monkeypatch.delenv("PERFKIT_DATA", raising=False)
    monkeypatch.delenv("PERFKIT_FIGURES", raising=False)
    assert schema.checkout_root() == root == schema.repo_root()
    assert schema.data_dir() == root / "data" and schema.notebooks_dir() == root / "notebooks"
    assert schema.figures_dir() == root / "figures" and schema.build_dir() == root / "build"
    assert schema.resolve("data/thesis/table3_2.csv") == root / "data" / "thesis" / "table3_2.csv"
    assert schema.measured_path("ch4") == root / "data" / "measured" / "pytorch-cpu" / "ch4_lenet5.csv"


def test_installed_data_dir_falls_back_to_the_packaged_copy(installed, root, tmp_path, monkeypatch):
    from perfkit.data.thesis import load_thesis_table

    assert installed.data_dir() == root / "data"
    assert len(load_thesis_table("4.3")) > 0
    # the chapters' default datasets ("data/measured/...") are found in the packaged copy, a file of the working
    # folder first
    assert installed.resolve("data/measured/pytorch-cpu/ch4_lenet5.csv") == \
        root / "data" / "measured" / "pytorch-cpu" / "ch4_lenet5.csv"
    (tmp_path / "data" / "thesis").mkdir(parents=True)
    (tmp_path / "data" / "thesis" / "table3_2.csv").write_text("x\n")
    assert installed.resolve("data/thesis/table3_2.csv") == tmp_path / "data" / "thesis" / "table3_2.csv"
    assert installed.resolve("data/nowhere.csv") == tmp_path / "data" / "nowhere.csv"
    # collections never write into the installed package: the working folder's data/measured
    assert installed.measured_path("ch3") == tmp_path / "data" / "measured" / "pytorch-cpu" / "ch3_phases.csv"
    monkeypatch.setenv("PERFKIT_DATA", str(tmp_path / "data"))  # still overrides
    assert installed.data_dir() == tmp_path / "data"
    assert installed.measured_path("ch3").parent == tmp_path / "data" / "measured" / "pytorch-cpu"
    monkeypatch.delenv("PERFKIT_DATA")
    monkeypatch.setattr(installed, "_PACKAGED_DATA", tmp_path / "no-data")
    with pytest.raises(FileNotFoundError, match="PERFKIT_DATA"):
        installed.data_dir()


def test_installed_outputs_go_to_the_working_folder(installed, tmp_path, monkeypatch):
    assert installed.repo_root() == tmp_path
    assert installed.figures_dir() == tmp_path / "figures" and installed.build_dir() == tmp_path / "build"
    monkeypatch.setenv("PERFKIT_FIGURES", str(tmp_path / "elsewhere"))
    assert installed.figures_dir() == tmp_path / "elsewhere"
    assert not any(tmp_path.iterdir()), "asking for a folder created it"


def test_installed_notebooks_or_one_line_saying_how_to_get_them(installed, root, tmp_path, monkeypatch):
    assert installed.notebooks_dir() == root / "notebooks"
    monkeypatch.setattr(installed, "_PACKAGED_NOTEBOOKS", tmp_path / "none")
    with pytest.raises(FileNotFoundError, match="clone the repository") as exc:
        installed.notebooks_dir()
    assert "\n" not in str(exc.value)


def test_python_m_perfkit_version(python, root, tmp_path):
    version = _version_file(root)
    for argv in (["--version"], ["version"]):
        out = subprocess.run([python, "-m", "perfkit", *argv], cwd=tmp_path, capture_output=True, text=True,
                             check=True)
        assert out.stdout.split()[-1] == version, out.stdout


def test_the_version_has_one_source(root):
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "perfkit._version.__version__"}
    import perfkit

    assert perfkit.__version__ == _version_file(root)


def test_requires_python_is_what_the_pins_support(root):
    """numpy 2.4.6, pandas 3.1.1, scipy 1.17.1 and scikit-learn 1.9.1 (constraints.txt) have wheels for 3.11 and
    later, none for 3.10 (checked with pip download --only-binary=:all: --python-version 3.10)."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert pyproject["requires-python"] == ">=3.11"
    pins = dict(line.split("==") for line in (root / "constraints.txt").read_text().split() if "==" in line)
    assert {k: pins.get(k) for k in ("numpy", "pandas", "scipy", "scikit-learn")} == \
        {"numpy": "2.4.6", "pandas": "3.1.1", "scipy": "1.17.1", "scikit-learn": "1.9.1"}, \
        "the pins changed: check which Pythons they have wheels for and update requires-python (and the README)"
    assert "python>=3.11" in (root / "environment.yml").read_text()


def test_pyproject_ships_every_package_and_the_data(root):
    """pyproject lists the packages (the data and notebooks are mapped in from the top level); every package under
    perfkit/ must be listed, and the package data must cover the thesis tables, the external data and the
    measured CSVs."""
    from fnmatch import fnmatch

    from setuptools import find_packages

    tool = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert sorted(tool["packages"]) == sorted(find_packages(str(root), include=["perfkit*"])
                                              + ["perfkit._data", "perfkit._notebooks"])
    assert tool["package-dir"] == {"perfkit._data": "data", "perfkit._notebooks": "notebooks"}

    def shipped(globs, rel):  # setuptools' "**/" also matches no folder at all
        return any(fnmatch(rel, g) or fnmatch(rel, g.replace("**/", "")) for g in globs)

    data_globs = tool["package-data"]["perfkit._data"]
    for sub in ("thesis", "external"):
        for path in (root / "data" / sub).rglob("*"):
            if path.is_file() and not path.name.endswith(".lock"):
                assert shipped(data_globs, path.relative_to(root / "data").as_posix()), path
    for path in (root / "data" / "measured").glob("*/*.csv"):
        assert shipped(data_globs, path.relative_to(root / "data").as_posix()), path


@pytest.mark.slow
def test_a_built_wheel_runs_outside_the_checkout(python, root, tmp_path):
    """Build the wheel (no network: the installed setuptools), unpack it and use it from an empty folder."""
    import shutil
    import zipfile

    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc", "*.steps.jsonl", "*.lock")
    for name in ("perfkit", "data", "notebooks"):
        shutil.copytree(root / name, src / name, ignore=skip)
    subprocess.run([python, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", str(src),
                    "-w", str(tmp_path / "wheel")], check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = (tmp_path / "wheel").glob("perfkit-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "perfkit/_data/thesis/table4_3.csv" in names and "perfkit/__main__.py" in names
    assert "perfkit/_data/measured/pytorch-cpu/ch4_lenet5.csv" in names
    assert any(n.startswith("perfkit/_data/external/pollux/") for n in names)
    assert "perfkit/_notebooks/ch4_generic_model.ipynb" in names
    assert not any(n.endswith((".steps.jsonl", ".lock")) or "__pycache__" in n for n in names)
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "work"
    work.mkdir()
    code = ("import perfkit, perfkit.schema as s; print(s.checkout_root(), s.data_dir(), s.figures_dir(), "
            "s.build_dir(), s.notebooks_dir()); print(perfkit.load_thesis_table('4.3').shape[0] > 0)")
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("PERFKIT_")}
    out = subprocess.run([python, "-c", code], cwd=work, capture_output=True, text=True, check=True,
                         env={**env, "PYTHONPATH": str(site)})
    none, data, figures, build, notebooks = out.stdout.split("\n")[0].split()
    assert none == "None" and data == str(site / "perfkit" / "_data")
    assert figures == str(work / "figures") and build == str(work / "build")
    assert notebooks == str(site / "perfkit" / "_notebooks")
    assert out.stdout.split("\n")[1] == "True"


#: third-party modules perfkit imports without declaring them, and why
UNDECLARED_IMPORTS = {
    # the framework adapters run in their own environments (make frameworks: perfkit/measure/adapters/requirements/)
    **dict.fromkeys(["tensorflow", "keras"], "TensorFlow adapter, .envs/tensorflow"),
    **dict.fromkeys(["jax", "jaxlib", "optax"], "JAX adapter, .envs/jax"),
    **dict.fromkeys(["mxnet", "chainer", "chainermn", "mpi4py"], "MXNet/Chainer adapters, .envs/legacy"),
    "IPython": "installed with ipykernel; imported only inside notebooks (ChapterResult.reading)",
}
#: of those, the ones only the measurement adapters may import
ADAPTER_ONLY = {"tensorflow", "keras", "jax", "jaxlib", "optax", "mxnet", "chainer", "chainermn", "mpi4py"}
#: import name → distribution name, where they differ
DISTRIBUTIONS = {"sklearn": "scikit-learn", "IPython": "ipython"}
#: declared dependencies no perfkit module imports, and why
NOT_IMPORTED = {
    "jupyterlab": "make lab",
    "ipykernel": "the kernel papermill runs the notebooks in",
    "ipywidgets": "tqdm's notebook progress bars",
    "pytest": "test extra",
    "pytest-xdist": "test extra: make test's parallel workers (pytest -n)",
    "dask": "joblib's dask backend (scale/test extras), selected by name",
    "distributed": "joblib's dask backend (scale/test extras), selected by name",
    "selenium": "test extra: the browser test of the teaching notebook (tests/test_browser.py)",
}


def _third_party_imports(root):
    """``(top-level module, file, guarded)`` for every absolute import under perfkit/ (module level and inside
    functions); ``guarded``: inside a ``try`` whose handlers catch ImportError or ModuleNotFoundError."""
    import ast
    import sys

    for path in sorted((root / "perfkit").rglob("*.py")):
        tree = ast.parse(path.read_text())
        guarded = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Try):
                caught = set()
                for handler in node.handlers:
                    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                    caught |= {getattr(t, "id", getattr(t, "attr", None)) for t in types if t is not None}
                if caught & {"ImportError", "ModuleNotFoundError"}:
                    guarded |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top != "perfkit" and top not in sys.stdlib_module_names:
                    yield top, path.relative_to(root).as_posix(), id(node) in guarded


def test_every_imported_module_is_declared(root):
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    specs = project["dependencies"] + [s for extra in project["optional-dependencies"].values() for s in extra]
    declared = set(_names(specs))
    imported = set()
    for module, path, guarded in _third_party_imports(root):
        imported.add(DISTRIBUTIONS.get(module, module).lower())
        if guarded or DISTRIBUTIONS.get(module, module).lower() in declared:
            continue
        assert module in UNDECLARED_IMPORTS, f"{path} imports {module}, which pyproject.toml does not declare"
        if module in ADAPTER_ONLY:
            assert path.startswith("perfkit/measure/adapters/"), f"{path} imports the adapter-only {module}"
    unused = declared - imported - set(NOT_IMPORTED)
    assert not unused, f"pyproject.toml declares {sorted(unused)}, which no perfkit module imports"
