"""What the calls of an audit cost: prompt and completion tokens, the share a prompt cache
serves, the time they take and their price (the bill's figures per call, :mod:`judgeprobe.audit.
billing`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from judgeprobe.audit.config import AuditConfig
from judgeprobe.core.judge import Judge
from judgeprobe.core.pricing import Pricing
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.engine.store import RunStore

CHARS_PER_TOKEN = 4
"""The estimate of a prompt's tokens where the judge has no tokenizer (as the engine's budget)."""


class Tokens:
    """Prompt tokens (the judge's count, or an estimate) and expected completion tokens."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.counted: bool | None = None
        self.completion_source = completion_source(judge)
        self._known: dict[str, int] = {}

    def prompt(self, requests: Sequence[Request]) -> list[int]:
        """Each request's prompt tokens (counted once per key: the plans share most requests)."""
        todo = list({r.key: r for r in requests if r.key not in self._known}.values())
        if todo:
            counts = _prompt_counts(self.judge, todo)
            counted = all(n is not None for n in counts)
            self.counted = counted if self.counted is None else self.counted and counted
            for r, n in zip(todo, counts, strict=True):
                self._known[r.key] = n if n is not None else estimate_tokens(self.judge, r)
        return [self._known[r.key] for r in requests]

    def completion(self, request: Request) -> int:
        return completion_tokens(self.judge, request)


def _prompt_counts(judge: Judge, requests: Sequence[Request]) -> list[int | None]:
    """The judge's count of each request's prompt tokens, None where it cannot count.

    The embedded llama judge's :meth:`count_tokens` adds the tokens it will generate (it checks
    the context window with it); its prompt alone is what a verdict reports.
    """
    from judgeprobe.judges.llama import LlamaJudge

    if isinstance(judge, LlamaJudge):
        return [len(judge.tokens(r)) for r in requests]
    return judge.count_tokens_many(requests)


def estimate_tokens(judge: Judge, request: Request) -> int:
    """About four characters a token, of the text the judge is sent."""
    return len(prompt_text(judge, request)) // CHARS_PER_TOKEN


def completion_tokens(judge: Judge, request: Request) -> int:
    """The completion tokens a call is expected to take (at most, for a generation)."""
    from judgeprobe.judges.llama import LlamaJudge
    from judgeprobe.judges.openai_compat import OpenAIJudge

    generation = request.rubric.kind == "generation"
    if isinstance(judge, LlamaJudge):
        return request.rubric.max_new_tokens if generation else 1
    if isinstance(judge, OpenAIJudge):
        return request.rubric.max_new_tokens if generation else judge.max_tokens
    return 0


def completion_source(judge: Judge) -> str:
    from judgeprobe.judges.llama import LlamaJudge
    from judgeprobe.judges.openai_compat import OpenAIJudge

    if isinstance(judge, LlamaJudge):
        return "expected: 1 per label verdict (read from next-token probabilities)"
    if isinstance(judge, OpenAIJudge):
        return f"at most: max_tokens ({judge.max_tokens}) per call"
    return "none: the judge generates no text"


def mean_latency(store: RunStore, fingerprint: str) -> float | None:
    """Mean seconds per call of the judge ``fingerprint`` over its stored, answered verdicts."""
    latencies = [
        verdict.latency_s
        for record, verdict in store.iter_verdicts()
        if record["judge"] == fingerprint
        and verdict.status is not VerdictStatus.SKIPPED
        and verdict.attempts > 0
        and verdict.latency_s > 0
    ]
    return sum(latencies) / len(latencies) if latencies else None


def seconds_for(
    calls: int, prompt_tokens: int, latency: float | None, concurrency: int, config: AuditConfig
) -> float | None:
    """Seconds for ``calls``: at the judge's mean latency over ``concurrency`` workers, no
    faster than the rate limits allow (a minute's allowance may go at once). None: unknown."""
    if calls == 0:
        return 0.0
    floors = []
    rpm, tpm = config.engine.requests_per_minute, config.engine.tokens_per_minute
    if rpm:
        floors.append(max(0.0, (calls - rpm) / rpm * 60))
    if tpm:
        floors.append(max(0.0, (prompt_tokens - tpm) / tpm * 60))
    if latency is None:
        return None
    return max([calls * latency / concurrency, *floors])


def time_note(latency: float | None, concurrency: int, config: AuditConfig) -> str:
    limits = [
        f"{value:g} {unit} a minute"
        for value, unit in (
            (config.engine.requests_per_minute, "requests"),
            (config.engine.tokens_per_minute, "tokens"),
        )
        if value
    ]
    limited = f", within {' and '.join(limits)}" if limits else ""
    if latency is None:
        return (
            f"unknown: the run store holds no call of this judge to time (concurrency "
            f"{concurrency}{limited})"
        )
    return f"{latency:.3g} s a call (the store's mean), {concurrency} at once{limited}"


def cached_tokens(judge: Judge, sent: Sequence[tuple[Request, int]], cache: Pricing | None) -> int:
    """The prompt tokens of ``sent`` a provider's cache is expected to serve under ``cache``'s
    rule: the engine sends in :func:`~judgeprobe.engine.ordering.warm_order`, so each call
    shares with the one before it the longest prefix any earlier call offers (the prompts sorted
    by their text); that prefix's share of the call's characters, in tokens, is what the cache
    holds."""
    if cache is None or not sent:
        return 0
    texts = sorted((prompt_text(judge, request), n) for request, n in sent)
    total, before = 0, ""
    for text, n in texts:
        shared = len(os.path.commonprefix([before, text]))  # noqa: RUF071 (characters are meant)
        total += cache.cached(n * shared // max(1, len(text)))
        before = text
    return total


def prompt_text(judge: Judge, request: Request) -> str:
    """The text the judge reads for ``request``, system text first (as its cache sees it)."""
    from judgeprobe.judges.openai_compat import OpenAIJudge, messages

    if isinstance(judge, OpenAIJudge):
        return "".join(m["content"] for m in messages(request))
    return (request.rubric.system or "") + request.render()


def cost_of(config: AuditConfig, prompt: int, completion: int, cached: int) -> float | None:
    """The price of a row under the config's ``pricing`` (None without one), cached tokens at
    the cached price and through the Batch API at its factor when the executor is
    ``openai-batch``."""
    pricing = config.pricing
    if pricing is None:
        return None
    batch = config.engine.executor == "openai-batch"
    return pricing.cost(prompt, completion, cached_tokens=cached, batch=batch)
