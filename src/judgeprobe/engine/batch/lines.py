"""OpenAI Batch JSONL: the input lines judgeprobe writes, the output lines it imports.

An input line is ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``:
the ``custom_id`` is the request key, the body exactly what :meth:`OpenAIJudge.body` sends live
(logprobs included). An output line (OpenAI's Batch API and ``vllm run-batch`` write the same
shape) is ``{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}``;
its body goes through :func:`~judgeprobe.judges.openai_compat.completion_verdict`, the parser
of a live answer, so an imported verdict is the verdict a live call would have stored. A line
with an ``error``, a status other than 200 or a body that is no chat completion becomes an error
verdict: the next export (or audit) asks for that request again. A line of a request the batch
never ran (error code ``batch_expired`` or ``batch_cancelled``) stores nothing: the request
stays pending.

Importing is idempotent: a verdict already stored with the same content is left alone (its
row is not rewritten), and a stored verdict that is not an error is never replaced, so a second
import of the same files changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgeprobe._util.hashing import canonical_json
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict, VerdictStatus, check_verdict
from judgeprobe.engine.store import RunStore
from judgeprobe.engine.store_merge import same_verdict
from judgeprobe.errors import DataError, RetryableJudgeError
from judgeprobe.judges.openai_compat import OpenAIJudge, completion_verdict

CHAT_URL = "/v1/chat/completions"
INPUT_PREFIX = "requests-"
"""Input shards are ``requests-00000.jsonl``...; an import passes over them in a folder."""


def request_line(judge: OpenAIJudge, request: Request) -> dict[str, Any]:
    """The Batch API input line for ``request``: the body the judge would send live."""
    body = judge.body(request)
    return {"custom_id": request.key, "method": "POST", "url": CHAT_URL, "body": body}


def shard_of(key: str, shards: int) -> int:
    """The shard of request ``key`` among ``shards`` (by key, so a request keeps its shard)."""
    return int(key[:12], 16) % shards


def write_shards(
    judge: OpenAIJudge, requests: Sequence[Request], folder: Path, shards: int
) -> list[Path]:
    """Write ``requests`` as ``shards`` input files in ``folder`` (sorted by key within each);
    an empty shard is not written. Returns the files written."""
    groups: dict[int, list[Request]] = {}
    for request in sorted(requests, key=lambda r: r.key):
        groups.setdefault(shard_of(request.key, shards), []).append(request)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for number, group in sorted(groups.items()):
        path = folder / f"{INPUT_PREFIX}{number:05d}.jsonl"
        text = "".join(json.dumps(request_line(judge, r), ensure_ascii=False) + "\n" for r in group)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


@dataclass
class ImportReport:
    """What an import read and did; ``unknown`` and ``conflicts`` list the ``custom_id``\\ s."""

    files: list[str] = field(default_factory=list)
    lines: int = 0
    imported: int = 0
    """Verdicts written (an error verdict replaced by a good one included)."""
    errors: int = 0
    """Of those, error verdicts (a failed line, a body that is no chat completion)."""
    unchanged: int = 0
    """Lines whose verdict the store already held (a second import, a duplicate line)."""
    duplicates: int = 0
    """Lines whose ``custom_id`` an earlier line of this import already had."""
    kept: int = 0
    """Lines not imported because the store holds a good verdict for the key already (an error
    line, or an answer that differs from the stored one: listed in ``conflicts``)."""
    not_run: int = 0
    """Lines of requests the batch never ran (it expired or was cancelled first): nothing is
    stored, the request stays pending."""
    unknown: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)

    def add(self, other: ImportReport) -> None:
        self.files += other.files
        for name in ("lines", "imported", "errors", "unchanged", "duplicates", "kept", "not_run"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.unknown += other.unknown
        self.conflicts += other.conflicts

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "lines": self.lines,
            "imported": self.imported,
            "errors": self.errors,
            "unchanged": self.unchanged,
            "duplicates": self.duplicates,
            "kept": self.kept,
            "not_run": self.not_run,
            "unknown": self.unknown,
            "conflicts": self.conflicts,
        }


def output_files(paths: Iterable[str | Path]) -> list[Path]:
    """The output files named by ``paths``: a file as given, a folder's ``*.jsonl`` files but
    the input shards an export wrote there (sorted by name)."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files = (p for p in path.glob("*.jsonl") if p.is_file())
            found += sorted(p for p in files if not p.name.startswith(INPUT_PREFIX))
        elif path.is_file():
            found.append(path)
        else:
            raise DataError("no such file or folder", path=str(path))
    return found


def read_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The output lines of the file ``path`` (see :func:`parse_lines`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read the batch output ({exc})", path=str(path)) from exc
    return parse_lines(text, str(path))


def parse_lines(text: str, source: str) -> list[tuple[int, dict[str, Any]]]:
    """The output lines of ``text`` with their line numbers; a line that is not a JSON object
    with a ``custom_id`` is a DataError naming ``source`` and the line (blank lines are passed
    over)."""
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise DataError(f"not a JSON line ({exc})", path=source, row=number) from exc
        if not isinstance(value, dict) or not isinstance(value.get("custom_id"), str):
            raise DataError("not a batch output line (no custom_id)", path=source, row=number)
        lines.append((number, value))
    return lines


NOT_RUN = frozenset({"batch_expired", "batch_cancelled"})
"""Error codes of lines the batch never ran (OpenAI writes them to the error file)."""


def was_run(line: Mapping[str, Any]) -> bool:
    """Whether the batch ran the request of ``line`` (False: it expired or was cancelled first)."""
    error = line.get("error")
    return not (isinstance(error, dict) and error.get("code") in NOT_RUN)


def line_verdict(
    request: Request, line: Mapping[str, Any], *, logprobs: bool, source: str
) -> Verdict:
    """The verdict an output ``line`` gives ``request``: parsed as a live answer is, or an error
    verdict for a failed line."""
    response = line.get("response")
    error = line.get("error")
    if error is None and isinstance(response, dict):
        status = response.get("status_code", 200)
        body = response.get("body")
        if body is None and "choices" in response:  # the body in place of the response
            body = response
        if status == 200 and body is not None:
            raw = json.dumps(body).encode()
            try:
                verdict = completion_verdict(request, body, raw, logprobs=logprobs, source=source)
            except RetryableJudgeError as exc:
                return _failed(request, str(exc))
            verdict = verdict.but(key=request.key, trial=request.trial, attempts=1)
            return check_verdict(verdict, request.rubric)
        error = _message(body) or f"HTTP {status}"
        return _failed(request, f"{source}: the batch answered HTTP {status}: {error}")
    return _failed(request, f"{source}: the batch line failed: {_message(error) or 'no response'}")


def _message(value: Any) -> str:
    if isinstance(value, dict):
        inner = value.get("error", value)
        if isinstance(inner, dict):
            return str(inner.get("message") or inner.get("code") or canonical_json(inner))[:200]
        return str(inner)[:200]
    return "" if value is None else str(value)[:200]


def _failed(request: Request, error: str) -> Verdict:
    return Verdict.failed(error, key=request.key, trial=request.trial, attempts=1)


def import_outputs(
    store: RunStore, paths: Iterable[str | Path], *, requests: Mapping[str, Request] | None = None
) -> ImportReport:
    """Import the batch output files ``paths`` (files or folders) into ``store``.

    A ``custom_id`` is looked up among the requests recorded as sent in a batch (or in
    ``requests``); one that names no such request is counted and listed in ``unknown``.
    """
    known = dict(store.batch_requests()) if requests is None else dict(requests)
    report = ImportReport()
    seen: set[str] = set()
    for path in output_files(paths):
        report.files.append(str(path))
        report.add(_import_file(store, path, known, seen))
    return report


def import_lines(
    store: RunStore,
    lines: Iterable[tuple[int, Mapping[str, Any]]],
    *,
    source: str,
    requests: Mapping[str, Request],
    seen: set[str] | None = None,
) -> ImportReport:
    """Import output ``lines`` (numbered) read from ``source`` into ``store``."""
    report = ImportReport()
    seen = set() if seen is None else seen
    logprobs = _logprobs_by_judge(store)
    for _, line in lines:
        report.lines += 1
        key = str(line["custom_id"])
        request = requests.get(key)
        if request is None:
            report.unknown.append(key)
            continue
        if key in seen:
            report.duplicates += 1
        seen.add(key)
        if not was_run(line):
            report.not_run += 1
            continue
        verdict = line_verdict(
            request, line, logprobs=logprobs.get(request.judge, True), source=source
        )
        _import_one(store, request, verdict, report)
    return report


def _import_file(
    store: RunStore, path: Path, requests: Mapping[str, Request], seen: set[str]
) -> ImportReport:
    return import_lines(store, read_lines(path), source=path.name, requests=requests, seen=seen)


def _import_one(store: RunStore, request: Request, verdict: Verdict, report: ImportReport) -> None:
    stored = store.get(request.key)
    if stored is not None and same_verdict(stored, verdict):
        report.unchanged += 1
        return
    if stored is not None and stored.status is not VerdictStatus.ERROR:
        report.kept += 1
        if verdict.status is not VerdictStatus.ERROR:
            report.conflicts.append(request.key)
        return
    if stored is not None and verdict.status is VerdictStatus.ERROR:
        report.unchanged += 1  # an error stays an error: keep the first one's message
        return
    store.put(request, verdict)
    report.imported += 1
    if verdict.status is VerdictStatus.ERROR:
        report.errors += 1


def _logprobs_by_judge(store: RunStore) -> dict[str, bool]:
    return {fp: bool(d.get("logprobs", True)) for fp, d in store.judges().items()}
