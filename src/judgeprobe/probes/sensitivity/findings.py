"""The findings of the sensitivity probes, and their values per unit.

Per edit family (label ``edit``), over the edits that can move (the base decision is not
already the target):

- ``sensitivity_rate`` (gated, on the low side): the share the edit moves to the target, with a
  Wilson interval; one edit per item and family, so n counts items (pairs);
- ``placebo_move_rate`` (information): the share the placebo moves to the target;
- ``sensitivity_minus_placebo`` (information): the first minus the second, paired per item
  (Newcombe's interval for paired proportions).

Over every family, ``sensitivity_rate`` without labels (gated; pointwise) is the share of all
edits that moved, with a cluster-bootstrap interval over items (an item carries one edit per
family it takes part in), n counting items.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from judgeprobe.core.evidence import Entry, Evidence, collect, judged, request_text
from judgeprobe.core.plan import Verdicts
from judgeprobe.probes.base import Finding, Threshold
from judgeprobe.probes.sensitivity.outcomes import Outcome, RolesOf
from judgeprobe.probes.units import (
    FindingKey,
    UnitValues,
    binary_units,
    finding_key,
    mean_difference,
    pooled_ratio,
)
from judgeprobe.stats import Estimate, clustered_proportion, proportion
from judgeprobe.stats.paired import paired_difference_of_proportions, paired_table

SENSITIVITY_THRESHOLD = Threshold(warn=0.8, fail=0.6, higher_is_worse=False)
"""A judge that follows fewer than 80 % (warn) or 60 % (fail) of clearly meaning-changing
edits is not shown to read what it judges."""

FINDINGS = ("sensitivity_rate", "placebo_move_rate", "sensitivity_minus_placebo")


def _movable(outcomes: Sequence[Outcome], family: str | None = None) -> list[Outcome]:
    return [o for o in outcomes if o.can_move and (family is None or o.family == family)]


def family_findings(
    outcomes: Sequence[Outcome], family: str, *, level: float, why: str | None, target: str
) -> list[Finding]:
    """The three findings of one edit family; ``why`` says why none could be drawn (no edit
    then means not assessable, with that reason)."""
    mine = _movable(outcomes, family)
    moved = [o.moved for o in mine]
    placebo = [o.placebo_moved for o in mine]
    rate = proportion(sum(moved), len(moved), confidence_level=level)
    placebo_rate = proportion(sum(placebo), len(placebo), confidence_level=level)
    excess = paired_difference_of_proportions(*paired_table(moved, placebo), confidence_level=level)
    if not mine:
        read = sum(o.family == family for o in outcomes)
        reason = why or (
            f"the judge already decides every one of the {read} edited items as the edit's "
            "target: no edit can move it"
            if read
            else "no edit of this family was judged"
        )
        rate, placebo_rate, excess = (Estimate.undefined(read, reason=reason) for _ in range(3))
    labels = {"edit": family}
    return [
        Finding(
            "sensitivity_rate",
            rate,
            f"Share of {family} edits that move the decision to {target}, over the items whose "
            "decision could move (Wilson interval); a judge that does not follow a meaning "
            "change is not shown to read what it judges",
            labels,
            SENSITIVITY_THRESHOLD,
        ),
        Finding(
            "placebo_move_rate",
            placebo_rate,
            f"Share of the same items whose decision the {family} placebo (same size, same "
            "meaning) moves to the same target",
            labels,
        ),
        Finding(
            "sensitivity_minus_placebo",
            excess,
            f"sensitivity_rate minus placebo_move_rate of {family}, paired per item (Newcombe "
            "interval)",
            labels,
        ),
    ]


def overall_rate(
    outcomes: Sequence[Outcome],
    *,
    level: float,
    seed: int,
    n_resamples: int,
    why: str | None,
) -> Finding:
    """``sensitivity_rate`` over every family: the share of all edits that moved, clustered by
    item (n = items)."""
    mine = _movable(outcomes)
    items = sorted({o.item_id for o in mine})
    estimate = clustered_proportion(
        [o.moved for o in mine],
        [o.item_id for o in mine],
        confidence_level=level,
        seed=seed,
        n_resamples=n_resamples,
    )
    if mine:
        counts = {**estimate.counts, "edits": len(mine), "items": len(items)}
        estimate = dataclasses.replace(estimate, n=len(items), counts=counts)
    else:
        estimate = Estimate.undefined(0, reason=why or "no edit could move the decision")
    return Finding(
        "sensitivity_rate",
        estimate,
        "Share of all meaning-changing edits that move the decision the expected way, over "
        "the items whose decision could move (cluster bootstrap over items; n counts items)",
        {},
        SENSITIVITY_THRESHOLD,
    )


def unmoved_evidence(outcomes: Sequence[Outcome], verdicts: Verdicts, roles: RolesOf) -> Evidence:
    """The edits that could move and did not, each with its base, edited and placebo verdict."""
    missed = [o for o in outcomes if o.can_move and not o.moved]

    def entry(o: Outcome) -> Entry:
        base, edited, placebo = roles(o.family, o.item_id)
        found = [
            judged(verdicts, base, "base"),
            judged(verdicts, edited, "edited"),
            judged(verdicts, placebo, "placebo"),
        ]
        return o.item_id, request_text(verdicts, edited), found

    return collect(entry(o) for o in missed)


def with_evidence(
    findings: Sequence[Finding], outcomes: Sequence[Outcome], verdicts: Verdicts, roles: RolesOf
) -> list[Finding]:
    """``findings`` with :func:`unmoved_evidence` on each ``sensitivity_rate`` (its family's
    edits, or all of them)."""
    out = []
    for finding in findings:
        if finding.name == "sensitivity_rate" and finding.estimate.defined:
            family = finding.labels.get("edit")
            mine = [o for o in outcomes if family is None or o.family == family]
            finding = finding.with_evidence(unmoved_evidence(mine, verdicts, roles))
        out.append(finding)
    return out


def sensitivity_units(
    outcomes: Sequence[Outcome], families: Sequence[str], *, overall: bool
) -> dict[FindingKey, UnitValues]:
    """Each finding's values per item: per family a 0/1 move (and the placebo's), paired for
    the difference; over all families (``overall``) each item's moves and edits, pooled."""
    found: dict[FindingKey, UnitValues] = {}
    for family in families:
        mine = _movable(outcomes, family)
        labels: Mapping[str, str] = {"edit": family}
        found[finding_key("sensitivity_rate", labels)] = binary_units(
            {o.item_id: o.moved for o in mine}
        )
        found[finding_key("placebo_move_rate", labels)] = binary_units(
            {o.item_id: o.placebo_moved for o in mine}
        )
        found[finding_key("sensitivity_minus_placebo", labels)] = UnitValues(
            {o.item_id: (float(o.moved), float(o.placebo_moved)) for o in mine}, mean_difference
        )
    if overall:
        rows: dict[str, tuple[float, float]] = {}
        for o in _movable(outcomes):
            moved, edits = rows.get(o.item_id, (0.0, 0.0))
            rows[o.item_id] = (moved + o.moved, edits + 1)
        found[finding_key("sensitivity_rate", {})] = UnitValues(rows, pooled_ratio)
    return found
