"""What Chapter 4 computes, as typed results: one :class:`FrameworkFit` per measured file, and :class:`Ch4Results`.

Everything the chapter shows is a function of these (:mod:`.tables`, :mod:`.figures`, :mod:`.claims`,
:mod:`.readings`); they are stored and read back by the results cache (:mod:`perfkit.chapters.store`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...model.selection.metrics import mae, mape, mse, r2, rmse
from ...model.analytic.scaling import scaling_power
from ...evidence import Evidence
from ..store import Results, storable

__all__ = ["FrameworkFit", "MachineFit", "Ch4Results", "HeldOutSplit", "error_row", "FIT_NAMES"]

#: the generic-model fits of every framework: no regularisation (Table 4.2), L2 (Table 4.3), L1 (Table 4.4)
FIT_NAMES = ("DE", "DE+L1", "DE+L2")


def error_row(y_true, y_pred) -> dict:
    """MAPE (%), MAE, MSE, RMSE and R² of held-out predictions."""

    return {"MAPE": mape(y_true, y_pred), "MAE": mae(y_true, y_pred), "MSE": mse(y_true, y_pred),
            "RMSE": rmse(y_true, y_pred), "R2": r2(y_true, y_pred)}


class HeldOutSplit:
    """Counts of a measured file split into fitted and held-out rows, for results with ``frame`` (every usable
    row) and ``y_test`` (the held-out times)."""

    @property
    def n_rows(self) -> int:
        return len(self.frame)

    @property
    def n_test(self) -> int:
        return len(self.y_test)


@storable
@dataclass
class FrameworkFit(HeldOutSplit):
    """Sections 1–7 of the chapter on one framework's measured file.

    ``fits`` holds the repeated generic-model fits (:data:`FIT_NAMES`); ``preds`` the held-out predictions of
    those fits' best seeds and of the random forest (``RF``) and SVR; ``comparison`` the held-out metrics of
    DE, DE+L2, RF and SVR (journal Table 5's layout); ``sweep`` the λ sweep's long table
    (:func:`perfkit.model.selection.fitting.regularisation_sweep`); ``effects`` the OLS level effects
    (:func:`perfkit.model.analytic.scaling.level_effects`: params, covariance, levels) over every measured row.
    """

    label: str
    framework: str
    path: str
    target: str
    lam_l2: float
    lam_l1: float
    provenance: dict
    frame: object
    n_fit: int
    y_test: np.ndarray
    fits: dict
    preds: dict
    comparison: object
    sweep: object
    effects: tuple

    @property
    def fw_label(self) -> str:
        """``"PyTorch (pytorch-cpu)"``."""
        return f"{self.framework} ({self.label})"

    @property
    def file(self) -> Path:
        return Path(self.path)

    @property
    def errors(self) -> dict:
        """:func:`error_row` of each generic-model fit on the held-out rows."""
        return {k: error_row(self.y_test, self.preds[k]) for k in FIT_NAMES}

    @property
    def heldout(self) -> dict:
        """``{"y": held-out times, "pred": {model: predictions}}``, the rows every paired bootstrap draws from."""
        return {"y": self.y_test, "pred": self.preds}

    @property
    def mape(self) -> dict:
        return {k: float(v) for k, v in self.comparison["MAPE"].items()}

    @property
    def seed_params(self) -> dict:
        """Per-seed parameters (:attr:`RepeatedFit.params`) of the fits without regularisation and with L2."""
        return {k: self.fits[k].params for k in ("DE", "DE+L2")}

    @property
    def sweep_r2(self) -> dict:
        """``{penalty: {λ: per-seed held-out R²}}`` of the λ sweep."""
        r2 = self.sweep[self.sweep["quantity"] == "r2_test"]
        return {pen: {float(lam): g.sort_values("seed")["value"].to_numpy(dtype=float) for lam, g in gp.groupby("lam")}
                for pen, gp in r2.groupby("penalty")}

    def power(self, fit: str, column: str) -> tuple[float, float]:
        """Mean and std over seeds of the power q of ``column`` in fit ``fit``."""

        return scaling_power(self.fits[fit].summary(), column)


@storable
@dataclass
class MachineFit:
    """Eq. 4.4 on one machine's file, cut to the rows every machine measured (:func:`~.machines.fit_machine`).

    ``q_workers`` is the power of workers of the best-objective fit over the chapter's seeds, its samples the
    bootstrap refits; ``mape`` the held-out MAPE (%) of that fit, its samples a bootstrap of the held-out rows;
    ``median_time`` and ``rows_by_workers`` the median target (s) and the row count per worker count over the
    ``n`` rows used.
    """

    label: str  # the file's folder, e.g. pytorch-cpu16
    path: str
    machine: str  # e.g. "16-core CPU (Intel Xeon)"
    cores: int | None
    n_rows: int  # usable rows of the file
    n: int  # rows used (the first n usable rows)
    n_fit: int
    n_test: int
    q_workers: Evidence
    mape: Evidence
    median_time: dict
    rows_by_workers: dict

    @property
    def file(self) -> Path:
        return Path(self.path)


@dataclass
class Ch4Results(Results):
    """Chapter 4's results: the frameworks' fits (the first is the main dataset's), the cross-framework
    sections (``None`` where fewer than two frameworks, or no epoch check, were measured) and the machines'
    fits of eq. 4.4 on their common rows (:class:`MachineFit`, the main dataset's first; ``None`` without
    ``machine_datasets``)."""

    parts: list
    paired: object = None
    pooled: object = None
    epoch: object = None
    framework_q: dict | None = None
    machines: list | None = None

    @property
    def main(self) -> FrameworkFit:
        return self.parts[0]

    @property
    def labels(self) -> list:
        return [part.label for part in self.parts]

    def fits_by_name(self) -> dict:
        """Every repeated fit by name: the main framework's as ``"DE"``…, the others' as ``"DE (TensorFlow)"``."""
        out = dict(self.main.fits)
        for part in self.parts[1:]:
            out.update({f"{k} ({part.framework})": v for k, v in part.fits.items()})
        return out

