"""The fixed sets of values the command line's options take, each from where it is defined.

Each is a ``Literal`` type, so that ``--help`` lists the values and a value outside them is a
usage error naming them (exit 2), before any work starts. Each is read from its one definition:
the audit's gates (:data:`judgeprobe.core.gates.FailOn`), the executors
(:data:`judgeprobe.engine.executors.EXECUTORS`) and the loaders
(:data:`judgeprobe.data.registry.LOADERS`); a new value there is a new choice here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

from judgeprobe.core.gates import FailOn
from judgeprobe.data.registry import LOADERS
from judgeprobe.engine.executors import EXECUTORS

FAIL_ON_HELP = (
    "Exit 1 when the card's verdict reaches this one: fail (the default), warn (warn or fail),"
    " inconclusive (anything but a pass: every gated finding shown to pass), never."
)

CompareFailOn = Literal["worse", "never"]
"""``judgeprobe compare --fail-on``: exit 1 when a gated finding got worse with evidence."""

if TYPE_CHECKING:  # a Literal built from a registry is a plain string to a type checker
    Executor = str
    LoaderName = str
else:
    Executor = Literal[tuple(EXECUTORS)]
    LoaderName = Literal[tuple(LOADERS)]


def values(choice: object) -> tuple[str, ...]:
    """The values of a choice type, in order (``values(FailOn)``: warn, fail, inconclusive,
    never)."""
    return tuple(str(value) for value in get_args(choice))


__all__ = ["FAIL_ON_HELP", "CompareFailOn", "Executor", "FailOn", "LoaderName", "values"]
