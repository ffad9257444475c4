"""The counts behind the bypass probe's findings: its judged concatenations, finding by finding.

A :class:`Tally` holds the verdicts of one finding's concatenations (a hit per ok verdict and the
item it is clustered by); :func:`tally_roles` counts them from the verdicts, :func:`skip_note`
says how many were too long for the judge and :func:`interval_row` is a row of the figure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from judgeprobe.core.evidence import Evidence, collect, judged, parts_id, request_text
from judgeprobe.core.plan import Role, Verdicts
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.probes.failures import failure_cause
from judgeprobe.stats import Estimate
from judgeprobe.stats.shared_items import shared_item_proportion


@dataclass(slots=True)
class Tally:
    """The judged concatenations of one finding: a hit per ok verdict, and its unit (item)."""

    statuses: dict[str, int]
    """Verdicts by status, ``missing`` included."""
    hits: list[bool] = field(default_factory=list)
    units: list[str] = field(default_factory=list)
    members: list[tuple[str, ...]] = field(default_factory=list)
    """The parts of each judged concatenation, aligned with ``hits``."""
    neutral: int = 0

    @property
    def total(self) -> int:
        return sum(self.statuses.values())

    @property
    def skipped(self) -> int:
        return self.statuses[VerdictStatus.SKIPPED.value]

    def row(self, name: str) -> dict[str, object]:
        return {
            "concatenations": self.total,
            "judged": len(self.hits),
            name: sum(self.hits),
            "neutral": self.neutral,
            "items": len(set(self.units)),
            **{k: v for k, v in self.statuses.items() if k != VerdictStatus.OK.value},
        }


def tally_roles(
    verdicts: Verdicts, roles: Iterable[tuple[Role, str, Sequence[str]]], target: str
) -> Tally:
    """Count the verdicts of ``roles`` (role, unit, parts); an ok one is a hit when decided
    ``target``."""
    roles = list(roles)
    tally = Tally(verdicts.tally(role for role, _, _ in roles))
    for role, unit, parts in roles:
        decision = verdicts.decision(role)
        if decision is None:
            continue
        tally.neutral += decision == "neutral"
        tally.hits.append(decision == target)
        tally.units.append(unit)
        tally.members.append(tuple(parts))
    return tally


def tally_failed(tally: Tally) -> str | None:
    """ "3 of 10 concatenation calls failed ..." for ``tally``, or None when none failed."""
    return failure_cause(tally.statuses, "concatenation calls")


def skip_note(notes: list[str], tally: Tally, where: str) -> None:
    if tally.skipped:
        notes.append(
            f"{where}: {tally.skipped} of {tally.total} concatenations exceed the judge's "
            "context window and were skipped (not truncated)"
        )


def interval_row(label: str, estimate: Estimate) -> dict[str, object]:
    """A row of the intervals figure; an undefined estimate is None (JSON has no NaN)."""
    values = estimate.to_dict()
    return {
        "label": label,
        "estimate": values["estimate"],
        "low": values["ci"]["low"],
        "high": values["ci"]["high"],
    }


Judged = Sequence[tuple[Role, str, Sequence[str]]]
"""Each concatenation of a finding: its role, its unit (the item it is clustered by) and its
part ids, in order."""


def concatenation_hits(
    verdicts: Verdicts, concatenations: Judged, target: str
) -> dict[str, tuple[bool, str]]:
    """Per concatenation judged ok (by :func:`~judgeprobe.core.evidence.parts_id`): whether it was
    decided ``target`` (a hit) and its unit, the per-concatenation values of the rate."""
    found: dict[str, tuple[bool, str]] = {}
    for role, unit, parts in concatenations:
        decision = verdicts.decision(role)
        if decision is not None:
            found[parts_id(parts)] = (decision == target, unit)
    return found


def hit_evidence(verdicts: Verdicts, concatenations: Judged, target: str, part: str) -> Evidence:
    """The concatenations decided ``target`` (a bypass, a false alarm): the verdict on the part
    they are clustered by, judged on its own (under the name ``part``), beside theirs."""
    return collect(
        (
            parts_id(parts),
            request_text(verdicts, role),
            [judged(verdicts, ("base", unit), part), judged(verdicts, role, "concatenation")],
        )
        for role, unit, parts in concatenations
        if verdicts.decision(role) == target
    )


def tally_rate(tally: Tally, empty: str, small: str | None = None, *, level: float) -> Estimate:
    """The share of hits, over the items the concatenations share; not assessable when a class
    the rate needs is too ``small`` (one positive item cannot stand for its class, one filler
    repeated is no sample of the negative one) or when nothing was judged (``empty`` says why).

    ``n`` is the number of distinct items behind the concatenations (the flagged parts and
    their fillers): an item that derails every concatenation it is in is one item of evidence,
    however many concatenations hold it
    (:func:`~judgeprobe.stats.shared_items.shared_item_proportion`); ``counts`` keeps the
    concatenations judged and the flagged (or first) parts."""
    units = len(set(tally.units))
    if small is not None and tally.hits:
        return Estimate.undefined(
            units, reason=f"{small} among the items the judge decides so on their own"
        )
    if not tally.hits:
        reason = empty if not tally.total else "no concatenation judged ok"
        return Estimate.undefined(0, reason=reason)
    estimate = shared_item_proportion(tally.hits, tally.members, confidence_level=level)
    counts = {**estimate.counts, "concatenations": len(tally.hits), "parts_flagged": units}
    return dataclasses.replace(estimate, counts=counts)
