"""The comparison's JSON Schema (``compare.schema.json``, shipped with the package) and its check.

``compare_version`` is ``MAJOR.MINOR``, versioned as the Judge Card's is: a new optional field
raises MINOR; a renamed, removed or retyped one raises MAJOR (and the schema's ``$id``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from judgeprobe.errors import JudgeprobeError

SCHEMA_FILE = "compare.schema.json"


class ComparisonValidationError(JudgeprobeError):
    """A comparison does not match its schema; the message lists where and why."""


@cache
def compare_schema() -> dict[str, Any]:
    """The comparison's JSON Schema (draft 2020-12) as a dict."""
    text = resources.files("judgeprobe.compare").joinpath(SCHEMA_FILE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def validate_comparison(document: Mapping[str, Any]) -> None:
    """Raise :class:`ComparisonValidationError` unless ``document`` matches the schema."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(compare_schema())
    found = sorted(validator.iter_errors(document), key=lambda e: [str(p) for p in e.path])
    if found:
        lines = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in found]
        raise ComparisonValidationError(
            f"the comparison does not match {SCHEMA_FILE}: " + "; ".join(lines[:10])
        )
