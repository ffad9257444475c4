"""The openai-batch executor against a local stub of the Files and Batches API.

Polling waits go through an injected ``sleep`` that records each delay and returns at once, so
the backoff is checked without waiting; the audit-level tests use tiny real delays.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from batch_server import BatchServer
from fake_server import serve_in_thread
from judgeprobe._cli.main import app
from judgeprobe.audit.config import parse_config, with_engine_options
from judgeprobe.audit.run import run_audit
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.engine import Engine, EngineConfig, RunStore, run_blocking
from judgeprobe.engine.executors.openai_batch import OpenAIBatchExecutor
from judgeprobe.engine.store import SCHEMA_VERSION
from judgeprobe.errors import ConfigError
from judgeprobe.judges import CallableJudge
from judgeprobe.judges.openai_compat import OpenAIJudge
from judgeprobe.rubrics import builtin_rubric

REFUSAL = builtin_rubric("refusal")
FAST = {"poll_s": 0.01, "max_poll_s": 0.02}


class Killed(Exception):
    """Stands for the process being killed while it waits."""


class Clock:
    """A fake ``sleep``: records each delay; raises :class:`Killed` at wait number ``kill_at``."""

    def __init__(self, kill_at: int | None = None) -> None:
        self.delays: list[float] = []
        self.kill_at = kill_at

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        if self.kill_at is not None and len(self.delays) >= self.kill_at:
            raise Killed


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[BatchServer]:
    options: dict[str, Any] = getattr(request, "param", {})
    with serve_in_thread(BatchServer(**options)) as stub:
        yield stub


def _requests(judge: OpenAIJudge, n: int = 6) -> list[Request]:
    return [
        Request.make(
            judge.fingerprint, REFUSAL, {"prompt": f"question {i}", "response": f"answer {i}"}
        )
        for i in range(n)
    ]


def _run(judge: OpenAIJudge, store: RunStore, requests: list[Request], clock: Clock) -> Any:
    executor = OpenAIBatchExecutor(judge, poll_s=1, max_poll_s=8, sleep=clock)
    engine = Engine(judge, store, EngineConfig(progress=False), executor=executor)
    return engine.run_sync(requests)


@pytest.mark.parametrize("server", [{"polls": 5}], indirect=True)
def test_the_batch_is_polled_with_exponential_backoff_and_its_answers_stored(
    server: BatchServer,
) -> None:
    judge = OpenAIJudge(server.base_url, "stub-judge")
    clock = Clock()
    with RunStore(":memory:") as store:
        result = _run(judge, store, _requests(judge), clock)
        [batch] = store.batches()
    assert clock.delays == [1, 2, 4, 8, 8]
    assert result.complete and result.stats.called == result.stats.ok == 6
    assert (server.uploads, server.created, server.calls, server.batch_lines) == (1, 1, 0, 6)
    assert batch["status"] == "completed" and batch["imported"] == 1
    live = {r.key: run_blocking(judge.judge(r)).label for r in _requests(judge)}
    assert {k: v.label for k, v in result.verdicts.items()} == live


def test_a_run_killed_while_it_waits_resumes_polling_the_same_batch(
    server: BatchServer, tmp_path: Path
) -> None:
    judge = OpenAIJudge(server.base_url, "stub-judge")
    server.polls = 3
    with RunStore(tmp_path / "run.sqlite") as store, pytest.raises(Killed):
        _run(judge, store, _requests(judge), Clock(kill_at=2))
    with RunStore(tmp_path / "run.sqlite") as store:
        assert [b["status"] for b in store.batches()] == ["in_progress"]
        result = _run(judge, store, _requests(judge), Clock())
    assert result.complete and len(result.verdicts) == 6
    assert (server.uploads, server.created) == (1, 1)


def test_failed_lines_are_error_verdicts_and_go_in_the_next_batch(server: BatchServer) -> None:
    judge = OpenAIJudge(server.base_url, "stub-judge")
    requests = _requests(judge)
    server.failing = {requests[0].key, requests[1].key}
    with RunStore(":memory:") as store:
        result = _run(judge, store, requests, Clock())
        assert result.complete and (result.stats.ok, result.stats.failed) == (4, 2)
        assert result.verdicts[requests[0].key].status is VerdictStatus.ERROR
        assert "HTTP 500: stub server error" in str(result.verdicts[requests[0].key].error)
        server.failing = set()
        again = _run(judge, store, requests, Clock())
    assert again.stats.cached == 4 and again.stats.ok == 2 and server.created == 2
    assert server.batch_lines == 6  # the second batch held the two failed requests only


@pytest.mark.parametrize("server", [{"expire_after": 4}], indirect=True)
def test_an_expired_batch_has_its_completed_lines_imported_and_the_rest_left_pending(
    server: BatchServer,
) -> None:
    judge = OpenAIJudge(server.base_url, "stub-judge")
    requests = _requests(judge)
    with RunStore(":memory:") as store:
        result = _run(judge, store, requests, Clock())
        assert not result.complete and result.stats.pending == 2 and len(result.verdicts) == 4
        assert result.stopped is not None
        assert (
            "batch batch_1 ended expired: 4 of 6 requests answered, 2 left pending"
            in result.stopped
        )
        assert store.batches()[0]["status"] == "expired"
        assert store.count() == 4  # the lines the batch never ran stored nothing
        server.expire_after = None
        again = _run(judge, store, requests, Clock())
    assert again.complete and again.stats.cached == 4 and again.stats.ok == 2
    assert server.created == 2


@pytest.mark.parametrize("server", [{"final": "failed"}], indirect=True)
def test_a_failed_batch_leaves_every_request_pending_and_says_so(server: BatchServer) -> None:
    judge = OpenAIJudge(server.base_url, "stub-judge")
    with RunStore(":memory:") as store:
        result = _run(judge, store, _requests(judge), Clock())
    assert not result.complete and result.stats.pending == 6 and not result.verdicts
    assert result.stopped is not None and "ended failed: 0 of 6" in result.stopped


def test_an_audit_with_the_openai_batch_executor_finds_what_a_live_audit_finds(
    server: BatchServer, tmp_path: Path
) -> None:
    def config(out: str, **engine: Any) -> Any:
        return parse_config(
            {
                "judge": f"openai:stub-judge@{server.base_url}",
                "rubric": "refusal",
                "data": "demo",
                "limit": 4,
                "probes": {
                    "repetition": {"counts": [2]},
                    "cluster": {"per_cluster": 3, "n_resamples": 200},
                },
                "out": str(tmp_path / out),
                "engine": engine,
            }
        )

    live = run_audit(config("live"), progress=False, write_card=False)
    calls = server.calls
    batched = run_audit(
        config("batch", executor="openai-batch", executor_options=FAST),
        progress=False,
        write_card=False,
    )
    assert server.calls == calls and server.created >= 2  # no live call; a batch per stage
    assert batched.complete and batched.engine_totals["called"] == live.engine_totals["called"]
    assert {n: r.to_dict()["findings"] for n, r in batched.results.items()} == {
        n: r.to_dict()["findings"] for n, r in live.results.items()
    }


@pytest.mark.parametrize("server", [{"flaky": 2}], indirect=True)
def test_transient_api_failures_while_polling_are_retried_with_backoff(server: BatchServer) -> None:
    judge = OpenAIJudge(server.base_url, "stub-judge")
    clock = Clock()
    with RunStore(":memory:") as store:
        result = _run(judge, store, _requests(judge), clock)
    assert result.complete and result.stats.ok == 6
    assert clock.delays[:2] == [1, 2] and server.created == 1


def test_a_store_of_schema_3_opens_migrated_with_empty_batch_tables(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    RunStore(path).close()
    with closing(sqlite3.connect(path)) as db:
        db.execute("DROP TABLE batch_requests")
        db.execute("DROP TABLE batches")
        db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        db.commit()
    with RunStore(path) as store:
        assert store.get_meta("schema_version") == str(SCHEMA_VERSION) == "5"
        assert store.batches() == [] and store.batch_requests() == {}
        store.put_batch("batch_1", digest="d", requests=2, input_file="file-1")
        assert store.open_batch("d") is not None and store.open_batch("e") is None


def test_the_executor_is_checked_by_name_and_by_judge() -> None:
    config = parse_config({"judge": "profanity", "rubric": "toxicity", "probes": ["repetition"]})
    with pytest.raises(ConfigError, match=r"--executor 'mpi': Value error, unknown executor 'mpi'"):
        with_engine_options(config, executor="mpi")
    with pytest.raises(ConfigError, match="openai-batch needs an OpenAI-compatible judge"):
        OpenAIBatchExecutor(CallableJudge(lambda r: 1.0, name="one"))
    judge = OpenAIJudge("http://127.0.0.1:9/v1", "m")
    with pytest.raises(ConfigError, match="poll_s <= max_poll_s"):
        OpenAIBatchExecutor(judge, poll_s=10, max_poll_s=1)


@pytest.mark.parametrize("server", [{"polls": 0}], indirect=True)
def test_the_audit_command_takes_the_executor_option(
    server: BatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["audit", "--judge", f"openai:stub-judge@{server.base_url}", "--rubric", "refusal",
            "--data", "demo", "--probes", "repetition", "--limit", "2", "--out", "out",
            "--fail-on", "never", "--executor", "openai-batch"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    # one batch per stage: the repetitions, then the rest of the rerun null's sample when the
    # stub's reruns disagree; never a live call
    assert server.created in (1, 2) and server.calls == 0 and server.batch_lines > 0
    assert f"judge calls: {server.batch_lines}," in result.output
