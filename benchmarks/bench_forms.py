"""Benchmarks of the form search (``search_forms(..., forms="auto")``): fit time against rows.

Run: ``.venv/bin/python benchmarks/bench_forms.py [--quick] [--only search single] [--sizes ...]``.
Writes ``benchmarks/results/forms.json`` and ``.md`` with machine info.

Sections:
- search: wall time of ``search_forms(X, y, **ROLES["ch4"], forms="auto", network="lenet5", n_jobs=-1)``
  (10 candidates × 5 folds, then the chosen form refitted inside a CV+ ``ConformalRegressor``) on the
  Chapter 4 measured file ``data/measured/pytorch-cpu/ch4_lenet5.csv`` at 1 000, 1 500, 10 000 and
  100 000 rows; per size the seconds per candidate (``table.fit_seconds`` × folds), the chosen form,
  the CV MAPE of the chosen and of the best candidate, and peak memory. Target (issue): 1 500 rows in
  under 30 s on 2 cores.
- single: one fit of every candidate, serially, on one fold's training rows (4/5 of the rows), each in
  its own process with a time limit: which candidate is the bottleneck at a size where the whole
  search takes too long (``--single-sizes``, default 100 000).

Rows: 1 000 are the thesis's fit split (``thesis_split``, seed 0) and 1 500 the whole file. Above 1 500
the rows are **resampled measurements, not new measurements**: rows drawn with replacement (seeded),
each time multiplied by an independent log-normal factor exp(N(0, σ²)), σ = 0.03 (about the
measured noise: the median standard deviation of log step time over a row's three runs is 0.035).

Each measurement runs in a fresh process (its joblib workers start inside the timed call, as in a
user's first search) under a time limit (``--limit``). The machine may be shared, so every
measurement records the load average (1, 5, 15 min) at its start and end, and the CPU the other
processes used while it ran (system busy CPU less this process tree's, in cores); the CPU seconds of
this process and its workers are recorded too (they do not depend on the load as wall time does).
Peak memory: the largest sum of RSS over the process and its workers (sampled every 0.2 s) and
the parent's ``ru_maxrss``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info, numeric_summary, write_results  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).resolve().parent / "results"
DATA = ROOT / "data" / "measured" / "pytorch-cpu" / "ch4_lenet5.csv"
SIZES = [1000, 1500, 10000, 100000]
SIGMA = 0.03  # log-normal noise of the resampled rows
SEED = 0
CV = 5
NETWORK = "lenet5"
TARGET_ROWS, TARGET_SECONDS = 1500, 30.0
#: the target of ``perfkit fit --form auto`` with its black-box reference (the search, then the tuned references)
TARGET_SECONDS_REFERENCE = 60.0


# ------------------------------------------------------------------------------ data
def dataset(n: int, seed: int = SEED):
    """(X, y, how): ``n`` rows of the Chapter 4 file; above its size, resampled rows with log-normal noise."""
    import pandas as pd

    from perfkit.data.measured import load_steps, thesis_split

    X, y, _ = load_steps(DATA, roles="ch4")
    y = y.to_numpy(dtype=float)
    m = len(X)
    if n == m:
        return X, y, f"the measured file ({m} rows)"
    if n < m:
        Xf, _, yf, _ = thesis_split(X, pd.Series(y), n_fit=n, n_test=m - n, seed=seed)
        return Xf.reset_index(drop=True), yf.to_numpy(dtype=float), f"thesis_split fit rows ({n} of {m}, seed {seed})"
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, m, size=n)
    noise = np.exp(rng.normal(0.0, SIGMA, size=n))
    return (X.iloc[idx].reset_index(drop=True), y[idx] * noise,
            f"resampled measurements, not new measurements: {n} rows drawn with replacement from the {m} "
            f"(seed {seed}), each time × exp(N(0, {SIGMA}²))")


def measured_noise() -> dict:
    """Noise of the measured file: the standard deviation of log step time over each row's three runs."""
    import pandas as pd

    df = pd.read_csv(DATA)
    df = df[df["status"] == "ok"]
    runs = np.log(df[["step_run1", "step_run2", "step_run3"]].to_numpy(dtype=float))
    sd = runs.std(axis=1, ddof=1)
    return {"median_sd_log_runs": float(np.median(sd)), "rms_sd_log_runs": float(np.sqrt(np.mean(sd ** 2))),
            "sigma_used": SIGMA}


# ------------------------------------------------------------------------------ monitoring
def _busy(ct) -> float:
    return ct.user + ct.nice + ct.system + getattr(ct, "irq", 0) + getattr(ct, "softirq", 0) + getattr(ct, "steal", 0)


class Monitor:
    """Load average, CPU of this process tree and of the rest of the machine, peak RSS of the tree."""

    def __init__(self, interval: float = 0.2):
        import psutil

        self.psutil, self.interval = psutil, interval
        self.me = psutil.Process()
        self.peak_rss, self.cpu = 0, {}
        self._stop = threading.Event()

    def _sample(self):
        procs = [self.me]
        try:
            procs += self.me.children(recursive=True)
        except self.psutil.Error:
            pass
        rss = 0
        for p in procs:
            try:
                with p.oneshot():
                    rss += p.memory_info().rss
                    ct = p.cpu_times()
                    self.cpu[p.pid] = ct.user + ct.system
            except self.psutil.Error:
                pass
        self.peak_rss = max(self.peak_rss, rss)

    def _loop(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self):
        ct = self.me.cpu_times()
        self.cpu0 = ct.user + ct.system
        self.load0 = os.getloadavg()
        self.sys0 = _busy(self.psutil.cpu_times())
        self.t0 = time.perf_counter()
        self._sample()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self._sample()  # the workers are still alive (joblib keeps them): their CPU is complete
        self._stop.set()
        self.thread.join()
        self.load1 = os.getloadavg()
        sys1 = _busy(self.psutil.cpu_times())
        self.tree_cpu = sum(self.cpu.values()) - self.cpu0
        self.other_cores = max(0.0, (sys1 - self.sys0) - self.tree_cpu) / max(self.wall, 1e-9)

    def record(self) -> dict:
        return {"wall_s": self.wall, "cpu_s": self.tree_cpu, "processes": len(self.cpu),
                "other_cpu_cores": self.other_cores,
                "loadavg_start": [round(v, 2) for v in self.load0], "loadavg_end": [round(v, 2) for v in self.load1],
                "peak_rss_tree_mib": self.peak_rss / 2 ** 20,
                "maxrss_parent_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


# ------------------------------------------------------------------------------ children (one measurement each)
def child_search(n: int, forms, reference: bool = True) -> dict:
    import warnings

    from perfkit.model.selection.search import search_forms
    from perfkit.schema import ROLES

    X, y, how = dataset(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Monitor() as mon:
            s = search_forms(X, y, **ROLES["ch4"], forms=forms, network=NETWORK, cv=CV, random_state=SEED, n_jobs=-1,
                             reference=reference)
    t = s.table
    best = int(t["cv_mape"].idxmin())
    cands = [dict(form=r.form, terms=r.terms, n_params=float(r.n_params), cv_mape=float(r.cv_mape),
                  cv_mape_se=float(r.cv_mape_se), fit_seconds_per_fold=float(r.fit_seconds),
                  fit_seconds=float(r.fit_seconds) * CV, chosen=bool(r.chosen), within_1se=bool(r.within_1se))
             for r in t.itertuples()]
    fit_sum = sum(c["fit_seconds"] for c in cands)
    by_form = {}
    for c in cands:
        by_form[c["form"]] = by_form.get(c["form"], 0.0) + c["fit_seconds"]
    ref = s.reference
    reference_row = None if ref is None else dict(label=ref.label, cv_mape=ref.cv_mape, cv_mape_se=ref.cv_mape_se,
                                                  seconds=ref.fit_time, gap=list(s.reference_gap()))
    return dict(mon.record(), rows=n, data=how, forms=forms, reference=reference_row, search_fit_time_s=s.fit_time,
                refit_s=float(s.model_.fit_time_), candidates=cands, cv_fit_seconds_sum=fit_sum,
                cv_fit_seconds_by_form=by_form,
                chosen=dict(form=t.loc[s.chosen, "form"], terms=t.loc[s.chosen, "terms"],
                            n_params=float(t.loc[s.chosen, "n_params"]), cv_mape=float(t.loc[s.chosen, "cv_mape"]),
                            cv_mape_se=float(t.loc[s.chosen, "cv_mape_se"])),
                best=dict(form=t.loc[best, "form"], terms=t.loc[best, "terms"], cv_mape=float(t.loc[best, "cv_mape"]),
                          cv_mape_se=float(t.loc[best, "cv_mape_se"])))


def child_single(n: int, index: int) -> dict:
    """One fit of candidate ``index`` on fold 0's training rows (serial), and its held-out MAPE."""
    import warnings

    from sklearn.base import clone
    from sklearn.model_selection import KFold

    from perfkit.model.selection.metrics import mape
    from perfkit.model.selection.search import form_candidates
    from perfkit.model.uncertainty.conformal import seen_rows
    from perfkit.schema import ROLES

    X, y, how = dataset(n)
    cand = form_candidates("auto", **ROLES["ch4"], network=NETWORK, random_state=SEED)[index]
    tr, te = next(iter(KFold(CV, shuffle=True, random_state=SEED).split(X)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Monitor() as mon:
            model = clone(cand.estimator).fit(X.iloc[tr], y[tr])
        ok = seen_rows(X.iloc[tr], X.iloc[te], ROLES["ch4"]["categorical"])
        err = mape(y[te][ok], np.asarray(model.predict(X.iloc[te][ok]), dtype=float))
    return dict(mon.record(), rows=n, train_rows=len(tr), index=index, form=cand.form, terms=cand.terms,
                fold0_mape=float(err), data=how)


def run_child(args: list[str], limit: float) -> dict:
    """Run ``bench_forms.py --child ...`` in its own process group; kill that group after ``limit`` seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", *args, "--child-out", str(out)]
        load0, t0 = os.getloadavg(), time.perf_counter()
        proc = subprocess.Popen(cmd, start_new_session=True)
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the child and its joblib workers (its own process group)
            proc.wait()
            return {"timed_out": True, "limit_s": limit, "elapsed_s": time.perf_counter() - t0,
                    "loadavg_start": [round(v, 2) for v in load0],
                    "loadavg_end": [round(v, 2) for v in os.getloadavg()]}
        if proc.returncode != 0 or not out.exists():
            return {"failed": True, "returncode": proc.returncode, "elapsed_s": time.perf_counter() - t0}
        return dict(json.loads(out.read_text()), timed_out=False)


# ------------------------------------------------------------------------------ sections
def bench_search(sizes, forms, limit, reference=True) -> dict:
    out = {}
    for n in sizes:
        print(f"  search {n:7d} rows, forms {forms}{' + reference' if reference else ''} (limit {limit:.0f} s) ...",
              flush=True)
        r = run_child(["search", str(n), "ref" if reference else "noref", *forms], limit)
        if r.get("timed_out"):
            print(f"    not finished in {limit:.0f} s", flush=True)
        elif r.get("failed"):
            print(f"    failed (exit {r['returncode']})", flush=True)
        else:
            print(f"    {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU, chosen {r['chosen']['form']} "
                  f"({r['chosen']['terms']}) {r['chosen']['cv_mape']:.2f} %, best {r['best']['cv_mape']:.2f} %, "
                  f"load {r['loadavg_start'][0]} -> {r['loadavg_end'][0]}, other CPU {r['other_cpu_cores']:.2f} cores",
                  flush=True)
        out[str(n)] = dict(r, rows=n, forms=forms, machine=machine_info())
    return out


def bench_single(sizes, limit, which=None, old=None) -> dict:
    """One fit per candidate; ``which`` (indices) refits only those and keeps the other rows of ``old``."""
    from perfkit.model.selection.search import form_candidates
    from perfkit.schema import ROLES

    cands = form_candidates("auto", **ROLES["ch4"], network=NETWORK, random_state=SEED)
    out = {}
    for n in sizes:
        kept = {r["index"]: r for r in (old or {}).get(str(n), {}).get("rows", []) if r["index"] < len(cands)}
        for i, c in enumerate(cands):
            if which is not None and i not in which:
                continue
            r = run_child(["single", str(n), str(i)], limit)
            # the child's own form and terms where it ran; the parent's where it was stopped
            r = {"form": c.form, "terms": c.terms, **r, "index": i, "limit_s": limit, "machine": machine_info()}
            kept[i] = r
            took = f"> {limit:.0f} s (killed)" if r.get("timed_out") else f"{r.get('wall_s', float('nan')):.1f} s"
            print(f"  single {n:7d} rows, {r['form']:9s} {r['terms'][:55]:55s} {took}", flush=True)
        out[str(n)] = dict(rows=[kept[i] for i in sorted(kept)])
    return out


# ------------------------------------------------------------------------------ markdown
def _load(r) -> str:
    return f"{r['loadavg_start'][0]:.2f} → {r['loadavg_end'][0]:.2f}"


def _markdown(res: dict) -> str:
    m = res["machine"]
    v = m["versions"]
    lines = ["# Form search benchmarks", "",
             f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}, Python {m['python']}, "
             + ", ".join(f"{k} {v[k]}" for k in ("numpy", "scipy", "pandas", "sklearn", "joblib") if k in v)
             + f"; commit {m['git_commit']}; {m['date']}.", ""]
    if "numeric" in m:
        lines += [f"Numeric environment: {numeric_summary(m['numeric'])}.", ""]
    noise = res.get("noise", {})
    lines += ["Command: `.venv/bin/python benchmarks/bench_forms.py` (sections and sizes as recorded per row in "
              "`forms.json`). Call: `search_forms(X, y, **ROLES[\"ch4\"], forms=\"auto\", network=\"lenet5\", cv=5, "
              "n_jobs=-1)`, each in a fresh process (joblib's workers start inside the timed call). Data: "
              "`data/measured/pytorch-cpu/ch4_lenet5.csv` (1 500 measured rows; 1 000 rows = the thesis fit split). "
              f"**The 10 000 and 100 000 rows are resampled measurements, not new measurements**: rows drawn with "
              f"replacement (seed {SEED}), each time × exp(N(0, σ²)), σ = {SIGMA} (the file's median standard "
              f"deviation of log step time over a row's three runs is {noise.get('median_sd_log_runs', float('nan')):.3f}).",
              "",
              "The machine was shared with another engineer's notebooks: *load* is the 1-minute load average at the "
              "start → end of each measurement, *other CPU* the cores other processes kept busy during it (system busy "
              "CPU less this benchmark's). *CPU s* is the CPU time of the search's process and its workers, which the "
              "load does not inflate as it does wall time.", ""]
    if "search" in res:
        lines += ["## Search time against rows", "",
                  "| rows | forms | wall s | CPU s | CV fits s (Σ candidates) | refit s | chosen (CV MAPE %) | "
                  "best (CV MAPE %) | peak RSS MiB (tree / parent) | load | other CPU | target |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        runs = [(n, e, True) for n in res["search"] for e in res["search"][n].get("earlier", [])]
        runs += [(n, res["search"][n], False) for n in res["search"]]
        for n, r, earlier in sorted(runs, key=lambda t: (int(t[0]), not t[2])):
            forms = r["forms"] if isinstance(r["forms"], str) else " ".join(r["forms"])
            forms += " + reference" if r.get("reference") else ""
            target = "(earlier run) " if earlier else ""
            limit = TARGET_SECONDS_REFERENCE if r.get("reference") else TARGET_SECONDS
            if int(n) == TARGET_ROWS:
                target += f"< {limit:g} s: " + ("—" if "wall_s" not in r else ("**met**" if r["wall_s"] < limit
                                                                             else "**not met**"))
            if r.get("timed_out"):
                lines.append(f"| {int(n):,} | {forms} | > {r['limit_s']:.0f} (stopped) | | | | | | | {_load(r)} | | "
                             f"{target} |")
                continue
            if r.get("failed"):
                lines.append(f"| {int(n):,} | {forms} | failed | | | | | | | | | {target} |")
                continue
            c, b = r["chosen"], r["best"]
            lines.append(f"| {int(n):,} | {forms} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['cv_fit_seconds_sum']:.1f} | "
                         f"{r['refit_s']:.1f} | {c['form']}: {c['terms']} ({c['cv_mape']:.2f} ± {c['cv_mape_se']:.2f}) | "
                         f"{b['form']}: {b['terms']} ({b['cv_mape']:.2f} ± {b['cv_mape_se']:.2f}) | "
                         f"{r['peak_rss_tree_mib']:.0f} / {r['maxrss_parent_mib']:.0f} | {_load(r)} | "
                         f"{r['other_cpu_cores']:.2f} | {target} |")
        lines += ["", "*CV fits s* is Σ over candidates of `table.fit_seconds` × 5 folds (each fit timed inside its "
                  "joblib worker, two at a time on 2 cores); *refit s* the chosen form's interval "
                  "calibration (`model_.fit_time_`: one fit on every row and the scores of the search's own fold "
                  "models; CV+ in runs before 2026-11-24 evening, studentised scores since). The rest of the wall "
                  "time is worker start-up, data transfer and scoring. The last 1,500-row run (20.3 s) was slower "
                  "than the one before it (9.9 s) in every candidate, the log-linear fits too (0.63 against 0.35 s "
                  "a fold), on a machine that had just finished other work: not from the studentised scores, "
                  "whose leverage adds one eigendecomposition of the chosen form's 85 terms.", ""]
        for n in sorted(res["search"], key=int):
            r = res["search"][n]
            if "candidates" not in r:
                continue
            lines += [f"### Candidates at {int(n):,} rows", "",
                      "| form | terms | params | CV MAPE % | fit s per fold | fit s × 5 folds | share of CV fits | |",
                      "|---|---|---|---|---|---|---|---|"]
            for c in sorted(r["candidates"], key=lambda c: -c["fit_seconds"]):
                mark = "chosen" if c["chosen"] else ("within 1 se" if c["within_1se"] else "")
                lines.append(f"| {c['form']} | {c['terms']} | {c['n_params']:.1f} | {c['cv_mape']:.2f} ± "
                             f"{c['cv_mape_se']:.2f} | {c['fit_seconds_per_fold']:.2f} | {c['fit_seconds']:.1f} | "
                             f"{100 * c['fit_seconds'] / r['cv_fit_seconds_sum']:.0f} % | {mark} |")
            lines.append("")
    if "single" in res:
        lines += ["## One fit per candidate (bottleneck)", "",
                  "Each candidate fitted once, serially, on fold 0's training rows (4/5 of the rows), in its own "
                  "process with a time limit; a search makes 5 such fits per candidate (two at a time on 2 cores), "
                  "plus 6 of the chosen one.", "",
                  "| rows | form | terms | fit s | CPU s | fold-0 MAPE % | peak RSS MiB | load | other CPU |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for n in sorted(res["single"], key=int):
            s = res["single"][n]
            for r in s["rows"]:
                if r.get("timed_out"):
                    lines.append(f"| {int(n):,} | {r['form']} | {r['terms']} | > {r['limit_s']:.0f} (stopped) | | | | "
                                 f"{_load(r)} | |")
                elif r.get("failed"):
                    lines.append(f"| {int(n):,} | {r['form']} | {r['terms']} | failed | | | | | |")
                else:
                    lines.append(f"| {int(n):,} | {r['form']} | {r['terms']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
                                 f"{r['fold0_mape']:.2f} | {r['peak_rss_tree_mib']:.0f} | {_load(r)} | "
                                 f"{r['other_cpu_cores']:.2f} |")
        lines.append("")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 000 and 1 500 rows only (a smoke run)")
    ap.add_argument("--only", nargs="*", choices=["search", "single"], default=None)
    ap.add_argument("--sizes", nargs="*", type=int, default=None, help=f"rows of the search (default {SIZES})")
    ap.add_argument("--forms", nargs="*", default=["auto"], help="forms of the search (default auto)")
    ap.add_argument("--no-reference", action="store_true",
                    help="search without the black-box reference (perfkit fit --form auto tunes it by default)")
    ap.add_argument("--single-sizes", nargs="*", type=int, default=[100000])
    ap.add_argument("--candidates", nargs="*", type=int, default=None,
                    help="single: only these candidate indices (the others' earlier rows are kept)")
    ap.add_argument("--limit", type=float, default=600.0, help="seconds per measurement before it is stopped")
    ap.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    ap.add_argument("--child-out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        kind, rest = args.child[0], args.child[1:]
        if kind == "search":
            forms = rest[2:] if rest[2:] != ["auto"] else "auto"
            r = child_search(int(rest[0]), forms, reference=rest[1] == "ref")
        else:
            r = child_single(int(rest[0]), int(rest[1]))
        Path(args.child_out).write_text(json.dumps(r, default=float))
        return
    only = args.only or ["search", "single"]
    sizes = args.sizes or ([1000, 1500] if args.quick else SIZES)
    path = OUT / ("forms_quick.json" if args.quick else "forms.json")
    res = json.loads(path.read_text()) if path.exists() else {}
    res["machine"] = machine_info()
    res["noise"] = measured_noise()
    if "search" in only:
        # a partial run updates its sizes and keeps the others (each size records its own machine info)
        new = bench_search(sizes, args.forms, args.limit, reference=not args.no_reference)
        # a re-measured size keeps its earlier results under "earlier" (the load differs from run to run)
        for n, r in new.items():
            prev = res.get("search", {}).get(n)
            if prev is not None:
                r["earlier"] = prev.pop("earlier", []) + [prev]
        res["search"] = {**res.get("search", {}), **new}
    if "single" in only:
        res["single"] = {**res.get("single", {}),
                         **bench_single(args.single_sizes, args.limit, args.candidates, res.get("single"))}
    write_results(path, res, _markdown(res))


if __name__ == "__main__":
    main()
