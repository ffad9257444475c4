"""The engine with the OpenAI-compatible backend against a stub server that counts every call.

Dedup, the run store as a cache, fault injection, budgets, and kill-and-resume of a real run
(SIGKILL of a subprocess mid-run): every request ends as a verdict or a recorded failure, none is
lost, and no call that finished is made again.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from fake_server import FakeServer, FaultMix, Scripted, serve_in_thread
from judgeprobe.core.judge import Judge, JudgeCapabilities
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict, VerdictStatus
from judgeprobe.engine import Budget, Engine, EngineConfig, RunStore
from judgeprobe.errors import ConfigError
from judgeprobe.judges import BaseJudge, CallableJudge
from judgeprobe.judges.openai_compat import OpenAIJudge
from judgeprobe.rubrics import builtin_rubric

REFUSAL = builtin_rubric("refusal")
SRC = Path(__file__).resolve().parents[1] / "src"
FAST = {"backoff_base_s": 0.001, "backoff_max_s": 0.01, "progress": False}


@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    stub = FakeServer()
    await stub.start()
    yield stub
    await stub.stop()


def _requests(judge: OpenAIJudge, n: int, trial: int = 0) -> list[Request]:
    return [
        Request.make(
            judge.fingerprint,
            REFUSAL,
            {"prompt": f"prompt {i}", "response": f"reply {i}"},
            trial=trial,
        )
        for i in range(n)
    ]


def _server_key(judge: OpenAIJudge, request: Request) -> str:
    """The stub's identity of the call ``judge`` makes for ``request`` (a hash of its body)."""
    return FakeServer.key_of(json.dumps(judge.body(request)).encode())


def _engine(judge: OpenAIJudge, store: RunStore, **config: Any) -> Engine:
    return Engine(judge, store, EngineConfig(**{**FAST, **config}))


# -- dedup and cache ----------------------------------------------------------------------------
async def test_equal_requests_are_judged_once(server: FakeServer) -> None:
    judge = OpenAIJudge(server.base_url, "stub-judge")
    requests = _requests(judge, 5) * 3
    result = await _engine(judge, RunStore(":memory:")).run(requests)
    await judge.aclose()
    assert (result.stats.requested, result.stats.distinct, result.stats.called) == (15, 5, 5)
    assert server.calls == 5 and len(result.verdicts) == 5


async def test_a_rerun_is_answered_from_the_store_without_a_call(
    server: FakeServer, tmp_path: Path
) -> None:
    judge = OpenAIJudge(server.base_url, "stub-judge")
    requests = _requests(judge, 20)
    with RunStore(tmp_path / "run.sqlite") as store:
        first = await _engine(judge, store).run(requests)
    with RunStore(tmp_path / "run.sqlite") as store:
        second = await _engine(judge, store).run(requests)
    await judge.aclose()
    assert server.calls == 20
    assert (second.stats.cached, second.stats.called) == (20, 0)
    assert second.verdicts == first.verdicts


async def test_a_changed_judge_is_never_answered_from_the_cache(server: FakeServer) -> None:
    store = RunStore(":memory:")
    judge = OpenAIJudge(server.base_url, "stub-judge")
    await _engine(judge, store).run(_requests(judge, 10))
    changed = OpenAIJudge(server.base_url, "stub-judge", temperature=0.5)
    result = await _engine(changed, store).run(_requests(changed, 10))
    await judge.aclose()
    await changed.aclose()
    assert (result.stats.cached, result.stats.called) == (0, 10)
    assert server.calls == 20
    assert store.count() == 20


# -- failures -----------------------------------------------------------------------------------
def test_the_fault_mix_is_seeded_and_close_to_its_rates() -> None:
    mix = FaultMix.even(0.2, seed=7)
    picks = [mix.pick(f"key-{i}", 0) for i in range(4000)]
    assert picks == [mix.pick(f"key-{i}", 0) for i in range(4000)]  # reproducible
    assert picks != [FaultMix.even(0.2, seed=8).pick(f"key-{i}", 0) for i in range(4000)]
    for fault in ("429", "500", "timeout", "garbage"):
        assert 0.035 < picks.count(fault) / 4000 < 0.065  # 0.05 each
    assert 0.77 < picks.count(None) / 4000 < 0.83


async def test_under_a_20_percent_fault_mix_every_request_ends_as_a_verdict_or_a_failure(
    server: FakeServer,
) -> None:
    server.faults = FaultMix.even(0.2, seed=7, retry_after="0", timeout_sleep_s=10)
    judge = OpenAIJudge(server.base_url, "stub-judge", timeout_s=0.3, max_concurrency=16)
    requests = _requests(judge, 300)
    store = RunStore(":memory:")
    result = await _engine(judge, store, max_retries=1).run(requests)

    assert result.complete and result.stats.pending == 0
    assert set(result.verdicts) == {r.key for r in requests}
    statuses = {v.status for v in result.verdicts.values()}
    assert statuses == {VerdictStatus.OK, VerdictStatus.ERROR}  # both outcomes occur
    assert result.stats.ok + result.stats.failed == 300
    assert store.count() == 300  # every outcome is recorded
    assert all(
        "gave up after 2 attempts" in (v.error or "")
        for v in result.verdicts.values()
        if v.status is VerdictStatus.ERROR
    )
    assert set(server.fault_counts) == {"429", "500", "timeout", "garbage"}
    # every good answer became an ok verdict, and no request was answered twice
    assert sum(server.answered.values()) == result.stats.ok
    assert max(server.answered.values()) == 1
    for request in requests:
        verdict = result.verdicts[request.key]
        answered = server.answered[_server_key(judge, request)]
        assert answered == (1 if verdict.ok else 0)

    # a rerun retries the failures only; a success is never judged again
    server.faults = FaultMix()
    rerun = await _engine(judge, store).run(requests)
    await judge.aclose()
    assert (rerun.stats.cached, rerun.stats.called) == (result.stats.ok, result.stats.failed)
    assert rerun.stats.ok == result.stats.failed
    assert max(server.answered.values()) == 1
    assert sum(server.answered.values()) == 300


async def test_a_429_is_retried_and_the_verdict_counts_its_attempts(server: FakeServer) -> None:
    server.script.append(Scripted(429, {"error": "slow down"}, {"Retry-After": "0"}))
    judge = OpenAIJudge(server.base_url, "stub-judge")
    result = await _engine(judge, RunStore(":memory:")).run(_requests(judge, 1))
    await judge.aclose()
    (verdict,) = result.verdicts.values()
    assert verdict.ok and verdict.attempts == 2
    assert result.stats.retries == 1 and server.calls == 2


async def test_a_fatal_error_is_recorded_without_a_retry(server: FakeServer) -> None:
    server.script.append(Scripted(401, {"error": {"message": "bad key"}}))
    judge = OpenAIJudge(server.base_url, "stub-judge")
    result = await _engine(judge, RunStore(":memory:")).run(_requests(judge, 1))
    await judge.aclose()
    (verdict,) = result.verdicts.values()
    assert verdict.status is VerdictStatus.ERROR and verdict.score is None
    assert "HTTP 401" in (verdict.error or "") and "bad key" in (verdict.error or "")
    assert server.calls == 1 and result.stats.retries == 0


# -- budgets ------------------------------------------------------------------------------------
async def test_a_budget_stops_the_run_and_the_next_run_resumes_without_repeating_a_call(
    server: FakeServer, tmp_path: Path
) -> None:
    judge = OpenAIJudge(server.base_url, "stub-judge")
    requests = _requests(judge, 30)
    path = tmp_path / "run.sqlite"
    with RunStore(path) as store:
        stopped = await _engine(judge, store, budget=Budget(max_calls=10), concurrency=2).run(
            requests
        )
    assert not stopped.complete and "call budget of 10" in (stopped.stopped or "")
    assert (stopped.stats.called, stopped.stats.pending) == (10, 20)
    with RunStore(path) as store:
        resumed = await _engine(judge, store).run(requests)
        assert store.count() == 30
    await judge.aclose()
    assert resumed.complete
    assert (resumed.stats.cached, resumed.stats.called) == (10, 20)
    assert server.calls == 30 and max(server.answered.values()) == 1


class _CountingBatcher(BaseJudge):
    """A batching judge that counts every request it is sent."""

    backend = "counting-batcher"
    batch_size = 256

    def __init__(self) -> None:
        self.received = 0

    async def judge_batch(self, requests: Sequence[Request]) -> list[Verdict]:
        self.received += len(requests)
        return [Verdict.scored(1.0, label="true") for _ in requests]


def _batcher_requests(judge: BaseJudge, n: int) -> list[Request]:
    return [
        Request.make(judge.fingerprint, REFUSAL, {"prompt": f"p{i}", "response": f"r{i}"})
        for i in range(n)
    ]


async def test_a_batching_judge_is_sent_no_more_requests_than_the_call_budget() -> None:
    judge = _CountingBatcher()
    store = RunStore(":memory:")
    engine = Engine(judge, store, EngineConfig(budget=Budget(max_calls=10), progress=False))
    result = await engine.run(_batcher_requests(judge, 200))
    assert judge.received == 10  # one batch cut to what the budget has left
    assert (result.stats.called, result.stats.pending) == (10, 190)
    assert result.stopped == "call budget of 10 reached"
    again = await engine.run(_batcher_requests(judge, 200))  # the budget is the engine's
    assert judge.received == 10 and again.stopped == "call budget of 10 reached"


@pytest.mark.parametrize("limit", [7, 50])
async def test_retries_count_against_the_call_budget_exactly(
    server: FakeServer, limit: int
) -> None:
    server.faults = FaultMix(rate_500=0.5, seed=3)  # about one call in two fails and is retried
    judge = OpenAIJudge(server.base_url, "stub-judge", max_concurrency=8)
    requests = _requests(judge, 100)
    engine = _engine(judge, RunStore(":memory:"), budget=Budget(max_calls=limit))
    result = await engine.run(requests)
    await judge.aclose()
    assert server.calls == limit  # every attempt, retries included, and not one more
    assert server.fault_counts["500"] > 0 and server.calls > result.stats.called
    assert not result.complete and result.stopped == f"call budget of {limit} reached"
    # a request whose retry the budget refused is pending (judged next run), not a failure
    assert result.stats.pending == 100 - len(result.verdicts)
    assert all(v.status is VerdictStatus.OK for v in result.verdicts.values())


async def test_the_token_budget_is_reserved_before_each_call() -> None:
    def fn(request: Request) -> float:
        return 1.0

    # with a context window the callable judge counts words (and reports no tokens itself)
    judge = CallableJudge(fn, name="counted", context_window=1000, max_concurrency=4)
    requests = _batcher_requests(judge, 20)
    (each,) = {judge.count_tokens(r) for r in requests}
    assert each is not None
    limit = 4 * each + each // 2
    engine = Engine(
        judge, RunStore(":memory:"), EngineConfig(budget=Budget(max_tokens=limit), progress=False)
    )
    result = await engine.run(requests)
    assert result.stats.called == 4  # a fifth call would pass the budget: it is not sent
    assert result.stopped == (
        f"token budget of {limit} reached ({4 * each} spent, the next call needs about {each})"
    )


@pytest.mark.parametrize("bad", [0, -5])
def test_a_budget_below_one_is_an_error(bad: int) -> None:
    with pytest.raises(ConfigError, match=f"max_calls must be an integer >= 1 .*not {bad}"):
        Budget(max_calls=bad)
    with pytest.raises(ConfigError, match=f"max_tokens must be an integer >= 1 .*not {bad}"):
        Budget(max_tokens=bad)


# -- kill and resume ----------------------------------------------------------------------------
CLIENT = """
import sys
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.judges.openai_compat import OpenAIJudge
from judgeprobe.core.request import Request
from judgeprobe.rubrics import builtin_rubric

base_url, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
judge = OpenAIJudge(base_url, "stub-judge", max_concurrency=4)
rubric = builtin_rubric("refusal")
requests = [
    Request.make(judge.fingerprint, rubric, {"prompt": f"prompt {i}", "response": f"reply {i}"})
    for i in range(n)
]
with RunStore(path) as store:
    result = Engine(judge, store, EngineConfig(progress=False)).run_sync(requests)
print(result.stats.cached, result.stats.called, flush=True)
"""


def _contents(path: Path) -> dict[str, tuple[Any, ...]]:
    """What a run store says about each request (everything but timings and attempt counts)."""
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT key, judge, rubric, trial, fields, status, score, label, distribution, "
            "raw_text, error FROM verdicts"
        ).fetchall()
    return {row[0]: tuple(row[1:]) for row in rows}


def _client(base_url: str, path: Path, n: int) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.Popen(
        [sys.executable, "-c", CLIENT, base_url, str(path), str(n)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_a_run_killed_mid_way_resumes_to_the_same_store_without_repeating_a_finished_call(
    tmp_path: Path,
) -> None:
    n = 200
    reference, killed = tmp_path / "reference.sqlite", tmp_path / "killed.sqlite"
    with serve_in_thread(FakeServer(latency_s=0.02)) as server:
        done = _client(server.base_url, reference, n)  # an uninterrupted run, for comparison
        out, err = done.communicate(timeout=120)
        assert done.returncode == 0, err
        server.received.clear()
        server.answered.clear()

        process = _client(server.base_url, killed, n)
        deadline = time.monotonic() + 60
        while sum(server.answered.values()) < n // 3 and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()[1]
            time.sleep(0.002)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)
        assert process.returncode == -signal.SIGKILL

        finished = _contents(killed)
        assert 0 < len(finished) < n  # the kill landed mid-run
        calls_at_kill = dict(server.received)

        resumed = _client(server.base_url, killed, n)
        out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
        cached, called = map(int, out.split())

    assert (cached, cached + called) == (len(finished), n)
    assert _contents(killed) == _contents(reference)
    # a call whose verdict was stored before the kill was never made again
    judge = OpenAIJudge(server.base_url, "stub-judge", max_concurrency=4)
    stored_keys = {_server_key(judge, r) for r in _requests(judge, n) if r.key in finished}
    assert len(stored_keys) == len(finished)
    assert all(server.received[k] == calls_at_kill[k] for k in stored_keys)
    # only the calls in flight at the kill (at most the concurrency) were made twice
    assert sum(server.received.values()) - n <= judge.max_concurrency


# -- progress -----------------------------------------------------------------------------------
def test_the_progress_line_shows_its_description_as_written_never_as_markup() -> None:
    from io import StringIO

    from rich.console import Console

    from judgeprobe.engine.progress import EngineProgress

    description = "[/] [link=http://x]click me[/link] (stage)"
    screen = StringIO()
    console = Console(file=screen, width=200, force_terminal=True, color_system="truecolor")
    with EngineProgress(description, 3, enabled=True, console=console) as progress:
        progress.update(done=1, called=1, cached=0, failed=0)
    shown = screen.getvalue()
    assert description in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)
    assert "\x1b]8;" not in shown  # no terminal hyperlink


class _DeclaredOnly:
    """A judge written against the protocol alone, with no :class:`BaseJudge` underneath.

    It has none of the loose attributes (``batch_size``, ``in_process``, ``count_tokens``) the
    engine once looked for: what the engine may do is only what ``capabilities`` declares.
    """

    def __init__(self, capabilities: JudgeCapabilities, delay_s: float = 0.0) -> None:
        self.capabilities = capabilities
        self.delay_s = delay_s
        self.batches: list[int] = []
        self.counted: list[int] = []

    @property
    def fingerprint(self) -> str:
        return "declared-only"

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "declared-only",
            "endpoint": "https://example.test/declared-secret-value",
        }

    def secrets(self) -> Sequence[str]:
        return ["declared-secret-value"]

    def count_tokens_many(self, requests: Sequence[Request]) -> list[int | None]:
        self.counted.append(len(requests))
        return [len(r.render().split()) for r in requests]

    async def judge(self, request: Request) -> Verdict:
        return (await self.judge_batch([request]))[0]

    async def judge_batch(self, requests: Sequence[Request]) -> list[Verdict]:
        self.batches.append(len(requests))
        await asyncio.sleep(self.delay_s)
        return [Verdict.scored(1.0, label="true") for _ in requests]

    async def aclose(self) -> None:
        return None


def _declared_requests(n: int, words: int = 1) -> list[Request]:
    return [
        Request.make("declared-only", REFUSAL, {"prompt": f"p{i}", "response": "word " * words})
        for i in range(n)
    ]


def test_a_judge_with_only_the_protocol_members_is_a_judge() -> None:
    assert isinstance(_DeclaredOnly(JudgeCapabilities()), Judge)


async def test_the_engine_batches_by_the_declared_batch_size_and_redacts_declared_secrets() -> None:
    judge = _DeclaredOnly(JudgeCapabilities(batch_size=4, max_concurrency=2))
    store = RunStore(":memory:")
    result = await Engine(judge, store, EngineConfig(progress=False)).run(_declared_requests(10))
    assert result.complete and result.stats.called == 10
    assert sorted(judge.batches) == [2, 4, 4]
    assert "declared-secret-value" not in json.dumps(store.judges())


async def test_the_engine_skips_inputs_beyond_the_declared_context_window() -> None:
    short = _DeclaredOnly(JudgeCapabilities()).count_tokens_many(_declared_requests(1))[0]
    assert short is not None
    judge = _DeclaredOnly(JudgeCapabilities(context_window=short + 5))
    requests = [*_declared_requests(3), *_declared_requests(2, words=50)]
    result = await Engine(judge, RunStore(":memory:"), EngineConfig(progress=False)).run(requests)
    assert (result.stats.called, result.stats.skipped) == (3, 2)
    assert judge.counted == [5]  # every input counted once, in one call


@pytest.mark.parametrize(("in_process", "status"), [(False, "error"), (True, "ok")])
async def test_the_call_timeout_follows_the_declared_in_process_capability(
    in_process: bool, status: str
) -> None:
    judge = _DeclaredOnly(JudgeCapabilities(in_process=in_process), delay_s=0.3)
    config = EngineConfig(progress=False, timeout_s=0.05, max_retries=0)
    (request,) = _declared_requests(1)
    result = await Engine(judge, RunStore(":memory:"), config).run([request])
    assert result.verdicts[request.key].status.value == status


def test_a_base_judge_declares_the_capabilities_its_attributes_set() -> None:
    assert _CountingBatcher().capabilities == JudgeCapabilities(batch_size=256)
    judge = CallableJudge(lambda r: 1.0, name="c", max_concurrency=3, context_window=99)
    assert judge.capabilities == JudgeCapabilities(max_concurrency=3, context_window=99)
    assert BaseJudge().capabilities == JudgeCapabilities()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"batch_size": 0}, r"judge capability batch_size must be an integer >= 1, got 0"),
        ({"max_concurrency": 1.5}, r"judge capability max_concurrency must be an integer >= 1"),
        ({"context_window": 0}, r"judge capability context_window must be an integer >= 1"),
        ({"in_process": "yes"}, r"judge capability in_process must be a bool, got 'yes'"),
    ],
)
def test_a_capability_out_of_range_is_a_config_error(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        JudgeCapabilities(**options)


# -- warm caches ----------------------------------------------------------------------------------
def test_pending_requests_are_sent_grouped_by_rubric_and_shared_prompt() -> None:
    # planned interleaved, as a probe plans them: item by item, each under two rubrics
    sent: list[tuple[str, str]] = []

    def record(request: Request) -> float:
        sent.append((request.rubric.name, request.field_map["prompt"]))
        return 1.0

    judge = CallableJudge(record, name="recorder", max_concurrency=1)
    rubrics = [
        builtin_rubric("harmfulness"),
        builtin_rubric("harmfulness").with_template("Rate it.\n{prompt}\n{response}", name="terse"),
    ]
    planned = [
        Request.make(judge.fingerprint, rubric, {"prompt": f"p{i % 3}", "response": f"r{i}"})
        for i in range(6)
        for rubric in rubrics
    ]
    Engine(judge, RunStore(":memory:"), EngineConfig(progress=False)).run_sync(planned)
    runs = [name for i, (name, _) in enumerate(sent) if i == 0 or sent[i - 1][0] != name]
    assert len(runs) == 2  # each rubric's requests run together
    for name in ("harmfulness", "terse"):
        prompts = [prompt for rubric, prompt in sent if rubric == name]
        assert prompts == sorted(prompts)  # requests sharing a prompt run one after another


def test_a_short_api_key_the_judge_declares_is_redacted_from_the_store(tmp_path: Path) -> None:
    """A 7-character key (``OPENAI_API_KEY=tok1234``) echoed by a server was stored verbatim:
    secrets under 8 characters were never replaced."""
    store = RunStore(tmp_path / "s.sqlite", secrets=["tok1234"])
    store.set_meta("note", "the server echoed Bearer tok1234 back")
    store.close()
    raw = (tmp_path / "s.sqlite").read_bytes()
    assert b"tok1234" not in raw
