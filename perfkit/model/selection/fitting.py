"""Repeated fits, regularisation sweeps and a cross-validated choice of λ (Chapter 4).

All loops run through joblib, so choosing a joblib backend (``backend="loky"``
locally, ``"dask"`` or ``"ray"`` with a cluster registered) scales the same call
out; ``n_jobs`` sets the number of workers. Progress is shown with tqdm.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["RepeatedFit", "fit_repeated", "regularisation_sweep", "choose_lambda_cv", "DEFAULT_LAMBDAS", "check_n_jobs",
           "run_parallel", "parameters_on_bounds"]

#: log grid of λ used by default (the thesis's Figures 4.15–4.17 span a log scale around 1e-3)
DEFAULT_LAMBDAS = tuple(10.0 ** k for k in range(-6, 1))


def check_n_jobs(n_jobs):
    """joblib's ``n_jobs``: None, or a non-zero integer (-1: all cores, -2: all but one, ...)."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs: expected a non-zero integer (1 = serial, -1 = all cores), got {n_jobs!r}")
    return int(n_jobs)


def _check_seeds(seeds, name: str = "seeds") -> list[int]:
    """A count n >= 1 (seeds 0..n-1) or a non-empty sequence of integer seeds >= 0, as a list."""
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, (bool, np.bool_)):
        if seeds < 1:
            raise ValueError(f"{name}: expected a number of seeds >= 1 or a list of seeds, got {seeds!r}")
        return list(range(int(seeds)))
    try:
        out = list(seeds)
    except TypeError:
        raise ValueError(f"{name}: expected a number of seeds >= 1 or a list of seeds, got {seeds!r}") from None
    if not out:
        raise ValueError(f"{name}: need at least one seed")
    for s in out:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(f"{name}: every seed must be an integer >= 0, got {s!r}")
    return [int(s) for s in out]


def _check_lams(lams) -> list[float]:
    """A non-empty grid of finite λ >= 0."""
    from ..._checks import check_number

    try:
        grid = list(lams)
    except TypeError:
        raise ValueError(f"lams: expected a list of λ values >= 0, got {lams!r}") from None
    if not grid:
        raise ValueError("lams: the λ grid is empty; give at least one value >= 0")
    return [check_number(f"lams[{i}]", v) for i, v in enumerate(grid)]


def run_parallel(n_jobs, backend, tasks, total, desc, progress):
    """Run ``tasks`` through joblib, in order, with a tqdm bar labelled ``desc``; fits done / ``total`` also go to
    ``$PERFKIT_PROGRESS`` when it is set (:func:`perfkit.progress.track`: what ``perfkit reproduce`` shows)."""
    from joblib import Parallel, parallel_config
    from tqdm.auto import tqdm

    from ...progress import track

    with parallel_config(**_backend_kw(backend)):
        gen = track(Parallel(n_jobs=n_jobs, return_as="generator")(tasks), desc, total)
        return list(tqdm(gen, total=total, desc=desc, disable=not progress, leave=False))


def _backend_kw(backend) -> dict:
    return {} if backend is None else {"backend": backend}


def _fit_one(estimator, X, y, **params):
    """A clone of ``estimator`` with ``params`` set, fitted (read from :mod:`perfkit.model.engine.fitcache` when on)."""
    from sklearn.base import clone

    from ..engine.fitcache import cached_fit

    return cached_fit(clone(estimator).set_params(**params), X, y)


def _long_params(model) -> dict[str, float]:
    names = list(model.linear_names_) + list(model.power_names_)
    values = list(model.coef_) + list(model.powers_)
    return dict(zip(names, map(float, values)))


@dataclass
class RepeatedFit:
    """Fits of one model with several seeds.

    Attributes
    ----------
    models : list
        The fitted estimators, one per seed.
    seeds : list of int
        Their seeds.
    """

    models: list
    seeds: list = field(default_factory=list)

    @property
    def params(self):
        """Long table: one row per seed with every parameter, the objective and the fit time."""
        import pandas as pd

        rows = []
        for seed, m in zip(self.seeds, self.models):
            rows.append(dict(seed=seed, objective=m.objective_, n_iter=m.n_iter_, fit_time=m.fit_time_,
                             **_long_params(m)))
        return pd.DataFrame(rows)

    @property
    def best(self):
        """The fit with the lowest objective."""
        return min(self.models, key=lambda m: m.objective_)

    #: seeds whose objective is within this relative distance of the best count as having reached it
    AGREE_RTOL = 1e-4
    #: a std over seeds at most this times max(|mean|, 1) is reported as 0 in :meth:`summary`: the seeds reached
    #: the same optimum and differ only within the refinement's tolerance (on another CPU those digits differ)
    SPREAD_RESOLUTION = 1e-4

    @property
    def objective_spread(self) -> float:
        """(worst − best) / best objective over the seeds: 0 when every seed found the same optimum."""
        objs = [m.objective_ for m in self.models]
        return (max(objs) - min(objs)) / max(abs(min(objs)), 1e-300)

    @property
    def n_agree(self) -> int:
        """How many seeds reached the best objective to :attr:`AGREE_RTOL` (relative)."""
        best = self.best.objective_
        return sum(m.objective_ - best <= self.AGREE_RTOL * max(abs(best), 1e-300) for m in self.models)

    @property
    def converged(self) -> bool:
        """The convergence test across starts: at least two seeds (every seed when only one was run) reached
        the best objective, and the best fit's own refinement met its tolerance."""
        need = min(2, len(self.models))
        return self.n_agree >= need and getattr(self.best, "converged_", True) is not False

    def summary(self):
        """Mean ± std over seeds in the layout of Tables 4.2/4.3.

        Returns
        -------
        pandas.DataFrame
            One row per term (numeric, categorical level, extrinsic, constant)
            with ``a_mean, a_std, p_mean, p_std, q_mean, q_std, C_mean, C_std``;
            a std at most :attr:`SPREAD_RESOLUTION` × max(|mean|, 1) is written as 0.
        """
        import pandas as pd

        tables = [m.params_.assign(seed=s) for s, m in zip(self.seeds, self.models)]
        long = pd.concat(tables, ignore_index=True)
        keys = ["term", "kind", "column", "level"]
        agg = long.groupby(keys, sort=False)[["a", "p", "q", "C"]].agg(["mean", "std"])
        agg.columns = [f"{v}_{s}" for v, s in agg.columns]
        for v in ("a", "p", "q", "C"):  # below the refinement's resolution a spread is not a spread
            agg[f"{v}_std"] = resolved_std(agg[f"{v}_std"].to_numpy(), agg[f"{v}_mean"].to_numpy())
        return agg.reset_index()

    def __repr__(self) -> str:
        obj = [m.objective_ for m in self.models]
        return f"RepeatedFit({len(self.models)} seeds, objective {np.mean(obj):.4g} ± {np.std(obj, ddof=1) if len(obj) > 1 else 0:.2g})"


def spread_resolution(mean):
    """The smallest spread over seeds that the fits resolve: :attr:`RepeatedFit.SPREAD_RESOLUTION` × max(|mean|, 1).

    Seeds that reach the same optimum still differ within the refinement's tolerance (about 1e-6, and
    differently on another CPU); a spread below this is that tolerance, not a seed-to-seed variation."""
    return RepeatedFit.SPREAD_RESOLUTION * np.maximum(np.abs(mean), 1.0)


def resolved_std(std, mean):
    """``std`` with every spread at or below :func:`spread_resolution` of its ``mean`` written as 0 (NaN stays NaN)."""
    std = np.asarray(std, dtype=float)
    return np.where(std <= spread_resolution(mean), 0.0, std)


def fit_repeated(estimator, X, y, seeds=10, n_jobs=1, backend=None, progress=True, desc: str = "fits") -> RepeatedFit:
    """Fit ``estimator`` once per seed (the thesis repeats each fit with 10 seeds).

    Parameters
    ----------
    estimator : GenericPerformanceModel
        Unfitted template; cloned for each seed.
    X, y : DataFrame, array_like
        Training data.
    seeds : int or sequence of int, default 10
        Number of seeds (0..n-1, n >= 1) or explicit seeds (integers >= 0).
    n_jobs : int, default 1
        joblib workers, a non-zero integer (-1: all cores).
    backend : str, optional
        joblib backend ("loky", "threading", "dask", "ray", ...).
    progress : bool, default True
        Show a progress bar.
    desc : str, default "fits"
        Label of the progress bar.
    """
    seeds = _check_seeds(seeds)
    n_jobs = check_n_jobs(n_jobs)
    from joblib import delayed

    tasks = (delayed(_fit_one)(estimator, X, y, random_state=s) for s in seeds)
    models = run_parallel(n_jobs, backend, tasks, len(seeds), desc, progress)
    return RepeatedFit(models=models, seeds=seeds)


def _sweep_task(estimator, X_train, y_train, X_test, y_test, penalty, lam, seed):
    from .metrics import mape, r2

    m = _fit_one(estimator, X_train, y_train, penalty=penalty, lam=lam, random_state=seed)
    pred_test = m.predict(X_test)
    metrics = {
        "r2_train": r2(y_train, m.predict(X_train)),
        "r2_test": r2(y_test, pred_test),
        "mape_test": mape(y_test, pred_test),
        "objective": m.objective_,
    }
    return penalty, lam, seed, metrics, _long_params(m)


def regularisation_sweep(estimator, X_train, y_train, X_test, y_test, penalties=("l1", "l2"),
                         lams=DEFAULT_LAMBDAS, seeds=(0,), n_jobs=1, backend=None, progress=True,
                         desc: str = "λ sweep"):
    """R² and every fitted parameter against λ, for L1 and L2 (data of Figures 4.15–4.17).

    Parameters
    ----------
    estimator : GenericPerformanceModel
        Template (its penalty/lam/random_state are overridden).
    X_train, y_train, X_test, y_test
        Fit and held-out data.
    penalties : sequence of {"l1", "l2"}
    lams : sequence of float
        λ grid (log-spaced by default, 1e-6 … 1); non-empty, finite values >= 0.
    seeds : sequence of int
        Seeds per (penalty, λ) (or a count n: seeds 0..n-1).
    n_jobs, backend, progress, desc
        As in :func:`fit_repeated` (``desc``: the progress label).

    Returns
    -------
    pandas.DataFrame
        Tidy: ``penalty, lam, seed, quantity, kind, value`` where ``kind`` is
        ``metric`` (r2_train, r2_test, mape_test, objective), ``a``, ``k``
        (categorical constant), ``p``, ``q`` or ``C``.
    """
    import pandas as pd
    from joblib import delayed

    penalties = [penalties] if isinstance(penalties, str) else list(penalties)
    if not penalties:
        raise ValueError("penalties: give at least one of 'l1', 'l2'")
    for p in penalties:
        if p not in ("l1", "l2"):
            raise ValueError(f"penalties: expected 'l1' or 'l2', got {p!r}")
    lams = _check_lams(lams)
    seeds = _check_seeds(seeds)
    n_jobs = check_n_jobs(n_jobs)
    grid = [(p, lam, s) for p in penalties for lam in lams for s in seeds]
    tasks = (delayed(_sweep_task)(estimator, X_train, y_train, X_test, y_test, p, lam, s) for p, lam, s in grid)
    results = run_parallel(n_jobs, backend, tasks, len(grid), desc, progress)
    rows = []
    for penalty, lam, seed, metrics, params in results:
        for k, v in metrics.items():
            rows.append((penalty, lam, seed, k, "metric", v))
        for k, v in params.items():
            rows.append((penalty, lam, seed, k, k.split("[", 1)[0], v))
    return pd.DataFrame(rows, columns=["penalty", "lam", "seed", "quantity", "kind", "value"])


def choose_lambda_cv(estimator, X, y, penalty="l2", lams=DEFAULT_LAMBDAS, cv=5, scoring="r2", n_jobs=1,
                     backend=None):
    """Choose λ by k-fold cross-validation (GridSearchCV over ``lam``).

    ``lams`` must be a non-empty grid of finite values >= 0, ``cv`` a number of
    folds >= 2 (or a scikit-learn splitter), ``n_jobs`` a non-zero integer;
    otherwise one ``ValueError`` names the argument.

    Returns
    -------
    best_lam : float
    results : pandas.DataFrame
        λ with mean and std of the cross-validated score.
    """
    import pandas as pd
    from joblib import parallel_config
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV

    if penalty not in ("l1", "l2"):
        raise ValueError(f"penalty: expected 'l1' or 'l2', got {penalty!r}")
    lams = _check_lams(lams)
    n_jobs = check_n_jobs(n_jobs)
    if isinstance(cv, (bool, np.bool_)) or (isinstance(cv, (int, np.integer)) and cv < 2):
        raise ValueError(f"cv: expected a number of folds >= 2 (or a splitter), got {cv!r}")
    est = clone(estimator).set_params(penalty=penalty)
    with parallel_config(**_backend_kw(backend)):
        gs = GridSearchCV(est, {"lam": lams}, cv=cv, scoring=scoring, n_jobs=n_jobs).fit(X, y)
    res = pd.DataFrame({"lam": gs.cv_results_["param_lam"].astype(float),
                        "mean_score": gs.cv_results_["mean_test_score"],
                        "std_score": gs.cv_results_["std_test_score"]})
    return float(gs.best_params_["lam"]), res


def parameters_on_bounds(model, rtol: float = 1e-6) -> list[str]:
    """The coefficients a, κ and C and the powers p, q of a fitted generic model that sit on a bound, each as
    ``"a[x] = 1000 (upper bound)"`` or ``"q[workers] = -5 (lower bound)"``; ``[]`` when none does. A power is
    listed at either bound; a coefficient at its upper bound, or at a lower bound above 0.

    The coefficients are compared in the space their bounds apply to: dimensionless for a unit-free fit
    (``scale="data"``), the data's units otherwise. A coefficient on the default upper bound 1000 of a fit in the
    data's units usually means the target is not in the unit the bounds assume (seconds). A coefficient at 0 is a
    term switched off, not listed.
    """
    from ..forms.generic_checks import DEFAULT_BOUNDS
    from ..unitscale import scaled_coefficients

    bounds = {**DEFAULT_BOUNDS, **(model.bounds or {})}
    coef = scaled_coefficients(model.coef_, model.powers_, getattr(model, "scales_", None), model.numeric_,
                               model.extrinsic_)
    values = [(name, "C" if name == "C" else "a", v) for name, v in zip(model.linear_names_, coef)]
    values += [(name, name[0], v) for name, v in zip(model.power_names_, model.powers_)]
    out = []
    for name, sym, v in values:
        lo, hi = bounds[sym]
        label = name.replace("k[", "a[", 1) if name.startswith("k[") else name
        if np.isclose(v, hi, rtol=rtol, atol=0.0):
            out.append(f"{label} = {v:g} (upper bound)")
        elif (lo > 0 or sym in ("p", "q")) and np.isclose(v, lo, rtol=rtol, atol=0.0):
            out.append(f"{label} = {v:g} (lower bound)")
    return out
