"""Which hardware to rent for a training job: :func:`plan` prices every configuration of a menu with a model fitted
across hardware and ranks them; :class:`PlanResult` holds the table, a ``summary()`` and a ``plot()``.

For every GPU of the menu and every GPU count it offers, the job's ``samples`` take
steps = ⌈samples / (n × batch)⌉ steps; the model (a :class:`~perfkit.model.uncertainty.group_intervals.
GroupIntervalModel`) predicts one step's time t with its interval [t_lo, t_hi]; hours = steps × t / 3600 and
cost = hours × n × price per GPU-hour, each with the interval scaled alike (the step count and the price are
taken as exact: the only uncertainty is the step time's). Every step is taken to last as long as the model's
step: start-up, evaluation and checkpoints are not counted.

Guarantees: the table has one row per configuration, ``hours_lo <= hours <= hours_hi`` and
``cost_lo <= cost <= cost_hi``; ``hours == steps × step_s / 3600`` exactly as computed; ``pareto`` marks the rows no
other row beats in both predicted hours and predicted cost; the rows meeting the target come first in the order
asked (cheapest first under a deadline, fastest first under a budget or without one), then the rest (``no``). A bad
argument is one ``ValueError`` naming the parameter; a target no configuration reaches is one ``ValueError``
naming the closest configuration.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["FLAGS", "TABLE_COLUMNS", "PlanResult", "plan", "workload_columns"]

#: every flag a configuration can carry, in the order of the summary's counts
FLAGS = ("interpolated", "extrapolated in scale", "unmeasured GPU", "unmeasured GPU, extrapolated in scale")
#: the columns of :attr:`PlanResult.table` (then ``meets_deadline`` or ``within_budget`` when a target is given)
TABLE_COLUMNS = ("rank", "gpu", "n_gpus", "batch_per_gpu", "steps", "step_s", "step_lo", "step_hi", "hours",
                 "hours_lo", "hours_hi", "cost", "cost_lo", "cost_hi", "flag", "pareto")
#: the sentence every summary ends with
HELD_OUT_NOTE = ("Intervals for unmeasured GPUs come from held-out-GPU errors: the model's errors on each measured "
                 "GPU when that GPU was left out of its fit. Rows extrapolated in scale lie beyond the fitted range "
                 "of a column (e.g. more GPUs than any measured run): their intervals carry no coverage guarantee.")
_REFIT = "plan needs a model fitted across hardware: perfkit fit ... --hardware COL --split group:COL"
#: the orders of the ranking (ties broken by the GPU's name and count, so that a plan is always ranked alike)
_BY_TIME, _BY_COST = ("hours", "cost", "gpu", "n_gpus"), ("cost", "hours", "gpu", "n_gpus")
_SHOWN = ("rank", "gpu", "n_gpus", "batch_per_gpu", "hours", "cost", "flag", "pareto")


# ------------------------------------------------------------------------------------------------ the arguments
def _positive(value, name: str, what: str = "a number"):
    """``value`` as a float when it is a finite number > 0; None stays None; else a ValueError naming ``name``."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)) \
            or not math.isfinite(float(value)) or value <= 0:
        raise ValueError(f"{name}: expected {what} > 0, got {value!r}")
    return float(value)


def _whole(value, name: str) -> int:
    x = _positive(value, name, "a whole number")
    if x != int(x):
        raise ValueError(f"{name}: expected a whole number > 0, got {value!r}")
    return int(x)


def _check_model(model):
    """The model's GPU-name, GPU-count and batch columns; a model not fitted across hardware is refused."""
    from ..model.uncertainty.group_intervals import GroupIntervalModel

    if not isinstance(model, GroupIntervalModel) or not model.hardware:
        raise ValueError(_REFIT)
    if not hasattr(model, "scores_"):
        raise ValueError("model: not fitted; " + _REFIT)
    if not model.gpus or not model.batch:
        raise ValueError("plan needs the model's GPU-count and per-GPU batch columns: perfkit fit ... --gpus COL "
                         "--batch COL --hardware COL --split group:COL")
    return model.hardware, model.gpus, model.batch


def workload_columns(model) -> list:
    """The columns a workload names for ``model``: the columns its form reads other than the GPU's (its name and
    spec columns), the GPU count and the batch, and the precision column."""
    from ..data.gpu_specs import HARDWARE_COLUMNS
    from ..model.uncertainty.whatif import model_columns

    skip = set(HARDWARE_COLUMNS) | {model.hardware, model.gpus, model.batch, model.group}
    cols = [c for c in dict.fromkeys(model_columns(model) or []) if c not in skip]
    if model.precision and model.precision not in cols:
        cols.append(model.precision)
    return cols


def _check_workload(model, workload) -> dict:
    from ..data.gpu_specs import FULL_PRECISIONS, HALF_PRECISIONS

    expected = workload_columns(model)
    if not isinstance(workload, dict):
        raise ValueError(f"workload: expected a dict of {', '.join(expected)}, got {type(workload).__name__}")
    missing = [c for c in expected if c not in workload]
    unknown = [str(c) for c in workload if c not in expected]
    if missing or unknown:
        parts = ([f"missing {', '.join(map(repr, missing))}"] if missing else []) + (
            [f"unknown {', '.join(map(repr, unknown))}"] if unknown else [])
        raise ValueError(f"workload: {'; '.join(parts)}; expected the keys {', '.join(map(repr, expected))}")
    empty = [c for c in expected if workload[c] is None or (isinstance(workload[c], str) and not workload[c].strip())
             or (isinstance(workload[c], float) and math.isnan(workload[c]))]
    if empty:
        raise ValueError(f"workload: {empty[0]!r} is empty; give a value")
    prec = model.precision
    if prec and str(workload[prec]).strip().lower() not in HALF_PRECISIONS + FULL_PRECISIONS:
        raise ValueError(f"workload: {prec}={workload[prec]!r}: expected one of "
                         f"{', '.join(HALF_PRECISIONS + FULL_PRECISIONS)}")
    fitted = list(getattr(model, "precisions_", []) or [])
    if prec and fitted and str(workload[prec]).strip() not in fitted:
        raise ValueError(f"workload: {prec}={workload[prec]!r}: the model was fitted on {', '.join(fitted)} only; "
                         "fit it on rows of that precision too")
    return {c: workload[c] for c in expected}


def _target(samples, epochs, dataset_size) -> tuple[float, str]:
    """``(samples, words)``: ``samples``, or ``epochs`` × ``dataset_size``: exactly one way."""
    if samples is not None:
        if epochs is not None or dataset_size is not None:
            raise ValueError("samples: give samples, or epochs and dataset_size, not both")
        n = _positive(samples, "samples")
        return n, f"{n:,.0f} samples"
    if epochs is None or dataset_size is None:
        lacking = "samples" if epochs is None and dataset_size is None else "epochs" if epochs is None \
            else "dataset_size"
        raise ValueError(f"{lacking}: the target is samples, or epochs × dataset_size (both); give {lacking}")
    e, d = _positive(epochs, "epochs"), _positive(dataset_size, "dataset_size")
    return e * d, f"{e * d:,.0f} samples ({e:g} epochs × {d:,.0f} samples)"


def _counts_asked(gpus):
    if gpus is None:
        return None
    values = [gpus] if isinstance(gpus, (int, np.integer)) else gpus
    if not isinstance(values, (list, tuple, set, np.ndarray)) or not len(values):
        raise ValueError(f"gpus: expected GPU counts (whole numbers > 0), e.g. [1, 2, 4, 8], got {gpus!r}")
    return {_whole(v, "gpus") for v in values}


# ------------------------------------------------------------------------------------------------ the configurations
def _lambda_batches(workload: dict, model) -> dict:
    """``{canonical GPU: per-GPU batch}`` Lambda ran the workload's model and precision with (median), or {}."""
    from ..data.gpu_specs import load_gpu_specs
    from ..data.lambda_labs import load_lambda

    name, prec = workload.get("model"), workload.get(model.precision) if model.precision else None
    if name is None or prec is None:
        return {}
    rows = load_lambda(screen=False)
    rows = rows[(rows["model"] == str(name)) & (rows["precision"] == str(prec).strip().lower())]
    if not len(rows):
        return {}
    names = load_gpu_specs(model.gpu_specs).attrs["names"]  # a GPU your own spec table lacks: no batch from Lambda
    gpus = rows["gpu"].map(lambda g: names.get(g.strip()))
    return {g: int(np.median(b)) for g, b in rows.groupby(gpus.to_numpy())["batch_per_gpu"] if g is not None}


def _batch_of(offers, batch, workload, model) -> tuple[list, str]:
    """The per-GPU batch of every offer, and the sentence that says where it came from."""
    if batch is not None:
        b = _whole(batch, "batch")
        return [b] * len(offers), f"per-GPU batch: {b} on every GPU (given)"
    ran = {} if offers["batch_per_gpu"].notna().all() else _lambda_batches(workload, model)
    out, used = [], {}
    for gpu, b in zip(offers["gpu"], offers["batch_per_gpu"]):
        if not math.isnan(b):
            out.append(int(b))
            used[gpu] = "menu"
        elif gpu in ran:
            out.append(ran[gpu])
            used[gpu] = "lambda"
        else:
            raise ValueError(f"batch: no per-GPU batch for {gpu}: Lambda's benchmarks did not run "
                             f"{_label(workload)} on it; give batch= (--batch) or a batch_per_gpu column in the menu")
    words = []
    if "menu" in used.values():
        words.append("the menu's batch_per_gpu")
    if "lambda" in used.values():
        words.append(f"the batch Lambda ran {_label(workload)} with on that GPU (median)")
    return out, "per-GPU batch: " + " and ".join(words)


def _label(workload: dict) -> str:
    return " ".join(str(v) for v in workload.values())


def _configurations(offers, counts, batches):
    import pandas as pd

    rows = []
    for (_, offer), b in zip(offers.iterrows(), batches):
        for n in offer["gpus"]:
            if counts is None or n in counts:
                rows.append({"gpu": offer["gpu"], "n_gpus": int(n), "batch_per_gpu": int(b),
                             "price": float(offer["price_per_gpu_hour"])})
    if not rows:
        offered = sorted({int(n) for g in offers["gpus"] for n in g})
        raise ValueError(f"gpus: the menu offers none of {sorted(counts)} GPUs (it offers {offered})")
    return pd.DataFrame(rows)


def _predict(model, workload, configs, coverage):
    """The step time with its interval, and whether the GPU was measured and a column extrapolated, per row."""
    import pandas as pd

    hardware, gpus, batch = _check_model(model)
    X = pd.DataFrame({**{c: [v] * len(configs) for c, v in workload.items()}, hardware: configs["gpu"].to_numpy(),
                      gpus: configs["n_gpus"].to_numpy(), batch: configs["batch_per_gpu"].to_numpy()})
    ok = model.predictable(X)
    if not np.all(ok):
        fitted = getattr(getattr(model.estimator_, "model_", model.estimator_), "workloads_", None)
        known = f" (it was fitted on {', '.join(' '.join(map(str, w)) for w in fitted)})" if fitted else ""
        raise ValueError(f"workload: the model was not fitted on {workload}{known}")
    iv = model.predict_interval(X, coverage)
    measured = set(map(str, model.groups_))
    seen = configs["gpu"].astype(str).isin(measured).to_numpy() | iv["measured_group"].to_numpy(dtype=bool)
    return iv, seen, _in_scale(model, X, iv)


def _in_scale(model, X, iv) -> np.ndarray:
    """Whether each row's GPU count or per-GPU batch lies outside the model's fitted range (the prediction's
    ``extrapolated`` flag where the model kept no ranges)."""
    ranges = model.fitted_ranges()
    if ranges is None:
        return iv["extrapolated"].to_numpy(dtype=bool)
    out = np.zeros(len(X), dtype=bool)
    for col in (model.gpus, model.batch):
        if col in ranges:
            lo, hi = ranges[col]
            v = X[col].to_numpy(dtype=float)
            out |= (v < lo) | (v > hi)
    return out


def _flags(seen, scale) -> list:
    return [FLAGS[(0 if s else 2) + (1 if e else 0)] for s, e in zip(seen, scale)]


def _beyond_specs(configs, iv, scale) -> list:
    """The GPUs whose rows lie outside the fitted range in a column other than the count and the batch (their
    spec columns: an unmeasured GPU unlike every measured one)."""
    other = iv["extrapolated"].to_numpy(dtype=bool) & ~scale
    return sorted(set(configs.loc[other, "gpu"].astype(str)))


def pareto_mask(hours, cost) -> np.ndarray:
    """The rows no other row beats: none has hours and cost both <= and one of them <."""
    h, c = np.asarray(hours, dtype=float), np.asarray(cost, dtype=float)
    better = (h[None, :] <= h[:, None]) & (c[None, :] <= c[:, None]) & ((h[None, :] < h[:, None])
                                                                        | (c[None, :] < c[:, None]))
    return ~better.any(axis=1)


def _table(configs, iv, seen, scale, samples):
    import pandas as pd

    n, b, price = configs["n_gpus"].to_numpy(), configs["batch_per_gpu"].to_numpy(), configs["price"].to_numpy()
    steps = np.ceil(samples / (n * b)).astype("int64")
    out = pd.DataFrame({"rank": 0, "gpu": configs["gpu"].to_numpy(dtype=object), "n_gpus": n, "batch_per_gpu": b,
                        "steps": steps})
    for name, col in (("step_s", "predicted"), ("step_lo", "lower"), ("step_hi", "upper")):
        out[name] = iv[col].to_numpy(dtype=float)
    for suffix in ("", "_lo", "_hi"):
        step = out["step_s" if not suffix else f"step{suffix}"].to_numpy()
        out[f"hours{suffix}"] = steps * step / 3600.0
    for suffix in ("", "_lo", "_hi"):
        out[f"cost{suffix}"] = out[f"hours{suffix}"].to_numpy() * n * price
    out["flag"] = _flags(seen, scale)
    out["pareto"] = pareto_mask(out["hours"], out["cost"])
    return out


def _verdict(value, upper, limit) -> list:
    """``yes`` where the upper end is within ``limit``, ``likely`` where only the prediction is, else ``no``."""
    return ["yes" if hi <= limit else "likely" if v <= limit else "no" for v, hi in zip(value, upper)]


def _money(v: float) -> str:
    return f"${v:,.0f}" if abs(v) >= 1000 else f"${v:.3g}"


def _unreachable(t, deadline, budget) -> ValueError:
    """The error of a target no row reaches: the closest row, with its interval."""
    if deadline is not None:
        f = t.loc[t["hours"].idxmin()]
        return ValueError(f"deadline_hours: no configuration finishes within {deadline:g} h: the fastest, "
                          f"{f['n_gpus']} × {f['gpu']}, needs {f['hours']:.3g} h [{f['hours_lo']:.3g}, "
                          f"{f['hours_hi']:.3g}]")
    c = t.loc[t["cost"].idxmin()]
    return ValueError(f"budget: no configuration fits a budget of {_money(budget)}: the cheapest, {c['n_gpus']} × "
                      f"{c['gpu']}, costs {_money(c['cost'])} [{_money(c['cost_lo'])}, {_money(c['cost_hi'])}]")


def _rank(table, deadline, budget):
    """The table in the order asked, ``rank`` from 1; the column of the target's verdict. Raises when no row
    reaches the target."""
    import pandas as pd

    t = table
    if deadline is None and budget is None:
        first, rest = t.sort_values(list(_BY_TIME)), t.iloc[:0]
    else:
        col, value, limit, orders = (("meets_deadline", "hours", deadline, (_BY_COST, _BY_TIME)) if deadline is not None
                                     else ("within_budget", "cost", budget, (_BY_TIME, _BY_COST)))
        t[col] = _verdict(t[value], t[f"{value}_hi"], limit)
        ok = (t[value] <= limit).to_numpy()
        if not ok.any():
            raise _unreachable(t, deadline, budget)
        first, rest = t[ok].sort_values(list(orders[0])), t[~ok].sort_values(list(orders[1]))
    out = pd.concat([first, rest]).reset_index(drop=True)
    out["rank"] = np.arange(1, len(out) + 1)
    return out


# ------------------------------------------------------------------------------------------------ the result
@dataclass
class PlanResult:
    """A plan: :attr:`table` (one row per configuration, in the order asked, the columns of
    :data:`TABLE_COLUMNS` and ``meets_deadline`` or ``within_budget``) and what it assumed; :attr:`beyond_specs`
    lists the unmeasured GPUs whose spec values lie outside the range of the measured ones (the form extrapolates
    across hardware there)."""

    table: object
    workload: dict
    samples: float
    target: str
    coverage: float
    deadline_hours: float | None = None
    budget: float | None = None
    assumptions: list = field(default_factory=list)
    beyond_specs: list = field(default_factory=list)

    @property
    def reaching(self):
        """The rows that meet the deadline or fit the budget (every row without either), in rank order."""
        col = "meets_deadline" if self.deadline_hours is not None else "within_budget" \
            if self.budget is not None else None
        return self.table if col is None else self.table[self.table[col] != "no"]

    def _constraint(self) -> str:
        n, k = len(self.table), len(self.reaching)
        if self.deadline_hours is not None:
            return (f"finish within {self.deadline_hours:g} h: {k} of {n} configurations are predicted to; those "
                    "first, cheapest first (meets_deadline: yes = even the interval's upper end does, likely = the "
                    "prediction does), then the others, fastest first")
        if self.budget is not None:
            return (f"cost at most {_money(self.budget)}: {k} of {n} configurations are predicted to; those first, "
                    "fastest first (within_budget: yes = even the interval's upper end does, likely = the "
                    "prediction does), then the others, cheapest first")
        return f"none: all {n} configurations, fastest first"

    def shown(self, top: int | None = 10):
        """The first ``top`` rows (all with None) as text columns: each time and cost with its interval."""
        t = self.table if top is None else self.table.head(top)
        view = t[[c for c in _SHOWN if c in t.columns]].copy()
        view["hours"] = [f"{v:.3g} [{lo:.3g}, {hi:.3g}]" for v, lo, hi in zip(t["hours"], t["hours_lo"],
                                                                               t["hours_hi"])]
        view["cost"] = [f"{_money(v)} [{_money(lo)}, {_money(hi)}]" for v, lo, hi in zip(t["cost"], t["cost_lo"],
                                                                                         t["cost_hi"])]
        view["pareto"] = np.where(t["pareto"], "yes", "")
        for col in ("meets_deadline", "within_budget"):
            if col in t.columns:
                view[col] = t[col]
        return view

    def summary(self, top: int = 10) -> str:
        """The target, the constraint, the assumptions, the first ``top`` rows, how many rows carry each flag and
        where the intervals of unmeasured GPUs come from."""
        top = _whole(top, "top")
        counts = self.table["flag"].value_counts()
        pairs = ", ".join(f"{k}={v}" for k, v in self.workload.items())
        lines = [f"plan: {self.target} of {_label(self.workload)} ({pairs})",
                 f"constraint: {self._constraint()}", "assumptions:"]
        lines += [f"  - {a}" for a in self.assumptions]
        lines += [f"top {min(top, len(self.table))} of {len(self.table)} (hours and cost: predicted "
                  f"[{100 * self.coverage:g} % interval]; pareto: no other row is both faster and cheaper):",
                  self.shown(top).to_string(index=False),
                  "flags: " + ", ".join(f"{int(counts.get(f, 0))} {f}" for f in FLAGS if counts.get(f, 0))]
        if self.beyond_specs:
            lines.append(f"beyond the measured GPUs: the spec values of {', '.join(self.beyond_specs)} lie outside "
                         "the range of those the model was fitted on; its predictions there extrapolate across "
                         "hardware")
        lines.append(HELD_OUT_NOTE)
        return "\n".join(lines)

    def plot(self):
        """Hours against cost (log-log), one point per configuration with its interval, the Pareto front, the
        deadline or budget dashed: :func:`perfkit.plan.plots.plot_plan`."""
        from .plots import plot_plan

        return plot_plan(self)


def plan(model, workload, *, samples=None, epochs=None, dataset_size=None, menu="lambda", gpus=None, batch=None,
         deadline_hours=None, budget=None, coverage=0.9) -> PlanResult:
    """Price and rank every configuration of ``menu`` for training ``workload`` on ``samples`` samples.

    Parameters
    ----------
    model : GroupIntervalModel
        Fitted across hardware (``perfkit fit ... --hardware COL --gpus COL --batch COL --split group:COL``).
    workload : dict
        The form's workload columns and the precision column, e.g. ``{"model": "resnet50", "precision": "fp16"}``.
    samples, epochs, dataset_size : float
        The target: ``samples`` (> 0) or ``epochs`` × ``dataset_size`` (both > 0), one way only.
    menu : "lambda", path or DataFrame
        The offers (:func:`perfkit.plan.menu.menu`); ``"lambda"``: Lambda's servers, prices amortised over 3 years.
    gpus : list of int, optional
        Only these GPU counts of the menu's.
    batch : int, optional
        The per-GPU batch on every GPU; default the menu's ``batch_per_gpu``, else the batch Lambda ran the
        workload with on that GPU (median).
    deadline_hours, budget : float, optional
        Rank the configurations predicted to finish within the deadline by cost, or those predicted to cost at
        most the budget (USD) by time; neither: all by time. Not both.
    coverage : float
        The intervals' coverage, strictly between 0 and 1.
    """
    from .menu import menu as read_menu

    _check_model(model)
    samples, target = _target(samples, epochs, dataset_size)
    deadline, budget = _positive(deadline_hours, "deadline_hours", "a number of hours"), _positive(budget, "budget",
                                                                                                  "an amount in USD")
    if deadline is not None and budget is not None:
        raise ValueError("deadline_hours: give deadline_hours or budget, not both (a deadline ranks by cost, a budget "
                         "by time)")
    if isinstance(coverage, (bool, np.bool_)) or not isinstance(coverage, (int, float, np.number)) \
            or not math.isfinite(coverage) or not 0 < coverage < 1:
        raise ValueError(f"coverage: expected a number strictly between 0 and 1 (e.g. 0.9), got {coverage!r}")
    workload = _check_workload(model, workload)
    counts = _counts_asked(gpus)
    offers = read_menu(menu, model.gpu_specs)
    batches, batch_words = _batch_of(offers, batch, workload, model)
    configs = _configurations(offers, counts, batches)
    iv, seen, scale = _predict(model, workload, configs, float(coverage))
    table = _rank(_table(configs, iv, seen, scale, samples), deadline, budget)
    assumptions = [offers.attrs.get("assumption") or f"prices: the menu's ({offers.attrs.get('source', 'menu')})",
                   batch_words,
                   f"intervals: {100 * coverage:g} % (coverage {coverage:g}) on the step time; the step count and "
                   "the price taken as exact",
                   "time: steps × the predicted step time; start-up, evaluation and checkpoints not counted"]
    return PlanResult(table=table, workload=workload, samples=samples, target=target, coverage=float(coverage),
                      deadline_hours=deadline, budget=budget, assumptions=assumptions,
                      beyond_specs=_beyond_specs(configs, iv, scale))
