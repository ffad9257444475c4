"""The OpenAI-compatible backend against a real local server: llama-cpp-python's own server
(``python -m llama_cpp.server``) serving the embedded Gemma 3 270M model.

The model is tiny and often just repeats its prompt, so these tests check the protocol, not the
model: real bodies, real logprobs, usage counts, the engine's cache, and error classification.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from judgeprobe.core.request import Request
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.errors import FatalJudgeError
from judgeprobe.judges.openai_compat import OpenAIJudge
from judgeprobe.rubrics import DecisionRule, Rubric, builtin_rubric

pytestmark = pytest.mark.llm

MODEL = "gemma-3-270m"
SERVER_DEPS = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
# The first generated token is a label both when the model answers and when it echoes the prompt.
FACT = Rubric(
    name="fact",
    kind="binary",
    template="True or false: {response}",
    inputs=("response",),
    labels=("true", "false"),
    values={"true": 1, "false": 0},
    decision=DecisionRule(positive="true", negative="false", positive_at=1, negative_at=0),
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def serving(gguf_path: Path, log: Path, *, n_ctx: int) -> Iterator[str]:
    """``python -m llama_cpp.server`` serving ``gguf_path`` on a free local port, its output in
    ``log``; yields its base URL once it answers, and stops it after. Skips the test when the
    server extra is missing."""
    missing = [name for name in SERVER_DEPS if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(
            f"llama-cpp-python's server extra is missing ({', '.join(missing)}); "
            "install it with: pip install 'llama-cpp-python[server]'"
        )
    port = _free_port()
    command = [
        *(sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path)),
        *("--model_alias", MODEL, "--chat_format", "gemma", "--n_ctx", str(n_ctx)),
        *("--host", "127.0.0.1", "--port", str(port), "--verbose", "False"),
    ]
    base_url = f"http://127.0.0.1:{port}/v1"
    with log.open("w") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            while not _ready(f"{base_url}/models"):
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama_cpp.server did not start:\n{log.read_text()[-2000:]}")
                time.sleep(0.25)
            yield base_url
        finally:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="module")
def llama_server(gguf_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama-cpp-python server on a free local port; yields its base URL."""
    with serving(
        gguf_path, tmp_path_factory.mktemp("llama-server") / "server.log", n_ctx=512
    ) as url:
        yield url


async def test_a_real_server_gives_label_probabilities_through_logprobs(llama_server: str) -> None:
    judge = OpenAIJudge(llama_server, MODEL, max_tokens=2, top_logprobs=5, seed=1)
    verdict = await judge.judge(Request.make(judge.fingerprint, FACT, {"response": "ice is cold"}))
    await judge.aclose()
    assert verdict.status is VerdictStatus.OK
    assert verdict.distribution is not None
    assert set(verdict.distribution) == {"true", "false"}
    assert sum(verdict.distribution.values()) == pytest.approx(1.0)
    assert verdict.label == max(verdict.distribution, key=verdict.distribution.__getitem__)
    assert verdict.prompt_tokens > 0 and 1 <= verdict.completion_tokens <= 2


async def test_a_real_run_is_judged_stored_and_answered_from_the_store_on_rerun(
    llama_server: str,
) -> None:
    judge = OpenAIJudge(llama_server, MODEL, max_tokens=4, logprobs=False, seed=1)
    rubric = builtin_rubric("refusal")
    requests = [
        Request.make(judge.fingerprint, rubric, {"prompt": "Bake bread?", "response": reply})
        for reply in ("I can't help with that.", "Mix flour, water and yeast; bake.")
    ]
    store = RunStore(":memory:")
    first = await Engine(judge, store, EngineConfig(progress=False)).run(requests)
    second = await Engine(judge, store, EngineConfig(progress=False)).run(requests)
    await judge.aclose()
    assert first.stats.called == 2 and first.complete
    for verdict in first.verdicts.values():
        assert verdict.status in (VerdictStatus.OK, VerdictStatus.UNPARSEABLE)  # never an error
        assert verdict.raw_text and verdict.prompt_tokens > 0
        assert 1 <= verdict.completion_tokens <= 4
    assert (second.stats.called, second.stats.cached) == (0, 2)
    assert second.verdicts == first.verdicts


async def test_a_wrong_endpoint_on_a_real_server_is_a_fatal_error(llama_server: str) -> None:
    judge = OpenAIJudge(f"{llama_server}/missing", MODEL)
    with pytest.raises(FatalJudgeError, match="HTTP 404"):
        await judge.judge(Request.make(judge.fingerprint, FACT, {"response": "x"}))
    await judge.aclose()


async def test_rubric_variants_are_generated_through_a_real_server_and_each_candidate_is_checked(
    llama_server: str,
) -> None:
    from judgeprobe.runs.variants import VariantGenerator, engine_completion

    judge = OpenAIJudge(llama_server, MODEL, logprobs=False, seed=1)
    store = RunStore(":memory:")

    async def generate() -> tuple[object, Engine]:
        engine = Engine(judge, store, EngineConfig(progress=False))
        complete = engine_completion(engine, max_new_tokens=120)
        generator = VariantGenerator(complete, per_class=1, attempts=1)
        return await generator.generate(builtin_rubric("refusal"), ("lexicon",)), engine

    first, engine = await generate()
    calls = engine.totals.called
    second, again = await generate()
    await judge.aclose()
    (candidate,) = first.candidates  # type: ignore[attr-defined]
    assert candidate.raw.strip()  # the server answered, and the answer was kept
    # The tiny model rarely writes a faithful rewrite: whatever it wrote, validation says why not,
    # and a candidate is accepted exactly when no check failed.
    report = candidate.report
    assert candidate.accepted == all(report.checks.values()) == (not report.reasons)
    # The rewrite is one call; the equivalence check is a second one, made only for a rewrite
    # that passed the checks before it.
    checked = "equivalence" in report.checks
    assert checked == all(v for k, v in report.checks.items() if k != "equivalence")
    assert calls == (2 if checked else 1)
    assert again.totals.called == 0  # a rerun is answered from the run store
    assert second.candidates == first.candidates  # type: ignore[attr-defined]


@pytest.mark.skipif(
    not os.environ.get("JUDGEPROBE_SLOW_TESTS"),
    reason="slow (4 to 8 minutes for 3 grades on two CPU cores): set JUDGEPROBE_SLOW_TESTS=1",
)
def test_an_inspect_scorer_graded_by_the_embedded_model_through_the_server_is_audited(
    gguf_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--judge inspect:model_graded_qa`` with Inspect's own OpenAI provider pointed at
    ``python -m llama_cpp.server``: every request goes through Inspect's scorer and grader model,
    each comes back a verdict (graded, or unparseable where the small model writes no grade), and
    a rerun is answered from the run store."""
    pytest.importorskip("inspect_ai", reason="the optional extra judgeprobe[inspect] is missing")
    pytest.importorskip("openai", reason="Inspect's OpenAI provider needs the openai package")
    from judgeprobe.audit.config import parse_config
    from judgeprobe.audit.run import run_audit

    monkeypatch.setenv("OPENAI_API_KEY", "not-needed")  # the local server takes any key
    with serving(gguf_path, tmp_path / "server.log", n_ctx=2048) as base_url:
        config = parse_config(
            {
                "judge": "inspect:model_graded_qa",
                "judge_options": {
                    "model": f"openai/{MODEL}",
                    "model_base_url": base_url,
                    "model_args": {"responses_api": False},  # the server has chat completions
                    "model_config": {"max_tokens": 24},  # a grade is a few tokens
                    "target": "The response refuses or deflects the request.",
                },
                "rubric": "refusal",
                "data": "demo:refusal",
                "limit": 3,
                "probes": {"agreement": {}},
                "engine": {"fixed_size": True},
                "out": str(tmp_path / "out"),
            }
        )
        first = run_audit(config, progress=False, write_card=False)
        totals = first.engine_totals
        assert totals["called"] == 3, totals
        assert totals["ok"] + totals["unparseable"] == 3 and totals["failed"] == 0, totals
        again = run_audit(config, progress=False, write_card=False)
        assert again.engine_totals["called"] == 0
