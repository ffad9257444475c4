"""Agreement of a judge's decisions and scores with human labels on the same items.

Plain point statistics on numpy arrays, each a function of the rows it is given, so that a
bootstrap over items (:func:`bootstrap_rows`) can resample them. Decisions are coded ``1``
(positive), ``0`` (negative) and ``-1`` (neutral: the judge's score fell in the decision rule's
neutral band). Human truth is ``1`` / ``0``. A neutral judge decision is never a hit: it is
wrong for accuracy, balanced accuracy and kappa (a third label no human gave) and "not
positive" for precision, recall, F1 and MCC. The formulas are the textbook ones (the same as
scikit-learn's, against which the tests check them); they are written on arrays because the
bootstrap calls them thousands of times.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Literal

import krippendorff
import numpy as np
from numpy.typing import NDArray
from scipy.stats import rankdata, spearmanr
from sklearn.metrics import average_precision_score

from judgeprobe.stats.resampling import bootstrap
from judgeprobe.stats.result import Estimate

Rows = NDArray[np.int64]
Metric = Callable[[Rows], float]


def _counts(truth: NDArray[Any], pred: NDArray[Any]) -> tuple[int, int, int, int]:
    positive = pred == 1
    actual = truth == 1
    tp = int(np.sum(positive & actual))
    fp = int(np.sum(positive & ~actual))
    fn = int(np.sum(~positive & actual))
    tn = int(np.sum(~positive & ~actual))
    return tp, fp, fn, tn


def accuracy(truth: NDArray[Any], pred: NDArray[Any]) -> float:
    """Share of items where the decision equals the human one."""
    return float(np.mean(truth == pred)) if len(truth) else math.nan


def balanced_accuracy(truth: NDArray[Any], pred: NDArray[Any]) -> float:
    """Mean of the recall of the positive and of the negative human class; NaN without both."""
    pos, neg = truth == 1, truth == 0
    if not pos.any() or not neg.any():
        return math.nan
    return 0.5 * (float(np.mean(pred[pos] == 1)) + float(np.mean(pred[neg] == 0)))


def precision(truth: NDArray[Any], pred: NDArray[Any]) -> float:
    tp, fp, _, _ = _counts(truth, pred)
    return tp / (tp + fp) if tp + fp else math.nan


def recall(truth: NDArray[Any], pred: NDArray[Any]) -> float:
    tp, _, fn, _ = _counts(truth, pred)
    return tp / (tp + fn) if tp + fn else math.nan


def f1(truth: NDArray[Any], pred: NDArray[Any]) -> float:
    tp, fp, fn, _ = _counts(truth, pred)
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else math.nan


def mcc(truth: NDArray[Any], pred: NDArray[Any]) -> float:
    """Matthews correlation of "decided positive" with "human positive"; NaN when a margin is 0."""
    tp, fp, fn, tn = _counts(truth, pred)
    denominator = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return (tp * tn - fp * fn) / denominator if denominator else math.nan


def kappa(truth: NDArray[Any], pred: NDArray[Any]) -> float:
    """Cohen's kappa over the labels either side uses; NaN when expected agreement is 1."""
    n = len(truth)
    if n == 0:
        return math.nan
    observed = float(np.mean(truth == pred))
    expected = sum(
        float(np.mean(truth == label)) * float(np.mean(pred == label)) for label in (-1, 0, 1)
    )
    return math.nan if math.isclose(expected, 1.0) else (observed - expected) / (1.0 - expected)


def roc_auc(truth: NDArray[Any], score: NDArray[Any]) -> float:
    """Area under the ROC curve (Mann-Whitney, ties counted half); NaN without both classes."""
    pos = truth == 1
    n1, n0 = int(pos.sum()), int((~pos).sum())
    if n1 == 0 or n0 == 0:
        return math.nan
    ranks = rankdata(score)
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def pr_auc(truth: NDArray[Any], score: NDArray[Any]) -> float:
    """Average precision (scikit-learn's step-wise PR AUC); NaN without a positive item."""
    if not np.any(truth == 1) or np.all(truth == 1):
        return math.nan
    return float(average_precision_score(truth, score))


def spearman(a: NDArray[Any], b: NDArray[Any]) -> float:
    """Spearman's rank correlation; NaN when either side is constant."""
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return math.nan
    return float(spearmanr(a, b).statistic)


def quadratic_weighted_kappa(a: NDArray[Any], b: NDArray[Any], grid: Sequence[float]) -> float:
    """Cohen's kappa with quadratic weights of two ratings snapped to ``grid`` (the scale)."""
    points = np.asarray(sorted(grid), dtype=np.float64)
    if len(a) == 0 or len(points) < 2:
        return math.nan
    ia = np.abs(a[:, None] - points[None, :]).argmin(axis=1)
    ib = np.abs(b[:, None] - points[None, :]).argmin(axis=1)
    k = len(points)
    observed = np.zeros((k, k))
    np.add.at(observed, (ia, ib), 1.0)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / len(a)
    weights = (np.subtract.outer(np.arange(k), np.arange(k)) ** 2) / (k - 1) ** 2
    denominator = float((weights * expected).sum())
    return math.nan if denominator == 0 else 1.0 - float((weights * observed).sum()) / denominator


def interval_alpha(ratings: NDArray[np.float64]) -> float:
    """Krippendorff's interval alpha of a raters x items matrix (NaN = no rating), in O(n) memory.

    From the definition (Krippendorff, 2011, "Computing Krippendorff's alpha-reliability"):
    alpha = 1 - D_o / D_e with the squared difference as the metric, over the pairable values
    (those of units with at least two ratings; ``n`` of them). With ``m_u`` values in unit ``u``,

    * D_o = (1/n) sum_u 1/(m_u - 1) sum_{i != j in u} (x_i - x_j)^2,
    * D_e = 1/(n (n - 1)) sum_{i != j, all pairable} (x_i - x_j)^2,

    and a sum of squared differences over the ordered pairs of ``m`` values is
    ``2 m`` times their sum of squares about their mean. So alpha =
    1 - (n - 1) sum_u [m_u SS_u / (m_u - 1)] / (n SS), with no values x values coincidence matrix
    (which ``krippendorff.alpha`` builds per unit: gigabytes on nearly distinct scores).
    NaN when fewer than two ratings are pairable or they are all equal.
    """
    present = ~np.isnan(ratings)
    m = present.sum(axis=0)
    pairable = m >= 2
    values = np.where(present, ratings, 0.0)[:, pairable]
    mask, m = present[:, pairable], m[pairable].astype(np.float64)
    n = float(m.sum())
    if n < 2:
        return math.nan
    unit_mean = values.sum(axis=0) / m
    within = (np.where(mask, values - unit_mean, 0.0) ** 2).sum(axis=0)
    grand_mean = float(values.sum()) / n
    total = float((np.where(mask, values - grand_mean, 0.0) ** 2).sum())
    if total == 0.0:
        return math.nan
    return 1.0 - (n - 1.0) * float(np.sum(m * within / (m - 1.0))) / (n * total)


def alpha(
    ratings: NDArray[np.float64], level: Literal["interval", "ordinal"], grid: Sequence[float] = ()
) -> float:
    """Krippendorff's alpha of a raters x items matrix (NaN = no rating).

    ``level`` is ``"interval"`` (:func:`interval_alpha`, closed form) or ``"ordinal"`` (by
    ``krippendorff``, whose memory grows with the square of the number of distinct values: the
    ratings are snapped to ``grid``, the scale's few points, first).
    NaN when fewer than two items have two ratings or all ratings are equal.
    """
    if ratings.shape[1] == 0 or np.sum(np.sum(~np.isnan(ratings), axis=0) >= 2) < 2:
        return math.nan
    if level == "interval":
        return interval_alpha(ratings)
    data = ratings
    domain: Any = None
    if level == "ordinal":
        points = np.asarray(sorted(grid), dtype=np.float64)
        snapped = points[np.abs(np.nan_to_num(ratings)[..., None] - points).argmin(axis=-1)]
        data = np.where(np.isnan(ratings), np.nan, snapped)
        domain = points
    present = data[~np.isnan(data)]
    if present.size == 0 or np.all(present == present[0]):
        return math.nan
    try:
        return float(
            krippendorff.alpha(
                reliability_data=data, level_of_measurement=level, value_domain=domain
            )
        )
    except (ValueError, ZeroDivisionError):
        return math.nan


def reliability_bins(
    truth: NDArray[Any], probability: NDArray[Any], bins: int
) -> list[tuple[float, float, int]]:
    """The reliability diagram's points: per non-empty equal-width bin of ``probability`` (in
    [0, 1]), its mean probability, its share of positive items and its item count, in bin order.

    A calibrated judge's points lie on the diagonal; :func:`expected_calibration_error` is their
    item-weighted mean distance from it.
    """
    which = np.clip((probability * bins).astype(int), 0, bins - 1)
    out = []
    for b in range(bins):
        inside = which == b
        if inside.any():
            out.append(
                (
                    float(probability[inside].mean()),
                    float(np.mean(truth[inside] == 1)),
                    int(inside.sum()),
                )
            )
    return out


def expected_calibration_error(truth: NDArray[Any], probability: NDArray[Any], bins: int) -> float:
    """ECE: the item-weighted mean of |mean probability - positive rate| over equal-width bins."""
    if len(truth) == 0:
        return math.nan
    points = reliability_bins(truth, probability, bins)
    return sum(count * abs(mean - rate) for mean, rate, count in points) / len(truth)


def bootstrap_rows(
    metric: Metric,
    n: int,
    *,
    clusters: Sequence[Hashable] | None,
    confidence_level: float,
    n_resamples: int,
    seed: int,
    counts: dict[str, float] | None = None,
) -> Estimate:
    """``metric(rows)`` on all ``n`` rows, with a bootstrap interval over rows (or clusters).

    ``metric`` takes the indices of the rows to use, so one helper serves every statistic above
    (paired differences included: a difference of two metrics on the same drawn rows).
    """
    estimate = bootstrap(
        np.arange(n, dtype=np.float64),
        lambda rows: metric(rows.astype(np.int64)),
        clusters=clusters,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        vectorized=False,
    )
    if counts:
        estimate = Estimate(
            estimate.estimate, estimate.ci, estimate.n, {**estimate.counts, **counts}
        )
    return estimate
