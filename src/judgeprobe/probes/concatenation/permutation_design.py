"""The design of the permutation probe: the balanced sample, the k-tuples and their orders."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from judgeprobe.core.plan import Role
from judgeprobe.data.items import PointwiseItem
from judgeprobe.rubrics import Decision
from judgeprobe.transforms.concat import permute


@dataclass(frozen=True, slots=True)
class KTuple:
    """One drawn k-tuple: its part ids and the orders it is judged in (positions of parts)."""

    parts: tuple[str, ...]
    orders: Mapping[str, tuple[int, ...]]

    def ordered(self, order: str) -> list[str]:
        return permute(self.parts, self.orders[order])


@dataclass(frozen=True, slots=True)
class Level:
    """One level of the balanced sample: how many items it has, wants and gave."""

    level: str
    available: int
    wanted: int
    sampled: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class PermutationDesign:
    """The items and, once drawn from the base scores, the balanced sample and the tuples.

    The first stage has only the items (``drawn`` False); :meth:`PermutationProbe.refine`
    adds the levels of the sample, its items (``pool``), the tuples per k (in the order of
    ``ks``) with the orders each is judged in, and the notes the drawing made.
    """

    items: tuple[PointwiseItem, ...]
    drawn: bool = False
    levels: tuple[Level, ...] = ()
    pool: tuple[str, ...] = ()
    tuples: Mapping[int, tuple[KTuple, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Judged:
    """The ok verdict of one order of a tuple: its score and its decision."""

    score: float
    decision: Decision


def order_role(k: int, index: int, order: str) -> Role:
    """The role of the ``index``-th k-tuple concatenated in ``order``."""
    return ("concat", k, index, order)
