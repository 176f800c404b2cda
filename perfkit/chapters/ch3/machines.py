"""Chapter 3 on several machines: the thesis's scaling claims decided on each dataset's own data, side by side.

A *machine dataset* (the ``machines`` parameter) is one of

* a ``perfkit collect ch3`` file (our harness on a 16-core CPU, on one GPU, ...): its claims are computed exactly
  as for the chapter's main file (:func:`~perfkit.chapters.ch3.quantities.measured_quantities`, eq. 3.9);
* ``"pollux"``: Pollux's GPU-cluster traces, with measured synchronisation times (:mod:`.traces`);
* ``"lambda"`` or ``"nvidia_dle"``: published multi-GPU throughput tables, speedup only (:mod:`.throughput`).

Each gives a :class:`MachineData`: which machine, the worker counts it holds, the claims' quantities, and for
every claim it cannot decide the reason ("one framework", "G = 1 only", "no synchronisation time"). The machine
ledger (:func:`machine_ledger`) judges the measured and framework claims of :data:`~.claims.CLAIMS` on each.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from ...data.measured import load_phases, load_provenance
from ...report.claims import VERDICTS, judge_all
from ...schema import data_dir, provenance_path, resolve
from ..result import show_path
from ..store import storable
from .claims import CLAIMS
from .params import MACHINE_SOURCE_NAMES, MACHINES
from .results import Ch3Quantities

__all__ = ["MachineData", "MACHINE_SOURCES", "SCALING_KEYS", "machine_data", "machine_inputs",
           "machine_ledger", "machine_label", "trace_machine"]

#: the claims of the machine ledger: every measured and framework claim (not the checks of the printed tables)
SCALING_KEYS = tuple(c.key for c in CLAIMS if not c.key.startswith("published_"))
_FRAMEWORK_KEYS = tuple(k for k in SCALING_KEYS if k.startswith("fw_") or k == "framework_ranking")
_LIF_KEYS = ("lif_vs_speedup", "lif_regression", "lif_coefficient")


@storable
@dataclass
class MachineData:
    """One machine dataset's share of Chapter 3: what it is, what it holds, and its claims' quantities."""

    dataset: str  # the parameter value: a file or a source name
    machine: str  # e.g. "16-core CPU (Intel Xeon)"
    kind: str  # "CPU", "one GPU", "GPU cluster" or "GPU servers"
    source: str  # who measured it, how
    workers: list  # the worker (GPU) counts it holds
    quantities: Ch3Quantities
    reasons: dict = field(default_factory=dict)  # claim key -> why this dataset cannot decide it
    curves: Any = None  # DataFrame: group (model or job), workers, speedup, t_c (s; NaN where not measured)
    lacks: str = ""  # what the source does not measure


def machine_label(prov: dict, device: str) -> tuple[str, str]:
    """``(machine, kind)`` from a provenance's ``machine`` record: ``("16-core CPU (Intel Xeon)", "CPU")`` or
    ``("1 GPU (NVIDIA H200)", "one GPU")``; "not recorded" parts where the provenance lacks them."""
    m = prov.get("machine") or {}
    if device == "cuda":
        gpus = m.get("gpus") or []
        name = str(gpus[0]).split(",")[0] if gpus else "GPU not recorded"
        return f"1 GPU ({name})", "one GPU"
    cpu = str(m.get("cpu") or "CPU not recorded").replace("(R)", "").replace(" Processor", "").strip()
    cores = m.get("cores_usable") or m.get("cores")
    return (f"{cores}-core CPU ({cpu})" if cores else f"CPU ({cpu})"), "CPU"


def _measured(path: str, p, quantities: Ch3Quantities | None = None) -> MachineData:
    """A ``perfkit collect ch3`` file: the chapter's own quantities on it, or ``quantities`` when the caller has
    them already (the chapter's main file, whose quantities :func:`~.compute.compute` computed with every
    framework file) and only the machine, its worker counts and curves are needed."""
    from ...model.analytic import phases as ph
    from ...model.analytic.lif import fit_lif_regression
    from .quantities import measured_quantities, regression_quantities

    full = resolve(path)
    every = load_phases(full, mode=None)
    prov = load_provenance(full)
    device = str(every["device"].iloc[0]) if "device" in every.columns else "cpu"
    machine, kind = machine_label(prov, device)
    fw = str(every["framework"].iloc[0]).split(" (")[0]  # the label without "(cpu, measured)"
    run = every[every["mode"] == p.measured_mode]
    workers = sorted(int(g) for g in run["workers"].unique())
    q: dict = {"label": str(every["framework"].iloc[0]), "frameworks": [str(every["framework"].iloc[0])]}
    reasons = {k: f"one framework ({fw})" for k in _FRAMEWORK_KEYS}
    curve = pd.DataFrame(columns=["group", "workers", "speedup", "t_c"])
    if len(workers) < 2:
        why = f"G = {workers[0] if workers else 'none'} only: no speedup, aggregation or load imbalance to measure"
        reasons.update({k: why for k in SCALING_KEYS if k not in _FRAMEWORK_KEYS})
    else:
        if quantities is None:
            q.update(measured_quantities(every, mode=p.measured_mode, n_train=p.n_train,
                                         variants=p.speedup_variants))
            epochs = ph.epoch_frame(run, n_train=p.n_train)
            try:
                fit = fit_lif_regression(epochs, time="epoch_time", workers="workers", lif="lif",
                                         by=["model", "framework"])
                q.update(regression_quantities(epochs, fit))
            except ValueError as exc:
                reasons.update({k: f"eq. 3.9 cannot be fitted: {exc}" for k in ("lif_regression", "lif_coefficient")})
        multi = [g for g in workers if g > 1]
        if len(multi) < 2:
            reasons["t_c_grows"] = f"needs two worker counts above 1 (here G <= {max(workers)})"
        sp = ph.measured_speedup(run, n_train=p.n_train)
        sp = sp[sp["variant"] == "measured"]
        tc = ph.measured_t_comm(run)
        curve = sp.rename(columns={"model": "group", "gpus": "workers"})[["group", "workers", "speedup"]].merge(
            tc.rename(columns={"model": "group", "gpus": "workers", "mean": "t_c"})[["group", "workers", "t_c"]],
            on=["group", "workers"], how="left")
    if set(every["mode"]) != {"phased", "overlapped"}:
        reasons["overlap"] = f"one mode timed ({', '.join(sorted(set(every['mode'])))})"
    return MachineData(dataset=path, machine=machine, kind=kind,
                       source=f"perfkit collect ch3, {fw}, {p.measured_mode} mode", workers=workers,
                       quantities=quantities if quantities is not None else Ch3Quantities(**q), reasons=reasons,
                       curves=curve.reset_index(drop=True),
                       lacks="per-GPU collectives on one machine only" if kind != "CPU" else "")


def trace_machine(traces, dataset: str, machine: str, source: str, n_train: int = 60000) -> MachineData:
    """The :class:`MachineData` of cluster traces (:func:`perfkit.data.pollux.load_traces` rows, e.g. another
    cluster's): the claims :mod:`.traces` can decide, and why the others cannot be."""
    from .traces import trace_quantities

    q, curve, why = trace_quantities(traces, n_train=n_train)
    q.update({"label": source, "frameworks": [source]})
    no_phases = ("the traces give step and synchronisation time only (no t_io, t_md, t_u), where eq. 3.7's thesis "
                 "and paper forms differ: see the thesis form")
    reasons = {k: "one framework (PyTorch, AdaptDL)" for k in _FRAMEWORK_KEYS}
    reasons.update({"eq37_paper": no_phases, "overlap": "one mode (the job's own, overlapped) is traced"})
    if why:
        reasons.update({k: why for k in SCALING_KEYS if k not in reasons})
    elif "lif_r2" not in q:
        reasons.update({k: "the placement LIF does not vary (one node) or too few placement rows"
                        for k in _LIF_KEYS})
    return MachineData(dataset=dataset, machine=machine, kind="GPU cluster", source=source,
                       workers=sorted(int(g) for g in traces["n_gpus"].unique()),
                       quantities=Ch3Quantities(**q), reasons=reasons, curves=pd.DataFrame(curve),
                       lacks="no forward/backward/update split (compute = step − synchronisation), no per-GPU "
                             "times (LIF from the GPUs per node), one batch per job is read")


def _pollux(p) -> MachineData:
    from ...data.pollux import load_pollux

    return trace_machine(load_pollux(), "pollux", "16 nodes × 4 NVIDIA T4 (AWS g4dn.12xlarge)",
                         "Pollux's traces (Qiao et al., OSDI 2021), 6 jobs", n_train=p.n_train)


def _throughput(name: str, loader: Callable, config: list, servers: str, source: str) -> Callable:
    def build(p) -> MachineData:
        from .throughput import throughput_quantities

        frame = loader()
        machine = f"1–{int(frame['n_gpus'].max())} GPUs, {frame['gpu'].nunique()} GPU kinds ({servers})"
        q, curve, left = throughput_quantities(frame, config)
        q.update({"label": source, "frameworks": [source]})
        none = "a throughput table: no synchronisation, phase or per-GPU times"
        reasons = {k: none for k in SCALING_KEYS if k != "speedup"}
        reasons.update({k: "one benchmark suite, no framework compared on the same runs" for k in _FRAMEWORK_KEYS})
        return MachineData(dataset=name, machine=machine, kind="GPU servers", source=source,
                           workers=sorted(int(g) for g in frame["n_gpus"].unique()), quantities=Ch3Quantities(**q),
                           reasons=reasons, curves=pd.DataFrame(curve),
                           lacks="one published number per cell (no repeats): the interval resamples configurations"
                                 + (f"; too few configurations to judge: {', '.join(left)}" if left else ""))
    return build


def _lambda():
    from ...data.lambda_labs import load_lambda
    return load_lambda(screen=True)


def _nvidia():
    from ...data.nvidia_dle import load_nvidia_dle
    frame = load_nvidia_dle()
    return frame.assign(model=frame["model"] + " (" + frame["framework"] + ")")


#: the named machine datasets: name -> builder ``(params) -> MachineData``; anything else is a ch3 file
MACHINE_SOURCES = {
    "pollux": _pollux,
    "lambda": _throughput("lambda", _lambda, ["precision", "gpu", "batch_per_gpu"],
                          "Lambda's servers", "Lambda's PyTorch benchmarks (screened)"),
    "nvidia_dle": _throughput("nvidia_dle", _nvidia, ["variant", "gpu", "system", "precision", "batch_per_gpu"],
                              "NVIDIA's DGX systems", "NVIDIA DeepLearningExamples tables"),
}
assert set(MACHINE_SOURCES) == set(MACHINE_SOURCE_NAMES)
_EXTERNAL_FILES = {"pollux": ("pollux", "*/*.csv"), "lambda": ("lambda", "*.csv"),
                   "nvidia_dle": ("nvidia_dle", "*.csv")}


def machine_inputs(dataset: str) -> list[Path]:
    """The files a machine dataset is read from (with provenance), for the results cache."""
    if dataset in _EXTERNAL_FILES:
        folder, pattern = _EXTERNAL_FILES[dataset]
        root = data_dir() / "external"
        return sorted((root / folder).glob(pattern)) + [root / f"{folder}.provenance.json"]
    path = resolve(dataset)
    return [path, provenance_path(path)]


def machine_data(dataset: str, p, quantities: Ch3Quantities | None = None) -> MachineData:
    """The :class:`MachineData` of one machine dataset on checked parameters ``p``; a ``perfkit collect ch3`` file
    whose claims' ``quantities`` are known already is not judged again."""
    build = MACHINE_SOURCES.get(dataset)
    return build(p) if build is not None else _measured(dataset, p, quantities)


def machine_ledger(main: MachineData | None, main_ledger, machines: list) -> pd.DataFrame:
    """The claims of :data:`SCALING_KEYS` judged per machine dataset, with a ``machine`` and ``kind`` column.

    ``main`` describes the chapter's main file (its claims are ``main_ledger``'s rows, judged with every
    framework file); each of ``machines`` is judged on its own quantities. A claim a dataset cannot decide
    says why in ``evidence``.
    """
    claims = [c for c in CLAIMS if c.key in SCALING_KEYS]
    parts = []
    if main is not None:
        rows = main_ledger[main_ledger["key"].isin(SCALING_KEYS)].copy()
        parts.append(rows.assign(machine=main.machine, kind=main.kind, data=main.dataset))
    for m in machines:
        rows = judge_all("3", show_path(resolve(m.dataset)) if m.dataset not in MACHINE_SOURCES else m.dataset,
                         claims, m.quantities)
        untested = rows["verdict"] == VERDICTS[3]
        rows.loc[untested, "evidence"] = [m.reasons.get(k, e) for k, e in zip(rows.loc[untested, "key"],
                                                                               rows.loc[untested, "evidence"])]
        parts.append(rows.assign(machine=m.machine, kind=m.kind))
    out = pd.concat(parts, ignore_index=True)
    cols = ["machine", "kind"] + [c for c in out.columns if c not in ("machine", "kind")]
    return out[cols]
