"""Failed calls: how many of each wording's first-stage runs errored, were unparseable or skipped.

They are excluded from every count; ``failed_call_rate`` says how many there were.
"""

from __future__ import annotations

from typing import Any

from judgeprobe.core.plan import Verdicts
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.probes.base import Finding, Threshold
from judgeprobe.stats import proportion

from .design import PolicyDesign, first_stage_trials, role
from .section import Section, Settings

FAILED_THRESHOLD = Threshold(warn=0.05, fail=0.20)


def failures(design: PolicyDesign, verdicts: Verdicts, settings: Settings) -> Section:
    """Status tallies per wording (the table), ``failed_call_rate`` and a note when any failed."""
    out = Section(table=[])
    failed = total = 0
    for wording in design.wordings:
        roles = [
            role(wording.name, item.id, t)
            for item in design.items
            for t in first_stage_trials(wording, settings.reruns)
        ]
        counts = verdicts.tally(roles)
        failed += sum(v for k, v in counts.items() if k not in (VerdictStatus.OK.value, "missing"))
        total += len(roles)
        row: dict[str, Any] = {"wording": wording.name, **counts}
        out.table.append(row)
    out.findings.append(
        Finding(
            "failed_call_rate",
            proportion(failed, total, confidence_level=settings.confidence_level),
            "share of calls that errored, could not be parsed or were skipped (excluded from "
            "every count)",
            threshold=FAILED_THRESHOLD,
        )
    )
    if failed:
        out.notes.append(f"{failed} of {total} calls failed or were skipped; they are excluded")
    return out
