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

from judgeprobe.plan import Plan, Verdicts
from judgeprobe.probes._agreement_data import decision_code, strict_majority_code
from judgeprobe.probes._decisions import base_scores, decide, is_flip
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


def _balanced_accuracy(rows: NDArray[np.float64]) -> Any:
    """Mean recall of the two human classes, rows ``(truth, judge decision)``; NaN without both
    (as :func:`judgeprobe.stats.classification.balanced_accuracy`)."""
    truth, judge = rows[..., 0], rows[..., 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        positive = ((truth == 1) & (judge == 1)).sum(axis=-1) / (truth == 1).sum(axis=-1)
        negative = ((truth == 0) & (judge == 0)).sum(axis=-1) / (truth == 0).sum(axis=-1)
    return 0.5 * (positive + negative)


def _kappa(rows: NDArray[np.float64]) -> Any:
    """Cohen's kappa of rows ``(truth, judge decision)`` over the codes -1, 0, 1; NaN when the
    expected agreement is 1 (as :func:`judgeprobe.stats.classification.kappa`)."""
    truth, judge = rows[..., 0], rows[..., 1]
    observed = (truth == judge).mean(axis=-1)
    expected = sum((truth == c).mean(axis=-1) * (judge == c).mean(axis=-1) for c in (-1, 0, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.isclose(expected, 1.0), np.nan, (observed - expected) / (1 - expected))


ANY_BASELINE: LabelsKey = (("baseline", "*"),)
"""The labels of a judge-minus-best-baseline finding whatever its baseline: the baseline's
decisions depend on the data and the seed alone, so between two runs that share both and the
same chosen baseline (the finding's label), the difference is the judge's metric's."""


def agreement_units(plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
    """The agreement probe's accuracy and balanced accuracy per item: the human majority
    decision and the judge's, for the items with a human decision (as the probe keeps them)."""
    rubric, mapping = plan.context.rubric, plan.design.mapping
    base = base_scores(plan.design.items, verdicts)
    rows: dict[str, tuple[float, float]] = {}
    clusters: dict[str, str] = {}
    for item in plan.design.items:
        score = base.scores.get(item.id)
        codes = [decision_code(rubric, mapping.to_judge(v)) for v in item.human_scores]
        truth = strict_majority_code(codes)
        if score is None or truth is None or truth == -1:
            continue
        rows[item.id] = (float(truth), float(decision_code(rubric, score)))
        clusters[item.id] = item.prompt
    hits = {unit: (float(t == j),) for unit, (t, j) in rows.items()}
    balanced = UnitValues(rows, _balanced_accuracy, clusters=clusters)
    return {
        finding_key("accuracy", {}): UnitValues(hits, _mean, binary=True, clusters=clusters),
        finding_key("balanced_accuracy", {}): balanced,
        finding_key("kappa", {}): UnitValues(rows, _kappa, clusters=clusters),
        ("judge_minus_best_baseline_balanced_accuracy", ANY_BASELINE): balanced,
        ("judge_minus_best_baseline_kappa", ANY_BASELINE): UnitValues(
            rows, _kappa, clusters=clusters
        ),
    }


EXTRACTORS: dict[str, Extractor] = {"repetition": repetition_units, "agreement": agreement_units}
"""Per-unit outcomes by probe (its registered name)."""


def units_of(found: Mapping[FindingKey, UnitValues], key: FindingKey) -> UnitValues | None:
    """The per-unit outcomes of finding ``key``: its own, or those of its name for any baseline
    when its only label is a baseline (:data:`ANY_BASELINE`)."""
    exact = found.get(key)
    if exact is not None:
        return exact
    name, labels = key
    return found.get((name, ANY_BASELINE)) if [k for k, _ in labels] == ["baseline"] else None


__all__ = [
    "ANY_BASELINE",
    "EXTRACTORS",
    "FindingKey",
    "UnitValues",
    "agreement_units",
    "finding_key",
    "repetition_units",
    "units_of",
]
