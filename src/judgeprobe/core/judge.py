"""The Judge protocol: the one interface the engine needs of a judge.

A backend turns one :class:`~judgeprobe.core.request.Request` into one
:class:`~judgeprobe.core.verdict.Verdict`. It does not cache, retry, rate-limit or count: the engine
does
that, once, for all backends. A backend only classifies its failures: it raises
:class:`~judgeprobe.errors.RetryableJudgeError` for transient ones and
:class:`~judgeprobe.errors.FatalJudgeError` for permanent ones. Backends build on
:class:`judgeprobe.judges.BaseJudge`, which supplies a default for every member but
:meth:`Judge.judge`.

What the engine may do with a judge (how many calls at once, how many requests a call, how long
an input, whether a call can be timed out) is declared in its :class:`JudgeCapabilities`, never
guessed from which attributes it happens to have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.errors import ConfigError


@dataclass(frozen=True, slots=True)
class JudgeCapabilities:
    """What a judge declares to the engine about how it may be called.

    Examples
    --------
    >>> JudgeCapabilities(max_concurrency=16, context_window=8192)
    JudgeCapabilities(max_concurrency=16, batch_size=1, context_window=8192, in_process=False, \
generates=False)
    >>> JudgeCapabilities(batch_size=0)
    Traceback (most recent call last):
    ...
    judgeprobe.errors.ConfigError: judge capability batch_size must be an integer >= 1, got 0
    """

    max_concurrency: int = 1
    """How many calls the engine may have in flight to this judge."""
    batch_size: int = 1
    """How many requests one :meth:`Judge.judge_batch` call takes (1: per-request calls)."""
    context_window: int | None = None
    """Input tokens the judge can read; None when unknown or unbounded."""
    in_process: bool = False
    """True when calls run a model in this process, where a timeout cannot stop them."""
    generates: bool = False
    """True when the judge can also write a response to a ``generation`` rubric (its text is the
    verdict's ``raw_text``), as a language model can and a classifier cannot."""

    def __post_init__(self) -> None:
        for name in ("max_concurrency", "batch_size", "context_window"):
            value = getattr(self, name)
            if value is None and name == "context_window":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"judge capability {name} must be an integer >= 1, got {value!r}")
        for flag in ("in_process", "generates"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigError(
                    f"judge capability {flag} must be a bool, got {getattr(self, flag)!r}"
                )


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

    @property
    def capabilities(self) -> JudgeCapabilities:
        """How the engine may call this judge (concurrency, batching, window, timeouts)."""
        ...

    def secrets(self) -> Sequence[str]:
        """Values this judge is configured with that must never be written (API keys...)."""
        ...

    def count_tokens_many(self, requests: Sequence[Request]) -> list[int | None]:
        """Tokens of each request's rendered input; None where the judge cannot tell."""
        ...

    async def judge(self, request: Request) -> Verdict: ...

    async def judge_batch(self, requests: Sequence[Request]) -> list[Verdict]: ...

    async def aclose(self) -> None: ...


class InTheNameOf:
    """Base of a judge that stands in ``inner``'s name: the same fingerprint, description,
    capabilities, secrets and token counts, so its requests have ``inner``'s keys and find the
    verdicts stored for it. Subclasses say how a request is answered (:meth:`judge`,
    :meth:`judge_batch`); closing closes ``inner``."""

    def __init__(self, inner: Judge) -> None:
        self.inner = inner

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    @property
    def capabilities(self) -> JudgeCapabilities:
        return self.inner.capabilities

    def secrets(self) -> Sequence[str]:
        return self.inner.secrets()

    def count_tokens_many(self, requests: Sequence[Request]) -> list[int | None]:
        return self.inner.count_tokens_many(requests)

    async def aclose(self) -> None:
        await self.inner.aclose()
