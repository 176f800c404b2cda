"""Chapter 8 (measure here, predict there): the protocol keeps the held-out GPU out of every choice, the chapter
presents what it computed, and the ledger is decided over the GPU types."""
import numpy as np
import pandas as pd
import pytest

from perfkit.chapters import ch8
from perfkit.chapters.ch8.claims import CLAIMS
from perfkit.chapters.ch8.params import DATASETS

VERDICTS = {"holds", "does not hold", "inconclusive", "cannot be tested here"}


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return ch8.analyse(quick=True, progress=False, n_jobs=1, figures_dir=str(tmp_path_factory.mktemp("figs")))


def test_the_chapter_shows_every_gpu_every_model_and_a_plan(result):
    T, r = result.tables, result.results
    assert list(r.studies) == ["lambda"]  # quick: the first study
    g = T["xhw_lambda_by_gpu"]
    assert len(g) == 13 and g["held-out GPU"].iloc[-1] == "median"  # 12 GPU types of Lambda's, then the median
    assert list(g.columns) == ["held-out GPU", "rows", "chosen", "selected form", "log-linear", "coverage"]
    assert np.isfinite(g[["selected form", "log-linear"]].to_numpy(dtype=float)).all()  # quick: one baseline
    rows = r.studies["lambda"].rows
    inside = (rows["measured"] >= rows["lower"]) & (rows["measured"] <= rows["upper"])
    per = g.set_index("held-out GPU")["coverage"]
    assert per.loc["RTX 4090"] == pytest.approx(100 * inside[rows["group"] == "RTX 4090"].mean())
    assert per.loc["median"] == pytest.approx(per.iloc[:-1].median()) and ((per >= 0) & (per <= 100)).all()
    assert set(T["xhw_specs"]["gpu"]) == set(g["held-out GPU"].iloc[:-1])
    assert {"xhw_errors", "xhw_roofline", "xhw_bias", "xhw_plan"} <= set(result.figures)
    plan = T["xhw_plan"]
    assert len(plan) > 0 and {"gpu", "n_gpus", "hours", "hours_lo", "hours_hi", "cost", "flag"} <= set(plan.columns)
    assert (plan["hours_lo"] <= plan["hours"]).all() and (plan["hours"] <= plan["hours_hi"]).all()
    claims = T["claims_ch8"]
    assert list(claims["key"]) == [c.key for c in CLAIMS] and len(CLAIMS) == 3 * len(DATASETS)
    assert set(claims["verdict"]) <= VERDICTS
    tested = claims[claims["key"].str.startswith("lambda_") & ~claims["key"].str.contains("fp")]
    assert (tested["verdict"] != "cannot be tested here").all()
    assert (claims[claims["key"].str.startswith("nvidia")]["verdict"] == "cannot be tested here").all()
    assert result.readings["summary"].startswith("**Lambda, fp16 and fp32**")


def test_every_row_is_predicted_without_its_gpu(result):
    """Scrambling the held-out GPU's times changes nothing of its own predictions or of its nested interval (the
    width from the other GPUs alone); its interval's width is the quantile of the other GPUs' held-out errors."""
    from perfkit.chapters.ch8.compute import study_frame
    from perfkit.model.selection.by_group import nested_group_study
    from perfkit.data.gpu_specs import join_hardware
    from perfkit.study.hardware import group_candidates
    from perfkit.study import FitSpec

    p = ch8.check_params(quick=True, progress=False)
    frame, workload = study_frame(p, "lambda_fp16")
    X = join_hardware(frame.drop(columns="t_iter"), "gpu", "precision")
    spec = FitSpec(target="t_iter", categorical=workload, form="roofline", hardware="gpu", precision="precision",
                   gpus="n_gpus", batch="batch_per_gpu", split="group:gpu")
    y = frame["t_iter"].to_numpy(dtype=float)
    g = X["hw_gpu"].to_numpy(dtype=object)
    base = nested_group_study(group_candidates(spec), X, y, g).rows
    held = g == "RTX 4090"
    y2 = y.copy()
    y2[held] = np.random.default_rng(0).permutation(y[held]) * 3.0
    again = nested_group_study(group_candidates(spec), X, y2, g).rows
    pd.testing.assert_series_equal(again.loc[held, "predicted"], base.loc[held, "predicted"])
    pd.testing.assert_series_equal(again.loc[held, "upper_nested"], base.loc[held, "upper_nested"])
    assert not np.allclose(again.loc[~held, "upper_nested"], base.loc[~held, "upper_nested"])  # the others' moved
    ok = np.isfinite(base["predicted"].to_numpy()) & ~held
    scores = np.sort(np.abs(np.log(base["measured"].to_numpy()[ok] / base["predicted"].to_numpy()[ok])))
    q = scores[int(np.ceil(0.9 * (len(scores) + 1))) - 1]  # the conformal rank over the other GPUs' rows
    np.testing.assert_allclose(np.log(base.loc[held, "upper"] / base.loc[held, "predicted"]), q)


def test_the_results_cache_gives_the_same_tables(result, tmp_path):
    again = ch8.analyse(quick=True, progress=False, n_jobs=1, figures_dir=str(tmp_path))
    assert again.from_cache
    for name, table in result.tables.items():
        pd.testing.assert_frame_equal(again.tables[name], table, check_dtype=False)
