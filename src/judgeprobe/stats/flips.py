"""Flips against a majority anchor: what rerun noise alone would flip, and excess over it.

Per item a policy-invariance audit has one *single run* of the base rubric (trial 0), ``N`` base
*reruns* whose strict majority is the *anchor* (trials 1..N), and one single run of each rubric
variant. A flip is a single run whose decision is opposite to the anchor's.

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

:func:`flip_rate_excess` (a flip rate minus a null rate) and :func:`spread_of_means` (largest
minus smallest mean across wordings) carry paired bootstrap intervals over items;
:func:`spread_test` tests whether the wordings' means differ beyond the items' own noise.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from judgeprobe.stats._validation import (
    InvalidParameterError,
    check_count,
    check_probability,
    same_length,
)
from judgeprobe.stats.resampling import bootstrap
from judgeprobe.stats.result import Estimate, TestResult

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
        Pairwise disagreement probability, in [0, 1]; a binary judge cannot exceed 1/2, so any
        larger ``d`` gives NaN.
    n : int
        Runs in the anchor, >= 1.

    Returns
    -------
    float
        ``f``; NaN when ``d > 1/2``.

    Raises
    ------
    InvalidParameterError
        ``d`` is not a probability or ``n`` is not an integer >= 1.

    Examples
    --------
    >>> round(single_vs_majority_disagreement(0.02, 3), 6)  # 0.01 + 0.0004
    0.0104
    >>> single_vs_majority_disagreement(0.3, 1)
    0.3
    """
    check_count("n", n, minimum=1)
    check_probability("d", d)
    if d > 0.5:
        return math.nan
    p = (1 - math.sqrt(max(0.0, 1 - 2 * d))) / 2
    if n == 1:
        return d
    upper = float(sps.binom.sf(n // 2, n, p))  # P(X > n/2) for odd n; P(X > n/2) for even n
    lower = float(sps.binom.cdf((n - 1) // 2, n, p))  # P(X < n/2)
    return (p * lower + (1 - p) * upper) / (upper + lower)


def poisson_binomial_cdf(k: int, probs: Sequence[float]) -> float:
    """P(X <= k) for X a sum of independent Bernoulli(``probs[i]``) (exact, by convolution).

    Raises :class:`InvalidParameterError` when ``k`` is not an integer or a probability lies
    outside [0, 1].

    Examples
    --------
    >>> poisson_binomial_cdf(0, [0.5, 0.5])
    0.25
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise InvalidParameterError(f"k must be an integer, got {k!r}")
    for index, p in enumerate(probs):
        check_probability(f"probs[{index}]", p)
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
    tested items; ``n`` is the number of tested items. :class:`InvalidParameterError` when the
    two arguments do not have one entry per item.

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
    same_length(null_flips=null_flips, variant_flips=variant_flips)
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


def discordant_pairs(decisions: Sequence[Hashable | None]) -> tuple[int, int]:
    """(discordant pairs, pairs) among the decisions of one item's reruns; None is left out.

    Examples
    --------
    >>> discordant_pairs(["a", "a", "b", None])
    (2, 3)
    """
    tally = Counter(d for d in decisions if d is not None)
    m = sum(tally.values())
    pairs = m * (m - 1) // 2
    return pairs - sum(c * (c - 1) // 2 for c in tally.values()), pairs


def flip_rate_excess(
    flips: ArrayLike,
    comparisons: ArrayLike,
    null_flips: ArrayLike,
    null_comparisons: ArrayLike,
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> Estimate:
    """Pooled flip rate minus the pooled null rate, with a paired bootstrap CI over items.

    Per item: ``flips`` of ``comparisons`` variant runs flipped, and ``null_flips`` of
    ``null_comparisons`` null comparisons (the base single run, or the rerun pairs) did. Items
    with neither are left out; the estimate is undefined when no variant run or no null
    comparison remains. ``counts`` holds the four totals. :class:`InvalidParameterError` on
    arrays of different lengths.
    """
    f, m, a, b = (
        np.asarray(x, dtype=np.float64) for x in (flips, comparisons, null_flips, null_comparisons)
    )
    same_length(flips=f, comparisons=m, null_flips=a, null_comparisons=b)
    keep = (m > 0) | (b > 0)
    if not (m[keep].sum() > 0 and b[keep].sum() > 0):
        return Estimate.undefined(int(keep.sum()), reason="no flips or no null comparisons")
    est = bootstrap(
        [f[keep], m[keep], a[keep], b[keep]],
        _excess_statistic,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        vectorized=True,
    )
    counts = {
        "flips": float(f.sum()),
        "comparisons": float(m.sum()),
        "null_flips": float(a.sum()),
        "null_comparisons": float(b.sum()),
        **est.counts,
    }
    return dataclasses.replace(est, counts=counts)


def spread_of_means(
    columns: Sequence[Sequence[float]],
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> Estimate:
    """Largest minus smallest column mean over the rows complete in every column, with a paired
    bootstrap CI over those rows (items).

    Each column holds one wording's per-item values (1/0 for correct, or an absolute error),
    NaN where that wording has none: a NaN cell is missing, not wrong. The means are compared
    on the same rows: a row missing in any column (a call that failed under one wording) is
    left out of every column, since means over different surviving rows differ by which rows
    survived, not by the wordings. ``counts`` says how many rows were compared (``rows``) and
    how many were dropped for a missing cell (``dropped``, rows missing in every column not
    counted). Undefined with fewer than two columns or no complete row.

    Examples
    --------
    >>> spread = spread_of_means([[1, 1, 0, np.nan], [1, 0, 0, 1]], n_resamples=50)
    >>> round(spread.estimate, 3), spread.n, spread.counts["dropped"]
    (0.333, 3, 1)
    """
    data = np.array(columns, dtype=np.float64)
    if data.ndim != 2:
        return Estimate.undefined(0, reason="fewer than two wordings")
    data = data[:, ~np.all(np.isnan(data), axis=0)]
    complete = ~np.any(np.isnan(data), axis=0)
    dropped = int(data.shape[1] - complete.sum())
    data = data[:, complete]
    if data.shape[0] < 2:
        return Estimate.undefined(int(data.shape[1]), reason="fewer than two wordings")
    if data.shape[1] == 0:
        return Estimate.undefined(
            0, reason=f"no item has a value under every wording ({dropped} with some missing)"
        )
    spread = bootstrap(
        list(data),
        _spread_statistic,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        vectorized=True,
    )
    counts = {**spread.counts, "rows": int(data.shape[1]), "dropped": dropped}
    return dataclasses.replace(spread, counts=counts)


def spread_test(
    columns: Sequence[Sequence[float]], *, n_resamples: int = 1000, seed: int | None = 0
) -> TestResult:
    """Do the wordings' means differ by more than the items' own noise? A paired permutation test.

    The statistic is the spread itself (largest minus smallest column mean, as
    :func:`spread_of_means`); its null distribution comes from permuting the values among the
    wordings within each item, so the null is that, item by item, the wordings' values are
    exchangeable: a wording-blind judge whose runs are noisy, however unevenly the noise falls on
    the items. Rows with a missing (NaN) cell are left out (complete blocks only); the items are
    sorted by their values first, so the seeded p-value does not depend on their order. NaN p-value
    with fewer than two columns or fewer than two complete rows (too few items for a test; ``n``
    says how many); p = 1 when no item differs across wordings.

    The range of noisy means is biased upward by noise alone, and its bootstrap interval does not
    reach 0 for a judge without a wording effect; this test is what tells the two apart.

    References
    ----------
    E. J. G. Pitman (1937), "Significance tests which may be applied to samples from any
    populations", JRSS Suppl. 4:119-130; computed with :func:`scipy.stats.permutation_test`
    (``permutation_type="samples"``), the Monte Carlo p-value counting the observed arrangement.
    """
    data = np.array(columns, dtype=np.float64)
    null = "the wordings' values are exchangeable within each item"
    if data.ndim != 2 or data.shape[0] < 2:
        return TestResult(math.nan, math.nan, "greater", null, 0)
    data = data[:, ~np.any(np.isnan(data), axis=0)]
    n = int(data.shape[1])
    if n < 2:  # too few items for a test: a permutation within one item has no null to draw
        return TestResult(math.nan, math.nan, "greater", null, n)
    data = data[:, np.lexsort(data[::-1])]  # items in a canonical order: p free of their order
    observed = float(_spread_statistic(*data))
    if np.all(data == data[:1]):
        return TestResult(observed, 1.0, "greater", null, n)  # no item differs across wordings
    result = sps.permutation_test(
        list(data),
        _spread_statistic,
        permutation_type="samples",
        vectorized=True,
        n_resamples=check_count("n_resamples", n_resamples, minimum=1),
        alternative="greater",
        rng=np.random.default_rng(seed),
    )
    return TestResult(observed, float(result.pvalue), "greater", null, n)


def _excess_statistic(
    f: NDArray[np.float64],
    m: NDArray[np.float64],
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    axis: int = -1,
) -> Any:
    with np.errstate(invalid="ignore", divide="ignore"):
        return f.sum(axis=axis) / m.sum(axis=axis) - a.sum(axis=axis) / b.sum(axis=axis)


def _spread_statistic(*columns: NDArray[np.float64], axis: int = -1) -> Any:
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rates = np.stack(
            [np.nansum(c, axis=axis) / np.sum(~np.isnan(c), axis=axis) for c in columns]
        )
        return np.nanmax(rates, axis=0) - np.nanmin(rates, axis=0)
