"""The ``ray`` executor: an engine run's missing requests judged by Ray actors.

Each worker is one Ray actor that builds the judge once from its registry spec and options
(:func:`~judgeprobe.judges.registry.built_from`), so a model is loaded once per worker and never
pickled; a judge built in code is shipped to the workers as it is. An actor answers a chunk of
requests with its own in-memory :class:`~judgeprobe.engine.Engine` (timeouts, score checks,
one attempt per request) making at most ``max_concurrency_per_worker`` calls at once (one for an
in-process model, the judge's own limit for an HTTP judge). Retries are the driver's: a request
whose one attempt met a transient failure is sent again after a backoff, each further attempt
reserved first on the engine's budget (a call budget of N means at most N calls at the judge,
however many workers); a resent chunk of a dead worker is reserved again too. An actor judges
one chunk at a time; the driver keeps a second one queued at each actor, so a worker never waits
for the driver.

The driver alone writes the run store: it dispatches chunks to the actors, each of which streams
back every verdict as it is made (a Ray streaming generator), collects them the moment they are
ready (``ray.wait``) and stores each at once, so a killed driver loses nothing finished, and a
killed worker only its calls in flight. The shared rate limit is one token bucket in a Ray
actor of its own (:class:`SharedRate`): every worker engine takes a turn from it before each
call it makes (a retry included), so all workers together start at most
``requests_per_minute`` calls a minute at the judge, with bursts of at most one second's
allowance. A worker that dies mid-run has the requests of its chunks it had not returned sent
to the others (and to a replacement actor, ``max_restarts`` times in a run); a request whose
verdict was stored is never sent again.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from judgeprobe.core.judge import Judge
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.engine.engine import GAVE_UP, Engine, EngineConfig, gave_up
from judgeprobe.engine.executors.base import Executed
from judgeprobe.engine.limits import BudgetMeter, RateLimiter
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import ConfigError, MissingDependencyError
from judgeprobe.judges.registry import build_judge, built_from

_OPTION = "engine.executor_options"
_QUEUED = 2
"""Chunks the driver keeps at each actor: one judged, one waiting."""
_ROUNDS = 4
"""A chunk holds at most this many rounds of a worker's concurrent calls."""
BURST_S = 1.0
"""The shared rate limit lets this many seconds' allowance of calls start at once."""


@dataclass(frozen=True)
class JudgeRecipe:
    """How a worker gets its judge: a registry spec and options, or the judge itself."""

    spec: str | None
    options: dict[str, Any]
    judge: Judge | None = None

    @classmethod
    def of(cls, judge: Judge) -> JudgeRecipe:
        built = built_from(judge)
        if built is None:
            return cls(None, {}, judge)
        return cls(built[0], built[1])

    def build(self) -> Judge:
        if self.judge is not None:
            return self.judge
        assert self.spec is not None
        return build_judge(self.spec, **self.options)


class SharedRate:
    """The Ray actor that holds the rate limit all workers share: one token bucket."""

    def __init__(self, requests_per_minute: float) -> None:
        self.limiter = RateLimiter(requests_per_minute=requests_per_minute, burst_s=BURST_S)

    async def acquire(self) -> None:
        """Return once one more call may start."""
        await self.limiter.acquire()


class RemoteRate(RateLimiter):
    """A worker engine's limiter: each call waits for its turn at the :class:`SharedRate` actor."""

    def __init__(self, actor: Any) -> None:
        super().__init__()
        self.actor = actor

    @property
    def active(self) -> bool:
        return True

    async def acquire(self, tokens: int = 0) -> None:
        await self.actor.acquire.remote()


class _RelayStore(RunStore):
    """A worker engine's in-memory store that also hands each verdict it stores to ``sink``."""

    def __init__(self) -> None:
        super().__init__(":memory:")
        self.sink: asyncio.Queue[tuple[str, Verdict]] | None = None

    def put(self, request: Request, verdict: Verdict) -> Verdict:
        stored = super().put(request, verdict)
        if self.sink is not None:
            self.sink.put_nowait((request.key, stored))
        return stored


class JudgeWorker:
    """One Ray actor's state: its judge, built once, and an engine over an in-memory store.

    ``rate``: the :class:`SharedRate` actor its engine takes each call's turn from (None: no
    limit).
    """

    def __init__(self, recipe: JudgeRecipe, config: EngineConfig, rate: Any = None) -> None:
        self.judge = recipe.build()
        limiter = None if rate is None else RemoteRate(rate)
        self.store = _RelayStore()
        self.engine = Engine(self.judge, self.store, config, limiter=limiter)

    async def ready(self) -> bool:
        """True once the judge is built (a failed build surfaces here)."""
        return True

    async def judge_chunk(
        self, requests: list[Request]
    ) -> AsyncIterator[list[tuple[str, Verdict]]]:
        """The verdict of each request, by key, streamed as they are made: each item holds the
        verdicts stored since the one before (every request sent gets one). A driver that loses
        this worker has lost only the calls in flight, not the chunk's finished verdicts."""
        wanted = {r.key for r in requests}
        sink: asyncio.Queue[tuple[str, Verdict]] = asyncio.Queue()
        self.store.sink = sink
        run = asyncio.ensure_future(self.engine.run(requests, description="ray worker"))
        sent: set[str] = set()
        try:
            while not run.done() or not sink.empty():
                if sink.empty():
                    waiter = asyncio.ensure_future(sink.get())
                    await asyncio.wait({waiter, run}, return_when=asyncio.FIRST_COMPLETED)
                    if not waiter.done():
                        waiter.cancel()
                        continue
                    sink.put_nowait(waiter.result())
                ready = [sink.get_nowait() for _ in range(sink.qsize())]
                fresh = [(k, v) for k, v in ready if k in wanted and k not in sent]
                sent.update(k for k, _ in fresh)
                if fresh:
                    yield fresh
            result = run.result()
            rest = [
                (r.key, result.verdicts[r.key])
                for r in requests
                if r.key not in sent and r.key in result.verdicts
            ]
            if rest:  # answered from the worker's store (a chunk resent to it) or cached
                yield rest
        finally:
            self.store.sink = None
            if not run.done():
                run.cancel()


class RayExecutor:
    """Answers requests on Ray workers; the driver stores every verdict.

    Parameters
    ----------
    judge : Judge
        The audit's judge; workers build their own copy from its spec.
    address : str or None
        The Ray cluster to join when Ray is not initialised yet: ``"auto"`` (the cluster of this
        machine), ``"ray://HOST:10001"`` (Ray Client), or None to start a local Ray instance.
    workers : int
        How many actors judge at once.
    max_concurrency_per_worker : int or None
        Judge calls in flight per actor (None: 1 for an in-process model, else the judge's own
        limit).
    requests_per_minute : float or None
        The rate limit shared by all workers: calls started at the judge a minute, all workers
        together (bursts of at most one second's allowance).
    num_cpus : float
        CPUs Ray reserves for each actor.
    max_restarts : int
        Replacement actors started in one run for workers that died.
    max_retries, timeout_s : int, float
        Retries of a transient failure (made from the driver, each on the budget) and each
        worker engine's call timeout.
    """

    name = "ray"

    def __init__(
        self,
        judge: Judge,
        *,
        address: str | None = None,
        workers: int = 2,
        max_concurrency_per_worker: int | None = None,
        requests_per_minute: float | None = None,
        num_cpus: float = 1.0,
        max_restarts: int = 3,
        max_retries: int = 5,
        timeout_s: float = 120.0,
    ) -> None:
        _check_int("workers", workers, 1)
        if max_concurrency_per_worker is not None:
            _check_int("max_concurrency_per_worker", max_concurrency_per_worker, 1)
        _check_int("max_restarts", max_restarts, 0)
        _check_int("max_retries", max_retries, 0)
        _check_number("num_cpus", num_cpus, minimum=0.0)
        _check_number("timeout_s", timeout_s, minimum=0.0, exclusive=True)
        if requests_per_minute is not None:
            _check_number("requests_per_minute", requests_per_minute, minimum=0.0, exclusive=True)
        if address is not None and not isinstance(address, str):
            raise ConfigError(f"{_OPTION}.address: must be 'auto' or ray://HOST:PORT")
        try:
            import ray  # noqa: F401
        except ImportError as exc:
            raise MissingDependencyError("ray", "ray") from exc
        capabilities = judge.capabilities
        self.judge = judge
        self.address = address
        self.workers = workers
        self.concurrency = max_concurrency_per_worker or (
            1 if capabilities.in_process else capabilities.max_concurrency
        )
        self.requests_per_minute = requests_per_minute
        self.num_cpus = float(num_cpus)
        self.max_restarts = max_restarts
        self.max_retries = max_retries
        self.worker_config = EngineConfig(
            concurrency=self.concurrency,
            max_retries=0,  # the driver retries, so that every attempt is on the budget
            timeout_s=timeout_s,
            progress=False,
        )
        self._rng = random.Random(0)
        self.recipe = JudgeRecipe.of(judge)
        self._actor_class: Any = None
        self._rate: Any = None
        """The :class:`SharedRate` actor, started with the first workers when there is a limit."""
        self._numbers = itertools.count()
        self.actors: dict[int, Any] = {}
        """The live worker actors, by number; started by the first run, kept for the next."""
        self.dispatched: list[str] = []
        """Every request key sent to a worker, in order (a resent one appears again)."""
        self.lost: list[int] = []
        """For each worker that died, how many requests of its chunks were sent again."""

    async def execute(
        self, requests: Sequence[Request], store: RunStore, meter: BudgetMeter | None = None
    ) -> Executed:
        """Judge ``requests`` on the workers, storing each verdict as its chunk returns.

        The engine reserved one call per request on ``meter``; each retry and each resent
        request is reserved on it before it is sent (None: no budget).
        """
        if not requests:
            return Executed()
        import ray

        if not ray.is_initialized():
            try:
                ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigError(
                    f"{_OPTION}.address: cannot join the Ray cluster at {self.address!r}: {exc}"
                ) from exc
        by_key = {r.key: r for r in requests}
        queue = deque(self._chunks(list(by_key.values())))
        verdicts: dict[str, Verdict] = {}
        inflight: dict[Any, _Chunk] = {}
        tried: dict[str, int] = {}
        waiting: list[tuple[float, Request]] = []  # retries, with the time they are due
        refused: str | None = None
        restarts = 0
        load = dict.fromkeys(self.actors, 0)
        await self._start(self.workers - len(self.actors), load)
        while queue or inflight or waiting:
            due = [r for at, r in waiting if at <= time.monotonic()]
            if due:
                waiting = [(at, r) for at, r in waiting if at > time.monotonic()]
                queue.extend(self._chunks(due))
            while queue and self.actors:
                number = min(self.actors, key=lambda n: load[n])
                if load[number] >= _QUEUED:
                    break
                chunk = queue.popleft()
                stream = self.actors[number].judge_chunk.remote(chunk)
                self.dispatched.extend(r.key for r in chunk)
                inflight[stream], load[number] = _Chunk(number, chunk), load[number] + 1
            next_due = min((at for at, _ in waiting), default=None)
            if not inflight:
                if next_due is None or not self.actors:
                    break  # every worker died and no more may be started
                await asyncio.sleep(max(0.0, next_due - time.monotonic()))
                continue
            timeout = None if next_due is None else max(0.0, next_due - time.monotonic())
            await asyncio.to_thread(ray.wait, list(inflight), num_returns=1, timeout=timeout)
            ready: list[Any] = ray.wait(list(inflight), num_returns=len(inflight), timeout=0)[0]
            for stream in ready:  # each a generator of the verdicts of one chunk
                sent = inflight[stream]
                try:
                    results: list[tuple[str, Verdict]] = ray.get(next(stream))
                except StopIteration:  # every verdict of the chunk is in
                    del inflight[stream]
                    load[sent.worker] -= 1
                    continue
                except ray.exceptions.RayActorError:
                    del inflight[stream]
                    load[sent.worker] -= 1
                    # what it had not returned is sent again, to a live worker: the dead one
                    # may have called the judge for the requests in flight
                    lost = [r for r in sent.requests if r.key not in sent.returned]
                    allowed = len(lost) if meter is None else meter.reserve([0] * len(lost))
                    if allowed < len(lost):
                        refused = meter.refusal(0) if meter is not None else None
                    if allowed:
                        queue.appendleft(lost[:allowed])
                    self.lost.append(len(lost))
                    if (
                        self.actors.pop(sent.worker, None) is not None
                        and restarts < self.max_restarts
                    ):
                        restarts += 1
                        await self._start(1, load)
                    continue
                for key, verdict in results:
                    sent.returned.add(key)
                    tried[key] = tried.get(key, 0) + 1
                    if gave_up(verdict) and tried[key] <= self.max_retries:
                        if meter is None or meter.reserve([0]):
                            waiting.append((self._due(tried[key]), by_key[key]))
                        else:
                            refused = meter.refusal(0)  # left pending, as the engine leaves it
                        continue
                    verdicts[key] = store.put(by_key[key], _attempted(verdict, tried[key]))
        left = len(by_key) - len(verdicts)
        stopped = None
        if left and refused is not None:
            stopped = refused
        elif left:
            stopped = (
                f"ray: every worker died ({restarts} replaced); {left} of {len(by_key)} "
                "requests left pending; run again to judge them"
            )
        return Executed(verdicts, stopped)

    def shutdown(self) -> None:
        """Stop the worker actors now (they also stop once this executor is garbage)."""
        if self.actors:
            import ray

            for actor in self.actors.values():
                ray.kill(actor)
            self.actors.clear()
        if self._rate is not None:
            import ray

            ray.kill(self._rate)
            self._rate = None

    def _due(self, attempt: int) -> float:
        """When the retry after ``attempt`` failed attempts is due: full-jitter exponential
        backoff, as the engine's."""
        config = self.worker_config
        ceiling = min(config.backoff_max_s, config.backoff_base_s * 2 ** (attempt - 1))
        return time.monotonic() + self._rng.uniform(0, ceiling)

    def _chunks(self, requests: list[Request]) -> list[list[Request]]:
        """Chunks of a few rounds of a worker's calls, small enough to keep every worker busy."""
        rounds = _ROUNDS * self.concurrency * self.judge.capabilities.batch_size
        size = max(1, min(rounds, math.ceil(len(requests) / (_QUEUED * self.workers))))
        return [requests[i : i + size] for i in range(0, len(requests), size)]

    async def _start(self, count: int, load: dict[int, int]) -> None:
        """Start ``count`` worker actors and wait until each has built its judge (ConfigError
        when one cannot); they serve this executor's later runs too."""
        import ray

        if count <= 0:
            return
        if self._actor_class is None:
            self._actor_class = ray.remote(JudgeWorker)
        if self._rate is None and self.requests_per_minute is not None:
            self._rate = ray.remote(SharedRate).options(num_cpus=0).remote(self.requests_per_minute)
        started = {
            next(self._numbers): self._actor_class.options(
                max_concurrency=1, num_cpus=self.num_cpus
            ).remote(self.recipe, self.worker_config, self._rate)
            for _ in range(count)
        }
        try:
            await asyncio.to_thread(ray.get, [actor.ready.remote() for actor in started.values()])
        except ray.exceptions.RayActorError as exc:
            raise ConfigError(
                f"engine.executor ray: a worker could not build the judge: {exc}"
            ) from exc
        self.actors.update(started)
        load.update(dict.fromkeys(started, 0))


@dataclass
class _Chunk:
    """A chunk sent to worker ``worker`` and the keys whose verdicts it has returned so far."""

    worker: int
    requests: list[Request]
    returned: set[str] = field(default_factory=set)


def _attempted(verdict: Verdict, attempts: int) -> Verdict:
    """``verdict`` of a worker's one attempt, counting the driver's ``attempts`` in all."""
    if attempts == 1:
        return verdict
    error = verdict.error
    if gave_up(verdict) and error is not None:
        error = error[: error.rindex(GAVE_UP.split("{", 1)[0])] + GAVE_UP.format(attempts)
    return verdict.but(attempts=attempts, error=error)


def _check_int(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{_OPTION}.{name}: must be an integer >= {minimum}, got {value!r}")


def _check_number(name: str, value: object, *, minimum: float, exclusive: bool = False) -> None:
    bad = isinstance(value, bool) or not isinstance(value, int | float)
    if bad or (value <= minimum if exclusive else value < minimum):  # type: ignore[operator]
        sign = ">" if exclusive else ">="
        raise ConfigError(f"{_OPTION}.{name}: must be a number {sign} {minimum:g}, got {value!r}")
