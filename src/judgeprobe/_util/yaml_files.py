"""Reading YAML files and explaining validation errors, the same way for every file kind.

Rubrics, variant sets, falsifiers and audit configs are all YAML checked by pydantic; their errors
name the file, then each bad key with what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from judgeprobe.errors import JudgeprobeError


def parse_yaml(text: str, *, source: str, error: type[JudgeprobeError]) -> Any:
    """The YAML document in ``text``; ``error`` (naming ``source``) when it is not valid YAML."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise error(f"{source}: not valid YAML ({exc})") from exc


def read_yaml(path: str | Path, *, what: str, error: type[JudgeprobeError]) -> Any:
    """The YAML document in the file ``path`` (a ``what``); ``error`` naming the file on failure."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"{path}: cannot read {what} ({exc.strerror})") from exc
    return parse_yaml(text, source=str(path), error=error)


def explain_validation(
    exc: ValidationError,
    *,
    root: str,
    locate: Callable[[list[Any]], list[Any]] | None = None,
) -> str:
    """``key.path: message`` for each error, joined by ``; ``; ``root`` names an error at the top.

    ``locate`` may rewrite an error's location first (e.g. to add a list entry's name).
    """
    parts = []
    for error in exc.errors():
        loc = list(error["loc"])
        if locate is not None:
            loc = locate(loc)
        where = ".".join(str(p) for p in loc) or root
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)
