"""A judge behind any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp, ...).

The backend only speaks HTTP and classifies failures: 429, 408, 409, 5xx, connection errors,
timeouts and bodies that are not a chat completion raise
:class:`~judgeprobe.errors.RetryableJudgeError` (with the server's ``Retry-After``); other 4xx raise
:class:`~judgeprobe.errors.FatalJudgeError`. Retries, backoff, rate limits, budgets and caching are
the engine's. The API key is read from the environment at call time and sent only as a header: it
is never stored, described, fingerprinted, logged or put into an error message. Nor is any other
credential the judge is configured with: the user and password of ``base_url``, a secret query
parameter of it (``?api_key=``), or a value of ``extra_body`` under a secret-looking name
(``api_key``, ``Authorization``...). :meth:`OpenAIJudge.describe` shows them as ``[redacted]``
(so the fingerprint does not depend on them either) and :meth:`OpenAIJudge.secrets` lists them for
the run store, which redacts them from everything it writes, a server's echo of them included.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import os
import time
import weakref
from collections.abc import AsyncGenerator, Mapping, Sequence
from datetime import UTC
from typing import Any, NamedTuple

import aiohttp

from judgeprobe._util.redaction import Redactor, mapping_secrets, redact_text, url_secrets
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.errors import ConfigError, FatalJudgeError, RetryableJudgeError
from judgeprobe.judges.base import BaseJudge
from judgeprobe.judges.completion import (
    MAX_TOKEN_COUNT,
    SNIPPET,
    completion_verdict,
    label_distribution,
    snippet,
    token_count,
)
from judgeprobe.judges.openai_http import (
    MAX_BODY_BYTES,
    BodyTooLarge,
    authorization,
    endpoint,
    read_bounded,
)

__all__ = [
    "MAX_TOKEN_COUNT",
    "PROMPT_FORMAT",
    "OpenAIJudge",
    "completion_verdict",
    "label_distribution",
    "messages",
    "parse_retry_after",
    "token_count",
]

PROMPT_FORMAT = "1"
"""Version of how a request becomes chat messages; part of the fingerprint, bumped on change."""

_RETRYABLE_STATUS = frozenset({408, 409, 429})
_SNIPPET = SNIPPET


class OpenAIJudge(BaseJudge):
    """An LLM judge served over the OpenAI chat-completions API.

    Parameters
    ----------
    base_url : str
        The API root, e.g. ``"https://api.openai.com/v1"`` or ``"http://127.0.0.1:8000/v1"``;
        requests go to ``{base_url}/chat/completions`` (a query string of ``base_url``, such as
        ``?api-version=...``, is kept after that path).
    model : str
        The model name the server expects.
    api_key_env : str
        Environment variable holding the API key, read at each call and sent as a Bearer token.
        When unset, no Authorization header is sent (local servers). Credentials can also sit
        in ``base_url`` (``https://user:password@host/v1``, sent as HTTP basic auth; they win
        over the API key, which is then not sent) or in ``extra_body``; every one of them is
        redacted from what judgeprobe writes.
    temperature, seed, max_tokens : decoding parameters passed through. With ``seed`` set, trial
        ``t`` is sent with ``seed + t``.
    logprobs, top_logprobs : ask for next-token log-probabilities; where the server returns them
        the verdict is read from the probability of each label (see :func:`label_distribution`).
    max_concurrency : int
        Connections the client keeps open; the engine's default number of calls in flight.
    timeout_s : float
        Total time allowed for one HTTP call before it counts as a (retryable) timeout.
    revision : str, optional
        The model's revision or snapshot, when the name alone does not pin it.
    extra_body : mapping, optional
        More JSON fields for each request body (e.g. ``{"top_p": 1}``); part of the fingerprint.
    context_window : int, optional
        Input tokens the model reads; when set, inputs estimated longer (4 characters per token)
        are skipped by the engine instead of sent.
    cache_prompt : bool, optional
        Whether the server may reuse the evaluated prompt prefix of an earlier request
        (llama.cpp's server reads ``cache_prompt`` in the request body). Sent when set, and part
        of the fingerprint then: logits computed over a cached prefix need not be bit-identical
        to those of a full evaluation. None (the default) sends nothing: the server's default.
    max_body_bytes : int
        The most bytes of an answer read (default 8 MiB); a longer answer is not read and the
        call is an error verdict. The answer text a verdict keeps is capped apart (see
        :data:`~judgeprobe.core.verdict.MAX_RAW_TEXT`).

    Examples
    --------
    >>> judge = OpenAIJudge("http://127.0.0.1:8000/v1/", "gemma-3-270m", seed=7)
    >>> judge.describe()["base_url"], judge.describe()["seed"]
    ('http://127.0.0.1:8000/v1', 7)
    >>> same = OpenAIJudge("http://127.0.0.1:8000/v1", "gemma-3-270m", seed=7)
    >>> judge.fingerprint == same.fingerprint
    True
    >>> OpenAIJudge("https://bob:pw@host/v1", "m", extra_body={"api_key": "k"}).describe()[
    ...     "extra_body"]
    {'api_key': '[redacted]'}
    """

    backend = "openai"
    generates = True

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int = 8,
        logprobs: bool = True,
        top_logprobs: int = 20,
        max_concurrency: int = 16,
        timeout_s: float = 60.0,
        revision: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
        context_window: int | None = None,
        cache_prompt: bool | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://, got {base_url!r}")
        if not model:
            raise ConfigError("model must name the model the server serves")
        if max_tokens < 1:
            raise ConfigError("max_tokens must be >= 1")
        if not 0 <= top_logprobs <= 20:
            raise ConfigError("top_logprobs must be between 0 and 20 (the API's limit)")
        if max_concurrency < 1:
            raise ConfigError("max_concurrency must be >= 1")
        if timeout_s <= 0:
            raise ConfigError("timeout_s must be > 0")
        if temperature < 0:
            raise ConfigError("temperature must be >= 0")
        if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int):
            raise ConfigError(f"max_body_bytes must be an integer, got {max_body_bytes!r}")
        if max_body_bytes < 1024:
            raise ConfigError(f"max_body_bytes must be >= 1024, got {max_body_bytes}")
        if context_window is not None and context_window < 1:
            raise ConfigError("context_window must be >= 1 (or None when unknown)")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.temperature = float(temperature)
        self.seed = seed
        self.max_tokens = max_tokens
        self.logprobs = logprobs
        self.top_logprobs = top_logprobs
        self.max_concurrency = max_concurrency
        self.timeout_s = float(timeout_s)
        self.revision = revision
        self.extra_body = dict(extra_body or {})
        self.context_window = context_window
        self.cache_prompt = cache_prompt
        self._config_secrets = [*url_secrets(self.base_url), *mapping_secrets(self.extra_body)]
        self.max_body_bytes = max_body_bytes
        self._url = endpoint(self.base_url, "/chat/completions")
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopSession] = (
            weakref.WeakKeyDictionary()
        )

    # -- identity -----------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """What this judge is, with every credential it holds shown as ``[redacted]``."""
        described: dict[str, Any] = {
            "backend": self.backend,
            "base_url": redact_text(self.base_url),
            "model": self.model,
            "revision": self.revision,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "logprobs": self.logprobs,
        }
        if self.logprobs:
            described["top_logprobs"] = self.top_logprobs
        if self.extra_body:
            described["extra_body"] = Redactor(environment=False).value(self.extra_body)
        if self.cache_prompt is not None:  # unset, the fingerprints of earlier runs still hold
            described["cache_prompt"] = self.cache_prompt
        described["prompt_format"] = PROMPT_FORMAT
        return described

    def secrets(self) -> list[str]:
        """The API key (as the environment holds it now) and every credential in the config."""
        key = os.environ.get(self.api_key_env) or None
        return self._secrets(key)

    def _secrets(self, key: str | None) -> list[str]:
        found = [key] if key else []
        return [*found, *self._config_secrets]

    def count_tokens(self, request: Request) -> int | None:
        """A cheap estimate (4 characters per token), only when a context window is set."""
        if self.context_window is None:
            return None
        return sum(len(message["content"]) for message in messages(request)) // 4

    # -- the call -----------------------------------------------------------------------------
    def body(self, request: Request) -> dict[str, Any]:
        """The JSON body sent for ``request``."""
        rubric = request.rubric
        generation = rubric.kind == "generation"
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages(request),
            "temperature": self.temperature,
            "max_tokens": rubric.max_new_tokens if generation else self.max_tokens,
        }
        if self.seed is not None:
            body["seed"] = self.seed + request.trial
        if self.logprobs and rubric.kind in ("scale", "binary", "pairwise"):
            body["logprobs"] = True
            if self.top_logprobs:
                body["top_logprobs"] = self.top_logprobs
        if self.cache_prompt is not None:
            body["cache_prompt"] = self.cache_prompt
        body.update(self.extra_body)
        return body

    async def judge(self, request: Request) -> Verdict:
        payload = json.dumps(self.body(request)).encode()
        key = os.environ.get(self.api_key_env) or None
        secrets = self._secrets(key)
        headers = {"Content-Type": "application/json"}
        auth = authorization(self.base_url, key)
        if auth is not None:
            headers["Authorization"] = auth
        session = await self._session()
        try:
            async with session.post(self._url, data=payload, headers=headers) as response:
                status = response.status
                retry_after = _retry_after(response.headers)
                raw = await read_bounded(response, self.max_body_bytes)
        except BodyTooLarge as exc:
            raise FatalJudgeError(
                _redact(f"{self._url} answered HTTP {status} with {exc}", secrets)
                + " (max_body_bytes): not read"
            ) from exc
        except TimeoutError as exc:
            raise RetryableJudgeError(
                _redact(f"no answer from {self._url} within {self.timeout_s:g} s", secrets)
            ) from exc
        except aiohttp.InvalidURL as exc:
            raise FatalJudgeError(_redact(f"invalid URL {self._url}", secrets)) from exc
        except aiohttp.ClientError as exc:
            reason = _redact(str(exc), secrets)[:_SNIPPET]
            raise RetryableJudgeError(
                _redact(f"connection to {self.base_url} failed", secrets)
                + f" ({type(exc).__name__}: {reason})"
            ) from exc
        if status != 200:
            raise _status_error(status, raw, retry_after, self._url, secrets)
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise RetryableJudgeError(
                _redact(f"{self._url} answered with a body that is not JSON: ", secrets)
                + repr(snippet(raw, secrets))
            ) from exc
        return self._verdict(request, data, raw, secrets)

    def _verdict(self, request: Request, data: Any, raw: bytes, secrets: Sequence[str]) -> Verdict:
        return completion_verdict(
            request, data, raw, logprobs=self.logprobs, source=self._url, secrets=secrets
        )

    # -- the session --------------------------------------------------------------------------
    async def _session(self) -> aiohttp.ClientSession:
        """The event loop's shared session, created lazily inside it.

        Each loop gets its own session (``run_sync`` runs every engine run in a new loop); a
        session is closed by :meth:`aclose` or, at the latest, when its loop shuts down.
        """
        loop = asyncio.get_running_loop()
        entry = self._sessions.get(loop)
        if entry is not None and not entry.session.closed:
            return entry.session
        connector = aiohttp.TCPConnector(limit=self.max_concurrency, ttl_dns_cache=300)
        session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=self.timeout_s),
            raise_for_status=False,
        )
        guard = _close_at_loop_end(session)
        await anext(guard)  # a started async generator is closed by loop.shutdown_asyncgens()
        self._sessions[loop] = _LoopSession(session, guard)
        return session

    async def aclose(self) -> None:
        """Close this loop's HTTP session; the judge can still be used afterwards."""
        entry = self._sessions.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry.guard.aclose()

    async def __aenter__(self) -> OpenAIJudge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _LoopSession(NamedTuple):
    session: aiohttp.ClientSession
    guard: AsyncGenerator[None, None]


async def _close_at_loop_end(session: aiohttp.ClientSession) -> AsyncGenerator[None, None]:
    """Holds ``session`` open until closed: by ``aclose()`` or by the loop's shutdown."""
    try:
        yield
    finally:
        await session.close()


def messages(request: Request) -> list[dict[str, str]]:
    """The chat messages for ``request``: the rubric's system text, then the rendered template.

    When the rubric has an ``answer_prefix`` an instruction to begin the answer with it is
    appended, so the parser finds the label right after it.
    """
    rubric = request.rubric
    chat: list[dict[str, str]] = []
    if rubric.system:
        chat.append({"role": "system", "content": rubric.system})
    chat.append({"role": "user", "content": _message_text(request)})
    return chat


def _message_text(request: Request) -> str:
    text = request.render()
    prefix = request.rubric.answer_prefix.strip()
    if prefix and request.rubric.kind != "generation":
        text = f'{text.rstrip()}\n\nBegin your answer with "{prefix}".'
    return text


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delay-seconds or an HTTP date (RFC 9110).

    Examples
    --------
    >>> parse_retry_after("2")
    2.0
    >>> parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0)
    10.0
    >>> parse_retry_after("soon") is None
    True
    """
    if value is None or not value.strip():
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


def _retry_after(headers: Mapping[str, str]) -> float | None:
    millis = headers.get("retry-after-ms")
    if millis is not None:
        seconds = parse_retry_after(millis)
        if seconds is not None:
            return seconds / 1000.0
    return parse_retry_after(headers.get("Retry-After"))


def _status_error(
    status: int, raw: bytes, retry_after: float | None, url: str, secrets: Sequence[str]
) -> RetryableJudgeError | FatalJudgeError:
    message = f"HTTP {status} from {_redact(url, secrets)}: {_server_message(raw, secrets)}"
    if status in _RETRYABLE_STATUS or status >= 500:
        return RetryableJudgeError(message, retry_after=retry_after)
    hint = {
        401: " (check the API key in the environment)",
        403: " (the key lacks access to this model or endpoint)",
        404: " (check base_url and the model name)",
    }.get(status, "")
    return FatalJudgeError(message + hint)


def _server_message(raw: bytes, secrets: Sequence[str]) -> str:
    """The server's error message (OpenAI's ``{"error": {"message": ...}}`` or the body)."""
    try:
        data = json.loads(raw)
    except ValueError:
        return snippet(raw, secrets)
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return _redact(str(error["message"]), secrets)[:_SNIPPET]
    if isinstance(error, str):
        return _redact(error, secrets)[:_SNIPPET]
    if isinstance(data, dict) and isinstance(data.get("detail"), str):
        return _redact(data["detail"], secrets)[:_SNIPPET]
    return snippet(raw, secrets)


def _redact(text: str, secrets: Sequence[str]) -> str:
    """``text`` with the API key and every configured credential masked, should a server echo
    them, and with any URL credential masked."""
    return redact_text(text, secrets)
