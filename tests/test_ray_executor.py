"""The ray executor on a local Ray instance of 2 CPUs (started once for the module).

What it stores must be what the local executor stores, for the real profanity classifier and
for an HTTP judge against the chat stub; a worker killed mid-run loses no request and no stored
request is judged again; the rate limit is one for all workers, at the server.
"""

from __future__ import annotations

import asyncio
import bisect
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from typer.testing import CliRunner  # noqa: E402

from fake_server import FakeServer, FaultMix, serve_in_thread  # noqa: E402
from judgeprobe._cli.main import app  # noqa: E402
from judgeprobe.audit.config import parse_config  # noqa: E402
from judgeprobe.audit.run import run_audit  # noqa: E402
from judgeprobe.core.request import Request  # noqa: E402
from judgeprobe.core.verdict import Verdict  # noqa: E402
from judgeprobe.engine import Engine, EngineConfig, RunStore, run_blocking  # noqa: E402
from judgeprobe.engine.executors import build_executor  # noqa: E402
from judgeprobe.engine.executors.ray import JudgeRecipe, RayExecutor  # noqa: E402
from judgeprobe.engine.limits import Budget  # noqa: E402
from judgeprobe.errors import ConfigError  # noqa: E402
from judgeprobe.judges import CallableJudge  # noqa: E402
from judgeprobe.judges.registry import build_judge  # noqa: E402
from judgeprobe.rubrics import builtin_rubric  # noqa: E402

STORED = "key, judge, rubric, trial, fields, status, score, label, distribution, raw_text, error"


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def stub() -> Iterator[FakeServer]:
    with serve_in_thread(FakeServer(latency_s=0.02)) as server:
        yield server


def _content(path: Path) -> list[tuple[Any, ...]]:
    """The verdicts of a run store, by key, without timings and attempt counts."""
    with closing(sqlite3.connect(path)) as db:
        return db.execute(f"SELECT {STORED} FROM verdicts ORDER BY key, trial").fetchall()


def _audit(tmp_path: Path, out: str, judge: str, rubric: str, **engine: Any) -> Any:
    config = parse_config(
        {
            "judge": judge,
            "rubric": rubric,
            "data": "demo",
            "limit": 12,
            "probes": {"repetition": {"counts": [2]}},
            "out": str(tmp_path / out),
            "engine": engine,
        }
    )
    return run_audit(config, progress=False, write_card=False)


def test_judge_profanity_executor_ray_stores_what_the_local_executor_stores(
    cluster: None, tmp_path: Path
) -> None:
    local = _audit(tmp_path, "local", "profanity", "toxicity")
    config = tmp_path / "audit.yaml"
    config.write_text(
        "judge: profanity\nrubric: toxicity\ndata: demo\nlimit: 12\n"
        "probes: {repetition: {counts: [2]}}\n"
    )
    out = tmp_path / "ray"
    result = CliRunner().invoke(
        app, ["audit", str(config), "--out", str(out), "--executor", "ray", "--fail-on", "never"]
    )
    assert result.exit_code == 0, result.output
    assert _content(out / "run.sqlite") == _content(tmp_path / "local" / "run.sqlite")
    with RunStore(out / "run.sqlite") as store:
        assert store.count() == local.engine_totals["called"] > 0


def test_an_http_judge_on_ray_stores_what_the_local_executor_stores_with_one_call_each(
    cluster: None, stub: FakeServer, tmp_path: Path
) -> None:
    judge = f"openai:stub-judge@{stub.base_url}"
    local = _audit(tmp_path, "local", judge, "refusal")
    calls = stub.calls
    options = {"workers": 2, "max_concurrency_per_worker": 4, "requests_per_minute": 6000}
    remote = _audit(tmp_path, "ray", judge, "refusal", executor="ray", executor_options=options)
    assert remote.complete and stub.calls - calls == local.engine_totals["called"] > 0
    assert _content(tmp_path / "ray" / "run.sqlite") == _content(tmp_path / "local" / "run.sqlite")


class KillingStore(RunStore):
    """A run store that kills worker 0 of ``executor`` when it stores its ``at``-th verdict."""

    def __init__(self, executor: RayExecutor, at: int) -> None:
        super().__init__(":memory:")
        self.executor, self.at = executor, at
        self.stored: list[str] = []
        self.before_kill: list[str] = []

    def put(self, request: Request, verdict: Verdict) -> Verdict:
        self.stored.append(request.key)
        if len(self.stored) == self.at:
            self.before_kill = list(self.stored)
            ray.kill(self.executor.actors[0])
        return super().put(request, verdict)


def test_a_worker_killed_mid_run_has_its_requests_judged_by_another_and_none_twice(
    cluster: None, stub: FakeServer
) -> None:
    judge = build_judge(f"openai:stub-judge@{stub.base_url}")
    rubric = builtin_rubric("refusal")
    requests = [
        Request.make(judge.fingerprint, rubric, {"prompt": f"question {i}", "response": "no"})
        for i in range(24)
    ]
    executor = RayExecutor(judge, workers=2, max_concurrency_per_worker=2, max_restarts=0)
    store = KillingStore(executor, at=3)
    engine = Engine(judge, store, EngineConfig(progress=False), executor=executor)
    try:
        result = run_blocking(engine.run(requests))
    finally:
        executor.shutdown()
    keys = {r.key for r in requests}
    assert result.complete and set(result.verdicts) == keys and sorted(store.stored) == sorted(keys)
    assert len(executor.dispatched) > len(keys)  # the killed worker's requests were sent again
    assert all(executor.dispatched.count(key) == 1 for key in store.before_kill)
    assert all(v.status.value == "ok" for v in result.verdicts.values())


class KillingServer(FakeServer):
    """The chat stub that kills worker 0 of ``executor`` 50 ms after its ``at``-th call arrives
    (half way through that round of calls)."""

    def __init__(self, at: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.at = at
        self.executor: RayExecutor | None = None

    async def _chat(self, request: Any) -> Any:
        if len(self.arrivals) + 1 == self.at and self.executor is not None:
            asyncio.get_running_loop().call_later(0.05, ray.kill, self.executor.actors[0])
        return await super()._chat(request)


def test_a_killed_worker_costs_only_its_calls_in_flight_not_its_chunks(cluster: None) -> None:
    """2 workers of 4 calls in flight, chunks of 16 requests, 0.1 s a call: worker 0 is killed
    in the third round of its first chunk, 8 of its verdicts made and 4 calls in flight. Before,
    its verdicts came back with the whole chunk, so the driver lost them and sent all 16 again
    (12 calls repeated at the server); now each verdict streams back as it is made."""
    server = KillingServer(at=21, latency_s=0.1)
    with serve_in_thread(server):
        judge = build_judge(f"openai:stub-judge@{server.base_url}")
        rubric = builtin_rubric("refusal")
        requests = [
            Request.make(judge.fingerprint, rubric, {"prompt": f"kill {i}", "response": "no"})
            for i in range(64)
        ]
        executor = RayExecutor(judge, workers=2, max_concurrency_per_worker=4, max_restarts=0)
        server.executor = executor
        engine = Engine(
            judge, RunStore(":memory:"), EngineConfig(progress=False), executor=executor
        )
        try:
            result = run_blocking(engine.run(requests))
        finally:
            executor.shutdown()
        repeated = sum(n - 1 for n in server.received.values() if n > 1)
    assert result.complete and len(result.verdicts) == 64
    assert all(v.status.value == "ok" for v in result.verdicts.values())
    assert 1 <= repeated <= 5, (repeated, executor.lost)  # before: 12


@pytest.mark.parametrize("max_calls", [20, 90])
def test_every_attempt_a_worker_makes_counts_on_the_call_budget(
    cluster: None, max_calls: int
) -> None:
    # the server fails one call in three with a 500; retries must stay within --max-calls
    faults = FaultMix(rate_500=1 / 3, seed=7)
    with serve_in_thread(FakeServer(latency_s=0.01, faults=faults)) as server:
        judge = build_judge(f"openai:stub-judge@{server.base_url}")
        rubric = builtin_rubric("refusal")
        requests = [
            Request.make(judge.fingerprint, rubric, {"prompt": f"budget {i}", "response": "no"})
            for i in range(30)
        ]
        executor = RayExecutor(judge, workers=2, max_concurrency_per_worker=4, max_retries=5)
        config = EngineConfig(
            progress=False, backoff_base_s=0.01, budget=Budget(max_calls=max_calls)
        )
        engine = Engine(judge, RunStore(":memory:"), config, executor=executor)
        try:
            result = run_blocking(engine.run(requests))
        finally:
            executor.shutdown()
        calls, failed = server.calls, server.fault_counts["500"]
    assert failed > 0
    assert calls <= max_calls
    attempts = sum(v.attempts for v in result.verdicts.values())
    if max_calls == 20:  # cut by the budget: what is left stays pending, to resume
        assert not result.complete and "call budget of 20" in str(result.stopped)
    else:  # room for every retry: each request answered, every call counted on its verdict
        assert result.complete and calls == attempts
        assert all(v.status.value == "ok" for v in result.verdicts.values())


def test_the_ray_options_are_checked_and_named() -> None:
    judge = build_judge("profanity")
    with pytest.raises(ConfigError, match=r"executor_options\.workers: must be an integer >= 1"):
        RayExecutor(judge, workers=0)
    with pytest.raises(ConfigError, match=r"max_concurrency_per_worker: must be an integer >= 1"):
        RayExecutor(judge, max_concurrency_per_worker="4")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"requests_per_minute: must be a number > 0"):
        RayExecutor(judge, requests_per_minute=0)
    with pytest.raises(ConfigError, match=r"engine\.executor_options: .*'nodes'"):
        build_executor("ray", judge, {"nodes": 2})


def test_a_cluster_that_cannot_be_joined_is_a_config_error_naming_the_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(**options: Any) -> None:
        raise ConnectionError(f"could not connect to {options['address']}")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    judge = build_judge("profanity")
    request = Request.make(judge.fingerprint, builtin_rubric("toxicity"), {"response": "hi"})
    executor = RayExecutor(judge, address="ray://nowhere:10001")
    with (
        RunStore(":memory:") as store,
        pytest.raises(
            ConfigError, match=r"executor_options\.address: cannot join .*'ray://nowhere:10001'"
        ),
    ):
        run_blocking(executor.execute([request], store))


def test_workers_build_a_spec_judge_from_its_spec_and_get_a_judge_made_in_code_as_it_is() -> None:
    built = build_judge("openai:stub-judge@http://127.0.0.1:9/v1", max_concurrency=3)
    recipe = JudgeRecipe.of(built)
    assert (recipe.spec, recipe.options, recipe.judge) == (
        "openai:stub-judge@http://127.0.0.1:9/v1",
        {"max_concurrency": 3},
        None,
    )
    assert recipe.build().fingerprint == built.fingerprint
    made = CallableJudge(lambda r: 1.0, name="one")
    assert JudgeRecipe.of(made).build() is made


def _busiest_second(arrivals: list[float]) -> int:
    """The most calls that arrived within any one-second window."""
    times = sorted(arrivals)
    return max(bisect.bisect_left(times, t + 1.0) - i for i, t in enumerate(times))


def _paced_run(stub: FakeServer, workers: int, tag: str) -> tuple[list[float], list[str]]:
    """Judge 80 fresh requests at 20 a second on ``workers`` workers: the arrivals at the server
    of the last 79, and every request key the executor sent to a worker."""
    judge = build_judge(f"openai:stub-judge@{stub.base_url}")
    rubric = builtin_rubric("refusal")
    requests = [
        Request.make(judge.fingerprint, rubric, {"prompt": f"{tag} {i}", "response": "no"})
        for i in range(80)
    ]
    executor = RayExecutor(
        judge, workers=workers, max_concurrency_per_worker=4, requests_per_minute=1200
    )
    try:
        with RunStore(":memory:") as store:
            run_blocking(executor.execute(requests[:1], store))  # start the workers first
            del stub.arrivals[:]
            executed = run_blocking(executor.execute(requests[1:], store))
    finally:
        executor.shutdown()
    assert len(executed.verdicts) == 79 and len(stub.arrivals) == 79
    return list(stub.arrivals), list(executor.dispatched)


def test_the_ray_rate_limit_is_shared_by_the_workers_and_binds_at_the_server(
    cluster: None, stub: FakeServer
) -> None:
    # 20 requests a second; the shared bucket lets at most one second's allowance (20) start at
    # once, so a one-second window holds at most 20 + 20 starts, and some more arrivals where a
    # busy machine delays a few started calls into the next ones (10 allowed)
    two, two_sent = _paced_run(stub, workers=2, tag="two")
    assert _busiest_second(two) <= 20 + 20 + 10
    # the 59 requests past the first burst take at least about 59 / 20 s at the server
    assert max(two) - min(two) >= 0.9 * (79 - 20) / 20
    one, one_sent = _paced_run(stub, workers=1, tag="one")
    assert _busiest_second(one) <= 20 + 20 + 10
    assert max(one) - min(one) >= 0.9 * (79 - 20) / 20
    # the limit binds, not the workers: each run sent every request once, and no more calls
    # reached the server with two workers than with one
    assert len(two_sent) == len(set(two_sent)) == 80
    assert len(one_sent) == len(set(one_sent)) == 80
    assert len(two) == len(one) == 79
