"""Unit 4 (Judging a model): reference solutions and typical wrong answers, one section each."""
# %% solution 4.1
import numpy as np


def mape(y, pred):
    """y: measured times, pred: predicted times (1-D arrays); return the MAPE in percent (a float)."""
    y, pred = np.asarray(y, dtype=float), np.asarray(pred, dtype=float)
    return float(100 * np.mean(np.abs(pred - y) / y))
# %% wrong 4.1 fraction
import numpy as np


def mape(y, pred):
    return float(np.mean(np.abs(pred - y) / y))
# %% wrong 4.1 by-prediction
import numpy as np


def mape(y, pred):
    return float(100 * np.mean(np.abs(pred - y) / pred))
# %% wrong 4.1 no-abs
import numpy as np


def mape(y, pred):
    return float(100 * np.mean((pred - y) / y))
# %% wrong 4.1 wrong
import numpy as np


def mape(y, pred):
    return float(100 * np.median(np.abs(pred - y) / y))
# %% solution 4.2
import numpy as np


def r2(y, pred):
    """y: measured times, pred: predicted times (1-D arrays); return R² (a float, at most 1)."""
    y, pred = np.asarray(y, dtype=float), np.asarray(pred, dtype=float)
    return float(1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2))
# %% wrong 4.2 inverted
import numpy as np


def r2(y, pred):
    return float(np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2))
# %% wrong 4.2 corr-squared
import numpy as np


def r2(y, pred):
    return float(np.corrcoef(y, pred)[0, 1] ** 2)
# %% wrong 4.2 biased
import numpy as np


def r2(y, pred):
    return float(1 - np.var(y - pred) / np.var(y))
# %% wrong 4.2 pred-mean
import numpy as np


def r2(y, pred):
    return float(1 - np.sum((y - pred) ** 2) / np.sum((y - pred.mean()) ** 2))
# %% wrong 4.2 wrong
import numpy as np


def r2(y, pred):
    return float(1 - np.sum(np.abs(y - pred)) / np.sum(np.abs(y - y.mean())))
# %% solution 4.3
import math

import numpy as np


def conformal_halfwidth(scores, alpha):
    """scores: n calibration scores; alpha: miscoverage; return the split-conformal quantile (math.inf if none)."""
    s = np.sort(np.asarray(scores, dtype=float))
    rank = math.ceil((len(s) + 1) * (1 - alpha))
    return float(s[rank - 1]) if rank <= len(s) else math.inf
# %% wrong 4.3 no-correction
import numpy as np


def conformal_halfwidth(scores, alpha):
    return float(np.quantile(scores, 1 - alpha))
# %% wrong 4.3 off-by-one
import math

import numpy as np


def conformal_halfwidth(scores, alpha):
    s = np.sort(scores)
    rank = math.ceil((len(s) + 1) * (1 - alpha))
    return float(s[rank]) if rank <= len(s) else math.inf
# %% wrong 4.3 alpha-swapped
import math

import numpy as np


def conformal_halfwidth(scores, alpha):
    s = np.sort(scores)
    rank = math.ceil((len(s) + 1) * alpha)
    return float(s[rank - 1]) if rank <= len(s) else math.inf
# %% wrong 4.3 no-inf
import math

import numpy as np


def conformal_halfwidth(scores, alpha):
    s = np.sort(scores)
    rank = min(math.ceil((len(s) + 1) * (1 - alpha)), len(s))
    return float(s[rank - 1])
# %% wrong 4.3 wrong
import numpy as np


def conformal_halfwidth(scores, alpha):
    return float(np.max(scores))
# %% solution 4.4
import numpy as np


def coverage(lower, upper, y):
    """lower, upper: interval ends; y: measured times (1-D arrays); return the fraction covered (a float)."""
    lower, upper, y = (np.asarray(v, dtype=float) for v in (lower, upper, y))
    return float(np.mean((y >= lower) & (y <= upper)))
# %% wrong 4.4 percent
import numpy as np


def coverage(lower, upper, y):
    return float(100 * np.mean((y >= lower) & (y <= upper)))
# %% wrong 4.4 count
import numpy as np


def coverage(lower, upper, y):
    return int(np.sum((y >= lower) & (y <= upper)))
# %% wrong 4.4 strict
import numpy as np


def coverage(lower, upper, y):
    return float(np.mean((y > lower) & (y < upper)))
# %% wrong 4.4 one-sided
import numpy as np


def coverage(lower, upper, y):
    return float(np.mean(y <= upper))
# %% wrong 4.4 wrong
import numpy as np


def coverage(lower, upper, y):
    return float(np.mean(y[(y >= lower) & (y <= upper)]))
