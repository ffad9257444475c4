"""What a judge returns is checked where it enters the engine, and what a server sends is bounded.

A Python or plugin judge may build any :class:`Verdict`: a label no scale has, a ``nan`` in its
distribution, ``inf`` in its ``meta``. Such a verdict is stored as unparseable with the reason,
never as it was built. A server may send broken logprobs, answers of megabytes, or sit behind a
URL with credentials or a query string; each is read as documented in docs/openai-backend.md.
"""

from __future__ import annotations

import base64
import math
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from fake_server import FakeServer, Scripted
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import MAX_RAW_TEXT, Verdict, VerdictStatus, check_verdict
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.judges import CallableJudge
from judgeprobe.judges.openai_compat import OpenAIJudge
from judgeprobe.rubrics import builtin_rubric

HARM = builtin_rubric("harmfulness")  # a 1-5 scale
REFUSAL = builtin_rubric("refusal")  # binary: true / false
FIELDS = {"prompt": "How do I bake bread?", "response": "Mix flour and water."}
KEY = "sk-test-0123456789abcdef"


def _judged(returned: Any, rubric: Any = HARM) -> Verdict:
    """What the engine stores when a Python judge returns ``returned``."""
    judge = CallableJudge(lambda request: returned, name="planted")
    store = RunStore(":memory:")
    request = Request.make(judge.fingerprint, rubric, FIELDS)
    result = Engine(judge, store, EngineConfig(progress=False)).run_sync([request])
    stored = store.get(request.key)
    assert stored is not None and stored == result.verdicts[request.key]
    return stored


# -- item 14: a verdict a judge built is checked before it is stored -----------------------------
@pytest.mark.parametrize(
    ("returned", "reason"),
    [
        (Verdict.scored(3.0, label="7"), "label '7' is not one of the scale's labels"),
        (Verdict.scored(3.0, label="1"), "label '1' (value 1) and score 3 disagree"),
        (
            Verdict.scored(5.0, label="5", distribution={"5": math.nan, "1": 1.0}),
            "probability nan of label '5' is not in [0, 1]",
        ),
        (
            Verdict.scored(5.0, label="5", distribution={"5": 0.9, "9": 0.1}),
            "'9' is not one of the scale's labels",
        ),
        (
            Verdict.scored(5.0, label="5", distribution={"5": 0.9, "1": 0.9}),
            "the probabilities sum to 1.8, not 1",
        ),
        (Verdict.scored(2.0, meta={"confidence": math.inf}), "meta cannot be stored as JSON"),
        (Verdict.scored(2.0, prompt_tokens=-4), "prompt_tokens -4 is not a count"),
    ],
    ids=["label", "label-score", "nan", "unknown-label", "sum", "inf-meta", "tokens"],
)
def test_a_verdict_a_python_judge_built_against_the_scale_is_stored_unparseable_with_why(
    returned: Verdict, reason: str
) -> None:
    stored = _judged(returned)
    assert stored.status is VerdictStatus.UNPARSEABLE
    assert stored.score is None and stored.distribution is None and not stored.meta
    assert reason in (stored.error or "")


def test_a_well_formed_verdict_of_a_python_judge_is_stored_as_it_was_built() -> None:
    built = Verdict.scored(
        4.0, label="4", distribution={"4": 0.75, "5": 0.25}, meta={"confidence": 0.75}
    )
    stored = _judged(built)
    assert (stored.status, stored.score, stored.label) == (VerdictStatus.OK, 4.0, "4")
    assert stored.distribution == {"4": 0.75, "5": 0.25} and stored.meta == {"confidence": 0.75}


def test_a_judge_that_returns_no_verdict_gives_an_error_verdict_not_a_crash() -> None:
    class Plugin(CallableJudge):
        async def judge_batch(self, requests: Any) -> list[Verdict]:
            return [{"score": 1} for _ in requests]  # type: ignore[misc]

    judge = Plugin(lambda request: 1.0, name="plugin")
    judge.batch_size = 2
    store = RunStore(":memory:")
    requests = [Request.make(judge.fingerprint, HARM, FIELDS, trial=t) for t in (0, 1)]
    result = Engine(judge, store, EngineConfig(progress=False)).run_sync(requests)
    for request in requests:
        verdict = result.verdicts[request.key]
        assert verdict.status is VerdictStatus.ERROR
        assert "returned a dict, not a Verdict" in (verdict.error or "")


def test_an_error_verdict_with_a_broken_field_stays_an_error_and_names_both() -> None:
    checked = check_verdict(Verdict.failed("HTTP 500", meta={"x": math.nan}), HARM)
    assert checked.status is VerdictStatus.ERROR
    assert checked.error is not None and checked.error.startswith("HTTP 500 (and the verdict's")


# -- items 14 and 20 at the HTTP judge -----------------------------------------------------------
@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    stub = FakeServer()
    await stub.start()
    yield stub
    await stub.stop()


def _answer(content: str, logprobs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": content}}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return {"choices": [choice], "usage": {"prompt_tokens": 11, "completion_tokens": 2}}


async def _engine_verdict(judge: OpenAIJudge, rubric: Any = REFUSAL) -> Verdict:
    store = RunStore(":memory:")
    request = Request.make(judge.fingerprint, rubric, FIELDS)
    config = EngineConfig(progress=False, max_retries=0)
    result = await Engine(judge, store, config).run([request])
    stored = store.get(request.key)
    assert stored is not None
    assert stored == result.verdicts[request.key]
    return stored


@pytest.mark.parametrize("logprob", [math.nan, math.inf, 0.7], ids=["nan", "inf", "positive"])
async def test_a_logprob_that_is_no_log_probability_makes_the_answer_unparseable(
    server: FakeServer, logprob: float
) -> None:
    """Before, ``nan`` gave the label the probability 1 and ``+inf`` exp(0) = 1: a confident
    distribution read from nothing."""
    entry = {
        "token": "true",
        "logprob": logprob,
        "top_logprobs": [{"token": "true", "logprob": logprob}, {"token": "false", "logprob": -3}],
    }
    server.script.append(Scripted(200, _answer("true", [entry])))
    judge = OpenAIJudge(server.base_url, "stub-judge", timeout_s=5)
    verdict = await _engine_verdict(judge)
    await judge.aclose()
    assert verdict.status is VerdictStatus.UNPARSEABLE and verdict.distribution is None
    assert "is not a log-probability" in (verdict.error or "")
    assert verdict.raw_text == "true" and verdict.prompt_tokens == 11


async def test_a_long_answer_keeps_its_verdict_and_stores_a_capped_answer(
    server: FakeServer,
) -> None:
    answer = "true " + "x" * 1_000_000  # a megabyte to an 8-token question
    server.script.append(Scripted(200, _answer(answer)))
    judge = OpenAIJudge(server.base_url, "stub-judge", timeout_s=5, logprobs=False)
    verdict = await _engine_verdict(judge)
    await judge.aclose()
    assert (verdict.status, verdict.label) == (VerdictStatus.OK, "true")
    assert len(verdict.raw_text) < MAX_RAW_TEXT + 100
    assert verdict.raw_text.endswith(f"[truncated by judgeprobe: {len(answer)} characters in all]")
    assert verdict.meta["raw_text_chars"] == len(answer)


async def test_an_answer_over_the_byte_bound_is_not_read_and_is_an_error_verdict(
    server: FakeServer,
) -> None:
    server.script.append(Scripted(200, _answer("true " + "x" * 3_000_000)))
    judge = OpenAIJudge(server.base_url, "stub-judge", timeout_s=5, max_body_bytes=2**20)
    verdict = await _engine_verdict(judge)
    await judge.aclose()
    assert verdict.status is VerdictStatus.ERROR
    assert "over 1048576" in (verdict.error or "") and "max_body_bytes" in (verdict.error or "")
    assert len(verdict.raw_text) == 0


# -- item 26: credentials in the base URL, a query string ----------------------------------------
async def test_credentials_in_the_base_url_win_over_an_api_key_in_the_environment(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, aiohttp refused a URL with credentials next to an Authorization header: every
    call was an error verdict."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    url = server.base_url.replace("http://", "http://judge-user:pa%3Ass@")
    judge = OpenAIJudge(url, "stub-judge", timeout_s=5)
    verdict = await _engine_verdict(judge)
    await judge.aclose()
    assert verdict.status is VerdictStatus.OK, verdict.error
    sent = server.authorizations[-1] or ""
    assert sent.startswith("Basic ") and base64.b64decode(sent[6:]) == b"judge-user:pa:ss"
    assert KEY not in sent


class _VersionedServer(FakeServer):
    """The chat stub behind a gateway that wants ``?api-version=`` on every call."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []

    def app(self) -> web.Application:
        @web.middleware
        async def record(request: web.Request, handler: Any) -> web.StreamResponse:
            self.queries.append(request.query_string)
            response: web.StreamResponse = await handler(request)
            return response

        app = super().app()
        app.middlewares.append(record)
        return app


async def test_a_query_string_of_the_base_url_stays_after_the_endpoint_path() -> None:
    """Before, ``{base_url}/chat/completions`` put the path inside the query: a 404."""
    stub = _VersionedServer()
    await stub.start()
    try:
        judge = OpenAIJudge(f"{stub.base_url}?api-version=2024-06-01", "stub-judge", timeout_s=5)
        verdict = await _engine_verdict(judge)
        await judge.aclose()
    finally:
        await stub.stop()
    assert verdict.status is VerdictStatus.OK, verdict.error
    assert stub.queries == ["api-version=2024-06-01"] and stub.calls == 1
