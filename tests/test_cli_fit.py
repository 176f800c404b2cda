"""`perfkit fit` and `perfkit predict` on a user's CSV."""
import json
from types import SimpleNamespace

import pandas as pd

from perfkit.cli import main
from tests.test_generic import _data


def _run(capsys, *args):
    """``perfkit ARGS`` in this process: exit code, stdout and stderr."""
    code = main(list(args))
    out = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)


def test_fit_then_predict(capsys, tmp_path):
    X, y = _data(n=150)
    X.assign(time=y).to_csv(tmp_path / "data.csv", index=False)
    X.head(4).to_csv(tmp_path / "configs.csv", index=False)
    out = _run(capsys, "fit", str(tmp_path / "data.csv"), "--target", "time", "--numeric", "kernel,filters",
               "--categorical", "act", "--extrinsic", "gpus,batch", "--penalty", "l2", "--lam", "1e-4",
               "--seeds", "2", "--test-size", "0.3", "--out", str(tmp_path / "m.json"))
    assert out.returncode == 0, out.stderr
    assert "generic model" in out.stdout and "random forest" in out.stdout and "MAPE" in out.stdout
    assert "mean ± std over 2 seeds" in out.stdout
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["settings"]["penalty"] == "l2" and doc["settings"]["lam"] == 1e-4
    pred = _run(capsys, "predict", str(tmp_path / "m.json"), str(tmp_path / "configs.csv"),
                "--out", str(tmp_path / "p.csv"))
    assert pred.returncode == 0, pred.stderr
    p = pd.read_csv(tmp_path / "p.csv")
    assert len(p) == 4 and (p["predicted"] > 0).all()


def test_fit_errors_name_the_column(capsys, tmp_path):
    X, y = _data(n=60)
    X.assign(time=y).to_csv(tmp_path / "data.csv", index=False)
    out = _run(capsys, "fit", str(tmp_path / "data.csv"), "--target", "tme", "--numeric", "kernel")
    assert out.returncode == 2 and "target column 'tme' not found; did you mean 'time'" in out.stderr
    out = _run(capsys, "fit", str(tmp_path / "data.csv"), "--target", "time", "--numeric", "kernal")
    assert out.returncode == 2 and "'kernal'" in out.stderr and "did you mean 'kernel'" in out.stderr
    out = _run(capsys, "predict", str(tmp_path / "nope.json"), str(tmp_path / "data.csv"))
    assert out.returncode == 2 and "nope.json" in out.stderr
