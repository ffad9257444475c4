"""The mean over a finite set of items, from a judge's value on all of them and labels on a sample.

The question a judge audit asks is finite: what would the humans' rate be over *these* items (the
``M`` items the judge scored), when only ``n`` of them are labelled? The labelled items are a
sample drawn by design: a simple random sample (one stratum), or a stratified one, ``n_h`` items
drawn at random from the ``M_h`` items of stratum ``h`` (so each item of ``h`` is labelled with the
known probability ``n_h / M_h``). The estimate is PPI++'s
(:mod:`judgeprobe.stats.prediction_powered`) written for that design, the stratified
difference estimator of survey sampling:

    theta = lam * mean(f over all M items) + sum_h (M_h / M) * mean(y - lam * f over S_h),

unbiased for the mean of ``y`` over the ``M`` items for any fixed ``lam``, with the design
variance ``sum_h (M_h / M)^2 (1 - n_h / M_h) s_h^2 / n_h`` (``s_h^2`` the variance of
``y - lam * f`` over the labelled items of ``h``; ``1 - n_h / M_h`` the finite population
correction: a stratum labelled whole adds no uncertainty). Where ``lam`` is tuned on the same
labels (and not clipped to 0 or 1, where the estimate is the labels' alone or plain PPI's), the
variance is multiplied by ``(n - H) / (n - H - 1)`` for the fitted slope, as the regression
estimator's residual variance is divided by ``n - 2`` (Cochran 1977, 7.3).

Two things differ from PPI++ for an infinite population: the judge's mean over all items is
known, not sampled, so it adds no variance and the tuned ``lam`` is the slope
``cov(y, f) / var(f)`` (weighted over the strata) without the ``1 + n / N`` factor; and the
finite population correction, so that labelling every item gives the all-label mean with no
width. ``lam`` is clipped to [0, 1] as in PPI++, so that a judge unrelated to the labels falls
back to the labels alone. ``lam = 0`` is the classical (stratified) mean of the labels.

The interval of a rate (values in [0, 1]) is Wilson's on the effective sample size
``p (1 - p) / variance`` (Kott and Carr 1997), which keeps its coverage with few labels where the
normal interval does not; the interval of any other mean is Student's t on ``n - H`` degrees of
freedom (``H`` strata; one fewer when ``lam`` is tuned).

References
----------
W. G. Cochran (1977), *Sampling Techniques*, 3rd ed., ch. 5 (stratified sampling) and 7.2 (the
difference estimator). C.-E. Särndal, B. Swensson and J. Wretman (1992), *Model Assisted Survey
Sampling*, 6.3. P. S. Kott and D. A. Carr (1997), "Developing an estimation strategy for a
pharmaceutical survey", Proc. Survey Research Methods Section, ASA (Wilson's interval on the
effective sample size). A. N. Angelopoulos, J. C. Duchi and T. Zrnic (2023), "PPI++: Efficient
prediction-powered inference", arXiv:2311.01453.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from judgeprobe.stats._validation import (
    InvalidParameterError,
    check_choice,
    check_level,
    finite_array,
    same_length,
    undefined,
)
from judgeprobe.stats.prediction_powered import check_lambda
from judgeprobe.stats.result import ConfidenceInterval, Estimate

INTERVALS = ("wilson", "t")
"""``wilson`` for a rate (values in [0, 1]), ``t`` for any other mean."""


@dataclass(frozen=True, slots=True)
class Stratum:
    """One stratum's numbers: its size, its labelled items and their moments."""

    key: Hashable
    size: int
    """``M_h``: the items of the stratum."""
    labelled: int
    """``n_h``: its labelled items."""
    weight: float
    """``M_h / M``."""
    value_variance: float
    prediction_variance: float
    covariance: float
    """Variances and covariance of the labels and predictions over its labelled items (divided
    by ``n_h - 1``; 0 with fewer than two labels)."""

    @property
    def factor(self) -> float:
        """``(M_h / M)^2 (1 - n_h / M_h) / n_h``: what a unit of variance costs here."""
        if self.labelled == 0:
            return 0.0
        return self.weight**2 * (1 - self.labelled / self.size) / self.labelled


def difference_mean(
    values: ArrayLike,
    predictions: ArrayLike,
    population_predictions: ArrayLike,
    *,
    strata: Sequence[Hashable] | None = None,
    stratum_sizes: Mapping[Hashable, int] | None = None,
    lam: float | None = None,
    interval: str = "wilson",
    confidence_level: float = 0.95,
) -> Estimate:
    """The mean of ``y`` over all items, from the judge's values and a (stratified) labelled sample.

    Parameters
    ----------
    values : array of float
        ``y`` of the ``n`` labelled items.
    predictions : array of float
        The judge's value ``f`` of the same items, in the same order.
    population_predictions : array of float
        ``f`` of all ``M`` items, the labelled ones included.
    strata : sequence of hashable, optional
        The stratum of each labelled item (default: one stratum, a simple random sample).
    stratum_sizes : mapping, optional
        Each stratum's number of items ``M_h``; they add up to ``M`` (default: one stratum of
        all ``M``).
    lam : float, optional
        The weight of the predictions; None (default) tunes it, clipped to [0, 1]. 0 is the
        labels alone.
    interval : {"wilson", "t"}, default "wilson"
    confidence_level : float, default 0.95

    Returns
    -------
    Estimate
        ``n`` the labelled items; counts ``labelled``, ``items``, ``strata``, ``lambda``,
        ``variance`` and, for a Wilson interval, ``effective_n``. A rate is reported in [0, 1].
        Undefined, saying why, where a stratum has items but no label, or a partly labelled
        stratum has a single one (its variance is unknown).

    Examples
    --------
    Four items, two labelled (both 1); the judge says 1, 1, 0, 0:

    >>> est = difference_mean([1, 1], [1, 0], [1, 0, 0, 0], lam=1.0, interval="t")
    >>> est.estimate  # 1/4 + mean(1 - 1, 1 - 0)
    0.75
    """
    y = finite_array("values", values)
    f = finite_array("predictions", predictions)
    every = finite_array("population_predictions", population_predictions)
    same_length(values=y, predictions=f)
    check_choice("interval", interval, INTERVALS)
    level = check_level(confidence_level)
    keys = list(strata) if strata is not None else [None] * len(y)
    sizes: dict[Hashable, int] = (
        dict(stratum_sizes) if stratum_sizes is not None else {None: len(every)}
    )
    same_length(values=y, strata=keys)
    n, size = len(y), len(every)
    if sum(sizes.values()) != size:
        raise InvalidParameterError(
            f"the strata hold {sum(sizes.values())} items but there are {size} predictions"
        )
    if n > size:
        raise InvalidParameterError(f"{n} labelled items but only {size} items in all")
    if n == 0:
        return undefined(0, "no labelled items", level=level, counts={"items": size})
    layers = _strata(y, f, keys, sizes)
    missing = [s for s in layers if s.labelled == 0]
    single = [s for s in layers if s.labelled == 1 and s.size > 1]
    counts: dict[str, float] = {"labelled": n, "items": size, "strata": len(layers)}
    if missing or single:
        stratum = (missing or single)[0]
        what = "no labelled item" if missing else "a single labelled item"
        return undefined(
            n,
            f"stratum {stratum.key!r} ({stratum.size} items) has {what}: its mean or its "
            "variance is unknown",
            level=level,
            counts=counts,
        )
    weight = tuned_lambda(layers) if lam is None else check_lambda(lam)
    residual = y - weight * f
    estimate = weight * float(every.mean()) + sum(
        s.weight * float(residual[[k == s.key for k in keys]].mean()) for s in layers
    )
    variance = sum(s.factor * residual_variance(s, weight) for s in layers)
    df = n - len(layers) - (1 if lam is None else 0)
    if lam is None and 0 < weight < 1 and df > 0:  # a slope fitted too: one degree fewer
        variance *= (n - len(layers)) / df
    counts |= {"lambda": weight, "variance": variance}
    if interval == "t":
        quantile = float(sps.t.ppf(0.5 + level / 2, max(df, 1)))
        half = quantile * math.sqrt(variance)
        ci = ConfidenceInterval(estimate - half, estimate + half, level, "stratified difference t")
        return Estimate(estimate, ci, n, counts)
    rate = min(max(estimate, 0.0), 1.0)
    effective = effective_size(rate, variance, n, size, layers)
    low, high = wilson(rate, effective, level)
    counts["effective_n"] = effective
    return Estimate(
        rate, ConfidenceInterval(low, high, level, "stratified difference wilson"), n, counts
    )


def residual_variance(stratum: Stratum, lam: float) -> float:
    """The variance of ``y - lam * f`` over the stratum's labelled items."""
    return max(
        stratum.value_variance
        - 2 * lam * stratum.covariance
        + lam**2 * stratum.prediction_variance,
        0.0,
    )


def tuned_lambda(layers: Sequence[Stratum]) -> float:
    """The ``lam`` that minimises the design variance, clipped to [0, 1] (0 where the
    predictions do not vary over the labelled items)."""
    numerator = sum(s.factor * s.covariance for s in layers)
    denominator = sum(s.factor * s.prediction_variance for s in layers)
    if denominator <= 0.0:
        return 0.0
    return float(np.clip(numerator / denominator, 0.0, 1.0))


def effective_size(
    rate: float, variance: float, labelled: int, items: int, layers: Sequence[Stratum]
) -> float:
    """The effective sample size ``p (1 - p) / variance`` of a rate's estimate.

    Infinite where every stratum is labelled whole (the rate is known); where the labels show
    no variance at all, or the rate is 0 or 1, that of a simple random sample of the same
    number of labels, ``n / (1 - n / M)``, so that a sample with no disagreement in it still
    gets the width a sample of that size has.
    """
    if all(s.labelled == s.size for s in layers):
        return math.inf
    if variance > 0.0 and 0.0 < rate < 1.0:
        return rate * (1 - rate) / variance
    return labelled / (1 - labelled / items)


def wilson(rate: float, effective_n: float, confidence_level: float) -> tuple[float, float]:
    """Wilson's score interval for a rate seen on ``effective_n`` (any positive number) trials.

    >>> low, high = wilson(0.5, 100, 0.95)
    >>> round(low, 4), round(high, 4)
    (0.4038, 0.5962)
    """
    if math.isinf(effective_n):
        return rate, rate
    z = float(sps.norm.ppf(0.5 + confidence_level / 2))
    z2n = z * z / effective_n
    centre = (rate + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(rate * (1 - rate) / effective_n + z2n / (4 * effective_n)) / (1 + z2n)
    return max(centre - half, 0.0), min(centre + half, 1.0)


def labels_for_half_width(
    half_width: float,
    residual_variance: float,
    items: int,
    *,
    confidence_level: float = 0.95,
) -> int:
    """Labels a simple random sample needs for a normal interval of ``half_width``.

    ``n0 = z^2 s^2 / h^2`` labels for an infinite population, ``n0 / (1 + n0 / M)`` for ``M``
    items (Cochran 1977, 4.4), rounded up; ``s^2`` the variance of what is averaged (the labels
    for the labels alone; ``y - lam * f`` for the corrected estimate). At least 2.

    >>> labels_for_half_width(0.05, 0.25, 10**9)  # a rate near 0.5: the textbook 385
    385
    >>> labels_for_half_width(0.05, 0.25, 500)
    218
    """
    if not half_width > 0:
        raise InvalidParameterError(f"half_width must be a positive number, got {half_width!r}")
    level = check_level(confidence_level)
    z = float(sps.norm.ppf(0.5 + level / 2))
    first = z * z * max(residual_variance, 0.0) / half_width**2
    needed = first / (1 + first / items) if items else first
    return min(max(math.ceil(needed - 1e-9), 2), items) if items else max(math.ceil(needed), 2)


def _strata(
    y: NDArray[np.float64],
    f: NDArray[np.float64],
    keys: Sequence[Hashable],
    sizes: Mapping[Hashable, int],
) -> list[Stratum]:
    unknown = sorted({repr(k) for k in keys if k not in sizes})
    if unknown:
        raise InvalidParameterError(f"labelled items in strata no item belongs to: {unknown}")
    total = sum(sizes.values())
    layers = []
    for key, size in sizes.items():
        rows = np.asarray([k == key for k in keys], dtype=bool)
        labelled = int(rows.sum())
        if labelled > size:
            raise InvalidParameterError(
                f"stratum {key!r} has {labelled} labelled items but only {size} items"
            )
        ys, fs = y[rows], f[rows]
        two = labelled > 1
        layers.append(
            Stratum(
                key,
                size,
                labelled,
                size / total,
                float(ys.var(ddof=1)) if two else 0.0,
                float(fs.var(ddof=1)) if two else 0.0,
                float(np.cov(ys, fs)[0, 1]) if two else 0.0,
            )
        )
    return layers
