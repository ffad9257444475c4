"""Items: the units of data a judge is audited on.

A :class:`PointwiseItem` is one (prompt, response) with zero or more human labels; a
:class:`PairwiseItem` is one prompt with two responses and the human (and recorded judge) votes
on which is better. Items are frozen: transforms make new items, never edit old ones.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from judgeprobe.errors import DataError

PairwiseChoice = Literal["A", "B", "tie"]
"""A pairwise vote: response A is better, response B is better, or neither."""

PAIRWISE_CHOICES: tuple[PairwiseChoice, ...] = ("A", "B", "tie")


@dataclass(frozen=True, slots=True)
class HumanLabel:
    """One rater's label of a pointwise item (a score on the dataset's scale)."""

    value: float
    rater: str | None = None


@dataclass(frozen=True, slots=True)
class Vote:
    """One vote on a pairwise item, from a human rater or a recorded judge."""

    choice: PairwiseChoice
    rater: str | None = None
    inconsistent: bool = False
    """True for MT-Bench's ``tie (inconsistent)``: the judge disagreed with itself on swap."""


@dataclass(frozen=True, slots=True)
class PointwiseItem:
    """One (prompt, response) to be scored, with optional reference and human labels."""

    id: str
    prompt: str
    response: str
    reference: str | None = None
    labels: tuple[HumanLabel, ...] = ()
    category: str | None = None
    item_type: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def human_scores(self) -> tuple[float, ...]:
        """The raters' label values, in rater order."""
        return tuple(label.value for label in self.labels)

    @property
    def human_mean(self) -> float | None:
        """Mean human label, or None when unlabeled."""
        scores = self.human_scores
        return sum(scores) / len(scores) if scores else None

    @property
    def unanimous(self) -> bool | None:
        """True when all raters gave the same label; None with fewer than two raters."""
        scores = self.human_scores
        return len(set(scores)) == 1 if len(scores) >= 2 else None


@dataclass(frozen=True, slots=True)
class PairwiseItem:
    """One prompt with two responses and the votes on which is better.

    ``conversation_a``/``conversation_b`` keep the full multi-turn dialogue when the source has one
    (MT-Bench); ``prompt``/``response_a``/``response_b`` then hold the turn under judgment.

    A source may publish votes and response lengths without the texts (MT-Bench's released
    votes): such an item has ``has_texts=False``, empty ``prompt``/``response_a``/``response_b``
    placeholders and its lengths in ``lengths``. Whatever needs the texts (a judge request, a
    length unit not in ``lengths``) raises instead of using the placeholders.
    """

    id: str
    prompt: str
    response_a: str
    response_b: str
    human_votes: tuple[Vote, ...] = ()
    judge_votes: Mapping[str, tuple[Vote, ...]] = field(default_factory=dict)
    turn: int = 1
    question_id: str | None = None
    model_a: str | None = None
    model_b: str | None = None
    category: str | None = None
    conversation_a: tuple[Mapping[str, str], ...] = ()
    conversation_b: tuple[Mapping[str, str], ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    lengths: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """Lengths of response A and response B given as data, by unit (``{"words": (540, 411)}``);
    they take precedence over lengths measured from the texts."""
    has_texts: bool = True
    """False when the source has no texts: the text fields are empty placeholders."""

    def human_majority(self, *, include_ties: bool = True) -> PairwiseChoice | None:
        """The strict majority of human votes, or None when there is none.

        With ``include_ties=False`` tie votes are dropped before counting.
        """
        return strict_majority(self.human_votes, include_ties=include_ties)

    @property
    def cluster(self) -> str:
        """The unit that CIs cluster on: the question when known, else the item."""
        return self.question_id if self.question_id is not None else self.id


def strict_majority(votes: Sequence[Vote], *, include_ties: bool = True) -> PairwiseChoice | None:
    """The choice held by more than half of ``votes``; None without one."""
    choices = [v.choice for v in votes if include_ties or v.choice != "tie"]
    if not choices:
        return None
    choice, count = Counter(choices).most_common(1)[0]
    return choice if count * 2 > len(choices) else None


Item = PointwiseItem | PairwiseItem


def require_texts(item: PairwiseItem, purpose: str) -> None:
    """Raise :class:`~judgeprobe.errors.DataError` when ``item`` has no texts for ``purpose``."""
    if not item.has_texts:
        given = ", ".join(sorted(item.lengths)) or "none"
        raise DataError(
            f"item {item.id!r} has no prompt or response texts (its source gives only the "
            f"votes and the response lengths, in {given}); {purpose} needs the texts"
        )


def item_fields(item: Item) -> dict[str, str]:
    """The fields a rubric template can read from ``item``.

    Pointwise: ``prompt``, ``response`` and, when present, ``reference``; pairwise: ``prompt``,
    ``response_a``, ``response_b``. A request keeps only the ones its rubric uses. A pairwise
    item without texts (``has_texts=False``) raises :class:`~judgeprobe.errors.DataError`.
    """
    if isinstance(item, PairwiseItem):
        require_texts(item, "a judge request")
        return {"prompt": item.prompt, "response_a": item.response_a, "response_b": item.response_b}
    fields = {"prompt": item.prompt, "response": item.response}
    if item.reference is not None:
        fields["reference"] = item.reference
    return fields
