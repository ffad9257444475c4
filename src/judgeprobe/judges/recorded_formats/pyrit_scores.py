"""Verdicts from PyRIT scores: ``Score`` records exported as JSONL or CSV.

A PyRIT scorer's :class:`pyrit.models.Score` (as its ``model_dump`` writes it) has a
``score_value`` text of its ``score_type``: ``true_false`` (``"true"``/``"false"``, read as a
binary verdict: the rubric's positive or negative label) or ``float_scale`` (a number in [0, 1],
read as the score). ``score_rationale`` is kept as the raw answer; an ``undetermined`` score is a
failed verdict. The item id is ``id_field``: a column (``item_id`` by default) or a key of
``score_metadata`` written ``score_metadata.KEY``. The Score's own ``id`` names the score, not
the item, and is not used.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judgeprobe.data._records import Table, is_missing, read_table
from judgeprobe.errors import DataError
from judgeprobe.judges.recorded_formats._rows import rows_table

DEFAULT_ID_FIELD = "item_id"
METADATA = "score_metadata."


def read_pyrit_scores(path: Path, *, id_field: str | None = None) -> Table:
    """The verdict rows of the exported PyRIT scores ``path`` (see the module docstring)."""
    field = id_field or DEFAULT_ID_FIELD
    table = read_table(path)
    for column in ("score_value", "score_type"):
        if column not in table.columns:
            raise DataError(f"PyRIT scores need a {column!r} column", path=str(path))
    if not field.startswith(METADATA) and field not in table.columns:
        raise DataError(
            f"no item id column {field!r} (choose it with the judge option id_field=NAME, or "
            f"id_field=score_metadata.KEY); columns: {', '.join(table.columns)}",
            path=str(path),
        )
    rows: list[tuple[int, dict[str, Any]]] = []
    for record in table.records:
        line = record.line or record.row
        values = record.values
        item_id = _item_id(values, field)
        if is_missing(item_id):
            raise DataError("missing item id", column=field, path=str(path), row=line)
        row: dict[str, Any] = {"id": str(item_id), "raw": str(values.get("score_rationale") or "")}
        kind, value = str(values.get("score_type")), values.get("score_value")
        if str(values.get("status") or "complete") != "complete" or is_missing(value):
            row["status"] = "PyRIT: undetermined score"
        elif kind == "true_false" and str(value).strip().lower() in ("true", "false"):
            row["truth"] = str(value).strip().lower() == "true"
        elif kind == "float_scale":
            row["score"] = value
        else:
            raise DataError(
                f"score_value {value!r} does not fit score_type {kind!r} (true_false or "
                "float_scale)",
                column="score_value",
                path=str(path),
                row=line,
            )
        rows.append((line, row))
    return rows_table(path, rows)


def _item_id(values: Mapping[str, Any], field: str) -> Any:
    if not field.startswith(METADATA):
        return values.get(field)
    metadata = values.get("score_metadata")
    if isinstance(metadata, str) and metadata.strip():
        try:
            metadata = json.loads(metadata)  # a CSV export holds it as JSON text
        except json.JSONDecodeError:
            return None
    return metadata.get(field[len(METADATA) :]) if isinstance(metadata, Mapping) else None
