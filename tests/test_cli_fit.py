"""`perfkit fit` (and `perfkit predict` after it) on a user's CSV: each bad input is one ``perfkit: error:`` line
naming the flag, file, column or row at fault, found before the first fit; an output never replaces a file the
command did not write; the model is saved even when the report fails."""
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from perfkit.cli import main
from tests.cli import EXACT_FIT as FIT, POLLUX_STEP as STEP, one_error, one_error_line, run_cli, write_frame as _write
from tests.frames import exact_data, generic_data as _data


def _run(capsys, *args):
    """``perfkit ARGS`` in this process: exit code, stdout and stderr."""
    code = main(list(args))
    out = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)


def test_fit_then_predict(capsys, tmp_path):
    X, y = _data(n=150)
    X.assign(time=y).to_csv(tmp_path / "data.csv", index=False)
    X.head(4).to_csv(tmp_path / "configs.csv", index=False)
    out = _run(capsys, "fit", str(tmp_path / "data.csv"), "--target", "time", "--numeric", "kernel,filters",
               "--categorical", "act", "--extrinsic", "gpus,batch", "--penalty", "l2", "--lam", "1e-4",
               "--seeds", "2", "--test-size", "0.3", "--out", str(tmp_path / "m.json"))
    assert out.returncode == 0, out.stderr
    assert "generic model" in out.stdout and "random forest" in out.stdout and "MAPE" in out.stdout
    assert "every seed gave these parameters (mean ± std over the 2 seeds: std 0" in out.stdout  # one table
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["settings"]["penalty"] == "l2" and doc["settings"]["lam"] == 1e-4
    pred = _run(capsys, "predict", str(tmp_path / "m.json"), str(tmp_path / "configs.csv"),
                "--out", str(tmp_path / "p.csv"))
    assert pred.returncode == 0, pred.stderr
    p = pd.read_csv(tmp_path / "p.csv")
    assert len(p) == 4 and (p["predicted"] > 0).all()


def test_fit_errors_name_the_column(capsys, tmp_path):
    X, y = _data(n=60)
    X.assign(time=y).to_csv(tmp_path / "data.csv", index=False)
    out = _run(capsys, "fit", str(tmp_path / "data.csv"), "--target", "tme", "--numeric", "kernel")
    assert out.returncode == 2 and "target column 'tme' not found; did you mean 'time'" in out.stderr
    out = _run(capsys, "fit", str(tmp_path / "data.csv"), "--target", "time", "--numeric", "kernal")
    assert out.returncode == 2 and "'kernal'" in out.stderr and "did you mean 'kernel'" in out.stderr
    out = _run(capsys, "predict", str(tmp_path / "nope.json"), str(tmp_path / "data.csv"))
    assert out.returncode == 2 and "nope.json" in out.stderr


def test_a_phase_longer_than_its_step_is_named_before_any_fit(pollux_fit, capsys):
    bad = pollux_fit.frame.copy()
    bad.loc[7, "sync_time"] = 3 * bad.loc[7, "t_iter"]
    one_error(run_cli(capsys, "fit", _write(pollux_fit, "phase.csv", bad), "--target", "t_iter", "--form", "phases",
                      "--phases", "sync_time", *STEP, "--out", pollux_fit.dir / "x.json"),
              r"--phases column 'sync_time': value [\d.]+ in row 7 is more than the row's --target 't_iter'")


@pytest.mark.parametrize("args, words", [
    (["--form", "pollux", *STEP, "--extrapolate", "sync_time"], r"--extrapolate sync_time: column 'sync_time' is "
                                                                r"not one the model reads"),
    (["--numeric", "n_gpus,batch_per_gpu", "--calibrate", "--extrapolate", "n_nodes:4", "--seeds", "1"],
     r"--extrapolate n_nodes:4: column 'n_nodes' is not one the model reads \(it reads 'n_gpus', 'batch_per_gpu'\)"),
])
def test_extrapolating_along_a_column_the_model_does_not_read_is_refused(pollux_fit, capsys, args, words):
    one_error(run_cli(capsys, "fit", pollux_fit.base, "--target", "t_iter", *args, "--out", pollux_fit.dir / "x.json"), words)


@pytest.mark.parametrize("args, words", [
    (["--form", "pollux", *STEP, "--cv", "120"], r"--cv 120: the intervals need cv = 120 rows to fit, and the data "
                                                 r"has 120 rows"),
    (["--form", "auto", "--numeric", "batch_per_gpu", "--extrinsic", "n_gpus,n_nodes", "--cv", "50",
      "--extrapolate", "n_gpus:12"],
     r"--extrapolate n_gpus:12 leaves 94 rows to fit; the fit needs at least 100 \(--cv 50: the form search needs "
     r"2·cv = 100\)"),
])
def test_too_many_folds_blame_cv_not_the_split(pollux_fit, capsys, args, words):
    one_error(run_cli(capsys, "fit", pollux_fit.base, "--target", "t_iter", *args, "--out", pollux_fit.dir / "x.json"), words)


@pytest.mark.parametrize("out, words", [("models/", r"--out '.*models/': a path ending in / names a folder"),
                                        ("keep.json/", r"--out '.*keep.json/': a path ending in / names a folder")])
def test_an_out_path_ending_in_a_slash_is_refused(pollux_fit, capsys, out, words):
    (pollux_fit.dir / "keep.json").write_text('{"my": "earlier model"}')
    one_error(run_cli(capsys, "fit", pollux_fit.base, "--target", "t_iter", "--form", "pollux", *STEP, "--out",
                      f"{pollux_fit.dir}/{out}"), words)
    assert (pollux_fit.dir / "keep.json").read_text() == '{"my": "earlier model"}' and not (pollux_fit.dir / "models").exists()


def test_an_out_that_holds_other_data_is_never_replaced(pollux_fit, capsys):
    other = _write(pollux_fit, "other_measurements.csv", pollux_fit.frame)
    before = other.read_bytes()
    one_error(run_cli(capsys, "fit", pollux_fit.base, "--target", "t_iter", "--form", "pollux", *STEP, "--out", other),
              r"--out '.*other_measurements.csv' exists and is not a model JSON that perfkit wrote; perfkit would "
              r"replace it")
    one_error(run_cli(capsys, "predict", pollux_fit.model, pollux_fit.base, "--out", other),
              r"--out '.*other_measurements.csv' exists and is not a table perfkit wrote \(a CSV with a 'predicted' "
              r"column\)")
    one_error(run_cli(capsys, "whatif", pollux_fit.model, "--base", pollux_fit.base, "--vary", "n_gpus=4,8", "--out", other),
              r"--out '.*other_measurements.csv' exists and is not a table perfkit wrote")
    assert other.read_bytes() == before
    # its own outputs are replaced as before
    again = pollux_fit.dir / "again.json"
    for _ in range(2):
        assert run_cli(capsys, "fit", pollux_fit.base, "--target", "t_iter", "--form", "pollux", *STEP, "--out",
                       again).code == 0
    for _ in range(2):
        assert run_cli(capsys, "predict", pollux_fit.model, pollux_fit.base, "--out", pollux_fit.dir / "again.csv").code == 0


def test_an_inflation_that_would_give_infinite_intervals_is_refused(pollux_fit, capsys):
    one_error(run_cli(capsys, "fit", pollux_fit.base, "--target", "t_iter", "--form", "pollux", *STEP, "--extrapolate",
                      "n_gpus:12", "--inflation", "1e300", "--out", pollux_fit.dir / "x.json"),
              r"--inflation: expected a number > 0 and at most 100")


@pytest.mark.parametrize("command", ["fit", "predict", "whatif"])
def test_a_header_without_rows_is_named(pollux_fit, capsys, command):
    hdr = pollux_fit.dir / "hdr.csv"
    hdr.write_text("job,n_gpus,n_nodes,batch_per_gpu,t_iter,sync_time\n")
    args = {"fit": ["fit", hdr, "--target", "t_iter", "--form", "pollux", *STEP, "--out", pollux_fit.dir / "x.json"],
            "predict": ["predict", pollux_fit.model, hdr],
            "whatif": ["whatif", pollux_fit.model, "--base", hdr, "--vary", "n_gpus=4,8"]}[command]
    one_error(run_cli(capsys, *args), r"CSV '.*hdr.csv' has a header but no data rows")


@pytest.mark.parametrize("args, words", [
    (["--form", "pollux", *STEP, "--extrapolate", "n_gpus:12", "--intervals", "split"],
     r"--intervals split: with --extrapolate the intervals are calibrated on inner extrapolation splits"),
    (["--numeric", "n_gpus,batch_per_gpu", "--intervals", "cv+", "--seeds", "1"],
     r"--intervals cv\+: --form thesis calibrates intervals only with --calibrate"),
])
def test_an_intervals_flag_that_would_be_ignored_is_refused(pollux_fit, capsys, args, words):
    one_error(run_cli(capsys, "fit", pollux_fit.base, "--target", "t_iter", *args, "--out", pollux_fit.dir / "x.json"), words)


def test_messages_name_the_role_once_and_warnings_are_perfkit_lines(pollux_fit, capsys):
    bad = pollux_fit.frame.astype({"n_gpus": object})
    bad.loc[4, "n_gpus"] = "two"
    one_error(run_cli(capsys, "fit", _write(pollux_fit, "two.csv", bad), "--target", "t_iter", "--form", "pollux", *STEP,
                      "--out", pollux_fit.dir / "x.json"), r"^perfkit: error: gpus column 'n_gpus': non-numeric value "
                                                      r"'two' in row 4")
    r = run_cli(capsys, "fit", pollux_fit.base, "--target", "t_iter", "--form", "pollux", *STEP, "--out",
                pollux_fit.dir / "w.json")
    assert r.code == 0
    assert all(line.startswith(("perfkit: warning:", "perfkit: note:", "[perfkit]")) or not line.strip()
               for line in r.err.splitlines()), r.err


def test_cli_names_a_header_with_spaces_exactly(capsys, tmp_path):
    from perfkit.cli import main

    (tmp_path / "d.csv").write_text("kernel, gpus, time\n1,1,1.0\n2,1,2.0\n4,2,2.0\n8,2,4.0\n")
    code = main(["fit", str(tmp_path / "d.csv"), "--target", "time", "--numeric", "kernel", "--seeds", "1",
                 "--out", str(tmp_path / "m.json")])
    err = capsys.readouterr().err
    assert code == 2 and not (tmp_path / "m.json").exists()
    assert err.strip() == ("perfkit: error: target column 'time' not found: the table's column is ' time', with spaces "
                           "around the name (a header with a space after a comma gives such names); remove the spaces "
                           "from the header, or give the name exactly as ' time' (a comma-separated list of names "
                           "drops them)")


def test_na_is_a_level_from_the_command_line(tmp_path, capsys):
    """A categorical level spelt ``NA`` is missing by default (one error that names the flag) and a level with
    ``--na-is-level``, at fit and at predict."""
    from perfkit.cli import main

    rng = np.random.default_rng(0)
    n = 60
    x = rng.choice([1.0, 2.0, 4.0, 8.0], n)
    c = rng.choice(["NA", "b"], n)
    pd.DataFrame({"x": x, "c": c, "time": 0.01 * x ** 0.7 + 0.002 * (c == "b") + 0.001}).to_csv(
        tmp_path / "data.csv", index=False)
    pd.DataFrame({"x": [2.0, 4.0], "c": ["NA", "b"]}).to_csv(tmp_path / "configs.csv", index=False)
    fit = ["fit", str(tmp_path / "data.csv"), "--target", "time", "--numeric", "x", "--categorical", "c",
           "--seeds", "1", "--test-size", "10", "--out", str(tmp_path / "m.json")]
    assert main(fit) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'c'" in err and "--na-is-level" in err
    assert main(fit + ["--na-is-level"]) == 0
    capsys.readouterr()
    out = tmp_path / "p.csv"
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "configs.csv"), "--na-is-level",
                 "--out", str(out)]) == 0
    pred = pd.read_csv(out, keep_default_na=False)
    assert list(pred["c"]) == ["NA", "b"] and np.all(pd.to_numeric(pred["predicted"]) > 0)


def _bool_levels(d):
    X, y = exact_data()
    X.assign(c=X["c"] == "a", time=y).to_csv(d / "bool.csv", index=False)
    return d / "bool.csv"


def _constant_target(d):
    X, _ = exact_data()
    X.assign(time=0.25).to_csv(d / "const.csv", index=False)
    return d / "const.csv"


BEFORE_FIT = [
    ("test-size-1-row", lambda d: [d / "data.csv", *FIT, "--test-size", "1"],
     ["--test-size 1: holds out 1 of the 40 rows", "at least 2 held-out rows", "from 2 to 38"]),
    ("test-size-tiny-share", lambda d: [d / "data.csv", *FIT, "--test-size", "0.001"],
     ["--test-size 0.001: holds out 1 of the 40 rows", "at least 2 held-out rows"]),
    ("test-size-leaves-too-few-for-cv", lambda d: [d / "data.csv", *FIT[:-2], "--form", "loglinear", "--test-size", "37"],
     ["--test-size 37: holding out 37 of the 40 rows leaves 3 to fit; the fit needs at least 5"]),
    ("test-size-too-few-for-calibrate", lambda d: [d / "data.csv", *FIT, "--calibrate", "--cv", "4",
                                                   "--test-size", "0.95"],
     ["holding out 38 of the 40 rows leaves 2 to fit; the fit needs at least 4"]),
    ("constant-target", lambda d: [_constant_target(d), *FIT],
     ["target column 'time' is constant (every row is 0.25)"]),
    ("bool-levels", lambda d: [_bool_levels(d), *FIT],
     ["categorical column 'c': level", "cannot be saved in the model's JSON"]),
]


@pytest.mark.parametrize("name, args, texts", BEFORE_FIT, ids=[c[0] for c in BEFORE_FIT])
def test_fit_checks_the_inputs_before_the_first_fit(capsys, exact_csv, name, args, texts):
    r = run_cli(capsys, "fit", *args(exact_csv), "--out", exact_csv / "m.json")
    one_error_line(r, *texts)
    assert "fitting" not in r.out and "seed 1/" not in r.err, "a fit ran before the check"
    assert not (exact_csv / "m.json").exists()


def test_constant_held_out_target_is_refused_before_fitting():
    from perfkit.study.data import check_target_spread

    with pytest.raises(ValueError, match=r"on the 2 held-out rows is constant \(every row is 3\).*another --test-size"):
        check_target_spread(pd.Series([3.0, 3.0]), "target column 't' on the 2 held-out rows",
                            hint="; give another --test-size")
    check_target_spread(pd.Series([3.0, 4.0]), "t")


def test_a_fit_whose_report_fails_still_saves_the_model(capsys, exact_csv, monkeypatch):
    from perfkit.model.forms.generic import GenericPerformanceModel
    from perfkit.study import compare

    def broken(*a, **k):
        raise ValueError("R2: undefined on these rows")

    monkeypatch.setattr(compare, "compare_models", broken)
    r = run_cli(capsys, "fit", exact_csv / "data.csv", *FIT, "--out", exact_csv / "m.json")
    one_error_line(r, "R2: undefined on these rows", f"the fitted model is saved in {exact_csv / 'm.json'}")
    model = GenericPerformanceModel.from_json(exact_csv / "m.json")
    X, _ = exact_data()
    assert np.isfinite(model.predict(X.head(3))).all()


@pytest.mark.parametrize("args, words", [
    (["--form", "pollux", *STEP, "--seeds", "3"],
     r"--seeds 3: the repeated fits from several seeds belong to --form thesis, not --form pollux \(fitted once\)"),
    (["--numeric", "n_gpus,batch_per_gpu", "--cv", "10"],
     r"--cv 10: this study fits no folds \(--form thesis calibrates no intervals without --calibrate\)"),
    (["--form", "pollux", *STEP, "--cv", "10", "--extrapolate", "n_gpus:12"],
     r"--cv 10: this study fits no folds \(with --extrapolate the intervals are calibrated on inner extrapolation"),
    (["--form", "auto", *STEP, "--cv", "10"],
     r"--cv 10: this study fits no folds \(a scaling study \(--scale-of n_gpus\) scores on inner extrapolation"),
    (["--form", "auto", *STEP, "--no-reference"],
     r"--no-reference: not read here \(a scaling study with the step columns searches the step forms\)"),
    (["--form", "auto", *STEP, "--network", "lenet5"], r"--network: not read here \(a scaling study"),
    (["--form", "auto", *STEP, "--numeric", "batch_per_gpu"],
     r"--numeric/--categorical/--extrinsic: not read here \(a scaling study with the step columns searches the step "
     r"forms, which read only --gpus, --nodes and --batch\)"),
    (["--numeric", "n_gpus,batch_per_gpu", "--penalty", "l1"],
     r"--penalty l1 needs --lam > 0 \(its weight; with 0 the penalty does nothing\)"),
])
def test_a_setting_this_study_never_reads_is_refused_not_ignored(pollux_fit, capsys, args, words):
    one_error(run_cli(capsys, "fit", pollux_fit.base, "--target", "t_iter", *args, "--out", pollux_fit.dir / "x.json"),
              words)


def test_settings_no_cli_flag_reaches_are_refused_where_unread():
    from perfkit.study import FitSpec

    step = dict(target="t", gpus="g", nodes="n", batch="b")
    with pytest.raises(ValueError, match=r"^baselines: not read in a scaling study \(scale_of g\)"):
        FitSpec(form="auto", baselines=["svr"], **step)
    with pytest.raises(ValueError, match=r"^level=0.5: no held-out interval is scored here \(a scaling study"):
        FitSpec(form="pollux", scale_of="g", level=0.5, **step)
    with pytest.raises(ValueError, match=r"^intervals='cv\+': not with split group:gpu, whose intervals are "):
        FitSpec(target="t", form="loglinear", hardware="gpu", split="group:gpu", intervals="cv+")
    with pytest.raises(ValueError, match=r"^fixed: not read here \(split group:gpu searches the roofline"):
        FitSpec(target="t", form="auto", hardware="gpu", split="group:gpu", fixed={"stride": 2})
    with pytest.raises(ValueError, match=r"^baselines: expected at least one kind \(leave it out for the default\)"):
        FitSpec(target="t", numeric="x", baselines=[])
    with pytest.raises(ValueError, match=r"^baselines: expected at least one kind here \(split group:gpu compares"):
        FitSpec(target="t", form="loglinear", numeric="x", split="group:gpu", baselines=[])
    assert FitSpec(target="t", form="roofline", hardware="gpu", split="group:gpu", baselines=[]).baselines == ()
    # where they are read they are taken
    assert FitSpec(target="t", numeric="x", calibrate=True, cv=10).reads_cv
    assert FitSpec(form="pollux", cv=3, **step).cv == 3 and FitSpec(target="t", numeric="x", seeds=3).seeds == 3
