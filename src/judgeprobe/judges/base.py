"""Backend defaults for the :class:`~judgeprobe.core.judge.Judge` protocol every backend implements.

A backend turns one :class:`~judgeprobe.core.request.Request` into one
:class:`~judgeprobe.core.verdict.Verdict`. It does not cache, retry, rate-limit or count: the engine
does
that, once, for all backends. A backend only classifies its failures: it raises
:class:`~judgeprobe.errors.RetryableJudgeError` for transient ones and
:class:`~judgeprobe.errors.FatalJudgeError` for permanent ones.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from judgeprobe._util.hashing import content_hash
from judgeprobe.core.judge import JudgeCapabilities
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict

T = TypeVar("T")


class BaseJudge:
    """Backend defaults: fingerprint from :meth:`describe`, per-request batching, no-op close.

    A backend declares its capabilities by setting the attributes below (on the class, or on the
    instance when they depend on its options); :attr:`capabilities` hands them to the engine.
    """

    backend: str = "base"
    max_concurrency: int = 1
    batch_size: int = 1
    context_window: int | None = None
    in_process: bool = False
    """True for models run in this process (see :class:`InProcessJudge`): no call timeout."""
    generates: bool = False
    """True for backends that answer ``generation`` rubrics (a language model writes one)."""

    @property
    def capabilities(self) -> JudgeCapabilities:
        """The declared :attr:`max_concurrency`, :attr:`batch_size`, :attr:`context_window`,
        :attr:`in_process` and :attr:`generates`, checked (a value out of range is a
        ``ConfigError``)."""
        return JudgeCapabilities(
            max_concurrency=self.max_concurrency,
            batch_size=self.batch_size,
            context_window=self.context_window,
            in_process=self.in_process,
            generates=self.generates,
        )

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend}

    def secrets(self) -> list[str]:
        """Values this judge is configured with that must never be written (API keys...).

        The engine hands them to the run store, which redacts them from every verdict, error
        and description it writes. None by default.
        """
        return []

    @property
    def fingerprint(self) -> str:
        return content_hash(self.describe())

    def count_tokens(self, request: Request) -> int | None:
        """Tokens of ``request``'s rendered input; None (the default) when the judge cannot tell."""
        return None

    def count_tokens_many(self, requests: Sequence[Request]) -> list[int | None]:
        """:meth:`count_tokens` of each request; a judge that counts many at once overrides it."""
        return [self.count_tokens(request) for request in requests]

    async def judge(self, request: Request) -> Verdict:
        raise NotImplementedError

    async def judge_batch(self, requests: Sequence[Request]) -> list[Verdict]:
        return list(await asyncio.gather(*(self.judge(r) for r in requests)))

    async def aclose(self) -> None:
        return None

    def __repr__(self) -> str:
        described = ", ".join(f"{k}={v!r}" for k, v in self.describe().items() if k != "backend")
        return f"{type(self).__name__}({described})"


class InProcessJudge(BaseJudge):
    """A judge whose model runs in this process, always on the same thread of its own.

    Native runtimes keep a pool of worker threads per calling thread (OpenMP in torch and
    llama.cpp). Calls made from whichever thread ``asyncio.to_thread`` picks build several pools
    that compete for the same cores: on a two-core machine, a plain torch loop fell from 30 to 19
    inputs/s once a second thread had run the model too. One model thread per judge avoids that
    and keeps the event loop free. The engine sets an in-process judge no call timeout: a running
    thread cannot be cancelled.
    """

    in_process = True
    _model_thread: ThreadPoolExecutor | None = None

    async def run_in_model_thread(self, fn: Callable[..., T], /, *args: Any) -> T:
        """Run ``fn(*args)`` on the judge's model thread and await its result."""
        if self._model_thread is None:
            name = f"judgeprobe-{self.backend}"
            self._model_thread = ThreadPoolExecutor(1, thread_name_prefix=name)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._model_thread, functools.partial(fn, *args))

    async def aclose(self) -> None:
        """Stop the model thread (a later call starts a new one)."""
        thread, self._model_thread = self._model_thread, None
        if thread is not None:
            thread.shutdown(wait=False)
