"""Position bias of a pairwise judge: does its verdict survive swapping A and B?

Live judge: every pair is judged in both orders (the swapped verdict is mapped back, A <-> B) and
the probe reports, each with n and a CI clustered by question (Clopper-Pearson over pairs when
every question has one pair):

- ``position_consistency``: the two orders give the same verdict (tie/tie counts as the same);
- ``swap_flip_rate``: both verdicts are decisive and opposite (a flip of the preferred response),
  information beside ``swap_flip_excess``, the gated finding: its excess over the judge's own
  rerun flips (:mod:`~judgeprobe.probes.reruns`). A judge sampled at a temperature above 0 gives
  opposite verdicts to one request now and then; two calls, one per order, then disagree about
  as often as two calls in the same order, and only the excess is the swap's effect;
- ``first_position_bias`` / ``second_position_bias``: the judge picks the response shown first
  (second) in both orders, Zheng et al.'s "biased toward first/second"; their sum is the flip
  rate, and an exact McNemar test says whether the flips lean to one side. A judge that, with
  probability p, picks the first-shown response whatever it is (and otherwise judges
  consistently) has ``first_position_bias = p``;
- ``first_position_share``: the share of decisive verdicts, over both orders, that pick the
  first-shown response (0.5 without position preference).

Recorded votes: datasets with a swap protocol record its outcome; MT-Bench's ``tie
(inconsistent)`` marks a GPT-4 vote that changed when the answers were swapped, so consistency is
the share of votes without that mark. The first/second split is not recorded and not reported.
A recorded judge without any such mark has no readable swap protocol: nothing is reported.

References
----------
L. Zheng et al. (2023), "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena", sec. 3.3 and
table 2 (consistency, biased toward first/second). P. Wang et al. (2023), "Large Language Models
are not Fair Evaluators", arXiv:2305.17926.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from judgeprobe.core.evidence import collect, judged
from judgeprobe.core.plan import Plan, ProbeContext, Verdicts
from judgeprobe.data.items import PAIRWISE_CHOICES, Item, PairwiseChoice, PairwiseItem
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
from judgeprobe.probes.pairwise.votes import (
    LIVE,
    PAIRWISE,
    PAIRWISE_CONSTRAINTS,
    ClusterBy,
    PairwiseDesign,
    cluster_of,
    collect_judge_votes,
    live_requests,
    pair_choice,
    pair_role,
    pairwise_design,
    slices,
    verdict_problem,
)
from judgeprobe.probes.params import Constraint, Level
from judgeprobe.probes.registry import register_probe
from judgeprobe.probes.requirements import Requirements
from judgeprobe.probes.reruns import (
    EXCESS_UNPAIRED,
    FLIP,
    Excess,
    excess_names,
    null_findings,
    null_note,
    read_against_null,
    rerun_null,
    rerun_stage,
    with_first_reruns,
)
from judgeprobe.probes.units import (
    FindingKey,
    UnitKind,
    UnitValues,
    binary_units,
    finding_key,
    pooled_ratio,
)
from judgeprobe.stats import Estimate, clustered_proportion, mcnemar_exact
from judgeprobe.transforms.swap import swap_choice

CONSISTENCY = Threshold(warn=0.8, fail=0.65, higher_is_worse=False)
BIAS = Threshold(warn=0.1, fail=0.2, higher_is_worse=True)
EXCESS = {"swap_flip_rate": Excess("swap_flip_excess", FLIP)}
"""The raw flip rate read against the rerun null, and its gated excess."""


@dataclass(frozen=True, slots=True)
class SwapPair:
    """One item judged in both orders: the choice in the original order, and the choice in the
    swapped order mapped back to the original's terms (its raw ``A`` is the original B)."""

    original: PairwiseChoice
    swapped_back: PairwiseChoice
    cluster: Hashable

    @property
    def swapped_raw(self) -> PairwiseChoice:
        """The swapped order's choice as the judge gave it (``A``: the response shown first)."""
        return swap_choice(self.swapped_back)

    @property
    def consistent(self) -> bool:
        return self.original == self.swapped_back

    @property
    def first_bias(self) -> bool:
        return self.original == "A" and self.swapped_raw == "A"

    @property
    def second_bias(self) -> bool:
        return self.original == "B" and self.swapped_raw == "B"


def swap_pairs(
    items: Sequence[PairwiseItem], verdicts: Verdicts, cluster: ClusterBy
) -> tuple[dict[str, SwapPair], Counter[str]]:
    """Both-order choices per item id; items missing one are counted by reason."""
    pairs: dict[str, SwapPair] = {}
    excluded: Counter[str] = Counter()
    for item in items:
        a = pair_choice(verdicts, item)
        b = pair_choice(verdicts, item, swapped=True)
        if a is None:
            excluded[f"original: {verdict_problem(verdicts, pair_role(item))}"] += 1
        elif b is None:
            problem = verdict_problem(verdicts, pair_role(item, swapped=True))
            excluded[f"swapped: {problem}"] += 1
        else:
            pairs[item.id] = SwapPair(a, b, cluster_of(item, cluster))
    return pairs, excluded


@register_probe
@dataclass(frozen=True)
class PositionProbe(Probe):
    """Is the verdict invariant when the two responses change places?

    Parameters
    ----------
    judge_source : str, default "live"
        ``"live"`` judges every pair in both orders (the calls are shared with the agreement
        probes); a recorded judge's name reads the dataset's own swap protocol.
    cluster, by, min_slice_items, confidence_level
        As in :class:`~judgeprobe.probes.pairwise.human_agreement.HumanAgreementProbe`.
    """

    name: ClassVar[str] = "position"
    kind: ClassVar[ProbeKind] = "invariance"
    requirements: ClassVar[Requirements] = PAIRWISE
    finding_names: ClassVar[tuple[str, ...] | None] = (
        "position_consistency",
        "swap_flip_rate",
        "swap_flip_excess",
        "first_position_bias",
        "second_position_bias",
        "first_position_share",
        "rerun_flip_rate",
        "rerun_change_rate",
        "failed_call_rate",
    )
    unpaired_findings: ClassVar[Mapping[str, str]] = {
        "failed_call_rate": UNPAIRED,
        "swap_flip_excess": EXCESS_UNPAIRED,
    }
    excess_findings: ClassVar[Mapping[str, str]] = excess_names(EXCESS)
    derived_findings: ClassVar[Mapping[str, str]] = {
        "position_consistency": "one minus swap_flip_rate, less the pairs with one tie",
        "swap_flip_rate": "swap_flip_excess plus the judge's rerun flip rate",
        "first_position_bias": "the part of swap_flip_rate that picks the first-shown response",
        "second_position_bias": "swap_flip_rate minus first_position_bias",
    }
    """``swap_flip_excess`` is the one gated question (does the verdict survive the swap beyond
    the judge's own noise); which side the flips lean to is information, with McNemar's test on
    ``first_position_bias``."""
    finding_units: ClassVar[Mapping[str, UnitKind]] = {
        "position_consistency": "pair",
        "swap_flip_rate": "pair",
        "first_position_bias": "pair",
        "second_position_bias": "pair",
        "first_position_share": "pair",
    }

    judge_source: str = LIVE
    cluster: ClusterBy = "question"
    by: tuple[str, ...] = ("category", "turn")
    min_slice_items: int = 20
    confidence_level: float = 0.95

    constraints: ClassVar[Mapping[str, Constraint]] = {
        **PAIRWISE_CONSTRAINTS,
        "confidence_level": Level(),
    }

    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[PairwiseDesign]:
        design = pairwise_design(pairwise_items(items), self.judge_source, live_only_voted=False)
        if self.judge_source != LIVE:
            return Plan(self.name, ctx, design)
        requests = live_requests(ctx, design.items, orders="both")
        return with_first_reruns(Plan(self.name, ctx, design, requests), self.name)

    def refine(self, plan: Plan[PairwiseDesign], verdicts: Verdicts) -> Plan[PairwiseDesign] | None:
        """The reruns of the rerun null (:mod:`~judgeprobe.probes.reruns`), a live judge only."""
        if self.judge_source != LIVE:
            return None
        return rerun_stage(plan, verdicts, self.name, self.units, {"swap_flip_rate": BIAS})

    def analyze(self, plan: Plan[PairwiseDesign], verdicts: Verdicts) -> ProbeResult:
        ctx, pairs = plan.context, list(plan.design.items)
        if self.judge_source != LIVE:
            return self._recorded(pairs, ctx, verdicts)
        swaps, excluded = swap_pairs(pairs, verdicts, self.cluster)
        findings: list[Finding] = []
        for labels, chosen in slices(pairs, self.by, min_items=self.min_slice_items):
            rows = [swaps[i.id] for i in chosen if i.id in swaps]
            findings.extend(self._live_findings(rows, labels, ctx.seed))
        findings = _with_evidence(findings, pairs, swaps, verdicts)
        table = Counter((p.original, p.swapped_back) for p in swaps.values())
        figure = FigureSpec(
            name="position_swap",
            kind="counts",
            title="Verdict in the original order (rows) vs the swapped order, mapped back",
            data={
                "rows": list(PAIRWISE_CHOICES),
                "columns": list(PAIRWISE_CHOICES),
                "values": [[table[(r, c)] for c in PAIRWISE_CHOICES] for r in PAIRWISE_CHOICES],
            },
            x_label="swapped order (mapped back)",
            y_label="original order",
        )
        parts = ", ".join(f"{reason}: {count}" for reason, count in sorted(excluded.items()))
        note = f"{len(swaps)} pairs judged in both orders"
        note += f"; excluded ({parts})." if parts else "."
        null = rerun_null(plan, verdicts, ctx.rubric, self.confidence_level)
        findings = read_against_null(findings, null, EXCESS) + null_findings(null)
        result = ProbeResult(
            probe=self.name,
            kind=self.kind,
            params=self.params(),
            findings=slices_as_information(findings),
            figures=[figure],
            tables={
                "swap_table": {
                    f"{r}|{c}": table[(r, c)] for r in PAIRWISE_CHOICES for c in PAIRWISE_CHOICES
                },
                "excluded": dict(excluded),
                "reruns": null.to_dict(),
            },
            notes=[note, null_note(null)],
        )
        return with_failed_calls(result, verdicts, confidence_level=self.confidence_level)

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        """The rates per pair (a live judge only), over all pairs and per slice; the first-shown
        share as the pair's decisive first-shown picks of its decisive verdicts (pooled)."""
        if self.judge_source != LIVE:
            return {}
        pairs = list(plan.design.items)
        swaps, _ = swap_pairs(pairs, verdicts, self.cluster)
        found: dict[FindingKey, UnitValues] = {}
        for labels, chosen in slices(pairs, self.by, min_items=self.min_slice_items):
            rows = {i.id: swaps[i.id] for i in chosen if i.id in swaps}
            clusters = {u: str(p.cluster) for u, p in rows.items()}
            flags = {
                "position_consistency": {u: p.consistent for u, p in rows.items()},
                "swap_flip_rate": {u: p.first_bias or p.second_bias for u, p in rows.items()},
                "first_position_bias": {u: p.first_bias for u, p in rows.items()},
                "second_position_bias": {u: p.second_bias for u, p in rows.items()},
            }
            for name, values in flags.items():
                found[finding_key(name, labels)] = binary_units(values, clusters)
            share: dict[str, tuple[float, ...]] = {}
            for u, p in rows.items():
                decisive = [c for c in (p.original, p.swapped_raw) if c != "tie"]
                if decisive:
                    share[u] = (float(sum(c == "A" for c in decisive)), float(len(decisive)))
            found[finding_key("first_position_share", labels)] = UnitValues(
                share, pooled_ratio, clusters=clusters
            )
        return found

    def _rate(self, flags: Sequence[bool], clusters: Sequence[Hashable], seed: int) -> Estimate:
        """The share of ``flags``, clustered; Clopper-Pearson when each pair is its own cluster.

        Wilson's coverage dips below the nominal level at some n and p (94.1 % at 150 pairs and
        a rate of 0.35, where the simulation measured 92.6 %); the exact interval never covers
        less than the level: for rates 0.05 to 0.5 it covers 95.0-98.1 % at 80 pairs (mean
        96.4 %), 95.0-97.4 % at 150 and 95.1-97.0 % at 300."""
        return clustered_proportion(
            flags,
            list(clusters),
            confidence_level=self.confidence_level,
            seed=seed,
            method="exact",
        )

    def _live_findings(
        self, rows: Sequence[SwapPair], labels: Mapping[str, str], seed: int
    ) -> list[Finding]:
        clusters = [p.cluster for p in rows]
        first = sum(p.first_bias for p in rows)
        second = sum(p.second_bias for p in rows)
        decisive = [
            (choice == "A", p.cluster)
            for p in rows
            for choice in (p.original, p.swapped_raw)
            if choice != "tie"
        ]
        tag = dict(labels)
        flip = self._rate([p.first_bias or p.second_bias for p in rows], clusters, seed)
        first_rate = self._rate([p.first_bias for p in rows], clusters, seed)
        second_rate = self._rate([p.second_bias for p in rows], clusters, seed)
        if rows and not any("tie" not in (p.original, p.swapped_raw) for p in rows):
            why = "no pair has a decisive verdict in both orders: no pair can flip"
            flip, first_rate, second_rate = (
                Estimate.undefined(len(rows), reason=why) for _ in range(3)
            )
        return [
            Finding(
                "position_consistency",
                self._rate([p.consistent for p in rows], clusters, seed),
                "Same verdict in both orders (the swapped one mapped back; tie/tie is the same).",
                tag,
                CONSISTENCY,
            ),
            Finding(
                "swap_flip_rate",
                flip,
                "Decisive verdicts that prefer the other response after the swap.",
                tag,
                BIAS,
            ),
            Finding(
                "first_position_bias",
                first_rate,
                "Pairs where the judge picks whichever response is shown first, in both orders. "
                "The test is McNemar's: first- vs second-position flips.",
                tag,
                BIAS,
                mcnemar_exact(first, second),
            ),
            Finding(
                "second_position_bias",
                second_rate,
                "Pairs where the judge picks whichever response is shown second, in both orders.",
                tag,
                BIAS,
            ),
            Finding(
                "first_position_share",
                self._rate([a for a, _ in decisive], [c for _, c in decisive], seed),
                "Share of decisive verdicts (both orders) that pick the first-shown response; "
                "0.5 without position preference.",
                tag,
            ),
        ]

    def _recorded(
        self, pairs: Sequence[PairwiseItem], ctx: ProbeContext, verdicts: Verdicts
    ) -> ProbeResult:
        judge = collect_judge_votes(pairs, ctx, verdicts, source=self.judge_source)
        protocol = any(v.inconsistent for v in judge.votes.values())
        findings: list[Finding] = []
        notes: list[str] = []
        if protocol:
            for labels, chosen in slices(pairs, self.by, min_items=self.min_slice_items):
                voted = [i for i in chosen if i.id in judge.votes]
                findings.append(
                    Finding(
                        "position_consistency",
                        self._rate(
                            [not judge.votes[i.id].inconsistent for i in voted],
                            [cluster_of(i, self.cluster) for i in voted],
                            ctx.seed,
                        ),
                        "Recorded votes not marked 'tie (inconsistent)' by the dataset's swap "
                        "protocol (the judge gave the same verdict in both orders).",
                        {**labels, "protocol": "recorded"},
                        CONSISTENCY,
                    )
                )
            notes.append(
                f"Read from the recorded swap protocol of {self.judge_source!r} "
                "('tie (inconsistent)'); which position an inconsistent vote favoured is not "
                "recorded, so first/second-position bias needs a live judge."
            )
        else:
            notes.append(
                f"The recorded votes of {self.judge_source!r} carry no swap protocol (no vote is "
                "marked 'tie (inconsistent)'): position bias cannot be read from them. Run the "
                "probe with judge_source='live' to judge every pair in both orders."
            )
        excluded = dict(judge.excluded)
        return ProbeResult(
            probe=self.name,
            kind=self.kind,
            params=self.params(),
            findings=slices_as_information(findings),
            tables={"excluded": excluded, "recorded_swap_protocol": protocol},
            notes=notes,
        )


_BEHIND: dict[str, Callable[[SwapPair], bool]] = {
    "position_consistency": lambda p: not p.consistent,
    "swap_flip_rate": lambda p: p.first_bias or p.second_bias,
    "first_position_bias": lambda p: p.first_bias,
    "second_position_bias": lambda p: p.second_bias,
}
"""The pairs behind each gated finding: those whose verdict changed with the swap."""


def _with_evidence(
    findings: Sequence[Finding],
    items: Sequence[PairwiseItem],
    swaps: Mapping[str, SwapPair],
    verdicts: Verdicts,
) -> list[Finding]:
    """``findings``, each over all items naming the pairs whose verdict changed with the swap
    (both verdicts as the judge gave them, the swapped one in its own order)."""
    out = []
    for finding in findings:
        behind = _BEHIND.get(finding.name)
        if behind is not None and not finding.labels:
            found = (
                (
                    item.id,
                    item.prompt,
                    [
                        judged(verdicts, pair_role(item), "original"),
                        judged(verdicts, pair_role(item, swapped=True), "swapped"),
                    ],
                )
                for item in items
                if item.id in swaps and behind(swaps[item.id])
            )
            finding = finding.with_evidence(collect(found))
        out.append(finding)
    return out
