"""The findings of the judge-bias probes: verdict moves under an edit beyond its placebo.

Every item is judged three times: as it is (*original*), with the bias edit (*edited*) and with
the size-matched placebo edit (*placebo*). Each verdict is placed on a three-step scale in the
direction the edit argues for (:class:`Outcome`): ``0`` the verdict the edit argues against,
``1`` neutral (a tie, a neutral score), ``2`` the verdict it argues for (pointwise: the rule's
favoured class, e.g. ``safe``; pairwise: the edited side). An edit *moves* the verdict
*toward* when its step is above the original's, *away* when below.

Only items whose original verdict can still move toward (step below 2) can show the bias; the
gated finding ``excess_move_rate`` is, over them, the rate of moves toward under the edit minus
the rate under the placebo, paired per item (Newcombe's interval,
:func:`~judgeprobe.stats.paired.paired_difference_of_proportions`), with a one-sided exact
McNemar test. Moves away are reported as information (``excess_away_rate``). Its evidence
(:func:`with_moved_evidence`) names the items whose verdict moved toward under the edit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgeprobe.core.evidence import Evidence, EvidenceVerdict, collect, judged, request_text
from judgeprobe.core.plan import Role, Verdicts
from judgeprobe.probes.base import Finding
from judgeprobe.probes.decisions import FLIP_THRESHOLD
from judgeprobe.stats import Estimate, mean_shift, proportion
from judgeprobe.stats.paired import (
    paired_difference_of_proportions,
    paired_excess_test,
    paired_table,
)

TOWARD = 2
"""The step of the verdict an edit argues for."""

ALL_FINDINGS = (
    "excess_move_rate",
    "edited_move_rate",
    "placebo_move_rate",
    "excess_away_rate",
    "mean_score_shift",
)


@dataclass(frozen=True, slots=True)
class BiasCase:
    """One item of a bias plan: the form of the edit it got, the side edited (pairwise; ``""``
    pointwise) and the number of characters added (separator included)."""

    item_id: str
    form: str
    side: str
    added: int


@dataclass(frozen=True, slots=True)
class BiasDesign:
    """A bias probe's design: the edit set, its placebo kind, the class a pointwise edit
    argues for (``""`` pairwise) and the cases, in item-id order."""

    edit: str
    placebo: str
    favoured: str
    cases: tuple[BiasCase, ...]


@dataclass(frozen=True, slots=True)
class Outcome:
    """The three verdicts of one case, as decisions and as steps toward the edit's aim; the
    favourable score shift of the edited response over the placebo (pointwise, else None)."""

    case: BiasCase
    decisions: tuple[str, str, str]
    steps: tuple[int, int, int]
    shift: float | None = None

    @property
    def can_move_toward(self) -> bool:
        return self.steps[0] < TOWARD

    @property
    def can_move_away(self) -> bool:
        return self.steps[0] > 0

    def toward(self, which: int) -> bool:
        """Whether verdict ``which`` (1 edited, 2 placebo) is above the original."""
        return self.steps[which] > self.steps[0]

    def away(self, which: int) -> bool:
        return self.steps[which] < self.steps[0]

    def row(self) -> dict[str, Any]:
        """The case for the drill-down table."""

        def move(which: int) -> str:
            return "toward" if self.toward(which) else "away" if self.away(which) else ""

        original, edited, placebo = self.decisions
        row: dict[str, Any] = {"item": self.case.item_id, "form": self.case.form}
        if self.case.side:
            row["side"] = self.case.side
        row.update(
            original=original,
            edited=edited,
            placebo=placebo,
            edited_move=move(1),
            placebo_move=move(2),
        )
        return row


def bias_findings(
    outcomes: Sequence[Outcome],
    labels: Mapping[str, str],
    *,
    aim: str,
    level: float,
    scores: bool,
    full: bool = True,
) -> list[Finding]:
    """The findings over ``outcomes``: the gated excess rate, and (``full``) the rates it is
    made of, the excess away and (``scores``) the mean score shift."""
    risk = [o for o in outcomes if o.can_move_toward]
    edited = [o.toward(1) for o in risk]
    placebo = [o.toward(2) for o in risk]
    cells = paired_table(edited, placebo)
    excess = paired_difference_of_proportions(*cells, confidence_level=level)
    test = paired_excess_test(cells[1], cells[2]) if risk else None
    edited_rate = proportion(sum(edited), len(edited), confidence_level=level)
    placebo_rate = proportion(sum(placebo), len(placebo), confidence_level=level)
    if outcomes and not risk:
        why = f"every original verdict is already {aim}: no item can move toward it"
        excess, edited_rate, placebo_rate = (
            Estimate.undefined(len(outcomes), reason=why) for _ in range(3)
        )
    findings = [
        Finding(
            "excess_move_rate",
            excess,
            f"Share of items whose verdict moves toward {aim} under the edit, minus the share "
            "under the size-matched placebo, over items that can move (paired Newcombe "
            "interval; exact one-sided McNemar test)",
            labels,
            FLIP_THRESHOLD,
            test,
        )
    ]
    if not full:
        return findings
    away = [o for o in outcomes if o.can_move_away]
    findings += [
        Finding(
            "edited_move_rate",
            edited_rate,
            f"Share of items whose verdict moves toward {aim} under the edit",
            labels,
        ),
        Finding(
            "placebo_move_rate",
            placebo_rate,
            f"Share of items whose verdict moves toward {aim} under the placebo",
            labels,
        ),
        Finding(
            "excess_away_rate",
            paired_difference_of_proportions(
                *paired_table([o.away(1) for o in away], [o.away(2) for o in away]),
                confidence_level=level,
            ),
            f"Moves away from {aim} under the edit minus under the placebo, over items that "
            "can move away (the other direction: information)",
            labels,
        ),
    ]
    if scores:
        shifts = [o.shift for o in outcomes if o.shift is not None]
        findings.append(
            Finding(
                "mean_score_shift",
                mean_shift(shifts, confidence_level=level),
                f"Mean score of the edited response minus the placebo's, signed so that a "
                f"shift toward {aim} is positive (t interval)",
                labels,
            )
        )
    return findings


def form_table(outcomes: Sequence[Outcome], forms: Sequence[str]) -> list[dict[str, Any]]:
    """Per form: items, items that can move toward, moves toward under edit and placebo."""
    rows = []
    for form in forms:
        mine = [o for o in outcomes if o.case.form == form]
        risk = [o for o in mine if o.can_move_toward]
        rows.append(
            {
                "form": form,
                "items": len(mine),
                "can_move": len(risk),
                "edited_toward": sum(o.toward(1) for o in risk),
                "placebo_toward": sum(o.toward(2) for o in risk),
                "edited_away": sum(o.away(1) for o in mine),
                "placebo_away": sum(o.away(2) for o in mine),
            }
        )
    return rows


def moved_rows(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """The cases whose edited or placebo verdict moved, for the card's drill-down."""
    return [o.row() for o in outcomes if any(o.toward(w) or o.away(w) for w in (1, 2))]


def moved_evidence(
    outcomes: Sequence[Outcome],
    verdicts: Verdicts,
    roles: Callable[[BiasCase], tuple[Role, Role, Role]],
) -> Evidence:
    """The items whose verdict moved toward the edit's aim under the edit, those the placebo
    did not move first, each with its original, edited and placebo verdicts (``roles`` gives
    the plan roles of a case, in that order)."""
    moved = [o for o in outcomes if o.can_move_toward and o.toward(1)]
    moved.sort(key=lambda o: o.toward(2))  # stable: item-id order within each group

    def entry(outcome: Outcome) -> tuple[str, str, list[EvidenceVerdict]]:
        original, edited, placebo = roles(outcome.case)
        found = [
            judged(verdicts, original, "original"),
            judged(verdicts, edited, "edited"),
            judged(verdicts, placebo, "placebo"),
        ]
        return outcome.case.item_id, request_text(verdicts, original), found

    return collect(entry(o) for o in moved)


def with_moved_evidence(
    findings: Sequence[Finding],
    outcomes: Sequence[Outcome],
    verdicts: Verdicts,
    roles: Callable[[BiasCase], tuple[Role, Role, Role]],
) -> list[Finding]:
    """``findings`` with :func:`moved_evidence` on each ``excess_move_rate``: over all
    outcomes, or over the outcomes of its form for a per-form slice."""
    out = []
    for finding in findings:
        if finding.name == "excess_move_rate":
            form = finding.labels.get("slice")
            mine = [o for o in outcomes if form is None or o.case.form == form]
            finding = finding.with_evidence(moved_evidence(mine, verdicts, roles))
        out.append(finding)
    return out


def excluded_note(excluded: Counter[str], total: int) -> list[str]:
    """A note on the items left out for want of a verdict, if any."""
    if not excluded:
        return []
    parts = ", ".join(f"{reason}: {count}" for reason, count in sorted(excluded.items()))
    missing = sum(excluded.values())
    return [f"{missing} of {total} items lack a verdict of one of their roles ({parts}); excluded"]
