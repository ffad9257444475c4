"""The repair section: each repair's before and after on the failure it targets, as Markdown.

Rendered from the stored summary :func:`judgeprobe.repair_audit.summarize` writes
(``repair.json``); it computes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def _number(value: Any) -> str:
    if not isinstance(value, int | float) or not math.isfinite(value):
        return "n/a"
    return f"{value:.3g}"


def _interval(side: Mapping[str, Any]) -> str:
    return (
        f"{_number(side.get('estimate'))} [{_number(side.get('low'))}, {_number(side.get('high'))}]"
    )


def render_repair_markdown(summary: Mapping[str, Any]) -> str:
    """The repair summary as Markdown: one table per repair, its target probe's findings."""
    lines = ["# Judge repair: before and after", "", str(summary.get("headline", "")), ""]
    for repair in summary.get("repairs", []):
        cost = repair.get("cost_multiplier")
        lines += [
            f"## {repair['repair']} (targets {repair['target_probe']})",
            "",
            f"Cost multiplier: {_number(cost)} inner judge calls per verdict.",
            "",
            "| finding | labels | before | after | difference | method | word |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in repair.get("target_findings", []):
            labels = ", ".join(f"{k}={v}" for k, v in sorted(row["labels"].items()))
            difference = row["difference"]
            ci = difference.get("ci", {})
            lines.append(
                f"| {row['finding']} | {labels} | {_interval(row['before'])} | "
                f"{_interval(row['after'])} | {_number(difference.get('estimate'))} "
                f"[{_number(ci.get('low'))}, {_number(ci.get('high'))}] | {row['method']} | "
                f"{row['word']} |"
            )
        if not repair.get("target_findings"):
            lines.append("| (the target probe was not audited) | | | | | | |")
        lines.append("")
    return "\n".join(lines)
