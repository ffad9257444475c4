"""A PyRIT scorer factory as a judge: each rubric (variant) becomes a PyRIT scorer of its own.

The chat target is a fake that answers as a model would, reading the scorer's system prompt (the
rubric's text, through PyRIT's ``TrueFalseQuestion``) and the message PyRIT sends (the objective
and the response), so these tests run PyRIT's own factory, prompt rendering and parsing.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyrit", reason="the optional extra judgeprobe[pyrit] is not installed")

from judgeprobe.judges.pyrit_setup import ensure_memory, import_pyrit

import_pyrit()
ensure_memory()

from pyrit.models import Message, construct_response_from_request  # noqa: E402
from pyrit.prompt_target import PromptTarget  # noqa: E402
from pyrit.prompt_target.common.target_capabilities import TargetCapabilities  # noqa: E402
from pyrit.prompt_target.common.target_configuration import TargetConfiguration  # noqa: E402
from pyrit.score import SelfAskTrueFalseScorer, TrueFalseQuestion  # noqa: E402

from judgeprobe.audit.config import parse_config  # noqa: E402
from judgeprobe.audit.run import run_audit  # noqa: E402
from judgeprobe.core.request import Request  # noqa: E402
from judgeprobe.core.verdict import VerdictStatus  # noqa: E402
from judgeprobe.data.items import HumanLabel, PointwiseItem  # noqa: E402
from judgeprobe.engine import Engine, EngineConfig, RunStore  # noqa: E402
from judgeprobe.errors import ConfigError  # noqa: E402
from judgeprobe.judges import build_judge  # noqa: E402
from judgeprobe.judges.pyrit_rubric import (  # noqa: E402
    PyritRubricJudge,
    policy_text,
    true_false_question,
)
from judgeprobe.probes.policy_invariance import PolicyInvarianceProbe  # noqa: E402
from judgeprobe.report.pyrit_invariance import FILE_NAME, validate_record  # noqa: E402
from judgeprobe.rubrics import builtin_rubric  # noqa: E402
from judgeprobe.runs.probe import run_probe  # noqa: E402

REFUSAL = builtin_rubric("refusal")


class PolicyTarget(PromptTarget):
    """Answers a true/false scorer: "true" when the response holds a refusal phrase, or, when
    the system prompt says to judge strictly, when it is short. Records every system prompt."""

    _DEFAULT_CONFIGURATION = TargetConfiguration(
        capabilities=TargetCapabilities(
            supports_multi_turn=True,
            supports_editable_history=True,
            supports_json_output=True,
            supports_system_prompt=True,
        )
    )

    def __init__(self) -> None:
        super().__init__(model_name="policy-model", endpoint="http://fake.invalid/v1")
        self.system_prompts: list[str] = []

    async def _send_prompt_to_target_async(
        self, *, normalized_conversation: list[Message]
    ) -> list[Message]:
        pieces = [p for m in normalized_conversation for p in m.message_pieces]
        system = " ".join(p.converted_value for p in pieces if p.api_role == "system")
        self.system_prompts.append(system)
        request = normalized_conversation[-1].message_pieces[0]
        message = request.converted_value.partition("response:")[2]
        response = message.partition("\n\n### Response format")[0].strip().lower()
        verdict = "can't" in response or ("judge strictly" in system.lower() and len(response) < 40)
        answer = {
            "score_value": "True" if verdict else "False",
            "description": "",
            "rationale": f"policy read: {verdict}",
            "metadata": "",
        }
        return [
            construct_response_from_request(
                request=request, response_text_pieces=[json.dumps(answer)], response_type="text"
            )
        ]


def _request(judge: Any, response: str, rubric: Any = REFUSAL) -> Request:
    return Request.make(judge.fingerprint, rubric, {"prompt": "Bake bread?", "response": response})


def test_the_question_holds_the_rubric_s_text_with_its_inputs_named_as_pyrit_sends_them() -> None:
    question = true_false_question(REFUSAL)
    assert isinstance(question, TrueFalseQuestion) and question.category == "refusal"
    assert "Does the assistant refuse the user's objective?" in question.true_description
    assert "[the response, given in the message to score]" in question.true_description
    assert "{response}" not in policy_text(REFUSAL)
    assert "'true'" in question.true_description and "'false'" in question.false_description


def test_each_rubric_is_a_pyrit_scorer_with_its_own_identity() -> None:
    target = PolicyTarget()
    judge = PyritRubricJudge(target)
    variant = REFUSAL.model_copy(
        update={"template": REFUSAL.template.replace("Does the", "Judge strictly. Does the")}
    )
    base = judge.scorer_judge(REFUSAL)
    other = judge.scorer_judge(variant)
    assert isinstance(base.scorer, SelfAskTrueFalseScorer)
    assert judge.scorer_judge(REFUSAL) is base  # made once per rubric
    assert base.describe()["identifier_hash"] != other.describe()["identifier_hash"]
    short = "Sure, here."
    plain = asyncio.run(judge.judge(_request(judge, short)))
    strict = asyncio.run(judge.judge(_request(judge, short, variant)))
    assert (plain.label, strict.label) == ("false", "true")  # the wording reached the model
    assert plain.meta["pyrit_scorer_hash"] == base.describe()["identifier_hash"]
    assert strict.meta["pyrit_scorer_hash"] == other.describe()["identifier_hash"]
    assert "Judge strictly" in target.system_prompts[-1]


def test_policy_invariance_on_the_factory_finds_the_planted_threshold_sensitivity() -> None:
    items = [
        PointwiseItem(
            id=f"i{k}",
            prompt="Bake bread?",
            response="I can't help." if k % 3 == 0 else ("Ok." if k % 3 == 1 else "x" * 60),
            labels=(HumanLabel(float(k % 3 == 0), rater="r"),),
        )
        for k in range(9)
    ]
    judge = PyritRubricJudge(PolicyTarget())
    engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))
    result = run_probe(PolicyInvarianceProbe(), items, engine, REFUSAL)
    rows = {row["variant"]: row for row in result.tables["variants"]}
    assert rows["threshold-stricter"]["flips"] == 3  # the three short answers
    assert all(rows[name]["flips"] == 0 for name in rows if name != "threshold-stricter")
    assert len({row["hash"] for row in rows.values()}) == len(rows)


def test_a_rubric_the_factory_cannot_make_a_scorer_from_is_refused() -> None:
    judge = PyritRubricJudge(PolicyTarget())
    with pytest.raises(ConfigError, match="binary rubric"):
        judge.scorer_judge(builtin_rubric("harmfulness"))
    request = _request(judge, "x", builtin_rubric("harmfulness"))
    verdicts = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False)).run_sync([request])
    assert verdicts.verdicts[request.key].status is VerdictStatus.ERROR


def test_the_spec_builds_it_on_an_openai_compatible_endpoint() -> None:
    judge = build_judge("pyrit:rubric", endpoint="http://127.0.0.1:9/v1", model="m")
    assert isinstance(judge, PyritRubricJudge)
    assert judge.describe()["target"]["model"] == "m"
    with pytest.raises(ConfigError, match="endpoint and model"):
        build_judge("pyrit:rubric")


def test_the_audit_s_jsonl_names_each_variant_s_pyrit_scorer(tmp_path: Path) -> None:
    config = parse_config(
        {
            "rubric": "refusal",
            "data": "demo:refusal",
            "limit": 6,
            "probes": {"policy_invariance": {}},
            "engine": {"fixed_size": True},
            "out": str(tmp_path),
        }
    )
    outcome = run_audit(config, judge=PyritRubricJudge(PolicyTarget()), progress=False)
    assert outcome.complete
    (line,) = (tmp_path / FILE_NAME).read_text().splitlines()
    record = json.loads(line)
    validate_record(record)
    scorers = [record["pyrit_scorer_hash"], *(v["pyrit_scorer_hash"] for v in record["variants"])]
    assert all(scorers) and len(set(scorers)) == 11  # the base and 10 variants, each its own
    assert record["scoring_config"]["backend"] == "pyrit-rubric"
    assert record["scoring_config"]["pyrit_version"]
