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

The probe plans in two stages: first the base requests (shared with every other probe), then,
once their verdicts are known, the concatenations. Items without an ok base score are excluded
and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from judgeprobe.data.items import Item, PointwiseItem
from judgeprobe.errors import ConfigError
from judgeprobe.probes._decisions import (
    DEPARTURE_THRESHOLD,
    FLIP_THRESHOLD,
    BaseScores,
    BootstrapOptions,
    base_notes,
    base_request,
    base_scores,
    check_rubric,
    concatenation_request,
    decide,
    distance_threshold,
    draw_tuples,
    is_flip,
    mean_shift,
    pointwise,
    probe_rng,
    score_span,
    with_counts,
)
from judgeprobe.probes.base import (
    FigureSpec,
    Finding,
    Probe,
    ProbeContext,
    ProbeKind,
    ProbeResult,
    check_interval_options,
    explain_skipped,
)
from judgeprobe.probes.registry import register_probe
from judgeprobe.request import Request
from judgeprobe.rubrics import Rubric
from judgeprobe.stats import paired_wasserstein, proportion
from judgeprobe.transforms.concat import JOIN_STYLES, Join, JoinStyle
from judgeprobe.verdict import Verdict, VerdictStatus

ClusterBy = Literal["auto", "class", "quantile"]


@dataclass(frozen=True, slots=True)
class Cluster:
    """One cluster of items: its name, how it was chosen and its members (sorted ids)."""

    name: str
    rule: str
    members: tuple[str, ...]
    score_min: float
    score_max: float
    upward: bool = True
    """The cluster's own direction: True when its class (or tail) lies towards higher scores."""


@dataclass(slots=True)
class ClusterDesign:
    """The clusters and the concatenations drawn from each, per k (indices into members)."""

    base: BaseScores
    clusters: list[Cluster] = field(default_factory=list)
    tuples: dict[tuple[str, int], list[tuple[int, ...]]] = field(default_factory=dict)
    with_replacement: set[tuple[str, int]] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


@register_probe
@dataclass(frozen=True)
class ClusterProbe(Probe):
    """Concatenations of items from one score cluster against their parts.

    Parameters
    ----------
    ks : tuple of int, default (2, 4, 8, 16)
        Numbers of items per concatenation.
    per_cluster : int, default 1000
        Distinct concatenations drawn per cluster and k (fewer when fewer exist).
    quantile : float, default 0.1
        Share of items in each quantile cluster.
    cluster_by : {"auto", "class", "quantile"}, default "auto"
        ``auto``: quantile clusters for continuous rubrics, class clusters otherwise.
    join : {"parallel", "dialogue"}, default "parallel"
    separator : str, default "\\n\\n"
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
    """

    name: ClassVar[str] = "cluster"
    kind: ClassVar[ProbeKind] = "invariance"
    finding_names: ClassVar[tuple[str, ...] | None] = (
        "wasserstein_concat_vs_parts",
        "wasserstein_against_cluster",
        "mean_concat_minus_parts",
        "class_departure_rate",
        "class_flip_rate",
        "range_departure_rate",
    )

    ks: tuple[int, ...] = (2, 4, 8, 16)
    per_cluster: int = 1000
    quantile: float = 0.1
    cluster_by: ClusterBy = "auto"
    join: JoinStyle = "parallel"
    separator: str = "\n\n"
    confidence_level: float = 0.95
    n_resamples: int = 1000

    def __post_init__(self) -> None:
        ks = tuple(self.ks)
        if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 2 for k in ks):
            raise ConfigError(f"ks must be integers >= 2, got {self.ks!r}")
        object.__setattr__(self, "ks", tuple(sorted(set(ks))))
        if self.per_cluster < 1:
            raise ConfigError("per_cluster must be >= 1")
        if not 0 < self.quantile <= 0.5:
            raise ConfigError(f"quantile must lie in (0, 0.5], got {self.quantile!r}")
        if self.cluster_by not in ("auto", "class", "quantile"):
            raise ConfigError("cluster_by must be 'auto', 'class' or 'quantile'")
        if self.join not in JOIN_STYLES:
            raise ConfigError(f"join must be one of {', '.join(JOIN_STYLES)}, got {self.join!r}")
        Join(self.join, self.separator)
        check_interval_options(self.confidence_level, self.n_resamples)

    # -- design -------------------------------------------------------------------------------
    def clustering(self, rubric: Rubric) -> Literal["class", "quantile"]:
        if self.cluster_by != "auto":
            return self.cluster_by
        return "quantile" if rubric.kind == "continuous" else "class"

    def design(
        self, items: Sequence[PointwiseItem], ctx: ProbeContext, verdicts: Mapping[str, Verdict]
    ) -> ClusterDesign | None:
        """Clusters and concatenations, or None while base verdicts are still missing."""
        base = base_scores(items, ctx, verdicts)
        if not base.complete:
            return None
        out = ClusterDesign(base, notes=base_notes(base))
        for index, cluster in enumerate(self._clusters(base, ctx.rubric, out.notes)):
            if len(cluster.members) < 2:
                out.notes.append(
                    f"cluster {cluster.name!r} has {len(cluster.members)} item(s); "
                    "at least 2 are needed, so it is not tested"
                )
                continue
            out.clusters.append(cluster)
            for k in self.ks:
                rng = probe_rng(ctx, self.name, index, k)
                n = len(cluster.members)
                tuples, replaced = draw_tuples(rng, n, k, self.per_cluster, ordered=True)
                out.tuples[cluster.name, k] = tuples
                if replaced:
                    out.with_replacement.add((cluster.name, k))
                    out.notes.append(
                        f"cluster {cluster.name!r} has {n} items, fewer than k={k}: parts were "
                        "drawn with replacement, so some concatenations repeat an item"
                    )
                elif n == k:
                    out.notes.append(
                        f"cluster {cluster.name!r} has exactly k={k} items: every concatenation "
                        "holds all of them, in different orders"
                    )
                if len(tuples) < self.per_cluster:
                    out.notes.append(
                        f"cluster {cluster.name!r}, k={k}: only {len(tuples)} distinct "
                        f"concatenations exist (asked for {self.per_cluster})"
                    )
        return out

    def _clusters(self, base: BaseScores, rubric: Rubric, notes: list[str]) -> list[Cluster]:
        scores = base.scores
        if self.clustering(rubric) == "class":
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
    def plan(
        self, items: Sequence[Item], ctx: ProbeContext, verdicts: Mapping[str, Verdict]
    ) -> list[Request]:
        check_rubric(ctx.rubric, self.name)
        points = pointwise(items)
        requests = [base_request(ctx, item) for item in points]
        design = self.design(points, ctx, verdicts)
        if design is None:
            return requests
        by_id = {item.id: item for item in points}
        for cluster in design.clusters:
            for k in self.ks:
                for t in design.tuples[cluster.name, k]:
                    parts = [cluster.members[i] for i in t]
                    requests.append(self.concatenation(ctx, by_id, parts))
        return requests

    # -- analyze ------------------------------------------------------------------------------
    def analyze(
        self, items: Sequence[Item], ctx: ProbeContext, verdicts: Mapping[str, Verdict]
    ) -> ProbeResult:
        check_rubric(ctx.rubric, self.name)
        points = pointwise(items)
        design = self.design(points, ctx, verdicts)
        if design is None:
            raise ConfigError("cluster probe analyzed before its base scores were judged")
        by_id = {item.id: item for item in points}
        rubric = ctx.rubric
        span = score_span(rubric, list(design.base.scores.values()))
        options = BootstrapOptions(self.confidence_level, self.n_resamples, ctx.seed)
        findings: list[Finding] = []
        figures: list[FigureSpec] = []
        rows: list[dict[str, object]] = []
        for cluster in design.clusters:
            series: dict[str, dict[str, list[float]]] = {}
            for k in self.ks:
                outcome = _Outcome()
                for t in design.tuples[cluster.name, k]:
                    parts = [cluster.members[i] for i in t]
                    verdict = verdicts.get(self.concatenation(ctx, by_id, parts).key)
                    outcome.add(rubric, verdict, [design.base.scores[i] for i in parts])
                quantile = self.clustering(rubric) == "quantile"
                labels = {"cluster": cluster.name, "k": str(k)}
                rows.append(
                    {
                        "cluster": cluster.name,
                        "k": k,
                        "concatenations": len(design.tuples[cluster.name, k]),
                        "with_replacement": (cluster.name, k) in design.with_replacement,
                        **outcome.statuses,
                    }
                )
                series[f"k={k}"] = {"x": outcome.parts_mean, "y": outcome.scores}
                made = self._findings(rubric, outcome, labels, span, options, cluster.upward)
                if quantile:
                    made.append(_range_finding(cluster, outcome, labels, options))
                findings.extend(
                    explain_skipped(
                        made,
                        skipped=outcome.statuses["skipped"],
                        total=len(design.tuples[cluster.name, k]),
                    )
                )
                if outcome.statuses["mixed_parts"]:
                    design.notes.append(
                        f"cluster {cluster.name!r}, k={k}: {outcome.statuses['mixed_parts']} "
                        "concatenations mix parts of different decision classes (the cluster "
                        "spans the rule's threshold); they are left out of the class rates"
                    )
                if outcome.statuses["skipped"]:
                    design.notes.append(
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
        tables = {
            "base": design.base.to_dict(),
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
        return ProbeResult(
            probe=self.name,
            kind=self.kind,
            params=self.params(),
            findings=findings,
            figures=figures,
            tables=tables,
            notes=design.notes,
        )

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
        departures = sum(d != e for e, d in outcome.expected)
        flips = sum(is_flip(rubric, e, d) for e, d in outcome.expected)
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
        away = "below" if upward else "above"
        return [
            Finding(
                "wasserstein_concat_vs_parts",
                paired_wasserstein(outcome.parts_mean, outcome.scores, **options.kwargs),
                f"Wasserstein distance between the scores of {k}-concatenations and the mean "
                "base scores of their parts, in either direction (paired basic bootstrap CI)",
                labels,
            ),
            Finding(
                "wasserstein_against_cluster",
                against,
                f"The part of that distance by which {k}-concatenations score {away} the mean of "
                "their parts, against the cluster's own direction; scoring further in its own "
                "direction counts nothing (paired basic bootstrap CI)",
                labels,
                distance_limit,
            ),
            Finding(
                "mean_concat_minus_parts",
                mean_shift(
                    [s - m for s, m in zip(outcome.scores, outcome.parts_mean, strict=True)], level
                ),
                f"Mean of S(concatenation) minus the mean base score of its {k} parts",
                labels,
            ),
            Finding(
                "class_departure_rate",
                with_counts(proportion(departures, n, confidence_level=level), mixed_parts=mixed),
                f"Share of {k}-concatenations whose decision is not the class all their parts "
                "share (neutral counts as leaving; Wilson CI, concatenations taken as "
                "independent)",
                labels,
                DEPARTURE_THRESHOLD,
            ),
            Finding(
                "class_flip_rate",
                with_counts(proportion(flips, n, confidence_level=level), mixed_parts=mixed),
                f"Share of {k}-concatenations decided as the class opposite to their parts' "
                "class (Wilson CI)",
                labels,
                FLIP_THRESHOLD,
            ),
        ]


@dataclass(slots=True)
class _Outcome:
    """The judged concatenations of one cluster and k."""

    scores: list[float] = field(default_factory=list)
    parts_mean: list[float] = field(default_factory=list)
    expected: list[tuple[str, str]] = field(default_factory=list)
    """(class all parts share, decision of the concatenation), for parts that agree."""
    statuses: dict[str, int] = field(
        default_factory=lambda: {
            **{status.value: 0 for status in VerdictStatus},
            "missing": 0,
            "mixed_parts": 0,
        }
    )

    def add(self, rubric: Rubric, verdict: Verdict | None, parts: Sequence[float]) -> None:
        if verdict is None:
            self.statuses["missing"] += 1
            return
        self.statuses[verdict.status.value] += 1
        if verdict.status is not VerdictStatus.OK or verdict.score is None:
            return
        self.scores.append(verdict.score)
        self.parts_mean.append(sum(parts) / len(parts))
        classes = {decide(rubric, s) for s in parts}
        if len(classes) == 1:
            self.expected.append((classes.pop(), decide(rubric, verdict.score)))
        else:
            self.statuses["mixed_parts"] += 1


def _range_finding(
    cluster: Cluster, outcome: _Outcome, labels: Mapping[str, str], options: BootstrapOptions
) -> Finding:
    """Share of concatenations of a quantile cluster scored on the far side of its range.

    One-sided: a concatenation of the high cluster departs when it scores below the cluster's
    lowest base score, one of the low cluster when it scores above the highest; scoring even
    more extreme than the parts is no departure from "consistently high (low)".
    """
    if cluster.name == "high":
        bound, side = cluster.score_min, "below the lowest"
        outside = sum(s < bound for s in outcome.scores)
    else:
        bound, side = cluster.score_max, "above the highest"
        outside = sum(s > bound for s in outcome.scores)
    estimate = proportion(outside, len(outcome.scores), confidence_level=options.confidence_level)
    return Finding(
        "range_departure_rate",
        with_counts(estimate, bound=bound),
        f"Share of {labels['k']}-concatenations of cluster {cluster.name!r} ({cluster.rule}) "
        f"scored {side} base score of the cluster (Wilson CI)",
        labels,
        DEPARTURE_THRESHOLD,
    )


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
