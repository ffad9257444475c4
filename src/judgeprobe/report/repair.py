"""The card's repair section: each repaired judge's before and after on the failure it targets.

``judgeprobe audit --repair NAME`` (:func:`judgeprobe.audit.repair.run_repair_audit`) stores the
summary of its repairs with the original run's metadata
(:data:`~judgeprobe.engine.store_meta.REPAIR`);
:func:`repair_section` reads it into the card's ``repair``, so ``judgeprobe card`` renders the
same section again from the run store alone. Per repair: its name and options, the probe it
targets, the cost multiplier (inner judge calls per verdict), the repaired card's overall status
and one-line verdict, links to the repaired card's folder and the comparison's (relative to the
folder of the run store), and every finding of the target probe before and after, with the
difference (repaired minus original), its method (paired over shared items, or unpaired from
the two intervals), its Holm-adjusted p-value and a word (better, worse, changed, no evidence,
n/a) from :mod:`judgeprobe.compare`.

:func:`repair_rows` and :func:`repair_line` give the section as plain text (not escaped): the
Markdown and HTML renderers escape it as they escape the rest of the card.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from judgeprobe.report.text import finite_number, fmt_number, humanize
from judgeprobe.report.view import STATUS_WORDS, labels_text, side_interval

REPAIR_COLUMNS = (
    "Finding",
    "Slice",
    "Before",
    "After",
    "Difference",
    "Method",
    "Adjusted p",
    "Word",
)
"""The columns of a repair's table, one row per finding of the probe it targets."""
_LINK = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*")
"""A relative folder link: plain names, none starting with a dot (so no ``..``, no scheme)."""


def repair_section(stored: Any) -> dict[str, Any] | None:
    """The card's ``repair`` from a stored repair summary; None when there is none (or no
    repair in it). Keys it does not show (store paths, the other probes' differences) are left
    out; a value of the wrong type raises (the card reports the store as damaged)."""
    if not isinstance(stored, Mapping):
        return None
    repairs = [_repair(entry) for entry in stored.get("repairs") or []]
    if not repairs:
        return None
    return {"headline": str(stored.get("headline") or ""), "repairs": repairs}


def headline_row(repair: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The finding that speaks for a repair: the target probe's first gated finding that shows a
    difference (better or worse), else its first finding that does (a raw rate read against the
    rerun null, paired where its gated excess cannot be), else its first gated finding, else its
    first; None when the target probe has none."""
    rows: list[Mapping[str, Any]] = repair["target_findings"]
    moved = [row for row in rows if row["word"] in ("better", "worse")]
    gated = [row for row in rows if row["gated"]]
    for choice in ([r for r in moved if r["gated"]], moved, gated, rows):
        if choice:
            return choice[0]
    return None


def repair_rows(repair: Mapping[str, Any]) -> list[list[str]]:
    """A repair's table (:data:`REPAIR_COLUMNS`) as text, one row per finding of its target."""
    return [
        [
            humanize(row["finding"]),
            labels_text(row["labels"]),
            _side_text(row["before"]),
            _side_text(row["after"]),
            side_interval(row["difference"]),
            row["method"],
            fmt_number(row["adjusted_pvalue"]),
            row["word"],
        ]
        for row in repair["target_findings"]
    ]


def repair_line(repair: Mapping[str, Any]) -> str:
    """One line: the repair, its target and cost, and its target's headline difference."""
    text = (
        f"{repair['repair']} (targets {repair['target_probe']}): cost "
        f"{fmt_number(repair['cost_multiplier'])} inner judge calls per verdict"
    )
    row = headline_row(repair)
    if row is None:
        return text + f"; the {repair['target_probe']} probe was not audited"
    labels = labels_text(row["labels"])
    before, after = row["before"], row["after"]
    return (
        f"{text}; {humanize(row['finding'])}{f' ({labels})' if labels else ''} "
        f"{fmt_number(before['estimate'])} → {fmt_number(after['estimate'])}, difference "
        f"{side_interval(row['difference'])} ({row['method']}): {row['word']}; repaired card: "
        f"{STATUS_WORDS.get(repair['verdict']['overall'], repair['verdict']['overall'])}"
    )


# -- reading --------------------------------------------------------------------------------------
def _repair(entry: Mapping[str, Any]) -> dict[str, Any]:
    verdict = entry.get("verdict") or {}
    links = entry.get("links") or {}
    return {
        "repair": str(entry["repair"]),
        "options": dict(entry.get("options") or {}),
        "target_probe": str(entry["target_probe"]),
        "cost_multiplier": finite_number(entry.get("cost_multiplier")),
        "verdict": {
            "overall": str(verdict.get("overall") or "n/a"),
            "sentence": str(verdict.get("sentence") or ""),
        },
        "links": {key: _link(links.get(key)) for key in ("card", "comparison")},
        "target_findings": [_row(row) for row in entry.get("target_findings") or []],
    }


def _row(row: Mapping[str, Any]) -> dict[str, Any]:
    difference = row["difference"]
    ci = difference.get("ci") or {}
    return {
        "finding": str(row["finding"]),
        "labels": {str(k): str(v) for k, v in dict(row.get("labels") or {}).items()},
        "gated": bool(row.get("gated")),
        "before": _side(row["before"]),
        "after": _side(row["after"]),
        "difference": {
            "estimate": finite_number(difference.get("estimate")),
            "ci": {
                "low": finite_number(ci.get("low")),
                "high": finite_number(ci.get("high")),
                "level": float(ci.get("level") or 0.95),
                "method": str(ci.get("method") or ""),
            },
            "n": int(difference.get("n") or 0),
        },
        "method": str(row["method"]),
        "adjusted_pvalue": finite_number(row.get("adjusted_pvalue")),
        "word": str(row["word"]),
    }


def _side(side: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "estimate": finite_number(side.get("estimate")),
        "low": finite_number(side.get("low")),
        "high": finite_number(side.get("high")),
        "n": int(side.get("n") or 0),
        "status": str(side.get("status") or "n/a"),
    }


def _link(value: Any) -> str | None:
    return value if isinstance(value, str) and _LINK.fullmatch(value) else None


def _side_text(side: Mapping[str, Any]) -> str:
    status = STATUS_WORDS.get(side["status"], side["status"])
    return f"{side_interval(side)}, n={side['n']}, {status}"
