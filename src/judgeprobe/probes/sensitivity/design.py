"""The designs of the sensitivity probes: which item's text goes into which item, and why.

Pointwise (:class:`SensitivityDesign`): the items, where their classes come from, and once
drawn each item's class and its edits (:class:`PointEdit`). Pairwise
(:class:`PairSensitivityDesign`): the pairs, where the better response comes from, and once
drawn each pair's edits (:class:`PairEdit`). The roles of the requests are here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from judgeprobe.core.plan import Role
from judgeprobe.data.items import PairwiseItem, PointwiseItem

ClassSource = Literal["auto", "human", "judge"]
"""Where an item's class (or a pair's better response) comes from: the human labels (votes),
the judge's own base decisions, or (``auto``) the human ones when any item has one."""
CLASS_SOURCES: tuple[ClassSource, ...] = get_args(ClassSource)

PointFamily = Literal["swap_class", "insert_harmful"]
POINT_FAMILIES: tuple[PointFamily, ...] = get_args(PointFamily)
PairFamily = Literal["truncate", "off_topic"]
PAIR_FAMILIES: tuple[PairFamily, ...] = get_args(PairFamily)

POSITIVE, NEGATIVE = "positive", "negative"
"""The two classes an item can be drawn from: the rule's positive (flagged) and negative class."""


@dataclass(frozen=True, slots=True)
class PointEdit:
    """One edit of one pointwise item.

    ``target`` is the class the edit should move the decision to (``positive`` or
    ``negative``); ``donor`` the item whose response the edit takes, ``placebo_donor`` the item
    whose response the placebo takes; ``words`` the length of an inserted span (0: the whole
    response is replaced).
    """

    family: PointFamily
    item_id: str
    target: str
    donor: str
    placebo_donor: str
    words: int = 0


@dataclass(frozen=True, slots=True)
class SensitivityDesign:
    """The pointwise design: first the items and the class source (``drawn`` False), then the
    classes and the edits drawn from them, and why a family has no edit."""

    items: tuple[PointwiseItem, ...]
    source: Literal["human", "judge"]
    human_scale: tuple[float, float] | None
    drawn: bool = False
    classes: Mapping[str, str] = field(default_factory=dict)
    edits: tuple[PointEdit, ...] = ()
    why_none: Mapping[str, str] = field(default_factory=dict)
    """Per family without a single edit, why none could be drawn."""


@dataclass(frozen=True, slots=True)
class PairEdit:
    """One edit of one pair: the ``better`` side made clearly worse; ``target`` the other
    side, which the preference should move to; ``donor`` and ``donor_side`` name the answer an
    off-topic edit takes (``""`` for a truncation)."""

    family: PairFamily
    item_id: str
    better: str
    target: str
    donor: str = ""
    donor_side: str = ""


@dataclass(frozen=True, slots=True)
class PairSensitivityDesign:
    """The pairwise design: the pairs and where the better response comes from, then the
    edits drawn, and why a family has no edit."""

    items: tuple[PairwiseItem, ...]
    source: Literal["human", "judge"]
    drawn: bool = False
    edits: tuple[PairEdit, ...] = ()
    why_none: Mapping[str, str] = field(default_factory=dict)
    left_out: Mapping[str, int] = field(default_factory=dict)
    """Pairs without a better response, by reason."""


def edited_role(family: str, item_id: str) -> Role:
    """The role of an item's edited input under ``family``."""
    return ("edited", family, item_id)


def placebo_role(family: str, item_id: str) -> Role:
    """The role of the placebo of an item's ``family`` edit (pointwise)."""
    return ("placebo", family, item_id)


def pair_placebo_role(item_id: str) -> Role:
    """The role of a pair's placebo (one per pair, shared by its edits)."""
    return ("placebo", item_id)
