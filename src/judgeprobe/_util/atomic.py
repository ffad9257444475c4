"""Writing a file so that a reader sees the old content or the new, never half of either.

The content goes to a temporary file in the same folder, is flushed to disk, and replaces the
target with :func:`os.replace` (atomic on POSIX and Windows within one file system). A reader that
opened the old file keeps reading the old content; a crash mid-write leaves the old file whole and
at most a stray ``.<name>.*.tmp`` file beside it. An OS error that names no file (a write to a
full disk) is raised again naming the target.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], content: str | bytes) -> Path:
    """Write ``content`` (text as UTF-8) to ``path`` atomically; return the path."""
    target = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, _mode(target))
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if exc.filename is None:  # a failed write or flush (a full disk) names no file
            raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from exc
        raise
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target


def _mode(target: Path) -> int:
    """The permission bits the file gets: the old file's, or rw-r--r-- for a new one.

    (A temporary file is created private; a card is a report to be read by others.)
    """
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        return 0o644
