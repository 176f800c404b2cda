"""A roofline-informed form over hardware columns: the step time of a workload as the sum (or a smooth max) of the
times its work takes on each of the GPU's resources, :class:`RooflineModel`.

For a workload w (a level combination of the categorical columns, e.g. a model and a precision) on a GPU with peak
tensor rate P (TFLOP/s), FP32 rate F, memory bandwidth B (GB/s) and GPU-to-GPU link L (GB/s), with per-GPU batch b on
n GPUs, each term is a resource's time for one step:

.. math::
    t = \\Big(\\sum_k (c_{w,k}\\, x_k)^s\\Big)^{1/s},\\qquad
    x = \\Big(\\tfrac{b}{P},\\ \\tfrac{b}{F},\\ \\tfrac{b}{B},\\ b,\\ \\tfrac{n-1}{n}\\tfrac{1}{L},\\
          \\tfrac{1}{B},\\ 1\\Big)

(:data:`TERMS`: ``compute``, ``vector``, ``memory``, ``overhead``, ``sync``, ``optimizer``, ``launch``). The
coefficients c ≥ 0 are the workload's work per sample (TFLOP, GB, seconds of host time) over the efficiency it
reaches, its gradient bytes per step times the ring all-reduce's factor 2, its optimizer's bytes per step, its fixed
seconds per step. With ``flops`` (FLOP per sample) or ``bytes`` (bytes per sample) columns from a cost model, the
compute and memory terms become FLOPs/(P·10¹²) and bytes/(B·10⁹), and their coefficients are 1 / efficiency.

``smooth`` s = 1 (default) adds the times: no resource overlaps another, the sum bounds the roofline's max from
above; s > 1 is a smooth max that tends to the roofline's max(compute, memory) as s grows. The coefficients are
fitted per workload by non-negative least squares on relative errors (s = 1), or from that start by
``scipy.optimize.least_squares`` over log c (s > 1): a convex problem for s = 1, one answer, no seeds.

Guarantees: predictions are > 0 for every row of a fitted workload (every term's column is > 0 and the overhead
or another term carries a positive coefficient); a row of a workload not seen in fit is refused with one
``ValueError`` naming the workload (:meth:`RooflineModel.predictable` says which rows can be predicted).
"""
from __future__ import annotations

import time

import numpy as np

from ..base import PerformanceForm
from ..roles import record_roles
from ..validation import validate_frame, validate_target

__all__ = ["RooflineModel", "TERMS", "DEFAULT_TERMS", "JSON_FORMAT"]

JSON_FORMAT = "perfkit.RooflineModel"
#: every term: what its coefficient means (the words of :meth:`RooflineModel.summary`)
TERMS = {
    "compute": "tensor work per sample (TFLOP at the peak) / efficiency",
    "vector": "FP32 vector work per sample (TFLOP) / efficiency",
    "memory": "memory traffic per sample (GB) / efficiency",
    "overhead": "host seconds per sample (the GPU does not change it)",
    "sync": "gradient GB per step × 2 (ring all-reduce over the GPU link)",
    "optimizer": "memory GB per step independent of the batch (optimizer update)",
    "launch": "fixed seconds per step",
}
#: the terms fitted unless ``terms`` says otherwise
DEFAULT_TERMS = ("compute", "vector", "memory", "overhead", "sync", "optimizer")
_NEEDS = {"sync": ("gpus", "link")}
#: the terms proportional to the batch (a workload's work per sample), whose mix a one-spec workload borrows
_PER_SAMPLE = ("compute", "vector", "memory", "overhead")
#: how a workload whose rows hold one GPU spec is fitted (``one_spec``): "mix", its per-sample terms in the median
#: work mix of the workloads that hold two or more; "nnls", like the others (its split among them arbitrary)
ONE_SPEC = ("mix", "nnls")
_MAX_SMOOTH = 64.0


def _column_or_none(name: str, value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name}: expected a column name or None, got {value!r}")
    return value.strip()


class RooflineModel(PerformanceForm):
    """Per-workload roofline sum of hardware terms, fitted by non-negative least squares on relative errors.

    Parameters
    ----------
    workload : list of str or "a,b"
        Categorical columns whose level combination is a workload (fitted on its own), e.g. the model and the
        precision; empty: one workload.
    peak, vector, memory, link : str
        Columns of the GPU's peak TFLOP/s for the row's precision, FP32 TFLOP/s, memory GB/s and GPU-link GB/s
        (the names :func:`perfkit.data.gpu_specs.hardware_columns` gives, by default).
    batch, gpus : str, optional
        The per-GPU batch and the GPU-count columns; without ``batch`` the terms are per step (b = 1); without
        ``gpus`` there is no ``sync`` term.
    flops, bytes : str, optional
        FLOP and bytes per sample from a cost model; their terms' coefficients are then 1 / efficiency.
    terms : list of str, optional
        Which of :data:`TERMS` to fit (default :data:`DEFAULT_TERMS`; a term whose columns are not given is left
        out).
    smooth : float, default 1
        The exponent s of the smooth max (1 = the sum), from 1 to 64.
    one_spec : {"mix", "nnls"}, default "mix"
        A workload whose rows hold one GPU spec (one GPU type at one precision) cannot tell its compute, vector,
        memory and host terms apart. ``"mix"``: they take the median work mix, at that spec, of the workloads that ran
        on that spec and on at least one other, scaled by one fitted factor (the terms not proportional to the batch
        fitted beside it, a per-step one only when its rows hold two batches or more); ``"nnls"``: fitted like the
        others (the split among them is whatever NNLS lands on; files saved before this setting existed).
        Without such workloads the setting changes nothing.

    Attributes
    ----------
    workloads_ : list of tuple
        The fitted workloads (level tuples), in the order of ``coef_``.
    coef_ : ndarray of shape (n_workloads, n_terms)
        The coefficients c (≥ 0) of :attr:`terms_`.
    terms_ : list of str
    fit_mape_ : ndarray
        Each workload's MAPE (%) on its fit rows.
    n_specs_ : ndarray
        Each workload's number of distinct (peak, FP32, bandwidth) triples in its fit rows: with one, its compute,
        vector and memory terms are not told apart (NNLS puts the time on one of them), so its prediction for a GPU
        with other ratios of those specs rests on an arbitrary split; :meth:`summary` names such workloads.
    """

    json_format = JSON_FORMAT
    json_version = 1
    optional_settings = ("one_spec",)
    fitted_keys = ("numeric", "categorical", "extrinsic", "terms", "workloads", "coef", "fit_mape", "n_rows",
                   "n_specs", "ranges", "fit_time")
    fitted_attribute = "coef_"

    def __init__(self, *, workload=(), peak="hw_peak_tflops", vector="hw_fp32_tflops", memory="hw_mem_gbps",
                 link="hw_link_gbps", batch=None, gpus=None, flops=None, bytes=None, terms=None,
                 smooth=1.0, one_spec="mix"):
        self.workload = workload
        self.peak = peak
        self.vector = vector
        self.memory = memory
        self.link = link
        self.batch = batch
        self.gpus = gpus
        self.flops = flops
        self.bytes = bytes
        self.terms = terms
        self.smooth = smooth
        self.one_spec = one_spec

    # ------------------------------------------------------------------ settings
    def _settings(self):
        from ..validation import column_list

        workload = column_list("workload", self.workload) if self.workload else []
        cols = {k: _column_or_none(k, getattr(self, k)) for k in
                ("peak", "vector", "memory", "link", "batch", "gpus", "flops", "bytes")}
        for k in ("peak", "vector", "memory"):
            if cols[k] is None:
                raise ValueError(f"{k}: expected a column name, got None")
        terms = DEFAULT_TERMS if self.terms is None else [self.terms] if isinstance(self.terms, str) else self.terms
        if not isinstance(terms, (list, tuple)) or not terms or any(t not in TERMS for t in terms) \
                or len(set(terms)) < len(terms):
            raise ValueError(f"terms: expected distinct terms of {list(TERMS)}, got {self.terms!r}")
        kept = [t for t in TERMS if t in terms and all(cols[c] is not None for c in _NEEDS.get(t, ()))]
        s = self.smooth
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not 1 <= s <= _MAX_SMOOTH:
            raise ValueError(f"smooth: expected a number from 1 to {_MAX_SMOOTH:g} (1 = the sum), got {s!r}")
        if self.one_spec not in ONE_SPEC:
            raise ValueError(f"one_spec: expected one of {list(ONE_SPEC)}, got {self.one_spec!r}")
        return workload, cols, kept, float(s)

    def _roles(self, workload, cols, kept):
        numeric = [cols[k] for k in ("peak", "vector", "memory", "flops", "bytes") if cols[k] is not None]
        if "sync" in kept:
            numeric.append(cols["link"])
        extrinsic = [cols[k] for k in ("batch", "gpus") if cols[k] is not None]
        return list(dict.fromkeys(numeric)), list(workload), extrinsic

    # ------------------------------------------------------------------ the terms
    def _design(self, X, cols, kept) -> np.ndarray:
        """The term columns x (one row per row of ``X``), each > 0 except ``sync`` on one GPU (0)."""
        def col(k):
            return np.asarray(X[cols[k]], dtype=float)

        n = len(X)
        b = col("batch") if cols["batch"] else np.ones(n)
        compute = (col("flops") * 1e-12 if cols["flops"] else 1.0) / col("peak")
        memory = (col("bytes") * 1e-9 if cols["bytes"] else 1.0) / col("memory")
        make = {"compute": lambda: b * compute, "vector": lambda: b / col("vector"), "memory": lambda: b * memory,
                "overhead": lambda: b, "optimizer": lambda: 1.0 / col("memory"), "launch": lambda: np.ones(n),
                "sync": lambda: (col("gpus") - 1.0) / col("gpus") / col("link")}
        return np.column_stack([make[t]() for t in kept])

    def _combine(self, A, c, s) -> np.ndarray:
        if s == 1.0:
            return A @ c
        return np.sum((A * c) ** s, axis=1) ** (1.0 / s)

    def _fit_one(self, A, y, s):
        from scipy.optimize import least_squares, nnls

        c, _ = nnls(A / y[:, None], np.ones(len(y)))
        if s == 1.0 or not np.any(c > 0):
            return c
        on = c > 0
        start = np.log(c[on])

        def residual(theta):
            full = np.zeros_like(c)
            full[on] = np.exp(theta)
            return self._combine(A, full, s) / y - 1.0

        theta = least_squares(residual, start, bounds=(start - 30, start + 30)).x
        c = np.zeros_like(c)
        c[on] = np.exp(theta)
        return c

    @classmethod
    def _from_settings(cls, settings: dict):
        # a file saved before ``one_spec`` existed was fitted as "nnls" does
        return super()._from_settings({"one_spec": "nnls", **settings})

    def _fit_workloads(self, A, y, which, specs, batch, kept, s) -> list:
        """Every workload's coefficients (workload i: the rows ``which == i``, the set ``specs[i]`` of GPU spec
        triples they hold): those on two specs or more first, then (``one_spec="mix"``) those on one spec from the
        work mix of the workloads that also ran on it."""
        coef = [None] * len(specs)
        for i in sorted(range(len(specs)), key=lambda i: len(specs[i]) < 2):
            sel = which == i
            told = [coef[j] for j in range(len(specs)) if len(specs[j]) >= 2 and specs[i] <= specs[j]]
            mixed = None
            if len(specs[i]) < 2 and told and self.one_spec == "mix":
                mixed = self._fit_mix(A[sel], y[sel], np.array(told), kept, batch[sel])
            coef[i] = mixed if mixed is not None else self._fit_one(A[sel], y[sel], s)
        return coef

    def _fit_mix(self, A, y, told, kept, b):
        """A workload whose rows hold one GPU spec: its per-sample terms (those ∝ b) take the median work mix of the
        workloads ``told`` (their coefficients) at this spec, scaled by one fitted factor; the terms not ∝ b are
        fitted beside it (non-negative least squares on relative errors; with ``smooth`` > 1 these coefficients are
        used as they are). None when the others' mix is empty (every per-sample coefficient 0)."""
        from scipy.optimize import nnls

        per = [k for k, t in enumerate(kept) if t in _PER_SAMPLE]
        # a term constant in the batch is told from the per-sample ones only by rows of two or more batches
        rest = [k for k, t in enumerate(kept) if t not in _PER_SAMPLE and (t == "sync" or len(np.unique(b)) > 1)]
        u = np.median(A[:, per] / b[:, None], axis=0)  # the per-sample columns at this spec (one value each)
        shares = told[:, per] * u
        total = shares.sum(axis=1)
        if not per or not np.any(total > 0):
            return None
        mix = np.median(shares[total > 0] / total[total > 0, None], axis=0)
        if not mix.sum() > 0:
            return None
        mix = mix / mix.sum()
        z = (A[:, per] / u) @ mix
        D = np.column_stack([z, A[:, rest]])
        w, _ = nnls(D / y[:, None], np.ones(len(y)))
        c = np.zeros(len(kept))
        c[per] = w[0] * mix / u
        c[rest] = w[1:]
        return c

    def _keys(self, X, workload) -> list:
        if not workload:
            return [()] * len(X)
        return list(zip(*(X[c].tolist() for c in workload)))

    # ------------------------------------------------------------------ fit / predict
    def fit(self, X, y):
        """Fit every workload's coefficients on its rows of ``X`` (times ``y`` > 0); returns self."""
        start = time.perf_counter()
        workload, cols, kept, s = self._settings()
        num, cat, ext = self._roles(workload, cols, kept)
        validate_frame(X, num, cat, ext, min_rows=2)
        y = validate_target(y, X, positive=True)
        if cols["gpus"]:
            from ..roles import count_column

            count_column(X, cols["gpus"], "gpus")
        A = self._design(X, cols, kept)
        keys = self._keys(X, workload)
        workloads = sorted(set(keys), key=lambda k: tuple(map(str, k)))
        index = {k: i for i, k in enumerate(workloads)}
        which = np.array([index[k] for k in keys])
        hw = np.column_stack([np.asarray(X[cols[k]], dtype=float) for k in ("peak", "vector", "memory")])
        batch = np.asarray(X[cols["batch"]], dtype=float) if cols["batch"] else np.ones(len(X))
        specs = [{tuple(t) for t in np.unique(hw[which == i], axis=0)} for i in range(len(workloads))]
        coef = self._fit_workloads(A, y, which, specs, batch, kept, s)
        for i, c in enumerate(coef):
            if not np.any(c > 0):
                raise ValueError(f"workload {dict(zip(workload, workloads[i]))}: no term fits its "
                                 f"{int(np.sum(which == i))} rows (every coefficient is 0); check its times and "
                                 "hardware columns")
        mape = [float(np.mean(np.abs(self._combine(A[which == i], coef[i], s) / y[which == i] - 1.0)) * 100)
                for i in range(len(workloads))]
        rows = [int(np.sum(which == i)) for i in range(len(workloads))]
        specs = [len(t) for t in specs]
        record_roles(self, num, cat, ext)
        self.terms_, self.workloads_ = kept, workloads
        self.coef_, self.fit_mape_, self.n_rows_ = np.array(coef), np.array(mape), np.array(rows)
        self.n_specs_ = np.array(specs)
        self.ranges_ = {c: (float(np.min(X[c])), float(np.max(X[c]))) for c in num + ext}
        self.fit_time_ = time.perf_counter() - start
        return self

    def predictable(self, X) -> np.ndarray:
        """Whether each row's workload was fitted."""
        self._check_fitted()
        known = set(self.workloads_)
        return np.array([k in known for k in self._keys(X, self.categorical_)], dtype=bool)

    def predict(self, X):
        """The step time of every row of ``X``; a row of a workload not fitted is a ValueError naming it."""
        self._check_fitted()
        workload, cols, kept, s = self._settings()
        validate_frame(X, self.numeric_, self.categorical_, self.extrinsic_)
        keys = self._keys(X, self.categorical_)
        index = {k: i for i, k in enumerate(self.workloads_)}
        for row, k in enumerate(keys):
            if k not in index:
                raise ValueError(f"row {row + 1}: workload {dict(zip(self.categorical_, k))} was not fitted (known: "
                                 f"{[dict(zip(self.categorical_, w)) for w in self.workloads_[:6]]}"
                                 f"{' ...' if len(self.workloads_) > 6 else ''})")
        A = self._design(X, cols, self.terms_)
        C = self.coef_[[index[k] for k in keys]]
        if s == 1.0:
            return np.sum(A * C, axis=1)
        return np.sum((A * C) ** s, axis=1) ** (1.0 / s)

    def fitted_ranges(self) -> dict | None:
        self._check_fitted()
        return dict(self.ranges_)

    @property
    def n_parameters_(self) -> int:
        self._check_fitted()
        return int(self.coef_.size)

    # ------------------------------------------------------------------ report
    def shares(self, X) -> "object":
        """Each row's time split by term (a DataFrame of shares summing to 1 for s = 1; for s > 1 each term's
        (c·x)^s over the sum): which resource the form says bounds the row."""
        import pandas as pd

        self._check_fitted()
        workload, cols, kept, s = self._settings()
        index = {k: i for i, k in enumerate(self.workloads_)}
        A = self._design(X, cols, self.terms_) * self.coef_[[index[k] for k in self._keys(X, self.categorical_)]]
        A = A ** s
        return pd.DataFrame(A / A.sum(axis=1, keepdims=True), columns=self.terms_, index=X.index)

    def coefficients(self):
        """One row per workload: its rows, the distinct GPU specs they hold, fit MAPE (%) and every coefficient."""
        import pandas as pd

        self._check_fitted()
        frame = pd.DataFrame(self.coef_, columns=self.terms_)
        for i, c in enumerate(self.categorical_):
            frame.insert(i, c, [w[i] for w in self.workloads_])
        frame.insert(len(self.categorical_), "rows", self.n_rows_)
        frame.insert(len(self.categorical_) + 1, "gpu_specs", self.n_specs_)
        frame.insert(len(self.categorical_) + 2, "fit_MAPE", self.fit_mape_)
        return frame

    def formula(self, digits: int = 3) -> str:
        self._check_fitted()
        x = {"compute": "b/P", "vector": "b/F", "memory": "b/B", "overhead": "b", "sync": "(n-1)/n/L",
             "optimizer": "1/B", "launch": "1"}
        inner = " + ".join(f"c_{t}·{x[t]}" for t in self.terms_)
        s = float(self.smooth)
        body = inner if s == 1.0 else f"(Σ (c·x)^{s:g})^(1/{s:g}) over {inner}"
        return f"t = {body}, c fitted per workload ({len(self.workloads_)} workloads)"

    def summary(self) -> str:
        self._check_fitted()
        lines = ["RooflineModel: " + self.formula(), "terms:"]
        lines += [f"  {t}: {TERMS[t]}" for t in self.terms_]
        with np.errstate(all="ignore"):
            table = self.coefficients().to_string(index=False, float_format=lambda v: f"{v:.3g}")
        alone = [dict(zip(self.categorical_, w)) for w, n in zip(self.workloads_, self.n_specs_) if n < 2]
        if alone:
            how = ("their per-sample terms take the median work mix of the workloads that ran on that spec and on "
                   "another" if self.one_spec == "mix" else "their compute, vector and memory terms are not told apart")
            lines.append(f"{len(alone)} workload(s) fitted on one GPU spec only ({how}; a GPU with other spec ratios "
                         f"is a guess for them): " + "; ".join(map(str, alone[:5])) + (" ..." if len(alone) > 5 else ""))
        return "\n".join(lines + [table])

    # ------------------------------------------------------------------ JSON
    def _fitted_doc(self) -> dict:
        return {"numeric": self.numeric_, "categorical": self.categorical_, "extrinsic": self.extrinsic_,
                "terms": list(self.terms_), "workloads": [list(w) for w in self.workloads_],
                "coef": [[float(v) for v in row] for row in self.coef_], "fit_mape": [float(v) for v in self.fit_mape_],
                "n_rows": [int(v) for v in self.n_rows_], "n_specs": [int(v) for v in self.n_specs_], "ranges": {k: list(v) for k, v in self.ranges_.items()},
                "fit_time": float(self.fit_time_)}

    @classmethod
    def _restore(cls, model, checked, reader):
        workload, cols, kept, s = checked
        num, cat, ext = model._roles(workload, cols, kept)
        reader.roles(num, cat, ext)
        if reader.names("terms") != kept:
            raise reader.fail(f"fitted.terms: expected {kept} (the settings' terms), got {reader['terms']!r}")
        workloads = reader["workloads"]
        if not isinstance(workloads, list) or not workloads or not all(
                isinstance(w, list) and len(w) == len(cat) for w in workloads):
            raise reader.fail(f"fitted.workloads: expected a non-empty list of {len(cat)}-level lists")
        coef = reader["coef"]
        ok = isinstance(coef, list) and len(coef) == len(workloads) and all(
            isinstance(r, list) and len(r) == len(kept) and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) and v >= 0 for v in r)
            for r in coef)
        if not ok:
            raise reader.fail(f"fitted.coef: expected {len(workloads)} rows of {len(kept)} finite numbers >= 0")
        arr = np.array(coef, dtype=float)
        model.fit_mape_ = np.array(reader.numbers("fit_mape", len(workloads)), dtype=float)
        n_rows = reader.numbers("n_rows", len(workloads))
        if not all(isinstance(v, int) and v >= 1 for v in n_rows):
            raise reader.fail("fitted.n_rows: expected whole numbers >= 1")
        model.n_rows_ = np.array(n_rows, dtype=int)
        n_specs = reader.numbers("n_specs", len(workloads))
        if not all(isinstance(v, int) and v >= 1 for v in n_specs):
            raise reader.fail("fitted.n_specs: expected whole numbers >= 1")
        model.n_specs_ = np.array(n_specs, dtype=int)
        ranges = reader["ranges"]
        if not isinstance(ranges, dict) or sorted(ranges) != sorted(num + ext):
            raise reader.fail(f"fitted.ranges: expected one [min, max] per column of {num + ext}")
        model.ranges_ = {k: (float(v[0]), float(v[1])) for k, v in ranges.items()}
        record_roles(model, num, cat, ext)
        model.terms_, model.workloads_ = kept, [tuple(w) for w in workloads]
        model.coef_ = arr
        model.fit_time_ = reader.number("fit_time", minimum=0)
        return model

