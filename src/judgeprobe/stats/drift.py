"""Has a judge drifted? An anytime-valid test of a rising disagreement with its audited verdicts.

A judge watched after its audit is asked again, at each *check*, about ``n_t`` anchors: items
whose verdicts the audit stored. Each anchor gives ``x = 1`` when today's decision differs from
the audited one. A judge that has not changed still disagrees now and then, through its own
rerun noise: the share ``p`` of anchors whose fresh verdict differs from the stored one is the
judge's *rerun flip rate*, measured at the audit by the reruns it made (trial 0 against trial
``t >= 1`` of the same request). The test's null hypothesis is that the disagreement rate has
stayed at or below that rate; its alternative, that from some check ``s`` on it rose.

**The null's bound.** The rerun pairs give ``k0`` differing of ``n0``; the exact (Clopper-Pearson)
one-sided upper bound ``U`` at ``alpha / 2`` (:func:`rerun_null_bound`) covers ``p`` with
probability at least ``1 - alpha / 2``. An anchor drawn uniformly from the audited items and
judged afresh differs from its stored verdict with probability ``p`` exactly (the stored verdict
is the pairs' trial 0), whatever the items' own rates; drawing a check's anchors without
replacement only concentrates their sum further (Hoeffding 1963, section 6).

**The e-detector.** For the checks from ``s`` to ``t``, with ``K`` differing of ``N`` anchors,
the beta-binomial mixture

    M_st(p) = B(a + K, b + N - K) / (B(a, b) p**K (1 - p)**(N - K))

is a test martingale under the rate ``p`` (Robbins 1970, "Statistical methods related to the
law of the iterated logarithm", Ann. Math. Statist. 41:1397-1409; see
:mod:`judgeprobe.stats.sequential`), and so is the mixture over change starts

    E_t = sum over s <= t of w_s M_st(U) [K_st / N_st > U],   w_s = 1 / (s (s + 1)),

an e-detector in the sense of Shin, Ramdas and Rinaldo ("E-detectors: a nonparametric
framework for sequential change detection", arXiv:2203.03532, 2022; New England J. Stat. Data
Sci., 2024): the evidence of a change that began at check ``s`` is not diluted by the quiet
checks before it.
``log M_st`` is convex in the rate with its minimum at ``K / N``, so a term kept (its ``K / N``
above ``U``) is at most ``M_st(p)`` for every ``p <= U``, and a term dropped is 0: ``E_t`` is
at most a test supermartingale under the null, and by Ville's inequality it ever reaches
``2 / alpha`` with probability at most ``alpha / 2``. With the null's bound, a stationary judge
raises a false alarm at *any* check, however many are looked at, with probability at most
``alpha``. ``1 / max E`` is the anytime-valid p-value (:class:`DriftLook`).

**The prior.** Beta with mean on the rate a stated change would give (:func:`alternative_rate`:
a share ``c`` of the anchors flipping turns ``p`` into ``p + c (1 - 2p)``) and strength
:data:`PRIOR_STRENGTH` (:func:`drift_prior`), fixed before the first check. Any prior keeps the
error level; this one spends the evidence where the stated change lies.

**Sizing.** :func:`anchors_for_power` gives the fewest anchors per check with which the term of a
change starting at check ``start`` alone crosses the bar within ``within`` checks with the
stated probability (the binomial quantile of the disagreements it would see; the other terms
only add evidence, so the power is at least this).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import betaln, logsumexp
from scipy.stats import binom, binomtest

from judgeprobe.stats._validation import InvalidParameterError, check_count, check_level
from judgeprobe.stats.proportions import _check_k_n
from judgeprobe.stats.sequential import BetaPrior, sequence_bound

__all__ = [
    "DRIFT_METHOD",
    "PRIOR_STRENGTH",
    "DriftLook",
    "alternative_rate",
    "anchors_for_power",
    "detectable_change",
    "detection_power",
    "disagreement_bound",
    "drift_looks",
    "drift_prior",
    "rerun_null_bound",
    "start_weight",
]

DRIFT_METHOD = (
    "e-detector: beta-binomial mixtures at the rerun null's exact upper bound, "
    "mixed over change starts (weights 1/(s(s+1)))"
)
"""How :func:`drift_looks` decides, as a report names it."""

PRIOR_STRENGTH = 20.0
"""``a + b`` of the drift prior: its mass lies within about 0.1 of the stated alternative."""


def rerun_null_bound(k: int, n: int, alpha: float) -> float:
    """The exact one-sided upper bound at level ``1 - alpha`` of ``k`` rerun flips of ``n``;
    1 when ``n`` is 0 (no pair: any rate is possible).

    Examples
    --------
    >>> round(rerun_null_bound(0, 100, 0.025), 4)  # 1 - 0.025 ** (1 / 100)
    0.0362
    >>> rerun_null_bound(0, 0, 0.025)
    1.0
    """
    k, n = _check_k_n(k, n)
    check_level(1.0 - alpha)
    if n == 0 or k == n:
        return 1.0
    ci = binomtest(k, n).proportion_ci(confidence_level=1.0 - 2.0 * alpha, method="exact")
    return float(ci.high)


def alternative_rate(null_rate: float, change: float) -> float:
    """The disagreement rate when a share ``change`` of the anchors flips: an anchor with rerun
    rate ``p`` disagrees at ``1 - p`` once flipped, so ``p + change (1 - 2p)`` on average.

    Examples
    --------
    >>> alternative_rate(0.0, 0.1), round(alternative_rate(0.05, 0.1), 4)
    (0.1, 0.14)
    """
    _check_rate("null_rate", null_rate)
    _check_rate("change", change)
    return float(null_rate + change * (1.0 - 2.0 * null_rate))


def drift_prior(null_rate: float, change: float, *, bound: float) -> BetaPrior:
    """The drift test's prior (see the module): Beta of strength :data:`PRIOR_STRENGTH` with its
    mean on :func:`alternative_rate`, moved to ``bound + change / 2`` when that is higher (a
    change the null's bound hides still gets mass above it), at most 0.99.

    Examples
    --------
    >>> drift_prior(0.0, 0.1, bound=0.036)
    ((1.0, 2.0, 18.0),)
    """
    _check_rate("bound", bound)
    mean = min(0.99, max(alternative_rate(null_rate, change), bound + change / 2.0))
    a = round(mean * PRIOR_STRENGTH, 12)
    return ((1.0, a, round(PRIOR_STRENGTH - a, 12)),)


def start_weight(start: int) -> float:
    """The weight ``1 / (s (s + 1))`` of a change starting at check ``s`` (from 1; they sum to 1).

    Examples
    --------
    >>> start_weight(1), start_weight(3)
    (0.5, 0.08333333333333333)
    """
    check_count("start", start, minimum=1)
    return 1.0 / (start * (start + 1))


@dataclass(frozen=True, slots=True)
class DriftLook:
    """The test's state after one check.

    ``k`` of ``n`` anchors disagreed at this check (``total_k`` of ``total_n`` since the first);
    ``log_evidence`` is ``log E_t`` (``-inf`` when no change start has its rate above the
    null's bound), ``pvalue`` the anytime-valid p-value ``min(1, 1 / max E)`` over the checks so
    far, ``detected`` whether it reached ``alpha`` (it stays so), ``start`` the check whose
    change start carries the most evidence (None with none), and ``since`` its ``K`` and ``N``.
    """

    check: int
    k: int
    n: int
    total_k: int
    total_n: int
    log_evidence: float
    pvalue: float
    detected: bool
    start: int | None
    since: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "k": self.k,
            "n": self.n,
            "total_k": self.total_k,
            "total_n": self.total_n,
            "log_evidence": None if math.isinf(self.log_evidence) else self.log_evidence,
            "pvalue": self.pvalue,
            "detected": self.detected,
            "start": self.start,
            "since": list(self.since),
        }


def drift_looks(
    counts: Sequence[tuple[int, int]], *, null_bound: float, alpha: float, prior: BetaPrior
) -> list[DriftLook]:
    """The e-detector (see the module) after each check; ``counts`` holds each check's
    disagreements ``k`` of ``n`` compared anchors, in order; ``alpha`` is the test's own level
    (the null's bound spends the rest).

    Examples
    --------
    >>> prior = drift_prior(0.0, 0.1, bound=0.036)
    >>> quiet = drift_looks([(0, 20)] * 5, null_bound=0.036, alpha=0.025, prior=prior)
    >>> quiet[-1].detected, quiet[-1].pvalue
    (False, 1.0)
    >>> moved = drift_looks([(0, 20)] * 5 + [(4, 20)] * 3, null_bound=0.036, alpha=0.025,
    ...                     prior=prior)
    >>> [look.detected for look in moved[4:]], moved[-1].start
    ([False, False, False, True], 6)
    """
    _check_rate("null_bound", null_bound)
    check_level(1.0 - alpha)
    if not 0.0 < null_bound < 1.0:
        raise InvalidParameterError(f"null_bound must lie in (0, 1), got {null_bound!r}")
    ks: list[int] = []
    ns: list[int] = []
    looks: list[DriftLook] = []
    best = -math.inf
    detected = False
    bar = math.log(1.0 / alpha)
    for check, (k, n) in enumerate(counts, start=1):
        k, n = _check_k_n(k, n)
        ks.append(k)
        ns.append(n)
        big_k = np.cumsum(ks[::-1])[::-1]
        big_n = np.cumsum(ns[::-1])[::-1]
        starts = np.arange(1, check + 1)
        kept = big_n > 0
        kept[kept] = big_k[kept] / big_n[kept] > null_bound
        terms = np.full(check, -math.inf)
        if kept.any():
            terms[kept] = -np.log(starts[kept] * (starts[kept] + 1.0)) + log_mixture(
                big_k[kept], big_n[kept], null_bound, prior
            )
        log_e = float(logsumexp(terms)) if kept.any() else -math.inf
        best = max(best, log_e)
        detected = detected or best >= bar
        start = int(np.argmax(terms)) + 1 if kept.any() else None
        since = (int(big_k[start - 1]), int(big_n[start - 1])) if start else (0, 0)
        looks.append(
            DriftLook(
                check=check,
                k=k,
                n=n,
                total_k=int(big_k[0]),
                total_n=int(big_n[0]),
                log_evidence=log_e,
                pvalue=float(min(1.0, math.exp(-best))) if best > -math.inf else 1.0,
                detected=detected,
                start=start,
                since=since,
            )
        )
    return looks


def log_mixture(
    k: NDArray[np.int64] | NDArray[np.float64],
    n: NDArray[np.int64] | NDArray[np.float64],
    p: float,
    prior: BetaPrior,
) -> NDArray[np.float64]:
    """:func:`~judgeprobe.stats.sequential.log_mixture_martingale` of arrays of counts.

    Examples
    --------
    >>> [round(float(v), 4) for v in log_mixture(np.array([0]), np.array([10]), 0.5,
    ...                                          ((1.0, 1.0, 1.0),))]
    [4.5336]
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    parts = [math.log(w) + betaln(a + k, b + n - k) - betaln(a, b) for w, a, b in prior]
    marginal = logsumexp(np.stack(parts), axis=0)
    return np.asarray(marginal - (k * math.log(p) + (n - k) * math.log1p(-p)), dtype=float)


def detection_power(
    anchors: int,
    *,
    null_rate: float,
    null_bound: float,
    change: float,
    within: int,
    start: int,
    alpha: float,
    prior: BetaPrior,
) -> float:
    """The probability that a change of ``change`` (see :func:`alternative_rate`) starting at
    check ``start`` is detected by its own term within ``within`` checks of ``anchors`` each
    (a lower bound of the detector's power; see the module).

    Examples
    --------
    >>> prior = drift_prior(0.0, 0.1, bound=0.036)
    >>> power = detection_power(20, null_rate=0.0, null_bound=0.036, change=0.1, within=10,
    ...                         start=20, alpha=0.025, prior=prior)
    >>> round(power, 2)
    0.27
    """
    check_count("anchors", anchors, minimum=1)
    check_count("within", within, minimum=1)
    total = anchors * within
    k = np.arange(total + 1)
    log_e = math.log(start_weight(start)) + log_mixture(
        k, np.full(total + 1, total), null_bound, prior
    )
    crossing = (k / total > null_bound) & (log_e >= math.log(1.0 / alpha))
    if not crossing.any():
        return 0.0
    first = int(np.argmax(crossing))
    return float(binom.sf(first - 1, total, alternative_rate(null_rate, change)))


def anchors_for_power(
    *,
    null_rate: float,
    null_bound: float,
    change: float,
    within: int,
    start: int,
    alpha: float,
    prior: BetaPrior,
    power: float = 0.8,
    most: int,
) -> int | None:
    """The fewest anchors per check, at most ``most``, that give :func:`detection_power` at
    least ``power``; None when even ``most`` do not.

    Examples
    --------
    >>> prior = drift_prior(0.0, 0.1, bound=0.036)
    >>> anchors_for_power(null_rate=0.0, null_bound=0.036, change=0.1, within=10, start=20,
    ...                   alpha=0.025, prior=prior, most=200)
    41
    """
    check_level(power)
    check_count("most", most, minimum=1)
    options = dict(
        null_rate=null_rate,
        null_bound=null_bound,
        change=change,
        within=within,
        start=start,
        alpha=alpha,
        prior=prior,
    )
    if detection_power(most, **options) < power:  # type: ignore[arg-type]
        return None
    low, high = 1, most  # power grows with the anchors (up to the binomial's steps)
    while low < high:
        middle = (low + high) // 2
        if detection_power(middle, **options) >= power:  # type: ignore[arg-type]
            high = middle
        else:
            low = middle + 1
    return low


def detectable_change(
    anchors: int,
    *,
    null_rate: float,
    null_bound: float,
    within: int,
    start: int,
    alpha: float,
    power: float = 0.8,
) -> float | None:
    """The smallest share of flipped anchors (in steps of 0.01) that ``anchors`` per check detect
    within ``within`` checks with probability ``power``, each under its own
    :func:`drift_prior`; None when no share up to 1 is.

    Examples
    --------
    >>> detectable_change(20, null_rate=0.0, null_bound=0.036, within=10, start=20, alpha=0.025)
    0.14
    """
    for step in range(1, 101):
        change = step / 100.0
        if alternative_rate(null_rate, change) <= null_bound:
            continue
        prior = drift_prior(null_rate, change, bound=null_bound)
        found = detection_power(
            anchors,
            null_rate=null_rate,
            null_bound=null_bound,
            change=change,
            within=within,
            start=start,
            alpha=alpha,
            prior=prior,
        )
        if found >= power:
            return change
    return None


def disagreement_bound(k: int, n: int, alpha: float, *, prior: BetaPrior) -> float:
    """An anytime-valid upper bound of the disagreement rate of ``k`` of ``n`` anchors: the
    beta-binomial mixture's confidence sequence (:func:`~judgeprobe.stats.sequential.
    sequence_bound`), valid at every check at once.

    Examples
    --------
    >>> round(disagreement_bound(0, 200, 0.025, prior=((1.0, 2.0, 18.0),)), 3)
    0.042
    """
    return sequence_bound(k, n, alpha, upper=True, prior=prior)


def _check_rate(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise InvalidParameterError(f"{name} must be a number in [0, 1], got {value!r}")
