"""Chapter 4: the generic performance model on measured LeNet-5 training times.

The chapter runs in three stages:

* :func:`~.compute.compute` fits the generic model (eq. 4.4, :class:`perfkit.model.GenericPerformanceModel`) to
  each ``perfkit collect ch4`` file, split as the thesis split it — without regularisation (Table 4.2), with L2
  (Table 4.3) and L1 (Table 4.4), the random forest and SVR baselines (journal Table 5), the λ sweep
  (Figs. 4.15–4.17), the level effects — and, with several frameworks, the paired comparison and one model
  across frameworks, and, with ``machine_datasets``, eq. 4.4 on each machine's file cut to the rows every
  machine measured (:mod:`.machines`); the typed results (:class:`~.results.Ch4Results`) are kept by the
  results cache;
* :func:`present` turns the results into tables (:mod:`.tables`), figures (:mod:`.figures`), the claims
  ledger (:mod:`.claims`) and readings (:mod:`.readings`), computing nothing expensive;
* :func:`analyse` joins them and returns a :class:`~perfkit.chapters.result.ChapterResult`.

Sections (the notebook ``notebooks/ch4_generic_model.ipynb`` follows them): 1 the measured datasets (and
the epoch extrapolation check); 2 Table 4.2; 3 Table 4.3; 4 Table 4.4; 5 Table 4.5 and its journal and
conference twins, and q(workers) per machine; 6 the baselines; 7 the λ sweep; 8 the frameworks on identical configurations; 9 one
model across frameworks; 10 the claims ledger.
"""
from __future__ import annotations

import pandas as pd

from ...report.claims import judge_all
from ..common import run_chapter
from ..result import ChapterResult, checked_params, show_path
from . import tables as _tables
from .claims import (CLAIMS, FRAMEWORK_KEYS, MACHINE_KEYS, MIN_SEEDS, SOURCES, Ch4Quantities, framework_mape,
                     heldout_difference, level_ratio, mean_over_seeds, published_quantities, r2_drop, ratio_text,
                     seed_statistic, seed_std, slowest)
from .compute import (EPOCH_CHECK, PAIRED_FACTORS, compute, framework_powers, heldout_errors, heldout_predictions,
                      inputs)
from .figures import figures
from .machines import compare_machines
from .params import (ENGINES, FIT_CHECKS, FRAMEWORK_DATASETS, MACHINE_DATASETS, MIN_FRAMEWORK_ROWS, TARGET, TARGETS,
                     Params, check_params, check_steps_file, make_model)
from .readings import ch4_readings
from .results import Ch4Results, FrameworkFit, error_row
from .tables import claims_by_framework, params_side_by_side, thesis_mape

__all__ = ["Params", "check_params", "check_steps_file", "analyse", "present", "compute", "inputs", "CLAIMS",
           "make_model", "params_side_by_side", "error_row", "thesis_mape", "heldout_errors", "heldout_predictions",
           "level_ratio", "r2_drop", "seed_statistic", "framework_powers", "claims_by_framework", "FRAMEWORK_DATASETS",
           "FRAMEWORK_KEYS", "Ch4Results", "FrameworkFit", "Ch4Quantities", "TARGET", "TARGETS", "ENGINES",
           "FIT_CHECKS", "MIN_FRAMEWORK_ROWS", "MIN_SEEDS", "SOURCES", "EPOCH_CHECK", "PAIRED_FACTORS",
           "heldout_difference", "ratio_text", "slowest", "mean_over_seeds", "seed_std", "MACHINE_DATASETS",
           "MACHINE_KEYS", "compare_machines"]


def analyse(params: Params | None = None, /, **kwargs) -> ChapterResult:
    """Chapter 4 on measured LeNet-5 files: ``analyse(n_fit=900, ...)`` or ``analyse(check_params(...))``.

    ``dataset`` and every file of ``framework_datasets`` are analysed alike, then side by side: a column
    per framework in the tables, a figure per framework numbered as the thesis numbers it, a line per
    framework in Figs. 4.15–4.17. The parameters (:class:`Params`) are checked first
    (:func:`check_params`): a value that is not allowed raises one
    :class:`~perfkit.chapters.result.ParameterError` before anything is fitted. Results computed before
    with the same parameters, data and code are read from the results cache (``cache=False`` recomputes).
    """
    p = checked_params(params, kwargs, Params, check_params)
    return run_chapter("ch4", p, inputs(p), compute, Ch4Results, present)


def _numbers(r: Ch4Results, p: Params) -> dict:
    """The numbers the readings and the notebook quote, by name (per framework and for the chapter)."""
    def of(part):
        qw, qw_sd = part.power("DE", "workers")
        qb, qb_sd = part.power("DE", "batch_size")
        return dict(label=part.label, framework=part.framework, n_rows=part.n_rows, n_fit=part.n_fit,
                    n_test=part.n_test, target=part.target, lam_l2=part.lam_l2, lam_l1=part.lam_l1,
                    provenance=part.provenance, errors=part.errors, heldout=part.heldout, q_workers=qw,
                    q_workers_std=qw_sd, q_batch=qb, q_batch_std=qb_sd, mape=part.mape, sweep_r2=part.sweep_r2,
                    seed_params=part.seed_params, effects=part.effects)

    q = of(r.main)
    q["per_framework"] = {part.label: of(part) for part in r.parts}
    frame = pd.concat([part.frame for part in r.parts], ignore_index=True)
    q["frameworks"] = sorted(set(frame["framework"].astype(str))) if "framework" in frame.columns else []
    q["framework_q"] = r.framework_q
    if r.paired is not None:
        q["paired"], q["pooled"] = r.paired, r.pooled
    if r.machines:
        q["machines"] = r.machines
    return q


def _ledger(r: Ch4Results):
    """§10 the claims: each framework's measured claims, the framework claims, the published numbers."""
    several = len(r.parts) > 1
    chapter = Ch4Quantities.of(r.main, framework_q=r.framework_q, framework_mape=framework_mape(r.parts),
                               framework_effects={part.framework: part.effects for part in r.parts} if several else None,
                               **published_quantities())
    measured = [c for c in CLAIMS if not c.data and c.key not in FRAMEWORK_KEYS + MACHINE_KEYS]
    name = r.main.file.name
    ledger = [judge_all("4", f"{r.main.label}/{name}", measured, chapter),
              judge_all("4", ", ".join(f"{lb}/{name}" for lb in r.labels),
                        [c for c in CLAIMS if c.key in FRAMEWORK_KEYS], chapter)]
    for part in r.parts[1:]:
        led = judge_all("4", f"{part.label}/{part.file.name}", measured, Ch4Quantities.of(part))
        ledger.append(led.assign(key=led["key"] + "." + part.label.split("-")[0]))
    ledger += _machine_ledger(r, chapter)
    ledger.append(judge_all("4", "", [c for c in CLAIMS if c.data], chapter))
    return pd.concat(ledger, ignore_index=True)


def _machine_ledger(r: Ch4Results, chapter: Ch4Quantities) -> list:
    """The machine claims (:data:`MACHINE_KEYS`) per machine, keyed ``key.<the file's folder>``; one row that
    cannot be tested without machines."""
    claims = [c for c in CLAIMS if c.key in MACHINE_KEYS]
    if not r.machines:
        return [judge_all("4", "", claims, chapter)]
    out = []
    for m in r.machines:
        led = judge_all("4", f"{m.label}/{m.file.name} (its first {m.n} rows)", claims,
                        Ch4Quantities(machine_q=m.q_workers, machine=m.machine))
        out.append(led.assign(key=led["key"] + "." + m.label))
    return out


def _notes(r: Ch4Results, p: Params) -> list:
    return [f"{part.n_rows} successful samples in {show_path(part.file)}; fit on {part.n_fit}, held out {part.n_test}"
            + (" (fewer samples than n_fit + n_test: the split was scaled down in proportion)"
               if part.n_rows < p.n_fit + p.n_test else "") for part in r.parts]


def _fill_tables(r: Ch4Results, p: Params, T: dict, V: dict) -> "pd.DataFrame":
    """Every table and view of the chapter into ``T`` and ``V``; returns the λ sweep's coefficients (not saved)."""
    V["dataset"] = _tables.dataset_view(r, p.target)
    for key, table, name in (("DE", "4.2", "table4_2"), ("DE+L2", "4.3", "table4_3")):
        T[name] = _tables.side_by_side(r, key, table)
        V[name] = _tables.params_view(T[name])
    T["table4_4"] = _tables.table4_4(r)
    for name, table in _tables.scaling_tables(r).items():
        T[name], V[name] = table, _tables.scaling_view(table)
    T.update(_tables.baseline_tables(r))
    T["lambda_sweep"], coefficients = _tables.lambda_sweep(r)
    V["lambda_sweep"] = _tables.lambda_sweep_view(r)
    if r.epoch is not None:
        T["ext_epoch_extrapolation"], V["ext_epoch_extrapolation"] = r.epoch, _tables.epoch_view(r.epoch)
    if r.paired is not None:
        T["ext_paired_ratios"], V["ext_paired_ratios"] = r.paired, _tables.paired_view(r.paired)
        T["ext_pooled_vs_per_framework"] = r.pooled
        V["ext_pooled_vs_per_framework"] = _tables.pooled_view(r.pooled)
    if r.machines:
        T["ext_q_workers_by_machine"] = _tables.q_workers_by_machine(r.machines)
        V["ext_q_workers_by_machine"] = _tables.q_workers_by_machine_view(T["ext_q_workers_by_machine"])
    return coefficients


def present(r: Ch4Results, res: ChapterResult) -> ChapterResult:
    """Fill ``res`` from the results: tables and views, figures, the claims ledger, numbers, notes and readings."""
    p = res.params
    res.notes.extend(_notes(r, p))
    res.fits.update(r.fits_by_name())
    res.numbers.update(_numbers(r, p))
    res.numbers["lambda_sweep_coefficients"] = _fill_tables(r, p, res.tables, res.views)
    res.figures.update(figures(r, p.lam_l2))
    res.tables["claims_ch4"] = _ledger(r)
    if len(r.parts) > 1:
        res.views["claims_by_framework"] = claims_by_framework(res.tables["claims_ch4"], r.labels)
    res.readings = ch4_readings(res)
    return res
