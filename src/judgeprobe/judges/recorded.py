"""Recorded verdicts as a judge: scores a judge gave elsewhere, read from a file.

``--judge recorded:PATH`` audits a judge the user already ran (a production classifier's log, a
scorer's CSV): the file holds one row per item, with the item's id (``id`` or ``item_id``) and a
``score`` or a ``label`` (a label of the rubric's scale), and optionally ``probability``. CSV,
JSONL and Parquet are read; the output of ``judgeprobe score -o`` is one such file (its rows of a
``status`` other than ``ok`` are verdicts that failed, its trials after the first are ignored).
A bad row is a :class:`~judgeprobe.errors.DataError` naming the file and the line.

A recorded judge can answer only a request for an item as it is in the dataset: the judge is
bound to the audit's items (:meth:`RecordedJudge.bind`) and looks each request up by the item
fields it carries. An audit asks every probe, before any verdict is looked up, whether it needs
other inputs (a repeated response, a rewritten rubric), and refuses such a probe by name
(:func:`judgeprobe.running.check_recorded`). Ids in the file that are not in the dataset,
and items with no recorded verdict, are counted and listed in the judge's description (so in
the card); an item without a verdict gets an error verdict, which the probes count and leave out.
Items identical in the rubric's inputs make one request, so they share one verdict: that of the
first of them in the dataset.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judgeprobe._hashing import content_hash
from judgeprobe.data._records import RowError, as_score, is_missing, read_table
from judgeprobe.data.items import Item, PointwiseItem, item_fields
from judgeprobe.errors import DataError
from judgeprobe.judges.base import BaseJudge
from judgeprobe.request import Request
from judgeprobe.verdict import Verdict

ID_COLUMNS = ("id", "item_id")
LISTED = 20
"""How many unknown ids and unjudged items the description lists (all are counted)."""


class RecordedJudge(BaseJudge):
    """Verdicts read from ``path`` (CSV, JSONL or Parquet), keyed by item id."""

    backend = "recorded"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        table = read_table(self.path)
        id_column = next((c for c in ID_COLUMNS if c in table.columns), None)
        listing = ", ".join(repr(c) for c in table.columns)
        if id_column is None:
            raise DataError(
                f"recorded verdicts need an item id column ('id' or 'item_id'); columns: {listing}",
                path=str(self.path),
            )
        if "score" not in table.columns and "label" not in table.columns:
            raise DataError(
                f"recorded verdicts need a 'score' or a 'label' column; columns: {listing}",
                path=str(self.path),
            )
        self.rows: dict[str, dict[str, Any]] = {}
        for record in table.records:
            path, line = str(self.path), record.line or record.row
            values = record.values
            if is_missing(values.get(id_column)):
                raise DataError("missing item id", column=id_column, path=path, row=line)
            item_id = str(values[id_column]).strip()
            if "trial" in table.columns and str(values.get("trial")).strip() not in ("0", "0.0"):
                continue  # `judgeprobe score --trials N` output: the first trial is the verdict
            if item_id in self.rows:
                raise DataError(
                    f"item id {item_id!r} occurs twice", column=id_column, path=path, row=line
                )
            row: dict[str, Any] = {}
            try:
                for column in ("score", "probability"):
                    if column in table.columns and not is_missing(values.get(column)):
                        row[column] = as_score(values[column], column)
                if "label" in table.columns and not is_missing(values.get("label")):
                    row["label"] = str(values["label"]).strip()
            except RowError as error:
                raise DataError(error.reason, column=error.column, path=path, row=line) from None
            status = values.get("status")
            if "status" in table.columns and not is_missing(status) and status != "ok":
                row = {"failed": f"recorded with status {status!r}"}
            elif "score" not in row and "label" not in row:
                raise DataError("neither a score nor a label", path=path, row=line)
            self.rows[item_id] = row
        self.sha256 = content_hash(sorted(self.rows.items()))
        self._items: dict[str, PointwiseItem] = {}
        self._by_fields: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}

    # -- binding to the dataset ---------------------------------------------------------------
    def bind(self, items: Sequence[Item]) -> None:
        """Make the pointwise ``items`` answerable (requests are matched by their fields)."""
        for item in items:
            if isinstance(item, PointwiseItem):
                self._items[item.id] = item
        self._by_fields.clear()

    def _item_id(self, request: Request) -> str | None:
        rubric_hash = request.rubric.hash
        if not any(key[0] == rubric_hash for key in self._by_fields):
            for item in self._items.values():
                fields = Request.make("", request.rubric, item_fields(item)).fields
                self._by_fields.setdefault((rubric_hash, fields), item.id)
        return self._by_fields.get((rubric_hash, request.fields))

    def answers(self, request: Request) -> bool:
        """True when ``request`` asks about a bound item as it is (so no new call is needed)."""
        return self._item_id(request) is not None

    @property
    def coverage(self) -> dict[str, Any]:
        """Ids in the file but not in the dataset, and items with no recorded verdict."""
        unknown = sorted(set(self.rows) - set(self._items))
        unjudged = sorted(set(self._items) - set(self.rows))
        return {
            "rows": len(self.rows),
            "unknown_ids": len(unknown),
            "unknown_ids_listed": unknown[:LISTED],
            "items_without_verdict": len(unjudged),
            "items_without_verdict_listed": unjudged[:LISTED],
        }

    # -- the judge ------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "name": f"recorded:{self.path.name}",
            "path": str(self.path),
            "verdicts_sha256": self.sha256,
            "coverage": self.coverage,
        }

    @property
    def fingerprint(self) -> str:
        # the verdicts, not the dataset it is bound to, identify this judge
        return content_hash({"backend": self.backend, "verdicts": self.sha256})

    async def judge(self, request: Request) -> Verdict:
        return self.lookup(request)

    def lookup(self, request: Request) -> Verdict:
        """The recorded verdict of ``request`` (an error verdict when there is none)."""
        item_id = self._item_id(request)
        if item_id is None:
            return Verdict.failed("no recorded verdict: the request is not an item of the dataset")
        row = self.rows.get(item_id)
        if row is None:
            return Verdict.failed(f"no recorded verdict for item {item_id!r}")
        if "failed" in row:
            return Verdict.failed(str(row["failed"]))
        if "score" in row:
            score = float(row["score"])
        else:
            label = row["label"]
            if label not in request.rubric.values:
                return Verdict.unparseable(label)
            score = request.rubric.value_of(label)
        if not math.isfinite(score):
            return Verdict.unparseable(str(score))
        meta: Mapping[str, Any] = (
            {"probability": row["probability"]} if "probability" in row else {}
        )
        return Verdict.scored(score, raw_text=str(row.get("label", score)), meta=meta)
