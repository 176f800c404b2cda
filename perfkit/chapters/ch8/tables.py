"""Chapter 8's tables: pure functions of :class:`~.compute.Ch8Results` (nothing is fitted here)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .claims import held_out_inside
from .compute import SELECTED

__all__ = ["by_gpu", "overview", "by_workload", "bias", "search", "roofline", "workload_label"]


def workload_label(rows, workload) -> pd.Series:
    """One text per row naming its workload (the workload columns joined by ", ")."""
    return rows[list(workload)].astype(str).agg(", ".join, axis=1)


def by_gpu(study) -> pd.DataFrame:
    """MAPE (%) of every model on each held-out GPU type, the form the other GPUs chose, the share (%) of the GPU's
    predicted rows inside the selected form's intervals (``coverage``), and the median row."""
    g = study.groups.copy()
    g["coverage"] = _coverage_by_gpu(study).reindex(g["group"]).to_numpy()
    med = {"group": "median", "rows": int(g["rows"].sum()), "chosen": ""}
    med.update({m: float(g[m].median()) for m in [*study.models, "coverage"]})
    return pd.concat([g, pd.DataFrame([med])], ignore_index=True).rename(columns={"group": "held-out GPU"})


def _coverage_by_gpu(study) -> pd.Series:
    """Per held-out GPU, the share (%) of its predicted rows inside the selected form's intervals."""
    group, inside = held_out_inside(study.rows)
    return 100.0 * pd.Series(inside).groupby(group).mean()


def _median_of_medians(study, model) -> float:
    """The median over GPUs of each GPU's *median* APE (%): the yardstick issue 52 quoted (less strict than the
    median of each GPU's MAPE, which the claims use)."""
    rows = study.rows[np.isfinite(study.rows[SELECTED].to_numpy(dtype=float))]
    return float(_ape(rows, model).groupby(rows["group"]).median().median())


def overview(studies: dict) -> pd.DataFrame:
    """One row per study and model: the median over GPUs of each GPU's MAPE with its 95 % interval (GPUs
    resampled), the median over GPUs of each GPU's median APE, the MAPE and R² over all rows; the selected form's
    coverage (``coverage_nested``: each GPU's width from the other GPUs alone) and its margin over the best
    baseline."""
    out = []
    for name, s in studies.items():
        pooled = s.pooled.set_index("model")
        for m in s.models:
            r = pooled.loc[m]
            out.append({"study": s.label, "model": m, "median_gpu_MAPE": r["median_group_MAPE"], "lo": r["lo"],
                        "hi": r["hi"], "median_gpu_median_APE": _median_of_medians(s, m), "MAPE": r["MAPE"],
                        "R2": r["R2"], "rows": int(r["rows"]),
                        "coverage": 100 * s.coverage if m == SELECTED else np.nan,
                        "coverage_nested": _nested(s) if m == SELECTED else np.nan,
                        "margin": s.margin["estimate"] if m == SELECTED else np.nan,
                        "margin_lo": s.margin["lo"] if m == SELECTED else np.nan,
                        "margin_hi": s.margin["hi"] if m == SELECTED else np.nan})
    return pd.DataFrame(out)


def _nested(s) -> float:
    return np.nan if s.coverage_nested is None else 100 * s.coverage_nested


def _ape(rows, model) -> pd.Series:
    return 100.0 * (rows[model] - rows["measured"]).abs() / rows["measured"]


def by_workload(study) -> pd.DataFrame:
    """MAPE (%) of every model per workload, over the rows of every held-out GPU (each predicted without it)."""
    rows = study.rows[np.isfinite(study.rows[SELECTED].to_numpy(dtype=float))]
    label = workload_label(rows, study.workload)
    out = pd.DataFrame({m: _ape(rows, m).groupby(label).mean() for m in study.models})
    out.insert(0, "rows", label.value_counts().reindex(out.index).to_numpy())
    out.index.name = "workload"
    return out.reset_index().sort_values(SELECTED, ascending=False, ignore_index=True)


def bias(study) -> pd.DataFrame:
    """Per held-out GPU, each model's median signed error (%): 100·(e^median(log(pred / measured)) − 1); above 0
    the GPU runs faster than the model predicts."""
    rows = study.rows[np.isfinite(study.rows[SELECTED].to_numpy(dtype=float))]
    out = pd.DataFrame({m: np.log(rows[m] / rows["measured"]).groupby(rows["group"]).median() for m in study.models})
    out = 100.0 * (np.exp(out) - 1.0)
    out.index.name = "held-out GPU"
    return out.reset_index()


def search(studies: dict) -> pd.DataFrame:
    """Every candidate's median group MAPE on all GPUs of each study (the saved model's choice marked)."""
    frames = []
    for s in studies.values():
        t = s.search.copy()
        t.insert(0, "study", s.label)
        t["saved"] = t["candidate"] == s.final
        frames.append(t)
    return pd.concat(frames, ignore_index=True)


def roofline(study) -> pd.DataFrame:
    """The roofline form's coefficients per workload, fitted on every row of the study, with each workload's
    effective arithmetic intensity (FLOP per byte: its compute work over its memory traffic, both at the
    efficiency it reaches; inf without a memory term)."""
    t = study.roofline.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        t["intensity"] = 1000.0 * t["compute"] / t["memory"]
    return t
