"""Old spellings of the command line, still read, each with a deprecation warning on stderr.

The command line was made consistent (``--out DIR`` for an output folder, ``--store FILE`` for a
run store, ``--output/-o FILE`` for one file written, ``judgeprobe bill`` for the bill); the old
spellings keep scripts running. A command made with :func:`renamed_options` reads each old option
name as its new one before parsing (``--plan`` as ``--bill``, ``--output=x`` as ``--out=x``);
:func:`deprecated_command` makes an old command name run the new command. ``--help`` shows the
new spellings only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import typer
from typer.core import TyperCommand


def warn_deprecated(old: str, new: str) -> None:
    """Tell the user, on stderr, that ``old`` is deprecated and ``new`` is its spelling now."""
    typer.echo(f"warning: {old} is deprecated; use {new}", err=True)


def rename_args(args: Sequence[str], renames: Mapping[str, str]) -> list[str]:
    """``args`` with each old option name of ``renames`` replaced by its new one, warning once
    per old name; ``--old=value`` keeps its value, and nothing after ``--`` is touched.

    >>> rename_args(["--plan", "--output=x", "--", "--plan"], {"--plan": "--bill",
    ...     "--output": "--out"})
    ['--bill', '--out=x', '--', '--plan']
    """
    renamed: list[str] = []
    warned: set[str] = set()
    for index, arg in enumerate(args):
        if arg == "--":
            renamed.extend(args[index:])
            break
        name, eq, value = arg.partition("=")
        new = renames.get(name) if (eq == "" or name.startswith("--")) else None
        if new is None:
            renamed.append(arg)
            continue
        if name not in warned:
            warned.add(name)
            warn_deprecated(name, new)
        renamed.append(new + eq + value)
    return renamed


class RenamedOptionsCommand(TyperCommand):
    """A command that reads the old option names of :attr:`renames` as their new ones."""

    renames: ClassVar[Mapping[str, str]] = {}

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, rename_args(args, self.renames))


def renamed_options(renames: Mapping[str, str]) -> type[TyperCommand]:
    """A command class (``app.command(cls=...)``) reading each old option name of ``renames``
    (old -> new) as the new one, with a deprecation warning."""
    return type("RenamedOptions", (RenamedOptionsCommand,), {"renames": dict(renames)})


class DeprecatedCommand(TyperCommand):
    """A command kept under an old name: it warns, then runs as the command :attr:`new`."""

    new: ClassVar[str] = ""

    def invoke(self, ctx: Any) -> Any:
        warn_deprecated(f"`judgeprobe {self.name}`", f"`judgeprobe {self.new}`")
        return super().invoke(ctx)


def deprecated_command(new: str) -> type[TyperCommand]:
    """A command class for a command's old name; ``new`` is the name that replaced it."""
    return type("Deprecated", (DeprecatedCommand,), {"new": new})
