"""Uncertainty of a claim's quantity: resamples, a 95 % interval, and the verdict they give.

Every claim of a ledger (:mod:`perfkit.report.claims`) is decided from an
:class:`Evidence`: a point estimate, a 95 % percentile interval and, where there are
any, the resamples the interval comes from. The resamples are cheap by design, none
refits a model:

* rows of the held-out set, drawn with replacement (:func:`bootstrap_indices`,
  :func:`paired_bootstrap`): the same draws for every model, so differences between
  models are paired;
* the seeds of a repeated fit, drawn with replacement (:func:`seed_bootstrap`);
* iterations of a measured run, drawn within each cell as blocks of consecutive
  iterations by the stationary bootstrap of Politis & Romano (1994), with the automatic
  block length of Politis & White (2004, corrected by Patton, Politis & White 2009)
  (:func:`block_mean_bootstrap`), because the iteration times of a run are autocorrelated;
  :func:`group_mean_bootstrap` draws them as if independent;
* draws from a regression's normal approximation (estimate, covariance; :func:`normal_draws`);
* printed numbers spread uniformly over their rounding, ±½ unit of the last printed
  digit (:func:`rounding_draws`).

Every draw uses a fixed seed (:data:`SEED`), so a ledger is the same on every run.
:func:`verdict` compares an interval with a threshold: the claim ``holds`` when the
whole interval lies on the claim's side, ``does not hold`` when it lies wholly on the
other side, and is ``inconclusive`` when it straddles the threshold or touches it
(within a relative 1e-9, so that last-bit differences cannot flip a verdict).

>>> e = Evidence.from_samples(0.5, np.linspace(0.3, 0.7, 1001))
>>> fmt_interval(e.lo, e.hi)
'[0.31, 0.69]'
>>> verdict(e.lo, e.hi, "<", 0.8), verdict(e.lo, e.hi, "<", 0.2), verdict(e.lo, e.hi, "<", 0.6)
('holds', 'does not hold', 'inconclusive')
>>> verdict(0.2, 0.2, ">", 0.2)  # exactly on the threshold
'inconclusive'
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

__all__ = ["B", "SEED", "LEVEL", "SIDES", "Evidence", "percentile_interval", "fmt_interval", "verdict", "agreement",
           "bootstrap_indices", "paired_bootstrap", "seed_bootstrap", "group_mean_bootstrap", "optimal_block_length",
           "stationary_bootstrap_indices", "block_mean_bootstrap", "normal_draws",
           "rounding_draws", "half_unit", "spearman", "METRICS"]

#: resamples per quantity
B = 1000
#: seed of every draw
SEED = 2023
#: coverage of the interval
LEVEL = 0.95
#: how a claim compares its quantity with its threshold: below, above, or inside a closed band
SIDES = ("<", ">", "in")
_RTOL = 1e-9


def percentile_interval(samples, level: float = LEVEL) -> tuple[float, float]:
    """The central ``level`` percentile interval of ``samples`` (NaN ignored; NaN, NaN if none is finite).

    >>> [round(x, 9) for x in percentile_interval(np.arange(101.0))]
    [2.5, 97.5]
    >>> percentile_interval([np.nan, 1.0, 1.0])
    (1.0, 1.0)
    """
    s = np.asarray(samples, dtype=float).ravel()
    s = s[np.isfinite(s)]
    if s.size == 0:
        return float("nan"), float("nan")
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(s, [tail, 100 - tail])
    return float(lo), float(hi)


def _num(x, digits: int = 3) -> str:
    if x is None or not np.isfinite(x):
        return "n/a"
    return f"{x:.{digits}g}"


def fmt_interval(lo, hi, digits: int = 3) -> str:
    """``"[0.12, 0.31]"``; ``"n/a"`` when the interval is not finite.

    >>> fmt_interval(0.1234, 0.3111), fmt_interval(float("nan"), 1.0)
    ('[0.123, 0.311]', 'n/a')
    """
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "n/a"
    return f"[{_num(lo, digits)}, {_num(hi, digits)}]"


def _tol(*values) -> float:
    return _RTOL * max([1.0] + [abs(float(v)) for v in values if np.isfinite(v)])


def _check_side(side: str, threshold):
    if side not in SIDES:
        raise ValueError(f"side: expected one of {SIDES}, got {side!r}")
    if side == "in":
        lo, hi = threshold
        if not lo < hi:
            raise ValueError(f"threshold: a band (low, high) with low < high, got {threshold!r}")
        return float(lo), float(hi)
    return float(threshold)


def verdict(lo: float, hi: float, side: str, threshold) -> str:
    """``holds``, ``does not hold`` or ``inconclusive`` for an interval ``[lo, hi]``.

    ``side`` is what the claim says of its quantity: ``"<"`` below ``threshold``,
    ``">"`` above it, ``"in"`` inside the band ``threshold = (low, high)``. An interval
    that touches or straddles a threshold is inconclusive (so is a non-finite one).

    >>> verdict(1.1, 1.4, ">", 1.0), verdict(0.2, 0.9, ">", 1.0), verdict(0.9, 1.1, ">", 1.0)
    ('holds', 'does not hold', 'inconclusive')
    >>> band = (-0.1, 0.1)
    >>> verdict(-0.05, 0.05, "in", band), verdict(0.2, 0.3, "in", band), verdict(0.0, 0.2, "in", band)
    ('holds', 'does not hold', 'inconclusive')
    """
    t = _check_side(side, threshold)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "inconclusive"
    if side == "in":
        a, b = t
        ta, tb = _tol(a, lo, hi), _tol(b, lo, hi)
        if lo > a + ta and hi < b - tb:
            return "holds"
        if hi < a - ta or lo > b + tb:
            return "does not hold"
        return "inconclusive"
    tol = _tol(t, lo, hi)
    below, above = hi < t - tol, lo > t + tol
    if below or above:
        return "holds" if (below if side == "<" else above) else "does not hold"
    return "inconclusive"


def agreement(samples, side: str, threshold) -> float:
    """Share of the finite ``samples`` on the claim's side of ``threshold`` (closed); NaN without samples.

    >>> agreement([0.1, 0.2, 0.3, 0.9], "<", 0.5), agreement([0.1, 0.5], "in", (0.0, 0.5))
    (0.75, 1.0)
    """
    t = _check_side(side, threshold)
    if samples is None:
        return float("nan")
    s = np.asarray(samples, dtype=float).ravel()
    s = s[np.isfinite(s)]
    if s.size == 0:
        return float("nan")
    if side == "in":
        ok = (s >= t[0] - _tol(t[0])) & (s <= t[1] + _tol(t[1]))
    elif side == "<":
        ok = s <= t + _tol(t)
    else:
        ok = s >= t - _tol(t)
    return float(ok.mean())


@dataclass(frozen=True)
class Evidence:
    """A claim's quantity: point ``estimate``, 95 % interval ``[lo, hi]``, the ``samples`` behind it, their ``source``.

    ``samples`` is None for an exact quantity (one computed from printed numbers
    without resampling); then ``lo == hi == estimate`` unless given otherwise.
    Build it with :meth:`from_samples` or :meth:`exact`; combine several per
    resample with :meth:`combine` (resample *i* of each input goes into resample
    *i* of the result, so a compound rule "A and B" is judged per resample).
    """

    estimate: float
    lo: float
    hi: float
    samples: np.ndarray | None = field(default=None, repr=False, compare=False)
    source: str = ""

    @classmethod
    def from_samples(cls, estimate, samples, source: str = "") -> "Evidence":
        """The estimate with the percentile interval of ``samples``.

        >>> Evidence.from_samples(2.0, [1.0, 2.0, 3.0]).hi
        2.95
        """
        s = np.asarray(samples, dtype=float).ravel()
        lo, hi = percentile_interval(s)
        return cls(float(estimate), lo, hi, s, source)

    @classmethod
    def exact(cls, value, source: str = "printed numbers, no resampling") -> "Evidence":
        """A quantity without sampling uncertainty (``lo == hi == value``).

        >>> Evidence.exact(3.0).lo
        3.0
        """
        v = float(value)
        return cls(v, v, v, None, source)

    @classmethod
    def combine(cls, func: Callable, evidences: Sequence["Evidence"], source: str | None = None) -> "Evidence":
        """``func`` of several quantities, per resample: ``func(array, axis=0)`` (``np.min``, ``np.max``, ...).

        Exact inputs count as the same value in every resample; the result is
        exact when every input is.

        >>> a = Evidence.from_samples(1.0, [0.0, 1.0, 2.0]); b = Evidence.exact(0.5)
        >>> c = Evidence.combine(np.min, [a, b]); c.estimate, c.samples.tolist()
        (0.5, [0.0, 0.5, 0.5])
        """
        evidences = list(evidences)
        if not evidences:
            raise ValueError("evidences: need at least one")
        est = float(func(np.array([e.estimate for e in evidences]), axis=0))
        sampled = [e for e in evidences if e.samples is not None]
        src = source if source is not None else "; ".join(dict.fromkeys(e.source for e in evidences if e.source))
        if not sampled:
            lo = float(func(np.array([e.lo for e in evidences]), axis=0))
            hi = float(func(np.array([e.hi for e in evidences]), axis=0))
            return cls(est, min(lo, hi), max(lo, hi), None, src)
        n = {len(e.samples) for e in sampled}
        if len(n) != 1:
            raise ValueError(f"evidences: resample counts differ ({sorted(n)}); draw them with the same B")
        nb = n.pop()
        stack = np.vstack([e.samples if e.samples is not None else np.full(nb, e.estimate) for e in evidences])
        return cls.from_samples(est, func(stack, axis=0), src)

    def map(self, func: Callable) -> "Evidence":
        """``func`` applied to the estimate and every resample (a monotone map keeps the interval's meaning).

        >>> Evidence.from_samples(1.0, [0.0, 1.0, 2.0]).map(lambda x: -x).estimate
        -1.0
        """
        if self.samples is None:
            a, b = float(func(self.lo)), float(func(self.hi))
            return Evidence(float(func(self.estimate)), min(a, b), max(a, b), None, self.source)
        return Evidence.from_samples(float(func(self.estimate)), func(np.asarray(self.samples)), self.source)

    @property
    def finite(self) -> bool:
        """True when the estimate and the interval are finite numbers."""
        return bool(np.isfinite(self.estimate) and np.isfinite(self.lo) and np.isfinite(self.hi))

    def text(self, digits: int = 3) -> str:
        """``"0.5 [0.31, 0.69]"`` (the interval left out for an exact quantity)."""
        if self.samples is None and self.lo == self.hi:
            return _num(self.estimate, digits)
        return f"{_num(self.estimate, digits)} {fmt_interval(self.lo, self.hi, digits)}"


# ------------------------------------------------------------------------------------------- draws
def bootstrap_indices(n: int, b: int = B, seed: int = SEED) -> np.ndarray:
    """``(b, n)`` row indices drawn with replacement (a fixed seed: the same draws every run).

    >>> bootstrap_indices(5, b=3).shape
    (3, 5)
    """
    if n < 1:
        raise ValueError(f"n: need at least one row to resample, got {n}")
    return np.random.default_rng(seed).integers(0, n, size=(b, n))


def paired_bootstrap(y_true, preds: Mapping, metric: Callable, b: int = B, seed: int = SEED) -> dict:
    """``metric(y, pred)`` of every model over the same ``b`` resamples of the held-out rows.

    ``metric`` takes ``(y, pred)`` arrays of shape ``(b, n)`` and returns ``b`` values
    (:data:`METRICS` holds MAPE, MSE, RMSE, R²). Returns ``{name: (estimate, samples)}``;
    the same row draws serve every model, so the difference of two models'
    samples is a paired bootstrap of the difference.

    >>> y = np.array([1.0, 2.0, 4.0]); out = paired_bootstrap(y, {"m": y * 1.1}, METRICS["MAPE"], b=4)
    >>> round(out["m"][0], 6), np.round(out["m"][1], 6).tolist()
    (10.0, [10.0, 10.0, 10.0, 10.0])
    """
    y = np.asarray(y_true, dtype=float).ravel()
    idx = bootstrap_indices(len(y), b, seed)
    out = {}
    for name, p in preds.items():
        p = np.asarray(p, dtype=float).ravel()
        if p.shape != y.shape:
            raise ValueError(f"preds[{name!r}]: {p.size} predictions for {y.size} rows")
        est = float(metric(y[None, :], p[None, :])[0])
        out[name] = (est, np.asarray(metric(y[idx], p[idx]), dtype=float))
    return out


def _r2(y, p):
    ss_res = ((y - p) ** 2).sum(axis=1)
    ss_tot = ((y - y.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1 - ss_res / ss_tot


#: row-wise metrics for :func:`paired_bootstrap` (arrays of shape ``(b, n)``; MAPE in percent of the measured value)
METRICS: dict[str, Callable] = {
    "MAPE": lambda y, p: 100 * np.mean(np.abs((y - p) / y), axis=1),
    "MSE": lambda y, p: np.mean((y - p) ** 2, axis=1),
    "RMSE": lambda y, p: np.sqrt(np.mean((y - p) ** 2, axis=1)),
    "R2": _r2,
}


def seed_bootstrap(values, stat: Callable = np.mean, b: int = B, seed: int = SEED) -> tuple[float, np.ndarray]:
    """``stat`` over the per-seed ``values`` of a repeated fit, and over ``b`` resamples of the seeds.

    ``values`` is 1-d (one number per seed) or 2-d (seeds × columns, ``stat`` then
    gets ``axis`` and must reduce the seeds, e.g. ``lambda v, axis: v.std(axis=axis, ddof=1)``
    per column). Returns ``(estimate, samples)``; with one seed the samples all equal the estimate.

    >>> est, s = seed_bootstrap([1.0, 2.0, 3.0], b=5); est, s.shape
    (2.0, (5,))
    """
    v = np.asarray(values, dtype=float)
    idx = bootstrap_indices(v.shape[0], b, seed)
    est = stat(v, axis=0)
    return (float(est) if np.ndim(est) == 0 else est), stat(v[idx], axis=1)


def group_mean_bootstrap(values, b: int = B, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """Column means of ``values`` (rows × columns) and their ``(b, columns)`` bootstrap over rows.

    >>> est, s = group_mean_bootstrap(np.ones((4, 2)), b=3); est.tolist(), s.shape
    ([1.0, 1.0], (3, 2))
    """
    v = np.asarray(values, dtype=float)
    v = v[:, None] if v.ndim == 1 else v
    idx = bootstrap_indices(v.shape[0], b, seed)
    return v.mean(axis=0), v[idx].mean(axis=1)


def _lag_window(t: np.ndarray) -> np.ndarray:
    """The flat-top lag window of Politis & White (2004): 1 up to ½, then linearly down to 0 at 1."""
    a = np.abs(t)
    return np.where(a <= 0.5, 1.0, np.where(a <= 1.0, 2.0 * (1.0 - a), 0.0))


def optimal_block_length(x) -> float:
    """Expected block length of the stationary bootstrap for the mean of the series ``x`` (at least 1).

    The automatic choice of Politis & White (2004) with the correction of Patton, Politis &
    White (2009): ``b = (2 G² / D)^(1/3) n^(1/3)`` with ``G = Σ λ(k/M) |k| R(k)``,
    ``D = 2 (Σ λ(k/M) R(k))²`` over ``|k| ≤ M``, ``λ`` the flat-top window and ``M = 2 m``,
    where ``m`` is the first lag after which ``K = max(5, √log10 n)`` autocorrelations in a
    row are insignificant (below ``2 √(log10 n / n)``). The result lies in
    ``[1, min(3 √n, n / 3)]``; a series with fewer than 4 finite values, or a constant one, gives 1.

    >>> round(optimal_block_length(np.sin(np.arange(200) / 5.0)), 3) > 5
    True
    >>> optimal_block_length(np.ones(50))
    1.0
    """
    v = np.asarray(x, dtype=float).ravel()
    v = v[np.isfinite(v)]
    n = v.size
    if n < 4:
        return 1.0
    e = v - v.mean()
    var = float(e @ e) / n
    if not var > 0:
        return 1.0
    k_n = max(5, int(np.ceil(np.sqrt(np.log10(n)))))
    m_max = min(int(np.ceil(np.sqrt(n))) + k_n, n - 1)
    acov = np.array([float(e[k:] @ e[:n - k]) / n for k in range(m_max + 1)])
    insignificant = np.abs(acov[1:] / var) < 2.0 * np.sqrt(np.log10(n) / n)
    m = m_max
    for lag in range(0, m_max - k_n + 1):  # lags lag+1 .. lag+k_n all insignificant
        if insignificant[lag:lag + k_n].all():
            m = min(2 * max(lag, 1), m_max)
            break
    lags = np.arange(1, m + 1)
    w = _lag_window(lags / m)
    g = 2.0 * float(np.sum(w * lags * acov[1:m + 1]))
    g0 = acov[0] + 2.0 * float(np.sum(w * acov[1:m + 1]))
    b_max = max(1.0, float(np.ceil(min(3.0 * np.sqrt(n), n / 3.0))))
    if not g0 > 0:
        return b_max
    b = (2.0 * g * g / (2.0 * g0 * g0)) ** (1.0 / 3.0) * n ** (1.0 / 3.0)
    return float(min(max(b, 1.0), b_max))


def stationary_bootstrap_indices(n: int, block: float, b: int = B, seed: int = SEED) -> np.ndarray:
    """``(b, n)`` indices of the stationary bootstrap (Politis & Romano 1994) of a series of ``n`` values.

    Each resample strings together blocks of consecutive indices (circularly: after
    ``n - 1`` comes 0), each starting at a uniform index, their lengths geometric with
    mean ``block``; ``block = 1`` is the ordinary bootstrap. A fixed seed gives the same draws.

    >>> stationary_bootstrap_indices(6, 1e9, b=1, seed=1).tolist()  # one block: consecutive indices
    [[2, 3, 4, 5, 0, 1]]
    """
    if n < 1:
        raise ValueError(f"n: need at least one row to resample, got {n}")
    if not (np.isfinite(block) and block >= 1):
        raise ValueError(f"block: an expected block length >= 1, got {block!r}")
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, n, size=(b, n))
    new = rng.random((b, n)) < 1.0 / float(block)
    new[:, 0] = True
    pos = np.broadcast_to(np.arange(n), (b, n))
    first = np.maximum.accumulate(np.where(new, pos, 0), axis=1)  # where the current block began
    return (np.take_along_axis(starts, first, axis=1) + pos - first) % n


def block_mean_bootstrap(values, b: int = B, seed: int = SEED, block: float | None = None):
    """Column means of ``values`` (rows in time order × columns), their ``(b, columns)`` stationary bootstrap, the block.

    The rows are resampled together (one draw of indices for every column, so the
    columns' resamples stay paired) by :func:`stationary_bootstrap_indices`; the expected
    block length is ``block``, or the largest :func:`optimal_block_length` of the columns.
    Returns ``(means, samples, block)``.

    >>> est, s, blk = block_mean_bootstrap(np.ones((4, 2)), b=3); est.tolist(), s.shape, blk
    ([1.0, 1.0], (3, 2), 1.0)
    """
    v = np.asarray(values, dtype=float)
    v = v[:, None] if v.ndim == 1 else v
    if block is None:
        block = max([1.0] + [optimal_block_length(v[:, j]) for j in range(v.shape[1])])
    idx = stationary_bootstrap_indices(v.shape[0], block, b, seed)
    return v.mean(axis=0), v[idx].mean(axis=1), float(block)


def normal_draws(mean, cov, b: int = B, seed: int = SEED) -> np.ndarray:
    """``(b, k)`` draws from the normal approximation of an estimate (a regression's coefficients and covariance).

    >>> normal_draws([1.0, 2.0], np.zeros((2, 2)), b=2).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    m = np.asarray(mean, dtype=float).ravel()
    c = np.asarray(cov, dtype=float).reshape(m.size, m.size)
    return np.random.default_rng(seed).multivariate_normal(m, c, size=b, method="eigh")


def half_unit(x: float) -> float:
    """Half a unit of the last digit of ``x`` as printed (trailing zeros dropped: a conservative reading).

    >>> half_unit(0.0006), half_unit(40.5588), half_unit(27.0), half_unit(1e-05)
    (5e-05, 5e-05, 0.5, 5e-06)
    """
    s = np.format_float_positional(abs(float(x)), trim="-")
    decimals = len(s.split(".")[1]) if "." in s else 0
    return 0.5 * 10.0 ** -decimals


def rounding_draws(values, b: int = B, seed: int = SEED) -> np.ndarray:
    """``(b, n)`` draws of printed numbers, each uniform within ±½ unit of its last printed digit.

    >>> d = rounding_draws([1.5, 0.25], b=200); bool((abs(d - [1.5, 0.25]) <= [0.05, 0.005]).all())
    True
    """
    v = np.asarray(values, dtype=float).ravel()
    h = np.array([half_unit(x) for x in v])
    u = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(b, v.size))
    return v[None, :] + u * h[None, :]


def spearman(x, y) -> np.ndarray:
    """Spearman's rank correlation along the last axis (average ranks for ties; NaN where a row is constant).

    >>> float(spearman([1, 2, 3, 4], [4, 3, 2, 1]))
    -1.0
    """
    from scipy.stats import rankdata

    rx = rankdata(np.asarray(x, dtype=float), axis=-1)
    ry = rankdata(np.asarray(y, dtype=float), axis=-1)
    rx = rx - rx.mean(axis=-1, keepdims=True)
    ry = ry - ry.mean(axis=-1, keepdims=True)
    den = np.sqrt((rx ** 2).sum(axis=-1) * (ry ** 2).sum(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, (rx * ry).sum(axis=-1) / np.where(den > 0, den, 1.0), np.nan)
