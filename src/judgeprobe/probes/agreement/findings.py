"""The agreement probe's findings on the judge against humans (its baselines are elsewhere).

Scale metrics compare the judge's score, mapped onto the human scale, with the mean human label
(MAE, RMSE, Spearman, quadratic weighted kappa, Krippendorff's alpha). Binary metrics compare the
judge's decision with the human majority decision (accuracy to MCC, ROC and PR AUC where the
scores rank, calibration where the judge gives a probability). With several raters, the rater
findings give the ceiling; category accuracy is information only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from judgeprobe.probes.agreement.data import (
    ONE_CLASS,
    AgreementData,
    Binary,
    RowBootstrap,
    alpha_metric,
    constant_reason,
    one_class,
    paired,
    strict_majority_code,
)
from judgeprobe.probes.base import Finding
from judgeprobe.stats import Estimate
from judgeprobe.stats import agreement as agreement_rate
from judgeprobe.stats import classification as cls

BINARY_METRICS = {
    "accuracy": cls.accuracy,
    "balanced_accuracy": cls.balanced_accuracy,
    "precision": cls.precision,
    "recall": cls.recall,
    "f1": cls.f1,
    "kappa": cls.kappa,
    "mcc": cls.mcc,
}
"""The binary metrics of the judge's decision, by finding name, in report order."""

UNDEFINED = {
    "accuracy": "no item",
    "balanced_accuracy": ONE_CLASS,
    "precision": "the judge never decides positive",
    "recall": "no item is human positive",
    "f1": "neither the judge nor the humans give a positive",
    "kappa": "judge and humans give one identical label (expected agreement 1)",
    "mcc": "a margin of the confusion table is 0",
}
"""Why each binary metric can be undefined (the condition under which it is NaN)."""

RATES: dict[str, Callable[[NDArray[Any], NDArray[Any]], tuple[NDArray[Any], NDArray[Any]]]] = {
    "accuracy": lambda truth, judge: (truth == judge, np.ones(len(truth), dtype=bool)),
    "precision": lambda truth, judge: (truth == 1, judge == 1),
    "recall": lambda truth, judge: (judge == 1, truth == 1),
}
"""The binary metrics that are rates, each as (hits, the rows of its denominator) of the human
truth and the judge's decisions: accuracy over every item, precision over the items the judge
flags, recall over the human positives. A rate's ``n`` is its denominator, and its interval is
over it (a bootstrap over all items would give precision 1.0 [1.0, 1.0] on four flagged items
and call it n=199)."""

BOTH_CLASSES = frozenset({"balanced_accuracy", "kappa", "mcc", "roc_auc", "pr_auc"})
"""The findings that need both human classes: n/a, saying :data:`ONE_CLASS`, without them."""


def mean_absolute_error(judge: NDArray[Any], human: NDArray[Any]) -> float:
    """MAE of the mapped judge score against the mean human label."""
    return float(np.mean(np.abs(judge - human)))


def root_mean_squared_error(judge: NDArray[Any], human: NDArray[Any]) -> float:
    """RMSE of the mapped judge score against the mean human label."""
    return float(np.sqrt(np.mean((judge - human) ** 2)))


def scale_findings(
    data: AgreementData, boot: RowBootstrap, alpha_level: Literal["interval", "ordinal"]
) -> list[Finding]:
    """The judge's score against the mean human label, on the human scale, and alpha."""
    judge, human, n, clusters = (
        data.judge_human,
        data.human_mean,
        len(data.items),
        data.clusters,
    )
    grid = data.grid
    out = [
        Finding(
            "mae",
            boot(paired(mean_absolute_error, judge, human), n, clusters),
            "Mean absolute error of the mapped judge score vs the mean human label (human scale).",
        ),
        Finding(
            "rmse",
            boot(paired(root_mean_squared_error, judge, human), n, clusters),
            "Root mean squared error of the mapped judge score vs the mean human label.",
        ),
        Finding(
            "spearman",
            boot(
                lambda r: cls.spearman(judge[r], human[r]),
                n,
                clusters,
                constant_reason(judge, "score", "a rank correlation needs two ranks"),
            ),
            "Spearman rank correlation of the judge score with the mean human label.",
        ),
    ]
    if 2 <= len(grid) <= 11:
        out.append(
            Finding(
                "quadratic_weighted_kappa",
                boot(
                    lambda r: cls.quadratic_weighted_kappa(judge[r], human[r], grid),
                    n,
                    clusters,
                ),
                "Quadratic-weighted kappa, judge score and mean human label snapped to the "
                "human scale.",
            )
        )
    ratings = data.ratings
    level = alpha_level
    for raters, matrix in (("judge+humans", ratings), ("humans", ratings[1:])):
        if raters == "humans" and matrix.shape[0] < 2:
            continue
        out.append(
            Finding(
                "krippendorff_alpha",
                boot(alpha_metric(matrix, level, grid), n, clusters),
                f"Krippendorff's alpha ({level}) among {raters} (one rater per label column).",
                {"raters": raters},
            )
        )
    return out


def binary_findings(b: Binary, boot: RowBootstrap, calibration_bins: int) -> list[Finding]:
    """The judge's decision against the human decision; AUCs and calibration where they apply."""
    out = []
    n, clusters = len(b.truth), b.clusters
    single = one_class(b.truth)
    for name, fn in BINARY_METRICS.items():
        why = constant_reason(b.judge, "decision", UNDEFINED[name])
        if single and name in BOTH_CLASSES:
            est = Estimate.undefined(n, reason=ONE_CLASS)
        elif name in RATES:
            hits, of = RATES[name](b.truth, b.judge)
            est = boot.rate(hits, of, clusters, why)
        else:
            est = boot(paired(fn, b.truth, b.judge), n, clusters, why)
        out.append(
            Finding(
                name,
                est,
                f"{name.replace('_', ' ').capitalize()} of the judge's decision vs the human "
                "majority decision.",
            )
        )
    if b.ranks:
        out.append(
            Finding(
                "roc_auc",
                boot(
                    lambda r: cls.roc_auc(b.truth[r], b.score[r]),
                    n,
                    clusters,
                    ONE_CLASS,
                ),
                "ROC AUC of the judge's score for the human positive class.",
            )
        )
        out.append(
            Finding(
                "pr_auc",
                boot(
                    lambda r: cls.pr_auc(b.truth[r], b.score[r]),
                    n,
                    clusters,
                    ONE_CLASS,
                ),
                "Average precision (PR AUC) of the judge's score for the human positive class.",
            )
        )
    if b.probability is not None:
        p, bins = b.probability, calibration_bins
        out.append(
            Finding(
                "expected_calibration_error",
                boot(
                    lambda r: cls.expected_calibration_error(b.truth[r], p[r], bins),
                    n,
                    clusters,
                ),
                f"Expected calibration error of the judge's probability of the positive class "
                f"({bins} bins).",
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class RaterVotes:
    """The non-neutral human votes, each with its item (an index of the scored items): the
    judge's decision beside the vote, and, where the other raters of the item have a strict
    non-neutral majority, whether the vote and the judge's decision match it."""

    vote_item: list[int]
    vote_judge: list[int]
    vote_human: list[int]
    loo_item: list[int]
    loo_human: list[bool]
    loo_judge: list[bool]


def rater_votes(data: AgreementData) -> RaterVotes:
    """Every rater's vote against the judge and against the majority of the other raters."""
    out = RaterVotes([], [], [], [], [], [])
    for i, item_codes in enumerate(data.rater_codes):
        judge = data.judge_codes[i]
        for r, code in enumerate(item_codes):
            if code == -1:
                continue
            out.vote_item.append(i)
            out.vote_judge.append(judge)
            out.vote_human.append(code)
            rest = strict_majority_code([c for k, c in enumerate(item_codes) if k != r])
            if rest is None or rest == -1:
                continue
            out.loo_item.append(i)
            out.loo_human.append(code == rest)
            out.loo_judge.append(judge == rest)
    return out


def rater_findings(
    data: AgreementData, b: Binary, *, confidence_level: float, seed: int
) -> list[Finding]:
    """With several raters: the judge against every vote, the leave-one-rater-out ceiling, and
    accuracy on unanimous and split items."""
    out: list[Finding] = []
    votes = rater_votes(data)
    vote_judge, vote_human, loo_human, loo_judge = (
        votes.vote_judge,
        votes.vote_human,
        votes.loo_human,
        votes.loo_judge,
    )
    vote_cluster = [data.clusters[i] for i in votes.vote_item]
    loo_cluster = [data.clusters[i] for i in votes.loo_item]
    level, clusters = confidence_level, vote_cluster
    if any(len(codes) > 1 for codes in data.rater_codes):
        out.append(
            Finding(
                "judge_vote_accuracy",
                agreement_rate(
                    vote_judge, vote_human, clusters=clusters, confidence_level=level, seed=seed
                ),
                "The judge's decision vs every individual human decision.",
            )
        )
        out.append(
            Finding(
                "human_loo_accuracy",
                agreement_rate(
                    loo_human,
                    [True] * len(loo_human),
                    clusters=loo_cluster,
                    confidence_level=level,
                    seed=seed,
                ),
                "Each rater vs the strict majority of the other raters (the human ceiling).",
            )
        )
        out.append(
            Finding(
                "judge_loo_accuracy",
                agreement_rate(
                    loo_judge,
                    [True] * len(loo_judge),
                    clusters=loo_cluster,
                    confidence_level=level,
                    seed=seed,
                ),
                "The judge vs the same leave-one-rater-out majorities.",
            )
        )
        for stratum, rows in stratum_rows(b).items():
            out.append(
                Finding(
                    "stratum_accuracy",
                    _accuracy_on(b, rows, confidence_level=level, seed=seed),
                    f"Accuracy on items whose raters are {stratum}.",
                    {"stratum": stratum},
                )
            )
    return out


def stratum_rows(b: Binary) -> dict[str, list[int]]:
    """The rows of ``b`` whose raters are unanimous, and those whose raters split (each stratum
    with at least one item)."""
    found = {}
    for stratum in ("unanimous", "split"):
        rows = np.flatnonzero(b.unanimous == (stratum == "unanimous")).tolist()
        if rows:
            found[stratum] = rows
    return found


def category_rows(b: Binary, min_items: int) -> dict[str, list[int]]:
    """The rows of ``b`` per category with at least ``min_items`` items, in category order."""
    found = {}
    for category, count in sorted(Counter(b.categories).items(), key=lambda kv: str(kv[0])):
        if category is not None and count >= min_items:
            found[str(category)] = [k for k, c in enumerate(b.categories) if c == category]
    return found


def category_findings(
    b: Binary, *, min_items: int, confidence_level: float, seed: int
) -> list[Finding]:
    """Accuracy per category with at least ``min_items`` items (information only)."""
    return [
        Finding(
            "category_accuracy",
            _accuracy_on(b, rows, confidence_level=confidence_level, seed=seed),
            "Accuracy in one category (information; never decides the verdict).",
            {"category": category},
        )
        for category, rows in category_rows(b, min_items).items()
    ]


def _accuracy_on(b: Binary, rows: list[int], *, confidence_level: float, seed: int) -> Estimate:
    """The judge's accuracy on the items ``rows``, clustered as the whole data is."""
    return agreement_rate(
        b.judge[rows].tolist(),
        b.truth[rows].tolist(),
        clusters=[b.clusters[k] for k in rows],
        confidence_level=confidence_level,
        seed=seed,
    )
