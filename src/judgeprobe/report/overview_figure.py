"""The card's overview figure: every gated finding against its thresholds, in one static image.

It opens with the card's verdict in one sentence
(:func:`~judgeprobe.report.overview.verdict_sentence`: the words the card's headline and the
command line's summary open with), then one row per gated finding, grouped by probe kind in the
card's order: the pass, warn and fail bands shaded, the confidence interval as a bar, the
estimate as a marker coloured (and shaped) by the stored status, and the status written out with
the numbers at the end of the row, so colour is never the only cue. Findings measure different
things (a flip rate, a kappa, a distance), so each row has its own scale, spanning its
thresholds and its CI; what a reader compares is where the CI sits among the bands. A finding
that could not be assessed gets its row, marked n/a.

Drawn with matplotlib like the probes' figures (:mod:`~judgeprobe.report.figures`): mathtext off,
text as paths, no date in the SVG, so the same card gives the same file, and the HTML card embeds
it as a ``data:`` image that its Content-Security-Policy allows (no script, no inline SVG).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from judgeprobe.report.figures import rendered, row_axes
from judgeprobe.report.overview import gated_findings, verdict_sentence
from judgeprobe.report.text import display_text, finite_number, fmt_number, humanize, short_label

OVERVIEW_STEM = "figures/overview"
"""The overview figure's file stem beside the card (a probe's figures are ``<probe>-<name>``)."""
MAX_ROWS = 80
"""Rows drawn at most; the rest are counted under the figure (the card lists every finding)."""
STATUS_STYLE = {
    "pass": ("#1b7a3a", "o", "PASS"),
    "warn": ("#9a6200", "D", "WARN"),
    "fail": ("#b3261e", "X", "FAIL"),
    "inconclusive": ("#5a4f8a", "s", "INCONCLUSIVE"),
    "n/a": ("#6b6b6b", "", "n/a"),
}
BANDS = {"pass": "#d8efdf", "warn": "#fbe7c2", "fail": "#f6d0cc"}
LABEL_LENGTH = 64
HEADLINE_LENGTH = 150
"""The verdict sentence at the top of the figure (the card's headline opens with the same words)
is cut to this many characters."""


def overview_bytes(card: Mapping[str, Any], fmt: str = "svg", *, dpi: int = 110) -> bytes | None:
    """The overview figure of ``card`` as ``svg`` or ``png`` bytes; None without a gated finding."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"figure format must be png or svg, not {fmt!r}")
    rows = _rows(card)
    if not rows:
        return None
    headline = short_label(verdict_sentence(card), HEADLINE_LENGTH)
    return rendered(lambda: _draw(rows, len(gated_findings(card)), headline), fmt, dpi=dpi)


def _rows(card: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any] | None]]:
    """(label, finding) per row, a kind's heading row (finding None) before its findings."""
    rows: list[tuple[str, Mapping[str, Any] | None]] = []
    kind = None
    for probe, finding in gated_findings(card)[:MAX_ROWS]:
        if probe["kind"] != kind:
            kind = probe["kind"]
            rows.append((display_text(kind, 40), None))
        labels = ", ".join(f"{k}={v}" for k, v in (finding.get("labels") or {}).items())
        text = f"{probe['name']}: {humanize(str(finding['name']))}"
        rows.append((short_label(text + (f" ({labels})" if labels else ""), LABEL_LENGTH), finding))
    return rows


def _draw(
    rows: Sequence[tuple[str, Mapping[str, Any] | None]], total: int, headline: str
) -> Figure:
    figure, ax = row_axes(len(rows), base=1.15, bottom=0.45, margin=1.1)
    height = figure.get_figheight()
    figure.text(0.01, 1 - 0.2 / height, headline, fontsize=9.5, weight="bold", va="center")
    for position, (label, finding) in enumerate(rows):
        if finding is None:
            ax.text(-0.03, position, label.upper(), ha="right", va="center", weight="bold")
            continue
        ax.text(-0.03, position, label, ha="right", va="center", fontsize=8)
        _row(ax, position, finding)
    figure.text(
        0.01,
        1 - 0.45 / height,
        "Every gated finding: estimate (marker) and CI (bar) against its thresholds, shaded"
        " pass / warn / fail; each row on its own scale",
        fontsize=9,
        va="center",
    )
    if total > MAX_ROWS:
        more = f"... and {total - MAX_ROWS} more gated findings in the card's tables"
        figure.text(0.01, 0.2 / height, more, fontsize=8, va="center")
    return figure


def _row(ax: Any, y: float, finding: Mapping[str, Any]) -> None:
    status = str(finding.get("status"))
    colour, marker, word = STATUS_STYLE.get(status, ("#44546a", "o", status))
    ci = finding.get("ci") or {}
    estimate, low, high = (
        finite_number(v) for v in (finding.get("estimate"), ci.get("low"), ci.get("high"))
    )
    threshold = finding.get("threshold") or {}
    warn, fail = finite_number(threshold.get("warn")), finite_number(threshold.get("fail"))
    values = [v for v in (estimate, low, high, warn, fail) if v is not None]
    left, right = min(values), max(values)
    pad = 0.12 * (right - left) if right > left else max(0.1 * abs(left), 0.05)
    left, right = left - pad, right + pad

    def at(value: float) -> float:
        return (value - left) / (right - left)

    for band, start, end in _bands(warn, fail, bool(threshold.get("higher_is_worse", True))):
        x0 = 0.0 if start is None else at(start)
        x1 = 1.0 if end is None else at(end)
        ax.add_patch(Rectangle((x0, y - 0.38), x1 - x0, 0.76, color=BANDS[band], linewidth=0))
    if low is not None and high is not None:
        ax.plot([at(low), at(high)], [y, y], color="#1d2125", linewidth=1.6)
    if estimate is not None and marker:
        ax.plot([at(estimate)], [y], marker, color=colour, markersize=5.5)
    numbers = "not assessable" if estimate is None else fmt_number(estimate)
    if estimate is not None and low is not None and high is not None:
        numbers += f" [{fmt_number(low)}, {fmt_number(high)}]"
    ax.text(1.03, y, word, ha="left", va="center", fontsize=8, weight="bold", color=colour)
    ax.text(1.36, y, numbers, ha="left", va="center", fontsize=8)


def _bands(
    warn: float | None, fail: float | None, higher_is_worse: bool
) -> list[tuple[str, float | None, float | None]]:
    """(band, start, end) on the number line, None for open ends, lowest first."""
    cuts = [("warn", warn), ("fail", fail)]
    present = [(name, value) for name, value in cuts if value is not None]
    if not present:
        return []
    if higher_is_worse:
        names = ["pass", *(name for name, _ in present)]
        edges = [None, *(value for _, value in present), None]
    else:
        present.reverse()  # fail below warn below pass
        names = [*(name for name, _ in present), "pass"]
        edges = [None, *(value for _, value in present), None]
    return [(name, edges[i], edges[i + 1]) for i, name in enumerate(names)]
