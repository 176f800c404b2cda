"""Bad chapter parameters fail at once with one line naming the parameter; a failing notebook under
``perfkit reproduce`` is one ``perfkit: error:`` line, not a traceback."""
import dataclasses
import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from perfkit.chapters import ch3, ch4, ch5, ch6, ch7, ch8
from perfkit.chapters import notebooks as nbs
from perfkit.chapters.result import ParameterError
from perfkit.schema import repo_root
from tests.frames import CH4_CSV as CH4, TF4_CSV as TF4

CH3_CSV = "data/measured/pytorch-cpu/ch3_phases.csv"
CH4_CSV = "data/measured/pytorch-cpu/ch4_lenet5.csv"
MODULES = {"ch3": ch3, "ch4": ch4, "ch5": ch5, "ch6": ch6, "ch7": ch7, "ch8": ch8}


@pytest.fixture(scope="module")
def param_files(tmp_path_factory):
    """Small files for the data-dependent checks: a plain file, a Chapter 4 file with failed rows, a short one,
    and a Chapter 3 file with phased rows only."""
    d, root = tmp_path_factory.mktemp("bad"), repo_root()
    (d / "notes.txt").write_text("not a folder\n")
    ch4_full = pd.read_csv(root / CH4_CSV)
    failed = ch4_full.copy()
    failed.loc[failed.index[:400], "status"] = "failed"  # 1100 usable rows of 1500
    failed.to_csv(d / "ch4_failed.csv", index=False)
    ch4_full.head(300).to_csv(d / "ch4_short.csv", index=False)
    ch4_full.head(20).to_csv(d / "ch4_tiny.csv", index=False)
    ch3_rows = pd.read_csv(root / CH3_CSV, nrows=400)
    ch3_rows[ch3_rows["mode"] == "phased"].to_csv(d / "ch3_phased_only.csv", index=False)
    (d / "binary.csv").write_bytes(b"\xff\xfe\x00\x81garbage\x00")
    return d


# (chapter, parameters, the parameter the message must start with, more text the message must contain)
BAD = [
    ("ch3", dict(n_train=0), "n_train", "integer >= 1"),
    ("ch3", dict(n_train=-60000), "n_train", "got -60000"),
    ("ch3", dict(measured_mode="ddp"), "measured_mode", "'phased', 'overlapped'"),
    ("ch3", dict(speedup_variants=[]), "speedup_variants", "non-empty"),
    ("ch3", dict(speedup_variants=["thesis", "journal"]), "speedup_variants", "'journal'"),
    ("ch3", dict(speedup_variants=["paper", "paper"]), "speedup_variants", "repeats"),
    ("ch3", dict(measured_csv="no/such/file.csv"), "measured_csv", "not found"),
    ("ch3", dict(measured_csv="data"), "measured_csv", "is a folder"),
    ("ch3", dict(measured_csv=CH4_CSV), "measured_csv", "has no column 'model'"),
    ("ch3", dict(measured_csv="{tmp}/ch3_phased_only.csv", measured_mode="overlapped"), "measured_mode",
     "no usable 'overlapped' rows"),
    ("ch3", dict(measured_csv="{tmp}/binary.csv"), "measured_csv", "cannot be read as CSV"),
    ("ch3", dict(framework_csvs=["no/such/file.csv"]), "framework_csvs", "item 'no/such/file.csv': 'no/such/file.csv' not found"),
    ("ch3", dict(framework_csvs="data/measured/jax-cpu/ch3_phases.csv"), "framework_csvs", "expected a list"),
    ("ch3", dict(framework_csvs=[CH4_CSV]), "framework_csvs", "has no column 'model'"),
    ("ch3", dict(figures_dir="{tmp}/notes.txt"), "figures_dir", "is a file"),
    ("ch3", dict(machines=["nowhere"]), "machines", "neither a file nor one of"),
    ("ch3", dict(machines=[CH4_CSV]), "machines", "has no column 'model'"),
    ("ch3", dict(quick="yes"), "quick", "True or False"),
    ("ch3", dict(n_trian=50000), "n_trian", "not a parameter"),
    ("ch4", dict(n_fit=5000), "n_fit", "5000 + n_test 500 = 5500 rows asked for, but "
     "data/measured/pytorch-cpu/ch4_lenet5.csv has 1500 usable rows (status ok); lower n_fit/n_test"),
    ("ch4", dict(dataset="{tmp}/ch4_failed.csv"), "n_fit", "has 1100 usable rows (status ok)"),
    ("ch4", dict(n_fit=0), "n_fit", "integer >= 2"),
    ("ch4", dict(n_fit=900.0), "n_fit", "an integer"),
    ("ch4", dict(n_test=0), "n_test", "got 0"),
    ("ch4", dict(n_test=1), "n_test", "R²"),
    ("ch4", dict(split_seed=-1), "split_seed", "integer >= 0"),
    ("ch4", dict(split_seed=2 ** 32), "split_seed", "below 2**32"),
    ("ch4", dict(seeds=0), "seeds", "integer >= 1"),
    ("ch4", dict(seeds=True), "seeds", "an integer"),
    ("ch4", dict(sweep_seeds=0), "sweep_seeds", "integer >= 1"),
    ("ch4", dict(lam_l2=-1e-3), "lam_l2", "finite number >= 0"),
    ("ch4", dict(lam_l1=math.inf), "lam_l1", "finite number >= 0"),
    ("ch4", dict(lam_l2=math.nan), "lam_l2", "got nan"),
    ("ch4", dict(lams=()), "lams", "non-empty"),
    ("ch4", dict(lams=[1e-3, -1.0]), "lams", "item -1.0"),
    ("ch4", dict(lams=[0.0, 1e-3]), "lams", "> 0"),
    ("ch4", dict(lams=[1e-3, "big"]), "lams", "'big'"),
    ("ch4", dict(engine="foo"), "engine", "'varpro', 'thesis'"),
    ("ch4", dict(n_jobs=0), "n_jobs", "-1"),
    ("ch4", dict(dataset="missing.csv"), "dataset", "not found"),
    ("ch4", dict(framework_datasets=["missing.csv"]), "framework_datasets", "item 'missing.csv'"),
    ("ch4", dict(framework_datasets="data/measured/mxnet-cpu/ch4_lenet5.csv"), "framework_datasets", "a list"),
    ("ch4", dict(framework_datasets=[CH3_CSV]), "framework_datasets", "has no column"),
    ("ch4", dict(machine_datasets=["missing.csv"]), "machine_datasets", "item 'missing.csv'"),
    ("ch4", dict(machine_datasets=[CH3_CSV]), "machine_datasets", "has no column 'num_filters'"),
    ("ch4", dict(framework_datasets=["{tmp}/ch4_tiny.csv"]), "framework_datasets", "20 usable rows"),
    ("ch4", dict(dataset="data/measured"), "dataset", "is a folder"),
    ("ch4", dict(dataset=CH3_CSV), "dataset", "has no column"),
    ("ch4", dict(dataset=""), "dataset", "existing file"),
    ("ch4", dict(target="runtime"), "target", "is not a column of"),
    ("ch4", dict(target="activation"), "target", "is an input of the model"),
    ("ch4", dict(figures_dir="{tmp}/notes.txt"), "figures_dir", "is a file"),
    ("ch5", dict(n_fit=2000), "n_fit", "2000 + n_test 600 = 2600 rows asked for"),
    ("ch5", dict(n_test=-600), "n_test", "got -600"),
    ("ch5", dict(split_seed=-3), "split_seed", "integer >= 0"),
    ("ch5", dict(seeds=0), "seeds", "integer >= 1"),
    ("ch5", dict(lam=-0.5), "lam", "finite number >= 0"),
    ("ch5", dict(engine="de"), "engine", "'varpro', 'thesis'"),
    ("ch5", dict(n_jobs=-2), "n_jobs", "-1"),
    ("ch5", dict(dataset=CH4_CSV), "dataset", "has no column"),
    ("ch5", dict(target="step_run9"), "target", "is not a column of"),
    ("ch5", dict(volume_study="no/volume.csv"), "volume_study", '"" to skip section 4'),
    ("ch5", dict(volume_study=CH4_CSV), "volume_study", "has no column 'volume'"),
    ("ch5", dict(ch4_dataset="data"), "ch4_dataset", "is a folder"),
    ("ch5", dict(ch4_dataset="{tmp}/ch4_short.csv"), "n_fit", 'give ch4_dataset="" to skip the comparison'),
    ("ch5", dict(figures_dir="{tmp}/notes.txt"), "figures_dir", "is a file"),
    ("ch6", dict(datasets=["ch4", "ch7"]), "datasets", "item 'ch7'"),
    ("ch6", dict(datasets=[]), "datasets", "non-empty"),
    ("ch6", dict(datasets=["ch4", "ch4"]), "datasets", "repeats"),
    ("ch6", dict(ch4_dataset="no/such/file.csv"), "ch4_dataset", "not found"),
    ("ch6", dict(ch4_dataset="{tmp}/ch4_short.csv"), "ch4_dataset", "has 300 usable rows (status ok), fewer than"),
    ("ch6", dict(ch5_dataset=CH4_CSV), "ch5_dataset", "has no column"),
    ("ch6", dict(ch4_tensorflow_dataset="no/such/file.csv"), "ch4_tensorflow_dataset", "not found"),
    ("ch6", dict(ch4_mxnet_dataset="{tmp}/ch4_short.csv"), "ch4_mxnet_dataset", "has 300 usable rows (status ok), fewer than"),
    ("ch6", dict(ch4_chainer_dataset="{tmp}/ch4_short.csv"), "ch4_chainer_dataset", "fewer than the thesis's split of 333 + 167"),
    ("ch6", dict(ch4_jax_dataset="benchmarks"), "ch4_jax_dataset", "benchmarks"),
    ("ch6", dict(target="runtime"), "target", "is not a column of"),
    ("ch6", dict(split_seed=-1), "split_seed", "integer >= 0"),
    ("ch6", dict(split_seed=4294967296), "split_seed", "below 2**32"),
    ("ch6", dict(forms=["symbolic"]), "forms", "'symbolic'"),
    ("ch6", dict(forms=["hybrid"]), "forms", "leaves no form for lambda"),
    ("ch6", dict(cv=1), "cv", "integer >= 2"),
    ("ch6", dict(whatif_workers=[0, 1]), "whatif_workers", "item 0"),
    ("ch6", dict(extrap_results="benchmarks"), "extrap_results", "is a folder"),
    ("ch6", dict(n_jobs=0), "n_jobs", "-1"),
    ("ch6", dict(figures_dir="{tmp}/notes.txt"), "figures_dir", "is a file"),
    ("ch7", dict(fit_max_gpus=1), "fit_max_gpus", "integer >= 2"),
    ("ch7", dict(test_min_gpus=8), "test_min_gpus", "fit_max_gpus < test_min_gpus"),
    ("ch7", dict(test_min_gpus=65, test_max_gpus=70), "test_min_gpus", "Pollux's traces reach 64 GPUs"),
    ("ch7", dict(fit_max_gpus=2, test_min_gpus=32), "fit_max_gpus", "leave no inner split"),
    ("ch7", dict(test_max_gpus=16), "test_min_gpus", "test_min_gpus <= test_max_gpus"),
    ("ch7", dict(test_max_gpus=1.5), "test_max_gpus", "integer"),
    ("ch7", dict(coverage=1.0), "coverage", "(0, 1)"),
    ("ch7", dict(coverage=0.0), "coverage", "> 0"),
    ("ch7", dict(ch4_dataset="no/such/file.csv"), "ch4_dataset", "not found"),
    ("ch7", dict(ch4_fit_max_batch=0), "ch4_fit_max_batch", "integer >= 1"),
    ("ch7", dict(ch3_dataset="no/such/file.csv"), "ch3_dataset", "not found"),
    ("ch7", dict(ch3_fit_max_workers=0), "ch3_fit_max_workers", "integer >= 1"),
    ("ch7", dict(extrap_results="benchmarks"), "extrap_results", "is a folder"),
    ("ch7", dict(clusters_results="benchmarks"), "clusters_results", "is a folder"),
    ("ch7", dict(small_runs_results="benchmarks"), "small_runs_results", "is a folder"),
    ("ch7", dict(n_jobs=0), "n_jobs", "-1"),
    ("ch7", dict(figures_dir="{tmp}/notes.txt"), "figures_dir", "is a file"),
    ("ch8", dict(datasets=["lambda", "mlperf"]), "datasets", "item 'mlperf'"),
    ("ch8", dict(datasets=[]), "datasets", "non-empty list"),
    ("ch8", dict(datasets=["nvidia_dle"]), "datasets", "needs the study 'lambda' or 'lambda_fp16'"),
    ("ch8", dict(coverage=1.0), "coverage", "(0, 1)"),
    ("ch8", dict(coverage=-0.1), "coverage", "> 0"),
    ("ch8", dict(plan_model="gpt3"), "plan_model", "one of 'bert_base_squad'"),
    ("ch8", dict(plan_precision="int8"), "plan_precision", "one of 'fp16', 'fp32'"),
    ("ch8", dict(plan_epochs=0), "plan_epochs", "> 0"),
    ("ch8", dict(plan_dataset_size=0), "plan_dataset_size", "integer >= 1"),
    ("ch8", dict(plan_deadline_hours=-2.0), "plan_deadline_hours", "> 0"),
    ("ch8", dict(amortize_years=math.inf), "amortize_years", "finite number"),
    ("ch8", dict(n_jobs=0), "n_jobs", "-1"),
    ("ch8", dict(figures_dir="{tmp}/notes.txt"), "figures_dir", "is a file"),
]


def _fill(params, tmp):
    def fill(v):
        if isinstance(v, str):
            return v.format(tmp=tmp)
        return [fill(x) for x in v] if isinstance(v, list) else v

    return {k: fill(v) for k, v in params.items()}


def _ids():
    return [f"{ch}-{'-'.join(f'{k}={v!r}' for k, v in p.items())[:60]}" for ch, p, *_ in BAD]


@pytest.fixture
def no_analysis(monkeypatch):
    """Any step past the checks (reading the data for the analysis, fitting) fails the test."""
    import perfkit.data.measured as measured
    import perfkit.model.selection.fitting as fitting

    def reached(*args, **kwargs):
        raise AssertionError("the analysis started before the parameters were checked")

    for name in ("load_steps", "load_phases", "thesis_split"):
        monkeypatch.setattr(measured, name, reached)
    monkeypatch.setattr(fitting, "fit_repeated", reached)
    monkeypatch.setattr(ch4, "heldout_errors", reached)


@pytest.mark.parametrize("chapter, params, name, text", BAD, ids=_ids())
def test_bad_parameter_is_one_error_naming_it(chapter, params, name, text, param_files, no_analysis):
    module = MODULES[chapter]
    params = _fill(params, param_files)
    for call in (module.check_params, module.analyse):
        with pytest.raises(ParameterError) as info:
            call(**params)
        msg = str(info.value)
        assert isinstance(info.value, ValueError)
        assert msg.startswith(f"{name}: "), msg
        assert text in msg, msg
        assert "\n" not in msg, msg


def test_the_battery_covers_every_chapter_and_enough_parameters():
    assert len(BAD) >= 20
    for chapter, module in MODULES.items():
        named = {name for ch, _, name, _ in BAD if ch == chapter}
        fields = {f.name for f in dataclasses.fields(module.Params) if f.type not in ("bool", bool)}
        assert fields <= named, f"{chapter}: no bad-value case for {sorted(fields - named)}"


@pytest.mark.parametrize("chapter", list(MODULES))
def test_every_parameter_has_a_rule_and_the_defaults_pass_them(chapter):
    module = MODULES[chapter]
    params = module.Params
    for f in dataclasses.fields(params):
        assert f.name in params.CHECKS or f.type in ("bool", bool), f"{chapter}: {f.name} has no rule"
    assert set(params.CHECKS) <= {f.name for f in dataclasses.fields(params)}
    assert module.check_params() == params()
    assert module.check_params(**params().as_dict()) == params()


def test_rules_name_what_the_models_accept():
    from perfkit.model.analytic.equations import VARIANTS
    from perfkit.model.forms.generic import ENGINE_METHODS

    assert set(ch4.ENGINES) == set(ENGINE_METHODS)
    assert set(ch3.VARIANTS) == set(VARIANTS)


def test_good_values_pass(param_files):
    assert ch3.check_params(measured_csv="", n_train=1, speedup_variants=["paper"]).measured_csv == ""
    assert ch4.check_params(n_fit=900, n_test=600, lams=[1e-3], lam_l2=0, n_jobs=-1, engine="thesis",
                            target="step_time", figures_dir=str(param_files / "new")).n_fit == 900
    assert ch5.check_params(volume_study="", ch4_dataset="", lam=0.0).volume_study == ""
    p = ch4.check_params(lams=[1e-4, 1e-2])  # papermill passes lists for the tuple parameters
    assert list(p.lams) == [1e-4, 1e-2]


def test_quick_mode_may_scale_the_split_down():
    """Quick runs (tests, smoke runs on a partial collection) keep the old behaviour: the split shrinks."""
    assert ch4.check_params(quick=True, n_fit=5000).n_fit == 5000
    assert ch5.check_params(quick=True, n_fit=5000).n_fit == 5000
    with pytest.raises(ParameterError, match="n_fit"):
        ch4.check_params(quick=True, n_fit=0)


def test_analyse_takes_checked_params_and_checks_overrides(no_analysis):
    p = ch4.check_params(n_fit=900, n_test=600)
    with pytest.raises(ParameterError, match="^n_test: got 0"):
        ch4.analyse(p, n_test=0)
    with pytest.raises(ParameterError, match="^params: expected a perfkit.chapters.ch4.Params"):
        ch4.analyse({"n_fit": 900})
    with pytest.raises(ParameterError, match="^params: expected"):
        ch5.analyse(p)


def test_heldout_errors_checks_its_fit_name_and_parameters():
    with pytest.raises(ParameterError, match="^fit_name: got 'RF'"):
        ch4.heldout_errors("RF")
    with pytest.raises(ParameterError, match="^n_fit: 5000"):
        ch4.heldout_errors("DE+L2", n_fit=5000)


def test_parameter_error_renders_as_one_line_in_jupyter():
    err = ParameterError("n_fit: got 0; expected an integer >= 2")
    assert isinstance(err, ValueError)
    assert err._render_traceback_() == ["ParameterError: n_fit: got 0; expected an integer >= 2"]
    try:
        ch4.check_params(engine="foo")
    except ParameterError as exc:
        [line] = exc._render_traceback_()
        assert line.startswith("ParameterError: engine: got 'foo'")


def test_notebook_check_cell_passes_every_parameter(root):
    """The cell after ``parameters`` hands every notebook parameter to ``check_params``, which knows them all."""
    import papermill as pm

    for chapter, module in MODULES.items():
        path = nbs.notebook_path(chapter)
        cells = [dict(c, source="".join(c["source"]) if isinstance(c["source"], list) else c["source"])
                 for c in json.loads(path.read_text())["cells"]]
        i = next(k for k, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", []))
        check = cells[i + 1]
        assert check["cell_type"] == "code" and f"params = {chapter}.check_params(" in check["source"]
        names = set(pm.inspect_notebook(str(path)))
        assert names <= {f.name for f in dataclasses.fields(module.Params)}
        for name in names:
            assert re.search(rf"\b{name}={name}\b", check["source"]), f"{chapter}: {name} not checked"
        setup = next(c for c in cells if c.get("id") == "setup")
        assert f"{chapter}.analyse(params)" in setup["source"]


def test_reproduce_rejects_unknown_names_and_file_folders_before_running(tmp_path):
    with pytest.raises(ValueError, match="^parameters: 'n_fits' is not a parameter of the ch4 notebook"):
        nbs.reproduce(["ch4"], quick=True, build_dir=tmp_path / "b", parameters={"n_fits": 900})
    with pytest.raises(ValueError, match="^parameters: 'lams' is not a parameter of the ch5 notebook"):
        nbs.reproduce(["ch4", "ch5"], quick=True, build_dir=tmp_path / "b", parameters={"lams": [1e-3]})
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="^figures_dir: .* is a file"):
        nbs.reproduce(["ch4"], quick=True, build_dir=tmp_path / "b", figures_dir=str(tmp_path / "file"))
    with pytest.raises(ValueError, match="^build_dir: .* is a file"):
        nbs.reproduce(["ch4"], quick=True, build_dir=tmp_path / "file")
    with pytest.raises(ValueError, match="^chapter: unknown 'ch9'; known chapters: ch3, ch4, ch5"):
        nbs.reproduce(["ch4", "ch9"], quick=True, build_dir=tmp_path / "b")
    assert not (tmp_path / "b").exists()


def test_reproduce_with_a_bad_parameter_value_stops_before_any_notebook(tmp_path, capfd, monkeypatch):
    """``perfkit reproduce -p n_fit 0``: every chapter's check_params sees the values first: exit 2, one line naming
    the chapter and the parameter, no traceback, no notebook executed (a later chapter's bad value would otherwise
    surface only after the earlier chapters ran)."""
    from perfkit.cli import main

    def never(*a, **k):
        raise AssertionError("a notebook ran before the parameter values were checked")
    monkeypatch.setattr(nbs, "run_notebook", never)
    code = main(["reproduce", "--chapter", "ch4", "--quick", "--no-progress", "--build-dir", str(tmp_path / "b"),
                 "--figures-dir", str(tmp_path / "f"), "-p", "n_fit", "0"])
    out, err = capfd.readouterr()
    assert code == 2
    [line] = [ln for ln in err.splitlines() if ln.startswith("perfkit: error:")]
    assert line == "perfkit: error: ch4: n_fit: got 0; expected an integer >= 2", line
    assert "Traceback" not in out + err and "\x1b[" not in out + err
    with pytest.raises(ValueError, match=r"^ch7: coverage: got 2; expected a number in \(0, 1\)"):
        nbs.reproduce(["ch7"], quick=True, build_dir=tmp_path / "b", parameters={"coverage": 2})


@pytest.mark.slow
def test_a_notebook_given_a_bad_parameter_stops_in_its_check_cell(tmp_path):
    """The notebook checks its parameters itself (run by papermill without ``reproduce``): its check cell raises,
    one line naming notebook, cell and executed copy, and the copy's traceback is the one-line ParameterError."""
    with pytest.raises(nbs.NotebookError) as info:
        nbs.run_notebook(nbs.notebook_path("ch4"), build_dir=tmp_path / "b", progress=False,
                         parameters={"quick": True, "n_fit": 0, "figures_dir": str(tmp_path / "f")})
    line = str(info.value)
    assert line.startswith("notebook ch4_generic_model.ipynb failed in cell 3: ParameterError: "
                           "n_fit: got 0; expected an integer >= 2"), line
    assert str(tmp_path / "b" / "ch4_generic_model.ipynb") in line
    assert not (tmp_path / "f").exists() or not any((tmp_path / "f").rglob("*.png"))  # stopped before analyse
    executed = json.loads((tmp_path / "b" / "ch4_generic_model.ipynb").read_text())
    [error] = [o for c in executed["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
               if o["output_type"] == "error"]
    assert error["traceback"] == [f"ParameterError: {error['evalue']}"]


def test_cli_parameter_values_are_literals_or_text():
    from perfkit.cli import _literal

    assert _literal("900") == 900 and _literal("1e-3") == 1e-3 and _literal("True") is True
    assert _literal("[1e-3, 1e-2]") == [1e-3, 1e-2]
    assert _literal("data/my.csv") == "data/my.csv" and _literal("__import__('os')") == "__import__('os')"


def test_notebook_error_message_names_notebook_cell_and_copy(root):
    err = nbs.NotebookError(root / "notebooks" / "ch4_generic_model.ipynb", 3, "ParameterError", "n_fit: got 0",
                            root / "build" / "quick" / "ch4_generic_model.ipynb")
    assert isinstance(err, ValueError)
    assert str(err) == ("notebook ch4_generic_model.ipynb failed in cell 3: ParameterError: n_fit: got 0; the "
                        "executed copy with the full traceback is build/quick/ch4_generic_model.ipynb")


def test_a_cell_that_runs_too_long_is_one_error_not_a_hang(tmp_path, monkeypatch):
    """``make test`` sets PERFKIT_CELL_TIMEOUT: a kernel that stops answering fails the run instead of hanging it."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("import time\ntime.sleep(60)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "slow.ipynb"
    nbformat.write(nb, path)
    monkeypatch.setenv("PERFKIT_CELL_TIMEOUT", "3")
    with pytest.raises(nbs.NotebookError, match=r"slow.ipynb failed in cell \(still running\): CellTimeoutError: a "
                                                r"cell ran longer than 3 s"):
        nbs.run_notebook(path, build_dir=tmp_path / "out", progress=False)
    for bad in ("0", "soon", "nan"):
        monkeypatch.setenv("PERFKIT_CELL_TIMEOUT", bad)
        with pytest.raises(ValueError, match="PERFKIT_CELL_TIMEOUT: expected a number of seconds > 0"):
            nbs.run_notebook(path, build_dir=tmp_path / "out", progress=False)
    with pytest.raises(ValueError, match="cell_timeout: expected a number of seconds > 0"):
        nbs.run_notebook(path, build_dir=tmp_path / "out", progress=False, cell_timeout=-1)


@pytest.mark.parametrize("text, words", [("{not json", "is not a readable JSON file"),
                                         ("[1, 2]", "holds a JSON list, not an object"),
                                         ("[" * 100000 + "]" * 100000, "is not a readable JSON file")])
@pytest.mark.parametrize("chapter, name", [(ch6, "extrap_results"), (ch7, "extrap_results"),
                                           (ch7, "clusters_results"), (ch7, "small_runs_results")])
def test_a_damaged_results_file_is_refused_before_any_fit(tmp_path, text, words, chapter, name):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    with pytest.raises(ParameterError, match=rf"^{name}: .*{words}"):
        chapter.check_params(**{name: str(bad)}, **({"datasets": ["lambda"]} if chapter is ch6 else {}))


@pytest.mark.parametrize("chapter, kw", [(ch4, dict(lam_l2=np.float64(0.001), framework_datasets=())),
                                         (ch4, dict(lams=list(np.logspace(-6, 0, 4)), framework_datasets=())),
                                         (ch7, dict(coverage=np.float64(0.9))),
                                         (ch7, dict(fit_max_gpus=np.int64(16)))])
def test_numpy_numbers_are_numbers(chapter, kw):
    p = chapter.check_params(**kw)
    for name, value in kw.items():
        got = getattr(p, name)
        assert type(got) in (int, float, list, tuple) and np.allclose(np.asarray(got, float), np.asarray(value, float))


def test_a_figures_folder_that_cannot_be_created_is_refused(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ParameterError, match=r"figures_dir: .* cannot be created: .*afile' is a file"):
        ch7.check_params(figures_dir=str(tmp_path / "afile" / "figs"))
    with pytest.raises(ParameterError, match="figures_dir: .* holds a NUL character"):
        ch3.check_params(figures_dir="figs\x00x")


@pytest.mark.parametrize("kw, words", [
    (dict(target="workers", framework_datasets=()), "target: 'workers' is an input of the model"),
    (dict(framework_datasets=(CH4,)), "framework_datasets: .* names a file twice or the dataset itself"),
    (dict(framework_datasets=(TF4, TF4)), "framework_datasets: .* names a file twice or the dataset itself"),
    (dict(lam_l2=10 ** 400, framework_datasets=()), "lam_l2: got 1000"),
])
def test_chapter_4_refuses_a_target_that_is_an_input_and_a_file_twice(kw, words):
    with pytest.raises(ParameterError, match=words):
        ch4.check_params(**kw)


def test_path_rules_say_they_hold_paths():
    from perfkit.chapters.result import at_least, existing_file, existing_files, output_folder, path_kind

    assert [path_kind(c) for c in (existing_file("x"), existing_files("x"), output_folder("x"), at_least(1))] == \
        ["file", "files", "folder", ""]
    verdict = existing_file("a table").test("/dev/zero")
    assert isinstance(verdict, str) and "not a regular file" in verdict
    assert json.dumps(output_folder("x").test("/dev/null")) == json.dumps("'/dev/null' is a file")
