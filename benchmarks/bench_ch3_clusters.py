"""Chapter 3's scaling claims on other GPU clusters' traces: the machine ledger on Sia's clusters beside Pollux's.

Run: ``.venv/bin/python benchmarks/bench_ch3_clusters.py --traces build/external/sia`` (a local copy of the Sia
artifact's traces, ``<job>/{placements,scalability}-<cluster>.csv``; see benchmarks/README.md). It writes
``benchmarks/results/ch3_clusters.json`` and ``.md``. A few seconds per cluster.

For each cluster of ``--clusters`` (default :data:`CLUSTERS`) every job folder is read with
:func:`perfkit.data.pollux.load_traces`: ``study="all"`` for the jobs that have both tables, the one table the
job has otherwise (``study="placements"`` or ``"scalability"``); a table that fails the loader's checks is left out
and its error recorded. The rows become one :class:`~perfkit.chapters.ch3.machines.MachineData`
(:func:`~perfkit.chapters.ch3.machines.trace_machine`, the chapter's ``n_train`` of 60 000), and Pollux's shipped
traces are the same chapter's ``"pollux"`` machine dataset; all are judged together by
:func:`~perfkit.chapters.ch3.machines.machine_ledger`. The script computes no quantity and no verdict of its own:
every verdict, estimate, interval and evidence string is the ledger's, copied.

The machine of a Sia cluster is described only by what its traces show (the GPU counts, the number of nodes and
the most GPUs on one node of its placements); the artifact's tables name no GPU model, so none is given. A cluster
with no table in the folder, or whose tables all fail the checks, is reported as such, never dropped silently.

The Sia artifact states no licence: its traces are never committed, only these derived numbers; the copy's
provenance (``<traces>/provenance.json``: repository, commit, path, bytes, sha256 per file) is copied into the
results for the files read.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info, numeric_summary, write_results  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).resolve().parent / "results" / "ch3_clusters"
#: the Sia artifact's clusters (the suffixes of its trace tables)
CLUSTERS = ("azure", "dgx", "dgx-ext", "rtx", "quad")
STUDIES = ("placements", "scalability")
N_TRAIN = 60000  # Chapter 3's default n_train (perfkit.chapters.ch3.params)
POLLUX = "Pollux"


def _shown(path) -> str:
    where = Path(os.path.abspath(path))
    return str(where.relative_to(ROOT)) if where.is_relative_to(ROOT) else str(path)


def _tables(root: Path, cluster: str) -> dict:
    """``{job: (studies present, in STUDIES order)}`` for every job folder holding a table of ``cluster``."""
    out = {}
    for sub in sorted(p for p in root.iterdir() if p.is_dir()):
        have = tuple(s for s in STUDIES if (sub / f"{s}-{cluster}.csv").is_file())
        if have:
            out[sub.name] = have
    return out


def cluster_traces(root, cluster: str):
    """``(frame or None, {job: studies read}, {job: error})`` of one cluster's tables under ``root``.

    Jobs with both tables are read together (``load_traces(root, cluster, jobs, study="all")``), the others with
    the one table they have; a job whose tables fail :func:`~perfkit.data.pollux.load_traces`'s checks is read
    on its own, and if it still fails its error (the loader's message) is returned instead of its rows.
    """
    import pandas as pd

    from perfkit.data.pollux import load_traces

    root = Path(root)
    read, errors, parts = {}, {}, []
    by_study: dict = {}
    for job, have in _tables(root, cluster).items():
        by_study.setdefault("all" if have == STUDIES else have[0], []).append(job)
    for study, jobs in by_study.items():
        try:
            parts.append(load_traces(root, cluster, jobs=jobs, study=study))
            read.update({j: list(STUDIES) if study == "all" else [study] for j in jobs})
        except (ValueError, FileNotFoundError):
            for job in jobs:  # one at a time, so one bad table does not hide the others
                try:
                    parts.append(load_traces(root, cluster, jobs=[job], study=study))
                    read[job] = list(STUDIES) if study == "all" else [study]
                except (ValueError, FileNotFoundError) as exc:
                    errors[job] = str(exc)
    if not parts:
        return None, read, errors
    frame = pd.concat(parts, ignore_index=True).sort_values(["job", "study"], kind="stable").reset_index(drop=True)
    return frame, dict(sorted(read.items())), errors


def describe(frame, cluster: str) -> str:
    """The machine of a Sia cluster in the words its traces allow: GPU counts, nodes and GPUs per node seen."""
    pl = frame[frame["study"] == "placements"]
    gpus = sorted(int(g) for g in frame["n_gpus"].unique())
    per_node = f", at most {int(pl['gpus_per_node_max'].max())} GPUs on one node in its placements" if len(pl) else ""
    return (f"Sia's {cluster} cluster: {gpus[0]}–{gpus[-1]} GPUs on up to {int(frame['n_nodes'].max())} nodes"
            f"{per_node} (GPU model not in the traces)")


def data_checks(frame) -> dict:
    """What the intervals and the LIF claims can rest on: ``lif_values`` (distinct load imbalance factors of the
    placement rows; one value means eq. 3.9's LIF term is collinear with its intercept, so its coefficient and
    correlation carry no information) and ``replicate_rows`` (placement rows with a replicate, the same batch and
    GPUs per node in another node order: :func:`perfkit.chapters.ch3.traces.replicate_deviations`; none means every
    resample equals the measurement and the intervals have zero width)."""
    pl = frame[frame["study"] == "placements"]
    key = pl["job"].astype(str) + ":" + pl["batch_per_gpu"].astype(str) + ":" + [
        "".join(sorted(str(p))) for p in pl["placement"]]
    counts = key.value_counts()
    return {"lif_values": int(pl["load_imbalance"].nunique()),
            "replicate_rows": int(counts[counts > 1].sum())}


def _provenance(root: Path, read: dict, cluster: str):
    prov_path = root / "provenance.json"
    if not prov_path.exists():
        return None
    doc = json.loads(prov_path.read_text())
    files = {f"{j}/{s}-{cluster}.csv" for j, studies in read.items() for s in studies}
    return {k: v for k, v in doc.get("files", {}).items() if k in files}


def check_folder(traces) -> Path:
    """``traces`` as a Path; FileNotFoundError with one line saying what to do when it is not a folder."""
    root = Path(traces)
    if not root.is_dir():
        raise FileNotFoundError(f"--traces {traces}: no such folder (copy the Sia artifact's traces there first: "
                                "see benchmarks/README.md, 'Chapter 3's claims on Sia's clusters')")
    return root


def _num(v):
    return None if v is None or (isinstance(v, float) and not math.isfinite(v)) else float(v)


def run(traces, out, clusters=CLUSTERS, pollux: bool = True, n_train: int = N_TRAIN) -> dict:
    """Judge Chapter 3's scaling claims on each cluster of ``traces`` (and Pollux's); write ``out``.json and .md.

    Returns the results written: ``clusters``, one entry per cluster of ``clusters`` (then Pollux's) with
    ``machine``, ``kind``, ``data``, ``jobs`` (job -> tables read), ``errors`` (job -> the loader's message),
    ``rows``, ``gpu_range`` ([min, max] or None), ``gpu_counts``, ``lacks``, ``status`` ("judged" or why not) and
    ``claims``: every key of :data:`~perfkit.chapters.ch3.machines.SCALING_KEYS` -> the ledger's ``claim``,
    ``verdict``, ``estimate``, ``interval``, ``evidence`` and ``rule`` (for a cluster that could not be read,
    every claim is "cannot be tested here" with the reason). Raises FileNotFoundError (one line) when
    ``traces`` is not a folder.
    """
    from perfkit.chapters.ch3.machines import MACHINE_SOURCES, SCALING_KEYS, machine_ledger, trace_machine
    from perfkit.chapters.ch3.claims import CLAIMS
    from perfkit.report.claims import VERDICTS

    root = check_folder(traces)
    entries, machines = [], []
    for cluster in clusters:
        frame, read, errors = cluster_traces(root, cluster)
        data = f"{_shown(root)}/<job>/{{placements,scalability}}-{cluster}.csv"
        entry = {"cluster": cluster, "data": data, "jobs": read, "errors": errors,
                 "provenance": _provenance(root, read, cluster)}
        if frame is None:
            why = ("no table of this cluster in the folder" if not errors else
                   "every table of this cluster fails the loader's checks: " + "; ".join(errors.values()))
            entry.update(machine=f"Sia's {cluster} cluster", kind="GPU cluster", rows=0, gpu_range=None,
                         gpu_counts=[], lacks=why, status=why)
        else:
            gpus = sorted(int(g) for g in frame["n_gpus"].unique())
            src = f"Sia artifact traces (siasosp23/artifacts), {cluster}, {len(read)} jobs"
            m = trace_machine(frame, str(root.resolve() / f"{cluster}"), describe(frame, cluster), src,
                              n_train=n_train)
            machines.append((cluster, m))
            entry.update(machine=m.machine, kind=m.kind, rows=int(len(frame)), gpu_range=[gpus[0], gpus[-1]],
                         gpu_counts=gpus, lacks=m.lacks, status="judged", **data_checks(frame))
        entries.append(entry)
    if pollux:
        from perfkit.data.pollux import load_pollux

        m = MACHINE_SOURCES["pollux"](SimpleNamespace(n_train=n_train))
        checks = data_checks(load_pollux())
        machines.append((POLLUX, m))
        entries.append({"cluster": POLLUX, "data": "data/external/pollux (shipped, Apache-2.0)",
                        "jobs": {}, "errors": {}, "provenance": None, "machine": m.machine, "kind": m.kind,
                        "rows": None, "gpu_range": [min(m.workers), max(m.workers)], "gpu_counts": m.workers,
                        "lacks": m.lacks, "status": "judged", **checks})
    ledger = machine_ledger(None, None, [m for _, m in machines]) if machines else None
    claims = {c.key: c.claim for c in CLAIMS if c.key in SCALING_KEYS}
    by_machine = {}
    for (name, m) in machines:
        rows = ledger[ledger["machine"] == m.machine]
        assert list(rows["key"]) == list(SCALING_KEYS), f"{name}: the ledger's claims are not SCALING_KEYS"
        by_machine[name] = {r["key"]: {"claim": r["claim"], "verdict": r["verdict"], "estimate": _num(r["estimate"]),
                                       "interval": r["interval"], "evidence": r["evidence"], "rule": r["rule"]}
                            for r in rows.to_dict(orient="records")}
    for e in entries:
        if e["cluster"] in by_machine:
            e["claims"] = by_machine[e["cluster"]]
        else:
            e["claims"] = {k: {"claim": claims[k], "verdict": VERDICTS[3], "estimate": None, "interval": "",
                               "evidence": e["status"], "rule": ""} for k in SCALING_KEYS}
    res = {"machine": machine_info(), "traces": _shown(root), "n_train": n_train, "claims": claims,
           "clusters": entries, "resampling": (next((r for r in ledger["resampling"] if isinstance(r, str) and r), None)
                          if ledger is not None else None)}
    write_results(out, res, markdown(res))
    return res


def _cell(c: dict) -> str:
    est = "" if c["estimate"] is None else f" {c['estimate']:.3g}"
    iv = f" {c['interval']}" if c["interval"] else ""
    return f"{c['verdict']}{est}{iv}"


def markdown(res: dict) -> str:
    """The claim × cluster table of verdicts (estimate, 95 % interval), a summary, then what each cluster lacks."""
    m = res["machine"]
    cl = res["clusters"]
    lines = ["# Chapter 3's scaling claims on Sia's GPU clusters (and Pollux's)", "",
             f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, numpy {m['versions'].get('numpy')}, "
             f"pandas {m['versions'].get('pandas')}; commit {m.get('git_commit')}; {m.get('date')}.", "",
             f"Numeric environment: {numeric_summary(m['numeric'])}.", "",
             f"Data: `{res['traces']}` (the Sia artifact's traces, siasosp23/artifacts; no licence stated, so not "
             "redistributed: only these derived numbers are), read by `perfkit.data.pollux.load_traces`, and "
             "Pollux's shipped traces (`data/external/pollux`). Each cluster is one "
             "`perfkit.chapters.ch3.machines.trace_machine` dataset (n_train "
             f"{res['n_train']}), judged by `machine_ledger`; verdicts, estimates and 95 % intervals are the "
             f"ledger's. Intervals: {res['resampling']}.", "",
             "| cluster | machine (from the traces) | jobs (tables read) | rows | GPUs | placement LIF values | replicate "
             "rows |", "|---|---|---|---|---|---|---|"]
    for e in cl:
        jobs = ", ".join(f"{j} ({'+'.join(s[:1] for s in st)})" for j, st in e["jobs"].items()) or "—"
        g = "—" if e["gpu_range"] is None else f"{e['gpu_range'][0]}–{e['gpu_range'][1]}"
        lines.append(f"| {e['cluster']} | {e['machine']} | {jobs} | {e['rows'] if e['rows'] is not None else '—'} "
                     f"| {g} | {e.get('lif_values', '—')} | {e.get('replicate_rows', '—')} |")
    lines += ["", "Tables: p = placements, s = scalability. Placement LIF values: distinct load imbalance factors of the "
              "placement rows (one value: eq. 3.9's LIF term is the intercept again, so `lif_coefficient`, "
              "`lif_regression` and `lif_vs_speedup` say nothing about load imbalance there, whatever the verdict). "
              "Replicate rows: placement runs repeated in another node order, which the intervals resample (none: "
              "the intervals have zero width and measure no run-to-run noise).", "", "## Verdicts (estimate, 95 % interval)", "",
              "| claim | " + " | ".join(e["cluster"] for e in cl) + " |", "|---|" + "---|" * len(cl)]
    for key, text in res["claims"].items():
        lines.append(f"| `{key}`: {text} | " + " | ".join(_cell(e["claims"][key]) for e in cl) + " |")
    lines += ["", "## Which claims hold where", ""]
    for key in res["claims"]:
        parts = []
        for v in ("holds", "does not hold", "inconclusive"):
            where = [e["cluster"] for e in cl if e["claims"][key]["verdict"] == v]
            if where:
                parts.append(f"{v} on {', '.join(where)}")
        untested = [e["cluster"] for e in cl if e["claims"][key]["verdict"] == "cannot be tested here"]
        if untested:
            parts.append(f"cannot be tested on {', '.join(untested)}")
        lines.append(f"- `{key}`: " + "; ".join(parts) + ".")
    lines += ["", "## What each cluster lacks", ""]
    for e in cl:
        why = {}
        for key, c in e["claims"].items():
            if c["verdict"] == "cannot be tested here":
                why.setdefault(c["evidence"], []).append(key)
        lines.append(f"- **{e['cluster']}**: {e['lacks'] or '—'}.")
        lines += [f"  - cannot be tested ({', '.join(f'`{k}`' for k in keys)}): {reason}"
                  for reason, keys in why.items()]
        lines += [f"  - left out: {job}: {err}" for job, err in e["errors"].items()]
    prov = [(e["cluster"], k, v) for e in cl for k, v in sorted((e.get("provenance") or {}).items())]
    if prov:
        lines += ["", "## Provenance of the Sia files read (copied verbatim, not redistributed)", ""]
        lines += [f"- `{k}`: {v.get('repo')}@{str(v.get('commit'))[:12]} `{v.get('path')}` ({v.get('bytes')} "
                  f"bytes, sha256 {str(v.get('sha256'))[:16]}…)" for _, k, v in prov]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", required=True, help="folder of the Sia traces (<job>/<table>-CLUSTER.csv), e.g. "
                    "build/external/sia")
    ap.add_argument("--clusters", nargs="+", default=list(CLUSTERS), help="the tables' suffixes to read")
    ap.add_argument("--out", default=str(OUT), help="results path without suffix (default: results/ch3_clusters)")
    ap.add_argument("--no-pollux", action="store_true", help="leave Pollux's shipped traces out")
    args = ap.parse_args(argv)
    try:
        check_folder(args.traces)
    except FileNotFoundError as exc:
        sys.exit(f"bench_ch3_clusters: {exc}")
    res = run(args.traces, args.out, args.clusters, pollux=not args.no_pollux)
    print(markdown(res))


if __name__ == "__main__":
    main()
