"""A small client of the OpenAI Files and Batches API (``/v1/files``, ``/v1/batches``).

It speaks to the judge's own ``base_url`` with the judge's credentials, as the live judge sends
them (:func:`~judgeprobe.judges.openai_http.authorization`: the user and password of the URL,
else the API key read from the environment at each call, only ever as a header; a query string
of the URL kept after each path), and classifies failures as the live judge does: 408, 409,
429, 5xx and connection errors are :class:`~judgeprobe.errors.RetryableJudgeError`, other
4xx :class:`~judgeprobe.errors.FatalJudgeError`; every message has the judge's secrets masked.
"""

from __future__ import annotations

import json
import os
from typing import Any

import aiohttp

from judgeprobe._util.redaction import redact_text
from judgeprobe.errors import FatalJudgeError, RetryableJudgeError
from judgeprobe.judges.openai_compat import OpenAIJudge
from judgeprobe.judges.openai_http import authorization, endpoint

TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
"""The batch statuses after which nothing changes (validating, in_progress, finalizing and
cancelling are waited out)."""


class BatchClient:
    """Upload an input file, create a batch, read its state and download its files."""

    def __init__(self, judge: OpenAIJudge, *, timeout_s: float = 300.0) -> None:
        self.judge = judge
        self.base_url = judge.base_url
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> BatchClient:
        self._session = aiohttp.ClientSession(timeout=self._timeout)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.judge.api_key_env) or None
        auth = authorization(self.base_url, key)
        return {"Authorization": auth} if auth is not None else {}

    async def _call(self, method: str, path: str, **kwargs: Any) -> bytes:
        if self._session is None:
            raise RuntimeError("use BatchClient as an async context manager")
        url = endpoint(self.base_url, path)
        secrets = self.judge.secrets()
        try:
            async with self._session.request(
                method, url, headers=self._headers(), **kwargs
            ) as response:
                raw = await response.read()
                status = response.status
        except TimeoutError as exc:
            raise RetryableJudgeError(redact_text(f"no answer from {url}", secrets)) from exc
        except aiohttp.ClientError as exc:
            raise RetryableJudgeError(
                redact_text(f"{method} {url} failed ({type(exc).__name__}: {exc})", secrets)
            ) from exc
        if status != 200:
            message = redact_text(
                f"HTTP {status} from {method} {url}: {raw[:200].decode('utf-8', 'replace')}",
                secrets,
            )
            if status in (408, 409, 429) or status >= 500:
                raise RetryableJudgeError(message)
            raise FatalJudgeError(message)
        return raw

    async def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        raw = await self._call(method, path, **kwargs)
        where = f"{method} {redact_text(endpoint(self.base_url, path))}"
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise RetryableJudgeError(f"{where}: not JSON") from exc
        if not isinstance(value, dict):
            raise RetryableJudgeError(f"{where}: not a JSON object")
        return value

    async def upload(self, content: bytes, *, name: str = "requests.jsonl") -> str:
        """Upload a batch input file; returns its file id."""
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field("file", content, filename=name, content_type="application/jsonl")
        return str((await self._json("POST", "/files", data=form))["id"])

    async def create(self, input_file: str, *, completion_window: str = "24h") -> dict[str, Any]:
        """Create a batch of the chat completions in ``input_file``; returns the batch object."""
        return await self._json(
            "POST",
            "/batches",
            json={
                "input_file_id": input_file,
                "endpoint": "/v1/chat/completions",
                "completion_window": completion_window,
            },
        )

    async def retrieve(self, batch_id: str) -> dict[str, Any]:
        """The batch object (its ``status``, ``output_file_id``, ``error_file_id``...)."""
        return await self._json("GET", f"/batches/{batch_id}")

    async def content(self, file_id: str) -> bytes:
        """The content of a file (a batch's output or error file)."""
        return await self._call("GET", f"/files/{file_id}/content")
