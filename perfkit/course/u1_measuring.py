"""Unit 1 of the course, *Measuring a training step*: what ``notebooks/course/u1_measuring.ipynb`` computes and draws,
and its exercises' checks.

- :func:`measure_steps`: real training steps timed on this machine by perfkit's harness (one worker process,
  no untimed warm-up, so the first steps show what warming up costs); :func:`draw_warmup` cuts them;
- :func:`load_noise_runs` / :func:`noise_levels` / :func:`draw_noise`: the shipped noise-floor campaign (the same
  configurations measured in repeated runs and in rounds at different moments); :func:`machine_noise` compares
  two machines' step logs;
- :func:`autocorrelation` / :func:`draw_acf`: consecutive steps are correlated;
- :func:`moving_block_means` (Künsch's moving-block bootstrap) / :func:`block_ci_table` / :func:`draw_block_ci`:
  a confidence interval of the mean step time that respects that correlation, against the naive one;
- :func:`repeats_table`: how many runs a target precision needs.

Every random draw has a fixed seed; the checks build their own inputs, so they mean the same on every machine.
"""
from __future__ import annotations

import json
import math

import numpy as np

from .exercises import Exercise, call, close

__all__ = ["measure_steps", "warmup_table", "draw_warmup", "load_noise_runs", "noise_levels", "draw_noise",
           "machine_noise", "autocorrelation", "draw_acf", "moving_block_means", "naive_ci", "block_ci_table",
           "draw_block_ci", "repeats_table", "FIGURES", "EXERCISES", "NOISE_STEPS", "NOISE_CSV", "Z95"]

#: the shipped noise-floor campaign (per-step times of repeated runs) and its table
NOISE_STEPS = "data/measured/pytorch-cpu/noise_floor.steps.jsonl"
NOISE_CSV = "data/measured/pytorch-cpu/noise_floor.csv"
#: the two-sided 95 % normal quantile
Z95 = 1.959963984540054


# ---------------------------------------------------------------------------------------------- live steps
def measure_steps(iterations: int = 40, runs: int = 3, model: str = "cnn", batch_size: int = 32, seed: int = 0):
    """Time ``runs`` runs of ``iterations`` real training steps of a Chapter 3 ``model`` (one PyTorch worker, phased
    step, per-worker batch ``batch_size``) with perfkit's harness, without untimed warm-up steps.

    All runs share one fresh worker process, in order, so run 0 starts cold. Returns a DataFrame with columns
    ``run``, ``step`` and ``t_step`` (seconds, start to start). Raises :class:`perfkit.measure.WorkerError` with
    the worker's reason when the worker cannot start or fails.
    """
    import pandas as pd

    from ..measure.workers import WorkerGroup

    rows = []
    with WorkerGroup("pytorch", workers=1, threads=1) as group:
        for r in range(int(runs)):
            cfg = {"model": model, "workers": 1, "batch_size": int(batch_size), "mode": "phased",
                   "iterations": int(iterations), "warmup": 0, "seed": int(seed) + r, "dataset": "mnist",
                   "optimizer": "sgd", "learning_rate": 0.01}
            reply = group.request({"op": "run", "id": f"run{r}", "task": "phases", "config": cfg})
            if not reply.get("ok"):
                raise RuntimeError(f"run {r}: {reply.get('error', 'the worker failed')}")
            rows += [(r, i, float(it["t_iter"])) for i, it in enumerate(reply["ranks"][0]["iterations"])]
    return pd.DataFrame(rows, columns=["run", "step", "t_step"])


def warmup_table(frame, cut: int = 5):
    """Per run: the first step, the mean and median of all steps, and of the steps after the first ``cut`` (ms)."""
    import pandas as pd

    out = []
    for run, g in frame.groupby("run"):
        t = 1000 * g.sort_values("step")["t_step"].to_numpy()
        out.append({"run": run, "first step": t[0], "mean, all": t.mean(), "median, all": np.median(t),
                    f"mean, after {cut}": t[cut:].mean(), f"median, after {cut}": np.median(t[cut:])})
    return pd.DataFrame(out).set_index("run")


def draw_warmup(frame, cut: int = 5):
    """Left: each run's step times against the step, the first ``cut`` steps shaded as warm-up and each run's
    steady median drawn across the rest. Right: the mean of what is kept against the number of steps cut, per
    run, with ``cut`` marked."""
    from ..report.plots import new_figure

    fig, (a, b) = new_figure(1, 2, figsize=(8.4, 3.1))
    n = int(frame["step"].max()) + 1
    cut = int(min(max(cut, 0), n - 2))
    cuts = np.arange(0, max(n // 2, cut + 1) + 1)
    for run, g in frame.groupby("run"):
        t = 1000 * g.sort_values("step")["t_step"].to_numpy()
        line, = a.plot(np.arange(len(t)), t, lw=0.9, marker=".", ms=3, label=f"run {run}")
        a.hlines(np.median(t[cut:]), cut, len(t) - 1, color=line.get_color(), ls="--", lw=0.8)
        b.plot(cuts, [t[c:].mean() for c in cuts], color=line.get_color(), label=f"run {run}")
    a.axvspan(-0.5, cut - 0.5, color="grey", alpha=0.25, lw=0)
    a.set_xlabel("step")
    a.set_ylabel("step time (ms)")
    a.set_title(f"first {cut} steps cut as warm-up", fontsize=9)
    a.legend(fontsize=7, loc="upper right")
    b.axvline(cut, color="grey", lw=0.8)
    b.set_xlabel("steps cut")
    b.set_ylabel("mean of the rest (ms)")
    b.set_title("how the mean moves with the cut", fontsize=9)
    _plain(a, b, int_x=True)
    return fig


def _plain(*axes, int_x: bool = False) -> None:
    """Plain tick labels (no offset or scientific notation), at most five per axis; whole numbers on x with
    ``int_x``."""
    from matplotlib.ticker import MaxNLocator, NullFormatter, ScalarFormatter

    for ax in axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                axis.set_major_formatter(ScalarFormatter())
                axis.set_minor_formatter(NullFormatter())
                axis.get_major_formatter().set_scientific(False)
                continue
            axis.set_major_locator(MaxNLocator(5, integer=int_x and axis is ax.xaxis))
            fmt = ScalarFormatter(useOffset=False)
            fmt.set_scientific(False)
            axis.set_major_formatter(fmt)


# ---------------------------------------------------------------------------------------------- shipped noise
def load_noise_runs(path=NOISE_STEPS) -> dict:
    """``{sample_id: [run, ...]}`` from a steps log (``*.steps.jsonl``, one line per sample holding each rank's runs):
    each run the per-step times (s) of rank 0, in the order they were taken; a sample logged twice keeps its last
    line."""
    from ..schema import resolve

    out = {}
    with open(resolve(path)) as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                out[str(rec["sample_id"])] = [np.asarray(run, dtype=float) for run in rec["repeats"][0]]
    return out


def noise_levels(csv=NOISE_CSV):
    """Per configuration of a noise-floor table: its median step time (ms), the coefficient of variation (%) of the
    run means inside one sample (runs back to back) and of the step times over rounds (moments apart)."""
    from ..data.measured import read_csv
    from ..schema import resolve

    df = read_csv(resolve(csv), "noise-floor file")
    df = df[df["status"] == "ok"]
    runs = df[[c for c in df.columns if c.startswith("step_run")]].to_numpy(dtype=float)
    df = df.assign(cv_runs=100 * runs.std(axis=1, ddof=1) / runs.mean(axis=1))
    g = df.groupby("config_id")
    out = g.agg(workers=("workers", "first"), batch_size=("batch_size", "first"),
                step_ms=("step_time", "median"), cv_between_runs=("cv_runs", "median"))
    out["cv_between_rounds"] = 100 * g["step_time"].std(ddof=1) / g["step_time"].mean()
    return out


def draw_noise(levels):
    """Each configuration's spread between rounds against its spread between runs (CV, %, log axes), with the
    diagonal: above it, waiting between measurements adds noise that back-to-back runs do not show."""
    from ..report.plots import new_figure

    fig, ax = new_figure(1, 1, figsize=(4.6, 3.4))
    x, y = levels["cv_between_runs"].to_numpy(), levels["cv_between_rounds"].to_numpy()
    lo, hi = max(min(x.min(), y.min()) / 1.5, 0.05), max(x.max(), y.max()) * 1.5
    for w, g in levels.groupby("workers"):
        ax.scatter(g["cv_between_runs"], g["cv_between_rounds"], s=14, label=f"{w} worker{'s' * (w > 1)}")
    ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("CV between runs of one sample (%)")
    ax.set_ylabel("CV between rounds (%)")
    ax.legend(fontsize=7)
    _plain(ax)
    return fig


def machine_noise(paths: dict, limit: int = 150, min_steps: int = 20):
    """Per machine (``{name: steps log}``): over the runs of at least ``min_steps`` steps among its first ``limit``
    samples, the median within-run CV (%) and the median lag-1 autocorrelation of consecutive steps."""
    import pandas as pd

    from ..schema import resolve

    rows = []
    for name, path in paths.items():
        cvs, r1s = [], []
        with open(resolve(path)) as fh:
            for i, line in enumerate(fh):
                if i >= limit:
                    break
                for run in json.loads(line)["repeats"][0]:  # rank 0's runs
                    x = np.asarray(run, dtype=float)
                    if len(x) >= min_steps:
                        cvs.append(100 * x.std(ddof=1) / x.mean())
                        r1s.append(autocorrelation(x, 1)[1])
        rows.append({"machine": name, "runs": len(cvs), "median CV within a run (%)": np.median(cvs),
                     "median lag-1 autocorrelation": np.median(r1s)})
    return pd.DataFrame(rows).set_index("machine")


# ---------------------------------------------------------------------------------------------- dependence
def autocorrelation(x, max_lag: int = 20) -> np.ndarray:
    """The sample autocorrelation of ``x`` at lags 0..``max_lag``: ``Σ (x_t − x̄)(x_{t+k} − x̄) / Σ (x_t − x̄)²``
    (the usual biased estimator; lag 0 is 1).

    >>> autocorrelation([1.0, 2.0, 1.0, 2.0], 1).round(2).tolist()
    [1.0, -0.75]
    """
    x = np.asarray(x, dtype=float)
    e = x - x.mean()
    den = float(e @ e)
    return np.array([float(e[k:] @ e[:len(e) - k]) / den for k in range(min(int(max_lag), len(e) - 1) + 1)])


def draw_acf(x, runs: dict, max_lag: int = 20):
    """Three panels: the series ``x`` (ms), its autocorrelation with the ±2/√n band of independent steps, and the
    lag-1 autocorrelation of every run of ``runs`` (``{sample: [run, …]}``) with at least 40 steps."""
    from ..report.plots import new_figure

    x = np.asarray(x, dtype=float)
    fig, (a, b, c) = new_figure(1, 3, figsize=(10.0, 2.9))
    a.plot(1000 * x, lw=0.8)
    a.set_xlabel("step")
    a.set_ylabel("step time (ms)")
    acf = autocorrelation(x, max_lag)
    b.bar(np.arange(len(acf)), acf, width=0.6)
    band = 2 / math.sqrt(len(x))
    b.axhspan(-band, band, color="grey", alpha=0.25, lw=0)
    b.set_xlabel("lag k")
    b.set_ylabel("autocorrelation")
    r1 = [autocorrelation(run, 1)[1] for rs in runs.values() for run in rs if len(run) >= 40]
    c.hist(r1, bins=np.linspace(-0.4, 1.0, 15))
    c.axvline(acf[1], color="C3", lw=1.2, label="this series")
    c.set_xlabel("lag-1 autocorrelation")
    c.set_ylabel("runs")
    c.legend(fontsize=7)
    _plain(a, b, int_x=True)
    _plain(c)
    return fig


# ---------------------------------------------------------------------------------------------- bootstrap
def moving_block_means(x, block: int, b: int = 1000, seed: int = 0) -> np.ndarray:
    """``b`` moving-block bootstrap means of ``x`` (Künsch 1989): each resample strings together ⌈n/block⌉ blocks
    of ``block`` consecutive values, each starting at a uniform index in 0..n−block, cut to n values; ``block = 1``
    is the ordinary (iid) bootstrap. A fixed ``seed`` gives the same means.

    >>> moving_block_means([1.0, 2.0, 3.0], 3, b=2).tolist()
    [2.0, 2.0]
    """
    x = np.asarray(x, dtype=float)
    n, block = len(x), int(block)
    if not 1 <= block <= n:
        raise ValueError(f"block: expected 1..{n} (the series' length), got {block}")
    k = -(-n // block)
    starts = np.random.default_rng(seed).integers(0, n - block + 1, size=(int(b), k))
    idx = (starts[:, :, None] + np.arange(block)).reshape(int(b), k * block)[:, :n]
    return x[idx].mean(axis=1)


def naive_ci(x) -> tuple[float, float]:
    """``mean ± 1.96 s/√n``: the 95 % interval of the mean if the steps were independent."""
    x = np.asarray(x, dtype=float)
    h = Z95 * x.std(ddof=1) / math.sqrt(len(x))
    return float(x.mean() - h), float(x.mean() + h)


def block_ci_table(x, blocks=(1, 2, 5, 10, 20), b: int = 1000, seed: int = 0):
    """The 95 % interval of the mean of ``x`` (ms): naive, moving-block bootstrap for each block length, and
    perfkit's stationary bootstrap with its automatic block length (:func:`perfkit.evidence.block_mean_bootstrap`);
    with each interval's half-width relative to the mean (%)."""
    import pandas as pd

    from ..evidence import block_mean_bootstrap, percentile_interval

    x = 1000 * np.asarray(x, dtype=float)
    rows = [("naive (independent steps)", *naive_ci(x))]
    rows += [(f"moving blocks of {k}", *percentile_interval(moving_block_means(x, k, b, seed)))
             for k in blocks if k <= len(x)]
    _, samples, auto = block_mean_bootstrap(x, b=b, seed=seed)
    rows.append((f"stationary, automatic block {auto:.1f}", *percentile_interval(samples[:, 0])))
    out = pd.DataFrame(rows, columns=["interval", "lower (ms)", "upper (ms)"]).set_index("interval")
    out["half-width (%)"] = 100 * (out["upper (ms)"] - out["lower (ms)"]) / 2 / x.mean()
    return out


def draw_block_ci(x, block: int = 5, b: int = 1000, seed: int = 0, max_block: int = 30):
    """Left: the bootstrap distribution of the mean (ms) with blocks of ``block`` against the iid one, with both
    95 % intervals and the naive one. Right: the interval's half-width against the block length, ``block`` marked."""
    from ..evidence import percentile_interval
    from ..report.plots import new_figure

    x = 1000 * np.asarray(x, dtype=float)
    fig, (a, c) = new_figure(1, 2, figsize=(8.6, 3.1))
    iid, blk = moving_block_means(x, 1, b, seed), moving_block_means(x, block, b, seed)
    bins = np.linspace(min(iid.min(), blk.min()), max(iid.max(), blk.max()), 40)
    a.hist(iid, bins=bins, alpha=0.5, label="iid bootstrap")
    a.hist(blk, bins=bins, alpha=0.5, label=f"blocks of {block}")
    for (lo, hi), colour, y in ((naive_ci(x), "k", 0.96), (percentile_interval(blk), "C1", 0.88)):
        a.hlines(y, lo, hi, color=colour, lw=2.5, transform=a.get_xaxis_transform())
    a.set_xlabel("bootstrap mean step time (ms)")
    a.set_ylabel("resamples")
    a.set_title("black: naive interval; orange: block interval", fontsize=8)
    a.legend(fontsize=7, loc="center right")
    ks = np.arange(1, min(max_block, len(x) // 2) + 1)
    widths = [np.diff(percentile_interval(moving_block_means(x, k, b, seed)))[0] / 2 for k in ks]
    c.plot(ks, 100 * np.asarray(widths) / x.mean(), marker=".", label="moving-block bootstrap")
    c.axhline(100 * np.diff(naive_ci(x))[0] / 2 / x.mean(), color="k", ls=":", label="naive")
    c.axvline(block, color="grey", lw=0.8)
    c.set_xlabel("block length")
    c.set_ylabel("half-width of the 95 % interval (%)")
    c.legend(fontsize=7, loc="lower right")
    _plain(a)
    _plain(c, int_x=True)
    return fig


def repeats_table(run_means, targets=(0.05, 0.02, 0.01, 0.005)):
    """From pilot run means: the runs needed for a 95 % interval of the mean whose half-width is each target
    fraction of the mean, ``⌈(1.96 · s / (r · mean))²⌉`` (``s`` the runs' standard deviation, ddof 1)."""
    import pandas as pd

    m = np.asarray(run_means, dtype=float)
    cv = m.std(ddof=1) / m.mean()
    return pd.DataFrame({"target half-width (%)": [100 * r for r in targets],
                         "runs needed": [max(2, math.ceil((Z95 * cv / r) ** 2)) for r in targets]})


# ---------------------------------------------------------------------------------------------- figures
def _shipped_series(sample: str = "r3-c29", run: int = 0) -> np.ndarray:
    return load_noise_runs()[sample][run]


def _quick_live_frame():
    return measure_steps(iterations=20, runs=2)


FIGURES = {
    "warmup": lambda: draw_warmup(_quick_live_frame(), cut=5),
    "noise": lambda: draw_noise(noise_levels()),
    "acf": lambda: draw_acf(_shipped_series(), load_noise_runs()),
    "block_ci": lambda: draw_block_ci(_shipped_series(), block=5),
}


# ---------------------------------------------------------------------------------------------- exercises
def _ar1(n: int, phi: float, seed: int, level: float = 0.02, scale: float = 0.002) -> np.ndarray:
    """A positive AR(1) series of step times (s) with lag-1 correlation ``phi``."""
    rng = np.random.default_rng(seed)
    e = rng.normal(size=n + 50)
    x = np.zeros(n + 50)
    for t in range(1, n + 50):
        x[t] = phi * x[t - 1] + e[t]
    return level + scale * x[50:]


def _warm_series(seed: int = 11) -> np.ndarray:
    """Step times with 6 slow warm-up steps and a few slow outliers later (so mean, median and cut all differ)."""
    rng = np.random.default_rng(seed)
    x = 0.02 + 0.001 * rng.standard_normal(60)
    x[:6] = [0.30, 0.12, 0.06, 0.04, 0.03, 0.025]
    x[[20, 37, 51]] = [0.05, 0.07, 0.045]
    return x


def _check_steady(fn):
    x = _warm_series()
    got = call(fn, x.copy(), 6)
    if close(got, np.median(x[6:])):
        return None if close(call(fn, x[::-1].copy(), 0), np.median(x)) else "wrong"
    guesses = {"mean": [x[6:].mean(), x[7:].mean(), x[5:].mean()], "warmup": [np.median(x), x.mean()],
               "off-by-one": [np.median(x[7:]), np.median(x[5:])]}
    return next((k for k, vals in guesses.items() if any(close(got, v) for v in vals)), "wrong")


def _check_lag1(fn):
    x = _ar1(300, 0.6, seed=3)
    got = call(fn, x.copy())
    e = x - x.mean()
    right = [float(e[1:] @ e[:-1] / (e @ e)), float(np.corrcoef(x[:-1], x[1:])[0, 1]),
             float(e[1:] @ e[:-1] / (len(x) - 1) / x.var(ddof=1)), float(e[1:] @ e[:-1] / (len(x) - 1) / x.var())]
    if any(close(got, v, rel=1e-6) for v in right):
        return None
    if close(got, x[1:] @ x[:-1] / (x @ x), rel=1e-6) or close(got, x[1:] @ x[:-1] / (x[:-1] @ x[:-1]), rel=1e-6):
        return "no-mean"
    if close(got, 1.0):
        return "lag0"
    return "wrong"


def _check_bootstrap(fn):
    x = _ar1(240, 0.7, seed=5)
    got = np.asarray(call(fn, x.copy(), 10, 2000, 1), dtype=float)
    if got.shape != (2,) or not got[0] < x.mean() < got[1]:
        return "shape"
    from ..evidence import percentile_interval

    lo, hi = float(got[0]), float(got[1])
    ref = percentile_interval(moving_block_means(x, 10, 2000, 1))
    iid = percentile_interval(moving_block_means(x, 1, 2000, 1))
    w, w_ref, w_iid = hi - lo, ref[1] - ref[0], iid[1] - iid[0]
    if abs(w / w_ref - 1) < 0.15:
        return None
    if abs(w / w_iid - 1) < 0.15:
        return "iid"
    if w > 4 * w_ref:
        return "spread-of-steps"
    return "wrong"


def _check_repeats(fn):
    m = np.array([0.101, 0.097, 0.104, 0.099, 0.106, 0.095])
    cv1, cv0 = m.std(ddof=1) / m.mean(), m.std() / m.mean()
    got = call(fn, m.copy(), 0.01)
    if any(close(got, math.ceil((z * cv1 / 0.01) ** 2)) for z in (Z95, 1.96, 2.0)):
        return None if close(call(fn, m.copy(), 0.5), 2) or close(call(fn, m.copy(), 0.5), 1) else "wrong"
    guesses = {"ddof": [math.ceil((z * cv0 / 0.01) ** 2) for z in (Z95, 1.96, 2.0)],
               "no-square": [math.ceil(z * cv1 / 0.01) for z in (Z95, 1.96, 2.0)],
               "percent": [math.ceil((z * 100 * cv1 / 0.01) ** 2) for z in (Z95, 1.96, 2.0)],
               "round-down": [math.floor((z * cv1 / 0.01) ** 2) for z in (Z95, 1.96, 2.0)]}
    return next((k for k, vals in guesses.items() if any(close(got, v) for v in vals)), "wrong")


EXERCISES = (
    Exercise("1.1", "steady_step_time", "drop the warm-up, return a robust steady-state step time", _check_steady, {
        "mean": "You returned a mean. A few slow outliers (a page fault, another process) drag a mean up; the "
                "median of the steady steps is what a robust 'typical step' means here.",
        "warmup": "Your value still contains the warm-up steps: drop the first `warmup` values before summarising.",
        "off-by-one": "Almost: you dropped one step too many or too few. `times[warmup:]` keeps exactly the steps "
                      "after the first `warmup`.",
        "wrong": "Drop the first `warmup` step times, then summarise what is left with a statistic that ignores a "
                 "few outliers."}),
    Exercise("1.2", "lag1_autocorrelation", "the lag-1 autocorrelation of consecutive step times", _check_lag1, {
        "no-mean": "Subtract the mean first: without it every product x_t·x_{t+1} is large and positive (step times "
                   "are all around the same level), so the ratio is close to 1 whatever the dependence.",
        "lag0": "That is the lag-0 value (always 1): pair each step with the NEXT one, x[:-1] with x[1:].",
        "wrong": "Centre the series (e = x − mean), then divide the sum of e_t·e_{t+1} by the sum of e_t²."}),
    Exercise("1.3", "block_bootstrap_ci", "a moving-block bootstrap 95 % interval of the mean", _check_bootstrap, {
        "iid": "Your interval is as narrow as the ordinary bootstrap's: you resampled single steps. Draw whole "
               "blocks of `block` consecutive steps (a random start, then start, start+1, …).",
        "spread-of-steps": "Far too wide: that is the spread of single steps. The interval is for the MEAN: take "
                           "the mean of each resample, then the 2.5 and 97.5 percentiles of those means.",
        "shape": "Return a pair (lower, upper) that contains the sample mean.",
        "wrong": "For each of `b` resamples: ⌈n/block⌉ random block starts in 0..n−block, concatenate the blocks, "
                 "cut to n values, take the mean; return the 2.5 % and 97.5 % percentiles of those means."}),
    Exercise("1.4", "repeats_needed", "how many runs a target relative half-width needs", _check_repeats, {
        "ddof": "Use the sample standard deviation (ddof=1): with a handful of pilot runs, ddof=0 underestimates "
                "the spread and promises too few runs.",
        "no-square": "The half-width shrinks like 1/√n, so n grows with the SQUARE of (z · CV / target).",
        "percent": "`rel_half_width` is a fraction (0.01 = 1 %), not a percentage; the CV must be a fraction too.",
        "round-down": "Round up: a fractional run count must become the next whole run, or the target is missed.",
        "wrong": "The half-width of the mean of n runs is about z·s/√n; solve z·s/√n ≤ target·mean for n and "
                 "round up."}),
)
