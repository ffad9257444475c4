"""Verdicts: what one judge call returned, including how it failed.

A verdict that could not be parsed, an errored call and an input skipped for the context window
are states of their own; they carry no score, so no failure can ever look like a flip. A score that
is not a finite number in the rubric's range is no score either: :func:`check_score`, which the
engine applies to every verdict, records it as unparseable with the reason. So is a verdict whose
other fields no scale holds (a label outside it, a distribution that is not one, a number in
``meta`` that JSON cannot carry): :func:`check_verdict`, which the engine applies to every verdict
a judge returns, whichever backend or plugin made it, checks them all and caps the stored answer
at :data:`MAX_RAW_TEXT` characters.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol


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


MAX_RAW_TEXT = 65_536
"""The most characters of an answer a verdict keeps (its ``raw_text``); a longer answer is cut
there and ends with :data:`TRUNCATED` (its full length in ``meta["raw_text_chars"]``). The score
was read from the whole answer before the cut. A judge asked for a label answers a few
characters; 30 MB answers would fill the run store with nothing any probe reads."""

TRUNCATED = "... [truncated by judgeprobe: {} characters in all]"
"""What ends a cut answer."""

MAX_ERROR = 2_000
"""The most characters of an error message a verdict keeps."""

PAIRWISE_SCORES: Mapping[str, float] = {"A": 1.0, "tie": 0.5, "B": 0.0}
"""The score of each pairwise label."""

_DISTRIBUTION_SUM = 1e-4
"""How far from 1 the probabilities of a distribution may sum (rounding of float32 softmax)."""

_MAX_COUNT = 2**53
"""The largest token count or attempt number believed (beyond it a float loses integers)."""


class Scale(Protocol):
    """What :func:`check_verdict` reads of a rubric: its kind, labels, values and range."""

    @property
    def kind(self) -> str: ...

    @property
    def labels(self) -> tuple[str, ...]: ...

    @property
    def values(self) -> Mapping[str, float]: ...

    @property
    def score_range(self) -> tuple[float, float] | None: ...


def check_verdict(verdict: Verdict, scale: Scale | None) -> Verdict:
    """``verdict``, or one that says why it cannot be stored as it is; its answer capped.

    The engine applies it to every verdict a judge returns, so a verdict made by a plugin or a
    Python function (a :class:`Verdict` is taken as the function built it) meets the same
    contract as one parsed here: an ok verdict's label is one of the scale's and its score that
    label's value; a distribution maps labels of the scale to probabilities summing to 1; ``meta``
    is a JSON object of finite numbers; token counts and attempts are counts; ``raw_text`` and
    ``error`` are text. A verdict that breaks one of these becomes ``unparseable`` (an ``error``
    verdict stays one), with the first broken rule in ``error``, its raw text kept and the field
    that broke the rule dropped. The score is then checked by :func:`check_score`, and a
    ``raw_text`` longer than :data:`MAX_RAW_TEXT` characters is cut (see there).

    Examples
    --------
    >>> class Stars:
    ...     kind, labels, values, score_range = "scale", ("1", "2"), {"1": 1.0, "2": 2.0}, (1, 2)
    >>> check_verdict(Verdict.scored(2.0, label="7"), Stars()).error
    "the judge returned a verdict whose label '7' is not one of the scale's labels ('1', '2')"
    >>> check_verdict(
    ...     Verdict.scored(1.0, label="1", distribution={"1": float("nan"), "2": 1.0}), Stars()
    ... ).error
    "the judge returned a verdict whose distribution: probability nan of label '1' is not in [0, 1]"
    """
    problem = _problem(verdict, scale)
    if problem is not None:
        verdict = _rejected(verdict, problem)
    checked = check_score(verdict, None if scale is None else scale.score_range)
    return _capped(checked)


def _problem(verdict: Verdict, scale: Scale | None) -> str | None:
    """The first rule ``verdict`` breaks (see :func:`check_verdict`), or None."""
    if not isinstance(verdict.status, VerdictStatus):
        return f"status {verdict.status!r} is not a verdict status"
    if not isinstance(verdict.raw_text, str):
        return f"raw_text is a {type(verdict.raw_text).__name__}, not text"
    if verdict.error is not None and not isinstance(verdict.error, str):
        return f"error is a {type(verdict.error).__name__}, not text"
    for name in ("prompt_tokens", "completion_tokens", "attempts"):
        value = getattr(verdict, name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_COUNT:
            return f"{name} {str(value)[:40]} is not a count"
    latency = verdict.latency_s
    if isinstance(latency, bool) or not isinstance(latency, numbers.Real):
        return f"latency_s {latency!r:.40} is not a number"
    if not (math.isfinite(latency) and latency >= 0):
        return f"latency_s {latency} is not a duration"
    labels = _label_values(scale)
    label = verdict.label
    if label is not None:
        if not isinstance(label, str):
            return f"label {label!r:.40} is not text"
        if labels and label not in labels:
            return f"label {label[:40]!r} is not one of the scale's labels {tuple(labels)}"
        score = verdict.score
        value = labels.get(label)
        if verdict.ok and value is not None and isinstance(score, numbers.Real) and score != value:
            return f"label {label!r} (value {value:g}) and score {float(score):g} disagree"
    if verdict.distribution is not None:
        problem = _distribution_problem(verdict.distribution, labels)
        if problem is not None:
            return f"distribution: {problem}"
    return _meta_problem(verdict.meta)


def _label_values(scale: Scale | None) -> dict[str, float]:
    """Each label of ``scale`` and its score (empty: a scale without labels, or none given)."""
    if scale is None or not scale.labels:
        return {}
    if scale.kind == "pairwise":
        return {label: PAIRWISE_SCORES[label] for label in scale.labels}
    return {label: float(scale.values[label]) for label in scale.labels}


def _distribution_problem(distribution: Any, labels: Mapping[str, float]) -> str | None:
    if not isinstance(distribution, Mapping):
        return f"a {type(distribution).__name__}, not a mapping of labels to probabilities"
    total = 0.0
    for label, probability in distribution.items():
        if not isinstance(label, str) or (labels and label not in labels):
            return f"{label!r:.40} is not one of the scale's labels"
        bad = isinstance(probability, bool) or not isinstance(probability, numbers.Real)
        if bad or not 0.0 <= probability <= 1.0:  # nan and inf fail this too
            return f"probability {probability!r:.40} of label {label!r} is not in [0, 1]"
        total += float(probability)
    if distribution and abs(total - 1.0) > _DISTRIBUTION_SUM:
        return f"the probabilities sum to {total:.6g}, not 1"
    return None


def _meta_problem(meta: Any) -> str | None:
    if not isinstance(meta, Mapping):
        return f"meta is a {type(meta).__name__}, not a mapping"
    try:
        json.dumps(meta, allow_nan=False, sort_keys=True, default=str)
    except (TypeError, ValueError) as exc:  # inf or nan, keys JSON cannot sort
        return f"meta cannot be stored as JSON ({exc})"
    return None


def _rejected(verdict: Verdict, problem: str) -> Verdict:
    """``verdict`` as a verdict that says ``problem``: unparseable, or still an error."""
    raw = verdict.raw_text if isinstance(verdict.raw_text, str) else repr(verdict.raw_text)
    prompt, completion, attempts = (
        _count(getattr(verdict, name), default)
        for name, default in (("prompt_tokens", 0), ("completion_tokens", 0), ("attempts", 1))
    )
    error = f"the judge returned a verdict whose {problem}"
    status = VerdictStatus.UNPARSEABLE
    if verdict.status is VerdictStatus.ERROR and isinstance(verdict.error, str):
        status, error = VerdictStatus.ERROR, f"{verdict.error} (and the verdict's {problem})"
    return Verdict(
        status,
        raw_text=raw,
        error=error,
        key=verdict.key,
        trial=verdict.trial,
        prompt_tokens=prompt,
        completion_tokens=completion,
        attempts=attempts,
    )


def _count(value: Any, default: int) -> int:
    """``value`` when it is a count, else ``default``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_COUNT:
        return default
    return value


def _capped(verdict: Verdict) -> Verdict:
    """``verdict`` with its raw text cut at :data:`MAX_RAW_TEXT` and its error at
    :data:`MAX_ERROR` characters (the length of the answer noted in ``meta``)."""
    changes: dict[str, Any] = {}
    raw = verdict.raw_text
    if len(raw) > MAX_RAW_TEXT:
        changes["raw_text"] = raw[:MAX_RAW_TEXT] + TRUNCATED.format(len(raw))
        changes["meta"] = {**verdict.meta, "raw_text_chars": len(raw)}
    if verdict.error is not None and len(verdict.error) > MAX_ERROR:
        changes["error"] = verdict.error[:MAX_ERROR] + TRUNCATED.format(len(verdict.error))
    return verdict.but(**changes) if changes else verdict
