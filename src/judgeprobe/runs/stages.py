"""A probe's stages, driven once: plan, then refine until the plan is complete.

A probe plans in stages (:mod:`judgeprobe.probes.base`): ``plan(items, ctx)`` gives the first,
``refine(plan, verdicts)`` the next one from the verdicts of the earlier ones, or None when the
plan is complete. :func:`stage_flow` is that loop, written once as a generator that knows
nothing of where verdicts come from. It yields each stage's :class:`~judgeprobe.core.plan.Plan`
(what must be judged next), receives through ``send`` the verdicts known so far (request key ->
verdict, every earlier stage's included), checks that each refined plan is a later stage that
keeps every role, and returns the final plan. A probe that refines its plan
:data:`MAX_STAGES` times has a bug (it never says it is done): the flow raises, naming it.

The callers differ only in where verdicts come from, so each is a short driver: the engine
judges a stage (:func:`judgeprobe.runs.probe.run_probe_async`), there are none
(``analyze_offline``), a recorded judge answers (``check_recorded``), the run store answers and
stand-ins fill the rest (the bill), or the driver stops at the first stage with a request the
store lacks (batch export). :func:`drive` runs a flow for a synchronous driver.

Examples
--------
>>> from judgeprobe.core.plan import Plan, ProbeContext
>>> from judgeprobe.probes.base import Probe
>>> from judgeprobe.rubrics import builtin_rubric
>>> class TwoStages(Probe):
...     name = "two_stages"
...     def plan(self, items, ctx):
...         return Plan(self.name, ctx, design=())
...     def refine(self, plan, verdicts):
...         return plan.extend({}, design=("more",)) if plan.stage == 1 else None
>>> ctx = ProbeContext(judge="j", rubric=builtin_rubric("preference"))
>>> flow = stage_flow(TwoStages(), TwoStages().plan([], ctx))
>>> next(flow).stage
1
>>> flow.send({}).stage
2
>>> drive(stage_flow(TwoStages(), TwoStages().plan([], ctx)), lambda plan: {}).design
('more',)
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from typing import Any, TypeAlias

from judgeprobe.core.plan import Plan, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.probes.base import Probe

MAX_STAGES = 10
"""No probe refines its plan this often; one that does has a bug (it never says it is done)."""

StageFlow: TypeAlias = Generator[Plan[Any], Mapping[str, Verdict], Plan[Any]]
"""Yields each stage's plan, is sent the verdicts known so far, returns the final plan."""

Answer: TypeAlias = Callable[[Plan[Any]], Mapping[str, Verdict] | None]
"""A synchronous driver's step: the verdicts known once ``plan`` is answered, or None to stop
at ``plan``."""


def stage_flow(probe: Probe, plan: Plan[Any]) -> StageFlow:
    """The stages of ``probe`` from its first ``plan``: yield a plan, receive its verdicts.

    Each ``send`` takes the verdicts known so far (request key -> verdict; a request with none
    is missing to the probe) and refines the stage on them. The flow returns the final plan
    when ``refine`` says it is complete. RuntimeError, naming the probe, when a refined plan is
    not a later stage keeping every role, or when the probe refines :data:`MAX_STAGES` times.
    """
    for _ in range(MAX_STAGES):
        known = yield plan
        refined = probe.refine(plan, Verdicts(plan, known))
        if refined is None:
            return plan
        plan = next_stage(probe, plan, refined)
    raise RuntimeError(f"probe {probe.name!r} refined its plan {MAX_STAGES} times")


def next_stage(probe: Probe, plan: Plan[Any], refined: Plan[Any]) -> Plan[Any]:
    """``refined``, checked to follow ``plan``: a later stage that keeps every role of it."""
    if refined.stage <= plan.stage or not set(plan.requests) <= set(refined.requests):
        raise RuntimeError(
            f"probe {probe.name!r}: refine must return a later stage that keeps every role "
            "(use Plan.extend)"
        )
    return refined


def drive(flow: StageFlow, answer: Answer) -> Plan[Any]:
    """Run ``flow`` with ``answer`` giving each stage's verdicts; the plan it ends at.

    That is the final plan, or the stage at which ``answer`` returned None (the flow is then
    closed there: a driver that stops early, as batch export does at the first stage with
    requests the store lacks).
    """
    plan = next(flow)
    while (known := answer(plan)) is not None:
        try:
            plan = flow.send(known)
        except StopIteration as done:
            final: Plan[Any] = done.value
            return final
    flow.close()
    return plan


def unanswered(plan: Plan[Any], known: Mapping[str, Verdict]) -> list[Request]:
    """The distinct requests of ``plan`` with no verdict in ``known``, in the plan's order."""
    seen: dict[str, Request] = {}
    for request in plan.requests.values():
        if request.key not in known:
            seen.setdefault(request.key, request)
    return list(seen.values())
