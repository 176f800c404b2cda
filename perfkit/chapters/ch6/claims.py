"""Chapter 6's claims ledger: :data:`CLAIMS`, judged on :class:`Ch6Quantities` (built from the results), every
verdict decided from an interval.

A claim function takes a :class:`Ch6Quantities`, or a mapping with the same names (hand-made quantities in
tests), which it reads as one.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np
from scipy.stats import beta

from ...report.claims import Claim, fmt
from ...evidence import METRICS, B, Evidence, paired_bootstrap
from ..common import Quantities
from .params import (BLACK_BOXES, COVERAGE, COVERAGE_BAND, DATASETS, DATASET_NAMES, MEASURED, METHOD_LABELS,
                     RATE_FACTOR, TUNED)
from .results import Ch6Results

__all__ = ["CLAIMS", "SOURCES", "Ch6Quantities", "mape_difference", "best_black_box_ratio", "coverage_evidence",
           "rate_ratio", "heldout_mape", "tuned_difference"]

_B = f"{B} bootstrap resamples"
#: where the resamples of each kind of quantity come from (the ledger's ``resampling`` column)
SOURCES = {
    "heldout": f"{_B} of the held-out rows, the same rows for every model (paired)",
    "coverage": "Clopper-Pearson 95 % interval of a binomial share (held-out rows inside their interval)",
    "rates": "bootstrap resamples of each dataset's fit rows, the hybrid form refitted on each",
}


@dataclass
class Ch6Quantities(Quantities):
    """What the claims read: per dataset the held-out rows and predictions (``{"y", "pred": {method: array}}``),
    the interval counts (``{method: (inside, n)}``) and the auto-selected form; the hybrid's compute rates
    (``{"ch4": (rate, samples), "ch5": ...}``, None unless both were fitted)."""

    heldout: dict | None = None
    inside: dict | None = None
    auto_form: dict | None = None
    compute_rate: dict | None = None

    @classmethod
    def from_results(cls, r: Ch6Results) -> "Ch6Quantities":
        """The quantities of computed results."""
        return cls(heldout={ds: {"y": f.y_test, "pred": f.preds} for ds, f in r.fits.items()},
                   inside={ds: f.inside for ds, f in r.fits.items()},
                   auto_form={ds: f.auto_form for ds, f in r.fits.items()}, compute_rate=r.compute_rate)

    @classmethod
    def of(cls, q) -> "Ch6Quantities":
        """``q`` itself, or the quantities of a mapping with the same names."""
        if isinstance(q, cls):
            return q
        if isinstance(q, Mapping):
            return cls(**{f.name: q.get(f.name) for f in fields(cls)})
        raise TypeError(f"quantities: expected Ch6Quantities or a mapping, got {type(q).__name__}")


def heldout_mape(q, ds: str) -> dict | None:
    """``{method: (MAPE, bootstrap samples)}`` on dataset ``ds``'s held-out rows, the same resamples for every
    method (computed once per quantities object); None when ``ds`` was not analysed."""
    q = Ch6Quantities.of(q)
    h = (q.heldout or {}).get(ds)
    if h is None:
        return None
    return q.memo(("mape", ds), lambda: paired_bootstrap(h["y"], h["pred"], METRICS["MAPE"]))


def mape_difference(q, ds, a, b):
    """MAPE(a) − MAPE(b) on dataset ``ds``'s held-out rows, over the same resamples, as :class:`Evidence`."""
    m = heldout_mape(q, ds)
    if m is None or a not in m or b not in m:
        return None
    (ea, sa), (eb, sb) = m[a], m[b]
    return Evidence.from_samples(ea - eb, sa - sb, SOURCES["heldout"])


def best_black_box_ratio(q, ds, a="auto"):
    """MAPE(a) / the lowest MAPE of the black boxes, per resample (the best box of each resample), as Evidence."""
    m = heldout_mape(q, ds)
    boxes = [k for k in BLACK_BOXES if m is not None and k in m]
    if m is None or a not in m or not boxes:
        return None
    best_e = min(m[k][0] for k in boxes)
    best_s = np.min(np.vstack([m[k][1] for k in boxes]), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return Evidence.from_samples(m[a][0] / best_e, m[a][1] / best_s, SOURCES["heldout"])


def tuned_difference(q, ds, a="auto"):
    """MAPE(a) − MAPE(the calibrated black-box reference, tuned by CV on the fit rows) on ``ds``'s held-out rows, as
    :class:`Evidence` (percentage points; the same resamples)."""
    return mape_difference(q, ds, a, TUNED)


def coverage_evidence(inside: int, n: int):
    """The share ``inside / n`` with its Clopper-Pearson 95 % interval (:class:`Evidence` without resamples).

    >>> e = coverage_evidence(90, 100); round(e.estimate, 2), round(e.lo, 3), round(e.hi, 3)
    (0.9, 0.824, 0.951)
    """

    if n < 1:
        return None
    lo = float(beta.ppf(0.025, inside, n - inside + 1)) if inside > 0 else 0.0
    hi = float(beta.ppf(0.975, inside + 1, n - inside)) if inside < n else 1.0
    return Evidence(inside / n, lo, hi, None, SOURCES["coverage"])


def _coverage(q, ds, method="auto"):
    c = (Ch6Quantities.of(q).inside or {}).get(ds, {}).get(method)
    return None if c is None else coverage_evidence(*c)


def rate_ratio(q):
    """Chapter 5's compute rate over Chapter 4's (hybrid form, one worker), over their bootstrap refits."""
    r = Ch6Quantities.of(q).compute_rate
    if not r or "ch4" not in r or "ch5" not in r:
        return None
    (e4, s4), (e5, s5) = r["ch4"], r["ch5"]
    n = min(len(s4), len(s5))
    with np.errstate(divide="ignore", invalid="ignore"):
        return Evidence.from_samples(e5 / e4, s5[:n] / s4[:n], f"{n} {SOURCES['rates']}")


def _mape_text(q, ds, *methods):
    q = Ch6Quantities.of(q)
    m = heldout_mape(q, ds)
    parts = []
    for k in methods:
        if k in m:
            e = Evidence.from_samples(m[k][0], m[k][1])
            name = q.auto_form[ds] if k == "auto" else k
            parts.append(f"{name} {e.text(3)} %")
    return "MAPE " + ", ".join(parts)


def _boxes_text(q, ds):
    return _mape_text(q, ds, "auto", *BLACK_BOXES)


def _tuned_text(q, ds):
    q = Ch6Quantities.of(q)
    text = _mape_text(q, ds, "auto", TUNED).replace(f"{TUNED} ", f"{METHOD_LABELS[TUNED]} ", 1)
    return text + "; " + _diff_text(q, ds)


def _diff_text(q, ds):
    e = tuned_difference(q, ds)
    return f"difference {e.text(3)} points" if e is not None else ""


def _coverage_text(q, ds):
    q = Ch6Quantities.of(q)
    c = q.inside[ds]["auto"]
    e = coverage_evidence(*c)
    return (f"{c[0]} of {c[1]} held-out rows inside the {int(100 * COVERAGE)} % intervals of {q.auto_form[ds]}: "
            f"{e.text(3)}")


def _rate_text(q):
    r = Ch6Quantities.of(q).compute_rate
    e = rate_ratio(q)
    return (f"ρ_F(ch4) {fmt(r['ch4'][0])}, ρ_F(ch5) {fmt(r['ch5'][0])} s per forward FLOP; ratio ch5/ch4 "
            f"{e.text(3)}")


def _dataset_claims(ds: str) -> tuple:
    name = DATASET_NAMES[ds]
    missing = f"{ds} is not among the datasets analysed"
    future = "§6.1 (refinement of the performance model)" if ds in MEASURED else \
        "§6.1 (extending the model to other applications and frameworks)"
    return (
        Claim(f"auto_vs_rf[{ds}]", f"{name}: the auto-selected interpretable model is at least as accurate as the "
              "random forest", f"{future}; the thesis's comparison: §4.3.4, §5.2.2",
              "MAPE(auto) − MAPE(RF) < 0 percentage points", needs=("heldout",),
              quantity=lambda q, ds=ds: mape_difference(q, ds, "auto", "RF"), side="<", threshold=0.0,
              evidence=lambda q, ds=ds: _mape_text(q, ds, "auto", "RF"), missing=missing),
        Claim(f"auto_vs_boxes[{ds}]", f"{name}: the auto-selected model is within 1.2× the MAPE of the best black box",
              f"{future}", "MAPE(auto) / min(MAPE(RF), MAPE(SVR), MAPE(GB)) < 1.2 (the best box of each resample)",
              needs=("heldout",), quantity=lambda q, ds=ds: best_black_box_ratio(q, ds), side="<", threshold=1.2,
              evidence=lambda q, ds=ds: _boxes_text(q, ds), missing=missing),
        Claim(f"auto_vs_tuned[{ds}]", f"{name}: the auto-selected interpretable model is at least as accurate as "
              "the best black box tuned by cross-validation on the same rows (RF, gradient boosting, SVR on log "
              "features)", f"{future}; the thesis's comparison: §4.3.4, §5.2.2",
              "MAPE(auto) − MAPE(best tuned black box) < 0 percentage points (inconclusive: its 95 % interval "
              "includes 0, no difference shown either way)", needs=("heldout",),
              quantity=lambda q, ds=ds: tuned_difference(q, ds), side="<", threshold=0.0,
              evidence=lambda q, ds=ds: _tuned_text(q, ds), missing=missing),
        Claim(f"auto_vs_thesis[{ds}]", f"{name}: the auto-selected form is more accurate than the thesis form",
              "§6.1 (more complex interactions between the terms; better expressions)",
              "MAPE(auto) − MAPE(thesis form, MAE) < 0 percentage points", needs=("heldout",),
              quantity=lambda q, ds=ds: mape_difference(q, ds, "auto", "thesis"), side="<", threshold=0.0,
              evidence=lambda q, ds=ds: _mape_text(q, ds, "auto", "thesis"), missing=missing),
        Claim(f"coverage[{ds}]", f"{name}: 90 % intervals of the auto-selected model cover 85-95 % of the held-out "
              "rows", "§6.1 (integration into practical systems: a prediction needs its uncertainty)",
              "0.85 <= share of held-out rows inside their 90 % interval <= 0.95", needs=("inside",),
              quantity=lambda q, ds=ds: _coverage(q, ds), side="in", threshold=COVERAGE_BAND,
              evidence=lambda q, ds=ds: _coverage_text(q, ds), missing=missing),
    )


#: The claims of Chapter 6 and their rules, in ledger order: five per dataset, then the compute rate.
CLAIMS = tuple(c for ds in DATASETS for c in _dataset_claims(ds)) + (
    Claim("compute_rate", "the hybrid form's compute rate (s per FLOP, one worker) is the same in Chapters 4 and 5 "
          f"within {100 * (RATE_FACTOR - 1):.0f} %", "§6.1 (refinement; hybrid of analytical and empirical modelling, "
          "Chapter 6 introduction)", f"1/{RATE_FACTOR:g} <= ρ_F(ch5) / ρ_F(ch4) <= {RATE_FACTOR:g}",
          needs=("compute_rate",), quantity=rate_ratio, side="in", threshold=(1 / RATE_FACTOR, RATE_FACTOR),
          evidence=_rate_text, missing="needs the hybrid form on both ch4 and ch5"),
)
