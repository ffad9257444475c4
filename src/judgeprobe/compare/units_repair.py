"""Per-unit outcomes of the position and bypass probes, so their differences can be paired.

A repaired judge (:mod:`judgeprobe.repair`) is audited on the same items as the original, so
the differences of the findings its repair targets are paired on those items:

- position: per pair, whether its verdict is the same in both orders (``position_consistency``;
  clustered by question, the probe's default ``cluster``, where questions hold several pairs);
- bypass: per eligible positive item and slice (k, position), its bypassed and judged
  concatenations; the rate is the bypassed share of the judged ones over the items, the ratio
  the probe's clustered interval resamples (``bypass_rate``).

Importing this module registers both in :data:`judgeprobe.compare.units.EXTRACTORS`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgeprobe.compare.units import EXTRACTORS, FindingKey, UnitValues, _mean, finding_key
from judgeprobe.plan import Plan, Verdicts
from judgeprobe.probes._pairwise import cluster_of
from judgeprobe.probes.position import swap_pairs


def _ratio(rows: NDArray[np.float64]) -> Any:
    """Bypassed over judged concatenations, rows ``(bypassed, judged)``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return rows[..., 0].sum(axis=-1) / rows[..., 1].sum(axis=-1)


def position_units(plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
    """Per pair judged in both orders: 1 when its two verdicts agree (the unsliced finding)."""
    items = list(plan.design.items)
    swaps, _ = swap_pairs(items, verdicts, "question")
    consistent = {unit: (float(p.consistent),) for unit, p in swaps.items()}
    clusters = {i.id: str(cluster_of(i, "question")) for i in items if i.id in swaps}
    independent = len(set(clusters.values())) == len(clusters)  # then McNemar's exact test
    return {
        finding_key("position_consistency", {}): UnitValues(
            consistent, _mean, binary=True, clusters=None if independent else clusters
        )
    }


def bypass_units(plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
    """Per (k, position) and positive item: (bypassed, judged) concatenations."""
    rule = plan.context.rubric.decision
    if rule is None:
        return {}
    counts: dict[tuple[str, str], dict[str, list[float]]] = {}
    for role in plan.roles("bypass"):
        _, k, position, positive, _ = role
        decision = verdicts.decision(role)
        if decision is None:
            continue
        row = counts.setdefault((str(k), str(position)), {}).setdefault(str(positive), [0.0, 0.0])
        row[0] += decision == rule.negative
        row[1] += 1
    return {
        finding_key("bypass_rate", {"k": k, "position": position}): UnitValues(
            {unit: (hits, judged) for unit, (hits, judged) in rows.items()}, _ratio
        )
        for (k, position), rows in counts.items()
    }


EXTRACTORS.setdefault("position", position_units)
EXTRACTORS.setdefault("bypass", bypass_units)
