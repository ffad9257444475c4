"""The OpenAI-compatible backend: what it sends, how it reads answers, how it classifies failures.

Everything runs against the local stub server (tests/fake_server.py); no network.
"""

from __future__ import annotations

import logging
import math
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from fake_server import FakeServer, FaultMix, Scripted, serve_in_thread
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.errors import ConfigError, FatalJudgeError, RetryableJudgeError
from judgeprobe.judges.openai_compat import (
    OpenAIJudge,
    label_distribution,
    messages,
    parse_retry_after,
)
from judgeprobe.rubrics import Rubric, builtin_rubric

REFUSAL = builtin_rubric("refusal")
HARM = builtin_rubric("harmfulness")
FIELDS = {"prompt": "How do I bake bread?", "response": "I can't help with that."}
KEY = "sk-test-0123456789abcdef"


@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    stub = FakeServer()
    await stub.start()
    yield stub
    await stub.stop()


@pytest.fixture
async def judge(server: FakeServer) -> AsyncIterator[OpenAIJudge]:
    client = OpenAIJudge(server.base_url, "stub-judge", timeout_s=5)
    yield client
    await client.aclose()


def _request(judge: OpenAIJudge, rubric: Rubric = REFUSAL, trial: int = 0) -> Request:
    return Request.make(judge.fingerprint, rubric, FIELDS, trial=trial)


def _completion(content: str, **choice: Any) -> dict[str, Any]:
    return {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, **choice}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 2},
    }


def _entry(token: str, logprob: float, top: list[tuple[str, float]]) -> dict[str, Any]:
    return {
        "token": token,
        "logprob": logprob,
        "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top],
    }


# -- what is sent -------------------------------------------------------------------------------
async def test_body_passes_model_temperature_seed_and_max_tokens_through(
    server: FakeServer,
) -> None:
    judge = OpenAIJudge(server.base_url, "m1", temperature=0.7, seed=11, max_tokens=5)
    await judge.judge(_request(judge))
    await judge.aclose()
    body = server.bodies[-1]
    assert (body["model"], body["temperature"], body["seed"], body["max_tokens"]) == (
        "m1",
        0.7,
        11,
        5,
    )
    assert body["logprobs"] is True and body["top_logprobs"] == 20


async def test_trial_t_is_sent_with_seed_plus_t(server: FakeServer) -> None:
    judge = OpenAIJudge(server.base_url, "m", seed=100)
    for trial in (0, 1, 2):
        await judge.judge(_request(judge, trial=trial))
    await judge.aclose()
    assert [b["seed"] for b in list(server.bodies)[-3:]] == [100, 101, 102]


async def test_no_seed_is_sent_when_none_is_set(judge: OpenAIJudge, server: FakeServer) -> None:
    await judge.judge(_request(judge, trial=3))
    assert "seed" not in server.bodies[-1]


async def test_extra_body_fields_are_sent(server: FakeServer) -> None:
    judge = OpenAIJudge(server.base_url, "m", extra_body={"top_p": 0.5})
    await judge.judge(_request(judge))
    await judge.aclose()
    assert server.bodies[-1]["top_p"] == 0.5


async def test_cache_prompt_is_sent_when_set_and_left_to_the_server_when_not(
    server: FakeServer,
) -> None:
    cached = OpenAIJudge(server.base_url, "m", cache_prompt=True)
    await cached.judge(_request(cached))
    await cached.aclose()
    assert server.bodies[-1]["cache_prompt"] is True
    assert cached.describe()["cache_prompt"] is True
    unset = OpenAIJudge(server.base_url, "m")
    assert "cache_prompt" not in unset.body(_request(unset))
    assert "cache_prompt" not in unset.describe()


def test_the_cache_setting_given_as_a_judge_option_is_recorded_in_the_fingerprint() -> None:
    # `-J cache_prompt=true` on the command line: cached and uncached logits need not be
    # bit-identical, so verdicts made with the server's prompt cache on are kept apart
    from judgeprobe._cli.options import parse_judge_options
    from judgeprobe.judges.registry import build_judge

    spec = "openai:m@http://127.0.0.1:9/v1"
    judges = {
        value: build_judge(spec, **parse_judge_options([f"cache_prompt={value}"]))
        for value in ("true", "false")
    }
    unset = build_judge(spec)
    assert judges["true"].describe()["cache_prompt"] is True
    assert judges["false"].describe()["cache_prompt"] is False
    fingerprints = {judges["true"].fingerprint, judges["false"].fingerprint, unset.fingerprint}
    assert len(fingerprints) == 3


def test_logprobs_are_requested_only_for_label_rubrics() -> None:
    judge = OpenAIJudge("http://127.0.0.1:9/v1", "m")
    generation = builtin_rubric("generation")
    gen_request = Request.make(judge.fingerprint, generation, {"prompt": "hi"})
    assert judge.body(_request(judge))["logprobs"] is True
    assert "logprobs" not in judge.body(gen_request)
    assert judge.body(gen_request)["max_tokens"] == generation.max_new_tokens
    assert "logprobs" not in OpenAIJudge("http://h/v1", "m", logprobs=False).body(_request(judge))


def test_system_text_comes_first_and_the_answer_prefix_is_asked_for() -> None:
    rubric = REFUSAL.model_copy(update={"system": "You are a strict reviewer."})
    request = Request.make("j", rubric, FIELDS)
    chat = messages(request)
    assert [m["role"] for m in chat] == ["system", "user"]
    assert chat[0]["content"] == "You are a strict reviewer."
    assert chat[1]["content"].startswith(request.render().rstrip())
    assert chat[1]["content"].endswith('Begin your answer with "Answer:".')


def test_without_system_or_prefix_the_message_is_the_rendered_template() -> None:
    rubric = REFUSAL.model_copy(update={"answer_prefix": ""})
    request = Request.make("j", rubric, FIELDS)
    assert messages(request) == [{"role": "user", "content": request.render()}]


# -- the API key --------------------------------------------------------------------------------
async def test_api_key_is_read_from_the_environment_at_call_time(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = OpenAIJudge(server.base_url, "m", api_key_env="JUDGEPROBE_TEST_KEY")
    monkeypatch.delenv("JUDGEPROBE_TEST_KEY", raising=False)
    await judge.judge(_request(judge))
    monkeypatch.setenv("JUDGEPROBE_TEST_KEY", KEY)
    await judge.judge(_request(judge))
    await judge.aclose()
    assert list(server.authorizations)[-2:] == [None, f"Bearer {KEY}"]


async def test_api_key_never_appears_in_describe_fingerprint_repr_errors_or_logs(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("JUDGEPROBE_TEST_KEY", KEY)
    judge = OpenAIJudge(server.base_url, "m", api_key_env="JUDGEPROBE_TEST_KEY")
    # a careless server that echoes the credentials it was given
    server.script.append(Scripted(401, {"error": {"message": f"Incorrect API key {KEY}"}}))
    caplog.set_level(logging.DEBUG)
    with pytest.raises(FatalJudgeError, match=r"Incorrect API key \[redacted\]") as failure:
        await judge.judge(_request(judge))
    await judge.aclose()
    assert server.authorizations[-1] == f"Bearer {KEY}"  # it was sent ...
    seen = [str(judge.describe()), judge.fingerprint, repr(judge), str(failure.value), caplog.text]
    assert all(KEY not in text for text in seen)  # ... and shown nowhere
    assert "401" in str(failure.value) and "Incorrect API key [redacted]" in str(failure.value)


# -- reading answers ----------------------------------------------------------------------------
async def test_logprobs_give_a_distribution_over_labels_and_trial_0_takes_its_argmax(
    judge: OpenAIJudge, server: FakeServer
) -> None:
    request = _request(judge)
    verdict = await judge.judge(request)
    answered = server.answers[-1]
    assert verdict.status is VerdictStatus.OK
    assert verdict.label == answered
    assert verdict.distribution is not None
    assert verdict.distribution[answered] == pytest.approx(0.75)
    assert sum(verdict.distribution.values()) == pytest.approx(1.0)
    assert verdict.score == REFUSAL.value_of(answered)
    assert verdict.raw_text == f"Answer: {answered}"


async def test_trials_above_0_sample_from_the_distribution_reproducibly(
    judge: OpenAIJudge,
) -> None:
    labels = []
    for trial in range(1, 41):
        first = await judge.judge(_request(judge, trial=trial))
        again = await judge.judge(_request(judge, trial=trial))
        assert first.label == again.label
        labels.append(first.label)
    assert set(labels) == {"true", "false"}  # 0.75 / 0.25: both appear in 40 draws


async def test_text_is_parsed_when_the_server_returns_no_logprobs(
    judge: OpenAIJudge, server: FakeServer
) -> None:
    server.script.append(Scripted(200, _completion("Answer: **false** - it helps.")))
    verdict = await judge.judge(_request(judge))
    assert (verdict.status, verdict.label, verdict.score) == (VerdictStatus.OK, "false", 0.0)
    assert verdict.distribution is None


async def test_an_answer_without_a_label_is_unparseable_not_a_score(
    judge: OpenAIJudge, server: FakeServer
) -> None:
    server.script.append(Scripted(200, _completion("I would rather not say.")))
    verdict = await judge.judge(_request(judge))
    assert verdict.status is VerdictStatus.UNPARSEABLE
    assert verdict.score is None and verdict.raw_text == "I would rather not say."


async def test_token_counts_come_from_usage(judge: OpenAIJudge, server: FakeServer) -> None:
    server.script.append(Scripted(200, _completion("true")))
    verdict = await judge.judge(_request(judge))
    assert (verdict.prompt_tokens, verdict.completion_tokens) == (11, 2)


async def test_a_malformed_usage_counts_no_tokens_but_keeps_the_verdict(
    judge: OpenAIJudge, server: FakeServer
) -> None:
    server.script.append(Scripted(200, {**_completion("false"), "usage": [3, 4]}))
    verdict = await judge.judge(_request(judge))
    assert (verdict.label, verdict.prompt_tokens, verdict.completion_tokens) == ("false", 0, 0)


async def test_a_truncated_answer_keeps_its_finish_reason(
    judge: OpenAIJudge, server: FakeServer
) -> None:
    server.script.append(Scripted(200, _completion("Well, it", finish_reason="length")))
    verdict = await judge.judge(_request(judge))
    assert verdict.status is VerdictStatus.UNPARSEABLE
    assert verdict.meta["finish_reason"] == "length"


async def test_a_generation_rubric_scores_the_completion_tokens(
    judge: OpenAIJudge, server: FakeServer
) -> None:
    server.script.append(Scripted(200, _completion("Knead the dough, then bake it.")))
    request = Request.make(judge.fingerprint, builtin_rubric("generation"), {"prompt": "Bread?"})
    verdict = await judge.judge(request)
    assert (verdict.status, verdict.score) == (VerdictStatus.OK, 2.0)
    assert verdict.raw_text == "Knead the dough, then bake it."


def test_label_distribution_skips_prefix_tokens_and_sums_matching_alternatives() -> None:
    content = [
        _entry("Answer", -0.01, [("Answer", -0.01)]),
        _entry(":", -0.01, [(":", -0.01)]),
        _entry(" True", -0.2, [(" True", -0.2), ("true", -2.0), (" False", -1.9), ("maybe", -3)]),
    ]
    distribution = label_distribution(content, REFUSAL)
    assert distribution is not None
    assert distribution["true"] == pytest.approx(math.exp(-0.2) + math.exp(-2.0))
    assert distribution["false"] == pytest.approx(math.exp(-1.9))


def test_label_distribution_reads_yes_and_no_as_binary_labels() -> None:
    content = [_entry("Yes", -0.1, [("Yes", -0.1), ("No", -2.5)])]
    distribution = label_distribution(content, REFUSAL)
    assert distribution == pytest.approx({"true": math.exp(-0.1), "false": math.exp(-2.5)})


def test_label_distribution_covers_scale_labels_outside_the_top_list() -> None:
    content = [_entry("4", -0.5, [("4", -0.5), ("5", -1.2)])]
    distribution = label_distribution(content, HARM)
    assert distribution == pytest.approx({"4": math.exp(-0.5), "5": math.exp(-1.2)})


def test_label_distribution_is_none_when_no_generated_token_is_a_label() -> None:
    content = [_entry("Perhaps", -0.1, [("Perhaps", -0.1), ("true", -3.0)])]
    assert label_distribution(content, REFUSAL) is None
    assert label_distribution(None, REFUSAL) is None
    assert label_distribution([], REFUSAL) is None


# -- classifying failures -----------------------------------------------------------------------
@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503])
async def test_transient_statuses_are_retryable_with_the_servers_retry_after(
    judge: OpenAIJudge, server: FakeServer, status: int
) -> None:
    server.script.append(Scripted(status, {"error": {"message": "busy"}}, {"Retry-After": "7"}))
    with pytest.raises(RetryableJudgeError, match=f"HTTP {status}") as failure:
        await judge.judge(_request(judge))
    assert failure.value.retry_after == 7.0
    assert f"HTTP {status}" in str(failure.value) and "busy" in str(failure.value)


async def test_a_retry_after_http_date_becomes_seconds_from_now(
    judge: OpenAIJudge, server: FakeServer
) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    server.script.append(Scripted(429, {"error": "slow down"}, {"Retry-After": when}))
    with pytest.raises(RetryableJudgeError, match="HTTP 429") as failure:
        await judge.judge(_request(judge))
    assert failure.value.retry_after is not None
    assert 100 < failure.value.retry_after <= 120


async def test_retry_after_ms_takes_precedence(judge: OpenAIJudge, server: FakeServer) -> None:
    headers = {"Retry-After": "9", "retry-after-ms": "250"}
    server.script.append(Scripted(429, {"error": "slow down"}, headers))
    with pytest.raises(RetryableJudgeError, match="HTTP 429") as failure:
        await judge.judge(_request(judge))
    assert failure.value.retry_after == pytest.approx(0.25)


def test_parse_retry_after_accepts_seconds_and_dates_and_rejects_the_rest() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 0.5 ") == 0.5
    assert parse_retry_after("-4") == 0.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0
    assert parse_retry_after("later") is None
    assert parse_retry_after("") is None
    assert parse_retry_after("nan") is None
    assert parse_retry_after(None) is None


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_fatal_with_the_status_and_the_servers_message(
    judge: OpenAIJudge, server: FakeServer, status: int
) -> None:
    server.script.append(Scripted(status, {"error": {"message": "model 'x' does not exist"}}))
    with pytest.raises(FatalJudgeError, match=f"HTTP {status}") as failure:
        await judge.judge(_request(judge))
    message = str(failure.value)
    assert f"HTTP {status}" in message and "model 'x' does not exist" in message


async def test_a_long_server_message_is_truncated(judge: OpenAIJudge, server: FakeServer) -> None:
    server.script.append(Scripted(400, "x" * 5000))
    with pytest.raises(FatalJudgeError, match=r"^HTTP 400 from .*: x+$") as failure:
        await judge.judge(_request(judge))
    assert len(str(failure.value)) < 400


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"<html>502 Bad Gateway</html>", "with a body that is not JSON"),
        (b'{"choices": [{"mess', "with a body that is not JSON"),
        (b'{"choices": []}', "without a chat completion"),
        (b'{"choices": ["true"]}', "without a chat completion"),
        (b'{"id": 1}', "without a chat completion"),
        (b"[1, 2]", "without a chat completion"),
    ],
)
async def test_a_garbage_body_is_retryable(
    judge: OpenAIJudge, server: FakeServer, body: bytes, problem: str
) -> None:
    server.script.append(Scripted(200, body))
    with pytest.raises(RetryableJudgeError, match=f"/chat/completions answered {problem}: "):
        await judge.judge(_request(judge))


async def test_a_server_that_does_not_answer_in_time_is_retryable(server: FakeServer) -> None:
    server.faults = FaultMix(rate_timeout=1.0, timeout_sleep_s=10)
    judge = OpenAIJudge(server.base_url, "m", timeout_s=0.2)
    with pytest.raises(RetryableJudgeError, match=r"within 0\.2 s"):
        await judge.judge(_request(judge))
    await judge.aclose()


async def test_a_refused_connection_is_retryable() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    judge = OpenAIJudge(f"http://127.0.0.1:{port}/v1", "m", timeout_s=2)
    with pytest.raises(RetryableJudgeError, match="connection to"):
        await judge.judge(_request(judge))
    await judge.aclose()


# -- identity -----------------------------------------------------------------------------------
BASE: dict[str, Any] = {"base_url": "http://127.0.0.1:8000/v1", "model": "judge-a"}


@pytest.mark.parametrize(
    "change",
    [
        {"base_url": "http://127.0.0.1:8001/v1"},
        {"model": "judge-b"},
        {"revision": "2025-01-01"},
        {"temperature": 0.5},
        {"seed": 1},
        {"max_tokens": 9},
        {"logprobs": False},
        {"top_logprobs": 5},
        {"extra_body": {"top_p": 0.9}},
        {"cache_prompt": True},
        {"cache_prompt": False},
    ],
)
def test_the_fingerprint_changes_with_everything_that_can_change_a_verdict(
    change: dict[str, Any],
) -> None:
    before = OpenAIJudge(**BASE)
    after = OpenAIJudge(**{**BASE, **change})
    assert after.fingerprint != before.fingerprint
    assert _request(after).key != _request(before).key


@pytest.mark.parametrize(
    "same",
    [
        {"base_url": "http://127.0.0.1:8000/v1/"},
        {"max_concurrency": 3},
        {"timeout_s": 5},
        {"api_key_env": "OTHER_KEY"},
    ],
)
def test_the_fingerprint_ignores_what_cannot_change_a_verdict(same: dict[str, Any]) -> None:
    assert OpenAIJudge(**{**BASE, **same}).fingerprint == OpenAIJudge(**BASE).fingerprint


def test_describe_names_backend_endpoint_model_and_decoding() -> None:
    described = OpenAIJudge(**BASE, seed=3, revision="r1").describe()
    assert described["backend"] == "openai"
    assert {k: described[k] for k in ("base_url", "model", "revision", "seed")} == {
        "base_url": "http://127.0.0.1:8000/v1",
        "model": "judge-a",
        "revision": "r1",
        "seed": 3,
    }
    assert {"temperature", "max_tokens", "logprobs"} <= set(described)


def test_tokens_are_estimated_only_when_a_context_window_is_set() -> None:
    request = _request(OpenAIJudge(**BASE))
    assert OpenAIJudge(**BASE).count_tokens(request) is None
    estimate = OpenAIJudge(**BASE, context_window=100).count_tokens(request)
    assert estimate is not None and 0 < estimate < len(request.render())


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"base_url": "127.0.0.1:8000/v1"}, r"base_url must start with http:// or https://"),
        ({"model": ""}, r"model must name the model the server serves"),
        ({"max_tokens": 0}, r"max_tokens must be >= 1"),
        ({"top_logprobs": 21}, r"top_logprobs must be between 0 and 20"),
        ({"max_concurrency": 0}, r"max_concurrency must be >= 1"),
        ({"timeout_s": 0}, r"timeout_s must be > 0"),
        ({"temperature": -1}, r"temperature must be >= 0"),
        ({"context_window": 0}, r"context_window must be >= 1"),
    ],
)
def test_invalid_options_raise_a_config_error(bad: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{message}"):
        OpenAIJudge(**{**BASE, **bad})


# -- in the engine ------------------------------------------------------------------------------
async def test_an_oversized_input_is_skipped_not_sent(server: FakeServer) -> None:
    judge = OpenAIJudge(server.base_url, "m", context_window=10)
    engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))
    result = await engine.run([_request(judge)])
    await judge.aclose()
    assert result.stats.skipped == 1 and server.calls == 0


def test_one_judge_serves_successive_event_loops() -> None:
    stub = FakeServer()
    with serve_in_thread(stub):
        judge = OpenAIJudge(stub.base_url, "m")
        engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))
        first = engine.run_sync([_request(judge, trial=0)])  # each run_sync has its own loop
        second = engine.run_sync([_request(judge, trial=1)])
    assert first.stats.ok == 1 and second.stats.ok == 1
    assert stub.calls == 2


# -- no secret in anything written --------------------------------------------------------------
EXTRA_KEY = "sk-extra-body-0123456789abcdef"
PASSWORD = "url-password-0123456789"


def _stub_url(stub: FakeServer, credentials: bool) -> str:
    if not credentials:
        return stub.base_url
    return stub.base_url.replace("http://", f"http://judge-user:{PASSWORD}@")


@pytest.mark.parametrize(
    "credentials", ["api key and extra_body", "base URL"], ids=["key-and-body", "base-url"]
)
def test_no_configured_secret_reaches_the_run_store_or_any_card_file(
    credentials: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgeprobe.audit.config import parse_config
    from judgeprobe.audit.run import run_audit
    from judgeprobe.engine import run_blocking

    in_url = credentials == "base URL"
    secrets = [PASSWORD] if in_url else [KEY, EXTRA_KEY]
    # an environment variable whose name does not look secret: the judge says what its key is
    monkeypatch.setenv("JUDGEPROBE_TEST_LLM", KEY)
    stub = FakeServer(echo_credentials=True)  # repeats what it was sent in every answer
    with serve_in_thread(stub):
        judge = OpenAIJudge(
            _stub_url(stub, in_url),
            "stub-judge",
            api_key_env="UNSET_VARIABLE" if in_url else "JUDGEPROBE_TEST_LLM",
            extra_body=None if in_url else {"api_key": EXTRA_KEY},
        )
        echoed = run_blocking(judge.judge(_request(judge))).raw_text
        assert all(secret in echoed for secret in secrets)  # the server does echo them
        stub.script.append(Scripted(401, {"error": {"message": f"bad key {' '.join(secrets)}"}}))
        config = parse_config(
            {
                "judge": "profanity",  # replaced by ``judge`` below
                "rubric": "refusal",
                "data": "demo",
                "probes": {"repetition": {"counts": [1]}},
                "out": str(tmp_path / "out"),
            }
        )
        command = f"judgeprobe audit --judge openai:stub-judge@{judge.base_url} -J extra_body="
        outcome = run_audit(
            config, judge=judge, command=command + f"'{{api_key: {EXTRA_KEY}}}'", progress=False
        )
    assert outcome.engine_totals["called"] > 1 and outcome.engine_totals["failed"] == 1
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert {"run.sqlite", "card.json", "card.md", "card.html"} <= {p.name for p in written}
    for path in written:
        content = path.read_bytes()
        for secret in secrets:
            assert secret.encode() not in content, (path.name, secret)
    assert b"[redacted]" in (tmp_path / "out" / "run.sqlite").read_bytes()


def test_secrets_in_base_url_and_extra_body_are_redacted_in_describe_and_messages() -> None:
    judge = OpenAIJudge(
        f"https://judge-user:{PASSWORD}@example.invalid/v1",
        "m",
        extra_body={"top_p": 1, "headers": {"Authorization": f"Bearer {EXTRA_KEY}"}},
    )
    described = judge.describe()
    assert described["base_url"] == "https://[redacted]@example.invalid/v1"
    assert described["extra_body"] == {"top_p": 1, "headers": {"Authorization": "[redacted]"}}
    assert {PASSWORD, EXTRA_KEY} <= set(judge.secrets())
    assert PASSWORD not in repr(judge) and EXTRA_KEY not in repr(judge)


def test_the_fingerprint_of_a_judge_without_credentials_is_what_it_was() -> None:
    # request keys of stored runs stay valid: pinned before credentials were redacted
    plain = OpenAIJudge(**BASE, seed=3, extra_body={"top_p": 1, "user": "u"})
    assert plain.fingerprint == "7b8972e0c369828b"
