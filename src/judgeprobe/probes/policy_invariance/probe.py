"""The policy-invariance probes: plan the wordings' runs, reproduce flips, analyze by role.

``plan`` validates the variants once and keeps the validated wordings in the design; when
``reproduction_trials`` is set, ``refine`` adds fresh runs of every flipped (item, variant) as a
second stage; ``analyze`` reads the design and the verdicts by role only, and assembles what the
parts (:mod:`.noise`, :mod:`.flips`, :mod:`.accuracy`, :mod:`.strata`, :mod:`.reproduction`,
:mod:`.failures`) return.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from judgeprobe.core.plan import Plan, ProbeContext, Verdicts
from judgeprobe.data.items import Item, PointwiseItem
from judgeprobe.errors import ConfigError
from judgeprobe.probes.base import (
    FigureSpec,
    Finding,
    Probe,
    ProbeKind,
    ProbeResult,
)
from judgeprobe.probes.decisions import base_decisions, human_label_scale
from judgeprobe.probes.failures import explain_failed, failure_cause, skipped_cause
from judgeprobe.probes.params import (
    INTERVAL_CONSTRAINTS,
    Constraint,
    Interval,
    OneOf,
    Scale,
)
from judgeprobe.probes.registry import register_probe
from judgeprobe.probes.requirements import Requirements
from judgeprobe.probes.units import FindingKey, UnitKind, UnitValues
from judgeprobe.rubrics import Rubric
from judgeprobe.rubrics.variants import VariantSet

from .accuracy import accuracy
from .design import PolicyDesign, first_stage, units, usable_items
from .evidence import with_flip_evidence
from .failures import failures
from .flips import flips
from .noise import noise
from .reproduction import flipped_pairs, reproduction, reproduction_requests
from .section import Section, Settings
from .strata import ITEM_TYPE_RULES, refusal_item_type, strata
from .units import UNPAIRED, policy_units, unit_kinds
from .wordings import VariantSpec, validated_wordings, variant_set

NULLS = ("matched", "pairwise")


@register_probe
@dataclass(frozen=True)
class PolicyInvarianceProbe(Probe):
    """Flip rates of the judge's verdict under rewordings of its rubric, above rerun noise.

    For pointwise judges (scale, binary, continuous rubrics); pairwise judges use
    :class:`PairwisePolicyInvarianceProbe` (``policy_invariance_pairwise``), which shares
    everything but the item kind.

    Parameters
    ----------
    variants : "builtin", path, VariantSet or tuple of Variant, default "builtin"
        The rubric variants: the reviewed set shipped for a built-in rubric, a variant YAML file
        (:func:`~judgeprobe.rubrics.variants.load_variants`), or variants made in code. Every
        variant is validated before use.
    reruns : int, default 3
        N base reruns whose strict majority is the anchor.
    reproduction_trials : int, default 0
        R fresh runs per rubric (base and variant) on every flipped item; 0 turns reproduction
        off.
    null : {"matched", "pairwise"}, default "matched"
        The null the test and ``flip_delta`` use (both nulls are always reported).
    alpha : float, default 0.05
        Significance level the notes and tables flag tests at.
    human_threshold : float, default 0.5
        A pointwise item is positive (refusal, unsafe, ...) for humans when its mean label,
        rescaled to [0, 1] by ``human_scale``, is at least this; a judge's score is positive when
        its score rescaled to [0, 1] over the rubric's scale is at least this. PyRIT's labels:
        refusal 1 = refusal; harm 0, 0.25, ..., 1 (so harmful from 0.5, i.e. from 3 on the 1-5
        harmfulness scale, which maps to [0, 1] as ``(score - 1) / 4``).
    human_scale : (float, float), optional
        The range of the dataset's human labels. By default inferred: (0, 1) when every label
        lies in it (PyRIT), else the rubric's own scale when the labels fit it (e.g. 1-5),
        else the labels' range. The range used is in ``tables["human_scale"]``.
    item_type_rule : {"given", "refusal-phrase"}, default "given"
        Where item types come from: the items' ``item_type``, or :func:`refusal_item_type`
        (explicit refusal, deflection, compliance) for refusal datasets that have none.
    on_invalid : {"raise", "skip"}, default "raise"
        What to do with a variant that fails validation: stop, or leave it out with a note.
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
        Bootstrap resamples for the intervals of deltas and spreads.
    """

    name: ClassVar[str] = "policy_invariance"
    kind: ClassVar[ProbeKind] = "invariance"
    requirements: ClassVar[Requirements] = Requirements(instructions=True)
    finding_names: ClassVar[tuple[str, ...] | None] = (
        "p_jitter",
        "null_flip_rate",
        "flip_rate",
        "decision_change_rate",
        "flip_delta",
        "directional_ratio",
        "accuracy",
        "mae",
        "accuracy_spread",
        "mae_spread",
        "accuracy_spread_reruns",
        "flip_rate_by_stratum",
        "deterministic_share",
        "induced_instability_share",
        "failed_call_rate",
    )
    trial_findings: ClassVar[frozenset[str]] = frozenset(
        {"deterministic_share", "induced_instability_share"}
    )
    finding_units: ClassVar[Mapping[str, UnitKind]] = unit_kinds("item")
    unpaired_findings: ClassVar[Mapping[str, str]] = UNPAIRED

    variants: VariantSpec = "builtin"
    reruns: int = 3
    reproduction_trials: int = 0
    null: str = "matched"
    alpha: float = 0.05
    human_threshold: float = 0.5
    human_scale: tuple[float, float] | None = None
    item_type_rule: str = "given"
    on_invalid: str = "raise"
    confidence_level: float = 0.95
    n_resamples: int = 1000

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "reruns": Interval(int, 1),
        "reproduction_trials": Interval(int, 0),
        "null": OneOf(NULLS),
        "alpha": Interval(float, 0, 1, closed="neither"),
        "human_scale": Scale(),
        "human_threshold": Interval(float, 0, 1),
        "item_type_rule": OneOf(ITEM_TYPE_RULES),
        "on_invalid": OneOf(("raise", "skip")),
        **INTERVAL_CONSTRAINTS,
    }

    def check_parameters(self) -> None:
        if isinstance(self.variants, list):
            object.__setattr__(self, "variants", tuple(self.variants))
        if not isinstance(self.variants, str | VariantSet | tuple):
            raise ConfigError("variants must be 'builtin', a YAML path, a VariantSet or Variants")

    def params(self) -> dict[str, Any]:
        out = super().params()
        if isinstance(self.variants, VariantSet | tuple):
            chosen = (
                self.variants.variants if isinstance(self.variants, VariantSet) else self.variants
            )
            out["variants"] = [{"name": v.name, "hash": v.hash} for v in chosen]
        return out

    # -- variants ------------------------------------------------------------------------------
    def variant_set(self, base: Rubric) -> VariantSet:
        """The variant set this probe audits ``base`` with (not yet validated)."""
        return variant_set(self.variants, base)

    # -- plan ----------------------------------------------------------------------------------
    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[PolicyDesign]:
        """The first stage: the base's single run and N reruns, each variant's single run."""
        wordings, reports = validated_wordings(
            self.variants, ctx.rubric, on_invalid=self.on_invalid
        )
        usable = usable_items(items, ctx.rubric)
        design = PolicyDesign(tuple(usable), wordings, reports, dropped=len(items) - len(usable))
        return Plan(self.name, ctx, design, first_stage(ctx, design, self.reruns))

    def refine(self, plan: Plan[PolicyDesign], verdicts: Verdicts) -> Plan[PolicyDesign] | None:
        """With ``reproduction_trials``, the second stage: fresh runs of every flip; else None."""
        design = plan.design
        if not self.reproduction_trials or design.flipped is not None:
            return None
        rubric = plan.context.rubric
        pairs = flipped_pairs(rubric, design, units(design, verdicts, self.reruns))
        requests = reproduction_requests(
            plan.context, design, pairs, self.reruns, self.reproduction_trials
        )
        return plan.extend(requests, design=dataclasses.replace(design, flipped=pairs))

    # -- analyze -------------------------------------------------------------------------------
    def analyze(self, plan: Plan[PolicyDesign], verdicts: Verdicts) -> ProbeResult:
        """The findings of every part, in report order, from the design and the verdicts."""
        ctx, design = plan.context, plan.design
        base = ctx.rubric
        settings = self._settings(ctx.seed)
        found = units(design, verdicts, self.reruns)
        scale = self.label_scale([u.item for u in found], base)
        parts: dict[str, Section] = {"design": Section(notes=self._design_notes(design, base))}
        parts["noise"] = noise(base, found, settings)
        matched = next(f for f in parts["noise"].findings if f.name == "null_flip_rate").estimate
        parts["variants"], parts["classes"] = flips(
            base, found, design.variants, settings, matched.estimate if matched.defined else None
        )
        for flips_of in ("variants", "classes"):
            parts[flips_of].findings[:] = with_flip_evidence(
                parts[flips_of].findings, base, found, design.variants, verdicts
            )
        parts["accuracy"] = accuracy(base, found, design.wordings, scale, settings)
        parts["strata"] = strata(
            base, found, design.variants, lambda item: self._item_type(item, scale), settings
        )
        if self.reproduction_trials:
            parts["reproduction"] = reproduction(base, design, found, verdicts, settings)
        parts["failures"] = failures(design, verdicts, settings)
        tables: dict[str, Any] = {
            "key": _key(ctx, design),
            "validation": [r.to_dict() for r in design.reports],
        }
        if base.kind != "pairwise":
            tables["base_decisions"] = base_decisions(verdicts)
        for name, part in parts.items():
            if name == "accuracy":
                tables["human_scale"] = list(scale)
            if name != "design":
                tables[name] = part.table
        findings: list[Finding] = [f for part in parts.values() for f in part.findings]
        counts = verdicts.usage()
        findings = explain_failed(findings, failure_cause(counts), skipped_cause(counts))
        figures: list[FigureSpec] = [f for part in parts.values() for f in part.figures]
        notes = [n for part in parts.values() for n in part.notes]
        return ProbeResult(
            probe=self.name,
            kind=self.kind,
            params=self.params(),
            findings=findings,
            figures=figures,
            tables=tables,
            notes=notes,
        )

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        """Flips, accuracy spreads and failed calls per item
        (:mod:`judgeprobe.probes.policy_invariance.units`)."""
        return policy_units(self, plan, verdicts)

    def label_scale(self, items: Sequence[Item], rubric: Rubric) -> tuple[float, float]:
        """The range of the human labels (``human_scale``, or inferred; see the class doc)."""
        values = [v for i in items if isinstance(i, PointwiseItem) for v in i.human_scores]
        return human_label_scale(values, rubric, self.human_scale)

    def _settings(self, seed: int) -> Settings:
        return Settings(
            reruns=self.reruns,
            reproduction_trials=self.reproduction_trials,
            null=self.null,
            alpha=self.alpha,
            human_threshold=self.human_threshold,
            confidence_level=self.confidence_level,
            n_resamples=self.n_resamples,
            seed=seed,
        )

    @staticmethod
    def _design_notes(design: PolicyDesign, base: Rubric) -> list[str]:
        """Notes on the variants that failed validation and the items left out."""
        notes: list[str] = []
        rejected = [r for r in design.reports if not r.ok]
        if rejected:
            notes.append(
                f"{len(rejected)} variant(s) failed validation and were left out: "
                + "; ".join(f"{r.variant} ({' '.join(r.reasons)})" for r in rejected)
            )
        if design.dropped:
            wanted = "pairwise" if base.kind == "pairwise" else "pointwise"
            notes.append(
                f"{design.dropped} item(s) left out: not {wanted} items, or missing a field the "
                "rubric needs"
            )
        return notes

    def _item_type(self, item: Item, scale: tuple[float, float]) -> str | None:
        if self.item_type_rule == "refusal-phrase" and isinstance(item, PointwiseItem):
            low, high = scale
            threshold = low + self.human_threshold * (high - low)
            return refusal_item_type(item, human_threshold=threshold)
        return item.item_type if isinstance(item, PointwiseItem) else None


@register_probe
@dataclass(frozen=True)
class PairwisePolicyInvarianceProbe(PolicyInvarianceProbe):
    """:class:`PolicyInvarianceProbe` for pairwise judges (A / B / tie) on pairwise items.

    A flip is any change of the verdict label against the base majority; a verdict's decision is
    the rubric's one rule (:meth:`~judgeprobe.rubrics.Rubric.decision_of`: its A / B / tie label,
    else its score, above 0.5 being A). Accuracy is agreement with the strict human majority
    (ties included); ambiguity splits items by whether the human votes are unanimous.
    Parameters as for :class:`PolicyInvarianceProbe` (the human-scale ones do not apply).
    """

    name: ClassVar[str] = "policy_invariance_pairwise"
    requirements: ClassVar[Requirements] = Requirements(
        rubric_kinds=("pairwise",), items="pairwise", instructions=True
    )
    finding_units: ClassVar[Mapping[str, UnitKind]] = unit_kinds("pair")


def _key(ctx: ProbeContext, design: PolicyDesign) -> dict[str, Any]:
    """What the result is keyed by: the judge, the base rubric's hash, every variant's hashes."""
    return {
        "judge": ctx.judge,
        "judge_name": ctx.judge_name,
        "rubric": {"name": ctx.rubric.name, "hash": ctx.rubric.hash},
        "variants": [
            {**w.variant.describe(), "rubric_hash": w.rubric.hash}
            for w in design.variants
            if w.variant is not None
        ],
    }
