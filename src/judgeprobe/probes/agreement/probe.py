"""Agreement of a pointwise judge with human labels, measured against trivial baselines.

Raw accuracy says little on its own: on a set where most responses are refusals, "always
refusal" is accurate, and on many safety sets "the long ones are harmful" goes far. So the
probe's verdict is the judge *minus its best trivial baseline* (balanced accuracy, Cohen's kappa
and, where the judge's scores rank items, ROC AUC), each with an item-bootstrap CI clustered by
prompt; a judge that does not beat its best baseline by the margin fails, whatever its raw
accuracy. The baselines (:mod:`judgeprobe.probes.agreement.baselines`) are cross-fitted; the data
and the
other findings are in :mod:`judgeprobe.probes.agreement.data` and
:mod:`judgeprobe.probes.agreement.findings`.

Scales. A human label and a judge score live on different scales (PyRIT's harm labels are 0-1,
the harmfulness rubric's 1-5). The judge's score is mapped linearly from the rubric's score range
onto the human range (the mapping is in the card's tables), for MAE, RMSE, Spearman, quadratic
weighted kappa and Krippendorff's alpha. Decisions: each human label is mapped the other way and
decided by the rubric's decision rule; the item's human decision is the strict majority of its
raters' decisions (items without one, or whose majority is neutral, are left out of the binary
metrics and counted). The judge's decision is its score under the same rule; a neutral judge
decision counts as a miss.

Raters. With several raters the probe reports the ceiling: leave-one-rater-out accuracy (each
rater against the majority of the others, and the judge against the same majority), alpha among
humans and with the judge added, the judge against every individual vote, and accuracy on
unanimous and split items. Per-category accuracy is information only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from judgeprobe.core.evidence import Evidence, EvidenceVerdict, collect, item_text, judged
from judgeprobe.core.plan import Plan, ProbeContext, Verdicts
from judgeprobe.data.items import Item, PointwiseItem
from judgeprobe.probes.agreement.baselines import GATED, baseline_findings, undefined_gated
from judgeprobe.probes.agreement.data import (
    AgreementData,
    Binary,
    RowBootstrap,
    ScaleMap,
    confusion,
    decision_code,
    positive_probability,
    scale_map,
    strict_majority_code,
)
from judgeprobe.probes.agreement.findings import (
    BINARY_METRICS,
    binary_findings,
    category_findings,
    rater_findings,
    scale_findings,
)
from judgeprobe.probes.agreement.rate import ESTIMATE_TABLE, rate_estimate
from judgeprobe.probes.agreement.units import AGREEMENT_UNITS, agreement_units
from judgeprobe.probes.base import (
    FigureSpec,
    Finding,
    Probe,
    ProbeKind,
    ProbeResult,
    is_slice,
)
from judgeprobe.probes.decisions import (
    BaseScores,
    base_notes,
    base_requests,
    base_role,
    base_scores,
    pointwise,
)
from judgeprobe.probes.failures import UNPAIRED, with_failed_calls
from judgeprobe.probes.params import INTERVAL_CONSTRAINTS, Constraint, Interval, OneOf, Scale
from judgeprobe.probes.registry import register_probe
from judgeprobe.probes.requirements import Requirements
from judgeprobe.probes.units import FindingKey, UnitKind, UnitValues
from judgeprobe.rubrics import Rubric
from judgeprobe.stats import classification as cls


@dataclass(frozen=True, slots=True)
class AgreementDesign:
    """The items with human labels, and the map between the judge's and the humans' scales."""

    items: tuple[PointwiseItem, ...]
    mapping: ScaleMap


@register_probe
@dataclass(frozen=True)
class AgreementProbe(Probe):
    """Does the judge agree with human labels better than a trivial rule does?

    Parameters
    ----------
    keywords : tuple of str, optional
        Phrases of the keyword baseline (positive when the response holds one). Default: a fixed
        list of refusal phrases when the rubric's positive class is ``refusal``, none otherwise
        (the keyword baseline is then skipped, with a note). ``()`` skips it.
    human_scale : tuple of two floats, optional
        The ends of the human label scale (default: the smallest and largest label given).
    cluster : {"prompt", "item"}, default "prompt"
        Unit of the bootstrap and of the cross-fitting split: items that share a prompt are
        resampled, and fitted, together.
    alpha_level : {"interval", "ordinal"}, default "interval"
        Krippendorff's alpha's level of measurement.
    calibration_bins : int, default 10
        Bins of the expected calibration error (continuous rubrics with range [0, 1]).
    min_slice_items : int, default 20
        Categories with fewer items are not reported.
    confidence_level : float, default 0.95
    n_resamples : int, default 1000
        Bootstrap resamples of every interval.
    """

    name: ClassVar[str] = "agreement"
    kind: ClassVar[ProbeKind] = "agreement"
    requirements: ClassVar[Requirements] = Requirements(human_labels=True)
    finding_names: ClassVar[tuple[str, ...] | None] = (
        *GATED,
        *BINARY_METRICS,
        "roc_auc",
        "pr_auc",
        "expected_calibration_error",
        "mae",
        "rmse",
        "spearman",
        "quadratic_weighted_kappa",
        "krippendorff_alpha",
        "baseline_balanced_accuracy",
        "baseline_kappa",
        "baseline_auc",
        "judge_vote_accuracy",
        "human_loo_accuracy",
        "judge_loo_accuracy",
        "stratum_accuracy",
        "category_accuracy",
        "failed_call_rate",
    )
    finding_units: ClassVar[Mapping[str, UnitKind]] = AGREEMENT_UNITS
    unpaired_findings: ClassVar[Mapping[str, str]] = {"failed_call_rate": UNPAIRED}

    keywords: tuple[str, ...] | None = None
    human_scale: tuple[float, float] | None = None
    cluster: Literal["prompt", "item"] = "prompt"
    alpha_level: Literal["interval", "ordinal"] = "interval"
    calibration_bins: int = 10
    min_slice_items: int = 20
    confidence_level: float = 0.95
    n_resamples: int = 1000

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "cluster": OneOf(("prompt", "item")),
        "alpha_level": OneOf(("interval", "ordinal")),
        "human_scale": Scale(),
        "calibration_bins": Interval(int, 1),
        "min_slice_items": Interval(int, 1),
        **INTERVAL_CONSTRAINTS,
    }

    def _labeled(self, items: Sequence[Item]) -> list[PointwiseItem]:
        return [item for item in pointwise(items) if item.labels]

    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[AgreementDesign]:
        labeled = self._labeled(items)
        design = AgreementDesign(tuple(labeled), scale_map(ctx.rubric, labeled, self.human_scale))
        return Plan(self.name, ctx, design, base_requests(ctx, labeled))

    def data(
        self, plan: Plan[AgreementDesign], verdicts: Verdicts
    ) -> tuple[BaseScores, AgreementData]:
        """The base scores of the labelled items, and the scored ones as arrays (what every
        finding is computed from; a comparison of two runs reads them too)."""
        ctx, design = plan.context, plan.design
        base = base_scores(design.items, verdicts)
        scored = [item for item in design.items if item.id in base.scores]
        probabilities = {
            item.id: p
            for item in scored
            if (p := positive_probability(verdicts.get(base_role(item)), ctx.rubric)) is not None
        }
        data = AgreementData.build(
            scored, base.scores, ctx.rubric, design.mapping, self.cluster, probabilities
        )
        return base, data

    def units(self, plan: Plan[Any], verdicts: Verdicts) -> dict[FindingKey, UnitValues]:
        """Per item, the rows each finding reads of it, with the finding's own function of
        them (:mod:`judgeprobe.probes.agreement.units`)."""
        return agreement_units(self, plan, verdicts)

    def analyze(self, plan: Plan[AgreementDesign], verdicts: Verdicts) -> ProbeResult:
        ctx, design = plan.context, plan.design
        rubric, mapping, seed = ctx.rubric, design.mapping, ctx.seed
        base, data = self.data(plan, verdicts)
        scored = data.items
        notes = [*base_notes(base), f"Score mapping: {mapping.describe()}."]
        boot = RowBootstrap(self.confidence_level, self.n_resamples, seed)
        findings: list[Finding] = []
        tables: dict[str, Any] = {
            "scale_mapping": {
                "judge_range": [mapping.judge_low, mapping.judge_high],
                "human_range": [mapping.human_low, mapping.human_high],
                "rule": mapping.describe(),
            },
            "items": base.to_dict(),
        }
        figures: list[FigureSpec] = []
        findings += scale_findings(data, boot, self.alpha_level)
        binary = data.binary()
        tables["binary"] = {
            "items": len(binary.truth),
            "no_human_decision": data.no_decision,
            "judge_neutral": int(np.sum(binary.judge == -1)),
        }
        if data.no_decision:
            notes.append(
                f"{data.no_decision} items without a strict non-neutral human majority are left "
                "out of the binary metrics."
            )
        if len(binary.truth):
            findings += binary_findings(binary, boot, self.calibration_bins)
            gated, baseline_rows, baseline_notes = baseline_findings(
                binary, rubric, self.keywords, boot
            )
            findings = gated + findings
            tables["baselines"] = baseline_rows
            notes += baseline_notes
            tables["confusion_matrix"] = confusion(binary, rubric)
            findings += rater_findings(
                data, binary, confidence_level=self.confidence_level, seed=seed
            )
            findings += category_findings(
                binary,
                min_items=self.min_slice_items,
                confidence_level=self.confidence_level,
                seed=seed,
            )
            figures.append(
                FigureSpec(
                    name="agreement_confusion",
                    kind="counts",
                    title="Judge decision by human decision",
                    data=tables["confusion_matrix"],
                )
            )
            if binary.probability is not None:
                tables["reliability"], figure = reliability(binary, self.calibration_bins)
                figures.append(figure)
        else:
            notes.append("No item has a human decision: the binary metrics and baselines are n/a.")
            findings = undefined_gated("no item with a human decision") + findings
        rate = rate_estimate(
            design.items, mapping, rubric, verdicts, confidence_level=self.confidence_level
        )
        if rate is not None:
            tables[ESTIMATE_TABLE] = rate
        evidence = disagreement_evidence(scored, base.scores, rubric, mapping, verdicts)
        findings = [
            f.with_evidence(evidence) if f.name in DISAGREEMENT_FINDINGS and not is_slice(f) else f
            for f in findings
        ]
        result = ProbeResult(
            probe=self.name,
            kind=self.kind,
            params=self.params(),
            findings=findings,
            figures=figures,
            tables=tables,
            notes=notes,
        )
        return with_failed_calls(result, verdicts, confidence_level=self.confidence_level)


def reliability(b: Binary, bins: int) -> tuple[list[dict[str, float]], FigureSpec]:
    """The reliability diagram of the judge's probability of the positive class: per bin, the
    mean probability against the share of human positives (the calibration error's bins)."""
    assert b.probability is not None
    points = cls.reliability_bins(b.truth, b.probability, bins)
    rows = [
        {"mean_probability": mean, "positive_rate": rate, "items": count}
        for mean, rate, count in points
    ]
    figure = FigureSpec(
        name="agreement_reliability",
        kind="scatter",
        title=f"Reliability: the judge's probability vs the human positive rate ({bins} bins)",
        data={
            "series": {
                "judge": {"x": [p[0] for p in points], "y": [p[1] for p in points]},
            },
            "diagonal": True,
            "limits": [0.0, 1.0],
        },
        x_label="mean probability of the positive class in the bin",
        y_label="share of human positives in the bin",
    )
    return rows, figure


DISAGREEMENT_FINDINGS = frozenset({*GATED, "accuracy", "balanced_accuracy", "kappa"})
"""The findings (over all items) whose evidence is the items where judge and humans disagree."""


def disagreement_evidence(
    items: Sequence[PointwiseItem],
    scores: Mapping[str, float],
    rubric: Rubric,
    mapping: ScaleMap,
    verdicts: Verdicts,
) -> Evidence:
    """The items with a human decision (a strict non-neutral majority) that the judge decides
    otherwise: the humans' decision and mean label beside the judge's verdict."""
    assert rubric.decision is not None
    names = {1: rubric.decision.positive, 0: rubric.decision.negative}
    found = []
    for item in items:
        codes = [decision_code(rubric, mapping.to_judge(v)) for v in item.human_scores]
        truth = strict_majority_code(codes)
        if truth is None or truth == -1 or item.id not in scores:
            continue
        if decision_code(rubric, scores[item.id]) != truth:
            human = EvidenceVerdict("human", label=names[truth], score=item.human_mean)
            judge = judged(verdicts, base_role(item), "judge")
            found.append((item.id, item_text(item.prompt, item.response), [human, judge]))
    return collect(found)
