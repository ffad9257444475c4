"""One audit: the selected probes on one judge, in one engine run, into one run store and card.

An :class:`AuditConfig` is what ``judgeprobe audit CONFIG.yaml`` reads. Every probe shares the
engine, so a request two probes need (the base score S(P, R), say) is judged once, and a second
run of the same audit makes no judge call at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import inspect
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import (
    ValidationError,
)

from judgeprobe._util.signals import stopped_by
from judgeprobe._util.yaml_files import explain_validation
from judgeprobe._version import __version__
from judgeprobe.audit.applicable import probes_that_apply
from judgeprobe.audit.config import (
    _INPUT_KEYS,
    AuditConfig,
    EngineOptions,
    ThresholdOption,
)
from judgeprobe.audit.family import adjust_family, headline_thresholds
from judgeprobe.audit.sequential import Audited, Round, UntilDecided, run_until_decided
from judgeprobe.core.judge import Judge
from judgeprobe.data import load_dataset
from judgeprobe.data.dataset import Dataset
from judgeprobe.data.items import Item
from judgeprobe.engine import Engine, RunStore, run_blocking
from judgeprobe.engine.executors import build_executor
from judgeprobe.engine.limits import BudgetMeter
from judgeprobe.engine.lock import StoreLock
from judgeprobe.engine.store_base import disk_full
from judgeprobe.engine.store_meta import ENGINE, ROUNDS, STATUS
from judgeprobe.errors import BudgetExhausted, ConfigError, JudgeprobeError, StoreError
from judgeprobe.judges.recorded import RecordedJudge
from judgeprobe.judges.registry import build_judge
from judgeprobe.probes import ProbeResult, get_probe_class
from judgeprobe.probes.registry import build_probe
from judgeprobe.probes.requirements import not_applicable
from judgeprobe.report.redact import redact
from judgeprobe.rubrics import Rubric, get_rubric
from judgeprobe.runs.probe import check_probe, run_probe_async
from judgeprobe.runs.recorded_pairwise import fold_recorded, judge_of_sources, warn_judge_source


@dataclass
class AuditOutcome:
    """What an audit produced: results per probe, where it wrote them, and how it ended."""

    store_path: Path
    run_id: int
    results: dict[str, ProbeResult]
    complete: bool
    reason: str | None = None
    card_paths: dict[str, Path] = field(default_factory=dict)
    card: dict[str, Any] | None = None
    """The Judge Card the audit wrote (None when it wrote none)."""
    engine_totals: dict[str, int] = field(default_factory=dict)
    rounds: dict[str, Any] | None = None
    """With ``engine.until_decided``: the rounds run and why they stopped
    (:meth:`judgeprobe.audit.sequential.Sequential.to_dict`)."""


async def run_audit_async(
    config: AuditConfig,
    *,
    judge: Judge | None = None,
    command: str | None = None,
    progress: bool | None = None,
    write_card: bool = True,
    until_decided: UntilDecided | Mapping[str, Any] | None = None,
    meter: BudgetMeter | None = None,
) -> AuditOutcome:
    """Run an audit. ``judge`` overrides ``config.judge`` (for judges built in Python).

    ``meter``: a budget shared with other audits (a repair's), whose bounds replace the
    config's call and token budget.

    ``until_decided`` (an :class:`~judgeprobe.audit.sequential.UntilDecided` or its mapping)
    replaces
    ``engine.until_decided``: the audit then runs in rounds until its gated findings are
    decided (:mod:`judgeprobe.audit.sequential`).

    Before the first judge call, every probe's preconditions are checked (a probe that cannot
    run is a :class:`ConfigError` naming it) and the run store is locked: a second audit on the
    same ``out`` is refused with a :class:`StoreError` while this one runs. The card rendered is
    the card of the run this call made, whatever else the store holds.
    """
    if until_decided is not None:
        config = with_until_decided(config, until_decided)
    out = Path(config.out)
    if out.exists() and not out.is_dir():
        raise ConfigError(
            f"out {config.out!r}: is an existing file, not a folder; give a folder for the run "
            "store and the card"
        )
    judge = judge if judge is not None else build_judge(config.judge, **config.judge_options)
    try:
        if not config.probes:
            config = with_default_probes(config, judge)
        datasets: dict[str, Dataset] = {}
        selected = [
            _select_probe(name, params, config, datasets) for name, params in config.probes.items()
        ]
        main_data = _dataset(config.data, config.data_options, datasets)
        main_rubric = get_rubric(config.rubric)
        recorded = judge_of_sources([chosen.probe for chosen in selected])
        if recorded is not None and not isinstance(judge, RecordedJudge):
            await judge.aclose()  # never called: every probe reads a recorded source
            judge = recorded
        if isinstance(judge, RecordedJudge):
            judge.bind([item for chosen in selected for item in chosen.items])
            for chosen in selected:
                chosen.probe, chosen.items = fold_recorded(
                    judge, chosen.name, chosen.probe, chosen.items, chosen.rubric
                )
        for chosen in selected:
            check_probe(chosen.probe, chosen.items, judge, chosen.rubric, seed=config.seed)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"out {config.out!r}: cannot create it ({exc.strerror})") from exc
        store_path = out / "run.sqlite"
        with StoreLock(store_path), RunStore(store_path) as store:
            if isinstance(judge, RecordedJudge):  # no call: the verdicts are in the store
                judge.store_looked_up(store)
            record = _run_record(config, judge, command, main_rubric, main_data, selected)
            inputs = [main_data, *datasets.values()]
            outcome = await _run_probes(
                config, judge, store, store_path, selected, inputs, record, progress, meter
            )
            if write_card:
                from judgeprobe.report.write import render_card as render

                outcome.card, outcome.card_paths = render(store, out, run_id=outcome.run_id)
            return outcome
    finally:
        await judge.aclose()


async def _run_probes(
    config: AuditConfig,
    judge: Judge,
    store: RunStore,
    store_path: Path,
    selected: list[_Selected],
    inputs: list[Dataset],
    record: dict[str, Any],
    progress: bool | None,
    meter: BudgetMeter | None = None,
) -> AuditOutcome:
    """Run every probe into a new run of ``store``; an interrupted run is recorded as such."""
    executor = build_executor(config.engine.executor, judge, config.engine.executor_options)
    engine_config = config.engine_config(progress=progress)
    engine = Engine(judge, store, engine_config, executor=executor, meter=meter)
    run_id = store.start_run(redact(record))
    store.put_skipped_rows(run_id, _skipped_rows(inputs))
    results: dict[str, ProbeResult] = {}
    reason: str | None = None
    rounds: dict[str, Any] | None = None
    try:
        if config.engine.until_decided is not None:
            results, reason, rounds = await _run_rounds(
                config, config.engine.until_decided, engine, store, run_id, selected, progress
            )
            selected = []  # every round stored its results
        for chosen in selected:
            try:
                result = await run_probe_async(
                    chosen.probe, chosen.items, engine, chosen.rubric, seed=config.seed
                )
            except BudgetExhausted as exc:
                reason = str(exc)
                break
            result = _apply_thresholds(result, config.thresholds)
            results[chosen.name] = result
            store.put_result(run_id, chosen.name, result.to_dict())
            if result.plan is not None:
                store.put_plan(run_id, chosen.name, result.plan)
        # the verdict is decided across the family of every probe's gated findings
        results = dict(zip(results, adjust_family(results.values()), strict=True))
        for name, result in results.items():
            store.put_result(run_id, name, result.to_dict())
    except (asyncio.CancelledError, KeyboardInterrupt):
        _finish(
            store, run_id, engine, "interrupted", f"interrupted ({stopped_by()}) before it finished"
        )
        raise
    except (JudgeprobeError, OSError) as exc:  # a full disk, a damaged store, a probe's defect
        error = _stopped(store, run_id, engine, exc)
        if error is None:
            raise
        raise error from exc
    state = "complete" if reason is None else "incomplete"
    _finish(store, run_id, engine, state, reason)
    return AuditOutcome(
        store_path,
        run_id,
        results,
        reason is None,
        reason,
        engine_totals=engine.totals.to_dict(),
        rounds=rounds,
    )


async def _run_rounds(
    config: AuditConfig,
    options: UntilDecided,
    engine: Engine,
    store: RunStore,
    run_id: int,
    selected: list[_Selected],
    progress: bool | None,
) -> tuple[dict[str, ProbeResult], str | None, dict[str, Any]]:
    """The probes in rounds until decided; each round's results and the rounds are stored."""

    done: list[dict[str, Any]] = []

    def stored(results: Mapping[str, ProbeResult], record: Round) -> None:
        done.append(record.to_dict())
        for name, result in results.items():
            store.put_result(run_id, name, result.to_dict())
            if result.plan is not None:
                store.put_plan(run_id, name, result.plan)
        store.put_run_meta(run_id, ROUNDS, {"rounds": list(done), "stopped": None})
        if progress is not False:
            print(record.line(), file=sys.stderr, flush=True)

    audited = [Audited(c.name, c.probe, c.items, c.rubric) for c in selected]
    outcome = await run_until_decided(
        audited,
        engine,
        options,
        seed=config.seed,
        prepare=lambda result: _apply_thresholds(result, config.thresholds),
        on_round=stored,
    )
    rounds = outcome.to_dict()
    store.put_run_meta(run_id, ROUNDS, rounds)
    return outcome.results, outcome.reason, rounds


def sampled_by_default(config: AuditConfig) -> tuple[AuditConfig, str | None]:
    """``config`` as ``judgeprobe audit`` runs it by default: sampled until decided, with no
    budget but the data, stopping once the card's verdict can no longer change.

    Returns the config and None, or the config unchanged and why it is audited at a fixed
    size: the config sets ``until_decided`` or ``fixed_size`` itself; the verdicts are recorded
    (they cost nothing, so every item is read); a batch or Ray executor (it sends the calls in
    whole batches, so a round saves no waiting); repaired judges (audited beside the judge on
    the same items); or a probe that cannot be decided at a round's level (a plugin without
    ``confidence_level``).
    """
    engine = config.engine
    if engine.until_decided is not None:
        return config, None
    why: str | None = None
    names = list(config.probes)
    if engine.fixed_size:
        why = "fixed_size is set"
    elif config.judge.startswith("recorded"):
        why = "recorded verdicts cost no call, so every item is read"
    elif engine.executor != "local":
        why = f"the {engine.executor} executor sends its calls in whole batches"
    elif config.repair:
        why = "repaired judges are audited beside it on the same items"
    else:
        levelless = [
            name
            for name in names
            if "confidence_level" not in getattr(get_probe_class(name), "__dataclass_fields__", {})
        ]
        if levelless:
            why = f"probe {levelless[0]!r} has no confidence_level to decide a round at"
    if why is not None:
        return config, why
    return with_until_decided(config, {}), None


def with_until_decided(
    config: AuditConfig, options: UntilDecided | Mapping[str, Any]
) -> AuditConfig:
    """``config`` with ``engine.until_decided`` set to ``options``; ConfigError naming a bad
    option (``engine.until_decided.growth: ...``)."""
    try:
        engine = EngineOptions.model_validate(
            {**config.engine.model_dump(exclude={"until_decided"}), "until_decided": options}
        )
    except ValidationError as exc:
        where = explain_validation(exc, root="engine", locate=lambda loc: ["engine", *loc])
        raise ConfigError(f"{config.source}: {where}") from exc
    updated = config.model_copy(update={"engine": engine})
    updated._source = config.source
    return updated


def _finish(store: RunStore, run_id: int, engine: Engine, state: str, reason: str | None) -> None:
    store.put_run_meta(run_id, ENGINE, engine.totals.to_dict())
    card_state = "complete" if state == "complete" else "incomplete"
    store.put_run_meta(run_id, STATUS, {"state": card_state, "reason": reason})
    store.finish_run(run_id, state)


def _stopped(store: RunStore, run_id: int, engine: Engine, exc: Exception) -> StoreError | None:
    """Mark run ``run_id`` stopped by ``exc``, as far as the store still takes writes (on a full
    disk even the mark may not fit); a :class:`StoreError` saying how to resume when the disk is
    full, else None (``exc`` is raised as it is)."""
    reason = f"stopped by an error: {exc}"
    marked = "there was no room to mark the run stopped"
    with contextlib.suppress(JudgeprobeError):
        store.finish_run(run_id, "stopped")  # the smallest write first
        marked = "the run is marked stopped"
        store.put_run_meta(run_id, STATUS, {"state": "incomplete", "reason": reason})
        store.put_run_meta(run_id, ENGINE, engine.totals.to_dict())
    if not disk_full(exc):
        return None
    return StoreError(
        f"{exc}: the disk is full; every verdict made is stored and {marked}: free some space "
        "and run the same command again to resume"
    )


def _run_record(
    config: AuditConfig,
    judge: Judge,
    command: str | None,
    main_rubric: Rubric,
    main_data: Dataset,
    selected: list[_Selected],
) -> dict[str, Any]:
    """What the run store records about a run: the tool, the command, the judge and the inputs."""
    return {
        "tool_version": __version__,
        "command": command or "",
        "judge": judge.describe(),
        "judge_fingerprint": judge.fingerprint,
        "rubric": _rubric_record(main_rubric),
        "data": _data_record(main_data, config.limit),
        "probes": {p.name: p.probe.params() for p in selected},
        "probe_inputs": {
            p.name: {
                "rubric": _rubric_record(p.rubric),
                "data": _data_record(p.dataset, p.limit),
            }
            for p in selected
        },
        "seed": config.seed,
        "thresholds": {k: v.model_dump() for k, v in config.thresholds.items()},
        "not_applicable": dict(config.not_applicable),
        "fail_on": config.fail_on,
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def run_audit(
    config: AuditConfig,
    *,
    judge: Judge | None = None,
    command: str | None = None,
    progress: bool | None = None,
    write_card: bool = True,
    until_decided: UntilDecided | Mapping[str, Any] | None = None,
    meter: BudgetMeter | None = None,
) -> AuditOutcome:
    """:func:`run_audit_async` for code without an event loop (scripts, notebooks)."""
    return run_blocking(
        run_audit_async(
            config,
            judge=judge,
            command=command,
            progress=progress,
            write_card=write_card,
            until_decided=until_decided,
            meter=meter,
        )
    )


def with_default_probes(config: AuditConfig, judge: Judge | None = None) -> AuditConfig:
    """``config`` with the default probe set: every probe that applies to the judge, the rubric
    and the data, with its default parameters; each other one is listed in ``not_applicable``
    with why (and so on the card). A config that names its probes is returned as it is.

    A probe applies when its declared requirements are met
    (:func:`~judgeprobe.audit.applicable.probes_that_apply`) and it passes the check an audit
    makes before its first judge call (a rubric with no shipped variants cannot be reworded).
    ``judge`` None builds the config's judge for its capabilities and closes it again. None
    applying is a :class:`ConfigError` that gives every probe's reason.
    """
    if config.probes:
        return config
    if judge is None:
        built = build_judge(config.judge, **config.judge_options)
        try:
            return with_default_probes(config, built)
        finally:
            run_blocking(built.aclose())
    chosen = probes_that_apply(config, judge.capabilities)
    datasets: dict[str, Dataset] = {}
    selected = [_select_probe(n, p, config, datasets) for n, p in chosen.probes.items()]
    if isinstance(judge, RecordedJudge):
        judge.bind([item for one in selected for item in one.items])
    for one in selected:
        try:
            probe, items = one.probe, one.items
            if isinstance(judge, RecordedJudge):
                probe, items = fold_recorded(judge, one.name, probe, items, one.rubric)
            check_probe(probe, items, judge, one.rubric, seed=config.seed)
        except ConfigError as exc:
            del chosen.probes[one.name]
            why = exc.__cause__ if isinstance(exc.__cause__, JudgeprobeError) else exc
            chosen.not_applicable[one.name] = f"probe {one.name!r} cannot run here: {why}"
    if not chosen.probes:
        reasons = "; ".join(chosen.not_applicable.values())
        raise ConfigError(
            f"{config.source}: no probe applies to judge {config.judge!r}, rubric "
            f"{config.rubric!r} and data {config.data!r} ({reasons}); name the probes to run "
            "under 'probes' or with --probes"
        )
    updated = config.model_copy(
        update={
            "probes": chosen.probes,
            "not_applicable": {**config.not_applicable, **chosen.not_applicable},
        }
    )
    updated._source = config.source
    return updated


def select_probes(config: AuditConfig, judge: Judge) -> list[_Selected]:
    """Each probe of ``config`` (the default probe set when it names none,
    :func:`with_default_probes`) with its items and rubric, checked as an audit checks them
    before its first judge call (for what plans an audit's requests without running it)."""
    config = with_default_probes(config, judge)
    datasets: dict[str, Dataset] = {}
    selected = [
        _select_probe(name, params, config, datasets) for name, params in config.probes.items()
    ]
    for chosen in selected:
        check_probe(chosen.probe, chosen.items, judge, chosen.rubric, seed=config.seed)
    return selected


@dataclass
class _Selected:
    name: str
    probe: Any
    rubric: Rubric
    dataset: Dataset
    items: list[Item]
    limit: int | None


def _select_probe(
    name: str, params: Mapping[str, Any], config: AuditConfig, datasets: dict[str, Dataset]
) -> _Selected:
    cls = get_probe_class(name)
    options = {k: v for k, v in params.items() if k not in _INPUT_KEYS}
    accepted = set(inspect.signature(cls).parameters)
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ConfigError(
            f"probes.{name}: unknown parameter(s) {unknown}; {name} takes {sorted(accepted)}"
        )
    probe = build_probe(cls, options, where=f"{config.source}: probe {name!r}")
    warn_judge_source(name, options)
    rubric = get_rubric(params.get("rubric", config.rubric))
    data_spec = str(params.get("data", config.data))
    data_options = dict(params.get("data_options", config.data_options))
    dataset = _dataset(data_spec, data_options, datasets)
    limit = params.get("limit", config.limit)
    items = list(dataset.items[:limit] if limit else dataset.items)
    why = not_applicable(cls, rubric, items)
    if why is not None:
        raise ConfigError(
            f"probes.{name}: {why} (data {data_spec!r}); give the probe its own 'rubric' or 'data'"
        )
    return _Selected(name, probe, rubric, dataset, items, limit)


def _dataset(spec: str, options: Mapping[str, Any], cache: dict[str, Dataset]) -> Dataset:
    key = f"{spec}|{sorted(options.items())}"
    if key not in cache:
        cache[key] = load_dataset(spec, **options)
    return cache[key]


def _rubric_record(rubric: Rubric) -> dict[str, Any]:
    return {
        "name": rubric.name,
        "hash": rubric.hash,
        "kind": rubric.kind,
        "template": rubric.template,
        "decision": None if rubric.decision is None else rubric.decision.model_dump(),
    }


def _data_record(dataset: Dataset, limit: int | None) -> dict[str, Any]:
    n = len(dataset) if not limit else min(limit, len(dataset))
    return {
        "name": dataset.name,
        "source": dataset.source,
        "n": n,
        "n_total": len(dataset),
        "sha256": dataset.sha256,
        "skipped": len(dataset.skipped),
    }


def _skipped_rows(datasets: list[Dataset]) -> list[dict[str, Any]]:
    """The rows each distinct dataset of the run left out, as the run store records them.

    A loader lists the rows it could not parse before those with a bad value; here they are put
    back in file order (files in the order the loader read them), as a reader looks for them.
    """
    rows: list[dict[str, Any]] = []
    seen: set[int] = set()
    for dataset in datasets:
        if id(dataset) in seen:
            continue
        seen.add(id(dataset))
        files: dict[str, int] = {}
        for skipped in dataset.skipped:
            files.setdefault(skipped.path, len(files))
        in_file_order = sorted(dataset.skipped, key=lambda s: (files[s.path], s.row or 0))
        rows += [
            {
                "dataset": dataset.name,
                "path": row.path,
                "row": row.row,
                "column": row.column,
                "reason": row.reason,
            }
            for row in in_file_order
        ]
    return rows


def _apply_thresholds(result: ProbeResult, overrides: Mapping[str, ThresholdOption]) -> ProbeResult:
    """``result`` with the thresholds the audit judges it by (:func:`headline_thresholds`).

    A key ``probe.finding`` beats a key ``finding``; a slice (per category, turn, stratum) keeps
    no default threshold. Each finding then decides its status against the threshold it holds,
    and both are stored with it: the card never judges a finding again.
    """
    return headline_thresholds(result, {k: v.threshold() for k, v in overrides.items()})
