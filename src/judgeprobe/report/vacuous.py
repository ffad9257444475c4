"""Invariance read against sensitivity: a judge that does not move is not shown reliable.

An invariance check asks that a verdict stay put when something that should not matter changes. A
judge that answers "1" to everything passes every one of them, and says nothing about itself by
passing. CheckList reads invariance tests next to directional ones (a change that matters must move
the verdict the expected way); judgeprobe's directional probe is ``sensitivity``
(``sensitivity_pairwise`` for pairs).

The card reads the two together. The judge is *not shown to move* when a directional probe of
the audit decided that it does not move as it should (its findings, its failed calls aside,
failed or warned), or when no directional probe passed and every base decision of the audit
(``S(P, R)`` of the audited items, the ``base_decisions`` table of the invariance probes) falls in
one class: a judge that answers "1" to everything. Then every invariance finding that passed is
*vacuous*: it is shown not assessable, with the reason, and its probe says why. A failing
invariance finding stays a failure (the judge moved where it should not have). Otherwise, when no
directional probe ran or its verdict is undecided, the invariance findings stand as decided, and
the probe's notes say they were not read against sensitivity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.report.findings import finding_sentence
from judgeprobe.report.statuses import tally, verdict

VACUOUS = (
    "Vacuous: the judge was not shown to move when the meaning changes ({probes}); an invariant "
    "but insensitive judge has not been shown reliable"
)
UNREAD = (
    "Not read against sensitivity: no directional probe ({why}) showed that this judge moves when "
    "the meaning changes, so a pass here may be that of a judge that never moves"
)


CALLS = "failed_call_rate"
"""A finding on the judge's calls, not on whether it moves: left out of a directional verdict."""


def moving_status(probe: Mapping[str, Any]) -> str:
    """A directional probe's verdict on whether the judge moves: its gated findings, failed
    calls aside (a judge that fails its calls is not shown insensitive by that)."""
    headline = [f["status"] for f in probe["findings"] if f["headline"] and f["name"] != CALLS]
    return verdict(headline) if headline else "n/a"


def insensitive(probes: Sequence[Mapping[str, Any]]) -> list[str]:
    """The directional probes that decided the judge does not move as it should
    (``name status``), in card order."""
    out = []
    for probe in probes:
        if probe["kind"] == "directional" and (status := moving_status(probe)) in ("fail", "warn"):
            out.append(f"{probe['name']} {status}")
    return out


def one_class(probes: Sequence[Mapping[str, Any]]) -> str | None:
    """``every base decision of the audit is 'safe' (40 items)`` when the invariance probes'
    base decisions (their ``base_decisions`` tables) all fall in one class; None otherwise, or
    when no probe reports them."""
    counts: dict[str, int] = {}
    for probe in probes:
        if probe["kind"] == "invariance":
            for decision, n in dict(probe.get("tables", {}).get("base_decisions") or {}).items():
                counts[decision] = max(counts.get(decision, 0), int(n))
    seen = [decision for decision, n in counts.items() if n > 0]
    if len(seen) != 1:
        return None
    return f"every base decision of the audit is {seen[0]!r} ({counts[seen[0]]} items)"


def read_against_sensitivity(probes: list[dict[str, Any]]) -> None:
    """Mark the passing findings of every invariance probe vacuous when the judge is not shown
    to move (a directional probe failed or warned, or, none passing, its base decisions fall in
    one class); otherwise note on each invariance probe whether sensitivity backs it."""
    directional = [p for p in probes if p["kind"] == "directional"]
    failed = insensitive(probes)
    constant = one_class(probes)
    if constant is not None and not any(moving_status(p) == "pass" for p in directional):
        failed.append(constant)
    for probe in probes:
        if probe["kind"] != "invariance":
            continue
        if failed:
            reason = VACUOUS.format(probes=", ".join(failed))
            for finding in probe["findings"]:
                if finding["headline"] and finding["status"] == "pass" and finding["name"] != CALLS:
                    finding["status"] = "n/a"
                    finding["certainty"] = None
                    finding["reason"] = reason
                    finding["sentence"] = finding_sentence(finding)
            _restate(probe)
            probe["notes"] = [*probe["notes"], reason + "."]
        elif not any(moving_status(p) == "pass" for p in directional):
            why = (
                "none ran"
                if not directional
                else "its verdict is " + ", ".join(moving_status(p) for p in directional)
            )
            probe["notes"] = [*probe["notes"], UNREAD.format(why=why) + "."]


def _restate(probe: dict[str, Any]) -> None:
    """The probe's status and counts again, from its findings as they now stand."""
    headline = [f["status"] for f in probe["findings"] if f["headline"]]
    probe["status"] = verdict(headline) if headline else "info"
    probe["counts"] = tally(f["status"] for f in probe["findings"])
