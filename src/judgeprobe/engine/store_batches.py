"""The provider batches of a run store: the requests sent in a batch and each batch's state.

A request exported for a provider's batch API (or submitted by the ``openai-batch`` executor) is
recorded in ``batch_requests`` (schema 4 and later) with its judge, rubric, trial and fields, so
an output file can be imported into the store with nothing but the store: its ``custom_id`` (the
request key) finds the request, whose rubric the answer is parsed against. A batch the executor
created is recorded in ``batches`` the moment the provider gives it an id, so a run that is
killed while it waits resumes polling that batch instead of paying for a new one.
:class:`BatchStore` holds the :class:`~judgeprobe.engine.store.RunStore` methods on both tables.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from judgeprobe._util.hashing import canonical_json
from judgeprobe.core.request import Request
from judgeprobe.engine.store_base import StoreBase
from judgeprobe.rubrics import Rubric

BATCHES_SCHEMA = """
CREATE TABLE IF NOT EXISTS batch_requests (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    rubric TEXT NOT NULL,
    trial INTEGER NOT NULL,
    fields TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    requests INTEGER NOT NULL,
    input_file TEXT NOT NULL,
    status TEXT NOT NULL,
    output_file TEXT,
    error_file TEXT,
    imported INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
"""
"""The tables of the batches: every request sent in one, and one row per provider batch."""

BATCH_COLUMNS = (
    "id",
    "digest",
    "requests",
    "input_file",
    "status",
    "output_file",
    "error_file",
    "imported",
    "created",
    "updated",
)


class BatchStore(StoreBase):
    """The batch methods of :class:`~judgeprobe.engine.store.RunStore` (a mixin)."""

    if TYPE_CHECKING:  # provided by RunStore

        def register_rubric(self, rubric: Rubric) -> None: ...

        def rubrics(self) -> dict[str, Rubric]: ...

    # -- the requests sent in batches ---------------------------------------------------------
    def put_batch_requests(self, requests: Iterable[Request]) -> None:
        """Record ``requests`` as sent in a batch (a request recorded before is left as is)."""
        rows = []
        for request in requests:
            self.register_rubric(request.rubric)
            fields = [(name, self.redactor.text(text)) for name, text in request.fields]
            rows.append(
                (
                    request.key,
                    request.judge,
                    request.rubric.hash,
                    request.trial,
                    canonical_json(fields),
                )
            )
        if rows:
            self._transaction(
                many=[("INSERT OR IGNORE INTO batch_requests VALUES (?, ?, ?, ?, ?)", rows)]
            )

    def batch_requests(self) -> dict[str, Request]:
        """Every request recorded as sent in a batch, by key."""
        rubrics = self.rubrics()
        found: dict[str, Request] = {}
        for key, judge, rubric_hash, trial, fields_text in self._rows(
            "SELECT key, judge, rubric, trial, fields FROM batch_requests"
        ):
            try:
                fields = tuple((str(f), str(t)) for f, t in json.loads(fields_text))
                found[str(key)] = Request(str(judge), rubrics[str(rubric_hash)], fields, int(trial))
            except (TypeError, ValueError, KeyError) as exc:
                raise self._damaged(f"the batch request {key!r}", exc) from exc
        return found

    # -- the provider's batches ---------------------------------------------------------------
    def put_batch(self, batch_id: str, *, digest: str, requests: int, input_file: str) -> None:
        """Record a batch the provider just created (status ``validating``)."""
        now = time.time()
        self._execute(
            "INSERT OR REPLACE INTO batches "
            "(id, digest, requests, input_file, status, imported, created, updated) "
            "VALUES (?, ?, ?, ?, 'validating', 0, ?, ?)",
            (batch_id, digest, requests, input_file, now, now),
        )

    def update_batch(
        self,
        batch_id: str,
        *,
        status: str,
        output_file: str | None = None,
        error_file: str | None = None,
        imported: bool = False,
    ) -> None:
        """Record what the provider says of batch ``batch_id`` (and whether it was imported)."""
        self._execute(
            "UPDATE batches SET status = ?, output_file = COALESCE(?, output_file), "
            "error_file = COALESCE(?, error_file), imported = ?, updated = ? WHERE id = ?",
            (status, output_file, error_file, int(imported), time.time(), batch_id),
        )

    def open_batch(self, digest: str) -> dict[str, Any] | None:
        """The newest batch of these requests (``digest``) whose output is not imported yet."""
        rows = self._rows(
            f"SELECT {', '.join(BATCH_COLUMNS)} FROM batches WHERE digest = ? AND imported = 0 "
            "ORDER BY created DESC LIMIT 1",
            (digest,),
        )
        return dict(zip(BATCH_COLUMNS, rows[0], strict=True)) if rows else None

    def batches(self) -> list[dict[str, Any]]:
        """Every batch recorded, oldest first."""
        rows = self._rows(f"SELECT {', '.join(BATCH_COLUMNS)} FROM batches ORDER BY created, id")
        return [dict(zip(BATCH_COLUMNS, row, strict=True)) for row in rows]


def requests_digest(keys: Sequence[str]) -> str:
    """The identity of a set of requests: a hash of their sorted keys."""
    import hashlib

    return hashlib.sha256("\n".join(sorted(set(keys))).encode()).hexdigest()[:32]
