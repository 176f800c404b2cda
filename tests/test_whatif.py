"""What-if tables (perfkit.model.uncertainty.whatif) and `perfkit whatif`: only a column the model reads may be
varied, bad values are named, an output that is an input (or the other output) is refused, the base row's file and
row are named, and the table and figure are written."""
import warnings

import numpy as np
import pandas as pd
import pytest

from perfkit.model.forms.generic import GenericPerformanceModel
from perfkit.model.uncertainty.conformal import ExtrapolationWarning
from perfkit.model.uncertainty.whatif import model_columns, whatif
from tests.cli import one_error, run_cli, write_frame as _write
from tests.frames import INTERVAL_BASE as BASE, INTERVAL_ROLES as ROLES


@pytest.mark.parametrize("column", ["time", "epoch_time", "workers", "Gpus", "kernal"])
def test_whatif_of_a_column_the_model_does_not_read(interval_models, column):
    with pytest.raises(ValueError, match=rf"column {column!r}: the model does not read it.*"
                                         r"'kernel', 'filters', 'act', 'gpus', 'batch'"):
        whatif(interval_models["studentized"], BASE, column, [1, 2, 4])


def test_whatif_columns_of_each_model(interval_models, interval_data):
    X, y = interval_data
    assert model_columns(interval_models["cv+"]) == ["kernel", "filters", "act", "gpus", "batch"]
    assert model_columns(GenericPerformanceModel(**ROLES, random_state=0).fit(X, y)) == \
        ["kernel", "filters", "act", "gpus", "batch"]
    assert model_columns(object()) is None


@pytest.mark.parametrize("values, match", [([1.0, float("nan")], r"every value must be a finite number"),
                                           ([float("inf"), 2.0], r"every value must be a finite number"),
                                           ([], r"give at least one value of 'gpus'")])
def test_whatif_bad_values(interval_models, values, match):
    with pytest.raises(ValueError, match=match):
        whatif(interval_models["split"], BASE, "gpus", values)


def test_whatif_tiny_level_and_no_efficiency_of_levels(interval_models):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        t = whatif(interval_models["cv+"], BASE, "gpus", [1, 2, 3], coverage=1e-12)
        assert (t["lower"] <= t["upper"]).all() and t["speedup"].iloc[0] == 1
        t = whatif(interval_models["studentized"], BASE, "act", ["relu", "tanh"])
    assert "efficiency" not in t.columns and np.isfinite(t["speedup"]).all()


@pytest.mark.parametrize("column", ["time", "nope"])
def test_cli_whatif_of_a_column_the_model_does_not_read(capsys, interval_files, column):
    one_error(run_cli(capsys, "whatif", interval_files / "m.json", "--base", interval_files / "base.csv", "--vary", f"{column}=1,2"),
               rf"column '{column}': the model does not read it.*it reads 'kernel', 'filters', 'act', 'gpus'")


def test_cli_whatif_out_is_base_is_refused(capsys, interval_files):
    before = (interval_files / "base.csv").read_bytes()
    one_error(run_cli(capsys, "whatif", interval_files / "m.json", "--base", interval_files / "base.csv", "--vary", "gpus=1,2",
                    "--out", interval_files / "base.csv"), r"--out '.*base.csv' is the input '.*base.csv'")
    assert (interval_files / "base.csv").read_bytes() == before


@pytest.mark.parametrize("flag", ["--out", "--plot"])
def test_cli_whatif_output_is_model_is_refused(capsys, interval_files, flag):
    before = (interval_files / "m.json").read_bytes()
    one_error(run_cli(capsys, "whatif", interval_files / "m.json", "--base", "kernel=3,filters=8,act=relu,batch=32",
                    "--vary", "gpus=1,2", flag, interval_files / "m.json"), rf"{flag} '.*m.json' is the input")
    assert (interval_files / "m.json").read_bytes() == before


def test_cli_whatif_out_equal_to_plot_is_refused(capsys, interval_files):
    one_error(run_cli(capsys, "whatif", interval_files / "m.json", "--base", interval_files / "base.csv", "--vary", "gpus=1,2",
                    "--out", interval_files / "w.png", "--plot", interval_files / "w.png"), r"--plot '.*w.png' is also --out")
    assert not (interval_files / "w.png").exists()


@pytest.mark.parametrize("name", ["w.xyz", "w"])
def test_cli_whatif_plot_format_checked_first(capsys, interval_files, name):
    one_error(run_cli(capsys, "whatif", interval_files / "m.json", "--base", interval_files / "base.csv", "--vary", "gpus=1,2",
                    "--out", interval_files / "w.csv", "--plot", interval_files / name), r"--plot '.*': end the name with the suffix")
    assert not (interval_files / "w.csv").exists()


def test_cli_whatif_plot_never_writes_through_a_link(capsys, interval_files):
    victim = interval_files / "victim.txt"
    victim.write_text("keep me")
    (interval_files / "w.png").symlink_to(victim)
    r = run_cli(capsys, "whatif", interval_files / "m.json", "--base", interval_files / "base.csv", "--vary", "gpus=1,2",
             "--plot", interval_files / "w.png")
    assert victim.read_text() == "keep me" and "Traceback" not in r.err
    if r.code == 0:  # the link is replaced by the figure, never written through
        assert not (interval_files / "w.png").is_symlink() and (interval_files / "w.png").read_bytes()[:4] == b"\x89PNG"
    else:
        one_error(r, r"--plot")


def test_cli_whatif_writes_table_and_figure(capsys, interval_files):
    r = run_cli(capsys, "whatif", interval_files / "m.json", "--base", interval_files / "base.csv", "--vary", "gpus=1,2,3",
             "--interval", "0.999", "--out", interval_files / "w.csv", "--plot", interval_files / "w.svg")
    assert r.code == 0, r.err
    assert "99.9 % intervals" in r.out and pd.read_csv(interval_files / "w.csv")["speedup"].iloc[0] == 1
    assert (interval_files / "w.svg").read_text().lstrip().startswith("<?xml")


def test_an_empty_cell_of_the_base_row_names_the_file_and_row(pollux_fit, capsys):
    b = pollux_fit.frame.head(6).copy()
    b.loc[2, "batch_per_gpu"] = np.nan
    one_error(run_cli(capsys, "whatif", pollux_fit.model, "--base", _write(pollux_fit, "b.csv", b), "--row", "2", "--vary",
                      "n_gpus=4,8"), r"--base CSV '.*b.csv', row 2 \(--row\): column 'batch_per_gpu' is empty")


def test_a_base_file_whose_name_has_an_equals_sign_is_read_as_a_file(pollux_fit, capsys):
    path = pollux_fit.dir / "run=1.txt"
    pollux_fit.frame.head(3)[["job", "n_gpus", "n_nodes", "batch_per_gpu"]].to_csv(path, index=False)
    r = run_cli(capsys, "whatif", pollux_fit.model, "--base", path, "--vary", "n_gpus=4,8")
    assert r.code == 0 and "speedup" in r.out, r.err


def test_whatif_of_a_form_with_rates_per_measured_level_predicts_what_it_can(lenet):
    """A hybrid form with a rate per measured worker count (1-3): a what-if over 1-16 workers predicts 1-3,
    leaves 4-16 empty and marked, and says why; starting from an unmeasured count is refused."""
    from perfkit.model.forms.hybrid import HybridModel
    from perfkit.model.uncertainty.conformal import ConformalRegressor
    from tests.frames import LENET_ROLES

    X, y = lenet
    model = ConformalRegressor(HybridModel("lenet5", **LENET_ROLES, modifiers={"compute": ["workers"]})).fit(X, y)
    assert model.level_bound_columns() == ["workers"]
    base = X.iloc[0].to_dict()
    with pytest.warns(ExtrapolationWarning, match=r"workers = 4, 16: not predicted \(the model predicts workers only "
                                                  r"at the values measured\)"):
        t = whatif(model, base, "workers", [1, 2, 3, 4, 16])
    assert t["predicted"].notna().tolist() == [True, True, True, False, False]
    assert t["extrapolated"].tolist()[3:] == [True, True] and t["speedup"].iloc[3:].isna().all()
    with pytest.raises(ValueError, match=r"the first value, workers = 8, is the speedup's reference"):
        whatif(model, base, "workers", [8, 1])
