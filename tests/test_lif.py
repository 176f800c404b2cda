"""Eq. 3.9 (OLS of epoch time on workers and LIF) and eq. 3.8 per iteration."""
import numpy as np
import pandas as pd
import pytest

from perfkit.model.analytic import lif as lf

TRUE = {"beta0": 2.0, "beta1": -3.0, "beta2": 10.0}
SIGMA = 0.01


def synthetic(n=60, seed=0, **extra):
    rng = np.random.default_rng(seed)
    workers = np.tile([1, 2, 3], n // 3)
    lif = rng.uniform(1.0, 1.3, n)
    t = TRUE["beta0"] + TRUE["beta1"] * workers + TRUE["beta2"] * lif + rng.normal(0, SIGMA, n)
    return pd.DataFrame({"workers": workers, "lif": lif, "epoch_time": t, **extra})


def test_recovers_known_coefficients():
    # seed 1: a draw where all three 95 % intervals cover the truth (seed 0 misses beta1 at 2.9 SE;
    # test_confidence_intervals_have_nominal_coverage checks the rate over many draws)
    fit = lf.fit_lif_regression(synthetic(seed=1))
    assert isinstance(fit, lf.LIFRegressionResult)
    assert list(fit.params.index) == ["beta0", "beta1", "beta2"]
    truth = pd.Series(TRUE)
    z = (fit.params - truth).abs() / fit.bse
    assert (z < 4).all(), z
    np.testing.assert_allclose(fit.params, truth, atol=0.05)
    ci = fit.conf_int(0.05)
    assert list(ci.columns) == ["lower", "upper"]
    assert ((ci["lower"] < truth) & (truth < ci["upper"])).all()
    # a wider level gives a wider interval
    ci99 = fit.conf_int(0.01)
    assert ((ci99["upper"] - ci99["lower"]) > (ci["upper"] - ci["lower"])).all()
    assert fit.rsquared > 0.999 and fit.nobs == 60
    assert (fit.bse > 0).all() and (fit.bse < 0.05).all()
    assert fit.predict(2, 1.1) == pytest.approx(2 - 6 + 11, abs=0.05)


def test_confidence_intervals_have_nominal_coverage():
    truth = pd.Series(TRUE)
    covered = []
    for seed in range(200):
        ci = lf.fit_lif_regression(synthetic(n=30, seed=seed)).conf_int(0.05)
        covered.append(((ci["lower"] < truth) & (truth < ci["upper"])).to_numpy())
    rate = np.mean(covered, axis=0)
    assert ((rate > 0.9) & (rate < 0.99)).all(), rate


def test_exact_data_and_custom_column_names():
    df = pd.DataFrame({"gpus": [1, 1, 2, 2, 3, 3], "imb": [1.0, 1.1, 1.0, 1.2, 1.1, 1.3]})
    df["secs"] = 2 - 0.5 * df["gpus"] + 10 * df["imb"]
    fit = lf.fit_lif_regression(df, time="secs", workers="gpus", lif="imb")
    np.testing.assert_allclose(fit.params, [2.0, -0.5, 10.0], atol=1e-9)
    assert fit.rsquared == pytest.approx(1.0)


def test_summary_and_to_frame_layout():
    fit = lf.fit_lif_regression(synthetic())
    text = fit.summary()
    for label in ("beta0 (intercept)", "beta1 (workers)", "beta2 (lif)", "epoch_time", "R-squared"):
        assert label in text
    row = fit.to_frame()
    assert list(row.columns) == list(lf.TABLE_COLUMNS)
    assert list(lf.TABLE_COLUMNS[:4]) == ["beta0", "beta1", "beta2", "r2"]
    assert {"se_beta1", "ci_low_beta2", "ci_high_beta0", "nobs"} <= set(row.columns)
    assert len(row) == 1 and row.loc[0, "nobs"] == 60
    assert row.loc[0, "beta2"] == pytest.approx(fit.params["beta2"])
    assert row.loc[0, "ci_high_beta1"] == pytest.approx(fit.conf_int().loc["beta1", "upper"])


def test_grouped_fit_in_table_3_5_layout():
    parts = []
    for i, (model, fw) in enumerate([("CNN", "TensorFlow"), ("MLP", "TensorFlow"), ("CNN", "MXNet")]):
        parts.append(synthetic(n=30, seed=i, model=model, framework=fw))
    df = pd.concat(parts, ignore_index=True).sample(frac=1.0, random_state=0)
    table = lf.fit_lif_regression(df, by=["model", "framework"])
    assert list(table.columns) == ["model", "framework"] + list(lf.TABLE_COLUMNS)
    assert len(table) == 3
    assert set(zip(table["model"], table["framework"])) == {("CNN", "TensorFlow"), ("MLP", "TensorFlow"), ("CNN", "MXNet")}
    assert (table["nobs"] == 30).all()
    np.testing.assert_allclose(table[["beta0", "beta1", "beta2"]], np.tile(list(TRUE.values()), (3, 1)), atol=0.1)
    # same as fitting one group alone
    alone = lf.fit_lif_regression(df[(df["model"] == "MLP") & (df["framework"] == "TensorFlow")])
    row = table[(table["model"] == "MLP")].iloc[0]
    assert row["beta2"] == pytest.approx(alone.params["beta2"])
    # "a,b" form of by
    assert lf.fit_lif_regression(df, by="model,framework").equals(table)


def test_missing_column_is_named():
    with pytest.raises(ValueError, match=r"lif column 'lif' not found; did you mean 'lift'"):
        lf.fit_lif_regression(synthetic().rename(columns={"lif": "lift"}))
    with pytest.raises(ValueError, match=r"by column 'framework' not found"):
        lf.fit_lif_regression(synthetic(), by=["framework"])


@pytest.mark.parametrize(
    "column, value, message",
    [
        ("lif", np.nan, r"lif column 'lif': missing or non-finite value nan in row 4"),
        ("epoch_time", np.inf, r"time column 'epoch_time': missing or non-finite value inf in row 4"),
        ("workers", "two", r"workers column 'workers': non-numeric value 'two' in row 4"),
        ("epoch_time", -1.0, r"time column 'epoch_time': negative time -1 in row 4"),
        ("lif", 0.95, r"lif column 'lif': value 0.95 in row 4 is below 1"),
        ("workers", 0, r"workers column 'workers': value 0 in row 4 is below 1"),
    ],
)
def test_bad_values_name_column_and_row(column, value, message):
    df = synthetic()
    df[column] = df[column].astype(object)
    df.loc[4, column] = value
    with pytest.raises(ValueError, match=message):
        lf.fit_lif_regression(df)


def test_lif_at_one_within_rounding_is_accepted():
    df = synthetic()
    df.loc[0, "lif"] = 3 * 0.1 / (0.1 + 0.1 + 0.1)  # 0.9999999999999999
    assert lf.fit_lif_regression(df).nobs == 60


def test_too_few_rows_names_group():
    df = pd.concat([synthetic(model="CNN"), synthetic(n=3, model="MLP")], ignore_index=True)
    with pytest.raises(ValueError, match=r"group \(model='MLP'\): 3 rows; .* at least 4 observations"):
        lf.fit_lif_regression(df, by="model")
    with pytest.raises(ValueError, match=r"df: 3 rows"):
        lf.fit_lif_regression(synthetic(n=3))


def test_singular_designs_name_column_and_group():
    ok = synthetic(model="CNN")
    const_workers = synthetic(model="MLP").assign(workers=2)
    with pytest.raises(ValueError, match=r"group \(model='MLP'\): column 'workers' is constant \(2\).*singular"):
        lf.fit_lif_regression(pd.concat([ok, const_workers], ignore_index=True), by="model")
    const_lif = synthetic(model="MLP").assign(lif=1.0)
    with pytest.raises(ValueError, match=r"group \(model='MLP'\): column 'lif' is constant \(1\).*singular"):
        lf.fit_lif_regression(pd.concat([ok, const_lif], ignore_index=True), by="model")
    collinear = synthetic().assign(lif=lambda d: 1 + 0.1 * d["workers"])
    with pytest.raises(ValueError, match=r"columns 'workers' and 'lif' are exactly collinear"):
        lf.fit_lif_regression(collinear)
    with pytest.raises(ValueError, match=r"column 'epoch_time' is constant"):
        lf.fit_lif_regression(synthetic().assign(epoch_time=5.0))


def test_conf_int_alpha_is_checked():
    with pytest.raises(ValueError, match=r"alpha: expected a number strictly between 0 and 1"):
        lf.fit_lif_regression(synthetic()).conf_int(1.5)


def test_lif_from_worker_times_hand_values():
    df = pd.DataFrame(
        {
            "iteration": [0, 0, 0, 1, 1, 1],
            "rank": [0, 1, 2, 0, 1, 2],
            "t_compute": [1.0, 2.0, 3.0, 0.1, 0.1, 0.1],
        }
    )
    out = lf.lif_from_worker_times(df)
    assert out.name == "lif" and out.index.name == "iteration"
    # 3 * 3 / 6 = 1.5; equal times -> exactly 1 (not 0.999...)
    assert out.loc[0] == pytest.approx(1.5)
    assert out.loc[1] == 1.0


def test_lif_from_worker_times_several_columns_and_keys():
    df = pd.DataFrame(
        {
            "model": ["CNN"] * 4,
            "iteration": [0, 0, 1, 1],
            "rank": [0, 1, 0, 1],
            "t_f": [1.0, 1.0, 1.0, 2.0],
            "t_b": [1.0, 3.0, 1.0, 2.0],
        }
    )
    out = lf.lif_from_worker_times(df, worker_time=["t_f", "t_b"], by=("model", "iteration"))
    assert out.index.names == ["model", "iteration"]
    # iteration 0: busy [2, 4] -> 2*4/6 = 4/3; iteration 1: [2, 4] -> 4/3
    np.testing.assert_allclose(out.to_numpy(), [4 / 3, 4 / 3])
    assert list(out.reset_index().columns) == ["model", "iteration", "lif"]


def test_lif_from_worker_times_errors():
    df = pd.DataFrame({"iteration": [0, 0], "rank": [0, 0], "t_compute": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"rank column 'rank': rank 0 appears twice in group \(iteration=0\)"):
        lf.lif_from_worker_times(df)
    assert lf.lif_from_worker_times(df, rank=None).tolist() == [pytest.approx(4 / 3)]
    with pytest.raises(ValueError, match=r"worker_time column 't_compute': value 0 in row 1; times must be > 0"):
        lf.lif_from_worker_times(df.assign(rank=[0, 1], t_compute=[1.0, 0.0]))
    with pytest.raises(ValueError, match=r"worker_time column 't_comp' not found; did you mean 't_compute'"):
        lf.lif_from_worker_times(df, worker_time="t_comp")
    with pytest.raises(ValueError, match=r"by: give at least one grouping column"):
        lf.lif_from_worker_times(df, by=())
