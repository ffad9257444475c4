"""The design of the bypass probe: what is concatenated, where the positive part goes, its roles.

:class:`BypassDesign` is the probe's plan design (the items, where their classes come from and,
once the base decisions are known, the drawn concatenations); :func:`place` lays one positive part
out among its fillers, and :func:`bypass_role` and :func:`false_alarm_role` name the requests.
The drawing itself is :meth:`judgeprobe.probes.concatenation.bypass.BypassProbe.draw`.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from judgeprobe.core.plan import Role
from judgeprobe.data.items import PointwiseItem
from judgeprobe.probes.decisions import decide
from judgeprobe.rubrics import Rubric

Position = Literal["first", "middle", "last"]
ClassSource = Literal["auto", "human", "judge"]

POSITIONS: tuple[Position, ...] = get_args(Position)
CLASS_SOURCES: tuple[ClassSource, ...] = get_args(ClassSource)

POSITIVE, NEGATIVE = "positive", "negative"
EMPTY = "empty_response"
NO_SCORE = "no_base_score"


def place(positive: str, fillers: Sequence[str], position: Position) -> list[str]:
    """The part ids of one concatenation: ``positive`` put among ``fillers`` at ``position``.

    ``middle`` puts it after k // 2 of the k parts: with k = 3 one filler comes before it and one
    after, with k = 4 two before and one after; k = 2 has no middle (see :func:`has_position`).

    Examples
    --------
    >>> place("p", ["a", "b", "c"], "middle")
    ['a', 'b', 'p', 'c']
    >>> place("p", ["a"], "first"), place("p", ["a"], "last")
    (['p', 'a'], ['a', 'p'])
    """
    rest = list(fillers)
    if position == "first":
        return [positive, *rest]
    if position == "last":
        return [*rest, positive]
    at = (len(rest) + 1) // 2
    return [*rest[:at], positive, *rest[at:]]


def has_position(k: int, position: Position) -> bool:
    """Whether a k-concatenation has ``position`` distinct from first and last (middle: k >= 3)."""
    return position != "middle" or k >= 3


@dataclass(frozen=True, slots=True)
class BypassDesign:
    """The items, where their classes come from and, once drawn, the concatenations.

    The first stage has the items, the class source and the human label scale (``drawn``
    False); :meth:`~judgeprobe.probes.concatenation.bypass.BypassProbe.refine` adds the classes, the
    eligible
    items and the drawn concatenations, from the judge's base decisions.
    """

    items: tuple[PointwiseItem, ...]
    source: Literal["human", "judge"]
    human_scale: tuple[float, float] | None
    drawn: bool = False
    positives: tuple[str, ...] = ()
    """Positive items the judge decides positive on their own (sorted ids)."""
    negatives: tuple[str, ...] = ()
    """Negative items the judge decides negative on their own: the fillers (sorted ids)."""
    anchors: tuple[str, ...] = ()
    """The negative items whose all-negative concatenations measure false alarms."""
    fillers: Mapping[tuple[str, int], tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    """(positive id, k) -> the drawn ordered tuples of k - 1 negative ids."""
    mirror: Mapping[tuple[str, int], tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    """(anchor id, k) -> the drawn ordered tuples of k - 1 other negative ids."""
    conditioning: tuple[Mapping[str, str | int], ...] = ()
    classes: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def bypass_role(k: int, position: Position, positive: str, index: int) -> Role:
    """The role of ``positive`` at ``position`` among its ``index``-th drawn k - 1 fillers."""
    return ("bypass", k, position, positive, index)


def false_alarm_role(k: int, anchor: str, index: int) -> Role:
    """The role of ``anchor`` followed by its ``index``-th drawn k - 1 other negative items."""
    return ("false_alarm", k, anchor, index)


def judged_alone(rubric: Rubric, score: float | None) -> str:
    """The judge's decision on an item on its own, or ``no_base_score``."""
    return NO_SCORE if score is None else decide(rubric, score)


def conditioned_out(design: BypassDesign) -> int:
    """The positive items the judge does not decide positive on their own."""
    row = next(r for r in design.conditioning if r["class"] == POSITIVE)
    value = row["conditioned_out"]
    assert isinstance(value, int)
    return value


def id_code(item_id: str) -> int:
    """A stable integer for an item id, so each item's draws have their own seeded stream."""
    return zlib.crc32(item_id.encode("utf-8"))
