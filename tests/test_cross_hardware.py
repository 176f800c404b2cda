"""Predicting a GPU from its spec sheet: the GPU spec table and its join (perfkit.data.gpu_specs), the roofline
form (perfkit.model.forms.roofline), leave one group out (perfkit.model.selection.by_group), intervals calibrated
on held-out groups (perfkit.model.uncertainty.group_intervals) and the study across hardware (split="group:COL")."""
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from perfkit.data.gpu_specs import (GPU_SPEC_COLUMNS, HARDWARE_COLUMNS, canonical_gpus, gpu_spec, join_hardware,
                                    load_gpu_specs, peak_for)
from perfkit.data.hardware import load_clusters
from perfkit.data.lambda_labs import load_lambda
from perfkit.data.nvidia_dle import load_nvidia_dle
from perfkit.model.forms.roofline import DEFAULT_TERMS, RooflineModel
from perfkit.model.persist import load_model
from perfkit.model.selection.by_group import (group_folds, group_mape, logo_predictions,
                                              median_group_mape, nested_group_study, select_by_groups)
from perfkit.model.uncertainty.extrapolation import conformal_quantile
from perfkit.model.uncertainty.group_intervals import GroupIntervalModel
from perfkit.study import FitSpec, run
from perfkit.study.result import StudyResult

SPEC_CSV = "data/external/hardware/gpu_specs.csv"


@pytest.fixture(scope="module")
def lam():
    """Lambda's screened rows with the spec columns joined."""
    return join_hardware(load_lambda(screen=True), "gpu", "precision").reset_index(drop=True)


def _synthetic(lam, noise=0.0, seed=0):
    """Lambda's configurations (fp16, three models) with step times made by a known roofline sum."""
    rows = lam[(lam["precision"] == "fp16") & lam["model"].isin(["resnet50", "ssd", "bert_base_squad"])].copy()
    rows = rows.reset_index(drop=True)
    coef = {"resnet50": [0.01, 0.004, 0.6, 1e-4, 0.5, 10.0], "ssd": [0.05, 0.01, 2.0, 2e-4, 0.2, 15.0],
            "bert_base_squad": [0.2, 0.006, 2.5, 0.0, 0.0, 50.0]}
    b, n = rows["batch_per_gpu"], rows["n_gpus"]
    x = np.column_stack([b / rows["hw_peak_tflops"], b / rows["hw_fp32_tflops"], b / rows["hw_mem_gbps"], b,
                         (n - 1) / n / rows["hw_link_gbps"], 1 / rows["hw_mem_gbps"]])
    c = np.array([coef[m] for m in rows["model"]])
    t = np.sum(x * c, axis=1) * np.exp(np.random.default_rng(seed).normal(0, noise, len(rows)))
    return rows.assign(t_iter=t), coef


def _roofline(**kw):
    return RooflineModel(workload=["model"], batch="batch_per_gpu", gpus="n_gpus", **kw)


# ------------------------------------------------------------------------------------------------ the spec table
def test_every_shipped_gpu_name_maps_to_one_spec_row():
    specs = load_gpu_specs()
    assert tuple(specs.columns) == GPU_SPEC_COLUMNS and len(specs) == 17 and specs["gpu"].is_unique
    names = set(load_lambda()["gpu"]) | set(load_nvidia_dle()["gpu"]) | set(load_clusters()["gpu"])
    canon = canonical_gpus(sorted(names))
    assert set(canon) <= set(specs["gpu"])
    assert gpu_spec("Dell H100 80GB SXM5")["gpu"] == gpu_spec("H100 80GB SXM5")["gpu"] == "H100 80GB SXM5"
    assert gpu_spec("A100 80GB")["form_factor"] == "SXM4"  # NVIDIA's DGX A100 tables
    numbers = specs[["fp32_tflops", "mem_gbps", "mem_gb", "sms", "boost_mhz", "l2_mb", "tdp_w", "link_gbps"]]
    assert np.isfinite(numbers.to_numpy(dtype=float)).all() and (numbers.to_numpy(dtype=float) > 0).all()
    # the tensor rate is the dense one with FP32 accumulate: at least the FP32 rate, at most 64x it
    ratio = specs["tensor_fp16_tflops"] / specs["fp32_tflops"]
    assert ((ratio >= 1) & (ratio <= 64)).all()
    assert specs["source"].str.contains("http").all()


def test_the_peak_follows_the_precision():
    h100, v100 = gpu_spec("H100 80GB SXM5"), gpu_spec("V100 16GB SXM2")
    assert peak_for("fp16", h100) == h100["tensor_fp16_tflops"] == peak_for("amp", h100)
    assert peak_for("fp32", h100) == h100["tensor_tf32_tflops"] == peak_for("TF32", h100)
    assert peak_for("fp32", v100) == v100["fp32_tflops"]  # no TF32 before Ampere
    with pytest.raises(ValueError, match="^precision 'int8': expected one of"):
        peak_for("int8", h100)


def test_an_unknown_gpu_is_one_error_naming_the_row_and_the_closest_names():
    frame = pd.DataFrame({"gpu": ["RTX 4090", "H100 SXM"], "precision": ["fp16", "fp16"]})
    with pytest.raises(ValueError, match=r"^column 'gpu', row 2: unknown GPU 'H100 SXM'; closest known: .*H100"):
        join_hardware(frame, "gpu", "precision")
    with pytest.raises(ValueError, match=r"^column 'precision', row 1: precision 'int4'"):
        join_hardware(frame.assign(precision="int4").head(1), "gpu", "precision")
    with pytest.raises(ValueError, match="^hardware: no column 'card'"):
        join_hardware(frame, "card")
    joined = join_hardware(frame.head(1), "gpu", "precision")
    assert list(joined.columns[-len(HARDWARE_COLUMNS):]) == list(HARDWARE_COLUMNS)
    with pytest.raises(ValueError, match="already has the column"):
        join_hardware(joined, "gpu")


@pytest.mark.parametrize("change, error", [
    (lambda r: r.__setitem__(6, "-1"), r"column 'fp32_tflops', .*row 1.*expected a number > 0"),
    (lambda r: r.__setitem__(10, ""), r"column 'mem_gbps', .*row 1.*empty"),
    (lambda r: r.__setitem__(1, "T4"), r"the name 'T4' also names"),
])
def test_a_bad_spec_table_is_one_error_naming_file_column_and_row(tmp_path, change, error):
    rows = pd.read_csv(SPEC_CSV, dtype=str, keep_default_na=False).to_numpy().tolist()
    change(rows[0])
    path = tmp_path / "mine.csv"
    pd.DataFrame(rows, columns=GPU_SPEC_COLUMNS).to_csv(path, index=False)
    with pytest.raises(ValueError, match=error):
        load_gpu_specs(path)


# ------------------------------------------------------------------------------------------------ the roofline form
def test_the_roofline_sum_recovers_known_coefficients(lam):
    rows, coef = _synthetic(lam)
    m = _roofline().fit(rows, rows["t_iter"])
    assert m.terms_ == list(DEFAULT_TERMS)
    for w, c in zip(m.workloads_, m.coef_):
        np.testing.assert_allclose(c, coef[w[0]], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(m.predict(rows), rows["t_iter"], rtol=1e-9)
    shares = m.shares(rows)
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    assert m.n_parameters_ == 3 * len(DEFAULT_TERMS) and m.formula().startswith("t = ")
    assert "bert_base_squad" in m.summary()


def test_the_roofline_form_saves_itself_and_refuses_an_unseen_workload(lam):
    rows, _ = _synthetic(lam, noise=0.05)
    for kw in ({}, {"smooth": 3.0}, {"terms": ["compute", "memory", "overhead"]}):
        m = _roofline(**kw).fit(rows, rows["t_iter"])
        back = load_model(m.to_json())
        assert type(back) is RooflineModel and back.get_params() == m.get_params()
        np.testing.assert_array_equal(back.predict(rows), m.predict(rows))
    other = rows.head(2).assign(model="gnmt")
    assert not m.predictable(other).any() and m.predictable(rows).all()
    with pytest.raises(ValueError, match=r"^row 1: workload \{'model': 'gnmt'\} was not fitted"):
        m.predict(other)
    doc = json.loads(m.to_json())
    doc["fitted"]["coef"][0][0] = -1.0
    with pytest.raises(ValueError, match="fitted.coef"):
        load_model(json.dumps(doc))


def test_without_batch_or_gpus_the_terms_are_per_step(lam):
    rows, _ = _synthetic(lam)
    m = RooflineModel(workload="model").fit(rows, rows["t_iter"])
    assert "sync" not in m.terms_ and m.extrinsic_ == [] and np.all(m.predict(rows) > 0)


# ------------------------------------------------------------------------------------------------ leave one group out
def test_leave_one_group_out_basics(lam):
    with pytest.raises(ValueError, match="^groups: leave one group out needs at least 3 groups"):
        group_folds(["a", "b", "a"])
    assert conformal_quantile([1.0, 2.0, 3.0], 0.5) == 2.0 and math.isinf(conformal_quantile([1.0, 2.0], 0.1))
    rows, _ = _synthetic(lam)
    g = rows["hw_gpu"].to_numpy(dtype=object)
    pred = logo_predictions(_roofline(), rows, rows["t_iter"], g)
    assert np.isfinite(pred).all()
    np.testing.assert_allclose(pred, rows["t_iter"], rtol=1e-6)  # an exact model predicts a GPU it never saw
    per = group_mape(rows["t_iter"], pred, g)
    assert list(per.index) == sorted(set(g), key=str) and median_group_mape(rows["t_iter"], pred, g) < 1e-4
    one = rows[rows["model"] == "ssd"].index[:3]
    only = rows.assign(model=rows["model"].where(~rows.index.isin(one), "only-here"), hw_gpu=g)
    only.loc[one, "hw_gpu"] = "RTX 4090"
    p = logo_predictions(_roofline(), only, only["t_iter"], only["hw_gpu"])
    assert np.isnan(p[one]).all()  # a workload only the held-out group ran cannot be predicted


def test_the_true_form_is_chosen_and_nested_intervals_cover(lam):
    rows, _ = _synthetic(lam, noise=0.08, seed=1)
    g = rows["hw_gpu"].to_numpy(dtype=object)
    cands = {"memory only": _roofline(terms=["memory", "overhead"]), "roofline": _roofline()}
    sel = select_by_groups(cands, rows, rows["t_iter"], g)
    assert sel.name == "roofline" and list(sel.scores["candidate"]) == list(cands)
    nested = nested_group_study(cands, rows, rows["t_iter"], g, level=0.9, n_jobs=1)
    r = nested.rows
    inside = (r["measured"] >= r["lower"]) & (r["measured"] <= r["upper"])
    assert 0.8 <= inside.mean() <= 0.99 and set(nested.choices["chosen"]) == {"roofline"}
    inside = (r["measured"] >= r["lower_nested"]) & (r["measured"] <= r["upper_nested"])
    assert 0.8 <= inside.mean() <= 1.0
    assert list(nested.choices.columns) == ["group", "chosen", "q", "q_nested"]
    assert (nested.choices[["q", "q_nested"]].to_numpy() > 0).all()
    again = nested_group_study(cands, rows, rows["t_iter"], g, level=0.9, n_jobs=2)
    pd.testing.assert_frame_equal(again.rows, r)  # parallel or not, the same numbers


def test_group_intervals_flag_new_gpus_and_save_themselves(lam):
    rows, _ = _synthetic(lam, noise=0.05)
    keep = rows[rows["hw_gpu"] != "RTX 4090"]
    m = GroupIntervalModel(_roofline(), group="hw_gpu", hardware="gpu", precision="precision").fit(
        keep[["model", "precision", "gpu", "n_gpus", "batch_per_gpu"]], keep["t_iter"])
    new = rows[rows["hw_gpu"] == "RTX 4090"][["model", "precision", "gpu", "n_gpus", "batch_per_gpu"]]
    iv = m.predict_interval(new, 0.9)
    assert list(iv.columns) == ["predicted", "lower", "upper", "measured_group", "extrapolated"]
    assert not iv["measured_group"].any() and (iv["lower"] < iv["predicted"]).all()
    assert m.predict_interval(keep.head(3), 0.9)["measured_group"].all()
    assert m.half_width(0.5) <= m.half_width(0.9)
    back = load_model(m.to_json())
    pd.testing.assert_frame_equal(back.predict_interval(new, 0.9), iv)
    with pytest.raises(ValueError, match="^coverage: expected a number strictly between 0 and 1"):
        m.predict_interval(new, 1.5)


# ------------------------------------------------------------------------------------------------ the study
@pytest.mark.parametrize("kw, error", [
    (dict(hardware="gpu"), r"^--hardware gpu: a model over GPU spec columns is judged on GPUs it never saw"),
    (dict(form="roofline"), r"^--form roofline reads the GPU spec columns"),
    (dict(split="gpu"), r"^--split 'gpu': expected group:COL"),
    (dict(precision="precision"), r"^--precision chooses the GPU spec columns joined on --hardware"),
    (dict(form="thesis", hardware="gpu", split="group:gpu"), r"^--split group:gpu: leave one group out fits"),
    (dict(form="roofline", hardware="gpu", split="group:gpu", nodes="n"), r"^--nodes: not read"),
    (dict(form="roofline", hardware="gpu", split="group:gpu", test_size=0.3), r"^--test-size 0.3: not with"),
])
def test_the_spec_of_a_study_across_hardware_refuses_what_does_not_go(kw, error):
    from perfkit.study.constraints import flag_names
    from perfkit.study.spec import CLI_FLAGS

    with flag_names(CLI_FLAGS), pytest.raises(ValueError, match=error):
        FitSpec(target="t", **kw)


@pytest.fixture(scope="module")
def study(lam):
    rows = load_lambda(screen=True)
    rows = rows[(rows["precision"] == "fp16") & rows["model"].isin(["resnet50", "ssd", "gnmt"])]
    spec = FitSpec(target="t_iter", categorical=["model"], form="auto", hardware="gpu", precision="precision",
                   gpus="n_gpus", batch="batch_per_gpu", split="group:gpu", n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run(spec, rows[["model", "precision", "gpu", "n_gpus", "batch_per_gpu", "t_iter"]].reset_index(
            drop=True), progress=False)


def test_a_study_across_hardware_reports_per_gpu_and_saves_a_model(study):
    assert len(study.groups) == 12 and {"selected form", "random forest", "gradient boosting", "log-linear"} <= set(
        study.groups.columns)
    assert study.margin["lo"] <= study.margin["estimate"] <= study.margin["hi"]
    assert 0 < study.coverage <= 1 and study.coverage_rows == study.n_test
    text = study.summary()
    assert "leave one gpu out: 12 groups" in text and "margin: selected form −" in text and "% intervals cover" in text
    assert f"fitted on one group fewer: {100 * study.coverage_nested:.1f} %" in text
    back = StudyResult.from_json(study.to_json())
    pd.testing.assert_frame_equal(back.groups, study.groups, check_dtype=False)
    assert back.coverage_nested == study.coverage_nested and 0 < study.coverage_nested <= 1
    configs = pd.DataFrame({"model": ["resnet50"], "precision": ["fp16"], "gpu": ["T4"], "n_gpus": [4],
                            "batch_per_gpu": [64]})
    iv = back.model.predict_interval(configs, 0.9)  # a GPU none of Lambda's rows ran, from its name alone
    assert not iv["measured_group"].iloc[0] and iv["predicted"].iloc[0] > 0


def test_a_study_across_hardware_refuses_bad_data():
    rows = pd.DataFrame({"model": ["a"] * 4, "precision": ["fp16"] * 4, "gpu": ["RTX 4090", "RTX 3090", "A10", "Nope"],
                         "t": [1.0, 2.0, 3.0, 4.0]})
    spec = FitSpec(target="t", categorical=["model"], form="roofline", hardware="gpu", split="group:gpu")
    with pytest.raises(ValueError, match=r"^hardware gpu: column 'gpu', row 4: unknown GPU 'Nope'"):
        run(spec, rows, progress=False)
    with pytest.raises(ValueError, match=r"leave one group out needs at least 3 groups"):
        run(spec, rows.head(2), progress=False)


@pytest.mark.parametrize("change, kw, error", [
    (None, dict(hardware="card"), r"^--hardware card: no column 'card' in the data"),
    (None, dict(precision="prec"), r"^--precision prec: no column 'prec' in the data"),
    (("precision", 0, "int8"), {}, r"^--precision precision: column 'precision', row 1: precision 'int8'"),
    (("gpu", 2, "Nope 1"), {}, r"^--hardware gpu: column 'gpu', row 3: unknown GPU 'Nope 1'"),
    (None, dict(gpu_specs="no/such/specs.csv"), r"^--gpu-specs no/such/specs.csv: GPU spec table .* no such file"),
    (None, dict(split="group:model"), r"^--split group:model: 'model' is a workload column \(--categorical\)"),
])
def test_bad_hardware_input_names_the_flag(change, kw, error):
    from perfkit.study.constraints import flag_names
    from perfkit.study.spec import CLI_FLAGS

    rows = load_lambda(screen=True).query("precision == 'fp16'").head(40)[
        ["model", "precision", "gpu", "n_gpus", "batch_per_gpu", "t_iter"]].reset_index(drop=True)
    if change:
        col, row, value = change
        rows.loc[row, col] = value
    settings = dict(target="t_iter", categorical=["model"], form="roofline", hardware="gpu", precision="precision",
                    split="group:gpu")
    with flag_names(CLI_FLAGS), pytest.raises((ValueError, FileNotFoundError), match=error):
        run(FitSpec(**{**settings, **kw}), rows, progress=False)


def test_with_flops_and_bytes_columns_the_coefficients_are_inverse_efficiencies(lam):
    """A cost model's FLOP and bytes per sample turn the compute and memory coefficients into 1 / efficiency."""
    rows, _ = _synthetic(lam)
    flops = rows["model"].map({"resnet50": 12.3e9, "ssd": 30e9, "bert_base_squad": 250e9})
    nbytes = rows["model"].map({"resnet50": 0.4e9, "ssd": 1.1e9, "bert_base_squad": 2.0e9})
    eff_c, eff_m = 0.45, 0.7
    b = rows["batch_per_gpu"]
    t = b * (flops * 1e-12 / (rows["hw_peak_tflops"] * eff_c) + nbytes * 1e-9 / (rows["hw_mem_gbps"] * eff_m))
    X = rows.assign(flops=flops, nbytes=nbytes)
    m = _roofline(flops="flops", bytes="nbytes", terms=["compute", "memory"]).fit(X, t)
    np.testing.assert_allclose(m.coef_, [[1 / eff_c, 1 / eff_m]] * 3, rtol=1e-6)
    np.testing.assert_allclose(m.predict(X), t, rtol=1e-9)
    with pytest.raises(ValueError, match="^numeric column 'flops': value -1 in row"):
        _roofline(flops="flops", terms=["compute"]).fit(X.assign(flops=-1.0), t)


def test_a_workload_measured_on_one_gpu_spec_is_named_as_unidentified(lam):
    rows, _ = _synthetic(lam)
    keep = (rows["model"] != "ssd") | (rows["hw_gpu"] == "RTX 4090")  # ssd on one GPU type only
    m = _roofline().fit(rows[keep], rows["t_iter"][keep])
    n = dict(zip([w[0] for w in m.workloads_], m.n_specs_))
    assert n["ssd"] == 1 and n["resnet50"] >= 10
    assert "1 workload(s) fitted on one GPU spec only" in m.summary() and "{'model': 'ssd'}" in m.summary()
    assert list(m.coefficients().columns[:4]) == ["model", "rows", "gpu_specs", "fit_MAPE"]
    back = load_model(m.to_json())
    np.testing.assert_array_equal(back.n_specs_, m.n_specs_)


def test_a_one_spec_workload_borrows_the_work_mix_of_the_workloads_on_its_spec(lam):
    """``one_spec="mix"``: ssd measured on the RTX 4090 alone takes the median per-sample mix (at the 4090's spec) of
    the workloads that ran there and elsewhere; it still fits its own rows, and "nnls" is the plain fit."""
    rows, _ = _synthetic(lam)
    keep = (rows["model"] != "ssd") | (rows["hw_gpu"] == "RTX 4090")
    X, t = rows[keep].reset_index(drop=True), rows["t_iter"][keep].reset_index(drop=True)
    mix, plain = _roofline().fit(X, t), _roofline(one_spec="nnls").fit(X, t)
    ssd = [w[0] for w in mix.workloads_].index("ssd")
    on = X[X["model"] == "ssd"]
    np.testing.assert_allclose(mix.predict(on), t[on.index], rtol=1e-6)  # its own rows: one spec, any mix fits
    spec = on.iloc[0]
    u = np.array([1 / spec["hw_peak_tflops"], 1 / spec["hw_fp32_tflops"], 1 / spec["hw_mem_gbps"], 1.0])
    share = lambda c: c[:4] * u / np.sum(c[:4] * u)  # noqa: E731
    others = [share(c) for w, c in zip(mix.workloads_, mix.coef_) if w[0] != "ssd"]
    expected = np.median(others, axis=0)
    np.testing.assert_allclose(share(mix.coef_[ssd]), expected / expected.sum(), rtol=1e-9)
    told = [i for i, w in enumerate(mix.workloads_) if w[0] != "ssd"]
    np.testing.assert_array_equal(mix.coef_[told], plain.coef_[told])  # the others are fitted the same
    assert "median work mix" in mix.summary() and "not told apart" in plain.summary()
    # a file saved before the setting existed was fitted as "nnls" and loads as such
    doc = json.loads(plain.to_json())
    del doc["settings"]["one_spec"]
    assert load_model(json.dumps(doc)).one_spec == "nnls"
    with pytest.raises(ValueError, match=r"one_spec: expected one of \['mix', 'nnls'\], got 'median'"):
        _roofline(one_spec="median").fit(X, t)


def test_a_one_spec_workload_whose_spec_no_other_workload_ran_is_fitted_plainly(lam):
    rows, _ = _synthetic(lam)
    keep = ((rows["model"] != "ssd") & (rows["hw_gpu"] != "RTX 4090")) | (
        (rows["model"] == "ssd") & (rows["hw_gpu"] == "RTX 4090"))
    X, t = rows[keep].reset_index(drop=True), rows["t_iter"][keep].reset_index(drop=True)
    mix, plain = _roofline().fit(X, t), _roofline(one_spec="nnls").fit(X, t)
    np.testing.assert_array_equal(mix.coef_, plain.coef_)


def test_the_full_chapter_spec_is_a_study_across_hardware_not_a_scaling_study():
    """``form="auto"`` with the step columns is a scaling study only where no rows are held out: with ``split`` the
    GPU column is the roofline's, and the baselines and level the chapter gives are read (the refusal of unread
    settings once refused Chapter 8's full run here)."""
    from perfkit.chapters.ch8.compute import _spec
    from perfkit.chapters.ch8.params import Params

    spec = _spec(Params(quick=False), ["model", "precision"])
    assert spec.scale_study is None and spec.split == "group:gpu" and spec.baselines == ("rf", "gb")
    cli = FitSpec(target="t_iter", categorical=["model"], form="auto", hardware="gpu", gpus="n_gpus",
                  batch="batch_per_gpu", split="group:gpu", baselines=("rf",), level=0.8)
    assert cli.scale_study is None
