"""Unit 5 (Beyond the thesis): reference solutions and typical wrong answers, one section each."""
# %% solution 5.1
import numpy as np


def fit_loglinear(X, t):
    """X: n × k positive features; t: n positive times; return β (k+1 values, intercept first)."""
    X, t = np.asarray(X, dtype=float), np.asarray(t, dtype=float)
    A = np.column_stack([np.ones(len(X)), np.log(X)])
    return np.linalg.lstsq(A, np.log(t), rcond=None)[0]
# %% wrong 5.1 no-intercept
import numpy as np


def fit_loglinear(X, t):
    return np.linalg.lstsq(np.log(X), np.log(t), rcond=None)[0]
# %% wrong 5.1 linear-target
import numpy as np


def fit_loglinear(X, t):
    A = np.column_stack([np.ones(len(X)), np.log(X)])
    return np.linalg.lstsq(A, t, rcond=None)[0]
# %% wrong 5.1 log10
import numpy as np


def fit_loglinear(X, t):
    A = np.column_stack([np.ones(len(X)), np.log10(X)])
    return np.linalg.lstsq(A, np.log10(t), rcond=None)[0]
# %% wrong 5.1 raw-features
import numpy as np


def fit_loglinear(X, t):
    A = np.column_stack([np.ones(len(X)), X])
    return np.linalg.lstsq(A, np.log(t), rcond=None)[0]
# %% wrong 5.1 wrong
import numpy as np


def fit_loglinear(X, t):
    A = np.column_stack([np.ones(len(X)), np.log(X)])
    return np.linalg.lstsq(A[:10], np.log(t)[:10], rcond=None)[0]
# %% solution 5.2
import numpy as np


def predict_loglinear(beta, X):
    """beta: k+1 coefficients (intercept first); X: n × k positive features; return n predicted times."""
    beta, X = np.asarray(beta, dtype=float), np.asarray(X, dtype=float)
    return np.exp(beta[0] + np.log(X) @ beta[1:])
# %% wrong 5.2 no-exp
import numpy as np


def predict_loglinear(beta, X):
    return beta[0] + np.log(X) @ beta[1:]
# %% wrong 5.2 log10-mix
import numpy as np


def predict_loglinear(beta, X):
    return 10 ** (beta[0] + np.log(X) @ beta[1:])
# %% wrong 5.2 no-intercept
import numpy as np


def predict_loglinear(beta, X):
    return np.exp(np.log(X) @ beta[1:])
# %% wrong 5.2 wrong
import numpy as np


def predict_loglinear(beta, X):
    return np.exp(beta[0]) + np.log(X) @ beta[1:]
# %% solution 5.3
import numpy as np


def growth_ratio(batch, times, lo, hi):
    """batch, times: 1-D arrays; return geomean(times at batch == hi) / geomean(times at batch == lo)."""
    batch, times = np.asarray(batch), np.asarray(times, dtype=float)
    return float(np.exp(np.log(times[batch == hi]).mean() - np.log(times[batch == lo]).mean()))
# %% wrong 5.3 inverted
import numpy as np


def growth_ratio(batch, times, lo, hi):
    return float(np.exp(np.log(times[batch == lo]).mean() - np.log(times[batch == hi]).mean()))
# %% wrong 5.3 arithmetic
import numpy as np


def growth_ratio(batch, times, lo, hi):
    return float(times[batch == hi].mean() / times[batch == lo].mean())
# %% wrong 5.3 log-ratio
import numpy as np


def growth_ratio(batch, times, lo, hi):
    return float(np.log(times[batch == hi]).mean() - np.log(times[batch == lo]).mean())
# %% wrong 5.3 wrong
import numpy as np


def growth_ratio(batch, times, lo, hi):
    return float(np.median(times[batch == hi]) / np.median(times[batch == lo]))
# %% solution 5.4
import numpy as np


def interaction_design(X, i, j):
    """X: n × k positive features; return [1, log x_1 … log x_k, log x_i · log x_j] (n × (k+2))."""
    L = np.log(np.asarray(X, dtype=float))
    return np.column_stack([np.ones(len(L)), L, L[:, i] * L[:, j]])
# %% wrong 5.4 log-of-product
import numpy as np


def interaction_design(X, i, j):
    L = np.log(X)
    return np.column_stack([np.ones(len(L)), L, np.log(X[:, i] * X[:, j])])
# %% wrong 5.4 raw-product
import numpy as np


def interaction_design(X, i, j):
    L = np.log(X)
    return np.column_stack([np.ones(len(L)), L, X[:, i] * X[:, j]])
# %% wrong 5.4 no-intercept
import numpy as np


def interaction_design(X, i, j):
    L = np.log(X)
    return np.column_stack([L, L[:, i] * L[:, j]])
# %% wrong 5.4 wrong
import numpy as np


def interaction_design(X, i, j):
    L = np.log(X)
    return np.column_stack([np.ones(len(L)), L, L[:, i] * L[:, i]])
