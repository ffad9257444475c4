"""The length-only null and its length-matched control.

The null is a judge with no understanding: it picks the longer response (by characters; words and
tokens as options; on equal lengths a seeded coin flip, or a tie). Its agreement with human votes
and with the judge's own votes says how far "pick the longer one" goes on this data. That number
alone proves nothing: length often co-varies with quality, so the null can ride a valid proxy.
The control that separates a shared length bias from real judging is the length-matched bin:
where the two responses have about the same length, the length cue carries no information, so a
judge whose agreement with humans is a length trick must fall to the null's level there.

For each length-gap bin (default ``<5%`` nested in ``<10%``, ``10-30%``, ``>30%``; the gap is
``|len_a - len_b| / max(len_a, len_b)``) the probe reports the judge's and the null's agreement
with the strict human majority on the same items (those where the judge and the majority can be
compared, ties excluded by default as in :mod:`judgeprobe.probes.pairwise.human_agreement`), and
their
paired difference, each with n and a CI clustered by question. An optional pre-registered
:class:`~judgeprobe.core.falsifier.Falsifier` names one bin, a metric, a threshold and a direction;
the probe reports whether the length-confound story holds, is refuted, or is inconclusive, with
the interval that decided it.

References
----------
L. Zheng et al. (2023), "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena", sec. 3.3
(verbosity bias). P. Singhal et al. (2023), "A Long Way to Go: Investigating Length Correlations
in RLHF", arXiv:2310.03716.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator

from judgeprobe.core.evidence import Evidence, EvidenceVerdict, collect, judged
from judgeprobe.core.falsifier import Falsifier, FalsifierVerdict, parse_falsifier
from judgeprobe.core.plan import Plan, ProbeContext, Role, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.data.items import Item, PairwiseItem
from judgeprobe.errors import ConfigError
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
from judgeprobe.probes.pairwise.length import (
    DEFAULT_BINS,
    LENGTH_UNITS,
    BinSpec,
    LengthBin,
    LengthUnit,
    OnEqual,
    check_lengths,
    length_null_choice,
    parse_bins,
)
from judgeprobe.probes.pairwise.matched import BinResult, MatchedRow, bin_result, matched_rows
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
    pair_role,
    pairwise_design,
    slices,
)
from judgeprobe.probes.params import (
    INTERVAL_CONSTRAINTS,
    Constraint,
    OneOf,
    SubsetOf,
    Texts,
)
from judgeprobe.probes.registry import register_probe
from judgeprobe.probes.requirements import Requirements
from judgeprobe.probes.units import (
    FindingKey,
    UnitKind,
    UnitValues,
    binary_units,
    finding_key,
    mean_difference,
)
from judgeprobe.stats import Estimate

BEAT_NULL = Threshold(warn=0.10, fail=0.05, higher_is_worse=False)
"""On length-matched pairs the judge must agree with the human majority more than the length-only
null does (by more than 5 points). How often the judge picks the longer response, or the null
agrees with humans, measures the data as much as the judge: information, never gated."""
MATCHED_GAP = 0.10
"""Bins whose length gap stays below this are the length-matched control, the gated ones; on
wider gaps length may be a valid cue, so a judge riding it is no defect there."""


def _falsifier_text(value: Any) -> Any:
    """A falsifier given as YAML text, parsed (config values are checked against annotations)."""
    return parse_falsifier(value) if isinstance(value, str) else value


@register_probe
@dataclass(frozen=True)
class LengthNullProbe(Probe):
    """How far does "pick the longer response" go, and does the judge survive length-matching?

    Parameters
    ----------
    judge_source : str, default "live"
        ``"live"`` (the judge under audit, original order) or a recorded judge's name in
        ``item.judge_votes``; see :mod:`judgeprobe.probes.pairwise.human_agreement`.
    unit : {"chars", "words", "tokens"}, default "chars"
        Length unit of the null, the gap and the bins.
    compare_units : tuple of units, default ("words", "tokens")
        Further units for which the null's agreement is also reported.
    on_equal : {"random", "tie"}, default "random"
        The null's vote on equal lengths: a coin flip seeded by the run seed and item id, or tie.
    include_ties : bool, default False
        FastChat's tie rule (see :mod:`judgeprobe.probes.pairwise.votes`).
    bins : tuple of (label, low, high), default ``<5%``, ``<10%``, ``10-30%``, ``>30%``
        Gap bins ``[low, high)``; ``high`` None is unbounded; bins may nest.
    falsifier : Falsifier, optional
        The pre-registered test (a mapping or YAML text is parsed into one).
    majority_ties : {"count", "drop"}, default "count"
        How the human majority treats tie votes (see
        :class:`~judgeprobe.probes.pairwise.human_agreement.HumanAgreementProbe`).
    human_raters, cluster, by, min_slice_items, confidence_level, n_resamples
        As in :class:`~judgeprobe.probes.pairwise.human_agreement.HumanAgreementProbe`.
    """

    name: ClassVar[str] = "length_null"
    kind: ClassVar[ProbeKind] = "null"
    requirements: ClassVar[Requirements] = PAIRWISE
    finding_names: ClassVar[tuple[str, ...] | None] = (
        "judge_human_majority_agreement",
        "null_human_vote_agreement",
        "null_human_majority_agreement",
        "null_judge_agreement",
        "bin_judge_agreement",
        "bin_null_agreement",
        "bin_judge_minus_null",
        "falsifier",
        "failed_call_rate",
    )
    finding_units: ClassVar[Mapping[str, UnitKind]] = {
        "bin_judge_agreement": "pair",
        "bin_judge_minus_null": "pair",
    }
    unpaired_findings: ClassVar[Mapping[str, str]] = {"failed_call_rate": UNPAIRED}

    judge_source: str = LIVE
    human_raters: tuple[str, ...] = ()
    unit: LengthUnit = "chars"
    compare_units: tuple[LengthUnit, ...] = ("words", "tokens")
    on_equal: OnEqual = "random"
    include_ties: bool = False
    bins: tuple[BinSpec, ...] = DEFAULT_BINS
    falsifier: Annotated[Falsifier | None, BeforeValidator(_falsifier_text)] = None
    cluster: ClusterBy = "question"
    by: tuple[str, ...] = ("category", "turn")
    min_slice_items: int = 20
    confidence_level: float = 0.95
    n_resamples: int = 2000
    majority_ties: MajorityTies = "count"
    _bins: tuple[LengthBin, ...] = field(init=False, repr=False, compare=False, default=())

    constraints: ClassVar[Mapping[str, Constraint]] = {
        **PAIRWISE_CONSTRAINTS,
        "human_raters": Texts(),
        "unit": OneOf(LENGTH_UNITS),
        "compare_units": SubsetOf(LENGTH_UNITS, canonical=False, empty=True),
        "on_equal": OneOf(("random", "tie")),
        "majority_ties": OneOf(MAJORITY_TIES),
        **INTERVAL_CONSTRAINTS,
    }

    def check_parameters(self) -> None:
        object.__setattr__(self, "bins", tuple(tuple(b) for b in self.bins))
        object.__setattr__(self, "_bins", parse_bins(self.bins))
        falsifier: Any = self.falsifier
        if isinstance(falsifier, str):
            object.__setattr__(self, "falsifier", parse_falsifier(falsifier))
        elif isinstance(falsifier, Mapping):
            object.__setattr__(self, "falsifier", Falsifier.model_validate(dict(falsifier)))
        if self.falsifier is not None and self.falsifier.bin not in {b.label for b in self._bins}:
            raise ConfigError(
                f"the falsifier's bin {self.falsifier.bin!r} is not one of the probe's bins "
                f"{[b.label for b in self._bins]}"
            )

    def params(self) -> dict[str, Any]:
        out = super().params()
        out["falsifier"] = (
            None if self.falsifier is None else self.falsifier.model_dump(mode="json")
        )
        out["bins"] = [list(b) for b in self.bins]
        return out

    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[PairwiseDesign]:
        pairs = keep_raters(pairwise_items(items), self.human_raters)
        design = pairwise_design(pairs, self.judge_source, live_only_voted=True)
        requests: dict[Role, Request] = {}
        if self.judge_source == LIVE:
            requests = live_requests(ctx, design.judged_items())
        check_lengths(
            pairs,
            [(f"unit={self.unit!r}", self.unit)]
            + [(f"compare_units={self.compare_units!r}", u) for u in self.compare_units],
        )
        return Plan(self.name, ctx, design, requests)

    def matched(
        self, pairs: Sequence[PairwiseItem], judge: JudgeVotes, seed: int
    ) -> list[MatchedRow]:
        """The pairs' rows for the length-matched control, under this probe's parameters."""
        return matched_rows(
            pairs,
            judge,
            unit=self.unit,
            on_equal=self.on_equal,
            include_ties=self.include_ties,
            cluster=self.cluster,
            seed=seed,
            majority_ties=self.majority_ties,
        )

    def analyze(self, plan: Plan[PairwiseDesign], verdicts: Verdicts) -> ProbeResult:
        ctx, design = plan.context, plan.design
        pairs = list(design.items)
        judge = collect_judge_votes(design.judged_items(), ctx, verdicts, source=self.judge_source)
        findings: list[Finding] = []
        summary: list[dict[str, Any]] = []
        bin_rows: list[dict[str, Any]] = []
        overall_bins: dict[str, BinResult] = {}
        overall_rows: list[MatchedRow] = []
        for labels, chosen in slices(pairs, self.by, min_items=self.min_slice_items):
            new = self._agreement_findings(chosen, judge, labels, ctx.seed)
            findings.extend(new)
            summary.extend(_row(f) for f in new)
            rows = self.matched(chosen, judge, ctx.seed)
            for length_bin in self._bins:
                result = bin_result(
                    rows,
                    length_bin,
                    level=self.confidence_level,
                    seed=ctx.seed,
                    n_resamples=self.n_resamples,
                )
                found = self._bin_findings(result, labels)
                if not labels:
                    evidence = self._gap_evidence(rows, length_bin, chosen, judge, verdicts, ctx)
                    found = [
                        f.with_evidence(evidence) if f.threshold is not None else f for f in found
                    ]
                findings.extend(found)
                bin_rows.append(_bin_row(result, labels))
                if not labels:
                    overall_bins[length_bin.label] = result
            if not labels:
                overall_rows = rows
        tables: dict[str, Any] = {
            "summary": summary,
            "bins": bin_rows,
            "gap_formula": "|len_a - len_b| / max(len_a, len_b)",
            "unit": self.unit,
            "excluded": {"judge": dict(judge.excluded)},
        }
        notes = [
            f"Length-only null: picks the longer response by {self.unit} "
            f"(equal lengths: {'seeded coin flip' if self.on_equal == 'random' else 'tie'}); "
            "relative gap = |len_a - len_b| / max(len_a, len_b); bins are [low, high).",
            _exclusion_note(judge),
        ]
        given = sum(self.unit in item.lengths for item in pairs)
        if given:
            notes.append(
                f"Lengths in {self.unit} of {given} of {len(pairs)} items are given as data by "
                "the source, not measured from texts."
            )
        if self.falsifier is not None:
            verdict = self._decide(self.falsifier, overall_rows, ctx.seed)
            findings.append(_falsifier_finding(verdict))
            tables["falsifier"] = verdict.to_dict()
            notes.append(verdict.sentence())
        why = None if self.include_ties else _only_ties(judge)
        if why is not None:
            findings = [
                f
                if f.estimate.defined
                else replace(f, estimate=Estimate.undefined(f.estimate.n, reason=why))
                for f in findings
            ]
            notes.append(f"Not assessable: {why}.")
        probe_result = ProbeResult(
            probe=self.name,
            kind=self.kind,
            params=self.params(),
            findings=slices_as_information(findings),
            figures=[_bins_figure(list(overall_bins.values()))],
            tables=tables,
            notes=notes,
        )
        return with_failed_calls(probe_result, verdicts, confidence_level=self.confidence_level)

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        """Per pair of each length bin: the judge's hit on the human majority, and the null's
        beside it for ``bin_judge_minus_null``."""
        design, ctx = plan.design, plan.context
        judge = collect_judge_votes(design.judged_items(), ctx, verdicts, source=self.judge_source)
        found: dict[FindingKey, UnitValues] = {}
        for labels, chosen in slices(list(design.items), self.by, min_items=self.min_slice_items):
            rows = self.matched(chosen, judge, ctx.seed)
            for length_bin in self._bins:
                inside = [r for r in rows if length_bin.contains(r.gap)]
                tag = {**labels, "bin": length_bin.label, "unit": self.unit}
                clusters = {r.item_id: r.cluster for r in inside}
                found[finding_key("bin_judge_agreement", tag)] = binary_units(
                    {r.item_id: r.judge_hit for r in inside}, clusters
                )
                both = {
                    r.item_id: (float(r.judge_hit), float(bool(r.null_hit)))
                    for r in inside
                    if r.null_hit is not None
                }
                found[finding_key("bin_judge_minus_null", tag)] = UnitValues(
                    both, mean_difference, clusters=clusters
                )
        return found

    def _decide(
        self, falsifier: Falsifier, rows: Sequence[MatchedRow], seed: int
    ) -> FalsifierVerdict:
        length_bin = next(b for b in self._bins if b.label == falsifier.bin)
        result = bin_result(
            rows,
            length_bin,
            level=falsifier.confidence_level,
            seed=seed,
            n_resamples=self.n_resamples,
        )
        return falsifier.decide(result.metric(falsifier.metric))

    def _agreement_findings(
        self,
        items: Sequence[PairwiseItem],
        judge: JudgeVotes,
        labels: Mapping[str, str],
        seed: int,
    ) -> list[Finding]:
        level, ties = self.confidence_level, self.include_ties
        judge_majority = Comparisons()
        for item in items:
            vote = judge.votes.get(item.id)
            majority = human_majority(item, self.majority_ties)
            if vote is not None and majority is not None:
                judge_majority.add(vote.choice, majority, cluster_of(item, self.cluster), ties)
        out = [
            Finding(
                "judge_human_majority_agreement",
                judge_majority.agreement(level=level, seed=seed, n_resamples=self.n_resamples),
                "The judge's vote vs the strict human majority (reference for the null).",
                dict(labels),
            )
        ]
        for unit in dict.fromkeys((self.unit, *self.compare_units)):
            votes, majority_c, own = Comparisons(), Comparisons(), Comparisons()
            for item in items:
                where = cluster_of(item, self.cluster)
                null = length_null_choice(item, unit, on_equal=self.on_equal, seed=seed)
                for human in item.human_votes:
                    votes.add(null, human.choice, where, ties)
                majority = human_majority(item, self.majority_ties)
                if majority is not None:
                    majority_c.add(null, majority, where, ties)
                vote = judge.votes.get(item.id)
                if vote is not None:
                    own.add(null, vote.choice, where, ties)
            tag = {**labels, "unit": unit}
            out.append(
                Finding(
                    "null_human_vote_agreement",
                    votes.agreement(level=level, seed=seed, n_resamples=self.n_resamples),
                    f"Length-only null (longer by {unit}) vs each human vote.",
                    tag,
                )
            )
            out.append(
                Finding(
                    "null_human_majority_agreement",
                    majority_c.agreement(level=level, seed=seed, n_resamples=self.n_resamples),
                    f"Length-only null (longer by {unit}) vs the strict human majority.",
                    tag,
                )
            )
            out.append(
                Finding(
                    "null_judge_agreement",
                    own.agreement(level=level, seed=seed, n_resamples=self.n_resamples),
                    f"Length-only null (longer by {unit}) vs the judge's own votes: how often "
                    "the judge picks the longer response.",
                    tag,
                )
            )
        return out

    def _gap_evidence(
        self,
        rows: Sequence[MatchedRow],
        length_bin: LengthBin,
        items: Sequence[PairwiseItem],
        judge: JudgeVotes,
        verdicts: Verdicts,
        ctx: ProbeContext,
    ) -> Evidence:
        """The pairs of ``length_bin`` where the judge and the longer-pick null differ in
        agreeing with the human majority (the pairs that make judge minus null)."""
        by_id = {item.id: item for item in items}
        found = []
        for row in rows:
            if not length_bin.contains(row.gap) or row.null_hit in (None, row.judge_hit):
                continue
            item = by_id[row.item_id]
            majority = human_majority(item, self.majority_ties)
            null = length_null_choice(item, self.unit, on_equal=self.on_equal, seed=ctx.seed)
            vote = judge.votes[item.id]
            own = (
                judged(verdicts, pair_role(item), "judge")
                if self.judge_source == LIVE
                else EvidenceVerdict("judge", label=vote.choice)
            )
            shown = [
                EvidenceVerdict("human majority", label=majority),
                own,
                EvidenceVerdict("length null", label=null),
            ]
            found.append((item.id, item.prompt, shown))
        return collect(found)

    def _bin_findings(self, result: BinResult, labels: Mapping[str, str]) -> list[Finding]:
        tag = {**labels, "bin": result.bin.label, "unit": self.unit}
        where = f"on pairs with length gap in {result.bin.label}"
        return [
            Finding(
                "bin_judge_agreement",
                result.judge,
                f"The judge vs the human majority {where}.",
                tag,
            ),
            Finding(
                "bin_null_agreement",
                result.null,
                f"The length-only null vs the human majority {where} (same items).",
                tag,
            ),
            Finding(
                "bin_judge_minus_null",
                result.difference,
                f"Judge minus null agreement with the human majority {where} (paired).",
                tag,
                BEAT_NULL if result.bin.high <= MATCHED_GAP else None,
            ),
        ]


def _falsifier_finding(verdict: FalsifierVerdict) -> Finding:
    f = verdict.falsifier
    return Finding(
        "falsifier",
        verdict.estimate,
        f"Pre-registered falsifier ({f.rule()}): the story '{f.story}' -> {verdict.outcome}; "
        f"{verdict.reason}.",
        {"bin": f.bin, "metric": f.metric, "verdict": verdict.outcome, "hash": f.hash},
    )


def _row(finding: Finding) -> dict[str, Any]:
    est = finding.estimate
    return {
        "name": finding.name,
        **dict(finding.labels),
        **interval_row(est),
    }


def _bin_row(result: BinResult, labels: Mapping[str, str]) -> dict[str, Any]:
    row: dict[str, Any] = {**labels, "bin": result.bin.label}
    for key, est in (
        ("judge", result.judge),
        ("null", result.null),
        ("judge_minus_null", result.difference),
    ):
        row[key] = interval_row(est)
    return row


def _bins_figure(results: Sequence[BinResult]) -> FigureSpec:
    labelled = [
        (f"{who}, gap {result.bin.label} (n={est.n})", est)
        for result in results
        for who, est in (("judge", result.judge), ("length null", result.null))
    ]
    rows = interval_rows(labelled)
    return FigureSpec(
        name="length_matched_control",
        kind="intervals",
        title="Agreement with the human majority by length gap",
        data={"rows": rows, "reference": 0.5},
        x_label="agreement with the human majority",
    )


def _only_ties(judge: JudgeVotes) -> str | None:
    """Why the findings that compare the judge's choice have no data, when every vote it gave
    is a tie and ties are excluded (a judge that cannot tell, such as a swap-averaged judge
    that always names the first response); None otherwise."""
    votes = judge.votes.values()
    if not votes or any(vote.choice != "tie" for vote in votes):
        return None
    return (
        f"every one of the judge's {len(votes)} votes is a tie, and ties are excluded "
        "(include_ties=True counts them): the judge names no winner to compare"
    )


def _exclusion_note(judge: JudgeVotes) -> str:
    parts = ", ".join(f"{reason}: {count}" for reason, count in sorted(judge.excluded.items()))
    text = f"Judge votes from {judge.source!r}: {len(judge.votes)} items with a vote"
    return text + (f"; excluded items ({parts})." if parts else ".")
