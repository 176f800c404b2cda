"""Step-time models of data-parallel training: compute, gradient synchronisation and their overlap.

Two scikit-learn regressors of the time of one training iteration (``t_iter``, seconds) from the
configuration alone: the number of GPUs (replicas) K, the number of nodes N they sit on, and the
per-GPU batch m. Both write themselves out (:meth:`formula`, :meth:`summary`) and save themselves as
JSON through :mod:`perfkit.model.persist`.

:class:`PolluxStepModel` re-implements the throughput model of Pollux (Qiao et al., OSDI 2021, §3.2)
from the paper's equations:

.. math::
    T_{grad} = \\alpha_g + \\beta_g m,\\quad
    T_{sync} = \\begin{cases} 0 & K = 1\\\\ \\alpha_l + \\beta_l (K-2) & N = 1\\\\
                              \\alpha_n + \\beta_n (K-2) & N > 1 \\end{cases},\\quad
    T_{iter} = (T_{grad}^\\gamma + T_{sync}^\\gamma)^{1/\\gamma}

fitted, as Pollux does, on the logarithm of the step time (relative errors), every parameter >= 0 and
1 <= γ <= 10.

:class:`PhaseAwareStepModel` has the same overlap law but fits the parts jointly with the measured
phases: the compute time T_grad = a + b·m is tied to the measured compute time of each row (step time
less the measured synchronisation time, ``sync_column``: **read in fit only**, never in predict), and
the multi-node synchronisation time follows one of :data:`SYNC_FORMS`, α_n + Σ β_j φ_j(K):
``"linear"`` (Pollux's K − 2), ``"log"`` (ln K: the latency of a tree all-reduce, NCCL's inter-node
algorithm), ``"sqrt"``, ``"ring"`` (2(K−1)/K bandwidth + (K−1) hop latency of a ring) and
``"ringlog"`` (ring bandwidth + tree latency), plus by default a node slope β_N·(N − 2) (``node_slope``: at
the same K, more nodes, more slow links). Residuals are relative (log) and a robust loss
(``loss``, scale ``f_scale``) keeps noisy cloud rows from dominating. Which form and loss to use is
a choice for an inner extrapolation split (:func:`perfkit.model.uncertainty.extrapolation.select_by_extrapolation`).
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from ..._checks import check_number
from ..base import PerformanceForm
from ..uncertainty.ranges import check_saved_ranges, column_ranges
from ..roles import count_column, record_roles
from ..validation import first_bad_row, missing_column_error, numeric_column, plain_value, validate_target

__all__ = ["PolluxStepModel", "PhaseAwareStepModel", "SYNC_FORMS", "LOSSES", "step_columns", "overlap"]

#: multi-node synchronisation forms of :class:`PhaseAwareStepModel` → names of their basis terms φ_j(K)
SYNC_FORMS = {"linear": ("K-2",), "log": ("ln K",), "sqrt": ("sqrt K",), "ring": ("2(K-1)/K", "K-1"),
              "ringlog": ("2(K-1)/K", "ln K")}
#: robust losses of :func:`scipy.optimize.least_squares` on the log residuals
LOSSES = ("linear", "soft_l1", "huber", "cauchy")
_GAMMA_MAX = 10.0
#: :class:`PhaseAwareStepModel`: the largest ``sync_weight`` and the range of ``f_scale`` (log units) accepted; beyond
#: them the weighted residuals overflow or the robust loss underflows
MAX_SYNC_WEIGHT = 1e3
F_SCALE_RANGE = (1e-6, 100.0)
_GAMMA_STARTS = (1.0, 2.0, 4.0)
#: square root of the ridge on the parameters (γ excluded, in units of the median step time): where the fit rows
#: leave a direction free (e.g. the multi-node synchronisation when every multi-node row has 2-4 GPUs), equally
#: good solutions differ in their extrapolation, and which one an optimiser stops at depends on the last bits of
#: the BLAS; the ridge picks the smallest, the same on every CPU, and costs the data fit nothing measurable
_RIDGE_ROOT = 1e-2


def _basis(form: str, K) -> np.ndarray:
    """The terms φ_j(K) of a synchronisation form (one column each)."""
    K = np.asarray(K, dtype=float)
    terms = {"linear": [np.maximum(K - 2.0, 0.0)], "log": [np.log(K)], "sqrt": [np.sqrt(K)],
             "ring": [2.0 * (K - 1.0) / K, K - 1.0], "ringlog": [2.0 * (K - 1.0) / K, np.log(K)]}[form]
    return np.column_stack(terms)


def step_columns(X, gpus: str, nodes: str, batch: str):
    """(K, N, m) as float arrays from ``X``: K and N whole numbers >= 1 with N <= K, m finite and > 0; one
    ``ValueError`` naming the column (and the row) otherwise."""
    import pandas as pd

    if not isinstance(X, pd.DataFrame):
        raise ValueError(f"X: expected a pandas DataFrame, got {type(X).__name__}")
    if len(X) == 0:
        raise ValueError("X: the table is empty (0 rows)")
    for role, col in (("gpus", gpus), ("nodes", nodes), ("batch", batch)):
        if col not in X.columns:
            raise missing_column_error(X, col, role)
    K, N = count_column(X, gpus, "gpus"), count_column(X, nodes, "nodes")
    m = numeric_column(X, batch, "batch")
    at = first_bad_row(~(np.isfinite(m) & (m > 0)), X.index)
    if at:
        raise ValueError(f"column {batch!r}: value {m[at[0]]:g} in row {at[1]!r} is not a finite number > 0 (a per-GPU "
                         "batch)")
    over = N > K
    if over.any():
        pos = int(np.flatnonzero(over)[0])
        raise ValueError(f"column {nodes!r}: {N[pos]:g} nodes in row {plain_value(X.index[pos])!r} exceed its "
                         f"{K[pos]:g} GPUs (column {gpus!r})")
    return K, N, m


def overlap(tg, ts, gamma):
    """(T_grad^γ + T_sync^γ)^(1/γ), computed stably (scaled by the larger part)."""
    big = np.maximum(np.maximum(tg, ts), 1e-300)
    return big * ((tg / big) ** gamma + (ts / big) ** gamma) ** (1.0 / gamma)


class _StepModel(PerformanceForm):
    """What both step-time models share: the columns, the checks, the fitted vector and the JSON codec."""

    json_version = 1
    fitted_keys = ("params", "scale", "cost", "n_fit", "fit_time")
    #: ``ranges`` (the fitted min–max of the gpus, nodes and batch columns): absent from files of earlier versions
    optional_fitted_keys = ("ranges",)
    fitted_attribute = "params_"
    param_names: tuple = ()

    # -------------------------------------------------------------- settings
    def _columns(self):
        names = {}
        for key in ("gpus", "nodes", "batch"):
            v = getattr(self, key)
            if not isinstance(v, str) or not v:
                raise ValueError(f"{key}: expected a column name (a non-empty string), got {v!r}")
            names[key] = v
        if len(set(names.values())) < 3:
            raise ValueError(f"gpus, nodes, batch: expected three different columns, got {list(names.values())}")
        return names["gpus"], names["nodes"], names["batch"]

    def _config(self, X):
        return step_columns(X, self.gpus, self.nodes, self.batch)

    # the column roles in the words of the table forms (read by ConformalRegressor and the form search): the step
    # forms read no intrinsic column, and their three configuration columns are extrinsic
    @property
    def numeric(self) -> list:
        return []

    @property
    def categorical(self) -> list:
        return []

    @property
    def extrinsic(self) -> list:
        return [self.gpus, self.nodes, self.batch]

    def _record_fit(self, X, cols) -> None:
        """The fitted roles and the min–max of the configuration columns (:meth:`fitted_ranges`)."""
        record_roles(self, [], [], list(cols))
        self.ranges_ = column_ranges(X, list(cols))

    def fitted_ranges(self) -> dict | None:
        """``{column: (min, max)}`` of the gpus, nodes and batch columns in fit (None for a file written before the
        step forms kept them): ``perfkit predict`` flags the rows beyond them, e.g. more GPUs than were measured."""
        self._check_fitted()
        return getattr(self, "ranges_", None)

    # -------------------------------------------------------------- model
    def _names(self) -> list:
        return list(self.param_names)

    def _times(self, theta, K, N, m):
        """(T_grad, T_sync, T_iter) for parameters ``theta`` (in units of ``scale_``)."""
        raise NotImplementedError

    def _solve(self, residuals, starts, lower, upper):
        """Least squares from each start of ``starts`` (one vector or several) with each γ of ``_GAMMA_STARTS``,
        with the ridge :data:`_RIDGE_ROOT` ², to tight tolerances; the parameters of the lowest cost (the first on a
        tie)."""
        from scipy.optimize import least_squares
        from threadpoolctl import threadpool_limits

        def penalised(theta):  # the ridge: one answer where the rows leave a direction of θ free
            return np.r_[residuals(theta), _RIDGE_ROOT * theta[:-1]]

        best = None
        with threadpool_limits(1), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for x0, g in [(x, g) for x in np.atleast_2d(starts) for g in _GAMMA_STARTS]:
                start = np.clip(np.r_[x0[:-1], g], lower, upper)
                r = least_squares(penalised, start, bounds=(lower, upper), loss=self._loss(),
                                  f_scale=self._f_scale(), method="trf", x_scale="jac", max_nfev=5000,
                                  ftol=1e-12, xtol=1e-12, gtol=1e-12)
                if best is None or r.cost < best.cost - 1e-12:
                    best = r
        return best

    def _loss(self) -> str:
        return "linear"

    def _f_scale(self) -> float:
        return 1.0

    def _finish(self, result, start, n) -> None:
        self.params_ = np.asarray(result.x, dtype=float)
        self.cost_ = float(result.cost)
        self.n_fit_ = int(n)
        self.fit_time_ = time.perf_counter() - start

    # -------------------------------------------------------------- predict
    def predict_parts(self, X):
        """DataFrame of the predicted ``t_grad``, ``t_sync`` and ``t_iter`` (seconds) for the rows of ``X``."""
        import pandas as pd

        self._check_fitted()
        K, N, m = self._config(X)
        tg, ts, t = self._times(self.params_, K, N, m)
        s = self.scale_
        return pd.DataFrame({"t_grad": tg * s, "t_sync": ts * s, "t_iter": t * s}, index=X.index)

    def predict(self, X):
        """Predicted step time (seconds) of each configuration of ``X`` (only its gpus, nodes, batch columns)."""
        return self.predict_parts(X)["t_iter"].to_numpy()

    # -------------------------------------------------------------- reports
    @property
    def n_parameters_(self) -> int:
        self._check_fitted()
        return len(self.params_)

    @property
    def coef_(self) -> dict:
        """The fitted parameters by name, times in seconds (γ without unit)."""
        self._check_fitted()
        return {k: float(v) * (1.0 if k == "gamma" else self.scale_) for k, v in zip(self._names(), self.params_)}

    def summary(self) -> str:
        self._check_fitted()
        rows = "\n".join(f"  {k:>14s} = {v:.6g}" for k, v in self.coef_.items())
        return (f"{type(self).__name__}: {self.formula()}\n  columns: gpus {self.gpus!r}, nodes {self.nodes!r}, "
                f"batch {self.batch!r}\n  fit: {self.n_fit_} rows, cost {self.cost_:.4g} (robust loss of log "
                f"residuals), {self.fit_time_:.2f} s\n  parameters (seconds):\n{rows}")

    # -------------------------------------------------------------- JSON
    def _fitted_doc(self) -> dict:
        doc = {"params": [float(v) for v in self.params_], "scale": float(self.scale_), "cost": self.cost_,
               "n_fit": self.n_fit_, "fit_time": self.fit_time_}
        if getattr(self, "ranges_", None) is not None:
            doc["ranges"] = {c: [float(lo), float(hi)] for c, (lo, hi) in self.ranges_.items()}
        return doc

    @classmethod
    def _restore(cls, model, checked, reader):
        params = reader.numbers("params", n=len(model._names()))
        if any(v < 0 for v in params) or not 1.0 <= params[-1] <= _GAMMA_MAX:
            raise reader.fail(f"fitted.params: expected numbers >= 0 and the last (γ) from 1 to {_GAMMA_MAX:g}, got "
                              f"{reader.short(params)}")
        model.params_ = np.asarray(params, dtype=float)
        model.scale_ = reader.number("scale", minimum=0)
        if model.scale_ <= 0:
            raise reader.fail("fitted.scale: expected a number > 0")
        model.cost_ = reader.number("cost", minimum=0)
        model.n_fit_ = reader.count("n_fit", minimum=1)
        model.fit_time_ = reader.number("fit_time", minimum=0)
        record_roles(model, [], [], list(model._columns()))
        model.ranges_ = check_saved_ranges(reader.get("ranges"), list(model._columns()), reader.fail)
        return model


class PolluxStepModel(_StepModel):
    """Pollux's step-time model (OSDI 2021, eqs. of §3.2), re-implemented from the paper.

    T_grad = α_grad + β_grad·m; T_sync = 0 for one GPU, α_local + β_local·(K−2) on one node and
    α_node + β_node·(K−2) across nodes; T_iter = (T_grad^γ + T_sync^γ)^(1/γ). Fitted by bounded least
    squares on log T_iter (every parameter >= 0, 1 <= γ <= 10; the best of three γ starts).

    Parameters
    ----------
    gpus, nodes, batch : str
        Columns of K (GPUs, whole numbers >= 1), N (nodes, 1 <= N <= K) and m (per-GPU batch, > 0).

    Attributes
    ----------
    params_ : numpy.ndarray
        α_grad, β_grad, α_local, β_local, α_node, β_node (in units of ``scale_`` seconds) and γ.
    coef_ : dict
        The same by name, in seconds. ``scale_``: the median step time of fit; ``cost_``: the final cost.
    """

    json_format = "perfkit.PolluxStepModel"
    param_names = ("alpha_grad", "beta_grad", "alpha_local", "beta_local", "alpha_node", "beta_node", "gamma")

    def __init__(self, gpus="n_gpus", nodes="n_nodes", batch="batch_per_gpu"):
        self.gpus = gpus
        self.nodes = nodes
        self.batch = batch

    def _settings(self):
        return self._columns()

    def _times(self, theta, K, N, m):
        ag, bg, al, bl, an, bn, g = theta
        tg = ag + bg * m
        ts = np.where(N > 1, an + bn * np.maximum(K - 2, 0), al + bl * np.maximum(K - 2, 0))
        ts = np.where(K > 1, ts, 0.0)
        return tg, ts, overlap(tg, ts, g)

    def fit(self, X, y):
        """Fit to measured step times ``y`` (> 0) of the configurations ``X``; returns self."""
        cols = self._settings()
        K, N, m = self._config(X)
        y = validate_target(y, X, positive=True)
        start = time.perf_counter()
        self.scale_ = float(np.median(y))
        z = np.log(y / self.scale_)
        tmin = float(np.exp(z.min()))

        def residuals(theta):
            return np.log(np.maximum(self._times(theta, K, N, m)[2], 1e-300)) - z

        x0 = np.array([0.5 * tmin, 0.5 * tmin / np.median(m), 0.1, 0.01, 0.5, 0.01, 1.0])
        lower, upper = np.zeros(7), np.r_[np.full(6, np.inf), _GAMMA_MAX]
        lower[-1] = 1.0
        self._finish(self._solve(residuals, x0, lower, upper), start, len(y))
        self._record_fit(X, cols)
        return self

    def formula(self, digits: int = 3) -> str:
        c = {k: f"{v:.{digits}g}" for k, v in self.coef_.items()}
        return (f"t = (T_grad^{c['gamma']} + T_sync^{c['gamma']})^(1/{c['gamma']}), T_grad = {c['alpha_grad']} + "
                f"{c['beta_grad']}·{self.batch}; T_sync = {c['alpha_local']} + {c['beta_local']}·(K-2) on one node, "
                f"{c['alpha_node']} + {c['beta_node']}·(K-2) across nodes, 0 for K = 1 (K = {self.gpus})")


class PhaseAwareStepModel(_StepModel):
    """Step time from compute, synchronisation and their overlap, fitted jointly with the measured phases.

    T_grad = a + b·m; T_sync = 0 for one GPU, α_local + β_local·(K−2) on one node and
    α_node + Σ_j β_j φ_j(K) + β_N·(N−2) across nodes (``sync_form``, :data:`SYNC_FORMS`; the node slope β_N
    only with ``node_slope``);
    T_iter = (T_grad^γ + T_sync^γ)^(1/γ), 1 <= γ <= 10. Fitted by bounded robust least squares on three
    blocks of log residuals: the step time of every row; the compute time of every row against the
    measured one (step time − ``sync_column``); and, weighted by ``sync_weight``, the exposed
    synchronisation time T_iter − T_grad of the multi-GPU rows against ``sync_column``.

    Parameters
    ----------
    gpus, nodes, batch : str
        Columns of K (GPUs, whole numbers >= 1), N (nodes, 1 <= N <= K) and m (per-GPU batch, > 0): all that
        :meth:`predict` reads.
    sync_column : str or None, default "sync_time"
        Column of the measured time per iteration spent synchronising gradients (seconds, finite, >= 0, at
        most the row's step time), **read by fit only** (a phase of the measurement, not a configuration). None: no phases (the step
        time alone is fitted).
    sync_form : {"linear", "log", "sqrt", "ring", "ringlog"}, default "log"
        How the multi-node synchronisation time grows with K (:data:`SYNC_FORMS`).
    sync_weight : float, default 0.0
        Weight (0 to 1000) of the synchronisation block; 0 uses the measured compute time only.
    node_slope : bool, default True
        Add β_N·(N−2) to the multi-node synchronisation: at the same K, more nodes add more slow inter-node
        links (and more chances of a slow one). Like every parameter, β_N >= 0; where the fit rows show no
        growth with N it stays at 0. False: the synchronisation depends on K alone (files saved before this
        setting existed load as False).
    loss : {"linear", "soft_l1", "huber", "cauchy"}, default "huber"
        Loss of :func:`scipy.optimize.least_squares` on the log residuals; ``f_scale`` (1e-6 to 100, default
        0.1, about a 10 % error) is where a robust loss turns from quadratic to linear.

    Attributes
    ----------
    params_ : numpy.ndarray
        a, b, α_local, β_local, α_node, β_j..., γ (times in units of ``scale_`` seconds); ``coef_`` the same by
        name in seconds; ``cost_`` the final cost; ``n_fit_`` the rows of fit.
    """

    json_format = "perfkit.PhaseAwareStepModel"
    #: ``node_slope``: absent from files written before it existed, which fitted no node slope
    optional_settings = ("node_slope",)

    def __init__(self, gpus="n_gpus", nodes="n_nodes", batch="batch_per_gpu", *, sync_column="sync_time",
                 sync_form="log", sync_weight=0.0, node_slope=True, loss="huber", f_scale=0.1):
        self.gpus = gpus
        self.nodes = nodes
        self.batch = batch
        self.sync_column = sync_column
        self.sync_form = sync_form
        self.sync_weight = sync_weight
        self.node_slope = node_slope
        self.loss = loss
        self.f_scale = f_scale

    def _settings(self):
        cols = self._columns()
        if self.sync_column is not None and (not isinstance(self.sync_column, str) or not self.sync_column
                                             or self.sync_column in cols):
            raise ValueError(f"sync_column: expected None or a column name other than {list(cols)}, "
                             f"got {self.sync_column!r}")
        if not isinstance(self.sync_form, str) or self.sync_form not in SYNC_FORMS:
            raise ValueError(f"sync_form: expected one of {tuple(SYNC_FORMS)}, got {self.sync_form!r}")
        if not isinstance(self.loss, str) or self.loss not in LOSSES:
            raise ValueError(f"loss: expected one of {LOSSES}, got {self.loss!r}")
        if check_number("sync_weight", self.sync_weight) > MAX_SYNC_WEIGHT:
            raise ValueError(f"sync_weight: expected at most {MAX_SYNC_WEIGHT:g}, got {self.sync_weight!r}")
        if not F_SCALE_RANGE[0] <= check_number("f_scale", self.f_scale, positive=True) <= F_SCALE_RANGE[1]:
            raise ValueError(f"f_scale: expected a number from {F_SCALE_RANGE[0]:g} to {F_SCALE_RANGE[1]:g} (the "
                             f"robust loss's scale, in log units), got {self.f_scale!r}")
        if not isinstance(self.node_slope, (bool, np.bool_)):
            raise ValueError(f"node_slope: expected True or False, got {self.node_slope!r}")
        return cols

    @classmethod
    def _from_settings(cls, settings: dict):
        """A saved file without ``node_slope`` was written before the setting existed: it fitted none."""
        return super()._from_settings({"node_slope": False, **settings})

    def _names(self) -> list:
        terms = [f"beta_{t}" for t in SYNC_FORMS[self.sync_form]]
        return ["a_grad", "b_grad", "alpha_local", "beta_local", "alpha_node", *terms,
                *(["beta_N"] if self.node_slope else []), "gamma"]

    def _loss(self) -> str:
        return self.loss

    def _f_scale(self) -> float:
        return float(self.f_scale)

    def _times(self, theta, K, N, m):
        a, b, al, bl, an = theta[:5]
        tg = a + b * m
        local = al + bl * np.maximum(K - 2, 0)
        k_terms = len(SYNC_FORMS[self.sync_form])
        node = an + _basis(self.sync_form, K) @ theta[5:5 + k_terms]
        if self.node_slope:
            node = node + theta[5 + k_terms] * np.maximum(N - 2, 0)
        ts = np.where(K > 1, np.where(N > 1, node, local), 0.0)
        return tg, ts, overlap(tg, ts, theta[-1])

    def _phase(self, X, y):
        """The measured synchronisation time of each row (``sync_column``), checked; None without phases."""
        if self.sync_column is None:
            return None
        if self.sync_column not in X.columns:
            raise missing_column_error(X, self.sync_column, "sync_column (read in fit only)")
        s = numeric_column(X, self.sync_column, "sync_column")
        for bad, what in ((~(np.isfinite(s) & (s >= 0)), "is not a finite number >= 0 (seconds spent synchronising)"),
                          (s > y, "is more than the row's step time: the time spent synchronising is part of the step "
                                  "(same units as the target?)")):
            at = first_bad_row(bad, X.index)
            if at:
                raise ValueError(f"column {self.sync_column!r}: value {s[at[0]]:g} in row {at[1]!r} {what}")
        return s

    def fit(self, X, y):
        """Fit to measured step times ``y`` (> 0) of the configurations ``X`` (with ``sync_column`` unless it
        is None); returns self."""
        cols = self._settings()
        K, N, m = self._config(X)
        y = validate_target(y, X, positive=True)
        s = self._phase(X, y)
        start = time.perf_counter()
        self.scale_ = float(np.median(y))
        yt = y / self.scale_
        residuals = self._residuals(K, N, m, yt, None if s is None else s / self.scale_)
        p = len(self._names())
        lower, upper = np.zeros(p), np.r_[np.full(p - 1, np.inf), _GAMMA_MAX]
        lower[-1] = 1.0
        starts = self._starts(K, N, m, yt, None if s is None else s / self.scale_)
        self._finish(self._solve(residuals, starts, lower, upper), start, len(y))
        self._record_fit(X, cols)
        return self

    def _starts(self, K, N, m, yt, st):
        """Starting vectors: a generic one, and one from the measured phases (compute by least squares on m,
        the synchronisation levels by the median measured sync on one node and across nodes)."""
        p = len(self._names())
        comp = yt if st is None else np.maximum(yt - st, 1e-3 * yt)
        generic = np.r_[0.5 * comp.min(), 0.5 * comp.min() / np.median(m), 0.1, 0.01, 0.5, np.full(p - 6, 0.01), 1.0]
        if st is None:
            return generic[None, :]
        b = max(np.polyfit(m, comp, 1)[0], 0.0) if np.ptp(m) > 0 else 0.0
        a = max(float(np.median(comp - b * m)), 1e-6)
        local, node = (K > 1) & (N == 1), N > 1
        al = float(np.median(st[local])) if local.any() else 0.1
        an = float(np.median(st[node])) if node.any() else 0.5
        phased = np.r_[a, b, al, 0.01 * al, 0.5 * an, np.full(p - 6, 0.1 * an), 1.0]
        return np.vstack([generic, phased])

    def _residuals(self, K, N, m, yt, st):
        """The residual function of the fit: log step time, log compute, weighted log exposed sync."""
        z = np.log(yt)
        if st is None:
            return lambda theta: np.log(np.maximum(self._times(theta, K, N, m)[2], 1e-300)) - z
        zc = np.log(np.maximum(yt - st, 1e-3 * yt))
        multi = K > 1
        zs = np.log(np.maximum(st, 1e-3 * yt))[multi]
        w = float(self.sync_weight)

        def residuals(theta):
            tg, _, t = self._times(theta, K, N, m)
            r = [np.log(np.maximum(t, 1e-300)) - z, np.log(np.maximum(tg, 1e-300)) - zc]
            if w > 0:
                r.append(w * (np.log(np.maximum(t - tg, 1e-6 * yt)[multi]) - zs))
            return np.concatenate(r)

        return residuals

    def formula(self, digits: int = 3) -> str:
        c = {k: f"{v:.{digits}g}" for k, v in self.coef_.items()}
        terms = " + ".join(f"{c['beta_' + t]}·{t}" for t in SYNC_FORMS[self.sync_form])
        if self.node_slope:
            terms += f" + {c['beta_N']}·(N-2)"
        g = c["gamma"]
        return (f"t = (T_grad^{g} + T_sync^{g})^(1/{g}), T_grad = {c['a_grad']} + {c['b_grad']}·{self.batch}; "
                f"T_sync = {c['alpha_local']} + {c['beta_local']}·(K-2) on one node, {c['alpha_node']} + {terms} "
                f"across nodes, 0 for K = 1 (K = {self.gpus}" + (f", N = {self.nodes})" if self.node_slope else ")"))
