"""Bootstrap confidence intervals, plain or clustered, and the mean.

The clustered bootstrap resamples whole clusters (e.g. all rows of one question) with
replacement, so rows that share a cluster are never treated as independent evidence. Without
clusters every observation is its own cluster and the procedure is the ordinary bootstrap; the
same seed gives the same draws either way.

References
----------
B. Efron and R. J. Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (percentile
interval). A. C. Davison and D. V. Hinkley (1997), *Bootstrap Methods and their Application*,
sec. 3.8 (resampling clusters, "strategy 1": sample clusters with replacement, keep them whole).
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from judgeprobe.stats._validation import (
    InvalidParameterError,
    check_choice,
    check_count,
    check_level,
    check_seed,
    encode,
    finite_array,
    undefined,
)
from judgeprobe.stats.proportions import proportion, wilson_interval
from judgeprobe.stats.result import ConfidenceInterval, Estimate

BOOTSTRAP_METHODS = ("percentile", "basic")
MEAN_METHODS = ("t", "bootstrap")

MIN_BOOTSTRAP_CLUSTERS = 10
"""Fewest clusters a cluster bootstrap is drawn over. Below it the resamples can only recombine
a handful of cluster values (over one cluster every resample is the estimate itself), so the
interval is the exact one over the clusters instead (:func:`clustered_proportion`)."""

# Largest number of array elements materialised at once by a vectorised resampling batch.
_BATCH_ELEMENTS = 1 << 22


# --------------------------------------------------------------------------------------------
# Shared machinery


@dataclass(frozen=True, slots=True)
class ClusterIndex:
    """Observations grouped by cluster: ``members[starts[g]:starts[g] + sizes[g]]`` is cluster g."""

    members: NDArray[np.intp]
    starts: NDArray[np.intp]
    sizes: NDArray[np.intp]
    codes: NDArray[np.intp]

    @property
    def n_clusters(self) -> int:
        return int(self.sizes.size)

    @property
    def singletons(self) -> bool:
        return bool(np.all(self.sizes == 1))

    @classmethod
    def build(cls, clusters: Sequence[Hashable] | NDArray[Any] | None, n: int) -> ClusterIndex:
        """Index ``clusters`` (one label per observation); ``None`` makes one cluster per row."""
        if clusters is None:
            codes = np.arange(n, dtype=np.intp)
        else:
            if len(clusters) != n:
                raise InvalidParameterError(
                    f"clusters must give one label per observation: got {len(clusters)} labels "
                    f"for {n} observations"
                )
            codes, _ = encode(clusters)
        members = np.argsort(codes, kind="stable").astype(np.intp)
        sizes = np.bincount(codes, minlength=int(codes.max()) + 1 if n else 0).astype(np.intp)
        starts = (np.cumsum(sizes) - sizes).astype(np.intp)
        return cls(members, starts, sizes, codes)

    def cluster_sums(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """Per-cluster column sums of ``values`` (rows = observations) -> (clusters, k)."""
        out = np.zeros((self.n_clusters, values.shape[1]), dtype=np.float64)
        np.add.at(out, self.codes, values)
        return out


def batch_sizes(n_resamples: int, width: int) -> list[int]:
    """Split ``n_resamples`` into batches of at most ~4M materialised elements each."""
    size = max(1, _BATCH_ELEMENTS // max(width, 1))
    return [min(size, n_resamples - start) for start in range(0, n_resamples, size)]


def resample_weights(
    n_units: int,
    *,
    n_resamples: int,
    rng: np.random.Generator,
) -> Iterator[NDArray[np.int64]]:
    """Batches of bootstrap weights: row r counts how often each unit was drawn in resample r.

    Each resample draws ``n_units`` units with replacement (``rng.integers`` in batches of
    shape ``(b, n_units)``, the same draws :func:`bootstrap` makes); yields ``(b, n_units)``.
    """
    for b in batch_sizes(n_resamples, n_units):
        yield draw_weights(rng, n_units, b)


def draw_weights(rng: np.random.Generator, n_units: int, rows: int) -> NDArray[np.int64]:
    """``rows`` bootstrap weight vectors over ``n_units`` units -> ``(rows, n_units)`` counts."""
    drawn = rng.integers(0, n_units, size=(rows, n_units))
    offsets = np.arange(rows, dtype=np.intp)[:, None] * n_units
    counts = np.bincount((drawn + offsets).ravel(), minlength=rows * n_units)
    return counts.reshape(rows, n_units).astype(np.int64)


def resample_sums(
    unit_sums: NDArray[np.float64],
    *,
    n_resamples: int,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """Bootstrap replicates of the column sums of ``unit_sums`` (rows = clusters).

    Each replicate draws as many clusters as there are, with replacement; the result has shape
    ``(n_resamples, k)``. Any statistic that is a function of sums over observations (a
    proportion, a ratio, a contingency table) is then computed from these rows without ever
    materialising the resampled data.
    """
    out = np.empty((n_resamples, unit_sums.shape[1]), dtype=np.float64)
    done = 0
    for weights in resample_weights(unit_sums.shape[0], n_resamples=n_resamples, rng=rng):
        out[done : done + len(weights)] = weights @ unit_sums
        done += len(weights)
    return out


def interval_from_replicates(
    replicates: NDArray[np.float64],
    estimate: float,
    level: float,
    method: str = "percentile",
) -> tuple[float, float, int]:
    """Percentile or basic interval from bootstrap replicates; NaN replicates are dropped.

    Returns ``(low, high, n_undefined)``. The basic interval is ``2 * estimate`` minus the
    reversed percentile interval (Davison and Hinkley 1997, eq. 5.6).
    """
    finite = replicates[np.isfinite(replicates)]
    dropped = int(replicates.size - finite.size)
    if finite.size == 0:
        return math.nan, math.nan, dropped
    alpha = 1.0 - level
    q_low, q_high = (float(q) for q in np.quantile(finite, [alpha / 2, 1 - alpha / 2]))
    if method == "basic":
        return 2 * estimate - q_high, 2 * estimate - q_low, dropped
    return q_low, q_high, dropped


def ratio_bootstrap(
    numerators: NDArray[np.float64],
    denominators: NDArray[np.float64],
    index: ClusterIndex,
    *,
    level: float,
    n_resamples: int,
    seed: int | None,
) -> tuple[float, float, int]:
    """Cluster-bootstrap percentile interval of ``sum(numerators) / sum(denominators)``.

    When the ratio sits at 0 or 1 every replicate equals it and the percentile interval
    collapses to a point; a Wilson interval with the number of clusters as the effective
    sample size is used instead (conservative: a cluster counts as one observation).
    """
    total_num, total_den = float(numerators.sum()), float(denominators.sum())
    estimate = total_num / total_den
    g = index.n_clusters
    if estimate in (0.0, 1.0) and g > 0:
        low, high = wilson_interval(0 if estimate == 0.0 else g, g, level)
        return low, high, 0
    unit = index.cluster_sums(np.column_stack([numerators, denominators]))
    sums = resample_sums(unit, n_resamples=n_resamples, rng=np.random.default_rng(seed))
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = sums[:, 0] / sums[:, 1]
    return interval_from_replicates(replicates, estimate, level)


# --------------------------------------------------------------------------------------------
# Generic bootstrap


def _as_samples(data: ArrayLike | Sequence[ArrayLike]) -> tuple[NDArray[Any], ...]:
    """One 1-D array, or several equal-length 1-D arrays (paired data)."""
    if isinstance(data, np.ndarray):
        if data.ndim == 1:
            return (data,)
        if data.ndim == 2:
            return tuple(data)
        raise InvalidParameterError(f"data must be 1-D or 2-D (paired rows), got {data.ndim}-D")
    items = list(data)  # type: ignore[arg-type]
    paired = bool(items) and all(
        isinstance(x, np.ndarray | list | tuple) or hasattr(x, "__array__") for x in items
    )
    if not paired:
        return (np.asarray(items),)
    samples = tuple(np.asarray(x) for x in items)
    if any(s.ndim != 1 for s in samples):
        raise InvalidParameterError("paired data must be a sequence of 1-D arrays")
    lengths = {len(s) for s in samples}
    if len(lengths) > 1:
        raise InvalidParameterError(
            f"paired data must have equal lengths, got lengths {sorted(lengths)}"
        )
    return samples


def _accepts_axis(statistic: Callable[..., Any]) -> bool:
    try:
        return "axis" in inspect.signature(statistic).parameters
    except (TypeError, ValueError):
        return False


def _scalar(value: Any) -> float:
    array = np.asarray(value, dtype=np.float64)
    if array.shape not in ((), (1,)):
        raise InvalidParameterError(
            f"statistic must return a single number, got an array of shape {array.shape}"
        )
    return float(array.reshape(()))


def bootstrap(
    data: ArrayLike | Sequence[ArrayLike],
    statistic: Callable[..., Any],
    *,
    clusters: Sequence[Hashable] | NDArray[Any] | None = None,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int | None = 0,
    method: str = "percentile",
    vectorized: bool | None = None,
) -> Estimate:
    """Bootstrap confidence interval of any statistic, optionally resampling whole clusters.

    Parameters
    ----------
    data : array_like or sequence of array_like
        A 1-D sample, or several equal-length 1-D arrays observed together (paired data; the
        same rows are drawn from each). A 2-D array is read as paired rows.
    statistic : callable
        ``statistic(*samples)`` returns a number. If it takes an ``axis`` keyword (as
        ``np.mean`` does) it is called once per batch on arrays of shape
        ``(n_resamples, n)`` with ``axis=-1`` and must reduce along that axis.
    clusters : sequence of hashable, optional
        One label per observation. Clusters are resampled with replacement and kept whole
        (the cluster bootstrap), which is how judgeprobe makes intervals "clustered by
        question". Default: every observation is its own cluster.
    n_resamples : int, default 2000
    confidence_level : float, default 0.95
    seed : int or None, default 0
        Seed of :func:`numpy.random.default_rng`; the same seed gives the same interval.
    method : {"percentile", "basic"}, default "percentile"
    vectorized : bool, optional
        Whether ``statistic`` takes ``axis``; detected from its signature when omitted.

    Returns
    -------
    Estimate
        ``statistic`` on the full data, its interval, ``n`` observations, counts ``{"n",
        "clusters"}`` (plus ``"undefined_resamples"`` when some replicates were NaN and were
        dropped). Undefined when the data are empty; the interval is undefined with fewer
        than two clusters.

    References
    ----------
    Efron and Tibshirani (1993), ch. 13; Davison and Hinkley (1997), sec. 3.8 and eq. 5.6.

    Examples
    --------
    >>> x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    >>> est = bootstrap(x, np.mean, seed=1)
    >>> est.estimate, est.n, est.ci.contains(4.5)
    (4.5, 8, True)
    >>> wide = bootstrap(x, np.mean, clusters=[0, 0, 0, 0, 1, 1, 1, 1], seed=1)
    >>> wide.ci.width > est.ci.width
    True
    """
    samples = _as_samples(data)
    level = check_level(confidence_level)
    n_resamples = check_count("n_resamples", n_resamples, minimum=1)
    seed = check_seed(seed)
    check_choice("method", method, BOOTSTRAP_METHODS)
    if not callable(statistic):
        raise InvalidParameterError(f"statistic must be callable, got {statistic!r}")
    n = len(samples[0])
    if n == 0:
        return undefined(0, "no data", level=level, counts={"n": 0})
    index = ClusterIndex.build(clusters, n)
    is_vectorized = _accepts_axis(statistic) if vectorized is None else bool(vectorized)

    def call(arrays: Sequence[NDArray[Any]]) -> Any:
        return statistic(*arrays, axis=-1) if is_vectorized else statistic(*arrays)

    estimate = _scalar(call(samples))
    g = index.n_clusters
    counts: dict[str, float] = {"n": n, "clusters": g}
    name = "cluster bootstrap" if clusters is not None and not index.singletons else "bootstrap"
    ci_name = f"{name} {method}"
    if g < 2:
        reason = f"{ci_name}: needs at least 2 clusters"
        return Estimate(estimate, ConfidenceInterval(math.nan, math.nan, level, reason), n, counts)

    replicates = _replicates(samples, index, call, is_vectorized, n_resamples, seed)
    low, high, dropped = interval_from_replicates(replicates, estimate, level, method)
    if dropped:
        counts["undefined_resamples"] = dropped
    return Estimate(estimate, ConfidenceInterval(low, high, level, ci_name), n, counts)


def _replicates(
    samples: Sequence[NDArray[Any]],
    index: ClusterIndex,
    call: Callable[[Sequence[NDArray[Any]]], Any],
    is_vectorized: bool,
    n_resamples: int,
    seed: int | None,
) -> NDArray[np.float64]:
    rng = np.random.default_rng(seed)
    g = index.n_clusters
    equal_sizes = bool(np.all(index.sizes == index.sizes[0]))
    out = np.empty(n_resamples, dtype=np.float64)
    done = 0
    for b in batch_sizes(n_resamples, len(samples[0])):
        drawn = rng.integers(0, g, size=(b, g))
        if equal_sizes:
            # Every resample has the same length: one (b, n) index matrix for the whole batch.
            m = int(index.sizes[0])
            table = index.members.reshape(g, m)
            rows = table[drawn].reshape(b, g * m)
            if is_vectorized:
                values = np.asarray(call([s[rows] for s in samples]), dtype=np.float64)
                if values.shape != (b,):
                    raise InvalidParameterError(
                        "a statistic taking `axis` must reduce along it: expected shape "
                        f"{(b,)}, got {values.shape}; pass vectorized=False"
                    )
                out[done : done + b] = values
            else:
                out[done : done + b] = [_scalar(call([s[r] for s in samples])) for r in rows]
        else:
            # Clusters of different sizes give resamples of different lengths: build each
            # resample's rows without a Python loop over clusters, then call per resample.
            lengths = index.sizes[drawn]
            flat_starts = np.repeat(index.starts[drawn].ravel(), lengths.ravel())
            within = np.arange(flat_starts.size) - np.repeat(
                np.cumsum(lengths.ravel()) - lengths.ravel(), lengths.ravel()
            )
            flat_rows = index.members[flat_starts + within]
            bounds = np.cumsum(lengths.sum(axis=1))[:-1]
            for j, rows_j in enumerate(np.split(flat_rows, bounds)):
                out[done + j] = _scalar(call([s[rows_j] for s in samples]))
        done += b
    return out


# --------------------------------------------------------------------------------------------
# Mean and clustered proportion


def sample_mean(values: Any, axis: int = -1) -> Any:
    """The mean along ``axis``: a statistic for :func:`bootstrap` (vectorised over resamples)."""
    return np.mean(values, axis=axis)


def mean_difference(a: Any, b: Any, axis: int = -1) -> Any:
    """``mean(a) - mean(b)`` along ``axis``, for paired samples in :func:`bootstrap`."""
    return np.mean(a, axis=axis) - np.mean(b, axis=axis)


def mean(
    values: ArrayLike,
    *,
    confidence_level: float = 0.95,
    method: str = "t",
    seed: int | None = 0,
    n_resamples: int = 2000,
) -> Estimate:
    """The arithmetic mean with a Student-t or bootstrap interval.

    Parameters
    ----------
    values : array_like of float
        1-D; NaN or infinite values raise :class:`InvalidParameterError` naming their positions.
    confidence_level : float, default 0.95
    method : {"t", "bootstrap"}, default "t"
        ``"t"``: ``mean ± t(n-1) * sd / sqrt(n)``; ``"bootstrap"``: percentile interval from
        :func:`scipy.stats.bootstrap`.
    seed : int or None, default 0
        Used by ``method="bootstrap"``.
    n_resamples : int, default 2000
        Used by ``method="bootstrap"``.

    Returns
    -------
    Estimate
        ``n`` values, counts ``{"n", "sd"}``. Undefined when empty; with a single value the
        estimate is defined but its interval is NaN.

    References
    ----------
    Student (1908), Biometrika 6:1-25, via :func:`scipy.stats.ttest_1samp`; Efron and
    Tibshirani (1993), ch. 13, via :func:`scipy.stats.bootstrap`.

    Examples
    --------
    >>> mean([2.0, 4.0, 6.0])  # 4 ± t(0.975, 2) * 2 / sqrt(3) = 4 ± 4.968
    Estimate(4, 95% CI [-0.9683, 8.968] (t), n=3)
    """
    x = finite_array("values", values)
    level = check_level(confidence_level)
    check_choice("method", method, MEAN_METHODS)
    n_resamples = check_count("n_resamples", n_resamples, minimum=1)
    seed = check_seed(seed)
    n = int(x.size)
    if n == 0:
        return undefined(0, "no values", level=level, counts={"n": 0})
    m = float(x.mean())
    sd = float(x.std(ddof=1)) if n > 1 else math.nan
    counts = {"n": n, "sd": sd}
    if n == 1:
        reason = f"{method}: needs at least 2 values"
        return Estimate(m, ConfidenceInterval(math.nan, math.nan, level, reason), n, counts)
    if sd == 0.0:
        return Estimate(m, ConfidenceInterval(m, m, level, method), n, counts)
    if method == "t":
        ci = sps.ttest_1samp(x, popmean=0.0).confidence_interval(confidence_level=level)
        low, high = float(ci.low), float(ci.high)
    else:
        res = sps.bootstrap(
            (x,),
            np.mean,
            n_resamples=n_resamples,
            confidence_level=level,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
        low = float(res.confidence_interval.low)
        high = float(res.confidence_interval.high)
    name = "t" if method == "t" else "bootstrap percentile"
    return Estimate(m, ConfidenceInterval(low, high, level, name), n, counts)


def mean_shift(differences: ArrayLike, *, confidence_level: float = 0.95) -> Estimate:
    """The mean of paired differences (a score after a change minus before) with a t interval.

    The same estimate and interval as :func:`mean` with ``method="t"``. SciPy warns of
    precision loss when the differences are all (nearly) equal, which is the expected case for
    a judge the change does not move; the interval is then (nearly) a point, and correct, so
    that warning is not passed on.

    Examples
    --------
    >>> mean_shift([0.5, 0.5, 0.5])
    Estimate(0.5, 95% CI [0.5, 0.5] (t), n=3)
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Precision loss", category=RuntimeWarning)
        return mean(differences, confidence_level=confidence_level)


def clustered_proportion(
    successes: ArrayLike,
    clusters: Sequence[Hashable] | NDArray[Any],
    *,
    confidence_level: float = 0.95,
    seed: int | None = 0,
    n_resamples: int = 2000,
    method: str = "wilson",
) -> Estimate:
    """Share of True in ``successes`` with a cluster-bootstrap interval.

    Parameters
    ----------
    successes : array_like of bool
        One entry per observation (0/1 or bool).
    clusters : sequence of hashable
        One label per observation; rows of a cluster are resampled together.
    confidence_level : float, default 0.95
    seed : int or None, default 0
    n_resamples : int, default 2000
    method : {"wilson", "exact", "wilsoncc"}, default "wilson"
        The binomial interval used when every cluster has one element (see :func:`proportion`).

    Returns
    -------
    Estimate
        counts ``{"k", "n", "clusters"}``. When every cluster has one element this is
        :func:`proportion` with ``method``. When the rate is 0 or 1 the bootstrap collapses to
        a point, so a Wilson interval over the number of clusters is reported instead. With
        fewer than :data:`MIN_BOOTSTRAP_CLUSTERS` clusters there is too little to resample: the
        interval is the exact one at the share with the number of clusters as its sample size
        (:func:`exact_over_clusters`), and ``n`` is that number of clusters, the unit the
        interval rests on. Undefined when empty.

    References
    ----------
    Davison and Hinkley (1997), sec. 3.8; E. B. Wilson (1927) for the fallback.

    Examples
    --------
    >>> ok = [1, 1, 1, 0, 0, 0, 1, 0]
    >>> clustered_proportion(ok, ["q1"] * 3 + ["q2"] * 3 + ["q3", "q4"]).ci.method
    'exact over clusters'
    >>> clustered_proportion(ok * 3, [f"q{i // 2}" for i in range(24)]).ci.method
    'cluster bootstrap percentile'
    """
    y = _binary("successes", successes)
    level = check_level(confidence_level)
    n_resamples = check_count("n_resamples", n_resamples, minimum=1)
    seed = check_seed(seed)
    n = int(y.size)
    index = ClusterIndex.build(clusters, n)
    k = int(y.sum())
    if n == 0:
        return undefined(0, "no observations", level=level, counts={"k": 0, "n": 0})
    if index.singletons:
        est = proportion(k, n, confidence_level=level, method=method)
        return Estimate(est.estimate, est.ci, n, {"k": k, "n": n, "clusters": n})
    counts = {"k": k, "n": n, "clusters": index.n_clusters}
    if index.n_clusters < MIN_BOOTSTRAP_CLUSTERS:
        # a bootstrap over a handful of clusters knows only those clusters' values: over one
        # cluster it is a point. Each cluster then counts as one observation.
        low, high = exact_over_clusters(k / n, index.n_clusters, level)
        ci = ConfidenceInterval(low, high, level, "exact over clusters")
        return Estimate(k / n, ci, index.n_clusters, counts)
    low, high, _ = ratio_bootstrap(
        y, np.ones(n), index, level=level, n_resamples=n_resamples, seed=seed
    )
    degenerate = k in (0, n)
    ci_name = "wilson over clusters" if degenerate else "cluster bootstrap percentile"
    return Estimate(k / n, ConfidenceInterval(low, high, level, ci_name), n, counts)


def exact_over_clusters(share: float, clusters: int, level: float) -> tuple[float, float]:
    """Clopper-Pearson's interval for ``share`` as if each of ``clusters`` were one observation.

    The successes ``share * clusters`` need not be whole (a cluster may be partly successful):
    the beta quantiles take a fractional count, and at a whole count this is the exact binomial
    interval. Conservative twice over: a cluster counts once however many rows it has, and the
    exact interval covers at least its level.

    Examples
    --------
    >>> low, high = exact_over_clusters(1.0, 1, 0.95)
    >>> round(low, 3), high
    (0.025, 1.0)
    """
    alpha = 1.0 - level
    successes = share * clusters
    low = (
        0.0
        if successes <= 0
        else float(sps.beta.ppf(alpha / 2, successes, clusters - successes + 1))
    )
    high = (
        1.0
        if successes >= clusters
        else float(sps.beta.ppf(1 - alpha / 2, successes + 1, clusters - successes))
    )
    return low, high


def _binary(name: str, values: ArrayLike) -> NDArray[np.float64]:
    """A 1-D array of 0/1 (bools accepted)."""
    x = finite_array(name, values)
    if not np.all((x == 0) | (x == 1)):
        raise InvalidParameterError(f"{name} must hold only True/False (or 1/0) values")
    return x
