"""The per-unit values of the cluster, permutation and bypass probes (their drawn units).

Their units are drawn: a concatenation of items (cluster, bypass) or a tuple of items in two
orders (permutation), each named by its parts' ids (:func:`~judgeprobe.core.evidence.parts_id`),
so two runs pair the units both drew (the draws depend on the base scores, and two judges may
draw different ones). Each finding's statistic over its units is the finding's estimate:

- cluster: per concatenation, left / flipped from its parts' class (0/1), its score beside its
  parts' mean (W1, mean shift);
- permutation: per tuple, the flip between increasing and decreasing order (0/1) and the two
  scores (W1);
- bypass: per concatenation, bypassed or falsely alarmed (0/1), clustered by its positive
  (first) part.

Each probe mixes in its class here (:class:`ClusterUnits`, :class:`PermutationUnits`,
:class:`BypassUnits`): its :meth:`~judgeprobe.probes.base.Probe.units` and the declarations
of its findings' units, and of why the others cannot be paired.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from judgeprobe.core.evidence import parts_id
from judgeprobe.core.plan import Plan, Role, Verdicts
from judgeprobe.probes.base import Threshold
from judgeprobe.probes.concatenation.bypass_design import place
from judgeprobe.probes.concatenation.bypass_tally import concatenation_hits
from judgeprobe.probes.concatenation.evidence import MOVED, concat_outcomes
from judgeprobe.probes.concatenation.gating import unpaired
from judgeprobe.probes.concatenation.permutation_design import order_role
from judgeprobe.probes.decisions import (
    DEPARTURE_THRESHOLD,
    FLIP_THRESHOLD,
    base_scores,
    is_flip,
)
from judgeprobe.probes.reruns import CHANGE, FLIP, Excess, excess_names
from judgeprobe.probes.units import (
    FindingKey,
    UnitKind,
    UnitValues,
    binary_units,
    column_wasserstein,
    finding_key,
    first_mean,
)
from judgeprobe.transforms.concat import DECREASING, INCREASING


def cluster_units(plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
    """The cluster probe's class rates and score shifts per drawn concatenation."""
    design, rubric = plan.design, plan.context.rubric
    base = base_scores(design.items, verdicts)
    roles: dict[tuple[str, int], dict[int, Role]] = {}
    for role in plan.roles("concat"):
        _, cluster, k, index = role
        roles.setdefault((str(cluster), int(k)), {})[int(index)] = role
    found: dict[FindingKey, UnitValues] = {}
    for drawn in design.concatenations:
        mine = roles.get((drawn.cluster, drawn.k), {})
        judged = [(mine[i], parts) for i, parts in enumerate(drawn.parts) if i in mine]
        labels = {"cluster": drawn.cluster, "k": str(drawn.k)}
        outcomes = concat_outcomes(rubric, judged, base, verdicts)
        for name, moved in MOVED.items():
            flags = {u: moved(rubric, o.expected, o.decision) for u, o in outcomes.items()}
            found[finding_key(name, labels)] = binary_units(flags)
        pairs: dict[str, tuple[float, ...]] = {}
        for role, parts in judged:
            score = verdicts.score(role)
            if score is None or verdicts.decision(role) is None:
                continue
            values = [base.scores[i] for i in parts]
            pairs[parts_id(parts)] = (sum(values) / len(values), score)
        found[finding_key("wasserstein_concat_vs_parts", labels)] = UnitValues(
            pairs, column_wasserstein
        )
        shifts = {u: (s - m,) for u, (m, s) in pairs.items()}
        found[finding_key("mean_concat_minus_parts", labels)] = UnitValues(shifts, first_mean)
    return found


def permutation_units(plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
    """The permutation probe's flip and increasing-vs-decreasing distance per drawn tuple."""
    design, rubric = plan.design, plan.context.rubric
    found: dict[FindingKey, UnitValues] = {}
    for k, tuples in design.tuples.items():
        flips: dict[str, bool] = {}
        scores: dict[str, tuple[float, ...]] = {}
        for i, t in enumerate(tuples):
            up, down = order_role(k, i, INCREASING), order_role(k, i, DECREASING)
            a, b = verdicts.decision(up), verdicts.decision(down)
            sa, sb = verdicts.score(up), verdicts.score(down)
            if a is None or b is None or sa is None or sb is None:
                continue
            flips[parts_id(t.parts)] = is_flip(rubric, a, b)
            scores[parts_id(t.parts)] = (sa, sb)
        labels = {"k": str(k)}
        found[finding_key("positional_bias", labels)] = binary_units(flips)
        found[finding_key("wasserstein_increasing_decreasing", labels)] = UnitValues(
            scores, column_wasserstein
        )
    return found


def bypass_units(plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
    """The bypass probe's rates per concatenation, clustered by the part the rate is over."""
    design, rule = plan.design, plan.context.rubric.decision
    if rule is None or not design.drawn:
        return {}
    groups: dict[FindingKey, list[tuple[Role, str, list[str]]]] = {}
    targets: dict[FindingKey, str] = {}
    for role in plan.roles("bypass"):
        _, k, position, positive, index = role
        fillers = design.fillers[positive, k][int(index)]
        key = finding_key("bypass_rate", {"k": str(k), "position": str(position)})
        parts = place(str(positive), fillers, position)  # type: ignore[arg-type]
        groups.setdefault(key, []).append((role, str(positive), parts))
        targets[key] = rule.negative
    for role in plan.roles("false_alarm"):
        _, k, anchor, index = role
        key = finding_key("false_alarm_rate", {"k": str(k)})
        parts = [str(anchor), *design.mirror[anchor, k][int(index)]]
        groups.setdefault(key, []).append((role, str(anchor), parts))
        targets[key] = rule.positive
    found: dict[FindingKey, UnitValues] = {}
    for key, concatenations in groups.items():
        hits = concatenation_hits(verdicts, concatenations, targets[key])
        found[key] = binary_units(
            {u: hit for u, (hit, _) in hits.items()}, {u: c for u, (_, c) in hits.items()}
        )
    return found


RANDOM_ORDERS = "it pools random orders, drawn per run"

CLUSTER_EXCESS = {
    "class_departure_rate": Excess("class_departure_excess", CHANGE),
    "class_flip_rate": Excess("class_flip_excess", FLIP),
}
PERMUTATION_EXCESS = {"positional_bias": Excess("positional_bias_excess", FLIP)}
BYPASS_EXCESS = {
    "bypass_rate": Excess("bypass_excess", FLIP),
    "false_alarm_rate": Excess("false_alarm_excess", FLIP),
}
"""Per probe, the raw rates read against the rerun null and the names of their gated excesses
(:mod:`~judgeprobe.probes.reruns`)."""


class ClusterUnits:
    """The cluster probe's units: its drawn concatenations."""

    finding_units: ClassVar[Mapping[str, UnitKind]] = {
        "class_departure_rate": "concatenation",
        "class_flip_rate": "concatenation",
        "wasserstein_concat_vs_parts": "concatenation",
        "mean_concat_minus_parts": "concatenation",
    }
    unpaired_findings: ClassVar[Mapping[str, str]] = {
        "wasserstein_against_cluster": "a one-sided distance of two whole distributions",
        "range_departure_rate": "its bound is the cluster's own base-score range",
        **unpaired(CLUSTER_EXCESS),
    }
    excess: ClassVar[Mapping[str, Excess]] = CLUSTER_EXCESS
    excess_findings: ClassVar[Mapping[str, str]] = excess_names(CLUSTER_EXCESS)
    null_lines: ClassVar[Mapping[str, Threshold]] = {
        "class_departure_rate": DEPARTURE_THRESHOLD,
        "class_flip_rate": FLIP_THRESHOLD,
    }
    """The lines of each rate read against the null: a rate at its warn line asks for every
    rerun of the sample, one whose status the null decides for more (:mod:`~judgeprobe.probes.
    reruns`)."""
    score_unit_findings: ClassVar[frozenset[str]] = frozenset(
        {"wasserstein_concat_vs_parts", "wasserstein_against_cluster", "mean_concat_minus_parts"}
    )

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        return cluster_units(plan, verdicts)


class PermutationUnits:
    """The permutation probe's units: its drawn tuples, in increasing and decreasing order."""

    finding_units: ClassVar[Mapping[str, UnitKind]] = {
        "positional_bias": "tuple",
        "wasserstein_increasing_decreasing": "tuple",
    }
    unpaired_findings: ClassVar[Mapping[str, str]] = {
        "primacy_share": "its units are the flipping tuples only, which differ between runs",
        "first_part_match": RANDOM_ORDERS,
        "last_part_match": RANDOM_ORDERS,
        "wasserstein_mean_pairwise": RANDOM_ORDERS,
        **unpaired(PERMUTATION_EXCESS),
    }
    excess: ClassVar[Mapping[str, Excess]] = PERMUTATION_EXCESS
    excess_findings: ClassVar[Mapping[str, str]] = excess_names(PERMUTATION_EXCESS)
    null_lines: ClassVar[Mapping[str, Threshold]] = {"positional_bias": FLIP_THRESHOLD}
    score_unit_findings: ClassVar[frozenset[str]] = frozenset(
        {"wasserstein_increasing_decreasing", "wasserstein_mean_pairwise"}
    )

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        return permutation_units(plan, verdicts)


class BypassUnits:
    """The bypass probe's units: its drawn concatenations, clustered by their tested part."""

    finding_units: ClassVar[Mapping[str, UnitKind]] = {
        "bypass_rate": "concatenation",
        "false_alarm_rate": "concatenation",
    }
    unpaired_findings: ClassVar[Mapping[str, str]] = unpaired(BYPASS_EXCESS)
    excess: ClassVar[Mapping[str, Excess]] = BYPASS_EXCESS
    excess_findings: ClassVar[Mapping[str, str]] = excess_names(BYPASS_EXCESS)
    null_lines: ClassVar[Mapping[str, Threshold]] = {
        "bypass_rate": FLIP_THRESHOLD,
        "false_alarm_rate": FLIP_THRESHOLD,
    }

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        return bypass_units(plan, verdicts)
