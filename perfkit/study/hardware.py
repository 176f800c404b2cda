"""A fit study across hardware: the GPU spec join (``hardware``), the leave-one-group-out split (``split``) and
the settings that go with them, checked when a :class:`~perfkit.study.spec.FitSpec` is built
(:func:`check_hardware`); the candidates and baselines such a study compares (:func:`group_candidates`,
:func:`group_baselines`).

``hardware=COL`` joins the GPU spec table (:mod:`perfkit.data.gpu_specs`) on the GPU names of COL: the columns of
:data:`~perfkit.data.gpu_specs.HARDWARE_COLUMNS` join the table, the numeric ones join the numeric role of the
table forms and the baselines, and the roofline form reads them. ``split="group:COL"`` scores by leaving one level
of COL out at a time (COL = the hardware column groups by the canonical GPU name, so that one GPU sold in several
machines is one group), with the form chosen and the intervals calibrated on the other groups alone
(:func:`perfkit.model.selection.by_group.nested_group_study`).
"""
from __future__ import annotations

from .constraints import given, name

__all__ = ["GROUP", "HARDWARE_NUMERIC", "GROUP_FORMS", "parse_split", "check_hardware", "group_column",
           "group_candidates", "group_baselines", "hardware_roles"]

#: the split kind of leave one group out (``split="group:COL"``)
GROUP = "group"
#: the spec columns that join the numeric role (the peak for the row's precision, FP32, memory and link bandwidth)
HARDWARE_NUMERIC = ("hw_peak_tflops", "hw_fp32_tflops", "hw_mem_gbps", "hw_link_gbps")
#: the forms a leave-one-group-out study fits (``auto``: the roofline variants and the log-linear form, chosen on
#: the other groups)
GROUP_FORMS = ("roofline", "loglinear", "auto")


def parse_split(value) -> tuple[str, str]:
    """``split`` → ``("group", COL)``; anything but ``"group:COL"`` is a ValueError naming the flag."""
    text = str(value).strip()
    kind, sep, col = text.partition(":")
    if kind.strip() != GROUP or not sep or not col.strip():
        raise ValueError(f"{name('split')} {text!r}: expected group:COL (leave one level of COL out at a time, e.g. "
                         "group:gpu)")
    return GROUP, col.strip()


def check_hardware(spec) -> None:
    """How ``hardware``, ``precision``, ``gpu_specs`` and ``split`` go with the other settings (one error naming
    the flag at fault)."""
    if spec.split is not None:
        parse_split(spec.split)
    for key in ("precision", "gpu_specs"):
        if getattr(spec, key) is not None and spec.hardware is None:
            raise ValueError(f"{name(key)} chooses the GPU spec columns joined on {name('hardware')} COL; give "
                             f"{name('hardware')} too")
    if spec.hardware is not None and spec.split is None:
        raise ValueError(f"{name('hardware')} {spec.hardware}: a model over GPU spec columns is judged on GPUs it never "
                         f"saw; give {name('split')} group:{spec.hardware} (leave one GPU out)")
    if spec.form == "roofline" and spec.hardware is None:
        raise ValueError(f"{given('form', 'roofline')} reads the GPU spec columns: give {name('hardware')} COL (the "
                         "column of GPU names) and a split, e.g. --split group:COL")
    if spec.split is None:
        return
    _, col = parse_split(spec.split)
    if col in spec.categorical:
        raise ValueError(f"{name('split')} {spec.split}: {col!r} is a workload column ({name('categorical')}): a level "
                         "left out is a workload no other group ran, so no form can predict it; leave out the levels of "
                         "another column (e.g. the GPU)")
    if spec.form not in GROUP_FORMS:
        raise ValueError(f"{name('split')} {spec.split}: leave one group out fits {', '.join(GROUP_FORMS)}; got "
                         f"{given('form', spec.form)}")
    if spec.form == "auto" and spec.hardware is None:
        raise ValueError(f"{given('form', 'auto')} with {name('split')} chooses among the forms over GPU spec columns; "
                         f"give {name('hardware')} COL")
    for key in ("test_size", "extrapolate", "scale_of", "cluster", "select", "inflation"):
        if getattr(spec, key) is not None:
            raise ValueError(f"{given(key, getattr(spec, key))}: not with {name('split')} {spec.split}, which holds "
                             "out one group at a time instead")
    if spec.baselines == () and (spec.hardware is None or spec.form == "loglinear"):
        raise ValueError(f"{name('baselines')}: expected at least one kind here ({name('split')} {spec.split} "
                         "compares the form with the baselines, and without the spec join no log-linear one is added)")
    if spec.intervals != spec.default("intervals"):
        raise ValueError(f"{given('intervals', spec.intervals)}: not with {name('split')} {spec.split}, whose "
                         "intervals are calibrated on the held-out groups' errors; leave it out")
    if spec.nodes is not None or spec.phases:
        key = "nodes" if spec.nodes is not None else "phases"
        raise ValueError(f"{name(key)}: not read in a study across hardware (the roofline form reads {name('gpus')} "
                         f"and {name('batch')})")
    cols = [c for c in (spec.gpus, spec.batch) if c is not None]
    if len(set(cols)) < len(cols):
        raise ValueError(f"{name('gpus')}, {name('batch')}: expected two different columns, got {cols}")


def group_column(spec) -> tuple[str, str]:
    """``(column of the joined table whose levels are the groups, the column the user named)``: the canonical GPU
    name ``hw_gpu`` when the split groups by the hardware column."""
    _, col = parse_split(spec.split)
    return ("hw_gpu" if spec.hardware is not None and col == spec.hardware else col), col


def hardware_roles(spec) -> dict:
    """The roles of the table forms and the baselines: the spec's, the hardware's numeric columns added, the
    GPU-count and batch columns as extrinsic."""
    roles = spec.roles
    taken = {c for cols in roles.values() for c in cols}
    numeric = [*roles["numeric"], *(c for c in HARDWARE_NUMERIC if c not in taken and spec.hardware is not None)]
    extrinsic = [*roles["extrinsic"], *(c for c in (spec.gpus, spec.batch) if c is not None and c not in taken)]
    return {"numeric": numeric, "categorical": roles["categorical"], "extrinsic": extrinsic}


def _roofline(spec, **settings):
    from ..model.forms.roofline import RooflineModel

    return RooflineModel(workload=list(spec.categorical), batch=spec.batch, gpus=spec.gpus, **settings)


def _loglinear(spec, per_level: bool = True):
    from ..model.forms.loglinear import LogLinearModel

    return LogLinearModel(**hardware_roles(spec), interactions=False, category_terms=per_level, select="none")


def group_candidates(spec) -> dict:
    """Name → unfitted form: ``auto``: the roofline sum, the sum without the per-step optimizer term, a smooth
    max (s = 4), the log-linear form with spec columns (per-level slopes, no products) and the same with slopes shared
    by every level (a factor per workload; fewer parameters where few groups are measured); else the one form."""
    from ..model.forms.roofline import DEFAULT_TERMS

    if spec.form == "roofline":
        return {"roofline": _roofline(spec)}
    if spec.form == "loglinear":
        return {"log-linear": _loglinear(spec)}
    return {"roofline": _roofline(spec),
            "roofline (no optimizer term)": _roofline(spec, terms=[t for t in DEFAULT_TERMS if t != "optimizer"]),
            "roofline (smooth max, s=4)": _roofline(spec, smooth=4.0),
            "log-linear": _loglinear(spec), "log-linear (shared slopes)": _loglinear(spec, per_level=False)}


def group_baselines(spec) -> dict:
    """Label → unfitted baseline: a random forest and gradient boosting on the same columns (the spec columns
    numeric), and the log-linear form with spec columns when the study has hardware."""
    from ..model.selection.baselines import LABELS, make_baseline

    roles = hardware_roles(spec)
    out = {LABELS[k]: make_baseline(k, **roles, random_state=0, **({"n_jobs": 1} if k == "rf" else {}))
           for k in (("rf", "gb") if spec.baselines is None else spec.baselines)}
    if spec.hardware is not None and spec.form != "loglinear":
        out["log-linear"] = _loglinear(spec)
    return out
