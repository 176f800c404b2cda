"""3D-ResAttNet-18 (Chapter 5): forward/backward shapes and a tiny collection."""
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from perfkit.measure.collect import collect  # noqa: E402
from perfkit.measure.plans import make_plan  # noqa: E402
from perfkit.measure.adapters.resattnet3d import ResAttNet3D, resattnet3d  # noqa: E402
from perfkit.measure.spaces import TABLE_5_1_SPACE  # noqa: E402

VOL = (16, 20, 16)


@pytest.mark.parametrize("k, padding, act, f, b", [(2, "same", "relu", 16, 1), (3, "valid", "tanh", 16, 2),
                                                    (4, "same", "sigmoid", 32, 3), (5, "valid", "relu", 16, 4)])
def test_forward_backward_shapes(k, padding, act, f, b):
    torch.manual_seed(0)
    net = ResAttNet3D(kernel_size=k, stride=2, padding=padding, num_filters=f, activation=act, volume=VOL)
    x = torch.randn(b, 1, *VOL)
    out = net(x)
    assert out.shape == (b, 3)
    # stem output size follows the Table 5.1 padding (Keras semantics)
    stem = net.stem(x)
    expect = [-(-n // 2) for n in VOL] if padding == "same" else [(n - k) // 2 + 1 for n in VOL]
    assert list(stem.shape) == [b, f] + expect
    torch.nn.functional.cross_entropy(out, torch.zeros(b, dtype=torch.long)).backward()
    assert all(p.grad is not None for p in net.parameters())
    assert net.att3.gamma.grad is not None and net.att4.gamma.grad is not None
    widths = [m.out_channels for m in net.modules() if isinstance(m, torch.nn.Conv3d) and m.kernel_size == (3, 3, 3)]
    assert max(widths) == 8 * f  # ResNet-18 widths F, 2F, 4F, 8F


def test_bad_configurations_fail_clearly():
    with pytest.raises(ValueError, match="leaves nothing"):
        ResAttNet3D(kernel_size=5, padding="valid", volume=(4, 4, 4))
    with pytest.raises(ValueError, match="activation"):
        ResAttNet3D(activation="gelu", volume=VOL)
    cfg = {k: v[0] for k, v in TABLE_5_1_SPACE.items()}
    assert isinstance(resattnet3d(cfg, volume=VOL), ResAttNet3D)


@pytest.mark.slow
def test_tiny_ch5_collection(tmp_path):
    out = collect("ch5", out=tmp_path / "ch5.csv", progress=False, samples=2, workers=[1], batch_sizes=[1],
                  volume=[24, 24, 24], steps=1, repeats=3)
    df = pd.read_csv(out)
    assert (df.status == "ok").all(), df.error.tolist()
    assert list(df.sample_id) == [0, 1]
    assert (df.volume == "24x24x24").all() and (df.n_train == 431).all()
    assert (df.steps_per_epoch == 431).all() and (df.epoch_time == 431 * df.step_time).all()
    with pytest.raises(ValueError, match="volume"):
        make_plan("ch5", volume=[16, 16])
