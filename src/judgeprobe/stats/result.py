"""Result objects shared by every statistic: an estimate with its interval, n and counts."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ConfidenceInterval:
    """A two-sided interval ``[low, high]`` at ``level``, computed by ``method``."""

    low: float
    high: float
    level: float = 0.95
    method: str = ""

    def contains(self, value: float) -> bool:
        """True when ``value`` lies inside the closed interval."""
        return self.low <= value <= self.high

    @property
    def width(self) -> float:
        return self.high - self.low

    def to_dict(self) -> dict[str, Any]:
        return {
            "low": _finite(self.low),
            "high": _finite(self.high),
            "level": self.level,
            "method": self.method,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConfidenceInterval:
        """The interval :meth:`to_dict` wrote: a missing or null end is NaN (not computed)."""
        level = data.get("level")
        return cls(
            _number(data.get("low")),
            _number(data.get("high")),
            0.95 if level is None else float(level),
            str(data.get("method") or ""),
        )


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate with its confidence interval, sample size and the counts behind it.

    ``n`` is the number of units the estimate is computed from (items, pairs, tuples); ``counts``
    holds what a reader needs to recompute it (e.g. ``{"k": 7, "n": 169}``). ``reason`` says why
    an undefined estimate could not be computed (None for a defined one); the interval's
    ``method`` only ever names how an interval was computed.
    """

    estimate: float
    ci: ConfidenceInterval
    n: int
    counts: Mapping[str, float] = field(default_factory=dict)
    reason: str | None = None

    def __repr__(self) -> str:
        return (
            f"Estimate({self.estimate:.4g}, {int(self.ci.level * 100)}% CI "
            f"[{self.ci.low:.4g}, {self.ci.high:.4g}] ({self.ci.method}), n={self.n})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": _finite(self.estimate),
            "ci": self.ci.to_dict(),
            "n": self.n,
            "counts": {k: _finite(float(v)) for k, v in self.counts.items()},
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Estimate:
        """The estimate :meth:`to_dict` wrote (or any mapping holding its keys, such as a stored
        finding or a card's finding entry): null numbers are NaN again.

        Examples
        --------
        >>> from judgeprobe.stats import proportion
        >>> rate = proportion(7, 169)
        >>> Estimate.from_dict(rate.to_dict()) == rate
        True
        >>> Estimate.from_dict(Estimate.undefined(3, reason="no items").to_dict()).reason
        'no items'
        """
        ci = data.get("ci")
        counts = data.get("counts") or {}
        reason = data.get("reason")
        return cls(
            _number(data.get("estimate")),
            ConfidenceInterval.from_dict(ci if isinstance(ci, Mapping) else {}),
            int(data.get("n") or 0),
            {str(k): _number(v) for k, v in counts.items()},
            None if reason is None else str(reason),
        )

    @classmethod
    def undefined(cls, n: int = 0, *, reason: str = "no data") -> Estimate:
        """An estimate that cannot be computed; NaN, never a silent zero, and ``reason`` says why.

        Examples
        --------
        >>> undefined = Estimate.undefined(0, reason="no items")
        >>> undefined.defined, undefined.reason, undefined.ci.method
        (False, 'no items', '')
        """
        nan = math.nan
        return cls(nan, ConfidenceInterval(nan, nan, 0.95, ""), n, reason=reason)

    @property
    def defined(self) -> bool:
        return not math.isnan(self.estimate)


@dataclass(frozen=True, slots=True)
class TestResult:
    """A hypothesis test: statistic, p-value, the alternative and the null it was run against."""

    statistic: float
    pvalue: float
    alternative: str
    null: str
    n: int

    __test__ = False  # not a pytest class

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": _finite(self.statistic),
            "pvalue": _finite(self.pvalue),
            "alternative": self.alternative,
            "null": self.null,
            "n": self.n,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TestResult:
        """The test :meth:`to_dict` wrote: a null statistic or p-value is NaN again."""
        return cls(
            _number(data.get("statistic")),
            _number(data.get("pvalue")),
            str(data.get("alternative", "")),
            str(data.get("null", "")),
            int(data.get("n") or 0),
        )


def _number(value: Any) -> float:
    """A stored number; null (JSON's stand-in for NaN and infinities) is NaN."""
    return math.nan if value is None else float(value)


def _finite(value: float) -> float | None:
    """JSON has no NaN: undefined numbers travel as null."""
    return None if math.isnan(value) or math.isinf(value) else value
