"""Unit 2 · The S-SGD phase model and speedup: reference solutions and typical wrong answers."""
# %% solution 2.1
import numpy as np


def iteration_time(ph):
    """ph: dict of phase times (s), t_f/t_b/t_c per worker or scalar; return eq. 3.3's t_iter (a float)."""
    busy = np.asarray(ph["t_f"], dtype=float) + np.asarray(ph["t_b"], dtype=float) + np.asarray(ph["t_c"],
                                                                                                  dtype=float)
    return float(ph["t_io"] + ph["t_h2d"] + ph["t_md"] + np.max(busy) + ph["t_u"])

# %% wrong 2.1 max-per-phase
import numpy as np


def iteration_time(ph):
    slowest = np.max(ph["t_f"]) + np.max(ph["t_b"]) + np.max(ph["t_c"])
    return float(ph["t_io"] + ph["t_h2d"] + ph["t_md"] + slowest + ph["t_u"])

# %% wrong 2.1 mean-over-workers
import numpy as np


def iteration_time(ph):
    busy = np.asarray(ph["t_f"]) + np.asarray(ph["t_b"]) + np.asarray(ph["t_c"])
    return float(ph["t_io"] + ph["t_h2d"] + ph["t_md"] + np.mean(busy) + ph["t_u"])

# %% wrong 2.1 sum-over-workers
import numpy as np


def iteration_time(ph):
    busy = np.asarray(ph["t_f"]) + np.asarray(ph["t_b"]) + np.asarray(ph["t_c"])
    return float(ph["t_io"] + ph["t_h2d"] + ph["t_md"] + np.sum(busy) + ph["t_u"])

# %% wrong 2.1 forgot-md
import numpy as np


def iteration_time(ph):
    busy = np.asarray(ph["t_f"]) + np.asarray(ph["t_b"]) + np.asarray(ph["t_c"])
    return float(ph["t_io"] + ph["t_h2d"] + np.max(busy) + ph["t_u"])

# %% wrong 2.1 wrong
import numpy as np


def iteration_time(ph):
    busy = np.asarray(ph["t_f"]) + np.asarray(ph["t_b"])  # forgot the aggregation
    return float(ph["t_io"] + ph["t_h2d"] + ph["t_md"] + np.max(busy) + ph["t_u"])

# %% solution 2.2
def speedup(ph, workers, batch, t_c):
    """Eq. 3.7's speedup (a float) on `workers` workers at per-worker batch `batch`, aggregation time t_c (s)."""
    scale = batch / ph["batch"]
    t_io, t_h2d, t_f, t_b = (ph[p] * scale for p in ("t_io", "t_h2d", "t_f", "t_b"))
    t_c = t_c if workers > 1 else 0.0
    above = max(t_io + t_h2d, t_f + t_b + ph["t_u"])
    below = max(t_io + t_h2d + ph["t_md"], t_f + t_b + t_c)
    return workers * above / below

# %% wrong 2.2 no-overlap
def speedup(ph, workers, batch, t_c):
    scale = batch / ph["batch"]
    t_io, t_h2d, t_f, t_b = (ph[p] * scale for p in ("t_io", "t_h2d", "t_f", "t_b"))
    t_c = t_c if workers > 1 else 0.0
    return workers * (t_io + t_h2d + t_f + t_b + ph["t_u"]) / (t_io + t_h2d + ph["t_md"] + t_f + t_b + t_c)

# %% wrong 2.2 t-c-at-one
def speedup(ph, workers, batch, t_c):
    scale = batch / ph["batch"]
    t_io, t_h2d, t_f, t_b = (ph[p] * scale for p in ("t_io", "t_h2d", "t_f", "t_b"))
    above = max(t_io + t_h2d, t_f + t_b + ph["t_u"])
    below = max(t_io + t_h2d + ph["t_md"], t_f + t_b + t_c)
    return workers * above / below

# %% wrong 2.2 not-scaled
def speedup(ph, workers, batch, t_c):
    t_c = t_c if workers > 1 else 0.0
    above = max(ph["t_io"] + ph["t_h2d"], ph["t_f"] + ph["t_b"] + ph["t_u"])
    below = max(ph["t_io"] + ph["t_h2d"] + ph["t_md"], ph["t_f"] + ph["t_b"] + t_c)
    return workers * above / below

# %% wrong 2.2 no-g-factor
def speedup(ph, workers, batch, t_c):
    scale = batch / ph["batch"]
    t_io, t_h2d, t_f, t_b = (ph[p] * scale for p in ("t_io", "t_h2d", "t_f", "t_b"))
    t_c = t_c if workers > 1 else 0.0
    return max(t_io + t_h2d, t_f + t_b + ph["t_u"]) / max(t_io + t_h2d + ph["t_md"], t_f + t_b + t_c)

# %% wrong 2.2 wrong
def speedup(ph, workers, batch, t_c):
    scale = batch / ph["batch"]
    t_io, t_h2d, t_f, t_b = (ph[p] * scale for p in ("t_io", "t_h2d", "t_f", "t_b"))
    t_c = t_c if workers > 1 else 0.0
    above = max(t_io + t_h2d, t_f + t_b + ph["t_u"])
    below = max(t_io + t_h2d + ph["t_md"], t_f + t_b + t_c)
    return workers * below / above  # the ratio upside down

# %% solution 2.3
import numpy as np


def serial_fraction(measured, workers):
    """Amdahl's serial fraction e (array) behind the measured ratio `measured` on `workers` workers."""
    s = np.asarray(measured, dtype=float)
    g = np.asarray(workers, dtype=float)
    return (1 / s - 1 / g) / (1 - 1 / g)

# %% wrong 2.3 percentage
import numpy as np


def serial_fraction(measured, workers):
    s, g = np.asarray(measured, dtype=float), np.asarray(workers, dtype=float)
    return 100 * (1 / s - 1 / g) / (1 - 1 / g)

# %% wrong 2.3 parallel-fraction
import numpy as np


def serial_fraction(measured, workers):
    s, g = np.asarray(measured, dtype=float), np.asarray(workers, dtype=float)
    return 1 - (1 / s - 1 / g) / (1 - 1 / g)

# %% wrong 2.3 efficiency-loss
import numpy as np


def serial_fraction(measured, workers):
    return 1 - np.asarray(measured, dtype=float) / np.asarray(workers, dtype=float)

# %% wrong 2.3 wrong
import numpy as np


def serial_fraction(measured, workers):
    s, g = np.asarray(measured, dtype=float), np.asarray(workers, dtype=float)
    return (g / s - 1) / g  # solved for e with a slip

# %% solution 2.4
import numpy as np


def load_imbalance(times):
    """times: (iterations, workers) array of busy times (s); return eq. 3.8's LIF of each iteration (1-D)."""
    times = np.asarray(times, dtype=float)
    return times.shape[1] * times.max(axis=1) / times.sum(axis=1)

# %% wrong 2.4 one-number
import numpy as np


def load_imbalance(times):
    times = np.asarray(times, dtype=float)
    return float(np.mean(times.shape[1] * times.max(axis=1) / times.sum(axis=1)))

# %% wrong 2.4 inverted
import numpy as np


def load_imbalance(times):
    times = np.asarray(times, dtype=float)
    return times.mean(axis=1) / times.max(axis=1)

# %% wrong 2.4 no-n
import numpy as np


def load_imbalance(times):
    times = np.asarray(times, dtype=float)
    return times.max(axis=1) / times.sum(axis=1)

# %% wrong 2.4 max-over-min
import numpy as np


def load_imbalance(times):
    times = np.asarray(times, dtype=float)
    return times.max(axis=1) / times.min(axis=1)

# %% wrong 2.4 wrong-axis
import numpy as np


def load_imbalance(times):
    times = np.asarray(times, dtype=float)
    return times.shape[0] * times.max(axis=0) / times.sum(axis=0)

# %% wrong 2.4 wrong
import numpy as np


def load_imbalance(times):
    times = np.asarray(times, dtype=float)
    return times.max(axis=1) / np.median(times, axis=1)
