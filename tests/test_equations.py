"""Chapter 3 equations: hand-computed values, vectorisation and bad input."""
import numpy as np
import pandas as pd
import pytest

import perfkit as pk
from perfkit.model.analytic import equations as eq


def test_eq3_1_sgd_hand_value():
    # 0.1 + 0.2 + 0.3 + 0.4 + 0.5 = 1.5
    assert pk.iteration_time_sgd(0.1, 0.2, 0.3, 0.4, 0.5) == pytest.approx(1.5)


def test_eq3_1_vectorised_and_series():
    out = pk.iteration_time_sgd([0.1, 1.0], 0.0, 0.5, [0.25, 0.5], 0.125)
    np.testing.assert_allclose(out, [0.975, 2.125])
    s = pd.Series([1.0, 2.0], index=["a", "b"])
    res = pk.iteration_time_sgd(s, 0, 0, 0, 0.5)
    assert isinstance(res, pd.Series) and list(res.index) == ["a", "b"]
    assert res["b"] == pytest.approx(2.5)


def test_eq3_2_ssgd_hand_value_and_reduction_to_3_1():
    # 0.1 + 0.2 + 0.3 + 0.4 + 0.6 + 0.5 = 2.1
    assert pk.iteration_time_ssgd(0.1, 0.2, 0.3, 0.4, 0.6, 0.5) == pytest.approx(2.1)
    assert pk.iteration_time_ssgd(0.1, 0.2, 0.3, 0.4, 0.0, 0.5) == pytest.approx(
        pk.iteration_time_sgd(0.1, 0.2, 0.3, 0.4, 0.5)
    )


def test_eq3_3_multi_takes_slowest_worker():
    # workers: 0.3+0.5+0.1 = 0.9 and 0.4+0.5+0.2 = 1.1 -> max 1.1; + 0.1 + 0.2 + 0.05 + 0.25 = 1.7
    t = pk.iteration_time_multi(0.1, 0.2, 0.05, [0.3, 0.4], [0.5, 0.5], [0.1, 0.2], 0.25)
    assert t == pytest.approx(1.7)


def test_eq3_3_multi_batch_of_iterations():
    # two iterations (rows) x three workers (columns)
    tf = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    t = pk.iteration_time_multi(0.0, 0.0, 0.5, tf, 0.0, 0.0, [0.25, 0.0])
    np.testing.assert_allclose(t, [3.75, 1.5])


def test_eq3_4_single_hand_value():
    # 0.1 + 0.2 + 0.05 + 0.3 + 0.4 + 0.5 = 1.55
    assert pk.iteration_time_single(0.1, 0.2, 0.05, 0.3, 0.4, 0.5) == pytest.approx(1.55)


def test_eq3_5_both_variants():
    # thesis: max(0.25+0.25+0.125, 0.5+0.25) = 0.75 ; paper adds t_md=0.5 to loading: max(0.625, 1.25) = 1.25
    assert pk.iteration_time_pipelined(0.5, 0.25, 0.25, 0.25, 0.125, t_md=0.5) == pytest.approx(0.75)
    assert pk.iteration_time_pipelined(0.5, 0.25, 0.25, 0.25, 0.125, t_md=0.5, variant="paper") == pytest.approx(1.25)
    # compute-bound: max(1.0+1.0+0.5, 0.1+0.1) = 2.5 in both
    for v in eq.VARIANTS:
        assert pk.iteration_time_pipelined(0.1, 0.1, 1.0, 1.0, 0.5, t_md=0.1, variant=v) == pytest.approx(2.5)


def test_eq3_6_speedup_hand_value():
    # 2 * 0.4 / 0.5 = 1.6
    assert pk.speedup(2, 0.4, 0.5) == pytest.approx(1.6)
    np.testing.assert_allclose(pk.speedup([1, 2, 3], 0.4, [0.4, 0.4, 0.6]), [1.0, 2.0, 2.0])


def test_eq3_7_thesis_variant_hand_value():
    # numerator max(0.1+0.1, 0.2+0.2+0.4) = 0.8
    # denominator max(0.1+0.1+0.3, 0.2+0.2+0.4) = 0.8 -> S = 2 * 0.8/0.8 = 2
    assert pk.speedup_pipelined(2, 0.1, 0.1, 0.2, 0.2, 0.4, 0.4, t_md=0.3) == pytest.approx(2.0)
    # I/O-bound denominator: t_md = 1.0 -> den = max(1.2, 0.8) = 1.2 -> S = 2*0.8/1.2 = 4/3
    assert pk.speedup_pipelined(2, 0.1, 0.1, 0.2, 0.2, 0.4, 0.4, t_md=1.0) == pytest.approx(4 / 3)


def test_eq3_7_paper_variant_hand_value():
    # numerator max(0.1+0.1, 0.2+0.2) = 0.4 (no t_u); denominator max(0.2, 0.2+0.2+0.4) = 0.8 -> S = 2*0.4/0.8 = 1
    assert pk.speedup_pipelined(2, 0.1, 0.1, 0.2, 0.2, 0.4, 0.4, t_md=1.0, variant="paper") == pytest.approx(1.0)


def test_eq3_7_t_io_on_n_workers():
    # thesis: num max(0.1+0.1, 0.2+0.2+0.4)=0.8; den max(0.9+0.1+0, 0.2+0.2+0.4)=1.0 -> 3*0.8/1.0 = 2.4
    assert pk.speedup_pipelined(3, 0.1, 0.1, 0.2, 0.2, 0.4, 0.4, t_io_n=0.9) == pytest.approx(2.4)


def test_eq3_8_lif_hand_values():
    # 3 * 3 / (1 + 2 + 3) = 1.5 ; balanced -> 1
    assert pk.load_imbalance_factor([1.0, 2.0, 3.0]) == pytest.approx(1.5)
    assert pk.load_imbalance_factor([0.7, 0.7]) == pytest.approx(1.0)
    np.testing.assert_allclose(pk.load_imbalance_factor([[1.0, 3.0], [2.0, 2.0]]), [1.5, 1.0])
    # the paper's form max/mean is the same number
    t = np.array([0.3, 0.5, 0.4])
    assert pk.load_imbalance_factor(t) == pytest.approx(t.max() / t.mean())


def test_evaluate_on_dataframe():
    df = pd.DataFrame({"t_io": [0.1, 0.2], "t_h2d": [0.0, 0.0], "t_f": [1.0, 1.0], "t_b": [1.0, 2.0],
                       "t_update": [0.5, 0.5]})
    out = pk.evaluate(pk.iteration_time_sgd, df, t_u="t_update")
    assert list(out) == pytest.approx([2.6, 3.7])
    with pytest.raises(ValueError, match="t_f"):
        pk.evaluate(pk.iteration_time_sgd, df.drop(columns="t_f"), t_u="t_update")


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: pk.iteration_time_sgd(-0.1, 0, 0, 0, 0), "t_io: negative time -0.1"),
        (lambda: pk.iteration_time_ssgd(0, 0, 0, 0, [0.1, -1.0], 0), "t_c: negative time -1.0 at position 1"),
        (lambda: pk.iteration_time_sgd([0.1, 0.2], 0, [0.1, 0.2, 0.3], 0, 0), "mismatched lengths"),
        (lambda: pk.iteration_time_multi(0, 0, 0, [0.1, 0.2], [0.1, 0.2, 0.3], 0, 0), "mismatched lengths.*t_f.*t_b"),
        (lambda: pk.iteration_time_sgd(float("nan"), 0, 0, 0, 0), "t_io: non-finite"),
        (lambda: pk.iteration_time_sgd("fast", 0, 0, 0, 0), "t_io: expected numeric"),
        (lambda: pk.iteration_time_pipelined(0, 0, 0, 0, 0, variant="journal"), "variant"),
        (lambda: pk.speedup(0, 1.0, 1.0), "n_workers"),
        (lambda: pk.speedup(2, 0.0, 1.0), "t_iter_1: non-positive"),
        (lambda: pk.speedup_pipelined(2, 0, 0, 0, 0, 0, 0), "denominator is zero"),
        (lambda: pk.load_imbalance_factor([1.0, 0.0]), "times: non-positive"),
        (lambda: pk.load_imbalance_factor(2.0), "one time per worker"),
        (lambda: pk.load_imbalance_factor([]), "times: empty"),
    ],
)
def test_bad_input_raises_clear_valueerror(call, match):
    with pytest.raises(ValueError, match=match):
        call()
