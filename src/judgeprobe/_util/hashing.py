"""Content hashes: stable, canonical, short."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace, so equal content gives equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(value: Any, *, length: int = 16) -> str:
    """A hex SHA-256 prefix of ``value``'s canonical JSON (strings are hashed as they are)."""
    text = value if isinstance(value, str) else canonical_json(value)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def file_hash(path: str, *, length: int = 16, chunk: int = 1 << 20) -> str:
    """A hex SHA-256 prefix of a file's bytes (used for model weights)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()[:length]
