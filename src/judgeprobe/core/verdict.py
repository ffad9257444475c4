"""Verdicts: what one judge call returned, including how it failed.

A verdict that could not be parsed, an errored call and an input skipped for the context window
are states of their own; they carry no score, so no failure can ever look like a flip. A score that
is not a finite number in the rubric's range is no score either: :func:`check_score`, which the
engine applies to every verdict, records it as unparseable with the reason.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any


class VerdictStatus(StrEnum):
    """How a call ended."""

    OK = "ok"
    UNPARSEABLE = "unparseable"
    """The judge answered, but not with a label of the scale, or with a score that is not a finite
    number in the rubric's range (``error`` says which)."""
    ERROR = "error"
    """The call failed (after retries) or the backend raised."""
    SKIPPED = "skipped"
    """Not sent: the input exceeds the judge's context window (never truncated)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of one request.

    ``score`` is set only when ``status`` is ``ok``. ``distribution`` maps scale labels to
    probabilities where the backend exposes them (next-token probabilities, logprobs).

    A backend may build an ok verdict with any number (``inf``, ``nan``, 7 on a 1-5 scale): the
    engine passes every verdict through :func:`check_score` before it stores or returns it, so
    an ok verdict that leaves the engine has a finite score in the rubric's range.
    """

    status: VerdictStatus
    score: float | None = None
    label: str | None = None
    distribution: Mapping[str, float] | None = None
    raw_text: str = ""
    error: str | None = None
    key: str = ""
    trial: int = 0
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 1
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status is VerdictStatus.OK:
            if self.score is None:
                raise ValueError("an ok verdict needs a score")
        elif self.score is not None:
            raise ValueError(f"a {self.status.value} verdict must not carry a score")

    @property
    def ok(self) -> bool:
        return self.status is VerdictStatus.OK

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def scored(cls, score: float, **kwargs: Any) -> Verdict:
        return cls(VerdictStatus.OK, score=float(score), **kwargs)

    @classmethod
    def unparseable(cls, raw_text: str, **kwargs: Any) -> Verdict:
        return cls(VerdictStatus.UNPARSEABLE, raw_text=raw_text, **kwargs)

    @classmethod
    def failed(cls, error: str, **kwargs: Any) -> Verdict:
        return cls(VerdictStatus.ERROR, error=error, **kwargs)

    @classmethod
    def skipped(cls, reason: str, **kwargs: Any) -> Verdict:
        return cls(VerdictStatus.SKIPPED, error=reason, **kwargs)

    def but(self, **changes: Any) -> Verdict:
        """A copy with some fields changed."""
        return replace(self, **changes)


def check_score(verdict: Verdict, score_range: tuple[float, float] | None) -> Verdict:
    """``verdict``, or an unparseable one saying why its score cannot be used.

    An ok verdict's score must be a real number, finite, and within ``score_range`` (the
    rubric's, see :attr:`~judgeprobe.rubrics.Rubric.score_range`; None: any finite number).
    Anything else would reach the statistics as a number no scale holds (``inf`` breaks every
    mean, ``nan`` every comparison), so it is recorded with the reason in ``error``, counted as
    unparseable and never scored. The raw answer is kept.

    Examples
    --------
    >>> check_score(Verdict.scored(7.0, raw_text="7"), (1.0, 5.0)).error
    "score 7 outside the rubric's range [1, 5]"
    >>> check_score(Verdict.scored(float("inf")), None).status.value
    'unparseable'
    """
    if verdict.status is not VerdictStatus.OK:
        return verdict
    score = verdict.score
    if isinstance(score, bool) or not isinstance(score, numbers.Real):
        reason = f"score {score!r} is not a number"
    elif not math.isfinite(score):
        reason = f"score {float(score)} is not finite"
    elif score_range is not None and not score_range[0] <= score <= score_range[1]:
        low, high = score_range
        reason = f"score {float(score):g} outside the rubric's range [{low:g}, {high:g}]"
    else:
        return verdict if type(score) is float else verdict.but(score=float(score))
    return Verdict(
        VerdictStatus.UNPARSEABLE,
        raw_text=verdict.raw_text or str(score),
        error=reason,
        key=verdict.key,
        trial=verdict.trial,
        latency_s=verdict.latency_s,
        prompt_tokens=verdict.prompt_tokens,
        completion_tokens=verdict.completion_tokens,
        attempts=verdict.attempts,
        meta=verdict.meta,
    )
