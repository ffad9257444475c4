"""Anytime-valid looks: the error level each round of a sequential audit may spend.

An audit that looks at its findings after every round, and stops at the first round where
every gated finding is decided, would inflate its error rate if every look were made at the
fixed level ``alpha``: with enough looks a no-effect judge fails by chance. Here the looks
share ``alpha``. When the number of looks ``K`` is known before the first (a sequential audit's
rounds are fixed by its options and its items), each look decides at ``alpha_r = alpha / K``;
with no such bound, look ``r`` (from 1) decides at

    alpha_r = alpha * 6 / (pi**2 * r**2),    sum over r >= 1 of alpha_r = alpha.

Either way the levels sum to at most ``alpha``, and each round's confidence interval has level
``1 - alpha_r``. On the planted judges of ``benchmarks/until_decided.py`` the first costs fewer
calls (its later looks, where the decisions near a threshold are made, are less strict). By the
union bound, the
probability that *any* round's interval misses the true value is at most ``sum alpha_r <=
alpha``: the intervals of all rounds together are a confidence sequence, valid at every
stopping time, whatever rule decides when to stop (Darling and Robbins 1967, "Confidence
sequences for mean, variance, and median", PNAS 58:66-68; the union bound over a geometric
grid of looks is the simplest of the constructions in Howard, Ramdas, McAuliffe and Sekhon
2021, "Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Statist.
49:1055-1080). A false fail at any round needs an interval that misses, so it stays at most
``alpha`` too.

The construction holds for any estimator whose fixed-n interval is valid, which is why it was
chosen over a dedicated confidence-sequence library: the probes' findings are Wilson intervals,
bootstrap intervals of distances and paired tests, not one bounded mean. Its price is small
when rounds grow geometrically: few looks are made, and the level of the r-th one grows only
as ``log r`` in the normal quantile.
"""

from __future__ import annotations

import math

from judgeprobe.stats._validation import InvalidParameterError, check_level

__all__ = ["look_alpha", "look_level"]


def look_alpha(alpha: float, look: int, *, looks: int | None = None) -> float:
    """The error level round ``look`` (from 1) may spend of ``alpha`` (see the module):
    ``alpha / looks`` of ``looks`` planned ones, else the unbounded schedule.

    Examples
    --------
    >>> round(look_alpha(0.05, 1), 4), round(look_alpha(0.05, 2), 4)
    (0.0304, 0.0076)
    >>> round(sum(look_alpha(0.05, r) for r in range(1, 10_000)), 4)
    0.05
    >>> look_alpha(0.05, 2, looks=5)
    0.01
    """
    if isinstance(look, bool) or not isinstance(look, int) or look < 1:
        raise InvalidParameterError(f"look must be an integer >= 1, got {look!r}")
    check_level(1.0 - alpha)
    if looks is not None:
        if isinstance(looks, bool) or not isinstance(looks, int) or not 1 <= look <= looks:
            raise InvalidParameterError(f"looks must be an integer >= look ({look}), got {looks!r}")
        return alpha / looks
    return alpha * 6.0 / (math.pi**2 * look**2)


def look_level(level: float, look: int, *, looks: int | None = None) -> float:
    """The confidence level of round ``look`` for an audit at ``level`` overall.

    Examples
    --------
    >>> round(look_level(0.95, 1), 4)
    0.9696
    >>> round(look_level(0.95, 1, looks=5), 4)
    0.99
    """
    check_level(level)
    return 1.0 - look_alpha(1.0 - level, look, looks=looks)
