"""What each section of Chapter 5 says, written from the numbers the chapter computed (data-dependent text only)."""
from __future__ import annotations

from ...report.claims import fmt
from ..common import verdict_counts, verdict_text

__all__ = ["ch5_readings"]


def ch5_readings(res) -> dict:
    """A short Markdown paragraph per section, from ``res.numbers`` and ``res.tables``; ``summary`` joins them."""
    q, T = res.numbers, res.tables
    out = {}
    out["fit"] = (f"{q['n_rows']} measured configurations (volume {', '.join(q['volumes'])}), fitted on "
                  f"{q['n_fit']}, held out {q['n_test']}; L2 fit over seeds: q(workers) = "
                  f"{fmt(q['q_workers'], 2)} ± {fmt(q['q_workers_std'], 1)}, q(batch) = {fmt(q['q_batch'], 2)} ± "
                  f"{fmt(q['q_batch_std'], 1)}.")
    out["errors"] = (f"Held-out MAPE: generic model {q['mape']['DE']:.1f} % (R² {q['r2']['DE']:.2f}; "
                     f"{q['mape_first300']['DE']:.1f} % on the first 300 held-out rows), random forest "
                     f"{q['mape']['RF']:.1f} % (R² {q['r2']['RF']:.2f}); the thesis reports about 7 % for both.")
    ch4 = f" Chapter 4's L2 fit gives {q['ch4_l2_mape']:.1f} %." if "ch4_l2_mape" in q else ""
    out["claims"] = (f"q(workers) against the thesis's {q['thesis_q_workers']:g}: "
                     f"{verdict_text(T['claims_ch5'], 'q_workers')}.{ch4} In the claims ledger "
                     f"{verdict_counts(T['claims_ch5'])}.")
    if "volume_table" in q:
        parts = []
        for f, g in q["volume_table"].groupby("num_filters"):
            lo, hi = g.iloc[0], g.iloc[-1]
            parts.append(f"with {f} filters q(batch) goes from {lo['q_batch']:+.2f} to {hi['q_batch']:+.2f} and "
                         f"q(workers) from {lo['q_workers']:+.2f} to {hi['q_workers']:+.2f}")
        g0 = q["volume_table"]
        out["volume"] = (f"From {g0['volume'].iloc[0]} to {g0['volume'].iloc[-1]} "
                         f"({g0['voxels'].max() / g0['voxels'].min():.1f}× the voxels) " + "; ".join(parts)
                         + f". The best q(workers) {q['cores']} cores allow for 1–3 workers is {q['q_bound']:.2f}.")
    out["summary"] = " ".join(out[k] for k in ("errors", "fit", "claims", "volume") if k in out)
    return out
