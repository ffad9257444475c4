"""Judge-bias probes: does an edit that should not help a response move the verdict its way?

Five known ways to fool a judge (Zheng et al. 2023, "Judging LLM-as-a-Judge", sec. 3.3; Ye et
al. 2024, "Justice or Prejudice?", arXiv:2410.02736), each tested by one probe on pointwise
items and one on pairs (``<name>_pairwise``):

``verbosity``    pad the response without adding content (restatement, filler, repeated list);
``injection``    text addressed to the judge that asks for a verdict;
``authority``    fabricated citations or credentials;
``bandwagon``    a claim that most reviewers rated the response well, or preferred it;
``distraction``  irrelevant but harmless text.

Each item is judged as it is, with the edit (one of the edit set's reviewed forms, seeded and
balanced, :mod:`judgeprobe.transforms.bias_edits`) and with a placebo edit of the same size
that should not matter. The finding is the rate at which the edit moves the verdict toward
what it argues for (pointwise: the rubric's favoured class, ``safe`` by default; pairwise: the
edited side, itself balanced between A and B), beyond the placebo's rate, paired per item; see
:mod:`judgeprobe.probes.bias.findings`. Per form the same number is reported as information;
the cases behind every move are in the ``moved`` table.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from judgeprobe.core.plan import Plan, ProbeContext, Role, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.data.items import Item, PairwiseItem
from judgeprobe.errors import ConfigError
from judgeprobe.probes.base import (
    Finding,
    Probe,
    ProbeKind,
    ProbeResult,
    pairwise_items,
    slices_as_information,
)
from judgeprobe.probes.bias.findings import (
    ALL_FINDINGS,
    BiasCase,
    BiasDesign,
    Outcome,
    bias_findings,
    excluded_note,
    form_table,
    moved_rows,
    with_moved_evidence,
)
from judgeprobe.probes.bias.units import bias_units, unit_kinds
from judgeprobe.probes.decisions import (
    base_decisions,
    base_request,
    base_role,
    pointwise,
    unique_ids,
)
from judgeprobe.probes.failures import UNPAIRED, with_failed_calls
from judgeprobe.probes.pairwise.votes import PAIRWISE, live_request, pair_role, verdict_problem
from judgeprobe.probes.params import Constraint, Level, OneOf, Texts
from judgeprobe.probes.registry import register_probe
from judgeprobe.probes.requirements import Requirements
from judgeprobe.probes.units import FindingKey, UnitKind, UnitValues
from judgeprobe.rubrics import Rubric
from judgeprobe.transforms.bias_edits import (
    EditForm,
    EditKind,
    add_text,
    assign,
    assign_by_id,
    edit_set,
    placebo_text,
    render,
)

FAVOURED = ("negative", "positive")
"""Which class of the rubric's rule a pointwise edit argues for: ``negative`` (the built-in
rubrics' passing class: safe, clean, compliance) or ``positive``."""

PLACEBO_WORDS = {
    "whitespace": "blank space of the same length",
    "neutral": "neutral sentences of the same length",
}


def _edited(role: str, item_id: str) -> Role:
    return (role, item_id)


@dataclass(frozen=True)
class _BiasProbe(Probe):
    """What the pointwise and the pairwise bias probes share: the edit set and its forms."""

    edit: ClassVar[str]
    kind: ClassVar[ProbeKind] = "invariance"
    edit_kind: ClassVar[EditKind] = "pointwise"
    unpaired_findings: ClassVar[Mapping[str, str]] = {"failed_call_rate": UNPAIRED}

    forms: tuple[str, ...] = ()
    separator: str = "\n\n"
    confidence_level: float = 0.95

    def check_parameters(self) -> None:
        known = edit_set(self.edit).form_ids
        unknown = [f for f in self.forms if f not in known]
        if unknown or len(set(self.forms)) != len(self.forms):
            raise ConfigError(
                f"forms must be distinct forms of edit set {self.edit!r} ({', '.join(known)}), "
                f"got {self.forms!r}"
            )

    def active_forms(self) -> tuple[EditForm, ...]:
        """The forms used: those named in ``forms``, all of the edit set's by default."""
        edits = edit_set(self.edit)
        wanted = self.forms or edits.form_ids
        return tuple(form for form in edits.forms if form.id in wanted)

    def _cases(
        self, ids: Sequence[str], seed: int, *, sides: bool
    ) -> dict[str, tuple[EditForm, str]]:
        forms = self.active_forms()
        form_of = assign_by_id(ids, len(forms), seed=seed, salt=f"{self.name}:form")
        side_of = assign(ids, 2, seed=seed, salt=f"{self.name}:side") if sides else {}
        return {i: (forms[form_of[i]], "AB"[side_of[i]] if sides else "") for i in ids}

    def _edit(self, form: EditForm, text: str, fill: Mapping[str, str]) -> tuple[str, str, int]:
        """The edited and the placebo text of ``text``, and the characters added."""
        addition = render(form, self.edit_kind, text, fill)
        placebo = placebo_text(edit_set(self.edit).placebo, len(addition))
        edited = add_text(text, addition, form.where, self.separator)
        return edited, add_text(text, placebo, form.where, self.separator), len(edited) - len(text)

    def outcomes(
        self, plan: Plan[BiasDesign], verdicts: Verdicts
    ) -> tuple[list[Outcome], Counter[str]]:
        """Each case's three verdicts as steps toward the edit's aim, and the cases left out
        for want of a verdict, by reason."""
        raise NotImplementedError

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        """The findings' rows per item (:mod:`judgeprobe.probes.bias.units`)."""
        forms = [form.id for form in self.active_forms()]
        outcomes, _ = self.outcomes(plan, verdicts)
        return bias_units(outcomes, forms, scores=self.edit_kind == "pointwise")

    def _result(
        self,
        design: BiasDesign,
        outcomes: list[Outcome],
        excluded: Counter[str],
        aim: str,
        verdicts: Verdicts,
        origin: str,
    ) -> ProbeResult:
        level = self.confidence_level
        scores = self.edit_kind == "pointwise"
        findings: list[Finding] = bias_findings(outcomes, {}, aim=aim, level=level, scores=scores)
        forms = [form.id for form in self.active_forms()]
        for form in forms:
            mine = [o for o in outcomes if o.case.form == form]
            findings += bias_findings(
                mine, {"slice": form}, aim=aim, level=level, scores=scores, full=False
            )
        findings = with_moved_evidence(
            findings,
            outcomes,
            verdicts,
            lambda case: (
                (origin, case.item_id),
                _edited("edited", case.item_id),
                _edited("placebo", case.item_id),
            ),
        )
        notes = [
            f"{len(outcomes)} items judged as they are, with the {self.edit} edit and with the "
            f"placebo ({PLACEBO_WORDS[design.placebo]}, placed where the edit goes); the edit "
            f"argues for {aim}."
        ]
        notes += excluded_note(excluded, len(design.cases))
        result = ProbeResult(
            probe=self.name,
            kind=self.kind,
            params=self.params(),
            findings=slices_as_information(findings),
            tables={
                "forms": form_table(outcomes, forms),
                "moved": moved_rows(outcomes),
                "excluded": dict(excluded),
                "placebo": design.placebo,
                **({"base_decisions": decided} if (decided := base_decisions(verdicts)) else {}),
            },
            notes=notes,
        )
        return with_failed_calls(result, verdicts, confidence_level=level)


@dataclass(frozen=True)
class BiasProbe(_BiasProbe):
    """A bias edit on pointwise items: does it move the verdict toward the favoured class?

    Parameters
    ----------
    forms : tuple of str, default all
        The edit set's forms to use (``forms`` of ``bias_templates/<name>.yaml``); each item
        gets one of them, seeded and balanced.
    favoured : {"negative", "positive"}, default "negative"
        The class of the rubric's rule the edit argues for (an injection asks for its most
        extreme label): ``negative`` is the passing class of the built-in rubrics (safe, clean,
        compliance).
    separator : str, default "\\n\\n"
        Between the response and the added text.
    confidence_level : float, default 0.95
    """

    requirements: ClassVar[Requirements] = Requirements(
        decision_rule=True, reads=("response",), does="edits the response"
    )
    finding_names: ClassVar[tuple[str, ...] | None] = (*ALL_FINDINGS, "failed_call_rate")
    finding_units: ClassVar[Mapping[str, UnitKind]] = unit_kinds("item", scores=True)
    score_unit_findings: ClassVar[frozenset[str]] = frozenset({"mean_score_shift"})

    favoured: str = "negative"

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "forms": Texts(),
        "favoured": OneOf(FAVOURED),
        "confidence_level": Level(),
    }

    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[BiasDesign]:
        rubric = ctx.rubric
        by_id = {item.id: item for item in pointwise(items)}
        verdict, aim = _favoured_label(rubric, self.favoured)
        fill = {"verdict": verdict, "verdict_class": aim}
        cases: list[BiasCase] = []
        requests: dict[Role, Request] = {}
        for item_id, (form, _) in self._cases(list(by_id), ctx.seed, sides=False).items():
            item = by_id[item_id]
            edited, placebo, added = self._edit(form, item.response, fill)
            cases.append(BiasCase(item.id, form.id, "", added))
            requests[base_role(item)] = base_request(ctx, item)
            requests[_edited("edited", item.id)] = base_request(
                ctx, dataclasses.replace(item, response=edited)
            )
            requests[_edited("placebo", item.id)] = base_request(
                ctx, dataclasses.replace(item, response=placebo)
            )
        placebo_kind = edit_set(self.edit).placebo
        design = BiasDesign(self.edit, placebo_kind, aim, tuple(sorted(cases, key=_case_key)))
        return Plan(self.name, ctx, design, requests)

    def analyze(self, plan: Plan[BiasDesign], verdicts: Verdicts) -> ProbeResult:
        outcomes, excluded = self.outcomes(plan, verdicts)
        design = plan.design
        return self._result(design, outcomes, excluded, design.favoured, verdicts, "base")

    def outcomes(
        self, plan: Plan[BiasDesign], verdicts: Verdicts
    ) -> tuple[list[Outcome], Counter[str]]:
        rubric, design = plan.context.rubric, plan.design
        steps = _steps(rubric, self.favoured)
        sign = _favourable_sign(rubric, self.favoured)
        outcomes: list[Outcome] = []
        excluded: Counter[str] = Counter()
        for case in design.cases:
            roles = (
                ("base", case.item_id),
                _edited("edited", case.item_id),
                _edited("placebo", case.item_id),
            )
            decisions = [verdicts.decision(role) for role in roles]
            scores = [verdicts.score(role) for role in roles]
            missing = next((r for r, d in zip(roles, decisions, strict=True) if d is None), None)
            if missing is not None:
                excluded[f"{missing[0]}: {verdicts.status(missing)}"] += 1
                continue
            named = (str(decisions[0]), str(decisions[1]), str(decisions[2]))
            edited_score, placebo_score = scores[1], scores[2]
            shift = (
                None
                if edited_score is None or placebo_score is None
                else sign * (edited_score - placebo_score)
            )
            outcomes.append(
                Outcome(case, named, (steps[named[0]], steps[named[1]], steps[named[2]]), shift)
            )
        return outcomes, excluded


@dataclass(frozen=True)
class PairwiseBiasProbe(_BiasProbe):
    """A bias edit on one side of each pair: does the verdict move toward the edited side?

    The edited side is drawn per item (seeded, balanced between A and B); the placebo goes on
    the same side. Parameters as for :class:`BiasProbe` (``favoured`` does not apply: the
    edit argues for the side it is on).
    """

    nested_design: ClassVar[bool] = False  # its sides are balanced over every item

    requirements: ClassVar[Requirements] = PAIRWISE
    edit_kind: ClassVar[EditKind] = "pairwise"
    finding_names: ClassVar[tuple[str, ...] | None] = (*ALL_FINDINGS[:-1], "failed_call_rate")
    finding_units: ClassVar[Mapping[str, UnitKind]] = unit_kinds("pair", scores=False)

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "forms": Texts(),
        "confidence_level": Level(),
    }

    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[BiasDesign]:
        chosen = sorted(pairwise_items(items), key=lambda item: item.id)
        unique_ids(chosen)
        cases: list[BiasCase] = []
        requests: dict[Role, Request] = {}
        by_id = {item.id: item for item in chosen}
        for item_id, (form, side) in self._cases(list(by_id), ctx.seed, sides=True).items():
            item = by_id[item_id]
            field = "response_a" if side == "A" else "response_b"
            fill = {"verdict": side, "verdict_class": f"Response {side}"}
            edited, placebo, added = self._edit(form, getattr(item, field), fill)
            cases.append(BiasCase(item.id, form.id, side, added))
            requests[pair_role(item)] = live_request(item, ctx)
            requests[_edited("edited", item.id)] = live_request(_with_side(item, side, edited), ctx)
            requests[_edited("placebo", item.id)] = live_request(
                _with_side(item, side, placebo), ctx
            )
        placebo_kind = edit_set(self.edit).placebo
        design = BiasDesign(self.edit, placebo_kind, "", tuple(sorted(cases, key=_case_key)))
        return Plan(self.name, ctx, design, requests)

    def analyze(self, plan: Plan[BiasDesign], verdicts: Verdicts) -> ProbeResult:
        outcomes, excluded = self.outcomes(plan, verdicts)
        return self._result(plan.design, outcomes, excluded, "the edited side", verdicts, "pair")

    def outcomes(
        self, plan: Plan[BiasDesign], verdicts: Verdicts
    ) -> tuple[list[Outcome], Counter[str]]:
        design = plan.design
        outcomes: list[Outcome] = []
        excluded: Counter[str] = Counter()
        for case in design.cases:
            roles = (
                ("pair", case.item_id),
                _edited("edited", case.item_id),
                _edited("placebo", case.item_id),
            )
            decisions = [verdicts.decision(role) for role in roles]
            bad = next(
                (r for r, d in zip(roles, decisions, strict=True) if d not in _CHOICES), None
            )
            if bad is not None:
                excluded[f"{bad[0]}: {verdict_problem(verdicts, bad)}"] += 1
                continue
            named = (str(decisions[0]), str(decisions[1]), str(decisions[2]))
            step = {case.side: 2, "tie": 1, "B" if case.side == "A" else "A": 0}
            outcomes.append(Outcome(case, named, (step[named[0]], step[named[1]], step[named[2]])))
        return outcomes, excluded


_CHOICES = ("A", "B", "tie")


def _with_side(item: PairwiseItem, side: str, text: str) -> PairwiseItem:
    """``item`` with the response on ``side`` replaced by ``text``."""
    if side == "A":
        return dataclasses.replace(item, response_a=text)
    return dataclasses.replace(item, response_b=text)


def _case_key(case: BiasCase) -> str:
    return case.item_id


def _toward_high(rubric: Rubric, favoured: str) -> bool:
    """Whether the favoured class lies toward high scores."""
    assert rubric.decision is not None
    return rubric.decision.higher_is_positive == (favoured == "positive")


def _favourable_sign(rubric: Rubric, favoured: str) -> float:
    return 1.0 if _toward_high(rubric, favoured) else -1.0


def _favoured_label(rubric: Rubric, favoured: str) -> tuple[str, str]:
    """The verdict an edit asks for (the most favourable label, or the end of the scale) and
    the name of the favoured class."""
    rule = rubric.decision
    assert rule is not None
    aim = rule.negative if favoured == "negative" else rule.positive
    high = _toward_high(rubric, favoured)
    if rubric.values:
        pick = max if high else min
        label = pick(rubric.values, key=lambda name: rubric.values[name])
        return label, aim
    if rubric.range is not None:
        return f"{rubric.range[1] if high else rubric.range[0]:g}", aim
    return aim, aim


def _steps(rubric: Rubric, favoured: str) -> dict[str, int]:
    rule = rubric.decision
    assert rule is not None
    aim, other = (
        (rule.negative, rule.positive)
        if favoured == "negative"
        else (
            rule.positive,
            rule.negative,
        )
    )
    return {other: 0, "neutral": 1, aim: 2}


# -- the registered probes ------------------------------------------------------------------------
@register_probe
@dataclass(frozen=True)
class VerbosityProbe(BiasProbe):
    """Padding without content (restatement, filler, a repeated list) against blank space."""

    name: ClassVar[str] = "verbosity"
    edit: ClassVar[str] = "verbosity"


@register_probe
@dataclass(frozen=True)
class InjectionProbe(BiasProbe):
    """Instructions to the judge inside the response against neutral text of the same length."""

    name: ClassVar[str] = "injection"
    edit: ClassVar[str] = "injection"


@register_probe
@dataclass(frozen=True)
class AuthorityProbe(BiasProbe):
    """Fabricated citations or credentials against neutral text of the same length."""

    name: ClassVar[str] = "authority"
    edit: ClassVar[str] = "authority"


@register_probe
@dataclass(frozen=True)
class BandwagonProbe(BiasProbe):
    """A claimed majority of reviewers against neutral text of the same length."""

    name: ClassVar[str] = "bandwagon"
    edit: ClassVar[str] = "bandwagon"


@register_probe
@dataclass(frozen=True)
class DistractionProbe(BiasProbe):
    """Irrelevant, harmless text against blank space of the same length."""

    name: ClassVar[str] = "distraction"
    edit: ClassVar[str] = "distraction"


@register_probe
@dataclass(frozen=True)
class PairwiseVerbosityProbe(PairwiseBiasProbe):
    """Padding without content on one side of each pair, against blank space."""

    name: ClassVar[str] = "verbosity_pairwise"
    edit: ClassVar[str] = "verbosity"


@register_probe
@dataclass(frozen=True)
class PairwiseInjectionProbe(PairwiseBiasProbe):
    """Instructions to the judge on one side of each pair, against neutral text."""

    name: ClassVar[str] = "injection_pairwise"
    edit: ClassVar[str] = "injection"


@register_probe
@dataclass(frozen=True)
class PairwiseAuthorityProbe(PairwiseBiasProbe):
    """Fabricated citations or credentials on one side of each pair, against neutral text."""

    name: ClassVar[str] = "authority_pairwise"
    edit: ClassVar[str] = "authority"


@register_probe
@dataclass(frozen=True)
class PairwiseBandwagonProbe(PairwiseBiasProbe):
    """A claimed majority preference on one side of each pair, against neutral text."""

    name: ClassVar[str] = "bandwagon_pairwise"
    edit: ClassVar[str] = "bandwagon"


@register_probe
@dataclass(frozen=True)
class PairwiseDistractionProbe(PairwiseBiasProbe):
    """Irrelevant, harmless text on one side of each pair, against blank space."""

    name: ClassVar[str] = "distraction_pairwise"
    edit: ClassVar[str] = "distraction"
