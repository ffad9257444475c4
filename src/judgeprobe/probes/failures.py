"""Failed calls: how many of a probe's calls came back with no verdict it can use.

A verdict that errored or could not be parsed is excluded from every count (it is never turned
into a score), so a judge that fails half its calls leaves a probe half its evidence and, were
the failures not gated, a clean card. Every probe that calls :func:`failed_call_finding` in its
``analyze`` reports ``failed_call_rate``: the share of its calls *made* (its distinct requests
sent to the judge) that errored or were unparseable, with a Wilson interval over those requests,
gated at :data:`FAILED_THRESHOLD` (policy invariance's line). Inputs skipped because they exceed
the judge's context window were never sent: they are counted apart (``counts["skipped"]``) and
named in a note, as are requests still missing a verdict (a budget spent before them).

A finding left without an estimate because verdicts failed says so (:func:`explain_failed`):
"no concatenation judged ok; 3 of 10 calls failed (errored or unparseable)", and so does one left
without it because inputs were skipped ("2 of 10 calls skipped: input beyond the judge's context
window"). :func:`with_failed_calls` does both for a probe's whole result, so every probe gates its
calls the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from judgeprobe.core.plan import Role, Verdicts
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.probes.base import Finding, ProbeResult, Threshold
from judgeprobe.stats import Estimate, proportion

FAILED_THRESHOLD = Threshold(warn=0.05, fail=0.20)
"""As policy invariance gates its failed calls: one call in twenty warns, one in five fails."""

STATUSES = ("ok", "error", "unparseable", "skipped", "missing")
"""The verdict statuses of a tally, ``missing`` included."""

FAILED_STATUSES = (VerdictStatus.ERROR.value, VerdictStatus.UNPARSEABLE.value)
"""The statuses of a call that was made and returned nothing usable."""

UNPAIRED = (
    "a rate over the probe's calls, whose request keys hold the judge's fingerprint: two runs "
    "of different judges share none"
)
"""Why ``failed_call_rate`` is compared unpaired (``Probe.unpaired_findings``)."""


def call_counts(verdicts: Verdicts, roles: Iterable[Role] | None = None) -> dict[str, int]:
    """The distinct requests of ``roles`` (the whole plan by default) by status, ``missing``
    included: one call per request, however many roles share it."""
    if roles is None:
        return verdicts.usage()
    counts = {status.value: 0 for status in VerdictStatus}
    counts["missing"] = 0
    seen: set[str] = set()
    for role in roles:
        key = verdicts.request(role).key
        if key not in seen:
            seen.add(key)
            counts[verdicts.status(role)] += 1
    return counts


def failed(counts: Mapping[str, int]) -> int:
    """Calls that errored or were unparseable, of ``counts`` (statuses)."""
    return sum(int(counts.get(status, 0)) for status in FAILED_STATUSES)


def failed_call_finding(
    verdicts: Verdicts, *, confidence_level: float = 0.95, roles: Iterable[Role] | None = None
) -> tuple[Finding, list[str]]:
    """``failed_call_rate`` over the plan's calls (or those of ``roles``), and notes on the
    failed, skipped and missing ones."""
    counts = call_counts(verdicts, roles)
    bad = failed(counts)
    made = bad + counts[VerdictStatus.OK.value]
    skipped, missing = counts[VerdictStatus.SKIPPED.value], counts["missing"]
    extra = {
        "errored": counts[VerdictStatus.ERROR.value],
        "unparseable": counts[VerdictStatus.UNPARSEABLE.value],
        "skipped": skipped,
        "missing": missing,
        "requests": sum(counts.values()),
    }
    if made:
        estimate = proportion(bad, made, confidence_level=confidence_level)
        estimate = dataclasses.replace(estimate, counts={**estimate.counts, **extra})
    else:
        estimate = Estimate.undefined(
            0,
            reason=f"no call was made ({skipped} skipped for the context window, {missing} "
            "missing)",
        )
    finding = Finding(
        "failed_call_rate",
        estimate,
        "Share of the probe's calls made (distinct requests sent to the judge) that errored or "
        "could not be parsed; they are excluded from every count (Wilson CI over the requests); "
        "inputs skipped for the context window are counted apart",
        threshold=FAILED_THRESHOLD,
    )
    notes: list[str] = []
    if bad:
        notes.append(
            f"{bad} of {made} calls failed ({extra['errored']} errored, {extra['unparseable']} "
            "unparseable); they are excluded from every count"
        )
    if skipped:
        notes.append(
            f"{skipped} of {extra['requests']} requests were skipped: their input exceeds the "
            "judge's context window (not truncated, not sent)"
        )
    if missing:
        notes.append(f"{missing} of {extra['requests']} requests have no verdict (not judged)")
    return finding, notes


def failure_cause(counts: Mapping[str, int], what: str = "calls") -> str | None:
    """ "3 of 10 calls failed (errored or unparseable)" for ``counts`` (statuses, ``missing``
    included), or None when none failed."""
    bad = failed(counts)
    if not bad:
        return None
    total = sum(int(v) for v in counts.values())
    return f"{bad} of {total} {what} failed (errored or unparseable)"


def skipped_cause(counts: Mapping[str, int], what: str = "calls") -> str | None:
    """ "2 of 10 calls skipped: input beyond the judge's context window" for ``counts``
    (statuses, ``missing`` included), or None when none was skipped."""
    skipped = int(counts.get(VerdictStatus.SKIPPED.value, 0))
    if not skipped:
        return None
    total = sum(int(v) for v in counts.values())
    return f"{skipped} of {total} {what} skipped: input beyond the judge's context window"


def with_failed_calls(
    result: ProbeResult, verdicts: Verdicts, *, confidence_level: float = 0.95
) -> ProbeResult:
    """``result`` gated on its failed calls: ``failed_call_rate`` over the whole plan added
    beside its findings, the notes on failed, skipped and missing calls added to its notes, and
    every finding it could not assess naming the failed or skipped calls in its reason.

    A probe calls it last in ``analyze``; it declares ``failed_call_rate`` in its
    ``finding_names`` and as unpaired (:data:`UNPAIRED`). A plan with no request (votes read
    from a file) made no call to gate: its result is returned as it is."""
    counts = verdicts.usage()
    if not sum(counts.values()):
        return result
    finding, notes = failed_call_finding(verdicts, confidence_level=confidence_level)
    findings = explain_failed(result.findings, failure_cause(counts), skipped_cause(counts))
    return dataclasses.replace(result, findings=[*findings, finding], notes=[*result.notes, *notes])


def explain_failed(findings: Sequence[Finding], *causes: str | None) -> list[Finding]:
    """``findings``, each one that could not be assessed naming the failed calls among its
    ``causes`` (None causes are ignored): a missing verdict, not the judge, left it empty."""
    named = [c for c in causes if c]
    if not named:
        return list(findings)
    out = []
    for finding in findings:
        if not finding.estimate.defined:
            reason = finding.estimate.reason or "no data"
            added = "; ".join(c for c in named if c not in reason)
            if added:
                finding = dataclasses.replace(
                    finding,
                    estimate=Estimate.undefined(finding.estimate.n, reason=f"{reason}; {added}"),
                )
        out.append(finding)
    return out


def surviving_note(where: str, judged: Mapping[str, int], of: int, unit: str) -> list[str]:
    """A note when the conditions of ``where`` are compared on different numbers of surviving
    ``unit``\\ s (``judged``: condition -> units judged ok, of ``of``): a failed call removes a
    unit from one condition and not from another."""
    if len(set(judged.values())) <= 1:
        return []
    listed = ", ".join(f"{name} {n}" for name, n in judged.items())
    return [
        f"{where}: the conditions rest on different {unit}s, those whose calls did not fail "
        f"({listed} of {of})"
    ]
