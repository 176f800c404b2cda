"""Gradient-boosted trees of the step time, saved as JSON: :class:`BoostedStepModel`.

A black box beside the step forms: gradient boosting (scikit-learn) of log t_iter on log GPUs, log nodes and log
per-GPU batch, its size and learning rate chosen by 5-fold cross-validation on the rows it is fitted on (fixed
seeds). Beyond the fitted range a tree predicts its edge value: the step time stops changing with the scale, which
is what some clusters' traces do (a synchronisation hidden behind fast links). A scaling study scores it on the
same inner extrapolation splits as the step forms (:mod:`perfkit.model.selection.by_scale`), so it is chosen only
where the small runs themselves show that the flat edge extrapolates better.

The fitted trees are written out node by node (feature, threshold, children, leaf value): the saved model is JSON,
never pickle, and predicts exactly as the fitted one.
"""
from __future__ import annotations

import time

import numpy as np

from ..base import PerformanceForm
from .stepmodels import step_columns

__all__ = ["BoostedStepModel", "GRID"]

#: the settings tried by cross-validation (every combination)
GRID = {"n_estimators": [100, 300], "max_depth": [2, 3], "learning_rate": [0.05, 0.1]}
_SEED = 0


def _tree_doc(tree) -> dict:
    t = tree.tree_
    return {"left": t.children_left.tolist(), "right": t.children_right.tolist(), "feature": t.feature.tolist(),
            "threshold": [float(v) for v in t.threshold], "value": [float(v) for v in t.value[:, 0, 0]]}


def _tree_predict(doc: dict, Z: np.ndarray) -> np.ndarray:
    """The leaf values of the rows of ``Z`` (one tree, all rows walked down together)."""
    left, right = np.asarray(doc["left"]), np.asarray(doc["right"])
    feature, threshold = np.asarray(doc["feature"]), np.asarray(doc["threshold"])
    node = np.zeros(len(Z), dtype=int)
    rows = np.arange(len(Z))
    while True:
        inner = left[node] != -1
        if not inner.any():
            break
        f = np.where(inner, feature[node], 0)
        go_left = Z[rows, f] <= threshold[node]
        node = np.where(inner, np.where(go_left, left[node], right[node]), node)
    return np.asarray(doc["value"])[node]


class BoostedStepModel(PerformanceForm):
    """Gradient boosting of the step time on the log configuration (module docstring).

    Parameters
    ----------
    gpus, nodes, batch : str
        Columns of K (GPUs), N (nodes) and m (per-GPU batch): all that :meth:`predict` reads.

    Attributes
    ----------
    trees_ : list of dict
        The fitted trees, node by node; ``init_`` the initial log time, ``learning_rate_`` the shrinkage and
        ``settings_`` the settings cross-validation chose.
    """

    json_format = "perfkit.BoostedStepModel"
    json_version = 1
    fitted_keys = ("init", "learning_rate", "trees", "settings", "ranges", "n_fit", "fit_time")
    fitted_attribute = "trees_"

    def __init__(self, gpus="n_gpus", nodes="n_nodes", batch="batch_per_gpu"):
        self.gpus = gpus
        self.nodes = nodes
        self.batch = batch

    def _settings(self):
        names = [self.gpus, self.nodes, self.batch]
        if not all(isinstance(v, str) and v for v in names) or len(set(names)) < 3:
            raise ValueError(f"gpus, nodes, batch: expected three different column names, got {names}")
        return names

    def _features(self, X) -> np.ndarray:
        K, N, m = step_columns(X, self.gpus, self.nodes, self.batch)
        return np.log(np.column_stack([K, N, m]))

    def fit(self, X, y):
        """Fit to measured step times ``y`` (> 0) of the configurations ``X``; returns self."""
        from sklearn.ensemble import GradientBoostingRegressor
        from sklearn.model_selection import GridSearchCV, KFold

        from ..roles import record_roles
        from ..uncertainty.ranges import column_ranges
        from ..validation import validate_target

        cols = self._settings()
        Z = self._features(X)
        y = validate_target(y, X, positive=True)
        start = time.perf_counter()
        folds = KFold(min(5, len(y)), shuffle=True, random_state=_SEED)
        search = GridSearchCV(GradientBoostingRegressor(random_state=_SEED), GRID, cv=folds,
                              scoring="neg_mean_absolute_error", n_jobs=1).fit(Z, np.log(y))
        best = search.best_estimator_
        self.init_ = float(np.ravel(best.init_.constant_)[0])
        self.learning_rate_ = float(best.learning_rate)
        self.trees_ = [_tree_doc(e[0]) for e in best.estimators_]
        self.settings_ = {k: search.best_params_[k] for k in GRID}
        self.n_fit_ = int(len(y))
        self.fit_time_ = time.perf_counter() - start
        record_roles(self, [], [], cols)
        self.ranges_ = column_ranges(X, cols)
        return self

    def predict(self, X):
        """Predicted step time (seconds) of each configuration of ``X``."""
        self._check_fitted()
        Z = self._features(X)
        raw = self.init_ + self.learning_rate_ * sum(_tree_predict(t, Z) for t in self.trees_)
        return np.exp(raw)

    def fitted_ranges(self) -> dict | None:
        self._check_fitted()
        return self.ranges_

    @property
    def n_parameters_(self) -> int:
        self._check_fitted()
        return int(sum(len(t["value"]) for t in self.trees_))

    def formula(self, digits: int = 3) -> str:
        self._check_fitted()
        s = self.settings_
        return (f"t = exp(gradient boosting of log t on log {self.gpus}, log {self.nodes}, log {self.batch}: "
                f"{len(self.trees_)} trees of depth <= {s['max_depth']}, learning rate {s['learning_rate']:g})")

    def summary(self) -> str:
        self._check_fitted()
        return (f"BoostedStepModel: {self.formula()}\n  settings chosen by 5-fold CV on the {self.n_fit_} fit rows "
                f"({self.settings_}); beyond the fitted range every tree predicts its edge (a flat extrapolation)")

    # ------------------------------------------------------------------ JSON
    def _fitted_doc(self) -> dict:
        return {"init": self.init_, "learning_rate": self.learning_rate_, "trees": self.trees_,
                "settings": dict(self.settings_), "ranges": {c: [float(a), float(b)] for c, (a, b) in self.ranges_.items()},
                "n_fit": self.n_fit_, "fit_time": self.fit_time_}

    @classmethod
    def _restore(cls, model, checked, reader):
        from ..persist import is_finite
        from ..roles import record_roles
        from ..uncertainty.ranges import check_saved_ranges

        model.init_ = reader.number("init")
        model.learning_rate_ = reader.number("learning_rate", minimum=0)
        trees = reader["trees"]
        keys = ["feature", "left", "right", "threshold", "value"]
        ok = isinstance(trees, list) and trees and all(
            isinstance(t, dict) and sorted(t) == keys and len({len(t[k]) for k in keys}) == 1
            and all(isinstance(v, int) for v in t["feature"])
            and all(isinstance(a, int) and isinstance(b, int) and ((a == b == -1 and f == -2) or (
                i < a < len(t["value"]) and i < b < len(t["value"]) and 0 <= f <= 2))  # children after their node:
                    for i, (a, b, f) in enumerate(zip(t["left"], t["right"], t["feature"])))  # every walk ends
            and all(is_finite(v) for v in t["threshold"] + t["value"]) for t in trees)
        if not ok:
            raise reader.fail("fitted.trees: expected a non-empty list of trees {feature, left, right, threshold, "
                              "value}, one entry per node, children within the tree")
        settings = reader["settings"]
        if not isinstance(settings, dict) or sorted(settings) != sorted(GRID):
            raise reader.fail(f"fitted.settings: expected {sorted(GRID)}")
        model.trees_, model.settings_ = trees, dict(settings)
        model.n_fit_ = reader.count("n_fit", minimum=1)
        model.fit_time_ = reader.number("fit_time", minimum=0)
        record_roles(model, [], [], list(checked))
        model.ranges_ = check_saved_ranges(reader["ranges"], list(checked), reader.fail)
        return model
