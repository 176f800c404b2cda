"""The output helper writes deterministic bytes and validates names."""
import pandas as pd
import pytest

import perfkit as pk


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pk.use_style()
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [3, 1, 2], label="x")
    ax.legend()
    return fig


def test_savefig_is_byte_identical_across_runs(tmp_path):
    import matplotlib.pyplot as plt

    a, b = tmp_path / "a", tmp_path / "b"
    fa = pk.savefig(_figure(), "ch9/fig9_1_test", a)
    fb = pk.savefig(_figure(), "ch9/fig9_1_test", b)
    plt.close("all")
    assert [p.name for p in fa] == ["fig9_1_test.png", "fig9_1_test.svg"]
    for x, y in zip(fa, fb):
        assert x.read_bytes() == y.read_bytes()
    svg = fa[1].read_text()
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg
    assert b"Software" not in fa[0].read_bytes()


def test_savetable_fixed_float_format(tmp_path):
    df = pd.DataFrame({"x": [0.1 + 0.2, 1e-5, 123456789.0], "name": ["a", "b", "c"]})
    path = pk.savetable(df, "ch9/table9_1", tmp_path)
    assert path.read_text() == "x,name\n0.3,a\n1e-05,b\n1.23457e+08,c\n"
    mtime = path.stat().st_mtime_ns
    pk.savetable(df, "ch9/table9_1", tmp_path)
    assert path.stat().st_mtime_ns == mtime  # unchanged content -> not rewritten


@pytest.mark.parametrize("old, new, same", [
    ("a,1.23456,x\n", "a,1.23457,x\n", True),          # last digit: another CPU's rounding
    ("a,1.23456,x\n", "a,1.2358,x\n", False),          # 1e-3 relative: a real change
    ("p,1e-33\n", "p,-2e-30\n", True),                  # both zero to the absolute tolerance
    ("p,0.0015\n", "p,0.0018\n", False),               # small but above the absolute tolerance
    ("holds,0.5\n", "inconclusive,0.5\n", False),      # a word changed: a verdict
    ("a,1,2\n", "a,1,2,3\n", False),                   # a number more
    ("n,nan\n", "n,nan\n", True),
])
def test_agrees_tolerates_last_digits_and_nothing_else(old, new, same):
    from perfkit.report.output import agrees

    assert agrees(old, new) is same


def test_tables_and_figures_within_the_tolerance_keep_the_committed_file(tmp_path):
    import matplotlib.pyplot as plt

    path = pk.savetable(pd.DataFrame({"x": [1.234561]}), "ch9/t", tmp_path)
    pk.savetable(pd.DataFrame({"x": [1.234562]}), "ch9/t", tmp_path)
    assert path.read_text() == "x\n1.23456\n"
    pk.savetable(pd.DataFrame({"x": [1.24]}), "ch9/t", tmp_path)
    assert path.read_text() == "x\n1.24\n"

    def fig(y):
        f, ax = plt.subplots()
        ax.plot([1, 2, 3], y)
        return f

    png, svg = pk.savefig(fig([3, 1, 2]), "ch9/fig", tmp_path)
    before = png.read_bytes(), svg.read_bytes()
    pk.savefig(fig([3, 1, 2 + 1e-9]), "ch9/fig", tmp_path)  # moves a point by far less than a pixel
    assert (png.read_bytes(), svg.read_bytes()) == before
    pk.savefig(fig([3, 1, 2.5]), "ch9/fig", tmp_path)
    assert svg.read_bytes() != before[1] and png.read_bytes() != before[0]
    plt.close("all")


def test_svg_ids_that_hash_the_coordinates_do_not_count_as_a_change(tmp_path):
    """matplotlib names clip paths and markers by a hash of what they draw: a last-digit move of a coordinate
    gives a new id. The coordinates are compared within the tolerance; the ids are not compared."""
    from perfkit.report.output import _unchanged

    old = '<g clip-path="url(#p7707f3869c)"><use xlink:href="#C0_0_655166fec4" x="89.692452" y="191.156152"/></g>'
    path = tmp_path / "f.svg"
    path.write_text(old)
    moved = old.replace("p7707f3869c", "p518bd5d7dc").replace("191.156152", "191.156151")
    assert _unchanged(path, moved.encode(), tolerant=True)
    assert not _unchanged(path, moved.replace("191.156151", "193.1").encode(), tolerant=True)
    assert not _unchanged(path, moved.replace("url(", "href(").encode(), tolerant=True)  # other words still count
    table = tmp_path / "t.csv"  # only SVG files have such ids
    table.write_text("p7707f3869c\n")
    assert not _unchanged(table, b"p518bd5d7dc\n", tolerant=True)


@pytest.mark.parametrize("name", ["fig.png", "ch3", "ch3/fig 1", "../x/y", "ch3/table.csv"])
def test_bad_names(tmp_path, name):
    with pytest.raises(ValueError, match="name"):
        pk.savetable(pd.DataFrame({"a": [1]}), name, tmp_path)


def test_env_var_sets_default_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_FIGURES", str(tmp_path))
    p = pk.savetable(pd.DataFrame({"a": [1.0]}), "ch3/t")
    assert p == tmp_path / "ch3" / "t.csv"


# ------------------------------------------------------------------ thesis figure numbers and the λ figures
def test_per_framework_figures_carry_the_thesis_numbers():
    from perfkit.data.thesis import THESIS_FIGURES, figure_number, figure_stem

    assert figure_stem("ch4", "de_pred_vs_measured", "pytorch") == "fig4_5_de_pred_vs_measured"
    assert figure_stem("ch4", "de_pred_vs_measured", "TensorFlow") == "fig4_3_de_pred_vs_measured"
    assert figure_stem("ch4", "svr_pred_vs_measured", "mxnet") == "fig4_13_svr_pred_vs_measured"
    assert figure_stem("ch4", "intrinsic_coef_paths") == "fig4_16_intrinsic_coef_paths"
    assert figure_stem("ch5", "rf_pred_vs_measured", "PyTorch") == "fig5_4_rf_pred_vs_measured"
    # the List of figures: TensorFlow, MXNet, PyTorch in threes from 4.3 to 4.14, then 4.15-4.17 once each
    numbers = []
    for entry in THESIS_FIGURES["ch4"].values():
        if isinstance(entry, dict):
            assert list(entry) == ["TensorFlow", "MXNet", "PyTorch"]
            numbers += list(entry.values())
        else:
            numbers.append(entry)
    assert sorted(numbers, key=lambda n: int(n.split(".")[1])) == [f"4.{i}" for i in range(3, 18)]
    # a framework the thesis did not measure: no thesis number, an extension's name
    assert figure_number("ch4", "rf_pred_vs_measured", "JAX") == ""
    assert figure_stem("ch4", "rf_pred_vs_measured", "JAX") == "ext_rf_pred_vs_measured_jax"
    with pytest.raises(ValueError, match="name one"):
        figure_stem("ch4", "rf_pred_vs_measured")
    with pytest.raises(ValueError, match="unknown ch4/l1_coef_paths"):
        figure_stem("ch4", "l1_coef_paths")


def _sweep(shift=0.0):
    import numpy as np

    names = {"metric": ["r2_test"], "a": ["a[x]", "a[y]"], "p": ["p[x]", "p[y]"], "q": ["q[batch_size]", "q[workers]"],
             "k": ["k[act=relu]", "k[act=tanh]", "k[opt=sgd]"], "C": ["C"]}
    rows = [(pen, lam, seed, q, kind, float(np.log10(lam)) + seed + shift)
            for pen in ("l1", "l2") for lam in (1e-4, 1e-3, 1e-2) for seed in (0, 1)
            for kind, qs in names.items() for q in qs]
    return pd.DataFrame(rows, columns=["penalty", "lam", "seed", "quantity", "kind", "value"])


def test_coef_path_figures_have_the_thesis_panels_and_both_penalties():
    from perfkit.report import plots

    sweeps = {"PyTorch (cpu)": _sweep(), "TensorFlow (gpu)": _sweep(0.5)}
    axes = plots.plot_coef_paths(sweeps, ("k", "q"), chosen_lam=1e-3)  # Figure 4.17
    assert axes.shape == (2, 4)  # rows: panels (a), (b); columns: framework × penalty
    assert [ax.get_title() for ax in axes[0]] == ["(a) PyTorch (cpu), L1", "(a) PyTorch (cpu), L2",
                                                 "(a) TensorFlow (gpu), L1", "(a) TensorFlow (gpu), L2"]
    assert axes[1][0].get_title() == "(b) PyTorch (cpu), L1"
    assert "categorical" in axes[0][0].get_ylabel() and "extrinsic" in axes[1][0].get_ylabel()
    labels = [line.get_label() for line in axes[0][0].get_lines() if not line.get_label().startswith("_")]
    assert labels == ["act=relu", "act=tanh", "opt=sgd"]
    for ax in axes.flat:  # no two lines of a panel share colour and style
        pairs = [(line.get_color(), line.get_linestyle()) for line in ax.get_lines()
                 if not line.get_label().startswith("_")]
        assert len(pairs) == len(set(pairs))
    axes = plots.plot_coef_paths(sweeps["PyTorch (cpu)"], ("a", "p"), label="PyTorch (cpu)")  # Figure 4.16
    assert axes.shape == (2, 2) and "coefficients a" in axes[0][0].get_ylabel().replace("\n", " ")
    with pytest.raises(ValueError, match="kinds"):
        plots.plot_coef_paths(_sweep(), ("zz",))


def test_r2_figure_has_an_l1_and_an_l2_panel_with_a_line_per_framework():
    from perfkit.report import plots

    axes = plots.plot_r2_vs_lambda({"PyTorch (cpu)": _sweep(), "MXNet (gpu)": _sweep(0.5)})
    assert [ax.get_title() for ax in axes] == ["(a) L1", "(b) L2"]
    assert len(axes[0].containers) == 2  # one errorbar line per framework
    only_l2 = _sweep()[lambda d: d["penalty"] == "l2"]
    assert [ax.get_title() for ax in plots.plot_r2_vs_lambda(only_l2)] == ["(a) L2"]


@pytest.mark.parametrize("quick, changes, marked", [(True, True, True), (False, True, False), (True, False, False)])
def test_a_quick_runs_figures_carry_the_mark(monkeypatch, quick, changes, marked):
    """Every figure a chapter presents in quick mode says so on its face (shown or saved); a full run's do not,
    nor a chapter whose quick mode computes exactly the full run (Chapter 3)."""
    from dataclasses import dataclass

    from matplotlib.figure import Figure

    from perfkit.chapters.common import run_chapter
    from perfkit.chapters.store import Results
    from perfkit.report.output import QUICK_MARK

    @dataclass
    class Tiny(Results):
        x: float = 1.0

    @dataclass
    class P:
        quick: bool
        cache: bool = False
        QUICK_CHANGES_RESULTS = changes

    def present(results, res):
        res.figures["a"], res.figures["b"] = Figure(), Figure()

    monkeypatch.setenv("PERFKIT_RESULTS_CACHE", "0")
    res = run_chapter("toy", P(quick), [], lambda p: Tiny(), Tiny, present)
    marks = [[t.get_text() for t in fig.texts].count(QUICK_MARK) for fig in res.figures.values()]
    assert marks == ([1, 1] if marked else [0, 0])
