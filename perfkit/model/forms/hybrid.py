"""The hybrid form: analytic costs of the network times fitted rates.

The generic model (eq. 4.4) and the log-linear form learn how a hyperparameter
changes the time from the data alone. The hybrid form starts from what the
configuration *costs*, computed from the architecture by the cost model of
:mod:`perfkit.model.forms.costs` (forward FLOPs, activation elements and parameters of
the real network, batch 1), and fits one rate per cost:

.. math::
    t = S \\cdot \\big(\\rho_F \\, B F + \\rho_A \\, B A + \\rho_U \\, P
        + \\rho_R \\, P [G > 1] + \\rho_0\\big)

with B the per-worker batch, G the workers, F, A, P the per-sample FLOPs,
activations and parameters, and S the steps of an epoch, ⌈n_train / (B·G)⌉, when
the target is an epoch time (``n_train="auto"``; ``None`` models a step time).
So ρ_F is seconds per forward FLOP (the backward pass costs about twice the
forward, so it is inside ρ_F), ρ_A seconds per activation element (memory-bound
work: activations, normalisation, the stored tensors of the backward pass), ρ_U
seconds per parameter update (optimizer), ρ_R seconds per all-reduced parameter and
ρ_0 a fixed cost per step (launch, synchronisation, Python).

**Modifiers.** A rate may differ by the level of a categorical column: the compute
rate by the number of workers (G workers on fewer cores share them), the update
rate by the optimizer (Adam does more per parameter than SGD), the activation rate
by the activation function. ``modifiers={"compute": ["workers"], ...}`` gives that
cost one rate per level; the levels seen in fit are the model's.

**Regimes.** Where the data changes regime (in Chapter 5 a batch of one is slower
per step than a batch of two), ``regimes=["batch_size=1"]`` adds the indicator
column ``[batch_size = 1]``, usable as a modifier like any categorical. Whether a
regime earns its place is for cross-validation to say (:func:`perfkit.model.selection.search.search_forms`
tries the variants of :func:`perfkit.model.forms.hybrid_sets.hybrid_variants`).

**Fit.** Every term is a cost times a rate ≥ 0, so the model is linear in the
rates: non-negative least squares on the relative error, min Σ((y − ŷ)/y)²
(:func:`scipy.optimize.nnls`, columns scaled to a maximum of 1). It is convex: one
answer, no seeds. A rate fitted at 0 drops its term.

**Rates by the layer shape** (width ``num_filters`` and ``padding``: a CPU's convolution kernels do not run
every shape at the same speed). Every combination of modifier levels then needs its own rate and must occur in
fit (a new combination is refused by name; :meth:`HybridModel.predictable` says which rows are covered), so
those variants are tried by the form search, which checks them by cross-validation, and not by
``make_form("hybrid")``.
"""
from __future__ import annotations

import difflib
import time

import numpy as np

from ..._checks import check_int
from ...measure.spaces import DATASET_SHAPES
from ..base import PerformanceForm
from .costs import CONFIG_KEYS, NETWORKS, add_costs
from ..uncertainty.leverage import leverage_basis, leverage_of
from ..persist import is_finite
from ..roles import column_equals, count_column, record_roles, role_lists, warn_ignored_columns
from ..validation import column_list, plain_value, validate_frame, validate_target

__all__ = ["HybridModel", "COSTS", "JSON_FORMAT", "JSON_VERSION", "check_fixed"]

JSON_FORMAT = "perfkit.HybridModel"
JSON_VERSION = 1
#: cost name → (what it is, the unit of its rate)
COSTS = {
    "compute": ("forward FLOPs of the step's batch, B·F", "s per forward FLOP"),
    "activations": ("activation elements of the step's batch, B·A", "s per activation element"),
    "update": ("parameters updated, P", "s per parameter"),
    "allreduce": ("parameters all-reduced when G > 1, P·[G>1]", "s per parameter"),
    "step": ("one step", "s per step"),
}


def _n_train_lenet5(X, fixed):
    col = [fixed["dataset"]] * len(X) if "dataset" in fixed else X["dataset"]  # a key of fixed or a column of the model
    return np.array([DATASET_SHAPES[d][3] for d in col], dtype=float)


#: network → its training-set size when the data has no ``n_train`` column (the harness's datasets)
_N_TRAIN = {
    "lenet5": _n_train_lenet5,
    "resattnet3d": lambda X, fixed: np.full(len(X), float(fixed.get("n_train", 431))),
}


#: configuration keys whose values are text (the others are whole numbers >= 1); ``volume`` may also be three sizes
_TEXT_KEYS = ("dataset", "padding", "activation", "volume")
#: inputs of the cost model that change no count (it only checks them): a column of them that the model does not
#: read cannot make a prediction wrong
_NO_COUNT = ("activation",)


def check_fixed(network: str, fixed, roles: dict, n_train) -> dict:
    """``fixed`` checked: a dict of inputs of ``network``'s cost model (:data:`~perfkit.model.forms.costs.CONFIG_KEYS`,
    and ``n_train`` with ``n_train="auto"``), none of them a column of the model (``roles``: column → role), each
    a whole number >= 1 or, for the keys of :data:`_TEXT_KEYS`, a non-empty string."""
    if fixed is None:
        return {}
    if not isinstance(fixed, dict):
        raise ValueError(f"fixed: expected a dict of configuration key -> value, got {fixed!r}")
    required, optional = CONFIG_KEYS[network]
    known = [*required, *optional, "n_train"]
    for key, value in fixed.items():
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"fixed: {key!r} is not an input of the {network} cost model (its inputs: {known}){hint}")
        if key in roles:
            raise ValueError(f"fixed: {key!r} is also a {roles[key]} column of the model; give it as a column or as "
                             "a constant, not both")
        if key == "n_train" and n_train != "auto":
            raise ValueError(f"fixed: 'n_train' is read only with n_train='auto' (this model's n_train is {n_train!r})")
        if key in _TEXT_KEYS:
            ok = (isinstance(value, str) and bool(value.strip())) or (
                key == "volume" and isinstance(value, (list, tuple)) and len(value) == 3
                and all(is_finite(v) for v in value))
            what = "a non-empty string" + (" or three sizes" if key == "volume" else "")
        else:
            ok = is_finite(value) and float(value).is_integer() and value >= 1
            what = "a whole number >= 1"
        if not ok:
            raise ValueError(f"fixed[{key!r}]: expected {what}, got {value!r}")
    return dict(fixed)


def _level_keys(X, cols, extra) -> np.ndarray:
    """One key per row naming its levels of ``cols`` (``extra``: the regime indicator columns), e.g.
    ``"workers=2; padding=same"``: the level of a modified rate."""
    parts = [extra[c] if c in extra else np.char.add(f"{c}=", X[c].astype(str).to_numpy().astype(str)) for c in cols]
    return np.array(["; ".join(vals) for vals in zip(*parts)], dtype=object)


def _g(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


class HybridModel(PerformanceForm):
    """Analytic costs of the network (FLOPs, activations, parameters) times fitted rates.

    Parameters
    ----------
    network : str
        A network of :data:`perfkit.model.forms.costs.NETWORKS` ("lenet5", "resattnet3d", ...).
    numeric, categorical, extrinsic : list of str or str
        Column roles, as for the other forms: the only columns of ``X`` the form
        reads (and what the extrapolation guard of the intervals checks). Each
        input of the cost model (:data:`~perfkit.model.forms.costs.CONFIG_KEYS`) is one
        of them or a key of ``fixed``; a required input that is neither is an
        error naming it. A column of ``X`` that is an input of the cost model (or
        ``n_train``) but none of these must hold the value the model uses (its
        ``fixed`` value, its training-set size) on every row, else one
        ``ValueError`` names the column, row and value; :meth:`predict` names the
        other columns it ignores (an :class:`~perfkit.model.roles.IgnoredColumnWarning`).
    batch, workers : str
        Columns of the per-worker batch size and the number of workers: numeric or
        extrinsic columns of the model, whole numbers >= 1 in every row.
    fixed : dict, optional
        Constant inputs of the cost model that are not columns of the model, e.g.
        ``{"stride": 2, "volume": "48x56x48"}`` for Chapter 5 (also ``n_train``
        with ``n_train="auto"``): a key unknown to the cost model or that is a
        column of the model is an error naming it; values are whole numbers >= 1,
        or non-empty strings for dataset, padding, activation and volume.
    modifiers : dict, optional
        Cost name (a key of :data:`COSTS`) → columns (categorical, extrinsic or a
        regime) whose levels get their own rate of that cost.
    regimes : list of str
        Indicator columns ``"col=value"`` (``"col=min"``: the column's smallest value in fit) of columns of the
        model.
    n_train : "auto", int or None
        Training-set size for the steps per epoch S (the target is an epoch time).
        "auto": ``fixed["n_train"]``, else the ``n_train`` column if it is a column
        of the model, else the network's dataset size (lenet5: that of each row's
        dataset; resattnet3d: 431; the other networks have none and need one of
        the first two); None: S = 1 (the target is a step time).
    random_state : int
        Unused (the fit is deterministic); kept so every form takes the same arguments.

    Attributes
    ----------
    rates_ : numpy.ndarray
        The fitted rate of each term, in the order of ``terms_`` (cost, level).
    terms_ : list of (cost, level)
        level is "" for a rate shared by every row.
    n_parameters_ : int
        Rates > 0 (the terms that remain).
    regime_values_ : dict
        Regime → the value of its column that it marks (``"col=min"``: the smallest in fit).
    share_ : dict
        Cost name → mean share of the predicted time on the training rows.
    leverage_scale_, leverage_basis_ : numpy.ndarray
        Column scales of the fit and the :func:`~perfkit.model.uncertainty.conformal.leverage_basis` of its relative-error
        design on the rates > 0 (zero rows for the others): what :meth:`leverage` needs.
    """

    def __init__(self, network="lenet5", numeric=(), categorical=(), extrinsic=(), *, batch="batch_size",
                 workers="workers", fixed=None, modifiers=None, regimes=(), n_train="auto", random_state=0):
        self.network = network
        self.numeric = numeric
        self.categorical = categorical
        self.extrinsic = extrinsic
        self.batch = batch
        self.workers = workers
        self.fixed = fixed
        self.modifiers = modifiers
        self.regimes = regimes
        self.n_train = n_train
        self.random_state = random_state

    json_format = JSON_FORMAT
    json_version = JSON_VERSION
    fitted_keys = ("numeric", "categorical", "extrinsic", "terms", "rates", "regime_values", "share", "fit_time",
                   "leverage")
    fitted_attribute = "rates_"
    has_leverage = True

    # ------------------------------------------------------------------ setup
    def _settings(self):
        """Every setting checked (one ``ValueError`` naming the one at fault): the roles, ``batch`` and ``workers``
        (numeric or extrinsic columns of the model), ``fixed`` (:func:`check_fixed`), regimes and modifiers (of the
        model's columns), ``n_train``."""
        if not isinstance(self.network, str) or self.network not in NETWORKS:
            raise ValueError(f"network: expected one of {sorted(NETWORKS)}, got {self.network!r}")
        num, cat, ext = role_lists(self.numeric, self.categorical, self.extrinsic)
        roles = {c: r for r, cols in (("numeric", num), ("categorical", cat), ("extrinsic", ext)) for c in cols}
        for name in ("batch", "workers"):
            col = getattr(self, name)
            if not isinstance(col, str):
                raise ValueError(f"{name}: expected a column name, got {col!r}")
            if roles.get(col) not in ("numeric", "extrinsic"):
                raise ValueError(f"{name}: {col!r} is not a numeric or extrinsic column of the model (the form reads "
                                 f"only its columns); add it to extrinsic=")
        if not (self.n_train in ("auto", None) or (isinstance(self.n_train, int) and not isinstance(self.n_train, bool)
                                                     and self.n_train >= 1)):
            raise ValueError(f"n_train: expected 'auto', None or an integer >= 1, got {self.n_train!r}")
        fixed = check_fixed(self.network, self.fixed, roles, self.n_train)
        regimes = column_list("regimes", self.regimes)
        for r in regimes:
            if r.count("=") != 1 or not all(r.split("=")):
                raise ValueError(f"regimes: {r!r} is not 'column=value' (or 'column=min')")
            if r.split("=")[0] not in roles:
                raise ValueError(f"regimes: {r!r} names column {r.split('=')[0]!r}, which is not a column of the "
                                 f"model ({sorted(roles)})")
        mods = {} if self.modifiers is None else self.modifiers
        if not isinstance(mods, dict):
            raise ValueError(f"modifiers: expected a dict of cost -> columns, got {self.modifiers!r}")
        known = set(roles) | set(regimes)
        for cost, cols in mods.items():
            if cost not in COSTS:
                raise ValueError(f"modifiers: unknown cost {cost!r}; expected one of {list(COSTS)}")
            for c in column_list(f"modifiers[{cost!r}]", cols):
                if c not in known:
                    raise ValueError(f"modifiers[{cost!r}]: {c!r} is not a column of the model or a regime "
                                     f"({sorted(known)})")
        check_int("random_state", self.random_state, minimum=0)
        return num, cat, ext, fixed, regimes, {k: column_list(k, v) for k, v in mods.items()}

    # --------------------------------------------------------------- features
    def _costs(self, X, fixed, columns):
        """Per-sample FLOPs, activations and parameters of each row: every key of the cost model from a column of
        the model or from ``fixed`` (a required key that is neither is an error naming it)."""
        import pandas as pd

        required, optional = CONFIG_KEYS[self.network]
        missing = [k for k in required if k not in columns and k not in fixed]
        if missing:
            raise ValueError(f"{self.network}: the cost model needs column(s) {missing}, which are neither columns of "
                             "the model nor keys of fixed= (the form reads only its columns); add them to the model's "
                             "columns or to fixed= (perfkit fit --fixed key=value)")
        keys = [k for k in (*required, *optional) if k in columns or k in fixed]
        frame = pd.DataFrame({k: X[k].to_numpy() if k in columns else [fixed[k]] * len(X) for k in keys},
                             index=X.index)
        c = add_costs(frame, self.network)
        return c["flops_fwd"].to_numpy(float), c["activations"].to_numpy(float), c["n_params_model"].to_numpy(float)

    def _n_train_rows(self, X, fixed, columns):
        """The training-set size of each row (None for a step-time target): the ``n_train`` setting, else
        ``fixed["n_train"]``, else the model's ``n_train`` column, else the network's dataset size."""
        if self.n_train is None:
            return None
        if isinstance(self.n_train, int):
            return np.full(len(X), float(self.n_train))
        if "n_train" in fixed:
            return np.full(len(X), float(fixed["n_train"]))
        if "n_train" in columns:
            return count_column(X, "n_train")
        if self.network not in _N_TRAIN:
            raise ValueError(f"n_train: the {self.network} network has no dataset size of its own; give n_train= an "
                             "integer, fixed={'n_train': ...}, an n_train column of the model, or n_train=None "
                             "(step times)")
        return _N_TRAIN[self.network](X, fixed)

    def _check_unread(self, X, fixed, columns, n) -> None:
        """A column of ``X`` that is an input of the cost model (or ``n_train``) but no column of the model must hold
        the value the model uses (its ``fixed`` value, its training-set size), so that it cannot say one thing while
        the prediction assumes another; one with no such value (a default of the cost model) is an error."""
        required, optional = CONFIG_KEYS[self.network]
        for k in (*required, *optional, "n_train"):
            if k in columns or k not in X.columns or k in _NO_COUNT or (k == "n_train" and n is None):
                continue
            if k != "n_train" and k not in fixed:
                raise ValueError(f"X: column {k!r} is an input of the {self.network} cost model but neither a column "
                                 "of the model nor a key of fixed= (the model would use the cost model's default, "
                                 "whatever the column says); add it to the model's columns or to fixed= (perfkit fit "
                                 "--fixed key=value)")
            used = n if k == "n_train" else fixed[k]
            bad = ~column_equals(X[k], used, k)
            if bad.any():
                pos = int(np.flatnonzero(bad)[0])
                want = used[pos] if k == "n_train" else used
                source = "fixed=" if k in fixed else "n_train=" if isinstance(self.n_train, int) else "dataset size"
                raise ValueError(f"X: column {k!r} is {plain_value(X[k].iloc[pos])!r} in row "
                                 f"{plain_value(X.index[pos])!r}, but the model uses {k} = {_g(plain_value(want))} "
                                 f"({source}) and does not read that column; make {k!r} a column of the model to "
                                 "use other values")

    def _regime_columns(self, X, regimes, fit):
        cols = {}
        for r in regimes:
            col, value = r.split("=")
            if col not in X.columns:
                raise ValueError(f"regimes: {r!r} names column {col!r}, which X does not have")
            v = X[col].to_numpy()
            numeric = np.issubdtype(v.dtype, np.number)
            if fit:
                self.regime_values_[r] = float(np.min(v)) if value == "min" else value
            target = self.regime_values_[r]
            try:
                hit = v.astype(float) == float(target) if numeric else v.astype(str) == str(target)
            except ValueError:
                hit = v.astype(str) == str(target)
            cols[r] = np.where(hit, f"{col}={_g(target)}", f"{col}≠{_g(target)}")
        return cols

    def _design(self, X, fit=False):
        num, cat, ext, fixed, regimes, mods = self._settings()
        columns = set(num) | set(cat) | set(ext)
        B, G = count_column(X, self.batch), count_column(X, self.workers)
        F, A, P = self._costs(X, fixed, columns)
        n = self._n_train_rows(X, fixed, columns)
        self._check_unread(X, fixed, columns, n)
        S = np.ones(len(X)) if n is None else np.ceil(n / (B * G))
        base = {"compute": B * F, "activations": B * A, "update": P, "allreduce": P * (G > 1), "step": np.ones(len(X))}
        if fit:
            self.regime_values_ = {}
        extra = self._regime_columns(X, regimes, fit)

        if fit:
            terms = []
            for cost in COSTS:
                cols = mods.get(cost, [])
                if cols:
                    terms += [(cost, lv) for lv in sorted(set(_level_keys(X, cols, extra)))]
                else:
                    terms.append((cost, ""))
            self.terms_ = terms
        cols, by_cost = [], {}
        for cost, level in self.terms_:
            if cost not in by_cost:
                c = mods.get(cost, [])
                by_cost[cost] = _level_keys(X, c, extra) if c else None
            k = by_cost[cost]
            mask = 1.0 if k is None else (k == level).astype(float)
            cols.append(S * base[cost] * mask)
        unseen = {cost: sorted(set(k) - {lv for c, lv in self.terms_ if c == cost})
                  for cost, k in by_cost.items() if k is not None}
        unseen = {c: v for c, v in unseen.items() if v}
        if unseen and not fit:
            cost, levels = next(iter(unseen.items()))
            row = X.index[int(np.flatnonzero(by_cost[cost] == levels[0])[0])]
            raise ValueError(f"row {plain_value(row)!r} ({levels[0]}): the hybrid form's {cost} rate was fitted per "
                             f"measured level of {', '.join(mods[cost])} and this combination was not measured; this "
                             "form predicts only measured levels (a log-linear or thesis form predicts any value)")
        return np.column_stack(cols)

    # -------------------------------------------------------------------- fit
    def fit(self, X, y):
        """Fit the rates by non-negative least squares on the relative error (see the module docstring)."""
        from scipy.optimize import nnls
        from threadpoolctl import threadpool_limits

        num, cat, ext, fixed, regimes, mods = self._settings()
        validate_frame(X, num, cat, ext)
        y = validate_target(y, X, positive=True)
        start = time.perf_counter()
        with threadpool_limits(1):
            Phi = self._design(X, fit=True)
            scale = Phi.max(axis=0)
            scale[scale == 0] = 1.0
            A = (Phi / scale) / y[:, None]
            rates, _ = nnls(A, np.ones(len(y)), maxiter=50 * A.shape[1])
        self.rates_ = rates / scale
        # the fitted rates are linear in y on the rates > 0: their leverage is that of the active columns
        active = rates > 0
        basis = np.zeros((len(rates), 0))
        if active.any():
            with threadpool_limits(1):
                sub = leverage_basis(A[:, active])
            basis = np.zeros((len(rates), sub.shape[1]))
            basis[active] = sub
        self.leverage_scale_, self.leverage_basis_ = scale, basis
        record_roles(self, num, cat, ext)
        contrib = Phi * self.rates_
        total = contrib.sum(axis=1)
        share = {}
        for (cost, _), col in zip(self.terms_, contrib.T):
            share[cost] = share.get(cost, 0.0) + float(np.mean(col / total))
        self.share_ = share
        self.fit_time_ = time.perf_counter() - start
        return self

    def predict(self, X):
        """Predicted times for the rows of ``X`` (> 0: a saved model has a rate > 0).

        The form reads only its columns (the roles) and the constants of ``fixed``: a missing column, a value that
        is not finite or out of range (a batch, workers or ``n_train`` that is not a whole number >= 1, a
        configuration the cost model refuses), a level of a modified rate not seen in fit, or a column that is an
        input of the cost model and says other than the model's constant is one ``ValueError`` naming it; other
        columns are ignored, with an :class:`~perfkit.model.roles.IgnoredColumnWarning` naming them.
        """
        self._check_fitted()
        validate_frame(X, self.numeric_, self.categorical_, self.extrinsic_)
        pred = self._design(X) @ self.rates_
        warn_ignored_columns(self, X)
        return pred

    def leverage(self, X) -> np.ndarray:
        """Leverage of the rows of ``X`` in the relative-error fit: the variance of ŷ/y there in units of the
        residual variance, h(x) = wᵀ(WᵀW)⁺w over the rates > 0, with w the row's costs divided by its prediction
        and W those of the rows of fit divided by their times (columns scaled as in the fit). Studentised
        conformal intervals (:class:`~perfkit.model.uncertainty.conformal.ConformalRegressor`, ``method="studentized"``)
        widen by √(1 + h)."""
        self._check_fitted()
        validate_frame(X, self.numeric_, self.categorical_, self.extrinsic_)
        Phi = self._design(X)
        W = (Phi / self.leverage_scale_) / (Phi @ self.rates_)[:, None]
        return leverage_of(W, self.leverage_basis_)

    def predictable(self, X) -> np.ndarray:
        """Mask of the rows of ``X`` that every rate of the model covers.

        A rate with modifiers has one value per combination of its columns' levels seen in fit; a row whose
        combination was not seen has no rate, and :meth:`predict` refuses it by name. Cross-validation
        (:func:`perfkit.model.selection.search.search_forms`, the CV+ calibration) scores only the rows that every
        candidate can predict.
        """
        self._check_fitted()
        num, cat, ext, fixed, regimes, mods = self._settings()
        extra = self._regime_columns(X, regimes, fit=False)
        ok = np.ones(len(X), dtype=bool)
        for cost, cols in mods.items():
            if cols:
                seen = [lv for c, lv in self.terms_ if c == cost]
                ok &= np.isin(_level_keys(X, cols, extra), seen)
        return ok

    def level_bound_columns(self) -> list:
        """The numeric and extrinsic columns among the rates' modifiers: a modified rate has one value per level
        seen in fit, so these columns are predicted only at their measured values."""
        num, _, ext, _, _, mods = self._settings()
        cols = {c for cs in mods.values() for c in cs}
        return [c for c in [*num, *ext] if c in cols]

    # --------------------------------------------------------------- reports
    @property
    def n_parameters_(self) -> int:
        """Fitted parameters: the rates > 0 (the terms that remain)."""
        self._check_fitted()
        return int(np.count_nonzero(self.rates_))

    @property
    def params_(self):
        """The rates as a DataFrame: cost, level, rate, unit, what the cost counts."""
        import pandas as pd

        self._check_fitted()
        return pd.DataFrame([dict(cost=c, level=lv, rate=float(r), unit=COSTS[c][1], counts=COSTS[c][0])
                             for (c, lv), r in zip(self.terms_, self.rates_)])

    def formula(self, digits: int = 3) -> str:
        """The fitted model in one line (rates > 0 only)."""
        self._check_fitted()
        d = check_int("digits", digits, minimum=1)
        sym = {"compute": "B·F", "activations": "B·A", "update": "P", "allreduce": "P·[G>1]", "step": "1"}
        parts = [f"{r:.{d}g}·{sym[c]}" + (f"[{lv}]" if lv else "") for (c, lv), r in zip(self.terms_, self.rates_)
                 if r > 0]
        head = "t = S·(" if self.n_train is not None else "t = ("
        return head + " + ".join(parts) + ")"

    def summary(self) -> str:
        """A printable report: the form, the rates with their units, and where the time goes."""
        import pandas as pd

        self._check_fitted()
        lines = [f"HybridModel on the analytic costs of {self.network!r} (perfkit.model.forms.costs)",
                 "  t = S·(ρ_F·B·F + ρ_A·B·A + ρ_U·P + ρ_R·P·[G>1] + ρ_0), rates >= 0, fitted on relative error",
                 f"  {self.n_parameters_} rates > 0 of {len(self.terms_)}; fit {self.fit_time_:.2f} s",
                 "  share of the predicted time (training rows): "
                 + ", ".join(f"{c} {100 * s:.0f} %" for c, s in self.share_.items()), ""]
        with pd.option_context("display.width", 200, "display.max_rows", 200):
            table = self.params_.drop(columns=["counts"]).to_string(index=False, float_format=lambda v: f"{v:.4g}")
        return "\n".join(lines) + table

    # ------------------------------------------------------------------ JSON
    def _fitted_doc(self) -> dict:
        """The ``fitted`` object of :meth:`to_doc`: roles, terms ``[cost, level]``, rates, regimes, shares and the
        leverage arrays."""
        return {"numeric": self.numeric_, "categorical": self.categorical_, "extrinsic": self.extrinsic_,
                "terms": [list(t) for t in self.terms_], "rates": [float(r) for r in self.rates_],
                "regime_values": self.regime_values_, "share": self.share_, "fit_time": self.fit_time_,
                "leverage": {"scale": [float(v) for v in self.leverage_scale_],
                             "basis": [[float(v) for v in row] for row in self.leverage_basis_]}}

    @classmethod
    def _restore(cls, model, checked, reader):
        """Check a document's ``fitted`` object (terms of known costs, rates >= 0, one value per regime, ...) and
        set it on ``model``."""
        num, cat, ext, fixed, regimes, mods = checked
        reader.roles(num, cat, ext)
        terms, short = reader["terms"], reader.short
        if not isinstance(terms, list) or not all(isinstance(t, list) and len(t) == 2 and isinstance(t[0], str)
                                                  and t[0] in COSTS and isinstance(t[1], str) for t in terms):
            raise reader.fail(f"fitted.terms: expected a list of [cost, level] pairs, got {short(terms)}")
        _check_terms(reader, [tuple(t) for t in terms], mods)
        rates = reader["rates"]
        if not isinstance(rates, list) or len(rates) != len(terms) or not all(is_finite(r) and r >= 0 for r in rates):
            raise reader.fail(f"fitted.rates: expected {len(terms)} finite numbers >= 0, got {short(rates)}")
        if not any(r > 0 for r in rates):
            raise reader.fail("fitted.rates: every rate is 0 (the model would predict 0 s for every configuration)")
        rv = reader["regime_values"]
        if not isinstance(rv, dict) or sorted(rv) != sorted(regimes):
            raise reader.fail(f"fitted.regime_values: expected one value per regime {regimes}, got {short(rv)}")
        for r, v in rv.items():
            want = r.split("=")[1]
            if not (is_finite(v) if want == "min" else v == want):
                raise reader.fail(f"fitted.regime_values[{r!r}]: expected "
                                  f"{'a finite number' if want == 'min' else repr(want)}, got {short(v)}")
        share = reader["share"]
        if not isinstance(share, dict) or not all(k in COSTS and is_finite(v) and v >= 0 for k, v in share.items()):
            raise reader.fail(f"fitted.share: expected cost -> number >= 0, got {short(share)}")
        lev = reader.leverage(len(terms), ("scale", "basis"))
        model.leverage_scale_, model.leverage_basis_ = lev["scale"], lev["basis"]
        record_roles(model, num, cat, ext)
        model.terms_ = [tuple(t) for t in terms]
        model.rates_ = np.asarray(rates, dtype=float)
        model.regime_values_ = dict(rv)
        model.share_ = dict(share)
        model.fit_time_ = reader.number("fit_time", minimum=0)
        return model


def _check_terms(reader, terms, mods) -> None:
    """The saved terms are those a fit makes (:meth:`HybridModel._design`): every cost of :data:`COSTS`, once with
    level ``""`` unless it has modifiers, else once per level (distinct, non-empty)."""
    for cost in COSTS:
        levels = [lv for c, lv in terms if c == cost]
        ok = (levels == [""]) if not mods.get(cost) else (levels and len(set(levels)) == len(levels) and all(levels))
        if not ok:
            how = "one level per combination of its modifiers' levels" if mods.get(cost) else 'one term, level ""'
            raise reader.fail(f"fitted.terms: the {cost} rate expects {how}, got levels {reader.short(levels)}")
