"""Self-preference of a pairwise judge: does it favour the answer it wrote itself?

Stage 1 asks the judge under audit to answer each pair's prompt (a ``generation`` request, so
the answer is cached in the run store like any verdict). Stage 2 puts the judge's own answer in
place of one of the two responses, which were written by other models, and asks for the
judge's preference in both orders (position-balanced). The **placebo** is the pair as it was:
the same slot, against the same opponent, in the same orders, held by another model's answer.
Only the author of the slot's text changes, so the judge's position, tie and opponent habits
are the same in both arms and cancel in their difference.

Per item the outcome is a *win* of the slot: the judge prefers it in both orders (MT-Bench's
convention: a preference that changes with the order is a tie). The finding
``self_preference`` is the paired difference

    P(own answer wins)  -  P(the other model's answer in the same slot wins)

with Newcombe's paired interval and the exact one-sided McNemar test of the expected direction
(own answer preferred); when items share a question (pairs of one MT-Bench question share the
judge's one answer) the interval is a cluster bootstrap instead. Per *form* (the own answer
shown first, or shown second: one order each) the same difference is reported as information.
The finding's evidence names the pairs the own answer won in both orders while the other model's
answer in the same slot did not.

Limits: a judge may prefer its own answer because it is better. The placebo removes what the
slot and the opponent explain, not quality: a positive finding says the judge prefers its own
answers to those of the models in the data, which is self-preference only where they are of
comparable quality (human labels of the own answers would be needed to separate the two).

References
----------
A. Panickssery, S. R. Bowman, S. Feng (2024), "LLM Evaluators Recognize and Favor Their Own
Generations", arXiv:2404.13076. L. Zheng et al. (2023), "Judging LLM-as-a-Judge with MT-Bench
and Chatbot Arena", sec. 3.3 (self-enhancement bias).
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from judgeprobe._util.hashing import content_hash
from judgeprobe.core.evidence import Evidence, collect, judged
from judgeprobe.core.plan import Plan, ProbeContext, Role, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.data.items import PAIRWISE_CHOICES, Item, PairwiseChoice, PairwiseItem
from judgeprobe.probes.base import (
    FigureSpec,
    Finding,
    Probe,
    ProbeKind,
    ProbeResult,
    Threshold,
    not_assessable,
    pairwise_items,
)
from judgeprobe.probes.decisions import unique_ids
from judgeprobe.probes.failures import UNPAIRED, with_failed_calls
from judgeprobe.probes.pairwise.votes import (
    CLUSTER_CHOICES,
    PAIRWISE,
    ClusterBy,
    cluster_of,
    live_request,
    pair_choice,
    pair_role,
)
from judgeprobe.probes.params import Constraint, Interval, Level, OneOf, Resamples
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
from judgeprobe.rubrics import Rubric, builtin_rubric
from judgeprobe.stats import Estimate, clustered_proportion
from judgeprobe.stats.comparison import paired_difference
from judgeprobe.stats.paired import paired_difference_of_proportions, paired_excess_test
from judgeprobe.stats.result import TestResult
from judgeprobe.transforms.swap import swap_choice

SELF_PREFERENCE = Threshold(warn=0.1, fail=0.2, higher_is_worse=True)

NO_WIN = (
    "no pair's slot wins in both orders in either arm (the judge's pick follows the position, or "
    "is a tie): the difference is 0 by construction, not evidence; see the per-order findings "
    "and the position probe"
)

Replace = Literal["random", "A", "B"]
REPLACE_CHOICES: tuple[Replace, ...] = ("random", "A", "B")
Form = Literal["first", "second"]
FORMS: tuple[Form, ...] = ("first", "second")


@dataclass(frozen=True, slots=True)
class SelfPreferenceDesign:
    """The items asked, the slot each one's own answer takes, and what was left out.

    ``slots[i]`` is the response (``"A"`` or ``"B"``) of ``items[i]`` the judge's own answer
    replaces; ``answered`` (stage 2) the ids of the items the judge wrote an answer for, and
    ``unanswered`` why the others got none.
    """

    items: tuple[PairwiseItem, ...]
    slots: tuple[PairwiseChoice, ...]
    left_out: Mapping[str, int]
    generates: bool
    answered: tuple[str, ...] = ()
    unanswered: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SlotOutcome:
    """One item's verdicts, in the original order's terms: with the own answer in ``slot``, and
    with the other model's answer there (the placebo); each in the original and swapped order."""

    item_id: str
    slot: PairwiseChoice
    cluster: Hashable
    own: tuple[PairwiseChoice | None, PairwiseChoice | None]
    placebo: tuple[PairwiseChoice | None, PairwiseChoice | None]

    def order_of(self, form: Form) -> int:
        """0 (original order) or 1 (swapped) for the order that shows the slot ``form``."""
        shown_first = 0 if self.slot == "A" else 1
        return shown_first if form == "first" else 1 - shown_first

    def wins(self, arm: Literal["own", "placebo"], orders: Sequence[int]) -> bool | None:
        """Whether the slot wins in every one of ``orders``; None when a verdict is missing."""
        choices = [(self.own if arm == "own" else self.placebo)[o] for o in orders]
        if any(c is None for c in choices):
            return None
        return all(c == self.slot for c in choices)

    def to_row(self) -> dict[str, object]:
        return {
            "item": self.item_id,
            "own_answer_in": self.slot,
            "own": list(self.own),
            "placebo": list(self.placebo),
            "own_wins": self.wins("own", (0, 1)),
            "placebo_wins": self.wins("placebo", (0, 1)),
        }


@register_probe
@dataclass(frozen=True)
class SelfPreferenceProbe(Probe):
    """Does the judge prefer its own answer beyond what the slot it stands in explains?

    Parameters
    ----------
    replace : {"random", "A", "B"}, default "random"
        Which response of each pair the judge's own answer replaces: a reproducible coin per
        item (seeded), or always the same one.
    max_new_tokens : int, default 100
        The most tokens of the judge's own answer (the built-in ``generation`` rubric's limit).
    cluster : {"question", "prompt", "item"}, default "question"
        What the interval clusters on; pairs that share a question share the judge's answer.
    confidence_level : float, default 0.95
    n_resamples : int, default 2000
        Bootstrap resamples, used only when items share a cluster.
    """

    name: ClassVar[str] = "self_preference"
    kind: ClassVar[ProbeKind] = "invariance"
    requirements: ClassVar[Requirements] = dataclasses.replace(PAIRWISE, generates=True)
    finding_names: ClassVar[tuple[str, ...] | None] = (
        "self_preference",
        "own_answer_win_rate",
        "placebo_win_rate",
        "failed_call_rate",
    )
    finding_units: ClassVar[Mapping[str, UnitKind]] = {
        "self_preference": "pair",
        "own_answer_win_rate": "pair",
        "placebo_win_rate": "pair",
    }
    unpaired_findings: ClassVar[Mapping[str, str]] = {"failed_call_rate": UNPAIRED}

    replace: Replace = "random"
    max_new_tokens: int = 100
    cluster: ClusterBy = "question"
    confidence_level: float = 0.95
    n_resamples: int = 2000

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "replace": OneOf(REPLACE_CHOICES),
        "max_new_tokens": Interval(int, 1),
        "cluster": OneOf(CLUSTER_CHOICES),
        "confidence_level": Level(),
        "n_resamples": Resamples(),
    }

    # -- plan ---------------------------------------------------------------------------------
    def generation_rubric(self) -> Rubric:
        """The built-in ``generation`` rubric with this probe's token limit."""
        rubric = builtin_rubric("generation")
        if rubric.max_new_tokens == self.max_new_tokens:
            return rubric
        return rubric.with_template(rubric.template, max_new_tokens=self.max_new_tokens)

    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[SelfPreferenceDesign]:
        pairs = pairwise_items(items)
        unique_ids(pairs)
        asked = [item for item in pairs if item.turn == 1]
        left_out = {"later turn (its prompt needs the conversation)": len(pairs) - len(asked)}
        design = SelfPreferenceDesign(
            tuple(asked),
            tuple(self._slot(item, ctx.seed) for item in asked),
            {k: v for k, v in left_out.items() if v},
            ctx.generates,
        )
        if not ctx.generates:
            return Plan(self.name, ctx, design)
        rubric = self.generation_rubric()
        requests = {
            _generate_role(item): ctx.request({"prompt": item.prompt}, rubric=rubric)
            for item in asked
        }
        return Plan(self.name, ctx, design, requests)

    def _slot(self, item: PairwiseItem, seed: int) -> PairwiseChoice:
        if self.replace != "random":
            return self.replace
        coin = random.Random(content_hash([seed, "self_preference", item.id])).random()
        return "A" if coin < 0.5 else "B"

    def refine(
        self, plan: Plan[SelfPreferenceDesign], verdicts: Verdicts
    ) -> Plan[SelfPreferenceDesign] | None:
        design = plan.design
        if plan.stage > 1 or not design.generates:
            return None
        ctx = plan.context
        answered: list[str] = []
        unanswered: dict[str, str] = {}
        requests: dict[Role, Request] = {}
        for item, slot in zip(design.items, design.slots, strict=True):
            answer, problem = _answer(verdicts, item)
            if answer is None:
                unanswered[item.id] = problem
                continue
            answered.append(item.id)
            own = (
                dataclasses.replace(item, response_a=answer)
                if slot == "A"
                else dataclasses.replace(item, response_b=answer)
            )
            requests[_own_role(item)] = live_request(own, ctx)
            requests[_own_role(item, swapped=True)] = live_request(own, ctx, swapped=True)
            requests[pair_role(item)] = live_request(item, ctx)
            requests[pair_role(item, swapped=True)] = live_request(item, ctx, swapped=True)
        refined = dataclasses.replace(design, answered=tuple(answered), unanswered=unanswered)
        return plan.extend(requests, design=refined)

    # -- analyze ------------------------------------------------------------------------------
    def analyze(self, plan: Plan[SelfPreferenceDesign], verdicts: Verdicts) -> ProbeResult:
        design = plan.design
        answered = set(design.answered)
        outcomes = [
            _outcome(item, slot, verdicts, self.cluster)
            for item, slot in zip(design.items, design.slots, strict=True)
            if item.id in answered
        ]
        seed = plan.context.seed
        findings = self._findings(outcomes, None, SELF_PREFERENCE, seed)
        for form in FORMS:
            findings.extend(self._findings(outcomes, form, None, seed))
        evidence = _own_wins_evidence(design, outcomes, verdicts)
        findings = [
            f.with_evidence(evidence) if f.name == "self_preference" and not f.labels else f
            for f in findings
        ]
        why = _not_assessable(design, plan.context)
        if why is not None:
            findings = not_assessable(findings, why)
        cells = _cells([(o.wins("own", (0, 1)), o.wins("placebo", (0, 1))) for o in outcomes])
        figure = FigureSpec(
            name="self_preference_wins",
            kind="counts",
            title="Own answer wins (rows) against the other model's answer in the same slot",
            data={
                "rows": ["own wins", "own does not win"],
                "columns": ["placebo wins", "placebo does not win"],
                "values": [
                    [cells["both"], cells["first_only"]],
                    [cells["second_only"], cells["neither"]],
                ],
            },
            x_label="placebo (another model's answer in the slot)",
            y_label="the judge's own answer in the slot",
        )
        result = ProbeResult(
            probe=self.name,
            kind=self.kind,
            params=self.params(),
            findings=findings,
            figures=[figure],
            tables={
                "items": [o.to_row() for o in outcomes],
                "cells": cells,
                "left_out": dict(design.left_out),
                "unanswered": dict(Counter(design.unanswered.values())),
            },
            notes=_notes(design, outcomes),
        )
        return with_failed_calls(result, verdicts, confidence_level=self.confidence_level)

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        """Per pair the judge answered: whether its own answer wins the slot and whether the
        other model's answer there wins (in both orders, and in the one order of each form),
        clustered as the probe's interval clusters them."""
        design = plan.design
        answered = set(design.answered)
        found: dict[FindingKey, UnitValues] = {}
        for form in (None, *FORMS):
            rows: dict[str, tuple[float, float]] = {}
            clusters: dict[str, str] = {}
            for item, slot in zip(design.items, design.slots, strict=True):
                if item.id not in answered:
                    continue
                outcome = _outcome(item, slot, verdicts, self.cluster)
                chosen = (0, 1) if form is None else (outcome.order_of(form),)
                own, placebo = outcome.wins("own", chosen), outcome.wins("placebo", chosen)
                if own is not None and placebo is not None:
                    rows[item.id] = (float(own), float(placebo))
                    clusters[item.id] = str(outcome.cluster)
            tag = {} if form is None else {"shown": form}
            found[finding_key("self_preference", tag)] = UnitValues(
                rows, mean_difference, clusters=clusters
            )
            for name, column in (("own_answer_win_rate", 0), ("placebo_win_rate", 1)):
                flags = {u: bool(row[column]) for u, row in rows.items()}
                found[finding_key(name, tag)] = binary_units(flags, clusters)
        return found

    def _findings(
        self,
        outcomes: Sequence[SlotOutcome],
        form: Form | None,
        threshold: Threshold | None,
        seed: int,
    ) -> list[Finding]:
        """The three findings over both orders (``form`` None), or over the one order that
        shows the slot in ``form``'s position."""
        rows: list[tuple[bool, bool, Hashable]] = []
        for outcome in outcomes:
            chosen = (0, 1) if form is None else (outcome.order_of(form),)
            own, placebo = outcome.wins("own", chosen), outcome.wins("placebo", chosen)
            if own is not None and placebo is not None:
                rows.append((own, placebo, outcome.cluster))
        difference, test = self._difference(rows, seed)
        if form is None and rows and not any(own or placebo for own, placebo, _ in rows):
            difference, test = Estimate.undefined(len(rows), reason=NO_WIN), None
        where = "in both orders" if form is None else f"when shown {form}"
        tag = {} if form is None else {"shown": form}
        return [
            Finding(
                "self_preference",
                difference,
                f"Share of pairs the judge's own answer wins {where}, minus the share the other "
                "model's answer in the same slot wins (the placebo); paired interval. The test is "
                "the one-sided exact McNemar test (own answer preferred).",
                tag,
                threshold,
                test,
            ),
            Finding(
                "own_answer_win_rate",
                self._rate([own for own, _, _ in rows], [c for _, _, c in rows], seed),
                f"Pairs whose slot holding the judge's own answer is preferred {where}.",
                tag,
            ),
            Finding(
                "placebo_win_rate",
                self._rate([placebo for _, placebo, _ in rows], [c for _, _, c in rows], seed),
                f"Pairs whose same slot, holding another model's answer, is preferred {where}.",
                tag,
            ),
        ]

    def _difference(
        self, rows: Sequence[tuple[bool, bool, Hashable]], seed: int
    ) -> tuple[Estimate, TestResult | None]:
        """Own minus placebo: Newcombe's paired interval over independent pairs, a cluster
        bootstrap when pairs share a cluster."""
        cells = _cells([(own, placebo) for own, placebo, _ in rows])
        clusters = [c for _, _, c in rows]
        if len(set(clusters)) == len(clusters):
            estimate = paired_difference_of_proportions(
                *cells.values(), confidence_level=self.confidence_level
            )
            return estimate, paired_excess_test(cells["first_only"], cells["second_only"])
        estimate, _ = paired_difference(
            [float(placebo) for _, placebo, _ in rows],
            [float(own) for own, _, _ in rows],
            lambda values: values[..., 0].mean(axis=-1),
            binary=True,
            clusters=clusters,
            n_resamples=self.n_resamples,
            confidence_level=self.confidence_level,
            seed=seed,
        )
        return dataclasses.replace(estimate, counts={**estimate.counts, **cells}), None

    def _rate(self, flags: Sequence[bool], clusters: Sequence[Hashable], seed: int) -> Estimate:
        return clustered_proportion(
            flags,
            list(clusters),
            confidence_level=self.confidence_level,
            seed=seed,
            n_resamples=self.n_resamples,
            method="exact",
        )


def _generate_role(item: PairwiseItem) -> Role:
    return ("generate", item.id)


def _own_role(item: PairwiseItem, *, swapped: bool = False) -> Role:
    return ("own_swapped" if swapped else "own", item.id)


def _answer(verdicts: Verdicts, item: PairwiseItem) -> tuple[str | None, str]:
    """The judge's own answer to ``item``'s prompt, or None and why there is none."""
    role = _generate_role(item)
    verdict = verdicts.get(role)
    status = verdicts.status(role)
    if verdict is None or status != "ok":
        return None, "not generated" if status == "missing" else status
    text = verdict.raw_text.strip()
    return (text, "") if text else (None, "empty")


def _choice(verdicts: Verdicts, role: Role, swapped: bool) -> PairwiseChoice | None:
    decision = verdicts.decision(role)
    for choice in PAIRWISE_CHOICES:
        if decision == choice:
            return swap_choice(choice) if swapped else choice
    return None


def _outcome(
    item: PairwiseItem, slot: PairwiseChoice, verdicts: Verdicts, cluster: ClusterBy
) -> SlotOutcome:
    own = (
        _choice(verdicts, _own_role(item), False),
        _choice(verdicts, _own_role(item, swapped=True), True),
    )
    placebo = (pair_choice(verdicts, item), pair_choice(verdicts, item, swapped=True))
    return SlotOutcome(item.id, slot, cluster_of(item, cluster), own, placebo)


def _own_wins_evidence(
    design: SelfPreferenceDesign, outcomes: Sequence[SlotOutcome], verdicts: Verdicts
) -> Evidence:
    """The pairs whose slot the own answer won in both orders while the other model's answer
    there (the placebo) did not win, with the four verdicts each (the swapped ones in the order
    the judge saw)."""
    by_id = {item.id: item for item in design.items}
    found = (
        (
            item.id,
            item.prompt,
            [
                judged(verdicts, _own_role(item), "own"),
                judged(verdicts, _own_role(item, swapped=True), "own swapped"),
                judged(verdicts, pair_role(item), "placebo"),
                judged(verdicts, pair_role(item, swapped=True), "placebo swapped"),
            ],
        )
        for outcome in outcomes
        for item in (by_id[outcome.item_id],)
        if outcome.wins("own", (0, 1)) is True and outcome.wins("placebo", (0, 1)) is False
    )
    return collect(found)


def _cells(pairs: Sequence[tuple[bool | None, bool | None]]) -> dict[str, int]:
    """The paired 2x2 table of (own wins, placebo wins); pairs with a missing side are left
    out."""
    counts = Counter((own, placebo) for own, placebo in pairs if own is not None)
    counts = Counter({k: v for k, v in counts.items() if k[1] is not None})
    return {
        "both": counts[(True, True)],
        "first_only": counts[(True, False)],
        "second_only": counts[(False, True)],
        "neither": counts[(False, False)],
    }


def _not_assessable(design: SelfPreferenceDesign, ctx: ProbeContext) -> str | None:
    if not design.generates:
        return (
            f"judge {ctx.judge_name or ctx.judge!r} cannot write answers (it declares no "
            "generation capability), so it has no own answer to prefer"
        )
    if design.items and not design.answered:
        return "the judge wrote no usable answer to any prompt"
    return None


def _notes(design: SelfPreferenceDesign, outcomes: Sequence[SlotOutcome]) -> list[str]:
    complete = sum(
        o.wins("own", (0, 1)) is not None and o.wins("placebo", (0, 1)) is not None
        for o in outcomes
    )
    notes = [
        f"{len(design.answered)} of {len(design.items)} prompts answered by the judge; "
        f"{complete} pairs have all four verdicts (own answer and placebo, both orders).",
        "A judge may prefer its own answer because it is better: the placebo cancels the slot's "
        "position and opponent, not differences in quality.",
    ]
    for reason, count in sorted(design.left_out.items()):
        notes.append(f"{count} pairs left out: {reason}.")
    for reason, count in sorted(Counter(design.unanswered.values()).items()):
        notes.append(f"{count} prompts got no answer ({reason}).")
    return notes
