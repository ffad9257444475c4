"""Turning the many spellings of a pairwise verdict into a :class:`Vote`."""

from __future__ import annotations

from typing import Any

from judgeprobe.data._records import RowError, is_missing
from judgeprobe.data.items import PairwiseChoice, Vote

_CHOICES: dict[str, PairwiseChoice] = {
    "a": "A",
    "b": "B",
    "tie": "tie",
    "1": "A",
    "2": "B",
    "0": "tie",
    "model_a": "A",
    "model_b": "B",
    "response_a": "A",
    "response_b": "B",
    "a>b": "A",
    "b>a": "B",
    "a=b": "tie",
    "draw": "tie",
    "c": "tie",  # FastChat's [[C]]
}

_SWAPPED: dict[PairwiseChoice, PairwiseChoice] = {"A": "B", "B": "A", "tie": "tie"}

INCONSISTENT_TIE = "tie (inconsistent)"
"""MT-Bench's verdict when GPT-4 chose differently after the two answers were swapped."""


def parse_vote(
    value: Any,
    column: str,
    *,
    rater: str | None = None,
    model_a: str | None = None,
    model_b: str | None = None,
) -> Vote:
    """Parse one pairwise verdict.

    Accepts ``A``/``B``/``tie``, ``1``/``2``/``0`` (ints too), ``model_a``/``model_b``,
    ``A>B``/``B>A``, ``tie (inconsistent)`` (a tie flagged ``inconsistent``) and, when the pair's
    model names are known, the winning model's name. Raises :class:`RowError` otherwise.
    """
    if is_missing(value):
        raise RowError("missing vote", column=column)
    if isinstance(value, bool):
        raise RowError(f"vote {value!r} is not a pairwise choice", column=column)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    key = text.lower()
    if key == INCONSISTENT_TIE:
        return Vote("tie", rater=rater, inconsistent=True)
    choice = _CHOICES.get(key)
    if choice is None and text and text == model_a:
        choice = "A"
    elif choice is None and text and text == model_b:
        choice = "B"
    if choice is None:
        names = "A/B/tie, 1/2/0, model_a/model_b"
        if model_a is not None or model_b is not None:
            names += f" or a model name ({model_a!r}, {model_b!r})"
        raise RowError(f"vote {value!r} is not one of {names}", column=column)
    return Vote(choice, rater=rater)


def flip(vote: Vote) -> Vote:
    """The same vote with A and B swapped (after the two responses were swapped)."""
    return Vote(_SWAPPED[vote.choice], rater=vote.rater, inconsistent=vote.inconsistent)
