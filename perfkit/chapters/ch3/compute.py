"""Chapter 3's compute stage: :func:`compute` reads the published tables and the measured files and returns
:class:`~perfkit.chapters.ch3.results.Ch3Results`; :func:`inputs` names every file it reads."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ...data.measured import FRAMEWORK_NAMES, load_phases
from ...data.thesis import THESIS_TABLES, load_thesis_table
from ...model.analytic import phases as ph
from ...model.analytic.lif import fit_lif_regression
from ...schema import data_dir, provenance_path, resolve
from ..result import show_path
from .machines import machine_data, machine_inputs
from .params import VARIANTS, Params
from .published import published_quantities
from .quantities import framework_quantities, measured_quantities, regression_quantities
from .results import Ch3Quantities, Ch3Results, Measured, Published

__all__ = ["compute", "inputs", "framework_setup", "TABLES", "BREAKDOWN_PHASES"]

#: the thesis tables Chapter 3 reads
TABLES = ("3.2", "3.3", "3.4", "3.5")
#: the columns averaged per worker for the breakdown figures (Figs. 3.8–3.13)
BREAKDOWN_PHASES = ["t_md", "t_io", "t_h2d", "t_f", "t_b", "t_c", "t_u", "t_iter"]


def _measured_files(p: Params) -> list[Path]:
    return ([resolve(p.measured_csv)] if p.measured_csv else []) + [resolve(f) for f in p.framework_csvs]


def inputs(p: Params) -> list[Path]:
    """Every file :func:`compute` reads: the thesis's Tables 3.2–3.5 and each measured file with its provenance."""
    files = [data_dir() / "thesis" / f"{THESIS_TABLES[t][0]}.csv" for t in TABLES]
    for path in _measured_files(p):
        files += [path, provenance_path(path)]
    for dataset in p.machines:
        files += machine_inputs(dataset)
    return files


def framework_setup(paths):
    """One row per measured file: framework, versions, collective and the segments of each mode.

    Read from the provenance beside each file (what the workers reported in ``hello``,
    on their largest worker count); a field the adapter did not report reads
    ``"not recorded"``.
    """

    rows = []
    for path in paths:
        try:
            prov = json.loads(provenance_path(path).read_text())
        except (OSError, ValueError):
            prov = {}
        adapters = prov.get("adapters") or {}
        hello = adapters[max(adapters, key=int)] if adapters else {}
        fw = hello.get("framework") or (prov.get("identity") or {}).get("framework", "?")
        seg = hello.get("segments") or {}
        versions = hello.get("versions") or {}
        rows.append({"framework": FRAMEWORK_NAMES.get(fw, fw), "file": show_path(path),
                     "versions": ", ".join(f"{k} {v}" for k, v in versions.items() if v) or "not recorded",
                     "aggregation": hello.get("collective") or hello.get("backend") or "not recorded",
                     "phased": " | ".join(seg.get("phased", [])) or "not recorded",
                     "overlapped (native step)": " | ".join(seg.get("overlapped", [])) or "not recorded"})
    return pd.DataFrame(rows)


def _load(p: Params, notes: list):
    """``(measured_all, measured, every_all)``: the main file (all modes, and ``measured_mode``) and every file
    with one label per framework (all modes); None where not given."""

    measured = measured_all = None
    if p.measured_csv:
        mpath = resolve(p.measured_csv)
        measured_all = load_phases(mpath, mode=None)
        measured = measured_all[measured_all["mode"] == p.measured_mode].reset_index(drop=True)
        if measured.empty:
            raise ValueError(f"measured_mode: no {p.measured_mode!r} rows in {mpath}")
        notes.append(f"measured: {mpath.name}, {len(measured)} rows ({p.measured_mode}), "
                     f"{measured['framework'].iloc[0]}; models {sorted(measured['model'].unique())}, "
                     f"workers {sorted(int(w) for w in measured['workers'].unique())}")
    every_all = measured_all
    for item in p.framework_csvs:
        path = resolve(item)
        other = load_phases(path, mode=None, split_frameworks=True)
        notes.append(f"measured: {show_path(path)}, {int((other['mode'] == p.measured_mode).sum())} rows "
                     f"({p.measured_mode}), {', '.join(sorted(set(other['framework'])))}")
        every_all = other if every_all is None else pd.concat([every_all, other], ignore_index=True)
    return measured_all, measured, every_all


def _measured_tables(p: Params, every, every_all, notes: list) -> tuple[Measured, object]:
    """The measured tables of every framework, and the epoch frame of eq. 3.9 (None without multi-worker runs)."""

    frameworks = list(dict.fromkeys(every["framework"]))
    m = Measured(frameworks=frameworks, mode=p.measured_mode, setup=framework_setup(_measured_files(p)),
                 phases=ph.measured_table3_2(every),
                 breakdown=every.groupby(["framework", "model", "workers", "rank"], sort=False)[BREAKDOWN_PHASES]
                 .mean().reset_index(),
                 remainder=ph.phase_remainder(every), overlap=ph.overlap_vs_phased(every_all))
    if not bool((every["workers"] > 1).any()):
        return m, None
    m.t_comm, m.lif = ph.measured_t_comm(every), ph.measured_lif(every)
    predicted = ph.predicted_speedups(m.phases, m.t_comm, variants=p.speedup_variants)
    missing = len(m.t_comm) - int((predicted["gpus"] > 1).sum() / max(len(p.speedup_variants), 1))
    if missing:
        notes.append(f"eq. 3.7 is not evaluated for {missing} of {len(m.t_comm)} measured cells: it needs every "
                     "phase and the all-reduce t_c timed on their own, and a native (overlapped) step fuses them")
    m.speedup = pd.concat([ph.measured_speedup(every, n_train=p.n_train),
                           predicted[predicted["framework"].isin(frameworks)]], ignore_index=True)
    epochs = ph.epoch_frame(every, n_train=p.n_train)
    try:
        m.lif_fit = fit_lif_regression(epochs, time="epoch_time", workers="workers", lif="lif",
                                       by=["model", "framework"])
    except ValueError as exc:  # e.g. LIF constant within a worker count: the fit is not identifiable
        notes.append(f"Table 3.5 cannot be refitted on this data: {exc}")
    return m, epochs


def _main_quantities(p: Params, measured_all, measured) -> dict:
    """The quantities of the main file's multi-worker runs."""
    q = {}
    tc = ph.measured_t_comm(measured).pivot_table(index="model", columns="gpus", values="mean")
    multi = [int(g) for g in tc.columns if g > 1]
    if multi:
        q["t_c"] = {m: {g: float(tc.loc[m, g]) for g in multi if tc.loc[m, g] == tc.loc[m, g]} for m in tc.index}
    q["speedup_table"] = ph.measured_speedup(measured, n_train=p.n_train)
    q.update(measured_quantities(measured_all, mode=p.measured_mode, n_train=p.n_train,
                                 variants=p.speedup_variants))
    return q


def compute(p: Params) -> Ch3Results:
    """Chapter 3's results on checked parameters ``p`` (:func:`~perfkit.chapters.ch3.params.check_params`)."""
    notes: list = []
    t32, t33, t34, t35 = (load_thesis_table(n) for n in TABLES)
    published = Published(t32, t33, t34, t35, ph.predicted_speedups(t32, t33, variants=p.speedup_variants))
    measured_all, measured, every_all = _load(p, notes)
    label = None if measured is None else measured["framework"].iloc[0]
    main_multi = measured is not None and bool((measured["workers"] > 1).any())
    q: dict = {"label": label, "frameworks": []}
    m = epochs = None
    if every_all is not None:
        every = every_all[every_all["mode"] == p.measured_mode].reset_index(drop=True)
        m, epochs = _measured_tables(p, every, every_all, notes)
        q["frameworks"] = m.frameworks
        if main_multi:
            q.update(_main_quantities(p, measured_all, measured))
        if m.t_comm is not None and len(m.frameworks) >= 2:
            q.update(framework_quantities(every, n_train=p.n_train))
        if main_multi and m.lif_fit is not None:  # the claims are about the main framework's fit
            mine = m.lif_fit[m.lif_fit["framework"] == label].reset_index(drop=True)
            q.update(regression_quantities(epochs[epochs["framework"] == label], mine))
    q.update(published_quantities(t32, t33, t34, t35, variants=VARIANTS))
    if m is not None:
        q["remainder_share"] = float(m.remainder["remainder_share"].max())
        # a check of the harness, not a claim of the thesis: its phases add up to t_iter by construction
        notes.append(f"harness check: the measured phases add up to t_iter but for at most "
                     f"{100 * q['remainder_share']:.2f} % (largest mean remainder per model and worker count)")
    quantities = Ch3Quantities(**q)
    main = None
    if p.measured_csv:  # its claims are the main ledger's: judged once, on these quantities
        main = machine_data(p.measured_csv, p, quantities=quantities)
        if p.framework_csvs:
            main.dataset += f" + {len(p.framework_csvs)} framework files"
    machines = [machine_data(d, p) for d in p.machines]
    for mach in machines:
        notes.append(f"machine: {mach.machine}: {mach.source}, G = {_counts(mach.workers)}")
    return Ch3Results(published=published, measured=m, quantities=quantities, notes=notes,
                      main_machine=main, machines=machines)


def _counts(workers) -> str:
    """``[1, 2, 3, 4, 8]`` → ``"1–4, 8"``."""
    runs, out = [], []
    for g in workers:
        if runs and g == runs[-1][-1] + 1:
            runs[-1].append(g)
        else:
            runs.append([g])
    for r in runs:
        out.append(f"{r[0]}–{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)))
    return ", ".join(out)
