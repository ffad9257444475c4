"""Keeping secrets out of everything judgeprobe writes: the run store, the card, error messages.

A secret is either *known* or *recognised where it stands*:

- known: the API key a judge reads from the environment, the string values a judge's
  ``extra_body`` holds under secret-looking names (``api_key``, ``Authorization``...), the user
  and password of its base URL, and the values of secret-looking environment variables
  (``*_API_KEY``, ``*_TOKEN``...). A known secret is replaced wherever it occurs, so a server that
  echoes the key, or a command line that pastes it, leaves no copy.
- recognised: the ``user:password@`` part of any URL, the value of a secret-looking URL query
  parameter (``?api_key=...``) and, in structured values, the value of a secret-looking key.

One :class:`Redactor` applies both; the run store passes every text it writes through one, and the
card is scrubbed by another before it is rendered.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

REDACTED = "[redacted]"

MIN_SECRET_LENGTH = 8
"""Shorter values of secret-looking environment variables (``1``, ``true``, a 4-letter password)
are not replaced everywhere: that would garble ordinary text. Where they stand in a URL or under a
secret-looking key they are still redacted."""

MIN_DECLARED_LENGTH = 4
"""A secret a judge declares (its API key) is one, however short: from this length on it is
replaced wherever it appears (a 7-character key echoed by a server is redacted)."""

_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_SECRET_NAME = re.compile(
    r"^(?:[a-z0-9]+[_.-])*(?:api[_-]?key|apikey|secret[_-]?key|private[_-]?key|access[_-]?key|"
    r"token|secret|password|passwd|passphrase|credentials?|authorization|cookie|bearer|auth)$",
    re.IGNORECASE,
)
"""Names whose values are secrets: ``api_key``, ``x-api-key``, ``Authorization``,
``access_token``, ``client_secret``... but not ``max_tokens``, ``api_key_env``,
``prompt_cache_key`` or a bare ``key``."""
_URL_USERINFO = re.compile(r"://[^/?#\s\"'<>\\]*@")
_QUERY_PARAM = re.compile(r"([?&;])([^=&#?;\s\"'<>]+)=([^&#;\s\"'<>]*)")
_SECRET_PARAMS = frozenset({"key", "sig", "signature"})
"""Query parameters that hold secrets beyond the secret-looking names (``?key=`` of many APIs)."""
_QUERY_HINTS = (
    "key=",
    "sig=",
    "signature=",
    "token=",
    "secret=",
    "passwd=",
    "password=",
    "passphrase=",
    "auth=",
    "authorization=",
    "cookie=",
    "bearer=",
    "credential=",
    "credentials=",
)
"""A secret query parameter's name ends so; text without one needs no parameter-by-parameter
look (most text: substring tests keep redaction cheap on long dataset fields)."""


def is_secret_name(name: str) -> bool:
    """True when a field, header or parameter called ``name`` holds a secret.

    Examples
    --------
    >>> [is_secret_name(n) for n in ("api_key", "X-Api-Key", "max_tokens", "api_key_env")]
    [True, True, False, False]
    """
    return _SECRET_NAME.match(name) is not None


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look secret (``*_API_KEY``, ``*_TOKEN``...)."""
    env = os.environ if environ is None else environ
    values = {
        value
        for name, value in env.items()
        if _SECRET_ENV.search(name) and len(value.strip()) >= MIN_SECRET_LENGTH
    }
    return sorted(values, key=len, reverse=True)


def url_secrets(url: str) -> list[str]:
    """The user, password and secret query values of ``url``, as written and percent-decoded.

    Examples
    --------
    >>> url_secrets("https://bob:s3cr3t%21pw@host/v1?api_key=k-123&x=1")
    ['bob', 's3cr3t%21pw', 's3cr3t!pw', 'k-123']
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found: list[str] = []
    userinfo, at, _ = parts.netloc.rpartition("@")
    if at:
        found += [piece for piece in userinfo.split(":", 1) if piece]
    for match in _QUERY_PARAM.finditer("?" + parts.query if parts.query else ""):
        if _is_secret_param(unquote(match.group(2))) and match.group(3):
            found.append(match.group(3))
    return list(dict.fromkeys(v for raw in found for v in (raw, unquote(raw))))


def mapping_secrets(value: Any) -> list[str]:
    """Every string held under a secret-looking key anywhere in JSON-like ``value``.

    Examples
    --------
    >>> mapping_secrets({"top_p": 1, "headers": {"Authorization": "Bearer abc"}})
    ['Bearer abc', 'abc']
    """
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(item, str) and item and is_secret_name(str(key)):
                found.append(item)
                scheme, _, token = item.partition(" ")
                if token and scheme.lower() in ("bearer", "basic", "token"):
                    found.append(token)
            else:
                found += mapping_secrets(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found += mapping_secrets(item)
    return found


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without the given ``secrets`` (of any length), URL credentials or secret params.

    Examples
    --------
    >>> redact_text("GET https://u:pw@host/v1?api_key=abc&n=2 with key sk-1", ["sk-1"])
    'GET https://[redacted]@host/v1?api_key=[redacted]&n=2 with key [redacted]'
    """
    return _redact(text, sorted({s for s in secrets if s}, key=len, reverse=True))


def _redact(text: str, ordered: Sequence[str]) -> str:
    """:func:`redact_text` with ``secrets`` already distinct, non-empty and longest first."""
    for secret in ordered:
        if secret in text:
            text = text.replace(secret, REDACTED)
    if "@" in text and "://" in text:
        text = _URL_USERINFO.sub(f"://{REDACTED}@", text)
    if "=" in text and _has_query_hint(text):
        text = _QUERY_PARAM.sub(_redact_param, text)
    return text


_LOOSE_USERINFO = re.compile(
    r"(^|[\s'\"(=/,\[{])([^\s/'\"<>\\@]*:[^\s/'\"<>\\@]*)@(?=[\w-]*[./:])(?![\w.+-]*:/)(?![^\s/@]*@)"
)
"""``user:password@`` in a mistyped URL (``htps:/bob:pw@host``, ``bob:pw@host``): a run of
non-separators holding a colon, just before an ``@`` that a host follows (a name, then ``.``,
``/`` or ``:``; not a URL, as in a judge spec ``openai:MODEL@https://...``, nor another
``user@``). Only for messages: in data text it would also catch a ``10:30@venue.org``."""
_KEY_VALUE = re.compile(
    r"(['\"]?)([A-Za-z_][\w.-]*)\1(\s*[:=]\s*)(?:'([^']*)'|\"([^\"]*)\"|([^\s'\",;)\]}]+))"
)
"""``key: value`` or ``key=value``, the key and the value quoted or not (a dict's repr, a
``-J key=value`` echoed back)."""


def redact_message(text: str, redactor: Redactor | None = None) -> str:
    """An error message fit to print: what :meth:`Redactor.text` removes (the environment's
    secrets, URL credentials, secret query values), plus the credentials of a mistyped URL and the
    value after any secret-looking key (``{'api_key': 'sk-...'}``, ``token=...``).

    Messages quote what the user typed, config values included; one call where they are printed
    keeps every message clean, whichever layer raised it.

    Examples
    --------
    >>> redact_message("bad base_url 'htps:/bob:pw@host/v1', option {'api_key': 'sk-1'}", Redactor(
    ...     environment=False))
    "bad base_url 'htps:/[redacted]@host/v1', option {'api_key': '[redacted]'}"
    """
    text = (redactor or Redactor()).text(text)
    if "@" in text:
        text = _LOOSE_USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    return _KEY_VALUE.sub(_redact_key_value, text)


def _redact_key_value(match: re.Match[str]) -> str:
    if not is_secret_name(match.group(2)):
        return match.group(0)
    quote = "'" if match.group(4) is not None else '"' if match.group(5) is not None else ""
    key = f"{match.group(1)}{match.group(2)}{match.group(1)}"
    return f"{key}{match.group(3)}{quote}{REDACTED}{quote}"


def _has_query_hint(text: str) -> bool:
    lowered = text.lower()
    return any(hint in lowered for hint in _QUERY_HINTS)


def _is_secret_param(name: str) -> bool:
    return name.lower() in _SECRET_PARAMS or is_secret_name(name)


def _redact_param(match: re.Match[str]) -> str:
    if not match.group(3) or match.group(3) == REDACTED or not _is_secret_param(match.group(2)):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}={REDACTED}"


class Redactor:
    """Replaces known secrets and recognisable credentials in text and JSON-like values.

    Parameters
    ----------
    secrets
        Known secret values. Values shorter than ``min_length`` are left to the patterns.
    environment
        Also treat the values of secret-looking environment variables (read now) as known.
    min_length
        The shortest known value replaced wherever it occurs.

    Examples
    --------
    >>> redactor = Redactor(["sk-live-123456"], environment=False)
    >>> redactor.text("echo sk-live-123456 to http://bob:pw@x/v1")
    'echo [redacted] to http://[redacted]@x/v1'
    >>> redactor.value({"api_key": "short", "note": "sk-live-123456"})
    {'api_key': '[redacted]', 'note': '[redacted]'}
    """

    def __init__(
        self,
        secrets: Iterable[str] = (),
        *,
        environment: bool = True,
        min_length: int = MIN_SECRET_LENGTH,
    ) -> None:
        self.min_length = min_length
        self._secrets: list[str] = []
        self.add(environment_secrets() if environment else ())
        self.add(secrets)

    @property
    def secrets(self) -> tuple[str, ...]:
        """The known secrets, longest first."""
        return tuple(self._secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Know ``secrets`` from now on (those shorter than ``min_length`` are ignored)."""
        known = set(self._secrets)
        known.update(s for s in secrets if len(s.strip()) >= self.min_length)
        self._secrets = sorted(known, key=len, reverse=True)

    def text(self, text: str) -> str:
        """``text`` with every known secret and URL credential replaced by ``[redacted]``."""
        return _redact(text, self._secrets)

    def value(self, value: Any, *, names: bool = True) -> Any:
        """A copy of JSON-like ``value`` with every string redacted.

        With ``names`` (the default), a string held under a secret-looking key is replaced
        whole, whatever it is; pass ``names=False`` for data whose keys are column names.
        """
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {
                self.text(str(key)): REDACTED
                if names and isinstance(item, str) and item and is_secret_name(str(key))
                else self.value(item, names=names)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.value(item, names=names) for item in value]
        return value
