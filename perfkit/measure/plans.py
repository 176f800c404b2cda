"""The plans of ``perfkit collect``: which samples each kind runs, their CSV columns and rows.

A :class:`Plan` lists a collection's samples (id, world size, configuration for
the adapter), the columns of its CSV (:mod:`perfkit.schema` names them) and how
an adapter's reply becomes rows. :func:`make_plan` builds one for each kind of
:data:`KINDS` from :data:`DEFAULTS` and the user's options; the kinds are
described in :mod:`perfkit.measure.collect`.
"""
from __future__ import annotations

import itertools
import random
import statistics

from pathlib import Path

from .._checks import check_int, check_number
from ..schema import (CH5_INTRINSIC, EXTRINSIC, INTRINSIC, KIND_FILES, PHASES, format_volume, measured_path,
                      steps_per_epoch)
from .spaces import DATASET_SHAPES, TABLE_4_1_SPACE, TABLE_5_1_SPACE, sample_configs, sample_space

__all__ = ["KINDS", "CH5VOL_BASE", "DEFAULTS", "DESCRIPTIONS", "Plan", "make_plan", "default_out"]

#: The fixed intrinsic configuration of the ``ch5vol`` study (values from Table 5.1; ``num_filters`` varies)
CH5VOL_BASE = {"kernel_size": 3, "pool_size": 1, "activation": "relu", "optimizer": "sgd", "learning_rate": 0.001,
               "padding": "same", "stride": 2}

KINDS = tuple(KIND_FILES)
PHASE_COLS = list(PHASES)
_COMMON = ["sample_id", "sample_rows", "status", "error", "framework", "device", "threads", "mode"]
_TAIL = ["loadavg", "started_utc", "duration_s"]


def default_out(kind: str, framework: str = "pytorch", device: str = "cpu", root=None) -> Path:
    """``data/measured/<framework>-<device>/<file of kind>`` (see :func:`perfkit.schema.measured_path`)."""
    return measured_path(kind, framework, device, root)


class Plan:
    """The samples of one collection, their CSV columns and how a reply becomes rows."""

    def __init__(self, kind, task, items, columns, settings, to_rows, sampler=None, target=None):
        self.kind, self.task, self.items, self.columns = kind, task, items, columns
        self.settings, self.to_rows, self.sampler, self.target = settings, to_rows, sampler, target

    def enough(self, log_path) -> bool:
        """For ``epoch``: stop once ``target`` checks succeeded."""
        return self.target is not None and _count_ok(log_path) >= self.target


def _count_ok(log_path) -> int:
    import csv

    with open(log_path) as fh:
        return sum(r["status"] == "ok" for r in csv.DictReader(fh))


def _aggregate_steps(ranks: list[dict]) -> dict:
    """Run value = its wall time / steps on the slowest worker; ``step_time`` = median of the runs.

    A run's mean step time (not its median step) is what a long series of
    steps, i.e. an epoch, adds up to; the median over runs guards against a
    run disturbed from outside. Workers move in lock-step (the all-reduce), so
    their run totals differ only at the edges; the largest is taken.
    """
    n_runs = len(ranks[0]["repeats"])
    runs = [max(sum(r["repeats"][i]) / len(r["repeats"][i]) for r in ranks) for i in range(n_runs)]
    flat = [v for r in ranks for rep in r["repeats"] for v in rep]
    return {"step_time": statistics.median(runs), "runs": runs, "step_min": min(flat), "step_max": max(flat)}


def _parse_list(name, values, cast, allowed=None):
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name}: expected a list, got {values!r}")
    try:
        out = [cast(v) for v in values]
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a list of {cast.__name__} values, got {values!r}") from None
    if not out:
        raise ValueError(f"{name}: give at least one value")
    if cast is int:
        bad = [raw for v, raw in zip(out, values) if v < 1 or isinstance(raw, bool) or raw != v]
        if bad:
            raise ValueError(f"{name}: expected integers >= 1, got {bad[0]!r}")
    if allowed is not None:
        bad = [v for v in out if v not in allowed]
        if bad:
            raise ValueError(f"{name}: {bad[0]!r} is not one of {list(allowed)}")
    return out


def _ch3_plan(o: dict, framework) -> Plan:
    from_models = _parse_list("models", o["models"], str, ("cnn", "mlp", "ae"))
    modes = _parse_list("modes", o["modes"], str, ("phased", "overlapped"))
    workers = _parse_list("workers", o["workers"], int)
    items = []
    for mode in modes:
        for model in from_models:
            for g in workers:
                cfg = {"model": model, "workers": g, "batch_size": o["batch_size"], "mode": mode,
                       "iterations": o["iterations"], "warmup": o["warmup"], "seed": o["seed"],
                       "dataset": "mnist", "optimizer": "sgd", "learning_rate": 0.01}
                items.append((f"{model}-G{g}-{mode}", g, cfg))
    columns = _COMMON + ["model", "workers", "rank", "iteration", "batch_size"] + PHASE_COLS + ["n_params"] + _TAIL

    def to_rows(item, reply, base):
        _, g, cfg = item
        head = dict(base, model=cfg["model"], workers=g, batch_size=cfg["batch_size"], mode=cfg["mode"])
        if not reply.get("ok"):
            return [dict(head, status="error", error=reply.get("error", "?"))]
        return [dict(head, status="ok", error="", rank=r, iteration=i, n_params=res["n_params"],
                     **{k: it[k] for k in PHASE_COLS})
                for r, res in enumerate(reply["ranks"]) for i, it in enumerate(res["iterations"])]

    settings = {k: o[k] for k in ("models", "modes", "workers", "batch_size", "iterations", "warmup", "seed")}
    return Plan("ch3", "phases", items, columns, settings, to_rows)


def _steps_columns(repeats: int, intrinsic=INTRINSIC) -> list[str]:
    return (_COMMON + list(intrinsic) + list(EXTRINSIC) + ["n_train", "steps_per_epoch", "step_time"]
            + [f"step_run{i + 1}" for i in range(repeats)]
            + ["epoch_time", "steps_per_run", "step_min", "step_max", "n_params"])


def _steps_rows(item, reply, base, extra=None, intrinsic=INTRINSIC):
    _, g, cfg = item
    head = dict(base, mode=cfg["mode"], **{k: cfg[k] for k in list(intrinsic) + list(EXTRINSIC)}, **(extra or {}))
    if not reply.get("ok"):
        return [dict(head, status="error", error=reply.get("error", "?"))]
    ranks = reply["ranks"]
    agg = _aggregate_steps(ranks)
    n_train = ranks[0]["n_train"]
    spe = steps_per_epoch(n_train, cfg["batch_size"], g)
    row = dict(head, status="ok", error="", n_train=n_train, steps_per_epoch=spe, step_time=agg["step_time"],
               epoch_time=spe * agg["step_time"], step_min=agg["step_min"], step_max=agg["step_max"],
               n_params=ranks[0]["n_params"], steps_per_run=ranks[0]["steps"], **{f"step_run{i + 1}": v for i, v in enumerate(agg["runs"])})
    return [row]


def _space(o: dict) -> dict:
    space = dict(TABLE_4_1_SPACE)
    if o.get("workers"):
        space["workers"] = _parse_list("workers", o["workers"], int)
    if o.get("batch_sizes"):
        space["batch_size"] = _parse_list("batch_sizes", o["batch_sizes"], int)
    if o.get("datasets"):
        space["dataset"] = _parse_list("datasets", o["datasets"], str, tuple(DATASET_SHAPES))
    return space


def _protocol(o: dict) -> dict:
    return {"warmup": o["warmup"], "repeats": o["repeats"], "steps": o["steps"], "mode": o["mode"],
            "min_run_seconds": o["min_run_seconds"], "max_steps": 200}


def _ch4_plan(o: dict, framework) -> Plan:
    space = _space(o)
    rep = sample_configs(o["samples"], seed=o["seed"], space=space)
    items = [(str(i), c["workers"], dict(c, seed=o["seed"] * 100003 + i, **_protocol(o)))
             for i, c in enumerate(rep.configs)]
    settings = dict(_protocol(o), seed=o["seed"], space=space)
    return Plan("ch4", "steps", items, _steps_columns(o["repeats"]) + _TAIL, settings, _steps_rows, sampler=rep)


def _ch5_plan(o: dict, framework) -> Plan:
    space = {k: v for k, v in TABLE_5_1_SPACE.items()}
    if o.get("workers"):
        space["workers"] = _parse_list("workers", o["workers"], int)
    if o.get("batch_sizes"):
        space["batch_size"] = _parse_list("batch_sizes", o["batch_sizes"], int)
    vol = _check_volume("volume", o["volume"])
    rep = sample_space(o["samples"], seed=o["seed"], space=space)
    items = [(str(i), c["workers"], dict(c, arch="resattnet3d", dataset="adni1", volume=vol, n_train=o["n_train"],
                                         seed=o["seed"] * 100003 + i, **_protocol(o)))
             for i, c in enumerate(rep.configs)]
    settings = dict(_protocol(o), seed=o["seed"], space=space, volume=vol, n_train=o["n_train"])

    return Plan("ch5", "steps", items, _steps_columns(o["repeats"], CH5_INTRINSIC) + _TAIL, settings, _ch5_rows,
                sampler=rep)


def _ch5_rows(item, reply, base):
    return _steps_rows(item, reply, base, intrinsic=CH5_INTRINSIC)


def _check_volume(name, volume) -> str:
    sizes = [int(v) for v in volume]
    if len(sizes) != 3 or min(sizes) < 8:
        raise ValueError(f"{name}: expected three sizes >= 8 (depth, height, width), got {sizes!r}")
    return format_volume(sizes)


def _ch5vol_plan(o: dict, framework) -> Plan:
    workers = _parse_list("workers", o["workers"] or TABLE_5_1_SPACE["workers"], int)
    batches = _parse_list("batch_sizes", o["batch_sizes"] or TABLE_5_1_SPACE["batch_size"], int)
    filters = _parse_list("filters", o["filters"], int)
    vols = [_check_volume("volumes", v) for v in o["volumes"]]
    if not vols:
        raise ValueError("volumes: give at least one volume")
    items = [(f"f{f}-v{vol}-G{g}-B{b}", g,
              dict(CH5VOL_BASE, num_filters=f, workers=g, batch_size=b, arch="resattnet3d", dataset="adni1",
                   volume=vol, n_train=o["n_train"], **_protocol(o)))
             for f, vol, g, b in itertools.product(filters, vols, workers, batches)]
    random.Random(o["seed"]).shuffle(items)
    for i, (_, _, cfg) in enumerate(items):  # seeds follow the run order
        cfg["seed"] = o["seed"] * 100003 + i
    settings = dict(_protocol(o), seed=o["seed"], base=CH5VOL_BASE, filters=filters, volumes=vols, workers=workers,
                    batch_sizes=batches, n_train=o["n_train"])

    return Plan("ch5vol", "steps", items, _steps_columns(o["repeats"], CH5_INTRINSIC) + _TAIL, settings, _ch5_rows)


def _noise_plan(o: dict, framework) -> Plan:
    space = _space(o)
    rep = sample_configs(o["samples"], seed=o["seed"], space=space)
    items = []
    for r in range(o["rounds"]):
        order = list(range(len(rep.configs)))
        random.Random(o["seed"] * 7 + r).shuffle(order)
        for c in order:
            cfg = dict(rep.configs[c], seed=o["seed"] * 100003 + c, **_protocol(o))
            items.append((f"r{r}-c{c}", cfg["workers"], dict(cfg, config_id=c, round=r)))
    columns = ["config_id", "round"] + _steps_columns(o["repeats"]) + _TAIL

    def to_rows(item, reply, base):
        return _steps_rows(item, reply, base, {"config_id": item[2]["config_id"], "round": item[2]["round"]})

    settings = dict(_protocol(o), seed=o["seed"], rounds=o["rounds"], space=space)
    return Plan("noise", "steps", items, columns, settings, to_rows, sampler=rep)


def _epoch_plan(o: dict, framework) -> Plan:
    space = _space(o)
    rep = sample_configs(o["samples"] * 10, seed=o["seed"], space=space)
    limit = float(o["max_epoch_seconds"])
    items = [(str(i), c["workers"], dict(c, seed=o["seed"] * 100003 + i, max_epoch_seconds=limit, **_protocol(o)))
             for i, c in enumerate(rep.configs)]
    columns = _steps_columns(o["repeats"]) + ["epoch_steps", "epoch_measured", "epoch_error"] + _TAIL

    def to_rows(item, reply, base):
        rows = _steps_rows(item, reply, base)
        if reply.get("ok"):
            measured = max(r.get("epoch_time") or -1.0 for r in reply["ranks"])
            row = rows[0]
            if measured < 0:
                row.update(status="skipped", error=f"predicted epoch {row['epoch_time']:.0f} s > {limit:.0f} s")
            else:
                row.update(epoch_steps=reply["ranks"][0]["epoch_steps"], epoch_measured=measured,
                           epoch_error=row["epoch_time"] / measured - 1.0)
        return rows

    settings = dict(_protocol(o), seed=o["seed"], max_epoch_seconds=limit, space=space)
    return Plan("epoch", "epoch", items, columns, settings, to_rows, sampler=rep, target=o["samples"])


DESCRIPTIONS = {
    "ch5": "Chapter 5: Table 5.1 3D-ResAttNet-18 configurations on synthetic single-channel volumes (size in "
           "`volume`); step time and epoch_time over the 431 ADNI-1 training scans as in ch4.",
    "ch3": "Chapter 3 phase timing: one row per worker and timed iteration (seconds) of a data-parallel job.",
    "ch4": "Chapter 4: Table 4.1 LeNet-5 configurations; step_time = median over runs of the run's mean step "
           "time (slowest worker); epoch_time = ceil(n_train / (batch_size * workers)) * step_time.",
    "noise": "Noise floor: the same configurations measured once per round, rounds at different moments.",
    "ch5vol": "Volume-size study for Chapter 5: every combination of volume, num_filters, workers and batch size at "
              "one fixed Table 5.1 configuration (settings.base), timed as ch5, in a seeded random order.",
    "epoch": "Epoch extrapolation check: step-time protocol as ch4 plus one timed whole epoch per configuration.",
}

DEFAULTS = {
    "ch3": dict(models=["cnn", "mlp", "ae"], modes=["phased", "overlapped"], workers=[1, 2, 3], batch_size=64,
                iterations=200, warmup=20, seed=0),
    "ch4": dict(samples=1500, seed=0, warmup=5, repeats=3, steps=5, min_run_seconds=0.25, mode="overlapped", workers=None,
                batch_sizes=None, datasets=None),
    "ch5": dict(samples=1500, seed=0, warmup=1, repeats=3, steps=2, min_run_seconds=0.0, mode="overlapped",
                workers=None, batch_sizes=None, volume=[48, 56, 48], n_train=431),
    "ch5vol": dict(seed=0, warmup=1, repeats=3, steps=2, min_run_seconds=0.0, mode="overlapped", workers=None,
                   batch_sizes=None, volumes=[[32, 38, 32], [48, 56, 48], [64, 76, 64], [80, 96, 80]],
                   filters=[16, 32], n_train=431),
    "noise": dict(samples=50, rounds=5, seed=1, warmup=5, repeats=3, steps=5, min_run_seconds=0.25, mode="overlapped", workers=None,
                  batch_sizes=None, datasets=None),
    "epoch": dict(samples=20, seed=2, warmup=5, repeats=3, steps=5, min_run_seconds=0.25, mode="overlapped", max_epoch_seconds=120.0,
                  workers=None, batch_sizes=None, datasets=None),
}


#: value checks of the options (lists are checked where they are parsed, by ``_parse_list``)
_CHECKS = {**{key: (check_int, {}) for key in ("samples", "rounds", "iterations", "repeats", "steps", "batch_size",
                                                "n_train")},
           "warmup": (check_int, {"minimum": 0}), "seed": (check_int, {"minimum": 0}),
           "min_run_seconds": (check_number, {}), "max_epoch_seconds": (check_number, {"positive": True})}


#: the largest ``seed``: each sample's seed (seed · 100003 + its index) must stay a 64-bit integer for the frameworks
MAX_SEED = 2**32 - 1
#: the largest side of a synthetic volume (voxels; the full Colin27 brain is 181 × 217 × 181)
MAX_VOLUME_SIDE = 512


def _check_grid(o: dict) -> None:
    """The seed within :data:`MAX_SEED`, no value twice in a list option (a configuration would be measured twice
    under one sample id), and every volume side from 1 to :data:`MAX_VOLUME_SIDE`; else one ValueError naming the
    option."""
    if o.get("seed") is not None and o["seed"] > MAX_SEED:
        raise ValueError(f"seed: expected an integer from 0 to {MAX_SEED}, got {o['seed']!r}")
    for key in ("workers", "batch_sizes", "filters", "models", "modes", "datasets", "volumes"):
        v = o.get(key)
        if v is not None and len({str(x) for x in v}) < len(v):
            raise ValueError(f"{key}: {v} holds a value twice (each configuration is measured once per sample id)")
    volumes = ([o["volume"]] if o.get("volume") is not None else []) + list(o.get("volumes") or [])
    for vol in volumes:
        if not all(1 <= int(d) <= MAX_VOLUME_SIDE for d in vol):
            raise ValueError(f"{'volume' if o.get('volume') is vol else 'volumes'}: {'x'.join(map(str, vol))} has a "
                             f"side outside 1 to {MAX_VOLUME_SIDE} voxels")


def make_plan(kind: str, framework: str = "pytorch", **options) -> Plan:
    """The plan for ``kind`` with ``options`` over :data:`DEFAULTS` (unknown options are an error)."""
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
    o = dict(DEFAULTS[kind])
    for key, value in options.items():
        if key not in o:
            raise ValueError(f"{key}: not an option of `collect {kind}` (options: {', '.join(sorted(o))})")
        if value is not None:
            o[key] = value
    for key, value in o.items():
        if key in _CHECKS:
            check, kw = _CHECKS[key]
            check(key, value, **kw)
    if o.get("mode", "overlapped") not in ("phased", "overlapped"):
        raise ValueError(f"mode: expected 'phased' or 'overlapped', got {o['mode']!r}")
    _check_grid(o)
    return {"ch3": _ch3_plan, "ch4": _ch4_plan, "noise": _noise_plan, "epoch": _epoch_plan,
            "ch5": _ch5_plan, "ch5vol": _ch5vol_plan}[kind](o, framework)
