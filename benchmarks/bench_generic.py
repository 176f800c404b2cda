"""Benchmarks of the generic-model fitter (issue: fast, stable DE fits).

Run: ``.venv/bin/python benchmarks/bench_generic.py [--quick]``. Writes
``benchmarks/results/generic_model.json`` and ``.md`` with machine info.

Sections (each measured side by side in this one run):
- speed: varpro engine vs the thesis method (scipy DE defaults, scalar cost), interleaved
  seed by seed, on a measured Chapter 4 fit (PyTorch, Table 4.3's L2 fit) and on 1000
  synthetic rows shaped like Table 4.1 (6 numeric, 4 categorical with 10 levels, 2
  extrinsic = 25 parameters); median wall time and objective over seeds.
- recovery: data from Table 4.3's MXNet values with 5 % noise; |q - q*|, |p - p*|,
  held-out MAPE vs the noise level.
- stability: std of p and q over 10 seeds without regularisation.
- scale: fit time vs number of rows (1k .. 100k).
- cli: ``perfkit fit`` with its default settings (ten seeds) on 100 000 rows, the whole command.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info  # noqa: E402

from perfkit import mape  # noqa: E402
from perfkit.model.forms.generic import GenericPerformanceModel  # noqa: E402
from perfkit.data.synthetic import CATEGORICAL, EXTRINSIC, NUMERIC, sample_table41, simulate, truth_from_table  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"
NOISE = 0.05


def model(**kw):
    return GenericPerformanceModel(NUMERIC, CATEGORICAL, EXTRINSIC, **{"scale": None, **kw})  # the thesis's units


def data(n, seed=1, noise=NOISE):
    truth = truth_from_table("MXNet", "4.3")
    X = sample_table41(n, seed)
    return X, simulate(X, truth, noise=noise, random_state=seed + 1), truth


def timed_fit(m, X, y):
    t = time.perf_counter()
    m.fit(X, y)
    return time.perf_counter() - t


def measured_case():
    """Chapter 4's Table 4.3 fit: PyTorch's measured file, the thesis split (1000 / 500, seed 0), L2 λ = 1e-3."""
    from perfkit.chapters.ch4 import make_model
    from perfkit.data.measured import load_steps, thesis_split
    from perfkit.schema import repo_root

    X, y, _ = load_steps(repo_root() / "data/measured/pytorch-cpu/ch4_lenet5.csv", target="epoch_time", roles="ch4")
    X_fit, _, y_fit, _ = thesis_split(X, y, n_fit=1000, n_test=500, seed=0)
    return (lambda **kw: make_model("ch4", penalty="l2", lam=1e-3, **kw)), X_fit, y_fit


def synthetic_case():
    """1000 synthetic Table 4.1 rows (Table 4.3's MXNet values, 5 % noise), no penalty, the thesis coding."""
    X, y, _ = data(1000)
    return model, X, y


#: the speed section's cases: name → (description, builder of (model factory, X, y))
SPEED_CASES = {
    "measured": ("Chapter 4, PyTorch, Table 4.3's L2 fit (λ = 1e-3), 1000 measured rows, 25 parameters",
                 measured_case),
    "synthetic": ("synthetic Table 4.1 rows (MXNet truth, 5 % noise), no penalty, 1000 rows, 25 parameters",
                  synthetic_case),
}


def bench_speed(seeds):
    """Both engines side by side on each case, interleaved seed by seed in this one process; one BLAS thread.

    The varpro engine's compiled kernels are loaded (or compiled into numba's cache) by one untimed fit first:
    that cost is paid once per installation, and is reported as ``first_fit_seconds``.
    """
    out = {}
    for case, (what, build) in SPEED_CASES.items():
        make, X, y = build()
        warm = make(method="varpro", random_state=0)
        first = timed_fit(warm, X, y)
        rows = []
        for s in seeds:
            for method in ("varpro", "thesis"):
                m = make(method=method, random_state=s)
                dt = timed_fit(m, X, y)
                rows.append(dict(method=method, seed=s, seconds=dt, objective=m.objective_, n_iter=m.n_iter_))
                print(f"  speed {case} {method:7s} seed {s}: {dt:7.2f} s  objective {m.objective_:.6f}  "
                      f"({m.n_iter_} gen.)", flush=True)
        med = {meth: dict(seconds=float(np.median([r["seconds"] for r in rows if r["method"] == meth])),
                          objective=float(np.median([r["objective"] for r in rows if r["method"] == meth])))
               for meth in ("varpro", "thesis")}
        per_seed = [[r for r in rows if r["seed"] == s] for s in seeds]
        ratios = [next(r["seconds"] for r in g if r["method"] == "thesis")
                  / next(r["seconds"] for r in g if r["method"] == "varpro") for g in per_seed]
        vp = [r["objective"] for r in rows if r["method"] == "varpro"]
        out[case] = dict(what=what, rows=rows, median=med, first_fit_seconds=first,
                         speedup=med["thesis"]["seconds"] / med["varpro"]["seconds"],
                         speedup_per_seed=dict(min=min(ratios), median=float(np.median(ratios)), max=max(ratios)),
                         objective_ratio=med["varpro"]["objective"] / med["thesis"]["objective"],
                         varpro_at_or_below_thesis_every_seed=all(
                             next(r["objective"] for r in g if r["method"] == "varpro")
                             <= next(r["objective"] for r in g if r["method"] == "thesis") for g in per_seed),
                         varpro_objective_spread=(max(vp) - min(vp)) / min(vp),
                         targets=dict(speedup=">= 50 (goal 100)", objective_ratio="<= 1"))
    return out


def bench_cli(n_rows=100_000):
    """``perfkit fit`` with its default settings (ten seeds, every core) on ``n_rows`` synthetic rows: wall time
    of the whole command, as a user runs it."""
    import subprocess
    import tempfile

    X, y, _ = data(n_rows, seed=3)
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "rows.csv"
        X.assign(time=y).to_csv(csv, index=False)
        cmd = [str(Path(sys.executable).parent / "perfkit"), "fit", str(csv), "--target", "time",
               "--numeric", ",".join(NUMERIC), "--categorical", ",".join(CATEGORICAL),
               "--extrinsic", ",".join(EXTRINSIC), "--out", str(Path(tmp) / "out")]
        t = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        dt = time.perf_counter() - t
    if done.returncode != 0:
        raise RuntimeError(f"perfkit fit failed: {done.stderr[-2000:]}")
    best = next((ln for ln in done.stdout.splitlines() if ln.startswith("best objective")), "")
    print(f"  cli {n_rows} rows: {dt:.1f} s; {best}", flush=True)
    return dict(rows=n_rows, seconds=dt, command=" ".join(["perfkit"] + cmd[1:2] + ["rows.csv"] + cmd[3:-2]),
                best_line=best, targets=dict(seconds="<= 60"))


def bench_recovery():
    X, y, truth = data(1500)
    m = model(random_state=0)
    timed_fit(m, X[:1000], y[:1000])
    got = dict(zip(m.power_names_, m.powers_))
    err_q = {c: got[f"q[{c}]"] - truth["q"][c] for c in EXTRINSIC}
    err_p = {c: got[f"p[{c}]"] - truth["p"][c] for c in NUMERIC}
    test_mape = mape(y[1000:], m.predict(X[1000:]))
    # the MAPE of the true model on the same held-out rows: the floor set by the noise
    X2, y2 = X[1000:], y[1000:]
    floor = mape(y2, simulate(X2, truth, noise=0.0))
    return dict(q_error=err_q, p_error=err_p, max_abs_q_error=max(map(abs, err_q.values())),
                max_abs_p_error=max(map(abs, err_p.values())), test_mape=test_mape, noise_percent=100 * NOISE,
                true_model_test_mape=floor, mape_over_noise=test_mape / (100 * NOISE),
                targets=dict(q="|err| <= 0.02", p="|err| <= 0.1", mape="<= 1.2 x noise"))


def bench_stability(n_seeds):
    """Std of the powers over seeds, without regularisation, in both codings.

    The targets (q ≤ 0.01, p ≤ 0.05) apply to the identifiable coding (``coding="reference"``); the
    thesis's coding is reported beside it, since its constants are only determined up to shifts.
    """
    X, y, _ = data(1000)
    out = {}
    for coding in ("reference", "thesis"):
        P, objs = [], []
        for s in range(n_seeds):
            m = model(random_state=s, coding=coding)
            timed_fit(m, X, y)
            P.append(m.powers_)
            objs.append(m.objective_)
            print(f"  stability {coding} seed {s}: objective {m.objective_:.7f} converged {m.converged_}", flush=True)
        P = np.array(P)
        std = dict(zip(m.power_names_, P.std(axis=0, ddof=1)))
        out[coding] = dict(std=std, max_std_p=max(v for k, v in std.items() if k.startswith("p[")),
                           max_std_q=max(v for k, v in std.items() if k.startswith("q[")),
                           objective_min=min(objs), objective_spread=(max(objs) - min(objs)) / min(objs))
    return dict(out["reference"], thesis_coding=out["thesis"], coding="reference",
                targets=dict(q="std <= 0.01", p="std <= 0.05"))


def bench_scale(sizes):
    rows = []
    for n in sizes:
        X, y, _ = data(n, seed=3)
        m = model(random_state=0)
        dt = timed_fit(m, X, y)
        rows.append(dict(rows=n, seconds=dt, n_iter=m.n_iter_, seconds_per_generation=dt / max(m.n_iter_, 1)))
        print(f"  scale {n:7d} rows: {dt:7.2f} s ({m.n_iter_} gen.)", flush=True)
    return dict(rows=rows, targets=dict(rows_100k="<= 60 s, about linear"))


def _machine_line(m: dict) -> str:
    v = m.get("versions", {})
    return (f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores, {m.get('memory_gib', '?')} GiB, {m.get('os', '?')}, "
            f"Python {m.get('python', '?')}, numpy {v.get('numpy', '?')}, scipy {v.get('scipy', '?')}; "
            f"commit {m.get('git_commit', '?')}; {m.get('date', '?')}")


def markdown(res: dict) -> str:
    """The results table, regenerated from ``res`` (each section with the machine it ran on)."""
    out = ["# Generic-model fitter benchmarks", "",
           "Written by `benchmarks/bench_generic.py` from `generic_model.json` (raw numbers, every fit). Timings: one "
           "BLAS thread per fit, the two engines interleaved seed by seed in one process; the varpro engine's compiled "
           "kernels loaded by one untimed fit first (`first_fit_seconds`).", "",
           "| benchmark | measured | target | met? |", "|---|---|---|---|"]
    for case, r in res.get("speed", {}).items():
        if not isinstance(r, dict) or "median" not in r:
            continue
        med = r["median"]
        out.append(f"| speed, {r['what']}: median wall time per fit over {len(r['rows']) // 2} seeds | varpro "
                   f"{med['varpro']['seconds']:.2f} s vs thesis method {med['thesis']['seconds']:.1f} s → "
                   f"**{r['speedup']:.0f}×** (per seed {r['speedup_per_seed']['min']:.0f}–"
                   f"{r['speedup_per_seed']['max']:.0f}×) | ≥ 50× (goal 100×) | "
                   f"{'yes' if r['speedup'] >= 50 else 'no'} |")
        out.append(f"| speed, same: objective | varpro median {med['varpro']['objective']:.6g} (spread over seeds "
                   f"{r['varpro_objective_spread']:.1e}) vs thesis method {med['thesis']['objective']:.6g}; varpro at or "
                   f"below the thesis method on every seed: {r['varpro_at_or_below_thesis_every_seed']} | ≤ thesis | "
                   f"{'yes' if r['objective_ratio'] <= 1 else 'no'} |")
    if "recovery" in res:
        r = res["recovery"]
        out += [f"| recovery: max abs error of q | {r['max_abs_q_error']:.3g} | ≤ 0.02 | "
                f"{'yes' if r['max_abs_q_error'] <= 0.02 else 'no'} |",
                f"| recovery: max abs error of p | {r['max_abs_p_error']:.3g} | ≤ 0.1 | "
                f"{'yes' if r['max_abs_p_error'] <= 0.1 else 'no'} |",
                f"| recovery: held-out MAPE | {r['test_mape']:.2f} % (true model {r['true_model_test_mape']:.2f} %, "
                f"noise {r['noise_percent']:.0f} %) | ≤ 1.2× noise | {'yes' if r['mape_over_noise'] <= 1.2 else 'no'} |"]
    if "stability" in res:
        r = res["stability"]
        out += [f"| stability: max std of q over seeds (identifiable coding) | {r['max_std_q']:.2g} (thesis coding "
                f"{r['thesis_coding']['max_std_q']:.2g}) | ≤ 0.01 | {'yes' if r['max_std_q'] <= 0.01 else 'no'} |",
                f"| stability: max std of p over seeds (identifiable coding) | {r['max_std_p']:.2g} (thesis coding "
                f"{r['thesis_coding']['max_std_p']:.2g}); objective spread {r['objective_spread']:.1e} | ≤ 0.05 | "
                f"{'yes' if r['max_std_p'] <= 0.05 else 'no'} |"]
    for row in res.get("scale", {}).get("rows", []):
        out.append(f"| scale: {row['rows']:,} rows, one fit | {row['seconds']:.1f} s ({row['n_iter']} generations) | "
                   f"100k ≤ 60 s | {'yes' if row['rows'] < 100_000 or row['seconds'] <= 60 else 'no'} |")
    if "cli" in res:
        r = res["cli"]
        out.append(f"| `perfkit fit`, default settings (ten seeds), {r['rows']:,} rows, the whole command | "
                   f"{r['seconds']:.1f} s | ≤ 60 s | {'yes' if r['seconds'] <= 60 else 'no'} |")
    out += ["", "Machines:"] + [f"- {k}: {_machine_line(res[k]['machine'])}" for k in
                                ("speed", "recovery", "stability", "scale", "cli") if k in res and "machine" in res[k]]
    out += ["", "The recovery of p is not a target these data can meet: with Table 4.3's MXNet values the intrinsic "
            "terms vary little over the sampled range, a change in p is absorbed by a and by the categorical "
            "constants, and the thesis's coding leaves those unidentified (Table 4.2's scatter); q and the "
            "predictions are recovered."]
    return "\n".join(out)


SECTIONS = ("speed", "recovery", "stability", "scale", "cli")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer seeds and sizes (a smoke run)")
    ap.add_argument("--only", nargs="*", choices=SECTIONS, default=list(SECTIONS))
    ap.add_argument("--seeds", type=int, default=None, help="seeds of the speed section (default 5; quick 2)")
    args = ap.parse_args(argv)
    res = {"quick": args.quick}
    if "speed" in args.only:
        res["speed"] = bench_speed(range(args.seeds or (2 if args.quick else 5)))
    if "recovery" in args.only:
        res["recovery"] = bench_recovery()
    if "stability" in args.only:
        res["stability"] = bench_stability(3 if args.quick else 10)
    if "scale" in args.only:
        res["scale"] = bench_scale([1000, 3000] if args.quick else [1000, 3000, 10000, 30000, 100000])
    if "cli" in args.only:
        res["cli"] = bench_cli(10_000 if args.quick else 100_000)
    OUT.mkdir(exist_ok=True)
    name = "generic_model_quick" if args.quick else "generic_model"
    path = OUT / f"{name}.json"
    if path.exists() and set(args.only) != set(SECTIONS):
        # a partial run updates its sections and keeps the others (each section records its own machine info)
        old = json.loads(path.read_text())
        res = {**old, **{k: v for k, v in res.items() if k in args.only}}
    for k in args.only:
        res[k]["machine"] = machine_info()
    res.pop("machine", None)
    path.write_text(json.dumps(res, indent=1, default=float))
    path.with_suffix(".md").write_text(markdown(res) + "\n")
    print(markdown(res))


if __name__ == "__main__":
    main()
