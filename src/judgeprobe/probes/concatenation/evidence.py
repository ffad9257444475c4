"""The concatenations behind the class rates of the concatenation probes.

A class rate (a cluster's ``class_departure_rate``, ``class_flip_rate``) counts concatenations
whose parts share one decision class and whose own decision left it. :func:`concat_outcomes`
gives that per concatenation (the unit of the rate, named by its parts), so the probe can name
the concatenations that moved as the finding's evidence (:func:`class_evidence`) and a
comparison of two runs can pair them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from judgeprobe.core.evidence import (
    Evidence,
    EvidenceVerdict,
    collect,
    judged,
    parts_id,
    request_text,
)
from judgeprobe.core.plan import Role, Verdicts
from judgeprobe.probes.base import Finding
from judgeprobe.probes.decisions import BaseScores, decide, is_flip
from judgeprobe.rubrics import Decision, Rubric

Drawn = Sequence[tuple[Role, Sequence[str]]]
"""Each concatenation's role and its part ids, in order."""


@dataclass(frozen=True, slots=True)
class ClassOutcome:
    """A judged concatenation whose parts share one class: the class and its own decision."""

    role: Role
    parts: tuple[str, ...]
    expected: Decision
    decision: Decision


def concat_outcomes(
    rubric: Rubric, drawn: Drawn, base: BaseScores, verdicts: Verdicts
) -> dict[str, ClassOutcome]:
    """Per judged concatenation of ``drawn`` whose parts share one class, by
    :func:`~judgeprobe.core.evidence.parts_id`: the class and the concatenation's decision."""
    found: dict[str, ClassOutcome] = {}
    for role, parts in drawn:
        decision = verdicts.decision(role)
        if decision is None or any(i not in base.scores for i in parts):
            continue
        classes = {decide(rubric, base.scores[i]) for i in parts}
        if len(classes) == 1:
            found[parts_id(parts)] = ClassOutcome(role, tuple(parts), classes.pop(), decision)
    return found


MOVED: Mapping[str, Callable[[Rubric, Decision, Decision], bool]] = {
    "class_departure_rate": lambda rubric, expected, decision: decision != expected,
    "class_flip_rate": is_flip,
}
"""Whether a concatenation counts for each class rate: it left (flipped from) its class."""


def moved_evidence(
    name: str,
    rubric: Rubric,
    outcomes: Mapping[str, ClassOutcome],
    base: BaseScores,
    verdicts: Verdicts,
) -> Evidence:
    """The concatenations that count for class rate ``name``: the parts' class and mean base
    score beside the concatenation's verdict."""
    moved = MOVED[name]
    return collect(
        (
            unit,
            request_text(verdicts, outcome.role),
            [
                parts_verdict(base, outcome.parts, outcome.expected),
                judged(verdicts, outcome.role, "concatenation"),
            ],
        )
        for unit, outcome in outcomes.items()
        if moved(rubric, outcome.expected, outcome.decision)
    )


def class_evidence(
    findings: Sequence[Finding], rubric: Rubric, drawn: Drawn, base: BaseScores, verdicts: Verdicts
) -> list[Finding]:
    """``findings``, each class rate among them naming the concatenations that moved."""
    outcomes = concat_outcomes(rubric, drawn, base, verdicts)
    return [
        f.with_evidence(moved_evidence(f.name, rubric, outcomes, base, verdicts))
        if f.name in MOVED
        else f
        for f in findings
    ]


def parts_verdict(base: BaseScores, parts: Sequence[str], decision: Decision) -> EvidenceVerdict:
    """The parts of a concatenation as one verdict: the class they share and their mean base
    score (no raw answer: each part was judged on its own)."""
    values = [base.scores[i] for i in parts]
    return EvidenceVerdict("parts", label=decision, score=sum(values) / len(values))
