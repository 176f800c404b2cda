"""`perfkit plan` and perfkit.plan: the configurations of a menu priced with a model fitted across hardware, ranked by
time, by cost under a deadline and by time under a budget; the flags, the intervals, the Pareto front; every
refusal one ValueError (one line from the CLI); the menu files; the figure."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from perfkit.data.lambda_labs import load_lambda
from perfkit.plan import PlanResult, lambda_menu, load_menu, plan
from perfkit.plan.menu import HOURS_PER_YEAR, menu
from perfkit.plan.planner import FLAGS, HELD_OUT_NOTE, TABLE_COLUMNS
from perfkit.report.legibility import crowded_labels
from perfkit.study import FitSpec, run
from tests.cli import one_error_line, run_cli

#: the GPU type left out of the fit: the plan must call it unmeasured
HELD_OUT = "RTX 4090"
RESNET = {"model": "resnet50", "precision": "fp16"}
IMAGENET = {"epochs": 90, "dataset_size": 1_281_167}


@pytest.fixture(scope="module")
def model():
    """A roofline model across Lambda's fp16 GPUs (three models), one GPU type left out of its rows."""
    rows = load_lambda(screen=True)
    rows = rows[(rows["precision"] == "fp16") & rows["model"].isin(["resnet50", "ssd", "bert_base_squad"])
                & (rows["gpu"] != HELD_OUT)]
    spec = FitSpec(target="t_iter", categorical=["model"], form="roofline", hardware="gpu", precision="precision",
                   gpus="n_gpus", batch="batch_per_gpu", split="group:gpu", n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run(spec, rows[["model", "precision", "gpu", "n_gpus", "batch_per_gpu", "t_iter"]].reset_index(
            drop=True), progress=False)
    assert HELD_OUT not in result.model.groups_
    return result.model


@pytest.fixture(scope="module")
def by_time(model):
    return plan(model, RESNET, **IMAGENET)


@pytest.fixture(scope="module")
def offers():
    """A menu of our own: 16 GPUs is more than any fitted row; RTX 4090 was left out of the fit."""
    return pd.DataFrame({"gpu": ["Dell H100 80GB SXM5", HELD_OUT], "price_per_gpu_hour": [2.5, 0.4],
                         "gpus": ["8;16", [1, 16]], "batch_per_gpu": [256, np.nan]})


# ------------------------------------------------------------------------------------------------ ranking
def test_without_a_target_every_configuration_fastest_first(by_time):
    t = by_time.table
    assert isinstance(by_time, PlanResult) and list(t.columns) == list(TABLE_COLUMNS)
    assert len(t) == sum(len(g) for g in lambda_menu()["gpus"])  # every GPU × every count offered
    assert t["rank"].tolist() == list(range(1, len(t) + 1))
    assert t["hours"].is_monotonic_increasing
    assert not t.duplicated(["gpu", "n_gpus"]).any()


def test_under_a_deadline_the_cheapest_that_finish_come_first(model, by_time):
    deadline = float(by_time.table["hours"].median())
    t = plan(model, RESNET, **IMAGENET, deadline_hours=deadline).table
    meets = t["hours"] <= deadline
    k = int(meets.sum())
    assert 0 < k < len(t) and meets.iloc[:k].all()  # those that finish first, then the others
    assert t["cost"].iloc[:k].is_monotonic_increasing and t["hours"].iloc[k:].is_monotonic_increasing
    expected = np.where(t["hours_hi"] <= deadline, "yes", np.where(meets, "likely", "no"))
    assert t["meets_deadline"].tolist() == expected.tolist()
    assert {"yes", "no"} <= set(t["meets_deadline"])


def test_under_a_budget_the_fastest_that_fit_come_first(model, by_time):
    budget = float(by_time.table["cost"].median())
    t = plan(model, RESNET, samples=1e8, budget=budget).table
    fits = t["cost"] <= budget
    k = int(fits.sum())
    assert 0 < k < len(t) and fits.iloc[:k].all()
    assert t["hours"].iloc[:k].is_monotonic_increasing and t["cost"].iloc[k:].is_monotonic_increasing
    expected = np.where(t["cost_hi"] <= budget, "yes", np.where(fits, "likely", "no"))
    assert t["within_budget"].tolist() == expected.tolist() and "meets_deadline" not in t.columns


# ------------------------------------------------------------------------------------------------ flags, intervals
def test_each_flag_where_it_belongs(model, by_time, offers):
    lam = by_time.table
    assert set(lam.loc[lam["gpu"] == HELD_OUT, "flag"]) == {"unmeasured GPU"}
    assert set(lam.loc[lam["gpu"] != HELD_OUT, "flag"]) == {"interpolated"}  # Lambda offers at most 8, as fitted
    t = plan(model, RESNET, samples=1e8, menu=offers).table.set_index(["gpu", "n_gpus"])["flag"]
    assert t.to_dict() == {("H100 80GB SXM5", 8): "interpolated", ("H100 80GB SXM5", 16): "extrapolated in scale",
                           (HELD_OUT, 1): "unmeasured GPU", (HELD_OUT, 16): "unmeasured GPU, extrapolated in scale"}
    summary = plan(model, RESNET, samples=1e8, menu=offers).summary()
    assert "flags: 1 interpolated, 1 extrapolated in scale, 1 unmeasured GPU, 1 unmeasured GPU, extrapolated in " \
           "scale" in summary and HELD_OUT_NOTE in summary and set(FLAGS) == set(t)


def test_intervals_contain_the_prediction_and_scale_with_the_steps(model, offers):
    samples = 3_000_017
    result = plan(model, RESNET, samples=samples, menu=offers, coverage=0.8)
    t = result.table
    price = {"H100 80GB SXM5": 2.5, HELD_OUT: 0.4}
    batch = {"H100 80GB SXM5": 256, HELD_OUT: 448}  # the menu's; Lambda's for the RTX 4090 (its runs of resnet50)
    assert t["batch_per_gpu"].tolist() == [batch[g] for g in t["gpu"]]
    assert t["steps"].tolist() == [math.ceil(samples / (n * b)) for n, b in zip(t["n_gpus"], t["batch_per_gpu"])]
    for mid in ("step", "hours", "cost"):
        lo, value, hi = (t[f"{mid}_lo"], t["step_s" if mid == "step" else mid], t[f"{mid}_hi"])
        assert ((lo < value) & (value < hi)).all()
    for suffix, step in (("", "step_s"), ("_lo", "step_lo"), ("_hi", "step_hi")):
        assert (t[f"hours{suffix}"] == t["steps"] * t[step] / 3600).all()
        np.testing.assert_allclose(t[f"cost{suffix}"], t[f"hours{suffix}"] * t["n_gpus"] * t["gpu"].map(price),
                                   rtol=1e-12)
    iv = model.predict_interval(pd.DataFrame({"model": "resnet50", "precision": "fp16", "gpu": t["gpu"],
                                              "n_gpus": t["n_gpus"], "batch_per_gpu": t["batch_per_gpu"]}), 0.8)
    np.testing.assert_allclose(t[["step_s", "step_lo", "step_hi"]].to_numpy(),
                               iv[["predicted", "lower", "upper"]].to_numpy())
    wider = plan(model, RESNET, samples=samples, menu=offers, coverage=0.95).table
    assert (wider["hours_hi"] > t["hours_hi"]).all()


def test_the_pareto_rows_are_the_non_dominated_ones(by_time):
    t = by_time.table
    h, c = t["hours"].to_numpy(), t["cost"].to_numpy()
    for i in range(len(t)):
        beaten = ((h <= h[i]) & (c <= c[i]) & ((h < h[i]) | (c < c[i]))).any()
        assert t["pareto"].iloc[i] == (not beaten)
    assert t["pareto"].iloc[0]  # the fastest is never beaten in time
    assert t.loc[t["cost"].idxmin(), "pareto"]


def test_the_summary_states_target_assumptions_and_top_rows(model):
    result = plan(model, RESNET, **IMAGENET, deadline_hours=24, menu=lambda_menu(amortize_years=5))
    text = result.summary(top=3)
    assert text.startswith("plan: 115,305,030 samples (90 epochs × 1,281,167 samples) of resnet50 fp16")
    assert "amortised over 5 years of 24/7 use" in text and "90 % (coverage 0.9)" in text
    assert "finish within 24 h" in text and "top 3 of" in text
    assert "the batch Lambda ran resnet50 fp16 with on that GPU (median)" in text


# ------------------------------------------------------------------------------------------------ refusals
@pytest.mark.parametrize("kw, pattern", [
    ({"deadline_hours": 0}, r"^deadline_hours: expected a number of hours > 0, got 0$"),
    ({"deadline_hours": float("nan")}, r"^deadline_hours: expected .* > 0, got nan"),
    ({"budget": float("inf")}, r"^budget: expected an amount in USD > 0, got inf"),
    ({"budget": -5}, r"^budget: expected"),
    ({"samples": 0, "epochs": None, "dataset_size": None}, r"^samples: expected a number > 0, got 0"),
    ({"epochs": float("nan")}, r"^epochs: expected a number > 0, got nan"),
    ({"dataset_size": -1}, r"^dataset_size: expected a number > 0, got -1"),
    ({"samples": 10}, r"^samples: give samples, or epochs and dataset_size, not both"),
    ({"epochs": None}, r"^epochs: the target is samples, or epochs × dataset_size"),
    ({"coverage": 1.0}, r"^coverage: expected a number strictly between 0 and 1"),
    ({"coverage": 0}, r"^coverage: expected a number strictly between 0 and 1"),
    ({"deadline_hours": 5, "budget": 5}, r"^deadline_hours: give deadline_hours or budget, not both"),
    ({"gpus": [16]}, r"^gpus: the menu offers none of \[16\] GPUs \(it offers \[1, 2, 4, 8\]\)"),
    ({"gpus": [0]}, r"^gpus: expected a whole number > 0, got 0"),
    ({"batch": 1.5}, r"^batch: expected a whole number > 0, got 1.5"),
    ({"deadline_hours": 0.01}, r"^deadline_hours: no configuration finishes within 0.01 h: the fastest, "
                               r"8 × H100 80GB SXM5, needs [\d.]+ h \[[\d.]+, [\d.]+\]$"),
    ({"budget": 0.01}, r"^budget: no configuration fits a budget of \$0.01: the cheapest, \d+ × [\w ]+, costs "
                       r"\$[\d.]+ \[\$[\d.]+, \$[\d.]+\]$"),
])
def test_a_bad_argument_is_one_error_naming_it(model, kw, pattern):
    with pytest.raises(ValueError, match=pattern):
        plan(model, RESNET, **{**IMAGENET, **kw})


@pytest.mark.parametrize("workload, pattern", [
    ({"model": "resnet50"}, r"^workload: missing 'precision'; expected the keys 'model', 'precision'$"),
    ({**RESNET, "gpu": "T4"}, r"^workload: unknown 'gpu'; expected the keys 'model', 'precision'$"),
    ({"model": "waveglow", "precision": "fp16"}, r"^workload: the model was not fitted on .*'waveglow'.* \(it was "
                                                 r"fitted on bert_base_squad, resnet50, ssd\)"),
    ({"model": "resnet50", "precision": "int4"}, r"^workload: precision='int4': expected one of fp16"),
    ("resnet50", r"^workload: expected a dict of model, precision"),
])
def test_a_bad_workload_names_the_keys(model, workload, pattern):
    with pytest.raises(ValueError, match=pattern):
        plan(model, workload, samples=1e6)


def test_a_model_not_fitted_across_hardware_is_refused(model):
    refit = r"^plan needs a model fitted across hardware: perfkit fit \.\.\. --hardware COL --split group:COL$"
    for other in (model.estimator_, "model.json", None):
        with pytest.raises(ValueError, match=refit):
            plan(other, RESNET, samples=1e6)


def test_an_unknown_gpu_or_a_gpu_without_a_batch_is_refused(model):
    bad = pd.DataFrame({"gpu": ["RTX 4090", "H100 SXM"], "price_per_gpu_hour": [1, 2], "gpus": [1, 1]})
    with pytest.raises(ValueError, match=r"^menu: column 'gpu', row 2: unknown GPU 'H100 SXM'; closest known: .*H100"):
        plan(model, RESNET, samples=1e6, menu=bad)
    t4 = pd.DataFrame({"gpu": ["T4"], "price_per_gpu_hour": [0.5], "gpus": ["1;4"]})
    with pytest.raises(ValueError, match=r"^batch: no per-GPU batch for T4: Lambda's benchmarks did not run resnet50 "
                                         r"fp16 on it; give batch="):
        plan(model, RESNET, samples=1e6, menu=t4)
    result = plan(model, RESNET, samples=1e6, menu=t4, batch=64)
    t = result.table
    assert t["batch_per_gpu"].tolist() == [64, 64] and set(t["flag"]) == {"unmeasured GPU"}
    assert result.beyond_specs == ["T4"] and "the spec values of T4 lie outside" in result.summary()


# ------------------------------------------------------------------------------------------------ menus
def test_lambdas_menu_amortises_its_prices(tmp_path):
    three, six = lambda_menu().set_index("gpu"), lambda_menu(amortize_years=6).set_index("gpu")
    lam = load_lambda()
    h100 = lam[lam["gpu"] == "H100 80GB SXM5"]["price_per_gpu"].median()
    assert three.loc["H100 80GB SXM5", "price_per_gpu_hour"] == pytest.approx(h100 / (3 * HOURS_PER_YEAR))
    np.testing.assert_allclose(six["price_per_gpu_hour"], three["price_per_gpu_hour"] / 2)
    assert three.loc["H100 80GB SXM5", "gpus"] == (1, 2, 4, 8) and three.loc["A10", "gpus"] == (1,)
    assert three["batch_per_gpu"].isna().all() and "amortised over 3 years" in lambda_menu().attrs["assumption"]
    with pytest.raises(ValueError, match=r"^amortize_years: expected a number of years > 0, got 0"):
        lambda_menu(0)
    with pytest.raises(ValueError, match=r"^menu: expected 'lambda', the path of a CSV menu or a DataFrame"):
        menu(3)


@pytest.mark.parametrize("row, pattern", [
    ("RTX 4090,-1,1;2", r"column 'price_per_gpu_hour', row 2 \('RTX 4090'\), line 3: expected a price .* got '-1'"),
    ("RTX 4090,,1;2", r"column 'price_per_gpu_hour', row 2 \('RTX 4090'\), line 3: .* empty"),
    ("RTX 4090,0.5,1;x", r"column 'gpus', row 2 \('RTX 4090'\), line 3: expected the GPU counts .* got '1;x'"),
    ("RTX 4090,0.5,0", r"column 'gpus', row 2 .*got '0'"),
    ("Quantum 9000,0.5,1", r"column 'gpu', row 2: unknown GPU 'Quantum 9000'"),
    ("H100 80GB SXM5,0.5,1", r"column 'gpu', row 2 \('H100 80GB SXM5'\), line 3: H100 80GB SXM5 is also offered in "
                             r"row 1"),
])
def test_a_bad_menu_cell_names_file_column_and_row(tmp_path, row, pattern):
    path = tmp_path / "menu.csv"
    path.write_text(f"gpu,price_per_gpu_hour,gpus\nDell H100 80GB SXM5,2.5,1;2;4;8\n{row}\n")
    with pytest.raises(ValueError, match=f"^{path}: {pattern}"):
        load_menu(path)


def test_a_menu_file_is_read_and_checked(tmp_path):
    path = tmp_path / "menu.csv"
    path.write_text("gpu,price_per_gpu_hour,gpus,batch_per_gpu\nDell H100 80GB SXM5,2.5,8;1;4,256\nT4,0.35,1,\n")
    m = load_menu(path)
    assert m["gpu"].tolist() == ["H100 80GB SXM5", "T4"] and m["gpus"].tolist() == [(1, 4, 8), (1,)]
    assert m["batch_per_gpu"].iloc[0] == 256 and math.isnan(m["batch_per_gpu"].iloc[1])
    path.write_text("gpu,price,gpus\nT4,0.35,1\n")
    with pytest.raises(ValueError, match=r"no column 'price_per_gpu_hour'; a menu has the columns"):
        load_menu(path)
    path.write_text("gpu,price_per_gpu_hour,gpus,batch\nT4,0.35,1,8\n")
    with pytest.raises(ValueError, match=r"unknown column 'batch'"):
        load_menu(path)
    path.write_text("gpu,price_per_gpu_hour,gpus,batch_per_gpu\nT4,0.35,1,8.5\n")
    with pytest.raises(ValueError, match=r"column 'batch_per_gpu', row 1 \('T4'\), line 2: expected a per-GPU batch"):
        load_menu(path)


# ------------------------------------------------------------------------------------------------ the figure
def test_the_figure_is_legible(model, offers):
    for result in (plan(model, RESNET, **IMAGENET, deadline_hours=24),
                   plan(model, RESNET, samples=1e8, menu=offers, budget=50)):
        fig = result.plot()
        assert crowded_labels(fig) == []
        ax = fig.axes[0]
        assert ax.get_xscale() == ax.get_yscale() == "log"
        labels = ax.get_legend_handles_labels()[1]
        assert "Pareto front" in labels and any(lb.startswith(("deadline", "budget")) for lb in labels)
    assert {lb.split(" (")[0] for lb in labels} >= set(FLAGS)


# ------------------------------------------------------------------------------------------------ the command
@pytest.fixture(scope="module")
def saved(model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("plan")
    model.save(folder / "model.json")
    (folder / "menu.csv").write_text("gpu,price_per_gpu_hour,gpus\nDell H100 80GB SXM5,2.5,8;16\nRTX 4090,0.4,1;2\n")
    return folder


def test_the_command_prints_the_summary_and_writes_table_and_figure(saved, capsys):
    out, fig = saved / "plan.csv", saved / "plan.png"
    r = run_cli(capsys, "plan", saved / "model.json", "--workload", "model=resnet50,precision=fp16", "--epochs", "90",
                "--dataset-size", "1281167", "--deadline", "24", "--out", out, "--plot", fig, "--top", "5")
    assert r.code == 0, r.err
    assert r.out.startswith("plan: 115,305,030 samples") and "top 5 of 31" in r.out and HELD_OUT_NOTE in r.out
    table = pd.read_csv(out)
    assert list(table.columns) == list(TABLE_COLUMNS) + ["meets_deadline"] and len(table) == 31
    assert fig.read_bytes()[:4] == b"\x89PNG" and f"wrote {out}" in r.out
    r = run_cli(capsys, "plan", saved / "model.json", "--workload", "model=ssd,precision=fp16", "--samples", "1e7",
                "--menu", saved / "menu.csv", "--budget", "100", "--gpus", "1,16", "--batch", "32", "--interval", "0.8")
    assert r.code == 0, r.err
    assert "cost at most $100" in r.out and "per-GPU batch: 32 on every GPU (given)" in r.out
    assert "prices: the menu's" in r.out and "80 % (coverage 0.8)" in r.out


@pytest.mark.parametrize("args, fragments", [
    (["--deadline", "-1"], ["--deadline: expected a number > 0, got '-1'"]),
    (["--deadline", "nan"], ["--deadline: expected a number > 0"]),
    (["--budget", "x"], ["--budget: expected a number > 0, got 'x'"]),
    (["--deadline", "5", "--budget", "5"], ["--deadline: give --deadline or --budget, not both"]),
    (["--gpus", "1,x"], ["--gpus: expected a whole number > 0, got 'x'"]),
    (["--gpus", "16"], ["--gpus: the menu offers none of [16] GPUs"]),
    (["--batch", "0"], ["--batch: expected a whole number > 0"]),
    (["--top", "0"], ["--top: expected a whole number > 0"]),
    (["--interval", "1.5"], ["--interval: expected a coverage strictly between 0 and 1"]),
    (["--interval", "high"], ["--interval: expected a coverage"]),
    (["--amortize-years", "-3"], ["--amortize-years: expected a number > 0"]),
    (["--deadline", "0.001"], ["--deadline: no configuration finishes within 0.001 h: the fastest, 8 × H100"]),
    (["--plot", "fig.xyz"], ["--plot 'fig.xyz': end the name with the suffix of a figure format"]),
    (["--samples", "10"], ["--samples: give --samples, or --epochs with --dataset-size, not both"]),
])
def test_a_bad_flag_is_one_line_naming_it(saved, capsys, args, fragments):
    r = run_cli(capsys, "plan", saved / "model.json", "--workload", "model=resnet50,precision=fp16", "--epochs", "90",
                "--dataset-size", "1281167", *args)
    one_error_line(r, *fragments)


@pytest.mark.parametrize("args, fragments", [
    (["--workload", "model=resnet50", "--samples", "1e6"], ["--workload: missing 'precision'"]),
    (["--workload", "model", "--samples", "1e6"], ["--workload: expected key=value pairs"]),
    (["--workload", "model=resnet50,precision=fp16"], ["--samples: give the job's size"]),
    (["--workload", "model=resnet50,precision=fp16", "--epochs", "3"], ["--dataset-size: give the job's size"]),
    (["--workload", "model=resnet50,precision=fp16", "--samples", "1e6", "--menu", "nope.csv"],
     ["menu CSV 'nope.csv': no such file"]),
])
def test_a_bad_workload_target_or_menu_is_one_line(saved, capsys, args, fragments):
    one_error_line(run_cli(capsys, "plan", saved / "model.json", *args), *fragments)


def test_outputs_are_checked_before_any_work(model, saved, capsys):
    base = ["plan", saved / "model.json", "--workload", "model=resnet50,precision=fp16", "--samples", "1e6"]
    one_error_line(run_cli(capsys, *base, "--out", saved / "model.json"), "--out", "is the input")
    one_error_line(run_cli(capsys, *base, "--menu", saved / "menu.csv", "--out", saved / "menu.csv"), "is the input")
    one_error_line(run_cli(capsys, *base, "--menu", saved / "menu.csv", "--amortize-years", "4"),
                   "--amortize-years: it spreads Lambda's purchase prices")
    one_error_line(run_cli(capsys, *base, "--out", saved / "p.csv", "--plot", saved / "p.csv"), "is also --out")
    model.estimator_.save(saved / "form.json")  # a form alone: not fitted across hardware
    one_error_line(run_cli(capsys, "plan", saved / "form.json", "--workload", "model=resnet50,precision=fp16",
                           "--samples", "1e6"), "plan needs a model fitted across hardware")
