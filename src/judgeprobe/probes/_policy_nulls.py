"""What rerun noise alone would flip: the nulls of the policy invariance probe.

Per item the probe has one *single run* of the base rubric (trial 0), ``N`` base *reruns* whose
strict majority is the *anchor* (trials 1..N), and one single run of each rubric variant. A flip
is a single run whose decision is opposite to the anchor's.

Two nulls say how often a flip happens without any wording effect:

``pairwise``
    ``p_jitter``, the share of discordant pairs among the base reruns (the convention of the
    policy invariance paper, arXiv 2605.06161). It compares two single runs, so it overstates how
    often a single run disagrees with a majority-of-N anchor, which is steadier than a single run.
``matched``
    The base single run compared with the same anchor as the variants, under the same flip rule
    and exclusions. Its flip rate estimates, without bias and without a model of the judge's
    noise, the probability that a single run disagrees with a majority-of-N anchor. The exact test
    :func:`exchangeable_flip_test` uses it.

For a binary judge with the same noise on every item the matched null has a closed form in
``p_jitter`` (:func:`single_vs_majority_disagreement`): about half of ``p_jitter`` when it is small.
When the noise concentrates on a few items (as it does: most items are stable, a few are coin
flips) the pooled closed form understates the matched null, up to the full ``p_jitter`` for
coin-flip items, which is why the test uses the empirical matched null instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats as sps

from judgeprobe.stats import TestResult

MATCHED_NULL = (
    "single runs are exchangeable given the anchor (matched null: the base rubric's own single "
    "run against the same majority-of-N anchor)"
)


def single_vs_majority_disagreement(d: float, n: int) -> float:
    """P(a fresh single run disagrees with the majority of ``n`` runs), binary, homogeneous noise.

    Let each run decide *positive* with probability ``p``, so two runs disagree with probability
    ``d = 2p(1 - p)`` (the pairwise jitter) and ``p = (1 - sqrt(1 - 2d)) / 2`` (the result is
    symmetric in ``p`` and ``1 - p``). The anchor is positive with probability
    ``m = P(Bin(n, p) > n/2)`` and negative with ``m' = P(Bin(n, p) < n/2)``; conditional on a
    strict majority existing, a fresh run disagrees with it with probability

    ``f = (p m' + (1 - p) m) / (m + m')``.

    For ``n = 1`` this is ``d``. For ``n = 3``, ``m = 3p^2 - 2p^3`` and
    ``f = p + m (1 - 2p) = u + 4u^2`` with ``u = p(1 - p) = d/2``, i.e. ``f = d/2 + d^2``:
    about half the pairwise jitter when ``d`` is small (``f(0.02) = 0.0104``).

    Parameters
    ----------
    d : float
        Pairwise disagreement probability, in [0, 1/2] (a binary judge cannot exceed 1/2).
    n : int
        Runs in the anchor, >= 1.

    Returns
    -------
    float
        ``f``; NaN when ``d > 1/2``.

    Examples
    --------
    >>> round(single_vs_majority_disagreement(0.02, 3), 6)  # 0.01 + 0.0004
    0.0104
    >>> single_vs_majority_disagreement(0.3, 1)
    0.3
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    if not 0 <= d <= 0.5:
        return math.nan if d > 0.5 else 0.0
    p = (1 - math.sqrt(max(0.0, 1 - 2 * d))) / 2
    if n == 1:
        return d
    upper = float(sps.binom.sf(n // 2, n, p))  # P(X > n/2) for odd n; P(X > n/2) for even n
    lower = float(sps.binom.cdf((n - 1) // 2, n, p))  # P(X < n/2)
    return (p * lower + (1 - p) * upper) / (upper + lower)


def poisson_binomial_cdf(k: int, probs: Sequence[float]) -> float:
    """P(X <= k) for X a sum of independent Bernoulli(``probs[i]``) (exact, by convolution)."""
    if k < 0:
        return 0.0
    dist = np.ones(1)
    for p in probs:
        dist = np.convolve(dist, [1.0 - p, p])
    return float(min(1.0, dist[: k + 1].sum()))


def exchangeable_flip_test(
    null_flips: Sequence[bool], variant_flips: Sequence[Sequence[bool]]
) -> TestResult:
    """Exact one-sided test that variant single runs flip more often than the base single run.

    Per item ``i``: ``null_flips[i]`` says whether the base single run flipped against the
    anchor, ``variant_flips[i]`` whether each variant single run did (one entry per variant with
    a usable run). Under the null of no wording effect the ``K_i + 1`` single runs of an item are
    exchangeable given its anchor, whatever the item's noise and however the anchor fell: each
    is equally likely to be the base run. Given the number of flips ``s_i`` among them, the base
    run flipped with probability ``s_i / (K_i + 1)``, independently across items. The p-value is
    the exact probability, under that permutation distribution, of the base run flipping as
    rarely as observed: ``P(sum_i Bernoulli(s_i / (K_i + 1)) <= observed)``. With one variant
    this is the one-sided exact McNemar test; with a greedy trial 0 (a judge whose trial 0 is the
    argmax and whose reruns sample) the single runs are deterministic and the test stays valid.

    Items without a variant run are left out. ``statistic`` is the variant flip rate over the
    tested items; ``n`` is the number of tested items.

    References
    ----------
    Permutation tests under within-unit exchangeability: E. L. Lehmann and J. P. Romano (2005),
    *Testing Statistical Hypotheses*, sec. 15.2; McNemar (1947), Psychometrika 12:153-157.

    Examples
    --------
    >>> res = exchangeable_flip_test([False] * 6 + [True], [[True]] * 6 + [[False]])
    >>> round(res.pvalue, 4)  # one-sided McNemar: P(Bin(7, 1/2) <= 1) = 8/128
    0.0625
    """
    if len(null_flips) != len(variant_flips):
        raise ValueError("null_flips and variant_flips need one entry per item")
    probs: list[float] = []
    observed = 0
    flips = comparisons = 0
    for x, ys in zip(null_flips, variant_flips, strict=True):
        if not ys:
            continue
        s = int(x) + sum(int(y) for y in ys)
        probs.append(s / (len(ys) + 1))
        observed += int(x)
        flips += sum(int(y) for y in ys)
        comparisons += len(ys)
    if not probs:
        return TestResult(math.nan, math.nan, "greater", MATCHED_NULL, 0)
    pvalue = poisson_binomial_cdf(observed, probs)
    return TestResult(flips / comparisons, pvalue, "greater", MATCHED_NULL, len(probs))
