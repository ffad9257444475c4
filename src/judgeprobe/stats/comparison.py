"""Differences between two runs' estimates of one finding: paired where the units are shared.

Two audits of the same items (one judge against another, one rubric wording against another)
measure each finding on the same units, so the difference is estimated on the pairs:

* :func:`paired_difference`: a statistic of the candidate's per-unit values minus the same
  statistic of the baseline's, with a bootstrap interval that resamples *units*, the two runs'
  values of a unit staying together (the paired bootstrap). For a rate of 0/1 outcomes, the
  p-value is the exact McNemar test on the discordant units; otherwise it is read from the
  interval (normal approximation, as :func:`~judgeprobe.stats.multiplicity.pvalue_from_ci`).
* :func:`unpaired_difference`: when only the two intervals are known (card files without their
  run stores), the difference of the estimates with standard errors read from each interval,
  as if the runs were independent. For positively correlated runs on the same items this is
  conservative: it finds fewer differences than a paired test would.

Every p-value here is two-sided, of "no difference"; the family of differences is adjusted by
the caller (Holm, :func:`~judgeprobe.stats.multiplicity.holm`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import norm

from judgeprobe.stats.multiplicity import pvalue_from_ci
from judgeprobe.stats.proportions import mcnemar_exact
from judgeprobe.stats.resampling import bootstrap
from judgeprobe.stats.result import ConfidenceInterval, Estimate, TestResult

NULL = "no difference between the runs"


def two_sided_pvalue(estimate: float, low: float, high: float, *, level: float) -> float:
    """Two-sided p-value of "the difference is 0" read from its interval (normal approximation).

    Examples
    --------
    >>> round(two_sided_pvalue(0.2, 0.1, 0.3, level=0.95), 4)
    0.0001
    >>> two_sided_pvalue(0.0, 0.0, 0.0, level=0.95)
    1.0
    """
    if not all(math.isfinite(v) for v in (estimate, low, high)):
        return math.nan
    if estimate == 0.0:
        return 1.0
    above = pvalue_from_ci(estimate, low, high, bound=0.0, level=level, higher_is_worse=True)
    below = pvalue_from_ci(estimate, low, high, bound=0.0, level=level, higher_is_worse=False)
    return min(1.0, 2.0 * min(above, below))


def paired_difference(
    baseline: ArrayLike,
    candidate: ArrayLike,
    statistic: Callable[[NDArray[np.float64]], Any],
    *,
    binary: bool = False,
    clusters: Sequence[Hashable] | None = None,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> tuple[Estimate, TestResult]:
    """``statistic(candidate) - statistic(baseline)`` over shared units, with its paired test.

    Parameters
    ----------
    baseline, candidate : array_like, shape (n_units,) or (n_units, k)
        Row ``i`` of each is unit ``i``'s values in that run (``k`` columns when the statistic
        needs several values per unit, e.g. a score before and after a change).
    statistic : callable
        Maps an array of rows, shape ``(..., m, k)``, to the finding's estimate on those ``m``
        units, one per leading index (so the bootstrap's replicates take one call).
    binary : bool, default False
        The values are 0/1 outcomes and the statistic is their mean (a rate): the p-value is
        then the exact McNemar test on the units whose outcome differs between the runs (when
        the units are independent: with ``clusters``, it is read from the interval instead).
    clusters : sequence of hashable, optional
        One label per unit: units of one cluster (items that share a prompt) are resampled
        together, as the probe's own interval resamples them.

    Returns
    -------
    (Estimate, TestResult)
        The difference with its paired percentile-bootstrap interval (n = shared units), and
        the two-sided test of no difference.

    Examples
    --------
    >>> diff, test = paired_difference(
    ...     [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    ...     [1, 1, 1, 1, 1, 1, 1, 1, 0, 0],
    ...     lambda rows: rows[..., 0].mean(axis=-1),
    ...     binary=True,
    ... )
    >>> diff.estimate, test.n, round(test.pvalue, 4)
    (0.8, 8, 0.0078)
    """
    a = _rows(baseline)
    b = _rows(candidate)
    if a.shape != b.shape:
        raise ValueError(f"baseline and candidate differ in shape: {a.shape} and {b.shape}")
    n = a.shape[0]
    if n == 0:
        empty = Estimate.undefined(0, reason="the runs share no unit")
        return empty, TestResult(math.nan, math.nan, "two-sided", NULL, 0)
    width = a.shape[1]

    def difference(*columns: NDArray[Any], axis: int = -1) -> Any:
        left = np.stack(columns[:width], axis=-1)
        right = np.stack(columns[width:], axis=-1)
        return np.asarray(statistic(right)) - np.asarray(statistic(left))

    columns = [a[:, j] for j in range(width)] + [b[:, j] for j in range(width)]
    estimate = bootstrap(
        columns,
        difference,
        clusters=clusters,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        vectorized=True,
    )
    ci = estimate.ci
    estimate = Estimate(
        estimate.estimate,
        ConfidenceInterval(ci.low, ci.high, ci.level, f"paired {ci.method}"),
        n,
        {"units": n},
    )
    independent = clusters is None or len(set(clusters)) == n
    if binary and independent:
        worse = int(np.sum((b[:, 0] > 0.5) & (a[:, 0] <= 0.5)))
        better = int(np.sum((b[:, 0] <= 0.5) & (a[:, 0] > 0.5)))
        test = mcnemar_exact(worse, better)
        if test.n == 0:  # no discordant unit: the runs agree on every one
            test = TestResult(math.nan, 1.0, "two-sided", f"{NULL} (exact McNemar)", n)
        else:
            test = TestResult(
                test.statistic, test.pvalue, "two-sided", f"{NULL} (exact McNemar)", test.n
            )
        return estimate, test
    pvalue = two_sided_pvalue(estimate.estimate, ci.low, ci.high, level=ci.level)
    return estimate, TestResult(
        estimate.estimate, pvalue, "two-sided", f"{NULL} (from the paired bootstrap CI)", n
    )


def unpaired_difference(baseline: Estimate, candidate: Estimate) -> tuple[Estimate, TestResult]:
    """``candidate - baseline`` from the two estimates and intervals alone, as independent.

    Each standard error is the interval's half-width over the normal quantile of its level; the
    difference's interval is ``d -/+ z * sqrt(se_a**2 + se_b**2)``. Undefined when either
    estimate or interval is.

    Examples
    --------
    >>> a = Estimate(0.1, ConfidenceInterval(0.0, 0.2, 0.95, "wilson"), 50)
    >>> b = Estimate(0.5, ConfidenceInterval(0.4, 0.6, 0.95, "wilson"), 50)
    >>> diff, test = unpaired_difference(a, b)
    >>> round(diff.estimate, 3), test.pvalue < 0.001
    (0.4, True)
    """
    values = (baseline.estimate, candidate.estimate)
    ends = (baseline.ci.low, baseline.ci.high, candidate.ci.low, candidate.ci.high)
    n = min(baseline.n, candidate.n)
    if not all(math.isfinite(v) for v in (*values, *ends)):
        reason = "an estimate or its interval is undefined"
        return Estimate.undefined(n, reason=reason), TestResult(
            math.nan, math.nan, "two-sided", NULL, n
        )
    level = min(baseline.ci.level, candidate.ci.level)
    z = float(norm.ppf(0.5 + level / 2.0))
    se = math.hypot(
        (baseline.ci.high - baseline.ci.low) / (2 * z),
        (candidate.ci.high - candidate.ci.low) / (2 * z),
    )
    d = candidate.estimate - baseline.estimate
    ci = ConfidenceInterval(d - z * se, d + z * se, level, "unpaired normal, from the two CIs")
    pvalue = float(2 * norm.sf(abs(d) / se)) if se > 0 else float(d == 0)
    return Estimate(d, ci, n, {"n_baseline": baseline.n, "n_candidate": candidate.n}), TestResult(
        d, pvalue, "two-sided", f"{NULL} (unpaired, from the two CIs)", n
    )


def _rows(values: ArrayLike) -> NDArray[np.float64]:
    array = np.asarray(values, dtype=float)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(f"per-unit values must be 1-D or 2-D, got shape {array.shape}")
    return array
