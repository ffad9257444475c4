"""Position swap: the same pairwise item with responses A and B exchanged.

A judge without position bias gives the swapped item the mirrored verdict (A <-> B, tie stays
tie). The swap is an involution: ``swap_positions(swap_positions(item)) == item``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from judgeprobe.data.items import PairwiseChoice, PairwiseItem, Vote

SWAPPED_KEY = "positions_swapped"
"""``metadata`` key set to True on a swapped item (and removed again by a second swap)."""

_MIRROR: dict[PairwiseChoice, PairwiseChoice] = {"A": "B", "B": "A", "tie": "tie"}


def swap_choice(choice: PairwiseChoice) -> PairwiseChoice:
    """The choice that names the same response after A and B were exchanged.

    Examples
    --------
    >>> swap_choice("A"), swap_choice("B"), swap_choice("tie")
    ('B', 'A', 'tie')
    """
    return _MIRROR[choice]


def swap_vote(vote: Vote) -> Vote:
    """``vote`` with its choice mirrored; rater and the ``inconsistent`` flag are kept."""
    return dataclasses.replace(vote, choice=swap_choice(vote.choice))


def swap_positions(item: PairwiseItem) -> PairwiseItem:
    """``item`` with responses, models, conversations, given lengths and every vote exchanged
    between A and B.

    The id is kept (the swapped item is the same comparison shown in the other order);
    ``metadata["positions_swapped"]`` marks the swapped copy.

    Examples
    --------
    >>> item = PairwiseItem("q1", "Say hi.", "hi", "hello there", human_votes=(Vote("B"),))
    >>> swapped = swap_positions(item)
    >>> swapped.response_a, swapped.human_votes[0].choice, swapped.metadata["positions_swapped"]
    ('hello there', 'A', True)
    >>> swap_positions(swapped) == item
    True
    """
    return dataclasses.replace(
        item,
        response_a=item.response_b,
        response_b=item.response_a,
        model_a=item.model_b,
        model_b=item.model_a,
        conversation_a=item.conversation_b,
        conversation_b=item.conversation_a,
        human_votes=tuple(swap_vote(v) for v in item.human_votes),
        judge_votes={
            judge: tuple(swap_vote(v) for v in votes) for judge, votes in item.judge_votes.items()
        },
        metadata=_toggle(item.metadata),
        lengths={unit: (b, a) for unit, (a, b) in item.lengths.items()},
    )


def _toggle(metadata: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(metadata)
    if out.pop(SWAPPED_KEY, False) is not True:
        out[SWAPPED_KEY] = True
    return out
