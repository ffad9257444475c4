"""Per-item outcomes of the probes whose units need the probe's own parameters.

:mod:`judgeprobe.compare.units` reads repetition from the plan and its verdicts
alone; the probes here also need what the probe was run with (its slices, clustering, null,
reruns, length bins), so each extractor gets the probe rebuilt from the parameters stored with
its result. Each gives, per finding, the value of every unit (an item, a pair, a drawn
concatenation named by its parts) whose mean, or pooled ratio, is the finding's estimate:

- position: per pair, consistent / flipped / first- or second-position pick (0/1), and its
  decisive first-shown picks of its decisive verdicts (pooled ratio);
- permutation: per tuple, the flip between increasing and decreasing order (0/1) and the two
  scores (W1);
- cluster: per concatenation, left / flipped from its parts' class (0/1), its score beside its
  parts' mean (W1, mean shift);
- bypass: per concatenation, bypassed or falsely alarmed (0/1), clustered by its positive
  (first) part;
- policy invariance: per item, flips and comparisons under a variant or class, and the null's
  (pooled ratio difference for ``flip_delta``);
- length null: per pair of a length bin, the judge's and the null's hit on the human majority;
- length-controlled win rate: per item, a candidate's raw win (1, 0.5 for a tie, 0);
- agreement and human agreement: per item, the rows a statistic over items (an AUC, a kappa, a
  margin over a baseline) reads, with the probe's own function of them
  (:mod:`judgeprobe.compare.agreement_units`).

:data:`UNPAIRED` says, per probe, which findings keep no per-item unit and why; they are
compared unpaired.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgeprobe.compare.agreement_units import agreement_units, human_agreement_units
from judgeprobe.compare.units import EXTRACTORS, FindingKey, UnitValues, finding_key, pooled_ratio
from judgeprobe.core.evidence import parts_id
from judgeprobe.core.plan import Plan, Role, Verdicts
from judgeprobe.engine.store import RunStore
from judgeprobe.probes.base import Probe
from judgeprobe.probes.concatenation.bypass_design import place
from judgeprobe.probes.concatenation.bypass_tally import concatenation_hits
from judgeprobe.probes.concatenation.cluster import concat_role
from judgeprobe.probes.concatenation.evidence import MOVED, concat_outcomes
from judgeprobe.probes.concatenation.permutation_design import order_role
from judgeprobe.probes.decisions import base_scores, is_flip
from judgeprobe.probes.pairwise.length_control import outcome_rows
from judgeprobe.probes.pairwise.position import swap_pairs
from judgeprobe.probes.pairwise.votes import LIVE, collect_judge_votes, slices
from judgeprobe.probes.policy_invariance.design import units as policy_units_of
from judgeprobe.probes.policy_invariance.evidence import flip_rows
from judgeprobe.probes.policy_invariance.wordings import transform_groups
from judgeprobe.probes.registry import build_probe, get_probe_class
from judgeprobe.transforms.concat import DECREASING, INCREASING

ProbeExtractor = Callable[[Any, Plan[Any], Verdicts], dict[FindingKey, UnitValues]]
"""Per-unit outcomes from the rebuilt probe, its stored plan and the verdicts."""


def _mean(rows: NDArray[np.float64]) -> Any:
    return rows[..., 0].mean(axis=-1)


def _excess(rows: NDArray[np.float64]) -> Any:
    """Pooled flip rate minus pooled null rate of rows ``(f, m, a, b)`` (as
    :func:`judgeprobe.stats.flip_rate_excess`)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return rows[..., 0].sum(axis=-1) / rows[..., 1].sum(axis=-1) - rows[..., 2].sum(
            axis=-1
        ) / rows[..., 3].sum(axis=-1)


def _difference(rows: NDArray[np.float64]) -> Any:
    return rows[..., 0].mean(axis=-1) - rows[..., 1].mean(axis=-1)


def _w1(rows: NDArray[np.float64]) -> Any:
    return np.abs(np.sort(rows[..., 0], axis=-1) - np.sort(rows[..., 1], axis=-1)).mean(axis=-1)


def _binary(flags: Mapping[str, bool], clusters: Mapping[str, str] | None = None) -> UnitValues:
    return UnitValues(
        {u: (float(f),) for u, f in flags.items()}, _mean, binary=True, clusters=clusters
    )


def position_units(probe: Any, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
    """The position probe's rates per pair (live judge only), over all pairs and per slice."""
    if probe.judge_source != LIVE:
        return {}
    pairs = list(plan.design.items)
    swaps, _ = swap_pairs(pairs, verdicts, probe.cluster)
    found: dict[FindingKey, UnitValues] = {}
    for labels, chosen in slices(pairs, probe.by, min_items=probe.min_slice_items):
        rows = {i.id: swaps[i.id] for i in chosen if i.id in swaps}
        clusters = {u: str(p.cluster) for u, p in rows.items()}
        flags = {
            "position_consistency": {u: p.consistent for u, p in rows.items()},
            "swap_flip_rate": {u: p.first_bias or p.second_bias for u, p in rows.items()},
            "first_position_bias": {u: p.first_bias for u, p in rows.items()},
            "second_position_bias": {u: p.second_bias for u, p in rows.items()},
        }
        for name, values in flags.items():
            found[finding_key(name, labels)] = _binary(values, clusters)
        share: dict[str, tuple[float, ...]] = {}
        for u, p in rows.items():
            decisive = [c for c in (p.original, p.swapped_raw) if c != "tie"]
            if decisive:
                share[u] = (float(sum(c == "A" for c in decisive)), float(len(decisive)))
        found[finding_key("first_position_share", labels)] = UnitValues(
            share, pooled_ratio, clusters=clusters
        )
    return found


def permutation_units(
    probe: Any, plan: Plan[Any], verdicts: Verdicts
) -> dict[FindingKey, UnitValues]:
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
        found[finding_key("positional_bias", labels)] = _binary(flips)
        found[finding_key("wasserstein_increasing_decreasing", labels)] = UnitValues(scores, _w1)
    return found


def cluster_units(probe: Any, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
    """The cluster probe's class rates and score shifts per drawn concatenation."""
    design, rubric = plan.design, plan.context.rubric
    base = base_scores(design.items, verdicts)
    found: dict[FindingKey, UnitValues] = {}
    for drawn in design.concatenations:
        roles = [(concat_role(drawn.cluster, drawn.k, i), p) for i, p in enumerate(drawn.parts)]
        labels = {"cluster": drawn.cluster, "k": str(drawn.k)}
        outcomes = concat_outcomes(rubric, roles, base, verdicts)
        for name, moved in MOVED.items():
            flags = {u: moved(rubric, o.expected, o.decision) for u, o in outcomes.items()}
            found[finding_key(name, labels)] = _binary(flags)
        pairs: dict[str, tuple[float, ...]] = {}
        for role, parts in roles:
            score = verdicts.score(role)
            if score is None or verdicts.decision(role) is None:
                continue
            values = [base.scores[i] for i in parts]
            pairs[parts_id(parts)] = (sum(values) / len(values), score)
        found[finding_key("wasserstein_concat_vs_parts", labels)] = UnitValues(pairs, _w1)
        shifts = {u: (s - m,) for u, (m, s) in pairs.items()}
        found[finding_key("mean_concat_minus_parts", labels)] = UnitValues(shifts, _mean)
    return found


def bypass_units(probe: Any, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
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
        found[key] = _binary(
            {u: hit for u, (hit, _) in hits.items()}, {u: c for u, (_, c) in hits.items()}
        )
    return found


def policy_invariance_units(
    probe: Any, plan: Plan[Any], verdicts: Verdicts
) -> dict[FindingKey, UnitValues]:
    """Policy invariance per item: a variant's flip (0/1), a class's flips of its comparisons
    (pooled), and ``flip_delta``'s flip and null counts."""
    design, rubric = plan.design, plan.context.rubric
    units = policy_units_of(design, verdicts, probe.reruns)
    groups = [("variant", w.name, [w]) for w in design.variants]
    groups += [("class", cls, members) for cls, members in transform_groups(design.variants)]
    found: dict[FindingKey, UnitValues] = {}
    for level, label, members in groups:
        transform = members[0].transform
        labels = (
            {"class": transform} if level == "class" else {"variant": label, "class": transform}
        )
        rows = flip_rows(rubric, units, members, probe.null)
        found[finding_key("flip_delta", {**labels, "null": probe.null})] = UnitValues(rows, _excess)
        compared = {u: (f, m) for u, (f, m, _, _) in rows.items() if m}
        if level == "variant":
            found[finding_key("flip_rate", labels)] = _binary(
                {u: f > 0 for u, (f, _) in compared.items()}
            )
        else:
            found[finding_key("flip_rate", labels)] = UnitValues(compared, pooled_ratio)
    return found


def length_null_units(
    probe: Any, plan: Plan[Any], verdicts: Verdicts
) -> dict[FindingKey, UnitValues]:
    """The length-matched control per pair of each length bin: the judge's hit on the human
    majority, and the null's beside it for ``bin_judge_minus_null``."""
    design, ctx = plan.design, plan.context
    judge = collect_judge_votes(design.judged_items(), ctx, verdicts, source=probe.judge_source)
    found: dict[FindingKey, UnitValues] = {}
    for labels, chosen in slices(list(design.items), probe.by, min_items=probe.min_slice_items):
        rows = probe.matched(chosen, judge, ctx.seed)
        for length_bin in probe._bins:
            inside = [r for r in rows if length_bin.contains(r.gap)]
            tag = {**labels, "bin": length_bin.label, "unit": probe.unit}
            clusters = {r.item_id: r.cluster for r in inside}
            found[finding_key("bin_judge_agreement", tag)] = _binary(
                {r.item_id: r.judge_hit for r in inside}, clusters
            )
            both = {
                r.item_id: (float(r.judge_hit), float(bool(r.null_hit)))
                for r in inside
                if r.null_hit is not None
            }
            found[finding_key("bin_judge_minus_null", tag)] = UnitValues(
                both, _difference, clusters=clusters
            )
    return found


def length_control_units(
    probe: Any, plan: Plan[Any], verdicts: Verdicts
) -> dict[FindingKey, UnitValues]:
    """The raw win rate of each candidate per item, for the judge and for the humans (the
    items with a judge vote and a strict human majority, as the probe keeps them)."""
    pairs = list(plan.design.items)
    _, both = probe.rated_choices(plan, verdicts)
    by_model = probe._by_model(pairs)
    found: dict[FindingKey, UnitValues] = {}
    for rater, choices in both.items():
        outcomes = outcome_rows(
            pairs, choices, by_model=by_model, unit=probe.unit, cluster=probe.cluster
        )
        for candidate, data in outcomes.items():
            labels = {"candidate": candidate, "rater": rater, "unit": probe.unit}
            values = {i: (y,) for i, y in zip(data.items, data.y, strict=True)}
            clusters = {i: str(c) for i, c in zip(data.items, data.clusters, strict=True)}
            found[finding_key("raw_win_rate", labels)] = UnitValues(
                values, _mean, clusters=clusters
            )
    return found


PROBE_EXTRACTORS: dict[str, ProbeExtractor] = {
    "agreement": agreement_units,
    "human_agreement": human_agreement_units,
    "position": position_units,
    "permutation": permutation_units,
    "cluster": cluster_units,
    "bypass": bypass_units,
    "policy_invariance": policy_invariance_units,
    "length_null": length_null_units,
    "length_controlled_win_rate": length_control_units,
}
"""Per-unit outcomes by probe (its registered name), from the rebuilt probe."""


UNPAIRED: dict[str, dict[str, str]] = {
    "cluster": {
        "wasserstein_against_cluster": "a one-sided distance of two whole distributions",
        "range_departure_rate": "its bound is the cluster's own base-score range",
    },
    "permutation": {
        "primacy_share": "its units are the flipping tuples only, which differ between runs",
        "first_part_match": "it pools random orders, drawn per run",
        "last_part_match": "it pools random orders, drawn per run",
        "wasserstein_mean_pairwise": "it pools random orders, drawn per run",
    },
    "length_controlled_win_rate": {
        "lc_win_rate": "a logistic fit over all comparisons of a candidate, no per-item unit",
    },
}
"""Findings compared unpaired although their probe pairs others, and why."""


def unpaired_reason(
    probe: str, name: str, units_a: UnitValues | None, units_b: UnitValues | None, shared: int
) -> str:
    """Why finding ``name`` of ``probe`` is compared unpaired."""
    known = UNPAIRED.get(probe, {}).get(name)
    if known is not None:
        return known
    if units_a is None or units_b is None:
        return "no per-item outcomes of both runs (a card file, different data, or none kept)"
    return f"{shared} unit{'' if shared == 1 else 's'} shared by the two runs (2 needed)"


def stored_units(
    store: RunStore, run_id: int, name: str, probe: str
) -> dict[FindingKey, UnitValues]:
    """The per-unit outcomes of result ``name`` (probe ``probe``) of run ``run_id``; empty when
    the probe has no extractor or the run stored no plan for it."""
    plain = EXTRACTORS.get(probe)
    rebuilt = PROBE_EXTRACTORS.get(probe)
    if plain is None and rebuilt is None:
        return {}
    plan = store.plan(run_id, name)
    if plan is None:
        return {}
    verdicts = Verdicts(plan, store.get_many(sorted(plan.keys)))
    if plain is not None:
        return plain(plan, verdicts)
    stored = store.results(run_id).get(name, {})
    made: Probe = build_probe(
        get_probe_class(probe), stored.get("params", {}), where=f"probe {name!r}"
    )
    assert rebuilt is not None
    return rebuilt(made, plan, verdicts)


__all__ = ["PROBE_EXTRACTORS", "UNPAIRED", "stored_units", "unpaired_reason"]
