"""Unit 7, Measure your own machine: reference solutions and typical wrong answers (each must get its hint)."""
# %% solution 7.1
import math


def measured_speedups(phases, n_train):
    """phases: phased rows of one model (ch3_phases.csv columns); return {workers: measured speedup}."""
    per_iter = phases.groupby(["workers", "iteration"])["t_iter"].max()  # the slowest rank sets the pace
    t_iter = per_iter.groupby("workers").mean()
    b = int(phases["batch_size"].iloc[0])
    epoch = {int(g): math.ceil(n_train / (b * g)) * t for g, t in t_iter.items()}
    return {g: epoch[1] / e for g, e in epoch.items()}
# %% wrong 7.1 no-steps
def measured_speedups(phases, n_train):
    t_iter = phases.groupby(["workers", "iteration"])["t_iter"].max().groupby("workers").mean()
    return {int(g): t_iter[1] / t for g, t in t_iter.items()}
# %% wrong 7.1 mean-ranks
import math


def measured_speedups(phases, n_train):
    t_iter = phases.groupby("workers")["t_iter"].mean()  # every rank, not the slowest
    b = int(phases["batch_size"].iloc[0])
    epoch = {int(g): math.ceil(n_train / (b * g)) * t for g, t in t_iter.items()}
    return {g: epoch[1] / e for g, e in epoch.items()}
# %% wrong 7.1 inverted
import math


def measured_speedups(phases, n_train):
    t_iter = phases.groupby(["workers", "iteration"])["t_iter"].max().groupby("workers").mean()
    b = int(phases["batch_size"].iloc[0])
    epoch = {int(g): math.ceil(n_train / (b * g)) * t for g, t in t_iter.items()}
    return {g: e / epoch[1] for g, e in epoch.items()}
# %% wrong 7.1 ceil
def measured_speedups(phases, n_train):
    t_iter = phases.groupby(["workers", "iteration"])["t_iter"].max().groupby("workers").mean()
    b = int(phases["batch_size"].iloc[0])
    epoch = {int(g): n_train / (b * g) * t for g, t in t_iter.items()}
    return {g: epoch[1] / e for g, e in epoch.items()}
# %% wrong 7.1 keys
import math


def measured_speedups(phases, n_train):
    t_iter = phases.groupby(["workers", "iteration"])["t_iter"].max().groupby("workers").mean()
    b = int(phases["batch_size"].iloc[0])
    epoch = {int(g): math.ceil(n_train / (b * g)) * t for g, t in t_iter.items()}
    return {g: epoch[1] / e for g, e in epoch.items() if g > 1}  # the one-worker entry is missing
# %% wrong 7.1 wrong
def measured_speedups(phases, n_train):
    return {int(g): float(g) for g in sorted(phases["workers"].unique())}  # ideal, not measured
# %% solution 7.2
import numpy as np


def workers_exponent(workers, epoch_times):
    """workers, epoch_times: 1-D arrays; return q of epoch_time ∝ workers**q (least squares in log-log)."""
    return float(np.polyfit(np.log(workers), np.log(epoch_times), 1)[0])
# %% wrong 7.2 sign
import numpy as np


def workers_exponent(workers, epoch_times):
    return float(np.polyfit(np.log(workers), -np.log(epoch_times), 1)[0])
# %% wrong 7.2 linear
import numpy as np


def workers_exponent(workers, epoch_times):
    return float(np.polyfit(workers, epoch_times, 1)[0])
# %% wrong 7.2 swapped
import numpy as np


def workers_exponent(workers, epoch_times):
    return float(np.polyfit(np.log(epoch_times), np.log(workers), 1)[0])
# %% wrong 7.2 wrong
import numpy as np


def workers_exponent(workers, epoch_times):
    g, t = np.asarray(workers, dtype=float), np.asarray(epoch_times, dtype=float)
    return float(np.log(t[-1] / t[0]) / np.log(g[-1] / g[0]))  # two points only
