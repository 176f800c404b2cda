"""Chapter 6's presentation: :func:`present` fills a :class:`~perfkit.chapters.result.ChapterResult` with the
tables, views, figures, ledger, numbers and readings of computed (or cached) :class:`Ch6Results`."""
from __future__ import annotations

from ...report.claims import judge_all
from .claims import CLAIMS, Ch6Quantities
from .figures import plot_heldout, plot_whatif
from .params import WHATIF_DATASETS
from .readings import readings
from .results import Ch6Results
from .tables import (candidates_table, candidates_view, formulas_table, heldout_table, heldout_view,
                     rates_table)

__all__ = ["present", "numbers"]


def numbers(r: Ch6Results, T: dict, q: Ch6Quantities) -> dict:
    """``result.numbers``: the quantities the claims read, the MAPE, R² and coverage per dataset and method,
    the what-if curves, the formulas and the fit times (machine-dependent; never written to ``figures/``)."""
    table = T["table6_1_heldout"]
    per = {ds: table[table["dataset"] == ds] for ds in r.datasets}
    return dict(datasets=list(r.datasets), folds=r.folds, quick=r.quick,
                rows={ds: f.rows for ds, f in r.fits.items()}, heldout=q.heldout, inside=q.inside,
                auto_form=q.auto_form, auto_terms={ds: f.auto_terms for ds, f in r.fits.items()},
                extrap={ds: f.extrap for ds, f in r.fits.items()},
                mape={ds: {row.method: row.MAPE for row in t.itertuples()} for ds, t in per.items()},
                r2={ds: {row.method: row.R2 for row in t.itertuples()} for ds, t in per.items()},
                coverage={ds: r.fits[ds].coverage for ds in r.datasets}, formulas=T["table6_3_formulas"],
                whatif={ds: f.whatif.as_dict() for ds, f in r.fits.items() if f.whatif is not None},
                compute_rate=q.compute_rate, rate_b=r.rate_b, timings=r.timings)


def present(r: Ch6Results, res) -> None:
    """Fill ``res`` (a ChapterResult) from the results ``r``; nothing is fitted."""
    T, V, F = res.tables, res.views, res.figures
    T["table6_1_heldout"] = heldout_table(r)
    V["table6_1_heldout"] = heldout_view(T["table6_1_heldout"], r.datasets)
    F["fig6_1_heldout_mape"] = plot_heldout(T["table6_1_heldout"], r.datasets)
    T["table6_2_candidates"] = candidates_table(r)
    for ds in r.datasets:
        V[f"cv_{ds}"] = candidates_view(r.fits[ds].candidates)
    T["table6_3_formulas"] = formulas_table(r)
    for k, ds in enumerate(WHATIF_DATASETS):
        w = r.fits[ds].whatif if ds in r.fits else None
        if w is not None:
            T[w.stem] = w.table
            F[f"fig6_{2 + k}_whatif_{ds}"] = plot_whatif(ds, w)
    rates = rates_table(r)
    if rates is not None:
        T["table6_6_hybrid_rates"] = rates
    q = Ch6Quantities.from_results(r)
    T["claims_ch6"] = judge_all("6", r.label, CLAIMS, q)
    res.numbers.update(numbers(r, T, q))
    res.notes.extend(r.notes)
    res.fits.update({f"{m}[{ds}]": model for ds, f in r.fits.items() for m, model in f.models.items()})
    res.readings = readings(r, T)
