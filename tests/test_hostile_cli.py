"""A third hostile trial of the command line (fit, predict, whatif) on the newest flags: each bad input is one
``perfkit: error:`` line naming the flag, file, column or row at fault, an output never replaces a file the command
did not write, and no output mixes two models' numbers."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tests.cli import one_error, run_cli

STEP = ["--gpus", "n_gpus", "--nodes", "n_nodes", "--batch", "batch_per_gpu", "--jobs", "1"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """120 of Pollux's cifar10 rows (with the measured sync_time), a pollux model fitted on them."""
    from perfkit.cli import main
    from perfkit.data import load_pollux

    d = tmp_path_factory.mktemp("hostile_cli")
    job = load_pollux().query("job == 'cifar10'")[["job", "n_gpus", "n_nodes", "batch_per_gpu", "t_iter",
                                                   "sync_time"]]
    base = job.sample(120, random_state=1).sort_values(["n_gpus", "batch_per_gpu"]).reset_index(drop=True)
    base.to_csv(d / "base.csv", index=False)
    assert main(["fit", str(d / "base.csv"), "--target", "t_iter", "--form", "pollux", *STEP,
                 "--out", str(d / "m.json")]) == 0
    return SimpleNamespace(dir=d, base=d / "base.csv", frame=base, model=d / "m.json")


def _write(files, name, frame):
    frame.to_csv(files.dir / name, index=False)
    return files.dir / name


def test_a_phase_longer_than_its_step_is_named_before_any_fit(files, capsys):
    bad = files.frame.copy()
    bad.loc[7, "sync_time"] = 3 * bad.loc[7, "t_iter"]
    one_error(run_cli(capsys, "fit", _write(files, "phase.csv", bad), "--target", "t_iter", "--form", "phases",
                      "--phases", "sync_time", *STEP, "--out", files.dir / "x.json"),
              r"--phases column 'sync_time': value [\d.]+ in row 7 is more than the row's --target 't_iter'")


@pytest.mark.parametrize("args, words", [
    (["--form", "pollux", *STEP, "--extrapolate", "sync_time"], r"--extrapolate sync_time: column 'sync_time' is "
                                                                r"not one the model reads"),
    (["--numeric", "n_gpus,batch_per_gpu", "--calibrate", "--extrapolate", "n_nodes:4", "--seeds", "1"],
     r"--extrapolate n_nodes:4: column 'n_nodes' is not one the model reads \(it reads 'n_gpus', 'batch_per_gpu'\)"),
])
def test_extrapolating_along_a_column_the_model_does_not_read_is_refused(files, capsys, args, words):
    one_error(run_cli(capsys, "fit", files.base, "--target", "t_iter", *args, "--out", files.dir / "x.json"), words)


@pytest.mark.parametrize("args, words", [
    (["--form", "pollux", *STEP, "--cv", "120"], r"--cv 120: the intervals need cv = 120 rows to fit, and the data "
                                                 r"has 120 rows"),
    (["--form", "pollux", *STEP, "--cv", "100", "--extrapolate", "n_gpus:12"],
     r"--extrapolate n_gpus:12 leaves 94 rows to fit; the fit needs at least 100 \(--cv 100"),
])
def test_too_many_folds_blame_cv_not_the_split(files, capsys, args, words):
    one_error(run_cli(capsys, "fit", files.base, "--target", "t_iter", *args, "--out", files.dir / "x.json"), words)


def test_an_earlier_predictions_columns_are_replaced_not_mixed(files, capsys):
    r = run_cli(capsys, "predict", files.model, files.base, "--interval", "0.9", "--out", files.dir / "p1.csv")
    assert r.code == 0, r.err
    r = run_cli(capsys, "predict", files.model, files.dir / "p1.csv", "--out", files.dir / "p2.csv")
    assert r.code == 0 and "has the output columns predicted, lower, upper, extrapolated" in r.err, r.err
    out = pd.read_csv(files.dir / "p2.csv")
    assert "lower" not in out.columns and "upper" not in out.columns  # no interval beside another prediction
    assert np.allclose(out["predicted"], pd.read_csv(files.dir / "p1.csv")["predicted"])


@pytest.mark.parametrize("out, words", [("models/", r"--out '.*models/': a path ending in / names a folder"),
                                        ("keep.json/", r"--out '.*keep.json/': a path ending in / names a folder")])
def test_an_out_path_ending_in_a_slash_is_refused(files, capsys, out, words):
    (files.dir / "keep.json").write_text('{"my": "earlier model"}')
    one_error(run_cli(capsys, "fit", files.base, "--target", "t_iter", "--form", "pollux", *STEP, "--out",
                      f"{files.dir}/{out}"), words)
    assert (files.dir / "keep.json").read_text() == '{"my": "earlier model"}' and not (files.dir / "models").exists()


def test_an_out_that_holds_other_data_is_never_replaced(files, capsys):
    other = _write(files, "other_measurements.csv", files.frame)
    before = other.read_bytes()
    one_error(run_cli(capsys, "fit", files.base, "--target", "t_iter", "--form", "pollux", *STEP, "--out", other),
              r"--out '.*other_measurements.csv' exists and is not a model JSON that perfkit wrote; perfkit would "
              r"replace it")
    one_error(run_cli(capsys, "predict", files.model, files.base, "--out", other),
              r"--out '.*other_measurements.csv' exists and is not a table perfkit wrote \(a CSV with a 'predicted' "
              r"column\)")
    one_error(run_cli(capsys, "whatif", files.model, "--base", files.base, "--vary", "n_gpus=4,8", "--out", other),
              r"--out '.*other_measurements.csv' exists and is not a table perfkit wrote")
    assert other.read_bytes() == before
    # its own outputs are replaced as before
    again = files.dir / "again.json"
    for _ in range(2):
        assert run_cli(capsys, "fit", files.base, "--target", "t_iter", "--form", "pollux", *STEP, "--out",
                       again).code == 0
    for _ in range(2):
        assert run_cli(capsys, "predict", files.model, files.base, "--out", files.dir / "again.csv").code == 0


def test_an_inflation_that_would_give_infinite_intervals_is_refused(files, capsys):
    one_error(run_cli(capsys, "fit", files.base, "--target", "t_iter", "--form", "pollux", *STEP, "--extrapolate",
                      "n_gpus:12", "--inflation", "1e300", "--out", files.dir / "x.json"),
              r"--inflation: expected a number > 0 and at most 100")


def test_an_interval_that_overflows_names_the_row(files, capsys):
    assert run_cli(capsys, "fit", files.base, "--target", "t_iter", "--form", "pollux", *STEP, "--extrapolate",
                   "n_gpus:12", "--out", files.dir / "scale.json").code == 0
    far = _write(files, "far.csv", pd.DataFrame({"n_gpus": [1e300], "n_nodes": [2], "batch_per_gpu": [64]}))
    one_error(run_cli(capsys, "predict", files.dir / "scale.json", far, "--interval", "0.9"),
              r"X: the (prediction|interval) for row 0 is not a finite time > 0")


def test_an_empty_cell_of_the_base_row_names_the_file_and_row(files, capsys):
    b = files.frame.head(6).copy()
    b.loc[2, "batch_per_gpu"] = np.nan
    one_error(run_cli(capsys, "whatif", files.model, "--base", _write(files, "b.csv", b), "--row", "2", "--vary",
                      "n_gpus=4,8"), r"--base CSV '.*b.csv', row 2 \(--row\): column 'batch_per_gpu' is empty")


@pytest.mark.parametrize("command", ["fit", "predict", "whatif"])
def test_a_header_without_rows_is_named(files, capsys, command):
    hdr = files.dir / "hdr.csv"
    hdr.write_text("job,n_gpus,n_nodes,batch_per_gpu,t_iter,sync_time\n")
    args = {"fit": ["fit", hdr, "--target", "t_iter", "--form", "pollux", *STEP, "--out", files.dir / "x.json"],
            "predict": ["predict", files.model, hdr],
            "whatif": ["whatif", files.model, "--base", hdr, "--vary", "n_gpus=4,8"]}[command]
    one_error(run_cli(capsys, *args), r"CSV '.*hdr.csv' has a header but no data rows")


def test_a_base_file_whose_name_has_an_equals_sign_is_read_as_a_file(files, capsys):
    path = files.dir / "run=1.txt"
    files.frame.head(3)[["job", "n_gpus", "n_nodes", "batch_per_gpu"]].to_csv(path, index=False)
    r = run_cli(capsys, "whatif", files.model, "--base", path, "--vary", "n_gpus=4,8")
    assert r.code == 0 and "speedup" in r.out, r.err


@pytest.mark.parametrize("args, words", [
    (["--form", "pollux", *STEP, "--extrapolate", "n_gpus:12", "--intervals", "split"],
     r"--intervals split: with --extrapolate the intervals are calibrated on inner extrapolation splits"),
    (["--numeric", "n_gpus,batch_per_gpu", "--intervals", "cv+", "--seeds", "1"],
     r"--intervals cv\+: --form thesis calibrates intervals only with --calibrate"),
])
def test_an_intervals_flag_that_would_be_ignored_is_refused(files, capsys, args, words):
    one_error(run_cli(capsys, "fit", files.base, "--target", "t_iter", *args, "--out", files.dir / "x.json"), words)


def test_messages_name_the_role_once_and_warnings_are_perfkit_lines(files, capsys):
    bad = files.frame.astype({"n_gpus": object})
    bad.loc[4, "n_gpus"] = "two"
    one_error(run_cli(capsys, "fit", _write(files, "two.csv", bad), "--target", "t_iter", "--form", "pollux", *STEP,
                      "--out", files.dir / "x.json"), r"^perfkit: error: gpus column 'n_gpus': non-numeric value "
                                                      r"'two' in row 4")
    r = run_cli(capsys, "fit", files.base, "--target", "t_iter", "--form", "pollux", *STEP, "--out",
                files.dir / "w.json")
    assert r.code == 0
    assert all(line.startswith(("perfkit: warning:", "perfkit: note:", "[perfkit]")) or not line.strip()
               for line in r.err.splitlines()), r.err
