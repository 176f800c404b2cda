"""Unit 7 of the course, *Measure your own machine*: what ``notebooks/course/u7_own_machine.ipynb`` computes and
draws, and its exercises' checks.

- :func:`campaign_commands` / :func:`run_campaign`: a short ``perfkit collect`` campaign (Chapter 3 phases of the
  CNN, a few Chapter 4 LeNet-5 samples) run as a subprocess into a folder of the student's, resumable;
- :func:`machine_facts`: what each campaign's provenance records about its machine;
- :func:`load_phases` / :func:`phase_table` / :func:`speedup_table` / :func:`draw_machines`: phase times and the
  speedup of thesis eq. 3.7 against the measured one, on the student's machine and the two shipped ones;
- :func:`exponent_table`: eq. 4.4 (the generic model) fitted to each machine's LeNet-5 samples, its batch and worker
  exponents side by side.

The checks of the exercises build their own small tables; nothing here depends on the machine it runs on except
what :func:`run_campaign` measures.
"""
from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from .exercises import Exercise, call, close

__all__ = ["SHIPPED", "ROLES_SMALL", "campaign_commands", "run_campaign", "machine_facts", "load_phases",
           "phase_table", "speedup_table", "worker_powers", "draw_machines", "exponent_table", "FIGURES", "EXERCISES"]

#: the shipped campaigns compared with the student's: name → folder under the repository
SHIPPED = {"2-core machine": "data/measured/pytorch-cpu", "16-core machine": "data/measured/pytorch-cpu16"}
#: the columns eq. 4.4 is fitted on here: a small campaign cannot carry every intrinsic column of Table 4.1
ROLES_SMALL = {"numeric": ["num_filters", "stride"], "categorical": [], "extrinsic": ["batch_size", "workers"]}
_PHASES = ("t_io", "t_h2d", "t_md", "t_f", "t_b", "t_c", "t_u")
_COLOURS = ("#8c8c8c", "#bcbd22", "#17becf", "#1f77b4", "#ff7f0e", "#d62728", "#2ca02c")


# ---------------------------------------------------------------------------------------------- the campaign
def campaign_commands(folder, quick: bool = False, workers: str = "1,2,3", samples: int = 80) -> dict:
    """The two ``perfkit collect`` argument lists (``{"ch3": [...], "ch4": [...]}``, without the interpreter) of the
    campaign written under ``folder``: CNN phases on ``workers`` (per-worker batch 64, as the shipped files) and
    ``samples`` LeNet-5 configurations on MNIST with 1 and 2 workers. ``quick``: two worker counts, a few iterations
    and eight samples; quick and full campaigns go to their own subfolders, so that each resumes only itself."""
    folder = Path(folder) / ("quick" if quick else "full")
    ws = ",".join(workers.split(",")[:2]) if quick else workers
    iters, warm = ("5", "2") if quick else ("40", "5")
    ch3 = ["collect", "ch3", "--models", "cnn", "--modes", "phased", "--workers", ws, "--iterations", iters,
           "--warmup", warm, "--batch-size", "64", "--out", str(folder / "ch3_phases.csv"), "--no-progress"]
    n, reps, steps = ("8", "1", "3") if quick else (str(int(samples)), "2", "4")
    ch4 = ["collect", "ch4", "--samples", n, "--workers", "1,2", "--datasets", "mnist", "--batch-sizes", "16,32,64",
           "--repeats", reps, "--steps", steps, "--min-run-seconds", "0", "--warmup", "1" if quick else "2",
           "--out", str(folder / "ch4_lenet5.csv"), "--no-progress"]
    return {"ch3": ch3, "ch4": ch4}


def run_campaign(args, log=print, timeout: float = 600.0) -> dict:
    """Run ``python -m perfkit <args>`` in a subprocess, passing each line it prints to ``log`` as it comes.

    Returns ``{"returncode", "seconds", "error", "out"}``: ``error`` is the one line ``perfkit`` gave for a failure
    (its last line of output), empty when it succeeded; ``out`` the CSV it wrote (``--out``). Never raises for a
    failed campaign: the caller shows ``error``. The process is killed after ``timeout`` seconds.
    """
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "perfkit", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    last = ""
    try:
        for line in proc.stdout:
            if line.strip():
                last = line.strip()
                log(last)
            if time.perf_counter() - start > timeout:
                proc.kill()
                last = f"perfkit collect: killed after {timeout:.0f} s"
        proc.wait(timeout=max(timeout - (time.perf_counter() - start), 1.0))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        last = f"perfkit collect: killed after {timeout:.0f} s"
    args = list(map(str, args))
    out = args[args.index("--out") + 1] if "--out" in args else ""
    return {"returncode": proc.returncode, "seconds": time.perf_counter() - start,
            "error": "" if proc.returncode == 0 else last, "out": out}


# ---------------------------------------------------------------------------------------------- machine facts
def machine_facts(provenances: dict):
    """One column per machine (``{name: provenance JSON path}``): CPU, cores (all and usable), memory, GPUs, the
    Python and PyTorch versions, the BLAS threads and when the campaign started."""
    import json

    import pandas as pd

    cols = {}
    for name, path in provenances.items():
        m = json.loads(Path(path).read_text())["machine"]
        blas = (m.get("numeric") or {}).get("threads") or {}
        cols[name] = {"cpu": m.get("cpu"), "cores": m.get("cores"), "usable cores": m.get("cores_usable"),
                      "memory (GiB)": m.get("memory_gib"), "GPUs": ", ".join(m.get("gpus") or []) or "none",
                      "python": m.get("python"), "torch": (m.get("versions") or {}).get("torch"),
                      "BLAS threads": blas.get("blas", "not recorded"), "date": m.get("date")}
    return pd.DataFrame(cols)


# ---------------------------------------------------------------------------------------------- phases, speedup
def load_phases(paths: dict) -> dict:
    """``{name: phased CNN rows}`` of each Chapter 3 file (``{name: ch3_phases.csv}``), successful rows only."""
    from ..data.measured import read_csv

    out = {}
    for name, path in paths.items():
        df = read_csv(path, "phases file")
        df = df[(df["status"] == "ok") & (df["mode"] == "phased") & (df["model"] == "cnn")]
        if df.empty:
            raise ValueError(f"{path}: no successful phased CNN rows")
        out[name] = df
    return out


def phase_table(phases: dict):
    """Mean time (ms) of each phase of one iteration per machine and worker count (the slowest worker of each
    iteration, as eq. 3.3 takes it): rows (machine, workers), columns the phases and ``t_iter``."""
    import pandas as pd

    from ..model.analytic.phases import summarise_phases

    parts = []
    for name, df in phases.items():
        s = summarise_phases(df, by=("model", "framework", "workers"))
        wide = s.pivot_table(index="workers", columns="phase", values="mean")
        parts.append((1000 * wide[[p for p in (*_PHASES, "t_iter") if p in wide.columns]]).assign(machine=name))
    return pd.concat(parts).reset_index().set_index(["machine", "workers"])


def speedup_table(phases: dict, n_train: int = 60000):
    """Per machine and worker count: the measured speedup (epoch time on one worker over that on G, per-worker
    batch fixed) and eq. 3.7's prediction (thesis form) from the one-worker phases and the measured t_c(G)."""
    import pandas as pd

    from ..model.analytic.phases import measured_speedup, measured_t_comm, measured_table3_2, predicted_speedups

    rows = []
    for name, df in phases.items():
        meas = measured_speedup(df, n_train=n_train).set_index("gpus")["speedup"]
        pred = predicted_speedups(measured_table3_2(df), measured_t_comm(df), variants=("thesis",))
        pred = pred.set_index("gpus")["speedup"]
        for g in meas.index:
            rows.append({"machine": name, "workers": int(g), "measured": float(meas[g]),
                         "eq. 3.7": float(pred.get(g, np.nan)), "ideal": float(g)})
    return pd.DataFrame(rows).set_index(["machine", "workers"])


def worker_powers(speedups):
    """Per machine: the power q of ``epoch time ∝ G^q`` from its measured speedups (least squares of
    log(1/S) on log G; −1 is ideal scaling), NaN with fewer than two worker counts."""
    import pandas as pd

    out = {}
    for name, t in speedups.groupby(level="machine"):
        g = t.index.get_level_values("workers").to_numpy(dtype=float)
        s = t["measured"].to_numpy(dtype=float)
        out[name] = float(np.polyfit(np.log(g), -np.log(s), 1)[0]) if len(g) > 1 else np.nan
    return pd.Series(out, name="q workers (CNN, log-log)")


def draw_machines(phases_ms, speedups, workers: int = 2):
    """Left: the phases of one iteration on ``workers`` workers on each machine (stacked, ms; "not measured" where a
    machine has no run with that many workers). Right: measured speedup (solid) and eq. 3.7 (dashed) against the
    worker count for each machine, with ideal scaling and ``workers`` marked."""
    from ..report.plots import new_figure

    fig, (a, b) = new_figure(1, 2, figsize=(9.4, 3.4))
    machines = list(dict.fromkeys(phases_ms.index.get_level_values("machine")))
    labelled = False
    for i, name in enumerate(machines):
        sub = phases_ms.loc[name]
        if workers not in sub.index:
            a.text(i, 0, "not\nmeasured", ha="center", va="bottom", fontsize=7)
            continue
        bottom = 0.0
        for p, colour in zip(_PHASES, _COLOURS):
            v = float(sub.loc[workers, p]) if p in sub.columns and np.isfinite(sub.loc[workers, p]) else 0.0
            a.bar([i], [v], bottom=[bottom], color=colour, width=0.6, label=None if labelled else p)
            bottom += v
        labelled = True
    if labelled:
        a.legend(fontsize=7, loc="upper right")
    a.set_xticks(range(len(machines)), [m.replace(" machine", "\nmachine") for m in machines], fontsize=8)
    a.set_xlim(-0.6, len(machines) + 0.2)
    a.set_ylabel("time of one iteration (ms)")
    a.set_title(f"phases on G = {workers}", fontsize=9)
    top = 1
    for i, name in enumerate(machines):
        t = speedups.loc[name]
        line, = b.plot(t.index, t["measured"], marker="o", label=f"{name}, measured")
        b.plot(t.index, t["eq. 3.7"], ls="--", marker="x", color=line.get_color())
        top = max(top, int(t.index.max()))
    g = np.arange(1, top + 1)
    b.plot(g, g, ls=":", color="grey", label="ideal")
    b.axvline(workers, color="grey", lw=0.8)
    b.set_xlabel("workers G")
    b.set_ylabel("speedup (dashed: eq. 3.7)")
    b.set_xticks(g)
    b.legend(fontsize=7, loc="upper left")
    return fig


# ---------------------------------------------------------------------------------------------- eq. 4.4
def exponent_table(paths: dict, rows: int = 120, maxiter: int | None = None, seed: int = 0):
    """Eq. 4.4 with :data:`ROLES_SMALL` fitted (:func:`perfkit.chapters.ch4.make_model`, mean relative error,
    differential evolution with at most ``maxiter`` generations) to the MNIST epoch times of each ch4 file
    (``{name: path}``, its first ``rows`` rows): the rows used, the exponents of batch size and workers, the power of
    num_filters, C (s) and the MAPE (%) on those rows. A machine with fewer rows than parameters gets NaN and its
    reason in ``note``."""
    import pandas as pd

    from ..chapters.ch4 import make_model
    from ..data.measured import load_steps

    budget = {} if maxiter is None else {"maxiter": int(maxiter)}
    out = []
    for name, path in paths.items():
        X, y, frame = load_steps(path, roles=ROLES_SMALL)
        keep = (frame["dataset"] == "mnist").to_numpy()
        X, y = X[keep].head(rows), y[keep].head(rows)
        row = {"machine": name, "rows": len(X), "q batch_size": np.nan, "q workers": np.nan, "p num_filters": np.nan,
               "C (s)": np.nan, "MAPE (%)": np.nan, "note": ""}
        try:
            model = make_model(roles=ROLES_SMALL, loss="relative", random_state=seed, **budget).fit(X, y)
        except ValueError as exc:
            out.append(dict(row, note=str(exc).splitlines()[0]))
            continue
        par = model.params_.set_index("term")
        pred = np.asarray(model.predict(X), dtype=float)
        out.append(dict(row, **{"q batch_size": par.loc["batch_size", "q"], "q workers": par.loc["workers", "q"],
                                "p num_filters": par.loc["num_filters", "p"], "C (s)": par.loc["C", "C"],
                                "MAPE (%)": 100 * float(np.mean(np.abs(pred - y.to_numpy()) / y.to_numpy()))}))
    return pd.DataFrame(out).set_index("machine")


# ---------------------------------------------------------------------------------------------- figures
def _shipped_figure():
    from ..schema import resolve

    ph = load_phases({name: resolve(f"{d}/ch3_phases.csv") for name, d in SHIPPED.items()})
    return draw_machines(phase_table(ph), speedup_table(ph), workers=2)


FIGURES = {"machines": _shipped_figure}


# ---------------------------------------------------------------------------------------------- exercises
def _phases_frame(seed: int = 7):
    """A small phased table (ch3 columns) of one model on 1, 2 and 3 workers; rank 1 is the slow one."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for g, base in ((1, 0.050), (2, 0.060), (3, 0.075)):
        for it in range(8):
            for r in range(g):
                t = base * (1.0 + 0.05 * rng.standard_normal()) * (1.4 if r == 1 else 1.0)
                rows.append({"model": "cnn", "framework": "pytorch", "mode": "phased", "status": "ok", "workers": g,
                             "rank": r, "iteration": it, "batch_size": 64, "t_iter": t})
    return pd.DataFrame(rows)


def _speedups_of(df, n_train, per_iter="max", steps=lambda n, b, g: math.ceil(n / (b * g))):
    it = df.groupby(["workers", "iteration"])["t_iter"].agg(per_iter).groupby("workers").mean()
    epoch = {int(g): steps(n_train, 64, int(g)) * t for g, t in it.items()}
    return {g: epoch[1] / e for g, e in epoch.items()}, {int(g): it[1] / t for g, t in it.items()}


def _as_dict(got) -> dict:
    items = got.items() if hasattr(got, "items") else []
    return {int(k): float(v) for k, v in items}


def _check_speedups(fn):
    df, n_train = _phases_frame(), 1000
    got = _as_dict(call(fn, df.copy(), n_train))
    right, per_step = _speedups_of(df, n_train)
    if sorted(got) != sorted(right):
        return "keys"
    v = lambda d: [d[g] for g in sorted(d)]
    if close(v(got), v(right)):
        return None
    if close(v(got), v(per_step)) or close(v(got), v(_speedups_of(df, n_train, "mean")[1])):
        return "no-steps"
    if close(v(got), v(_speedups_of(df, n_train, "mean")[0])):
        return "mean-ranks"
    if close(v(got), [1 / s for s in v(right)]):
        return "inverted"
    if close(v(got), v(_speedups_of(df, n_train, steps=lambda n, b, g: n / (b * g))[0])):
        return "ceil"
    return "wrong"


def _check_exponent(fn):
    g = np.array([1, 2, 4, 8, 1, 2, 4, 8, 3, 6], dtype=float)
    t = 40.0 * g ** -0.7 * np.exp(0.03 * np.random.default_rng(2).standard_normal(g.size))
    got = call(fn, g.copy(), t.copy())
    q = np.polyfit(np.log(g), np.log(t), 1)[0]
    if close(got, q, rel=1e-6):
        return None
    if close(got, -q, rel=1e-6):
        return "sign"
    if close(got, np.polyfit(g, t, 1)[0], rel=1e-6) or close(got, np.polyfit(g, np.log(t), 1)[0], rel=1e-6):
        return "linear"
    if close(got, np.polyfit(np.log(t), np.log(g), 1)[0], rel=1e-6) or close(got, 1 / q, rel=1e-6):
        return "swapped"
    return "wrong"


EXERCISES = (
    Exercise("7.1", "measured_speedups", "the measured speedup on each worker count from a phases table",
             _check_speedups, {
                 "no-steps": "You compared iteration times. With the per-worker batch fixed, G workers need only "
                             "⌈N/(b·G)⌉ iterations per epoch: compare EPOCH times, steps × iteration time.",
                 "mean-ranks": "Every worker waits for the slowest one at the all-reduce: take the largest t_iter "
                               "over the ranks of each iteration, then average over iterations.",
                 "inverted": "Speedup is the time on one worker divided by the time on G workers (above 1 when G "
                             "workers are faster).",
                 "ceil": "An epoch has a whole number of iterations: round N/(b·G) up (math.ceil).",
                 "keys": "Return a dict with one entry per worker count in the table (1 included), e.g. "
                         "{1: 1.0, 2: …, 3: …}.",
                 "wrong": "Per worker count: for each iteration the slowest rank's t_iter, their mean, times "
                          "⌈N/(b·G)⌉ iterations = the epoch time; speedup(G) = epoch(1) / epoch(G)."}),
    Exercise("7.2", "workers_exponent", "the power q of t ∝ G^q from measured epoch times", _check_exponent, {
        "sign": "The sign is flipped: an epoch that gets shorter with more workers has a NEGATIVE exponent (−1 is "
                "ideal scaling).",
        "linear": "A power law is a straight line in log–log axes: fit log t against log G, not t (or log t) "
                  "against G.",
        "swapped": "Regress log t (the response) on log G (the predictor); the other way round gives a different "
                   "slope when the points scatter.",
        "wrong": "Least squares of log(epoch time) on log(workers): the slope is q."}),
)
