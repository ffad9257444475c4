"""Keeping secrets out of the Judge Card.

API keys come from the environment. A judge description or a command line could still carry one
(a key pasted as ``--api-key``, an ``Authorization`` header in ``extra_body``), so the card is
scrubbed before it is rendered: every value of a secret-looking environment variable is replaced
wherever it occurs, and so is the value of every secret-looking key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[redacted]"

_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_SECRET_FIELD = re.compile(
    r"^(api[_-]?key|x[_-]api[_-]key|authorization|password|passwd|secret|client[_-]secret|"
    r"token|access[_-]token|bearer|cookie)$",
    re.IGNORECASE,
)
MIN_SECRET_LENGTH = 8
"""Shorter environment values (``1``, ``true``) are not treated as secrets: too many false hits."""


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look secret (``*_API_KEY``, ``*_TOKEN``...)."""
    env = os.environ if environ is None else environ
    values = {
        value
        for name, value in env.items()
        if _SECRET_ENV.search(name) and len(value.strip()) >= MIN_SECRET_LENGTH
    }
    return sorted(values, key=len, reverse=True)


def redact(value: Any, secrets: Iterable[str] | None = None) -> Any:
    """A copy of JSON-like ``value`` with every secret string and secret-named field replaced.

    Examples
    --------
    >>> redact({"cmd": "run --key sk-abcdefgh", "api_key": "x"}, ["sk-abcdefgh"])
    {'cmd': 'run --key [redacted]', 'api_key': '[redacted]'}
    """
    known = [s for s in (environment_secrets() if secrets is None else secrets) if s]
    return _redact(value, known)


def _redact(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = _redact(str(key), secrets)
            secret_field = _SECRET_FIELD.match(str(key)) and isinstance(item, str) and item
            out[name] = REDACTED if secret_field else _redact(item, secrets)
        return out
    if isinstance(value, list | tuple):
        return [_redact(item, secrets) for item in value]
    return value
