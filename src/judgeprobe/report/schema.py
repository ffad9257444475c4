"""The Judge Card's JSON Schema (``card.schema.json``, shipped with the package) and its check.

The schema is versioned with the card: ``card_version`` is ``MAJOR.MINOR``; a new optional field
raises MINOR, a renamed, removed or retyped field raises MAJOR (and the schema's ``$id``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from judgeprobe.errors import JudgeprobeError

CARD_VERSION = "1.10"
SCHEMA_FILE = "card.schema.json"


class CardValidationError(JudgeprobeError):
    """A card does not match the Judge Card schema; the message lists where and why."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        shown = "\n  ".join(errors[:20])
        more = f"\n  ... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"the card does not match {SCHEMA_FILE}:\n  {shown}{more}")


@cache
def card_schema() -> dict[str, Any]:
    """The Judge Card JSON Schema (draft 2020-12) as a dict."""
    text = resources.files("judgeprobe.report").joinpath(SCHEMA_FILE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def card_errors(card: Mapping[str, Any]) -> list[str]:
    """Every way ``card`` departs from the schema, as ``path: message`` lines (empty when valid)."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(card_schema())
    found = sorted(validator.iter_errors(card), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in found]


def validate_card(card: Mapping[str, Any]) -> None:
    """Raise :class:`CardValidationError` unless ``card`` matches the Judge Card schema.

    Examples
    --------
    >>> validate_card({"card_version": "0.9"})  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    judgeprobe.report.schema.CardValidationError: the card does not match card.schema.json
    >>> card_errors({"card_version": CARD_VERSION})[0]
    "(root): 'generator' is a required property"
    """
    errors = card_errors(card)
    if errors:
        raise CardValidationError(errors)
