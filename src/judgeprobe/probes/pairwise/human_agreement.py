"""Agreement of a pairwise judge with human votes, and of humans with each other (the ceiling).

Three comparisons, each as raw agreement and Cohen's kappa with n and a 95% CI clustered by
question (``cluster``):

- judge vs every individual human vote on the item (FastChat's "GPT-4 vs human");
- judge vs the strict human majority of the item (one comparison per item; an item without a
  strict majority is excluded and counted);
- human vs human: every pair of human votes on the same item, on the items the judge was
  compared on (the ceiling a judge can be held to).

Ties are excluded by default and included with ``include_ties=True``, as FastChat's MT-Bench
agreement script defines them (``fastchat/llm_judge/compute_agreement.py``): a vote containing
"tie" (``tie (inconsistent)`` too) is a tie, two ties agree, and with ties excluded a comparison
is dropped when either side is a tie. For the majority comparison the majority is taken over all
votes, ties included, and the comparison then follows the same rule (an item whose human majority
is a tie is dropped when ties are excluded). An item (question, model pair, turn) is one
``PairwiseItem``; MT-Bench's pairs recorded with the models in either order are one item after
loading. Everything is also reported per category and per turn when the data has several.

References
----------
L. Zheng et al. (2023), "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena", NeurIPS
Datasets and Benchmarks, sec. 4.2 and table 5 (agreement with and without ties).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, ClassVar, Literal

from judgeprobe.core.plan import Plan, ProbeContext, Verdicts
from judgeprobe.data.items import Item, PairwiseItem
from judgeprobe.probes.base import (
    FigureSpec,
    Finding,
    Probe,
    ProbeKind,
    ProbeResult,
    Threshold,
    pairwise_items,
    slices_as_information,
)
from judgeprobe.probes.failures import UNPAIRED, with_failed_calls
from judgeprobe.probes.pairwise.pooled_tables import pooled_agreement, pooled_kappa, table_row
from judgeprobe.probes.pairwise.votes import (
    LIVE,
    MAJORITY_TIES,
    PAIRWISE,
    PAIRWISE_CONSTRAINTS,
    ClusterBy,
    Comparisons,
    JudgeVotes,
    MajorityTies,
    PairwiseDesign,
    cluster_of,
    collect_judge_votes,
    human_majority,
    interval_row,
    interval_rows,
    keep_raters,
    live_requests,
    pairwise_design,
    slices,
)
from judgeprobe.probes.params import INTERVAL_CONSTRAINTS, Constraint, OneOf, Texts
from judgeprobe.probes.registry import register_probe
from judgeprobe.probes.requirements import Requirements
from judgeprobe.probes.units import FindingKey, UnitKind, UnitValues, finding_key
from judgeprobe.stats import Estimate

KAPPA = Threshold(warn=0.4, fail=0.2, higher_is_worse=False)
"""The judge's agreement beyond chance: the only gated findings. Raw agreement is information,
since a constant vote reaches the share of the commonest human vote without judging anything."""


@dataclass(slots=True)
class AgreementTally:
    """The three comparisons of one slice of items."""

    votes: Comparisons
    majority: Comparisons
    humans: Comparisons
    no_majority: int = 0


def tally(
    items: Sequence[PairwiseItem],
    judge: JudgeVotes,
    *,
    include_ties: bool,
    cluster: ClusterBy,
    majority_ties: MajorityTies = "count",
) -> AgreementTally:
    """Judge-human, judge-majority and human-human comparisons of ``items``."""
    out = AgreementTally(Comparisons(), Comparisons(), Comparisons())
    for item in items:
        vote = judge.votes.get(item.id)
        if vote is None or not item.human_votes:
            continue
        where = cluster_of(item, cluster)
        for human in item.human_votes:
            out.votes.add(vote.choice, human.choice, where, include_ties)
        majority = human_majority(item, majority_ties)
        if majority is None:
            out.no_majority += 1
        else:
            out.majority.add(vote.choice, majority, where, include_ties)
        for first, second in combinations(item.human_votes, 2):
            out.humans.add(first.choice, second.choice, where, include_ties)
    return out


@register_probe
@dataclass(frozen=True)
class HumanAgreementProbe(Probe):
    """Does the judge agree with human votes as often as humans agree with each other?

    Parameters
    ----------
    human_raters : tuple of str, default ()
        Keep only human votes whose rater starts with one of these prefixes (all when empty);
        ``("expert",)`` reproduces FastChat's MT-Bench agreement, which leaves out author votes.
    judge_source : str, default "live"
        ``"live"`` judges every item with human votes through the engine (original order only,
        or both orders with ``orders="both"``); any other value names a recorded judge in
        ``item.judge_votes`` (e.g. ``"gpt-4"``, ``"gpt-3.5-turbo"``) and makes no judge call.
    orders : {"original", "both"}, default "original"
        Live only. ``"both"`` applies MT-Bench's swap protocol: a verdict that changes when A and
        B are exchanged becomes ``tie (inconsistent)``. Shares its calls with the position probe.
    include_ties : bool, default False
        Keep comparisons with a tie on either side (FastChat's "with tie").
    majority_ties : {"count", "drop"}, default "count"
        The human majority counts tie votes as a choice, or drops them first and takes the
        majority of the decisive votes (the length-null post's MT-Bench figure); see
        :data:`judgeprobe.probes.pairwise.votes.MajorityTies`.
    cluster : {"question", "prompt", "item"}, default "question"
        Unit of the cluster bootstrap. Comparisons of one item are always clustered together.
    by : tuple of {"category", "turn"}, default both
        Also report each comparison per value of these keys (when the data has several).
    min_slice_items : int, default 20
        Slices with fewer items are not reported.
    confidence_level : float, default 0.95
    n_resamples : int, default 2000
        Bootstrap resamples of the kappa intervals.
    """

    name: ClassVar[str] = "human_agreement"
    kind: ClassVar[ProbeKind] = "agreement"
    requirements: ClassVar[Requirements] = dataclasses.replace(PAIRWISE, human_votes=True)
    finding_names: ClassVar[tuple[str, ...] | None] = (
        "judge_human_vote_agreement",
        "judge_human_vote_kappa",
        "judge_human_majority_agreement",
        "judge_human_majority_kappa",
        "human_human_agreement",
        "human_human_kappa",
        "failed_call_rate",
    )
    finding_units: ClassVar[Mapping[str, UnitKind]] = {
        f"{stem}_{statistic}": "pair"
        for stem in ("judge_human_vote", "judge_human_majority", "human_human")
        for statistic in ("agreement", "kappa")
    }
    unpaired_findings: ClassVar[Mapping[str, str]] = {"failed_call_rate": UNPAIRED}

    judge_source: str = LIVE
    human_raters: tuple[str, ...] = ()
    orders: Literal["original", "both"] = "original"
    include_ties: bool = False
    cluster: ClusterBy = "question"
    by: tuple[str, ...] = ("category", "turn")
    min_slice_items: int = 20
    confidence_level: float = 0.95
    n_resamples: int = 2000
    majority_ties: MajorityTies = "count"

    constraints: ClassVar[Mapping[str, Constraint]] = {
        **PAIRWISE_CONSTRAINTS,
        "human_raters": Texts(),
        "orders": OneOf(("original", "both")),
        "majority_ties": OneOf(MAJORITY_TIES),
        **INTERVAL_CONSTRAINTS,
    }

    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[PairwiseDesign]:
        pairs = keep_raters(pairwise_items(items), self.human_raters)
        design = pairwise_design(pairs, self.judge_source, live_only_voted=True)
        if self.judge_source != LIVE:
            return Plan(self.name, ctx, design)
        requests = live_requests(ctx, design.judged_items(), orders=self.orders)
        return Plan(self.name, ctx, design, requests)

    def analyze(self, plan: Plan[PairwiseDesign], verdicts: Verdicts) -> ProbeResult:
        ctx, design = plan.context, plan.design
        pairs = list(design.items)
        judge = collect_judge_votes(
            design.judged_items(), ctx, verdicts, source=self.judge_source, orders=self.orders
        )
        findings: list[Finding] = []
        rows: list[dict[str, Any]] = []
        excluded: dict[str, Any] = {"judge": dict(judge.excluded)}
        for labels, chosen in slices(pairs, self.by, min_items=self.min_slice_items):
            counts = tally(
                chosen,
                judge,
                include_ties=self.include_ties,
                cluster=self.cluster,
                majority_ties=self.majority_ties,
            )
            new = self._findings(counts, labels, ctx.seed)
            findings.extend(new)
            rows.extend(_row(f) for f in new)
            if not labels:
                excluded.update(
                    no_human_majority=counts.no_majority,
                    tie_comparisons_dropped={
                        "judge_vs_votes": counts.votes.dropped_ties,
                        "judge_vs_majority": counts.majority.dropped_ties,
                        "human_vs_human": counts.humans.dropped_ties,
                    },
                )
        overall = [f for f in findings if not f.labels and f.name.endswith("_agreement")]
        ties = "ties included" if self.include_ties else "ties excluded"
        figure = FigureSpec(
            name="human_agreement",
            kind="intervals",
            title=f"Agreement with humans ({ties})",
            data={
                "rows": interval_rows([(f.name, f.estimate) for f in overall]),
                "reference": 0.5,
            },
            x_label="agreement",
        )
        notes = [_exclusion_note(judge, excluded)]
        result = ProbeResult(
            probe=self.name,
            kind=self.kind,
            params=self.params(),
            findings=slices_as_information(findings),
            figures=[figure],
            tables={"agreement": rows, "excluded": excluded, "judge_source": self.judge_source},
            notes=[n for n in notes if n],
        )
        return with_failed_calls(result, verdicts, confidence_level=self.confidence_level)

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        """Each pair's contingency table (:mod:`~judgeprobe.probes.pairwise.pooled_tables`)
        of the judge's vote against each human vote, against the human majority, and of pairs
        of human votes, tallied by :func:`tally`, over all pairs and per slice; agreement and
        kappa are those of the pooled table."""
        ctx, design = plan.context, plan.design
        pairs = list(design.items)
        judge = collect_judge_votes(
            design.judged_items(), ctx, verdicts, source=self.judge_source, orders=self.orders
        )
        per_item = {
            item.id: tally(
                [item],
                judge,
                include_ties=self.include_ties,
                cluster=self.cluster,
                majority_ties=self.majority_ties,
            )
            for item in pairs
        }
        clusters = {item.id: cluster_of(item, self.cluster) for item in pairs}
        found: dict[FindingKey, UnitValues] = {}
        for labels, chosen in slices(pairs, self.by, min_items=self.min_slice_items):
            for stem, side in (
                ("judge_human_vote", "votes"),
                ("judge_human_majority", "majority"),
                ("human_human", "humans"),
            ):
                compared = [getattr(per_item[item.id], side) for item in chosen]
                rows = {
                    item.id: table_row(c) for item, c in zip(chosen, compared, strict=True) if c.a
                }
                for name, statistic in (("agreement", pooled_agreement), ("kappa", pooled_kappa)):
                    found[finding_key(f"{stem}_{name}", labels)] = UnitValues(
                        rows, statistic, clusters=clusters
                    )
        return found

    def _findings(
        self, counts: AgreementTally, labels: Mapping[str, str], seed: int
    ) -> list[Finding]:
        level, ties = self.confidence_level, self.include_ties
        spec = (
            (
                "judge_human_vote",
                counts.votes,
                KAPPA,
                "the judge's vote vs each human vote",
            ),
            (
                "judge_human_majority",
                counts.majority,
                KAPPA,
                "the judge's vote vs the strict human majority of the item",
            ),
            ("human_human", counts.humans, None, "two human votes on the same item (the ceiling)"),
        )
        out: list[Finding] = []
        for stem, comparisons, threshold, what in spec:
            agree = comparisons.agreement(level=level, seed=seed, n_resamples=self.n_resamples)
            kappa = comparisons.kappa(
                level=level, seed=seed, include_ties=ties, n_resamples=self.n_resamples
            )
            out.append(Finding(f"{stem}_agreement", agree, f"Raw agreement: {what}.", dict(labels)))
            out.append(
                Finding(
                    f"{stem}_kappa",
                    kappa,
                    f"Cohen's kappa: {what}.",
                    dict(labels),
                    threshold,
                )
            )
        return out


def _row(finding: Finding) -> dict[str, Any]:
    est: Estimate = finding.estimate
    return {
        "name": finding.name,
        **dict(finding.labels),
        **interval_row(est),
        "clusters": est.counts.get("clusters"),
    }


def _exclusion_note(judge: JudgeVotes, excluded: Mapping[str, Any]) -> str:
    parts = [f"{reason}: {count}" for reason, count in sorted(judge.excluded.items())]
    dropped = Counter(excluded.get("tie_comparisons_dropped", {}))
    text = f"Judge votes from {judge.source!r}: {len(judge.votes)} items with a vote"
    if parts:
        text += f"; items without a vote excluded ({', '.join(parts)})"
    if excluded.get("no_human_majority"):
        text += f"; {excluded['no_human_majority']} items without a strict human majority"
    if sum(dropped.values()):
        text += "; comparisons dropped for a tie: " + ", ".join(
            f"{k} {v}" for k, v in dropped.items()
        )
    return text + "."
