"""Distances between score distributions: the 1-D Wasserstein (earth mover's) distance.

:func:`wasserstein` compares two independent samples; :func:`paired_wasserstein` and
:func:`paired_mean_pairwise_wasserstein` compare the same units under two or more conditions
(a probe's items before and after a change), with a paired bootstrap."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from judgeprobe.stats._validation import (
    InvalidParameterError,
    check_count,
    check_level,
    check_seed,
    finite_array,
    undefined,
)
from judgeprobe.stats.resampling import (
    batch_sizes,
    bootstrap,
    draw_weights,
    interval_from_replicates,
)
from judgeprobe.stats.result import ConfidenceInterval, Estimate


def wasserstein(
    a: ArrayLike,
    b: ArrayLike,
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> Estimate:
    """1-D Wasserstein distance between two samples, with a bootstrap interval.

    Parameters
    ----------
    a, b : array_like of float
        The two samples (e.g. a judge's scores under two rubric variants); NaN is rejected.
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
    seed : int or None, default 0

    Returns
    -------
    Estimate
        The distance in the units of the scores, ``n = min(n_a, n_b)``, counts
        ``{"n_a", "n_b"}``. Undefined when either sample is empty; the interval is undefined
        when both samples have a single value.

    Notes
    -----
    The interval resamples each sample independently (percentile method); replicates are
    computed in batches from the CDF formula SciPy uses. The plug-in
    distance is biased upwards: two samples from one distribution are at a positive distance,
    so an interval that excludes 0 is not by itself evidence of a difference; compare against
    a permutation or rerun baseline.

    References
    ----------
    L. N. Vaserstein (1969); S. S. Vallender (1974), Theory Probab. Appl. 18:784-786 (the
    1-D form as the area between the two CDFs). Computed with
    :func:`scipy.stats.wasserstein_distance`.

    Examples
    --------
    >>> wasserstein([0, 1, 3], [5, 6, 8]).estimate  # every point moves by 5
    5.0
    """
    x = finite_array("a", a)
    y = finite_array("b", b)
    level = check_level(confidence_level)
    n_resamples = check_count("n_resamples", n_resamples, minimum=1)
    seed = check_seed(seed)
    counts = {"n_a": int(x.size), "n_b": int(y.size)}
    n = min(x.size, y.size)
    if n == 0:
        return undefined(0, "a sample is empty", level=level, counts=counts)
    distance = float(sps.wasserstein_distance(x, y))
    if x.size < 2 and y.size < 2:
        reason = "bootstrap percentile: needs at least 2 values in a sample"
        return Estimate(distance, ConfidenceInterval(math.nan, math.nan, level, reason), n, counts)
    replicates = _replicates(x, y, n_resamples, np.random.default_rng(seed))
    low, high, _ = interval_from_replicates(replicates, distance, level)
    ci = ConfidenceInterval(low, high, level, "bootstrap percentile")
    return Estimate(distance, ci, int(n), counts)


def _replicates(
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    n_resamples: int,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """Bootstrap replicates of the distance, each sample resampled independently.

    A resample of ``x`` only changes how often each value occurs, so its CDF on the pooled
    support is a cumulative sum of bootstrap weights; the distance is then the area between the
    two CDFs, the formula of :func:`scipy.stats.wasserstein_distance`, for a whole batch at once.
    """
    xs, ys = np.sort(x), np.sort(y)
    support = np.unique(np.concatenate([xs, ys]))
    if support.size < 2:
        return np.zeros(n_resamples)
    gaps = np.diff(support)
    at_x = np.searchsorted(xs, support[:-1], side="right")
    at_y = np.searchsorted(ys, support[:-1], side="right")
    out = np.empty(n_resamples, dtype=np.float64)
    done = 0
    for b in batch_sizes(n_resamples, max(xs.size, ys.size, support.size)):
        cdf_x = _cumulative(draw_weights(rng, xs.size, b))[:, at_x] / xs.size
        cdf_y = _cumulative(draw_weights(rng, ys.size, b))[:, at_y] / ys.size
        out[done : done + b] = np.abs(cdf_x - cdf_y) @ gaps
        done += b
    return out


def _cumulative(weights: NDArray[np.int64]) -> NDArray[np.int64]:
    """Row-wise cumulative counts with a leading zero column: ``out[:, i] = sum(w[:, :i])``."""
    out = np.zeros((weights.shape[0], weights.shape[1] + 1), dtype=np.int64)
    np.cumsum(weights, axis=1, out=out[:, 1:])
    return out


@dataclass(frozen=True, slots=True)
class WassersteinMatrix:
    """Pairwise 1-D Wasserstein distances between named samples.

    ``matrix[i, j]`` is the distance between ``names[i]`` and ``names[j]`` (symmetric, zero
    diagonal, NaN where a sample is empty). Index it by names: ``result["a", "b"]``.
    """

    names: tuple[str, ...]
    matrix: NDArray[np.float64]

    def __getitem__(self, pair: tuple[str, str]) -> float:
        i, j = (self.names.index(name) for name in pair)
        return float(self.matrix[i, j])

    def pairs(self) -> dict[tuple[str, str], float]:
        """Every ordered pair of distinct names mapped to its distance."""
        return {
            (a, b): float(self.matrix[i, j])
            for i, a in enumerate(self.names)
            for j, b in enumerate(self.names)
            if i != j
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: names and the matrix as nested lists (NaN as None)."""
        rows = [[None if math.isnan(v) else float(v) for v in row] for row in self.matrix]
        return {"names": list(self.names), "matrix": rows}


def wasserstein_matrix(samples: Mapping[str, Sequence[float] | ArrayLike]) -> WassersteinMatrix:
    """Pairwise 1-D Wasserstein distances between every two named samples.

    References
    ----------
    As :func:`wasserstein`; computed with :func:`scipy.stats.wasserstein_distance`.

    Examples
    --------
    >>> m = wasserstein_matrix({"a": [0, 1, 3], "b": [5, 6, 8], "c": [0, 1, 3]})
    >>> m["a", "b"], m["a", "c"]
    (5.0, 0.0)
    """
    names = tuple(samples)
    arrays = [finite_array(f"samples[{name!r}]", samples[name]) for name in names]
    k = len(names)
    matrix = np.zeros((k, k), dtype=np.float64)
    for i in range(k):
        for j in range(i + 1, k):
            if arrays[i].size == 0 or arrays[j].size == 0:
                d = math.nan
            else:
                d = float(sps.wasserstein_distance(arrays[i], arrays[j]))
            matrix[i, j] = matrix[j, i] = d
        if arrays[i].size == 0:
            matrix[i, i] = math.nan
    matrix.flags.writeable = False
    return WassersteinMatrix(names, matrix)


# ------------------------------------------------------------------------------------------
# Paired distances: the same units scored under two (or more) conditions


def _w1_equal(a: NDArray[np.float64], b: NDArray[np.float64], axis: int = -1) -> Any:
    """1-D Wasserstein distance of two equal-size samples: mean absolute gap of order statistics.

    For two empirical distributions with ``n`` equally weighted points each, W1 is the area
    between the quantile functions, ``mean(|sort(a) - sort(b)|)`` (Vallender 1974); equal to
    :func:`scipy.stats.wasserstein_distance` for equal sizes, and vectorised over resamples.
    """
    return np.mean(np.abs(np.sort(a, axis=axis) - np.sort(b, axis=axis)), axis=axis)


def _w1_shortfall(a: NDArray[np.float64], b: NDArray[np.float64], axis: int = -1) -> Any:
    """The part of the W1 distance by which ``b`` lies below ``a`` (equal sizes).

    ``mean(max(sort(a) - sort(b), 0))``: the area where the quantile function of ``b`` is under
    that of ``a``. With its mirror (``b`` above ``a``) it adds up to :func:`_w1_equal`; it is 0
    exactly when every quantile of ``b`` is at least that of ``a``.
    """
    gap = np.sort(a, axis=axis) - np.sort(b, axis=axis)
    return np.mean(np.maximum(gap, 0.0), axis=axis)


def _mean_pairwise(*columns: NDArray[np.float64], axis: int = -1) -> Any:
    """Mean of the W1 distances between every two of ``columns`` (equal sizes)."""
    ordered = [np.sort(c, axis=axis) for c in columns]
    gaps = [
        np.mean(np.abs(ordered[i] - ordered[j]), axis=axis)
        for i in range(len(ordered))
        for j in range(i + 1, len(ordered))
    ]
    return np.mean(np.stack(gaps), axis=0)


def paired_wasserstein(
    a: Sequence[float],
    b: Sequence[float],
    *,
    shortfall: bool = False,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> Estimate:
    """W1 distance between the scores of the same units under two conditions.

    Parameters
    ----------
    a, b : sequence of float
        ``a[i]`` and ``b[i]`` are one unit's scores under the two conditions.
    shortfall : bool, default False
        Count only how far ``b`` falls below ``a`` (one-sided): a move of ``b`` above ``a``
        counts nothing (negate both samples for the other direction).
    confidence_level, n_resamples, seed
        As for :func:`bootstrap`.

    Returns
    -------
    Estimate
        The distance, ``n`` units; undefined when there is no unit.

    Notes
    -----
    The interval is a paired bootstrap: units are resampled with both of their scores, so a
    judge that gives every unit the same score under both conditions gets [0, 0] (an independent
    bootstrap of each sample, as :func:`wasserstein` draws, would exclude 0). See
    :func:`_distance_interval` for the method.

    Examples
    --------
    >>> paired_wasserstein([1, 2, 3], [1, 2, 3]).ci.high
    0.0
    >>> paired_wasserstein([1, 2, 3], [2, 3, 4], shortfall=True).estimate
    0.0
    """
    if len(a) != len(b):
        raise InvalidParameterError("paired samples must have equal lengths")
    if not a:
        return Estimate.undefined(0, reason="no unit scored under both conditions")
    samples = [finite_array("a", a), finite_array("b", b)]
    statistic = _w1_shortfall if shortfall else _w1_equal
    return _distance_interval(samples, statistic, confidence_level, n_resamples, seed)


def paired_mean_pairwise_wasserstein(
    columns: Sequence[Sequence[float]],
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> Estimate:
    """Mean W1 distance over every two of ``columns`` (the paper's "average pairwise distance").

    Rows are units scored under every condition; the interval resamples rows (paired bootstrap,
    as :func:`paired_wasserstein`).
    """
    if len(columns) < 2:
        raise InvalidParameterError("need at least two conditions")
    if not columns[0]:
        return Estimate.undefined(0, reason="no unit scored under every condition")
    samples = [finite_array(f"column {i}", c) for i, c in enumerate(columns)]
    return _distance_interval(samples, _mean_pairwise, confidence_level, n_resamples, seed)


def _distance_interval(
    samples: Sequence[NDArray[np.float64]],
    statistic: Any,
    confidence_level: float,
    n_resamples: int,
    seed: int | None,
) -> Estimate:
    """Paired *basic* bootstrap interval of a distance, clipped at 0.

    A plug-in distance is biased upwards (noise alone makes two samples differ), so with few
    units nearly every bootstrap replicate can exceed the estimate and a percentile interval can
    miss it. The basic interval, ``2 * estimate`` minus the reversed percentiles (Davison and
    Hinkley 1997, eq. 5.6), corrects for that bias; a distance is never negative, so the lower
    bound is clipped at 0, and the interval is widened to hold the estimate when it does not.
    """
    result = bootstrap(
        list(samples),
        statistic,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        method="basic",
        vectorized=True,
    )
    ci = result.ci
    if math.isnan(ci.low):
        return result
    low = min(max(ci.low, 0.0), result.estimate)
    high = max(ci.high, result.estimate)
    method = f"paired {ci.method}, clipped at 0"
    return dataclasses.replace(
        result, ci=dataclasses.replace(ci, low=low, high=high, method=method)
    )
