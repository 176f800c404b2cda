"""The thesis's published numbers, transcribed into tidy tables in ``data/thesis/``.

Each CSV row cites its source (``source``: thesis, paper_iucc2021, paper_ssci2022 or
journal_access) and table (``table``, as printed there). Values are in ``mean``
and, where the source prints ``±``, ``std``. Where a thesis table and a paper
table differ, both versions are present and ``source`` tells them apart; where they
agree, only the thesis rows are kept and ``also_in`` names the paper's table.
``data/thesis/README.md`` documents every file and every reading of garbled text.
"""
from __future__ import annotations

import re

from ..schema import data_dir
from .measured import FRAMEWORK_NAMES as _FRAMEWORK_NAMES

__all__ = ["THESIS_TABLES", "THESIS_FIGURES", "list_thesis_tables", "load_thesis_table",
           "wide_table", "framework_name", "figure_stem", "figure_number", "figure_matches"]

#: Canonical table name -> (file stem, description).
THESIS_TABLES: dict[str, tuple[str, str]] = {
    "3.2": ("table3_2", "SGD phase times on one GPU (s), mean ± std over iterations"),
    "3.3": ("table3_3", "gradient aggregation time t_comm on 2 and 3 GPUs (s)"),
    "3.4": ("table3_4", "load imbalance factor on 2 and 3 GPUs"),
    "3.5": ("table3_5", "regression of epoch time on GPUs and LIF (eq. 3.9): betas and R²"),
    "4.2": ("table4_2", "generic-model parameters without regularisation, 10 fits"),
    "4.3": ("table4_3", "generic-model parameters with L2 (λ = 1e-3), 10 fits"),
    "4.4": ("table4_4", "L1 vs L2: MAPE, MSE, RMSE on the held-out set"),
    "4.5": ("table4_5", "GPU scaling power q per framework"),
    "5.2": ("table5_2", "3D-ResAttNet-18 generic-model parameters (L2), 10 fits"),
    "5.3": ("table5_3", "3D-ResAttNet-18: MAPE of DE vs random forest"),
    "5.4": ("table5_4", "3D-ResAttNet-18: GPU scaling power"),
    "journal5": ("journal_table5", "journal Table 5: MAPE of DE, DE+L2, RF, SVM"),
    "journal6": ("journal_table6", "journal Table 6: GPU scaling power"),
    "conference1": ("conference_table1", "SSCI-2022 Table I: MAE (s) of DE, RF, SVM"),
    "conference2": ("conference_table2", "SSCI-2022 Table II: GPU scaling power"),
}

#: the thesis's spelling of each framework, by the lower-case name a measured file carries (``framework`` column);
#: framework key → the name printed (one table for the whole package: :data:`perfkit.data.measured.FRAMEWORK_NAMES`)
FRAMEWORK_NAMES = _FRAMEWORK_NAMES

#: The thesis's figure numbers of Chapters 4 and 5, by chapter and figure slug (the file is ``figN_M_<slug>``).
#: A figure the thesis draws once per framework maps each framework to its number; a figure that holds every
#: framework (a panel or a line each) has one number. Source: the List of figures (thesis l. 152–179, 195–198)
#: and the captions (l. 1063–1149, 1165–1173, 1302, 1325). Chapter 3's figures are numbered per model, not per
#: framework (``perfkit.chapters.ch3.FIGURE_NUMBERS``).
THESIS_FIGURES: dict[str, dict[str, str | dict[str, str]]] = {
    "ch4": {
        "de_pred_vs_measured": {"TensorFlow": "4.3", "MXNet": "4.4", "PyTorch": "4.5"},
        "de_l2_pred_vs_measured": {"TensorFlow": "4.6", "MXNet": "4.7", "PyTorch": "4.8"},
        "rf_pred_vs_measured": {"TensorFlow": "4.9", "MXNet": "4.10", "PyTorch": "4.11"},
        "svr_pred_vs_measured": {"TensorFlow": "4.12", "MXNet": "4.13", "PyTorch": "4.14"},
        "r2_vs_lambda": "4.15",  # (a) L1, (b) L2; a line per framework
        "intrinsic_coef_paths": "4.16",  # (a) coefficients a, (b) powers p of the intrinsic parameters
        "categorical_extrinsic_coef_paths": "4.17",  # (a) categorical constants, (b) powers q of the extrinsic ones
    },
    "ch5": {
        "de_pred_vs_measured": {"PyTorch": "5.3"},
        "rf_pred_vs_measured": {"PyTorch": "5.4"},
    },
}


def framework_name(name: str) -> str:
    """The thesis's spelling of a framework (``"pytorch"`` → ``"PyTorch"``; JAX, which it did not measure, as JAX
    writes itself); other names come back as given."""
    return FRAMEWORK_NAMES.get(str(name).strip().lower(), str(name).strip())


def _figure_entry(chapter: str, slug: str):
    try:
        return THESIS_FIGURES[chapter][slug]
    except KeyError:
        known = ", ".join(f"{c}/{s}" for c, figs in THESIS_FIGURES.items() for s in figs)
        raise ValueError(f"figure: unknown {chapter}/{slug}; known figures: {known}") from None


def figure_number(chapter: str, slug: str, framework: str | None = None) -> str:
    """The thesis's number of a figure (``"4.5"``), for ``framework`` where it draws one per framework;
    ``""`` for a framework the thesis did not measure."""
    entry = _figure_entry(chapter, slug)
    if isinstance(entry, str):
        return entry
    if framework is None:
        raise ValueError(f"framework: {chapter}/{slug} is one figure per framework ({', '.join(entry)}); name one")
    return entry.get(framework_name(framework), "")


def figure_stem(chapter: str, slug: str, framework: str | None = None) -> str:
    """File stem of a figure: ``fig<N>_<M>_<slug>`` with the thesis's number (per framework where the thesis
    draws one per framework: PyTorch's DE figure is ``fig4_5_de_pred_vs_measured``, TensorFlow's
    ``fig4_3_…``); ``ext_<slug>_<framework>`` for a framework the thesis did not measure.

    >>> figure_stem("ch4", "rf_pred_vs_measured", "pytorch")
    'fig4_11_rf_pred_vs_measured'
    >>> figure_stem("ch4", "r2_vs_lambda")
    'fig4_15_r2_vs_lambda'
    >>> figure_stem("ch4", "de_pred_vs_measured", "JAX")
    'ext_de_pred_vs_measured_jax'
    """
    number = figure_number(chapter, slug, framework)
    if number:
        return f"fig{number.replace('.', '_')}_{slug}"
    return f"ext_{slug}_{re.sub(r'[^a-z0-9]+', '_', str(framework).lower()).strip('_')}"


def figure_matches(stem: str, slug: str) -> bool:
    """Whether ``stem`` is a figure of ``slug`` for some framework (what :func:`figure_stem` makes of it)."""
    return re.fullmatch(rf"(?:fig\d+_\d+_{re.escape(slug)}|ext_{re.escape(slug)}(?:_[a-z0-9_]+)?)", stem) is not None


_ALIASES = {
    "journal": "journal",
    "journal_table": "journal",
    "access": "journal",
    "conference": "conference",
    "conference_table": "conference",
    "ssci": "conference",
}


def _canonical(name: str) -> str:
    if not isinstance(name, str):
        raise ValueError(f"table name must be a string like '3.2', got {name!r}")
    key = name.strip().lower().replace(" ", "").replace("-", "_")
    key = re.sub(r"^table", "", key).lstrip("_")
    if key in THESIS_TABLES:
        return key
    m = re.fullmatch(r"(\d)[._](\d)", key)
    if m and f"{m[1]}.{m[2]}" in THESIS_TABLES:
        return f"{m[1]}.{m[2]}"
    m = re.fullmatch(r"([a-z_]+?)_?(\d+|i{1,3})", key)
    if m and m[1] in _ALIASES:
        num = {"i": "1", "ii": "2", "iii": "3"}.get(m[2], m[2])
        cand = f"{_ALIASES[m[1]]}{num}"
        if cand in THESIS_TABLES:
            return cand
    raise ValueError(
        f"unknown thesis table {name!r}; known tables: {', '.join(THESIS_TABLES)}"
    )


def list_thesis_tables():
    """List the transcribed tables.

    Returns
    -------
    pandas.DataFrame
        Columns ``name``, ``file`` and ``description``.
    """
    import pandas as pd

    return pd.DataFrame(
        [(k, f"data/thesis/{stem}.csv", d) for k, (stem, d) in THESIS_TABLES.items()],
        columns=["name", "file", "description"],
    )


def load_thesis_table(name: str, source: str | None = None):
    """Load one transcribed table as a tidy DataFrame.

    Parameters
    ----------
    name : str
        Table name: ``"3.2"``, ``"table4_3"``, ``"Table 5.4"``, ``"journal5"``,
        ``"conference1"`` ... (see :data:`THESIS_TABLES`).
    source : str, optional
        Keep only rows of this source (``"thesis"``, ``"paper_iucc2021"``,
        ``"paper_ssci2022"``, ``"journal_access"``).

    Returns
    -------
    pandas.DataFrame
        One row per printed number with columns ``source``, ``table``, the
        table's key columns, ``mean``, ``std`` (NaN where no ± is printed),
        ``unit``, ``also_in`` and ``note``.

    Raises
    ------
    ValueError
        If the table name or the source is unknown.

    Examples
    --------
    >>> t = load_thesis_table("3.2")
    >>> float(t.query("model == 'CNN' and framework == 'Chainer' and phase == 't_iter'")["mean"].iloc[0])
    0.4009
    """
    import pandas as pd

    key = _canonical(name)
    path = data_dir() / "thesis" / f"{THESIS_TABLES[key][0]}.csv"
    if not path.is_file():
        raise FileNotFoundError(f"transcription of table {key} missing: {path}")
    df = pd.read_csv(path, dtype={"source": str, "table": str, "unit": str, "also_in": str, "note": str})
    for col in ("mean", "std"):
        df[col] = pd.to_numeric(df[col], errors="raise")
    for col in ("unit", "also_in", "note"):
        df[col] = df[col].fillna("")
    if source is not None:
        known = sorted(df["source"].unique())
        if source not in known:
            raise ValueError(f"source {source!r} not in table {key}; it has {known}")
        df = df[df["source"] == source].reset_index(drop=True)
    df.attrs["name"] = key
    return df


def wide_table(tidy):
    """A tidy thesis table with frameworks side by side: one row per item, one ``mean ± std`` column per framework.

    Tables without a ``framework`` column (or with one framework) come back with the
    value columns only; notes and citations are left to the tidy table.
    """
    import pandas as pd

    cells = [f"{m:g} ± {sd:g}" if pd.notna(sd) else f"{m:g}" for m, sd in zip(tidy["mean"], tidy["std"])] \
        if "std" in tidy.columns else [f"{m:g}" for m in tidy["mean"]]
    drop = {"table", "mean", "std", "unit", "also_in", "note", "framework"}
    keys = [c for c in tidy.columns if c not in drop and tidy[c].notna().any()]
    df = tidy.assign(value=cells)
    if "framework" not in tidy.columns or tidy["framework"].nunique() < 2:
        return df[keys + ([c for c in ("framework",) if c in tidy.columns]) + ["value"]]
    df[keys] = df[keys].fillna("")
    wide = df.pivot_table(index=keys, columns="framework", values="value", aggfunc="first", sort=False)
    return wide.fillna("").reset_index().rename_axis(columns=None)
