"""The ``openai-batch`` executor: an engine run's missing requests as one provider batch.

It records the requests in the run store, uploads them as an OpenAI Batch input file, creates
the batch and records its id at once, polls it with exponential backoff until it ends, downloads
its output and error files and imports them through
:func:`~judgeprobe.engine.batch.lines.import_lines`
(the parser of a live answer). A run killed while it waits resumes polling the same batch: the
next run finds the batch recorded for the same requests, not yet imported, and creates none.
A batch that failed, expired or was cancelled has the lines it completed imported; the other
requests stay pending, and the engine reports the run incomplete with the reason.

An output line that is no batch output line (not JSON, cut short, no ``custom_id``) does not stop
the import: the request it names, where it can be read, gets an error verdict saying which file
and line, and a request no line answers stays pending, so the next run submits it in a new
batch (the batch is recorded as imported either way; before, one bad line failed every rerun on
the same stored batch). Bad lines, answers to requests the batch did not hold and answers that
differ from a verdict already stored are reported in a :class:`BatchImportWarning` and kept in
:attr:`OpenAIBatchExecutor.reports`.
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from judgeprobe.core.judge import Judge
from judgeprobe.core.request import Request
from judgeprobe.engine.batch.client import TERMINAL, BatchClient
from judgeprobe.engine.batch.lines import (
    ImportReport,
    import_lines,
    request_line,
    scan_lines,
)
from judgeprobe.engine.executors.base import Executed
from judgeprobe.engine.limits import BudgetMeter
from judgeprobe.engine.store import RunStore
from judgeprobe.engine.store_batches import requests_digest
from judgeprobe.errors import ConfigError, RetryableJudgeError
from judgeprobe.judges.openai_compat import OpenAIJudge

Sleep = Callable[[float], Awaitable[None]]

_LISTED = 5
"""At most this many ids or lines are named in a warning (all are counted)."""


class BatchImportWarning(UserWarning):
    """A batch's output held lines that were not imported as answers (see the module)."""


class OpenAIBatchExecutor:
    """Answers requests through the judge's provider Batch API (``/v1/files``, ``/v1/batches``).

    Parameters
    ----------
    judge : OpenAIJudge
        The judge whose endpoint, model and body the batch uses.
    poll_s, max_poll_s : float
        The first wait between two polls, doubled after each poll up to ``max_poll_s``.
    completion_window : str
        The provider's window for the batch (OpenAI accepts ``"24h"``).
    max_errors : int
        Transient failures of the Files/Batches API in a row before the run gives up (the batch
        stays recorded: the next run resumes it).
    sleep : callable
        How to wait (``asyncio.sleep``; tests pass a fake clock).
    """

    name = "openai-batch"

    def __init__(
        self,
        judge: Judge,
        *,
        poll_s: float = 10.0,
        max_poll_s: float = 300.0,
        completion_window: str = "24h",
        max_errors: int = 8,
        sleep: Sleep | None = None,
    ) -> None:
        if not isinstance(judge, OpenAIJudge):
            raise ConfigError(
                f"engine.executor openai-batch needs an OpenAI-compatible judge, not "
                f"{judge.describe().get('backend')!r}"
            )
        if poll_s <= 0 or max_poll_s < poll_s:
            raise ConfigError("engine.executor_options: need 0 < poll_s <= max_poll_s")
        self.judge = judge
        self.poll_s = float(poll_s)
        self.max_poll_s = float(max_poll_s)
        self.completion_window = completion_window
        self.max_errors = max_errors
        self.sleep: Sleep = sleep or asyncio.sleep
        self.reports: list[ImportReport] = []
        """What each batch's import did, in order."""

    async def execute(
        self, requests: Sequence[Request], store: RunStore, meter: BudgetMeter | None = None
    ) -> Executed:
        """Submit ``requests`` as one batch (or resume the batch already made of them); the
        provider answers each once, so ``meter`` is not drawn on."""
        if not requests:
            return Executed()
        by_key = {r.key: r for r in requests}
        digest = requests_digest(list(by_key))
        store.put_batch_requests(requests)
        async with BatchClient(self.judge) as client:
            recorded = store.open_batch(digest)
            if recorded is None:
                batch_id = await self._create(client, store, list(by_key.values()), digest)
            else:
                batch_id = str(recorded["id"])
            batch = await self._poll(client, store, batch_id)
            answered, report = await self._import(client, store, batch, by_key)
        status = str(batch.get("status"))
        store.update_batch(
            batch_id,
            status=status,
            output_file=_file(batch, "output_file_id"),
            error_file=_file(batch, "error_file_id"),
            imported=True,
        )
        self.reports.append(report)
        _warn(batch_id, report)
        verdicts = {k: v for k, v in store.get_many(sorted(answered)).items() if k in by_key}
        left = len(by_key) - len(verdicts)
        stopped = None
        if left:
            stopped = (
                f"batch {batch_id} ended {status}: {len(verdicts)} of {len(by_key)} requests "
                f"answered, {left} left pending; run again to submit them in a new batch"
            )
        return Executed(verdicts, stopped)

    async def _create(
        self, client: BatchClient, store: RunStore, requests: list[Request], digest: str
    ) -> str:
        lines = (json.dumps(request_line(self.judge, r), ensure_ascii=False) for r in requests)
        content = ("\n".join(lines) + "\n").encode()
        input_file = await self._retrying(lambda: client.upload(content))
        batch = await self._retrying(
            lambda: client.create(input_file, completion_window=self.completion_window)
        )
        batch_id = str(batch["id"])
        store.put_batch(batch_id, digest=digest, requests=len(requests), input_file=input_file)
        return batch_id

    async def _poll(self, client: BatchClient, store: RunStore, batch_id: str) -> dict[str, Any]:
        """The batch once it has ended, polled with exponential backoff."""
        delay = self.poll_s
        while True:
            batch: dict[str, Any] = await self._retrying(lambda: client.retrieve(batch_id))
            status = str(batch.get("status"))
            if status in TERMINAL:
                return batch
            store.update_batch(batch_id, status=status)
            await self.sleep(delay)
            delay = min(self.max_poll_s, delay * 2)

    async def _import(
        self,
        client: BatchClient,
        store: RunStore,
        batch: dict[str, Any],
        requests: dict[str, Request],
    ) -> tuple[set[str], ImportReport]:
        """Download and import the batch's output and error files; the keys they answer."""
        report = ImportReport()
        seen: set[str] = set()
        for name in ("output_file_id", "error_file_id"):
            file_id = _file(batch, name)
            if file_id is None:
                continue
            raw: bytes = await self._retrying(functools.partial(client.content, file_id))
            source = f"batch {batch['id']} {name.removesuffix('_id').replace('_', ' ')}"
            lines = scan_lines(io.BytesIO(raw))
            report.add(import_lines(store, lines, source=source, requests=requests, seen=seen))
        return report.answered & set(requests), report

    async def _retrying(self, call: Callable[[], Awaitable[Any]]) -> Any:
        """``call()``, retried with backoff on transient API failures."""
        errors = 0
        while True:
            try:
                return await call()
            except RetryableJudgeError:
                errors += 1
                if errors >= self.max_errors:
                    raise
                await self.sleep(min(self.max_poll_s, self.poll_s * 2 ** (errors - 1)))


def _warn(batch_id: str, report: ImportReport) -> None:
    """A :class:`BatchImportWarning` naming what of batch ``batch_id`` was not imported."""
    parts = []
    for what, items in (
        ("bad lines", report.bad_lines),
        ("answers to requests not in the batch", report.unknown),
        ("answers that differ from the verdict stored (kept)", report.conflicts),
    ):
        if items:
            named = "; ".join(items[:_LISTED]) + (" ..." if len(items) > _LISTED else "")
            parts.append(f"{len(items)} {what}: {named}")
    if parts:
        warnings.warn(f"batch {batch_id}: " + " | ".join(parts), BatchImportWarning, stacklevel=2)


def _file(batch: dict[str, Any], name: str) -> str | None:
    value = batch.get(name)
    return str(value) if value else None
