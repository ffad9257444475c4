"""The agreement probe's data: scores and human labels of the scored items, as arrays.

- The linear map between the rubric's score range and the human label range (:class:`ScaleMap`).
- Decisions as codes (1 the rubric's positive class, 0 its negative, -1 neutral), by the
  rubric's one rule (:meth:`~judgeprobe.rubrics.Rubric.decision_of`), for the judge's scores and
  for each rater's label mapped onto the judge's scale.
- The judge's probability of the positive class where its verdict gives one.
- The scored items (:class:`AgreementData`) and those with a human decision (:class:`Binary`).
- Metrics on drawn rows and their bootstrap (:class:`RowBootstrap`), so every finding is resampled
  the same way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import PointwiseItem
from judgeprobe.rubrics import Rubric
from judgeprobe.stats import classification as cls
from judgeprobe.stats.resampling import clustered_proportion
from judgeprobe.stats.result import Estimate


@dataclass(frozen=True, slots=True)
class ScaleMap:
    """The linear map from the rubric's score range onto the human label range."""

    judge_low: float
    judge_high: float
    human_low: float
    human_high: float

    def to_human(self, score: float) -> float:
        if self.judge_high == self.judge_low:
            return score
        share = (score - self.judge_low) / (self.judge_high - self.judge_low)
        return self.human_low + share * (self.human_high - self.human_low)

    def to_judge(self, value: float) -> float:
        if self.human_high == self.human_low:
            return value
        share = (value - self.human_low) / (self.human_high - self.human_low)
        return self.judge_low + share * (self.judge_high - self.judge_low)

    def describe(self) -> str:
        return (
            f"judge [{self.judge_low:g}, {self.judge_high:g}] -> human "
            f"[{self.human_low:g}, {self.human_high:g}] (linear)"
        )


def scale_map(
    rubric: Rubric, items: Sequence[PointwiseItem], human: tuple[float, float] | None
) -> ScaleMap:
    """The map for ``rubric``: its score range onto ``human`` (default: the labels' range)."""
    values = [v for item in items for v in item.human_scores]
    low, high = human if human is not None else (min(values), max(values))
    judge = rubric.score_range or (low, high)
    return ScaleMap(float(judge[0]), float(judge[1]), float(low), float(high))


def decision_code(rubric: Rubric, score: float) -> int:
    """1 for the rubric's positive class, 0 for its negative one, -1 for neutral."""
    assert rubric.decision is not None
    decision = rubric.decision_of(score)
    return (
        1
        if decision == rubric.decision.positive
        else 0
        if decision == rubric.decision.negative
        else -1
    )


@dataclass(frozen=True, slots=True)
class RowBootstrap:
    """The interval options of the agreement probe: a metric on drawn rows, bootstrapped."""

    confidence_level: float
    n_resamples: int
    seed: int

    def __call__(
        self,
        metric: cls.Metric,
        n: int,
        clusters: Sequence[Hashable],
        reason: str = "the statistic is undefined on these items",
    ) -> Estimate:
        """``metric`` on all ``n`` rows with its interval; not assessable, saying ``reason``,
        where the metric is undefined on all rows (a constant judge's MCC, say)."""
        estimate = cls.bootstrap_rows(
            metric,
            n,
            clusters=clusters,
            confidence_level=self.confidence_level,
            n_resamples=self.n_resamples,
            seed=self.seed,
        )
        return estimate if estimate.defined else Estimate.undefined(n, reason=reason)

    def rate(
        self,
        hits: NDArray[np.bool_],
        of: NDArray[np.bool_],
        clusters: Sequence[Hashable],
        reason: str,
    ) -> Estimate:
        """The share of ``hits`` among the rows ``of`` (a rate's denominator: the flagged items
        for precision, the human positives for recall): ``n`` counts those rows and the
        interval is over them (Wilson, or a cluster bootstrap where rows share a cluster, Wilson
        over the clusters at a rate of 0 or 1); not assessable, saying ``reason``, without one."""
        rows = np.flatnonzero(of).tolist()
        if not len(rows):
            return Estimate.undefined(0, reason=reason)
        return clustered_proportion(
            hits[rows],
            [clusters[k] for k in rows],
            confidence_level=self.confidence_level,
            seed=self.seed,
            n_resamples=self.n_resamples,
        )


ONE_CLASS = "the human labels hold one class"
"""Why a finding that needs both human classes (kappa, balanced accuracy, MCC, an AUC, a margin
over a baseline) is n/a: on one class kappa is 0 whatever the judge does, and no margin over a
baseline can be shown."""


def one_class(truth: NDArray[Any]) -> bool:
    """True when the human decisions ``truth`` hold fewer than two classes."""
    return len(np.unique(truth)) < 2


def constant_reason(values: NDArray[Any], what: str, undefined: str) -> str:
    """Why a metric of ``values`` is undefined: the judge gives one ``what`` on every item (a
    constant judge), else ``undefined``."""
    if len(values) and np.all(values == values[0]):
        shown = f" ({values[0]:g})" if what == "score" else ""
        return f"the judge gives one {what} on every item{shown}: {undefined}"
    return undefined


Pair = Callable[[NDArray[Any], NDArray[Any]], float]


def paired(fn: Pair, truth: NDArray[Any], values: NDArray[Any]) -> cls.Metric:
    """``fn(truth, values)`` on the drawn rows."""
    return lambda rows: fn(truth[rows], values[rows])


def difference(
    fn: Pair, truth: NDArray[Any], judge: NDArray[Any], baseline: NDArray[Any]
) -> cls.Metric:
    """The judge's ``fn`` minus the baseline's, on the same drawn rows (a paired difference)."""
    return lambda rows: fn(truth[rows], judge[rows]) - fn(truth[rows], baseline[rows])


def alpha_metric(
    matrix: NDArray[np.float64], level: Literal["interval", "ordinal"], grid: Sequence[float]
) -> cls.Metric:
    return lambda rows: cls.alpha(matrix[:, rows], level, grid)


def positive_probability(verdict: Verdict | None, rubric: Rubric) -> float | None:
    """The judge's probability of the rubric's positive class, where its verdict gives one.

    From the label distribution (next-token probabilities: the mass of the labels whose value
    the decision rule calls positive), or from a recorded ``probability``; None otherwise.
    """
    if verdict is None or not verdict.ok:
        return None
    assert rubric.decision is not None
    if verdict.distribution and rubric.kind in ("scale", "binary"):
        total = sum(verdict.distribution.values())
        positive = sum(
            p
            for label, p in verdict.distribution.items()
            if label in rubric.values and decision_code(rubric, rubric.value_of(label)) == 1
        )
        return positive / total if total > 0 else None
    recorded = verdict.meta.get("probability")
    return float(recorded) if isinstance(recorded, int | float) else None


def strict_majority_code(codes: Sequence[int]) -> int | None:
    """The code more than half of ``codes`` share; None without one."""
    if not codes:
        return None
    value, count = Counter(codes).most_common(1)[0]
    return value if 2 * count > len(codes) else None


@dataclass(frozen=True, slots=True)
class Binary:
    """The items with a human decision, as arrays."""

    truth: NDArray[np.int64]
    judge: NDArray[np.int64]
    score: NDArray[np.float64]
    probability: NDArray[np.float64] | None
    response_length: NDArray[np.float64]
    prompt_length: NDArray[np.float64]
    responses: list[str]
    clusters: list[str]
    unanimous: NDArray[np.bool_]
    categories: list[str | None]
    ids: list[str]

    @property
    def ranks(self) -> bool:
        """True when the judge's scores take more than two values (they rank, not only decide)."""
        return len(np.unique(self.score)) > 2


@dataclass(frozen=True, slots=True)
class AgreementData:
    """Scored items as arrays: judge and human on the human scale, decisions per rater."""

    items: list[PointwiseItem]
    judge_score: NDArray[np.float64]
    judge_human: NDArray[np.float64]
    human_mean: NDArray[np.float64]
    judge_codes: list[int]
    rater_codes: list[list[int]]
    ratings: NDArray[np.float64]
    clusters: list[str]
    grid: tuple[float, ...]
    probability: NDArray[np.float64] | None
    ranking: NDArray[np.float64]
    """What orders items towards the positive class: the probability where known, else the
    score (negated when lower scores are positive)."""

    @classmethod
    def build(
        cls_,
        items: Sequence[PointwiseItem],
        scores: Mapping[str, float],
        rubric: Rubric,
        mapping: ScaleMap,
        cluster: str,
        probabilities: Mapping[str, float],
    ) -> AgreementData:
        judge_score = np.asarray([scores[i.id] for i in items], dtype=np.float64)
        raters = sorted({lab.rater or f"rater{k}" for i in items for k, lab in enumerate(i.labels)})
        ratings = np.full((1 + len(raters), len(items)), np.nan)
        for col, item in enumerate(items):
            ratings[0, col] = mapping.to_human(scores[item.id])
            for k, label in enumerate(item.labels):
                ratings[1 + raters.index(label.rater or f"rater{k}"), col] = label.value
        assert rubric.decision is not None
        higher = rubric.decision.higher_is_positive
        probability = None
        if items and all(i.id in probabilities for i in items):
            probability = np.asarray([probabilities[i.id] for i in items], dtype=np.float64)
        elif rubric.kind == "continuous" and rubric.score_range == (0.0, 1.0):
            probability = judge_score if higher else 1.0 - judge_score
        ranking = (
            probability if probability is not None else (judge_score if higher else -judge_score)
        )
        return cls_(
            items=list(items),
            judge_score=judge_score,
            judge_human=ratings[0].copy(),
            human_mean=np.asarray([i.human_mean for i in items], dtype=np.float64),
            judge_codes=[decision_code(rubric, s) for s in judge_score.tolist()],
            rater_codes=[
                [decision_code(rubric, mapping.to_judge(v)) for v in i.human_scores] for i in items
            ],
            ratings=ratings,
            clusters=[i.prompt if cluster == "prompt" else i.id for i in items],
            grid=tuple(sorted({v for i in items for v in i.human_scores})),
            probability=probability,
            ranking=ranking,
        )

    @property
    def decisions(self) -> list[int | None]:
        return [strict_majority_code(codes) for codes in self.rater_codes]

    @property
    def no_decision(self) -> int:
        return sum(1 for d in self.decisions if d is None or d == -1)

    def binary(self) -> Binary:
        keep = [k for k, d in enumerate(self.decisions) if d is not None and d != -1]
        decisions = self.decisions
        return Binary(
            truth=np.asarray([decisions[k] for k in keep], dtype=np.int64),
            judge=np.asarray([self.judge_codes[k] for k in keep], dtype=np.int64),
            score=self.ranking[keep],
            probability=None if self.probability is None else self.probability[keep],
            response_length=np.asarray(
                [len(self.items[k].response) for k in keep], dtype=np.float64
            ),
            prompt_length=np.asarray([len(self.items[k].prompt) for k in keep], dtype=np.float64),
            responses=[self.items[k].response for k in keep],
            clusters=[self.clusters[k] for k in keep],
            unanimous=np.asarray([len(set(self.rater_codes[k])) == 1 for k in keep], dtype=bool),
            categories=[self.items[k].category for k in keep],
            ids=[self.items[k].id for k in keep],
        )


def confusion(b: Binary, rubric: Rubric) -> dict[str, Any]:
    assert rubric.decision is not None
    names = {1: rubric.decision.positive, 0: rubric.decision.negative, -1: "neutral"}
    columns = [1, 0, -1] if np.any(b.judge == -1) else [1, 0]
    return {
        "rows": [f"human {names[t]}" for t in (1, 0)],
        "columns": [f"judge {names[c]}" for c in columns],
        "values": [[int(np.sum((b.truth == t) & (b.judge == c))) for c in columns] for t in (1, 0)],
    }
