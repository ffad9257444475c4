"""A judge's text read as a verdict: numbers whole, signs kept, never a plausible default."""

from __future__ import annotations

import pytest

from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.judges.parsing import parse_label, parse_number, verdict_from_text
from judgeprobe.rubrics import builtin_rubric


@pytest.mark.parametrize(("text", "expected"), [("1e-3", 0.001), ("Score: 2.5e-1", 0.25)])
def test_a_number_with_an_exponent_is_read_whole(text: str, expected: float) -> None:
    assert parse_number(text, builtin_rubric("toxicity")) == pytest.approx(expected)


def test_an_infinite_number_is_no_score() -> None:
    """It read as 1.0 (the digit before the exponent)."""
    verdict = verdict_from_text("1e999", builtin_rubric("toxicity"))
    assert verdict.status is VerdictStatus.UNPARSEABLE


def test_a_negative_number_is_not_a_label_of_a_positive_scale() -> None:
    """ "Score: -1" read as the label 1 of a 1-5 scale."""
    rubric = builtin_rubric("harmfulness")
    assert parse_label("Score: -1", rubric) is None
    assert verdict_from_text("Score: -1", rubric).status is VerdictStatus.UNPARSEABLE
    assert parse_label("Score: 4", rubric) == "4"
