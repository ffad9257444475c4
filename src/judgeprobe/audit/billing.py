"""The bill before the first call: what an audit will ask of its judge, planned without a call.

:func:`plan_audit` plans every probe of an :class:`~judgeprobe.audit.config.AuditConfig` as the
audit
would (the same probes, data, rubrics and seed, hence the same request keys), looks the requests
up in the run store the audit would use, and counts, per probe and in total: requests, distinct
requests, those the store already answers, the judge calls left to make, their prompt tokens
(counted with the judge's tokenizer where it has one, else estimated at four characters a token,
and marked so), the completion tokens to expect, their cost under the config's ``pricing``, and
the time they take at the configured concurrency and rate limits.

A request two probes share is billed to the first that plans it, as the audit judges it there
and answers the second from the store. A multi-stage probe (cluster, permutation, bypass, policy
invariance with reproduction trials) draws its later stages from the verdicts of the first: where
the store holds them they are used, exactly. Where it does not, the later stages are planned
:data:`SPREAD_DRAWS` times on stand-in verdicts drawn over the rubric's labels (each draw its
own) and once on ones at its two ends: the bill's figures are the mean over the spread draws (an
expectation for a judge whose verdicts spread over the scale), and the largest of all the plans
is given beside them as the bound (``bound_calls``, ``bound_prompt_tokens``; the row is marked
``bound``).

No plan made before the first call can know how a judge will decide, so a later stage drawn from
its decisions (the items the judge calls harmful, for the bypass and cluster probes) can only be
expected. ``pilot=True`` buys that knowledge at a known price: it first judges the first stage of
every multi-stage probe (the requests the later stages are drawn from, which the audit needs
anyway and then answers from the store) and plans the later stages on those verdicts, so a
two-stage probe is billed exactly. The bill still counts the piloted requests as calls (it bills
the audit as a whole); :attr:`Bill.pilot` says how many were made already.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgeprobe._util.hashing import content_hash
from judgeprobe.audit.call_costs import (
    Tokens,
    cached_tokens,
    cost_of,
    mean_latency,
    seconds_for,
    time_note,
)
from judgeprobe.audit.config import AuditConfig
from judgeprobe.audit.expected import expect_rounds
from judgeprobe.audit.run import (
    _dataset,
    _select_probe,
    _Selected,
    sampled_by_default,
    with_default_probes,
)
from judgeprobe.core.judge import Judge
from judgeprobe.core.plan import Plan
from judgeprobe.core.pricing import Pricing
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict, VerdictStatus
from judgeprobe.engine.engine import Engine, run_blocking
from judgeprobe.engine.lock import StoreLock
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import ConfigError
from judgeprobe.judges.recorded import RecordedJudge
from judgeprobe.judges.registry import build_judge
from judgeprobe.probes.base import Probe
from judgeprobe.rubrics import Rubric
from judgeprobe.runs.probe import check_probe, probe_context
from judgeprobe.runs.stages import drive, stage_flow, unanswered

SPREAD_DRAWS = 8
"""Stand-in draws a later stage is planned on to bill its expectation."""
_AVERAGED = (
    "requests", "distinct", "stored", "calls", "skipped", "prompt", "cached", "completion",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class BillRow:
    """What one probe (or the whole audit) will ask of the judge.

    ``calls`` are the distinct requests neither in the store nor planned by an earlier probe;
    ``skipped`` of them exceed the judge's context window and are not sent. Tokens and cost are
    those of the calls. ``bound``: a later stage was planned on stand-in verdicts; the figures
    are then the mean over the stand-in draws (rounded), and ``bound_calls`` and
    ``bound_prompt_tokens`` the most any plan of them needs (equal to the figures when exact).
    """

    probe: str
    requests: int
    distinct: int
    stored: int
    calls: int
    skipped: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    seconds: float | None
    bound: bool = False
    stages: int = 1
    bound_calls: int = 0
    bound_prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    """Of ``prompt_tokens``, those a provider's prompt cache is expected to serve (see
    :mod:`judgeprobe.core.pricing`): the prefix each call shares with the one sent before it."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class Bill:
    """The bill of an audit: one row per probe, their total, and how each figure was had."""

    judge: str
    rows: tuple[BillRow, ...]
    total: BillRow
    tokens_counted: bool | None
    """True when the judge's tokenizer counted the prompt tokens; False: estimated; None: there
    was nothing to count (no call left to make)."""
    completion: str
    """Where the expected completion tokens come from."""
    pricing: Pricing | None
    concurrency: int
    mean_latency_s: float | None
    time_note: str
    pilot: BillRow | None = None
    """What the pilot judged before the bill was drawn up (``pilot=True``), else None: those
    calls are made and stored, and the audit does not repeat them."""
    rounds: BillRow | None = None
    """The expectation of the audit in rounds (:mod:`judgeprobe.audit.expected`): what a sound
    judge's audit asks before its verdict is decided; the rows above are then its bound. None
    when the audit runs at a fixed size (``rounds_note`` says why)."""
    rounds_note: str = ""

    @property
    def cost(self) -> float | None:
        """The total cost, None without a ``pricing`` section."""
        return self.total.cost

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "probes": [row.to_dict() for row in self.rows],
            "total": self.total.to_dict(),
            "prompt_tokens": {True: "counted", False: "estimated", None: "none to count"}[
                self.tokens_counted
            ],
            "completion_tokens": self.completion,
            "pricing": None if self.pricing is None else self.pricing.model_dump(),
            "concurrency": self.concurrency,
            "mean_latency_s": self.mean_latency_s,
            "time": self.time_note,
            "pilot": None if self.pilot is None else self.pilot.to_dict(),
            "rounds": None if self.rounds is None else self.rounds.to_dict(),
            "rounds_note": self.rounds_note,
        }


def plan_audit(
    config: AuditConfig,
    *,
    judge: Judge | None = None,
    pilot: bool = False,
    progress: bool | None = None,
    rounds: bool = False,
) -> Bill:
    """The bill of ``config``'s audit, planned without a judge call (``pilot``: see below).

    ``judge`` overrides ``config.judge`` as in :func:`~judgeprobe.audit.run.run_audit`. A probe that
    cannot run is the :class:`ConfigError` the audit would raise. ``pilot`` first judges the
    first stage of every multi-stage probe into the audit's run store (``out/run.sqlite``), so
    that the stages drawn from those verdicts are billed exactly (module docstring); those are
    the only calls it makes, shown on a progress bar unless ``progress`` is False. The pilot
    holds the run store's lock as an audit does: next to a running audit (or pilot) on the same
    ``out`` it is refused with a :class:`~judgeprobe.errors.StoreError` naming the holder.

    ``rounds`` adds the expectation of the audit in rounds, as ``judgeprobe audit`` runs it by
    default (:func:`~judgeprobe.audit.run.sampled_by_default`): the audit of a sound stand-in
    that makes no call (:mod:`judgeprobe.audit.expected`); the fixed-size rows are its bound.
    """
    if not config.probes:
        config = with_default_probes(config, judge)  # the probes the audit would run
    if judge is None:
        built = build_judge(config.judge, **config.judge_options)
        try:
            return plan_audit(config, judge=built, pilot=pilot, progress=progress, rounds=rounds)
        finally:
            run_blocking(built.aclose())
    datasets: dict[str, Any] = {}
    selected = [
        _select_probe(name, params, config, datasets) for name, params in config.probes.items()
    ]
    _dataset(config.data, config.data_options, datasets)
    if isinstance(judge, RecordedJudge):
        judge.bind([item for chosen in selected for item in chosen.items])
    for chosen in selected:
        check_probe(chosen.probe, chosen.items, judge, chosen.rubric, seed=config.seed)
    store_path = Path(config.out) / "run.sqlite"
    if not pilot:
        with RunStore(store_path) if store_path.is_file() else RunStore(":memory:") as store:
            bill = _bill(config, judge, store, selected)
            return _with_rounds(bill, config, judge, store, selected) if rounds else bill
    try:
        store_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"out {config.out!r}: cannot create it ({exc.strerror})") from exc
    # the pilot writes the audit's run store: one writer at a time, as for the audit itself
    with StoreLock(store_path), RunStore(store_path) as store:
        tokens = Tokens(judge)
        first = _first_stages(judge, selected, config.seed)
        figures = _figures(first, store, set(), tokens, judge.capabilities.context_window)
        piloted = frozenset(figures["keys"] - figures["known"])
        engine = Engine(judge, store, config.engine_config(progress=progress))
        run_blocking(engine.run(first, description="pilot: the first stages"))
        bill = _bill(config, judge, store, selected, tokens, piloted)
        latency = mean_latency(store, judge.fingerprint)
        row = _row("pilot", figures, config, latency, bill.concurrency)
        bill = dataclasses.replace(bill, pilot=row)
        if rounds:
            bill = _with_rounds(bill, config, judge, store, selected, tokens, piloted)
        return bill


def _with_rounds(
    bill: Bill,
    config: AuditConfig,
    judge: Judge,
    store: RunStore,
    selected: list[_Selected],
    tokens: Tokens | None = None,
    piloted: frozenset[str] = frozenset(),
) -> Bill:
    """``bill`` with the expectation of the audit in rounds, or the reason it has none."""
    sampled, why = sampled_by_default(config)
    if why is not None:
        return dataclasses.replace(bill, rounds_note=f"audited at a fixed size: {why}")
    items = list({id(i): i for chosen in selected for i in chosen.items}.values())
    expected = expect_rounds(sampled, judge, items)
    tokens = tokens or Tokens(judge)
    cache = config.pricing or Pricing(input_per_mtok=0.0)
    window = judge.capabilities.context_window
    figures = _figures(list(expected.requests), store, set(), tokens, window, piloted, cache)
    row = _row("rounds", figures, config, bill.mean_latency_s, bill.concurrency)
    note = (
        f"a sound judge's audit in rounds: {expected.rounds} round"
        f"{'' if expected.rounds == 1 else 's'}, its card {expected.verdict.upper()}"
        + (f" ({expected.stopped})" if expected.stopped else "")
    )
    return dataclasses.replace(bill, rounds=row, rounds_note=note)


def _first_stages(judge: Judge, selected: list[_Selected], seed: int) -> list[Request]:
    """The first-stage requests of every probe with a later stage drawn from their verdicts."""
    requests: dict[str, Request] = {}
    for chosen in selected:
        ctx = probe_context(chosen.probe, judge, chosen.rubric, seed=seed)
        first: Plan[Any] = chosen.probe.plan(chosen.items, ctx)
        if any(_draws_later_stage(chosen.probe, first, fill) for fill in ("spread", "ends")):
            requests.update((r.key, r) for r in first.requests.values())
    return list(requests.values())


def _draws_later_stage(probe: Probe, first: Plan[Any], fill: str) -> bool:
    """Whether ``probe`` refines its ``first`` stage into a later one on ``fill`` stand-ins."""
    stand_ins = {r.key: stand_in(r, fill) for r in first.requests.values()}
    return drive(stage_flow(probe, first), lambda p: stand_ins if p is first else None) is not first


def _row(
    name: str,
    figures: Mapping[str, Any],
    config: AuditConfig,
    latency: float | None,
    concurrency: int,
    **bound: Any,
) -> BillRow:
    """One row of the bill from a plan's figures (or their mean over stand-in plans, with
    ``bound``, ``stages``, ``bound_calls`` and ``bound_prompt_tokens`` given); exact without."""
    calls, prompt, completion = figures["calls"], figures["prompt"], figures["completion"]
    cached = figures["cached"]
    return BillRow(
        probe=name,
        requests=figures["requests"],
        distinct=figures["distinct"],
        stored=figures["stored"],
        calls=calls,
        skipped=figures["skipped"],
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=cost_of(config, prompt, completion, cached),
        seconds=seconds_for(calls, prompt, latency, concurrency, config),
        cached_prompt_tokens=cached,
        **{"bound_calls": calls, "bound_prompt_tokens": prompt, **bound},
    )


def _bill(
    config: AuditConfig,
    judge: Judge,
    store: RunStore,
    selected: list[_Selected],
    tokens: Tokens | None = None,
    piloted: frozenset[str] = frozenset(),
) -> Bill:
    """The bill; ``piloted`` requests are billed as calls (the pilot made them for the audit),
    their stored verdicts serving only to draw the later stages."""
    tokens = tokens or Tokens(judge)
    window = judge.capabilities.context_window
    cache = config.pricing or Pricing(input_per_mtok=0.0)
    latency = mean_latency(store, judge.fingerprint)
    concurrency = config.engine.concurrency or judge.capabilities.max_concurrency
    claimed: set[str] = set()
    rows: list[BillRow] = []
    all_keys: set[str] = set()
    stored_keys: set[str] = set()
    for chosen in selected:
        fills, stages, bound = _planned(chosen, judge, store, config.seed)
        spread = fills[:-1] if bound else fills
        figures = [
            _figures(requests, store, claimed, tokens, window, piloted, cache) for requests in fills
        ]
        expected = figures[: len(spread)]
        mean = {name: round(sum(f[name] for f in expected) / len(expected)) for name in _AVERAGED}
        # the keys of the spread draw nearest the mean stand for the probe in the totals
        nearest = min(range(len(spread)), key=lambda i: abs(expected[i]["calls"] - mean["calls"]))
        keys, known = figures[nearest]["keys"], figures[nearest]["known"]
        claimed.update(keys)
        all_keys.update(keys)
        stored_keys.update(known)
        rows.append(
            _row(
                chosen.name,
                mean,
                config,
                latency,
                concurrency,
                bound=bound,
                stages=stages,
                bound_calls=max(f["calls"] for f in figures),
                bound_prompt_tokens=max(f["prompt"] for f in figures),
            )
        )
    calls = sum(row.calls for row in rows)
    prompt = sum(row.prompt_tokens for row in rows)
    completion = sum(row.completion_tokens for row in rows)
    cached = sum(row.cached_prompt_tokens for row in rows)
    total = BillRow(
        probe="total",
        requests=sum(row.requests for row in rows),
        distinct=len(all_keys),
        stored=len(stored_keys),
        calls=calls,
        skipped=sum(row.skipped for row in rows),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=cost_of(config, prompt, completion, cached),
        seconds=seconds_for(calls, prompt, latency, concurrency, config),
        cached_prompt_tokens=cached,
        bound=any(row.bound for row in rows),
        stages=max((row.stages for row in rows), default=1),
        bound_calls=sum(row.bound_calls for row in rows),
        bound_prompt_tokens=sum(row.bound_prompt_tokens for row in rows),
    )
    return Bill(
        judge=str(judge.describe().get("model") or judge.describe()["backend"]),
        rows=tuple(rows),
        total=total,
        tokens_counted=tokens.counted,
        completion=tokens.completion_source,
        pricing=config.pricing,
        concurrency=concurrency,
        mean_latency_s=latency,
        time_note=time_note(latency, concurrency, config),
    )


def _figures(
    requests: list[Request],
    store: RunStore,
    claimed: set[str],
    tokens: Tokens,
    window: int | None,
    piloted: frozenset[str] = frozenset(),
    cache: Pricing | None = None,
) -> dict[str, Any]:
    """What one plan of a probe bills: its counts, tokens (and those ``cache``'s rule expects a
    prompt cache to serve), distinct keys and stored verdicts (``piloted`` ones counted as not
    stored)."""
    distinct = {r.key: r for r in requests}
    stored = _usable(store.get_many(list(distinct)))
    known = {key: verdict for key, verdict in stored.items() if key not in piloted}
    new = [r for key, r in distinct.items() if key not in known and key not in claimed]
    counts = tokens.prompt(new)
    sent = [(r, n) for r, n in zip(new, counts, strict=True) if window is None or n <= window]
    return {
        "requests": len(requests),
        "distinct": len(distinct),
        "stored": len(known),
        "calls": len(sent),
        "skipped": len(new) - len(sent),
        "prompt": sum(n for _, n in sent),
        "cached": cached_tokens(tokens.judge, sent, cache),
        "completion": sum(tokens.completion(r) for r, _ in sent),
        "keys": set(distinct),
        "known": set(known),
    }


def _planned(
    chosen: _Selected, judge: Judge, store: RunStore, seed: int
) -> tuple[list[list[Request]], int, bool]:
    """The requests of the probe's stages, how many stages, and whether they are stand-in plans.

    The first stage is exact. A later stage is drawn from the verdicts of the earlier ones: the
    store's where it holds them (one plan, exact); else the stage is planned on each of
    :data:`SPREAD_DRAWS` spread stand-in draws and, last, on the two-ends stand-ins (see
    :func:`stand_in`): one request list per plan.
    """
    probe = chosen.probe
    ctx = probe_context(probe, judge, chosen.rubric, seed=seed)
    first: Plan[Any] = probe.plan(chosen.items, ctx)
    fills = [("spread", draw) for draw in range(SPREAD_DRAWS)] + [("ends", 0)]
    plans = [_stages(probe, first, store, fill, draw) for fill, draw in fills]
    if not any(bound for _, bound in plans):
        return [list(plans[0][0].requests.values())], plans[0][0].stage, False
    return [list(p.requests.values()) for p, _ in plans], max(p.stage for p, _ in plans), True


def _stages(
    probe: Probe, plan: Plan[Any], store: RunStore, fill: str, draw: int = 0
) -> tuple[Plan[Any], bool]:
    """``plan`` refined to its last stage on stored verdicts, stand-ins where none is stored,
    and whether stand-ins drew a later stage (the plan is then one of many it could be)."""
    known: dict[str, Verdict] = {}
    guessed: list[int] = []

    def answer(stage: Plan[Any]) -> Mapping[str, Verdict]:
        requests = unanswered(stage, known)
        stored = _usable(store.get_many([r.key for r in requests]))
        known.update(stored)
        known.update((r.key, stand_in(r, fill, draw)) for r in requests if r.key not in stored)
        if len(stored) < len(requests):
            guessed.append(stage.stage)
        return known

    last = drive(stage_flow(probe, plan), answer)
    return last, any(stage < last.stage for stage in guessed)


def stand_in(request: Request, fill: str = "spread", draw: int = 0) -> Verdict:
    """A verdict for an unjudged request, to plan a later stage on.

    ``spread`` gives each request one of the rubric's labels (a pseudo-random one, fixed by its
    input fields and ``draw``), so that every score level holds items, and an input keeps its
    verdict under every rubric wording and trial: the expectation is that of a judge that does
    not flip. ``ends`` gives each request (by its key) the lowest or the highest, so that wordings
    flip, for the bound. A generation request gets an answer of ``max_new_tokens`` words.
    """
    rubric = request.rubric
    identity: object = request.key if fill == "ends" else sorted(request.field_map.items())
    pick = int(content_hash([identity, fill, draw])[:8], 16)
    if rubric.kind == "pairwise":
        label = ("A", "B") if fill == "ends" else ("A", "tie", "B")
        chosen = label[pick % len(label)]
        return Verdict.scored({"A": 1.0, "tie": 0.5, "B": 0.0}[chosen], label=chosen)
    if rubric.kind in ("scale", "binary") and rubric.labels:
        labels = _ordered_labels(rubric)
        if fill == "ends":
            labels = [labels[0], labels[-1]]
        chosen = labels[pick % len(labels)]
        return Verdict.scored(rubric.value_of(chosen), label=chosen)
    if rubric.kind == "generation":
        # an answer as long as the limit allows, so a stage that judges the answers is planned
        # (and billed) on a text of the largest size
        text = " ".join(["answer"] * rubric.max_new_tokens)
        return Verdict.scored(float(rubric.max_new_tokens), raw_text=text)
    low, high = rubric.score_range or (0.0, 1.0)
    share = (pick % 2) if fill == "ends" else (pick % 1001) / 1000
    return Verdict.scored(low + share * (high - low))


def _ordered_labels(rubric: Rubric) -> list[str]:
    return sorted(rubric.labels, key=rubric.value_of)


def _usable(verdicts: Mapping[str, Verdict]) -> dict[str, Verdict]:
    """The stored verdicts the engine answers from (an error verdict is judged again)."""
    return {k: v for k, v in verdicts.items() if v.status is not VerdictStatus.ERROR}
