"""A termination signal stops a run the way Ctrl-C does.

Python turns SIGINT (Ctrl-C) into :class:`KeyboardInterrupt`; inside :func:`asyncio.run` the first
one cancels the main task, so an audit stops between two verdicts, marks its run interrupted in the
run store and says how to resume. SIGTERM, which CI cancellation, ``timeout`` and ``docker stop``
send, kills a Python process on the spot by default: no message, and a run left ``running``.

:func:`stop_on_termination` sends SIGTERM down the same path as Ctrl-C (to whatever handles SIGINT
at that moment: asyncio's, or Python's default, which raises :class:`KeyboardInterrupt`), and
remembers it, so that :func:`stopped_by` words the message and :func:`stop_exit_code` gives the
shell's convention, 128 plus the signal's number: 130 after Ctrl-C, 143 after SIGTERM.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_received: set[int] = set()
"""The termination signals this process has received while :func:`stop_on_termination` held."""


@contextmanager
def stop_on_termination() -> Iterator[None]:
    """While inside, SIGTERM stops the process as Ctrl-C does (see the module); outside the main
    thread, where no signal handler can be set, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_termination)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _on_termination(signum: int, frame: FrameType | None) -> None:
    _received.add(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):  # asyncio's (cancels the main task) or Python's default (raises)
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt  # SIGINT is ignored here (a background job): stop all the same


def terminated() -> bool:
    """Whether a termination signal (SIGTERM) stopped this process, rather than Ctrl-C."""
    return signal.SIGTERM in _received


def stopped_by() -> str:
    """What stopped the process, for a message: ``SIGTERM`` or ``Ctrl-C``."""
    return "SIGTERM" if terminated() else "Ctrl-C"


def stop_exit_code() -> int:
    """The exit status of a process stopped this way: 143 after SIGTERM, 130 after Ctrl-C."""
    return 128 + (signal.SIGTERM if terminated() else signal.SIGINT)
