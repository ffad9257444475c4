"""The engine: the only place that calls a judge.

It deduplicates requests by content key, answers what the run store already holds, skips inputs
that exceed the judge's context window, runs the rest with bounded concurrency, retries transient
failures with exponential backoff and full jitter (honouring Retry-After), respects rate limits and
budgets, and stores every verdict the moment it arrives. The judge's secrets (its API key, a key
in its request body or base URL) are handed to the store, which redacts them from all it writes.
How it may call the judge (concurrency, batch size, context window, whether a call can be timed
out) it reads from the judge's declared :class:`~judgeprobe.core.judge.JudgeCapabilities`, once per
run.
"""

from __future__ import annotations

import asyncio
import random
import re
import threading
import time
from collections.abc import Coroutine, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from judgeprobe.core.judge import Judge, JudgeCapabilities
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict, VerdictStatus, check_verdict
from judgeprobe.engine.executors.base import Executor
from judgeprobe.engine.limits import Budget, BudgetMeter, RateLimiter
from judgeprobe.engine.ordering import warm_order
from judgeprobe.engine.progress import EngineProgress
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import BudgetExhausted, ConfigError, FatalJudgeError, RetryableJudgeError

T = TypeVar("T")


@dataclass(slots=True)
class CallStats:
    """What an engine run did; ``distinct`` = ``cached + called + skipped + pending``."""

    requested: int = 0
    distinct: int = 0
    cached: int = 0
    called: int = 0
    ok: int = 0
    unparseable: int = 0
    failed: int = 0
    skipped: int = 0
    pending: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: CallStats) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(slots=True)
class EngineResult:
    """Verdicts by request key, what it took, and whether every request got a verdict."""

    verdicts: dict[str, Verdict]
    stats: CallStats
    stopped: str | None = None
    """Why the run stopped early (budget), or None when it completed."""

    @property
    def complete(self) -> bool:
        return self.stopped is None


@dataclass(slots=True)
class EngineConfig:
    """How the engine calls a judge. ``concurrency`` None takes the judge's own limit."""

    concurrency: int | None = None
    max_retries: int = 5
    timeout_s: float = 120.0
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    retry_errors: bool = True
    """Re-judge requests whose stored verdict is an error (transient failures of earlier runs)."""
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    budget: Budget = field(default_factory=Budget)
    progress: bool | None = None

    def __post_init__(self) -> None:
        if self.concurrency is not None and self.concurrency < 1:
            raise ConfigError("concurrency must be >= 1")
        if self.max_retries < 0:
            raise ConfigError("max_retries must be >= 0")
        if self.timeout_s <= 0:
            raise ConfigError("timeout_s must be > 0")


class Engine:
    """Judges requests through one judge, caching every verdict in a run store.

    Every call attempt (a retry, each request of a batch) is reserved on the budget before it is
    sent, so the calls made never exceed it; every verdict passes :func:`check_verdict` against its
    request's rubric before it is stored or returned (a label outside the scale, a distribution
    that is none, a ``nan`` in ``meta``: unparseable, with the reason).

    Examples
    --------
    >>> from judgeprobe.judges import CallableJudge
    >>> from judgeprobe.rubrics import builtin_rubric
    >>> judge = CallableJudge(lambda r: 1.0, name="always-1")
    >>> engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))
    >>> req = Request.make(judge.fingerprint, builtin_rubric("harmfulness"),
    ...                    {"prompt": "hi", "response": "hello"})
    >>> result = engine.run_sync([req, req])
    >>> result.stats.called, result.verdicts[req.key].score
    (1, 1.0)
    >>> engine.run_sync([req]).stats.cached
    1
    """

    def __init__(
        self,
        judge: Judge,
        store: RunStore,
        config: EngineConfig | None = None,
        *,
        executor: Executor | None = None,
        limiter: RateLimiter | None = None,
        meter: BudgetMeter | None = None,
    ) -> None:
        self.judge = judge
        self.store = store
        self.config = config or EngineConfig()
        self.executor = executor
        """Answers the missing requests in place of calls to the judge (None: call it here)."""
        self.totals = CallStats()
        self._limiter = limiter or RateLimiter(
            requests_per_minute=self.config.requests_per_minute,
            tokens_per_minute=self.config.tokens_per_minute,
        )
        """Paces the calls (``limiter``: one shared with other engines, e.g. Ray workers')."""
        self._meter = meter or BudgetMeter(self.config.budget)
        """What is spent of the budget (``meter``: one shared with other engines and judges,
        e.g. an audit's and its repaired audits'; its budget then replaces the config's)."""
        self._rng = random.Random()
        store.add_secrets(list(judge.secrets()))
        store.register_judge(judge.fingerprint, judge.describe())

    # -- public -------------------------------------------------------------------------------
    async def run(
        self, requests: Iterable[Request], *, description: str = "judging"
    ) -> EngineResult:
        """Judge every request (once per key); return verdicts for all that got one."""
        requested = list(requests)
        distinct = list({r.key: r for r in requested}.values())
        stats = CallStats(requested=len(requested), distinct=len(distinct))
        for rubric in {r.rubric.hash: r.rubric for r in distinct}.values():
            self.store.register_rubric(rubric)

        by_key = {r.key: r for r in distinct}
        verdicts = {
            key: check_verdict(verdict, by_key[key].rubric)
            for key, verdict in self.store.get_many(list(by_key)).items()
        }
        if self.config.retry_errors:
            verdicts = {k: v for k, v in verdicts.items() if v.status is not VerdictStatus.ERROR}
        stats.cached = len(verdicts)
        missing = [r for r in distinct if r.key not in verdicts]
        capabilities = self.judge.capabilities
        counts = self._count_tokens(missing, capabilities)
        missing = self._skip_oversized(missing, counts, capabilities, verdicts, stats)
        costs = self._token_costs(missing, counts)
        missing = warm_order(missing)  # requests that share a prompt prefix run together

        if self.executor is not None:
            stopped = await self._execute(missing, costs, verdicts, stats)
        else:
            stopped = await self._judge_missing(
                missing, costs, capabilities, verdicts, stats, description
            )
        stats.pending = len(distinct) - len(verdicts)
        self.totals.add(stats)
        return EngineResult(verdicts, stats, stopped)

    def run_sync(
        self, requests: Iterable[Request], *, description: str = "judging"
    ) -> EngineResult:
        """:meth:`run` for code without an event loop (scripts, notebooks)."""
        return run_blocking(self.run(requests, description=description))

    # -- internals ----------------------------------------------------------------------------
    def _count_tokens(
        self, requests: list[Request], capabilities: JudgeCapabilities
    ) -> dict[str, int | None]:
        """The judge's token count of each request's input, where a window or budget needs it."""
        if capabilities.context_window is None and self.config.budget.max_tokens is None:
            return {}
        counts = self.judge.count_tokens_many(requests)
        return {r.key: tokens for r, tokens in zip(requests, counts, strict=True)}

    def _token_costs(
        self, requests: list[Request], counts: dict[str, int | None]
    ) -> dict[str, int]:
        """What each request is charged on the token budget before it is sent (0: no budget).

        The judge's count of its input, or about four characters a token where it cannot count.
        """
        if self.config.budget.max_tokens is None:
            return {}
        return {r.key: counts.get(r.key) or len(r.render()) // 4 for r in requests}

    def _skip_oversized(
        self,
        requests: list[Request],
        counts: dict[str, int | None],
        capabilities: JudgeCapabilities,
        verdicts: dict[str, Verdict],
        stats: CallStats,
    ) -> list[Request]:
        window = capabilities.context_window
        if window is None:
            return requests
        kept = []
        for request in requests:
            tokens = counts.get(request.key)
            if tokens is not None and tokens > window:
                verdict = Verdict.skipped(
                    f"input of {tokens} tokens exceeds the context window of {window}",
                    key=request.key,
                    trial=request.trial,
                    prompt_tokens=tokens,
                    attempts=0,
                )
                verdicts[request.key] = self.store.put(request, verdict)
                stats.skipped += 1
            else:
                kept.append(request)
        return kept

    async def _judge_missing(
        self,
        missing: list[Request],
        costs: dict[str, int],
        capabilities: JudgeCapabilities,
        verdicts: dict[str, Verdict],
        stats: CallStats,
        description: str,
    ) -> str | None:
        if not missing:
            return None
        size = capabilities.batch_size
        if size > 1:
            missing.sort(key=lambda r: len(r.render()))
        batches = [missing[i : i + size] for i in range(0, len(missing), size)]
        queue: asyncio.Queue[list[Request]] = asyncio.Queue()
        for batch in batches:
            queue.put_nowait(batch)
        workers = self.config.concurrency or capabilities.max_concurrency
        workers = max(1, min(workers, len(batches)))
        stopped: list[str] = []
        done_before = len(verdicts)

        with EngineProgress(description, len(missing), enabled=self.config.progress) as progress:

            async def worker() -> None:
                while not queue.empty() and not stopped:
                    batch = queue.get_nowait()
                    results = await self._call(batch, costs, capabilities, stats, stopped)
                    for request, verdict in results:
                        verdicts[request.key] = self.store.put(request, verdict)
                        self._count(verdict, stats)
                    progress.update(
                        done=len(verdicts) - done_before,
                        called=stats.called,
                        cached=stats.cached,
                        failed=stats.failed,
                    )

            await asyncio.gather(*(worker() for _ in range(workers)))
        return stopped[0] if stopped else None

    async def _execute(
        self,
        missing: list[Request],
        costs: dict[str, int],
        verdicts: dict[str, Verdict],
        stats: CallStats,
    ) -> str | None:
        """Hand the missing requests the budget allows to the executor; count its verdicts."""
        if not missing or self.executor is None:
            return None
        estimates = [costs.get(r.key, 0) for r in missing]
        allowed = self._meter.reserve(estimates)
        refusal = None if allowed == len(missing) else self._meter.refusal(estimates[allowed])
        handed = missing[:allowed]
        executed = await self.executor.execute(handed, self.store, self._meter) if handed else None
        if executed is None:
            return refusal
        wanted = {r.key: r for r in handed}
        for key, verdict in executed.verdicts.items():
            if key in wanted:
                verdicts[key] = check_verdict(verdict, wanted[key].rubric)
                self._count(verdicts[key], stats)
        return executed.stopped or refusal

    def _count(self, verdict: Verdict, stats: CallStats) -> None:
        stats.called += 1
        stats.prompt_tokens += verdict.prompt_tokens
        stats.completion_tokens += verdict.completion_tokens
        if verdict.status is VerdictStatus.OK:
            stats.ok += 1
        elif verdict.status is VerdictStatus.UNPARSEABLE:
            stats.unparseable += 1
        else:
            stats.failed += 1

    async def _call(
        self,
        batch: Sequence[Request],
        costs: dict[str, int],
        capabilities: JudgeCapabilities,
        stats: CallStats,
        stopped: list[str],
    ) -> list[tuple[Request, Verdict]]:
        """Judge one batch with retries; every request sent gets a verdict.

        Each attempt is reserved on the budget before it is sent; the requests the budget has no
        room for are not sent (they stay pending, and the reason goes to ``stopped``).
        """
        attempt = 0
        while True:
            attempt += 1
            estimates = [costs.get(r.key, 0) for r in batch]
            allowed = self._meter.reserve(estimates)
            if allowed < len(batch):
                stopped.append(self._meter.refusal(estimates[allowed]))
                batch, estimates = batch[:allowed], estimates[:allowed]
                if not batch:
                    return []
            if attempt > 1:
                stats.retries += 1
            reserved = sum(estimates)
            if self._limiter.active:
                # judges that cannot count tokens are charged about four characters a token
                counts = self.judge.count_tokens_many(batch)
                tokens = sum(
                    tokens or len(r.render()) // 4 for r, tokens in zip(batch, counts, strict=True)
                )
                await self._limiter.acquire(tokens)
            started = time.perf_counter()
            retry_after: float | None = None
            try:
                if len(batch) == 1 and capabilities.batch_size == 1:
                    coroutine: Coroutine[Any, Any, list[Verdict]] = _one(self.judge, batch[0])
                else:
                    coroutine = self.judge.judge_batch(batch)
                # A thread cannot be cancelled: a timeout on an in-process model would only queue
                # a second attempt behind the first, so those run to completion.
                limit = None if capabilities.in_process else self.config.timeout_s
                async with asyncio.timeout(limit):  # no extra task per call
                    results = await coroutine
            except RetryableJudgeError as exc:
                error, retry_after = f"{type(exc).__name__}: {exc}", exc.retry_after
            except TimeoutError:
                error = f"timed out after {self.config.timeout_s:g} s"
            except FatalJudgeError as exc:
                return self._failed(batch, f"{type(exc).__name__}: {exc}", attempt)
            except BudgetExhausted as exc:  # a budget the judge draws on (a repair's inner calls)
                self._meter.release(len(batch), reserved)
                stopped.append(str(exc))
                return []
            except Exception as exc:  # a backend bug must not lose the run
                return self._failed(batch, f"{type(exc).__name__}: {exc}", attempt)
            else:
                latency = (time.perf_counter() - started) / len(batch)
                if len(results) != len(batch):
                    return self._failed(
                        batch, "backend returned a wrong number of verdicts", attempt
                    )
                checked = [
                    check_verdict(
                        _returned(v).but(
                            key=r.key,
                            trial=r.trial,
                            latency_s=v.latency_s or latency if isinstance(v, Verdict) else latency,
                            attempts=attempt,
                        ),
                        r.rubric,
                    )
                    for r, v in zip(batch, results, strict=True)
                ]
                # a verdict that reports no tokens keeps its estimate charged
                spent = sum(v.tokens or e for v, e in zip(checked, estimates, strict=True))
                self._meter.settle(reserved, spent)
                return list(zip(batch, checked, strict=True))
            if attempt > self.config.max_retries:
                return self._failed(batch, f"{error} {GAVE_UP.format(attempt)}", attempt)
            await asyncio.sleep(self._backoff(attempt, retry_after))

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Full-jitter exponential backoff; a server's Retry-After is a floor."""
        ceiling = min(self.config.backoff_max_s, self.config.backoff_base_s * 2 ** (attempt - 1))
        delay = self._rng.uniform(0, ceiling)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.config.backoff_max_s))
        return delay

    @staticmethod
    def _failed(
        batch: Sequence[Request], error: str, attempts: int
    ) -> list[tuple[Request, Verdict]]:
        """Error verdicts for ``batch``; a failed attempt stays charged its estimated tokens."""
        return [
            (r, Verdict.failed(error, key=r.key, trial=r.trial, attempts=attempts)) for r in batch
        ]


GAVE_UP = "(gave up after {} attempts)"
"""How an error verdict ends when every attempt met a transient failure (one that a retry may
cure: a timeout, a 429, a 5xx), unlike a fatal one."""


def gave_up(verdict: Verdict) -> bool:
    """True when ``verdict`` is an error that only transient failures caused (worth a retry)."""
    error = verdict.error or ""
    return (
        verdict.status is VerdictStatus.ERROR
        and re.search(r"\(gave up after \d+ attempts\)$", error) is not None
    )


def _returned(value: object) -> Verdict:
    """What a judge returned, as a verdict: an error verdict naming it when it is no
    :class:`Verdict` (a plugin that returns a dict or a number)."""
    if isinstance(value, Verdict):
        return value
    return Verdict.failed(f"the judge returned a {type(value).__name__}, not a Verdict")


async def _one(judge: Judge, request: Request) -> list[Verdict]:
    return [await judge.judge(request)]


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even inside a running loop (notebooks)."""
    box: dict[str, Any] = {}

    async def main() -> None:
        # The value is passed in a box, not as the main task's result: asyncio.run formats the
        # task's repr (result included) when it restores the SIGINT handler, which costs ~30 us
        # per verdict of a large EngineResult.
        box["value"] = await coroutine

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(main())
        return box["value"]  # type: ignore[no-any-return]

    def target() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
