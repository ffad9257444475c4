"""Requests: one judge call to make, as plain hashable data.

A request is (judge fingerprint, rubric, input fields, trial). Its :attr:`Request.key` is a content
hash of all four, so equal requests made by different probes are judged once, and a verdict is never
reused for another judge, another rubric wording or another trial.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from judgeprobe._util.hashing import content_hash
from judgeprobe.rubrics import Rubric


@dataclass(frozen=True, slots=True)
class Request:
    """One judge call: ``rubric`` rendered with ``fields``, for independent rerun ``trial``."""

    judge: str
    rubric: Rubric
    fields: tuple[tuple[str, str], ...]
    trial: int = 0
    key: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.trial < 0:
            raise ValueError("trial must be >= 0")
        object.__setattr__(
            self, "key", content_hash([self.judge, self.rubric.hash, list(self.fields), self.trial])
        )

    @classmethod
    def make(
        cls, judge: str, rubric: Rubric, fields: Mapping[str, str], *, trial: int = 0
    ) -> Request:
        """A request from a mapping of fields (only the rubric's inputs are kept, sorted)."""
        kept = tuple(sorted((name, str(fields[name])) for name in rubric.inputs))
        return cls(judge, rubric, kept, trial)

    @property
    def field_map(self) -> dict[str, str]:
        return dict(self.fields)

    def render(self) -> str:
        """The rubric's template filled with this request's fields."""
        return self.rubric.render(self.field_map)

    def with_trial(self, trial: int) -> Request:
        return Request(self.judge, self.rubric, self.fields, trial)
