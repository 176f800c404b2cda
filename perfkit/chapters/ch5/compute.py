"""Chapter 5's computation: the repeated L2 fit (Table 5.2), the random forest (Table 5.3), the level effects,
Chapter 4's L2 errors for comparison and the volume study's exponents, into :class:`Ch5Results`."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ...data.measured import load_provenance, load_steps, provenance_path, thesis_split
from ...data.thesis import framework_name
from ...model.selection.baselines import compare_models, make_baseline
from ...model.selection.fitting import fit_repeated
from ...model.selection.metrics import mape
from ...model.analytic.scaling import core_bound, level_effects, volume_exponents
from ...schema import ROLES, resolve
from .. import ch4
from ..ch4.results import HeldOutSplit
from ..store import Results, storable
from .params import Params

__all__ = ["Ch5Results", "VolumeStudy", "compute", "inputs"]


@storable
@dataclass
class VolumeStudy:
    """§4: the exponents q(batch), q(workers) per volume size (:func:`perfkit.model.analytic.scaling.volume_exponents`),
    the best q(workers) the measuring machine's cores allow (``q_bound``) and where it was measured."""

    table: object
    q_bound: float
    cores: object
    source: str


@dataclass
class Ch5Results(Results, HeldOutSplit):
    """Chapter 5's results on one measured 3D-ResAttNet-18 file."""

    label: str
    path: str
    framework: str
    frame: object
    n_fit: int
    y_test: np.ndarray
    fit: object
    preds: dict
    comparison: object
    mape_first300: dict
    effects: tuple
    ch4_heldout: dict | None = None
    volume: VolumeStudy | None = None

    @property
    def volumes(self) -> list:
        return sorted(set(self.frame["volume"]))

    @property
    def heldout(self) -> dict:
        return {"y": self.y_test, "pred": self.preds}

    @property
    def ch4_l2_mape(self) -> float | None:
        """Held-out MAPE of Chapter 4's L2 fit on ``ch4_dataset`` (None when not given)."""
        h = self.ch4_heldout
        return None if h is None else float(ch4.error_row(h["y"], h["pred"])["MAPE"])


def inputs(p: Params) -> list[Path]:
    """Every file :func:`compute` reads: the measured file, the volume study, Chapter 4's file, their provenance."""
    paths = [resolve(v) for v in (p.dataset, p.volume_study, p.ch4_dataset) if v]
    return paths + [provenance_path(path) for path in paths]


def _volume(p: Params) -> VolumeStudy | None:


    if not p.volume_study:
        return None
    vs_path = resolve(p.volume_study)
    vs = pd.read_csv(vs_path)
    prov = load_provenance(vs_path)
    machine, device = prov.get("machine", {}), prov.get("identity", {}).get("device", "cpu")
    cores = machine.get("cores_usable") or machine.get("cores")
    return VolumeStudy(table=volume_exponents(vs, target=p.target),
                       q_bound=core_bound(vs["workers"].unique(), cores, device), cores=cores,
                       source=vs_path.parent.name)


def compute(p: Params) -> Ch5Results:
    """Fit, compare and measure everything Chapter 5 shows."""

    data_path = resolve(p.dataset)
    label, roles = data_path.parent.name, ROLES["ch5"]
    de_kw = dict(method=p.engine, maxiter=60) if p.quick else dict(method=p.engine)
    X, y, frame = load_steps(data_path, target=p.target, roles="ch5")
    X_fit, X_test, y_fit, y_test = thesis_split(X, y, n_fit=p.n_fit, n_test=p.n_test, seed=p.split_seed)
    fit = fit_repeated(ch4.make_model("ch5", penalty="l2", lam=p.lam, **de_kw), X_fit, y_fit,
                       seeds=2 if p.quick else p.seeds, n_jobs=p.n_jobs, progress=p.progress,
                       desc="Table 5.2: DE+L2 fits")
    models = {"DE": fit.best, "RF": make_baseline("rf", **roles, random_state=0).fit(X_fit, y_fit)}
    comparison = compare_models(models, X_fit, y_fit, X_test, y_test, prefitted=set(models))
    first300 = {k: mape(y_test.iloc[:300], models[k].predict(X_test.iloc[:300])) for k in comparison.index}
    ch4_heldout = None
    if p.ch4_dataset:
        y4, pred4 = ch4.heldout_predictions("DE+L2", quick=p.quick, dataset=p.ch4_dataset, target=p.target,
                                            n_jobs=p.n_jobs, progress=p.progress)
        ch4_heldout = {"y": y4, "pred": pred4}
    framework = framework_name(frame["framework"].iloc[0] if "framework" in frame.columns else label.split("-")[0])
    return Ch5Results(label=label, path=str(data_path), framework=framework, frame=frame, n_fit=len(X_fit),
                      y_test=np.asarray(y_test, dtype=float), fit=fit,
                      preds={k: np.asarray(m.predict(X_test), dtype=float) for k, m in models.items()},
                      comparison=comparison, mape_first300=first300,
                      effects=level_effects(frame, p.target, [c for r in roles.values() for c in r]),
                      ch4_heldout=ch4_heldout, volume=_volume(p))
