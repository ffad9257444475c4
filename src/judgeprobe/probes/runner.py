"""Runs a probe: plan, judge through the engine, plan again until nothing is new, analyze."""

from __future__ import annotations

from collections.abc import Sequence

from judgeprobe.data.items import Item
from judgeprobe.engine.engine import CallStats, Engine, run_blocking
from judgeprobe.errors import BudgetExhausted, ConfigError, JudgeprobeError
from judgeprobe.judges.base import Judge
from judgeprobe.judges.recorded import RecordedJudge
from judgeprobe.probes.base import Probe, ProbeContext, ProbeResult, status_counts
from judgeprobe.request import Request
from judgeprobe.rubrics import Rubric
from judgeprobe.verdict import Verdict

MAX_STAGES = 20


async def run_probe(
    probe: Probe,
    items: Sequence[Item],
    engine: Engine,
    rubric: Rubric,
    *,
    seed: int = 0,
) -> ProbeResult:
    """Run ``probe`` on ``items`` with ``engine``'s judge and ``rubric``.

    Raises :class:`~judgeprobe.errors.BudgetExhausted` when the engine's budget stops the run;
    every verdict made so far is in the run store and the next run resumes from it.
    """
    ctx = probe_context(probe, engine.judge, rubric, seed=seed)
    known: dict[str, Verdict] = {}
    planned: dict[str, Request] = {}
    stats = CallStats()
    for stage in range(1, MAX_STAGES + 1):
        requests = probe.plan(items, ctx, known)
        new = [r for r in requests if r.key not in known]
        planned.update((r.key, r) for r in requests)
        if not new:
            break
        result = await engine.run(new, description=f"{probe.name} ({stage})")
        known.update(result.verdicts)
        stats.add(result.stats)
        if not result.complete:
            raise BudgetExhausted(
                f"{result.stopped} during probe {probe.name!r}; {len(known)} verdicts are stored,"
                " run the same command again to resume"
            )
    else:
        raise RuntimeError(
            f"probe {probe.name!r} kept planning new requests for {MAX_STAGES} rounds"
        )
    outcome = probe.analyze(items, ctx, known)
    usage = status_counts(known, list(planned.values()))
    usage.update(
        requests=len(planned),
        calls=stats.called,
        cached=stats.cached,
        retries=stats.retries,
        prompt_tokens=stats.prompt_tokens,
        completion_tokens=stats.completion_tokens,
    )
    outcome.usage = usage
    return outcome


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

    Recorded verdicts cost nothing to look up, so the probe's rounds are planned here in full
    with them; a request for anything else (a repeated response, a rewritten rubric) would
    need a new judge call, which a recorded judge cannot make.
    """
    known: dict[str, Verdict] = {}
    for _ in range(MAX_STAGES):
        new = [r for r in probe.plan(items, ctx, known) if r.key not in known]
        if not new:
            return
        foreign = [r for r in new if not judge.answers(r)]
        if foreign:
            raise ConfigError(
                f"it needs {len(foreign)} new judge calls on inputs that are not the dataset's "
                "items as they are; a recorded judge only answers those (use a live judge, or "
                "a probe that needs no new calls, such as agreement)"
            )
        known.update((r.key, judge.lookup(r)) for r in new)


def run_probe_sync(
    probe: Probe, items: Sequence[Item], engine: Engine, rubric: Rubric, *, seed: int = 0
) -> ProbeResult:
    """:func:`run_probe` for code without an event loop."""
    return run_blocking(run_probe(probe, items, engine, rubric, seed=seed))
