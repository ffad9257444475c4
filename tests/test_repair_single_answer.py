"""Single-answer grading and chained repairs.

``single_answer`` grades each response of a pair alone on a pointwise rubric, so a judge that
always names the first-shown response in a comparison loses its position bias while keeping
what its grades say. Chained after it, ``length_controlled`` removes a grader's taste for
length. A chain counts every call to the judge under repair.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from judgeprobe.audit.config import parse_config
from judgeprobe.audit.repair import run_repair_audit
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import PairwiseItem
from judgeprobe.errors import ConfigError, FatalJudgeError
from judgeprobe.judges import CallableJudge
from judgeprobe.judges.repairs import (
    INNER_CALLS,
    LengthControlledJudge,
    SingleAnswerJudge,
    build_repair,
    target_of,
)
from judgeprobe.probes.pairwise.length_null import LengthNullProbe
from judgeprobe.probes.pairwise.position import PositionProbe
from test_repair import FAST, HARM, PREFERENCE, estimate, judged, pairs, run, tag, write_pairs

FIELDS = {"prompt": "p", "response_a": "short", "response_b": "a much longer answer"}


def first_or_honest(items: Sequence[PairwiseItem]) -> Callable[[Request], float | str]:
    """Answers "A" to every comparison, but grades a response alone by what it says: 5 for the
    humans' choice, 2 for the other."""
    better = {tag(i.response_a if i.human_majority() == "A" else i.response_b) for i in items}

    def judge(request: Request) -> float | str:
        if request.rubric.kind == "pairwise":
            return "A"
        return 5.0 if tag(request.field_map["response"]) in better else 2.0

    return judge


def length_grader(request: Request) -> float:
    """Grades a response alone by its length alone (1 to 5)."""
    return min(5.0, 1.0 + len(request.field_map["response"]) / 100)


def test_single_answer_removes_the_position_bias_of_an_always_first_judge() -> None:
    items = pairs(40)
    judge = CallableJudge(first_or_honest(items), name="first")
    before = run(PositionProbe(), items, judge, PREFERENCE)
    after = run(PositionProbe(), items, SingleAnswerJudge(judge), PREFERENCE)
    assert estimate(before, "position_consistency") == 0.0
    assert estimate(before, "swap_flip_rate") == 1.0
    assert estimate(after, "position_consistency") == 1.0
    assert estimate(after, "swap_flip_rate") == 0.0
    assert estimate(after, "first_position_bias") == 0.0


def test_swapping_the_pair_mirrors_a_single_answer_verdict_exactly() -> None:
    repaired = SingleAnswerJudge(CallableJudge(length_grader, name="len"))
    swapped = {**FIELDS, "response_a": FIELDS["response_b"], "response_b": FIELDS["response_a"]}
    forward = judged(repaired, Request.make(repaired.fingerprint, PREFERENCE, FIELDS))
    backward = judged(repaired, Request.make(repaired.fingerprint, PREFERENCE, swapped))
    assert (forward.label, backward.label) == ("B", "A")
    assert forward.meta["grades"] == list(reversed(backward.meta["grades"]))
    assert forward.meta[INNER_CALLS] == 2


def test_grades_within_the_margin_are_a_tie() -> None:
    inner = CallableJudge(length_grader, name="len")
    wide = SingleAnswerJudge(inner, margin=1.0)
    narrow = SingleAnswerJudge(inner, margin=0.1)
    assert judged(wide, Request.make(wide.fingerprint, PREFERENCE, FIELDS)).label == "tie"
    assert judged(narrow, Request.make(narrow.fingerprint, PREFERENCE, FIELDS)).label == "B"


def test_a_rubric_whose_high_end_is_bad_prefers_the_lower_grade() -> None:
    inner = CallableJudge(length_grader, name="len")
    lower = SingleAnswerJudge(inner, prefer="lower")
    assert judged(lower, Request.make(lower.fingerprint, PREFERENCE, FIELDS)).label == "A"
    assert lower.fingerprint != SingleAnswerJudge(inner).fingerprint
    with pytest.raises(ConfigError, match="prefer must be 'higher' or 'lower'"):
        SingleAnswerJudge(inner, prefer="longer")  # type: ignore[arg-type]


def test_the_expected_grade_breaks_ties_of_the_most_probable_label() -> None:
    def leaning(request: Request) -> Verdict:
        # both responses get the label 3; the longer one leans toward 4
        expected = 3.4 if len(request.field_map["response"]) > 10 else 3.1
        return Verdict.scored(3.0, label="3", meta={"expected": expected})

    inner = CallableJudge(leaning, name="lean")
    by_expectation = SingleAnswerJudge(inner)
    by_label = SingleAnswerJudge(inner, expected=False)
    request = Request.make(by_expectation.fingerprint, PREFERENCE, FIELDS)
    assert judged(by_expectation, request).label == "B"
    request = Request.make(by_label.fingerprint, PREFERENCE, FIELDS)
    assert judged(by_label, request).label == "tie"


def length_then_content(items: Sequence[PairwiseItem]) -> Callable[[Request], float]:
    """Grades a response alone (1 to 5) mostly by its length, a little by what it says (half a
    grade for the humans' choice): of two responses of equal length, the humans' choice wins."""
    better = {tag(i.response_a if i.human_majority() == "A" else i.response_b) for i in items}

    def judge(request: Request) -> float:
        response = request.field_map["response"]
        return min(4.5, 1 + len(response) / 100) + (0.5 if tag(response) in better else 0.0)

    return judge


def test_a_length_grader_fails_the_length_null_and_the_chained_length_control_removes_it() -> None:
    items = pairs(40)
    probe = LengthNullProbe(n_resamples=FAST)
    grader = CallableJudge(length_then_content(items), name="len")
    single = run(probe, items, build_repair("single_answer", grader), PREFERENCE)
    chained = run(probe, items, build_repair("single_answer+length_controlled", grader), PREFERENCE)
    assert estimate(single, "null_judge_agreement", unit="chars") == 1.0
    assert estimate(single, "judge_human_majority_agreement") < 0.7
    # cut to the same length, the grades differ by content only: the humans' choice wins
    assert estimate(chained, "null_judge_agreement", unit="chars") < 0.7
    assert estimate(chained, "judge_human_majority_agreement") == 1.0


def test_a_chain_counts_every_call_to_the_judge_under_repair() -> None:
    inner = CallableJudge(length_grader, name="len")
    chained = build_repair("single_answer+length_controlled", inner)
    assert isinstance(chained, LengthControlledJudge)
    assert isinstance(chained.inner, SingleAnswerJudge)
    verdict = judged(chained, Request.make(chained.fingerprint, PREFERENCE, FIELDS))
    assert verdict.meta[INNER_CALLS] == 2
    assert verdict.label == "tie"  # cut to five characters each, the grades are equal
    assert target_of("single_answer+length_controlled") == "length_null"
    assert target_of("single_answer") == "position"
    assert len({chained.fingerprint, chained.inner.fingerprint, inner.fingerprint}) == 3


def test_a_chains_options_are_keyed_by_its_parts() -> None:
    inner = CallableJudge(length_grader, name="len")
    chained = build_repair(
        "single_answer+length_controlled",
        inner,
        {"single_answer": {"margin": 0.5}, "length_controlled": {"at_words": True}},
    )
    assert isinstance(chained, LengthControlledJudge) and chained.at_words
    assert isinstance(chained.inner, SingleAnswerJudge) and chained.inner.margin == 0.5
    with pytest.raises(ConfigError, match=r"a chain's options are keyed by its parts"):
        parse_config(
            {"probes": ["position"], "repair": {"single_answer+length_controlled": {"margin": 1}}}
        )
    with pytest.raises(ConfigError, match=r"unknown repair 'single_answer\+median'"):
        parse_config({"probes": ["position"], "repair": ["single_answer+median"]})


def test_single_answer_needs_a_pointwise_rubric_with_a_response_to_grade() -> None:
    inner = CallableJudge(length_grader, name="len")
    with pytest.raises(ConfigError, match="'preference' is pairwise; give a pointwise one"):
        SingleAnswerJudge(inner, rubric="preference")
    with pytest.raises(ConfigError, match="margin must be >= 0"):
        SingleAnswerJudge(inner, margin=-1)
    harm = SingleAnswerJudge(inner, rubric="harmfulness")
    assert harm.fingerprint != SingleAnswerJudge(inner).fingerprint


@pytest.mark.llm
def test_the_embedded_judge_graded_alone_names_the_same_response_in_both_orders() -> None:
    """Gemma 3 270M answers "A" to every comparison; graded alone, its verdict on a pair and on
    the swapped pair name the same response, exactly (its grades do not depend on which
    response it read before)."""
    from judgeprobe.data import load_dataset
    from judgeprobe.judges.llama import LlamaJudge

    items = [i for i in load_dataset("demo:pairwise").items if isinstance(i, PairwiseItem)][:6]
    judge = LlamaJudge(n_ctx=1024)
    before = run(PositionProbe(), items, judge, PREFERENCE)
    after = run(PositionProbe(), items, SingleAnswerJudge(judge), PREFERENCE)
    assert estimate(before, "first_position_share") == 1.0
    assert estimate(after, "position_consistency") == 1.0
    assert estimate(after, "swap_flip_rate") == 0.0


@pytest.mark.parametrize("name", ["swap_average", "length_controlled", "single_answer"])
def test_a_repair_that_reads_both_responses_refuses_a_pointwise_request(name: str) -> None:
    repaired = build_repair(name, CallableJudge(length_grader, name="len"))
    request = Request.make(repaired.fingerprint, HARM, {"prompt": "p", "response": "r"})
    with pytest.raises(
        FatalJudgeError, match=f"repair {name} needs a pairwise rubric, not the scale rubric"
    ):
        judged(repaired, request)


def test_an_audit_repairs_with_a_plain_and_a_chained_repair_side_by_side(tmp_path: Path) -> None:
    items = pairs(40)
    config = parse_config(
        {
            "rubric": "preference",
            "data": str(write_pairs(tmp_path / "pairs.jsonl", items)),
            "data_options": {"kind": "pairwise"},
            "out": str(tmp_path / "out"),
            "probes": {"position": {}, "length_null": {"n_resamples": FAST}},
            "repair": ["single_answer", "single_answer+length_controlled"],
            "seed": 0,
            "fail_on": "never",
        }
    )
    judge = CallableJudge(first_or_honest(items), name="first", version="1")
    summary = run_repair_audit(config, judge=judge, progress=False).summary
    single, chained = summary["repairs"]
    assert (single["repair"], single["target_probe"]) == ("single_answer", "position")
    assert (chained["repair"], chained["target_probe"]) == (
        "single_answer+length_controlled",
        "length_null",
    )
    assert single["cost_multiplier"] == chained["cost_multiplier"] == 2.0
    consistency = next(
        r for r in single["target_findings"] if r["finding"] == "position_consistency"
    )
    assert (consistency["before"]["estimate"], consistency["after"]["estimate"]) == (0.0, 1.0)
    assert consistency["word"] == "changed"  # derived from the swap flip rate, information
    flips = next(r for r in single["target_findings"] if r["finding"] == "swap_flip_rate")
    assert (flips["before"]["estimate"], flips["after"]["estimate"], flips["word"]) == (
        1.0,
        0.0,
        "better",
    )
    assert (tmp_path / "out" / "repair-single_answer+length_controlled" / "card.md").is_file()
