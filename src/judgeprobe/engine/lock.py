"""One audit at a time per run store: an OS lock on a file beside the store.

Two audits writing one store would each judge every missing request (twice the calls) and each
render whichever run is newest. :class:`StoreLock` holds an exclusive, non-blocking OS lock
(``flock`` on POSIX, ``msvcrt.locking`` on Windows) on ``<store>.lock`` for as long as an audit
runs. The operating system drops the lock when the process ends, however it ends (SIGKILL
included), so a lock file left behind by a crash never blocks the next run: only a live process
holds the lock. The file holds the holder's process id, which the refusal message names. The lock
file must be a regular file: a symbolic link or anything else found there is refused, never
followed or written through.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from types import TracebackType

from judgeprobe.errors import StoreError

_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
"""Open the lock file without following a symbolic link (one planted there would have the
holder's pid written over whatever it points to) and without waiting on a FIFO."""


class StoreLock:
    """An exclusive lock on the run store at ``store_path``; :class:`StoreError` when it is taken.

    Examples
    --------
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with StoreLock(Path(folder) / "run.sqlite") as lock:
    ...     lock.path.name
    'run.sqlite.lock'
    """

    def __init__(self, store_path: str | os.PathLike[str]) -> None:
        self.store_path = Path(store_path)
        self.path = self.store_path.with_name(self.store_path.name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise :class:`StoreError` naming the process that holds it."""
        if self.path.is_symlink():  # O_NOFOLLOW's refusal, with a clear reason where it exists
            raise StoreError(f"{self.path}: the lock file is a symbolic link; remove it")
        try:
            fd = os.open(self.path, _FLAGS, 0o644)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create the lock file ({exc.strerror})") from exc
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise StoreError(f"{self.path}: the lock file is not a regular file; remove it")
        try:
            locked = _try_lock(fd)
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"{self.path}: cannot lock the run store ({exc})") from exc
        if not locked:
            holder = _read_pid(fd)
            os.close(fd)
            who = f" (pid {holder})" if holder else ""
            raise StoreError(
                f"another audit is running on {self.store_path}{who}; wait for it to finish "
                "or use another --out"
            )
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        """Give the lock up (closing the file releases it); the lock file itself stays."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            _unlock(fd)
            os.close(fd)

    def __enter__(self) -> StoreLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except (OSError, AttributeError):  # no pread on Windows
        return None
    return int(text) if text.isdigit() else None


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
