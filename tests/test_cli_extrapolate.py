"""Measure small, predict large: `perfkit fit --extrapolate COL[:MAX]`, `--phases`, the step forms (`--form
pollux|phases` with `--gpus/--nodes/--batch`), selection by inner extrapolation splits, and intervals that widen
with the distance beyond the fitted maximum (perfkit.model.uncertainty.scale_intervals)."""
import json
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from perfkit.model import persist
from perfkit.model.uncertainty.conformal import ExtrapolationWarning
from perfkit.model.persist import load_model
from perfkit.model.uncertainty.scale_intervals import ScaleIntervalModel, default_fit_max, inner_splits
from perfkit.model.selection.search import search_forms
from perfkit.model.forms.stepmodels import PhaseAwareStepModel, PolluxStepModel
from tests.frames import generic_data as _data
from tests.cli import one_error as _one_error, run_cli as _run

STEP = ["--gpus", "n_gpus", "--nodes", "n_nodes", "--batch", "batch_per_gpu"]
SYN = ["--target", "time", "--numeric", "kernel", "--categorical", "act", "--extrinsic", "gpus,batch"]


def test_the_saved_extrapolation_model_is_a_registered_format():
    assert persist.WRAPPER_FORMATS["perfkit.ScaleIntervalModel"] == ("uncertainty.scale_intervals", "ScaleIntervalModel")


@pytest.fixture(scope="module")
def scale_files(tmp_path_factory):
    """One Pollux job (cifar10: 1512 rows, 1-64 GPUs) and a small synthetic table (160 rows, 1-32 GPUs)."""
    from perfkit.data import load_pollux

    d = tmp_path_factory.mktemp("extrapolate")
    job = load_pollux().query("job == 'cifar10'").reset_index(drop=True)
    job[["n_gpus", "n_nodes", "batch_per_gpu", "sync_time", "t_iter"]].to_csv(d / "pollux.csv", index=False)
    pd.DataFrame({"n_gpus": [8, 16, 32, 64], "n_nodes": [2, 4, 8, 16], "batch_per_gpu": [64] * 4}).to_csv(
        d / "configs.csv", index=False)
    rng = np.random.default_rng(0)
    n = 160
    g = rng.choice([1, 2, 4, 8, 16, 32], n).astype(float)
    k, b = rng.choice([2.0, 3.0, 4.0, 5.0], n), rng.choice([16.0, 32.0, 64.0], n)
    act = rng.choice(["relu", "tanh"], n)
    t = ((0.5 * k ** 1.2 + 1 + (act == "tanh")) * g ** -0.8 * b ** 0.9 * 0.01 + 0.05) * (
        1 + 0.03 * rng.standard_normal(n))
    syn = pd.DataFrame(dict(kernel=k, act=act, gpus=g, nodes=np.ceil(g / 4), batch=b, sync_time=0.02 * np.log(g),
                            time=t))
    syn.to_csv(d / "syn.csv", index=False)
    return SimpleNamespace(dir=d, pollux=d / "pollux.csv", configs=d / "configs.csv", syn=d / "syn.csv", frame=syn)


def _bad(scale_files, name, change):
    """The synthetic CSV with ``change(frame)`` applied, written to ``name``."""
    frame = scale_files.frame.copy()
    change(frame)
    frame.to_csv(scale_files.dir / name, index=False)
    return scale_files.dir / name


# ------------------------------------------------------------------------------ happy paths
def test_phases_form_extrapolates_and_its_intervals_widen(capsys, scale_files):
    out = scale_files.dir / "phases.json"
    r = _run(capsys, "fit", scale_files.pollux, "--target", "t_iter", "--form", "phases", *STEP, "--phases", "sync_time",
             "--extrapolate", "n_gpus:16", "--out", out)
    assert r.code == 0, r.err
    assert "--phases sync_time: the phases form is fitted with it" in r.out
    assert "held out (n_gpus > 16)" in r.out and "by factor n_gpus / 16" in r.out
    table = r.out.split("by factor n_gpus / 16:")[1]
    for row in ("2×", "4×", "all"):
        assert re.search(rf"^\s*{row}\s", table, re.M), table
    assert "random forest" in table and "gradient boosting" in table
    # what the fit rows alone say: the form and the baselines on the inner splits, scored from the fit rows only
    line = re.search(r"inner splits of the fit rows \(extrapolating within them, the rows beyond MAX unseen\): MAPE "
                     r"\(%\) phases model ([\d.]+), random forest ([\d.]+), gradient boosting ([\d.]+)", r.out)
    assert line, r.out
    frame = pd.read_csv(scale_files.pollux)
    fit = frame[frame.n_gpus <= 16]
    from perfkit.study.compare import inner_comparison
    from perfkit.model.selection.baselines import make_baseline

    broles = dict(numeric=[], categorical=[], extrinsic=["n_gpus", "n_nodes", "batch_per_gpu"])
    want = inner_comparison({"phases model": PhaseAwareStepModel(), "random forest":
                             make_baseline("rf", **broles, random_state=0, n_jobs=1)},
                            fit.drop(columns="t_iter"), fit.t_iter, ("n_gpus", 16.0), ["sync_time"])
    assert float(line.group(1)) == pytest.approx(want["phases model"], rel=5e-3)  # printed to 3 digits
    assert float(line.group(2)) == pytest.approx(want["random forest"], rel=5e-3)
    doc = json.loads(out.read_text())
    assert doc["format"] == "perfkit.ScaleIntervalModel" and doc["settings"]["phases"] == ["sync_time"]
    model = load_model(out)
    configs = pd.read_csv(scale_files.configs)  # no sync_time: prediction needs the configuration alone
    assert np.all(model.predict(configs) > 0)
    p = _run(capsys, "predict", out, scale_files.configs, "--interval", "0.9", "--out", scale_files.dir / "p.csv")
    assert p.code == 0, p.err
    pred = pd.read_csv(scale_files.dir / "p.csv")
    width = np.log(pred["upper"] / pred["lower"])
    assert pred["extrapolated"].tolist() == [False, False, True, True]
    assert pred["distance"].tolist() == [1.0, 1.0, 2.0, 3.0]
    assert width[0] == pytest.approx(width[1]) and width[1] < width[2] < width[3]
    assert width[3] == pytest.approx(3 * width[0])
    assert "outside the fitted data ('n_gpus': 2 above the fitted max 16" in p.err


def test_pollux_form_random_split_ignores_phases_and_flags_more_gpus(capsys, scale_files):
    out = scale_files.dir / "pollux.json"
    r = _run(capsys, "fit", scale_files.pollux, "--target", "t_iter", "--form", "pollux", *STEP, "--phases", "sync_time",
             "--cv", "3", "--out", out)
    assert r.code == 0, r.err
    assert "--phases sync_time: the pollux form cannot use measured phases: ignored" in r.out
    assert "PolluxStepModel" in r.out and "intervals cover" in r.out and "gradient boosting" in r.out
    model = load_model(out)
    assert type(model.estimator_) is PolluxStepModel
    assert model.estimator_.fitted_ranges()["n_gpus"] == (1.0, 64.0)
    more = pd.DataFrame({"n_gpus": [8, 128], "n_nodes": [2, 32], "batch_per_gpu": [64, 64]})
    more.to_csv(scale_files.dir / "more.csv", index=False)
    p = _run(capsys, "predict", out, scale_files.dir / "more.csv", "--out", scale_files.dir / "more_p.csv")
    assert p.code == 0, p.err
    assert pd.read_csv(scale_files.dir / "more_p.csv")["extrapolated"].tolist() == [False, True]


def test_loglinear_default_max_and_thesis_with_calibration(capsys, scale_files):
    r = _run(capsys, "fit", scale_files.syn, *SYN, "--form", "loglinear", "--extrapolate", "gpus",
             "--out", scale_files.dir / "ll.json")
    assert r.code == 0, r.err
    assert "held out (gpus > 16)" in r.out and re.search(r"^\s*2×\s+32\s", r.out, re.M), r.out
    assert type(load_model(scale_files.dir / "ll.json")) is ScaleIntervalModel
    r = _run(capsys, "fit", scale_files.syn, *SYN, "--extrapolate", "gpus:8", "--calibrate", "--seeds", "1",
             "--phases", "sync_time", "--out", scale_files.dir / "th.json")
    assert r.code == 0, r.err
    assert "the thesis form cannot use measured phases: ignored" in r.out
    assert re.search(r"^\s*4×\s+32\s", r.out, re.M) and "generic model" in r.out
    model = load_model(scale_files.dir / "th.json")
    with pytest.warns(ExtrapolationWarning, match=r"their intervals widen with the distance beyond gpus = 8"):
        iv = model.predict_interval(scale_files.frame.drop(columns=["time", "sync_time"]).head(5), 0.9)
    assert (iv["lower"] < iv["predicted"]).all() and (iv["predicted"] < iv["upper"]).all()


def test_inflation_widens_the_saved_intervals_by_its_factor(capsys, scale_files):
    """--inflation K multiplies the half-width (in log units) of every saved interval by K, and only with
    --extrapolate (and, for the thesis form, --calibrate)."""
    widths = {}
    for k in (1.0, 2.5):
        out = scale_files.dir / f"ll_{k:g}.json"
        r = _run(capsys, "fit", scale_files.syn, *SYN, "--form", "loglinear", "--extrapolate", "gpus:8",
                 "--inflation", k, "--out", out)
        assert r.code == 0, r.err
        model = load_model(out)
        assert model.inflation == k
        with pytest.warns(ExtrapolationWarning):
            iv = model.predict_interval(scale_files.frame.drop(columns=["time", "sync_time"]).head(8), 0.9)
        widths[k] = np.log(iv["upper"] / iv["lower"]).to_numpy()
    assert widths[2.5] == pytest.approx(2.5 * widths[1.0], rel=1e-9)
    _one_error(_run(capsys, "fit", scale_files.syn, *SYN, "--form", "loglinear", "--inflation", "2",
                    "--out", scale_files.dir / "x.json"), r"--inflation .* needs --extrapolate")
    _one_error(_run(capsys, "fit", scale_files.syn, *SYN, "--form", "loglinear", "--extrapolate", "gpus:8",
                    "--inflation", "0", "--out", scale_files.dir / "x.json"), r"--inflation: expected a number > 0 and at most 100")
    _one_error(_run(capsys, "fit", scale_files.syn, *SYN, "--extrapolate", "gpus:8", "--inflation", "2",
                    "--out", scale_files.dir / "x.json"), r"--form thesis saves them only with --calibrate")


def test_auto_selects_by_extrapolation_and_prints_both_scores(capsys, scale_files):
    r = _run(capsys, "fit", scale_files.pollux, "--target", "t_iter", "--form", "auto", "--numeric", "batch_per_gpu",
             "--extrinsic", "n_gpus,n_nodes", *STEP, "--phases", "sync_time", "--extrapolate", "n_gpus:16",
             "--cv", "3", "--jobs", "1", "--out", scale_files.dir / "auto.json")
    assert r.code == 0, r.err
    assert "cv_mape" in r.out and "extrap_mape" in r.out and "rule: the lowest extrap_mape" in r.out
    assert "pollux" in r.out and "phases" in r.out and "thesis" in r.out and "<- chosen" in r.out
    assert "by factor n_gpus / 16" in r.out
    assert type(load_model(scale_files.dir / "auto.json")) is ScaleIntervalModel


# ------------------------------------------------------------------------------ the model layer
def test_search_forms_defaults_are_unchanged():
    """The table and the intervals' scores of a default search, as computed before selection by extrapolation
    and extra candidates were added (the segmented variant, added since, comes last and is not chosen)."""
    X, y = _data(n=60, noise=0.05)
    s = search_forms(X, y, numeric=["kernel", "filters"], categorical=["act"], extrinsic=["gpus", "batch"],
                     forms=["loglinear"], cv=3)
    t = s.table
    assert list(t.columns) == ["form", "terms", "n_params", "cv_mape", "cv_mape_se", "fit_seconds", "unscored",
                               "within_1se", "chosen"]
    assert len(t) == 5 and t["terms"].iloc[4].endswith("+ segments")
    t = t.iloc[:4]
    assert t["n_params"].tolist() == pytest.approx([6.333333333333333, 7.666666666666667, 16.333333333333332, 22.0])
    assert t["cv_mape"].tolist() == pytest.approx([11.627849090581606, 12.662633306135811, 5.265878754475671,
                                                   6.622158251636212], rel=1e-9)
    assert t["cv_mape_se"].tolist() == pytest.approx([0.0891935484512475, 0.546911881526504, 0.5915185005311216,
                                                      0.7194536554071967], rel=1e-9)
    assert t["chosen"].tolist() == [False, False, True, False] and s.chosen == 2 and s.select == "cv"
    assert s.model_.scores_[:3].tolist() == pytest.approx([0.01023079648225854, 0.05468781710248693,
                                                           0.038498522442100974], rel=1e-9)
    assert "extrap_mape" not in s.summary() and "one standard error" in s.summary()
    with pytest.raises(ValueError, match=r"select: expected one of \('cv', '1se', 'best', 'extrapolation'\)"):
        search_forms(X, y, numeric=["kernel"], forms=["loglinear"], cv=3, select="holdout")
    with pytest.raises(ValueError, match=r"extrapolate: expected \(column, fit_max\)"):
        search_forms(X, y, numeric=["kernel"], forms=["loglinear"], cv=3, select="extrapolation")


def test_default_max_inner_splits_and_step_ranges():
    assert default_fit_max([1, 2, 4, 8, 16, 32]) == 16 and default_fit_max([1, 2, 3, 20, 24]) == 3
    assert default_fit_max([3, 4, 5]) is None
    assert inner_splits(np.repeat([1.0, 2, 4, 8, 16], 5), 16) == [(4.0, 8.0, 16.0), (8.0, 16.0, 16.0)]
    assert inner_splits([1.0, 16.0], 16) == []
    X = pd.DataFrame({"n_gpus": [1, 2, 4, 8, 8], "n_nodes": [1, 1, 1, 2, 2], "batch_per_gpu": [8, 16, 32, 8, 32],
                      "sync_time": [0.0, 0.01, 0.02, 0.05, 0.05]})
    y = np.array([0.1, 0.12, 0.15, 0.2, 0.3])
    m = PhaseAwareStepModel().fit(X, y)
    assert m.fitted_ranges() == {"n_gpus": (1.0, 8.0), "n_nodes": (1.0, 2.0), "batch_per_gpu": (8.0, 32.0)}
    doc = json.loads(m.to_json())
    assert load_model(json.dumps(doc)).fitted_ranges() == m.fitted_ranges()
    del doc["fitted"]["ranges"]  # a file written before the step forms kept their ranges
    assert load_model(json.dumps(doc)).fitted_ranges() is None


def test_scale_model_json_is_checked(scale_files):
    frame = scale_files.frame[scale_files.frame.gpus <= 8]
    X, y = frame.drop(columns="time"), frame["time"].to_numpy()
    m = ScaleIntervalModel(PolluxStepModel("gpus", "nodes", "batch"), column="gpus", fit_max=8,
                           splits=inner_splits(X["gpus"], 8), phases=["sync_time"]).fit(X, y)
    back = load_model(m.to_json())
    new = scale_files.frame.drop(columns=["time", "sync_time"])
    with pytest.warns(ExtrapolationWarning):
        assert back.predict_interval(new, 0.9).equals(m.predict_interval(new, 0.9))
    for key, value, words in [("scores", [], "fitted.scores"), ("scores", [-1.0], "fitted.scores"),
                              ("ranges", {"gpus": [1, 8]}, "fitted.ranges"), ("ranges", None, "fitted.ranges")]:
        doc = json.loads(m.to_json())
        doc["fitted"][key] = value
        with pytest.raises(ValueError, match=re.escape(words)):
            load_model(json.dumps(doc))
    doc = json.loads(m.to_json())
    doc["settings"]["splits"] = [[8, 4, 16]]
    with pytest.raises(ValueError, match=r"settings: splits: expected"):
        load_model(json.dumps(doc))


# ------------------------------------------------------------------------------ bad input: one line each
BAD_FLAGS = [
    (["--extrapolate", "gpus:8", "--test-size", "0.2"], r"--extrapolate gpus:8 and --test-size 0.2: give one"),
    (["--extrapolate", "gpux:8"], r"--extrapolate column 'gpux' not found; did you mean 'gpus'"),
    (["--extrapolate", "act:8"], r"--extrapolate column 'act': non-numeric value"),
    (["--extrapolate", "gpus:abc"], r"MAX 'abc' is not a number"),
    (["--extrapolate", "gpus:0"], r"MAX must be a finite number > 0"),
    (["--extrapolate", "gpus:100"], r"--extrapolate gpus:100: 160 rows have gpus <= 100 and 0 lie above it"),
    (["--extrapolate", "gpus:0.5"], r"--extrapolate gpus:0.5: 0 rows have gpus <= 0.5"),
    (["--extrapolate", ":8"], r"--extrapolate ':8': expected COL or COL:MAX"),
    (["--extrapolate", "time:8"], r"column 'time' is the --target"),
    (["--extrapolate", "sync_time:0.01", "--phases", "sync_time"], r"column 'sync_time' is the --phases column"),
    (["--extrapolate", "gpus:1", "--form", "loglinear"], r"no inner split to calibrate the intervals"),
    (["--phases", "sync"], r"--phases column 'sync' not found; did you mean 'sync_time'"),
    (["--phases", "gpus"], r"column 'gpus' is --extrinsic and cannot also be --phases"),
    (["--phases", "time"], r"column 'time' is --target and cannot also be --phases"),
    (["--phases", "sync_time,sync_time"], r"--phases sync_time,sync_time: a column is named twice"),
    (["--gpus", "gpus"], r"--gpus: --gpus/--nodes/--batch belong to the step forms .* not --form thesis"),
    (["--form", "auto", "--gpus", "gpus", "--cv", "3"], r"--form auto with step forms needs .* missing: --nodes, "
                                                        r"--batch"),
]


@pytest.mark.parametrize("args, pattern", BAD_FLAGS)
def test_bad_flags_are_one_clean_error(capsys, scale_files, args, pattern):
    out = scale_files.dir / "bad.json"
    _one_error(_run(capsys, "fit", scale_files.syn, *SYN, "--out", out, *args), pattern)
    assert not out.exists()


STEP_SYN = ["--target", "time", "--gpus", "gpus", "--nodes", "nodes", "--batch", "batch"]
BAD_STEP = [
    (["--form", "phases"], r"--form phases needs --phases COL"),
    (["--form", "phases", "--phases", "sync_time,kernel"], r"--phases sync_time,kernel: the phases form uses one "
                                                           r"phase column"),
    (["--form", "pollux", "--numeric", "kernel"], r"--numeric/--categorical/--extrinsic: --form pollux reads only"),
    (["--form", "pollux", "--nodes", "gpus"], r"--gpus, --nodes, --batch: expected three different column names"),
    (["--form", "pollux", "--batch", "batsh"], r"--batch column 'batsh' not found; did you mean 'batch'"),
    (["--form", "pollux", "--gpus", "time"], r"column 'time' is the --target and cannot also be --gpus"),
    (["--form", "pollux", "--phases", "nodes"], r"column 'nodes' is --nodes and cannot also be --phases"),
    (["--form", "pollux", "--phases", "act"], r"--phases column 'act': non-numeric value 'tanh' in row 0"),
    (["--form", "auto", "--test-size", "0.3", "--extrinsic", "batch"], r"--form auto: the table forms it searches need --numeric or "
                                                 r"--categorical columns; .* fit --form phases or --form pollux"),
]


@pytest.mark.parametrize("args, pattern", BAD_STEP)
def test_bad_step_flags_are_one_clean_error(capsys, scale_files, args, pattern):
    _one_error(_run(capsys, "fit", scale_files.syn, *STEP_SYN, "--out", scale_files.dir / "bad.json", *args), pattern)


def test_bad_values_name_the_column_and_row(capsys, scale_files):
    def negative(f):
        f.loc[3, "sync_time"] = -0.5

    def missing(f):
        f.loc[5, "sync_time"] = np.nan

    def more_nodes(f):
        f.loc[7, "nodes"] = f.loc[7, "gpus"] + 1

    def zero_scale(f):
        f.loc[2, "batch"] = 0.0

    def no_half(f):
        f["gpus"] = f["gpus"].clip(lower=20.0)

    cases = [(negative, ["--form", "pollux", "--phases", "sync_time"], r"--phases column 'sync_time': value -0.5 in "
                                                                        r"row 3 is negative"),
             (missing, ["--form", "phases", "--phases", "sync_time"], r"--phases column 'sync_time': missing or non-finite value nan in "
                                                  r"row 5"),
             (more_nodes, ["--form", "pollux"], r"column 'nodes': .* nodes in row 7 exceed its"),
             (zero_scale, ["--form", "pollux", "--extrapolate", "batch"], r"column 'batch': value 0 in row 2"),
             (no_half, ["--form", "pollux", "--extrapolate", "gpus"], r"--extrapolate gpus: no value of 'gpus' is "
                                                                      r"at most half its largest \(32\), so no default")]
    for change, args, pattern in cases:
        csv = _bad(scale_files, f"{change.__name__}.csv", change)
        _one_error(_run(capsys, "fit", csv, *STEP_SYN, "--out", scale_files.dir / "bad.json", *args), pattern)
