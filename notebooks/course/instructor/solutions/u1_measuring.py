"""Unit 1, Measuring a training step: reference solutions and typical wrong answers (each must get its hint)."""
# %% solution 1.1
import numpy as np


def steady_step_time(times, warmup):
    """times: 1-D array of step times (s); warmup: steps to drop at the start; return the steady-state step time."""
    return float(np.median(np.asarray(times, dtype=float)[warmup:]))
# %% wrong 1.1 mean
import numpy as np


def steady_step_time(times, warmup):
    return float(np.mean(np.asarray(times, dtype=float)[warmup:]))
# %% wrong 1.1 warmup
import numpy as np


def steady_step_time(times, warmup):
    return float(np.median(times))
# %% wrong 1.1 off-by-one
import numpy as np


def steady_step_time(times, warmup):
    return float(np.median(np.asarray(times, dtype=float)[warmup + 1:]))
# %% wrong 1.1 wrong
import numpy as np


def steady_step_time(times, warmup):
    return float(np.min(np.asarray(times, dtype=float)[warmup:]))
# %% solution 1.2
import numpy as np


def lag1_autocorrelation(times):
    """times: 1-D array of step times (s); return the lag-1 autocorrelation (a float)."""
    x = np.asarray(times, dtype=float)
    e = x - x.mean()
    return float(e[1:] @ e[:-1] / (e @ e))
# %% wrong 1.2 no-mean
import numpy as np


def lag1_autocorrelation(times):
    x = np.asarray(times, dtype=float)
    return float(x[1:] @ x[:-1] / (x @ x))
# %% wrong 1.2 lag0
import numpy as np


def lag1_autocorrelation(times):
    x = np.asarray(times, dtype=float)
    e = x - x.mean()
    return float(e @ e / (e @ e))
# %% wrong 1.2 wrong
import numpy as np


def lag1_autocorrelation(times):
    x = np.asarray(times, dtype=float)
    e = x - x.mean()
    return float(e[2:] @ e[:-2] / (e @ e))  # lag 2, not lag 1
# %% solution 1.3
import numpy as np


def block_bootstrap_ci(times, block, b, seed):
    """times: 1-D array of step times; return (lower, upper) of the 95 % moving-block bootstrap interval of the mean."""
    x = np.asarray(times, dtype=float)
    n = len(x)
    k = -(-n // block)  # blocks per resample, rounded up
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, n - block + 1, size=(b, k))
    idx = (starts[:, :, None] + np.arange(block)).reshape(b, k * block)[:, :n]
    means = x[idx].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))
# %% wrong 1.3 iid
import numpy as np


def block_bootstrap_ci(times, block, b, seed):
    x = np.asarray(times, dtype=float)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(b, len(x)))].mean(axis=1)  # single steps, not blocks
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))
# %% wrong 1.3 spread-of-steps
import numpy as np


def block_bootstrap_ci(times, block, b, seed):
    x = np.asarray(times, dtype=float)
    n = len(x)
    k = -(-n // block)
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, n - block + 1, size=(b, k))
    idx = (starts[:, :, None] + np.arange(block)).reshape(b, k * block)[:, :n]
    values = x[idx].ravel()  # percentiles of the steps, not of the resample means
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))
# %% wrong 1.3 shape
import numpy as np


def block_bootstrap_ci(times, block, b, seed):
    x = np.asarray(times, dtype=float)
    n = len(x)
    k = -(-n // block)
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, n - block + 1, size=(b, k))
    idx = (starts[:, :, None] + np.arange(block)).reshape(b, k * block)[:, :n]
    return x[idx].mean(axis=1)  # the resample means, not the interval
# %% wrong 1.3 wrong
import numpy as np


def block_bootstrap_ci(times, block, b, seed):
    x = np.asarray(times, dtype=float)
    h = 1.0 * x.std(ddof=1) / np.sqrt(len(x))  # a 68 % interval, and naive
    return float(x.mean() - h), float(x.mean() + h)
# %% solution 1.4
import math

import numpy as np


def repeats_needed(run_means, rel_half_width):
    """run_means: 1-D array of pilot run means (s); rel_half_width: target as a fraction; return a number of runs."""
    m = np.asarray(run_means, dtype=float)
    cv = m.std(ddof=1) / m.mean()
    return math.ceil((1.96 * cv / rel_half_width) ** 2)
# %% wrong 1.4 ddof
import math

import numpy as np


def repeats_needed(run_means, rel_half_width):
    m = np.asarray(run_means, dtype=float)
    return math.ceil((1.96 * m.std() / m.mean() / rel_half_width) ** 2)
# %% wrong 1.4 no-square
import math

import numpy as np


def repeats_needed(run_means, rel_half_width):
    m = np.asarray(run_means, dtype=float)
    return math.ceil(1.96 * m.std(ddof=1) / m.mean() / rel_half_width)
# %% wrong 1.4 percent
import math

import numpy as np


def repeats_needed(run_means, rel_half_width):
    m = np.asarray(run_means, dtype=float)
    cv_percent = 100 * m.std(ddof=1) / m.mean()
    return math.ceil((1.96 * cv_percent / rel_half_width) ** 2)
# %% wrong 1.4 round-down
import math

import numpy as np


def repeats_needed(run_means, rel_half_width):
    m = np.asarray(run_means, dtype=float)
    return math.floor((1.96 * m.std(ddof=1) / m.mean() / rel_half_width) ** 2)
# %% wrong 1.4 wrong
import math

import numpy as np


def repeats_needed(run_means, rel_half_width):
    m = np.asarray(run_means, dtype=float)
    return math.ceil((1.96 * m.std(ddof=1) / rel_half_width) ** 2)  # forgot to divide by the mean
