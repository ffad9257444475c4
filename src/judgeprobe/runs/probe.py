"""Running a probe: plan, judge through the engine, refine until complete, analyze.

The stages are explicit. ``probe.plan(items, ctx)`` gives the first
:class:`~judgeprobe.core.plan.Plan`;
the engine judges its requests; ``probe.refine(plan, verdicts)`` gives the next stage's plan (the
cluster test draws its clusters from the base scores) or None when the plan is complete; then
``probe.analyze(plan, verdicts)`` gives the :class:`~judgeprobe.probes.ProbeResult`. Only the
engine calls the judge, and a request already judged (by this probe, another one, or an earlier
run of the same store) is not judged again. The stage loop itself is
:func:`~judgeprobe.runs.stages.stage_flow`; :func:`run_probe`, :func:`check_recorded` and
:func:`analyze_offline` drive it.

:func:`reanalyze` does the last step again from a run store alone: the plan stored with the run
and its verdicts, no judge and no planning.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.core.judge import Judge
from judgeprobe.core.plan import Plan, ProbeContext, Verdicts
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import Item
from judgeprobe.engine.engine import CallStats, Engine, run_blocking
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import (
    AnalysisError,
    BudgetExhausted,
    ConfigError,
    JudgeprobeError,
    StoreError,
)
from judgeprobe.judges.recorded import RecordedJudge
from judgeprobe.probes.base import Probe, ProbeResult
from judgeprobe.probes.registry import build_probe, get_probe_class
from judgeprobe.rubrics import Rubric
from judgeprobe.runs.stages import drive, stage_flow, unanswered


async def run_probe_async(
    probe: Probe,
    items: Sequence[Item],
    engine: Engine,
    rubric: Rubric,
    *,
    seed: int = 0,
) -> ProbeResult:
    """Run ``probe`` on ``items`` with ``engine``'s judge and ``rubric``.

    The result carries the final plan (:attr:`ProbeResult.plan`), which an audit stores with
    the run. Raises :class:`~judgeprobe.errors.BudgetExhausted` when the engine's budget stops
    the run; every verdict made so far is in the run store and the next run resumes from it.
    """
    ctx = probe_context(probe, engine.judge, rubric, seed=seed)
    flow = stage_flow(probe, probe.plan(items, ctx))
    plan = next(flow)
    known: dict[str, Verdict] = {}
    stats = CallStats()
    while True:
        if new := unanswered(plan, known):
            result = await engine.run(new, description=f"{probe.name} ({plan.stage})")
            known.update(result.verdicts)
            stats.add(result.stats)
            if not result.complete:
                raise BudgetExhausted(
                    f"{result.stopped} during probe {probe.name!r}; {len(known)} verdicts are "
                    "stored, run the same command again to resume"
                )
        try:
            plan = flow.send(known)
        except StopIteration:
            return _analyzed(probe, plan, known, stats)


def _analyzed(
    probe: Probe, plan: Plan[Any], known: Mapping[str, Verdict], stats: CallStats
) -> ProbeResult:
    verdicts = Verdicts(plan, known)
    outcome = _analysis(probe, plan, verdicts)
    usage = verdicts.usage()
    usage.update(
        requests=len(plan.keys),
        calls=stats.called,
        cached=stats.cached,
        retries=stats.retries,
        prompt_tokens=stats.prompt_tokens,
        completion_tokens=stats.completion_tokens,
    )
    return dataclasses.replace(outcome, usage=usage, plan=plan)


def _analysis(probe: Probe, plan: Plan[Any], verdicts: Verdicts) -> ProbeResult:
    """``probe.analyze(plan, verdicts)``; an unexpected exception in it is an
    :class:`~judgeprobe.errors.AnalysisError` naming the probe and the exception (the verdicts
    are stored already), so it is reported as an error, never as a failing card."""
    try:
        return probe.analyze(plan, verdicts)
    except JudgeprobeError:
        raise
    except Exception as exc:
        said = " ".join(str(exc).split())  # one line, whatever the exception's message
        raise AnalysisError(
            f"probe {probe.name!r} could not analyse its verdicts ({type(exc).__name__}: "
            f"{said}); this is a defect of the probe, not a finding: its verdicts are stored"
        ) from exc


def probe_context(probe: Probe, judge: Judge, rubric: Rubric, *, seed: int = 0) -> ProbeContext:
    """The context ``probe`` plans with for ``judge`` and ``rubric``; ConfigError on a rubric kind
    the probe cannot audit."""
    if rubric.kind not in probe.rubric_kinds:
        raise ConfigError(
            f"probe {probe.name!r} cannot audit a {rubric.kind} rubric ({rubric.name!r}); "
            f"it needs one of {', '.join(probe.rubric_kinds)}"
        )
    describe = judge.describe()
    return ProbeContext(
        judge=judge.fingerprint,
        rubric=rubric,
        seed=seed,
        judge_name=str(describe.get("model") or describe.get("name") or describe["backend"]),
        generates=judge.capabilities.generates,
    )


def check_probe(
    probe: Probe, items: Sequence[Item], judge: Judge, rubric: Rubric, *, seed: int = 0
) -> None:
    """Raise :class:`ConfigError` naming ``probe`` and the reason when it cannot run.

    Nothing is judged: an audit calls this for every probe before the first judge call.
    """
    try:
        ctx = probe_context(probe, judge, rubric, seed=seed)
        probe.check(items, ctx)
        if isinstance(judge, RecordedJudge):
            check_recorded(probe, items, ctx, judge)
    except JudgeprobeError as exc:
        raise ConfigError(f"probes.{probe.name}: cannot run: {exc}") from exc


def check_recorded(
    probe: Probe, items: Sequence[Item], ctx: ProbeContext, judge: RecordedJudge
) -> None:
    """Raise unless every request ``probe`` plans asks about an item as it is.

    Recorded verdicts cost nothing to look up, so the probe's stages are planned here in full
    with them; a request for anything else (a repeated response, a rewritten rubric) would
    need a new judge call, which a recorded judge cannot make.
    """
    known: dict[str, Verdict] = {}

    def answer(plan: Plan[Any]) -> Mapping[str, Verdict]:
        new = unanswered(plan, known)
        foreign = [r for r in new if not judge.answers(r)]
        if foreign:
            raise ConfigError(
                f"it needs {len(foreign)} new judge calls on inputs that are not the dataset's "
                "items as they are; a recorded judge only answers those (use a live judge, or "
                "a probe that needs no new calls, such as agreement)"
            )
        known.update((r.key, judge.lookup(r)) for r in new)
        return known

    drive(stage_flow(probe, probe.plan(items, ctx)), answer)


def reanalyze(store: RunStore, run_id: int, name: str) -> ProbeResult:
    """Probe ``name``'s result of run ``run_id``, analysed again from the store alone.

    The probe is rebuilt from the parameters stored with its result and analyses the plan
    stored with the run (design and roles) against the stored verdicts: no planning, no judge
    call. Thresholds configured for the audit are not applied (they are the audit's, not the
    probe's); compare estimates, CIs and counts. StoreError when the run stored no plan for it.
    """
    stored = store.results(run_id).get(name)
    plan = store.plan(run_id, name)
    if stored is None or plan is None:
        raise StoreError(f"{store.path}: run {run_id} has no stored plan for probe {name!r}")
    probe = build_probe(
        get_probe_class(str(stored["probe"])), stored.get("params", {}), where=f"probe {name!r}"
    )
    known = store.get_many(sorted(plan.keys))
    return _analyzed(probe, plan, known, CallStats())


def analyze_offline(
    probe: Probe, items: Sequence[Item], rubric: Rubric, *, seed: int = 0
) -> ProbeResult:
    """Run ``probe`` with no judge at all: on the votes the items carry, and nothing else.

    For probes given a recorded ``judge_source``, whose plan has no request, and for what a
    probe reports without its judge (the length-only null's agreement of "pick the longer"
    with the humans). Requests the plan does hold stay unjudged: they are counted as
    ``missing`` in the result's usage, and findings that need them are not assessable.

    Examples
    --------
    >>> from judgeprobe.data.items import PairwiseItem, Vote
    >>> from judgeprobe.probes import HumanAgreementProbe
    >>> from judgeprobe.rubrics import builtin_rubric
    >>> humans, gpt4 = (Vote("A", rater="human"),), {"gpt-4": (Vote("A"),)}
    >>> items = [
    ...     PairwiseItem(f"q{i}", "p", "a", "b", human_votes=humans, judge_votes=gpt4)
    ...     for i in range(3)
    ... ]
    >>> result = analyze_offline(
    ...     HumanAgreementProbe(judge_source="gpt-4"), items, builtin_rubric("preference")
    ... )
    >>> result.finding("judge_human_vote_agreement").estimate.estimate
    1.0
    >>> result.usage["requests"]
    0
    """
    ctx = ProbeContext(judge="recorded", rubric=rubric, seed=seed)
    plan = drive(stage_flow(probe, probe.plan(items, ctx)), lambda _: {})
    return _analyzed(probe, plan, {}, CallStats())


def run_probe(
    probe: Probe, items: Sequence[Item], engine: Engine, rubric: Rubric, *, seed: int = 0
) -> ProbeResult:
    """:func:`run_probe_async` for code without an event loop (the synchronous call)."""
    return run_blocking(run_probe_async(probe, items, engine, rubric, seed=seed))


def run_probe_sync(
    probe: Probe, items: Sequence[Item], engine: Engine, rubric: Rubric, *, seed: int = 0
) -> ProbeResult:
    """Deprecated: the old name of :func:`run_probe`, kept so that existing code still runs."""
    import warnings

    warnings.warn(
        "run_probe_sync is deprecated; call run_probe (synchronous) or run_probe_async",
        DeprecationWarning,
        stacklevel=2,
    )
    return run_probe(probe, items, engine, rubric, seed=seed)
