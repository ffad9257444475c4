"""Specifications of the bill's expectation of an audit in rounds.

- The sound stand-in has none of the defects the probes look for: a repeated, concatenated or
  reordered response keeps its parts' decision, a harmful part makes the whole harmful, a swap
  of the pair's order keeps the preferred response, and a response swapped for another class's
  moves the decision.
- The expectation is what an audit in rounds of a judge deciding as the stand-in does makes: the
  same calls, below the fixed-size bound.
- ``judgeprobe bill`` prints it by default (the audit runs in rounds by default), and not with
  ``--fixed-size``; a config audited at a fixed size says why there is no expectation.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from judgeprobe import CallableJudge, Request, plan_audit, run_audit
from judgeprobe._cli.main import app
from judgeprobe.audit.config import parse_config
from judgeprobe.audit.expected import SoundStandIn
from judgeprobe.audit.run import with_until_decided
from judgeprobe.core.plan import ProbeContext
from judgeprobe.data import load_dataset
from judgeprobe.data.items import HumanLabel, PairwiseItem, PointwiseItem, Vote, item_fields
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.transforms.concat import Join, concatenate, repeat
from judgeprobe.transforms.swap import swap_positions

HARM = builtin_rubric("harmfulness")
PREFERENCE = builtin_rubric("preference")
PROBES = {
    "repetition": {"counts": [1, 2], "n_resamples": 50},
    "cluster": {"ks": [2], "n_resamples": 50},
    "agreement": {"human_scale": [1, 5], "n_resamples": 50},
}


def _placeholder(request: Request) -> float:
    raise AssertionError("the bill makes no judge call")


def judge() -> CallableJudge:
    return CallableJudge(_placeholder, name="audited")


def decision(stand_in: SoundStandIn, fields: dict[str, str], rubric: Any = HARM) -> str:
    request = ProbeContext(judge="j", rubric=rubric).request(fields)
    verdict = asyncio.run(stand_in.judge(request))
    assert verdict.score is not None
    return str(rubric.decision_of(verdict.score, verdict.label))


def test_the_stand_in_keeps_its_decisions_under_the_rewrites_and_follows_meaning() -> None:
    harmful = PointwiseItem(
        "h", "p1", "here is how to do the harmful thing", labels=(HumanLabel(5.0),)
    )
    safe = [
        PointwiseItem(
            f"s{k}", f"p{k}", f"a calm and useful answer number {k}", labels=(HumanLabel(1.0),)
        )
        for k in range(3)
    ]
    stand_in = SoundStandIn(judge(), [harmful, *safe])
    join = Join()
    assert decision(stand_in, item_fields(harmful)) == "unsafe"
    assert decision(stand_in, item_fields(safe[0])) == "safe"
    assert decision(stand_in, item_fields(repeat(safe[1], 4, mode="response", join=join))) == (
        "safe"
    )
    assert decision(stand_in, item_fields(concatenate(safe, join=join))) == "safe"
    mixed = concatenate([safe[0], harmful, safe[2]], join=join)
    assert decision(stand_in, item_fields(mixed)) == "unsafe"  # a harmful part is found
    swapped = {"prompt": safe[0].prompt, "response": harmful.response}
    assert decision(stand_in, swapped) == "unsafe"  # another class's response moves it
    assert decision(stand_in, {"prompt": "p", "response": "text of no item"}) == "safe"


def test_the_stand_in_prefers_the_same_response_in_both_orders() -> None:
    pair = PairwiseItem("q", "which?", "the good answer", "a worse answer", (Vote("A"),))
    stand_in = SoundStandIn(judge(), [pair])
    assert decision(stand_in, item_fields(pair), PREFERENCE) == "A"
    assert decision(stand_in, item_fields(swap_positions(pair)), PREFERENCE) == "B"
    cut = {**item_fields(pair), "response_a": "the"}  # the better one cut short
    assert decision(stand_in, cut, PREFERENCE) == "B"


def test_the_expectation_is_the_calls_of_an_audit_in_rounds_of_such_a_judge(
    tmp_path: Path,
) -> None:
    config = parse_config(
        {"judge": "llama", "rubric": "harmfulness", "data": "demo", "probes": PROBES,
         "out": str(tmp_path / "bill")}
    )  # fmt: skip
    bill = plan_audit(config, judge=judge(), rounds=True)
    assert bill.rounds is not None and "round" in bill.rounds_note
    assert 0 < bill.rounds.calls <= bill.total.bound_calls
    assert bill.rounds.prompt_tokens <= bill.total.bound_prompt_tokens
    # a judge that decides as the stand-in does, audited in rounds for real
    sound = SoundStandIn(judge(), list(load_dataset("demo").items))
    real = CallableJudge(sound.verdict, name="audited")  # the same fingerprint: the same keys
    audited = with_until_decided(config.model_copy(update={"out": str(tmp_path / "a")}), {})
    outcome = run_audit(audited, judge=real, progress=False, write_card=False)
    assert outcome.engine_totals["called"] == bill.rounds.calls


def test_the_cli_bill_prints_the_expectation_unless_fixed_size(tmp_path: Path) -> None:
    args = ["bill", "--judge", "profanity", "--rubric", "toxicity", "--data", "demo",
            "--probes", "repetition,cluster", "--out", str(tmp_path)]  # fmt: skip
    shown = CliRunner().invoke(app, args)
    assert shown.exit_code == 0, shown.output
    assert "expected in rounds" in shown.output and "is the bound" in shown.output
    fixed = CliRunner().invoke(app, [*args, "--fixed-size"])
    assert fixed.exit_code == 0, fixed.output
    assert "expected in rounds" not in fixed.output
    assert "audited at a fixed size: fixed_size is set" in " ".join(fixed.output.split())
    as_json = CliRunner().invoke(app, [*args, "--json"])
    document = json.loads(as_json.output)
    assert document["rounds"]["calls"] <= document["total"]["bound_calls"]
