"""Is the interpretable form ever beaten by a tuned black box? The acceptance table of Chapter 6's comparison.

Chapter 6 (``perfkit reproduce --chapter ch6``) fits, on every dataset, the auto-selected form (the form search:
thesis, log-linear with lasso-chosen products and segments, hybrid, symbolic) and the calibrated black-box
reference (random forest, gradient boosting and an RBF SVR on log features, each tuned by cross-validation on the
rows to fit only: ``perfkit.model.selection.blackbox``), and scores both on the same held-out rows with 1000 paired
bootstrap resamples. This script only reads what the chapter wrote (``figures/ch6/table6_1_heldout.csv`` and
``claims_ch6.csv``; compute once, read the files) and writes the verdict per dataset:

    .venv/bin/python benchmarks/bench_blackbox.py

"met" when MAPE(auto) ≤ MAPE(tuned) or the 95 % interval of their difference includes 0 (the ledger's
``auto_vs_tuned`` claim holds or is inconclusive); "not met" when the whole interval lies above 0.
Writes ``benchmarks/results/blackbox.json`` and ``.md`` with machine info.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info, write_results  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "figures" / "ch6"
OUT = Path(__file__).resolve().parent / "results" / "blackbox"
#: the datasets the acceptance names (our five frameworks' LeNet-5 files, 3D-ResAttNet-18, NVIDIA, Lambda screened)
DATASETS = ("ch4", "ch4_tensorflow", "ch4_mxnet", "ch4_chainer", "ch4_jax", "ch5", "nvidia_dle", "lambda_screened")


def rows() -> list[dict]:
    """One row per dataset of :data:`DATASETS` from Chapter 6's committed tables."""
    held = pd.read_csv(FIGURES / "table6_1_heldout.csv")
    claims = pd.read_csv(FIGURES / "claims_ch6.csv").set_index("key")
    out = []
    for ds in DATASETS:
        h = held[held["dataset"] == ds].set_index("method")
        key = f"auto_vs_tuned[{ds}]"
        if h.empty or "tuned" not in h.index or key not in claims.index:
            out.append(dict(dataset=ds, missing=True))
            continue
        c = claims.loc[key]
        verdict = str(c["verdict"])
        out.append(dict(dataset=ds, auto_form=str(h.loc["auto", "form"]), auto_mape=float(h.loc["auto", "MAPE"]),
                        auto_ci=[float(h.loc["auto", "MAPE_lower"]), float(h.loc["auto", "MAPE_upper"])],
                        tuned=str(h.loc["tuned", "form"]), tuned_mape=float(h.loc["tuned", "MAPE"]),
                        tuned_ci=[float(h.loc["tuned", "MAPE_lower"]), float(h.loc["tuned", "MAPE_upper"])],
                        difference=float(c["estimate"]), difference_ci=str(c["interval"]), verdict=verdict,
                        met=verdict != "does not hold", n_test=int(h.loc["auto", "n_test"])))
    return out


def markdown(res: dict) -> str:
    m = res["machine"]
    lines = ["# Interpretable form against the best tuned black box (Chapter 6's held-out rows)", "",
             f"Machine of this summary: {m['cpu']}, {m['cores']} cores; commit {m['git_commit']}; {m['date']}. The "
             "numbers are Chapter 6's (`figures/ch6/`), computed by `perfkit reproduce --chapter ch6`; this page only "
             "reads them (`benchmarks/bench_blackbox.py`).", "",
             "Rule: met when MAPE(auto) − MAPE(best tuned black box) < 0 or its 95 % interval (1000 paired bootstrap "
             "resamples of the held-out rows) includes 0; not met when the whole interval lies above 0.", "",
             "| dataset | auto-selected form | MAPE % [95 %] | best tuned black box | MAPE % [95 %] | difference, points "
             "[95 %] | ledger | acceptance |", "|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        if r.get("missing"):
            lines.append(f"| {r['dataset']} | not in figures/ch6 | | | | | | — |")
            continue
        lines.append(f"| {r['dataset']} | {r['auto_form']} | {r['auto_mape']:.2f} [{r['auto_ci'][0]:.2f}, "
                     f"{r['auto_ci'][1]:.2f}] | {r['tuned']} | {r['tuned_mape']:.2f} [{r['tuned_ci'][0]:.2f}, "
                     f"{r['tuned_ci'][1]:.2f}] | {r['difference']:+.2f} {r['difference_ci']} | {r['verdict']} | "
                     f"{'**met**' if r['met'] else '**not met**'} |")
    met = sum(bool(r.get("met")) for r in res["rows"])
    lines += ["", f"Met on {met} of {len(res['rows'])} datasets."]
    return "\n".join(lines) + "\n"


def main() -> None:
    res = {"machine": machine_info(), "rows": rows()}
    write_results(OUT.with_suffix(".json"), res, markdown(res))
    print(markdown(res))


if __name__ == "__main__":
    main()
