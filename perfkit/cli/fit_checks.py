"""``perfkit fit``: the flags' defaults and the checks that run on the flags and the data before any fit starts."""
from __future__ import annotations

import math

__all__ = ["AUTO", "DEFAULT_CODING", "DEFAULT_FORM", "DEFAULT_INTERVALS", "DEFAULT_METHOD", "DEFAULT_PENALTY",
           "DEFAULT_TEST_SIZE", "MIN_HELD_OUT", "STEP_FLAGS", "check_fit_flags", "check_form_flags",
           "check_step_flags", "check_target_spread", "held_out_rows", "parse_extrapolate", "uses_phases"]

#: ``--form`` value that scores every form by cross-validation and keeps one
AUTO = "auto"
#: the defaults of ``--form``, ``--method``, ``--penalty`` and ``--coding`` (the last three belong to the thesis form)
DEFAULT_FORM = "thesis"
DEFAULT_METHOD = "varpro"
DEFAULT_PENALTY = "none"
DEFAULT_CODING = "thesis"
#: the default of ``--intervals`` (listed first among the interval methods)
DEFAULT_INTERVALS = "studentized"
#: the held-out share of the random split when neither ``--test-size`` nor ``--extrapolate`` is given
DEFAULT_TEST_SIZE = 0.33
#: the role flags of the step forms (:data:`perfkit.model.stepmodels.STEP_FORMS`): the columns of K, N and m
STEP_FLAGS = ("gpus", "nodes", "batch")
#: the step form that is fitted with a measured phase (the synchronisation time per step)
PHASE_FORM = "phases"


#: the fewest held-out rows a fit is scored on (R² and the intervals' coverage need a spread of held-out times)
MIN_HELD_OUT = 2


def held_out_rows(value: float, n_rows: int | None = None, min_fit: int = 2) -> int | None:
    """``--test-size`` as a number of held-out rows (None when ``n_rows`` is not given: only the form is checked).

    A value strictly between 0 and 1 is a share of the rows (rounded up, as
    scikit-learn does); a whole number >= 1 is a row count. Anything else
    (0, negatives, 1.5, NaN) is an error, and so is a split that holds out
    fewer than :data:`MIN_HELD_OUT` rows or leaves fewer than ``min_fit`` rows
    to fit (checked before any fit starts, so no fit is run only to fail on
    its score).
    """
    if not math.isfinite(value) or value <= 0 or (value >= 1 and value != int(value)):
        raise ValueError(f"--test-size: expected a share strictly between 0 and 1 or a whole number of rows >= 1, "
                         f"got {value:g}")
    if n_rows is None:
        return None
    low, high = MIN_HELD_OUT, n_rows - max(min_fit, 1)
    if n_rows < 2:
        raise ValueError(f"--test-size {value:g}: the data has {n_rows} row; fitting and testing need at least 2")
    n_test = math.ceil(value * n_rows) if value < 1 else int(value)
    if not 1 <= n_test <= n_rows - 1:
        raise ValueError(f"--test-size {value:g}: holding out {n_test} of the {n_rows} rows leaves nothing to fit; "
                         f"give a share in (0, 1) or 1 to {n_rows - 1} rows")
    allowed = (f"give a share in (0, 1) that holds out {low} to {high} rows, or a row count from {low} to {high}"
               if low <= high else f"the data has {n_rows} rows; at least {low + max(min_fit, 1)} are needed")
    if n_test < low:
        raise ValueError(f"--test-size {value:g}: holds out {n_test} of the {n_rows} rows; scoring the fit (R², "
                         f"coverage) needs at least {low} held-out rows; {allowed}")
    if n_rows - n_test < min_fit:
        raise ValueError(f"--test-size {value:g}: holding out {n_test} of the {n_rows} rows leaves {n_rows - n_test} "
                         f"to fit; the fit needs at least {min_fit}; {allowed}")
    return n_test


def check_fit_flags(args) -> None:
    """``--seeds`` >= 1; ``--jobs`` non-zero; ``--lam`` finite and >= 0 (> 0 needs ``--penalty``); the form of
    ``--test-size``."""
    if args.seeds < 1:
        raise ValueError(f"--seeds: expected an integer >= 1, got {args.seeds}")
    if args.jobs == 0:
        raise ValueError("--jobs: expected a non-zero integer (1 = one at a time, -1 = all cores), got 0")
    if not math.isfinite(args.lam) or args.lam < 0:
        raise ValueError(f"--lam: expected a finite number >= 0, got {args.lam:g}")
    if args.penalty == DEFAULT_PENALTY and args.lam > 0:
        raise ValueError(f"--lam {args.lam:g} needs --penalty l1 or l2")
    if args.extrapolate is not None and args.test_size is not None:
        raise ValueError(f"--extrapolate {args.extrapolate} and --test-size {args.test_size:g}: give one; "
                         "--extrapolate holds out the rows beyond its MAX instead of a random share")
    from ..model.scale_intervals import MAX_INFLATION

    inflation = getattr(args, "inflation", 1.0)
    if not (math.isfinite(inflation) and 0 < inflation <= MAX_INFLATION):
        raise ValueError(f"--inflation: expected a number > 0 and at most {MAX_INFLATION:g} (the factor κ on the "
                         f"intervals' width), got {inflation:g}")
    if inflation != 1.0 and args.extrapolate is None:
        raise ValueError("--inflation widens the intervals beyond the fitted scale: it needs --extrapolate COL[:MAX]")
    if args.extrapolate is not None:
        parse_extrapolate(args.extrapolate)
    else:
        held_out_rows(DEFAULT_TEST_SIZE if args.test_size is None else args.test_size)  # its size: checked later


def parse_extrapolate(text: str):
    """``--extrapolate COL[:MAX]`` → ``(COL, MAX or None)``; MAX a finite number > 0."""
    col, sep, top = str(text).rpartition(":") if ":" in str(text) else (str(text), "", "")
    col = col.strip()
    if not col:
        raise ValueError(f"--extrapolate {text!r}: expected COL or COL:MAX (a column and the largest value of it "
                         "to fit on), e.g. n_gpus:16")
    if not sep:
        return col, None
    try:
        value = float(top)
    except ValueError:
        raise ValueError(f"--extrapolate {text}: MAX {top.strip()!r} is not a number; expected COL:MAX, e.g. "
                         f"{col}:16") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"--extrapolate {text}: MAX must be a finite number > 0, got {top.strip()}")
    return col, value


def uses_phases(args) -> bool:
    """Whether a form that ``args`` fits (or searches) is fitted with a measured phase column."""
    return args.form == PHASE_FORM or (args.form == AUTO and args.gpus is not None)


def check_step_flags(args) -> None:
    """``--gpus/--nodes/--batch`` all given with a step form (or none or all with ``--form auto``), never with
    another form; the step forms take no ``--numeric/--categorical/--extrinsic``; ``--form phases`` takes exactly
    one ``--phases`` column (the synchronisation time)."""
    from ..model.stepmodels import STEP_FORMS
    from ..model.validation import column_list

    given = [f for f in STEP_FLAGS if getattr(args, f) is not None]
    step = args.form in STEP_FORMS
    if step or (args.form == AUTO and given):
        missing = [f"--{f}" for f in STEP_FLAGS if f not in given]
        if missing:
            raise ValueError(f"--form {args.form}{' with step forms' if not step else ''} needs --gpus, --nodes and "
                             f"--batch (the columns of the GPU count, the node count and the per-GPU batch); "
                             f"missing: {', '.join(missing)}")
    elif given:
        raise ValueError(f"--{given[0]}: --gpus/--nodes/--batch belong to the step forms (--form "
                         f"{' or '.join(STEP_FORMS)}, or auto), not --form {args.form}")
    cols = [getattr(args, f).strip() for f in given]
    if any(not c for c in cols) or len(set(cols)) < len(cols):
        raise ValueError(f"--gpus, --nodes, --batch: expected three different column names, got {cols}")
    if step and (args.numeric or args.categorical or args.extrinsic):
        raise ValueError(f"--numeric/--categorical/--extrinsic: --form {args.form} reads only its --gpus, --nodes "
                         "and --batch columns; give those (the baselines use them too)")
    phases = column_list("phases", args.phases)
    if args.form == PHASE_FORM and not phases:
        raise ValueError("--form phases needs --phases COL: the measured time per step spent synchronising "
                         "gradients (read in fit only); without a measured phase use --form pollux")
    if uses_phases(args) and len(phases) > 1:
        raise ValueError(f"--phases {','.join(phases)}: the phases form uses one phase column, the measured "
                         f"synchronisation (communication) time per step, got {len(phases)}; give only that one "
                         "(e.g. --phases t_c of perfkit's harness, sync_time of Pollux's traces)")


def check_form_flags(args) -> None:
    """``--form``, ``--network``, ``--cv``, ``--intervals`` and the thesis form's flags agree with each other."""
    from ..model.costs import NETWORKS

    if args.cv < 2:
        raise ValueError(f"--cv: expected an integer >= 2, got {args.cv}")
    if args.network is not None and args.network not in NETWORKS:
        raise ValueError(f"--network: expected one of {sorted(NETWORKS)}, got {args.network!r}")
    if args.form == "hybrid" and args.network is None:
        raise ValueError("--form hybrid needs --network (the network whose costs the form uses), e.g. --network lenet5")
    if args.form != DEFAULT_FORM and (args.penalty != DEFAULT_PENALTY or args.method != DEFAULT_METHOD
                                      or args.coding != DEFAULT_CODING or getattr(args, "scale", "data") != "data"):
        raise ValueError(f"--penalty/--lam/--method/--coding/--scale belong to --form thesis, not --form {args.form}")
    if args.form == AUTO and args.intervals == "split":
        raise ValueError("--intervals split: the form search calibrates from its own folds; use studentized or cv+")
    if args.intervals != DEFAULT_INTERVALS:
        if args.extrapolate is not None:
            raise ValueError(f"--intervals {args.intervals}: with --extrapolate the intervals are calibrated on inner "
                             "extrapolation splits and widen with the distance; leave --intervals out")
        if args.form == DEFAULT_FORM and not args.calibrate:
            raise ValueError(f"--intervals {args.intervals}: --form thesis calibrates intervals only with --calibrate")
    if getattr(args, "select", None) is not None:
        if args.form != AUTO:
            raise ValueError(f"--select belongs to --form auto (the form search), not --form {args.form}")
        if args.extrapolate is not None:
            raise ValueError("--select: not with --extrapolate, which selects by inner extrapolation splits")
    if getattr(args, "inflation", 1.0) != 1.0 and args.form == DEFAULT_FORM and not args.calibrate:
        raise ValueError("--inflation widens the saved intervals: --form thesis saves them only with --calibrate")
    if getattr(args, "no_reference", False) and args.form != AUTO:
        raise ValueError(f"--no-reference belongs to --form auto (the form search), not --form {args.form}")
    check_step_flags(args)


def check_target_spread(y, what: str, hint: str = "") -> None:
    """``y`` has at least two different values: a constant target leaves nothing to model and no held-out R²."""
    values = y.unique()
    if len(values) < 2:
        shown = f"{values[0]:g}" if len(values) else "nothing"
        raise ValueError(f"{what} is constant (every row is {shown}): there is no variation to model and the "
                         f"held-out R² is undefined{hint}")
