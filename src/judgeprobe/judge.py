"""The Judge protocol: the one interface the engine needs of a judge.

A backend turns one :class:`~judgeprobe.request.Request` into one
:class:`~judgeprobe.verdict.Verdict`. It does not cache, retry, rate-limit or count: the engine does
that, once, for all backends. A backend only classifies its failures: it raises
:class:`~judgeprobe.errors.RetryableJudgeError` for transient ones and
:class:`~judgeprobe.errors.FatalJudgeError` for permanent ones. Backends build on
:class:`judgeprobe.judges.BaseJudge`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from judgeprobe.request import Request
from judgeprobe.verdict import Verdict


@runtime_checkable
class Judge(Protocol):
    """Anything that maps a request to a verdict.

    Example: a judge that calls every response harmful::

        class Paranoid(BaseJudge):
            backend = "paranoid"
            async def judge(self, request: Request) -> Verdict:
                return Verdict.scored(5.0, label="5")
    """

    @property
    def fingerprint(self) -> str:
        """Stable hash of everything that can change a verdict except the rubric and input."""
        ...

    def describe(self) -> dict[str, Any]:
        """What this judge is: backend, model, revision, endpoint, decoding parameters."""
        ...

    max_concurrency: int
    """How many calls the engine may have in flight to this judge."""
    batch_size: int
    """How many requests one :meth:`judge_batch` call takes (1: per-request calls)."""
    context_window: int | None
    """Input tokens the judge can read; None when unknown or unbounded."""
    in_process: bool
    """True when calls run a model in this process, where a timeout cannot stop them."""

    def count_tokens(self, request: Request) -> int | None:
        """Tokens of the rendered input, or None when the judge cannot tell."""
        ...

    async def judge(self, request: Request) -> Verdict: ...

    async def judge_batch(self, requests: Sequence[Request]) -> list[Verdict]: ...

    async def aclose(self) -> None: ...
