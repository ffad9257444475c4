"""Specifications of a server's usage figures that no call can have (``1e30`` tokens).

Stored as they are, they overflow the run store's integers: the audit crashed, left its run
``running``, and every rerun crashed again (``batch import`` alike). Such a figure (negative, not
finite, past 2**53) is counted as 0, the verdict is kept, and ``usage_dropped`` says why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fake_server import FakeServer, Scripted, serve_in_thread
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.engine import Engine, EngineConfig, RunStore, run_blocking
from judgeprobe.engine.batch.lines import line_verdict
from judgeprobe.judges.registry import build_judge
from judgeprobe.rubrics import builtin_rubric

REFUSAL = builtin_rubric("refusal")
ABSURD = [
    {"prompt_tokens": 1e30, "completion_tokens": 3},
    {"prompt_tokens": float("inf"), "completion_tokens": -3},
    {"prompt_tokens": 2**63, "completion_tokens": "many"},
]


def _body(usage: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "assistant", "content": "false"}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage}


def _request(judge: Any) -> Request:
    return Request.make(judge.fingerprint, REFUSAL, {"prompt": "q", "response": "no"})


@pytest.mark.parametrize("usage", ABSURD, ids=["1e30", "inf-negative", "2**63-text"])
def test_an_absurd_usage_figure_is_dropped_the_verdict_kept_and_stored(
    usage: dict[str, Any], tmp_path: Path
) -> None:
    with serve_in_thread(FakeServer()) as server:
        server.script.append(Scripted(200, json.dumps(_body(usage))))
        judge = build_judge(f"openai:stub-judge@{server.base_url}", logprobs=False)
        request = _request(judge)
        with RunStore(tmp_path / "run.sqlite") as store:
            engine = Engine(judge, store, EngineConfig(progress=False, max_retries=0))
            result = run_blocking(engine.run([request]))
            stored = store.get_many([request.key])[request.key]

    verdict = result.verdicts[request.key]
    assert (verdict.status.value, verdict.label) == ("ok", "false")
    assert verdict.prompt_tokens == 0 and verdict.completion_tokens in (0, 3)
    assert "not a possible token count" in verdict.meta["usage_dropped"]
    assert stored.label == "false" and stored.meta["usage_dropped"] == verdict.meta["usage_dropped"]


def test_a_batch_line_with_an_absurd_usage_figure_imports() -> None:
    judge = build_judge("openai:stub-judge@http://127.0.0.1:9/v1", logprobs=False)
    request = _request(judge)
    line = {"response": {"status_code": 200, "body": _body(ABSURD[0])}}

    verdict = line_verdict(request, line, logprobs=False, source="batch")
    with RunStore(":memory:") as store:
        store.put(request, verdict)
        kept = store.get_many([request.key])[request.key]

    assert (kept.status.value, kept.label, kept.prompt_tokens) == ("ok", "false", 0)
    assert "prompt_tokens 1e+30" in kept.meta["usage_dropped"]


def test_the_run_store_holds_no_impossible_token_count_from_any_judge() -> None:
    judge = build_judge("openai:stub-judge@http://127.0.0.1:9/v1", logprobs=False)
    request = _request(judge)

    with RunStore(":memory:") as store:
        store.put(request, Verdict.scored(1.0, prompt_tokens=10**30, completion_tokens=-1))
        kept = store.get_many([request.key])[request.key]

    assert (kept.prompt_tokens, kept.completion_tokens) == (0, 0)
