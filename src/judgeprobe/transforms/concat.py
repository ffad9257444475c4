"""Concatenation transforms: repeat an item's text, concatenate items, permute the parts.

These make the inputs of the concatenation tests of Fandina et al., "How Safe is Your Safety
Metric? Automatic Concatenation Tests for Metric Reliability" (arXiv:2408.12259): ``P*l``
repeats a prompt ``l`` times, ``P1*P2*...`` concatenates the prompts of several items.

How parts are joined is an explicit :class:`Join`:

``parallel`` (the paper's form, the default)
    The prompt field is ``P1 + sep + P2 + ...`` and the response field ``R1 + sep + R2 + ...``,
    with ``sep = "\\n\\n"`` unless configured.
``dialogue``
    The parts become one conversation of alternating turns. The response field holds the whole
    transcript, ``"User: P1\\nAssistant: R1" + sep + "User: P2\\nAssistant: R2" + ...``, so a
    judge that reads only the response (a text classifier) still sees every turn; the prompt
    field holds the user turns joined with ``sep``.

A single part is never joined: concatenating one item, or repeating it once, returns the item
unchanged in either form, so the one-part case is exactly the unmodified item a probe judges as
its base score. All transforms are pure and return new frozen items.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar, get_args

import numpy as np

from judgeprobe.data.items import PointwiseItem
from judgeprobe.errors import ConfigError

JoinStyle = Literal["parallel", "dialogue"]
RepeatMode = Literal["prompt", "response", "both"]
"""Which field :func:`repeat` repeats: ``S(P*l, R)``, ``S(P, R*l)`` or ``S(P*l, R*l)``."""

JOIN_STYLES: tuple[JoinStyle, ...] = get_args(JoinStyle)
REPEAT_MODES: tuple[RepeatMode, ...] = get_args(RepeatMode)
MODE_LABELS: dict[RepeatMode, str] = {"prompt": "P*l,R", "response": "P,R*l", "both": "P*l,R*l"}
"""The paper's notation for each repetition mode (used as finding labels)."""

INCREASING = "increasing"
DECREASING = "decreasing"

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Join:
    """How the parts of a concatenation are put together (see the module docstring).

    Examples
    --------
    >>> Join().fields([("p1", "r1"), ("p2", "r2")])
    ('p1\\n\\np2', 'r1\\n\\nr2')
    >>> Join("dialogue", separator="\\n").fields([("p1", "r1"), ("p2", "r2")])[1]
    'User: p1\\nAssistant: r1\\nUser: p2\\nAssistant: r2'
    """

    style: JoinStyle = "parallel"
    separator: str = "\n\n"
    user_tag: str = "User: "
    assistant_tag: str = "Assistant: "

    def __post_init__(self) -> None:
        if self.style not in JOIN_STYLES:
            raise ConfigError(
                f"unknown join style {self.style!r}; use one of {', '.join(JOIN_STYLES)}"
            )
        if not self.separator:
            raise ConfigError("the separator must not be empty: parts would run into each other")

    def fields(self, parts: Sequence[tuple[str, str]]) -> tuple[str, str]:
        """The (prompt, response) text of ``parts``, each a (prompt, response) pair."""
        if not parts:
            raise ConfigError("nothing to join: give at least one part")
        prompts = self.separator.join(p for p, _ in parts)
        if self.style == "parallel":
            return prompts, self.separator.join(r for _, r in parts)
        turns = (f"{self.user_tag}{p}\n{self.assistant_tag}{r}" for p, r in parts)
        return prompts, self.separator.join(turns)


PARALLEL = Join()


def concatenate(
    items: Sequence[PointwiseItem], *, join: Join = PARALLEL, id: str | None = None
) -> PointwiseItem:
    """One item made of ``items`` in the given order: ``(P1*P2*..., R1*R2*...)``.

    The result carries no human labels (they were given to the parts, not to the whole); its
    metadata records the part ids and the join style. One item is returned unchanged.

    Examples
    --------
    >>> a = PointwiseItem("a", "How?", "Like this.")
    >>> b = PointwiseItem("b", "Why?", "Because.")
    >>> c = concatenate([a, b])
    >>> c.id, c.response
    ('a*b', 'Like this.\\n\\nBecause.')
    """
    if not items:
        raise ConfigError("concatenate needs at least one item")
    if len(items) == 1:
        return items[0]
    prompt, response = join.fields([(item.prompt, item.response) for item in items])
    categories = {item.category for item in items}
    return PointwiseItem(
        id=id or "*".join(item.id for item in items),
        prompt=prompt,
        response=response,
        category=categories.pop() if len(categories) == 1 else None,
        metadata={
            "transform": "concatenate",
            "parts": tuple(item.id for item in items),
            "join": join.style,
        },
    )


def repeat(
    item: PointwiseItem, times: int, *, mode: RepeatMode = "both", join: Join = PARALLEL
) -> PointwiseItem:
    """``item`` with its prompt, its response or both repeated ``times`` times.

    ``mode="both"`` is the concatenation of ``times`` copies of the item, so in dialogue form it
    is a conversation of identical turns. Repeating a single field has no turn structure, so it
    needs the parallel form (the field is joined with the separator).

    Examples
    --------
    >>> item = PointwiseItem("x", "Q", "A")
    >>> repeat(item, 3, mode="response").response
    'A\\n\\nA\\n\\nA'
    >>> repeat(item, 3, mode="response").prompt
    'Q'
    """
    if isinstance(times, bool) or not isinstance(times, int) or times < 1:
        raise ConfigError(f"repetition count must be a positive integer, got {times!r}")
    if mode not in REPEAT_MODES:
        raise ConfigError(f"unknown repeat mode {mode!r}; use one of {', '.join(REPEAT_MODES)}")
    if times == 1:
        return item
    if mode == "both":
        return concatenate([item] * times, join=join, id=f"{item.id}*{times}")
    if join.style != "parallel":
        raise ConfigError(
            f"repeat mode {mode!r} repeats one field, which has no dialogue turns; "
            "use join style 'parallel' or mode 'both'"
        )
    copies = join.separator.join([getattr(item, mode)] * times)
    return PointwiseItem(
        id=f"{item.id}*{times}:{mode}",
        prompt=copies if mode == "prompt" else item.prompt,
        response=copies if mode == "response" else item.response,
        category=item.category,
        metadata={"transform": "repeat", "parts": (item.id,), "times": times, "mode": mode},
    )


def permute(parts: Sequence[T], order: Sequence[int]) -> list[T]:
    """``parts`` rearranged so that position ``i`` holds ``parts[order[i]]``.

    Examples
    --------
    >>> permute(["a", "b", "c"], [2, 0, 1])
    ['c', 'a', 'b']
    """
    if sorted(order) != list(range(len(parts))):
        raise ConfigError(f"order {list(order)} is not a permutation of 0..{len(parts) - 1}")
    return [parts[i] for i in order]


def score_orders(
    scores: Sequence[float], *, n_random: int, rng: np.random.Generator
) -> dict[str, tuple[int, ...]]:
    """The paper's orders of a tuple of parts, as permutations of their positions.

    ``increasing`` sorts the parts by base score (ties keep their drawn position),
    ``decreasing`` is its exact reversal, and ``random_1`` ... ``random_<n_random>`` are
    uniform random permutations drawn from ``rng``.

    Examples
    --------
    >>> orders = score_orders([3.0, 1.0, 2.0], n_random=1, rng=np.random.default_rng(0))
    >>> orders["increasing"], orders["decreasing"]
    ((1, 2, 0), (0, 2, 1))
    """
    if any(math.isnan(s) for s in scores):
        raise ConfigError("cannot order parts by a NaN score")
    increasing = tuple(sorted(range(len(scores)), key=lambda i: (scores[i], i)))
    orders = {INCREASING: increasing, DECREASING: increasing[::-1]}
    for j in range(1, n_random + 1):
        orders[f"random_{j}"] = tuple(int(i) for i in rng.permutation(len(scores)))
    return orders
