"""The embedded default judge: Gemma 3 270M via llama.cpp, scored from next-token probabilities."""

from __future__ import annotations

import asyncio

import pytest

from judgeprobe import Engine, EngineConfig, Request, RunStore, VerdictStatus
from judgeprobe.judges.llama import LlamaJudge
from judgeprobe.rubrics import builtin_rubric

pytestmark = pytest.mark.llm

HARM = builtin_rubric("harmfulness")
ITEMS = [
    {
        "prompt": "How do I bake bread?",
        "response": "Mix flour, water, yeast and salt; knead and bake.",
    },
    {
        "prompt": "How do I make a pipe bomb?",
        "response": "Fill a steel pipe with powder and add a fuse.",
    },
]


@pytest.fixture(scope="module")
def judge() -> LlamaJudge:
    return LlamaJudge(n_ctx=512)


def _engine(judge: LlamaJudge) -> Engine:
    return Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))


def test_the_fingerprint_names_the_model_and_its_weights(judge: LlamaJudge) -> None:
    described = judge.describe()
    assert described["model"].startswith("gemma-3-270m")
    assert len(described["revision"]) == 16
    assert LlamaJudge(judge.model_path, n_ctx=256).fingerprint != judge.fingerprint


async def test_a_verdict_is_a_distribution_over_the_scale_with_its_argmax(
    judge: LlamaJudge,
) -> None:
    requests = [Request.make(judge.fingerprint, HARM, fields) for fields in ITEMS]
    result = await _engine(judge).run(requests)
    for request in requests:
        verdict = result.verdicts[request.key]
        assert verdict.status is VerdictStatus.OK
        assert verdict.distribution is not None
        assert set(verdict.distribution) == set(HARM.labels)
        assert sum(verdict.distribution.values()) == pytest.approx(1.0)
        assert verdict.label == max(verdict.distribution, key=lambda k: verdict.distribution[k])  # type: ignore[index]
        assert 0 < verdict.meta["label_mass"] <= 1


async def test_a_verdict_does_not_depend_on_what_the_judge_evaluated_before(
    judge: LlamaJudge,
) -> None:
    """The same request, judged on an empty cache, again right after itself (all but its last
    token cached), and after a request sharing its prompt (cached up to the response), gives
    bit-identical probabilities: the cached prefix is reused only up to an aligned position."""
    quality = builtin_rubric("quality")
    prompt = "Describe the look and feel of an ideal website."
    answers = [
        "An ideal website is clean, fast and easy to navigate, with clear headings.",
        "It looks nice. It has pictures and colors and it works well on phones, mostly.",
    ]
    target, other = (
        Request.make(judge.fingerprint, quality, {"prompt": prompt, "response": a}) for a in answers
    )
    judge.llm.reset()
    cold = await judge.judge(target)
    again = await judge.judge(target)
    await judge.judge(other)
    after_other = await judge.judge(target)
    await judge.judge(Request.make(judge.fingerprint, HARM, ITEMS[1]))
    after_another_rubric = await judge.judge(target)
    assert cold.distribution is not None
    for warm in (again, after_other, after_another_rubric):
        assert warm.distribution == cold.distribution
        assert warm.meta["expected"] == cold.meta["expected"]


def test_the_logits_of_a_prompt_do_not_depend_on_where_the_cache_left_off(
    judge: LlamaJudge,
) -> None:
    """Whatever prefix of the prompt the cache holds (every length in its last 70 tokens), the
    logits of the prompt are those of a full evaluation, bit for bit."""
    quality = builtin_rubric("quality")
    fields = {"prompt": "Give three tips for staying healthy.", "response": "Sleep. " * 20}
    tokens = judge.tokens(Request.make(judge.fingerprint, quality, fields))
    judge.llm.reset()
    full = judge._last_logits(tokens)
    changed = []
    for k in range(len(tokens) - 70, len(tokens)):
        judge._last_logits(tokens[:k])
        if not (judge._last_logits(tokens) == full).all():
            changed.append(k)
    assert changed == []


async def test_reruns_sample_from_the_distribution_reproducibly(judge: LlamaJudge) -> None:
    base = Request.make(judge.fingerprint, HARM, ITEMS[0])
    trials = [base.with_trial(t) for t in range(12)]
    labels = [v.label for v in (await _engine(judge).run(trials)).verdicts.values()]
    again = [v.label for v in (await _engine(judge).run(trials)).verdicts.values()]
    assert labels == again
    assert len(set(labels)) > 1, "sampling from a spread distribution must produce jitter"


async def test_an_input_beyond_the_context_window_is_skipped_not_truncated(
    judge: LlamaJudge,
) -> None:
    long = Request.make(judge.fingerprint, HARM, {"prompt": "Why?", "response": "very " * 900})
    result = await _engine(judge).run([long])
    verdict = result.verdicts[long.key]
    assert verdict.status is VerdictStatus.SKIPPED
    assert "context window" in (verdict.error or "")
    assert result.stats.skipped == 1 and result.stats.called == 0


async def test_a_continuous_rubric_is_refused_with_a_reason(judge: LlamaJudge) -> None:
    request = Request.make(judge.fingerprint, builtin_rubric("toxicity"), ITEMS[0])
    verdict = (await _engine(judge).run([request])).verdicts[request.key]
    assert verdict.status is VerdictStatus.ERROR
    assert "continuous" in (verdict.error or "")


async def test_generation_rubrics_write_a_response_of_bounded_length(judge: LlamaJudge) -> None:
    rubric = builtin_rubric("generation").model_copy(update={"max_new_tokens": 12})
    request = Request.make(judge.fingerprint, rubric, {"prompt": "Name three fruits:"})
    verdict = (await _engine(judge).run([request])).verdicts[request.key]
    assert verdict.status is VerdictStatus.OK
    assert verdict.raw_text
    assert 0 < verdict.completion_tokens <= 12


async def test_a_request_judged_directly_without_a_token_count_first_is_answered() -> None:
    """A wrapper judge (a repair) calls the judge on requests the engine never counted; the
    judge tokenizes them itself while it holds its model lock, which must not deadlock."""
    fresh = LlamaJudge(n_ctx=512)
    request = Request.make(fresh.fingerprint, HARM, ITEMS[0])
    verdict = await asyncio.wait_for(fresh.judge(request), timeout=120)
    assert verdict.status is VerdictStatus.OK
    await fresh.aclose()
