"""Chapter 4 on measured data: the generic model on the harness's LeNet-5 samples.

Helpers for the Chapter 4 notebook: read ``ch4_lenet5.csv``, split it as the
thesis did, put our fitted parameters and errors next to the published ones,
and draw the chapter's figure types.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ROLES", "THESIS_EXTRINSIC", "load_ch4", "thesis_split", "make_model", "params_side_by_side",
           "error_row", "scaling_power", "plot_pred_vs_measured", "plot_r2_vs_lambda", "plot_coef_paths"]

#: column roles of a ``perfkit collect ch4`` file for the generic model
ROLES = dict(numeric=["num_filters", "kernel_size", "pool_size", "learning_rate", "stride", "dropout"],
             categorical=["padding", "activation", "dataset", "optimizer"],
             extrinsic=["batch_size", "workers"])
#: our extrinsic column → the thesis tables' parameter name
THESIS_EXTRINSIC = {"workers": "gpus", "batch_size": "batch_size"}


def load_ch4(path, target: str = "epoch_time", roles: dict | None = None):
    """``(X, y, frame)`` from a ``perfkit collect`` steps file: successful rows only, features in ``roles``.

    ``roles`` (numeric / categorical / extrinsic column lists) defaults to :data:`ROLES` (Chapter 4);
    the Chapter 5 notebook passes its own.
    """
    import pandas as pd

    roles = ROLES if roles is None else roles
    df = pd.read_csv(path)
    cols = [c for role in roles.values() for c in role] + [target, "status"]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: column {missing[0]!r} missing; is this a `perfkit collect ch4` file?")
    ok = df[df["status"] == "ok"].reset_index(drop=True)
    if ok.empty:
        raise ValueError(f"{path}: no rows with status 'ok'")
    X = ok[[c for role in roles.values() for c in role]].copy()
    for c in roles.get("categorical", []):
        X[c] = X[c].astype(str)
    return X, ok[target].astype(float), ok


def thesis_split(X, y, n_fit: int = 1000, n_test: int = 500, seed: int = 0):
    """Random split into ``n_fit`` rows to fit and ``n_test`` held out (the thesis: 1000 / 500).

    When the data has fewer rows than ``n_fit + n_test`` the two counts are
    scaled down in proportion (quick runs, partial collections).
    """
    n = len(X)
    if n_fit < 1 or n_test < 1:
        raise ValueError(f"n_fit, n_test: expected >= 1, got {n_fit}, {n_test}")
    if n < n_fit + n_test:
        n_fit = max(1, int(round(n * n_fit / (n_fit + n_test))))
        n_test = n - n_fit
    idx = np.random.default_rng(seed).permutation(n)
    tr, te = idx[:n_fit], idx[n_fit:n_fit + n_test]
    return X.iloc[tr], X.iloc[te], y.iloc[tr], y.iloc[te]


def make_model(**kwargs):
    """A :class:`~perfkit.generic.GenericPerformanceModel` with the ch4 column roles."""
    from .generic import GenericPerformanceModel

    return GenericPerformanceModel(**ROLES, **kwargs)


def params_side_by_side(summary, table: str = "4.2", label: str = "ours"):
    """Our mean ± std per parameter (from ``RepeatedFit.summary()``) beside the thesis's table.

    Returns one row per (parameter, symbol) with ``ours_mean``, ``ours_std`` and
    ``<framework>_mean``/``_std`` for each framework of the thesis table.
    """
    import pandas as pd

    from .thesis import load_thesis_table

    rows = []
    for _, r in summary.iterrows():
        kind = r["kind"]
        col = r["column"] if kind != "constant" else "C"
        level = r["level"] if kind == "categorical" else ""
        param = THESIS_EXTRINSIC.get(col, col) if kind == "extrinsic" else col
        symbols = {"numeric": ["a", "p"], "categorical": ["a"], "extrinsic": ["q"], "constant": ["C"]}[kind]
        for sym in symbols:
            rows.append(dict(parameter=param, level=level or "", kind=kind, symbol=sym,
                             ours_mean=r[f"{sym}_mean"], ours_std=r[f"{sym}_std"]))
    ours = pd.DataFrame(rows)
    t = load_thesis_table(table, source="thesis").copy()
    t["level"] = t["level"].fillna("").astype(str)
    wide = t.pivot_table(index=["parameter", "level", "symbol"], columns="framework", values=["mean", "std"],
                         aggfunc="first")
    wide.columns = [f"{fw}_{stat}" for stat, fw in wide.columns]
    wide = wide[sorted(wide.columns, key=lambda c: (c.rsplit("_", 1)[0], c.endswith("std")))].reset_index()
    out = ours.merge(wide, on=["parameter", "level", "symbol"], how="left")
    out.insert(0, "table", f"Table {table}")
    out = out.rename(columns={"ours_mean": f"{label}_mean", "ours_std": f"{label}_std"})
    return out


def error_row(y_true, y_pred) -> dict:
    """MAPE (%), MAE, MSE, RMSE and R² of held-out predictions."""
    from .metrics import mae, mape, mse, r2, rmse

    return {"MAPE": mape(y_true, y_pred), "MAE": mae(y_true, y_pred), "MSE": mse(y_true, y_pred),
            "RMSE": rmse(y_true, y_pred), "R2": r2(y_true, y_pred)}


def scaling_power(summary, column: str = "workers") -> tuple[float, float]:
    """Mean and std over seeds of the power q of ``column`` (Table 4.5)."""
    row = summary[(summary["kind"] == "extrinsic") & (summary["column"] == column)]
    if row.empty:
        raise ValueError(f"column: no extrinsic term {column!r} in the fit")
    return float(row["q_mean"].iloc[0]), float(row["q_std"].iloc[0])


def plot_pred_vs_measured(y_true, y_pred, ax=None, title: str = "", unit: str = "s"):
    """Predicted vs measured with y = x and a least-squares line (Figures 4.3–4.14, 5.3–5.4)."""
    import matplotlib.pyplot as plt

    from .metrics import mape, r2

    y_true, y_pred = np.asarray(y_true, float), np.asarray(y_pred, float)
    if ax is None:
        _, ax = plt.subplots(figsize=(3.6, 3.4))
    ax.scatter(y_true, y_pred, s=6, alpha=0.5, color="#4C72B0", edgecolors="none")
    lo, hi = float(min(y_true.min(), y_pred.min())), float(max(y_true.max(), y_pred.max()))
    ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, label="y = x")
    slope, icpt = np.polyfit(y_true, y_pred, 1)
    ax.plot([lo, hi], [icpt + slope * lo, icpt + slope * hi], color="#C44E52", lw=1,
            label=f"fit: {slope:.2f}x {icpt:+.2g}")
    ax.set_xlabel(f"measured ({unit})")
    ax.set_ylabel(f"predicted ({unit})")
    ax.set_title(f"{title}\nMAPE {mape(y_true, y_pred):.1f} %, R² {r2(y_true, y_pred):.3f}", fontsize=8)
    ax.legend(frameon=False, fontsize=7)
    return ax


def plot_r2_vs_lambda(sweep, ax=None, metric: str = "r2_test"):
    """R² (held out) against λ for each penalty, mean over seeds (Figure 4.15)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 3.2))
    m = sweep[sweep["quantity"] == metric].groupby(["penalty", "lam"])["value"].agg(["mean", "std"]).reset_index()
    for pen, g in m.groupby("penalty"):
        ax.errorbar(g["lam"], g["mean"], yerr=g["std"].fillna(0), marker="o", ms=3, capsize=2, label=pen.upper())
    ax.set_xscale("log")
    ax.set_xlabel("λ")
    ax.set_ylabel("R² (held out)" if metric == "r2_test" else metric)
    ax.legend(frameon=False)
    return ax


def plot_coef_paths(sweep, penalty: str, ax=None, kinds=("a", "p", "q")):
    """Every fitted parameter of ``kinds`` against λ for one penalty, mean over seeds (Figures 4.16–4.17)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.4))
    sub = sweep[(sweep["penalty"] == penalty) & sweep["kind"].isin(kinds)]
    if sub.empty:
        raise ValueError(f"penalty: no {penalty!r} rows of kinds {kinds} in the sweep")
    m = sub.groupby(["quantity", "lam"])["value"].mean().reset_index()
    for q, g in m.groupby("quantity"):
        ax.plot(g["lam"], g["value"], lw=1, label=q)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_xlabel("λ")
    ax.set_ylabel("parameter value")
    ax.set_title(f"{penalty.upper()} coefficient paths")
    ax.legend(frameon=False, fontsize=5, ncol=2, loc="center left", bbox_to_anchor=(1, 0.5))
    return ax
