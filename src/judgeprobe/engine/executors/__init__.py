"""The executors an audit can run its judge calls with (``engine.executor`` in a config).

``local`` (the default): the engine calls the judge itself. ``openai-batch``: every engine run's
missing requests go to the judge's provider as one OpenAI Batch
(:class:`~judgeprobe.engine.executors.openai_batch.OpenAIBatchExecutor`);
``engine.executor_options`` are its
keyword arguments (``poll_s``, ``max_poll_s``, ``completion_window``, ``max_errors``). ``ray``:
the requests go to Ray workers (:class:`~judgeprobe.engine.executors.ray.RayExecutor`, the ``ray``
extra); its options are ``address``, ``workers``, ``max_concurrency_per_worker`` and more. Another
executor is one more entry in :data:`EXECUTORS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from judgeprobe.core.judge import Judge
from judgeprobe.engine.executors.base import Executor
from judgeprobe.errors import ConfigError


def _openai_batch(judge: Judge, options: Mapping[str, Any]) -> Executor:
    from judgeprobe.engine.executors.openai_batch import OpenAIBatchExecutor

    return OpenAIBatchExecutor(judge, **options)


def _ray(judge: Judge, options: Mapping[str, Any]) -> Executor:
    from judgeprobe.engine.executors.ray import RayExecutor

    return RayExecutor(judge, **options)


EXECUTORS: dict[str, Callable[[Judge, Mapping[str, Any]], Executor] | None] = {
    "local": None,
    "openai-batch": _openai_batch,
    "ray": _ray,
}
"""Executor name -> how to build it for a judge and its options (None: the engine's own calls)."""


def build_executor(name: str, judge: Judge, options: Mapping[str, Any]) -> Executor | None:
    """The executor ``name`` for ``judge`` (None for ``local``); ConfigError naming the option
    on an unknown name or option."""
    if name not in EXECUTORS:
        raise ConfigError(
            f"engine.executor: unknown executor {name!r}; available: {', '.join(EXECUTORS)}"
        )
    factory = EXECUTORS[name]
    if factory is None:
        if options:
            raise ConfigError(f"engine.executor_options: the {name} executor takes no options")
        return None
    try:
        return factory(judge, options)
    except TypeError as exc:
        raise ConfigError(f"engine.executor_options: {exc}") from exc
