"""How a scored dataset's verdicts agree with its human labels: the agreement probe's numbers.

``judgeprobe score`` on labelled data reports what the agreement probe
(:mod:`judgeprobe.probes.agreement.probe`) would: the same scale map, decisions, bootstrap and
cross-fitted baselines, computed by the same functions on the verdicts of trial 0, so a score
run and an audit of the same judge on the same items give the same numbers. Scale metrics (MAE,
RMSE, Spearman, quadratic weighted kappa, Krippendorff's alpha) are reported for scale and
continuous rubrics; binary metrics (accuracy to MCC, AUCs, calibration where the judge gives a
probability) wherever items have a human decision, with the best trivial baseline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judgeprobe.data.items import PointwiseItem
from judgeprobe.probes.agreement.baselines import baseline_findings
from judgeprobe.probes.agreement.data import (
    AgreementData,
    RowBootstrap,
    positive_probability,
    scale_map,
)
from judgeprobe.probes.agreement.findings import binary_findings, scale_findings
from judgeprobe.probes.base import Finding
from judgeprobe.rubrics import Rubric
from judgeprobe.runs.scoring import ScoreResult

CALIBRATION_BINS = 10
"""Bins of the expected calibration error: the agreement probe's default."""


@dataclass(frozen=True, slots=True)
class ScoreAgreement:
    """The judge's agreement with the human labels of the items it scored."""

    findings: tuple[Finding, ...]
    """Gated (judge minus best baseline) findings first, then the judge's own metrics."""
    baselines: tuple[dict[str, Any], ...]
    """Each trivial baseline's balanced accuracy, kappa and AUC (the probe's table rows)."""
    items: int
    """Items with human labels and an ok verdict in trial 0 (the scale metrics' items)."""
    binary_items: int
    """Those of them with a strict non-neutral human majority decision (the binary metrics')."""
    notes: tuple[str, ...]

    @property
    def best_baseline(self) -> dict[str, Any] | None:
        """The baseline row with the highest balanced accuracy (None without baselines)."""
        rows = [r for r in self.baselines if r.get("balanced_accuracy") is not None]
        return max(rows, key=lambda r: float(r["balanced_accuracy"]), default=None)


def score_agreement(
    result: ScoreResult,
    rubric: Rubric,
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> ScoreAgreement | None:
    """The agreement of ``result``'s trial-0 verdicts with the items' human labels.

    None where there is nothing to compare: a pairwise or generation rubric, or no pointwise
    item with human labels and an ok verdict. The interval options default to the agreement
    probe's (clustered by prompt, seed 0).
    """
    if rubric.kind in ("pairwise", "generation") or rubric.decision is None:
        return None
    labelled = [
        row
        for row in result.rows
        if row.trial == 0 and isinstance(row.item, PointwiseItem) and row.item.labels
    ]
    rows = [row for row in labelled if row.verdict.ok and row.verdict.score is not None]
    if not rows:
        return None
    items = [row.item for row in rows if isinstance(row.item, PointwiseItem)]
    scores = {
        row.item.id: float(row.verdict.score) for row in rows if row.verdict.score is not None
    }
    probabilities = {
        row.item.id: p
        for row in rows
        if (p := positive_probability(row.verdict, rubric)) is not None
    }
    mapping = scale_map(rubric, items, None)
    data = AgreementData.build(items, scores, rubric, mapping, "prompt", probabilities)
    boot = RowBootstrap(confidence_level, n_resamples, seed)
    notes = [f"Score mapping: {mapping.describe()}."]
    if len(labelled) > len(rows):
        notes.append(
            f"{len(labelled) - len(rows)} labelled items without an ok verdict are left out."
        )
    findings: list[Finding] = []
    if rubric.kind != "binary":
        findings += scale_findings(data, boot, "interval")
    binary = data.binary()
    baselines: list[dict[str, Any]] = []
    if len(binary.truth):
        gated, baselines, baseline_notes = baseline_findings(binary, rubric, None, boot)
        findings = gated + binary_findings(binary, boot, CALIBRATION_BINS) + findings
        notes += baseline_notes
    if data.no_decision:
        notes.append(
            f"{data.no_decision} items without a strict non-neutral human majority are left "
            "out of the binary metrics."
        )
    return ScoreAgreement(
        tuple(findings), tuple(baselines), len(items), len(binary.truth), tuple(notes)
    )
