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

The spending holds for any estimator whose fixed-n interval is valid, which is why every
finding keeps it: the probes' findings are Wilson intervals, bootstrap intervals of distances
and paired tests, not one bounded mean. Its price is small
when rounds grow geometrically: few looks are made, and the level of the r-th one grows only
as ``log r`` in the normal quantile.

A per-item rate's *pass side* needs no share of the looks at all. When a finding is the share
of items with some outcome, and a longer prefix of the items only appends outcomes, its evidence
is one stream of observations in [0, 1]. For a prior ``pi`` on the rate ``q``,

    M_n(p) = integral of prod_i (q / p)**x_i ((1 - q) / (1 - p))**(1 - x_i) dpi(q)
           = B(a + k, b + n - k) / (B(a, b) p**k (1 - p)**(n - k))   for pi = Beta(a, b),

is a nonnegative martingale with mean 1 under the true rate ``p`` (a supermartingale for
observations in [0, 1] with mean ``p``, each factor being convex in ``x_i``), so by Ville's
inequality ``P(M_n(p) >= 1 / alpha for some n) <= alpha``: the beta-binomial mixture
boundary (Robbins 1970, "Statistical methods related to the law of the iterated logarithm",
Ann. Math. Statist. 41:1397-1409; Howard, Ramdas, McAuliffe and Sekhon 2021, section 3).
``log M_n`` is convex in ``p`` with its minimum at ``k / n``, so the rates beyond the bound of
:func:`sequence_bound` are rejected together, at every ``n`` at once, and ``1 / M_n(t)`` is an
anytime-valid p-value for the claim that the rate lies on the near side of ``t``
(:func:`sequence_pvalue`).

The sequential audit uses it for the side of a rate that a *pass* rests on: a pass needs every
rate at or beyond the pass threshold rejected, which for a judge with few or no bad events is
evidence that grows by ``1 / (1 - t)`` per clean item, whatever the number of looks. The prior
(:func:`pass_prior`) is fixed before the data: Jeffreys' shape with its mean on the pass
threshold. The bad side (a warn or a fail) gets the exact fixed-n interval at a round's share
of the looks, which on the planted judges of ``benchmarks/until_decided.py`` decides an effect
with fewer items than any mixture tried (the mixture's price at the tens to hundreds of items an
audit has is larger than ``log K`` for the ``K`` looks of a geometric schedule). Each side at
``alpha / 2``, the two together miss with probability at most ``alpha``, as a two-sided
interval at ``1 - alpha`` does.

The maintained library for confidence sequences, ``confseq``, has had no release since 2023 and
ships sources to compile only, so the construction is written here (scipy's log-beta function
does the work).
"""

from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.special import betaln, logsumexp

from judgeprobe.stats._validation import InvalidParameterError, check_level
from judgeprobe.stats.proportions import _check_k_n

__all__ = [
    "SEQUENCE_METHOD",
    "BetaPrior",
    "log_mixture_martingale",
    "look_alpha",
    "look_level",
    "pass_prior",
    "sequence_bound",
    "sequence_pvalue",
]

SEQUENCE_METHOD = (
    "clopper-pearson at the round's share (bad side), beta-binomial mixture (pass side)"
)
"""The ``ConfidenceInterval.method`` of a per-item rate in a sequential audit."""

BetaPrior = tuple[tuple[float, float, float], ...]
"""A finite mixture of beta priors: ``(weight, a, b)`` per component, weights summing to 1."""


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


def pass_prior(threshold: float, *, higher_is_worse: bool) -> BetaPrior:
    """The prior of a rate's pass side: Jeffreys' shape, ``Beta(1/2, b)`` (``Beta(a, 1/2)``
    when lower is worse), with its mean on the pass threshold (clamped to [0.001, 0.999]).

    Examples
    --------
    >>> pass_prior(0.05, higher_is_worse=True)
    ((1.0, 0.5, 9.5),)
    >>> pass_prior(0.8, higher_is_worse=False)
    ((1.0, 2.0, 0.5),)
    """
    t = min(0.999, max(0.001, float(threshold)))
    if higher_is_worse:
        return ((1.0, 0.5, round(0.5 * (1.0 - t) / t, 12)),)
    return ((1.0, round(0.5 * t / (1.0 - t), 12), 0.5),)


def log_mixture_martingale(k: int, n: int, p: float, prior: BetaPrior) -> float:
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


def sequence_bound(k: int, n: int, alpha: float, *, upper: bool, prior: BetaPrior) -> float:
    """The one-sided confidence-sequence bound of ``k`` of ``n``: the rates above it (below it
    when not ``upper``) are rejected at ``alpha``, at every ``n`` at once (see the module).

    Examples
    --------
    >>> prior = pass_prior(0.05, higher_is_worse=True)
    >>> sequence_bound(0, 102, 0.025, upper=True, prior=prior) < 0.05  # passes
    True
    >>> sequence_bound(0, 68, 0.025, upper=True, prior=prior) < 0.05
    False
    """
    k, n = _check_k_n(k, n)
    check_level(1.0 - alpha)
    if n == 0:
        return 1.0 if upper else 0.0
    bar, rate, tiny = math.log(1.0 / alpha), k / n, 1e-12

    def excess(p: float) -> float:
        return log_mixture_martingale(k, n, p, prior) - bar

    if upper:
        return 1.0 if k == n else float(brentq(excess, max(rate, tiny), 1.0 - tiny))
    return 0.0 if k == 0 else float(brentq(excess, tiny, min(rate, 1.0 - tiny)))


def sequence_pvalue(k: int, n: int, bound: float, *, below: bool, prior: BetaPrior) -> float:
    """Anytime-valid p-value of the claim that the rate lies below ``bound`` (above it when not
    ``below``): ``min(1, 1 / M_n(bound))`` when ``k / n`` lies on that side, else 1.

    Valid at every ``n`` at once: a rate not on that side makes it ``<= a`` at some ``n`` with
    probability at most ``a`` (``M_n`` grows from the estimate outwards, so the true rate's
    martingale is at least ``M_n(bound)``).

    Examples
    --------
    >>> prior = pass_prior(0.05, higher_is_worse=True)
    >>> sequence_pvalue(0, 150, 0.05, below=True, prior=prior) < 0.01
    True
    >>> sequence_pvalue(10, 100, 0.05, below=True, prior=prior)
    1.0
    """
    k, n = _check_k_n(k, n)
    if n == 0 or not 0.0 < bound < 1.0:
        return 1.0
    rate = k / n
    if (rate >= bound) if below else (rate <= bound):
        return 1.0
    return float(min(1.0, math.exp(-log_mixture_martingale(k, n, bound, prior))))
