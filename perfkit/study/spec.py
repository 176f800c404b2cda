"""What a fit study is asked to do: :class:`FitSpec`, checked when it is built.

A spec holds the column roles, the form (or ``"auto"``: the form search), the split (a random held-out share or
row count, or by extrapolation along a column, ``"COL[:MAX]"``), the seeds, the interval method and calibration,
the search's rule and reference, and the inflation of extrapolated intervals. Building one checks every value
(:data:`FitSpec._parameter_constraints`, declarative) and then how the values go together (a flag of one form
given to another, two ways of asking for one thing): one ``ValueError`` naming the parameter at fault, before
any data is read. The checks that need the data run in :func:`perfkit.study.data.prepare`.
"""
from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, field, fields

from .constraints import Flag, Integer, Number, OneOf, Table, Text, check_constraints, given, name

__all__ = ["FitSpec", "AUTO", "DEFAULT_FORM", "DEFAULT_TEST_SIZE", "MIN_HELD_OUT", "STEP_ROLES", "PHASE_FORM",
           "parse_extrapolate", "CLI_FLAGS"]

#: ``form`` value that scores every form by cross-validation and keeps one
AUTO = "auto"
#: the thesis's eq. 4.4, the default form (``penalty``, ``lam``, ``method``, ``coding`` and ``scale`` are its own)
DEFAULT_FORM = "thesis"
#: the held-out share of the random split when neither ``test_size`` nor ``extrapolate`` is given
DEFAULT_TEST_SIZE = 0.33
#: the fewest held-out rows a fit is scored on (R² and the intervals' coverage need a spread of held-out times)
MIN_HELD_OUT = 2
#: the columns of the step forms: the GPU count K, the node count N and the per-GPU batch m
STEP_ROLES = ("gpus", "nodes", "batch")
#: the step form that is fitted with a measured phase (the synchronisation time per step)
PHASE_FORM = "phases"
#: the flag of each parameter on ``perfkit fit`` (where it is not ``--`` + the name with dashes)
CLI_FLAGS = {"n_jobs": "--jobs", "reference": "--no-reference"}


def _form_names() -> tuple:
    from ..model.forms.registry import form_names

    return (*form_names(), AUTO)


def _hardware_forms() -> tuple:
    from ..model.forms.registry import hardware_forms

    return hardware_forms()


def _engines() -> tuple:
    from ..model.forms.generic import ENGINE_METHODS

    return ENGINE_METHODS


def _codings() -> tuple:
    from ..model.forms.generic import CODINGS

    return CODINGS


def _interval_methods() -> tuple:
    from ..model.uncertainty.conformal import INTERVAL_METHODS

    return INTERVAL_METHODS


def _networks() -> tuple:
    from ..model.forms.costs import NETWORKS

    return tuple(sorted(NETWORKS))


def _max_inflation() -> float:
    from ..model.uncertainty.scale_intervals import MAX_INFLATION

    return MAX_INFLATION


def _columns(value) -> tuple:
    """A list argument (None, ``"a,b"``, a list or tuple) as a tuple; any other value unchanged (refused by the
    caller)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return tuple(value) if isinstance(value, (list, tuple)) else value


def parse_extrapolate(value):
    """``extrapolate`` → ``(COL, MAX or None)``: ``"COL"``, ``"COL:MAX"`` or ``(COL, MAX)``; MAX finite and > 0."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2 or not isinstance(value[0], str):
            raise ValueError(f"{name('extrapolate')}: expected 'COL', 'COL:MAX' or (COL, MAX), got {value!r}")
        text = f"{value[0]}:{value[1]}" if value[1] is not None else value[0]
    else:
        text = str(value)
    col, sep, top = text.rpartition(":") if ":" in text else (text, "", "")
    col = col.strip()
    if not col:
        raise ValueError(f"{name('extrapolate')} {text!r}: expected COL or COL:MAX (a column and the largest value "
                         "of it to fit on), e.g. n_gpus:16")
    if not sep:
        return col, None
    try:
        top_value = float(top)
    except ValueError:
        raise ValueError(f"{name('extrapolate')} {text}: MAX {top.strip()!r} is not a number; expected COL:MAX, "
                         f"e.g. {col}:16") from None
    if not math.isfinite(top_value) or top_value <= 0:
        raise ValueError(f"{name('extrapolate')} {text}: MAX must be a finite number > 0, got {top.strip()}")
    return col, top_value


@dataclass(frozen=True, kw_only=True)
class FitSpec:
    """One fit study, checked when built (see the module docstring); :func:`perfkit.study.run` runs it.

    Parameters
    ----------
    target : str
        The column of measured times (> 0).
    numeric, categorical, extrinsic : list of str or "a,b"
        The column roles of the table forms (eq. 4.4, log-linear, hybrid, symbolic).
    form : str, default "thesis"
        A form of the registry (``thesis``, ``loglinear``, ``hybrid``, ``symbolic``, ``pollux``, ``phases``) or
        ``"auto"``: every form scored by cross-validation (or by inner extrapolation splits with ``extrapolate``).
    penalty, lam, method, coding, scale
        The thesis form's regularisation (None, "l1", "l2"; λ >= 0), engine, categorical coding and unit
        scaling ("data": unit-free; "none": the thesis's convention).
    seeds : int, default 10
        Thesis form: fits with seeds 0..seeds-1; the best objective is kept.
    test_size : float or int, optional
        Held-out share in (0, 1) or row count >= 1 of a random split (default 0.33); not with ``extrapolate``.
    extrapolate : str or (str, float), optional
        ``"COL"`` or ``"COL:MAX"``: fit on the rows with COL <= MAX, score the rows beyond by extrapolation factor.
    cv, intervals, calibrate
        Folds of the search and the intervals (a study that fits none refuses a ``cv`` other than 5: a scaling
        study, leave one group out, one form with ``extrapolate``, the thesis form without ``calibrate``); the
        conformal method; whether the thesis form calibrates intervals (every other form always does).
    select, reference
        ``form="auto"``: its rule ("1se" or "best") and whether the black-box reference is fitted beside it (not
        in a scaling study with the step columns or with ``split``, whose searches have no reference).
    network, fixed
        The hybrid form's network and the constants its cost model needs that are not columns (refused where no
        candidate reads them).
    gpus, nodes, batch, phases
        The step forms' columns and the measured phase columns (read in fit only).
    inflation : float, optional
        Factor κ on the width of the saved intervals beyond the fitted scale: with ``extrapolate`` (default 1) or in
        a scaling study (default :data:`~perfkit.model.uncertainty.scale_intervals.DEFAULT_KAPPA`, calibrated
        on Pollux's and Sia's traces; with the consensus's two options ``DISAGREEMENT_KAPPA``).
    scale_of : str, optional
        A scaling study from small runs along this column: every row is fitted, none is held out, the model is
        chosen on inner extrapolation splits of the rows, and its intervals widen beyond the largest value. The
        default with ``form="auto"`` and the step columns (neither ``extrapolate`` nor ``test_size`` given): the
        GPU column.
    cluster, job : str, optional
        In a scaling study with the step columns: the cluster and the job, by name in perfkit's hardware tables
        (``data/external/hardware``) or as ``FILE.csv:NAME`` in a table of your own with the same columns. Both
        given, the communication-prior form (:class:`~perfkit.model.forms.commprior.CommPriorStepModel`: gradient
        bytes over each level's bandwidth) joins the candidates of ``form="auto"``; in both that search and a
        scaling study of one form, it prices the rows on more nodes than measured. Only along the GPU column.
    hardware : str, optional
        The column of GPU names: the GPU spec table's columns join the data (:mod:`perfkit.study.hardware`); needs
        ``split``. ``precision`` (the column of training precisions, choosing the peak) and ``gpu_specs`` (a spec
        table of your own) go with it.
    split : str, optional
        ``"group:COL"``: leave one level of COL out at a time (COL = ``hardware``: one GPU at a time), the form
        chosen and the intervals calibrated on the other groups; forms roofline, loglinear or auto.
    level : float, default 0.9
        Coverage of the intervals whose held-out coverage the study reports (strictly between 0 and 1); refused
        where no held-out interval is scored (a scaling study, the thesis form without ``calibrate``).
    baselines : list of str, optional
        The baselines fitted beside the model (kinds of :func:`~perfkit.model.selection.baselines.make_baseline`:
        "rf", "gb", "svr"); default: a random forest, and gradient boosting too for every form but the thesis's on a
        random split (the inner comparison always uses "rf" and "gb"); refused in a scaling study, which holds out
        no row.
    n_jobs : int, default -1
        Parallel fits (joblib; every fit is seeded, so results do not depend on it).
    """

    target: str
    numeric: tuple = ()
    categorical: tuple = ()
    extrinsic: tuple = ()
    form: str = DEFAULT_FORM
    penalty: str | None = None
    lam: float = 0.0
    method: str = "varpro"
    coding: str = "thesis"
    scale: str = "data"
    seeds: int = 10
    test_size: float | None = None
    extrapolate: object = None
    cv: int = 5
    intervals: str = "studentized"
    calibrate: bool = False
    select: str | None = None
    reference: bool = True
    network: str | None = None
    fixed: dict = field(default_factory=dict)
    gpus: str | None = None
    nodes: str | None = None
    batch: str | None = None
    phases: tuple = ()
    inflation: float | None = None
    scale_of: str | None = None
    cluster: str | None = None
    job: str | None = None
    hardware: str | None = None
    precision: str | None = None
    gpu_specs: str | None = None
    split: str | None = None
    level: float = 0.9
    baselines: tuple | None = None
    n_jobs: int = -1

    #: every parameter's allowed values (any one constraint of its list; None: the value None)
    _parameter_constraints = {
        "target": [Text()],
        "form": [OneOf(_form_names)],
        "penalty": [None, OneOf(("l1", "l2"))],
        "lam": [Number(low=0, words="a finite number >= 0")],
        "method": [OneOf(_engines)],
        "coding": [OneOf(_codings)],
        "scale": [OneOf(("data", "none"))],
        "seeds": [Integer(low=1)],
        "test_size": [None, Number(low=0, open_low=True, words="a share strictly between 0 and 1 or a whole "
                                                                 "number of rows >= 1")],
        "cv": [Integer(low=2)],
        "intervals": [OneOf(_interval_methods)],
        "calibrate": [Flag()],
        "select": [None, OneOf(("1se", "best"))],
        "reference": [Flag()],
        "network": [None, OneOf(_networks)],
        "fixed": [Table()],
        "gpus": [None, Text()],
        "nodes": [None, Text()],
        "batch": [None, Text()],
        "inflation": [None, Number(low=0, open_low=True, high=_max_inflation,
                             words="a number{range} (the factor κ on the intervals' width)")],
        "scale_of": [None, Text()],
        "cluster": [None, Text()],
        "job": [None, Text()],
        "hardware": [None, Text()],
        "precision": [None, Text()],
        "gpu_specs": [None, Text()],
        "split": [None, Text()],
        "level": [Number(low=0, open_low=True, words="a coverage strictly between 0 and 1, e.g. 0.9")],
        "n_jobs": [Integer(nonzero=True, words="a non-zero integer (1 = one at a time, -1 = all cores)")],
    }

    def __post_init__(self):
        for role in ("numeric", "categorical", "extrinsic", "phases"):
            object.__setattr__(self, role, _role_columns(role, getattr(self, role)))
        if self.baselines is not None:
            object.__setattr__(self, "baselines", _baseline_kinds(self.baselines))
        for role in STEP_ROLES:
            value = getattr(self, role)
            if isinstance(value, str):
                object.__setattr__(self, role, value.strip())
        check_constraints(self, self._parameter_constraints)
        _check_values(self)
        _check_form(self)
        hardware = (self.hardware, self.split, self.precision, self.gpu_specs)
        if any(v is not None for v in hardware) or self.form in _hardware_forms():
            from .hardware import check_hardware

            check_hardware(self)  # the step columns go with the roofline form there
        else:
            _check_step(self)
        _check_read(self)

    # ------------------------------------------------------------------ derived settings
    @property
    def scale_column(self):
        """``(COL, MAX or None)`` of ``extrapolate``, or None for a random split."""
        return None if self.extrapolate is None else parse_extrapolate(self.extrapolate)

    @property
    def scale_study(self) -> str | None:
        """The scale column of a scaling study from small runs (``scale_of``; by default the GPU column of
        ``form="auto"`` with the step columns and none of ``extrapolate``, ``test_size`` and ``split``), else None."""
        if self.scale_of is not None:
            return self.scale_of
        held_out = (self.extrapolate, self.test_size, self.split)
        if self.form == AUTO and self.gpus is not None and all(v is None for v in held_out):
            return self.gpus
        return None

    @property
    def kappa(self) -> float:
        """The inflation κ of the saved intervals: ``inflation``, else the transferred default in a scaling study
        and 1 otherwise."""
        if self.inflation is not None:
            return float(self.inflation)
        if self.scale_study is None:
            return 1.0
        from ..model.uncertainty.scale_intervals import DEFAULT_KAPPA

        return DEFAULT_KAPPA

    @property
    def held_out(self) -> float:
        """The random split's share or row count (``test_size`` or :data:`DEFAULT_TEST_SIZE`)."""
        return DEFAULT_TEST_SIZE if self.test_size is None else self.test_size

    @property
    def roles(self) -> dict:
        """``{"numeric": [...], "categorical": [...], "extrinsic": [...]}``."""
        return {r: list(getattr(self, r)) for r in ("numeric", "categorical", "extrinsic")}

    @property
    def step_roles(self) -> dict | None:
        """``{"gpus": COL, "nodes": COL, "batch": COL}``, or None without the step columns."""
        return None if self.gpus is None else {r: getattr(self, r) for r in STEP_ROLES}

    @property
    def is_step_form(self) -> bool:
        from ..model.forms.registry import step_forms

        return self.form in step_forms()

    @property
    def uses_phases(self) -> bool:
        """Whether a form this spec fits (or searches) is fitted with a measured phase column."""
        return self.form == PHASE_FORM or (self.form == AUTO and self.gpus is not None)

    @classmethod
    def default(cls, key: str):
        """The default of the setting ``key`` (a setting given another value where the study never reads it is
        refused, never ignored)."""
        f = cls.__dataclass_fields__[key]
        return f.default_factory() if f.default is MISSING else f.default

    @property
    def reads_cv(self) -> bool:
        """Whether a study of this spec fits folds (the form search's, or the intervals' conformal folds)."""
        return _no_folds(self) is None

    @property
    def calibrated(self) -> bool:
        """Whether the saved model carries intervals (every form but the thesis form without ``calibrate``)."""
        return self.form != DEFAULT_FORM or self.calibrate

    def replace(self, **changes) -> "FitSpec":
        """A new spec with ``changes`` (checked again)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return FitSpec(**{**values, **changes})

    def to_dict(self) -> dict:
        """The settings as plain JSON values."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = list(v) if isinstance(v, tuple) else (dict(v) if isinstance(v, dict) else v)
        if out["extrapolate"] is not None and not isinstance(out["extrapolate"], str):
            col, top = parse_extrapolate(self.extrapolate)
            out["extrapolate"] = col if top is None else f"{col}:{top:g}"
        return out


def _role_columns(role: str, value) -> tuple:
    from ..model.validation import column_list

    return tuple(column_list(name(role), value))


def _baseline_kinds(value) -> tuple:
    """``baselines`` as a tuple of distinct kinds of :data:`~perfkit.model.selection.baselines.KINDS`."""
    from ..model.selection.baselines import KINDS

    kinds = _columns(value)
    if not isinstance(kinds, tuple) or not all(k in KINDS for k in kinds) or len(set(kinds)) < len(kinds):
        raise ValueError(f"{name('baselines')}: expected distinct kinds of {', '.join(map(repr, KINDS))}, got {value!r}")
    return kinds


def _check_values(spec: FitSpec) -> None:
    """The values that depend on others: ``lam`` > 0 needs a penalty; ``test_size`` a share or a whole count and
    not with ``extrapolate``; ``inflation`` at most the cap and only with ``extrapolate``."""
    if spec.penalty is None and spec.lam > 0:
        raise ValueError(f"{given('lam', spec.lam)} needs {name('penalty')} l1 or l2")
    if spec.test_size is not None and spec.test_size >= 1 and spec.test_size != int(spec.test_size):
        raise ValueError(f"{name('test_size')}: expected a share strictly between 0 and 1 or a whole number of rows "
                         f">= 1, got {spec.test_size:g}")
    if spec.extrapolate is not None and spec.test_size is not None:
        raise ValueError(f"{given('extrapolate', spec.extrapolate)} and {given('test_size', spec.test_size)}: give "
                         f"one; {name('extrapolate')} holds out the rows beyond its MAX instead of a random share")
    if spec.scale_of is not None and (spec.extrapolate is not None or spec.test_size is not None):
        other = "extrapolate" if spec.extrapolate is not None else "test_size"
        raise ValueError(f"{given('scale_of', spec.scale_of)} and {given(other, getattr(spec, other))}: give one; "
                         f"{name('scale_of')} fits every row (none is held out) and extrapolates beyond them")
    if spec.inflation is not None and spec.extrapolate is None and spec.scale_study is None:
        raise ValueError(f"{name('inflation')} widens the intervals beyond the fitted scale: it needs "
                         f"{name('extrapolate')} COL[:MAX] or {name('scale_of')} COL")
    if spec.extrapolate is not None:
        parse_extrapolate(spec.extrapolate)
    if spec.level >= 1:
        raise ValueError(f"{name('level')}: expected a coverage strictly between 0 and 1, e.g. 0.9, got {spec.level:g}")


def _check_form(spec: FitSpec) -> None:
    """The form's own settings agree with it: the thesis form's engine settings, the hybrid's network, the
    interval method, the search's rule and reference."""
    form = given("form", spec.form)
    if spec.form == "hybrid" and spec.network is None:
        raise ValueError(f"{form} needs {name('network')} (the network whose costs the form uses), e.g. "
                         f"{given('network', 'lenet5')}")
    if spec.form != DEFAULT_FORM and (spec.penalty is not None or spec.method != "varpro" or spec.coding != "thesis"
                                      or spec.scale != "data"):
        raise ValueError(f"{'/'.join(name(p) for p in ('penalty', 'lam', 'method', 'coding', 'scale'))} belong to "
                         f"{given('form', DEFAULT_FORM)}, not {form}")
    _check_unused(spec)
    if spec.form == AUTO and spec.intervals == "split":
        raise ValueError(f"{given('intervals', 'split')}: the form search calibrates from its own folds; use "
                         "studentized or cv+")
    if spec.intervals != "studentized":
        if spec.extrapolate is not None or spec.scale_study is not None:
            how = name("extrapolate") if spec.extrapolate is not None else f"a scaling study ({name('scale_of')})"
            raise ValueError(f"{given('intervals', spec.intervals)}: with {how} the intervals are "
                             f"calibrated on inner extrapolation splits and widen with the distance; leave "
                             f"{name('intervals')} out")
        if spec.form == DEFAULT_FORM and not spec.calibrate:
            raise ValueError(f"{given('intervals', spec.intervals)}: {given('form', DEFAULT_FORM)} calibrates "
                             f"intervals only with {name('calibrate')}")
    if spec.select is not None:
        if spec.form != AUTO:
            raise ValueError(f"{name('select')} belongs to {given('form', AUTO)} (the form search), not {form}")
        if spec.extrapolate is not None:
            raise ValueError(f"{name('select')}: not with {name('extrapolate')}, which selects by inner "
                             "extrapolation splits")
    if spec.scale_of is not None and spec.form == DEFAULT_FORM and not spec.calibrate:
        raise ValueError(f"{name('scale_of')}: a scaling study saves intervals that widen beyond the fitted scale; "
                         f"{given('form', DEFAULT_FORM)} saves them only with {name('calibrate')}")
    if (spec.cluster is None) != (spec.job is None):
        given_one = "cluster" if spec.cluster is not None else "job"
        missing = "job" if given_one == "cluster" else "cluster"
        raise ValueError(f"{given(given_one, getattr(spec, given_one))} needs {name(missing)} too: the prior prices "
                         "the job's gradient bytes on the cluster's links")
    if spec.cluster is not None and (spec.scale_study is None or not spec.step_roles):
        raise ValueError(f"{name('cluster')}/{name('job')} give the communication prior of a scaling study with the "
                         f"step columns ({given('form', AUTO)} with {name('gpus')}, {name('nodes')}, {name('batch')}, "
                         f"without {name('extrapolate')} or {name('test_size')})")
    if spec.cluster is not None and spec.scale_study != spec.gpus:
        raise ValueError(f"{name('cluster')}/{name('job')}: the communication prior prices the rows on more nodes than "
                         f"measured, in a scaling study along the GPU count ({name('scale_of')} {spec.gpus}); got "
                         f"{name('scale_of')} {spec.scale_study}")
    if spec.select is not None and spec.scale_study is not None:
        raise ValueError(f"{name('select')}: not in a scaling study ({name('scale_of')} {spec.scale_study}), which "
                         f"selects by inner extrapolation splits of the rows; for a random split scored by CV give "
                         f"{name('test_size')}")
    if spec.inflation is not None and spec.form == DEFAULT_FORM and not spec.calibrate:
        raise ValueError(f"{name('inflation')} widens the saved intervals: {given('form', DEFAULT_FORM)} saves them "
                         f"only with {name('calibrate')}")
    if not spec.reference and spec.form != AUTO:
        raise ValueError(f"{name('reference')} belongs to {given('form', AUTO)} (the form search), not {form}")


def _check_unused(spec: FitSpec) -> None:
    """``network`` and ``fixed`` given to a form that does not read them (its constructor has no such parameter;
    ``"auto"`` hands them to the forms that do) are an error naming the form."""
    if spec.form == AUTO:
        return
    import inspect

    from ..model.forms.registry import get, table_forms

    takes = inspect.signature(get(spec.form).cls.__init__).parameters
    readers = [f for f in table_forms() if "network" in inspect.signature(get(f).cls.__init__).parameters]
    for param, value in (("network", spec.network), ("fixed", spec.fixed)):
        if value and param not in takes:
            raise ValueError(f"{name(param)}: {given('form', spec.form)} does not use it (read by "
                             f"{', '.join(readers)} and {given('form', AUTO)}); leave it out")


def _check_step(spec: FitSpec) -> None:
    """The step columns: all three with a step form (none or all with ``"auto"``), never with another form; the
    step forms take no table roles; the phases form takes exactly one phase column."""
    from ..model.forms.registry import step_forms

    present = [r for r in STEP_ROLES if getattr(spec, r) is not None]
    step = spec.form in step_forms()
    if step or (spec.form == AUTO and present):
        missing = [name(r) for r in STEP_ROLES if r not in present]
        if missing:
            raise ValueError(f"{given('form', spec.form)}{' with step forms' if not step else ''} needs "
                             f"{name('gpus')}, {name('nodes')} and {name('batch')} (the columns of the GPU count, "
                             f"the node count and the per-GPU batch); missing: {', '.join(missing)}")
    elif present:
        raise ValueError(f"{name(present[0])}: {name('gpus')}/{name('nodes')}/{name('batch')} belong to the step "
                         f"forms ({name('form')} {' or '.join(step_forms())}, or auto), not {given('form', spec.form)}")
    cols = [getattr(spec, r) for r in present]
    if len(set(cols)) < len(cols):
        raise ValueError(f"{name('gpus')}, {name('nodes')}, {name('batch')}: expected three different column names, "
                         f"got {cols}")
    if step and (spec.numeric or spec.categorical or spec.extrinsic):
        raise ValueError(f"{name('numeric')}/{name('categorical')}/{name('extrinsic')}: {given('form', spec.form)} "
                         f"reads only its {name('gpus')}, {name('nodes')} and {name('batch')} columns; give those "
                         "(the baselines use them too)")
    if spec.form == PHASE_FORM and not spec.phases:
        raise ValueError(f"{given('form', PHASE_FORM)} needs {name('phases')} COL: the measured time per step spent "
                         "synchronising gradients (read in fit only); without a measured phase use "
                         f"{given('form', 'pollux')}")
    if spec.uses_phases and len(spec.phases) > 1:
        raise ValueError(f"{name('phases')} {','.join(spec.phases)}: the phases form uses one phase column, the "
                         f"measured synchronisation (communication) time per step, got {len(spec.phases)}; give only "
                         "that one (e.g. --phases t_c of perfkit's harness, sync_time of Pollux's traces)")


def _no_folds(spec: FitSpec) -> str | None:
    """Why a study of ``spec`` fits no folds (``cv`` unread), or None when it does."""
    if spec.split is not None:
        return f"{name('split')} {spec.split} holds out one group at a time"
    if spec.scale_study is not None:
        return f"a scaling study ({name('scale_of')} {spec.scale_study}) scores on inner extrapolation splits"
    if spec.extrapolate is not None and spec.form != AUTO:
        return f"with {name('extrapolate')} the intervals are calibrated on inner extrapolation splits"
    if not spec.calibrated:
        return f"{given('form', DEFAULT_FORM)} calibrates no intervals without {name('calibrate')}"
    if spec.intervals == "split":
        return f"{given('intervals', 'split')} calibrates on a held-out quarter"
    return None


def _check_read(spec: FitSpec) -> None:
    """A setting given a value other than its default where this study never reads it is one error naming it."""
    if spec.seeds != FitSpec.default("seeds") and spec.form != DEFAULT_FORM:
        raise ValueError(f"{given('seeds', spec.seeds)}: the repeated fits from several seeds belong to "
                         f"{given('form', DEFAULT_FORM)}, not {given('form', spec.form)} (fitted once); leave "
                         f"{name('seeds')} out")
    why = _no_folds(spec)
    if spec.cv != FitSpec.default("cv") and why:
        raise ValueError(f"{given('cv', spec.cv)}: this study fits no folds ({why}); leave {name('cv')} out")
    if spec.penalty is not None and spec.lam == 0:
        raise ValueError(f"{given('penalty', spec.penalty)} needs {name('lam')} > 0 (its weight; with 0 the penalty "
                         "does nothing)")
    own = ("a scaling study with the step columns searches the step forms" if spec.scale_study is not None
           and spec.step_roles else f"{name('split')} {spec.split} searches the roofline and log-linear forms"
           if spec.split is not None else None)
    if spec.form == AUTO and own:
        for key in ("reference", "network", "fixed"):
            if getattr(spec, key) != FitSpec.default(key):
                raise ValueError(f"{name(key)}: not read here ({own}); leave it out")
        if spec.step_roles and (spec.numeric or spec.categorical or spec.extrinsic) and spec.split is None:
            raise ValueError(f"{name('numeric')}/{name('categorical')}/{name('extrinsic')}: not read here ({own}, "
                             f"which read only {name('gpus')}, {name('nodes')} and {name('batch')}); leave them out")
    if spec.baselines == () and spec.split is None:
        raise ValueError(f"{name('baselines')}: expected at least one kind (leave it out for the default)")
    if spec.scale_study is not None and spec.baselines is not None:
        raise ValueError(f"{name('baselines')}: not read in a scaling study ({name('scale_of')} {spec.scale_study}), "
                         "which holds out no row and compares with a random forest and gradient boosting on its inner "
                         "splits; leave it out")
    if spec.level != FitSpec.default("level") and (spec.scale_study is not None or not spec.calibrated):
        where = "a scaling study holds out no row" if spec.scale_study is not None else \
            f"{given('form', DEFAULT_FORM)} calibrates no intervals without {name('calibrate')}"
        raise ValueError(f"{given('level', spec.level)}: no held-out interval is scored here ({where}); leave "
                         f"{name('level')} out")
