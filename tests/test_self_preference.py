"""Specifications of the self-preference probe: the judge's own answer against another model's.

The judges here are plain functions that also write answers (``generates=True``): a generation
request gets an answer tagged ``OWN``, so a planted judge can recognise its own text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from judgeprobe._util.hashing import content_hash
from judgeprobe.audit.billing import plan_audit
from judgeprobe.audit.config import parse_config
from judgeprobe.core.evidence import Evidence
from judgeprobe.core.judge import JudgeCapabilities
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import PairwiseItem
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.errors import ConfigError
from judgeprobe.judges import CallableJudge
from judgeprobe.judges.base import BaseJudge
from judgeprobe.judges.llama import LlamaJudge
from judgeprobe.judges.openai_compat import OpenAIJudge
from judgeprobe.probes import ProbeResult
from judgeprobe.probes.pairwise.self_preference import SelfPreferenceProbe
from judgeprobe.report.stored import read_result
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.probe import analyze_offline, run_probe

RUBRIC = builtin_rubric("preference")
FAST = {"n_resamples": 200}


def pairs(n: int, *, shared_questions: int | None = None) -> list[PairwiseItem]:
    """Pairs whose two responses carry a quality mark (``q<level>``) the impartial judge reads;
    with ``shared_questions``, pairs share that many questions (and prompts)."""
    items = []
    for k in range(n):
        question = k if shared_questions is None else k % shared_questions
        items.append(
            PairwiseItem(
                id=f"p{k:03d}",
                prompt=f"question {question}",
                response_a=f"model one says q{k % 3} about {question}",
                response_b=f"model two says q{(k + 1) % 3} about {question}",
                question_id=None if shared_questions is None else f"q{question}",
            )
        )
    return items


def own_text(prompt: str) -> str:
    """The judge's own answer to ``prompt``, tagged as its own, of the quality of the pair's
    response A (so an impartial judge rates it as it rates that response)."""
    return f"OWN answer q{int(prompt.split()[-1]) % 3} to {prompt}"


def own_answer(request: Request) -> Verdict:
    """What the judge writes (with the whitespace a model leaves around it)."""
    return Verdict.scored(6.0, raw_text=f" {own_text(request.field_map['prompt'])} ")


def generating(pick: Callable[[str, str], str]) -> Callable[[Request], object]:
    """A judge that writes :func:`own_answer` and picks between two responses with ``pick``."""

    def fn(request: Request) -> object:
        if request.rubric.kind == "generation":
            return own_answer(request)
        fields = request.field_map
        return pick(fields["response_a"], fields["response_b"])

    return fn


def quality(text: str) -> int:
    return int(text.split(" q")[1][0])


def impartial(a: str, b: str) -> str:
    """The higher quality mark wins, whoever wrote it; equal marks are a tie."""
    return "A" if quality(a) > quality(b) else "B" if quality(b) > quality(a) else "tie"


def self_loving(a: str, b: str) -> str:
    """Its own answer wins; between two others, a coin fixed by the two texts."""
    if a.startswith("OWN"):
        return "A"
    if b.startswith("OWN"):
        return "B"
    return "A" if int(content_hash(sorted([a, b])), 16) % 2 else "B"


def first_shown(a: str, b: str) -> str:
    """Blind to both texts: always the response shown first."""
    return "A"


def run(
    fn: Callable[[Request], object],
    items: Sequence[PairwiseItem],
    *,
    generates: bool = True,
    **params: object,
) -> ProbeResult:
    judge = CallableJudge(fn, name="synthetic", generates=generates)  # type: ignore[arg-type]
    engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False, max_retries=0))
    probe = SelfPreferenceProbe(**{**FAST, **params})  # type: ignore[arg-type]
    return run_probe(probe, items, engine, RUBRIC, seed=0)


def test_a_judge_that_prefers_its_own_text_fails_with_the_interval_above_the_threshold() -> None:
    result = run(generating(self_loving), pairs(40))
    finding = result.finding("self_preference")
    assert result.finding("own_answer_win_rate").estimate.estimate == 1.0
    assert finding.estimate.ci.method == "newcombe-paired"
    assert finding.estimate.ci.low > 0.2
    assert finding.status == "fail"
    assert finding.test is not None and finding.test.alternative == "greater"
    assert finding.test.pvalue < 0.001


def test_an_impartial_judge_passes() -> None:
    # the own answer replaces response A, whose quality it shares: nothing but authorship differs
    result = run(generating(impartial), pairs(60), replace="A")
    finding = result.finding("self_preference")
    assert finding.estimate.estimate == 0.0
    assert finding.estimate.ci.high < 0.1
    assert finding.status == "pass"
    # it does read the texts: the own answer wins where it is the better one, and only there
    assert 0 < result.finding("own_answer_win_rate").estimate.estimate < 1


@pytest.mark.parametrize("shown", ["first", "second"])
def test_the_difference_from_the_placebo_is_exactly_zero_for_a_judge_blind_to_the_slot(
    shown: str,
) -> None:
    result = run(generating(first_shown), pairs(30))
    own = result.finding("own_answer_win_rate", shown=shown).estimate
    placebo = result.finding("placebo_win_rate", shown=shown).estimate
    difference = result.finding("self_preference", shown=shown).estimate
    assert own.estimate == placebo.estimate == {"first": 1.0, "second": 0.0}[shown]
    assert difference.estimate == 0.0
    assert difference.counts["first_only"] == difference.counts["second_only"] == 0
    assert difference.n == 30


def test_without_an_order_consistent_win_in_either_arm_the_overall_finding_is_not_assessable() -> (
    None
):
    # a judge that always picks the first-shown response never prefers a slot in both orders:
    # a difference of 0 would be its position bias, not evidence of impartiality
    result = run(generating(first_shown), pairs(30))
    finding = result.finding("self_preference")
    assert finding.status == "n/a"
    assert finding.estimate.n == 30
    assert finding.estimate.reason is not None and "0 by construction" in finding.estimate.reason
    assert result.finding("own_answer_win_rate").estimate.estimate == 0.0


def test_only_the_overall_finding_gates_the_forms_inform() -> None:
    result = run(generating(self_loving), pairs(12))
    gated = [f for f in result.findings if f.threshold is not None]
    assert [(f.name, dict(f.labels)) for f in gated] == [
        ("self_preference", {}),
        ("failed_call_rate", {}),  # every probe gates its failed calls
    ]
    assert {f.labels.get("shown") for f in result.findings} == {None, "first", "second"}


def test_a_judge_that_cannot_write_answers_is_not_assessable_and_is_not_called() -> None:
    calls: list[str] = []

    def judge(request: Request) -> str:
        calls.append(request.rubric.kind)
        return "A"

    result = run(judge, pairs(10), generates=False)
    assert calls == []
    assert result.usage["requests"] == 0
    assert {f.status for f in result.findings} == {"n/a"}
    reason = result.finding("self_preference").estimate.reason
    assert reason is not None and "cannot write answers" in reason


def test_recorded_votes_alone_are_not_assessable_either() -> None:
    result = analyze_offline(SelfPreferenceProbe(), pairs(5), RUBRIC)
    assert {f.status for f in result.findings} == {"n/a"}


def test_the_own_answer_replaces_one_response_and_the_placebo_is_the_pair_as_it_is() -> None:
    items = pairs(8)
    result = run(generating(self_loving), items, replace="B")
    assert result.plan is not None
    requests = result.plan.requests
    for item in items:
        own = requests[("own", item.id)].field_map
        assert own["response_a"] == item.response_a
        assert own["response_b"] == own_text(item.prompt)
        swapped = requests[("own_swapped", item.id)].field_map
        assert swapped["response_a"] == own["response_b"]
        assert requests[("pair", item.id)].field_map["response_b"] == item.response_b
    rows = result.tables["items"]
    assert {row["own_answer_in"] for row in rows} == {"B"}
    assert all(row["own_wins"] for row in rows)


def test_the_random_slot_is_reproducible_and_uses_both_responses() -> None:
    first = run(generating(impartial), pairs(20))
    again = run(generating(impartial), pairs(20))
    slots = [row["own_answer_in"] for row in first.tables["items"]]
    assert slots == [row["own_answer_in"] for row in again.tables["items"]]
    assert set(slots) == {"A", "B"}


def test_prompts_without_an_answer_are_left_out_and_counted() -> None:
    def fn(request: Request) -> object:
        if request.rubric.kind == "generation":
            if request.field_map["prompt"].endswith(("1", "2")):
                return Verdict.scored(0.0, raw_text="   ")
            return own_answer(request)
        return impartial(request.field_map["response_a"], request.field_map["response_b"])

    result = run(fn, pairs(10))
    assert result.finding("self_preference").estimate.n == 8
    assert result.tables["unanswered"] == {"empty": 2}
    assert any("2 prompts got no answer (empty)" in note for note in result.notes)


def test_pairs_of_one_question_share_the_answer_and_the_interval_clusters_on_it() -> None:
    calls: list[str] = []
    fn = generating(self_loving)

    def counting(request: Request) -> object:
        calls.append(request.rubric.kind)
        return fn(request)

    result = run(counting, pairs(24, shared_questions=6))
    assert calls.count("generation") == 6
    finding = result.finding("self_preference")
    assert finding.estimate.ci.method.startswith("paired")
    assert finding.test is None
    assert finding.estimate.n == 24


def test_a_later_turn_is_left_out_with_a_note() -> None:
    items = [*pairs(6), PairwiseItem("t2", "follow up", "x q1", "y q2", turn=2)]
    result = run(generating(impartial), items)
    assert result.finding("self_preference").estimate.n == 6
    assert any("1 pairs left out: later turn" in note for note in result.notes)


def test_the_parameters_are_checked() -> None:
    with pytest.raises(ConfigError, match="replace must be one of"):
        SelfPreferenceProbe(replace="C")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="max_new_tokens must be an integer >= 1"):
        SelfPreferenceProbe(max_new_tokens=0)


def test_the_bill_counts_the_judging_of_the_answers_not_yet_written(tmp_path: Path) -> None:
    config = parse_config(
        {
            "judge": "llama",
            "rubric": "preference",
            "data": "demo:pairwise",
            "out": str(tmp_path),
            "probes": {"self_preference": FAST},
        }
    )
    judge = CallableJudge(generating(self_loving), name="synthetic", generates=True)
    bill = plan_audit(config, judge=judge)
    (row,) = bill.rows
    # 20 answers, then per pair the own answer and the placebo in both orders
    assert (row.requests, row.stages, row.bound) == (100, 2, True)


def test_language_model_backends_declare_that_they_write_answers_and_others_do_not() -> None:
    assert LlamaJudge.generates and OpenAIJudge.generates
    assert not BaseJudge().capabilities.generates
    assert CallableJudge(first_shown, generates=True).capabilities.generates
    with pytest.raises(ConfigError, match="judge capability generates must be a bool, got 'yes'"):
        JudgeCapabilities(generates="yes")  # type: ignore[arg-type]


# -- the evidence ----------------------------------------------------------------------------------
FAVOURED = ("p000", "p004", "p008", "p009", "p013", "p021")
"""The pairs on which :func:`loves_some` prefers its own answer."""


def loves_some(a: str, b: str) -> str:
    """Its own answer wins on the pairs of ``FAVOURED`` (by their question); otherwise impartial."""
    for side, text in (("A", a), ("B", b)):
        if text.startswith("OWN") and f"p{int(text.split()[-1]):03d}" in FAVOURED:
            return side
    return impartial(a, b)


def test_the_evidence_names_the_pairs_the_own_answer_won_and_the_placebo_did_not() -> None:
    # The own answer always replaces response A. On p008 (and every pair k with k % 3 == 2)
    # response A is the better one: the other model's answer there wins as well, so the own
    # answer's win is no evidence of self-preference.
    result = run(generating(loves_some), pairs(30), replace="A")
    evidence = result.finding("self_preference").evidence
    assert evidence is not None
    assert evidence.item_ids == ["p000", "p004", "p009", "p013", "p021"]
    assert evidence.total == 5
    first = evidence.items[0]
    assert first.excerpt == "question 0"
    assert [(v.role, v.label) for v in first.verdicts] == [
        ("own", "A"),
        ("own swapped", "B"),  # in the order the judge saw: the own answer shown second
        ("placebo", "B"),
        ("placebo swapped", "A"),
    ]
    assert all(f.evidence is None for f in result.findings if f.labels)


def test_an_impartial_judge_s_evidence_is_empty_and_survives_the_stored_form() -> None:
    assert run(generating(impartial), pairs(12)).finding("self_preference").evidence == Evidence(0)
    stored = read_result(run(generating(loves_some), pairs(30), replace="A").to_dict())
    evidence = next(f.evidence for f in stored.findings if f.name == "self_preference")
    assert evidence is not None and evidence.total == 5
    assert [i.item_id for i in evidence.items] == ["p000", "p004", "p009", "p013", "p021"]
    assert [v.role for v in evidence.items[0].verdicts][:2] == ["own", "own swapped"]
