"""Progress on long work: done/total, calls/s, cache hits, failures, ETA; silent when not a TTY.

The description can hold a probe's or a rubric's name, so it is shown as plain text, never parsed
as rich markup.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)


class EngineProgress:
    """A progress bar the engine updates; a no-op when disabled or when stderr is not a terminal.

    It draws on ``console`` (default: standard error).
    """

    def __init__(
        self,
        description: str,
        total: int,
        *,
        enabled: bool | None = None,
        console: Console | None = None,
    ) -> None:
        console = console or Console(stderr=True)
        if enabled is None:
            enabled = console.is_terminal and sys.stderr.isatty()
        self.enabled = enabled and total > 0
        self.total = total
        self.started = time.monotonic()
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if self.enabled:
            self._progress = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]:.1f} calls/s"),
                TextColumn("cached {task.fields[cached]}"),
                TextColumn("failed {task.fields[failed]}"),
                TimeRemainingColumn(),
                console=console,
                transient=False,
            )
            self._task = self._progress.add_task(
                description, total=total, rate=0.0, cached=0, failed=0
            )

    def __enter__(self) -> EngineProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, *, done: int, called: int, cached: int, failed: int) -> None:
        if self._progress is None or self._task is None:
            return
        elapsed = max(time.monotonic() - self.started, 1e-9)
        self._progress.update(
            self._task, completed=done, rate=called / elapsed, cached=cached, failed=failed
        )
