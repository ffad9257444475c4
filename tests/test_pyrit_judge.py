"""PyRIT scorers as judges: real PyRIT scorer classes on a tiny fake chat target.

The target answers as a model would (JSON with ``score_value`` and ``rationale``), or with a
blocked or errored response, so these tests exercise PyRIT's own parsing, retries and fallbacks.
The scorer against a real model server is in ``test_pyrit_server.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("pyrit", reason="the optional extra judgeprobe[pyrit] is not installed")

from judgeprobe.judges.pyrit_setup import data_dir, ensure_memory, import_pyrit

import_pyrit()  # before any PyRIT module that writes its data folder is imported
ensure_memory()

from pyrit.models import Message, Score, construct_response_from_request  # noqa: E402
from pyrit.prompt_target import PromptTarget  # noqa: E402
from pyrit.prompt_target.common.target_capabilities import TargetCapabilities  # noqa: E402
from pyrit.prompt_target.common.target_configuration import TargetConfiguration  # noqa: E402
from pyrit.score import (  # noqa: E402
    LikertScalePaths,
    SelfAskLikertScorer,
    SelfAskRefusalScorer,
    SelfAskTrueFalseScorer,
)

from judgeprobe.core.request import Request  # noqa: E402
from judgeprobe.core.verdict import VerdictStatus  # noqa: E402
from judgeprobe.engine import Engine, EngineConfig, RunStore  # noqa: E402
from judgeprobe.errors import ConfigError  # noqa: E402
from judgeprobe.judges import build_judge  # noqa: E402
from judgeprobe.judges.pyrit_scorer import PyritScorerJudge  # noqa: E402
from judgeprobe.rubrics import builtin_rubric  # noqa: E402

REFUSAL = builtin_rubric("refusal")
HARMFULNESS = builtin_rubric("harmfulness")
Reply = Callable[[str], tuple[str, str]]
"""The scorer's question -> (the target's answer, its PyRIT error kind: "none", "blocked"...)."""


def refuses(question: str) -> tuple[str, str]:
    """A model that calls every response holding "can't" a refusal."""
    verdict = "True" if "can't" in question else "False"
    return json.dumps({"score_value": verdict, "rationale": f"looked: {verdict}"}), "none"


class FakeTarget(PromptTarget):
    """A chat target answering each question with ``reply``; counts calls and calls in flight."""

    _DEFAULT_CONFIGURATION = TargetConfiguration(
        capabilities=TargetCapabilities(
            supports_multi_turn=True,
            supports_editable_history=True,
            supports_json_output=True,
            supports_system_prompt=True,
        )
    )

    def __init__(self, *, reply: Reply = refuses, model: str = "fake-model") -> None:
        super().__init__(model_name=model, endpoint="http://fake.invalid/v1")
        self.reply = reply
        self.calls = 0
        self.in_flight = 0
        self.most_in_flight = 0

    async def _send_prompt_to_target_async(
        self, *, normalized_conversation: list[Message]
    ) -> list[Message]:
        self.calls += 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.01)
            request = normalized_conversation[-1].message_pieces[0]
            text, error = self.reply(request.converted_value)
            kind = "text" if error == "none" else "error"
            return [
                construct_response_from_request(
                    request=request,
                    response_text_pieces=[text],
                    response_type=kind,
                    error=error,
                )
            ]
        finally:
            self.in_flight -= 1


def request(judge: PyritScorerJudge, response: str, rubric: Any = REFUSAL) -> Request:
    return Request.make(
        judge.fingerprint, rubric, {"prompt": "How do I bake bread?", "response": response}
    )


def run(judge: PyritScorerJudge, requests: list[Request]) -> Any:
    return Engine(judge, RunStore(":memory:"), EngineConfig(progress=False)).run_sync(requests)


def test_a_true_false_scorer_answers_with_the_rubric_labels_and_its_rationale() -> None:
    target = FakeTarget()
    judge = PyritScorerJudge(SelfAskRefusalScorer(chat_target=target))
    refusal = request(judge, "I can't help with that.")
    answer = request(judge, "Mix flour, water and yeast; bake.")
    verdicts = run(judge, [refusal, answer]).verdicts
    assert (verdicts[refusal.key].label, verdicts[refusal.key].score) == ("true", 1.0)
    assert (verdicts[answer.key].label, verdicts[answer.key].score) == ("false", 0.0)
    assert verdicts[refusal.key].raw_text == "looked: True"
    assert verdicts[refusal.key].meta["pyrit_score_value"] == "true"
    assert target.calls == 2


def test_the_objective_and_the_scored_text_are_the_requests_prompt_and_response() -> None:
    seen: list[str] = []

    def record(question: str) -> tuple[str, str]:
        seen.append(question)
        return refuses(question)

    judge = PyritScorerJudge(SelfAskRefusalScorer(chat_target=FakeTarget(reply=record)))
    run(judge, [request(judge, "Mix flour and bake.")])
    (question,) = seen
    assert "How do I bake bread?" in question and "Mix flour and bake." in question


def test_a_blocked_answer_of_the_scorers_model_is_an_error_verdict_never_a_label() -> None:
    target = FakeTarget(reply=lambda q: ('{"error": "content filtered"}', "blocked"))
    judge = PyritScorerJudge(SelfAskRefusalScorer(chat_target=target))
    req = request(judge, "I can't help with that.")
    result = run(judge, [req])
    verdict = result.verdicts[req.key]
    assert verdict.status is VerdictStatus.ERROR and verdict.score is None
    assert verdict.label is None
    assert verdict.error is not None and "blocked" in verdict.error
    assert verdict.meta["pyrit_fallback"] == "blocked"
    assert target.calls == 1  # a block is not retried


def test_an_errored_answer_of_the_scorers_model_is_an_error_verdict() -> None:
    target = FakeTarget(reply=lambda q: ("server fell over", "processing"))
    judge = PyritScorerJudge(SelfAskTrueFalseScorer(chat_target=target))
    req = request(judge, "Mix flour and bake.")
    verdict = run(judge, [req]).verdicts[req.key]
    assert verdict.status is VerdictStatus.ERROR and verdict.score is None
    assert verdict.meta["pyrit_fallback"] == "error"


def test_a_failed_connection_is_retried_by_the_engine_then_an_error_verdict() -> None:
    def unreachable(question: str) -> tuple[str, str]:
        raise httpx.ConnectError("connection refused")

    target = FakeTarget(reply=unreachable)
    judge = PyritScorerJudge(SelfAskTrueFalseScorer(chat_target=target))
    req = request(judge, "Mix flour and bake.")
    config = EngineConfig(progress=False, max_retries=1, backoff_base_s=0.01)
    result = Engine(judge, RunStore(":memory:"), config).run_sync([req])
    verdict = result.verdicts[req.key]
    assert verdict.status is VerdictStatus.ERROR and verdict.attempts == 2
    assert "RetryableJudgeError" in (verdict.error or "")
    assert target.calls == 2


def test_an_undetermined_score_of_a_blocked_scorer_is_an_error_verdict() -> None:
    scorer = SelfAskRefusalScorer(chat_target=FakeTarget(reply=lambda q: ("{}", "blocked")))
    scorer.raise_if_scorer_blocks = False  # PyRIT then answers with an undetermined score
    judge = PyritScorerJudge(scorer)
    req = request(judge, "I can't help with that.")
    verdict = run(judge, [req]).verdicts[req.key]
    assert verdict.status is VerdictStatus.ERROR
    assert verdict.meta["pyrit_fallback"] == "undetermined"


def test_the_value_pyrit_substitutes_for_a_blocked_response_is_an_error_verdict() -> None:
    judge = PyritScorerJudge(SelfAskRefusalScorer(chat_target=FakeTarget()))
    fallback = Score(
        score_value="true",
        score_value_description="Refusal detected",
        score_type="true_false",
        score_rationale="Content was filtered, constituting a refusal.",
    )
    neutral = Score(
        score_value="false",
        score_value_description="Blocked response; returning false.",
        score_type="true_false",
        score_rationale="The response was blocked with no content to score; returning false.",
    )
    for score in (fallback, neutral):
        verdict = judge.verdict([score], REFUSAL)
        assert verdict.status is VerdictStatus.ERROR and verdict.label is None
    assert judge.verdict([], REFUSAL).meta["pyrit_fallback"] == "no_score"


def test_an_answer_that_is_not_the_json_asked_is_unparseable_after_pyrits_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RETRY_MAX_NUM_ATTEMPTS", "2")
    target = FakeTarget(reply=lambda q: ("true, I think", "none"))
    judge = PyritScorerJudge(SelfAskRefusalScorer(chat_target=target))
    req = request(judge, "I can't help with that.")
    verdict = run(judge, [req]).verdicts[req.key]
    assert verdict.status is VerdictStatus.UNPARSEABLE and verdict.score is None
    assert target.calls == 2


def test_a_likert_score_is_mapped_onto_the_rubrics_scale() -> None:
    def rate(question: str) -> tuple[str, str]:
        value = "5" if "kill" in question else "1"
        return json.dumps({"score_value": value, "rationale": f"rated {value}"}), "none"

    scale = LikertScalePaths.HATE_SPEECH_SCALE.load()
    scorer = SelfAskLikertScorer.from_likert_scale(
        chat_target=FakeTarget(reply=rate), likert_scale=scale
    )
    judge = PyritScorerJudge(scorer)
    harmful = request(judge, "Go and kill them all.", HARMFULNESS)
    harmless = request(judge, "Mix flour and bake.", HARMFULNESS)
    verdicts = run(judge, [harmful, harmless]).verdicts
    assert (verdicts[harmful.key].label, verdicts[harmful.key].score) == ("5", 5.0)
    assert (verdicts[harmless.key].label, verdicts[harmless.key].score) == ("1", 1.0)
    assert verdicts[harmful.key].meta["pyrit_value"] == 1.0


def test_true_and_false_can_be_mapped_to_other_labels() -> None:
    judge = PyritScorerJudge(
        SelfAskRefusalScorer(chat_target=FakeTarget()), true_label="2", false_label="4"
    )
    req = request(judge, "I can't help with that.", HARMFULNESS)
    assert run(judge, [req]).verdicts[req.key].label == "2"


def test_the_engine_bounds_the_scorer_calls_in_flight() -> None:
    target = FakeTarget()
    judge = PyritScorerJudge(SelfAskRefusalScorer(chat_target=target), max_concurrency=2)
    requests = [request(judge, f"Answer number {n}.") for n in range(6)]
    assert run(judge, requests).stats.called == 6
    assert target.calls == 6 and target.most_in_flight == 2


def test_the_fingerprint_names_the_scorer_its_identifier_and_its_targets_model() -> None:
    judge = PyritScorerJudge(SelfAskRefusalScorer(chat_target=FakeTarget()))
    described = judge.describe()
    assert described["scorer"] == "SelfAskRefusalScorer"
    assert described["identifier"].startswith("SelfAskRefusalScorer::")
    assert described["target"] == {
        "class": "FakeTarget",
        "model": "fake-model",
        "endpoint": "http://fake.invalid/v1",
    }
    same = PyritScorerJudge(SelfAskRefusalScorer(chat_target=FakeTarget()))
    other_model = PyritScorerJudge(SelfAskRefusalScorer(chat_target=FakeTarget(model="other")))
    other_scorer = PyritScorerJudge(SelfAskTrueFalseScorer(chat_target=FakeTarget()))
    assert judge.fingerprint == same.fingerprint
    assert len({judge.fingerprint, other_model.fingerprint, other_scorer.fingerprint}) == 3


def test_the_spec_builds_a_scorer_on_an_openai_compatible_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYRIT_TEST_KEY", "sk-secret-value")
    judge = build_judge(
        "pyrit:refusal",
        endpoint="http://127.0.0.1:9/v1",
        model="gemma-3-270m",
        api_key_env="PYRIT_TEST_KEY",
        mode="objective_lenient",
    )
    assert isinstance(judge, PyritScorerJudge)
    described = judge.describe()
    assert described["target"]["class"] == "OpenAIChatTarget"
    assert described["target"]["model"] == "gemma-3-270m"
    assert judge.secrets() == ["sk-secret-value"]
    assert "sk-secret-value" not in json.dumps(described)
    bodied = build_judge(
        "pyrit:true_false",
        endpoint="http://127.0.0.1:9/v1",
        model="m",
        max_tokens=96,
        extra_body={"top_p": 1, "api_key": "body-secret"},
    )
    options = bodied.describe()["options"]
    assert options["extra_body"] == {"top_p": 1, "api_key": "[redacted]", "max_tokens": 96}
    assert "body-secret" in bodied.secrets()
    assert (
        bodied.fingerprint
        != build_judge(
            "pyrit:true_false", endpoint="http://127.0.0.1:9/v1", model="m", max_tokens=32
        ).fingerprint
    )
    likert = build_judge(
        "pyrit:SelfAskLikertScorer", endpoint="http://h/v1", model="m", scale="violence_scale"
    )
    assert likert.describe()["scorer"] == "SelfAskLikertScorer"


def test_a_pyrit_spec_without_its_endpoint_and_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="needs the options endpoint and model"):
        build_judge("pyrit:refusal", model="m")


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("pyrit:nonsense", {}, "unknown PyRIT scorer 'nonsense'"),
        ("pyrit:likert", {}, "needs -J scale=NAME"),
        ("pyrit:refusal", {"scale": "VIOLENCE_SCALE"}, "takes no option 'scale'"),
        ("pyrit:refusal", {"mode": "polite"}, "mode='polite' is not one of PyRIT's"),
        ("pyrit:true_false", {"question": "missing.yaml"}, "no such file"),
        ("pyrit:refusal", {"temperture": 0}, "takes no option 'temperture'"),
        ("pyrit:refusal", {"max_tokens": 0}, "max_tokens must be >= 1"),
    ],
)
def test_a_bad_pyrit_spec_is_a_config_error(
    spec: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        build_judge(spec, endpoint="http://127.0.0.1:9/v1", model="m", **options)


def test_pyrit_writes_its_data_and_log_in_a_temporary_folder_not_in_the_users_home() -> None:
    from pyrit.common import path

    folder = data_dir()
    assert folder is not None and folder.is_dir()
    assert path.DB_DATA_PATH.is_relative_to(folder) and path.LOG_PATH.is_relative_to(folder)
    assert not folder.is_relative_to(Path.home())
    assert "XDG_DATA_HOME" not in os.environ or os.environ["XDG_DATA_HOME"] != str(folder)
