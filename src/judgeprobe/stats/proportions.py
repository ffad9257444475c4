"""Proportions: a rate k/n with its interval, exact binomial tests, a difference of two rates.

Every function returns an :class:`~judgeprobe.stats.Estimate` or a
:class:`~judgeprobe.stats.TestResult`; ``n == 0`` gives an undefined (NaN) estimate, never 0.
"""

from __future__ import annotations

import math

from scipy import stats as sps

from judgeprobe.stats._validation import (
    InvalidParameterError,
    check_choice,
    check_count,
    check_level,
    check_probability,
    undefined,
)
from judgeprobe.stats.result import ConfidenceInterval, Estimate, TestResult

PROPORTION_METHODS = ("wilson", "exact", "wilsoncc")
ALTERNATIVES = ("greater", "less", "two-sided")

# Name of each interval as it appears in ``ConfidenceInterval.method``.
_CI_NAMES = {"wilson": "wilson", "exact": "clopper-pearson", "wilsoncc": "wilson-cc"}


def _check_k_n(k: int, n: int, *, k_name: str = "k", n_name: str = "n") -> tuple[int, int]:
    k = check_count(k_name, k)
    n = check_count(n_name, n)
    if k > n:
        raise InvalidParameterError(f"{k_name} must not exceed {n_name}, got {k} > {n}")
    return k, n


def wilson_interval(k: int, n: int, confidence_level: float) -> tuple[float, float]:
    """Wilson score interval for k successes in n > 0 trials (via SciPy)."""
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=confidence_level, method="wilson")
    return float(ci.low), float(ci.high)


def proportion(
    k: int,
    n: int,
    *,
    confidence_level: float = 0.95,
    method: str = "wilson",
) -> Estimate:
    """The rate ``k / n`` with a binomial confidence interval.

    Parameters
    ----------
    k, n : int
        Successes and trials, ``0 <= k <= n``.
    confidence_level : float, default 0.95
        Two-sided level of the interval, in (0, 1).
    method : {"wilson", "exact", "wilsoncc"}, default "wilson"
        ``"wilson"``: Wilson score interval; ``"exact"``: Clopper-Pearson, as R's
        ``binom.test``; ``"wilsoncc"``: Wilson with continuity correction.

    Returns
    -------
    Estimate
        ``estimate`` in [0, 1], ``n``, counts ``{"k", "n"}``. Undefined (NaN) when ``n == 0``.

    References
    ----------
    E. B. Wilson (1927), JASA 22:209-212. C. J. Clopper and E. S. Pearson (1934),
    Biometrika 26:404-413. R. G. Newcombe (1998), Stat. Med. 17:857-872 (methods 3-5).
    Computed with :meth:`scipy.stats.binomtest` ``.proportion_ci``.

    Examples
    --------
    >>> proportion(7, 169)
    Estimate(0.04142, 95% CI [0.02021, 0.08302] (wilson), n=169)
    >>> proportion(0, 0).defined
    False
    """
    k, n = _check_k_n(k, n)
    level = check_level(confidence_level)
    check_choice("method", method, PROPORTION_METHODS)
    counts = {"k": k, "n": n}
    if n == 0:
        return undefined(0, "no trials (n = 0)", level=level, counts=counts)
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=level, method=method)
    return Estimate(
        k / n,
        ConfidenceInterval(float(ci.low), float(ci.high), level, _CI_NAMES[method]),
        n,
        counts,
    )


def proportion_above(k: int, n: int, p0: float, *, alternative: str = "greater") -> TestResult:
    """Exact binomial test of the rate ``k / n`` against a null rate ``p0``.

    Used, e.g., to ask whether a judge's flip rate under a perturbation exceeds its rerun
    jitter: ``proportion_above(flips, items, p_jitter)``.

    Parameters
    ----------
    k, n : int
        Successes and trials, ``0 <= k <= n``.
    p0 : float
        Rate under the null hypothesis, in [0, 1].
    alternative : {"greater", "less", "two-sided"}, default "greater"
        ``"greater"`` tests H1: rate > p0 (p-value ``P(X >= k)``).

    Returns
    -------
    TestResult
        ``statistic`` = k / n, exact ``pvalue``; NaN for both when ``n == 0``.

    References
    ----------
    Exact binomial test as in R's ``binom.test``; computed with :func:`scipy.stats.binomtest`.

    Examples
    --------
    >>> round(proportion_above(3, 5, 0.2).pvalue, 5)  # P(X >= 3), X ~ Bin(5, 0.2)
    0.05792
    """
    k, n = _check_k_n(k, n)
    p0 = check_probability("p0", p0)
    check_choice("alternative", alternative, ALTERNATIVES)
    null = f"rate = {p0:g}"
    if n == 0:
        return TestResult(math.nan, math.nan, alternative, null, 0)
    result = sps.binomtest(k, n, p0, alternative=alternative)
    return TestResult(k / n, float(result.pvalue), alternative, null, n)


def mcnemar_exact(b: int, c: int) -> TestResult:
    """Exact McNemar test: two-sided binomial test of ``b`` against ``b + c`` at 1/2.

    ``b`` and ``c`` are the two discordant counts of a paired 2x2 table (changed one way,
    changed the other way). ``statistic`` is ``b / (b + c)``; both fields are NaN when
    ``b + c == 0`` (no discordant pairs, nothing to test).

    References
    ----------
    Q. McNemar (1947), Psychometrika 12:153-157; exact form as R's
    ``binom.test(b, b + c, 0.5)``. Computed with :func:`scipy.stats.binomtest`.

    Examples
    --------
    >>> mcnemar_exact(1, 6).pvalue  # 2 * P(X <= 1), X ~ Bin(7, 1/2) = 16/128
    0.125
    """
    b = check_count("b", b)
    c = check_count("c", c)
    n = b + c
    null = "b = c (no systematic change)"
    if n == 0:
        return TestResult(math.nan, math.nan, "two-sided", null, 0)
    result = sps.binomtest(b, n, 0.5, alternative="two-sided")
    return TestResult(b / n, float(result.pvalue), "two-sided", null, n)


def difference_of_proportions(
    k1: int,
    n1: int,
    k2: int,
    n2: int,
    *,
    confidence_level: float = 0.95,
) -> Estimate:
    """The difference ``k1/n1 - k2/n2`` of two independent rates, with Newcombe's interval.

    Parameters
    ----------
    k1, n1, k2, n2 : int
        Successes and trials of each group.
    confidence_level : float, default 0.95

    Returns
    -------
    Estimate
        ``estimate`` in [-1, 1]; ``n = n1 + n2``; counts ``{"k1", "n1", "k2", "n2"}``.
        Undefined (NaN) when either group is empty.

    References
    ----------
    R. G. Newcombe (1998), "Interval estimation for the difference between independent
    proportions", Stat. Med. 17:873-890, method 10 (hybrid score, built from Wilson intervals).

    Examples
    --------
    >>> difference_of_proportions(56, 70, 48, 80)  # Newcombe (1998), example (a)
    Estimate(0.2, 95% CI [0.05243, 0.3339] (newcombe-wilson), n=150)
    """
    k1, n1 = _check_k_n(k1, n1, k_name="k1", n_name="n1")
    k2, n2 = _check_k_n(k2, n2, k_name="k2", n_name="n2")
    level = check_level(confidence_level)
    counts = {"k1": k1, "n1": n1, "k2": k2, "n2": n2}
    if n1 == 0 or n2 == 0:
        return undefined(n1 + n2, "a group has no trials", level=level, counts=counts)
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, level)
    l2, u2 = wilson_interval(k2, n2, level)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    ci = ConfidenceInterval(max(low, -1.0), min(high, 1.0), level, "newcombe-wilson")
    return Estimate(d, ci, n1 + n2, counts)
