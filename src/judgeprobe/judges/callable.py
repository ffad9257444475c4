"""Any Python function as a judge, sync or async."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.judges.base import BaseJudge
from judgeprobe.judges.parsing import label_score, verdict_from_text

JudgeResult = float | int | str | Verdict | None
JudgeFunction = Callable[[Request], JudgeResult | Awaitable[JudgeResult]]


class CallableJudge(BaseJudge):
    """Wraps ``fn(request) -> score | label | text | Verdict | None`` as a judge.

    A number is a score; a string is parsed against the request's rubric (unparseable when it holds
    no label); None is an unparseable answer; a :class:`Verdict` is taken as is. An exception in
    ``fn`` becomes an error verdict through the engine. ``name`` and ``version`` key the cache:
    change ``version`` whenever the function's behaviour changes. ``generates`` declares that
    ``fn`` also answers ``generation`` rubrics (returning the response as a :class:`Verdict`
    whose ``raw_text`` is the text), so probes that need the judge to write answers can use it.

    Examples
    --------
    >>> judge = CallableJudge(lambda req: len(req.field_map["response"]) % 5 + 1, name="len-mod-5")
    >>> judge.describe()["name"]
    'len-mod-5'
    """

    backend = "callable"

    def __init__(
        self,
        fn: JudgeFunction,
        *,
        name: str | None = None,
        version: str = "1",
        max_concurrency: int = 8,
        context_window: int | None = None,
        params: Mapping[str, Any] | None = None,
        generates: bool = False,
    ) -> None:
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", type(fn).__name__)
        self.version = version
        self.max_concurrency = max_concurrency
        self.context_window = context_window
        self.params = dict(params or {})
        self.generates = generates

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "name": self.name,
            "version": self.version,
            "params": self.params,
        }

    def count_tokens(self, request: Request) -> int | None:
        if self.context_window is None:
            return None
        return len(request.render().split())

    async def judge(self, request: Request) -> Verdict:
        # A plain function never gives the event loop a turn. Take one before each call, so a
        # cancellation (Ctrl-C) stops the audit here, with every finished verdict stored, rather
        # than after the last call.
        await asyncio.sleep(0)
        outcome = self.fn(request)
        result: JudgeResult = await outcome if inspect.isawaitable(outcome) else outcome
        return to_verdict(result, request)


def to_verdict(result: JudgeResult, request: Request) -> Verdict:
    """Interpret a plain function's return value as a verdict."""
    if isinstance(result, Verdict):
        return result
    if result is None:
        return Verdict.unparseable("")
    if isinstance(result, bool):
        result = "true" if result else "false"
    if isinstance(result, int | float):
        return Verdict.scored(float(result), raw_text=str(result))
    verdict = verdict_from_text(str(result), request.rubric)
    if verdict.ok and verdict.label is not None:
        return verdict.but(score=label_score(verdict.label, request.rubric))
    return verdict
