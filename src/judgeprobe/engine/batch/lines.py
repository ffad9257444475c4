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

Files are read a line at a time (:func:`scan_lines`), never whole: a line that is no output line
(not JSON, over :data:`MAX_LINE_BYTES`, no ``custom_id``) is a :class:`BadLine`, which the
``batch import`` command refuses with the file, the line and the way out, and which the
``openai-batch`` executor records and passes over.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

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
    bad_lines: list[str] = field(default_factory=list)
    """Lines that are no batch output line, as ``FILE, line N: why``."""
    answered: set[str] = field(default_factory=set)
    """The keys of the known requests a line answered (an error included; not ``not_run``)."""

    def add(self, other: ImportReport) -> None:
        self.files += other.files
        self.bad_lines += other.bad_lines
        self.answered |= other.answered
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
            "bad_lines": self.bad_lines,
        }


def output_files(paths: Iterable[str | Path]) -> list[Path]:
    """The output files named by ``paths``: a file as given; in a folder, its ``*.jsonl`` files
    but the input files an export wrote there (sorted by name).

    An input file is told by what it holds, not by its name: a ``requests-NNNNN.jsonl`` whose
    first line is an answer (``response`` or ``error``) is an output file named like an input
    (``vllm run-batch -o`` into the export's folder), and is imported. A folder that holds no
    output file is a DataError: importing nothing and reporting success would read as done.
    """
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files = sorted(p for p in path.glob("*.jsonl") if p.is_file())
            outputs = [p for p in files if not _is_input(p)]
            if not outputs:
                inputs = ", ".join(p.name for p in files[:3]) or "no *.jsonl file"
                raise DataError(
                    f"no batch output file in this folder ({inputs}"
                    f"{' ...' if len(files) > 3 else ''}: batch input lines, not answers); "
                    "name the output files, or the folder the batch wrote them to",
                    path=str(path),
                )
            found += outputs
        elif path.is_file():
            found.append(path)
        else:
            raise DataError("no such file or folder", path=str(path))
    return found


def _is_input(path: Path) -> bool:
    """Whether ``path``, an export's ``requests-*.jsonl`` by name, holds batch input lines."""
    if not path.name.startswith(INPUT_PREFIX):
        return False
    try:
        with path.open("rb") as handle:
            first = next(
                (line for line in iter(lambda: handle.readline(1 << 16), b"") if line.strip()), b""
            )
        value = json.loads(first)
    except (OSError, ValueError):
        return True  # unreadable as an answer: treated as the export's own file
    return not (isinstance(value, dict) and ("response" in value or "error" in value))


MAX_LINE_BYTES = 16 * 2**20
"""The longest output line read (16 MiB): a longer one is a bad line, passed over without being
held in memory. A chat completion of a few thousand tokens with logprobs is far shorter."""

_CUSTOM_ID = re.compile(rb'"custom_id"\s*:\s*"([^"\\]{1,200})"')


@dataclass(frozen=True)
class BadLine:
    """A line of an output file that is not a batch output line: its number, why, and the
    ``custom_id`` it names where that can still be read (a line cut short, say)."""

    number: int
    reason: str
    custom_id: str | None = None


Scanned = tuple[int, dict[str, Any]] | BadLine
"""A numbered output line, or a bad line."""


def scan_lines(handle: BinaryIO) -> Iterator[Scanned]:
    """The output lines of the open file ``handle``, one at a time with their line numbers, and
    a :class:`BadLine` for each line that is not a JSON object with a ``custom_id`` (blank lines
    are passed over). At most :data:`MAX_LINE_BYTES` of a line are held in memory."""
    number = 0
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass  # the rest of an over-long line
            yield BadLine(number, f"a line over {MAX_LINE_BYTES} bytes", _custom_id(line))
            continue
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:  # UnicodeDecodeError included
            yield BadLine(number, f"not a JSON line ({str(exc)[:120]})", _custom_id(line))
            continue
        if not isinstance(value, dict) or not isinstance(value.get("custom_id"), str):
            yield BadLine(number, "not a batch output line (no custom_id)")
            continue
        yield number, value


def _custom_id(line: bytes) -> str | None:
    found = _CUSTOM_ID.search(line[:4096])
    return None if found is None else found.group(1).decode("utf-8", "replace")


def first_bad_line(path: Path) -> BadLine | None:
    """The first bad line of the output file ``path`` (None: every line can be imported)."""
    try:
        with path.open("rb") as handle:
            return next((x for x in scan_lines(handle) if isinstance(x, BadLine)), None)
    except OSError as exc:
        raise DataError(f"cannot read the batch output ({exc})", path=str(path)) from exc


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
    ``requests``); one that names no such request is counted and listed in ``unknown``. Each file
    is read twice, a line at a time: first to find a bad line (a DataError naming the file and
    the line, and nothing of that file stored), then to import it.
    """
    known = dict(store.batch_requests()) if requests is None else dict(requests)
    report = ImportReport()
    seen: set[str] = set()
    for path in output_files(paths):
        bad = first_bad_line(path)
        if bad is not None:
            raise DataError(
                f"{bad.reason}; nothing of this file was imported: fix or delete that line "
                "(its request stays pending and is exported again), then import again",
                path=str(path),
                row=bad.number,
            )
        report.files.append(str(path))
        with path.open("rb") as handle:
            report.add(
                import_lines(store, scan_lines(handle), source=path.name, requests=known, seen=seen)
            )
    return report


def import_lines(
    store: RunStore,
    lines: Iterable[Scanned],
    *,
    source: str,
    requests: Mapping[str, Request],
    seen: set[str] | None = None,
) -> ImportReport:
    """Import output ``lines`` (numbered) read from ``source`` into ``store``.

    A bad line is listed in ``bad_lines``; when it names a known request, that request gets an
    error verdict saying so (the next run asks for it again), else it stays pending.
    """
    report = ImportReport()
    seen = set() if seen is None else seen
    logprobs = _logprobs_by_judge(store)
    for scanned in lines:
        report.lines += 1
        if isinstance(scanned, BadLine):
            where = f"{source}, line {scanned.number}: {scanned.reason}"
            report.bad_lines.append(where)
            bad_request = requests.get(scanned.custom_id or "")
            if bad_request is not None:
                report.answered.add(bad_request.key)
                _import_one(store, bad_request, _failed(bad_request, where), report)
            continue
        line = scanned[1]
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
        report.answered.add(key)
        verdict = line_verdict(
            request, line, logprobs=logprobs.get(request.judge, True), source=source
        )
        _import_one(store, request, verdict, report)
    return report


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
