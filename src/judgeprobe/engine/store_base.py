"""What every part of the run store shares: its file, its redactor and its SQL, with errors.

:class:`~judgeprobe.engine.store.RunStore` is assembled from parts (:mod:`.store_plans`,
:mod:`.store_skipped`) that each own some tables; they run their SQL through the methods here,
so an SQLite failure is a :class:`~judgeprobe.errors.StoreError` naming the file wherever it
happens, and a write of many rows is one transaction.
"""

from __future__ import annotations

import errno
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from judgeprobe._util.redaction import Redactor
from judgeprobe.errors import StoreError

FRESH_START = "use another --out, or delete the file to start afresh"

_FULL_ERRNOS = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})
_SQLITE_FULL = 13
"""SQLite's result code for "database or disk is full"."""


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised from) says the disk or the quota is full: an
    :class:`OSError` with ENOSPC or EDQUOT, or SQLite's ``SQLITE_FULL``."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in chain:
        chain.append(seen)
        seen = seen.__cause__
    return any(
        (isinstance(e, OSError) and e.errno in _FULL_ERRNOS)
        or (isinstance(e, sqlite3.Error) and getattr(e, "sqlite_errorcode", None) == _SQLITE_FULL)
        for e in chain
    )


class StoreBase:
    """The connection, the redactor and the error handling of a run store."""

    path: str
    redactor: Redactor
    _db: sqlite3.Connection

    def _execute(self, sql: str, parameters: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run one statement; an SQLite failure (a damaged file, a full disk) is a StoreError."""
        try:
            return self._db.execute(sql, parameters)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: the run store cannot be used ({exc})") from exc

    def _rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """Every row of a query, read in full (an SQLite failure is a StoreError)."""
        try:
            return self._db.execute(sql, parameters).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: the run store cannot be read ({exc})") from exc

    def _mapping(self, text: Any, what: str) -> dict[str, Any]:
        """A JSON object read from the store; anything else is a damaged store."""
        try:
            value = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise self._damaged(what, exc) from exc
        if not isinstance(value, dict):
            raise self._damaged(what, TypeError(f"a JSON object was expected, not {text!r:.60}"))
        return value

    def _damaged(self, what: str, exc: Exception) -> StoreError:
        return StoreError(
            f"{self.path}: the run store is damaged: {what} cannot be read ({exc}); {FRESH_START}"
        )

    def _transaction(
        self,
        statements: Sequence[tuple[str, Sequence[Any]]] = (),
        many: Sequence[tuple[str, Sequence[Sequence[Any]]]] = (),
    ) -> None:
        """Run ``statements``, then each of ``many`` over its rows, in one transaction: all of
        it is written or none (an SQLite failure is a StoreError, anything else is re-raised)."""
        self._execute("BEGIN")
        try:
            for sql, parameters in statements:
                self._db.execute(sql, parameters)
            for sql, rows in many:
                self._db.executemany(sql, rows)
        except sqlite3.Error as exc:
            self._db.execute("ROLLBACK")
            raise StoreError(f"{self.path}: the run store cannot be used ({exc})") from exc
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._execute("COMMIT")
