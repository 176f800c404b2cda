"""Chapter 8's claims ledger: :data:`CLAIMS`, judged on :class:`Ch8Quantities`.

The claims are the goals of issue 52 (not the thesis's words: the thesis predicts only the hardware it measured), for
every study: one GPU type left out, the selected form's median over GPUs of each GPU's MAPE is at most 10 %; it is
below every baseline's; its 90 % intervals cover 80–95 % of the held-out rows. Each is decided from a bootstrap over
the GPUs (a GPU type is the unit a user asks about: the GPUs are resampled with replacement, every model on the same
draws), :func:`perfkit.study.grouped.group_bootstrap`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...evidence import B, SEED, Evidence, bootstrap_indices
from ...report.claims import Claim, fmt
from ...study.grouped import group_bootstrap
from ..common import Quantities
from .params import DATASET_NAMES, DATASETS

__all__ = ["CLAIMS", "Ch8Quantities", "SELECTED", "held_out_inside"]

SELECTED = "selected form"
_DRAWS = f"{B} bootstrap resamples of the held-out GPU types"


@dataclass
class Ch8Quantities(Quantities):
    """What Chapter 8's claims are decided from: each study's rows (``group``, ``measured``, one column per model,
    ``lower``, ``upper``), None for a study not run."""

    lambda_: object = None
    lambda_fp16: object = None
    lambda_fp32: object = None
    nvidia_dle: object = None
    coverage_level: float | None = None

    @classmethod
    def of(cls, r, coverage_level: float) -> "Ch8Quantities":
        q = cls(coverage_level=coverage_level)
        for name, s in r.studies.items():
            setattr(q, _field(name), s.rows[["group", "measured", *s.models, "lower", "upper"]])
        return q


def _field(study: str) -> str:
    return "lambda_" if study == "lambda" else study


def _models(rows) -> list:
    return [c for c in rows.columns if c not in ("group", "measured", "lower", "upper")]


def _boot(q, study: str):
    rows = getattr(q, _field(study))
    if rows is None:
        return None
    ok = np.isfinite(rows[SELECTED].to_numpy(dtype=float))
    rows = rows[ok]
    preds = {m: rows[m].to_numpy(dtype=float) for m in _models(rows)}
    return q.memo(("boot", study), lambda: group_bootstrap(rows["measured"], preds, rows["group"]))


def _selected(q, study):
    b = _boot(q, study)
    return None if b is None else Evidence.from_samples(*b[SELECTED], _DRAWS)


def _margin(q, study):
    b = _boot(q, study)
    if b is None:
        return None
    best = min((m for m in b if m != SELECTED), key=lambda m: b[m][0])
    return Evidence.from_samples(b[SELECTED][0] - b[best][0], b[SELECTED][1] - b[best][1],
                                 f"selected form − {best}; {_DRAWS}")


def held_out_inside(rows) -> tuple:
    """(group, inside) of the rows the selected form predicted: each row's held-out GPU and whether its measured
    time lies in the selected form's interval (what the coverage claim and the per-GPU table count)."""
    r = rows[np.isfinite(rows[SELECTED].to_numpy(dtype=float))]
    y = r["measured"].to_numpy(dtype=float)
    return r["group"].to_numpy(dtype=object), (y >= r["lower"].to_numpy()) & (y <= r["upper"].to_numpy())


def _coverage(q, study):
    rows = getattr(q, _field(study))
    if rows is None:
        return None

    def compute():
        g, inside = held_out_inside(rows)
        inside = inside.astype(float)
        levels = sorted(set(g.tolist()), key=str)
        hits = np.array([inside[g == lv].sum() for lv in levels])
        counts = np.array([(g == lv).sum() for lv in levels])
        draws = bootstrap_indices(len(levels), B, SEED)
        return Evidence.from_samples(100 * inside.mean(), 100 * hits[draws].sum(axis=1) / counts[draws].sum(axis=1),
                                     _DRAWS)

    return q.memo(("coverage", study), compute)


def _text(q, study):
    b = _boot(q, study)
    return "; ".join(f"{m} {fmt(v[0])} %" for m, v in sorted(b.items(), key=lambda kv: kv[1][0]))


def _claims(study: str) -> tuple:
    where, need = DATASET_NAMES[study], (_field(study),)
    missing = f"the study {study!r} was not run (parameter datasets)"
    return (
        Claim(f"{study}_median_10", "one GPU type left out, the selected form predicts its rows within 10 % (median "
              "over the GPU types of each one's MAPE)", f"issue 52's goal ({where})",
              "median over held-out GPU types of their MAPE <= 10 %", needs=need,
              quantity=lambda q: _selected(q, study), side="<", threshold=10.0,
              evidence=lambda q: f"selected form {_selected(q, study).text(3)} %", missing=missing),
        Claim(f"{study}_beats_baselines", "on a GPU it never saw, the selected form errs less than a random forest, "
              "gradient boosting and the log-linear form with spec columns", f"issue 52's goal ({where})",
              "median group MAPE(selected) − the best baseline's < 0", needs=need,
              quantity=lambda q: _margin(q, study), side="<", threshold=0.0, evidence=lambda q: _text(q, study),
              missing=missing),
        Claim(f"{study}_coverage", "its intervals, calibrated on other GPUs, cover a new GPU's rows as stated",
              f"issue 52's goal ({where})",
              "share of the held-out rows inside the 90 % intervals in [80, 95] %", needs=need,
              quantity=lambda q: _coverage(q, study), side="in", threshold=(80.0, 95.0),
              evidence=lambda q: f"coverage {_coverage(q, study).text(3)} % at the stated "
                                 f"{fmt(100 * q.coverage_level)} %", missing=missing),
    )


#: The claims of Chapter 8 and their rules, in ledger order: three per study.
CLAIMS = tuple(c for study in DATASETS for c in _claims(study))
