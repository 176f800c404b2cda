"""Unit 6 (Measure small, predict large): reference solutions and typical wrong answers of exercises 6.1-6.4."""
# %% solution 6.1
import numpy as np


def factor_split(n_gpus):
    """n_gpus: 1-D array of GPU counts (one per row); return (fit, test), two boolean arrays."""
    k = np.asarray(n_gpus)
    values = np.unique(k)
    fit_max = values[values <= k.max() / 4].max()
    return k <= fit_max, k >= 2 * fit_max

# %% wrong 6.1 shape
import numpy as np


def factor_split(n_gpus):
    k = np.asarray(n_gpus)
    values = np.unique(k)
    fit_max = values[values <= k.max() / 4].max()
    return np.flatnonzero(k <= fit_max), np.flatnonzero(k >= 2 * fit_max)  # row numbers, not masks

# %% wrong 6.1 strict
import numpy as np


def factor_split(n_gpus):
    k = np.asarray(n_gpus)
    values = np.unique(k)
    fit_max = values[values <= k.max() / 4].max()
    return k < fit_max, k > 2 * fit_max

# %% wrong 6.1 half-fit
import numpy as np


def factor_split(n_gpus):
    k = np.asarray(n_gpus)
    return k <= k.max() / 2, k >= k.max()

# %% wrong 6.1 no-gap
import numpy as np


def factor_split(n_gpus):
    k = np.asarray(n_gpus)
    values = np.unique(k)
    fit_max = values[values <= k.max() / 4].max()
    return k <= fit_max, k > fit_max

# %% wrong 6.1 half-of-largest
import numpy as np


def factor_split(n_gpus):
    k = np.asarray(n_gpus)
    return k <= k.max() / 4, k >= k.max() / 2

# %% wrong 6.1 wrong
import numpy as np


def factor_split(n_gpus):
    k = np.asarray(n_gpus)
    return k <= np.median(k), k > np.median(k)

# %% solution 6.2
import numpy as np


def extrapolation_distance(k, fit_max):
    """k: array of GPU counts; fit_max: the largest fitted count; return d (an array like k)."""
    return 1.0 + np.log2(np.maximum(np.asarray(k, dtype=float) / fit_max, 1.0))

# %% wrong 6.2 log-base
import numpy as np


def extrapolation_distance(k, fit_max):
    return 1.0 + np.log(np.maximum(np.asarray(k, dtype=float) / fit_max, 1.0))

# %% wrong 6.2 no-one
import numpy as np


def extrapolation_distance(k, fit_max):
    return np.log2(np.maximum(np.asarray(k, dtype=float) / fit_max, 1.0))

# %% wrong 6.2 no-clip
import numpy as np


def extrapolation_distance(k, fit_max):
    return 1.0 + np.log2(np.asarray(k, dtype=float) / fit_max)

# %% wrong 6.2 wrong
import numpy as np


def extrapolation_distance(k, fit_max):
    return np.maximum(np.asarray(k, dtype=float) / fit_max, 1.0)

# %% solution 6.3
import numpy as np


def widened_interval(pred, d, q, kappa):
    """pred, d: arrays; q, kappa: numbers; return (lower, upper), two arrays."""
    w = kappa * q * np.asarray(d, dtype=float)
    pred = np.asarray(pred, dtype=float)
    return pred * np.exp(-w), pred * np.exp(w)

# %% wrong 6.3 shape
import numpy as np


def widened_interval(pred, d, q, kappa):
    w = kappa * q * np.asarray(d, dtype=float)
    return np.asarray(pred) * np.exp(w)  # the upper bound only

# %% wrong 6.3 order
import numpy as np


def widened_interval(pred, d, q, kappa):
    w = kappa * q * np.asarray(d, dtype=float)
    return np.asarray(pred) * np.exp(w), np.asarray(pred) * np.exp(-w)

# %% wrong 6.3 linear
import numpy as np


def widened_interval(pred, d, q, kappa):
    w = kappa * q * np.asarray(d, dtype=float)
    return np.asarray(pred) * (1 - w), np.asarray(pred) * (1 + w)

# %% wrong 6.3 kappa-outside
import numpy as np


def widened_interval(pred, d, q, kappa):
    w = q * np.asarray(d, dtype=float)
    return np.asarray(pred) * np.exp(-w) / kappa, np.asarray(pred) * np.exp(w) * kappa

# %% wrong 6.3 no-kappa
import numpy as np


def widened_interval(pred, d, q, kappa):
    w = q * np.asarray(d, dtype=float)
    return np.asarray(pred) * np.exp(-w), np.asarray(pred) * np.exp(w)

# %% wrong 6.3 no-distance
import numpy as np


def widened_interval(pred, d, q, kappa):
    pred = np.asarray(pred, dtype=float)
    return pred * np.exp(-kappa * q), pred * np.exp(kappa * q)

# %% wrong 6.3 wrong
import numpy as np


def widened_interval(pred, d, q, kappa):
    w = kappa * q * np.asarray(d, dtype=float)
    return np.asarray(pred) * np.exp(-w / 2), np.asarray(pred) * np.exp(w / 2)

# %% solution 6.4
import math

import numpy as np


def conformal_kappa(ratios, alpha):
    """ratios: 1-D array of n ratios; alpha: miscoverage; return kappa (a float)."""
    v = np.sort(np.asarray(ratios, dtype=float))
    rank = math.ceil((len(v) + 1) * (1 - alpha))
    return float(v[min(rank, len(v)) - 1])

# %% wrong 6.4 plain-quantile
import numpy as np


def conformal_kappa(ratios, alpha):
    return float(np.quantile(ratios, 1 - alpha))

# %% wrong 6.4 alpha
import math

import numpy as np


def conformal_kappa(ratios, alpha):
    v = np.sort(np.asarray(ratios, dtype=float))
    rank = math.ceil((len(v) + 1) * alpha)
    return float(v[rank - 1])

# %% wrong 6.4 off-by-one
import math

import numpy as np


def conformal_kappa(ratios, alpha):
    v = np.sort(np.asarray(ratios, dtype=float))
    rank = math.ceil((len(v) + 1) * (1 - alpha))
    return float(v[min(rank, len(v) - 1)])

# %% wrong 6.4 unsorted
import math

import numpy as np


def conformal_kappa(ratios, alpha):
    v = np.asarray(ratios, dtype=float)
    rank = math.ceil((len(v) + 1) * (1 - alpha))
    return float(v[min(rank, len(v)) - 1])

# %% wrong 6.4 no-cap
import math

import numpy as np


def conformal_kappa(ratios, alpha):
    v = np.sort(np.asarray(ratios, dtype=float))
    rank = math.ceil((len(v) + 1) * (1 - alpha))
    return float(v[rank - 1])

# %% wrong 6.4 wrong
import numpy as np


def conformal_kappa(ratios, alpha):
    return float(np.mean(ratios) + np.std(ratios))
