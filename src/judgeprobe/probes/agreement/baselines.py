"""Trivial baselines of the agreement probe, fitted by cross-fitting.

A baseline is a rule with no understanding of the item: always the majority class; "positive when
the response is long" (or short); the same on the prompt's length; "positive when the response
holds a keyword" (refusal phrases). Picking a rule's direction and threshold on the data it is
then scored on would flatter it, so every rule with a threshold is cross-fitted: the items are
split into two halves at random (seeded; whole prompt clusters stay in one half), the direction
and threshold that maximise balanced accuracy on one half decide the other half, and the other
way round. Every item thus gets an out-of-fold decision, and the baseline's metrics are computed
on those pooled decisions. The ranking score (for AUC) is the feature signed by the direction
fitted on the other half. The set of baselines is fixed in advance; which of them is "best" is
chosen per metric on the out-of-fold results, which can only make the bar the judge must clear
higher.

The judge is then measured against the best of them (:func:`baseline_findings`): the judge's
metric minus the best baseline's, paired on the same bootstrap rows, is what decides the
agreement probe's verdict (:data:`GATED`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgeprobe.probes.agreement.data import (
    ONE_CLASS,
    Binary,
    Pair,
    RowBootstrap,
    difference,
    one_class,
    paired,
)
from judgeprobe.probes.base import Finding, Threshold
from judgeprobe.rubrics import Rubric
from judgeprobe.stats import classification as cls
from judgeprobe.stats.classification import balanced_accuracy, roc_auc
from judgeprobe.stats.result import Estimate

BEAT_BALANCED_ACCURACY = Threshold(warn=0.10, fail=0.05, higher_is_worse=False)
"""The judge must beat its best trivial baseline by more than 5 points of balanced accuracy."""
BEAT_KAPPA = Threshold(warn=0.10, fail=0.05, higher_is_worse=False)
BEAT_AUC = Threshold(warn=0.10, fail=0.05, higher_is_worse=False)

GATED = (
    "judge_minus_best_baseline_balanced_accuracy",
    "judge_minus_best_baseline_kappa",
    "judge_minus_best_baseline_auc",
)
"""The findings that decide the agreement probe's verdict: the judge minus its best baseline."""

REFUSAL_PHRASES: tuple[str, ...] = (
    "i can't",
    "i cannot",
    "i can not",
    "i won't",
    "i will not",
    "i'm sorry",
    "i am sorry",
    "i apologize",
    "i'm not able",
    "i am not able",
    "i'm unable",
    "i am unable",
    "as an ai",
    "not able to help",
    "can't help",
    "cannot help",
    "can't assist",
    "cannot assist",
    "i must decline",
)
"""The keyword rule of a refusal rubric (its positive class is ``refusal``), fixed in advance."""


METRICS: dict[str, Pair] = {
    "balanced_accuracy": cls.balanced_accuracy,
    "kappa": cls.kappa,
    "auc": cls.roc_auc,
}
"""Each baseline's metrics (``baseline_<metric>``), of its decisions or, for AUC, its scores."""

GATED_METRICS: dict[str, tuple[str, Threshold]] = {
    GATED[0]: ("balanced_accuracy", BEAT_BALANCED_ACCURACY),
    GATED[1]: ("kappa", BEAT_KAPPA),
    GATED[2]: ("auc", BEAT_AUC),
}
"""The metric of each gated finding (a key of :data:`METRICS`), and its threshold."""


def judge_values(b: Binary, metric: str) -> NDArray[Any]:
    """What ``metric`` reads of the judge: its ranking score for AUC, else its decisions."""
    return b.score if metric == "auc" else b.judge


@dataclass(frozen=True, slots=True)
class Baseline:
    """A baseline's out-of-fold decisions (1 / 0) and ranking scores, one per item."""

    name: str
    decisions: NDArray[np.int64]
    scores: NDArray[np.float64]
    description: str

    def values(self, metric: str) -> NDArray[Any]:
        """What ``metric`` reads of the baseline: its scores for AUC, else its decisions."""
        return self.scores if metric == "auc" else self.decisions


def halves(clusters: Sequence[Hashable], seed: int) -> NDArray[np.bool_]:
    """A seeded split of the items into two halves, each cluster whole in one (True = first)."""
    names = sorted({str(c) for c in clusters})
    order = np.random.default_rng(seed).permutation(len(names))
    first = {names[i] for i in order[: (len(names) + 1) // 2]}
    return np.asarray([str(c) in first for c in clusters], dtype=bool)


def _fit_rule(feature: NDArray[np.float64], truth: NDArray[np.int64]) -> tuple[float, float]:
    """The (direction, threshold) of ``direction * feature >= threshold`` with the best balanced
    accuracy on these items; (1, inf) (never positive) when they hold one class only."""
    best = (-1.0, 1.0, np.inf)
    if len(set(truth.tolist())) < 2:
        return 1.0, np.inf
    for direction in (1.0, -1.0):
        signed = direction * feature
        for threshold in np.unique(signed):
            score = balanced_accuracy(truth, (signed >= threshold).astype(np.int64))
            if score > best[0]:
                best = (score, direction, float(threshold))
    return best[1], best[2]


def threshold_baseline(
    name: str,
    feature: NDArray[np.float64],
    truth: NDArray[np.int64],
    first: NDArray[np.bool_],
    description: str,
) -> Baseline:
    """A one-feature threshold rule, cross-fitted on the two halves ``first`` / ``~first``."""
    decisions = np.zeros(len(truth), dtype=np.int64)
    scores = np.zeros(len(truth), dtype=np.float64)
    for train in (first, ~first):
        test = ~train
        if not test.any():
            continue
        direction, threshold = _fit_rule(feature[train], truth[train])
        decisions[test] = (direction * feature[test] >= threshold).astype(np.int64)
        auc = roc_auc(truth[train], feature[train])
        sign = -1.0 if auc < 0.5 else 1.0
        scores[test] = sign * feature[test]
    return Baseline(name, decisions, scores, description)


def majority_baseline(truth: NDArray[np.int64]) -> Baseline:
    """Always the majority human class.

    A constant rule has balanced accuracy 0.5 and kappa 0 whichever class it picks, so it needs
    no cross-fitting (fitted per half, two halves with different majorities would pool into
    two constants and score below a single one).
    """
    decisions = np.full(len(truth), int(np.mean(truth) > 0.5), dtype=np.int64)
    return Baseline(
        "majority_class",
        decisions,
        np.zeros(len(truth), dtype=np.float64),
        "always the majority human class",
    )


def keyword_feature(responses: Sequence[str], phrases: Sequence[str]) -> NDArray[np.float64]:
    """1 where the response holds one of ``phrases`` (case-insensitive), else 0."""
    lowered = [p.lower() for p in phrases]
    return np.asarray(
        [float(any(p in r.lower() for p in lowered)) for r in responses], dtype=np.float64
    )


GATED_TEXT = {
    GATED[
        0
    ]: "Balanced accuracy of the judge minus that of its best cross-fitted trivial baseline.",
    GATED[1]: "Cohen's kappa of the judge minus that of its best cross-fitted trivial baseline.",
    GATED[2]: "ROC AUC of the judge's score minus that of its best cross-fitted trivial baseline.",
}


def baseline_set(
    b: Binary, rubric: Rubric, keywords: Sequence[str] | None, seed: int
) -> tuple[list[Baseline], list[str]]:
    """The fixed set of baselines of ``b``'s items, cross-fitted on seeded halves, and notes."""
    first = halves(b.clusters, seed)
    notes = [
        "Baselines are cross-fitted: direction and threshold fitted on one seeded half "
        "of the prompts, scored on the other, and the other way round."
    ]
    baselines = [
        majority_baseline(b.truth),
        threshold_baseline(
            "response_length",
            b.response_length,
            b.truth,
            first,
            "response length in characters, direction and threshold cross-fitted",
        ),
        threshold_baseline(
            "prompt_length",
            b.prompt_length,
            b.truth,
            first,
            "prompt length in characters, direction and threshold cross-fitted",
        ),
    ]
    phrases = keywords
    assert rubric.decision is not None
    if phrases is None and rubric.decision.positive == "refusal":
        phrases = REFUSAL_PHRASES
    if phrases:
        feature = keyword_feature(b.responses, phrases)
        baselines.append(
            threshold_baseline(
                "keyword",
                feature,
                b.truth,
                first,
                f"response holds one of {len(phrases)} phrases",
            )
        )
    else:
        notes.append("No keyword baseline: the rubric declares no phrases (set `keywords`).")
    return baselines, notes


def baseline_findings(
    b: Binary, rubric: Rubric, keywords: Sequence[str] | None, boot: RowBootstrap
) -> tuple[list[Finding], list[dict[str, Any]], list[str]]:
    """Each baseline's metrics, and the judge minus the best baseline per gated metric (the
    findings that decide the verdict), with the baselines' table rows and notes.

    Every metric here needs both human classes: on one class each is n/a, saying so (kappa
    would be 0 for the judge and for every baseline, and a margin of 0 would fail the judge on
    nothing)."""
    baselines, notes = baseline_set(b, rubric, keywords, boot.seed)
    n, clusters, truth = len(b.truth), b.clusters, b.truth
    single = one_class(truth)
    rows: list[dict[str, Any]] = []
    info: list[Finding] = []
    best: dict[str, tuple[float, Baseline]] = {}
    for base in baselines:
        row: dict[str, Any] = {"baseline": base.name, "description": base.description}
        for metric, fn in METRICS.items():
            est = (
                Estimate.undefined(n, reason=ONE_CLASS)
                if single
                else boot(paired(fn, truth, base.values(metric)), n, clusters)
            )
            info.append(
                Finding(
                    f"baseline_{metric}",
                    est,
                    f"{metric} of the trivial baseline ({base.description}).",
                    {"baseline": base.name},
                )
            )
            row[metric] = est.estimate if est.defined else None
            value = est.estimate if est.defined else -np.inf
            if metric not in best or value > best[metric][0]:
                best[metric] = (value, base)
        rows.append(row)
    gated: list[Finding] = []
    for name, (metric, threshold) in GATED_METRICS.items():
        chosen = best[metric][1]
        if metric == "auc" and not b.ranks:
            continue
        if single:
            gated.append(
                Finding(
                    name,
                    Estimate.undefined(n, reason=ONE_CLASS),
                    GATED_TEXT[name],
                    {"baseline": chosen.name},
                    threshold,
                )
            )
            continue
        est = boot(
            difference(METRICS[metric], truth, judge_values(b, metric), chosen.values(metric)),
            n,
            clusters,
            f"the {metric} of the judge or of its best baseline is undefined on these items",
        )
        gated.append(Finding(name, est, GATED_TEXT[name], {"baseline": chosen.name}, threshold))
    return gated, rows, notes


def undefined_gated(reason: str) -> list[Finding]:
    """The gated findings, none assessable (no item has a human decision), saying why."""
    return [
        Finding(name, Estimate.undefined(0, reason=reason), GATED_TEXT[name], {}, threshold)
        for name, threshold in zip(
            GATED, (BEAT_BALANCED_ACCURACY, BEAT_KAPPA, BEAT_AUC), strict=True
        )
    ]
