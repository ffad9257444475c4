"""How an OpenAI-compatible judge reaches its server: the URL of an endpoint, the credentials
sent, and an answer read with a bound.

A ``base_url`` may carry a query string that every call needs (Azure OpenAI's
``?api-version=2024-06-01``): an endpoint's path goes before it, never after
(:func:`endpoint`). It may carry credentials (``https://user:password@host/v1``): they are taken
out of the URL and sent as HTTP basic auth, and they win over an API key in the environment,
which is then not sent (:func:`authorization`): a server takes one ``Authorization`` header, and
credentials written into the judge's own URL are the more specific choice (aiohttp refused the
pair, so every call failed). An answer is read up to a byte limit (:func:`read_bounded`): a
server that answers a request for 8 tokens with 30 MB is not read to the end.
"""

from __future__ import annotations

import base64
from urllib.parse import unquote, urlsplit, urlunsplit

import aiohttp

from judgeprobe.errors import JudgeError

MAX_BODY_BYTES = 8 * 2**20
"""The default bound on an answer's size (8 MiB): a chat completion of a few thousand tokens
with 20 logprobs each is well under it."""


class BodyTooLarge(JudgeError, ValueError):
    """An answer longer than the bound it was read with."""


def endpoint(base_url: str, path: str) -> str:
    """The URL of ``path`` under ``base_url``: its credentials taken out, its query string kept.

    Examples
    --------
    >>> endpoint("https://h.example/openai/v1/?api-version=2024-06-01", "/chat/completions")
    'https://h.example/openai/v1/chat/completions?api-version=2024-06-01'
    >>> endpoint("http://bob:pw@127.0.0.1:8000/v1", "/files")
    'http://127.0.0.1:8000/v1/files'
    """
    parts = urlsplit(base_url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/") + path, parts.query, ""))


def authorization(base_url: str, key: str | None) -> str | None:
    """The ``Authorization`` header a call sends: basic auth from the credentials of
    ``base_url`` when it has any, else the API key ``key`` as a Bearer token, else none.

    Examples
    --------
    >>> authorization("https://bob:pw@host/v1", "sk-ignored")
    'Basic Ym9iOnB3'
    >>> authorization("https://host/v1", "sk-1")
    'Bearer sk-1'
    """
    parts = urlsplit(base_url)
    if parts.username is not None or parts.password is not None:
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return f"Bearer {key}" if key else None


async def read_bounded(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body of ``response``, read up to ``limit`` bytes; :class:`BodyTooLarge` beyond (as
    soon as its ``Content-Length`` says so, or once that much has arrived)."""
    declared = response.content_length
    if declared is not None and declared > limit:
        raise BodyTooLarge(f"an answer of {declared} bytes (Content-Length), over {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"an answer of more than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
