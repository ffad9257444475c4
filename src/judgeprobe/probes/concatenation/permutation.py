"""Permutation probe: does the order of concatenated parts change a judge's verdict?

Following Fandina et al. (arXiv:2408.12259, "Concatenate and permute" and "Positional bias of
GPT-based metrics"), the probe draws a sample balanced over score levels from the base scores
(the paper: 50 items scored {4, 5}, 25 scored 3, 50 scored {1, 2}), forms k-tuples of it and
judges each tuple's concatenation in increasing order of base score, in decreasing order, and in
``n_random`` random orders. It reports score counts per order (the paper's Tables 5-6), the
pairwise Wasserstein distances between orders (Tables 3-4), the positional bias (share of
tuples whose decision flips between increasing and decreasing order: 24.4 % and 45.9 % for
GPT-3.5 at k = 8 and 16) and how often the verdict follows the class of the first part.

Levels of the balanced sample:

- ``decision`` (default): the rule's positive class, its neutral band and its negative class;
  ``sample_sizes`` gives (positive, neutral, negative).
- ``quantile``: the top, middle and bottom thirds of base scores; ``sample_sizes`` gives (high,
  middle, low). Useful for continuous judges whose decisions are nearly all one class.

Two stages, as the cluster probe: :meth:`PermutationProbe.plan` asks for the base requests;
:meth:`PermutationProbe.refine` draws the balanced sample, the tuples and their orders from
the base scores once those are known, and asks for every order of every tuple.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from judgeprobe.core.evidence import collect, parts_id, request_text
from judgeprobe.core.evidence import judged as judged_as
from judgeprobe.core.plan import Plan, ProbeContext, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.data.items import Item, PointwiseItem
from judgeprobe.errors import ConfigError
from judgeprobe.probes.base import (
    FigureSpec,
    Finding,
    Probe,
    ProbeKind,
    ProbeResult,
    explain_skipped,
    first_too_small,
    not_assessable,
)
from judgeprobe.probes.concatenation.gating import (
    added_names,
    gated_result,
)
from judgeprobe.probes.concatenation.permutation_counts import (
    count_column,
    count_columns,
    order_failures,
    status_rows,
    tuple_flips,
)
from judgeprobe.probes.concatenation.permutation_design import (
    Judged,
    KTuple,
    Level,
    PermutationDesign,
    order_role,
)
from judgeprobe.probes.concatenation.sizing import DESIGNS, Design, by_design, sized_count
from judgeprobe.probes.concatenation.units import PERMUTATION_EXCESS, PermutationUnits
from judgeprobe.probes.decisions import (
    CONCATENATION,
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
from judgeprobe.probes.failures import explain_failed, failure_cause
from judgeprobe.probes.params import INTERVAL_CONSTRAINTS, Constraint, Counts, Interval, OneOf
from judgeprobe.probes.registry import register_probe
from judgeprobe.probes.requirements import Requirements
from judgeprobe.probes.reruns import rerun_stage, with_first_reruns
from judgeprobe.rubrics import NEUTRAL, Rubric
from judgeprobe.stats import (
    mcnemar_exact,
    paired_mean_pairwise_wasserstein,
    paired_wasserstein,
    wasserstein_matrix,
)
from judgeprobe.stats.shared_items import over_shared_items, shared_item_proportion
from judgeprobe.transforms.concat import (
    DECREASING,
    INCREASING,
    JOIN_STYLES,
    Join,
    JoinStyle,
    score_orders,
)

Levels = Literal["decision", "quantile"]


MIDDLE = (NEUTRAL, "middle")
CLASS_FINDINGS = ("positional_bias", "primacy_share", "first_part_match", "last_part_match")
"""Findings that need both end classes in the sample: with one of them (nearly) empty, a tuple
can rarely flip, and a bias of 0 would read as a pass the sample cannot support."""


__all__ = [
    "Judged",
    "KTuple",
    "Level",
    "PermutationDesign",
    "PermutationProbe",
    "order_role",
]


@register_probe
@dataclass(frozen=True)
class PermutationProbe(PermutationUnits, Probe):
    """Concatenated tuples judged in increasing, decreasing and random orders of base score.

    Parameters
    ----------
    ks : tuple of int, default (4, 8)
        Parts per tuple (the paper's design: 4, 8, 16).
    n_tuples : int, default 0
        Distinct tuples per k (fewer when fewer exist); 0 sizes them by the question and the
        sample's items (:mod:`~judgeprobe.probes.concatenation.sizing`; the paper's design: 1000).
    sample_sizes : (int, int, int), default (50, 25, 50)
        Items drawn per level: (positive, neutral, negative) for ``levels="decision"``,
        (high, middle, low) for ``levels="quantile"``; a level with fewer items gives all.
    levels : {"decision", "quantile"}, default "decision"
    n_random : int, default 3
        Random orders per tuple (at least 3, as in the paper).
    join : {"parallel", "dialogue"}, default "parallel"
    separator : str, default "\\n\\n"
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
    design : {"sized", "paper"}, default "sized"
        ``paper``: every size left at its default takes the paper's.
    """

    nested_design: ClassVar[bool] = False  # its concatenations are drawn from every item
    name: ClassVar[str] = "permutation"
    kind: ClassVar[ProbeKind] = "invariance"
    requirements: ClassVar[Requirements] = CONCATENATION
    finding_names: ClassVar[tuple[str, ...] | None] = (
        "positional_bias",
        "primacy_share",
        "first_part_match",
        "last_part_match",
        "wasserstein_increasing_decreasing",
        "wasserstein_mean_pairwise",
        *added_names(PERMUTATION_EXCESS),
    )

    ks: tuple[int, ...] = (4, 8)
    n_tuples: int = 0
    sample_sizes: tuple[int, int, int] = (50, 25, 50)
    levels: Levels = "decision"
    n_random: int = 3
    join: JoinStyle = "parallel"
    separator: str = "\n\n"
    confidence_level: float = 0.95
    n_resamples: int = 1000
    design: Design = "sized"

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "ks": Counts(minimum=2),
        "n_tuples": Interval(int, 0),
        "design": OneOf(DESIGNS),
        "levels": OneOf(("decision", "quantile")),
        "n_random": Interval(int, 3),
        "join": OneOf(JOIN_STYLES),
        **INTERVAL_CONSTRAINTS,
    }

    def check_parameters(self) -> None:
        sizes = tuple(self.sample_sizes)
        if len(sizes) != 3 or any(not isinstance(s, int) or s < 0 for s in sizes):
            raise ConfigError("sample_sizes must be three non-negative integers (high, mid, low)")
        if sum(sizes) < 2:
            raise ConfigError("sample_sizes must add up to at least 2 items")
        object.__setattr__(self, "sample_sizes", sizes)
        Join(self.join, self.separator)
        object.__setattr__(self, "ks", by_design(self.design, self.ks, (4, 8), (4, 8, 16)))
        object.__setattr__(self, "n_tuples", by_design(self.design, self.n_tuples, 0, 1000))

    @property
    def order_names(self) -> list[str]:
        return [INCREASING, DECREASING, *(f"random_{j}" for j in range(1, self.n_random + 1))]

    # -- design -------------------------------------------------------------------------------
    def draw(
        self, design: PermutationDesign, base: BaseScores, ctx: ProbeContext
    ) -> PermutationDesign:
        """``design`` with the balanced sample and the tuples drawn from the complete ``base``.

        Seeded streams (:func:`probe_rng`): 0 samples the levels, (1, k) draws the k-tuples and
        (2, k) their random orders, so a plan is reproducible.
        """
        notes: list[str] = []
        levels: list[Level] = []
        pool: list[str] = []
        rng = probe_rng(ctx, self.name, 0)
        for (name, members), wanted in zip(
            self._levels(base, ctx.rubric), self.sample_sizes, strict=True
        ):
            take = min(wanted, len(members))
            chosen = sorted(members[int(i)] for i in rng.permutation(len(members))[:take])
            pool.extend(chosen)
            levels.append(Level(name, len(members), wanted, take))
            if take < wanted:
                notes.append(
                    f"level {name!r} has {len(members)} items, fewer than the {wanted} wanted"
                )
        scores = base.scores
        tuples: dict[int, tuple[KTuple, ...]] = {}
        for k in self.ks:
            wanted = self.n_tuples or sized_count(FLIP_THRESHOLD, len(pool), k)
            draws, replaced = draw_tuples(
                probe_rng(ctx, self.name, 1, k), len(pool), k, wanted, ordered=False
            )
            if replaced:
                notes.append(
                    f"k={k}: the balanced sample has {len(pool)} items, fewer than k; parts "
                    "were drawn with replacement"
                )
            if 0 < len(draws) < wanted:
                notes.append(f"k={k}: only {len(draws)} distinct tuples exist (asked for {wanted})")
            order_rng = probe_rng(ctx, self.name, 2, k)
            drawn = []
            for draw in draws:
                parts = tuple(pool[i] for i in draw)
                orders = score_orders(
                    [scores[p] for p in parts], n_random=self.n_random, rng=order_rng
                )
                drawn.append(KTuple(parts, orders))
            tuples[k] = tuple(drawn)
        return PermutationDesign(
            design.items, True, tuple(levels), tuple(pool), tuples, tuple(notes)
        )

    def _levels(self, base: BaseScores, rubric: Rubric) -> list[tuple[str, list[str]]]:
        scores = base.scores
        if self.levels == "decision":
            assert rubric.decision is not None
            names = (rubric.decision.positive, NEUTRAL, rubric.decision.negative)
            by_class: dict[str, list[str]] = {name: [] for name in names}
            for i in sorted(scores):
                by_class[decide(rubric, scores[i])].append(i)
            return [(name, by_class[name]) for name in names]
        ranked = sorted(scores, key=lambda i: (scores[i], i))
        third = len(ranked) // 3
        low, high = ranked[:third], ranked[len(ranked) - third :]
        middle = ranked[third : len(ranked) - third]
        return [("high", sorted(high)), ("middle", sorted(middle)), ("low", sorted(low))]

    def concatenation(
        self, ctx: ProbeContext, by_id: Mapping[str, PointwiseItem], parts: Sequence[str]
    ) -> Request:
        return concatenation_request(ctx, by_id, parts, Join(self.join, self.separator))

    # -- plan ---------------------------------------------------------------------------------
    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[PermutationDesign]:
        """Stage 1: the base request of every item; the sample needs their verdicts."""
        design = PermutationDesign(tuple(pointwise(items)))
        return Plan(self.name, ctx, design, base_requests(ctx, design.items))

    def refine(
        self, plan: Plan[PermutationDesign], verdicts: Verdicts
    ) -> Plan[PermutationDesign] | None:
        """Stage 2: the tuples drawn from the base scores, each in every order.

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
            order_role(k, i, o): self.concatenation(ctx, by_id, t.ordered(o))
            for k, tuples in drawn.tuples.items()
            for i, t in enumerate(tuples)
            for o in self.order_names
        }
        return with_first_reruns(plan.extend(requests, design=drawn), self.name)

    # -- analyze ------------------------------------------------------------------------------
    def analyze(self, plan: Plan[PermutationDesign], verdicts: Verdicts) -> ProbeResult:
        design, ctx = plan.design, plan.context
        if not design.drawn:
            raise ConfigError("permutation probe analyzed before its base scores were judged")
        base = base_scores(design.items, verdicts)
        rubric = ctx.rubric
        span = score_span(rubric, list(base.scores.values()))
        options = BootstrapOptions(self.confidence_level, self.n_resamples, ctx.seed)
        notes = [*base_notes(base), *design.notes]
        findings: list[Finding] = []
        figures: list[FigureSpec] = []
        per_k: dict[str, object] = {}
        ends = [(lv.level, lv.sampled) for lv in design.levels if lv.level not in MIDDLE]
        small = first_too_small(ends, kind="class" if self.levels == "decision" else "level")
        base_failed = failure_cause(verdicts.tally(plan.roles("base")), "base calls")
        for k, tuples in design.tuples.items():
            judged = self._judged(k, tuples, verdicts)
            table = self._table(rubric, base.scores, k, tuples, judged, verdicts)
            per_k[str(k)] = table
            skipped = sum(s["skipped"] for s in status_rows(table))
            flips = tuple_flips(rubric, tuples, judged)
            evidence = collect(
                (
                    parts_id(t.parts),
                    request_text(verdicts, order_role(k, i, INCREASING)),
                    [judged_as(verdicts, order_role(k, i, o), o) for o in (INCREASING, DECREASING)],
                )
                for i, t in enumerate(tuples)
                if flips.get(parts_id(t.parts))
            )
            found = self._findings(rubric, design, base.scores, k, judged, span, options)
            found = [f.with_evidence(evidence) if f.name == "positional_bias" else f for f in found]
            found = explain_skipped(
                not_assessable(found, small or "", CLASS_FINDINGS if small else ()),
                skipped=skipped,
                total=len(tuples) * len(self.order_names),
            )
            cause, survivors = order_failures(table, judged, k)
            findings.extend(explain_failed(found, cause, base_failed))
            notes += survivors
            counts = table["counts"]
            assert isinstance(counts, dict)
            figures.append(
                FigureSpec(
                    name=f"permutation_counts_k{k}",
                    kind="counts",
                    title=f"Score counts per order, {k}-concatenations",
                    data=counts,
                    x_label="score" if rubric.kind != "continuous" else "decision",
                    y_label="tuples",
                )
            )
            matrix = table["wasserstein"]
            assert isinstance(matrix, dict)
            figures.append(
                FigureSpec(
                    name=f"permutation_wasserstein_k{k}",
                    kind="heatmap",
                    title=f"Wasserstein distance between orders, {k}-concatenations",
                    data={"names": matrix["names"], "values": matrix["matrix"]},
                )
            )
            if skipped:
                notes.append(
                    f"k={k}: {skipped} concatenations exceed the judge's context window and "
                    "were skipped"
                )
        tables: dict[str, Any] = {
            "base": base.to_dict(),
            "levels": [level.to_dict() for level in design.levels],
            "per_k": per_k,
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

    def _judged(
        self, k: int, tuples: Sequence[KTuple], verdicts: Verdicts
    ) -> list[dict[str, Judged | None]]:
        """Per tuple, the score and decision of each order (None when not judged ok)."""
        out: list[dict[str, Judged | None]] = []
        for i in range(len(tuples)):
            per_order: dict[str, Judged | None] = {}
            for order in self.order_names:
                role = order_role(k, i, order)
                score, decision = verdicts.score(role), verdicts.decision(role)
                if score is None or decision is None:
                    per_order[order] = None
                else:
                    per_order[order] = Judged(score, decision)
            out.append(per_order)
        return out

    def _table(
        self,
        rubric: Rubric,
        scores: Mapping[str, float],
        k: int,
        tuples: Sequence[KTuple],
        judged: Sequence[Mapping[str, Judged | None]],
        verdicts: Verdicts,
    ) -> dict[str, object]:
        columns = count_columns(rubric)
        values = []
        statuses = []
        complete: dict[str, list[float]] = {o: [] for o in self.order_names}
        for order in self.order_names:
            row = [0] * len(columns)
            for per_order in judged:
                one = per_order[order]
                if one is not None:
                    row[columns.index(count_column(rubric, one.score))] += 1
            values.append(row)
            tally = verdicts.tally(order_role(k, i, order) for i in range(len(tuples)))
            statuses.append({"order": order, **tally})
        for per_order in judged:
            if all(s is not None for s in per_order.values()):
                for o, s in per_order.items():
                    assert s is not None
                    complete[o].append(s.score)
        matrix = wasserstein_matrix(complete).to_dict()
        return {
            "tuples": len(tuples),
            "complete": len(complete[INCREASING]),
            "statuses": statuses,
            "counts": {"rows": self.order_names, "columns": columns, "values": values},
            "wasserstein": matrix,
            "first_part_match": self._match_rows(rubric, scores, tuples, judged),
        }

    def _match_rows(
        self,
        rubric: Rubric,
        scores: Mapping[str, float],
        tuples: Sequence[KTuple],
        judged: Sequence[Mapping[str, Judged | None]],
    ) -> list[dict[str, object]]:
        rows: list[dict[str, object]] = []
        for order in self.order_names:
            first, last, n = 0, 0, 0
            for t, per_order in zip(tuples, judged, strict=True):
                one = per_order[order]
                if one is None:
                    continue
                parts = t.ordered(order)
                n += 1
                first += one.decision == decide(rubric, scores[parts[0]])
                last += one.decision == decide(rubric, scores[parts[-1]])
            rows.append(
                {"order": order, "n": n, "first_part_match": first, "last_part_match": last}
            )
        return rows

    def _findings(
        self,
        rubric: Rubric,
        design: PermutationDesign,
        scores: Mapping[str, float],
        k: int,
        judged: Sequence[Mapping[str, Judged | None]],
        span: float,
        options: BootstrapOptions,
    ) -> list[Finding]:
        level = options.confidence_level
        labels = {"k": str(k)}
        tuples = design.tuples[k]
        base = scores
        # Positional bias: decision flips between increasing and decreasing order.
        primacy, recency = 0, 0
        incr, decr = [], []
        flipped: list[bool] = []
        members: list[tuple[str, ...]] = []
        sided: list[bool] = []
        sided_members: list[tuple[str, ...]] = []
        for t, per_order in zip(tuples, judged, strict=True):
            a, b = per_order[INCREASING], per_order[DECREASING]
            if a is None or b is None:
                continue
            incr.append(a.score)
            decr.append(b.score)
            members.append(tuple(t.parts))
            da, db = a.decision, b.decision
            flipped.append(is_flip(rubric, da, db))
            if flipped[-1]:
                first_a = decide(rubric, base[t.ordered(INCREASING)[0]])
                first_b = decide(rubric, base[t.ordered(DECREASING)[0]])
                if da == first_a and db == first_b:
                    primacy += 1
                    sided.append(True)
                    sided_members.append(tuple(t.parts))
                elif da == decide(rubric, base[t.ordered(INCREASING)[-1]]) and db == decide(
                    rubric, base[t.ordered(DECREASING)[-1]]
                ):
                    recency += 1
                    sided.append(False)
                    sided_members.append(tuple(t.parts))
        bias = with_counts(
            shared_item_proportion(flipped, members, confidence_level=level),
            follows_first=primacy,
            follows_last=recency,
        )
        primacy_share = shared_item_proportion(sided, sided_members, confidence_level=level)
        # First / last part match over the random orders, clustered by tuple.
        first, last = [], []
        random_members: list[tuple[str, ...]] = []
        for t, per_order in zip(tuples, judged, strict=True):
            for order in self.order_names[2:]:
                one = per_order[order]
                if one is None:
                    continue
                parts = t.ordered(order)
                decision = one.decision
                first.append(decision == decide(rubric, base[parts[0]]))
                last.append(decision == decide(rubric, base[parts[-1]]))
                random_members.append(tuple(t.parts))
        # Distances between orders, over tuples judged in every order.
        columns: list[list[float]] = [[] for _ in self.order_names]
        for per_order in judged:
            scored = [per_order[o] for o in self.order_names]
            if all(s is not None for s in scored):
                for column, s in zip(columns, scored, strict=True):
                    assert s is not None
                    column.append(s.score)
        return [
            Finding(
                "positional_bias",
                bias,
                f"Share of {k}-tuples whose decision flips between increasing and decreasing "
                "order of base score (Wilson CI at the effective n over the items the tuples "
                "share; n counts items); counts say how many flips follow the first or the last "
                "part",
                labels,
                FLIP_THRESHOLD,
            ),
            Finding(
                "primacy_share",
                primacy_share,
                f"Of the {k}-tuples that flip, the share whose decision follows the first part "
                "in both orders rather than the last (exact McNemar test of first vs last)",
                labels,
                test=mcnemar_exact(primacy, recency),
            ),
            Finding(
                "first_part_match",
                shared_item_proportion(first, random_members, confidence_level=level),
                f"Share of {k}-concatenations in random order whose decision is the class of "
                "their first part (CI over the items the tuples share)",
                labels,
            ),
            Finding(
                "last_part_match",
                shared_item_proportion(last, random_members, confidence_level=level),
                f"Share of {k}-concatenations in random order whose decision is the class of "
                "their last part; compare with first_part_match (CI over shared items)",
                labels,
            ),
            Finding(
                "wasserstein_increasing_decreasing",
                over_shared_items(
                    paired_wasserstein(incr, decr, **options.kwargs),
                    [abs(a - b) for a, b in zip(incr, decr, strict=True)],
                    members,
                ),
                f"Wasserstein distance between the scores of {k}-tuples in increasing and in "
                "decreasing order (paired basic bootstrap CI, widened to the items the tuples "
                "share; n counts items)",
                labels,
                distance_threshold(span),
            ),
            Finding(
                "wasserstein_mean_pairwise",
                paired_mean_pairwise_wasserstein(columns, **options.kwargs),
                f"Mean Wasserstein distance over every two orders of the {k}-tuples judged in "
                "all orders (paired basic bootstrap CI)",
                labels,
            ),
        ]
