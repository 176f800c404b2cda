"""Chapter 4 black-box baselines: random forest, support-vector regression, gradient boosting.

The thesis compares its generic performance model with a random forest (RF) and
an RBF support-vector regressor (SVR, "SVM" in the journal paper): Table 4.4,
journal Table 5, SSCI-2022 Table I and Table 5.3 list held-out MAPE/MAE/MSE/RMSE
per method. Gradient boosting on log t (``"gb"``) is not in the thesis: it is the
strongest off-the-shelf black box on our data, the bar an interpretable model has to
clear (Chapter 6, :mod:`perfkit.chapters.ch6`). This module builds those baselines as scikit-learn pipelines over the
same column roles as the generic model (numeric intrinsic, categorical
intrinsic, extrinsic) and tabulates any set of fitted models in that layout.

Every pipeline starts with a :class:`FrameValidator` step, so a misspelt column,
a non-numeric value or a category not seen in training raises one
:class:`ValueError` naming the column and row (via
:func:`perfkit.dataset.validate_frame`) instead of a scikit-learn traceback.

The baselines are scikit-learn pipelines, not :class:`~perfkit.model.base.PerformanceForm`
model forms: they have no formula or parameter count to write out, and a forest or an
SVR cannot be saved in the JSON of :mod:`perfkit.model.persist` (perfkit never pickles),
so a :class:`~perfkit.model.uncertainty.conformal.ConformalRegressor` around one cannot be saved either.
Their check step carries the column roles, which the intervals' extrapolation guard reads.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin  # fine: perfkit loads this module lazily

from ..validation import column_list, validate_frame, validate_target
from .metrics import regression_report

__all__ = [
    "LABELS",
    "SHORT_LABELS",
    "KINDS",
    "METRIC_COLUMNS",
    "FrameValidator",
    "make_baseline",
    "compare_models",
    "train_test_split_frame",
]

#: Baselines that :func:`make_baseline` builds.
KINDS = ("rf", "svr", "gb")
#: each baseline's name in prose and reports (``perfkit fit``, Chapter 7) and in table columns (Chapters 4-6)
LABELS = {"rf": "random forest", "svr": "SVR", "gb": "gradient boosting"}
SHORT_LABELS = {"rf": "RF", "svr": "SVR", "gb": "GB"}
#: Columns of :func:`compare_models`, in order.
METRIC_COLUMNS = ("MAPE", "MAE", "MSE", "RMSE", "R2", "fit_seconds")


class FrameValidator(TransformerMixin, BaseEstimator):
    """First pipeline step: check the table against its column roles.

    ``fit`` validates ``X`` (and ``y``) and records the levels of each
    categorical column; ``transform`` validates again, rejecting unseen levels,
    and returns only the role columns, numeric ones as floats and categorical
    ones as strings.

    Parameters
    ----------
    numeric, categorical, extrinsic : tuple of str
        Column roles, as in :func:`perfkit.dataset.validate_frame`.
    positive_target : bool, default False
        The targets are measured times: require every training target to be
        > 0 (and at most 1e100 s, see :func:`~perfkit.model.validation.validate_target`).
        :func:`make_baseline` always sets it.

    Attributes
    ----------
    categories_ : dict
        Levels seen in training, per categorical column.
    """

    def __init__(self, numeric=(), categorical=(), extrinsic=(), positive_target=False):
        self.numeric = numeric
        self.categorical = categorical
        self.extrinsic = extrinsic
        self.positive_target = positive_target

    def _roles(self):
        return (
            column_list("numeric", self.numeric),
            column_list("categorical", self.categorical),
            column_list("extrinsic", self.extrinsic),
        )

    def fit(self, X, y=None):
        num, cat, ext = self._roles()
        validate_frame(X, num, cat, ext)
        if y is not None:
            validate_target(y, X, positive=bool(self.positive_target))
        self.categories_ = {c: list(dict.fromkeys(X[c])) for c in cat}
        return self

    def transform(self, X):
        import pandas as pd
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "categories_", msg="FrameValidator: call fit before transform/predict")
        num, cat, ext = self._roles()
        validate_frame(X, num, cat, ext, categories=self.categories_)
        out = pd.DataFrame(index=X.index)
        for c in num + ext:
            out[c] = pd.to_numeric(X[c]).astype(float)
        for c in cat:
            out[c] = X[c].astype(str)
        return out


def _check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
    return kind


def _regressor(kind: str, random_state, params: dict[str, Any]):
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
    from sklearn.svm import SVR

    factories = {
        "rf": lambda: RandomForestRegressor(n_estimators=300, random_state=random_state),
        "svr": lambda: SVR(kernel="rbf"),
        "gb": lambda: GradientBoostingRegressor(n_estimators=500, learning_rate=0.05, max_depth=4,
                                                random_state=random_state),
    }
    base = factories[kind]()
    valid = base.get_params(deep=False)
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(
            f"{type(base).__name__} has no parameter(s) {unknown}; valid: {sorted(valid)}"
        )
    return base.set_params(**params)


def make_baseline(
    kind: str,
    numeric=(),
    categorical=(),
    extrinsic=(),
    random_state: int | None = None,
    *,
    log_target: bool | None = None,
    **params: Any,
):
    """Build an unfitted RF or SVR baseline for a table of configurations.

    The pipeline has three steps:

    ``"check"``
        :class:`FrameValidator`: validates the table, rejects unseen categories
        with a :class:`ValueError` naming the column, row and known levels, and
        keeps the column roles (``pipe.named_steps["check"].numeric`` ...).
    ``"features"``
        a ``ColumnTransformer``: categorical columns one-hot encoded
        (``handle_unknown="error"``; the check step already turned unseen levels
        into a clear error, as the generic model does), numeric and extrinsic
        columns standard-scaled. For ``"svr"`` they are log-transformed first:
        they are batch sizes, GPU counts, epochs ... spread over powers of two,
        and the RBF kernel measures distances in the scaled space, so equal
        ratios should be equal steps. (Values must be > 0, as for the generic
        model; trees are unaffected by monotone transforms, so ``"rf"`` only
        scales.)
    ``"model"``
        ``RandomForestRegressor(n_estimators=300, random_state=random_state)``
        for ``"rf"``; for ``"svr"`` an RBF ``SVR()`` inside a
        ``TransformedTargetRegressor`` that standardises the target (of
        ``log y`` by default, see ``log_target``), so the default ``C=1`` and
        ``epsilon=0.1`` are in units of the target's standard deviation rather
        than seconds. For ``"gb"``: ``GradientBoostingRegressor(n_estimators=500,
        learning_rate=0.05, max_depth=4, random_state=random_state)`` on ``log y``.

    Parameters
    ----------
    kind : {"rf", "svr", "gb"}
        Which baseline.
    numeric, categorical, extrinsic : str or sequence of str
        Column roles, as for the generic model (``"a,b"`` is accepted).
    random_state : int, optional
        Seed of the random forest (same seed, same predictions). SVR is
        deterministic and ignores it.
    log_target : bool, optional
        Model ``log y`` and predict ``exp`` of it (times must then be > 0).
        Default: True for ``"svr"`` (times spread over orders of magnitude, and
        the RBF kernel's scale is one for the whole target), False for ``"rf"``
        (the plain scikit-learn baseline); True for ``"gb"``.
    **params
        Settings of the regressor (``RandomForestRegressor`` or ``SVR``) that
        override the defaults, e.g. ``n_estimators=100`` or ``C=10``.

    Returns
    -------
    sklearn.pipeline.Pipeline
        Unfitted; call ``fit(X, y)`` with a DataFrame ``X``.

    Raises
    ------
    ValueError
        Unknown ``kind``, unknown regressor parameter, bad ``log_target``, no
        columns, or a column given in two roles. At ``fit``/``predict``: the
        checks of :func:`perfkit.dataset.validate_frame`, unseen categories and
        times <= 0 (the baselines model measured times, which are positive).

    Examples
    --------
    >>> pipe = make_baseline("rf", numeric=["batch"], extrinsic="gpus", random_state=0)
    >>> list(pipe.named_steps)
    ['check', 'features', 'model']
    """
    from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

    _check_kind(kind)
    num = column_list("numeric", numeric)
    cat = column_list("categorical", categorical)
    ext = column_list("extrinsic", extrinsic)
    if not (num or cat or ext):
        raise ValueError("no columns given: set numeric, categorical and/or extrinsic")
    seen: dict[str, str] = {}
    for role, cols in (("numeric", num), ("categorical", cat), ("extrinsic", ext)):
        for c in cols:
            if c in seen:
                raise ValueError(f"column {c!r} is given twice (as {seen[c]} and as {role})")
            seen[c] = role
    reg = _regressor(kind, random_state, params)
    if log_target is None:
        log_target = kind in ("svr", "gb")
    if not isinstance(log_target, (bool, np.bool_)):
        raise ValueError(f"log_target: expected True, False or None, got {log_target!r}")

    parts = []
    if num or ext:
        if kind == "svr":
            scale = make_pipeline(FunctionTransformer(np.log, feature_names_out="one-to-one"), StandardScaler())
        else:
            scale = StandardScaler()
        parts.append(("scale", scale, num + ext))
    if cat:
        parts.append(("onehot", OneHotEncoder(handle_unknown="error", sparse_output=False), cat))
    features = ColumnTransformer(parts, remainder="drop", sparse_threshold=0.0)
    log = FunctionTransformer(np.log, np.exp)
    if kind == "svr":
        target = make_pipeline(log, StandardScaler()) if log_target else StandardScaler()
        reg = TransformedTargetRegressor(regressor=reg, transformer=target)
    elif log_target:
        reg = TransformedTargetRegressor(regressor=reg, transformer=log)
    check = FrameValidator(tuple(num), tuple(cat), tuple(ext), positive_target=True)
    return Pipeline([("check", check), ("features", features), ("model", reg)])


def _check_model(name, model) -> None:
    for method in ("fit", "predict"):
        if not callable(getattr(model, method, None)):
            raise ValueError(f"models[{name!r}]: {type(model).__name__} has no {method}() method")


def compare_models(models: dict, X_train, y_train, X_test, y_test, prefitted=()):
    """Fit each model on the training set and score it on the held-out set.

    Produces the methods × metrics layout of thesis Table 4.4, journal Table 5
    and Table 5.3.

    Parameters
    ----------
    models : dict of str to estimator
        Name → unfitted (or fitted) scikit-learn-style estimator with
        ``fit(X, y)`` and ``predict(X)`` taking a DataFrame. Each is cloned
        (:func:`sklearn.base.clone`) before fitting, so the caller's objects are
        left untouched.
    X_train, X_test : pandas.DataFrame
        Configurations to fit on and to evaluate on.
    y_train, y_test : array_like
        Measured times for those rows.
    prefitted : collection of str, optional
        Names of models already fitted on ``X_train``: they are scored as they
        are (not cloned or refitted), with ``fit_seconds`` taken from their
        ``fit_time_`` attribute (NaN if absent).

    Returns
    -------
    pandas.DataFrame
        Index: model names (in the order given, index name ``"model"``);
        columns :data:`METRIC_COLUMNS`: ``MAPE`` (%), ``MAE``, ``MSE``,
        ``RMSE``, ``R2`` on the held-out set and ``fit_seconds`` (wall time of
        ``fit``).

    Raises
    ------
    ValueError
        Empty ``models``, an object without fit/predict, bad targets, or a
        ``ValueError`` raised by a model (re-raised with the model's name first).
    """
    import pandas as pd
    from sklearn.base import clone

    if not isinstance(models, dict) or not models:
        raise ValueError(f"models: expected a non-empty dict of name -> estimator, got {models!r}")
    for name, value in (("X_train", X_train), ("X_test", X_test)):
        if not isinstance(value, pd.DataFrame):
            raise ValueError(f"{name}: expected a pandas DataFrame, got {type(value).__name__}")
    y_tr = validate_target(y_train, X_train, name="y_train")
    y_te = validate_target(y_test, X_test, name="y_test")
    rows = {}
    for name, model in models.items():
        _check_model(name, model)
        try:
            if name in prefitted:
                est, elapsed = model, float(getattr(model, "fit_time_", np.nan))
            else:
                est = clone(model, safe=False)
                start = time.perf_counter()
                est.fit(X_train, y_tr)
                elapsed = time.perf_counter() - start
            pred = np.asarray(est.predict(X_test), dtype=float).ravel()
            report = regression_report(y_te, pred)
        except ValueError as exc:
            raise ValueError(f"model {name!r}: {exc}") from exc
        rows[str(name)] = {**report, "fit_seconds": elapsed}
    out = pd.DataFrame.from_dict(rows, orient="index", columns=list(METRIC_COLUMNS))
    out.index.name = "model"
    return out


def _check_test_size(test_size, n: int) -> int:
    if isinstance(test_size, (bool, np.bool_)) or not isinstance(test_size, (int, float, np.integer, np.floating)):
        raise ValueError(f"test_size: expected a fraction in (0, 1) or a row count, got {test_size!r}")
    if isinstance(test_size, (int, np.integer)):
        n_test = int(test_size)
        if not 1 <= n_test <= n - 1:
            raise ValueError(
                f"test_size: {n_test} rows leaves an empty part of {n} rows; give 1 to {n - 1}"
            )
        return n_test
    frac = float(test_size)
    if not (np.isfinite(frac) and 0.0 < frac < 1.0):
        raise ValueError(f"test_size: fraction {test_size!r} must be strictly between 0 and 1")
    n_test = int(np.ceil(frac * n))  # scikit-learn's rounding of a fractional test size
    if not 1 <= n_test <= n - 1:
        raise ValueError(
            f"test_size: fraction {frac:g} of {n} rows gives {n_test} test rows, leaving an empty part"
        )
    return n_test


def train_test_split_frame(X, y, test_size: float | int = 0.33, random_state: int | None = 0):
    """Shuffle and split a table and its targets into fit and held-out parts.

    A thin wrapper over :func:`sklearn.model_selection.train_test_split`. The
    thesis fits on 1000 configurations and holds out 500 (``test_size=500``);
    Chapter 5 uses 900/600.

    Parameters
    ----------
    X : pandas.DataFrame
        Configurations.
    y : array_like
        Measured times, one per row of ``X`` (a Series keeps its index).
    test_size : float or int, default 0.33
        Fraction of rows (strictly between 0 and 1) or number of rows held out.
    random_state : int, optional, default 0
        Seed of the shuffle.

    Returns
    -------
    X_train, X_test, y_train, y_test
        DataFrames and Series/arrays (a Series ``y`` stays a Series).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"b": range(1, 11)})
    >>> X_tr, X_te, y_tr, y_te = train_test_split_frame(X, X["b"] * 2.0, test_size=3)
    >>> len(X_tr), len(X_te), bool((y_te == X_te["b"] * 2).all())
    (7, 3, True)
    """
    import pandas as pd
    from sklearn.model_selection import train_test_split

    if not isinstance(X, pd.DataFrame):
        raise ValueError(f"X: expected a pandas DataFrame, got {type(X).__name__}")
    if len(X) < 2:
        raise ValueError(f"X: {len(X)} rows cannot be split into two non-empty parts")
    validate_target(y, X)
    n_test = _check_test_size(test_size, len(X))
    y_in = y if isinstance(y, pd.Series) else np.asarray(y, dtype=float).ravel()
    return train_test_split(X, y_in, test_size=n_test, random_state=random_state, shuffle=True)
