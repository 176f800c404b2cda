"""The ch5vol volume-size study: its plan, the exponent fit, the CLI, and a tiny real collection."""
import numpy as np
import pandas as pd
import pytest

from perfkit.model.analytic.scaling import volume_exponents
from perfkit.schema import voxels
from perfkit.cli import main
from perfkit.measure.plans import CH5VOL_BASE, make_plan


def test_ch5vol_plan_is_the_full_grid_in_a_seeded_order():
    plan = make_plan("ch5vol")
    ids = [it[0] for it in plan.items]
    assert len(ids) == len(set(ids)) == 2 * 4 * 3 * 4  # filters × volumes × workers × batch sizes
    assert ids == [it[0] for it in make_plan("ch5vol").items]  # deterministic
    assert ids != sorted(ids) and ids != [it[0] for it in make_plan("ch5vol", seed=1).items]
    for sid, g, cfg in plan.items:
        assert cfg["workers"] == g and f"-G{g}-" in sid
        assert {k: cfg[k] for k in CH5VOL_BASE} == CH5VOL_BASE
        assert sid == f"f{cfg['num_filters']}-v{cfg['volume']}-G{g}-B{cfg['batch_size']}"
    assert len({cfg["seed"] for _, _, cfg in plan.items}) == len(ids)
    assert plan.settings["volumes"] == ["32x38x32", "48x56x48", "64x76x64", "80x96x80"]
    small = make_plan("ch5vol", volumes=[[24, 24, 24]], filters=[16], workers=[1, 2], batch_sizes=[1])
    assert sorted(it[0] for it in small.items) == ["f16-v24x24x24-G1-B1", "f16-v24x24x24-G2-B1"]
    with pytest.raises(ValueError, match="volumes"):
        make_plan("ch5vol", volumes=[[24, 24]])
    with pytest.raises(ValueError, match="filters"):
        make_plan("ch5vol", filters=[])


def test_cli_rejects_ch5vol_flags_for_other_kinds_and_bad_volumes(capsys):
    assert main(["collect", "ch4", "--filters", "16"]) != 0
    assert "--filters" in capsys.readouterr().err
    assert main(["collect", "ch5vol", "--volumes", "32x38"]) != 0
    assert "--volumes" in capsys.readouterr().err


def _grid(q_w, q_b, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for vol, a in (("32x38x32", 2.0), ("48x56x48", 5.0)):
        for g in (1, 2, 3):
            for b in (1, 2, 3, 4):
                t = a * g ** q_w * b ** q_b * np.exp(noise * rng.standard_normal())
                rows.append(dict(status="ok", num_filters=16, volume=vol, workers=g, batch_size=b, epoch_time=t))
    rows.append(dict(status="error", num_filters=16, volume="48x56x48", workers=3, batch_size=4, epoch_time=np.nan))
    return pd.DataFrame(rows)


def test_volume_exponents_recover_a_known_power_law():
    tab = volume_exponents(_grid(-0.8, -0.3))
    assert list(tab["volume"]) == ["32x38x32", "48x56x48"]  # sorted by voxels
    assert list(tab["voxels"]) == [32 * 38 * 32, 48 * 56 * 48]
    np.testing.assert_allclose(tab["q_workers"], -0.8, atol=1e-10)
    np.testing.assert_allclose(tab["q_batch"], -0.3, atol=1e-10)
    np.testing.assert_allclose(tab["r2"], 1.0)
    np.testing.assert_allclose(tab["speedup_max"], 3 ** 0.8)
    assert (tab["n"] == 12).all()  # the error row is ignored
    noisy = volume_exponents(_grid(-0.8, -0.3, noise=0.05))
    assert (abs(noisy["q_workers"] + 0.8) < 4 * noisy["q_workers_se"]).all()
    assert (noisy["q_workers_se"] > 0).all() and (noisy["r2"] < 1).all()


def test_volume_exponents_errors_name_the_problem():
    df = _grid(-1, 0)
    with pytest.raises(ValueError, match="epoch_time"):
        volume_exponents(df.drop(columns="epoch_time"))
    bad = df.copy()
    bad.loc[3, "epoch_time"] = -1.0
    with pytest.raises(ValueError, match="epoch_time: row 3"):
        volume_exponents(bad)
    with pytest.raises(ValueError, match="at least 4 ok rows"):
        volume_exponents(df[df["workers"] == 1])
    with pytest.raises(ValueError, match="volume"):
        voxels("48x56")


@pytest.mark.slow
def test_tiny_ch5vol_collection(tmp_path):
    pytest.importorskip("torch")
    from perfkit.measure.collect import collect

    out = collect("ch5vol", out=tmp_path / "v.csv", progress=False, volumes=[[24, 24, 24], [24, 28, 24]],
                  filters=[16], workers=[1], batch_sizes=[1, 2], steps=1, repeats=1)
    df = pd.read_csv(out)
    assert (df.status == "ok").all(), df.error.tolist()
    assert sorted(df.sample_id) == sorted(f"f16-v{v}-G1-B{b}" for v in ("24x24x24", "24x28x24") for b in (1, 2))
    assert (df.kernel_size == CH5VOL_BASE["kernel_size"]).all() and (df.num_filters == 16).all()
    assert (df.steps_per_epoch == np.ceil(431 / df.batch_size)).all()
