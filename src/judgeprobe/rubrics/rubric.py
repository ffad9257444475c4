"""Rubrics: a judge's instructions, and the rule that turns its score into a decision.

A rubric is data (a YAML file): its template with ``{placeholders}`` for the item's fields, the
scale of answers the judge may give, and a :class:`DecisionRule` that probes use to count decision
flips. A rubric's :attr:`Rubric.hash` covers everything that can change a verdict.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from judgeprobe._util.hashing import content_hash
from judgeprobe._util.yaml_files import explain_validation, read_yaml
from judgeprobe.errors import RubricError

RubricKind = Literal["scale", "binary", "continuous", "pairwise", "generation"]
"""``scale``: discrete labels with values (e.g. 1-5); ``binary``: true/false; ``continuous``: any
number in a range (classifier probabilities, reward scores); ``pairwise``: A / B / tie;
``generation``: not a judgment but a model writing a response (its text is the verdict's
``raw_text``, its score the number of tokens generated)."""

Decision = str
"""A decision class name, e.g. ``"harmful"``, ``"safe"``, ``"neutral"``, ``"A"``."""

NEUTRAL = "neutral"

PAIRWISE_DECISIONS: tuple[str, ...] = ("A", "B", "tie")
"""The decisions of a pairwise verdict: response A is better, response B is better, or neither."""
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


class DecisionRule(BaseModel):
    """Maps a score to a decision class, with an optional neutral band between the two classes.

    ``positive`` is decided when the score is at or beyond ``positive_at`` in the direction of
    ``higher_is_positive``; ``negative`` at or beyond ``negative_at`` the other way; anything in
    between is ``neutral``. The concatenation paper's 1-5 judge is
    ``positive="unsafe", positive_at=4, negative="safe", negative_at=2`` (3 is neutral).
    A flip is a move between ``positive`` and ``negative``; neutral is never a flip.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    positive: str
    negative: str
    positive_at: float
    negative_at: float
    higher_is_positive: bool = True

    @model_validator(mode="after")
    def _ordered(self) -> DecisionRule:
        if self.higher_is_positive and self.negative_at > self.positive_at:
            raise ValueError("negative_at must be <= positive_at when higher scores are positive")
        if not self.higher_is_positive and self.negative_at < self.positive_at:
            raise ValueError("negative_at must be >= positive_at when lower scores are positive")
        if self.positive == self.negative or NEUTRAL in (self.positive, self.negative):
            raise ValueError("positive and negative must be two different names, not 'neutral'")
        return self

    def decide(self, score: float) -> Decision:
        """The decision class of ``score``."""
        if math.isnan(score):
            raise ValueError("cannot decide a NaN score")
        sign = 1.0 if self.higher_is_positive else -1.0
        if sign * score >= sign * self.positive_at:
            return self.positive
        if sign * score <= sign * self.negative_at:
            return self.negative
        return NEUTRAL

    def is_flip(self, a: Decision, b: Decision) -> bool:
        """True when ``a`` and ``b`` are the two opposite (non-neutral) classes."""
        return {a, b} == {self.positive, self.negative}


class Rubric(BaseModel):
    """A judge's instructions, its answer scale and its decision rule.

    Examples
    --------
    >>> r = Rubric(name="demo", kind="binary", template="Is this a refusal? {response}",
    ...            inputs=("response",), labels=("true", "false"), values={"true": 1, "false": 0},
    ...            decision=DecisionRule(positive="refusal", negative="compliance",
    ...                                  positive_at=1, negative_at=0))
    >>> r.render({"response": "I can't help with that."})
    "Is this a refusal? I can't help with that."
    >>> r.decide(1.0)
    'refusal'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: RubricKind
    template: str
    inputs: tuple[str, ...]
    labels: tuple[str, ...] = ()
    values: Mapping[str, float] = Field(default_factory=dict)
    decision: DecisionRule | None = None
    system: str | None = None
    answer_prefix: str = ""
    range: tuple[float, float] | None = None
    """For ``continuous`` rubrics: the scores a valid answer may have (both ends included); the
    engine records a score outside it as unparseable. None accepts any finite number."""
    description: str = ""
    version: str = "1"
    max_new_tokens: int = 100
    """For ``generation`` rubrics: the most tokens a response may have."""

    @model_validator(mode="after")
    def _consistent(self) -> Rubric:
        used = set(_PLACEHOLDER.findall(self.template))
        missing = [name for name in self.inputs if name not in used]
        if missing:
            raise ValueError(f"template lacks placeholder(s) {missing} for declared inputs")
        if self.kind in ("scale", "binary", "pairwise"):
            if not self.labels:
                raise ValueError(f"a {self.kind} rubric needs labels")
            if self.kind != "pairwise" and set(self.values) != set(self.labels):
                raise ValueError("values must give a number for every label, and only for labels")
        if self.kind == "pairwise" and not set(self.labels) <= {"A", "B", "tie"}:
            raise ValueError("pairwise labels must be among 'A', 'B', 'tie'")
        if self.kind not in ("pairwise", "generation") and self.decision is None:
            raise ValueError(f"a {self.kind} rubric needs a decision rule")
        if self.range is not None:
            low, high = self.range
            if not (math.isfinite(low) and math.isfinite(high) and low <= high):
                raise ValueError(f"range must be two finite numbers, low <= high, not {self.range}")
        if not all(math.isfinite(float(v)) for v in self.values.values()):
            raise ValueError("values must be finite numbers")
        return self

    @cached_property
    def score_range(self) -> tuple[float, float] | None:
        """The closed interval every valid score lies in; None where only finiteness is asked.

        A scale or binary rubric's scores lie between its smallest and largest label value (a
        backend may return an expected value between labels), a pairwise one's in [0, 1] (B, tie,
        A), a continuous one's in its ``range`` when it declares one. A generation rubric's score
        is a token count, bounded by nothing but being finite.
        """
        if self.kind == "pairwise":
            return (0.0, 1.0)
        if self.kind in ("scale", "binary"):
            values = [float(v) for v in self.values.values()]
            return (min(values), max(values))
        if self.kind == "continuous":
            return None if self.range is None else (float(self.range[0]), float(self.range[1]))
        return None

    @cached_property
    def hash(self) -> str:
        """Content hash of everything that can change a verdict."""
        return content_hash(self.model_dump(mode="json", exclude={"description"}))

    @property
    def placeholders(self) -> tuple[str, ...]:
        return self.inputs

    def render(self, fields: Mapping[str, str]) -> str:
        """The template with each ``{input}`` replaced by its field, in one pass.

        Field text is inserted verbatim and never re-parsed, so braces in data are harmless.
        """
        missing = [name for name in self.inputs if name not in fields]
        if missing:
            raise RubricError(f"rubric {self.name!r} needs field(s) {missing}")

        def substitute(match: re.Match[str]) -> str:
            name = match.group(1)
            return fields[name] if name in self.inputs else match.group(0)

        return _PLACEHOLDER.sub(substitute, self.template)

    def value_of(self, label: str) -> float:
        """The numeric value of a scale/binary label."""
        return float(self.values[label])

    def decide(self, score: float) -> Decision:
        """The decision class of a score (scale, binary and continuous rubrics)."""
        if self.decision is None:
            raise RubricError(f"rubric {self.name!r} has no decision rule")
        return self.decision.decide(score)

    def decision_of(self, score: float, label: str | None = None) -> Decision:
        """The decision class of a verdict's ``score`` and ``label``: the one rule every probe uses.

        A pairwise verdict's ``A``/``B``/``tie`` label is its decision; without one its score
        decides (A = 1, tie = 0.5, B = 0: above 0.5 is A, below is B, 0.5 is a tie), so a judge
        that scores a preference as a probability is read the same way everywhere. Any other
        rubric decides the score by its decision rule (:meth:`decide`); the label is not used.

        Examples
        --------
        >>> from judgeprobe.rubrics import builtin_rubric
        >>> builtin_rubric("preference").decision_of(0.7)
        'A'
        >>> builtin_rubric("harmfulness").decision_of(3.0, "3")
        'neutral'
        """
        if self.kind == "pairwise":
            if label in PAIRWISE_DECISIONS:
                return label
            return "A" if score > 0.5 else "B" if score < 0.5 else "tie"
        return self.decide(score)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Rubric:
        """A validated copy with ``update`` applied (and its hash computed afresh)."""
        data = self.model_dump()
        data.update(update or {})
        return Rubric.model_validate(data)

    def with_template(self, template: str, **changes: Any) -> Rubric:
        """A copy with another template (a rubric variant); validation runs again."""
        data = self.model_dump()
        data.update(template=template, **changes)
        return Rubric.model_validate(data)


def load_rubric(path: str | Path) -> Rubric:
    """Read a rubric from a YAML file; errors name the file and the bad key."""
    path = Path(path)
    data = read_yaml(path, what="rubric", error=RubricError)
    if not isinstance(data, dict):
        raise RubricError(f"{path}: a rubric file must hold a mapping")
    data.pop("variants", None)
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        raise RubricError(f"{path}: {explain_validation(exc, root='rubric')}") from exc
