"""The table every verdict format's reader ends in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgeprobe.data._records import Record, Table
from judgeprobe.errors import DataError


def rows_table(path: Path, rows: list[tuple[int, dict[str, Any]]]) -> Table:
    """A table of ``rows`` (each with the number of its record in the source, 1-based)."""
    if not rows:
        raise DataError("the file holds no verdict", path=str(path))
    columns: dict[str, None] = {}
    for _, values in rows:
        columns.update(dict.fromkeys(values))
    records = tuple(Record(row=n, line=n, values=values) for n, values in rows)
    return Table(str(path), tuple(columns), records)
