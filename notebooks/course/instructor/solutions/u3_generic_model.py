"""Unit 3 · Fitting the generic performance model: reference solutions and typical wrong answers."""
# %% solution 3.1
import numpy as np


def generic_time(I, E, a, p, q, C):
    """Eq. 4.4: I (N, n_I), E (N, n_E), a and p (n_I,), q (n_E,), C a number; return the N times (1-D array)."""
    I, E = np.asarray(I, dtype=float), np.asarray(E, dtype=float)
    intrinsic = (np.asarray(a) * I ** np.asarray(p)).sum(axis=1)
    scaling = (E ** np.asarray(q)).prod(axis=1)
    return intrinsic * scaling + C

# %% wrong 3.1 shape
import numpy as np


def generic_time(I, E, a, p, q, C):
    intrinsic = (a * I ** p).sum(axis=0)  # summed over the configurations
    return intrinsic * (E ** q).prod(axis=0).sum() + C

# %% wrong 3.1 extrinsic-added
import numpy as np


def generic_time(I, E, a, p, q, C):
    return (a * I ** p).sum(axis=1) + (E ** q).prod(axis=1) + C

# %% wrong 3.1 extrinsic-summed
import numpy as np


def generic_time(I, E, a, p, q, C):
    return (a * I ** p).sum(axis=1) * (E ** q).sum(axis=1) + C

# %% wrong 3.1 c-scaled
import numpy as np


def generic_time(I, E, a, p, q, C):
    return ((a * I ** p).sum(axis=1) + C) * (E ** q).prod(axis=1)

# %% wrong 3.1 wrong
import numpy as np


def generic_time(I, E, a, p, q, C):
    return (a * I ** p).sum(axis=1) * (E ** -q).prod(axis=1) + C  # a sign slip in the extrinsic powers

# %% solution 3.2
import numpy as np


def regularised_cost(t, t_hat, x, lam, penalty):
    """Eq. 4.9 plus lam times the L1 (eq. 4.11) or L2 (eq. 4.12) penalty of x without C; a float."""
    t, t_hat, x = (np.asarray(v, dtype=float) for v in (t, t_hat, x))
    params = x[:-1]  # every parameter but C
    size = np.sum(np.abs(params)) if penalty == "l1" else np.sum(params ** 2)
    return float(np.mean(np.abs(t - t_hat)) + lam * size)

# %% wrong 3.2 penalised-c
import numpy as np


def regularised_cost(t, t_hat, x, lam, penalty):
    size = np.sum(np.abs(x)) if penalty == "l1" else np.sum(np.asarray(x) ** 2)
    return float(np.mean(np.abs(t - t_hat)) + lam * size)

# %% wrong 3.2 l1-l2-swapped
import numpy as np


def regularised_cost(t, t_hat, x, lam, penalty):
    params = np.asarray(x[:-1])
    size = np.sum(params ** 2) if penalty == "l1" else np.sum(np.abs(params))
    return float(np.mean(np.abs(t - t_hat)) + lam * size)

# %% wrong 3.2 squared-error
import numpy as np


def regularised_cost(t, t_hat, x, lam, penalty):
    params = np.asarray(x[:-1])
    size = np.sum(np.abs(params)) if penalty == "l1" else np.sum(params ** 2)
    return float(np.mean((t - t_hat) ** 2) + lam * size)

# %% wrong 3.2 relative-error
import numpy as np


def regularised_cost(t, t_hat, x, lam, penalty):
    params = np.asarray(x[:-1])
    size = np.sum(np.abs(params)) if penalty == "l1" else np.sum(params ** 2)
    return float(np.mean(np.abs(t - t_hat) / t) + lam * size)

# %% wrong 3.2 sum-not-mean
import numpy as np


def regularised_cost(t, t_hat, x, lam, penalty):
    params = np.asarray(x[:-1])
    size = np.sum(np.abs(params)) if penalty == "l1" else np.sum(params ** 2)
    return float(np.sum(np.abs(t - t_hat)) + lam * size)

# %% wrong 3.2 wrong
import numpy as np


def regularised_cost(t, t_hat, x, lam, penalty):
    params = np.asarray(x[:-1])
    size = np.sum(np.abs(params)) if penalty == "l1" else np.sqrt(np.sum(params ** 2))  # a norm, not its square
    return float(np.mean(np.abs(t - t_hat)) + lam * size)

# %% solution 3.3
import numpy as np


def de_step(pop, cost, i, r1, r2, r3, F, CR, u, j_rand):
    """One DE/rand/1/bin step for member i; return its vector in the next generation."""
    pop = np.asarray(pop, dtype=float)
    mutant = pop[r1] + F * (pop[r2] - pop[r3])
    take = (np.asarray(u) < CR) | (np.arange(pop.shape[1]) == j_rand)
    trial = np.where(take, mutant, pop[i])
    return trial if cost(trial) <= cost(pop[i]) else pop[i].copy()

# %% wrong 3.3 no-jrand
import numpy as np


def de_step(pop, cost, i, r1, r2, r3, F, CR, u, j_rand):
    mutant = pop[r1] + F * (pop[r2] - pop[r3])
    trial = np.where(np.asarray(u) < CR, mutant, pop[i])
    return trial if cost(trial) <= cost(pop[i]) else pop[i]

# %% wrong 3.3 crossover-inverted
import numpy as np


def de_step(pop, cost, i, r1, r2, r3, F, CR, u, j_rand):
    mutant = pop[r1] + F * (pop[r2] - pop[r3])
    take = (np.asarray(u) >= CR) | (np.arange(pop.shape[1]) == j_rand)
    trial = np.where(take, mutant, pop[i])
    return trial if cost(trial) <= cost(pop[i]) else pop[i]

# %% wrong 3.3 no-selection
import numpy as np


def de_step(pop, cost, i, r1, r2, r3, F, CR, u, j_rand):
    mutant = pop[r1] + F * (pop[r2] - pop[r3])
    take = (np.asarray(u) < CR) | (np.arange(pop.shape[1]) == j_rand)
    return np.where(take, mutant, pop[i])

# %% wrong 3.3 base-is-target
import numpy as np


def de_step(pop, cost, i, r1, r2, r3, F, CR, u, j_rand):
    mutant = pop[i] + F * (pop[r2] - pop[r3])
    take = (np.asarray(u) < CR) | (np.arange(pop.shape[1]) == j_rand)
    trial = np.where(take, mutant, pop[i])
    return trial if cost(trial) <= cost(pop[i]) else pop[i]

# %% wrong 3.3 wrong
import numpy as np


def de_step(pop, cost, i, r1, r2, r3, F, CR, u, j_rand):
    mutant = pop[r1] + F * (pop[r2] - pop[r3])
    return mutant if cost(mutant) <= cost(pop[i]) else pop[i]  # no crossover at all

# %% solution 3.4
import numpy as np
import pandas as pd


def identifiable_constants(X, columns):
    """The number of independent combinations of the level constants of `columns` that the rows of X determine."""
    indicators = pd.get_dummies(X[list(columns)].astype(str)).to_numpy(dtype=float)
    return int(np.linalg.matrix_rank(indicators))

# %% wrong 3.4 counted-columns
import pandas as pd


def identifiable_constants(X, columns):
    return int(pd.get_dummies(X[list(columns)].astype(str)).shape[1])

# %% wrong 3.4 drop-first
import numpy as np
import pandas as pd


def identifiable_constants(X, columns):
    indicators = pd.get_dummies(X[list(columns)].astype(str), drop_first=True).to_numpy(dtype=float)
    return int(np.linalg.matrix_rank(indicators))

# %% wrong 3.4 formula-not-data
def identifiable_constants(X, columns):
    levels = [X[c].nunique() for c in columns]
    return sum(levels) - len(levels) + 1

# %% wrong 3.4 wrong
def identifiable_constants(X, columns):
    return max(X[c].nunique() for c in columns)
