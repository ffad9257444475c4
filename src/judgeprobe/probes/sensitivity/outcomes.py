"""What the sensitivity probes count: one meaning-changing edit, its placebo, and the verdicts.

Every edit has a *target*: the decision the edit should move the verdict to (pointwise: a
class of the rubric's rule, e.g. ``toxic``; pairwise: the side that was not made worse). An
edit counts when the judge's decision on the item as it is (*base*) is not already the target
(it *can move*); it *moved* when the decision on the edited input is the target. Its placebo
(an edit of the same size that keeps the meaning) is read the same way: it moved when the
placebo's decision is the target. Both are read on the same items, so they pair.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from judgeprobe.core.plan import Role, Verdicts


@dataclass(frozen=True, slots=True)
class Outcome:
    """The base, edited and placebo decisions of one edit of one item, and its target."""

    family: str
    item_id: str
    target: str
    decisions: tuple[str, str, str]

    @property
    def can_move(self) -> bool:
        """Whether the base decision is not already the target."""
        return self.decisions[0] != self.target

    @property
    def moved(self) -> bool:
        """Whether the edited input's decision is the target."""
        return self.decisions[1] == self.target

    @property
    def placebo_moved(self) -> bool:
        """Whether the placebo's decision is the target."""
        return self.decisions[2] == self.target

    def row(self) -> dict[str, Any]:
        base, edited, placebo = self.decisions
        return {
            "edit": self.family,
            "item": self.item_id,
            "target": self.target,
            "base": base,
            "edited": edited,
            "placebo": placebo,
        }


RolesOf = Callable[[str, str], tuple[Role, Role, Role]]
"""The base, edited and placebo roles of an edit (family, item id)."""


def read_outcomes(
    edits: Sequence[tuple[str, str, str]],
    verdicts: Verdicts,
    roles: RolesOf,
    decision: Callable[[Role], str | None],
) -> tuple[list[Outcome], Counter[str]]:
    """The outcome of each edit (family, item id, target) whose three verdicts give a
    decision; the others counted by family and the first role without one."""
    outcomes: list[Outcome] = []
    excluded: Counter[str] = Counter()
    for family, item_id, target in edits:
        three = roles(family, item_id)
        decisions = [decision(role) for role in three]
        missing = next((r for r, d in zip(three, decisions, strict=True) if d is None), None)
        if missing is not None:
            excluded[f"{family}: {missing[0]} {verdicts.status(missing)}"] += 1
            continue
        named = (str(decisions[0]), str(decisions[1]), str(decisions[2]))
        outcomes.append(Outcome(family, item_id, target, named))
    return outcomes, excluded


def edit_table(outcomes: Sequence[Outcome], families: Sequence[str]) -> list[dict[str, Any]]:
    """Per edit family: edits read, those that could move, moved, and moved by the placebo."""
    rows = []
    for family in families:
        mine = [o for o in outcomes if o.family == family]
        movable = [o for o in mine if o.can_move]
        rows.append(
            {
                "edit": family,
                "edits": len(mine),
                "already_at_target": len(mine) - len(movable),
                "can_move": len(movable),
                "moved": sum(o.moved for o in movable),
                "placebo_moved": sum(o.placebo_moved for o in movable),
            }
        )
    return rows


def unmoved_rows(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """The edits that could move and did not: where the judge missed the change."""
    return [o.row() for o in outcomes if o.can_move and not o.moved]


def excluded_note(excluded: Counter[str], total: int) -> list[str]:
    """A note on the edits left out for want of a verdict, if any."""
    if not excluded:
        return []
    parts = ", ".join(f"{reason}: {count}" for reason, count in sorted(excluded.items()))
    return [
        f"{sum(excluded.values())} of {total} edits lack a decision on one of their inputs "
        f"({parts}); excluded"
    ]
