"""The items an estimate is about: the judge's value of each, and the humans' where labelled.

The estimand is a mean over the items the judge scored (its *population*): the rate of the
rubric's positive class, the mean score on the human label scale, or the win rate of response A.
Each item carries

- the judge's value, what the judge alone reports: 1 where its decision is the positive class,
  else 0 (neutral included); its score on the human scale; 1, 0.5 or 0 for A, tie or B;
- the predictor the correction uses: the judge's probability of the positive class where its
  verdict gives one on every item (a better predictor than the decision), else the judge's value;
- the human value where the item is labelled, read through the same decision rule
  (:meth:`~judgeprobe.rubrics.Rubric.decision_of`) the agreement probe reads them with: the share
  of its raters who put it in the positive class (0 or 1 with one rater), its mean label, or the
  share of human votes for A (a tie counting half). NaN where it has no label.

Items without an ok verdict are not in the population; how many is said.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import Item, PairwiseItem, PointwiseItem
from judgeprobe.errors import ConfigError, DataError
from judgeprobe.probes.agreement.data import (
    ScaleMap,
    decision_code,
    positive_probability,
)
from judgeprobe.rubrics import Rubric

Quantity = Literal["rate", "mean", "win_rate"]
QUANTITIES: tuple[Quantity, ...] = ("rate", "mean", "win_rate")

_WIN = {"A": 1.0, "tie": 0.5, "B": 0.0}


@dataclass(frozen=True, slots=True)
class Population:
    """Every item with an ok verdict: the judge's value, the predictor and the human value."""

    quantity: Quantity
    items: tuple[Item, ...]
    verdicts: tuple[Verdict, ...]
    judge: NDArray[np.float64]
    """What the judge alone reports per item (its mean is the naive estimate)."""
    predictor: NDArray[np.float64]
    """What the correction uses per item."""
    human: NDArray[np.float64]
    """The human value per item; NaN where the item has no label."""
    predictor_name: str
    """``decision``, ``probability``, ``score`` or ``preference``."""
    left_out: int
    """Items of the data without an ok verdict, so outside the population."""
    rubric: Rubric
    mapping: ScaleMap | None
    """The judge's scale onto the human one (pointwise data)."""

    @property
    def size(self) -> int:
        return len(self.items)

    @property
    def ids(self) -> list[str]:
        return [item.id for item in self.items]

    @property
    def labelled(self) -> NDArray[np.intp]:
        """The positions of the labelled items."""
        return np.flatnonzero(~np.isnan(self.human))

    @property
    def interval(self) -> str:
        """The interval a mean of these values takes: Wilson for a rate, t otherwise."""
        return "t" if self.quantity == "mean" else "wilson"

    def with_labels(self, labels: Mapping[str, str | float]) -> Population:
        """The same items with the human values of ``labels`` (item id -> a label as a sheet
        holds it) instead of the data's; an id not in the population is a :class:`DataError`."""
        index = {item_id: k for k, item_id in enumerate(self.ids)}
        unknown = sorted(set(labels) - set(index))
        if unknown:
            shown = ", ".join(unknown[:5]) + (", ..." if len(unknown) > 5 else "")
            raise DataError(
                f"{len(unknown)} labelled id(s) are not among the {self.size} items the judge "
                f"scored: {shown}"
            )
        human = np.full(self.size, np.nan)
        for item_id, label in labels.items():
            human[index[item_id]] = self.label_value(label)
        return replace(self, human=human)

    def label_value(self, label: str | float) -> float:
        """A label as a person writes it on a sheet, as a human value.

        A number is on the data's label scale (a rate's item is positive where the rubric's
        rule calls that label positive); a rate also takes the rubric's class names (``toxic``,
        ``clean``), a win rate ``A``, ``B`` or ``tie``.
        """
        text = str(label).strip()
        if self.quantity == "win_rate":
            if text not in _WIN:
                raise DataError(f"a win-rate label must be A, B or tie, not {text!r}")
            return _WIN[text]
        rule = self.rubric.decision
        if self.quantity == "rate" and rule is not None:
            named = {rule.positive.lower(): 1.0, rule.negative.lower(): 0.0}
            if text.lower() in named:
                return named[text.lower()]
        try:
            value = float(text)
        except ValueError:
            names = f" or {rule.positive!r} / {rule.negative!r}" if rule is not None else ""
            raise DataError(f"label {text!r} is not a number{names}") from None
        if not math.isfinite(value):
            raise DataError(f"label {text!r} is not a finite number")
        if self.quantity == "mean":
            return value
        assert self.mapping is not None
        return float(decision_code(self.rubric, self.mapping.to_judge(value)) == 1)


def build_population(
    items: Sequence[Item],
    verdicts: Mapping[str, Verdict],
    rubric: Rubric,
    quantity: Quantity,
    mapping: ScaleMap | None,
) -> Population:
    """The population of ``items`` (their trial-0 ``verdicts`` by item id) for ``quantity``."""
    if quantity not in QUANTITIES:
        raise ConfigError(f"the estimate is of one of {QUANTITIES}, not {quantity!r}")
    pairwise = rubric.kind == "pairwise"
    if (quantity == "win_rate") != pairwise:
        wanted = "win_rate" if pairwise else "rate or mean"
        raise ConfigError(f"rubric {rubric.name!r} ({rubric.kind}) estimates a {wanted}")
    if quantity == "rate" and rubric.decision is None:
        raise ConfigError(f"rubric {rubric.name!r} has no decision rule, so no rate to estimate")
    if rubric.kind == "generation":
        raise ConfigError("a generation rubric writes answers; it has no rate to estimate")
    kept = [
        (item, v)
        for item in items
        if (v := verdicts.get(item.id)) is not None and v.ok and v.score is not None
    ]
    judge = np.asarray([_judge_value(item, v, rubric, quantity, mapping) for item, v in kept])
    human = np.asarray([_human_value(item, rubric, quantity, mapping) for item, _ in kept])
    predictor, name = judge, _JUDGE_NAMES[quantity]
    if quantity == "rate":
        chances = [_probability(v, rubric) for _, v in kept]
        if kept and all(p is not None for p in chances):
            predictor, name = np.asarray(chances, dtype=np.float64), "probability"
    return Population(
        quantity=quantity,
        items=tuple(item for item, _ in kept),
        verdicts=tuple(v for _, v in kept),
        judge=judge.astype(np.float64).reshape(len(kept)),
        predictor=predictor.astype(np.float64).reshape(len(kept)),
        human=human.astype(np.float64).reshape(len(kept)),
        predictor_name=name,
        left_out=len(items) - len(kept),
        rubric=rubric,
        mapping=mapping,
    )


_JUDGE_NAMES: dict[str, str] = {"rate": "decision", "mean": "score", "win_rate": "preference"}


def _judge_value(
    item: Item, verdict: Verdict, rubric: Rubric, quantity: Quantity, mapping: ScaleMap | None
) -> float:
    assert verdict.score is not None
    if quantity == "win_rate":
        return _WIN[rubric.decision_of(verdict.score, verdict.label)]
    if quantity == "mean":
        return mapping.to_human(verdict.score) if mapping is not None else verdict.score
    return float(decision_code(rubric, verdict.score) == 1)


def _human_value(item: Item, rubric: Rubric, quantity: Quantity, mapping: ScaleMap | None) -> float:
    if isinstance(item, PairwiseItem):
        votes = [_WIN[vote.choice] for vote in item.human_votes]
        return float(np.mean(votes)) if votes else math.nan
    assert isinstance(item, PointwiseItem)
    if not item.labels:
        return math.nan
    if quantity == "mean":
        return float(np.mean(item.human_scores))
    assert mapping is not None
    codes = [decision_code(rubric, mapping.to_judge(v)) for v in item.human_scores]
    return sum(code == 1 for code in codes) / len(codes)


def _probability(verdict: Verdict, rubric: Rubric) -> float | None:
    """The judge's probability of the positive class: from its verdict where it gives one, else
    a continuous [0, 1] score read in the rule's direction (as the agreement probe reads it)."""
    chance = positive_probability(verdict, rubric)
    if chance is not None:
        return chance
    if (
        rubric.kind == "continuous"
        and rubric.score_range == (0.0, 1.0)
        and verdict.score is not None
    ):
        assert rubric.decision is not None
        higher = rubric.decision.higher_is_positive
        return float(verdict.score) if higher else 1.0 - float(verdict.score)
    return None
