"""Pairwise sensitivity probe: does the preference follow when the better response gets worse?

In each pair the better response (by the strict majority of the human votes, ties dropped;
without votes, by the judge's own vote on the pair as it is) is replaced by a clearly worse one:

``truncate``   the better response cut to its first ``keep_share`` of words (15 %);
``off_topic``  the better response replaced by an answer from another pair with another prompt.

The preference should move to the other response. The placebo is the better response with one
trailing space: an input the judge has not seen whose meaning is the original's, so a sampling
judge's own noise shows in it (one placebo per pair, shared by its edits). An edit counts when
the judge's vote on the pair as it is is not already the other response; the findings, per
family, are in :mod:`judgeprobe.probes.sensitivity.findings`.

Two stages, so that a pair without votes can take the judge's own vote: the pairs as they are
(the same requests as every pairwise probe's), then the edits.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from judgeprobe.core.plan import Plan, ProbeContext, Role, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.data.items import Item, PairwiseItem, require_texts
from judgeprobe.probes.base import Finding, Probe, ProbeKind, ProbeResult, pairwise_items
from judgeprobe.probes.decisions import probe_rng, unique_ids
from judgeprobe.probes.failures import UNPAIRED, with_failed_calls
from judgeprobe.probes.pairwise.votes import (
    PAIRWISE,
    human_majority,
    live_request,
    live_requests,
    pair_choice,
    pair_role,
)
from judgeprobe.probes.params import INTERVAL_CONSTRAINTS, Constraint, Interval, OneOf, SubsetOf
from judgeprobe.probes.registry import register_probe
from judgeprobe.probes.requirements import Requirements
from judgeprobe.probes.sensitivity.design import (
    CLASS_SOURCES,
    PAIR_FAMILIES,
    ClassSource,
    PairEdit,
    PairFamily,
    PairSensitivityDesign,
    edited_role,
    pair_placebo_role,
)
from judgeprobe.probes.sensitivity.findings import (
    FINDINGS,
    family_findings,
    sensitivity_units,
    with_evidence,
)
from judgeprobe.probes.sensitivity.outcomes import (
    Outcome,
    edit_table,
    excluded_note,
    read_outcomes,
    unmoved_rows,
)
from judgeprobe.probes.units import FindingKey, UnitKind, UnitValues
from judgeprobe.transforms.meaning_edits import trailing_space, truncate_words

OTHER_SIDE = {"A": "B", "B": "A"}


def _roles(family: str, item_id: str) -> tuple[Role, Role, Role]:
    return ("pair", item_id), edited_role(family, item_id), pair_placebo_role(item_id)


def _side(item: PairwiseItem, side: str) -> str:
    return item.response_a if side == "A" else item.response_b


def _with_side(item: PairwiseItem, side: str, text: str) -> PairwiseItem:
    if side == "A":
        return dataclasses.replace(item, response_a=text)
    return dataclasses.replace(item, response_b=text)


@register_probe
@dataclass(frozen=True)
class PairwiseSensitivityProbe(Probe):
    """The better response of each pair made clearly worse, against a trailing-space placebo.

    Parameters
    ----------
    edits : tuple of {"truncate", "off_topic"}, default both
    better : {"auto", "human", "judge"}, default "auto"
        Where the better response comes from: the human votes, the judge's own vote, or the
        human votes when any pair has one.
    keep_share : float, default 0.15
        The share of the better response's words a truncation keeps (at least one word).
    confidence_level : float, default 0.95
    """

    nested_design: ClassVar[bool] = False  # donors are drawn in turn over every item
    name: ClassVar[str] = "sensitivity_pairwise"
    kind: ClassVar[ProbeKind] = "directional"
    requirements: ClassVar[Requirements] = PAIRWISE
    finding_names: ClassVar[tuple[str, ...] | None] = (*FINDINGS, "failed_call_rate")
    finding_units: ClassVar[Mapping[str, UnitKind]] = dict.fromkeys(FINDINGS, "pair")
    unpaired_findings: ClassVar[Mapping[str, str]] = {"failed_call_rate": UNPAIRED}

    edits: tuple[PairFamily, ...] = PAIR_FAMILIES
    better: ClassSource = "auto"
    keep_share: float = 0.15
    confidence_level: float = 0.95

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "edits": SubsetOf(PAIR_FAMILIES),
        "better": OneOf(CLASS_SOURCES),
        "keep_share": Interval(float, 0.0, 0.5, closed="right"),
        "confidence_level": INTERVAL_CONSTRAINTS["confidence_level"],
    }

    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[PairSensitivityDesign]:
        chosen = sorted(pairwise_items(items), key=lambda item: item.id)
        unique_ids(chosen)
        for item in chosen:
            require_texts(item, f"probe {self.name!r}")
        source = self.better
        if source == "auto":
            source = "human" if any(item.human_votes for item in chosen) else "judge"
        design = PairSensitivityDesign(tuple(chosen), source)
        return Plan(self.name, ctx, design, live_requests(ctx, chosen))

    def refine(
        self, plan: Plan[PairSensitivityDesign], verdicts: Verdicts
    ) -> Plan[PairSensitivityDesign] | None:
        design = plan.design
        if design.drawn or not verdicts.complete(pair_role(i) for i in design.items):
            return None
        drawn = self.draw(design, verdicts, plan.context)
        return plan.extend(self._requests(drawn, plan.context), design=drawn)

    def draw(
        self, design: PairSensitivityDesign, verdicts: Verdicts, ctx: ProbeContext
    ) -> PairSensitivityDesign:
        """``design`` with each pair's better response and its edits."""
        rng = probe_rng(ctx, self.name, 0)
        left_out: Counter[str] = Counter()
        edits: list[PairEdit] = []
        for item in design.items:
            if design.source == "human":
                better = human_majority(item, "drop")
                problem = "no strict human majority for A or B"
            else:
                better = pair_choice(verdicts, item)
                problem = "the judge gave no vote for A or B on the pair as it is"
            if better not in OTHER_SIDE:
                left_out[problem] += 1
                continue
            text = _side(item, better)
            if "truncate" in self.edits:
                if truncate_words(text, self.keep_share) != text.strip():
                    edits.append(PairEdit("truncate", item.id, better, OTHER_SIDE[better]))
                else:
                    left_out["truncate: the better response is a single word"] += 1
            if "off_topic" in self.edits:
                donors = [d for d in design.items if d.prompt != item.prompt]
                if not donors:
                    left_out["off_topic: no other pair has another prompt"] += 1
                    continue
                donor = donors[int(rng.integers(len(donors)))]
                side = "AB"[int(rng.integers(2))]
                edits.append(
                    PairEdit("off_topic", item.id, better, OTHER_SIDE[better], donor.id, side)
                )
        why: dict[str, str] = {
            family: f"no pair has a {family} edit ({dict(left_out) or 'no pair'})"
            for family in self.edits
            if not any(edit.family == family for edit in edits)
        }
        return dataclasses.replace(
            design, drawn=True, edits=tuple(edits), why_none=why, left_out=dict(left_out)
        )

    def _requests(self, design: PairSensitivityDesign, ctx: ProbeContext) -> dict[Role, Request]:
        by_id = {item.id: item for item in design.items}
        requests: dict[Role, Request] = {}
        for edit in design.edits:
            item = by_id[edit.item_id]
            if edit.family == "truncate":
                worse = truncate_words(_side(item, edit.better), self.keep_share)
            else:
                worse = _side(by_id[edit.donor], edit.donor_side)
            requests[edited_role(edit.family, item.id)] = live_request(
                _with_side(item, edit.better, worse), ctx
            )
            placebo = _with_side(item, edit.better, trailing_space(_side(item, edit.better)))
            requests[pair_placebo_role(item.id)] = live_request(placebo, ctx)
        return requests

    # -- analysis -------------------------------------------------------------------------------
    def outcomes(
        self, plan: Plan[PairSensitivityDesign], verdicts: Verdicts
    ) -> tuple[list[Outcome], Counter[str]]:
        """Each drawn edit's votes (pair, edited, placebo), and the edits left out."""
        edits = [(e.family, e.item_id, e.target) for e in plan.design.edits]
        return read_outcomes(edits, verdicts, _roles, verdicts.decision)

    def analyze(self, plan: Plan[PairSensitivityDesign], verdicts: Verdicts) -> ProbeResult:
        design = plan.design
        outcomes, excluded = self.outcomes(plan, verdicts)
        notes: list[str] = []
        whys: dict[str, str] = dict(design.why_none)
        if not design.drawn:
            why = "the votes on the pairs as they are are incomplete: no edit was drawn"
            notes.append(why)
            whys = dict.fromkeys(self.edits, why)
        findings: list[Finding] = []
        for family in self.edits:
            findings += family_findings(
                outcomes,
                family,
                level=self.confidence_level,
                why=whys.get(family),
                target="the other response",
            )
        findings = with_evidence(findings, outcomes, verdicts, _roles)
        if design.drawn:
            where = "human votes" if design.source == "human" else "the judge's own votes"
            notes.append(
                f"the better response from {where}; {len(design.edits)} edits of "
                f"{len(design.items)} pairs, each pair with one trailing-space placebo"
            )
            notes += [f"{n} left out: {reason}" for reason, n in sorted(design.left_out.items())]
        notes += excluded_note(excluded, len(design.edits))
        result = ProbeResult(
            probe=self.name,
            kind=self.kind,
            params=self.params(),
            findings=findings,
            tables={
                "edits": edit_table(outcomes, self.edits),
                "unmoved": unmoved_rows(outcomes),
                "excluded": dict(excluded),
            },
            notes=notes,
        )
        return with_failed_calls(result, verdicts, confidence_level=self.confidence_level)

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        """Per pair: each family's move and the placebo's."""
        outcomes, _ = self.outcomes(plan, verdicts)
        return sensitivity_units(outcomes, self.edits, overall=False)
