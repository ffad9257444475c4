"""What each part of a policy-invariance analysis returns, and the options they all read."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from judgeprobe.probes.base import FigureSpec, Finding
from judgeprobe.stats import Estimate


@dataclass(frozen=True, slots=True)
class Settings:
    """The probe's analysis options and the run seed, as every part of the analysis reads them."""

    reruns: int
    reproduction_trials: int
    null: str
    alpha: float
    human_threshold: float
    confidence_level: float
    n_resamples: int
    seed: int

    @property
    def resampling(self) -> dict[str, Any]:
        """The options of a bootstrap interval."""
        return {
            "confidence_level": self.confidence_level,
            "seed": self.seed,
            "n_resamples": self.n_resamples,
        }


@dataclass(slots=True)
class Section:
    """One part of the result: its findings, figures and notes, in report order, and its table."""

    table: Any = None
    findings: list[Finding] = field(default_factory=list)
    figures: list[FigureSpec] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def num(value: float) -> float | None:
    """``value`` for a table: None for NaN."""
    return None if math.isnan(value) else float(value)


def pct(est: Estimate) -> str:
    """A rate and its n, for a note."""
    return f"{est.estimate:.1%} (n={est.n})" if est.defined else "undefined"
