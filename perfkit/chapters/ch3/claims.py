"""Chapter 3's claims (:data:`CLAIMS`) and the evidence texts, read from :class:`Ch3Quantities`.

Every claim's ``quantity`` and ``evidence`` take the quantities as a :class:`Ch3Quantities` (a mapping of
quantity names is turned into one, so a misspelt name raises ``TypeError``); ``needs`` names its fields.
"""
from __future__ import annotations

import numpy as np

from ...report.claims import Claim, fmt, worst
from ...evidence import Evidence
from .params import VARIANTS
from .quantities import BETTER_THAN_TF, framework_key
from .results import Ch3Quantities

__all__ = ["CLAIMS", "framework_ranking"]

_NO_MULTI = "no multi-worker measurements given"
_NO_TREND = "needs t_c timed on its own on two worker counts G >= 2"
_NO_FIT = "the regression is not identifiable on this data"
_NO_FWS = "cannot be tested: needs measured runs of TensorFlow, MXNet and Chainer (framework_csvs)"
_T32 = "thesis Table 3.2 (data/thesis/table3_2.csv)"
_T33 = "thesis Table 3.3 (data/thesis/table3_3.csv)"


def _cell_text(c) -> str:
    """``("CNN", 2)`` → ``"CNN G=2"``; other tuples joined with ``/``."""
    if not isinstance(c, tuple):
        return str(c)
    if len(c) == 2 and isinstance(c[1], (int, np.integer)):
        return f"{c[0]} G={c[1]}"
    return "/".join(map(str, c))


#: most cells an evidence text lists; beyond it, those furthest from the claim (a cluster trace has 100s)
MAX_CELLS = 12


def _cells_text(cells, digits: int = 3, scale: float = 1.0, unit: str = "", side: str | None = None) -> str:
    """``"CNN G=2: 0.96 [0.94, 0.98]; ..."``: every cell's estimate and interval; of more than :data:`MAX_CELLS`
    cells, the :data:`MAX_CELLS` furthest on the wrong side of a ``side`` claim (largest first for ``"<"``)."""
    items = list(cells.items())
    more = ""
    if len(items) > MAX_CELLS and side in ("<", ">"):
        items = sorted(items, key=lambda kv: kv[1].estimate, reverse=side == "<")[:MAX_CELLS]
        more = f"; … {len(cells) - MAX_CELLS} more cells, each closer to the claim"
    return "; ".join(f"{_cell_text(c)}: {e.map(lambda x: scale * x).text(digits)}{unit}" for c, e in items) + more


def framework_ranking(speedups, better=BETTER_THAN_TF, worse: str = "TensorFlow"):
    """Per resample, the smallest margin by which a ``better`` framework's speedup exceeds ``worse``'s, over models.

    ``speedups`` maps a framework label to ``{model: Evidence}`` (the measured speedup
    on the largest worker count). Returns None when ``worse`` or every ``better``
    framework is missing, or when they share no model.
    """
    by = {framework_key(fw): cells for fw, cells in speedups.items()}
    ref = by.get(worse.lower())
    others = [by[b.lower()] for b in better if b.lower() in by]
    if ref is None or not others:
        return None
    diffs = [Evidence.combine(lambda a, axis: a[0] - a[1], [o[m], ref[m]]) for o in others for m in o if m in ref]
    return Evidence.combine(np.min, diffs) if diffs else None


def _ranking_text(q: Ch3Quantities) -> str:
    return "; ".join(f"{fw}: " + ", ".join(f"{m} {e.text(3)}" for m, e in cells.items())
                     for fw, cells in q.framework_speedup.items())


def _off(cells, side, threshold, digits: int = 3) -> list[str]:
    """The cells whose estimate is on the wrong side of ``threshold``."""
    bad = [(c, e) for c, e in cells.items() if (e.estimate >= threshold if side == "<" else e.estimate <= threshold)]
    return [f"{_cell_text(c)} {fmt(e.estimate, digits)}" for c, e in bad]


def _t35_text(q: Ch3Quantities) -> str:
    cells, vals = q.published_t35_vs_paper, q.published_t35_values or {}
    bad = [c for c, e in cells.items() if e.estimate > 0]
    shown = "; ".join(f"{c[0]}/{c[1]} {c[2]}: {vals[c][0]:g} vs {vals[c][1]:g}" if c in vals else _cell_text(c)
                      for c in bad[:4])
    more = ", …" if len(bad) > 4 else ""
    return f"{len(bad)} of {len(cells)} coefficients differ beyond rounding" + (f" ({shown}{more})" if bad else "")


def _rank_text(q: Ch3Quantities) -> str:
    """Per (model, framework): in how many (GPUs, form) cells eq. 3.7 puts TensorFlow ahead."""
    groups: dict = {}
    for (model, _, _, fw), e in q.published_eq37_rank.items():
        groups.setdefault((fw, model), []).append(e.estimate <= 0)
    parts = [f"{m} vs {fw} in {sum(v)} of {len(v)}" for (fw, m), v in groups.items() if any(v)]
    return ("TensorFlow ahead (2–3 GPUs × thesis/paper form): " + "; ".join(parts)) if parts else \
        "TensorFlow behind in every cell"


def _typed(fn):
    """``fn`` taking :class:`Ch3Quantities` as a claim function taking them or a mapping of them."""
    return lambda q: fn(Ch3Quantities.of(q))


def _claim(key, claim, thesis, rule, quantity, evidence, side, threshold, *, needs=None, missing="", data=""):
    return Claim(key, claim, thesis, rule, needs=needs or (key,), quantity=_typed(quantity), side=side,
                 threshold=threshold, evidence=_typed(evidence), missing=missing, data=data)


def _cells_claim(key, field, claim, thesis, rule, side, threshold, label, missing, digits=3, scale=1.0, unit=""):
    """A claim on every cell of the quantity ``field``: its worst cell against ``threshold``."""
    return _claim(key, claim, thesis, rule, lambda q: worst(getattr(q, field), side),
                  lambda q: label + _cells_text(getattr(q, field), digits, scale, unit, side), side, threshold,
                  needs=(field,), missing=missing)


def _published(key, claim, thesis, rule, side, threshold, evidence, data):
    return _claim(key, claim, thesis, rule, lambda q: worst(getattr(q, key), side), evidence, side, threshold,
                  data=data)


_MEASURED = (
    _cells_claim("t_c_grows", "t_c_trend", "gradient aggregation time grows with the workers (from 2 to 3 GPUs in "
                 "the thesis)", "§3.4.2, Table 3.3",
                 "slope of log t_c on log G over the worker counts G >= 2 measured > 0 for every model (the smallest; "
                 "on G = 2, 3 the sign of t_c(3) − t_c(2))", ">", 0.0, "slope of log t_c on log G (cell: largest G): ",
                 _NO_TREND),
    _claim("lif_vs_speedup", "higher LIF goes with lower speedup (strongly correlated)", "§3.4.3, §3.5",
           "Spearman ρ of LIF with speedup/G over the (model, G) cells <= −0.5", lambda q: q.lif_rho,
           lambda q: f"ρ = {q.lif_rho.text(2)} over {q.get('lif_cells', '?')} cells (model or job, G)", "<", -0.5,
           needs=("lif_rho",), missing=_NO_MULTI),
    _cells_claim("speedup", "speedup", "more workers speed training up", "§3.4.2, Figures 3.5–3.7",
                 "speedup on the most workers measured > 1 for every model (the smallest)", ">", 1.0,
                 "speedup on the most workers: ", _NO_MULTI),
    *(_cells_claim(f"eq37_{v}", f"eq37_{v}", f"eq. 3.7 ({v} form) predicts the measured speedup", "eq. 3.7",
                   "relative error <= 20 % in every multi-worker cell (the largest)", "<", 0.2, "relative error: ",
                   _NO_MULTI, 2, 100, " %") for v in VARIANTS),
    _cells_claim("overlap", "overlap", "overlapping gradient aggregation with backward shortens the iteration",
                 "§3.2.4 (the overlap behind eq. 3.7's max), §3.4.2",
                 "overlapped / phased iteration time < 1 in every multi-worker cell (the largest)", "<", 1.0,
                 "overlapped / phased: ", "needs both the phased and the overlapped mode"),
    _cells_claim("lif_regression", "lif_r2", "epoch time is well explained by workers and LIF (eq. 3.9)",
                 "§3.4.3, Table 3.5", "R² >= 0.9 for every model (the smallest), as the published fits", ">", 0.9,
                 "R²: ", _NO_FIT),
    _cells_claim("lif_coefficient", "lif_beta2", "load imbalance lengthens the epoch (β2 > 0 in eq. 3.9)",
                 "§3.4.3, Table 3.5", "β2 (seconds per unit of LIF) > 0 for every model (the smallest)", ">", 0.0,
                 "β2: ", _NO_FIT),
)

_FRAMEWORKS = (
    _claim("framework_ranking", "MXNet and Chainer scale better than TensorFlow", "§3.4.2, §3.5",
           "measured speedup on the most workers: MXNet's and Chainer's minus TensorFlow's > 0 in every model "
           "(the smallest margin)", lambda q: framework_ranking(q.framework_speedup), _ranking_text, ">", 0.0,
           needs=("framework_speedup",), missing=_NO_FWS),
    _cells_claim("fw_mxnet_linear", "fw_mxnet_efficiency", "MXNet scales linearly from one to three workers",
                 "§3.4.2, Figures 3.5–3.7", "slope of MXNet's speedup on G through the origin, over the worker counts "
                 "measured, >= 0.9 (the smallest model; 1 = linear)", ">", 0.9, "slope of speedup on G: ", _NO_FWS),
    _cells_claim("fw_mxnet_aggregation", "fw_mxnet_tc", "MXNet aggregates gradients faster than TensorFlow and Chainer",
                 "§3.4.2, Figures 3.8–3.13", "t_c of TensorFlow and of Chainer over MXNet's > 1 for every model on 2 "
                 "on every G >= 2 measured (the smallest ratio; phased mode: each framework's explicit collective)", ">", 1.0,
                 "t_c(other) / t_c(MXNet): ", _NO_FWS),
    _cells_claim("fw_tf_lif", "fw_tf_lif", "TensorFlow's poor scaling goes with the highest load imbalance",
                 "§3.4.3, Table 3.4", "LIF of TensorFlow minus MXNet's and Chainer's > 0 for every model on every "
                 "G >= 2 measured (the smallest)", ">", 0.0, "LIF(TF) − LIF(other): ", _NO_FWS),
    _cells_claim("fw_tf_cnn_forward", "fw_tf_cnn_forward", "TensorFlow's CNN forward pass is slower than MXNet's and "
                 "Chainer's", "§3.4.1, Table 3.2, Figure 3.2",
                 "t_f(TensorFlow) / t_f(other) > 1 for the CNN on one worker (the smallest)", ">", 1.0, "t_f ratio: ",
                 _NO_FWS),
    _cells_claim("fw_mxnet_backward", "fw_mxnet_backward", "MXNet's backward pass is slower than TensorFlow's and "
                 "Chainer's", "§3.4.1, Table 3.2", "t_b(MXNet) / t_b(other) > 1 for every model on one worker (the "
                 "smallest)", ">", 1.0, "t_b ratio: ", _NO_FWS),
)

_PUBLISHED = (
    _published("published_lif", "published: LIF >= 1 in every cell (eq. 3.8)", "§3.4.3, Table 3.4",
               "smallest printed LIF > 1", ">", 1.0,
               lambda q: f"smallest LIF {fmt(min(e.estimate for e in q.published_lif.values()))} over "
                         f"{len(q.published_lif)} cells (thesis and paper)",
               "thesis Table 3.4, paper Table IV (data/thesis/table3_4.csv)"),
    _published("published_t35_vs_paper", "published: Table 3.5 = paper eqs. 10-18",
               "Table 3.5, Appendix A eqs. 10–18",
               "largest |thesis − paper| beyond the rounding of both < 0", "<", 0.0, _t35_text,
               "thesis Table 3.5, paper eqs. 10–18 (data/thesis/table3_5.csv)"),
    _published("published_sum_of_phases", "published: t_iter = sum of phases (Table 3.2, eq. 3.3)",
               "Table 3.2, eqs. 3.1/3.3", "largest |t_iter − Σ phases| beyond the rounding of its terms < 0", "<",
               0.0,
               lambda q: "cells that do not add up: "
                         + (", ".join(_off(q.published_sum_of_phases, "<", 0.0, digits=2)) or "none")
                         + " (excess in s)", _T32),
    _published("published_chainer_md", "published: text: Chainer's t_md is 0.3 s longer than MXNet's and TensorFlow's",
               "§3.4.1, Table 3.2", "largest |Chainer − other − 0.3 s| < 0.05 s", "<", 0.05,
               lambda q: "|difference − 0.3 s|: " + _cells_text(q.published_chainer_md, 4), _T32),
    _published("published_t33_growth",
               "published: Table 3.3's aggregation time grows from 2 to 3 GPUs, as the text says",
               "§3.4.2, Table 3.3", "smallest t_comm(3) − t_comm(2) > 0 (in s)", ">", 0.0,
               lambda q: "falls from 2 to 3 GPUs: " + (", ".join(_off(q.published_t33_growth, ">", 0.0)) or "none")
                         + " s", _T33),
    _published("published_eq37_rank", "published: eq. 3.7 on Tables 3.2 + 3.3 ranks MXNet and Chainer above "
               "TensorFlow, as the text says", "§3.4.2, §3.5, eq. 3.7",
               "smallest predicted speedup of MXNet or Chainer minus TensorFlow's, over models, 2–3 GPUs and both "
               "forms > 0", ">", 0.0, _rank_text, "thesis Tables 3.2, 3.3 (data/thesis/) through eq. 3.7"),
)

#: The claims of Chapter 3 and their rules, in ledger order: measured claims, the framework comparisons, then
#: claims about the published tables.
CLAIMS = _MEASURED + _FRAMEWORKS + _PUBLISHED
