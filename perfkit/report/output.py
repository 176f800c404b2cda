"""The one place that writes figures and tables.

Outputs go under ``figures/<chapter>/`` (see :func:`perfkit.schema.figures_dir`) with
names after the thesis numbering, e.g. ``savefig(fig, "ch3/fig3_2_phases_cnn")``
writes ``figures/ch3/fig3_2_phases_cnn.png`` and ``.svg``. Output is
deterministic: no timestamps or software versions in the metadata, fixed SVG ids
and a fixed float format in CSVs, so re-running a notebook changes no bytes.

A file is only rewritten when it changes beyond the reproduction tolerance
(:func:`agrees`): every word the same and every number within :data:`RTOL` relative
or :data:`ATOL` absolute. Another CPU's arithmetic moves the last digits of a fit
(its BLAS kernels round differently), so a rerun elsewhere keeps the committed
tables, ledgers and findings instead of rewriting them with noise. A figure is
compared through its SVG (every coordinate and label); when the SVG agrees, the PNG
and SVG on disk are both kept.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

from ..schema import figures_dir

__all__ = ["savefig", "savetable", "savetext", "mark_quick", "QUICK_MARK", "agrees", "FLOAT_FORMAT", "STYLE", "use_style", "RTOL", "ATOL"]

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

#: relative and absolute tolerance under which a number in a rewritten file counts as unchanged
RTOL = 1e-3
ATOL = 1e-6

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def agrees(old: str, new: str, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """Whether two texts are the same but for numbers within ``rtol`` (relative) or ``atol`` (absolute).

    The texts are split into numbers and the words between them; the words must be identical and
    every pair of numbers close (``|a - b| <= max(rtol * max(|a|, |b|), atol)``).
    """
    import math

    if _NUMBER.split(old) != _NUMBER.split(new):
        return False
    for a, b in zip(_NUMBER.findall(old), _NUMBER.findall(new)):
        x, y = float(a), float(b)
        if x != y and not abs(x - y) <= max(rtol * max(abs(x), abs(y)), atol):
            if not (math.isnan(x) and math.isnan(y)):
                return False
    return True


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


def _unchanged(path: Path, data: bytes, tolerant: bool) -> bool:
    """Whether ``path`` already holds ``data`` (byte for byte, or within the tolerance of :func:`agrees`)."""
    if not path.exists():
        return False
    old = path.read_bytes()
    if old == data:
        return True
    if not tolerant:
        return False
    try:
        old_text, new_text = old.decode("utf-8"), data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if path.suffix == ".svg":
        old_text, new_text = _SVG_ID.sub("ID", old_text), _SVG_ID.sub("ID", new_text)
    return agrees(old_text, new_text)


#: matplotlib's SVG ids (clip paths ``p…``, markers ``m…``, collections ``C0_0_…``) are hashes of the drawn
#: coordinates: a coordinate's last digit changes the id, while the coordinates themselves are compared anyway
_SVG_ID = re.compile(r"\b(?:p|m|C\d+_\d+_)[0-9a-f]{10}\b")


def _write_if_changed(path: Path, data: bytes, tolerant: bool = False) -> Path:
    if _unchanged(path, data, tolerant):
        return path
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return path


#: the words a figure of a quick run carries (small budgets: never to be mistaken for a published figure)
QUICK_MARK = "QUICK RUN · small budgets · not the published result"


def mark_quick(fig):
    """Write :data:`QUICK_MARK` across the top of ``fig`` (once; returns ``fig``)."""
    if not any(getattr(t, "get_text", lambda: "")() == QUICK_MARK for t in fig.texts):
        fig.text(0.5, 0.995, QUICK_MARK, ha="center", va="top", fontsize=8, color="#b2182b", alpha=0.85,
                 fontweight="bold")
    return fig


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
        The files written (or left as they were because they agree within the tolerance).
    """
    import matplotlib

    stem = _target(name, out_dir)
    meta = {
        "png": {"Software": None},
        "svg": {"Date": None, "Creator": None},
        "pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
    }
    for fmt in formats:
        if fmt not in meta:
            raise ValueError(f"formats: unsupported format {fmt!r}; use png, svg or pdf")
    rendered = {}
    with matplotlib.rc_context(STYLE):
        for fmt in dict.fromkeys((*formats, "svg")):  # in the order given (it can matter to the bytes)
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, metadata=meta[fmt], bbox_inches="tight")
            rendered[fmt] = buf.getvalue()
    paths = {fmt: stem.with_suffix(f".{fmt}") for fmt in formats}
    # the SVG holds every coordinate and label: if it agrees within the tolerance, the figure is unchanged
    same = _unchanged(stem.with_suffix(".svg"), rendered["svg"], tolerant=True) and all(
        p.exists() for p in paths.values())
    return [p if same else _write_if_changed(p, rendered[fmt]) for fmt, p in paths.items()]


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
    return _write_if_changed(path, text.encode("utf-8"), tolerant=True)


def savetext(text: str, name: str, out_dir: str | Path | None = None, suffix: str = ".md") -> Path:
    """Save a text (Markdown by default) as ``figures/<name><suffix>``, rewritten only when it changes beyond
    the tolerance of :func:`agrees`."""
    path = _target(name, out_dir).with_suffix(suffix)
    return _write_if_changed(path, text.encode("utf-8"), tolerant=True)
