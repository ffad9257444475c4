"""What a command that judges says when Ctrl-C or SIGTERM stops it, and how it exits.

Typer turns a :class:`KeyboardInterrupt` that leaves a command into exit status 130 and prints
nothing, so every command that makes judge calls (``audit``, ``score``, ``bill --pilot``) runs
them inside :func:`resumable`: one line saying how many verdicts the run store holds and that the
same command resumes, then exit status 130 (Ctrl-C) or 143 (SIGTERM,
:func:`judgeprobe._util.signals.stop_on_termination`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from judgeprobe._util.signals import stop_exit_code, terminated
from judgeprobe.errors import JudgeprobeError

console = Console(stderr=True)


@contextmanager
def resumable(store_path: Path) -> Iterator[None]:
    """Run judge calls into ``store_path``; a stop inside prints :func:`stopped_message` and
    exits 130 or 143."""
    try:
        yield
    except KeyboardInterrupt:
        console.print(f"[yellow]{escape(stopped_message(store_path))}[/]")
        raise typer.Exit(stop_exit_code()) from None


def stopped_message(store_path: Path) -> str:
    """What a stopped command says: what stopped it, what the run store holds, how to resume."""
    from judgeprobe.engine import RunStore

    what = "terminated (SIGTERM)" if terminated() else "interrupted"
    if not store_path.is_file():
        return f"{what} before the first judge call; nothing was saved"
    try:
        with RunStore(store_path) as store:
            saved = store.count()
    except JudgeprobeError:
        return f"{what}; the verdicts made so far are in {store_path}"
    return (
        f"{what}: {saved} verdict{'s' if saved != 1 else ''} saved in {store_path}; "
        "run the same command again to resume"
    )
