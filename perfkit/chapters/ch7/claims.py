"""Chapter 7's claims ledger: :data:`CLAIMS`, judged on :class:`Ch7Quantities`.

The claims are the goals of a scale-out model (not the thesis's words: the thesis did not extrapolate), each
decided from a bootstrap of the scored rows: rows are resampled within every job (or network), so a job
keeps its size, and every model is scored on the same resamples (paired differences).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model.selection.baselines import LABELS
from ...report.claims import Claim, fmt
from ...evidence import B, SEED, Evidence, bootstrap_indices
from ..common import Quantities

__all__ = ["CLAIMS", "Ch7Quantities", "grouped_mape"]

_ROWS = f"{B} bootstrap resamples of the scored rows within each job"


@dataclass
class Ch7Quantities(Quantities):
    """What Chapter 7's claims are decided from: the scored rows of each study with every model's prediction."""

    pollux: object = None  # DataFrame: job, t_iter, one column per model, lower, upper
    pollux_models: list | None = None
    ch4: object = None  # DataFrame: epoch_time, one column per model
    ch4_models: list | None = None
    ch3: object = None  # DataFrame: model (network), t_iter, one column per model
    ch3_models: list | None = None
    coverage_level: float | None = None
    extrap_median: float | None = None  # Extra-P's median MAPE on the same split (a benchmark's number, no rows)
    # the splits the claims' texts name: Pollux fitted up to fit_max and scored test_min..test_max (its protocol);
    # our own files fitted up to <name>_fit_max, the values their scored rows hold in <name>_scored
    fit_max: float | None = None
    test_min: float | None = None
    test_max: float | None = None
    ch4_fit_max: float | None = None
    ch4_scored: str | None = None  # the values the scored rows hold: "64-128", or one value
    ch3_fit_max: float | None = None
    ch3_scored: str | None = None

    @classmethod
    def of(cls, r) -> "Ch7Quantities":
        ok = bool(r.extrap) and r.extrap.get("status") == "ok"
        q = cls(pollux=r.test, pollux_models=r.pollux.models, coverage_level=r.coverage_level,
                extrap_median=float(r.extrap["median"]) if ok else None, fit_max=r.pollux.fit_max,
                test_min=r.pollux.test_min, test_max=r.pollux.test_max)
        for name in ("ch4", "ch3"):
            s = getattr(r, name)
            if s is not None:
                p = s.predictions
                scored = p[(p[s.column] >= s.test_min) & (p[s.column] <= s.test_max)]
                setattr(q, name, scored)
                setattr(q, f"{name}_models", s.models)
                setattr(q, f"{name}_fit_max", s.fit_max)
                setattr(q, f"{name}_scored", _span(scored[s.column]))
        return q


def _span(values) -> str | None:
    """``"64-128"``: the smallest and largest of ``values`` (one value alone when they agree); None for none."""
    v = np.asarray(values, dtype=float)
    if not len(v):
        return None
    lo, hi = v.min(), v.max()
    return f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"


def _draws(groups: np.ndarray, b: int = B, seed=SEED) -> np.ndarray:
    """``b`` resamples of row positions, each group resampled within itself (shape ``(b, n)``)."""
    out = np.empty((b, len(groups)), dtype=int)
    for k, g in enumerate(sorted(set(groups.tolist()), key=str)):
        pos = np.flatnonzero(groups == g)
        out[:, pos] = pos[bootstrap_indices(len(pos), b, [seed, k])]
    return out


def grouped_mape(frame, target: str, models, groups: str | None):
    """``{model: (estimate, samples)}``: the median over groups of each group's MAPE (%), or the MAPE of all rows
    without groups, on the rows and on the same grouped bootstrap resamples for every model."""
    y = frame[target].to_numpy(dtype=float)
    g = frame[groups].to_numpy() if groups is not None else np.zeros(len(frame), dtype=int)
    idx = _draws(g)
    levels = sorted(set(g.tolist()), key=str)
    out = {}
    for m in models:
        ape = 100.0 * np.abs(frame[m].to_numpy(dtype=float) - y) / y
        per = np.stack([ape[g == lv].mean() for lv in levels])
        per_b = np.stack([np.where(g[idx] == lv, ape[idx], 0).sum(axis=1) / (g == lv).sum() for lv in levels])
        out[m] = (float(np.median(per)), np.median(per_b, axis=0))
    return out


def _mape(q, study: str, target: str, groups):
    frame, models = getattr(q, study), getattr(q, f"{study}_models")
    if frame is None:
        return None
    return q.memo(("mape", study), lambda: grouped_mape(frame, target, models, groups))


def _selected(q):
    m = _mape(q, "pollux", "t_iter", "job")
    return None if m is None else Evidence.from_samples(*m["selected"], _ROWS)


def _margin(q, study: str, target: str, groups, mine):
    """MAPE of the best of ``mine`` (chosen on the point estimates) − the best other model's, paired."""
    m = _mape(q, study, target, groups)
    if m is None:
        return None
    ours = [k for k in m if k in mine]
    others = [k for k in m if k not in mine]
    best_ours = min(ours, key=lambda k: m[k][0])
    best_other = min(others, key=lambda k: m[k][0])
    est = m[best_ours][0] - m[best_other][0]
    return Evidence.from_samples(est, m[best_ours][1] - m[best_other][1], f"{best_ours} − {best_other}; {_ROWS}")


def _coverage(q):
    if q.pollux is None:
        return None

    def compute():
        f = q.pollux
        y = f["t_iter"].to_numpy(dtype=float)
        inside = ((y >= f["lower"].to_numpy()) & (y <= f["upper"].to_numpy())).astype(float)
        idx = _draws(f["job"].to_numpy())
        return Evidence.from_samples(100 * inside.mean(), 100 * inside[idx].mean(axis=1), _ROWS)

    return q.memo("coverage", compute)


_INTERPRETABLE_CH4 = ("thesis form (eq. 4.4)", "log-linear", "hybrid (LeNet-5 costs)")
_TREES = (LABELS["rf"], LABELS["gb"])


def _beats(q):
    """The selected form's median MAPE − the best baseline's: the models fitted here (paired resamples), and
    Extra-P's benchmark number when it is lower (taken as exact: its rows are not resampled)."""
    e = _margin(q, "pollux", "t_iter", "job", ("selected",))
    if e is None or q.extrap_median is None:
        return e
    m = _mape(q, "pollux", "t_iter", "job")
    best_other = min(v[0] for k, v in m.items() if k != "selected")
    if q.extrap_median >= best_other:
        return e
    sel = m["selected"]
    return Evidence.from_samples(sel[0] - q.extrap_median, sel[1] - q.extrap_median,
                                 f"selected − Extra-P (its benchmark median, exact); {_ROWS}")


def _pollux_text(q):
    m = _mape(q, "pollux", "t_iter", "job")
    text = "; ".join(f"{k} {fmt(v[0])} %" for k, v in sorted(m.items(), key=lambda kv: kv[1][0]))
    return text + ("" if q.extrap_median is None else f"; Extra-P {fmt(q.extrap_median)} % (bench_scale.py)")


def _own_text(q, study, target, groups):
    m = _mape(q, study, target, groups)
    return "; ".join(f"{k} {fmt(v[0])} %" for k, v in sorted(m.items(), key=lambda kv: kv[1][0]))


#: The claims of Chapter 7 and their rules, in ledger order.
CLAIMS = (
    Claim("median_10", "fitted on <= {fit_max:g} GPUs, the selected model predicts {test_min:g}-{test_max:g} GPUs "
          "within 10 % (median over the six jobs)", "the scale-out goal (Pollux traces)",
          "median over jobs of the MAPE on {test_min:g}-{test_max:g} GPUs < 10 %",
          needs=("pollux",), quantity=_selected, side="<", threshold=10.0,
          evidence=lambda q: f"selected {_selected(q).text(3)} %"),
    Claim("beats_baselines", "the selected model extrapolates better than every baseline", "the scale-out goal",
          "median MAPE(selected) − the best baseline's < 0", needs=("pollux",),
          quantity=_beats, side="<", threshold=0.0, evidence=lambda q: _pollux_text(q)),
    Claim("coverage", "its intervals cover the extrapolated rows as stated", "the scale-out goal",
          "share of the {test_min:g}-{test_max:g}-GPU rows inside the intervals (stated level 90 %) in [80, 95] %", needs=("pollux",),
          quantity=_coverage, side="in", threshold=(80.0, 95.0),
          evidence=lambda q: f"coverage {_coverage(q).text(3)} % at the stated {fmt(100 * q.coverage_level)} %"),
    Claim("ch4_batch", "an interpretable form extrapolates our LeNet-5 epoch times to larger batches better than "
          "the trees", "Chapter 4 data, batch <= {ch4_fit_max:g} → {ch4_scored}",
          "MAPE(best of thesis, log-linear, hybrid) − MAPE(best of random forest, boosting) < 0", needs=("ch4",),
          quantity=lambda q: _margin(q, "ch4", "epoch_time", None, _INTERPRETABLE_CH4), side="<", threshold=0.0,
          evidence=lambda q: _own_text(q, "ch4", "epoch_time", None), missing="no Chapter 4 file given"),
    Claim("ch3_workers", "an interpretable form extrapolates our Chapter 3 iteration times to more workers "
          "better than the trees", "Chapter 3 data, workers <= {ch3_fit_max:g} → {ch3_scored}",
          "median over networks of MAPE(best of log-linear, thesis) − the best tree's < 0", needs=("ch3",),
          quantity=lambda q: _margin(q, "ch3", "t_iter", "model", ("log-linear", "thesis form (eq. 4.4)")),
          side="<", threshold=0.0, evidence=lambda q: _own_text(q, "ch3", "t_iter", "model"),
          missing="no Chapter 3 file given"),
)
