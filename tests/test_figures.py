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


@pytest.mark.parametrize("name", ["fig.png", "ch3", "ch3/fig 1", "../x/y", "ch3/table.csv"])
def test_bad_names(tmp_path, name):
    with pytest.raises(ValueError, match="name"):
        pk.savetable(pd.DataFrame({"a": [1]}), name, tmp_path)


def test_env_var_sets_default_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_FIGURES", str(tmp_path))
    p = pk.savetable(pd.DataFrame({"a": [1.0]}), "ch3/t")
    assert p == tmp_path / "ch3" / "t.csv"
