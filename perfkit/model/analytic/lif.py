"""Eq. 3.9: epoch time regressed on the number of workers and the load imbalance factor.

.. math:: t = \\beta_0 + \\beta_1 N_g + \\beta_2 \\, LIF + \\varepsilon

fitted by ordinary least squares (statsmodels). Thesis Table 3.5 (and the
IUCC-2021 paper's eqs. 10–18) report β0, β1, β2 and R² per model × framework;
:func:`fit_lif_regression` with ``by=["model", "framework"]`` returns that
layout, with standard errors and confidence intervals added.

β1 here is the signed coefficient of N_g: more workers shortening the epoch
gives β1 < 0. The thesis table prints β1 without its sign, while the paper's
equations subtract that term (see the notes of ``data/thesis/table3_5.csv``).

:func:`lif_from_worker_times` computes the LIF of each iteration (eq. 3.8) from
per-worker busy times, the regressor this model needs.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..validation import plain_value, check_unique_roles, column_list, missing_column_error, numeric_column
from .equations import load_imbalance_factor

__all__ = [
    "BETAS",
    "TABLE_COLUMNS",
    "LIFRegressionResult",
    "fit_lif_regression",
    "lif_from_worker_times",
]

#: Coefficient names: intercept, workers (N_g), LIF.
BETAS = ("beta0", "beta1", "beta2")
#: Columns of :meth:`LIFRegressionResult.to_frame` (after any group keys).
TABLE_COLUMNS = (
    BETAS
    + ("r2",)
    + tuple(f"se_{b}" for b in BETAS)
    + tuple(f"ci_{side}_{b}" for b in BETAS for side in ("low", "high"))
    + ("nobs",)
)
_MIN_ROWS = 4  # 3 coefficients + at least 1 residual degree of freedom
_LIF_TOL = 1e-9  # N·max/sum of equal times can round to 0.999...


@dataclass(frozen=True)
class LIFRegressionResult:
    """Fitted eq. 3.9 for one group of measurements.

    Attributes
    ----------
    ols : statsmodels.regression.linear_model.RegressionResultsWrapper
        The underlying statsmodels fit (exogenous columns: constant, workers, LIF).
    time, workers, lif : str
        Names of the columns that were fitted.
    group : dict
        Grouping column → value for this fit (empty without ``by``).
    """

    ols: Any
    time: str = "epoch_time"
    workers: str = "workers"
    lif: str = "lif"
    group: dict = field(default_factory=dict)

    @property
    def params(self):
        """β0, β1, β2 as a Series indexed ``beta0, beta1, beta2``."""
        import pandas as pd

        return pd.Series(np.asarray(self.ols.params, dtype=float), index=list(BETAS), name="params")

    @property
    def bse(self):
        """Standard errors of β0, β1, β2."""
        import pandas as pd

        return pd.Series(np.asarray(self.ols.bse, dtype=float), index=list(BETAS), name="bse")

    def conf_int(self, alpha: float = 0.05):
        """Two-sided ``1 - alpha`` confidence intervals: DataFrame with ``lower``/``upper``."""
        import pandas as pd

        if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
            raise ValueError(f"alpha: expected a number strictly between 0 and 1, got {alpha!r}")
        ci = np.asarray(self.ols.conf_int(alpha), dtype=float)
        return pd.DataFrame(ci, index=list(BETAS), columns=["lower", "upper"])

    @property
    def rsquared(self) -> float:
        """Coefficient of determination R²."""
        return float(self.ols.rsquared)

    @property
    def nobs(self) -> int:
        """Number of observations fitted."""
        return int(self.ols.nobs)

    def predict(self, workers, lif):
        """Epoch time predicted by the fitted equation for given N_g and LIF."""
        b = self.params.to_numpy()
        w, f = np.broadcast_arrays(np.asarray(workers, dtype=float), np.asarray(lif, dtype=float))
        return b[0] + b[1] * w + b[2] * f

    def summary(self) -> str:
        """statsmodels' OLS summary with coefficients labelled by meaning, as text."""
        head = f"Eq. 3.9: {self.time} = beta0 + beta1*{self.workers} + beta2*{self.lif} + e"
        if self.group:
            head += "\nGroup: " + _group_label(self.group)
        names = ["beta0 (intercept)", f"beta1 ({self.workers})", f"beta2 ({self.lif})"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # normality tests warn on small samples
            body = self.ols.summary(yname=self.time, xname=names).as_text()
        return head + "\n" + body

    def to_frame(self, alpha: float = 0.05):
        """One row in the layout of Table 3.5: group keys, then :data:`TABLE_COLUMNS`."""
        import pandas as pd

        row: dict[str, Any] = dict(self.group)
        row.update(zip(BETAS, self.params))
        row["r2"] = self.rsquared
        row.update({f"se_{b}": v for b, v in zip(BETAS, self.bse)})
        ci = self.conf_int(alpha)
        for b in BETAS:
            row[f"ci_low_{b}"] = ci.loc[b, "lower"]
            row[f"ci_high_{b}"] = ci.loc[b, "upper"]
        row["nobs"] = self.nobs
        return pd.DataFrame([row], columns=list(self.group) + list(TABLE_COLUMNS))


def _group_label(group: dict) -> str:
    return ", ".join(f"{k}={plain_value(v)!r}" for k, v in group.items())


def _first_bad(df, mask, what: str, why: str = "", values=None) -> None:
    """Raise ``"{what} [value] in row {label}{why}"`` for the first True of ``mask``."""
    if mask.any():
        pos = int(np.flatnonzero(mask)[0])
        shown = "" if values is None else f" {values[pos]:g}"
        raise ValueError(f"{what}{shown} in row {plain_value(df.index[pos])!r}{why}")


def _check_columns(df, roles: list[tuple[str, str]]) -> None:
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0:
        raise ValueError("df: the table is empty (0 rows)")
    check_unique_roles(roles)
    for role, col in roles:
        if col not in df.columns:
            raise missing_column_error(df, col, role)
        if role == "by":
            na = df[col].isna().to_numpy()
            _first_bad(df, na, f"by column {col!r}: missing value")


def _groups(df, by: list[str]):
    if not by:
        yield {}, df
        return
    for key, sub in df.groupby(by, sort=False, observed=True):
        key = key if isinstance(key, tuple) else (key,)
        yield {k: plain_value(v) for k, v in zip(by, key)}, sub


def _fit_one(sub, y, w, f, group: dict, time: str, workers: str, lif: str) -> LIFRegressionResult:
    import statsmodels.api as sm

    where = f"group ({_group_label(group)})" if group else "df"
    if len(sub) < _MIN_ROWS:
        raise ValueError(
            f"{where}: {len(sub)} rows; eq. 3.9 has 3 coefficients and needs at least "
            f"{_MIN_ROWS} observations"
        )
    for col, values, beta in ((workers, w, "beta1"), (lif, f, "beta2")):
        if np.all(values == values[0]):
            raise ValueError(
                f"{where}: column {col!r} is constant ({values[0]:g}), so {beta} cannot be "
                "estimated (singular design)"
            )
    if abs(np.corrcoef(w, f)[0, 1]) > 1 - 1e-10:
        raise ValueError(
            f"{where}: columns {workers!r} and {lif!r} are exactly collinear, so beta1 and beta2 "
            "cannot be separated (singular design); measure more than one LIF per worker count"
        )
    if np.all(y == y[0]):
        raise ValueError(f"{where}: column {time!r} is constant ({y[0]:g}), so R² is undefined")
    exog = sm.add_constant(np.column_stack([w, f]), has_constant="add")
    ols = sm.OLS(y, exog).fit()
    return LIFRegressionResult(ols=ols, time=time, workers=workers, lif=lif, group=group)


def fit_lif_regression(df, time: str = "epoch_time", workers: str = "workers", lif: str = "lif", by=None):
    """Fit eq. 3.9, ``t = β0 + β1·N_g + β2·LIF + ε``, by OLS.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per measurement (e.g. per epoch or iteration).
    time : str, default "epoch_time"
        Column of measured times t (>= 0).
    workers : str, default "workers"
        Column of the number of GPUs/workers N_g (>= 1).
    lif : str, default "lif"
        Column of load imbalance factors (>= 1, eq. 3.8).
    by : str or list of str, optional
        Grouping columns, e.g. ``["model", "framework"]``: one fit per group.

    Returns
    -------
    LIFRegressionResult or pandas.DataFrame
        Without ``by``, the fit. With ``by``, the layout of Table 3.5: one row
        per group (in order of first appearance) with the group keys followed
        by :data:`TABLE_COLUMNS` (95 % intervals).

    Raises
    ------
    ValueError
        A missing column (with a suggestion); NaN/inf or non-numeric values,
        negative times, fewer than 1 worker or LIF < 1 (naming column and row);
        or, per group (named), fewer than 4 rows, workers or LIF constant,
        workers and LIF collinear, or a constant time.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"workers": [1, 1, 2, 2, 3, 3], "lif": [1.0, 1.1, 1.0, 1.2, 1.1, 1.3]})
    >>> df["epoch_time"] = 2 - 0.5 * df["workers"] + 10 * df["lif"]
    >>> fit = fit_lif_regression(df)
    >>> fit.params.round(6).tolist(), round(fit.rsquared, 6)
    ([2.0, -0.5, 10.0], 1.0)
    """
    groups = column_list("by", by)
    _check_columns(df, [("time", time), ("workers", workers), ("lif", lif)] + [("by", c) for c in groups])
    y_all = numeric_column(df, time, "time")
    w_all = numeric_column(df, workers, "workers")
    f_all = numeric_column(df, lif, "lif")
    _first_bad(df, y_all < 0, f"time column {time!r}: negative time", values=y_all)
    _first_bad(df, w_all < 1, f"workers column {workers!r}: value", " is below 1 (N_g >= 1)", values=w_all)
    _first_bad(df, f_all < 1 - _LIF_TOL, f"lif column {lif!r}: value", " is below 1 (LIF = N·max/sum >= 1 by definition)",
               values=f_all)
    pos = np.arange(len(df))
    frame = df.assign(_perfkit_pos=pos)
    fits = []
    for group, sub in _groups(frame, groups):
        idx = sub["_perfkit_pos"].to_numpy()
        fits.append(_fit_one(sub, y_all[idx], w_all[idx], f_all[idx], group, time, workers, lif))
    if not groups:
        return fits[0]
    import pandas as pd

    return pd.concat([r.to_frame() for r in fits], ignore_index=True)


def lif_from_worker_times(df, worker_time="t_compute", by=("iteration",), rank: str | None = "rank"):
    """Load imbalance factor of each group of workers (eq. 3.8): LIF = N·max/Σ.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per worker and group (e.g. per rank and iteration).
    worker_time : str or list of str, default "t_compute"
        Column of each worker's busy time (> 0); several columns (e.g.
        ``["t_f", "t_b"]``) are summed per row.
    by : str or sequence of str, default ("iteration",)
        Columns identifying one synchronised step, e.g.
        ``("model", "framework", "workers", "iteration")``.
    rank : str or None, default "rank"
        Column identifying the worker; a rank listed twice in one group is an
        error. ``None`` skips that check.

    Returns
    -------
    pandas.Series
        Named ``"lif"``, indexed by the group keys (use ``.reset_index()`` for
        columns). Rounding can put a perfectly balanced group a hair below 1;
        such values are set to exactly 1.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"iteration": [0, 0, 0, 1, 1, 1], "rank": [0, 1, 2] * 2,
    ...                    "t_compute": [1.0, 2.0, 3.0, 0.1, 0.1, 0.1]})
    >>> lif_from_worker_times(df).tolist()
    [1.5, 1.0]
    """
    import pandas as pd

    cols = column_list("worker_time", worker_time)
    groups = column_list("by", by)
    if not cols:
        raise ValueError("worker_time: give at least one column of per-worker times")
    if not groups:
        raise ValueError("by: give at least one grouping column (e.g. 'iteration')")
    roles = [("worker_time", c) for c in cols] + [("by", c) for c in groups]
    if rank is not None:
        roles.append(("rank", rank))
    _check_columns(df, roles)
    busy = np.zeros(len(df))
    for c in cols:
        values = numeric_column(df, c, "worker_time")
        _first_bad(df, values <= 0, f"worker_time column {c!r}: value", "; times must be > 0", values=values)
        busy += values
    if rank is not None:
        dup = df.duplicated(groups + [rank]).to_numpy()
        if dup.any():
            p = int(np.flatnonzero(dup)[0])
            group = _group_label({g: df[g].iloc[p] for g in groups})
            raise ValueError(
                f"rank column {rank!r}: rank {plain_value(df[rank].iloc[p])!r} appears twice in group ({group}), "
                f"second time in row {plain_value(df.index[p])!r}"
            )
    frame = df[groups].assign(_perfkit_busy=busy)
    keys, values = [], []
    for key, sub in frame.groupby(groups, sort=False, observed=True):
        keys.append(key if len(groups) > 1 else key[0])
        values.append(max(1.0, load_imbalance_factor(sub["_perfkit_busy"].to_numpy())))
    if len(groups) > 1:
        index = pd.MultiIndex.from_tuples(keys, names=groups)
    else:
        index = pd.Index(keys, name=groups[0])
    return pd.Series(values, index=index, name="lif")
