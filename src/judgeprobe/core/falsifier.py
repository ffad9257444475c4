"""Pre-registered falsifiers: the result that would kill a story, written down before the run.

A story about a judge ("its agreement with humans is a length confound") is tested by one number
measured on one slice of the data (the length-matched bin), a threshold and a direction. The
falsifier is declared as a small YAML file before the audit runs; afterwards
:meth:`Falsifier.decide` returns one of three outcomes, with the interval that decided it:

- ``refuted``: the whole interval lies beyond the threshold on the side that kills the story;
- ``holds``: the whole interval lies on the side the story predicts (the story survived a test
  that could have killed it);
- ``inconclusive``: the interval straddles the threshold (too wide to decide), or the number is
  undefined (no data in the slice).

Example, the length-confound falsifier of the MT-Bench study that motivated this module (the
judge's agreement with humans minus the length-only null's, on pairs whose lengths differ by less
than 10%; if the judge still beats length by more than 10 points there, the story is refuted)::

    story: the judge's agreement with humans is a length confound
    bin: "<10%"
    metric: judge_minus_null
    threshold: 0.10
    refuted_if: above
    confidence_level: 0.95
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judgeprobe._util.hashing import content_hash
from judgeprobe._util.yaml_files import explain_validation, parse_yaml, read_yaml
from judgeprobe.errors import ConfigError
from judgeprobe.stats.result import Estimate

FalsifierMetric = Literal["judge_minus_null", "judge_agreement", "null_agreement"]
"""What is measured on the bin: the judge's agreement with the human majority minus the
length-only null's (paired, on the same items), or either agreement on its own."""

Outcome = Literal["holds", "refuted", "inconclusive"]

_METRIC_WORDS = {
    "judge_minus_null": "judge minus length-null agreement with humans",
    "judge_agreement": "judge agreement with humans",
    "null_agreement": "length-null agreement with humans",
}


class Falsifier(BaseModel):
    """A story's kill condition: ``metric`` on ``bin`` beyond ``threshold`` refutes ``story``.

    Parameters
    ----------
    story : str
        The claim under test, in words (reported with the verdict).
    bin : str
        Label of the length-gap bin the metric is measured on (e.g. ``"<10%"``).
    metric : {"judge_minus_null", "judge_agreement", "null_agreement"}
    threshold : float
        The boundary between what the story predicts and what refutes it.
    refuted_if : {"above", "below"}
        ``"above"``: the story is refuted when the interval lies entirely above ``threshold``
        (and holds when it lies entirely below); ``"below"`` mirrors it.
    confidence_level : float, default 0.95
        Level of the interval that decides.
    declared : str, optional
        Who declared it and when (free text, kept in the report).

    Examples
    --------
    >>> from judgeprobe.stats import ConfidenceInterval, Estimate
    >>> f = Falsifier(bin="<10%", threshold=0.10)
    >>> f.decide(Estimate(0.27, ConfidenceInterval(0.14, 0.40), 74)).outcome
    'refuted'
    >>> f.decide(Estimate(0.05, ConfidenceInterval(-0.10, 0.20), 74)).outcome
    'inconclusive'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    story: str = "the judge's agreement with humans is a length confound"
    bin: str = "<10%"
    metric: FalsifierMetric = "judge_minus_null"
    threshold: float
    refuted_if: Literal["above", "below"] = "above"
    confidence_level: float = Field(0.95, gt=0.0, lt=1.0)
    declared: str | None = None

    @cached_property
    def hash(self) -> str:
        """Content hash of the declaration (shows in the report that it was not edited)."""
        return content_hash(self.model_dump(mode="json"))

    def rule(self) -> str:
        """The decision rule in words."""
        other = "below" if self.refuted_if == "above" else "above"
        what = _METRIC_WORDS[self.metric]
        return (
            f"{what} on bin {self.bin!r}: refuted if its {self.confidence_level:.0%} CI lies "
            f"entirely {self.refuted_if} {self.threshold:g}, holds if entirely {other}, "
            "inconclusive otherwise"
        )

    def decide(self, estimate: Estimate) -> FalsifierVerdict:
        """The outcome for ``estimate`` (computed at this falsifier's confidence level)."""
        ci = estimate.ci
        if (
            estimate.defined
            and not math.isnan(ci.level)
            and abs(ci.level - self.confidence_level) > 1e-9
        ):
            raise ValueError(
                f"the estimate's interval is at level {ci.level}, the falsifier declares "
                f"{self.confidence_level}; recompute the interval at the declared level"
            )
        t = self.threshold
        if not estimate.defined or math.isnan(ci.low) or math.isnan(ci.high):
            return FalsifierVerdict("inconclusive", self, estimate, "the metric is undefined")
        above, below = ci.low > t, ci.high < t
        if not (above or below):
            reason = f"the CI [{ci.low:.3g}, {ci.high:.3g}] straddles {t:g} (too wide to decide)"
            return FalsifierVerdict("inconclusive", self, estimate, reason)
        side = "above" if above else "below"
        outcome: Outcome = "refuted" if side == self.refuted_if else "holds"
        reason = f"the CI [{ci.low:.3g}, {ci.high:.3g}] lies entirely {side} {t:g}"
        return FalsifierVerdict(outcome, self, estimate, reason)


@dataclass(frozen=True, slots=True)
class FalsifierVerdict:
    """The outcome of a falsifier, with the estimate and interval that decided it."""

    outcome: Outcome
    falsifier: Falsifier
    estimate: Estimate
    reason: str

    def sentence(self) -> str:
        """One line for the report: the story, the outcome and the interval behind it."""
        f = self.falsifier
        ci = self.estimate.ci
        word = {
            "holds": "HOLDS",
            "refuted": "is REFUTED",
            "inconclusive": "is INCONCLUSIVE",
        }[self.outcome]
        return (
            f"Falsifier {f.hash}: the story '{f.story}' {word}: {_METRIC_WORDS[f.metric]} on "
            f"bin {f.bin!r} = {self.estimate.estimate:.3g}, {ci.level:.0%} CI "
            f"[{ci.low:.3g}, {ci.high:.3g}], n={self.estimate.n}; {self.reason} "
            f"(rule: {f.rule()})."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "reason": self.reason,
            "falsifier": self.falsifier.model_dump(mode="json"),
            "falsifier_hash": self.falsifier.hash,
            "rule": self.falsifier.rule(),
            **self.estimate.to_dict(),
        }


def parse_falsifier(text: str, *, source: str = "falsifier") -> Falsifier:
    """A :class:`Falsifier` from YAML text; errors name the bad key."""
    return _falsifier(parse_yaml(text, source=source, error=ConfigError), source)


def load_falsifier(path: str | Path) -> Falsifier:
    """Read a falsifier declaration from a YAML file."""
    return _falsifier(read_yaml(path, what="falsifier", error=ConfigError), str(path))


def _falsifier(data: Any, source: str) -> Falsifier:
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a falsifier must be a YAML mapping (bin, threshold, ...)")
    try:
        return Falsifier.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {explain_validation(exc, root='falsifier')}") from exc
