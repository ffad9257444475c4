"""The permutation probe's counts: the score-count table (the paper's Tables 5-6), its columns
and the column a score falls in; the flips per tuple; the failed calls per k."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgeprobe.core.evidence import parts_id
from judgeprobe.probes.concatenation.permutation_design import Judged, KTuple
from judgeprobe.probes.decisions import decide, is_flip
from judgeprobe.probes.failures import STATUSES, failure_cause, surviving_note
from judgeprobe.rubrics import NEUTRAL, Rubric
from judgeprobe.transforms.concat import DECREASING, INCREASING


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


def tuple_flips(
    rubric: Rubric, tuples: Sequence[KTuple], judged: Sequence[Mapping[str, Judged | None]]
) -> dict[str, bool]:
    """Per tuple judged ok in increasing and in decreasing order (by :func:`parts_id`), whether
    its decision flips between the two: the unit of ``positional_bias``."""
    flips: dict[str, bool] = {}
    for t, per_order in zip(tuples, judged, strict=True):
        a, b = per_order[INCREASING], per_order[DECREASING]
        if a is not None and b is not None:
            flips[parts_id(t.parts)] = is_flip(rubric, a.decision, b.decision)
    return flips


def status_rows(table: Mapping[str, object]) -> list[dict[str, int]]:
    """The verdict statuses per order of one k's table."""
    rows = table["statuses"]
    assert isinstance(rows, list)
    return rows


def order_failures(
    table: Mapping[str, object], judged: Sequence[Mapping[str, Judged | None]], k: int
) -> tuple[str | None, list[str]]:
    """The failed order calls of one k ("3 of 60 order calls failed ..."), and a note when the
    orders are compared on different surviving tuples."""
    rows = status_rows(table)
    tally = {status: sum(int(row[status]) for row in rows) for status in STATUSES}
    cause = failure_cause(tally, "order calls")
    if cause is None or not judged:
        return cause, []
    survivors = {o: sum(per[o] is not None for per in judged) for o in judged[0]}
    return cause, surviving_note(f"k={k}", survivors, len(judged), "tuple")
