"""A finding's value on each of its units: what two runs of the same items are paired on.

A finding is one number over many units (items, pairs, drawn tuples or concatenations). Two
runs of the same items can be compared *paired* (a difference per unit, far more powerful than
two unpaired intervals) only when each finding's value on each unit is known. A probe gives
them with :meth:`~judgeprobe.probes.base.Probe.units` from its plan and verdicts, as
:class:`UnitValues`: per unit its row of values, and the statistic that turns a set of rows
into the finding's estimate, so that the estimate over every unit is the finding's own.

A probe declares, per finding name, the unit it is paired on (:data:`UnitKind`) or why it
cannot be paired (``Probe.finding_units``, ``Probe.unpaired_findings``); the probe contract
checks that every gated finding is one or the other, and that a declared unit's statistic gives
the finding's estimate.

The statistics here map rows of shape ``(..., m, k)`` to one value per leading index, so a
bootstrap's replicates take one call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

UnitKind = Literal["item", "pair", "tuple", "concatenation"]
"""What a finding's units are: a pointwise item, a pairwise item (a pair), a drawn tuple of
items (the permutation probe), or a drawn concatenation named by its parts (whose statistic,
a rate or a distance over the concatenations, is the finding's estimate)."""

UNIT_KINDS: tuple[UnitKind, ...] = ("item", "pair", "tuple", "concatenation")

LabelsKey = tuple[tuple[str, str], ...]
FindingKey = tuple[str, LabelsKey]
"""A finding of one probe result: its name and its labels, sorted."""

Statistic = Callable[[NDArray[np.float64]], Any]
"""Rows ``(..., m, k)`` to the estimate over the ``m`` rows, one per leading index."""


def finding_key(name: str, labels: Mapping[str, str]) -> FindingKey:
    """The key a finding is matched by, between runs and between a result and its units."""
    return name, tuple(sorted((str(k), str(v)) for k, v in labels.items()))


@dataclass(frozen=True, slots=True)
class UnitValues:
    """One finding's values per unit, and how the finding's estimate is made from them.

    ``values`` maps a unit (an item id, or a drawn unit named by its parts) to its row of
    values; ``statistic`` maps an array of rows, shape ``(..., m, k)``, to the estimate over
    the ``m`` rows; ``binary`` says the rows are single 0/1 outcomes whose mean is the estimate
    (a rate, tested with McNemar).
    """

    values: Mapping[str, tuple[float, ...]]
    statistic: Statistic
    binary: bool = False
    clusters: Mapping[str, str] | None = None
    """The cluster of each unit (resampled together), None when every unit is its own."""

    def estimate(self) -> float:
        """The statistic over every unit (in unit order): the finding's estimate; NaN when
        there is no unit."""
        if not self.values:
            return float("nan")
        rows = np.array([self.values[u] for u in sorted(self.values)], dtype=np.float64)
        return float(self.statistic(rows))


def first_mean(rows: NDArray[np.float64]) -> Any:
    """The mean of the first column: a rate of 0/1 outcomes, a mean shift."""
    return rows[..., 0].mean(axis=-1)


def mean_difference(rows: NDArray[np.float64]) -> Any:
    """The mean of the first column minus the mean of the second (two paired rates)."""
    return rows[..., 0].mean(axis=-1) - rows[..., 1].mean(axis=-1)


def pooled_ratio(rows: NDArray[np.float64]) -> Any:
    """Pooled ratio of rows ``(count, of)``: the share over every unit's comparisons."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return rows[..., 0].sum(axis=-1) / rows[..., 1].sum(axis=-1)


def pooled_excess(rows: NDArray[np.float64]) -> Any:
    """Pooled rate minus pooled null rate of rows ``(f, m, a, b)``: ``sum f / sum m - sum a /
    sum b`` (as :func:`judgeprobe.stats.flip_rate_excess`)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return rows[..., 0].sum(axis=-1) / rows[..., 1].sum(axis=-1) - rows[..., 2].sum(
            axis=-1
        ) / rows[..., 3].sum(axis=-1)


def column_wasserstein(rows: NDArray[np.float64]) -> Any:
    """W1 between the two columns' empirical distributions (equal sizes: the mean gap of their
    sorted values, as :func:`scipy.stats.wasserstein_distance` computes it)."""
    return np.abs(np.sort(rows[..., 0], axis=-1) - np.sort(rows[..., 1], axis=-1)).mean(axis=-1)


def of_columns(fn: Callable[..., float]) -> Statistic:
    """``fn(column_0, column_1, ...)`` of a set of rows ``(m, k)``, as a statistic of rows
    ``(..., m, k)``: one call per leading index, so that a finding's own function (an AUC, a
    kappa) makes every bootstrap replicate of its paired difference."""

    def statistic(rows: NDArray[np.float64]) -> Any:
        flat = rows.reshape(-1, *rows.shape[-2:])
        values = [fn(*one.T) for one in flat]
        return np.asarray(values, dtype=np.float64).reshape(rows.shape[:-2])

    return statistic


def binary_units(
    flags: Mapping[str, bool], clusters: Mapping[str, str] | None = None
) -> UnitValues:
    """A rate's units: one 0/1 outcome per unit, whose mean is the rate."""
    return UnitValues(
        {u: (float(f),) for u, f in flags.items()}, first_mean, binary=True, clusters=clusters
    )


__all__ = [
    "UNIT_KINDS",
    "FindingKey",
    "LabelsKey",
    "Statistic",
    "UnitKind",
    "UnitValues",
    "binary_units",
    "column_wasserstein",
    "finding_key",
    "first_mean",
    "mean_difference",
    "of_columns",
    "pooled_excess",
    "pooled_ratio",
]
