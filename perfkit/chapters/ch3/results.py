"""Chapter 3's computed results: :class:`Ch3Results` and the claims' quantities :class:`Ch3Quantities`.

Everything the chapter shows is a function of a :class:`Ch3Results` (:mod:`perfkit.chapters.store` writes
and reads it bit for bit): the published tables with what eq. 3.7 predicts from them, the measured tables
of every framework side by side, and the claims' quantities with their resamples.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from ..common import Quantities
from ..store import Results, storable

__all__ = ["Ch3Quantities", "Published", "Measured", "Ch3Results"]


@storable
@dataclass
class Ch3Quantities(Quantities):
    """The numbers Chapter 3's claims and readings read; None where the data cannot give them.

    ``{cell: Evidence}`` mappings unless said otherwise (:mod:`perfkit.chapters.ch3.quantities` and
    :func:`~perfkit.chapters.ch3.published.published_quantities` say what each cell is).
    """

    label: str | None = None  # the main measured file's framework label
    frameworks: list | None = None  # every measured framework label, main file first
    t_c: dict | None = None  # model -> {G: mean t_c on G workers} of the main file (G >= 2), in s
    speedup_table: Any = None  # the main file's measured speedup (:func:`perfkit.model.analytic.phases.measured_speedup`)
    t_c_trend: dict | None = None
    speedup_cells: dict | None = None
    speedup: dict | None = None
    eq37_thesis: dict | None = None
    eq37_paper: dict | None = None
    lif_rho: Any = None  # one Evidence
    lif_cells: int | None = None
    overlap: dict | None = None
    framework_speedup: dict | None = None  # framework -> {model: Evidence}
    fw_mxnet_efficiency: dict | None = None
    fw_mxnet_tc: dict | None = None
    fw_tf_lif: dict | None = None
    fw_tf_cnn_forward: dict | None = None
    fw_mxnet_backward: dict | None = None
    lif_r2: dict | None = None
    lif_beta2: dict | None = None
    published_lif: dict | None = None
    published_t33_growth: dict | None = None
    published_eq37_rank: dict | None = None
    published_eq37_speedups: dict | None = None
    published_t35_vs_paper: dict | None = None
    published_t35_values: dict | None = None  # (model, framework, quantity) -> (thesis, paper) values
    published_sum_of_phases: dict | None = None
    published_chainer_md: dict | None = None
    remainder_share: float | None = None  # largest mean share of t_iter the measured phases leave unexplained

    @classmethod
    def of(cls, quantities) -> "Ch3Quantities":
        """``quantities`` itself, or a mapping of quantity names as :class:`Ch3Quantities` (``TypeError`` for a
        name that is not a field)."""
        return quantities if isinstance(quantities, cls) else cls(**dict(quantities))

    def numbers(self) -> dict:
        """The quantities that were computed, by name (``label`` always): ``ChapterResult.numbers``."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name == "label" or getattr(self, f.name) is not None}


@storable
@dataclass
class Published:
    """The thesis's printed Tables 3.2–3.5 (every source) and what eq. 3.7 predicts from Tables 3.2 + 3.3."""

    t32: Any
    t33: Any
    t34: Any
    t35: Any
    predicted: Any  # :func:`perfkit.model.analytic.phases.predicted_speedups` in the chosen forms


@storable
@dataclass
class Measured:
    """The measured files' tables, every framework side by side (one label per framework), in one mode.

    The tables of multi-worker runs (``t_comm``, ``lif``, ``speedup``) are None without them; ``lif_fit`` is
    None also when eq. 3.9 cannot be fitted; ``overlap`` needs both modes.
    """

    frameworks: list  # framework labels, main file first
    mode: str  # ``measured_mode``
    setup: Any  # one row per measured file (:func:`~perfkit.chapters.ch3.compute.framework_setup`)
    phases: Any  # Table 3.2 layout (:func:`perfkit.model.analytic.phases.measured_table3_2`)
    breakdown: Any  # mean phase times per (framework, model, workers, rank), in s
    remainder: Any  # :func:`perfkit.model.analytic.phases.phase_remainder`
    t_comm: Any = None  # Table 3.3 layout (:func:`perfkit.model.analytic.phases.measured_t_comm`)
    lif: Any = None  # Table 3.4 layout (:func:`perfkit.model.analytic.phases.measured_lif`)
    speedup: Any = None  # measured speedups and eq. 3.7 on the measured phases
    overlap: Any = None  # :func:`perfkit.model.analytic.phases.overlap_vs_phased`
    lif_fit: Any = None  # Table 3.5 layout of the refitted eq. 3.9 (:func:`perfkit.model.analytic.lif.fit_lif_regression`)


@dataclass
class Ch3Results(Results):
    """Everything Chapter 3 computed: published, measured (None for the published tables only), the claims'
    quantities, and the notes about the data."""

    published: Published
    measured: Measured | None
    quantities: Ch3Quantities
    notes: list
    #: the main file as one machine (:class:`~perfkit.chapters.ch3.machines.MachineData`; None without one)
    main_machine: Any = None
    #: the ``machines`` datasets, each a :class:`~perfkit.chapters.ch3.machines.MachineData`
    machines: list = field(default_factory=list)

    @property
    def label(self) -> str | None:
        """The main measured file's framework label (None without one)."""
        return self.quantities.label

    @property
    def multi_worker(self) -> bool:
        """Whether any measured framework ran on more than one worker."""
        return self.measured is not None and self.measured.t_comm is not None
