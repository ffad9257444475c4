"""Keeping secrets out of the Judge Card.

API keys come from the environment. A judge description or a command line could still carry one
(a key pasted as ``--api-key``, an ``Authorization`` header in ``extra_body``, a password in a
base URL), so the card is scrubbed before it is rendered, by the same rules as the run store (see
:mod:`judgeprobe._util.redaction`): every value of a secret-looking environment variable is replaced
wherever it occurs, and so are the value of every secret-looking key and the credentials of every
URL.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from judgeprobe._util.redaction import MIN_SECRET_LENGTH, REDACTED, Redactor, environment_secrets

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "environment_secrets", "redact"]


def redact(value: Any, secrets: Iterable[str] | None = None) -> Any:
    """A copy of JSON-like ``value`` with every secret string and secret-named field replaced.

    ``secrets`` None takes the values of secret-looking environment variables; given strings
    are replaced whatever their length.

    Examples
    --------
    >>> redact({"cmd": "run --key sk-abcdefgh", "api_key": "x"}, ["sk-abcdefgh"])
    {'cmd': 'run --key [redacted]', 'api_key': '[redacted]'}
    """
    if secrets is None:
        return Redactor().value(value)
    return Redactor(secrets, environment=False, min_length=1).value(value)
