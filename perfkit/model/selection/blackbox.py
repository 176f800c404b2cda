"""The calibrated black-box reference: the best of a random forest, gradient boosting and an RBF SVR, each tuned by
cross-validation on the rows to fit, so an interpretable form can be judged against the best a black box does on
the same data.

:func:`black_box_reference` scores every setting of :data:`GRIDS` on the same K folds (MAPE, %, on the held-out
rows of each fold whose category levels the fold's training rows have), keeps each kind's best setting, and
refits the best kind on every row. Features are those of :func:`perfkit.model.selection.baselines.make_baseline`: numeric
and extrinsic columns standard-scaled (log-transformed first for the SVR; trees do not change under a monotone
transform, so theirs are log features too), categorical columns one-hot; every kind models ``log t``.

The reported CV MAPE of a kind is that of its best setting on the folds that chose it, so it is slightly optimistic
(the best of several settings); a held-out comparison (Chapter 6) uses the refitted model on rows it never saw.
Every fit is seeded; nothing depends on ``n_jobs``.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._checks import check_int
from .baselines import make_baseline
from .fitting import check_n_jobs, run_parallel
from ..uncertainty.conformal import seen_rows
from .metrics import mape
from ..validation import column_list, validate_frame, validate_target

__all__ = ["GRIDS", "KIND_LABELS", "BlackBoxReference", "black_box_reference"]

#: kind → the settings tried (each a dict of regressor parameters); the kinds of :func:`black_box_reference`
GRIDS: dict[str, list[dict[str, Any]]] = {
    "rf": [dict(max_features=f) for f in (1.0, 0.5)],
    "gb": [dict(max_depth=d) for d in (3, None)],
    "svr": [dict(C=c, gamma=g, epsilon=0.01) for c in (10.0, 100.0, 1000.0) for g in (0.03, 0.1)],
}
#: kind → its name in reports
KIND_LABELS = {"rf": "random forest", "gb": "gradient boosting (histogram)", "svr": "SVR (RBF)"}
#: trees per forest and boosting stages: fewer than :func:`make_baseline`'s defaults, so a tuned reference stays
#: within a search's time (the grid, not the tree count, is what tuning buys)
_SIZES = {"rf": dict(n_estimators=100), "gb": dict(max_iter=300, learning_rate=0.1)}


def _pipeline(kind: str, roles: dict, settings: dict, random_state: int):
    """The unfitted pipeline of ``kind`` with ``settings`` (regressor parameters): :func:`make_baseline`'s, with
    scikit-learn's histogram gradient boosting for ``"gb"`` (the same model class, fast enough to tune)."""
    if kind == "gb":
        from sklearn.ensemble import HistGradientBoostingRegressor

        pipe = make_baseline("gb", **roles, random_state=random_state)
        hgb = HistGradientBoostingRegressor(**_SIZES["gb"], **settings, early_stopping=False,
                                            random_state=random_state)
        return pipe.set_params(model__regressor=hgb)
    return make_baseline(kind, **roles, random_state=random_state, **_SIZES.get(kind, {}), **settings)


def _score_setting(kind, roles, settings, random_state, X, y, tr, te) -> tuple[float, float]:
    """``(MAPE %, seconds)`` of one setting on one fold, on the held-out rows with levels seen in the fold's fit
    rows (NaN when there are none)."""
    ok = seen_rows(X.iloc[tr], X.iloc[te], roles["categorical"])
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _pipeline(kind, roles, settings, random_state).fit(X.iloc[tr], y[tr])
        took = time.perf_counter() - start
        if not ok.any():
            return float("nan"), took
        pred = np.asarray(model.predict(X.iloc[te][ok]), dtype=float)
    return mape(y[te][ok], pred), took


@dataclass
class BlackBoxReference:
    """What :func:`black_box_reference` found.

    Attributes
    ----------
    kind : str
        The best kind (``"rf"``, ``"gb"`` or ``"svr"``), by CV MAPE of its best setting.
    settings : dict
        Its best setting (regressor parameters).
    cv_mape, cv_mape_se : float
        Its CV MAPE (%) and the standard error over folds.
    fold_mape : numpy.ndarray
        Its MAPE per fold.
    table : pandas.DataFrame
        One row per kind: kind, label, settings (its best), cv_mape, cv_mape_se, fit_seconds (mean per fold),
        settings_tried, best (bool).
    model_ : sklearn.pipeline.Pipeline
        The best kind with its best setting, fitted on every row.
    """

    kind: str
    settings: dict
    cv_mape: float
    cv_mape_se: float
    fold_mape: np.ndarray
    table: Any
    model_: Any
    fit_time: float = 0.0
    folds: list = field(default_factory=list, repr=False)

    @property
    def label(self) -> str:
        """The best kind and setting in words, e.g. ``SVR (RBF), C=100, gamma=0.03, epsilon=0.01``."""
        return f"{KIND_LABELS[self.kind]}, " + ", ".join(f"{k}={v}" for k, v in self.settings.items())

    def predict(self, X):
        """Predicted times (s) of the best kind, fitted on every row."""
        return self.model_.predict(X)

    def summary(self) -> str:
        """Each kind's best setting and CV MAPE, and which is the reference."""
        lines = [f"black-box reference: each kind tuned by {len(self.folds)}-fold CV on the rows to fit "
                 "(MAPE %, its best setting; slightly optimistic: the best of its grid)"]
        for r in self.table.itertuples():
            mark = "  <- reference" if r.best else ""
            lines.append(f"  {r.label:<30} {r.cv_mape:7.3g} ± {r.cv_mape_se:.2g}  ({r.settings}; "
                         f"{r.settings_tried} settings){mark}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"BlackBoxReference({self.label}; CV MAPE {self.cv_mape:.3g} ± {self.cv_mape_se:.2g} %)"


def _check_kinds(kinds) -> list[str]:
    names = column_list("kinds", kinds)
    for k in names:
        if k not in GRIDS:
            raise ValueError(f"kinds: unknown black box {k!r}; expected some of {sorted(GRIDS)}")
    if not names:
        raise ValueError(f"kinds: give at least one of {sorted(GRIDS)}")
    return names


def black_box_reference(X, y, numeric=(), categorical=(), extrinsic=(), *, folds=None, cv=5, random_state=0,
                        kinds=("rf", "gb", "svr"), n_jobs=1, progress=False) -> BlackBoxReference:
    """Tune each black box of ``kinds`` over :data:`GRIDS` by K-fold CV on ``(X, y)`` and return the best.

    Parameters
    ----------
    X : pandas.DataFrame
        Configurations with the role columns.
    y : array_like
        Measured times, > 0.
    numeric, categorical, extrinsic : str or list of str
        Column roles.
    folds : list of (train, test) index arrays, optional
        The folds to score on (e.g. a form search's, so the comparison is paired); default
        ``KFold(cv, shuffle=True, random_state)``.
    cv : int, default 5
        Folds when ``folds`` is not given.
    random_state : int, default 0
        Seed of the folds, the forest and the boosting.
    kinds : list of str, default ("rf", "gb", "svr")
        Black boxes to tune (keys of :data:`GRIDS`).
    n_jobs : int, default 1
        joblib workers over settings × folds.
    progress : bool
        A progress bar over the fits.

    Returns
    -------
    BlackBoxReference
    """
    import pandas as pd
    from joblib import delayed
    from sklearn.model_selection import KFold

    if not isinstance(X, pd.DataFrame):
        raise ValueError(f"X: expected a pandas DataFrame, got {type(X).__name__}")
    check_int("random_state", random_state, minimum=0)
    names = _check_kinds(kinds)
    n_jobs = check_n_jobs(n_jobs)
    roles = dict(numeric=column_list("numeric", numeric), categorical=column_list("categorical", categorical),
                 extrinsic=column_list("extrinsic", extrinsic))
    validate_frame(X, **roles)
    y = validate_target(y, X, positive=True)
    if folds is None:
        k = check_int("cv", cv, minimum=2)
        if len(X) < 2 * k:
            raise ValueError(f"X: {len(X)} rows are too few for cv={k} (need at least {2 * k})")
        folds = list(KFold(k, shuffle=True, random_state=int(random_state)).split(X))
    folds = list(folds)
    start = time.perf_counter()
    settings = [(kind, s) for kind in names for s in GRIDS[kind]]
    tasks = [delayed(_score_setting)(kind, roles, s, int(random_state), X, y, tr, te)
             for kind, s in settings for tr, te in folds]
    out = np.asarray(run_parallel(n_jobs, None, tasks, len(tasks), "black-box reference", progress), dtype=float)
    scores = out[:, 0].reshape(len(settings), len(folds))
    seconds = out[:, 1].reshape(len(settings), len(folds))
    rows, best_fold = [], {}
    for kind in names:
        idx = [i for i, (kk, _) in enumerate(settings) if kk == kind]
        means = np.array([np.nanmean(scores[i]) if np.isfinite(scores[i]).any() else np.inf for i in idx])
        j = idx[int(np.argmin(means))]  # ties: the first setting of the grid
        f = scores[j][np.isfinite(scores[j])]
        best_fold[kind] = scores[j]
        rows.append(dict(kind=kind, label=KIND_LABELS[kind], settings=dict(settings[j][1]),
                         cv_mape=float(f.mean()) if f.size else float("nan"),
                         cv_mape_se=float(f.std(ddof=1) / np.sqrt(f.size)) if f.size > 1 else float("nan"),
                         fit_seconds=float(seconds[j].mean()), settings_tried=len(idx)))
    table = pd.DataFrame(rows)
    if not np.isfinite(table["cv_mape"]).any():
        raise ValueError("black-box reference: no setting could be scored (every fold's held-out rows have a "
                         "category level its fit rows lack)")
    b = int(table["cv_mape"].idxmin())
    table["best"] = table.index == b
    kind, best = str(table.loc[b, "kind"]), dict(table.loc[b, "settings"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _pipeline(kind, roles, best, int(random_state)).fit(X, y)
    return BlackBoxReference(kind=kind, settings=best, cv_mape=float(table.loc[b, "cv_mape"]),
                             cv_mape_se=float(table.loc[b, "cv_mape_se"]), fold_mape=best_fold[kind], table=table,
                             model_=model, fit_time=time.perf_counter() - start, folds=folds)

