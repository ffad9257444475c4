"""The comparison's figure: each gated finding's paired difference (candidate minus baseline).

One row per gated difference of one candidate against the baseline: the difference's confidence
interval as a bar around the zero line, its estimate as a marker coloured (and shaped) by the
comparison's word (worse, better, changed, no evidence, n/a), and the word with the numbers
written beside it, so colour is never the only cue. Each row has its own scale, symmetric about
zero, since the findings measure different things. Drawn like the card's figures (matplotlib,
mathtext off, text as paths, no date), embedded in ``compare.html`` as a ``data:`` image.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from judgeprobe.report.figures import rendered, row_axes
from judgeprobe.report.text import finite_number, fmt_number, humanize, short_label

MAX_ROWS = 60
LABEL_LENGTH = 64
WORD_STYLE = {
    "worse": ("#b3261e", "X"),
    "better": ("#1b7a3a", "o"),
    "changed": ("#9a6200", "D"),
    "no evidence": ("#44546a", "s"),
    "n/a": ("#6b6b6b", ""),
}


def differences_svg(comparison: Mapping[str, Any]) -> bytes | None:
    """The figure of ``comparison``'s gated differences as SVG bytes; None when it has none."""
    rows = [d for d in comparison["differences"] if d.get("gated")][:MAX_ROWS]
    if not rows:
        return None
    return rendered(lambda: _draw(rows))


def _draw(rows: Sequence[Mapping[str, Any]]) -> Figure:
    figure, ax = row_axes(len(rows), base=0.8, bottom=0.3, margin=0.7)
    height = figure.get_figheight()
    figure.text(
        0.01,
        1 - 0.2 / height,
        "Gated findings: candidate minus baseline, estimate (marker) and CI (bar) about zero"
        " (the line); each row on its own scale",
        fontsize=9,
        va="center",
    )
    for y, difference in enumerate(rows):
        ax.text(-0.03, y, _label(difference), ha="right", va="center", fontsize=8)
        _row(ax, y, difference)
    return figure


def _row(ax: Any, y: float, difference: Mapping[str, Any]) -> None:
    word = str(difference.get("word"))
    colour, marker = WORD_STYLE.get(word, ("#44546a", "o"))
    side = difference.get("difference") or {}
    ci = side.get("ci") or {}
    estimate = finite_number(side.get("estimate"))
    low, high = (
        finite_number(ci.get("low", side.get("low"))),
        finite_number(ci.get("high", side.get("high"))),
    )
    reach = max((abs(v) for v in (estimate, low, high) if v is not None), default=0.0)
    span = reach * 1.15 if reach > 0 else 1.0

    def at(value: float) -> float:
        return 0.5 + value / (2 * span)

    ax.plot([0.5, 0.5], [y - 0.4, y + 0.4], color="0.55", linewidth=0.8)
    if low is not None and high is not None:
        ax.plot([at(low), at(high)], [y, y], color="#1d2125", linewidth=1.6)
    if estimate is not None and marker:
        ax.plot([at(estimate)], [y], marker, color=colour, markersize=5.5)
    numbers = "n/a" if estimate is None else fmt_number(estimate)
    if estimate is not None and low is not None and high is not None:
        numbers += f" [{fmt_number(low)}, {fmt_number(high)}]"
    ax.text(1.03, y, word.upper(), ha="left", va="center", fontsize=8, weight="bold", color=colour)
    ax.text(1.36, y, numbers, ha="left", va="center", fontsize=8)


def _label(difference: Mapping[str, Any]) -> str:
    labels = ", ".join(f"{k}={v}" for k, v in sorted((difference.get("labels") or {}).items()))
    text = f"{difference['probe']}: {humanize(str(difference['finding']))}"
    return short_label(text + (f" ({labels})" if labels else ""), LABEL_LENGTH)
