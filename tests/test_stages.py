"""The stage loop of a probe: plan, then refine until None, driven through one generator."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from judgeprobe.core.plan import Plan, ProbeContext, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import Item
from judgeprobe.probes.base import Probe, ProbeResult
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.stages import MAX_STAGES, drive, stage_flow, unanswered

HARM = builtin_rubric("harmfulness")
CTX = ProbeContext("judge", HARM)
TEXTS = ("calm", "rude", "kind")


def request(text: str, *, trial: int = 0) -> Request:
    return Request.make("judge", HARM, {name: text for name in HARM.inputs}, trial=trial)


class _Toy(Probe):
    """A probe that plans one base request per text; subclasses say how it refines."""

    name = "toy"
    kind = "invariance"

    def __init__(self) -> None:
        self.refined: list[tuple[int, dict[str, float | None]]] = []

    def plan(self, items: Sequence[Item], ctx: ProbeContext) -> Plan[Any]:
        return Plan(self.name, ctx, (), {("base", t): request(t) for t in TEXTS})

    def refine(self, plan: Plan[Any], verdicts: Verdicts) -> Plan[Any] | None:
        self.refined.append((plan.stage, {t: verdicts.score(("base", t)) for t in TEXTS}))
        return self.next(plan, verdicts)

    def next(self, plan: Plan[Any], verdicts: Verdicts) -> Plan[Any] | None:
        return None

    def analyze(self, plan: Plan[Any], verdicts: Verdicts) -> ProbeResult:
        raise NotImplementedError


class OneStage(_Toy):
    name = "one_stage"


class RerunsTheHarmful(_Toy):
    """Stage 2 reruns the texts stage 1 scored harmful: drawn from the first verdicts."""

    name = "reruns_the_harmful"

    def next(self, plan: Plan[Any], verdicts: Verdicts) -> Plan[Any] | None:
        if plan.stage > 1:
            return None
        harmful = [t for t in TEXTS if (verdicts.score(("base", t)) or 0.0) >= 0.5]
        return plan.extend({("rerun", t): request(t, trial=1) for t in harmful})


class Forever(_Toy):
    name = "forever"

    def next(self, plan: Plan[Any], verdicts: Verdicts) -> Plan[Any] | None:
        return plan.extend({("more", plan.stage): request(f"more {plan.stage}")})


class GoesBack(_Toy):
    name = "goes_back"

    def next(self, plan: Plan[Any], verdicts: Verdicts) -> Plan[Any] | None:
        return dataclasses.replace(plan, design=("again",))


class DropsARole(_Toy):
    name = "drops_a_role"

    def next(self, plan: Plan[Any], verdicts: Verdicts) -> Plan[Any] | None:
        kept = {role: r for role, r in plan.requests.items() if role != ("base", "calm")}
        return dataclasses.replace(plan, requests=kept, stage=plan.stage + 1)


def scores(**by_text: float) -> dict[str, Verdict]:
    return {request(t).key: Verdict.scored(s) for t, s in by_text.items()}


def test_a_one_stage_probe_yields_its_plan_once_and_returns_it() -> None:
    probe = OneStage()
    first = probe.plan([], CTX)
    flow = stage_flow(probe, first)
    assert next(flow) is first
    with pytest.raises(StopIteration) as done:
        flow.send(scores(calm=0.0, rude=1.0, kind=0.0))
    assert done.value.value is first
    assert probe.refined == [(1, {"calm": 0.0, "rude": 1.0, "kind": 0.0})]


def test_a_later_stage_is_drawn_from_the_verdicts_sent_for_the_first() -> None:
    probe = RerunsTheHarmful()
    flow = stage_flow(probe, probe.plan([], CTX))
    first = next(flow)
    second = flow.send(scores(calm=0.0, rude=1.0, kind=0.0))
    assert second.stage == 2
    assert set(second.requests) == {*first.requests, ("rerun", "rude")}
    # what is sent is every verdict known so far: the first stage's are still read at stage 2
    known = {
        **scores(calm=0.0, rude=1.0, kind=0.0),
        request("rude", trial=1).key: Verdict.scored(1),
    }
    with pytest.raises(StopIteration) as done:
        flow.send(known)
    assert done.value.value is second
    assert [stage for stage, _ in probe.refined] == [1, 2]
    assert probe.refined[1][1] == {"calm": 0.0, "rude": 1.0, "kind": 0.0}


def test_a_probe_that_never_says_it_is_done_is_stopped_naming_it() -> None:
    probe = Forever()
    flow = stage_flow(probe, probe.plan([], CTX))
    stages = [next(flow).stage]
    with pytest.raises(RuntimeError, match=f"probe 'forever' refined its plan {MAX_STAGES} times"):
        while True:
            stages.append(flow.send({}).stage)
    assert stages == list(range(1, MAX_STAGES + 1))


@pytest.mark.parametrize("probe", [GoesBack(), DropsARole()], ids=lambda p: p.name)
def test_a_refined_plan_must_be_a_later_stage_that_keeps_every_role(probe: _Toy) -> None:
    flow = stage_flow(probe, probe.plan([], CTX))
    next(flow)
    message = f"probe '{probe.name}': refine must return a later stage that keeps every role"
    with pytest.raises(RuntimeError, match=message):
        flow.send({})


def test_drive_sends_each_stage_its_answer_and_returns_the_final_plan() -> None:
    probe = RerunsTheHarmful()
    known = scores(calm=1.0, rude=1.0, kind=0.0)
    asked: list[int] = []

    def answer(plan: Plan[Any]) -> dict[str, Verdict]:
        asked.append(plan.stage)
        return known

    final = drive(stage_flow(probe, probe.plan([], CTX)), answer)
    assert (final.stage, asked) == (2, [1, 2])
    assert {role for role in final.requests if role[0] == "rerun"} == {
        ("rerun", "calm"),
        ("rerun", "rude"),
    }


def test_a_driver_stops_at_the_first_stage_with_missing_requests() -> None:
    # batch export's rule: a stage the store does not answer in full is where it stops, and
    # the probe is not asked to refine it
    probe = RerunsTheHarmful()
    stored = scores(calm=0.0, rude=1.0, kind=0.0)

    def answer(plan: Plan[Any]) -> dict[str, Verdict] | None:
        return None if unanswered(plan, stored) else stored

    stopped = drive(stage_flow(probe, probe.plan([], CTX)), answer)
    assert stopped.stage == 2
    assert unanswered(stopped, stored) == [request("rude", trial=1)]
    assert [stage for stage, _ in probe.refined] == [1]


def test_unanswered_lists_each_missing_request_once_in_plan_order() -> None:
    shared = request("calm")
    plan = Plan("p", CTX, (), {("a",): shared, ("b",): request("rude"), ("c",): shared})
    assert unanswered(plan, {}) == [shared, request("rude")]
    assert unanswered(plan, scores(calm=0.0)) == [request("rude")]
