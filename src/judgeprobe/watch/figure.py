"""The watch's figure: the series of checks, drawn like the card's figures (matplotlib, SVG).

Top: each check's share of anchors whose decision differs from the audited one, with the
rerun null's upper bound ``U`` as a dashed line. Bottom: the drift test's evidence
(``log10 E``) after each check, with the bar it must reach (``log10(2 / alpha)``). A dotted
vertical line marks each check at which the judge's identity changed, and a red one the check at
which drift was detected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from judgeprobe.report.figures import PALETTE, rendered


def series_svg(document: Mapping[str, Any]) -> bytes | None:
    """The figure of ``document``'s checks as SVG bytes; None before a complete check."""
    rows = [r for r in document["checks"] if r.get("look")]
    if not rows:
        return None
    return rendered(lambda: _draw(document, rows))


def _draw(document: Mapping[str, Any], rows: list[Mapping[str, Any]]) -> Figure:
    figure = Figure(figsize=(9.0, 5.2))
    FigureCanvasAgg(figure)
    top, bottom = figure.subplots(2, 1, sharex=True)
    checks = [int(r["check"]) for r in rows]
    rates = [r["k"] / r["n"] if r["n"] else math.nan for r in rows]
    top.plot(checks, rates, "o-", color=PALETTE[0], markersize=3.5, label="anchors that moved")
    bound = float(document["null"]["bound"])
    top.axhline(bound, color=PALETTE[1], linestyle="--", label="rerun noise, upper bound")
    top.set_ylabel("share of anchors")
    top.set_ylim(0, max(0.05, *(r for r in rates if not math.isnan(r)), bound) * 1.15)
    top.legend(loc="upper left", fontsize=8, frameon=False)
    top.set_title("Disagreement with the audited verdicts, check by check", fontsize=10)
    evidence = [_log10(r["look"].get("log_evidence")) for r in rows]
    bottom.plot(checks, evidence, "s-", color=PALETTE[2], markersize=3.5, label="log10 evidence")
    bar = math.log10(2.0 / float(document["settings"]["alpha"]))
    bottom.axhline(bar, color=PALETTE[5], linestyle="--", label="drift detected above")
    bottom.set_ylabel("log10 E")
    bottom.set_xlabel("check")
    bottom.legend(loc="upper left", fontsize=8, frameon=False)
    shown = [e for e in evidence if not math.isnan(e)]
    bottom.set_ylim(min([-1.0, *shown]) - 0.2, max([bar, *shown]) + 0.5)
    for row in document["checks"]:
        if row["identity_changes"]:
            for ax in (top, bottom):
                ax.axvline(int(row["check"]), color="0.5", linestyle=":", linewidth=1)
    at = document["state"].get("at")
    if at is not None:
        for ax in (top, bottom):
            ax.axvline(int(at), color=PALETTE[5], linewidth=1.2)
    figure.tight_layout()
    return figure


def _log10(log_e: Any) -> float:
    """``log E`` (natural) in base 10; no evidence (None: no start above the bound) as NaN."""
    return math.nan if log_e is None else float(log_e) / math.log(10.0)
