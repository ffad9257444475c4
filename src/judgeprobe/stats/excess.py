"""A rate's excess over a null rate measured on other units: the difference of two intervals.

An invariance probe's flip rate mixes two things: what the change of input does to the judge's
decision, and the judge's own rerun noise (a judge sampled at a temperature above 0 flips some
of its decisions when asked the same thing twice). The second is measured on its own, as the
share of reruns of the same request whose decision differs, and :func:`excess_over` gives the
first: the rate minus the null rate, with an interval that carries the uncertainty of both.

The interval is the MOVER construction (method of variance estimates recovery, Zou and Donner
2008), which is Newcombe's hybrid score interval (Newcombe 1998, method 10) when both intervals
are Wilson's: for ``d = p1 - p2`` with intervals ``[l1, u1]`` and ``[l2, u2]``,

    low  = d - sqrt((p1 - l1)**2 + (u2 - p2)**2)
    high = d + sqrt((u1 - p1)**2 + (p2 - l2)**2)

It takes each interval as it is, so the rate's own interval (Wilson's at an effective sample
size over the items its units share, :mod:`judgeprobe.stats.shared_items`) keeps its width.
The two rates are taken as independent: the null is measured on reruns, a separate set of calls.

References
----------
R. G. Newcombe (1998), "Interval estimation for the difference between independent
proportions", Stat. Med. 17:873-890. G. Y. Zou and A. Donner (2008), "Construction of
confidence limits about effect measures: a general approach", Stat. Med. 27:1693-1702.
"""

from __future__ import annotations

import dataclasses
import math

from scipy import stats as sps

from judgeprobe.stats.result import ConfidenceInterval, Estimate

MOVER = "mover"


def excess_over(rate: Estimate, null: Estimate) -> Estimate:
    """``rate`` minus ``null``, with the MOVER interval of the difference (see the module).

    Parameters
    ----------
    rate : Estimate
        The rate under the change (its interval at the level wanted).
    null : Estimate
        The null rate (the judge's rerun flips), with its interval at the same level.

    Returns
    -------
    Estimate
        ``estimate = rate - null`` in [-1, 1], ``n`` the rate's ``n`` (the units the finding is
        over), counts: the rate's, plus ``rate``, ``null``, ``null_low``, ``null_high`` and
        ``null_n``. Undefined when either is, with the reason of the first undefined one.

    Examples
    --------
    >>> from judgeprobe.stats import proportion
    >>> excess_over(proportion(56, 70), proportion(48, 80))  # Newcombe (1998), example (a)
    Estimate(0.2, 95% CI [0.05243, 0.3339] (mover), n=70)
    >>> excess_over(proportion(0, 40), proportion(0, 80)).ci.high == proportion(0, 40).ci.high
    True
    """
    if not rate.defined:
        return rate
    if not null.defined:
        return Estimate.undefined(rate.n, reason=f"no rerun null: {null.reason or 'no data'}")
    p1, l1, u1 = rate.estimate, rate.ci.low, rate.ci.high
    p2, l2, u2 = null.estimate, null.ci.low, null.ci.high
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    ci = ConfidenceInterval(max(low, -1.0), min(high, 1.0), rate.ci.level, MOVER)
    counts = {
        **rate.counts,
        "rate": p1,
        "null": p2,
        "null_low": l2,
        "null_high": u2,
        "null_n": float(null.n),
    }
    return Estimate(d, ci, rate.n, counts)


__all__ = ["MOVER", "excess_over"]


def beyond_null(rate: Estimate, null: Estimate) -> Estimate:
    """``rate`` minus ``null`` (:func:`excess_over`), unless the rate
    is shown *below* its null: then the reruns move more often than the probe's own requests do,
    and the null cannot be the noise of the rate. A judge that decodes its first trial greedily
    and samples its reruns does so (the embedded judges: trial 0 is the most probable label),
    and an excess read against such a null is negative whatever the rate, so it would pass a
    rate that on its own decides nothing. "Shown below" is a one-sided test at the interval's
    error rate (5 % for a 95 % interval): the excess's upper end, its half-width scaled from the
    two-sided to the one-sided quantile, is below 0. The interval is then the union of the two
    readings, from the excess's lower end (the null applies) to the rate's own upper end (it
    does not): the excess passes only when the rate alone would, and warns or fails only when
    both would.

    >>> from judgeprobe.stats import proportion
    >>> shown_below = beyond_null(proportion(0, 40), proportion(11, 40))
    >>> round(shown_below.ci.high, 3) == round(proportion(0, 40).ci.high, 3)
    True
    >>> beyond_null(proportion(6, 40), proportion(4, 40)).ci.method
    'mover'
    """
    excess = excess_over(rate, null)
    if not excess.defined or not _shown_below(excess):
        return excess
    ci = dataclasses.replace(
        excess.ci, high=max(excess.ci.high, rate.ci.high), method=NULL_ABOVE_RATE
    )
    return dataclasses.replace(excess, ci=ci, counts={**excess.counts, "null_above_rate": 1})


def _shown_below(excess: Estimate) -> bool:
    """Whether a one-sided test at ``1 - level`` finds the rate below its null."""
    level = excess.ci.level
    scale = float(sps.norm.ppf(level)) / float(sps.norm.ppf(0.5 + level / 2))
    return excess.estimate + (excess.ci.high - excess.estimate) * scale < 0


NULL_ABOVE_RATE = "mover, up to the rate's own upper end (the rate is below its rerun null)"
"""The interval method of an excess whose rate is shown below its null (:func:`beyond_null`)."""
