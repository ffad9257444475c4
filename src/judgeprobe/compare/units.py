"""Per-unit outcomes of a stored probe result, for paired differences between two runs.

A finding is one number over many units (items, mostly); two runs of the same items can only
be compared *paired* when each finding's value on each unit is known. Those values are read here
from what the run store holds, the probe's stored plan (design and roles) and its verdicts, never
from the card's numbers: an :data:`EXTRACTORS` entry per probe turns them into, per finding, the
units' values and the statistic that makes the finding's estimate from them.

Probes without an extractor (and findings an extractor does not cover) are compared unpaired,
from the two runs' intervals, and the comparison says so. The probes whose units need the
probe's own parameters have theirs in :mod:`judgeprobe.compare.item_units`, which also reads a
stored run's units (``stored_units``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgeprobe.core.plan import Plan, Verdicts
from judgeprobe.probes.decisions import base_scores, decide, is_flip
from judgeprobe.transforms.concat import MODE_LABELS

LabelsKey = tuple[tuple[str, str], ...]
FindingKey = tuple[str, LabelsKey]
"""A finding of one probe result: its name and its labels, sorted."""


def finding_key(name: str, labels: Mapping[str, str]) -> FindingKey:
    """The key a finding is matched by between runs."""
    return name, tuple(sorted((str(k), str(v)) for k, v in labels.items()))


@dataclass(frozen=True, slots=True)
class UnitValues:
    """One finding's values per unit, and how the finding's estimate is made from them.

    ``values`` maps a unit (an item id) to its row of values; ``statistic`` maps an array of
    rows, shape ``(..., m, k)``, to the estimate over the ``m`` rows (one per leading index, so
    that bootstrap replicates are computed in one call); ``binary`` says the rows are single
    0/1 outcomes whose mean is the estimate (a rate, tested with McNemar).
    """

    values: Mapping[str, tuple[float, ...]]
    statistic: Callable[[NDArray[np.float64]], Any]
    binary: bool = False
    clusters: Mapping[str, str] | None = None
    """The cluster of each unit (resampled together), None when every unit is its own."""


Extractor = Callable[[Plan[Any], Verdicts], dict[FindingKey, UnitValues]]


def _mean(rows: NDArray[np.float64]) -> Any:
    return rows[..., 0].mean(axis=-1)


def pooled_ratio(rows: NDArray[np.float64]) -> Any:
    """Pooled ratio of rows ``(count, of)``: the share over every unit's comparisons."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return rows[..., 0].sum(axis=-1) / rows[..., 1].sum(axis=-1)


def of_columns(fn: Callable[..., float]) -> Callable[[NDArray[np.float64]], Any]:
    """``fn(column_0, column_1, ...)`` of a set of rows ``(m, k)``, as a statistic of rows
    ``(..., m, k)``: one call per leading index, so that a finding's own function (an AUC, a
    kappa) makes every bootstrap replicate of its paired difference."""

    def statistic(rows: NDArray[np.float64]) -> Any:
        flat = rows.reshape(-1, *rows.shape[-2:])
        values = [fn(*one.T) for one in flat]
        return np.asarray(values, dtype=np.float64).reshape(rows.shape[:-2])

    return statistic


def _w1(rows: NDArray[np.float64]) -> Any:
    """W1 between the two columns' empirical distributions (equal sizes: the mean gap of their
    sorted values, as :func:`scipy.stats.wasserstein_distance` computes it)."""
    return np.abs(np.sort(rows[..., 0], axis=-1) - np.sort(rows[..., 1], axis=-1)).mean(axis=-1)


def repetition_units(plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
    """The repetition probe's findings per item: (base, repeated) scores, their shift, a flip."""
    rubric = plan.context.rubric
    base = base_scores(plan.design.items, verdicts)
    rows: dict[tuple[str, int], dict[str, tuple[float, float]]] = {}
    for role in plan.roles("repeat"):
        _, mode, times, item_id = role
        before = base.scores.get(str(item_id))
        after = verdicts.score(role)
        if before is not None and after is not None:
            rows.setdefault((str(mode), int(times)), {})[str(item_id)] = (before, after)
    found: dict[FindingKey, UnitValues] = {}
    for (mode, times), pairs in rows.items():
        labels = {"mode": MODE_LABELS[mode], "l": str(times)}  # type: ignore[index]
        found[finding_key("wasserstein_to_l1", labels)] = UnitValues(pairs, _w1)
        found[finding_key("mean_shift", labels)] = UnitValues(
            {unit: (a - b,) for unit, (b, a) in pairs.items()}, _mean
        )
        flips = {
            unit: (float(is_flip(rubric, decide(rubric, b), decide(rubric, a))),)
            for unit, (b, a) in pairs.items()
        }
        found[finding_key("decision_flip_rate", labels)] = UnitValues(flips, _mean, binary=True)
    return found


EXTRACTORS: dict[str, Extractor] = {"repetition": repetition_units}
"""Per-unit outcomes by probe (its registered name)."""


def units_of(found: Mapping[FindingKey, UnitValues], key: FindingKey) -> UnitValues | None:
    """The per-unit outcomes of finding ``key``, None where they are not known."""
    return found.get(key)


__all__ = [
    "EXTRACTORS",
    "FindingKey",
    "UnitValues",
    "finding_key",
    "of_columns",
    "pooled_ratio",
    "repetition_units",
    "units_of",
]
