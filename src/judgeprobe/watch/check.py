"""One check of a watch: today's judge re-judges a seeded draw of the audit's anchors.

The first check sets the watch up: it reads the audit's anchors and rerun null
(:func:`~judgeprobe.watch.anchors.read_anchors`), freezes them in the watch store with the
settings (seed, level, the stated change and how soon it must be seen), and, when the audit
holds fewer than :data:`NULL_MIN` rerun pairs, measures the rerun noise of today's judge on a
seeded sample of the anchors (trial 0 and trial 1 of each: two calls, apart from the check's own
verdicts, so the null never depends on the data it is tested against). The anchors per check
are then the fewest with which the drift test detects the stated change in time
(:func:`~judgeprobe.stats.drift.anchors_for_power`), unless given.

Every check draws its anchors without replacement from the frozen set, ranked by a seeded hash
of the check number and the item (stable across runs and Python versions), and asks the judge
for each at its own trial (:func:`~judgeprobe.watch.store.check_trial`). All calls go through the
engine into the watch store: a check stopped half-way resumes where it stopped, and a finished one
is never asked again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgeprobe._util.hashing import content_hash
from judgeprobe._version import __version__
from judgeprobe.core.judge import Judge
from judgeprobe.core.request import Request
from judgeprobe.engine import Engine, EngineConfig, run_blocking
from judgeprobe.engine.lock import StoreLock
from judgeprobe.errors import ConfigError
from judgeprobe.rubrics import Rubric
from judgeprobe.stats.drift import anchors_for_power, drift_prior, rerun_null_bound
from judgeprobe.watch.anchors import Anchor, NullPair, audit_store_path, decision, read_anchors
from judgeprobe.watch.identity import judge_identity
from judgeprobe.watch.store import (
    ANCHOR,
    NULL_AGAIN,
    NULL_FIRST,
    STORE_NAME,
    WatchStore,
    check_trial,
)

NULL_MIN = 50
"""Fewer rerun pairs than this in the audit: the first check measures the null on this many."""
MIN_ANCHORS = 10
"""The fewest anchors a check draws when sized by the test (unless the audit has fewer)."""
UNSIZED_ANCHORS = 20
"""The anchors per check when the null allows no sizing (its bound is 1)."""

DEFAULTS: Mapping[str, Any] = {
    "alpha": 0.05,
    "change": 0.10,
    "within": 10,
    "start": 20,
    "power": 0.8,
    "seed": 0,
}
"""What a watch is set up with unless told: false-alarm level 5 %, a change of 10 % of the
anchors' verdicts to be detected within 10 checks with 80 % power when it starts at check 20."""


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """What one check did: its number, whether it finished, and why not."""

    check: int
    complete: bool
    reason: str | None
    calls: int
    """Judge calls this run made (a resumed check makes only the missing ones)."""
    failed: bool = False
    """True when no anchor got an ok verdict (the judge failed: an error, not a result)."""


def watch_store_path(audit_out: str | os.PathLike[str]) -> Path:
    """Where the watch of the audit at ``audit_out`` keeps its checks: beside its run store."""
    return audit_store_path(audit_out).with_name(STORE_NAME)


def run_check(
    audit_out: str | os.PathLike[str],
    judge: Judge,
    *,
    rubric: Rubric | None = None,
    anchors: int | None = None,
    settings: Mapping[str, Any] | None = None,
    engine: EngineConfig | None = None,
) -> CheckOutcome:
    """Run one check of the watch of the audit at ``audit_out`` with ``judge`` as it is now.

    ``rubric`` is the rubric judged with today (default: the audited one; a changed rubric shows
    in the identity); ``anchors`` the anchors this check draws (default: the watch's, sized at
    the first check); ``settings`` any of :data:`DEFAULTS`, taken by the first check only (a
    later check given other values is a :class:`~judgeprobe.errors.ConfigError`: the test's
    prior and draws are fixed before its data).
    """
    if anchors is not None and anchors < 1:
        raise ConfigError(f"--anchors must be >= 1, got {anchors}")
    path = watch_store_path(audit_out)
    with StoreLock(path), WatchStore(path, secrets=judge.secrets()) as store:
        fixed = _set_up(store, audit_out, settings or {})
        audited = store.rubrics()[str(fixed["rubric"])]
        today = audited if rubric is None else _checked_rubric(rubric, audited)
        return run_blocking(_check(store, judge, today, fixed, anchors, engine))


def _set_up(store: WatchStore, audit_out: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """The watch's settings, made and frozen with the anchors by the first check."""
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"unknown watch setting(s): {', '.join(unknown)}")
    stored = store.settings()
    if stored is not None:
        for name, value in given.items():
            if value is not None and stored.get(name) != value:
                raise ConfigError(
                    f"the watch's {name} is {stored.get(name)!r}, fixed by its first check; "
                    f"it cannot become {value!r} (start another watch in another folder)"
                )
        return stored
    audit = read_anchors(audit_out)
    settings: dict[str, Any] = {
        **DEFAULTS,
        **{k: v for k, v in given.items() if v is not None},
        "audit_store": audit.store,
        "audit_run": audit.run_id,
        "judge_fingerprint": audit.judge_fingerprint,
        "judge": dict(audit.judge),
        "rubric": audit.rubric.hash,
        "served_models": list(audit.served_models),
        "left_out": dict(audit.left_out),
        "audit_version": audit.version,
        "anchors": None,
        "version": __version__,
    }
    store.register_rubric(audit.rubric)
    store.put_anchors(audit.anchors)
    store.put_null(audit.null)
    store.set_settings(settings)
    return settings


async def _check(
    store: WatchStore,
    judge: Judge,
    rubric: Rubric,
    settings: dict[str, Any],
    anchors: int | None,
    config: EngineConfig | None,
) -> CheckOutcome:
    pool = store.anchors()
    checks = store.checks()
    resumed = bool(checks) and checks[-1].status != "complete"
    check = checks[-1].check if resumed else len(checks) + 1
    runner = Engine(judge, store, config or EngineConfig(progress=False))
    calls = 0
    try:
        store.start_check(check, 0 if not resumed else checks[-1].anchors, {})
        if check == 1 and len(store.null_pairs()) < NULL_MIN:
            measured, made = await _measure_null(store, runner, judge, rubric, settings, pool)
            calls += made
            if measured is not None:
                store.finish_check(check, "stopped", {}, measured)
                return CheckOutcome(check, False, measured, calls)
        size = _size(store, settings, anchors, len(pool), resumed, checks)
        drawn = draw(pool, settings["seed"], check, size)
        requests = {
            a.item_id: Request.make(
                judge.fingerprint, rubric, dict(a.fields), trial=check_trial(check)
            )
            for a in drawn
        }
        store.start_check(check, size, {})
        store.put_requests(check, [(item, ANCHOR, r.key) for item, r in requests.items()])
        result = await runner.run(requests.values(), description=f"watch check {check}")
        calls += result.stats.called
        identity = judge_identity(judge, rubric, result.verdicts.values())
        oks = [v for v in result.verdicts.values() if v.ok]
        if not result.complete:
            store.finish_check(check, "stopped", identity, result.stopped)
            return CheckOutcome(check, False, result.stopped, calls)
        if not oks:
            errors = sorted({v.error or v.status.value for v in result.verdicts.values()})
            why = f"no anchor got an ok verdict ({'; '.join(errors)[:300]})"
            store.finish_check(check, "stopped", identity, why)
            return CheckOutcome(check, False, why, calls, failed=True)
        store.finish_check(check, "complete", identity)
        return CheckOutcome(check, True, None, calls)
    finally:
        await judge.aclose()


async def _measure_null(
    store: WatchStore,
    runner: Engine,
    judge: Judge,
    rubric: Rubric,
    settings: Mapping[str, Any],
    pool: Sequence[Anchor],
) -> tuple[str | None, int]:
    """Measure today's rerun noise on :data:`NULL_MIN` anchors (see the module); the reason it
    could not (None when it did) and the calls made."""
    sample = draw(pool, settings["seed"], "null", NULL_MIN)
    first = {a.item_id: Request.make(judge.fingerprint, rubric, dict(a.fields)) for a in sample}
    again = {
        a.item_id: Request.make(judge.fingerprint, rubric, dict(a.fields), trial=1) for a in sample
    }
    store.put_requests(
        1,
        [(i, NULL_FIRST, r.key) for i, r in first.items()]
        + [(i, NULL_AGAIN, r.key) for i, r in again.items()],
    )
    result = await runner.run([*first.values(), *again.values()], description="rerun null")
    if not result.complete:
        return f"the rerun null was not measured: {result.stopped}", result.stats.called
    pairs = []
    for item in first:
        a = decision(rubric, result.verdicts.get(first[item].key))
        b = decision(rubric, result.verdicts.get(again[item].key))
        if a is not None and b is not None:
            pairs.append(NullPair(item, 1, a, b, "check 1"))
    store.put_null(pairs)
    return None, result.stats.called


def _size(
    store: WatchStore,
    settings: dict[str, Any],
    anchors: int | None,
    pool: int,
    resumed: bool,
    checks: Sequence[Any],
) -> int:
    """The anchors this check draws: a resumed check's own, else ``anchors``, else the watch's
    (sized once, after the null is known, and stored)."""
    if resumed and checks[-1].anchors > 0:
        return int(checks[-1].anchors)
    if anchors is not None:
        return min(anchors, pool)
    if settings.get("anchors") is None:
        settings["anchors"] = sized_anchors(store.null_pairs(), settings, pool)
        store.set_settings(settings)
    return min(int(settings["anchors"]), pool)


def sized_anchors(null: Sequence[NullPair], settings: Mapping[str, Any], pool: int) -> int:
    """The fewest anchors per check with which the test detects ``settings``' change in time
    (:func:`~judgeprobe.stats.drift.anchors_for_power`), at least :data:`MIN_ANCHORS`, at most
    ``pool``; all of them when fewer do not suffice."""
    alpha = float(settings["alpha"])
    differing = sum(p.differs for p in null)
    bound = rerun_null_bound(differing, len(null), alpha / 2.0)
    if bound >= 1.0:
        return min(pool, UNSIZED_ANCHORS)
    rate = differing / len(null)
    change = float(settings["change"])
    found = anchors_for_power(
        null_rate=rate,
        null_bound=bound,
        change=change,
        within=int(settings["within"]),
        start=int(settings["start"]),
        alpha=alpha / 2.0,
        prior=drift_prior(rate, change, bound=bound),
        power=float(settings["power"]),
        most=pool,
    )
    return pool if found is None else min(pool, max(MIN_ANCHORS, found))


def draw(pool: Sequence[Anchor], seed: int, label: int | str, size: int) -> list[Anchor]:
    """``size`` anchors of ``pool`` without replacement, ranked by a seeded hash of ``label`` (the
    check number) and the item: the same draw on every run, whatever the pool's order."""
    ranked = sorted(pool, key=lambda a: content_hash([seed, "watch", label, a.item_id]))
    return ranked[:size]


def _checked_rubric(rubric: Rubric, audited: Rubric) -> Rubric:
    """``rubric``, which must read the anchors' fields and answer as the audited one does."""
    if rubric.kind != audited.kind or not set(rubric.inputs) <= set(audited.inputs):
        raise ConfigError(
            f"rubric {rubric.name!r} ({rubric.kind}, reads {', '.join(rubric.inputs)}) cannot "
            f"judge the anchors of rubric {audited.name!r} ({audited.kind}, reads "
            f"{', '.join(audited.inputs)})"
        )
    return rubric
