"""The median of several model forms' predictions, each fitted on the same rows: :class:`MedianOfModels`.

A form in its own right (:class:`~perfkit.model.base.PerformanceForm`): it reads the union of its members' columns,
writes itself out member by member, and saves itself as JSON with every member's own document inside (never pickle).
Chosen, e.g., as the best k candidates of inner extrapolation splits
(:func:`perfkit.model.uncertainty.extrapolation.select_median_of_top`, :mod:`perfkit.model.selection.by_scale`).
"""
from __future__ import annotations

import numpy as np

from ..base import PerformanceForm
from ..roles import record_roles

__all__ = ["MedianOfModels", "BlendOfModels"]


def _union(members, attr: str) -> list:
    return list(dict.fromkeys(c for _, est in members for c in getattr(est, attr)))


class MedianOfModels(PerformanceForm):
    """The median over the members of their predictions (a scikit-learn regressor and a perfkit form).

    Parameters
    ----------
    estimators : list of (name, estimator)
        The members, perfkit model forms (unfitted; :meth:`fit` clones them), names distinct.

    Attributes
    ----------
    estimators_ : list of (name, fitted estimator)
    numeric_, categorical_, extrinsic_ : list
        The union of the members' fitted column roles (the columns a prediction reads).
    """

    json_format = "perfkit.MedianOfModels"
    json_version = 1
    fitted_keys = ("members",)
    fitted_attribute = "estimators_"

    def __init__(self, estimators=()):
        self.estimators = estimators

    def get_params(self, deep=True):
        return {"estimators": self.estimators}

    def set_params(self, **params):
        for k, v in params.items():
            if k != "estimators":
                raise ValueError(f"{k}: not a parameter of MedianOfModels")
            self.estimators = v
        return self

    def _settings(self):
        ok = isinstance(self.estimators, (list, tuple)) and len(self.estimators) > 0 and all(
            isinstance(e, (list, tuple)) and len(e) == 2 and isinstance(e[0], str) and isinstance(e[1], PerformanceForm)
            for e in self.estimators)
        if not ok:
            raise ValueError(f"estimators: expected a non-empty list of (name, perfkit model form), got "
                             f"{self.estimators!r}")
        names = [e[0] for e in self.estimators]
        if len(set(names)) < len(names):
            raise ValueError(f"estimators: the names must differ, got {names}")
        return list(self.estimators)

    def _record(self) -> None:
        members = self.estimators_
        record_roles(self, _union(members, "numeric_"), _union(members, "categorical_"),
                     _union(members, "extrinsic_"))

    def fit(self, X, y):
        """Fit a clone of every member on ``X``, ``y``; returns self."""
        from sklearn.base import clone

        self.estimators_ = [(name, clone(est).fit(X, y)) for name, est in self._settings()]
        self._record()
        return self

    def predict(self, X):
        """The median over the members of their predictions for the rows of ``X``."""
        self._check_fitted()
        return np.median(np.vstack([np.asarray(est.predict(X), dtype=float) for _, est in self.estimators_]), axis=0)

    def fitted_ranges(self) -> dict | None:
        """The members' fitted ranges merged (the widest min–max per column); None when no member keeps any."""
        self._check_fitted()
        out = {}
        for _, est in self.estimators_:
            for col, (lo, hi) in (est.fitted_ranges() or {}).items():
                a, b = out.get(col, (lo, hi))
                out[col] = (min(a, lo), max(b, hi))
        return out or None

    @property
    def n_parameters_(self) -> int:
        self._check_fitted()
        return int(sum(est.n_parameters_ for _, est in self.estimators_))

    def formula(self, digits: int = 3) -> str:
        """``median of: name: formula | ...`` of the fitted members."""
        self._check_fitted()
        return "median of: " + " | ".join(f"{name}: {est.formula(digits)}" for name, est in self.estimators_)

    def summary(self) -> str:
        self._check_fitted()
        parts = [f"MedianOfModels: the median of {len(self.estimators_)} forms' predictions"]
        parts += [f"-- {name}\n{est.summary()}" for name, est in self.estimators_]
        return "\n".join(parts)

    # ------------------------------------------------------------------ JSON
    def _settings_doc(self) -> dict:
        return {"estimators": [name for name, _ in self.estimators]}

    @classmethod
    def _from_settings(cls, settings):
        names = settings.get("estimators")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise ValueError("estimators: expected a non-empty list of member names")
        return cls([]), names

    def _fitted_doc(self) -> dict:
        return {"members": [{"name": name, "model": est.to_doc()} for name, est in self.estimators_]}

    @classmethod
    def _restore(cls, model, checked, reader):
        from ..persist import model_from_doc

        members = reader["members"]
        if not isinstance(members, list) or [m.get("name") if isinstance(m, dict) else None for m in members] != checked:
            raise reader.fail(f"fitted.members: expected one {{name, model}} per member {checked}")
        fitted = []
        for m in members:
            est = model_from_doc(m["model"], reader.where)
            if not isinstance(est, PerformanceForm):
                raise reader.fail(f"fitted.members[{m['name']!r}]: expected a model form, got {type(est).__name__}")
            fitted.append((m["name"], est))
        model.estimators = fitted
        model.estimators_ = fitted
        model._record()
        return model


class BlendOfModels(MedianOfModels):
    """A weighted geometric mean of the members' predictions, exp(Σ wᵢ·log ŷᵢ) (weights >= 0 summing to 1): two
    forms whose errors beyond the measured scale lie on opposite sides blended (the weights chosen, e.g., on inner
    extrapolation splits: :func:`perfkit.model.selection.by_scale.choose_by_scale`).

    Parameters
    ----------
    estimators : list of (name, estimator)
        The members, perfkit model forms (unfitted; :meth:`fit` clones them), names distinct.
    weights : list of float
        One weight per member, each in [0, 1], summing to 1.
    """

    json_format = "perfkit.BlendOfModels"

    def __init__(self, estimators=(), weights=()):
        self.estimators = estimators
        self.weights = weights

    def get_params(self, deep=True):
        return {"estimators": self.estimators, "weights": self.weights}

    def set_params(self, **params):
        for k, v in params.items():
            if k not in ("estimators", "weights"):
                raise ValueError(f"{k}: not a parameter of BlendOfModels")
            setattr(self, k, v)
        return self

    def _weights(self) -> np.ndarray:
        from ..persist import is_finite

        w = self.weights
        ok = (isinstance(w, (list, tuple, np.ndarray)) and len(w) == len(self.estimators)
              and all(is_finite(v) and 0 <= v <= 1 for v in w) and abs(float(np.sum(w)) - 1.0) < 1e-9)
        if not ok:
            raise ValueError(f"weights: expected one weight in [0, 1] per member ({len(self.estimators)}), summing "
                             f"to 1, got {w!r}")
        return np.asarray(w, dtype=float)

    def _settings(self):
        members = super()._settings()
        self._weights()
        return members

    def _logs(self, X) -> np.ndarray:
        """The members' log predictions for the rows of ``X``, one row per member."""
        self._check_fitted()
        return np.vstack([np.log(np.asarray(est.predict(X), dtype=float)) for _, est in self.estimators_])

    def predict(self, X):
        """exp(Σ wᵢ·log ŷᵢ) over the members' predictions for the rows of ``X``."""
        return np.exp(self._weights() @ self._logs(X))

    def spread(self, X) -> np.ndarray:
        """Per row of ``X``, max − min over the members of log ŷ: how far the blended forms part there."""
        logs = self._logs(X)
        return logs.max(axis=0) - logs.min(axis=0)

    def formula(self, digits: int = 3) -> str:
        """``blend of: weight × name: formula | ...`` of the fitted members."""
        self._check_fitted()
        return "blend of: " + " | ".join(f"{w:.{digits}g} × {name}: {est.formula(digits)}"
                                         for w, (name, est) in zip(self._weights(), self.estimators_))

    def summary(self) -> str:
        self._check_fitted()
        w = ", ".join(f"{name} {v:.3g}" for v, (name, _) in zip(self._weights(), self.estimators_))
        parts = [f"BlendOfModels: exp(Σ wᵢ·log ŷᵢ) of {len(self.estimators_)} forms' predictions, weights {w}"]
        parts += [f"-- {name}\n{est.summary()}" for name, est in self.estimators_]
        return "\n".join(parts)

    def _settings_doc(self) -> dict:
        return {"estimators": [name for name, _ in self.estimators], "weights": [float(v) for v in self._weights()]}

    @classmethod
    def _from_settings(cls, settings):
        from ..persist import is_finite

        model, names = super()._from_settings(settings)
        w = settings.get("weights")
        if not (isinstance(w, list) and len(w) == len(names) and all(is_finite(v) and 0 <= v <= 1 for v in w)
                and abs(float(np.sum(w)) - 1.0) < 1e-9):
            raise ValueError(f"weights: expected one weight in [0, 1] per member ({len(names)}), summing to 1")
        model.weights = [float(v) for v in w]
        return model, names
