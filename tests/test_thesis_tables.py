"""Spot checks of the transcribed tables against the thesis text (line numbers of the seed file)."""
import math

import pandas as pd
import pytest

import perfkit as pk
from perfkit.data.thesis import THESIS_TABLES


def _one(df, **keys):
    sel = df
    for k, v in keys.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, f"expected one row for {keys}, got {len(sel)}"
    return sel.iloc[0]


def test_every_table_loads_with_common_columns():
    for name in THESIS_TABLES:
        df = pk.load_thesis_table(name)
        assert len(df) > 0, name
        for col in ("source", "table", "mean", "std", "unit", "also_in", "note"):
            assert col in df.columns, (name, col)
        assert pd.api.types.is_float_dtype(df["mean"]), name
        assert df["mean"].notna().all(), name
        assert set(df["source"]) <= {"thesis", "paper_iucc2021", "paper_ssci2022", "journal_access"}


@pytest.mark.parametrize(
    "name, keys, mean, std",
    [
        # Table 3.2 (l. 690-715)
        ("3.2", dict(model="CNN", framework="Chainer", phase="t_iter"), 0.4009, 0.0240),
        ("3.2", dict(model="MLP", framework="TensorFlow", phase="t_u"), 0.5985, 0.0089),
        ("3.2", dict(model="Autoencoder", framework="MXNet", phase="t_b"), 0.2265, 0.0076),
        ("3.2", dict(model="MLP", framework="Chainer", phase="t_io"), 0.0001, 0.000018),
        # Table 3.3 (l. 717-733)
        ("3.3", dict(model="MLP", framework="Chainer", gpus=3), 0.2345, None),
        ("3.3", dict(model="Autoencoder", framework="TensorFlow", gpus=2), 0.7187, None),
        # Table 3.4 (l. 803-817) / paper Table IV (l. ~1744)
        ("3.4", dict(source="thesis", model="Autoencoder", framework="MXNet", gpus=3), 1.213, None),
        ("3.4", dict(source="paper_iucc2021", model="Autoencoder", framework="TensorFlow", gpus=3), 1.27, None),
        # Table 4.2 (l. 1035-1059)
        ("4.2", dict(framework="MXNet", parameter="num_filters", symbol="a"), 554.87, 311.73),
        ("4.2", dict(framework="PyTorch", parameter="gpus", symbol="q"), -1.029, 0.001),
        ("4.2", dict(framework="TensorFlow", parameter="C", symbol="C"), 1.930, 0.122),
        ("4.2", dict(framework="PyTorch", parameter="dataset", level="cifar10", symbol="a"), 308.73, 53.32),
        # Table 4.3 (l. 1097-1121)
        ("4.3", dict(framework="PyTorch", parameter="dropout", symbol="p"), -5.00, 0.00),
        ("4.3", dict(framework="PyTorch", parameter="padding", level="valid", symbol="a"), -0.57, 1.56),
        ("4.3", dict(framework="TensorFlow", parameter="batch_size", symbol="q"), -1.19, 0.01),
        ("4.3", dict(framework="MXNet", parameter="C", symbol="C"), 3.45, 0.024),
        # Table 5.2 (l. 1278-1300)
        ("5.2", dict(parameter="num_filters", symbol="p"), 0.21, 0.01),
        ("5.2", dict(parameter="gpus", symbol="q"), -0.94, 0.02),
        ("5.2", dict(parameter="C", symbol="C"), 75.87, 6.35),
        # Table 5.4
        ("5.4", dict(framework="PyTorch"), -0.94, 0.02),
    ],
)
def test_spot_checks_mean_std(name, keys, mean, std):
    row = _one(pk.load_thesis_table(name), **keys)
    assert row["mean"] == pytest.approx(mean)
    if std is None:
        assert math.isnan(row["std"])
    else:
        assert row["std"] == pytest.approx(std)


def test_table3_5_thesis_and_paper_versions_kept():
    t = pk.load_thesis_table("3.5")
    th = _one(t, source="thesis", model="MLP", framework="Chainer", quantity="beta1")
    pa = _one(t, source="paper_iucc2021", model="MLP", framework="Chainer", quantity="beta1")
    assert th["mean"] == pytest.approx(0.1584)
    assert pa["mean"] == pytest.approx(-10.1584)
    assert _one(t, source="thesis", model="CNN", framework="TensorFlow", quantity="beta2")["mean"] == pytest.approx(369.4848)
    assert _one(t, source="thesis", model="CNN", framework="Chainer", quantity="r2")["mean"] == pytest.approx(0.99)


def test_table4_4_and_journal5_differ_for_pytorch_l2():
    # guide item 9: 27 % in thesis Table 4.4, 14 % in journal Table 5
    t44 = pk.load_thesis_table("4.4")
    assert _one(t44, penalty="L2", framework="PyTorch", metric="MAPE")["mean"] == 27
    assert _one(t44, penalty="L1", framework="MXNet", metric="RMSE")["mean"] == pytest.approx(10.28)
    j5 = pk.load_thesis_table("journal5")
    assert _one(j5, method="DE+L2", framework="PyTorch")["mean"] == 14
    assert _one(j5, method="RF", framework="PyTorch")["mean"] == 23
    assert _one(j5, method="SVM", framework="PyTorch")["mean"] == 54


def test_scaling_power_versions():
    assert _one(pk.load_thesis_table("4.5"), framework="TensorFlow")["mean"] == pytest.approx(-0.73)
    assert _one(pk.load_thesis_table("journal6"), framework="TensorFlow")["mean"] == pytest.approx(-0.74)
    assert _one(pk.load_thesis_table("conference2"), framework="MXNet")["mean"] == pytest.approx(-0.99)
    c1 = pk.load_thesis_table("conference1")
    assert _one(c1, method="RF", framework="PyTorch")["mean"] == pytest.approx(6.42)
    assert _one(c1, method="DE", framework="PyTorch")["mean"] == pytest.approx(3.55)
    assert _one(pk.load_thesis_table("5.3"), method="RF")["mean"] == pytest.approx(0.07)


def test_table_sizes():
    assert len(pk.load_thesis_table("3.2")) == 63  # 3 models x 3 frameworks x 7 phases
    assert len(pk.load_thesis_table("3.3")) == 18
    assert len(pk.load_thesis_table("3.4", source="paper_iucc2021")) == 18
    # 3 frameworks x (6 numeric x 2 + 10 levels + 2 extrinsic + C) = 3 x 25
    assert len(pk.load_thesis_table("4.2")) == 75
    assert len(pk.load_thesis_table("4.3")) == 75


@pytest.mark.parametrize("alias", ["3.2", "table3_2", "Table 3.2", "table 3.2", "3_2"])
def test_name_aliases(alias):
    assert pk.load_thesis_table(alias).attrs["name"] == "3.2"


@pytest.mark.parametrize("alias, canon", [("journal_table5", "journal5"), ("conference I", "conference1"),
                                          ("Conference_Table1", "conference1")])
def test_paper_aliases(alias, canon):
    assert pk.load_thesis_table(alias).attrs["name"] == canon


def test_unknown_table_and_source_raise_valueerror():
    with pytest.raises(ValueError, match="unknown thesis table '4.9'.*known tables: 3.2"):
        pk.load_thesis_table("4.9")
    with pytest.raises(ValueError, match="source 'journal_access' not in table 3.2"):
        pk.load_thesis_table("3.2", source="journal_access")
    with pytest.raises(ValueError, match="string"):
        pk.load_thesis_table(3.2)


def test_list_tables():
    lst = pk.list_thesis_tables()
    assert set(lst["name"]) == set(THESIS_TABLES)
