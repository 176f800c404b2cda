"""Frameworks on identical configurations: the paired ratio table and its errors."""
import numpy as np
import pandas as pd
import pytest

from perfkit.model.selection.paired import COLUMNS, paired_frame, paired_ratios


def _frame(times, workers=(1, 2, 3, 1, 2, 3), status="ok"):
    return pd.DataFrame({"sample_id": range(len(times)), "status": status, "workers": list(workers),
                         "optimizer": ["adam", "sgd"] * (len(times) // 2), "epoch_time": times})


def test_ratio_is_the_geometric_mean_with_an_interval_per_level():
    ref = _frame([1.0, 2.0, 3.0, 1.0, 2.0, 3.0])
    other = _frame([2.0, 2.0, 3.0, 2.0, 2.0, 3.0])  # twice as slow with one worker, equal otherwise
    t = paired_ratios({"pytorch-cpu": ref, "tensorflow-cpu": other}, "epoch_time", ["workers", "optimizer"], b=300)
    assert list(t.columns) == COLUMNS
    by = t.set_index(["factor", "level"])
    assert by.loc[("workers", "1"), "ratio"] == pytest.approx(2.0)
    assert by.loc[("workers", "2"), "ratio"] == pytest.approx(1.0)
    assert by.loc[("all", "all"), "ratio"] == pytest.approx(2 ** (2 / 6))
    all_row = by.loc[("all", "all")]
    assert all_row["lo"] <= all_row["ratio"] <= all_row["hi"] and all_row["lo"] < all_row["hi"]
    assert by.loc[("workers", "1"), "lo"] == pytest.approx(2.0)  # no spread within the level: a zero-width interval
    assert set(t["reference"]) == {"pytorch-cpu"} and set(t["framework"]) == {"tensorflow-cpu"}


def test_only_samples_measured_in_both_are_paired():
    ref = _frame([1.0] * 6)
    other = _frame([3.0] * 6).assign(status=["ok", "error", "ok", "ok", "ok", "ok"])
    long = paired_frame({"pytorch-cpu": ref, "mxnet-cpu": other.iloc[:5]}, "epoch_time", ["workers"])
    assert sorted(long["sample_id"]) == [0, 2, 3, 4]
    assert np.allclose(long["log_ratio"], np.log(3.0))


def test_another_sampler_is_one_clear_error():
    ref = _frame([1.0] * 6)
    other = _frame([1.0] * 6, workers=(1, 2, 3, 3, 2, 1))
    with pytest.raises(ValueError, match=r"^mxnet-cpu: sample 3 is another configuration than in pytorch-cpu "
                                         r"\(workers 3 vs 1\)"):
        paired_ratios({"pytorch-cpu": ref, "mxnet-cpu": other}, "epoch_time", ["workers"])


def test_bad_input_names_what_is_wrong():
    ref = _frame([1.0] * 6)
    with pytest.raises(ValueError, match="needs two or more frameworks"):
        paired_ratios({"pytorch-cpu": ref}, "epoch_time", ["workers"])
    with pytest.raises(ValueError, match="^mxnet-cpu: column 'batch_size' missing"):
        paired_ratios({"pytorch-cpu": ref.assign(batch_size=8), "mxnet-cpu": ref}, "epoch_time", ["batch_size"])
    with pytest.raises(ValueError, match="^reference: 'jax-cpu' is not one of"):
        paired_ratios({"pytorch-cpu": ref, "mxnet-cpu": ref}, "epoch_time", ["workers"], reference="jax-cpu")


def test_every_frameworks_ch4_file_holds_pytorchs_configurations_and_parameter_counts(root):
    """The shipped ch4 files are a paired design: sample i is the same configuration, with the same model size."""
    from perfkit.schema import ROLES

    ref = pd.read_csv(root / "data/measured/pytorch-cpu/ch4_lenet5.csv").set_index("sample_id")
    others = sorted(p for p in (root / "data/measured").glob("*-cpu/ch4_lenet5.csv") if "pytorch" not in str(p))
    assert others, "no other framework's ch4 file shipped"
    columns = [c for cols in ROLES["ch4"].values() for c in cols] + ["n_params"]
    for path in others:
        df = pd.read_csv(path).set_index("sample_id")
        assert df.index.isin(ref.index).all(), path
        same = df[columns].astype(str) == ref.loc[df.index, columns].astype(str)
        assert same.all().all(), (path, same.all()[~same.all()].index.tolist())
