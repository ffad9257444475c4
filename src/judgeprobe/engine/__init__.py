"""The engine: dedup, run store cache, concurrency, retries, budgets, progress."""

from judgeprobe.engine.engine import CallStats, Engine, EngineConfig, EngineResult, run_blocking
from judgeprobe.engine.limits import Budget, RateLimiter
from judgeprobe.engine.store import RunStore, open_store

__all__ = [
    "Budget",
    "CallStats",
    "Engine",
    "EngineConfig",
    "EngineResult",
    "RateLimiter",
    "RunStore",
    "open_store",
    "run_blocking",
]
