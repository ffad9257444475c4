"""Sampling until decided: an audit in rounds over a growing prefix of its items.

``judgeprobe audit --until-decided`` (config ``engine.until_decided``) runs the planned probes
on the first ``start_items`` items of a seeded order of the data, then on a prefix ``growth``
times as long, and so on. After each round the audit's gated findings are decided as in a
fixed-size audit (thresholds, then Holm across the family); it stops at the first round where
every gated finding is decided (a pass, a fail, or a warn short of the fail threshold: see
:func:`settled`), when the next round would take the calls made past ``max_calls``, when the
data is exhausted, or after ``max_rounds`` rounds. The final statuses are the last round's.

Why it pays: a round re-runs the probes on a longer prefix of the *same* order (the seed fixes
it; no item is drawn again), and the engine answers every request already judged from the run
store, so a round pays only for its new items. A judge far from its thresholds is decided on the
first prefixes; only a judge near a threshold needs the whole data.

Why it keeps its error rate: looking after every round and stopping when decided would, at a
fixed level, let a sound judge fail by chance on some round. A probe's stream findings (rates
over the items, one outcome per item) get confidence sequences at the audit's own level,
valid at every round at once; every other finding is computed at its round's share of
``alpha``: the rounds' sizes are fixed before the first one (by the options and the number of
items), so the ``K`` rounds an audit may run are known, and each is analysed at level
``1 - alpha / K`` (:mod:`judgeprobe.stats.sequential`). The family is adjusted at ``alpha`` on
anytime-valid p-values (:mod:`judgeprobe.audit.anytime`). The probability that any round's verdict
is
a false fail is then at most ``alpha``, whichever round the audit stops at. A finding counts as
decided when more data is not expected to change its status (:func:`settled`).

Trials as well as items: a probe with ``reproduction_trials`` (policy invariance) whose
:attr:`~judgeprobe.probes.base.Probe.trial_findings` are gated and undecided after a round gets
``growth`` times as many trials in the next one (at most ``max_trials``); the earlier trials are
reused from the store. Its trial count is then chosen from the data, one of at most ``r``
counts by round ``r``, so its round-``r`` share of ``alpha`` is divided by ``r`` (the union bound
over the counts it could have).

Per probe, not per prefix: a probe whose gated findings are all decided after a round is left
out of the later rounds and keeps the results of the round that decided it (its share of
``alpha`` was spent there). A probe whose design draws from the whole item set (the
concatenations of the cluster, permutation and bypass tests:
:attr:`~judgeprobe.probes.base.Probe.nested_design` False) would draw anew from each longer
prefix and pay again; it is judged once, in the first round, on every item, at the audit's whole
level ``1 - alpha`` (one look spends its own ``alpha``; the family is adjusted across probes as
for every round). Per-item requests are always reused. The rounds stop early at the first round
with a decided fail when ``stop`` is ``verdict`` (the default): the card's verdict is then FAIL
whatever else the rounds would show. A killed run resumes the same way: its rounds replay from
the store with no new judge call.
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from judgeprobe.audit.anytime import decide_round
from judgeprobe.data.items import Item
from judgeprobe.engine import Engine
from judgeprobe.errors import BudgetExhausted, ConfigError
from judgeprobe.probes import ProbeResult
from judgeprobe.probes.base import Finding, Probe
from judgeprobe.rubrics import Rubric
from judgeprobe.runs.probe import probe_context, run_probe_async
from judgeprobe.stats.sequential import look_alpha

METHOD = (
    "confidence sequences (beta-binomial mixture) at the audit's level for per-item rates; "
    "alpha_r = alpha / rounds planned for the other findings; Holm on anytime p-values"
)
"""How the rounds keep the error level, as the card states it."""

Stopped = Literal["decided", "verdict", "budget", "data", "max_rounds"]
STOP_REASONS: dict[str, str] = {
    "decided": "every gated finding is decided",
    "verdict": "a gated finding is decided fail, so the card's verdict (FAIL) can no longer change",
    "budget": "the next round would exceed the call budget",
    "data": "the data is exhausted",
    "max_rounds": "the most rounds allowed were run",
}


class UntilDecided(BaseModel):
    """``engine.until_decided``: how the rounds grow and how many judge calls they may make.

    ``max_calls`` counts the judge calls (retries included) this run makes; a round that would
    take them past it is not started, and the engine's budget stops one that would anyway. None:
    no budget but the data (the rounds then cost at most what a fixed-size audit of every item
    costs, plus the re-drawn concatenations of its multi-stage probes).
    Round ``r`` audits ``ceil(start_items * growth**(r - 1))`` items (at most all of them): the
    rounds start small, so a judge far from its thresholds stops early, and grow geometrically,
    so few rounds reach a large sample. ``max_trials`` caps the reproduction trials rounds may
    add (see the module).
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    max_calls: int | None = Field(default=None, ge=1)
    start_items: int = Field(default=20, ge=1)
    growth: float = Field(default=1.5, gt=1.0)
    max_rounds: int = Field(default=12, ge=1)
    max_trials: int = Field(default=12, ge=1)
    stop: Literal["verdict", "findings"] = "verdict"
    """When the rounds stop early: ``verdict``, as soon as the card's verdict can no longer
    change (a gated finding decided fail: the card is FAIL whatever the others show) or every
    gated finding is decided; ``findings``, only when every gated finding is decided."""

    def sizes(self, total: int) -> list[int]:
        """The prefix lengths of the rounds for ``total`` items.

        Examples
        --------
        >>> UntilDecided(max_calls=10, start_items=50, growth=2.0).sizes(300)
        [50, 100, 200, 300]
        >>> UntilDecided(max_calls=10).sizes(200)
        [20, 30, 45, 68, 102, 153, 200]
        """
        sizes: list[int] = []
        n = min(total, self.start_items)
        while len(sizes) < self.max_rounds:
            sizes.append(n)
            if n >= total:
                break
            n = min(total, max(n + 1, math.ceil(n * self.growth)))
        return sizes


@dataclass(frozen=True)
class Audited:
    """One probe of a sequential audit: its name in the audit, the probe, items and rubric."""

    name: str
    probe: Probe
    items: Sequence[Item]
    rubric: Rubric


@dataclass(frozen=True)
class Round:
    """What one round did: its items, new judge calls, level, and how its findings fared."""

    round: int
    items: int
    calls: int
    level: float
    alpha: float
    gated: int
    decided: int
    inconclusive: int
    not_assessable: int
    trials: dict[str, int] = dataclasses.field(default_factory=dict)
    """The reproduction trials of each probe that has them, by its name in the audit."""
    audited: list[str] = dataclasses.field(default_factory=list)
    """The probes the round ran: those with a gated finding still undecided before it."""

    def line(self) -> str:
        """The progress line printed after the round."""
        trials = "".join(f", {name} {n} trials" for name, n in self.trials.items())
        probes = f"; probes run: {', '.join(self.audited)}" if self.audited else ""
        return (
            f"round {self.round}: {self.items} items{trials}, {self.calls} new calls, level "
            f"{self.level:.4f}; gated findings: {self.decided} decided, "
            f"{self.inconclusive} inconclusive, {self.not_assessable} not assessable{probes}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The round as stored: ``trials`` only when a probe has them."""
        out = dataclasses.asdict(self)
        if not self.trials:
            del out["trials"]
        return out


@dataclass
class Sequential:
    """A sequential audit's outcome: the last round's results, every round, and why it stopped.

    ``reason`` is set when the first round itself was cut short by the engine's budget (the run
    is then incomplete, as a fixed-size audit would be).
    """

    results: dict[str, ProbeResult]
    rounds: list[Round]
    stopped: Stopped
    options: UntilDecided
    alpha: float
    reason: str | None = None
    cut_round: int | None = None
    """A round the engine's budget stopped part-way (its results were discarded)."""
    calls: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The ``rounds`` record of the run store and the card."""
        return {
            "method": METHOD,
            "alpha": self.alpha,
            "max_calls": self.options.max_calls,
            "start_items": self.options.start_items,
            "growth": self.options.growth,
            "max_rounds": self.options.max_rounds,
            "max_trials": self.options.max_trials,
            "calls": self.calls,
            "stopped": self.stopped,
            "stopped_because": STOP_REASONS[self.stopped],
            "cut_round": self.cut_round,
            "rounds": [r.to_dict() for r in self.rounds],
        }


def check_sequential(audited: Sequence[Audited]) -> None:
    """ConfigError unless every probe can be analysed at a round's level.

    A round sets each probe's ``confidence_level``; a probe without that parameter (a plugin)
    cannot spend the round's share of the error level.
    """
    for entry in audited:
        names = getattr(entry.probe, "__dataclass_fields__", {})
        if "confidence_level" not in names:
            raise ConfigError(
                f"engine.until_decided: probe {entry.name!r} has no confidence_level parameter, "
                "so its rounds cannot be decided at their own level; audit it without "
                "until_decided"
            )


def seeded_order(items: Sequence[Item], seed: int) -> list[Item]:
    """``items`` in the order the rounds take them: a permutation fixed by ``seed``."""
    rng = np.random.default_rng([seed, zlib.crc32(b"until_decided")])
    return [items[int(i)] for i in rng.permutation(len(items))]


def base_level(audited: Sequence[Audited]) -> float:
    """The audit's overall confidence level: the lowest of its probes' levels."""
    return min(float(getattr(a.probe, "confidence_level", 0.95)) for a in audited)


async def run_until_decided(
    audited: Sequence[Audited],
    engine: Engine,
    options: UntilDecided,
    *,
    seed: int = 0,
    prepare: Callable[[ProbeResult], ProbeResult] = lambda result: result,
    on_round: Callable[[Mapping[str, ProbeResult], Round], None] | None = None,
) -> Sequential:
    """Run ``audited`` in rounds until every gated finding is decided (see the module).

    ``prepare`` gives a result the thresholds the audit judges it by, before the family is
    adjusted; ``on_round`` sees each round's adjusted results and record (the audit stores them
    and prints the round's line).
    """
    check_sequential(audited)
    alpha = round(1.0 - base_level(audited), 12)
    ordered = [dataclasses.replace(a, items=seeded_order(a.items, seed)) for a in audited]
    sizes = options.sizes(max(len(a.items) for a in ordered))
    trials = {a.name: _trials(a.probe) for a in ordered if growing_trials(a.probe, options)}
    outcome = Sequential({}, [], "data", options, alpha)
    previous: dict[str, Stage] = {}
    frozen: dict[str, tuple[ProbeResult, float]] = {}  # settled probes: raw result, their share
    paid: dict[str, dict[str, int]] = {}  # each probe's calls and tokens over the rounds so far
    for index, n in enumerate(sizes, start=1):
        active = [a for a in ordered if a.name not in frozen]
        if index > 1:
            predicted = predict_calls(active, engine, n, previous, trials, seed=seed)
            if options.max_calls is not None and calls_made(engine) + predicted > options.max_calls:
                outcome.stopped = "budget"
                break
        spend = look_alpha(alpha, index, looks=len(sizes))
        spent = {a.name: spend / index if a.name in trials else spend for a in active}
        counts = {a.name: n for a in active}
        for entry in active:  # drawn from every item: judged once, on all, at the whole level
            if not entry.probe.nested_design:
                counts[entry.name], spent[entry.name] = len(entry.items), alpha
        before = calls_made(engine)
        try:
            raw, stages = await _round(active, engine, counts, trials, spent, seed, prepare)
        except BudgetExhausted as exc:
            if not outcome.rounds:
                outcome.reason = str(exc)  # nothing decided: the audit is incomplete
            outcome.stopped, outcome.cut_round = "budget", index
            break
        previous.update(stages)
        raw = {name: _with_spent(name, result, paid) for name, result in raw.items()}
        every = {**{name: result for name, (result, _) in frozen.items()}, **raw}
        shares = {**{name: share for name, (_, share) in frozen.items()}, **spent}
        order = [a.name for a in ordered]
        results = decide_round(
            {name: every[name] for name in order},
            {a.name: a.probe for a in ordered},
            alpha=alpha,
            spent=shares,
        )
        record = _record(index, n, calls_made(engine) - before, spend, results, dict(trials))
        record = dataclasses.replace(record, audited=[a.name for a in active])
        outcome.results, outcome.rounds = results, [*outcome.rounds, record]
        if on_round is not None:
            on_round(results, record)
        if record.decided == record.gated:
            outcome.stopped = "decided"
            break
        if options.stop == "verdict" and decided_fail(results):
            outcome.stopped = "verdict"
            break
        for entry in active:  # a probe whose gated findings are all decided is done
            if all_settled(results[entry.name]) or not entry.probe.nested_design:
                frozen[entry.name] = (raw[entry.name], spent[entry.name])
        trials = more_trials(ordered, results, trials, options)
    else:
        full = sizes[-1] >= max(len(a.items) for a in ordered)
        outcome.stopped = "data" if full else "max_rounds"
    outcome.calls = calls_made(engine)
    return outcome


PAID = ("calls", "retries", "prompt_tokens", "completion_tokens")
"""The usage counts a probe's rounds add up: what the judge was paid for it in all."""


def _with_spent(name: str, result: ProbeResult, paid: dict[str, dict[str, int]]) -> ProbeResult:
    """``result`` (the probe ``name`` of the audit) with its usage counting every round's calls
    and tokens, not only this round's (``paid`` keeps the running sums): what its findings
    cost."""
    sums = paid.setdefault(name, dict.fromkeys(PAID, 0))
    for key in PAID:
        sums[key] += int(result.usage.get(key, 0))
    usage = {**result.usage, **sums}
    usage["cached"] = max(0, int(result.usage.get("requests", 0)) - sums["calls"])
    return dataclasses.replace(result, usage=usage)


def all_settled(result: ProbeResult) -> bool:
    """Whether ``result`` has gated findings and every one is decided: more items would not
    change its statuses, so later rounds leave its probe out."""
    gated = [f for f in result.findings if f.threshold is not None]
    return bool(gated) and all(settled(f) for f in gated)


def decided_fail(results: Mapping[str, ProbeResult]) -> bool:
    """Whether a gated finding is decided fail: the card's verdict is then FAIL whatever the
    undecided findings would show."""
    return any(
        f.threshold is not None and f.status == "fail"
        for result in results.values()
        for f in result.findings
    )


@dataclass(frozen=True)
class Stage:
    """A probe's round, for predicting the next: its items and trials, and the requests of its
    plan's first stage and of all its stages."""

    items: int
    trials: int
    first: int
    planned: int


def _trials(probe: Probe) -> int:
    return int(getattr(probe, "reproduction_trials", 0) or 0)


def growing_trials(probe: Probe, options: UntilDecided) -> bool:
    """Whether the rounds may add trials to ``probe``: it has reproduction trials, findings they
    decide, and fewer trials than ``options.max_trials``."""
    return bool(probe.trial_findings) and 0 < _trials(probe) < options.max_trials


def more_trials(
    ordered: Sequence[Audited],
    results: Mapping[str, ProbeResult],
    trials: Mapping[str, int],
    options: UntilDecided,
) -> dict[str, int]:
    """The next round's trials: ``growth`` times as many for a probe one of whose gated trial
    findings is undecided (at most ``max_trials``); the same for the others."""
    out = dict(trials)
    for entry in ordered:
        if entry.name not in trials:
            continue
        undecided = any(
            f.name in entry.probe.trial_findings and f.threshold is not None and not settled(f)
            for f in results[entry.name].findings
        )
        if undecided:
            grown = max(trials[entry.name] + 1, math.ceil(trials[entry.name] * options.growth))
            out[entry.name] = min(options.max_trials, grown)
    return out


def calls_made(engine: Engine) -> int:
    """The judge calls ``engine`` made so far, retries included (what its budget counts)."""
    return engine.totals.called + engine.totals.retries


def _probe_at(entry: Audited, level: float, trials: Mapping[str, int]) -> Probe:
    """``entry``'s probe at a round's level, with the round's trials where the rounds set them."""
    changes: dict[str, Any] = {"confidence_level": level}
    if entry.name in trials:
        changes["reproduction_trials"] = trials[entry.name]
    return dataclasses.replace(entry.probe, **changes)  # type: ignore[type-var]


async def _round(
    ordered: Sequence[Audited],
    engine: Engine,
    counts: Mapping[str, int],
    trials: Mapping[str, int],
    spent: Mapping[str, float],
    seed: int,
    prepare: Callable[[ProbeResult], ProbeResult],
) -> tuple[dict[str, ProbeResult], dict[str, Stage]]:
    results: dict[str, ProbeResult] = {}
    stages: dict[str, Stage] = {}
    for entry in ordered:
        items = list(entry.items[: counts[entry.name]])
        probe = _probe_at(entry, 1.0 - spent[entry.name], trials)
        result = await run_probe_async(probe, items, engine, entry.rubric, seed=seed)
        results[entry.name] = prepare(result)
        first = probe.plan(items, probe_context(probe, engine.judge, entry.rubric, seed=seed))
        final = result.plan.keys if result.plan is not None else frozenset()
        stages[entry.name] = Stage(len(items), _trials(probe), len(first.keys), len(final))
    return results, stages


def predict_calls(
    ordered: Sequence[Audited],
    engine: Engine,
    n: int,
    previous: Mapping[str, Stage],
    trials: Mapping[str, int],
    *,
    seed: int,
) -> int:
    """The judge calls a round on the first ``n`` items is expected to make.

    The first stage of each probe's plan is planned (no judge call) and its requests not yet in
    the store are counted; a probe's later stages (drawn from the first's verdicts) are assumed
    to grow with the items, and with the trials, from their size in the round before.
    """
    total = 0
    for entry in ordered:
        items = list(entry.items[:n])
        ctx = probe_context(entry.probe, engine.judge, entry.rubric, seed=seed)
        keys = sorted(entry.probe.plan(items, ctx).keys)
        total += len(keys) - len(engine.store.get_many(keys))
        stage = previous.get(entry.name)
        if stage is None or stage.items == 0:
            continue
        later = stage.planned - stage.first
        grown = later * len(items) / stage.items
        if stage.trials > 0:
            grown *= trials.get(entry.name, stage.trials) / stage.trials
        total += math.ceil(grown)
    return total


def settled(finding: Finding) -> bool:
    """Whether more data is not expected to change ``finding``'s status: it is decided.

    A pass or a fail is; a warn only when its interval also lies wholly on the pass side of the
    fail threshold (a warn whose interval reaches past ``fail`` says "at least warn", and more
    items may still show a fail). An inconclusive or not assessable finding is not.
    """
    status = finding.status
    if status in ("pass", "fail"):
        return True
    threshold, ci = finding.threshold, finding.estimate.ci
    if status != "warn" or threshold is None:
        return False
    if threshold.fail is None or math.isnan(ci.low) or math.isnan(ci.high):
        return True
    sign = 1.0 if threshold.higher_is_worse else -1.0
    return max(sign * ci.low, sign * ci.high) < sign * threshold.fail


def _record(
    index: int,
    n: int,
    calls: int,
    spend: float,
    results: Mapping[str, ProbeResult],
    trials: dict[str, int],
) -> Round:
    gated = [f for r in results.values() for f in r.findings if f.threshold is not None]
    decided = sum(settled(f) for f in gated)
    not_assessable = sum(f.status == "n/a" for f in gated)
    return Round(
        round=index,
        items=n,
        calls=calls,
        level=round(1.0 - spend, 12),
        alpha=spend,
        gated=len(gated),
        decided=decided,
        inconclusive=len(gated) - decided - not_assessable,
        not_assessable=not_assessable,
        trials=trials,
    )
