"""Reading YAML files and explaining validation errors, the same way for every file kind.

Rubrics, variant sets, falsifiers and audit configs are all YAML checked by pydantic; their errors
name the file, then each bad key with what is wrong with it.

YAML aliases (``*name``, repeating what an anchor ``&name`` marks) are read, but what they repeat is
bounded: a few hundred bytes of nested aliases (a "billion laughs") stand for billions of values,
which every consumer that copies, validates, hashes or writes the document (a judge's
``extra_body`` is all four) would expand. A document whose aliases repeat more than
:data:`MAX_ALIASED_NODES` values in all, or an alias that repeats a value it sits inside (a
document that contains itself), is refused with the file and the line of the alias.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, SequenceNode

from judgeprobe.errors import ConfigError, JudgeprobeError

MAX_ALIASED_NODES = 10_000
"""The most values (scalars, lists and mappings, counted as expanded) that a document's aliases
may repeat in all; far above any hand-written config, far below what expands to gigabytes."""


class AliasBoundError(yaml.YAMLError, ConfigError):
    """An alias that repeats too much, or repeats a value it is part of; ``line`` is 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, counting what each alias repeats before it is composed."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliased = 0
        self._sizes: dict[int, int] = {}

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            node = self.anchors.get(event.anchor)
            if node is not None:  # an undefined one is PyYAML's own error
                self._aliased += self._size(node, event.start_mark.line + 1)
                if self._aliased > MAX_ALIASED_NODES:
                    raise AliasBoundError(
                        f"the aliases repeat more than {MAX_ALIASED_NODES} values (alias "
                        f"*{event.anchor}); write the values out or drop the alias",
                        event.start_mark.line + 1,
                    )
        return super().compose_node(parent, index)

    def _size(self, node: Node, line: int) -> int:
        """How many values ``node`` stands for, expanded; an unfinished node (an alias to a
        value it sits inside) is refused."""
        known = self._sizes.get(id(node))
        if known is not None:
            return known
        if node.end_mark is None:  # PyYAML sets a collection's end mark once it is composed
            raise AliasBoundError(
                "an alias repeats a value it is part of (a document that contains itself)", line
            )
        total = 1
        if isinstance(node, SequenceNode):
            total += sum(self._size(child, line) for child in node.value)
        elif isinstance(node, MappingNode):
            total += sum(self._size(k, line) + self._size(v, line) for k, v in node.value)
        self._sizes[id(node)] = total
        return total


def parse_yaml(text: str, *, source: str, error: type[JudgeprobeError]) -> Any:
    """The YAML document in ``text``; ``error`` (naming ``source``) when it is not valid YAML or
    its aliases repeat too much (naming the line)."""
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    except AliasBoundError as exc:
        raise error(f"{source}, line {exc.line}: {exc.message}") from exc
    except yaml.YAMLError as exc:
        raise error(f"{source}: not valid YAML ({exc})") from exc
    finally:
        loader.dispose()


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
