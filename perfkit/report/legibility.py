"""Is a figure legible? :func:`crowded_labels` finds tick labels that overlap their neighbours and axes that print
an offset or a power of ten beside the ticks (labels like "2.575×10⁻¹" or a "1e-3" corner note), which the reader
has to decode. The course's figures are checked with it (``tests/test_course.py``).
"""
from __future__ import annotations

__all__ = ["crowded_labels"]

#: pixels two neighbouring tick labels may share before they count as overlapping (anti-aliasing fringes)
_SLACK = 1.0


def _labels(axis, renderer) -> list:
    """(text, window extent) of the axis's visible, non-empty tick labels, major and minor (a log axis labels its
    minor ticks when it spans less than a decade)."""
    out = []
    for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
        for label in (tick.label1, tick.label2):
            if label.get_visible() and label.get_text().strip():
                out.append((label.get_text(), label.get_window_extent(renderer)))
    return out


def _overlaps(labels) -> list:
    """Pairs of labels whose boxes intersect by more than the slack, as "a / b"."""
    found = []
    for i, (text_a, a) in enumerate(labels):
        for text_b, b in labels[i + 1:]:
            w = min(a.x1, b.x1) - max(a.x0, b.x0)
            h = min(a.y1, b.y1) - max(a.y0, b.y0)
            if w > _SLACK and h > _SLACK:
                found.append(f"{text_a!r} / {text_b!r}")
    return found


def crowded_labels(fig) -> list:
    """What makes ``fig`` hard to read, one line each (empty when nothing): overlapping tick labels on an axis, an
    offset or multiplier text beside an axis, a tick label in scientific notation with a mantissa."""
    if not hasattr(fig.canvas, "get_renderer"):  # a Figure made without pyplot: draw it with Agg
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    for n, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        name = ax.get_title() or f"axes {n}"
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = _labels(axis, renderer)
            for pair in _overlaps(labels):
                problems.append(f"{name}: {which} tick labels overlap: {pair}")
            offset = axis.get_offset_text()
            if offset.get_visible() and offset.get_text().strip():
                problems.append(f"{name}: the {which} axis prints an offset or multiplier {offset.get_text()!r}")
            for text, _ in labels:
                if "\\times" in text or "×" in text:
                    problems.append(f"{name}: {which} tick label {text!r} is in scientific notation")
    return problems
