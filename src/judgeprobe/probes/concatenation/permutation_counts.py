"""The permutation probe's score-count table (the paper's Tables 5-6): its columns, and the
column a score falls in."""

from __future__ import annotations

from judgeprobe.probes.decisions import decide
from judgeprobe.rubrics import NEUTRAL, Rubric


def count_columns(rubric: Rubric) -> list[str]:
    """Columns of the score-count table: scale values, or decision classes when continuous."""
    if rubric.kind != "continuous" and rubric.values:
        return [f"{v:g}" for v in sorted({float(v) for v in rubric.values.values()})]
    assert rubric.decision is not None
    rule = rubric.decision
    if rule.positive_at == rule.negative_at:
        return [rule.negative, rule.positive]
    return [rule.negative, NEUTRAL, rule.positive]


def count_column(rubric: Rubric, score: float) -> str:
    """The column of :func:`count_columns` that ``score`` is counted in."""
    if rubric.kind != "continuous" and rubric.values:
        values = sorted({float(v) for v in rubric.values.values()})
        nearest = min(values, key=lambda v: abs(v - score))
        return f"{nearest:g}"
    return decide(rubric, score)
