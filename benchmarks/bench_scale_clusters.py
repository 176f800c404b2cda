"""The same extrapolation protocol on every cluster's traces, side by side: does the ranking hold?

Run: ``.venv/bin/python benchmarks/bench_scale_clusters.py`` after ``bench_scale.py`` has written its results
(``benchmarks/results/scale.json`` for Pollux's traces, ``scale_<cluster>.json`` for each other cluster). This script
fits nothing: it reads those files and writes ``benchmarks/results/scale_clusters.json`` and ``.md``, one row per
cluster: the split the factor rule chose, the selected model's median MAPE over the jobs, its place among the
models, the best baseline, the selected model's margin over it with a 95 % interval (bootstrap resamples of the test
rows within each job, paired; ``bench_scale.evidence``), the coverage of its 90 % intervals, Kendall's τ between
the cluster's ranking and Pollux's (the acceptance asks for the same ranking on every cluster), and what the fit rows
alone said (``bench_scale.inner_check``: the selected model's and the best baseline's scores on the inner splits).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import write_results  # noqa: E402

from perfkit.chapters.ch7.readings import margin_side  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
OUT = RESULTS / "scale_clusters"
SELECTED = "selected"


def _median(doc, role) -> float:
    """The median-over-jobs MAPE of the model with this role (``selected`` or a baseline's name)."""
    for name, row in doc["mape_by_job"].items():
        if (name.startswith(f"{SELECTED}:") if role == SELECTED else name == role):
            return float(row["median"])
    raise KeyError(role)


def cluster_row(name: str, doc: dict) -> dict:
    """One cluster's summary from its ``bench_scale.py`` results."""
    rank = doc["ranking"]
    baselines = [m for m in rank if m != SELECTED]
    best = baselines[0]
    proto = doc["protocol"]
    ref = doc.get("ranking_vs_pollux") or {}
    ev = doc.get("evidence") or {}
    margin = ev.get("margin") or {}
    check = doc.get("inner_check") or {}
    return {"cluster": name, "jobs": proto["jobs"], "fit_max": proto["fit_max"], "test_min": proto["test_min"],
            "test_max": proto["test_max"], "inner_splits": len(proto["inner_splits"]),
            "selected": doc["selected"], "selected_mape": _median(doc, SELECTED),
            "place": rank.index(SELECTED) + 1, "models": len(rank),
            "best_baseline": best, "best_baseline_mape": _median(doc, best),
            "coverage": float(doc["coverage"]["all"]), "test_rows": int(doc["coverage"]["n"]),
            "kendall_tau_vs_pollux": ref.get("kendall_tau"), "first_on_both": ref.get("same_first"),
            "selected_mape_interval": (ev.get("selected_median") or {}).get("interval"),
            "margin": margin.get("estimate"), "margin_interval": margin.get("interval"), "margin_vs": margin.get("vs"),
            "inner_selected": check.get("selected_score"), "inner_best_baseline": check.get("best_baseline"),
            "inner_best_baseline_score": check.get("best_baseline_score")}


def _interval(v, spec, sign="") -> str:
    return "—" if v is None else f"[{v[0]:{sign}{spec}}, {v[1]:{sign}{spec}}]"


def _side(r) -> str:
    """Where the margin's interval lies (:func:`perfkit.chapters.ch7.readings.margin_side`); "" without one."""
    return "" if r["margin_interval"] is None else margin_side(*r["margin_interval"])


def _favours_baseline(r) -> bool:
    return r.get("inner_selected") is not None and r["inner_best_baseline_score"] < r["inner_selected"]


def _inner(r) -> str:
    if r.get("inner_selected") is None:
        return "—"
    return (f"{r['inner_selected']:.1f} vs {r['inner_best_baseline_score']:.1f} ({r['inner_best_baseline']})"
            + (" **baseline**" if _favours_baseline(r) else ""))


def markdown(rows) -> str:
    lines = ["# Measure small, predict large on every cluster: the same code, the same rule", "",
             "Read from `benchmarks/results/scale*.json` (written by `bench_scale.py`; each file names its machine, "
             "data and provenance). Fit <= the largest GPU count <= max/4, test from 2× that to the largest; the "
             "model is selected on inner splits of the fit rows only. MAPE: median over the cluster's jobs.", "",
             "Margin: the selected model's median MAPE minus the best baseline's, in points, with its 95 % interval "
             "over 1000 bootstrap resamples of the test rows within each job (every model on the same resamples; "
             "Extra-P's median, when it is the best baseline, taken as exact).", "",
             "Inner: what the fit rows alone said, before any test row: the selected model's score on the inner "
             "splits and the best baseline's on the same splits (the baselines are scored, never selected).", "",
             "| cluster | jobs | fit → test GPUs | inner splits | inner: selected vs best baseline (%) | selected "
             "MAPE % [95 %] | place | best baseline (MAPE %) | margin, points [95 %] | 90 % coverage | Kendall τ vs "
             "Pollux |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        tau = "—" if r["kendall_tau_vs_pollux"] is None else f"{r['kendall_tau_vs_pollux']:.2f}"
        lines.append(f"| {r['cluster']} | {len(r['jobs'])} | <= {r['fit_max']} → {r['test_min']}–{r['test_max']} | "
                     f"{r['inner_splits']} | {_inner(r)} | {r['selected_mape']:.1f} "
                     f"{_interval(r['selected_mape_interval'], '.1f')} | "
                     f"{r['place']} of {r['models']} | {r['best_baseline']} ({r['best_baseline_mape']:.1f}) | "
                     + ("—" if r["margin"] is None else
                        f"{r['margin']:+.1f} {_interval(r['margin_interval'], '.1f', '+')} ({_side(r)})")
                     + f" | {100 * r['coverage']:.1f} % of {r['test_rows']} | {tau} |")
    first = [r["cluster"] for r in rows if r["place"] == 1]
    not_first = [f"{r['cluster']} ({r['place']} of {r['models']})" for r in rows if r["place"] != 1]
    lines += ["", f"The selected model is first on {len(first)} of {len(rows)} clusters ({', '.join(first) or 'none'})"
              + (f"; not on {', '.join(not_first)}." if not_first else "."), "",
              "By the margin's 95 % interval: "
              + "; ".join(f"{side}: {', '.join(r['cluster'] for r in rows if _side(r) == side)}"
                          for side in ("better", "not distinguishable", "worse")
                          if any(_side(r) == side for r in rows)) + ".", "",
              "Where the fit rows favoured a baseline (inner): "
              + (", ".join(f"{r['cluster']} ({r['inner_best_baseline']})" for r in rows if _favours_baseline(r))
                 or "none") + ".", "",
              "Selected per cluster: " + "; ".join(f"{r['cluster']}: {r['selected']}" for r in rows) + "."]
    return "\n".join(lines)


def main() -> None:
    files = [f for f in sorted(RESULTS.glob("scale_*.json")) if f.stem != OUT.name]
    docs = [("Pollux", json.loads((RESULTS / "scale.json").read_text()))]
    docs += [(f.stem.removeprefix("scale_"), json.loads(f.read_text())) for f in files]
    rows = [cluster_row(name, doc) for name, doc in docs]
    md = markdown(rows)
    print(md)
    write_results(OUT, {"clusters": rows, "sources": ["scale.json"] + [f.name for f in files]}, md)


if __name__ == "__main__":
    main()
