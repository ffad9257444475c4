"""Specifications of the core vocabulary: rubrics, requests, verdicts, parsing, the run store."""

from __future__ import annotations

import asyncio
import math
import pathlib
import threading

import pytest

from judgeprobe import (
    CallableJudge,
    Engine,
    EngineConfig,
    Request,
    RunStore,
    Verdict,
    VerdictStatus,
)
from judgeprobe.core.verdict import check_score
from judgeprobe.errors import ConfigError, RubricError
from judgeprobe.judges import BaseJudge, InProcessJudge
from judgeprobe.judges.parsing import parse_label, verdict_from_distribution, verdict_from_text
from judgeprobe.rubrics import (
    DecisionRule,
    builtin_rubric,
    builtin_rubric_names,
    get_rubric,
    load_rubric,
)

HARM = builtin_rubric("harmfulness")
REFUSAL = builtin_rubric("refusal")
PREFERENCE = builtin_rubric("preference")
FIELDS = {"prompt": "How do I bake bread?", "response": "Knead, proof, bake."}


def test_builtin_rubrics_cover_scale_binary_pairwise_and_classifier_kinds() -> None:
    kinds = {builtin_rubric(name).kind for name in builtin_rubric_names()}
    assert {"scale", "binary", "pairwise", "continuous", "generation"} <= kinds


def test_the_papers_decision_rule_has_a_neutral_band_that_is_never_a_flip() -> None:
    rule = HARM.decision
    assert rule is not None
    assert [rule.decide(s) for s in (1, 2, 3, 4, 5)] == [
        "safe",
        "safe",
        "neutral",
        "unsafe",
        "unsafe",
    ]
    assert rule.is_flip("safe", "unsafe")
    assert not rule.is_flip("safe", "neutral")
    assert not rule.is_flip("unsafe", "unsafe")


def test_a_reward_models_rule_reads_lower_scores_as_unsafe() -> None:
    rule = builtin_rubric("reward").decision
    assert rule is not None
    assert rule.decide(-3.0) == "unsafe"
    assert rule.decide(4.0) == "safe"


def test_decision_rule_rejects_an_inverted_band() -> None:
    with pytest.raises(ValueError, match="negative_at"):
        DecisionRule(positive="bad", negative="good", positive_at=2, negative_at=4)


def test_rendering_inserts_data_verbatim_even_with_braces_and_placeholder_lookalikes() -> None:
    text = HARM.render({"prompt": "{response} {x}", "response": "}{"})
    assert "{response} {x}" in text
    assert "}{" in text


def test_rendering_without_a_needed_field_names_it() -> None:
    with pytest.raises(RubricError, match="response"):
        HARM.render({"prompt": "p"})


def test_a_template_that_drops_a_placeholder_is_rejected() -> None:
    with pytest.raises(ValueError, match="placeholder"):
        HARM.with_template("Rate this: {prompt}")


def test_rubric_hash_changes_with_the_template_and_not_with_the_description() -> None:
    reworded = HARM.with_template(HARM.template.replace("safety reviewer", "content reviewer"))
    redescribed = HARM.model_copy(update={"description": "another description"})
    assert reworded.hash != HARM.hash
    assert redescribed.hash == HARM.hash


def test_a_rubric_file_with_a_bad_key_names_file_and_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: x\nkind: scale\ntemplate: '{response}'\ninputs: [response]\nlabelz: [1]\n"
    )
    with pytest.raises(RubricError, match=r"bad\.yaml.*labelz"):
        load_rubric(path)


def test_get_rubric_accepts_a_name_a_path_or_a_rubric(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "mine.yaml"
    path.write_text(
        "name: mine\nkind: binary\ntemplate: 'Refusal? {response}'\ninputs: [response]\n"
        "labels: ['yes', 'no']\nvalues: {'yes': 1, 'no': 0}\n"
        "decision: {positive: refusal, positive_at: 1, negative: compliance, negative_at: 0}\n"
    )
    assert get_rubric(str(path)).name == "mine"
    by_name = get_rubric("refusal")  # a built-in name: that rubric, not another one
    assert (by_name.name, by_name.hash) == ("refusal", builtin_rubric("refusal").hash)
    assert get_rubric(REFUSAL) is REFUSAL
    with pytest.raises(RubricError, match="no built-in rubric"):
        get_rubric("no-such-rubric")


def test_request_key_depends_on_judge_rubric_fields_and_trial() -> None:
    base = Request.make("judge-1", HARM, FIELDS)
    assert base.key == Request.make("judge-1", HARM, dict(reversed(FIELDS.items()))).key
    others = [
        Request.make("judge-2", HARM, FIELDS),
        Request.make("judge-1", HARM.with_template(HARM.template + "\n"), FIELDS),
        Request.make("judge-1", HARM, {**FIELDS, "response": "other"}),
        Request.make("judge-1", HARM, FIELDS, trial=1),
    ]
    assert len({base.key, *(r.key for r in others)}) == 5


def test_request_keeps_only_the_rubrics_inputs() -> None:
    request = Request.make("j", builtin_rubric("toxicity"), FIELDS)
    assert request.field_map == {"response": FIELDS["response"]}


def test_only_an_ok_verdict_carries_a_score() -> None:
    with pytest.raises(ValueError, match="an ok verdict needs a score"):
        Verdict(VerdictStatus.OK)
    with pytest.raises(ValueError, match="a unparseable verdict must not carry a score"):
        Verdict(VerdictStatus.UNPARSEABLE, score=1.0)


@pytest.mark.parametrize(
    ("score", "reason"),
    [
        (math.inf, "score inf is not finite"),
        (-math.inf, "score -inf is not finite"),
        (math.nan, "score nan is not finite"),
        (7.0, "score 7 outside the rubric's range [1, 5]"),
        (0.5, "score 0.5 outside the rubric's range [1, 5]"),
        ("4", "score '4' is not a number"),
        (True, "score True is not a number"),
    ],
)
def test_a_score_that_is_not_finite_or_off_the_scale_is_unparseable_with_the_reason(
    score: object, reason: str
) -> None:
    verdict = check_score(Verdict(VerdictStatus.OK, score=score, raw_text="answer"), (1.0, 5.0))  # type: ignore[arg-type]
    assert (verdict.status, verdict.score, verdict.error) == (
        VerdictStatus.UNPARSEABLE,
        None,
        reason,
    )
    assert verdict.raw_text == "answer"


def test_a_score_on_the_scale_or_between_its_labels_stays_ok() -> None:
    for score in (1.0, 3.5, 5):
        verdict = check_score(Verdict(VerdictStatus.OK, score=score), HARM.score_range)
        assert verdict.ok and verdict.score == score and isinstance(verdict.score, float)
    assert check_score(Verdict.scored(1e9), None).ok  # no range: any finite number


def test_each_rubric_kind_has_the_score_range_its_verdicts_are_checked_against() -> None:
    assert HARM.score_range == (1.0, 5.0)
    assert REFUSAL.score_range == (0.0, 1.0)
    assert PREFERENCE.score_range == (0.0, 1.0)  # B, tie, A
    assert builtin_rubric("toxicity").score_range == (0.0, 1.0)
    assert builtin_rubric("generation").score_range is None  # a token count


@pytest.mark.parametrize("bad", [[5.0, 1.0], [0.0, math.inf], [math.nan, 1.0]])
def test_a_rubric_range_must_be_finite_and_ordered(bad: list[float]) -> None:
    data = builtin_rubric("toxicity").model_dump()
    with pytest.raises(ValueError, match="range must be two finite numbers, low <= high"):
        type(HARM).model_validate({**data, "range": bad})


async def test_the_engine_records_inf_nan_and_off_scale_scores_as_unparseable_never_ok(
    tmp_path: pathlib.Path,
) -> None:
    answers = {"inf": math.inf, "nan": math.nan, "seven": 7, "label": "9", "good": 4}

    def fn(request: Request) -> float | str:
        return answers[request.field_map["response"]]

    judge = CallableJudge(fn, name="wild")
    requests = [
        Request.make(judge.fingerprint, HARM, {"prompt": "p", "response": name}) for name in answers
    ]
    with RunStore(tmp_path / "run.sqlite") as store:
        result = await Engine(judge, store, EngineConfig(progress=False)).run(requests)
        stored = store.get_many([r.key for r in requests])
    by_name = {r.field_map["response"]: result.verdicts[r.key] for r in requests}
    assert {name: v.status.value for name, v in by_name.items()} == {
        "inf": "unparseable",
        "nan": "unparseable",
        "seven": "unparseable",
        "label": "unparseable",  # text without a label of the scale, as before
        "good": "ok",
    }
    assert by_name["inf"].error == "score inf is not finite"
    assert by_name["seven"].error == "score 7 outside the rubric's range [1, 5]"
    assert (result.stats.ok, result.stats.unparseable, result.stats.failed) == (1, 4, 0)
    assert {k: v.status for k, v in stored.items()} == {
        k: v.status for k, v in result.verdicts.items()
    }


@pytest.mark.parametrize(
    ("text", "label"),
    [("4", "4"), ("Score: 5 because", "5"), ("**2**", "2"), ("I think 3.", "3"), ("nine", None)],
)
def test_scale_labels_are_parsed_from_text_or_reported_missing(
    text: str, label: str | None
) -> None:
    assert parse_label(text, HARM) == label


def test_binary_labels_accept_yes_and_no() -> None:
    assert parse_label("Yes, it refuses.", REFUSAL) == "true"
    assert parse_label("FALSE", REFUSAL) == "false"


def test_unparseable_text_is_a_verdict_state_not_a_score() -> None:
    verdict = verdict_from_text("I cannot rate this.", HARM)
    assert verdict.status is VerdictStatus.UNPARSEABLE
    assert verdict.score is None


def test_trial_zero_takes_the_argmax_and_later_trials_sample_reproducibly() -> None:
    distribution = {"1": 0.5, "2": 0.0, "3": 0.0, "4": 0.0, "5": 0.5}
    first = verdict_from_distribution(distribution, HARM, key="k", trial=0)
    assert first.label == "1"
    assert first.meta["expected"] == pytest.approx(3.0)
    samples = [
        verdict_from_distribution(distribution, HARM, key="k", trial=t).label for t in range(1, 200)
    ]
    again = [
        verdict_from_distribution(distribution, HARM, key="k", trial=t).label for t in range(1, 200)
    ]
    assert samples == again
    assert 60 < samples.count("5") < 140


def test_pairwise_labels_score_a_as_one_and_b_as_zero() -> None:
    verdict = verdict_from_text("B", PREFERENCE)
    assert (verdict.label, verdict.score) == ("B", 0.0)


async def test_callable_judges_may_be_sync_or_async_and_return_labels_or_numbers() -> None:
    async def async_fn(request: Request) -> str:
        return "Score: 4"

    store = RunStore(":memory:")
    for fn, expected in ((lambda r: 2, 2.0), (async_fn, 4.0), (lambda r: "5", 5.0)):
        judge = CallableJudge(fn, name=f"fn-{expected}")
        keyed = Request.make(judge.fingerprint, HARM, FIELDS)
        result = await Engine(judge, store, EngineConfig(progress=False)).run([keyed])
        assert result.verdicts[keyed.key].score == expected


async def test_an_exception_in_a_judge_is_recorded_as_an_error_not_raised() -> None:
    def broken(request: Request) -> float:
        raise RuntimeError("boom")

    judge = CallableJudge(broken, name="broken")
    request = Request.make(judge.fingerprint, HARM, FIELDS)
    result = await Engine(judge, RunStore(":memory:"), EngineConfig(progress=False)).run([request])
    verdict = result.verdicts[request.key]
    assert verdict.status is VerdictStatus.ERROR
    assert "boom" in (verdict.error or "")
    assert result.stats.failed == 1


def test_the_run_store_round_trips_every_verdict_field(tmp_path) -> None:  # type: ignore[no-untyped-def]
    request = Request.make("j", HARM, FIELDS, trial=2)
    verdict = Verdict.scored(
        4.0,
        label="4",
        distribution={"4": 0.9, "5": 0.1},
        raw_text="4",
        key=request.key,
        trial=2,
        latency_s=0.5,
        prompt_tokens=10,
        completion_tokens=1,
        attempts=2,
        meta={"label_mass": 0.7},
    )
    path = tmp_path / "run.sqlite"
    with RunStore(path) as store:
        store.put(request, verdict)
    with RunStore(path) as store:
        assert store.get(request.key) == verdict
        assert store.count() == 1


def test_the_run_store_lists_each_verdict_with_the_request_it_answers() -> None:
    store = RunStore(":memory:")
    requests = [Request.make("j", HARM, FIELDS, trial=t) for t in (0, 1)]
    for request in requests:
        store.put(request, Verdict.scored(float(request.trial + 1), key=request.key))
    listed = list(store.iter_verdicts())
    assert [record["key"] for record, _ in listed] == [r.key for r in requests]
    record, verdict = listed[1]
    assert record == {
        "key": requests[1].key,
        "judge": "j",
        "rubric": HARM.hash,
        "trial": 1,
        "fields": FIELDS,
    }
    assert verdict.score == 2.0


class _SlowJudge(BaseJudge):
    backend = "slow"

    def __init__(self, in_process: bool) -> None:
        self.in_process = in_process

    def describe(self) -> dict[str, object]:
        return {"backend": self.backend, "in_process": self.in_process}

    async def judge(self, request: Request) -> Verdict:
        await asyncio.sleep(0.3)
        return Verdict.scored(1.0)


@pytest.mark.parametrize(("in_process", "status"), [(False, "error"), (True, "ok")])
async def test_the_call_timeout_spares_in_process_models_that_a_thread_cannot_stop(
    in_process: bool, status: str
) -> None:
    judge = _SlowJudge(in_process)
    config = EngineConfig(progress=False, timeout_s=0.05, max_retries=0)
    request = Request.make(judge.fingerprint, HARM, FIELDS)
    result = await Engine(judge, RunStore(":memory:"), config).run([request])
    assert result.verdicts[request.key].status.value == status


class _ThreadRecordingJudge(InProcessJudge):
    """Scores every request 1 and notes the thread its model code ran on."""

    backend = "thread-recorder"

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []

    def _score(self, requests: list[Request]) -> list[Verdict]:
        self.threads.append(threading.current_thread())
        return [Verdict.scored(1.0) for _ in requests]

    async def judge(self, request: Request) -> Verdict:
        return (await self.run_in_model_thread(self._score, [request]))[0]


def test_an_in_process_judge_runs_its_model_on_one_thread_across_runs_and_event_loops() -> None:
    judge = _ThreadRecordingJudge()
    for trial in range(3):  # every run_sync starts a new event loop
        requests = [Request.make(judge.fingerprint, HARM, FIELDS, trial=trial)]
        result = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False)).run_sync(
            requests
        )
        assert result.stats.ok == 1
    first, *others = judge.threads
    assert len(others) == 2 and all(thread is first for thread in others)
    assert first is not threading.current_thread()


async def test_closing_an_in_process_judge_stops_its_thread_and_a_later_call_starts_another() -> (
    None
):
    judge = _ThreadRecordingJudge()
    request = Request.make(judge.fingerprint, HARM, FIELDS)
    await judge.judge(request)
    await judge.aclose()
    first = judge.threads[0]
    first.join(timeout=10)
    assert not first.is_alive()
    await judge.judge(request)
    await judge.aclose()
    assert judge.threads[1] is not first


def test_scoring_a_dataset_gives_one_row_per_item_and_trial_and_writes_csv(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from judgeprobe.data import load_dataset
    from judgeprobe.runs.scoring import score_items_sync

    items = load_dataset("demo").items[:5]
    judge = CallableJudge(lambda request: 5 if "bomb" in request.render() else 1, name="kw")
    engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))
    result = score_items_sync(items, engine, HARM, trials=2)
    assert [(row.item.id, row.trial) for row in result.rows] == [
        (item.id, trial) for item in items for trial in (0, 1)
    ]
    assert result.stats.ok == 10
    for row in result.rows:
        record = row.to_dict()
        assert record["decision"] == {5.0: "unsafe", 1.0: "safe"}[record["score"]]
    written = result.write(tmp_path / "verdicts.csv").read_text().splitlines()
    assert written[0].startswith("item_id,trial,status,score") and len(written) == 11
    with pytest.raises(ConfigError, match="does not have"):
        score_items_sync(items, engine, PREFERENCE)


def test_scoring_decides_a_pairwise_verdict_by_the_rubrics_one_rule() -> None:
    """A pairwise score without a label is decided as the probes decide it (above 0.5 is A)."""
    from judgeprobe.data.items import PairwiseItem
    from judgeprobe.runs.scoring import score_items_sync

    items = [PairwiseItem(f"p{k}", "Which is kinder?", f"yes {k}", f"no {k}") for k in range(3)]
    scores = {"yes 0": 0.8, "yes 1": 0.2, "yes 2": 0.5}
    judge = CallableJudge(lambda request: scores[request.field_map["response_a"]], name="prob")
    engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))
    records = score_items_sync(items, engine, PREFERENCE).to_records()
    assert [(r["label"], r["decision"]) for r in records] == [
        (None, "A"),
        (None, "B"),
        (None, "tie"),
    ]
