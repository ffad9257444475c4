"""The data rows a run left out, as recorded in its run store.

A loader skips a row it cannot use (a missing field, a malformed value) and says why; the run
records each one (schema 2 and later), so the Judge Card can say how many rows an audit left out
and show the first of them. :class:`SkippedRowsStore` holds the
:class:`~judgeprobe.engine.store.RunStore` methods that write and read the ``skipped_rows`` table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from judgeprobe.engine.store_base import StoreBase

SKIPPED_ROWS_SCHEMA = """
CREATE TABLE IF NOT EXISTS skipped_rows (
    run_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    dataset TEXT NOT NULL,
    path TEXT NOT NULL,
    data_row INTEGER,
    data_column TEXT,
    reason TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
"""
"""The table of the data rows each run left out, in the order recorded."""


class SkippedRowsStore(StoreBase):
    """The skipped-row methods of :class:`~judgeprobe.engine.store.RunStore` (a mixin)."""

    def put_skipped_rows(self, run_id: int, rows: Iterable[Mapping[str, Any]]) -> None:
        """Record the data rows run ``run_id`` left out, in one transaction.

        Each row is a mapping with ``dataset`` (its name), ``path``, ``row`` (1-based data row,
        or None), ``column`` (or None) and ``reason``, as a loader's skipped rows give them.
        """
        first = self.count_skipped_rows(run_id)
        values = [
            (
                run_id,
                first + n,
                self.redactor.text(str(r["dataset"])),
                self.redactor.text(str(r["path"])),
                None if r.get("row") is None else int(r["row"]),
                None if r.get("column") is None else self.redactor.text(str(r["column"])),
                self.redactor.text(str(r["reason"])),
            )
            for n, r in enumerate(rows)
        ]
        if not values:
            return
        self._transaction(many=[("INSERT INTO skipped_rows VALUES (?, ?, ?, ?, ?, ?, ?)", values)])

    def count_skipped_rows(self, run_id: int) -> int:
        """How many data rows run ``run_id`` left out."""
        rows = self._rows("SELECT COUNT(*) FROM skipped_rows WHERE run_id = ?", (run_id,))
        return int(rows[0][0])

    def skipped_rows(self, run_id: int, *, limit: int | None = None) -> list[dict[str, Any]]:
        """The data rows run ``run_id`` left out, in the order recorded (the first ``limit``)."""
        rows = self._rows(
            "SELECT dataset, path, data_row, data_column, reason FROM skipped_rows "
            "WHERE run_id = ? ORDER BY seq LIMIT ?",
            (run_id, -1 if limit is None else limit),
        )
        return [
            {"dataset": d, "path": p, "row": r, "column": c, "reason": why}
            for d, p, r, c, why in rows
        ]
