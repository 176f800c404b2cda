"""The one place that writes figures and tables.

Outputs go under ``figures/<chapter>/`` (see :func:`perfkit.schema.figures_dir`) with
names after the thesis numbering, e.g. ``savefig(fig, "ch3/fig3_2_phases_cnn")``
writes ``figures/ch3/fig3_2_phases_cnn.png`` and ``.svg``. Output is
deterministic: no timestamps or software versions in the metadata, fixed SVG ids
and a fixed float format in CSVs, so re-running a notebook changes no bytes.
A file is only rewritten when its bytes change.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

from ..schema import figures_dir

__all__ = ["savefig", "savetable", "savetext", "FLOAT_FORMAT", "STYLE", "use_style"]

#: matplotlib settings of every perfkit figure (applied when a figure is made and when it is saved)
STYLE = {
    "svg.hashsalt": "perfkit",  # deterministic ids in SVG output
    "svg.fonttype": "none",
    "figure.dpi": 100,
    "savefig.dpi": 120,
    "savefig.facecolor": "white",
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
}

#: printf-style format of floats in every written CSV.
FLOAT_FORMAT = "%.6g"

_NAME = re.compile(r"^(ch\d+|[a-z0-9_]+)/[A-Za-z0-9_.\-]+$")


def _target(name: str, out_dir: str | Path | None) -> Path:
    if not isinstance(name, str) or not _NAME.match(name) or name.endswith((".png", ".csv", ".svg")):
        raise ValueError(
            f"name: expected 'chN/stem' without extension (e.g. 'ch3/fig3_2_phases_cnn'), got {name!r}"
        )
    base = Path(out_dir) if out_dir else figures_dir()
    path = base / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _write_if_changed(path: Path, data: bytes) -> Path:
    if path.exists() and path.read_bytes() == data:
        return path
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return path


def use_style() -> None:
    """Set the matplotlib defaults shared by all perfkit figures."""
    import matplotlib

    matplotlib.rcParams.update(STYLE)


def savefig(fig, name: str, out_dir: str | Path | None = None, formats=("png", "svg")) -> list[Path]:
    """Save a matplotlib figure as PNG and SVG with deterministic bytes.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    name : str
        ``"chN/stem"`` after the thesis numbering, without extension.
    out_dir : path, optional
        Base folder; defaults to ``figures/`` (or ``$PERFKIT_FIGURES``).
    formats : sequence of str
        File formats, any of ``"png"``, ``"svg"``, ``"pdf"``.

    Returns
    -------
    list of pathlib.Path
        The files written (or left unchanged because identical).
    """
    import matplotlib

    stem = _target(name, out_dir)
    meta = {
        "png": {"Software": None},
        "svg": {"Date": None, "Creator": None},
        "pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
    }
    written = []
    with matplotlib.rc_context(STYLE):
        for fmt in formats:
            if fmt not in meta:
                raise ValueError(f"formats: unsupported format {fmt!r}; use png, svg or pdf")
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, metadata=meta[fmt], bbox_inches="tight")
            written.append(_write_if_changed(stem.with_suffix(f".{fmt}"), buf.getvalue()))
    return written


def savetable(df, name: str, out_dir: str | Path | None = None, index: bool = False) -> Path:
    """Save a DataFrame as CSV with the fixed float format :data:`FLOAT_FORMAT`.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    name : str
        ``"chN/stem"`` after the thesis numbering, e.g. ``"ch3/table3_2"``.
    out_dir : path, optional
        Base folder; defaults to ``figures/``.
    index : bool, default False
        Whether to write the index.

    Returns
    -------
    pathlib.Path
        The CSV file.
    """
    path = _target(name, out_dir).with_suffix(".csv")
    text = df.to_csv(index=index, float_format=FLOAT_FORMAT, lineterminator="\n")
    return _write_if_changed(path, text.encode("utf-8"))


def savetext(text: str, name: str, out_dir: str | Path | None = None, suffix: str = ".md") -> Path:
    """Save a text (Markdown by default) as ``figures/<name><suffix>``, rewritten only when it changes."""
    path = _target(name, out_dir).with_suffix(suffix)
    return _write_if_changed(path, text.encode("utf-8"))
