"""What every concatenation probe adds to its findings: the rerun null and the failed calls.

:func:`~judgeprobe.probes.reruns.rerun_stage` is the probe's last ``refine`` step,
:func:`gate` the last step of its ``analyze``:
the raw rates named in the probe's ``excess`` map become information beside their gated excess
over the rerun null, the null is reported (``rerun_flip_rate``, ``rerun_change_rate``), and
``failed_call_rate`` (:mod:`judgeprobe.probes.failures`) gates the calls that failed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.core.plan import Plan, Verdicts
from judgeprobe.probes.base import FigureSpec, Finding, Probe, ProbeResult
from judgeprobe.probes.concatenation.sizing import items_for_power
from judgeprobe.probes.decisions import base_decisions
from judgeprobe.probes.failures import (
    UNPAIRED,
    call_counts,
    explain_failed,
    failed_call_finding,
    failure_cause,
)
from judgeprobe.probes.reruns import (
    EXCESS_UNPAIRED,
    Excess,
    null_findings,
    null_note,
    read_against_null,
    rerun_null,
)


def unpaired(excess: Mapping[str, Excess]) -> dict[str, str]:
    """The unpaired declarations of the findings :func:`gate` adds."""
    return {
        **{spec.name: EXCESS_UNPAIRED for spec in excess.values()},
        "failed_call_rate": UNPAIRED,
    }


def added_names(excess: Mapping[str, Excess]) -> tuple[str, ...]:
    """The names of the findings :func:`gate` adds, for ``finding_names``."""
    return (
        *(spec.name for spec in excess.values()),
        "rerun_flip_rate",
        "rerun_change_rate",
        "failed_call_rate",
    )


def gate(
    findings: list[Finding],
    plan: Plan[Any],
    verdicts: Verdicts,
    excess: Mapping[str, Excess],
    *,
    level: float,
    notes: list[str],
    tables: dict[str, Any],
) -> list[Finding]:
    """``findings`` read against the rerun null, with the null and ``failed_call_rate`` added;
    ``notes`` and ``tables`` (``reruns``, ``calls``) get what they rest on."""
    null = rerun_null(plan, verdicts, plan.context.rubric, level)
    out = read_against_null(findings, null, excess)
    out += explain_failed(null_findings(null), failure_cause(verdicts.usage()))
    failed, failed_notes = failed_call_finding(verdicts, confidence_level=level)
    out.append(failed)
    notes.append(null_note(null))
    notes.extend(failed_notes)
    excesses = {spec.name for spec in excess.values()}
    notes.extend(power_notes([f for f in out if f.name in excesses], level))
    tables["reruns"] = null.to_dict()
    tables["calls"] = call_counts(verdicts)
    tables["base_decisions"] = base_decisions(verdicts)
    return out


def power_notes(findings: Sequence[Finding], level: float) -> list[str]:
    """Where a gated excess rests on fewer items than failing a rate of 1.5 times its fail line
    with 80 % power takes when the judge's failures follow items
    (:func:`~judgeprobe.probes.concatenation.sizing.items_for_power`): one note, per k."""
    short: dict[tuple[int, float, int], int] = {}
    for finding in findings:
        threshold, estimate = finding.threshold, finding.estimate
        if threshold is None or threshold.fail is None or not estimate.defined:
            continue
        k = int(finding.labels.get("k", "1"))
        needed = items_for_power(threshold, k, confidence_level=level)
        if estimate.n < needed:
            key = (k, 1.5 * threshold.fail, needed)
            short[key] = min(estimate.n, short.get(key, estimate.n))
    return [
        f"power (k = {k}): when the judge's failures follow items, a rate of {rate:.2g} (1.5 "
        f"times the fail line) is failed with 80 % power from about {needed} items; the gated "
        f"rates here rest on as few as {items}: a defect that size may read inconclusive"
        for (k, rate, needed), items in sorted(short.items())
    ]


def gated_result(
    probe: Probe,
    plan: Plan[Any],
    verdicts: Verdicts,
    excess: Mapping[str, Excess],
    *,
    level: float,
    findings: list[Finding],
    figures: list[FigureSpec],
    tables: dict[str, Any],
    notes: list[str],
) -> ProbeResult:
    """``probe``'s result, its ``findings`` read against the rerun null (:func:`gate`)."""
    gated = gate(findings, plan, verdicts, excess, level=level, notes=notes, tables=tables)
    return ProbeResult(
        probe=probe.name,
        kind=probe.kind,
        params=probe.params(),
        findings=gated,
        figures=figures,
        tables=tables,
        notes=notes,
    )


__all__ = ["added_names", "gate", "gated_result", "power_notes", "unpaired"]
