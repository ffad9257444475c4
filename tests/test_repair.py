"""Judge repair: each repaired judge fixes the failure it targets, at a known cost.

Planted judges with one known failure each are audited before and after their repair by the
probe that measures that failure: an always-A pairwise judge (position bias) under
``swap_average``, a judge that reads only the first part of a response (concatenation bypass)
under ``chunked``, a judge that flips its decision under one rubric wording (policy invariance)
under ``rubric_ensemble``, and a judge that always prefers the longer response (length null)
under ``length_controlled``. A judge without the failure stays as it was once repaired, and each
repaired verdict records its inner calls: 2 for swap, the parts for chunked, k for the ensemble.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgeprobe._cli.main import app
from judgeprobe.audit.config import AuditConfig, parse_config
from judgeprobe.audit.repair import run_repair_audit
from judgeprobe.core.judge import Judge
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import HumanLabel, Item, PairwiseItem, PointwiseItem, Vote
from judgeprobe.engine import Engine, EngineConfig, RunStore, run_blocking
from judgeprobe.errors import ConfigError
from judgeprobe.judges import CallableJudge
from judgeprobe.judges.repairs import (
    INNER_CALLS,
    ChunkedJudge,
    LengthControlledJudge,
    RubricEnsembleJudge,
    SwapAverageJudge,
    build_repair,
)
from judgeprobe.judges.repairs.length import truncate
from judgeprobe.probes import ProbeResult
from judgeprobe.probes.base import Probe
from judgeprobe.probes.concatenation.bypass import BypassProbe
from judgeprobe.probes.pairwise.length_null import LengthNullProbe
from judgeprobe.probes.pairwise.position import PositionProbe
from judgeprobe.probes.policy_invariance import PolicyInvarianceProbe
from judgeprobe.rubrics import Rubric, builtin_rubric, builtin_variants
from judgeprobe.runs.probe import run_probe

PREFERENCE = builtin_rubric("preference")
HARM = builtin_rubric("harmfulness")
FAST = 200  # bootstrap resamples
PART = 24  # characters of every synthetic pointwise response


def run(probe: Probe, items: Sequence[Item], judge: Judge, rubric: Rubric) -> ProbeResult:
    engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False, max_retries=0))
    return run_probe(probe, items, engine, rubric, seed=0)


def estimate(result: ProbeResult, name: str, **labels: str) -> float:
    found = [f for f in result.findings if f.name == name and dict(f.labels) == labels]
    assert len(found) == 1, (name, labels, [(f.name, dict(f.labels)) for f in result.findings])
    return found[0].estimate.estimate


def judged(judge: Judge, request: Request) -> Verdict:
    return run_blocking(judge.judge(request))


# -- planted judges ------------------------------------------------------------------------------
def pairs(n: int) -> list[PairwiseItem]:
    """Pairs whose better response (the humans' vote) is A or B at random, of random lengths."""
    rng = random.Random(7)
    items = []
    for i in range(n):
        better = rng.choice("AB")
        long_a = rng.random() < 0.5
        a = f"answer a{i} " + "words " * (rng.randint(40, 80) if long_a else rng.randint(5, 20))
        b = f"answer b{i} " + "words " * (rng.randint(5, 20) if long_a else rng.randint(40, 80))
        votes = tuple(Vote(better, rater=f"h{r}") for r in range(3))  # type: ignore[arg-type]
        items.append(PairwiseItem(f"q{i}", f"question {i}", a, b, human_votes=votes))
    return items


def always_a(request: Request) -> str:
    """Picks the response shown first, whatever it says."""
    return "A"


def tag(text: str) -> str:
    """The first two words of a synthetic response (``answer a3``): which response it is,
    kept by any cut that leaves them."""
    return " ".join(text.split()[:2])


def better_one(items: Sequence[PairwiseItem]) -> Callable[[Request], str]:
    """Picks the humans' choice, in whichever order it is shown: no position bias."""
    better = {tag(i.response_a if i.human_majority() == "A" else i.response_b) for i in items}

    def judge(request: Request) -> str:
        return "A" if tag(request.field_map["response_a"]) in better else "B"

    return judge


def length_loving(items: Sequence[PairwiseItem]) -> Callable[[Request], str]:
    """Picks the longer response when one is over 10% longer, else the humans' choice."""
    fair = better_one(items)

    def judge(request: Request) -> str:
        a, b = (len(request.field_map[k]) for k in ("response_a", "response_b"))
        if abs(a - b) > 0.1 * max(a, b):
            return "A" if a > b else "B"
        return fair(request)

    return judge


def pointwise(positives: int, negatives: int) -> list[PointwiseItem]:
    def item(name: str, word: str, label: float) -> PointwiseItem:
        response = f"{word} reply {name}".ljust(PART, ".")
        return PointwiseItem(name, f"question {name}", response, labels=(HumanLabel(label),))

    return [item(f"p{n:03d}", "unsafe", 1.0) for n in range(positives)] + [
        item(f"n{n:03d}", "benign", 0.0) for n in range(negatives)
    ]


def first_part(request: Request) -> float:
    """A 1-5 harmfulness judge that reads only the first part of the response."""
    return 5.0 if "unsafe" in request.field_map["response"][:PART] else 1.0


def any_part(request: Request) -> float:
    """Flags a response when any of it is unsafe: never bypassed."""
    return 5.0 if "unsafe" in request.field_map["response"] else 1.0


LEXICON_1 = builtin_variants("harmfulness").variants[0]


def wording_sensitive(request: Request) -> float:
    """Harmful for odd-numbered items, but the opposite under the wording ``lexicon-1``."""
    harmful = int(request.field_map["prompt"].rsplit(" ", 1)[-1]) % 2 == 1
    if request.rubric.template == LEXICON_1.template:
        harmful = not harmful
    return 5.0 if harmful else 1.0


def numbered(n: int) -> list[PointwiseItem]:
    return [
        PointwiseItem(
            f"i{k}",
            f"request number {k}",
            f"response number {k}",
            labels=(HumanLabel(float(k % 2)),),
        )
        for k in range(n)
    ]


# -- swap_average ---------------------------------------------------------------------------------
def test_swap_average_turns_an_always_first_judge_into_consistent_ties() -> None:
    items = pairs(30)
    before = run(PositionProbe(), items, CallableJudge(always_a, name="a"), PREFERENCE)
    after = run(
        PositionProbe(), items, SwapAverageJudge(CallableJudge(always_a, name="a")), PREFERENCE
    )
    assert estimate(before, "position_consistency") == 0.0
    assert estimate(before, "swap_flip_rate") == 1.0
    assert estimate(after, "position_consistency") == 1.0
    # every verdict is a tie: no pair is decisive in both orders, so no flip rate is claimed
    assert math.isnan(estimate(after, "swap_flip_rate"))


def half_first(items: Sequence[PairwiseItem]) -> Callable[[Request], str]:
    """Picks the response shown first on half of the requests, else the humans' choice."""
    fair = better_one(items)

    def judge(request: Request) -> str:
        return "A" if random.Random(request.key).random() < 0.5 else fair(request)

    return judge


def test_swap_average_removes_the_first_position_bias_of_a_half_biased_judge() -> None:
    items = pairs(60)
    before = run(PositionProbe(), items, CallableJudge(half_first(items), name="h"), PREFERENCE)
    repaired = SwapAverageJudge(CallableJudge(half_first(items), name="h"))
    after = run(PositionProbe(), items, repaired, PREFERENCE)
    assert estimate(before, "first_position_bias") > 0.2
    assert estimate(after, "first_position_bias") == 0.0
    assert estimate(after, "position_consistency") == 1.0


def test_swap_average_keeps_a_position_free_judges_choices_at_two_calls_a_verdict() -> None:
    items = pairs(10)
    inner = CallableJudge(better_one(items), name="fair")
    repaired = SwapAverageJudge(inner)
    for item in items:
        fields = {
            "prompt": item.prompt,
            "response_a": item.response_a,
            "response_b": item.response_b,
        }
        verdict = judged(repaired, Request.make(repaired.fingerprint, PREFERENCE, fields))
        assert verdict.label == item.human_majority()
        assert verdict.meta[INNER_CALLS] == 2
    assert repaired.inner_calls == 2 * len(items)


def test_swap_average_answers_tie_when_the_two_orders_disagree() -> None:
    repaired = SwapAverageJudge(CallableJudge(always_a, name="a"))
    fields = {"prompt": "p", "response_a": "x", "response_b": "y"}
    verdict = judged(repaired, Request.make(repaired.fingerprint, PREFERENCE, fields))
    assert (verdict.label, verdict.score, verdict.meta["orders"]) == ("tie", 0.5, ["A", "B"])


# -- chunked --------------------------------------------------------------------------------------
def test_chunked_scoring_stops_the_bypass_of_a_judge_that_reads_only_the_first_part() -> None:
    items = pointwise(6, 12)
    probe = BypassProbe(ks=(2, 4), draws=4, false_alarm_items=6, n_resamples=FAST)
    before = run(probe, items, CallableJudge(first_part, name="first"), HARM)
    after = run(probe, items, ChunkedJudge(CallableJudge(first_part, name="first")), HARM)
    assert estimate(before, "bypass_rate", k="2", position="last") == 1.0
    for k, position in (("2", "first"), ("2", "last"), ("4", "middle"), ("4", "last")):
        assert estimate(after, "bypass_rate", k=k, position=position) == 0.0
    assert estimate(after, "false_alarm_rate", k="4") == 0.0


def test_chunked_leaves_a_judge_that_reads_everything_as_it_was() -> None:
    items = pointwise(6, 12)
    probe = BypassProbe(ks=(2, 4), draws=4, false_alarm_items=6, n_resamples=FAST)
    before = run(probe, items, CallableJudge(any_part, name="any"), HARM)
    after = run(probe, items, ChunkedJudge(CallableJudge(any_part, name="any")), HARM)
    for finding in before.findings:
        assert estimate(after, finding.name, **finding.labels) == finding.estimate.estimate


def test_chunked_costs_one_call_a_part_and_keeps_the_most_severe_part() -> None:
    repaired = ChunkedJudge(CallableJudge(first_part, name="first"))
    text = "\n\n".join(["benign reply one".ljust(PART, "."), "unsafe reply".ljust(PART, "."), "x"])
    fields = {"prompt": "a\n\nb\n\nc", "response": text}
    verdict = judged(repaired, Request.make(repaired.fingerprint, HARM, fields))
    assert (verdict.score, verdict.meta[INNER_CALLS], verdict.meta["most_severe_part"]) == (
        5.0,
        3,
        1,
    )
    single = judged(
        repaired, Request.make(repaired.fingerprint, HARM, {"prompt": "a", "response": "b"})
    )
    assert single.meta[INNER_CALLS] == 1


def test_chunked_takes_the_lowest_score_when_lower_is_the_positive_class() -> None:
    rubric = HARM.model_copy(
        update={
            "decision": {
                **HARM.decision.model_dump(),  # type: ignore[union-attr]
                "higher_is_positive": False,
                "positive_at": 2.0,
                "negative_at": 4.0,
            }
        }
    )
    repaired = ChunkedJudge(
        CallableJudge(lambda r: float(len(r.field_map["response"])), name="len")
    )
    fields = {"prompt": "p", "response": "aaaa\n\naa\n\naaa"}
    assert judged(repaired, Request.make(repaired.fingerprint, rubric, fields)).score == 2.0


# -- rubric_ensemble ------------------------------------------------------------------------------
def test_the_rubric_ensemble_stabilises_a_judge_that_flips_under_one_wording() -> None:
    items = numbered(30)
    probe = PolicyInvarianceProbe(n_resamples=FAST)
    before = run(probe, items, CallableJudge(wording_sensitive, name="w"), HARM)
    repaired = RubricEnsembleJudge(CallableJudge(wording_sensitive, name="w"), k=3)
    after = run(probe, items, repaired, HARM)
    assert estimate(before, "flip_rate", variant="lexicon-1", **{"class": "lexicon"}) == 1.0
    assert estimate(after, "flip_rate", variant="lexicon-1", **{"class": "lexicon"}) == 0.0
    assert estimate(after, "flip_rate", **{"class": "lexicon"}) == 0.0


def test_the_ensemble_asks_k_wordings_and_leaves_a_threshold_wording_alone() -> None:
    repaired = RubricEnsembleJudge(CallableJudge(wording_sensitive, name="w"), k=5)
    fields = {"prompt": "request number 3", "response": "r"}
    base = judged(repaired, Request.make(repaired.fingerprint, HARM, fields))
    assert (base.meta[INNER_CALLS], base.score) == (5, 5.0)
    shifted = next(
        v for v in builtin_variants("harmfulness").variants if v.transform == "threshold"
    )
    alone = judged(repaired, Request.make(repaired.fingerprint, shifted.rubric(HARM), fields))
    assert alone.meta[INNER_CALLS] == 1


def test_an_invariant_judge_stays_invariant_under_the_ensemble() -> None:
    items = numbered(20)
    probe = PolicyInvarianceProbe(n_resamples=FAST)
    repaired = RubricEnsembleJudge(CallableJudge(any_part_numbered, name="inv"), k=3)
    before = run(probe, items, CallableJudge(any_part_numbered, name="inv"), HARM)
    after = run(probe, items, repaired, HARM)
    for finding in before.findings:
        if finding.name in ("flip_rate", "decision_change_rate", "accuracy"):
            assert estimate(after, finding.name, **finding.labels) == finding.estimate.estimate


def any_part_numbered(request: Request) -> float:
    """Harmful for odd-numbered items under every wording."""
    return 5.0 if int(request.field_map["prompt"].rsplit(" ", 1)[-1]) % 2 else 1.0


# -- length_controlled ----------------------------------------------------------------------------
def test_length_control_removes_a_length_loving_judges_agreement_with_the_length_null() -> None:
    items = pairs(40)
    probe = LengthNullProbe(n_resamples=FAST)
    before = run(probe, items, CallableJudge(length_loving(items), name="long"), PREFERENCE)
    repaired = LengthControlledJudge(CallableJudge(length_loving(items), name="long"))
    after = run(probe, items, repaired, PREFERENCE)
    assert estimate(before, "null_judge_agreement", unit="chars") == 1.0
    assert estimate(after, "null_judge_agreement", unit="chars") < 0.7
    # the cue gone, the judge decides on content: it now agrees with the humans
    assert estimate(after, "judge_human_majority_agreement") == 1.0
    assert estimate(before, "judge_human_majority_agreement") < 0.7


def test_length_control_cuts_both_responses_to_the_shorter_one_at_one_call() -> None:
    seen: list[tuple[str, str]] = []

    def record(request: Request) -> str:
        seen.append((request.field_map["response_a"], request.field_map["response_b"]))
        return "tie"

    repaired = LengthControlledJudge(CallableJudge(record, name="rec"))
    fields = {"prompt": "p", "response_a": "one two three four", "response_b": "five six"}
    verdict = judged(repaired, Request.make(repaired.fingerprint, PREFERENCE, fields))
    assert seen == [("one two ", "five six")]
    assert verdict.meta[INNER_CALLS] == 1
    assert truncate("one two three", 9, at_words=True) == "one two"


# -- the repaired judge as a judge ----------------------------------------------------------------
def test_a_repaired_judge_has_its_own_fingerprint_per_repair_and_options() -> None:
    inner = CallableJudge(always_a, name="a")
    prints = {
        inner.fingerprint,
        SwapAverageJudge(inner).fingerprint,
        RubricEnsembleJudge(inner, k=3).fingerprint,
        RubricEnsembleJudge(inner, k=5).fingerprint,
        ChunkedJudge(inner).fingerprint,
    }
    assert len(prints) == 5
    assert SwapAverageJudge(inner).describe()["inner_fingerprint"] == inner.fingerprint


def test_a_failed_inner_verdict_makes_the_repaired_verdict_fail_not_score() -> None:
    def flaky(request: Request) -> str | None:
        return None if request.field_map["response_a"] == "y" else "A"

    repaired = SwapAverageJudge(CallableJudge(flaky, name="flaky"))
    fields = {"prompt": "p", "response_a": "x", "response_b": "y"}
    verdict = judged(repaired, Request.make(repaired.fingerprint, PREFERENCE, fields))
    assert verdict.status.value == "unparseable" and verdict.score is None
    assert verdict.meta[INNER_CALLS] == 2


def test_an_unknown_repair_or_option_is_a_config_error() -> None:
    inner = CallableJudge(always_a, name="a")
    with pytest.raises(ConfigError, match="unknown repair 'median'"):
        build_repair("median", inner)
    with pytest.raises(ConfigError, match="takes no option 'n'"):
        build_repair("rubric_ensemble", inner, {"n": 3})
    with pytest.raises(ConfigError, match="k must be >= 1"):
        build_repair("rubric_ensemble", inner, {"k": 0})
    with pytest.raises(ConfigError, match=r"config: repair: .*unknown repair 'median'"):
        parse_config({"probes": ["repetition"], "repair": ["median"]})


# -- audit --repair -------------------------------------------------------------------------------
def test_a_recorded_judge_cannot_be_repaired_and_the_error_says_why(tmp_path: Path) -> None:
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text("id,score\nx,1\n", encoding="utf-8")
    config = parse_config(
        {
            "judge": f"recorded:{verdicts}",
            "rubric": "harmfulness",
            "out": str(tmp_path / "out"),
            "probes": ["agreement"],
            "repair": ["chunked"],
        }
    )
    with pytest.raises(ConfigError, match="recorded verdicts cannot answer; repair a live judge"):
        run_repair_audit(config, progress=False)
    assert not (tmp_path / "out").exists()


def write_pairs(path: Path, items: Sequence[PairwiseItem]) -> Path:
    rows = [
        {
            "id": i.id,
            "prompt": i.prompt,
            "response_a": i.response_a,
            "response_b": i.response_b,
            "winner": i.human_majority(),
        }
        for i in items
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def swap_average_audit(tmp_path: Path, items: Sequence[PairwiseItem], **more: Any) -> AuditConfig:
    """The position probe on ``items`` (written to ``pairs.jsonl``) with the ``swap_average``
    repair audited beside it; ``more`` adds config keys (an engine budget)."""
    data = write_pairs(tmp_path / "pairs.jsonl", items)
    return parse_config(
        {
            "rubric": "preference",
            "data": str(data),
            "data_options": {"kind": "pairwise"},
            "out": str(tmp_path / "out"),
            "probes": {"position": {}},
            "repair": ["swap_average"],
            **more,
        }
    )


def test_audit_with_a_repair_writes_both_cards_and_the_paired_before_after(tmp_path: Path) -> None:
    items = pairs(60)
    config = swap_average_audit(tmp_path, items)
    outcome = run_repair_audit(
        config, judge=CallableJudge(half_first(items), name="h"), progress=False
    )
    assert (tmp_path / "out" / "card.json").is_file()
    assert (tmp_path / "out" / "repair-swap_average" / "card.json").is_file()
    (repair,) = outcome.summary["repairs"]
    assert repair["cost_multiplier"] == 2.0
    rows = {row["finding"]: row for row in repair["target_findings"]}
    assert rows["first_position_bias"]["before"]["estimate"] > 0.2
    assert rows["first_position_bias"]["after"]["estimate"] == 0.0
    # the swap flip rate is the position probe's gated finding; the others are derived from it
    assert rows["swap_flip_rate"]["word"] == "better"
    assert rows["first_position_bias"]["word"] == rows["position_consistency"]["word"] == "changed"
    consistency = rows["position_consistency"]
    assert consistency["method"] == "paired"
    assert consistency["difference"]["estimate"] == pytest.approx(
        consistency["after"]["estimate"] - consistency["before"]["estimate"]
    )
    page = (tmp_path / "out" / "repair.md").read_text().replace("\\", "")
    assert "## swap_average (targets position)" in page
    assert "Cost multiplier: 2 inner judge calls per verdict." in page
    assert json.loads((tmp_path / "out" / "repair.json").read_text()) == outcome.summary


def test_the_command_line_repairs_with_a_repeatable_option(tmp_path: Path) -> None:
    data = tmp_path / "items.jsonl"
    rows = [
        {"id": i.id, "prompt": i.prompt, "response": i.response, "label": i.labels[0].value}
        for i in pointwise(6, 12)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    module = tmp_path / "planted_first_part.py"
    module.write_text(
        f"PART = {PART}\n\ndef judge(request):\n"
        "    return 5.0 if 'unsafe' in request.field_map['response'][:PART] else 1.0\n",
        encoding="utf-8",
    )
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        result = CliRunner().invoke(
            app,
            [
                "audit",
                "--judge",
                "python:planted_first_part:judge",
                "--rubric",
                "harmfulness",
                "--data",
                str(data),
                "--probes",
                "bypass",
                "--repair",
                "chunked",
                "--out",
                str(tmp_path / "out"),
                "--fail-on",
                "never",
            ],
        )
    finally:
        sys.path.remove(str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "repair chunked (targets bypass)" in result.output
    summary: dict[str, Any] = json.loads((tmp_path / "out" / "repair.json").read_text())
    (repair,) = summary["repairs"]
    words = {
        (r["labels"]["k"], r["labels"]["position"]): r
        for r in repair["target_findings"]
        if r["finding"] == "bypass_rate"
    }
    assert words[("2", "last")]["before"]["estimate"] == 1.0
    assert words[("2", "last")]["after"]["estimate"] == 0.0
    # the raw rate is information on the card, paired by item and read in the direction of its
    # gated excess over the rerun null
    assert (words[("2", "last")]["method"], words[("2", "last")]["word"]) == ("paired", "better")
    excess = next(
        r
        for r in repair["target_findings"]
        if r["finding"] == "bypass_excess" and r["labels"] == {"k": "2", "position": "last"}
    )
    assert excess["word"] == "better"
    assert 1.0 < repair["cost_multiplier"] < 4.0


def test_a_request_too_long_for_the_inner_judge_is_skipped_unless_the_repair_reads_parts() -> None:
    inner = CallableJudge(any_part, name="short", context_window=30)
    fields = {"prompt": "p", "response": "\n\n".join(["unsafe words here"] * 12)}
    for repaired, status in ((RubricEnsembleJudge(inner), "skipped"), (ChunkedJudge(inner), "ok")):
        engine = Engine(repaired, RunStore(":memory:"), EngineConfig(progress=False))
        request = Request.make(repaired.fingerprint, HARM, fields)
        verdict = engine.run_sync([request]).verdicts[request.key]
        assert verdict.status.value == status
