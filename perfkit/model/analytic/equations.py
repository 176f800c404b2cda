"""Chapter 3: the S-SGD phase model of one training iteration.

Equation numbers refer to Kavarakuntla (2023), Chapter 3; "paper" refers to the
IUCC-2021 paper reprinted as the thesis's Appendix A. All times are in seconds.
Every function accepts scalars, NumPy arrays or pandas Series (broadcast
together) and returns a float for scalar input, a Series when a Series was
given, and an array otherwise. Negative or non-finite times, and inputs whose
lengths do not match, raise :class:`ValueError` naming the argument.

Phases (Table 3.1 of the thesis):

``t_io``
    fetch the mini-batch from host storage/memory,
``t_h2d``
    copy it from host to device memory,
``t_md``
    divide the batch into per-worker mini-batches,
``t_f``, ``t_b``
    forward and backward computation,
``t_c``
    gradient aggregation across workers (0 on one worker),
``t_u``
    model (optimizer) update.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..validation import as_times, broadcast_named, wrap_like

__all__ = [
    "VARIANTS",
    "iteration_time_sgd",
    "iteration_time_ssgd",
    "iteration_time_multi",
    "iteration_time_single",
    "iteration_time_pipelined",
    "speedup",
    "speedup_pipelined",
    "load_imbalance_factor",
    "evaluate",
]

#: Names of the published variants of eqs. 3.5 and 3.7.
VARIANTS = ("thesis", "paper")


def _times(**kwargs: Any) -> dict[str, np.ndarray]:
    return broadcast_named(**{k: as_times(k, v) for k, v in kwargs.items()})


def _check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"variant: expected one of {VARIANTS}, got {variant!r}")
    return variant


def iteration_time_sgd(t_io, t_h2d, t_f, t_b, t_u):
    """Iteration time of mini-batch SGD on one device (eq. 3.1).

    .. math:: t_{iter} = t_{io} + t_{h2d} + t_f + t_b + t_u

    Parameters
    ----------
    t_io, t_h2d, t_f, t_b, t_u : array_like
        Phase times in seconds (``t_f`` and ``t_b`` summed over layers).

    Returns
    -------
    float, numpy.ndarray or pandas.Series
        Iteration time in seconds.

    Examples
    --------
    >>> iteration_time_sgd(0.1, 0.2, 0.3, 0.4, 0.5)
    1.5
    """
    a = _times(t_io=t_io, t_h2d=t_h2d, t_f=t_f, t_b=t_b, t_u=t_u)
    return wrap_like(sum(a.values()), t_io, t_h2d, t_f, t_b, t_u)


def iteration_time_ssgd(t_io, t_h2d, t_f, t_b, t_c, t_u):
    """Iteration time of synchronous SGD (eq. 3.2).

    .. math:: t_{iter} = t_{io} + t_{h2d} + t_f + t_b + t_c + t_u

    ``t_c`` (gradient aggregation) is 0 on a single device, which reduces the
    expression to eq. 3.1.

    Parameters
    ----------
    t_io, t_h2d, t_f, t_b, t_c, t_u : array_like
        Phase times in seconds.

    Returns
    -------
    float, numpy.ndarray or pandas.Series
        Iteration time in seconds.

    Examples
    --------
    >>> iteration_time_ssgd(0.1, 0.2, 0.3, 0.4, 0.6, 0.5)
    2.1
    """
    a = _times(t_io=t_io, t_h2d=t_h2d, t_f=t_f, t_b=t_b, t_c=t_c, t_u=t_u)
    return wrap_like(sum(a.values()), t_io, t_h2d, t_f, t_b, t_c, t_u)


def iteration_time_multi(t_io, t_h2d, t_md, t_f, t_b, t_c, t_u, axis: int = -1):
    """Iteration time of S-SGD on several workers (eq. 3.3).

    .. math::
        t_{iter} = t_{io} + t_{h2d} + t_{md}
                   + \\max_{i \\in [1, N_g]} (t_{f,i} + t_{b,i} + t_{c,i}) + t_u

    The slowest worker's compute-plus-aggregation time sets the pace.

    Parameters
    ----------
    t_io, t_h2d, t_md, t_u : array_like
        Phase times shared by all workers, in seconds.
    t_f, t_b, t_c : array_like
        Per-worker times, with workers along ``axis`` (they may also be scalars,
        meaning the same time on every worker).
    axis : int, default -1
        Axis of ``t_f``/``t_b``/``t_c`` that indexes workers.

    Returns
    -------
    float, numpy.ndarray or pandas.Series
        Iteration time in seconds (the worker axis removed).

    Examples
    --------
    >>> round(iteration_time_multi(0.1, 0.2, 0.05, [0.3, 0.4], [0.5, 0.5], [0.1, 0.2], 0.25), 12)
    1.7
    """
    per_worker = _times(t_f=t_f, t_b=t_b, t_c=t_c)
    busy = per_worker["t_f"] + per_worker["t_b"] + per_worker["t_c"]
    slowest = busy.max(axis=axis) if busy.ndim else busy
    shared = _times(t_io=t_io, t_h2d=t_h2d, t_md=t_md, t_u=t_u)
    parts = broadcast_named(slowest_worker=slowest, **shared)
    return wrap_like(sum(parts.values()), t_io, t_h2d, t_md, t_u)


def iteration_time_single(t_io, t_h2d, t_md, t_f, t_b, t_u):
    """Iteration time on one worker including batch division (eq. 3.4; paper eq. 4).

    .. math:: t_{iter} = t_{io} + t_{h2d} + t_{md} + t_f + t_b + t_u

    This is eq. 3.3 with one worker and no aggregation. The thesis's text of
    eq. 3.4 is lost in the extraction; the form here is the paper's eq. 4.

    Examples
    --------
    >>> round(iteration_time_single(0.1, 0.2, 0.05, 0.3, 0.4, 0.5), 10)
    1.55
    """
    a = _times(t_io=t_io, t_h2d=t_h2d, t_md=t_md, t_f=t_f, t_b=t_b, t_u=t_u)
    return wrap_like(sum(a.values()), t_io, t_h2d, t_md, t_f, t_b, t_u)


def iteration_time_pipelined(t_io, t_h2d, t_f, t_b, t_u, t_md=0.0, variant: str = "thesis"):
    """Average iteration time when data loading overlaps computation (eq. 3.5).

    ``variant="thesis"`` (thesis eq. 3.5):

    .. math:: t_{iter} = \\max(t_f + t_b + t_u,\\; t_{io} + t_{h2d})

    ``variant="paper"`` (paper eq. 5) also counts batch division on the loading side:

    .. math:: t_{iter} = \\max(t_f + t_b + t_u,\\; t_{io} + t_{h2d} + t_{md})

    Parameters
    ----------
    t_io, t_h2d, t_f, t_b, t_u : array_like
        Phase times in seconds.
    t_md : array_like, default 0.0
        Batch-division time; used only by the paper variant.
    variant : {"thesis", "paper"}
        Which published form to evaluate.

    Examples
    --------
    >>> iteration_time_pipelined(0.5, 0.25, 0.25, 0.25, 0.125, t_md=0.5)
    0.75
    >>> iteration_time_pipelined(0.5, 0.25, 0.25, 0.25, 0.125, t_md=0.5, variant="paper")
    1.25
    """
    _check_variant(variant)
    a = _times(t_io=t_io, t_h2d=t_h2d, t_f=t_f, t_b=t_b, t_u=t_u, t_md=t_md)
    compute = a["t_f"] + a["t_b"] + a["t_u"]
    load = a["t_io"] + a["t_h2d"] + (a["t_md"] if variant == "paper" else 0.0)
    return wrap_like(np.maximum(compute, load), t_io, t_h2d, t_f, t_b, t_u, t_md)


def _workers(n_workers) -> np.ndarray:
    try:
        n = np.asarray(n_workers, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"n_workers: expected a positive number, got {n_workers!r}") from exc
    if n.size == 0 or not np.all(np.isfinite(n)) or np.any(n < 1):
        raise ValueError(f"n_workers: expected numbers >= 1, got {n_workers!r}")
    return n


def speedup(n_workers, t_iter_1, t_iter_n):
    """Speedup of N_g workers over one under weak scaling (eq. 3.6).

    .. math:: S = N_g \\, \\frac{t_{iter}}{t'_{iter}}

    With the per-worker mini-batch fixed (weak scaling, as in the thesis's
    Chapter 3), N_g workers process N_g times as many samples per iteration,
    so the ratio of throughputs is N_g t_iter / t'_iter.

    Parameters
    ----------
    n_workers : array_like
        Number of workers N_g (>= 1).
    t_iter_1 : array_like
        Iteration time on one worker (> 0).
    t_iter_n : array_like
        Iteration time on N_g workers (> 0).

    Examples
    --------
    >>> speedup(2, 0.4, 0.5)
    1.6
    """
    n = _workers(n_workers)
    t1 = as_times("t_iter_1", t_iter_1, allow_zero=False)
    tn = as_times("t_iter_n", t_iter_n, allow_zero=False)
    a = broadcast_named(n_workers=n, t_iter_1=t1, t_iter_n=tn)
    return wrap_like(a["n_workers"] * a["t_iter_1"] / a["t_iter_n"], t_iter_1, t_iter_n, n_workers)


def speedup_pipelined(
    n_workers,
    t_io,
    t_h2d,
    t_f,
    t_b,
    t_u,
    t_c,
    t_md=0.0,
    t_io_n=None,
    variant: str = "thesis",
):
    """Speedup predicted from phase times with overlapped loading (eq. 3.7).

    ``variant="thesis"`` (thesis eq. 3.7):

    .. math::
        S = N_g \\frac{\\max\\{t_{io} + t_{h2d},\\; t_f + t_b + t_u\\}}
                      {\\max\\{t'_{io} + t_{h2d} + t_{md},\\; t_f + t_b + t_c\\}}

    ``variant="paper"`` (paper eq. 7) leaves ``t_u`` out of the numerator and
    ``t_md`` out of the denominator:

    .. math::
        S = N_g \\frac{\\max\\{t_{io} + t_{h2d},\\; t_f + t_b\\}}
                      {\\max\\{t'_{io} + t_{h2d},\\; t_f + t_b + t_c\\}}

    These are model *predictions* from single-worker phase times plus the
    aggregation time ``t_c`` measured on N_g workers.

    Parameters
    ----------
    n_workers : array_like
        Number of workers N_g (>= 1).
    t_io, t_h2d, t_f, t_b, t_u : array_like
        Single-worker phase times in seconds.
    t_c : array_like
        Gradient-aggregation time on N_g workers.
    t_md : array_like, default 0.0
        Batch-division time on N_g workers (thesis variant only).
    t_io_n : array_like, optional
        I/O time on N_g workers, t'_io; defaults to ``t_io``.
    variant : {"thesis", "paper"}
        Which published form to evaluate.

    Examples
    --------
    >>> speedup_pipelined(2, 0.125, 0.125, 0.25, 0.25, 0.5, 0.5, t_md=1.0)
    1.6
    >>> speedup_pipelined(2, 0.125, 0.125, 0.25, 0.25, 0.5, 0.5, t_md=1.0, variant="paper")
    1.0
    """
    _check_variant(variant)
    n = _workers(n_workers)
    a = _times(
        t_io=t_io,
        t_h2d=t_h2d,
        t_f=t_f,
        t_b=t_b,
        t_u=t_u,
        t_c=t_c,
        t_md=t_md,
        t_io_n=t_io if t_io_n is None else t_io_n,
    )
    a = broadcast_named(n_workers=n, **a)
    if variant == "thesis":
        num = np.maximum(a["t_io"] + a["t_h2d"], a["t_f"] + a["t_b"] + a["t_u"])
        den = np.maximum(a["t_io_n"] + a["t_h2d"] + a["t_md"], a["t_f"] + a["t_b"] + a["t_c"])
    else:
        num = np.maximum(a["t_io"] + a["t_h2d"], a["t_f"] + a["t_b"])
        den = np.maximum(a["t_io_n"] + a["t_h2d"], a["t_f"] + a["t_b"] + a["t_c"])
    if np.any(den <= 0):
        raise ValueError("speedup_pipelined: denominator is zero (all phase times are 0)")
    return wrap_like(a["n_workers"] * num / den, t_io, t_h2d, t_f, t_b, t_u, t_c, n_workers)


def load_imbalance_factor(times, axis: int = -1):
    """Load imbalance factor of parallel workers (eq. 3.8; paper eq. 8).

    .. math:: LIF = N \\frac{\\max_i t_i}{\\sum_{i=1}^N t_i}
                  = \\frac{\\max_i t_i}{\\tfrac{1}{N}\\sum_i t_i}

    The thesis (N·max/Σ) and the paper (max/mean) print the same quantity.
    LIF = 1 means perfect balance; LIF > 1 means some worker waits.

    Parameters
    ----------
    times : array_like
        Per-worker busy times (> 0), workers along ``axis``.
    axis : int, default -1
        Axis that indexes workers.

    Returns
    -------
    float or numpy.ndarray
        The LIF (>= 1), with the worker axis removed.

    Examples
    --------
    >>> load_imbalance_factor([1.0, 2.0, 3.0])
    1.5
    """
    t = as_times("times", times, allow_zero=False)
    if t.ndim == 0:
        raise ValueError("times: expected one time per worker (an array), got a scalar")
    n = t.shape[axis]
    return wrap_like(n * t.max(axis=axis) / t.sum(axis=axis))


def evaluate(func: Callable, frame, **columns: str):
    """Evaluate an equation on the columns of a DataFrame.

    Parameters
    ----------
    func : callable
        One of the equation functions of this module.
    frame : pandas.DataFrame
        Table with one column per argument of ``func`` (``t_io``, ``t_f``, ...).
    **columns : str
        Map argument names to differently named columns, e.g. ``t_c="t_comm"``.
        Other keyword arguments of ``func`` that are not columns (``variant``,
        ``n_workers``) may be passed here too as non-string values.

    Returns
    -------
    pandas.Series
        The result, indexed like ``frame``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"t_iter_1": [0.4], "t_iter_n": [0.5], "g": [2]})
    >>> evaluate(speedup, df, n_workers="g").tolist()
    [1.6]
    """
    import inspect

    import pandas as pd

    params = inspect.signature(func).parameters
    kwargs: dict[str, Any] = {}
    for name, param in params.items():
        source = columns.get(name, name)
        if isinstance(source, str) and source in frame.columns:
            kwargs[name] = frame[source]
        elif name in columns:
            if isinstance(source, str) and name not in ("variant",):
                raise ValueError(f"column {source!r} (for argument {name!r}) not in frame")
            kwargs[name] = source
        elif param.default is inspect.Parameter.empty:
            raise ValueError(
                f"column {name!r} needed by {func.__name__} is missing; "
                f"frame has {list(frame.columns)}"
            )
    unknown = set(columns) - set(params)
    if unknown:
        raise ValueError(f"{func.__name__} has no argument(s) {sorted(unknown)}")
    result = func(**kwargs)
    return pd.Series(np.broadcast_to(result, (len(frame),)), index=frame.index, name=func.__name__)
