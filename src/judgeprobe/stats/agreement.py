"""Agreement between two label sequences, and consistency of one judge across reruns.

Labels are any hashable values (strings, ints, None, ...). ``None`` is treated as an ordinary
label; drop missing verdicts first if ``None`` means "no verdict" for your data.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from judgeprobe.stats._validation import (
    InvalidParameterError,
    check_count,
    check_level,
    check_seed,
    encode,
    same_length,
    undefined,
)
from judgeprobe.stats.resampling import (
    ClusterIndex,
    clustered_proportion,
    interval_from_replicates,
    ratio_bootstrap,
    resample_sums,
)
from judgeprobe.stats.result import ConfidenceInterval, Estimate

H = TypeVar("H", bound=Hashable)


def majority(values: Sequence[H]) -> H | None:
    """The value held by strictly more than half of ``values``, or None when there is none.

    Every entry counts towards the total, ``None`` entries included.

    Examples
    --------
    >>> majority(["A", "A", "B"]), majority(["A", "B"]), majority([])
    ('A', None, None)
    """
    if not values:
        return None
    value, count = Counter(values).most_common(1)[0]
    return value if 2 * count > len(values) else None


def agreement(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    clusters: Sequence[Hashable] | NDArray[Any] | None = None,
    confidence_level: float = 0.95,
    seed: int | None = 0,
    n_resamples: int = 2000,
) -> Estimate:
    """Share of positions where ``a[i] == b[i]`` (raw percent agreement).

    Parameters
    ----------
    a, b : sequence of hashable
        Paired labels, e.g. a judge's verdicts and human labels on the same items.
    clusters : sequence of hashable, optional
        One label per position; given, the interval is a cluster bootstrap.
    confidence_level : float, default 0.95
    seed : int or None, default 0
    n_resamples : int, default 2000
        Resamples of the cluster bootstrap (unused without clusters).

    Returns
    -------
    Estimate
        counts ``{"k", "n"}`` (agreements, positions; plus ``"clusters"`` when clustered).
        Wilson interval without clusters. Undefined when empty.

    References
    ----------
    E. B. Wilson (1927); see :func:`proportion` and :func:`clustered_proportion`.

    Examples
    --------
    >>> agreement(["y", "n", "y", "y"], ["y", "n", "n", "y"]).estimate
    0.75
    """
    same_length(a=a, b=b)
    hits = np.fromiter((x == y for x, y in zip(a, b, strict=True)), dtype=bool, count=len(a))
    level = check_level(confidence_level)
    seed = check_seed(seed)
    if clusters is None:
        clusters = np.arange(len(a))
    return clustered_proportion(
        hits, clusters, confidence_level=level, seed=seed, n_resamples=n_resamples
    )


def kappa_from_tables(tables: NDArray[np.float64]) -> NDArray[np.float64]:
    """Cohen's kappa of each (..., L, L) contingency table; NaN where expected agreement is 1."""
    total = tables.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.trace(tables, axis1=-2, axis2=-1) / total
        expected = np.sum(tables.sum(axis=-1) * tables.sum(axis=-2), axis=-1) / total**2
        kappa = (observed - expected) / (1.0 - expected)
    return np.where(np.isclose(expected, 1.0), np.nan, kappa)


def cohen_kappa(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    labels: Sequence[Hashable] | None = None,
    confidence_level: float = 0.95,
    clusters: Sequence[Hashable] | NDArray[Any] | None = None,
    seed: int | None = 0,
    n_resamples: int = 2000,
) -> Estimate:
    """Cohen's kappa between two raters' labels, with a (cluster) bootstrap interval.

    ``kappa = (p_o - p_e) / (1 - p_e)``, where ``p_o`` is the observed agreement and ``p_e``
    the agreement expected from the two raters' marginal label frequencies.

    Parameters
    ----------
    a, b : sequence of hashable
        Paired labels of the same items by two raters.
    labels : sequence of hashable, optional
        The label set; a label outside it raises :class:`InvalidParameterError`. Default:
        every label seen.
    confidence_level : float, default 0.95
    clusters : sequence of hashable, optional
        One label per item; clusters are resampled whole.
    seed : int or None, default 0
    n_resamples : int, default 2000

    Returns
    -------
    Estimate
        kappa in [-1, 1]; ``n`` items; counts ``{"n", "observed_agreement",
        "expected_agreement", "labels"}`` (plus ``"clusters"``, ``"undefined_resamples"``).
        Undefined (NaN) when empty or when ``p_e == 1`` (both raters use a single, identical
        label). Replicates where kappa is undefined are dropped from the interval.

    References
    ----------
    J. Cohen (1960), "A coefficient of agreement for nominal scales", Educ. Psychol. Meas.
    20:37-46. Bootstrap: Efron and Tibshirani (1993), ch. 13.

    Examples
    --------
    >>> a = ["y"] * 20 + ["y"] * 5 + ["n"] * 10 + ["n"] * 15
    >>> b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    >>> round(cohen_kappa(a, b).estimate, 12)  # p_o = 0.7, p_e = (25*30 + 25*20) / 50**2 = 0.5
    0.4
    """
    n = same_length(a=a, b=b)
    level = check_level(confidence_level)
    seed = check_seed(seed)
    n_resamples = check_count("n_resamples", n_resamples, minimum=1)
    codes, seen = encode([*a, *b])
    if labels is not None:
        allowed = set(labels)
        unknown = [label for label in seen if label not in allowed]
        if unknown:
            raise InvalidParameterError(
                f"labels {unknown!r} occur in the data but not in `labels` {list(labels)!r}; "
                "add them to `labels` or drop those items"
            )
    n_labels = len(seen) if labels is None else len(allowed)
    if n == 0:
        return undefined(0, "no items", level=level, counts={"n": 0})
    width = len(seen)
    cells = codes[:n] * width + codes[n:]
    onehot = np.zeros((n, width * width), dtype=np.float64)
    onehot[np.arange(n), cells] = 1.0
    table = onehot.sum(axis=0).reshape(width, width)
    observed = float(np.trace(table)) / n
    expected = float(table.sum(axis=1) @ table.sum(axis=0)) / n**2
    index = ClusterIndex.build(clusters, n)
    counts: dict[str, float] = {
        "n": n,
        "observed_agreement": observed,
        "expected_agreement": expected,
        "labels": n_labels,
    }
    if clusters is not None:
        counts["clusters"] = index.n_clusters
    kappa = float(kappa_from_tables(table))
    if math.isnan(kappa):
        reason = "expected agreement is 1 (both raters use one identical label)"
        return undefined(n, reason, level=level, counts=counts)
    name = "cluster bootstrap" if clusters is not None and not index.singletons else "bootstrap"
    if index.n_clusters < 2:
        reason = f"{name} percentile: needs at least 2 clusters"
        return Estimate(kappa, ConfidenceInterval(math.nan, math.nan, level, reason), n, counts)
    sums = resample_sums(
        index.cluster_sums(onehot), n_resamples=n_resamples, rng=np.random.default_rng(seed)
    )
    replicates = kappa_from_tables(sums.reshape(n_resamples, width, width))
    low, high, dropped = interval_from_replicates(replicates, kappa, level)
    if dropped:
        counts["undefined_resamples"] = dropped
    return Estimate(kappa, ConfidenceInterval(low, high, level, f"{name} percentile"), n, counts)


def discordant_pair_rate(
    trials: Sequence[Sequence[Hashable | None]],
    *,
    confidence_level: float = 0.95,
    seed: int | None = 0,
    n_resamples: int = 2000,
) -> Estimate:
    """Share of discordant pairs among all within-item pairs of rerun verdicts (``p_jitter``).

    For each item, the non-None verdicts of its reruns form ``m (m - 1) / 2`` unordered pairs;
    a pair is discordant when its two verdicts differ. The rate pools pairs over items. This is
    the rerun-jitter baseline a perturbation's flip rate is compared with.

    Parameters
    ----------
    trials : sequence of sequences
        ``trials[i]`` holds item i's verdicts over N reruns; ``None`` (no verdict) is skipped.
    confidence_level : float, default 0.95
    seed : int or None, default 0
    n_resamples : int, default 2000

    Returns
    -------
    Estimate
        ``n`` = items with at least one pair; counts ``{"discordant", "pairs", "items",
        "items_excluded"}`` (items with fewer than two verdicts are excluded). The interval
        resamples items (an item's pairs are correlated); at a rate of 0 or 1 it is a Wilson
        interval over the items instead. Undefined when there are no pairs.

    References
    ----------
    Pairwise disagreement as in Fleiss (1971), Psychol. Bull. 76:378-382 (the complement of
    the per-item agreement ``P_i``, pooled by pair); cluster bootstrap: Davison and Hinkley
    (1997), sec. 3.8.

    Examples
    --------
    >>> discordant_pair_rate([["A", "A", "B"], ["A", "A", "A"], ["A", None, "B"]]).counts
    {'discordant': 3, 'pairs': 7, 'items': 3, 'items_excluded': 0}
    """
    level = check_level(confidence_level)
    seed = check_seed(seed)
    n_resamples = check_count("n_resamples", n_resamples, minimum=1)
    discordant: list[int] = []
    pairs: list[int] = []
    excluded = 0
    for verdicts in trials:
        tally = Counter(v for v in verdicts if v is not None)
        m = sum(tally.values())
        if m < 2:
            excluded += 1
            continue
        total = m * (m - 1) // 2
        pairs.append(total)
        discordant.append(total - sum(c * (c - 1) // 2 for c in tally.values()))
    items = len(pairs)
    counts = {
        "discordant": sum(discordant),
        "pairs": sum(pairs),
        "items": items,
        "items_excluded": excluded,
    }
    if items == 0:
        return undefined(0, "no item has two verdicts", level=level, counts=counts)
    num = np.asarray(discordant, dtype=np.float64)
    den = np.asarray(pairs, dtype=np.float64)
    index = ClusterIndex.build(None, items)
    estimate = counts["discordant"] / counts["pairs"]
    if items < 2 and estimate not in (0.0, 1.0):
        reason = "cluster bootstrap percentile: needs at least 2 items"
        return Estimate(estimate, ConfidenceInterval(math.nan, math.nan, level, reason), 1, counts)
    low, high, _ = ratio_bootstrap(num, den, index, level=level, n_resamples=n_resamples, seed=seed)
    name = "wilson over items" if estimate in (0.0, 1.0) else "cluster bootstrap percentile"
    return Estimate(estimate, ConfidenceInterval(low, high, level, name), items, counts)
