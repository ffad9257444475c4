"""Cluster probe: do concatenations of consistently scored items keep their class?

A judge that calls each of several responses harmful should call their concatenation harmful
too (Fandina et al., arXiv:2408.12259, "Cluster tests"). The probe forms a high and a low
cluster from the base scores ``S(P, R)``, concatenates k items drawn from one cluster into
``(P1*...*Pk, R1*...*Rk)`` and compares the judge's score of the concatenation with the mean
of its parts' scores, and its decision with the class the parts share.

Clusters:

- ``class`` (default for scale and binary rubrics): the items whose base decision is the rule's
  positive class, and those whose decision is its negative class (the paper's pairs scored
  {4, 5} and {1, 2}); each cluster is named by its class.
- ``quantile`` (default for continuous rubrics): the top and the bottom ``quantile`` of base
  scores (the paper's top and bottom 10 % of reward scores), named ``high`` and ``low``.

Distances are one-sided where they are judged: each cluster has a direction (``high``, and the
class on the positive side of the rule, towards higher scores when ``higher_is_positive``), and
``wasserstein_against_cluster`` counts only the part of the distance by which concatenations
score against it. Moving further into a cluster's own class or tail is not a failure; the
two-sided ``wasserstein_concat_vs_parts`` is reported beside it, for information. The class
rates compare a concatenation's decision with the class its parts share.

The probe plans in two stages: :meth:`ClusterProbe.plan` asks for the base requests (shared
with every other probe); once their verdicts are known, :meth:`ClusterProbe.refine` draws the
clusters and their concatenations from the base scores and asks for those. The drawn design is
part of the plan, so analysing it again needs no drawing. Items without an ok base score are
excluded and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from judgeprobe.core.plan import Plan, ProbeContext, Role, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.data.items import Item, PointwiseItem
from judgeprobe.errors import ConfigError
from judgeprobe.probes.base import (
    FigureSpec,
    Finding,
    Probe,
    ProbeKind,
    ProbeResult,
    class_too_small,
    explain_skipped,
    not_assessable,
)
from judgeprobe.probes.concatenation.cluster_design import (
    Cluster,
    ClusterBy,
    ClusterDesign,
    Clustering,
    Concatenations,
    concat_role,
)
from judgeprobe.probes.concatenation.evidence import class_evidence
from judgeprobe.probes.concatenation.gating import (
    added_names,
    gated_result,
)
from judgeprobe.probes.concatenation.sizing import DESIGNS, Design, by_design, sized_count
from judgeprobe.probes.concatenation.units import CLUSTER_EXCESS, ClusterUnits
from judgeprobe.probes.decisions import (
    CONCATENATION,
    DEPARTURE_THRESHOLD,
    FLIP_THRESHOLD,
    BaseScores,
    BootstrapOptions,
    base_notes,
    base_requests,
    base_scores,
    concatenation_request,
    decide,
    distance_threshold,
    draw_tuples,
    drawable_base,
    is_flip,
    pointwise,
    probe_rng,
    score_span,
    with_counts,
)
from judgeprobe.probes.failures import STATUSES, explain_failed, failure_cause
from judgeprobe.probes.params import INTERVAL_CONSTRAINTS, Constraint, Counts, Interval, OneOf
from judgeprobe.probes.registry import register_probe
from judgeprobe.probes.requirements import Requirements
from judgeprobe.probes.reruns import rerun_stage, with_first_reruns
from judgeprobe.rubrics import Rubric
from judgeprobe.stats import Estimate, paired_wasserstein
from judgeprobe.stats.shared_items import (
    over_shared_items,
    shared_item_mean,
    shared_item_proportion,
)
from judgeprobe.transforms.concat import JOIN_STYLES, Join, JoinStyle

SIZED_KS = (2, 4)
PAPER_KS = (2, 4, 8, 16)


@register_probe
@dataclass(frozen=True)
class ClusterProbe(ClusterUnits, Probe):
    """Concatenations of items from one score cluster against their parts.

    Parameters
    ----------
    ks : tuple of int, default (2, 4)
        Numbers of items per concatenation (the paper's design: 2, 4, 8, 16).
    per_cluster : int, default 0
        Distinct concatenations drawn per cluster and k (fewer when fewer exist); 0 sizes them
        by the question and the cluster's items (:mod:`~judgeprobe.probes.concatenation.sizing`;
        the paper's design: 1000).
    design : {"sized", "paper"}, default "sized"
        ``paper``: every size left at its default takes the paper's.
    quantile : float, default 0.1
        Share of items in each quantile cluster.
    cluster_by : {"auto", "class", "quantile"}, default "auto"
        ``auto``: quantile clusters for continuous rubrics, class clusters otherwise.
    join : {"parallel", "dialogue"}, default "parallel"
    separator : str, default "\\n\\n"
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
    """

    nested_design: ClassVar[bool] = False  # its concatenations are drawn from every item
    name: ClassVar[str] = "cluster"
    kind: ClassVar[ProbeKind] = "invariance"
    requirements: ClassVar[Requirements] = CONCATENATION
    finding_names: ClassVar[tuple[str, ...] | None] = (
        "wasserstein_concat_vs_parts",
        "wasserstein_against_cluster",
        "mean_concat_minus_parts",
        "class_departure_rate",
        "class_flip_rate",
        "range_departure_rate",
        *added_names(CLUSTER_EXCESS),
    )

    ks: tuple[int, ...] = SIZED_KS
    per_cluster: int = 0
    quantile: float = 0.1
    cluster_by: ClusterBy = "auto"
    join: JoinStyle = "parallel"
    separator: str = "\n\n"
    confidence_level: float = 0.95
    n_resamples: int = 1000
    design: Design = "sized"

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "ks": Counts(minimum=2),
        "per_cluster": Interval(int, 0),
        "design": OneOf(DESIGNS),
        "quantile": Interval(float, 0, 0.5, closed="right"),
        "cluster_by": OneOf(("auto", "class", "quantile")),
        "join": OneOf(JOIN_STYLES),
        **INTERVAL_CONSTRAINTS,
    }

    def check_parameters(self) -> None:
        Join(self.join, self.separator)
        object.__setattr__(self, "ks", by_design(self.design, self.ks, SIZED_KS, PAPER_KS))
        object.__setattr__(self, "per_cluster", by_design(self.design, self.per_cluster, 0, 1000))

    def wanted(self, members: int, k: int) -> int:
        """Concatenations to draw from a cluster of ``members`` items at ``k``."""
        return self.per_cluster or sized_count(FLIP_THRESHOLD, members, k)

    # -- design -------------------------------------------------------------------------------
    def clustering(self, rubric: Rubric) -> Clustering:
        if self.cluster_by != "auto":
            return self.cluster_by
        return "quantile" if rubric.kind == "continuous" else "class"

    def draw(self, design: ClusterDesign, base: BaseScores, ctx: ProbeContext) -> ClusterDesign:
        """``design`` with its clusters drawn from the complete ``base`` scores.

        Each cluster and k has its own seeded stream (:func:`probe_rng` of the cluster's index
        among the clusters formed, tested or not, and k), so a plan is reproducible.
        """
        notes: list[str] = []
        clusters: list[Cluster] = []
        drawn: list[Concatenations] = []
        for index, cluster in enumerate(self._clusters(base, design.clustering, ctx, notes)):
            if len(cluster.members) < 2:
                notes.append(
                    f"cluster {cluster.name!r} has {len(cluster.members)} item(s); "
                    "at least 2 are needed, so it is not tested"
                )
                continue
            clusters.append(cluster)
            for k in self.ks:
                rng = probe_rng(ctx, self.name, index, k)
                n = len(cluster.members)
                wanted = self.wanted(n, k)
                tuples, replaced = draw_tuples(rng, n, k, wanted, ordered=True)
                parts = tuple(tuple(cluster.members[i] for i in t) for t in tuples)
                drawn.append(Concatenations(cluster.name, k, parts, replaced))
                if replaced:
                    notes.append(
                        f"cluster {cluster.name!r} has {n} items, fewer than k={k}: parts were "
                        "drawn with replacement, so some concatenations repeat an item"
                    )
                elif n == k:
                    notes.append(
                        f"cluster {cluster.name!r} has exactly k={k} items: every concatenation "
                        "holds all of them, in different orders"
                    )
                if len(tuples) < wanted:
                    notes.append(
                        f"cluster {cluster.name!r}, k={k}: only {len(tuples)} distinct "
                        f"concatenations exist (asked for {wanted})"
                    )
        return ClusterDesign(
            design.items, design.clustering, True, tuple(clusters), tuple(drawn), tuple(notes)
        )

    def _clusters(
        self, base: BaseScores, clustering: Clustering, ctx: ProbeContext, notes: list[str]
    ) -> list[Cluster]:
        scores = base.scores
        rubric = ctx.rubric
        if clustering == "class":
            assert rubric.decision is not None
            out = []
            rule = rubric.decision
            sides = (
                (rule.positive, rule.higher_is_positive),
                (rule.negative, not rule.higher_is_positive),
            )
            for name, upward in sides:
                members = tuple(sorted(i for i, s in scores.items() if decide(rubric, s) == name))
                out.append(_cluster(name, f"base decision {name!r}", members, scores, upward))
            return out
        ranked = sorted(scores, key=lambda i: (scores[i], i))
        m = max(1, round(self.quantile * len(ranked)))
        if 2 * m > len(ranked):
            m = len(ranked) // 2
            notes.append(f"too few scored items for quantile {self.quantile:g}: {m} per cluster")
        share = f"{self.quantile:.0%}"
        return [
            _cluster("high", f"top {share} of base scores", tuple(sorted(ranked[-m:])), scores),
            _cluster(
                "low", f"bottom {share} of base scores", tuple(sorted(ranked[:m])), scores, False
            ),
        ]

    def concatenation(
        self, ctx: ProbeContext, by_id: Mapping[str, PointwiseItem], parts: Sequence[str]
    ) -> Request:
        return concatenation_request(ctx, by_id, parts, Join(self.join, self.separator))

    # -- plan ---------------------------------------------------------------------------------
    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[ClusterDesign]:
        """Stage 1: the base request of every item; the clusters need their verdicts."""
        design = ClusterDesign(tuple(pointwise(items)), self.clustering(ctx.rubric))
        return Plan(self.name, ctx, design, base_requests(ctx, design.items))

    def refine(self, plan: Plan[ClusterDesign], verdicts: Verdicts) -> Plan[ClusterDesign] | None:
        """Stage 2: the clusters drawn from the base scores and their concatenations.

        None when there is nothing (more) to draw (:func:`drawable_base`).
        """
        design, ctx = plan.design, plan.context
        if design.drawn:
            return rerun_stage(plan, verdicts, self.name, self.units, self.null_lines)
        base = drawable_base(design.items, design.drawn, verdicts)
        if base is None:
            return None
        drawn = self.draw(design, base, ctx)
        by_id = {item.id: item for item in drawn.items}
        requests = {
            concat_role(c.cluster, c.k, i): self.concatenation(ctx, by_id, parts)
            for c in drawn.concatenations
            for i, parts in enumerate(c.parts)
        }
        return with_first_reruns(plan.extend(requests, design=drawn), self.name)

    # -- analyze ------------------------------------------------------------------------------
    def analyze(self, plan: Plan[ClusterDesign], verdicts: Verdicts) -> ProbeResult:
        design, ctx = plan.design, plan.context
        if not design.drawn:
            raise ConfigError("cluster probe analyzed before its base scores were judged")
        base = base_scores(design.items, verdicts)
        rubric = ctx.rubric
        span = score_span(rubric, list(base.scores.values()))
        options = BootstrapOptions(self.confidence_level, self.n_resamples, ctx.seed)
        notes = [*base_notes(base), *design.notes]
        findings: list[Finding] = []
        figures: list[FigureSpec] = []
        rows: list[dict[str, object]] = []
        quantile = design.clustering == "quantile"
        base_failed = failure_cause(verdicts.tally(plan.roles("base")), "base calls")
        for cluster in design.clusters:
            series: dict[str, dict[str, list[float]]] = {}
            for drawn in design.of(cluster.name):
                k = drawn.k
                outcome = _outcome(rubric, drawn, base, verdicts)
                labels = {"cluster": cluster.name, "k": str(k)}
                rows.append(
                    {
                        "cluster": cluster.name,
                        "k": k,
                        "concatenations": len(drawn.parts),
                        "with_replacement": drawn.with_replacement,
                        **outcome.statuses,
                    }
                )
                series[f"k={k}"] = {"x": outcome.parts_mean, "y": outcome.scores}
                made = self._findings(rubric, outcome, labels, span, options, cluster.upward)
                made = class_evidence(made, rubric, _drawn_roles(drawn), base, verdicts)
                if quantile:
                    made.append(_range_finding(cluster, outcome, labels, options, rubric))
                made = explain_skipped(
                    made, skipped=outcome.statuses["skipped"], total=len(drawn.parts)
                )
                cause = failure_cause(
                    {s: outcome.statuses[s] for s in STATUSES}, "concatenation calls"
                )
                findings.extend(explain_failed(made, cause, base_failed))
                if outcome.statuses["mixed_parts"]:
                    notes.append(
                        f"cluster {cluster.name!r}, k={k}: {outcome.statuses['mixed_parts']} "
                        "concatenations mix parts of different decision classes (the cluster "
                        "spans the rule's threshold); they are left out of the class rates"
                    )
                if outcome.statuses["skipped"]:
                    notes.append(
                        f"cluster {cluster.name!r}, k={k}: {outcome.statuses['skipped']} "
                        "concatenations exceed the judge's context window and were skipped"
                    )
            figures.append(
                FigureSpec(
                    name=f"cluster_{cluster.name}",
                    kind="scatter",
                    title=f"Cluster {cluster.name!r}: score of the concatenation vs mean of parts",
                    data={"series": series, "diagonal": True},
                    x_label="mean base score of the parts",
                    y_label="score of the concatenation",
                )
            )
        findings += explain_failed(self._untested(design, base, ctx, span, options), base_failed)
        tables: dict[str, Any] = {
            "base": base.to_dict(),
            "clusters": [
                {
                    "name": c.name,
                    "rule": c.rule,
                    "size": len(c.members),
                    "score_min": c.score_min,
                    "score_max": c.score_max,
                }
                for c in design.clusters
            ],
            "concatenations": rows,
            "score_span": span,
        }
        return gated_result(
            self,
            plan,
            verdicts,
            self.excess,
            level=self.confidence_level,
            findings=findings,
            figures=figures,
            tables=tables,
            notes=notes,
        )

    def _untested(
        self,
        design: ClusterDesign,
        base: BaseScores,
        ctx: ProbeContext,
        span: float,
        options: BootstrapOptions,
    ) -> list[Finding]:
        """The findings of every cluster too small to be tested, each not assessable and
        saying so: a class of one item (or none) must not leave the probe a silent pass."""
        kind = "class" if design.clustering == "class" else "cluster"
        out: list[Finding] = []
        for cluster in self._clusters(base, design.clustering, ctx, []):
            reason = class_too_small(cluster.name, len(cluster.members), kind=kind)
            if reason is None:
                continue
            for k in self.ks:
                labels = {"cluster": cluster.name, "k": str(k)}
                empty = _Outcome({"mixed_parts": 0})
                made = self._findings(ctx.rubric, empty, labels, span, options, cluster.upward)
                if design.clustering == "quantile":
                    made.append(_range_finding(cluster, empty, labels, options, ctx.rubric))
                out += not_assessable(made, reason)
        return out

    def _findings(
        self,
        rubric: Rubric,
        outcome: _Outcome,
        labels: Mapping[str, str],
        span: float,
        options: BootstrapOptions,
        upward: bool,
    ) -> list[Finding]:
        level = options.confidence_level
        n = len(outcome.expected)
        departed = [d != e for e, d in outcome.expected]
        flipped = [is_flip(rubric, e, d) for e, d in outcome.expected]
        members = outcome.expected_members
        flip_rate = shared_item_proportion(flipped, members, confidence_level=level)
        assert rubric.decision is not None
        if n and not any(
            e in (rubric.decision.positive, rubric.decision.negative) for e, _ in outcome.expected
        ):
            flip_rate = Estimate.undefined(
                n, reason="the parts of every concatenation share the neutral class: none can flip"
            )
        mixed = outcome.statuses["mixed_parts"]
        distance_limit = distance_threshold(span) if rubric.kind == "continuous" else None
        k = labels["k"]
        sign = 1.0 if upward else -1.0
        against = paired_wasserstein(
            [sign * m for m in outcome.parts_mean],
            [sign * s for s in outcome.scores],
            shortfall=True,
            **options.kwargs,
        )
        shifts = [s - m for s, m in zip(outcome.scores, outcome.parts_mean, strict=True)]
        against = over_shared_items(against, [max(0.0, -sign * d) for d in shifts], outcome.members)
        both_ways = over_shared_items(
            paired_wasserstein(outcome.parts_mean, outcome.scores, **options.kwargs),
            [abs(d) for d in shifts],
            outcome.members,
        )
        away = "below" if upward else "above"
        return [
            Finding(
                "wasserstein_concat_vs_parts",
                both_ways,
                f"Wasserstein distance between the scores of {k}-concatenations and the mean "
                "base scores of their parts, in either direction (paired basic bootstrap CI, "
                "widened to the items the concatenations share; n counts items)",
                labels,
            ),
            Finding(
                "wasserstein_against_cluster",
                against,
                f"The part of that distance by which {k}-concatenations score {away} the mean of "
                "their parts, against the cluster's own direction; scoring further in its own "
                "direction counts nothing (paired basic bootstrap CI, widened to the items the "
                "concatenations share; n counts items)",
                labels,
                distance_limit,
            ),
            Finding(
                "mean_concat_minus_parts",
                shared_item_mean(shifts, outcome.members, confidence_level=level),
                f"Mean of S(concatenation) minus the mean base score of its {k} parts (t CI "
                "over the items the concatenations share; n counts items)",
                labels,
            ),
            Finding(
                "class_departure_rate",
                with_counts(
                    shared_item_proportion(departed, members, confidence_level=level),
                    mixed_parts=mixed,
                ),
                f"Share of {k}-concatenations whose decision is not the class all their parts "
                "share (neutral counts as leaving; Wilson CI at the effective n over the items "
                "the concatenations share; n counts items)",
                labels,
                DEPARTURE_THRESHOLD,
            ),
            Finding(
                "class_flip_rate",
                with_counts(flip_rate, mixed_parts=mixed),
                f"Share of {k}-concatenations decided as the class opposite to their parts' "
                "class (Wilson CI at the effective n over shared items; n counts items)",
                labels,
                FLIP_THRESHOLD,
            ),
        ]


@dataclass(slots=True)
class _Outcome:
    """The judged concatenations of one cluster and k."""

    statuses: dict[str, int]
    """Verdicts by status (``missing`` included) and ``mixed_parts``."""
    scores: list[float] = field(default_factory=list)
    parts_mean: list[float] = field(default_factory=list)
    members: list[tuple[str, ...]] = field(default_factory=list)
    """The parts of each scored concatenation, aligned with ``scores``."""
    expected: list[tuple[str, str]] = field(default_factory=list)
    """(class all parts share, decision of the concatenation), for parts that agree."""
    expected_members: list[tuple[str, ...]] = field(default_factory=list)
    """The parts of each concatenation in ``expected``."""


def _outcome(
    rubric: Rubric, drawn: Concatenations, base: BaseScores, verdicts: Verdicts
) -> _Outcome:
    """The scores of ``drawn``'s ok concatenations beside the mean base score of their parts."""
    roles = [concat_role(drawn.cluster, drawn.k, i) for i in range(len(drawn.parts))]
    outcome = _Outcome({**verdicts.tally(roles), "mixed_parts": 0})
    for role, parts in zip(roles, drawn.parts, strict=True):
        score, decision = verdicts.score(role), verdicts.decision(role)
        if score is None or decision is None:
            continue
        values = [base.scores[i] for i in parts]
        outcome.scores.append(score)
        outcome.parts_mean.append(sum(values) / len(values))
        outcome.members.append(tuple(parts))
        classes = {decide(rubric, v) for v in values}
        if len(classes) == 1:
            outcome.expected.append((classes.pop(), decision))
            outcome.expected_members.append(tuple(parts))
        else:
            outcome.statuses["mixed_parts"] += 1
    return outcome


def _drawn_roles(drawn: Concatenations) -> list[tuple[Role, tuple[str, ...]]]:
    """The role and the part ids of each of ``drawn``'s concatenations."""
    return [(concat_role(drawn.cluster, drawn.k, i), p) for i, p in enumerate(drawn.parts)]


def _range_finding(
    cluster: Cluster,
    outcome: _Outcome,
    labels: Mapping[str, str],
    options: BootstrapOptions,
    rubric: Rubric,
) -> Finding:
    """Share of concatenations of a quantile cluster scored on the far side of its range.

    One-sided: a concatenation of the high cluster departs when it scores below the cluster's
    lowest base score, one of the low cluster when it scores above the highest; scoring even
    more extreme than the parts is no departure from "consistently high (low)". When that bound
    is the end of the rubric's scale nothing can score beyond it: not assessable.
    """
    ends = _scale_ends(rubric)
    if cluster.name == "high":
        bound, side = cluster.score_min, "below the lowest"
        outside = [s < bound for s in outcome.scores]
        walled = ends is not None and bound <= ends[0]
    else:
        bound, side = cluster.score_max, "above the highest"
        outside = [s > bound for s in outcome.scores]
        walled = ends is not None and bound >= ends[1]
    estimate = shared_item_proportion(
        outside, outcome.members, confidence_level=options.confidence_level
    )
    if walled and estimate.defined:
        estimate = Estimate.undefined(
            estimate.n,
            reason=f"the cluster's bound ({bound:g}) is the end of the rubric's scale: no "
            "concatenation can score beyond it",
        )
    return Finding(
        "range_departure_rate",
        with_counts(estimate, bound=bound),
        f"Share of {labels['k']}-concatenations of cluster {cluster.name!r} ({cluster.rule}) "
        f"scored {side} base score of the cluster (Wilson CI at the effective n over shared "
        "items; n counts items)",
        labels,
        DEPARTURE_THRESHOLD,
    )


def _scale_ends(rubric: Rubric) -> tuple[float, float] | None:
    """The lowest and highest score the rubric allows (its label values or range), if known."""
    if rubric.values:
        values = [float(v) for v in rubric.values.values()]
        return min(values), max(values)
    return rubric.range


def _cluster(
    name: str,
    rule: str,
    members: tuple[str, ...],
    scores: Mapping[str, float],
    upward: bool = True,
) -> Cluster:
    values = [scores[i] for i in members]
    low = min(values) if values else float("nan")
    high = max(values) if values else float("nan")
    return Cluster(name, rule, members, low, high, upward)
