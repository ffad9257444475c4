"""Verdicts: what one judge call returned, including how it failed.

A verdict that could not be parsed, an errored call and an input skipped for the context window
are states of their own; they carry no score, so no failure can ever look like a flip.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any


class VerdictStatus(StrEnum):
    """How a call ended."""

    OK = "ok"
    UNPARSEABLE = "unparseable"
    """The judge answered, but not with a label of the scale."""
    ERROR = "error"
    """The call failed (after retries) or the backend raised."""
    SKIPPED = "skipped"
    """Not sent: the input exceeds the judge's context window (never truncated)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of one request.

    ``score`` is set only when ``status`` is ``ok``. ``distribution`` maps scale labels to
    probabilities where the backend exposes them (next-token probabilities, logprobs).
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
            if self.score is None or math.isnan(self.score):
                raise ValueError("an ok verdict needs a numeric score")
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
