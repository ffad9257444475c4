"""Sensitivity probe: does the judge's decision move when the response's meaning changes?

An invariance probe passes a judge that never moves: one that answers ``1`` to everything is
perfectly invariant to repetition, concatenation and rewording. CheckList (Ribeiro et al.
2020, "Beyond Accuracy: Behavioral Testing of NLP Models with CheckList") reads invariance
tests next to *directional* ones: an edit that changes the meaning must move the output the
expected way. This probe makes such edits from the data itself, each against a placebo of the
same size that keeps the meaning:

``swap_class``      the response replaced by the response of an item of the other class; the
                    decision should move to that class. Placebo: the response of another item
                    of the same class, drawn the same way.
``insert_harmful``  a span of a positive (flagged) item's response inserted in the middle of a
                    negative item's response; the decision should become positive. Placebo: a
                    span of the same number of words from another negative item.

Classes (``classes``): ``human``, the mean human label rescaled to [0, 1] over ``human_scale``,
positive at or above ``human_positive_at`` and negative at or below ``human_negative_at``
(higher labels mean the positive class, as PyRIT's harm and refusal labels do); ``judge``, the
judge's own base decision; ``auto`` (default), human when any item has a label. An item whose
response is empty, or that has no class, is neither edited nor drawn from.

Two stages: the base requests (shared with every probe), then the edits, drawn seeded once the
base decisions are known. An edit counts when the base decision is not already its target; the
findings are in :mod:`judgeprobe.probes.sensitivity.findings`. A judge whose base decisions all
fall in one class is exactly what this probe is for: with human labels its edits are drawn and
counted as for any judge; without labels nothing in the data says which responses mean the
other thing, and the findings say so (not assessable, never a pass).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from judgeprobe.core.plan import Plan, ProbeContext, Role, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.data.items import Item, PointwiseItem
from judgeprobe.errors import ConfigError
from judgeprobe.probes.base import Finding, Probe, ProbeKind, ProbeResult
from judgeprobe.probes.decisions import (
    BaseScores,
    base_notes,
    base_request,
    base_requests,
    base_scores,
    decide,
    drawable_base,
    human_label_scale,
    pointwise,
    probe_rng,
)
from judgeprobe.probes.failures import UNPAIRED, with_failed_calls
from judgeprobe.probes.params import (
    INTERVAL_CONSTRAINTS,
    Constraint,
    Interval,
    OneOf,
    Scale,
    SubsetOf,
)
from judgeprobe.probes.registry import register_probe
from judgeprobe.probes.requirements import Requirements
from judgeprobe.probes.sensitivity.design import (
    CLASS_SOURCES,
    NEGATIVE,
    POINT_FAMILIES,
    POSITIVE,
    ClassSource,
    PointEdit,
    PointFamily,
    SensitivityDesign,
    edited_role,
    placebo_role,
)
from judgeprobe.probes.sensitivity.findings import (
    FINDINGS,
    family_findings,
    overall_rate,
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
from judgeprobe.rubrics import Rubric
from judgeprobe.transforms.meaning_edits import first_words, insert_middle, word_count

OTHER = {POSITIVE: NEGATIVE, NEGATIVE: POSITIVE}


def _roles(family: str, item_id: str) -> tuple[Role, Role, Role]:
    return ("base", item_id), edited_role(family, item_id), placebo_role(family, item_id)


@register_probe
@dataclass(frozen=True)
class SensitivityProbe(Probe):
    """Meaning-changing edits of the response, each against a same-size placebo.

    Parameters
    ----------
    edits : tuple of {"swap_class", "insert_harmful"}, default both
        The edit families (see the module docstring).
    classes : {"auto", "human", "judge"}, default "auto"
        Where an item's class comes from.
    human_positive_at : float, default 0.75
        Rescaled mean human label at or above which an item is positive.
    human_negative_at : float, default 0.0
        Rescaled mean human label at or below which an item is negative.
    human_scale : (float, float), optional
        The range of the human labels; inferred by default (as the bypass probe does).
    span_words : int, default 40
        The most words an ``insert_harmful`` span takes from the start of the flagged response.
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
        Resamples of the interval over all families (clustered by item).
    """

    nested_design: ClassVar[bool] = False  # donors are drawn in turn over every item
    name: ClassVar[str] = "sensitivity"
    kind: ClassVar[ProbeKind] = "directional"
    requirements: ClassVar[Requirements] = Requirements(
        decision_rule=True, reads=("response",), does="swaps and edits the response"
    )
    finding_names: ClassVar[tuple[str, ...] | None] = (*FINDINGS, "failed_call_rate")
    finding_units: ClassVar[Mapping[str, UnitKind]] = dict.fromkeys(FINDINGS, "item")
    unpaired_findings: ClassVar[Mapping[str, str]] = {"failed_call_rate": UNPAIRED}

    edits: tuple[PointFamily, ...] = POINT_FAMILIES
    classes: ClassSource = "auto"
    human_positive_at: float = 0.75
    human_negative_at: float = 0.0
    human_scale: tuple[float, float] | None = None
    span_words: int = 40
    confidence_level: float = 0.95
    n_resamples: int = 1000

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "edits": SubsetOf(POINT_FAMILIES),
        "classes": OneOf(CLASS_SOURCES),
        "human_scale": Scale(),
        "span_words": Interval(int, 1),
        **INTERVAL_CONSTRAINTS,
    }

    def check_parameters(self) -> None:
        if not 0 <= self.human_negative_at < self.human_positive_at <= 1:
            raise ConfigError(
                "human_negative_at and human_positive_at are on the rescaled [0, 1] label scale "
                "and need 0 <= human_negative_at < human_positive_at <= 1, got "
                f"{self.human_negative_at!r} and {self.human_positive_at!r}"
            )

    # -- plan -----------------------------------------------------------------------------------
    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[SensitivityDesign]:
        chosen = sorted(pointwise(items), key=lambda item: item.id)
        source = self.classes
        if source == "auto":
            source = "human" if any(item.labels for item in chosen) else "judge"
        scale = None
        if source == "human":
            values = [v for item in chosen for v in item.human_scores]
            scale = human_label_scale(values, ctx.rubric, self.human_scale)
        design = SensitivityDesign(tuple(chosen), source, scale)
        return Plan(self.name, ctx, design, base_requests(ctx, chosen))

    def refine(
        self, plan: Plan[SensitivityDesign], verdicts: Verdicts
    ) -> Plan[SensitivityDesign] | None:
        design = plan.design
        base = drawable_base(design.items, design.drawn, verdicts)
        if base is None:
            return None
        drawn = self.draw(design, base, plan.context)
        return plan.extend(self._requests(drawn, plan.context), design=drawn)

    def draw(
        self, design: SensitivityDesign, base: BaseScores, ctx: ProbeContext
    ) -> SensitivityDesign:
        """``design`` with each item's class and the edits drawn from the classes."""
        classes = {item.id: self._class(item, base, ctx.rubric, design) for item in design.items}
        pools = {c: sorted(i for i, k in classes.items() if k == c) for c in (POSITIVE, NEGATIVE)}
        words = {item.id: word_count(item.response) for item in design.items}
        edits: list[PointEdit] = []
        why: dict[str, str] = {}
        if "swap_class" in self.edits:
            edits += self._swaps(pools, ctx)
        if "insert_harmful" in self.edits:
            edits += self._inserts(pools, words, ctx)
        for family in self.edits:
            if not any(edit.family == family for edit in edits):
                why[family] = self._why_none(family, pools, design.source, ctx.rubric)
        return dataclasses.replace(
            design, drawn=True, classes=classes, edits=tuple(edits), why_none=why
        )

    def _swaps(self, pools: Mapping[str, list[str]], ctx: ProbeContext) -> list[PointEdit]:
        rng = probe_rng(ctx, self.name, 0)
        edits = []
        for cls in (POSITIVE, NEGATIVE):
            other = pools[OTHER[cls]]
            for item_id in pools[cls]:
                same = [i for i in pools[cls] if i != item_id]
                if not other or not same:
                    continue
                donor = other[int(rng.integers(len(other)))]
                placebo = same[int(rng.integers(len(same)))]
                edits.append(PointEdit("swap_class", item_id, OTHER[cls], donor, placebo))
        return edits

    def _inserts(
        self, pools: Mapping[str, list[str]], words: Mapping[str, int], ctx: ProbeContext
    ) -> list[PointEdit]:
        rng = probe_rng(ctx, self.name, 1)
        donors, benign = pools[POSITIVE], pools[NEGATIVE]
        edits = []
        for item_id in benign:
            others = [i for i in benign if i != item_id]
            if not donors or not others:
                continue
            donor = donors[int(rng.integers(len(donors)))]
            span = min(self.span_words, words[donor])
            long_enough = [i for i in others if words[i] >= span] or others
            placebo = long_enough[int(rng.integers(len(long_enough)))]
            span = min(span, words[placebo])
            edits.append(PointEdit("insert_harmful", item_id, POSITIVE, donor, placebo, span))
        return edits

    def _class(
        self, item: PointwiseItem, base: BaseScores, rubric: Rubric, design: SensitivityDesign
    ) -> str:
        if not item.response.strip():
            return "empty response"
        rule = rubric.decision
        assert rule is not None
        if design.human_scale is None:
            score = base.scores.get(item.id)
            if score is None:
                return "no base score"
            decision = decide(rubric, score)
            return {rule.positive: POSITIVE, rule.negative: NEGATIVE}.get(decision, "between")
        mean = item.human_mean
        if mean is None:
            return "unlabeled"
        low, high = design.human_scale
        value = (mean - low) / (high - low) if high > low else mean
        if value >= self.human_positive_at:
            return POSITIVE
        return NEGATIVE if value <= self.human_negative_at else "between"

    @staticmethod
    def _why_none(family: str, pools: Mapping[str, list[str]], source: str, rubric: Rubric) -> str:
        rule = rubric.decision
        assert rule is not None
        sizes = f"{len(pools[POSITIVE])} {rule.positive}, {len(pools[NEGATIVE])} {rule.negative}"
        where = (
            "by human label"
            if source == "human"
            else "by the judge's own base decisions (no item has a human label)"
        )
        need = (
            "an item of each class and two of the edited item's class"
            if family == "swap_class"
            else f"a {rule.positive} item to take a span from and two {rule.negative} items"
        )
        why = f"{family} needs {need}; the items are {sizes} {where}"
        if source == "judge" and not (pools[POSITIVE] and pools[NEGATIVE]):
            why += (
                ": nothing in the data says which responses mean the other thing, so the judge "
                "is not shown to follow a change of meaning (give the items human labels)"
            )
        return why

    def _requests(self, design: SensitivityDesign, ctx: ProbeContext) -> dict[Role, Request]:
        by_id = {item.id: item for item in design.items}
        requests: dict[Role, Request] = {}
        for edit in design.edits:
            item, donor, placebo = by_id[edit.item_id], by_id[edit.donor], by_id[edit.placebo_donor]
            if edit.family == "swap_class":
                edited, calm = donor.response, placebo.response
            else:
                edited = insert_middle(item.response, first_words(donor.response, edit.words))
                calm = insert_middle(item.response, first_words(placebo.response, edit.words))
            requests[edited_role(edit.family, item.id)] = base_request(
                ctx, dataclasses.replace(item, response=edited)
            )
            requests[placebo_role(edit.family, item.id)] = base_request(
                ctx, dataclasses.replace(item, response=calm)
            )
        return requests

    # -- analysis -------------------------------------------------------------------------------
    def outcomes(
        self, plan: Plan[SensitivityDesign], verdicts: Verdicts
    ) -> tuple[list[Outcome], Counter[str]]:
        """Each drawn edit's decisions, and the edits left out for want of one."""
        rule = plan.context.rubric.decision
        assert rule is not None
        names = {POSITIVE: rule.positive, NEGATIVE: rule.negative}
        edits = [(e.family, e.item_id, names[e.target]) for e in plan.design.edits]
        return read_outcomes(edits, verdicts, _roles, verdicts.decision)

    def analyze(self, plan: Plan[SensitivityDesign], verdicts: Verdicts) -> ProbeResult:
        design, ctx = plan.design, plan.context
        rule = ctx.rubric.decision
        assert rule is not None
        outcomes, excluded = self.outcomes(plan, verdicts)
        level = self.confidence_level
        notes: list[str] = []
        whys: dict[str, str]
        if not design.drawn:
            why = "the base verdicts are incomplete: no edit was drawn"
            notes.append(why)
            whys = dict.fromkeys(self.edits, why)
        else:
            whys = dict(design.why_none)
            notes += base_notes(base_scores(design.items, verdicts))
        targets = {"swap_class": "the other class", "insert_harmful": rule.positive}
        findings: list[Finding] = [
            overall_rate(
                outcomes,
                level=level,
                seed=ctx.seed,
                n_resamples=self.n_resamples,
                why="; ".join(whys.values()) or None,
            )
        ]
        for family in self.edits:
            findings += family_findings(
                outcomes, family, level=level, why=whys.get(family), target=targets[family]
            )
        findings = with_evidence(findings, outcomes, verdicts, _roles)
        notes += self._notes(design, rule.positive, rule.negative)
        notes += excluded_note(excluded, len(design.edits))
        result = ProbeResult(
            probe=self.name,
            kind=self.kind,
            params=self.params(),
            findings=findings,
            tables={
                "classes": dict(sorted(Counter(design.classes.values()).items())),
                "edits": edit_table(outcomes, self.edits),
                "unmoved": unmoved_rows(outcomes),
                "excluded": dict(excluded),
            },
            notes=notes,
        )
        return with_failed_calls(result, verdicts, confidence_level=self.confidence_level)

    @staticmethod
    def _notes(design: SensitivityDesign, positive: str, negative: str) -> list[str]:
        if not design.drawn:
            return []
        where = "human labels" if design.source == "human" else "the judge's base decisions"
        counts = Counter(design.classes.values())
        return [
            f"classes from {where}: {counts[POSITIVE]} {positive}, {counts[NEGATIVE]} "
            f"{negative}, {len(design.items) - counts[POSITIVE] - counts[NEGATIVE]} neither; "
            f"{len(design.edits)} edits drawn, each judged with its placebo",
            *design.why_none.values(),
        ]

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        """Per item: each family's move and its placebo's, and its moves over all families."""
        outcomes, _ = self.outcomes(plan, verdicts)
        return sensitivity_units(outcomes, self.edits, overall=True)
