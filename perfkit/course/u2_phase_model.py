"""Unit 2 · The S-SGD phase model and speedup: what ``notebooks/course/u2_phase_model.ipynb`` computes and draws,
and the checks of its exercises.

The unit reads the Chapter 3 phase timings that ``perfkit collect ch3`` writes (one row per worker and timed
iteration) on two machines, :data:`MACHINES`: a 2-core one, where three workers share two cores, and a 16-core one,
where up to eight single-threaded workers each have a core. Equation numbers are those of the thesis's Chapter 3.

- :func:`phase_table`, :func:`eq_3_3_table`: one iteration's phases, and eq. 3.3 against the measured iteration;
- :func:`speedup_table`, :func:`draw_speedups`: measured speedups on both machines against ideal and against
  "compute divided by G plus the measured aggregation time";
- :func:`karp_flatt_table`: the serial fraction that Amdahl's law would need to explain each measured speedup;
- :func:`lif_frame`, :func:`draw_lif`, :func:`lif_regression_table`: the load imbalance factor (eq. 3.8) per
  iteration and the regression of the epoch time on workers and LIF (eq. 3.9);
- :data:`FIGURES` and :data:`EXERCISES`.

The iteration widget draws with :func:`perfkit.report.teaching.draw_iteration`.
"""
from __future__ import annotations

import numpy as np

from ..model.analytic.lif import fit_lif_regression
from ..model.analytic.phases import epoch_frame
from ..report import teaching
from ..schema import resolve
from .exercises import Exercise, call, close

__all__ = ["MACHINES", "load_phased", "phase_table", "eq_3_3_table", "speedup_table", "draw_speedups",
           "karp_flatt_table", "lif_frame", "draw_lif", "lif_regression_table", "widget_phases", "FIGURES",
           "EXERCISES"]

#: the notebook's default inputs: machine label → Chapter 3 phase file (relative to the repository)
MACHINES = {"2 cores": "data/measured/pytorch-cpu/ch3_phases.csv",
            "16 cores": "data/measured/pytorch-cpu16/ch3_phases.csv"}
_SHARED = ("t_io", "t_h2d", "t_md", "t_u")
_PER_WORKER = ("t_f", "t_b", "t_c")
_MODELS = ("cnn", "mlp", "ae")


def load_phased(path):
    """The rows of a Chapter 3 file measured in the phased mode (each phase timed on its own), status ok."""
    import pandas as pd

    df = pd.read_csv(resolve(path))
    return df[(df["status"] == "ok") & (df["mode"] == "phased")].reset_index(drop=True)


def phase_table(machines=None, model: str = "cnn"):
    """One row per machine: the mean single-worker phase times of ``model`` (ms), the per-worker batch, and the
    measured aggregation time t_c (ms) on each worker count."""
    import pandas as pd

    rows = {}
    for label, path in (machines or MACHINES).items():
        ph = teaching.iteration_phases(resolve(path), model=model)
        row = {f"{p} (ms)": 1000 * ph[p] for p in teaching.PHASES if p != "t_c"}
        row["batch"] = ph["batch"]
        row.update({f"t_c at G={g} (ms)": 1000 * v for g, v in ph["t_c_measured"].items()})
        rows[label] = row
    return pd.DataFrame(rows).T


def eq_3_3_table(path, model: str = "cnn"):
    """Per worker count: the measured iteration time of the slowest worker and eq. 3.3 evaluated on the same
    iterations (shared phases averaged over the workers, the maximum over workers of t_f + t_b + t_c), in ms, both
    averaged over iterations."""
    import pandas as pd

    df = load_phased(path)
    df = df[df["model"] == model]
    rows = []
    for g, sub in df.groupby("workers"):
        per_it = sub.groupby("iteration")
        busy = sub.assign(busy=sub[list(_PER_WORKER)].sum(axis=1)).groupby("iteration")["busy"].max()
        eq = per_it[list(_SHARED)].mean().sum(axis=1) + busy
        measured = per_it["t_iter"].max()
        rows.append({"workers": int(g), "measured t_iter (ms)": 1000 * measured.mean(),
                     "eq. 3.3 (ms)": 1000 * eq.mean(), "difference (%)": 100 * (eq.mean() / measured.mean() - 1)})
    return pd.DataFrame(rows)


def speedup_table(machines=None):
    """:func:`perfkit.report.teaching.communication_table` of every machine, one table with a ``machine`` column:
    measured speedup, ideal, and compute divided by G plus the measured t_c(G)."""
    import pandas as pd

    parts = [teaching.communication_table(resolve(path)).assign(machine=label)
             for label, path in (machines or MACHINES).items()]
    return pd.concat(parts, ignore_index=True)


def draw_speedups(table):
    """One panel per model: measured speedup on each machine (solid) and compute ÷ G + t_c(G) on it (dashed),
    against ideal (dotted)."""
    from matplotlib.ticker import MaxNLocator

    from ..report.plots import machine_colours, new_figure

    models = [m for m in _MODELS if m in set(table["model"])]
    machines = list(dict.fromkeys(table["machine"]))
    colours = machine_colours(machines)
    fig, axes = new_figure(1, len(models), figsize=(3.0 * len(models) + 1.6, 3.0), sharey=True)
    axes = np.atleast_1d(axes)
    top = int(table["workers"].max())
    for ax, m in zip(axes, models):
        ax.plot([1, top], [1, top], ls=":", color="grey", label="ideal (S = G)")
        for machine in machines:
            t = table[(table["model"] == m) & (table["machine"] == machine)].sort_values("workers")
            ax.plot(t["workers"], t["measured"], marker="o", color=colours[machine], label=f"{machine}: measured")
            ax.plot(t["workers"], t["communication_only"], ls="--", color=colours[machine],
                    label=f"{machine}: compute ÷ G + t_c")
        ax.set_title(m)
        ax.set_xlabel("workers G")
        ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))
    axes[0].set_ylabel("speedup (epoch time ratio)")
    axes[-1].legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return fig


def _karp_flatt(s, g):
    s, g = np.asarray(s, dtype=float), np.asarray(g, dtype=float)
    return (1 / s - 1 / g) / (1 - 1 / g)


def karp_flatt_table(table):
    """Per machine, model and worker count above one: the measured speedup and the serial fraction e that
    Amdahl's law S = 1 / (e + (1 − e)/G) needs to give exactly that speedup (Karp & Flatt's metric). Amdahl fits
    only where e stays the same across G."""
    t = table[table["workers"] > 1]
    out = t[["machine", "model", "workers", "measured"]].assign(serial_fraction=_karp_flatt(t["measured"],
                                                                                            t["workers"]))
    return out.pivot_table(index=["machine", "model"], columns="workers", values="serial_fraction", sort=False)


def lif_frame(machines=None):
    """Per machine, model, worker count and timed iteration: the epoch time (``ceil(60000 / (b·G))`` iterations of
    the slowest worker's t_iter) and the iteration's LIF (eq. 3.8) over the workers' compute time
    (:func:`perfkit.model.analytic.phases.epoch_frame`)."""
    import pandas as pd

    return pd.concat([epoch_frame(load_phased(path)).assign(machine=label)
                      for label, path in (machines or MACHINES).items()], ignore_index=True)


def draw_lif(frame):
    """One panel per machine: the mean LIF (± one standard deviation over iterations) against the worker count,
    one line per model."""
    from matplotlib.ticker import MaxNLocator

    from ..report.plots import new_figure

    machines = list(dict.fromkeys(frame["machine"]))
    fig, axes = new_figure(1, len(machines), figsize=(3.3 * len(machines) + 0.8, 2.9), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, machine in zip(axes, machines):
        sub = frame[frame["machine"] == machine]
        for i, m in enumerate(_MODELS):
            stats = sub[sub["model"] == m].groupby("workers")["lif"].agg(["mean", "std"]).fillna(0.0)
            ax.errorbar(stats.index + 0.06 * (i - 1), stats["mean"], yerr=stats["std"], marker="o", capsize=2,
                        label=m)
        ax.axhline(1.0, color="grey", lw=0.7, ls=":")
        ax.set_title(machine)
        ax.set_xlabel("workers G")
        ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))
    axes[0].set_ylabel("LIF (eq. 3.8)")
    axes[-1].legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return fig


def lif_regression_table(frame):
    """Eq. 3.9 fitted by least squares per machine and model (the layout of Table 3.5: β0, β1 for workers, β2 for
    LIF, R²), with the R² of workers alone beside it and the correlation of workers with LIF."""
    import pandas as pd

    rows = []
    for (machine, model), sub in frame.groupby(["machine", "model"], sort=False):
        fit = fit_lif_regression(sub)
        x = np.c_[np.ones(len(sub)), sub["workers"].to_numpy(dtype=float)]
        y = sub["epoch_time"].to_numpy(dtype=float)
        resid = y - x @ np.linalg.lstsq(x, y, rcond=None)[0]
        r2_workers = 1 - float(resid @ resid) / float(((y - y.mean()) ** 2).sum())
        rows.append({"machine": machine, "model": model, **fit.params.to_dict(), "R² (eq. 3.9)": fit.rsquared,
                     "R² (workers only)": r2_workers,
                     "corr(workers, LIF)": float(np.corrcoef(sub["workers"], sub["lif"])[0, 1])})
    return pd.DataFrame(rows)


def widget_phases(path=None, model: str = "cnn") -> dict:
    """The phases the iteration widget starts from: :func:`perfkit.report.teaching.iteration_phases` of the file
    ``path`` (default: the 16-core machine's)."""
    return teaching.iteration_phases(resolve(path or MACHINES["16 cores"]), model=model)


def _figure_iteration():
    ph = widget_phases()
    return teaching.draw_iteration(ph, workers=2, batch=ph["batch"], t_c_ms=1000 * ph["t_c_measured"][2])


#: every figure the notebook shows, drawn with the notebook's default inputs
FIGURES = {
    "iteration": _figure_iteration,
    "speedups": lambda: draw_speedups(speedup_table()),
    "lif": lambda: draw_lif(lif_frame()),
}


# ---------------------------------------------------------------- exercise 2.1: eq. 3.3 from a phases dict

def _iteration_cases():
    ms = 1e-3
    multi = {"t_io": 2 * ms, "t_h2d": 1 * ms, "t_md": 0.5 * ms, "t_u": 3 * ms,
             "t_f": np.array([30, 40, 35]) * ms, "t_b": np.array([60, 50, 70]) * ms, "t_c": np.array([20, 25, 5]) * ms}
    single = {"t_io": 1.5 * ms, "t_h2d": 0.4 * ms, "t_md": 0.2 * ms, "t_u": 2 * ms, "t_f": 41 * ms, "t_b": 52 * ms,
              "t_c": 0.0}
    return multi, single


def _iteration_variants(ph) -> dict:
    """What a right answer and each typical wrong answer return on ``ph``."""
    f, b, c = (np.atleast_1d(np.asarray(ph[p], dtype=float)) for p in _PER_WORKER)
    shared = sum(ph[p] for p in _SHARED)
    return {None: shared + float(np.max(f + b + c)),
            "max-per-phase": shared + float(f.max() + b.max() + c.max()),
            "mean-over-workers": shared + float(np.mean(f + b + c)),
            "sum-over-workers": shared + float(np.sum(f + b + c)),
            "forgot-md": shared - ph["t_md"] + float(np.max(f + b + c))}


def _check_iteration(answer):
    return _match_cases(answer, [(case,) for case in _iteration_cases()], _iteration_variants)


def _match_cases(answer, cases, variants, rel: float = 1e-6):
    """None when ``answer`` returns the right value on every case, else the first mistake whose values it returns
    on every case, else "wrong"."""
    got = [call(answer, *case) for case in cases]
    expected = [variants(*case) for case in cases]
    for key in expected[0]:
        if all(close(g, e[key], rel=rel) for g, e in zip(got, expected)):
            return key
    return "wrong"


# ---------------------------------------------------------------- exercise 2.2: eq. 3.7 with batch scaling

_PER_SAMPLE = ("t_io", "t_h2d", "t_f", "t_b")


def _speedup_cases():
    measured = teaching.iteration_phases(resolve(MACHINES["16 cores"]), model="cnn")
    loading = {"t_io": 0.030, "t_h2d": 0.010, "t_md": 0.002, "t_f": 0.010, "t_b": 0.015, "t_u": 0.004, "batch": 32}
    settings = ((1, 32, 0.02), (2, 32, 0.02), (4, 128, 0.02), (8, 64, 0.05))
    return [(ph, g, b, tc) for ph in (measured, loading) for g, b, tc in settings]


def _speedup_variants(ph, workers, batch, t_c) -> dict:
    def eq37(scale, tc, overlap=True, factor=True):
        t = {p: ph[p] * (scale if p in _PER_SAMPLE else 1.0) for p in ("t_io", "t_h2d", "t_md", "t_f", "t_b", "t_u")}
        load, comp = t["t_io"] + t["t_h2d"], t["t_f"] + t["t_b"]
        if overlap:
            ratio = max(load, comp + t["t_u"]) / max(load + t["t_md"], comp + tc)
        else:
            ratio = (load + comp + t["t_u"]) / (load + t["t_md"] + comp + tc)
        return (workers if factor else 1) * ratio

    scale, tc = batch / ph["batch"], (t_c if workers > 1 else 0.0)
    return {None: eq37(scale, tc), "no-overlap": eq37(scale, tc, overlap=False), "t-c-at-one": eq37(scale, t_c),
            "not-scaled": eq37(1.0, tc), "no-g-factor": eq37(scale, tc, factor=False)}


def _check_speedup(answer):
    return _match_cases(answer, _speedup_cases(), _speedup_variants)


# ---------------------------------------------------------------- exercise 2.4: LIF per iteration

def _lif_times():
    rng = np.random.default_rng(3)
    return 0.05 * rng.lognormal(0.0, 0.15, size=(6, 3))


def _check_lif(answer):
    t = _lif_times()
    got = call(answer, t.copy())
    n = t.shape[1]
    if np.ndim(got) == 0:
        return "one-number"
    variants = {None: n * t.max(axis=1) / t.sum(axis=1), "inverted": t.sum(axis=1) / (n * t.max(axis=1)),
                "no-n": t.max(axis=1) / t.sum(axis=1), "max-over-min": t.max(axis=1) / t.min(axis=1),
                "wrong-axis": t.shape[0] * t.max(axis=0) / t.sum(axis=0)}
    for key, value in variants.items():
        if close(got, value):
            return key
    return "wrong"


# ---------------------------------------------------------------- exercise 2.3: Amdahl's serial fraction

def _check_serial(answer):
    s, g = np.array([1.8, 3.2, 5.0]), np.array([2.0, 4.0, 8.0])
    got = call(answer, s.copy(), g.copy())
    e = _karp_flatt(s, g)
    variants = {None: e, "percentage": 100 * e, "parallel-fraction": 1 - e, "efficiency-loss": 1 - s / g}
    for key, value in variants.items():
        if close(got, value):
            return key
    return "wrong"


EXERCISES = (
    Exercise("2.1", "iteration_time", "eq. 3.3: the time of one S-SGD iteration from its phases", _check_iteration, {
        "max-per-phase": "You took the largest t_f, the largest t_b and the largest t_c separately, maybe from "
                         "three different workers. The iteration waits for the slowest worker: add each worker's "
                         "own phases first, then take the largest of those sums.",
        "mean-over-workers": "You averaged over the workers. In synchronous SGD nobody updates before every "
                             "gradient has arrived, so the iteration lasts as long as its slowest worker.",
        "sum-over-workers": "You added the workers' times, as if they ran one after the other. They run at the "
                            "same time: the iteration is set by one of them, not by all of them together.",
        "forgot-md": "That is eq. 3.2. Eq. 3.3 has one more shared phase, the time spent splitting the batch into "
                     "the workers' mini-batches.",
        "wrong": "Not quite. Eq. 3.3: the shared phases (t_io, t_h2d, t_md, t_u) once each, plus the slowest "
                 "worker's t_f + t_b + t_c. t_f, t_b and t_c may be one number (one worker) or one per worker.",
    }),
    Exercise("2.2", "speedup", "eq. 3.7: the speedup with loading overlapped, at any batch", _check_speedup, {
        "no-overlap": "You added loading and compute. Eq. 3.7 assumes the next batch is loaded while this one is "
                      "computed: each side of the ratio is the larger of the two paths, not their sum.",
        "t-c-at-one": "Right on several workers, but on one worker there is no gradient to aggregate: t_c counts "
                      "only when workers > 1.",
        "not-scaled": "The phases in ph were timed at the batch ph['batch']. Reading, copying, forward and backward "
                      "work per sample: scale them by batch / ph['batch'] first (not t_md, t_u or t_c).",
        "no-g-factor": "Your ratio of iteration times is right, but G workers each process a batch per iteration: "
                       "the speedup is G times that ratio (eq. 3.6).",
        "wrong": "Not quite. Try one worker at ph['batch']: S should come out close to 1 (not exactly 1, since "
                 "the printed eq. 3.7 has t_u only above the line and t_md only below). Then check, for each max, "
                 "which of its two paths is the larger.",
    }),
    Exercise("2.3", "serial_fraction", "Amdahl's law inverted: the serial fraction behind a measured speedup",
             _check_serial, {
                 "percentage": "Right shape, 100 times too large: return a fraction between 0 and 1, not a "
                               "percentage.",
                 "parallel-fraction": "That is the part that parallelises (1 − e). The question asks for the "
                                      "serial part.",
                 "efficiency-loss": "1 − S/G is the efficiency lost, not Amdahl's serial fraction. Write Amdahl's "
                                    "law S = 1 / (e + (1 − e)/G) and solve it for e.",
                 "wrong": "Not quite. Start from S = 1 / (e + (1 − e)/G) and solve for e; it must give e = 0 for "
                          "S = G and e = 1 for S = 1.",
             }),
    Exercise("2.4", "load_imbalance", "eq. 3.8: the load imbalance factor of each iteration", _check_lif, {
        "one-number": "You returned one number. The task asks for one LIF per iteration (one per row).",
        "inverted": "Your values are at most 1: the ratio is upside down. A balanced load gives 1 and an "
                    "imbalanced one more than 1.",
        "no-n": "Your values are about 1/N of the expected ones: compare the slowest worker with the average "
                "worker, not with the total of all workers.",
        "max-over-min": "You compared the slowest with the fastest worker. Eq. 3.8 compares the slowest with the "
                        "average: one fast worker should not dominate the factor.",
        "wrong-axis": "You computed along the wrong axis: rows are iterations, columns are workers. The LIF compares "
                      "the workers of one iteration.",
        "wrong": "Not quite. Check a case by hand: workers taking 1, 1 and 2 s in one iteration have LIF 1.5, and "
                 "equal times give exactly 1.",
    }),
)
