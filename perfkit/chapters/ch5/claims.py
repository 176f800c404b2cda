"""Chapter 5's claims ledger: :data:`CLAIMS`, judged on :class:`Ch5Quantities`."""
from __future__ import annotations

from dataclasses import dataclass

from ...report.claims import Claim, fmt
from ...evidence import B, METRICS, SEED, Evidence, paired_bootstrap
from ..ch4 import MIN_SEEDS, SOURCES, heldout_difference, level_ratio, mean_over_seeds, ratio_text, seed_statistic, slowest
from ..ch4.claims import heldout_metric
from ..common import Quantities

__all__ = ["CLAIMS", "Ch5Quantities"]


@dataclass
class Ch5Quantities(Quantities):
    """What Chapter 5's claims are decided from."""

    heldout: dict | None = None
    seed_params: dict | None = None
    effects: tuple | None = None
    ch4_heldout: dict | None = None
    ch4_l2_mape: float | None = None

    @classmethod
    def of(cls, r) -> "Ch5Quantities":
        return cls(heldout=r.heldout, seed_params={"DE+L2": r.fit.params}, effects=r.effects,
                   ch4_heldout=r.ch4_heldout, ch4_l2_mape=r.ch4_l2_mape)


def _mean_of(fit: str, column: str):
    """``quantity(q)``: the mean over seeds of ``column`` in fit ``fit``, with its bootstrap over seeds."""
    def quantity(q):
        if fit not in q.seed_params:
            return None
        return q.memo(("mean", fit, column), lambda: seed_statistic(q.seed_params[fit], [column], mean_over_seeds))

    return quantity


def _above_ch4(q):
    """MAPE of Chapter 5's generic model minus Chapter 4's L2 fit, each over its own bootstrap of held-out rows."""
    def compute():
        a = paired_bootstrap(q.heldout["y"], {"DE": q.heldout["pred"]["DE"]}, METRICS["MAPE"])["DE"]
        b = paired_bootstrap(q.ch4_heldout["y"], {"DE+L2": q.ch4_heldout["pred"]}, METRICS["MAPE"],
                             seed=[SEED, 4])["DE+L2"]
        return Evidence.from_samples(a[0] - b[0], a[1] - b[1], f"{B} bootstrap resamples of each chapter's held-out "
                                     "rows")

    return q.memo("above_ch4", compute)


def _mape(q, name="DE"):
    """Held-out MAPE of ``name`` with its paired bootstrap over held-out rows."""
    est, samples = heldout_metric(q, "MAPE")[name]
    return Evidence.from_samples(est, samples, SOURCES["heldout"])


def _seeds_text(q, fit, column, label):
    e = _mean_of(fit, column)(q)
    return f"{label} = {e.text(3)}" if e is not None else f"{label}: {_SEEDS}"


_SEEDS = f"needs {MIN_SEEDS} or more seeds for a seed-to-seed interval"

#: The claims of Chapter 5 and their rules, in ledger order.
CLAIMS = (
    Claim("q_batch", "batch size has almost no effect (q ≈ 0)", "§5.2.1, Table 5.2",
          "−0.1 <= mean q(batch) over seeds <= 0.1", needs=("seed_params",),
          quantity=_mean_of("DE+L2", "q[batch_size]"), side="in", threshold=(-0.1, 0.1),
          evidence=lambda q: _seeds_text(q, "DE+L2", "q[batch_size]", "q(batch)") + " (thesis −0.03 ± 0.002)",
          missing=_SEEDS),
    Claim("q_workers", "workers scale close to ideal (q ≈ −0.94)", "§5.2.2, Tables 5.2, 5.4",
          "−1.04 <= mean q(workers) over seeds <= −0.84", needs=("seed_params",),
          quantity=_mean_of("DE+L2", "q[workers]"), side="in", threshold=(-1.04, -0.84),
          evidence=lambda q: _seeds_text(q, "DE+L2", "q[workers]", "q(workers)") + " (thesis −0.94 ± 0.02)",
          missing=_SEEDS),
    Claim("lr_power", "the learning rate's power is close to zero", "§5.2.1, Table 5.2",
          "−0.1 <= mean p(learning rate) over seeds <= 0.1", needs=("seed_params",),
          quantity=_mean_of("DE+L2", "p[learning_rate]"), side="in", threshold=(-0.1, 0.1),
          evidence=lambda q: _seeds_text(q, "DE+L2", "p[learning_rate]", "p(learning rate)")
                             + " (thesis −0.04 ± 0.002)",
          missing=_SEEDS),
    Claim("sigmoid_slowest", "Sigmoid takes more time than ReLU and Tanh", "§5.2.1, Table 5.2",
          "time with sigmoid / with relu and / with tanh, other hyperparameters fixed, > 1 (the smaller ratio)",
          needs=("effects",), quantity=lambda q: slowest(q, "activation", "sigmoid", ("relu", "tanh")), side=">",
          threshold=1.0,
          evidence=lambda q: "; ".join(ratio_text(q, "activation", "sigmoid", o) for o in ("relu", "tanh"))),
    Claim("adam_over_sgd", "Adam takes more time than SGD", "§5.2.1, Table 5.2",
          "time with Adam / with SGD, other hyperparameters fixed, > 1", needs=("effects",),
          quantity=lambda q: level_ratio(q.effects, "optimizer", "adam", "sgd"), side=">", threshold=1.0,
          evidence=lambda q: ratio_text(q, "optimizer", "adam", "sgd")),
    Claim("mape_7", "the generic model's MAPE is about 7 %", "§5.3, Table 5.3", "MAPE < 10 %", needs=("heldout",),
          quantity=_mape, side="<", threshold=10.0, evidence=lambda q: f"MAPE DE {_mape(q).text(3)} %"),
    Claim("rf_equal", "random forest and the generic model are about equally accurate", "§5.2.2, Table 5.3",
          "−2 <= MAPE(DE) − MAPE(RF) <= 2 percentage points", needs=("heldout",),
          quantity=lambda q: heldout_difference(q, "DE", "RF"), side="in", threshold=(-2.0, 2.0),
          evidence=lambda q: f"MAPE DE {_mape(q).text(3)} % vs RF {_mape(q, 'RF').text(3)} %"),
    Claim("above_ch4", "errors are higher than in Chapter 4", "§5.3",
          "MAPE(ch5 DE+L2) − MAPE(ch4 DE+L2) > 0", needs=("heldout", "ch4_heldout"), quantity=_above_ch4, side=">",
          threshold=0.0, evidence=lambda q: f"MAPE ch5 − ch4 {_above_ch4(q).text(3)} points "
                                            f"(ch5 {fmt(_mape(q).estimate)} %, ch4 {fmt(q.get('ch4_l2_mape'))} %)",
          missing="no Chapter 4 dataset given"),
)
