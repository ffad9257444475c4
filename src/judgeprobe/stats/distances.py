"""Distances between score distributions: the 1-D Wasserstein (earth mover's) distance."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from judgeprobe.stats._validation import (
    check_count,
    check_level,
    check_seed,
    finite_array,
    undefined,
)
from judgeprobe.stats.resampling import batch_sizes, draw_weights, interval_from_replicates
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
