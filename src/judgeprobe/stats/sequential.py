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

A per-item rate needs no share of the looks at all. When a finding is the share of items with
some outcome, and a longer prefix of the items only appends outcomes, its evidence is one
stream of observations in [0, 1], and a *confidence sequence* covers its true rate at every
number of items at once. :func:`proportion_sequence` is the beta-binomial mixture one (Robbins
1970, "Statistical methods related to the law of the iterated logarithm", Ann. Math. Statist.
41:1397-1409; Howard, Ramdas, McAuliffe and Sekhon 2021, section 3, the conjugate mixture
for Bernoulli and bounded observations): for a prior ``pi`` on the rate ``q``,

    M_n(p) = integral of prod_i (q / p)**x_i ((1 - q) / (1 - p))**(1 - x_i) dpi(q)
           = B(a + k, b + n - k) / (B(a, b) p**k (1 - p)**(n - k))   for pi = Beta(a, b),

is a nonnegative martingale with mean 1 under the true rate ``p`` (a supermartingale for
observations in [0, 1] with mean ``p``, as each factor is convex in ``x_i``), so by Ville's
inequality ``P(M_n(p) >= 1 / alpha for some n) <= alpha``. The set ``{p : M_n(p) < 1 / alpha}``
is an interval (``log M_n`` is convex in ``p``) that holds the true rate at every ``n`` with
probability ``1 - alpha``: looking after every round costs nothing, and ``1 / M_n(b)`` is an
anytime-valid p-value for a claim that the rate lies beyond ``b``. A finite mixture of beta
priors is one too. The prior is fixed before the data: :func:`threshold_prior` puts it on the
finding's thresholds, the rates whose side the audit must tell.

This is the tighter construction the package uses where it applies: a rate of 0 of ``n`` passes
below a warn threshold of 0.05 after about 90 items at 95 %, where the spending of 7 looks needs
140. The maintained library for it, ``confseq``, had no release since 2023 and ships sources
to compile only, so the construction is written here (scipy's log-beta function does the work).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy.optimize import brentq
from scipy.special import betaln, logsumexp

from judgeprobe.stats._validation import InvalidParameterError, check_level
from judgeprobe.stats.proportions import _check_k_n
from judgeprobe.stats.result import ConfidenceInterval, Estimate

__all__ = [
    "JEFFREYS",
    "SEQUENCE_METHOD",
    "BetaPrior",
    "log_mixture_martingale",
    "look_alpha",
    "look_level",
    "proportion_sequence",
    "sequence_pvalue",
    "threshold_prior",
]

SEQUENCE_METHOD = "beta-binomial mixture confidence sequence"
"""The ``ConfidenceInterval.method`` of :func:`proportion_sequence`."""

BetaPrior = tuple[tuple[float, float, float], ...]
"""A finite mixture of beta priors: ``(weight, a, b)`` per component, weights summing to 1."""

JEFFREYS: BetaPrior = ((1.0, 0.5, 0.5),)
"""The prior of a rate with no threshold: Jeffreys' Beta(1/2, 1/2)."""

CONCENTRATION = 10.0
"""``a + b`` of each component of :func:`threshold_prior`: a prior as informative as 10 items."""


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


def threshold_prior(
    values: Sequence[float | None], *, concentration: float = CONCENTRATION
) -> BetaPrior:
    """An equal mixture of beta priors centred on the rates in ``values`` (a finding's warn and
    fail thresholds), each ``Beta(c t, c (1 - t))`` with ``c = concentration``; Jeffreys' when
    none lies in (0, 1). The thresholds are fixed before the data, so the prior is too.

    Examples
    --------
    >>> threshold_prior([0.05, 0.10])
    ((0.5, 0.5, 9.5), (0.5, 1.0, 9.0))
    >>> threshold_prior([None]) == JEFFREYS
    True
    """
    rates = sorted({min(0.99, max(0.01, float(v))) for v in values if v is not None})
    if not rates:
        return JEFFREYS
    weight = 1.0 / len(rates)
    return tuple(
        (weight, round(concentration * t, 12), round(concentration * (1.0 - t), 12)) for t in rates
    )


def log_mixture_martingale(k: int, n: int, p: float, prior: BetaPrior = JEFFREYS) -> float:
    """``log M_n(p)`` of the module: the evidence of ``k`` of ``n`` against the rate ``p``.

    Examples
    --------
    >>> round(log_mixture_martingale(0, 10, 0.5, ((1.0, 1.0, 1.0),)), 4)  # log(2**10 / 11)
    4.5336
    """
    if not 0.0 < p < 1.0:
        raise InvalidParameterError(f"p must lie in (0, 1), got {p!r}")
    marginal = logsumexp(
        [math.log(w) + betaln(a + k, b + n - k) - betaln(a, b) for w, a, b in prior]
    )
    likelihood = k * math.log(p) + (n - k) * math.log1p(-p)
    return float(marginal - likelihood)


def proportion_sequence(
    k: int, n: int, *, confidence_level: float = 0.95, prior: BetaPrior = JEFFREYS
) -> Estimate:
    """The rate ``k / n`` with its confidence sequence at ``confidence_level`` (see the module):
    an interval that holds the true rate at every ``n`` of the stream at once.

    Examples
    --------
    >>> proportion_sequence(0, 90, prior=threshold_prior([0.05, 0.10])).ci.high < 0.05
    True
    >>> proportion_sequence(0, 0).defined
    False
    """
    k, n = _check_k_n(k, n)
    level = check_level(confidence_level)
    counts = {"k": k, "n": n}
    if n == 0:
        nan = math.nan
        return Estimate(nan, ConfidenceInterval(nan, nan, level, ""), 0, counts, "no trials")
    bar = math.log(1.0 / (1.0 - level))
    rate = k / n

    def excess(p: float) -> float:
        return log_mixture_martingale(k, n, p, prior) - bar

    tiny = 1e-12
    low = 0.0 if k == 0 else float(brentq(excess, tiny, min(rate, 1.0 - tiny)))
    high = 1.0 if k == n else float(brentq(excess, max(rate, tiny), 1.0 - tiny))
    return Estimate(rate, ConfidenceInterval(low, high, level, SEQUENCE_METHOD), n, counts)


def sequence_pvalue(
    k: int, n: int, bound: float, *, higher_is_worse: bool, prior: BetaPrior = JEFFREYS
) -> float:
    """Anytime-valid p-value of the claim that the rate lies beyond ``bound`` (above it when
    ``higher_is_worse``): ``min(1, 1 / M_n(bound))`` when ``k / n`` lies beyond it, else 1.

    Valid at every ``n`` at once: a rate not beyond ``bound`` makes it ``<= a`` at some ``n``
    with probability at most ``a`` (``M_n`` falls from the estimate outwards, so the true rate's
    martingale is at least ``M_n(bound)``).

    Examples
    --------
    >>> sequence_pvalue(30, 100, 0.10, higher_is_worse=True) < 0.001
    True
    >>> sequence_pvalue(5, 100, 0.10, higher_is_worse=True)
    1.0
    """
    k, n = _check_k_n(k, n)
    if n == 0 or not 0.0 < bound < 1.0:
        return 1.0
    rate = k / n
    if (rate <= bound) if higher_is_worse else (rate >= bound):
        return 1.0
    return float(min(1.0, math.exp(-log_mixture_martingale(k, n, bound, prior))))
