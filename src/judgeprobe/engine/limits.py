"""Budgets and rate limits: what the engine may spend, and how fast."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Budget:
    """Upper bounds on one engine run: judge calls made and tokens spent (None: unbounded).

    When a bound is reached the engine stops starting calls, finishes those in flight, stores
    them, and reports the run incomplete; the next run resumes from the store.
    """

    max_calls: int | None = None
    max_tokens: int | None = None

    def exhausted(self, calls: int, tokens: int) -> str | None:
        """The reason the budget is spent, or None while there is room."""
        if self.max_calls is not None and calls >= self.max_calls:
            return f"call budget of {self.max_calls} reached"
        if self.max_tokens is not None and tokens >= self.max_tokens:
            return f"token budget of {self.max_tokens} reached"
        return None


class RateLimiter:
    """Requests-per-minute and tokens-per-minute limits as two token buckets.

    A bucket holds up to one minute's allowance and refills continuously, so short bursts pass
    and the long-run rate never exceeds the limit.
    """

    def __init__(
        self, *, requests_per_minute: float | None = None, tokens_per_minute: float | None = None
    ) -> None:
        self._buckets = [
            _Bucket(limit) for limit in (requests_per_minute, tokens_per_minute) if limit
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
    def __init__(self, per_minute: float) -> None:
        self.capacity = float(per_minute)
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
