"""The judge's number three ways: the judge alone, the labels alone, and the labels correcting it.

- ``naive``: the judge's mean over every item, the number a user reports today, with the
  interval they would give it (Wilson for a rate, t otherwise) over the items. It measures the
  judge, not the humans: its distance from the others is the judge's bias.
- ``labels_only``: the labelled items alone (the classical estimate; stratified where the labels
  were drawn by strata).
- ``corrected``: prediction-powered and power-tuned (PPI++), every verdict and the labels
  together (:func:`judgeprobe.stats.stratified_difference.difference_mean`).

Each is an :class:`~judgeprobe.stats.Estimate` with its interval and n. With a target half-width
the result also says how many labels, drawn at random, would bring each interval to it.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgeprobe.errors import DataError
from judgeprobe.probes.agreement.corrected.design import LabelDesign
from judgeprobe.probes.agreement.corrected.population import Population
from judgeprobe.stats import Estimate, mean, proportion
from judgeprobe.stats.stratified_difference import difference_mean, labels_for_half_width

ESTIMATES = ("naive", "labels_only", "corrected")


@dataclass(frozen=True, slots=True)
class LabelsNeeded:
    """Labels a random draw needs to bring an interval to ``half_width``."""

    half_width: float
    corrected: int
    labels_only: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "half_width": self.half_width,
            "corrected": self.corrected,
            "labels_only": self.labels_only,
        }


@dataclass(frozen=True, slots=True)
class JudgeEstimates:
    """The three estimates of one quantity over one population, and how they were made."""

    quantity: str
    what: str
    """What is estimated, in words (``rate of toxic``)."""
    naive: Estimate
    labels_only: Estimate
    corrected: Estimate
    items: int
    labels: int
    design: str
    predictor: str
    left_out: int
    labels_needed: LabelsNeeded | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def lam(self) -> float:
        """The weight the corrected estimate gave the judge (0: the labels alone)."""
        return float(self.corrected.counts.get("lambda", math.nan))

    def to_dict(self) -> dict[str, Any]:
        """``naive``, ``labels_only`` and ``corrected``, each with ``estimate``, ``low``,
        ``high`` and ``n``; then what was estimated and how."""
        out: dict[str, Any] = {name: as_row(getattr(self, name)) for name in ESTIMATES}
        out["corrected"]["lambda"] = _finite(self.lam)
        out |= {
            "quantity": self.quantity,
            "what": self.what,
            "items": self.items,
            "labels": self.labels,
            "design": self.design,
            "predictor": self.predictor,
            "left_out": self.left_out,
            "labels_needed": None if self.labels_needed is None else self.labels_needed.to_dict(),
            "notes": list(self.notes),
        }
        return out


def as_row(estimate: Estimate) -> dict[str, Any]:
    """An estimate as the ``--json`` output holds it."""
    return {
        "estimate": _finite(estimate.estimate),
        "low": _finite(estimate.ci.low),
        "high": _finite(estimate.ci.high),
        "n": estimate.n,
        "level": estimate.ci.level,
        "method": estimate.ci.method,
        "reason": estimate.reason,
    }


def estimate_population(
    population: Population,
    design: LabelDesign,
    *,
    confidence_level: float = 0.95,
    target_width: float | None = None,
) -> JudgeEstimates:
    """The three estimates of ``population``'s mean, the labels being ``design``'s items."""
    rows = np.asarray(design.rows, dtype=np.intp)
    y = population.human[rows]
    if np.isnan(y).any():
        raise DataError("the label design names items that have no human label")
    f = population.predictor[rows]
    common: dict[str, Any] = {
        "strata": design.row_strata,
        "stratum_sizes": design.sizes,
        "interval": population.interval,
        "confidence_level": confidence_level,
    }
    labels_only = difference_mean(y, f, population.predictor, lam=0.0, **common)
    corrected = difference_mean(y, f, population.predictor, **common)
    notes = []
    if population.left_out:
        notes.append(
            f"{population.left_out} items without an ok verdict are outside the population."
        )
    if design.labels == population.size:
        notes.append("Every item is labelled: the rate is known, and the judge adds nothing.")
    needed = None
    if target_width is not None and corrected.defined:
        needed = _labels_needed(
            population, design, corrected.counts["lambda"], target_width, confidence_level
        )
    return JudgeEstimates(
        quantity=population.quantity,
        what=describe(population),
        naive=_naive(population, confidence_level),
        labels_only=labels_only,
        corrected=corrected,
        items=population.size,
        labels=design.labels,
        design=design.description,
        predictor=population.predictor_name,
        left_out=population.left_out,
        labels_needed=needed,
        notes=tuple(notes),
    )


def describe(population: Population) -> str:
    """What is estimated, in words."""
    rule = population.rubric.decision
    if population.quantity == "rate" and rule is not None:
        return f"rate of {rule.positive}"
    if population.quantity == "win_rate":
        return "win rate of response A (a tie counts half)"
    return "mean score on the human label scale"


def _naive(population: Population, level: float) -> Estimate:
    if population.quantity == "rate":
        return proportion(int(population.judge.sum()), population.size, confidence_level=level)
    return mean(population.judge, confidence_level=level)


def _labels_needed(
    population: Population, design: LabelDesign, lam: float, half_width: float, level: float
) -> LabelsNeeded:
    """Labels a uniform draw needs: the variances of the labels and of ``y - lam * f`` over the
    population, estimated from the labelled items (each weighing the items of its stratum it
    stands for)."""
    rows = np.asarray(design.rows, dtype=np.intp)
    drawn = Counter(design.row_strata)
    weights = np.asarray([design.sizes[k] / drawn[k] for k in design.row_strata])
    y = population.human[rows]
    residual = y - lam * population.predictor[rows]
    items = population.size
    return LabelsNeeded(
        half_width,
        labels_for_half_width(
            half_width, _weighted_variance(residual, weights), items, confidence_level=level
        ),
        labels_for_half_width(
            half_width, _weighted_variance(y, weights), items, confidence_level=level
        ),
    )


def _weighted_variance(values: np.ndarray[Any, Any], weights: np.ndarray[Any, Any]) -> float:
    if len(values) < 2:
        return 0.0
    centre = float(np.average(values, weights=weights))
    spread = float(np.average((values - centre) ** 2, weights=weights))
    return spread * len(values) / (len(values) - 1)


def _finite(value: float) -> float | None:
    return None if math.isnan(value) or math.isinf(value) else float(value)
