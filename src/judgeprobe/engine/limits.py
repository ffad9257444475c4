"""Budgets and rate limits: what the engine may spend, and how fast."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

from judgeprobe.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Budget:
    """Upper bounds on what an engine may spend: judge calls and tokens (None: unbounded).

    A call is one request sent to the judge once: a retry is another call, and a batch of n
    requests is n calls. The engine reserves each call before it is sent, so the calls made never
    exceed ``max_calls``; calls and batches that would pass it are not sent (a batch is cut to
    what is left). ``max_tokens`` works alike on the input tokens the judge counts before a call
    (about four characters a token where it cannot count); the tokens a call reports, completion
    included, replace that estimate once it returns. When a bound is reached the engine sends no
    more, stores what was judged and reports the run incomplete; the next run resumes from the
    store. Both bounds must be at least 1, as in an audit config.
    """

    max_calls: int | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_calls", "max_tokens"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or value < 1):
                raise ConfigError(
                    f"{name} must be an integer >= 1 (or None: no bound), not {value!r}"
                )

    def exhausted(self, calls: int, tokens: int) -> str | None:
        """The reason the budget is spent, or None while there is room."""
        if self.max_calls is not None and calls >= self.max_calls:
            return f"call budget of {self.max_calls} reached"
        if self.max_tokens is not None and tokens >= self.max_tokens:
            return f"token budget of {self.max_tokens} reached"
        return None


class BudgetMeter:
    """What an engine has spent of its :class:`Budget`, reserved before each call is sent.

    Reserving is synchronous, so concurrent workers of one event loop can never together send
    more than the budget allows.
    """

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.calls = 0
        self.tokens = 0

    def reserve(self, tokens: Sequence[int]) -> int:
        """Reserve the leading requests of a batch (``tokens``: each one's estimate) that fit.

        Returns how many may be sent now, from 0 (none: the budget is spent) to ``len(tokens)``.
        """
        allowed = len(tokens)
        if self.budget.max_calls is not None:
            allowed = min(allowed, max(0, self.budget.max_calls - self.calls))
        if self.budget.max_tokens is not None:
            room, fits = self.budget.max_tokens - self.tokens, 0
            for estimate in tokens[:allowed]:
                if estimate > room:
                    break
                room -= estimate
                fits += 1
            allowed = fits
        self.calls += allowed
        self.tokens += sum(tokens[:allowed])
        return allowed

    def release(self, calls: int, tokens: int) -> None:
        """Give back a reservation of ``calls`` calls and ``tokens`` tokens that was not sent."""
        self.calls -= calls
        self.tokens -= tokens

    def settle(self, reserved: int, spent: int) -> None:
        """Replace a reservation of ``reserved`` tokens by the ``spent`` the call reported."""
        self.tokens += spent - reserved

    def refusal(self, tokens: int) -> str:
        """Why a call estimated at ``tokens`` tokens cannot be sent."""
        max_calls, max_tokens = self.budget.max_calls, self.budget.max_tokens
        if max_calls is not None and self.calls >= max_calls:
            return f"call budget of {max_calls} reached"
        return (
            f"token budget of {max_tokens} reached ({self.tokens} spent, the next call needs "
            f"about {tokens})"
        )


class RateLimiter:
    """Requests-per-minute and tokens-per-minute limits as two token buckets.

    A bucket holds up to ``burst_s`` seconds' allowance (one minute's unless told; at least one
    request) and refills continuously, so short bursts pass and the long-run rate never exceeds
    the limit: over any t seconds at most ``(burst_s + t) / 60`` times the per-minute limit start.
    """

    def __init__(
        self,
        *,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        burst_s: float = 60.0,
    ) -> None:
        self._buckets = [
            _Bucket(limit, burst_s) for limit in (requests_per_minute, tokens_per_minute) if limit
        ]
        self._has_rpm = requests_per_minute is not None and requests_per_minute > 0
        self._lock = asyncio.Lock()

    @property
    def active(self) -> bool:
        return bool(self._buckets)

    async def acquire(self, tokens: int = 0) -> None:
        """Wait until one request of ``tokens`` tokens may start."""
        if not self._buckets:
            return
        costs = [1.0, float(tokens)] if self._has_rpm else [float(tokens)]
        async with self._lock:
            for bucket, cost in zip(self._buckets, costs, strict=False):
                await bucket.take(cost)


class _Bucket:
    def __init__(self, per_minute: float, burst_s: float) -> None:
        self.capacity = max(1.0, per_minute * burst_s / 60.0)
        self.rate = per_minute / 60.0
        self.level = self.capacity
        self.stamp = time.monotonic()

    async def take(self, cost: float) -> None:
        cost = min(cost, self.capacity)
        while True:
            now = time.monotonic()
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.level >= cost:
                self.level -= cost
                return
            await asyncio.sleep((cost - self.level) / self.rate)
