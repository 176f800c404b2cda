"""A step-time form whose synchronisation is priced by the hardware: :class:`CommPriorStepModel`.

The gradient bytes of a step (the model's parameters × bytes per element) and the interconnect's bandwidth bound the
time a ring all-reduce takes before any run is measured: about 2(n−1)/n · bytes / bandwidth per level of n members.
Inside a node the ring runs over its g = K/N GPUs (the intra-node link), across nodes over the N nodes (the
network). The form is

    T_sync = α + u_intra · 2(g−1)/g · B / bw_intra + u_inter · 2(N−1)/N · B / bw_inter   (0 for one GPU)

with T_grad = a + b·m and T_iter = (T_grad^γ + T_sync^γ)^(1/γ) as :class:`PhaseAwareStepModel` has them, fitted the
same way (log residuals of the step and of the measured compute time; ``sync_column`` read in fit only). u = 1 /
efficiency is fitted for each level the fit rows hold. A level the rows do not hold takes the other level's u (the
efficiency measured on the level the rows do hold), or ``1 / default_efficiency`` when they hold neither: that u is a
prior, not fitted, and :meth:`summary` and :attr:`prior_` say which u the data pinned and which the prior supplied.
An efficiency carried from the other level is raised to ``min_prior_efficiency`` when it lies below it: a link whose
measured all-reduce reaches a hundredth of its datasheet bandwidth is latency-bound or not the link the table names,
and that says little about another level's bandwidth (a network priced at it is priced far too slow).
An unknown network bandwidth (``inter_gbps=None``) prices the network per byte at the intra-node bandwidth: measured
multi-node rows then fit its u freely (it absorbs the bandwidth), and without them the prediction assumes a network
as fast as the node's links (said in the summary).
"""
from __future__ import annotations

import numpy as np

from ..._checks import check_number
from .stepmodels import PhaseAwareStepModel

__all__ = ["CommPriorStepModel", "DEFAULT_EFFICIENCY", "DEFAULT_MIN_PRIOR_EFFICIENCY", "ring_costs"]

#: the efficiency (achieved / datasheet bandwidth) assumed for a level when the fit rows hold no level at all
DEFAULT_EFFICIENCY = 0.5
#: the lowest efficiency a level takes from the other level's fit (``min_prior_efficiency``): on the single-node fits
#: of the shipped and Sia traces, carried efficiencies of 0.005-0.01 (Azure's node links) priced the network several
#: times too slow (``benchmarks/results/small_runs_sia.md``, the prior's contribution)
DEFAULT_MIN_PRIOR_EFFICIENCY = 0.1
#: GB/s → bytes per second
_GB = 1e9


def ring_costs(K, N, grad_bytes: float, intra_gbps: float, inter_gbps: float | None):
    """(intra, inter): the seconds of a ring all-reduce of ``grad_bytes`` at datasheet bandwidth on each level,
    2(g−1)/g · B / bw_intra over the g = K/N GPUs of a node and 2(N−1)/N · B / bw_inter over the N nodes (the
    intra-node bandwidth when ``inter_gbps`` is None)."""
    K, N = np.asarray(K, dtype=float), np.asarray(N, dtype=float)
    g = K / N
    inter = intra_gbps if inter_gbps is None else inter_gbps
    return (2.0 * (g - 1.0) / g * grad_bytes / (intra_gbps * _GB),
            2.0 * (N - 1.0) / N * grad_bytes / (inter * _GB))


class CommPriorStepModel(PhaseAwareStepModel):
    """Step time with the synchronisation priced by gradient bytes and bandwidth per level (module docstring).

    Parameters
    ----------
    gpus, nodes, batch : str
        Columns of K (GPUs), N (nodes, 1 <= N <= K) and m (per-GPU batch): all that :meth:`predict` reads.
    sync_column : str or None, default "sync_time"
        The measured synchronisation time per step (read in fit only).
    grad_bytes : float
        Bytes synchronised per step (parameters × bytes per gradient element; e.g.
        :func:`perfkit.data.hardware.gradient_bytes`), > 0.
    intra_gbps, inter_gbps : float
        Bandwidth in GB/s (one direction) of a GPU's intra-node link and of a node's network; ``inter_gbps`` None:
        unknown (see the module docstring).
    default_efficiency : float, default :data:`DEFAULT_EFFICIENCY`
        The efficiency of a level when the fit rows hold no level (0 < e <= 1).
    min_prior_efficiency : float or None, default :data:`DEFAULT_MIN_PRIOR_EFFICIENCY`
        The floor (0 < e <= 1) of an efficiency carried from the other level; None: carried as fitted (what files
        saved before the setting existed do).
    sync_weight, loss, f_scale
        As :class:`PhaseAwareStepModel`'s.

    Attributes
    ----------
    params_ : numpy.ndarray
        a, b, α, u_intra, u_inter (times in units of ``scale_``), γ.
    prior_ : dict
        ``{"intra": how, "inter": how}``, how one of "fitted", "prior: the intra level's", "prior: the inter level's"
        or "prior: default efficiency".
    """

    json_format = "perfkit.CommPriorStepModel"
    optional_fitted_keys = ("ranges", "prior")
    #: ``min_prior_efficiency``: absent from files written before it existed, which carried efficiencies unfloored
    optional_settings = ("min_prior_efficiency",)
    sync_form = "log"  # unused: the synchronisation law is the hardware's (the checks of the parent read it)
    node_slope = False

    def __init__(self, gpus="n_gpus", nodes="n_nodes", batch="batch_per_gpu", *, sync_column="sync_time",
                 grad_bytes=1.0, intra_gbps=1.0, inter_gbps=None, default_efficiency=DEFAULT_EFFICIENCY,
                 min_prior_efficiency=DEFAULT_MIN_PRIOR_EFFICIENCY, sync_weight=0.0, loss="huber", f_scale=0.1):
        self.gpus = gpus
        self.nodes = nodes
        self.batch = batch
        self.sync_column = sync_column
        self.grad_bytes = grad_bytes
        self.intra_gbps = intra_gbps
        self.inter_gbps = inter_gbps
        self.default_efficiency = default_efficiency
        self.min_prior_efficiency = min_prior_efficiency
        self.sync_weight = sync_weight
        self.loss = loss
        self.f_scale = f_scale

    def _settings(self):
        cols = super()._settings()
        check_number("grad_bytes", self.grad_bytes, positive=True)
        check_number("intra_gbps", self.intra_gbps, positive=True)
        if self.inter_gbps is not None:
            check_number("inter_gbps", self.inter_gbps, positive=True)
        if check_number("default_efficiency", self.default_efficiency, positive=True) > 1:
            raise ValueError(f"default_efficiency: expected a number in (0, 1] (achieved over datasheet bandwidth), "
                             f"got {self.default_efficiency!r}")
        if self.min_prior_efficiency is not None and check_number(
                "min_prior_efficiency", self.min_prior_efficiency, positive=True) > 1:
            raise ValueError(f"min_prior_efficiency: expected None or a number in (0, 1], got "
                             f"{self.min_prior_efficiency!r}")
        return cols

    @classmethod
    def _from_settings(cls, settings: dict):
        model = cls(**{"min_prior_efficiency": None, **settings})
        return model, model._settings()

    def _names(self) -> list:
        return ["a_grad", "b_grad", "alpha_sync", "u_intra", "u_inter", "gamma"]

    # -------------------------------------------------------------- model
    def _levels(self, theta):
        """(u_intra, u_inter) with the prior's ties applied."""
        prior = getattr(self, "prior_", None) or {"intra": "fitted", "inter": "fitted"}
        u = {"intra": theta[3], "inter": theta[4]}
        default = 1.0 / float(self.default_efficiency)
        for level, other in (("intra", "inter"), ("inter", "intra")):
            how = prior[level]
            if how == "prior: default efficiency":
                u[level] = default
            elif how.startswith("prior:"):
                carried = theta[3] if other == "intra" else theta[4]
                u[level] = carried if self.min_prior_efficiency is None else np.minimum(
                    carried, 1.0 / float(self.min_prior_efficiency))
        return u["intra"], u["inter"]

    def _floored(self, level: str) -> bool:
        """Whether ``level``'s carried efficiency was raised to ``min_prior_efficiency``."""
        how = self.prior_[level]
        if self.min_prior_efficiency is None or not how.startswith("prior: the "):
            return False
        other = self.params_[3] if level == "inter" else self.params_[4]
        return bool(other > 1.0 / float(self.min_prior_efficiency))

    def _times(self, theta, K, N, m):
        from .stepmodels import overlap

        a, b, alpha = theta[:3]
        c_intra, c_inter = ring_costs(K, N, float(self.grad_bytes), float(self.intra_gbps),
                                      None if self.inter_gbps is None else float(self.inter_gbps))
        u_intra, u_inter = self._levels(theta)
        tg = a + b * m
        ts = np.where(K > 1, alpha + (u_intra * c_intra + u_inter * c_inter) / self.scale_, 0.0)
        return tg, ts, overlap(tg, ts, theta[-1])

    def _starts(self, K, N, m, yt, st):
        comp = yt if st is None else np.maximum(yt - st, 1e-3 * yt)
        b = max(np.polyfit(m, comp, 1)[0], 0.0) if np.ptp(m) > 0 else 0.0
        a = max(float(np.median(comp - b * m)), 1e-6)
        return np.array([[a, b, 0.01, 1.0, 1.0, 1.0], [a, b, 0.1, 4.0, 4.0, 2.0]])

    def fit(self, X, y):
        """Fit to measured step times ``y`` of the configurations ``X``; which level's u the rows pin and which the
        prior supplies is decided from the rows first (:attr:`prior_`); returns self."""
        self._settings()
        K, N, _ = self._config(X)
        intra, inter = bool(np.any(K / N > 1)), bool(np.any(N > 1))
        default = "prior: default efficiency"
        self.prior_ = {"intra": "fitted" if intra else ("prior: the inter level's" if inter else default),
                       "inter": "fitted" if inter else ("prior: the intra level's" if intra else default)}
        return super().fit(X, y)

    # -------------------------------------------------------------- reports
    @property
    def coef_(self) -> dict:
        """The fitted parameters by name: times in seconds; u_intra, u_inter (1 / efficiency) and γ without unit."""
        self._check_fitted()
        unitless = ("u_intra", "u_inter", "gamma")
        return {k: float(v) * (1.0 if k in unitless else self.scale_) for k, v in zip(self._names(), self.params_)}

    def efficiencies(self) -> dict:
        """Level → (efficiency, how): 1 / u, and whether the data pinned it or the prior supplied it (", raised to
        the floor" when a carried efficiency lay below ``min_prior_efficiency``)."""
        self._check_fitted()
        u = self._levels(self.params_)
        return {lv: (1.0 / v if v > 0 else float("inf"),
                     self.prior_[lv] + (", raised to the floor" if self._floored(lv) else ""))
                for lv, v in zip(("intra", "inter"), u)}

    def formula(self, digits: int = 3) -> str:
        c = {k: f"{v:.{digits}g}" for k, v in self.coef_.items()}
        eff = self.efficiencies()
        g = c["gamma"]
        return (f"t = (T_grad^{g} + T_sync^{g})^(1/{g}), T_grad = {c['a_grad']} + {c['b_grad']}·{self.batch}; T_sync = "
                f"{c['alpha_sync']} + 2(g-1)/g·B/({self.intra_gbps:g} GB/s·{eff['intra'][0]:.{digits}g}) + "
                f"2(N-1)/N·B/({'?' if self.inter_gbps is None else f'{self.inter_gbps:g}'} GB/s·"
                f"{eff['inter'][0]:.{digits}g}), B = {float(self.grad_bytes):.4g} bytes, g = {self.gpus}/{self.nodes}, "
                f"N = {self.nodes}; 0 for one GPU")

    def summary(self) -> str:
        eff = self.efficiencies()
        lines = [super().summary(), "  efficiency (achieved / datasheet bandwidth) per level: " + "; ".join(
            f"{lv} {e:.3g} ({how})" for lv, (e, how) in eff.items())]
        if self.inter_gbps is None:
            lines.append("  the network bandwidth is unknown: priced at the intra-node bandwidth "
                         + ("(its u fitted on the multi-node rows absorbs the difference)" if eff["inter"][1] == "fitted"
                            else "(no multi-node row: a network as fast as the node's links is assumed)"))
        return "\n".join(lines)

    # -------------------------------------------------------------- JSON
    def _fitted_doc(self) -> dict:
        return {**super()._fitted_doc(), "prior": dict(self.prior_)}

    @classmethod
    def _restore(cls, model, checked, reader):
        model = super()._restore(model, checked, reader)
        prior = reader.get("prior")
        allowed = ("fitted", "prior: the intra level's", "prior: the inter level's", "prior: default efficiency")
        if not (isinstance(prior, dict) and sorted(prior) == ["inter", "intra"]
                and all(v in allowed for v in prior.values())):
            raise reader.fail(f"fitted.prior: expected {{intra, inter}}, each one of {list(allowed)}")
        model.prior_ = dict(prior)
        return model
